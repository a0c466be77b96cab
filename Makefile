# Floe: make targets. `make test` is what CI runs (through .ci/run).
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV ?= .venv
# Cargo's target directory: CARGO_TARGET_DIR when the user sets one, else ./target.
TARGET := $(or $(CARGO_TARGET_DIR),target)
FLOE := $(TARGET)/release/floe
RUN_DIR ?= data/sample
WAREHOUSE ?= warehouse

# How `make lambda` builds the functions: symbols and debug info stripped, whole-program
# link-time optimisation in one codegen unit (smaller and faster binaries; a long link).
LAMBDA_PROFILE := CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_PROFILE_RELEASE_DEBUG=false \
	CARGO_PROFILE_RELEASE_LTO=fat CARGO_PROFILE_RELEASE_CODEGEN_UNITS=1

.PHONY: build build-tests run test test-rust test-python test-spark venv checkov-venv localstack-venv spark-venv bench bench-dedup bench-memory bench-table bench-soak bench-soak-moto bench-coldstart bench-coldstart-lambda bench-model bench-scale lint fmt clean lambda deploy destroy deploy-local destroy-local

build:
	$(CARGO) build --release --workspace

# Binaries and test binaries with the features `cargo test` unifies (so nothing builds twice).
build-tests:
	$(CARGO) build --release --workspace --all-targets

# Generate sample events, ingest them into ./warehouse, print the table's status.
run: build
	$(FLOE) gen --out $(RUN_DIR) --files 40 --events-per-file 2500 --dup-rate 0.01
	$(FLOE) ingest $(RUN_DIR) --warehouse $(WAREHOUSE) --table demo.events \
		--partition-by "day(event_time),identity(tenant_id)" --sort-by "tenant_id,event_time" --dedup-key event_id
	$(FLOE) status --warehouse $(WAREHOUSE) --table demo.events

$(VENV)/.installed: tests/python/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
	touch $@

venv: $(VENV)/.installed

# checkov (the infra/ test's static checks) in a virtualenv of its own: it pins boto3.
CHECKOV_VENV ?= .venv-checkov
$(CHECKOV_VENV)/.installed:
	$(PYTHON) -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --disable-pip-version-check checkov==3.3.30
	touch $@

checkov-venv: $(CHECKOV_VENV)/.installed

# LocalStack without Docker (test_localstack.py), in a virtualenv of its own: each pin fixes an
# import error of the newest release on Python 3.11 (../shared/TOOLING.md); tests/localstack is
# its Lambda executor for a machine without Docker.
LOCALSTACK_VENV ?= .venv-localstack
$(LOCALSTACK_VENV)/.installed: tests/localstack/pyproject.toml tests/localstack/floe_localstack/__init__.py
	$(PYTHON) -m venv $(LOCALSTACK_VENV)
	$(LOCALSTACK_VENV)/bin/pip install --quiet --disable-pip-version-check 'localstack-core[runtime]==4.9.2' \
		'cbor2<5.7' 'cryptography==43.0.3' 'pyopenssl==24.2.1' 'service_identity<25' 'joserfc<1.1' 'psutil<7'
	$(LOCALSTACK_VENV)/bin/pip install --quiet --disable-pip-version-check ./tests/localstack
	touch $@

localstack-venv: $(LOCALSTACK_VENV)/.installed

# Iceberg Java as the other engine (tests/python/test_spark_*.py), offline: Spark 3.5 (PyPI pyspark,
# Scala 2.12) with the iceberg-spark-runtime-3.5_2.12-1.10.2 jar that PyPI's
# snowpark-connect-deps-iceberg ships, the SQLite JDBC driver and jarjar from Debian, in a
# virtualenv that also holds the test readers (requirements.txt), so that pytest runs in it. The
# runtime jar lacks Iceberg's shaded Jackson: pyspark's Jackson jars relocated into
# org.apache.iceberg.shaded.com.fasterxml.jackson once (../shared/TOOLING.md, docs/TESTING.md).
SPARK_VENV ?= .venv-spark
SPARK_DEBS := libxerial-sqlite-jdbc-java libjarjar-java
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
$(SPARK_VENV)/.installed: tests/python/requirements.txt
	@dpkg -s $(SPARK_DEBS) >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(SPARK_DEBS); }
	$(PYTHON) -m venv $(SPARK_VENV)
	$(SPARK_VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt \
		pyspark==3.5.7 snowpark-connect-deps-iceberg==1.0.3
	touch $@

# The relocated Jackson jar, built once from the Jackson jars pyspark ships.
SPARK_JACKSON := $(SPARK_VENV)/jars/.relocated
$(SPARK_JACKSON): $(SPARK_VENV)/.installed tests/python/spark_engine.py
	$(SPARK_VENV)/bin/python tests/python/spark_engine.py --relocate-jackson $(dir $@)

spark-venv: $(SPARK_JACKSON)

test: test-rust test-python

# The AWS tests run against moto's server, started (on a free port) and stopped by with-moto.sh.
# The crash-point suites run last, uncaptured, so that their tables of fault points x results
# show in the output.
test-rust: build-tests venv
	$(CARGO) fmt --all --check
	VENV=$(VENV) tests/with-moto.sh $(CARGO) test --release --workspace -- --skip every_fault_point
	VENV=$(VENV) tests/with-moto.sh $(CARGO) test --release --workspace -- every_fault_point --nocapture

# The Terraform deployments (test_infra.py on moto, test_localstack.py on LocalStack) wait on the
# AWS provider most of the time, so they run side by side on 4 pytest-xdist workers (tests/python/conftest.py keeps each deployment's tests
# together); the other tests run one at a time. The Spark tests (test_spark_*.py: Iceberg Java as
# the other engine, about a minute on 2 cores) run in the Spark venv, one Spark session per module.
SPARK_TESTS := $(wildcard tests/python/test_spark_*.py)
test-python: build-tests venv checkov-venv localstack-venv spark-venv
	FLOE_BIN=$(abspath $(FLOE)) $(VENV)/bin/pytest -q --durations=10 tests/python \
		--ignore=tests/python/test_infra.py --ignore=tests/python/test_localstack.py $(SPARK_TESTS:%=--ignore=%)
	$(SPARK_PYTEST)
	FLOE_BIN=$(abspath $(FLOE)) LOCALSTACK_VENV=$(abspath $(LOCALSTACK_VENV)) $(VENV)/bin/pytest -q -n 4 --dist loadgroup \
		--durations=10 tests/python/test_infra.py tests/python/test_localstack.py

# The Spark tests alone.
SPARK_PYTEST = FLOE_BIN=$(abspath $(FLOE)) SPARK_VENV=$(abspath $(SPARK_VENV)) $(SPARK_VENV)/bin/pytest -q --durations=10 $(SPARK_TESTS)
test-spark: build-tests spark-venv
	$(SPARK_PYTEST)

# Everything docs/PERFORMANCE.md reports, rewritten in place: throughput against the raw
# decode+sort+encode baseline and the Python peer (BENCH_ARGS="--input DIR" for your own files),
# freshness under load, cold start, the scale and cost model; then memory and table age.
BENCH_JSON := $(TARGET)/bench/bench.json
bench: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7 pyiceberg-core==0.11.0
	$(VENV)/bin/python tests/bench/throughput.py --floe $(FLOE) --doc docs/PERFORMANCE.md --json-out $(BENCH_JSON) $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-dedup bench-soak bench-soak-moto bench-coldstart-lambda bench-scale bench-model bench-memory bench-table

# Exact dedup's reads per compaction task as the partition grows (1x, 4x, 16x its compacted
# files), with time-ordered ids, random ids, and a key that leads with the event time.
bench-dedup: build venv
	$(VENV)/bin/python tests/bench/dedup_index.py --floe $(FLOE) --doc docs/PERFORMANCE.md --json-out $(TARGET)/bench/dedup.json $(DEDUP_ARGS)

# Drop->visible latency at steady drop rates, embedded mode (SOAK_ARGS="--rates 8,32 --seconds 20").
bench-soak: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7
	$(VENV)/bin/python tests/bench/soak.py --floe $(FLOE) --doc docs/PERFORMANCE.md $(SOAK_ARGS)

# Drop->visible latency through the AWS pipeline on moto: S3 notifications, SQS, the writer and
# committer handlers (SOAK_MOTO_ARGS="--rates 1,4 --seconds 20").
bench-soak-moto: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7
	VENV=$(VENV) tests/with-moto.sh $(VENV)/bin/python tests/bench/soak_moto.py --floe $(FLOE) --doc docs/PERFORMANCE.md $(SOAK_MOTO_ARGS)

# The Lambda binaries' size and their start-up to the first event handled.
bench-coldstart: build venv
	$(VENV)/bin/python tests/bench/coldstart.py --bin-dir $(TARGET)/release --doc docs/PERFORMANCE.md

# The same, side by side with the binaries built as `make lambda` builds them (LAMBDA_PROFILE),
# for this machine's target, in a target directory of their own (a long build: fat LTO).
bench-coldstart-lambda: build venv
	$(LAMBDA_PROFILE) $(CARGO) build --release --target-dir $(TARGET)/lambda-host \
		-p floe-writer-fn -p floe-committer-fn -p floe-compactor-fn
	$(VENV)/bin/python tests/bench/coldstart.py --bin-dir $(TARGET)/release --doc docs/PERFORMANCE.md \
		--compare-dir $(TARGET)/lambda-host/release --compare-label "make lambda (LTO, 1 codegen unit)"

# The target workload for a simulated day: concurrency, committer load, requests, cost per TB.
bench-model: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7
	@test -f $(BENCH_JSON) || { echo "run make bench first (it writes $(BENCH_JSON))" >&2; exit 2; }
	$(VENV)/bin/python tests/bench/model.py --floe $(FLOE) --bench-json $(BENCH_JSON) \
		--scale-json $(TARGET)/bench/scale.json --doc docs/PERFORMANCE.md $(MODEL_ARGS)

# The scale model checked against measurement, at the tuned preset's sizes, with AWS's published
# latencies: one writer batch, one committer loaded at 40,000 files/min for 10 minutes, and its
# saturation point with a standing backlog (SCALE_ARGS="--seconds 60" for a shorter load).
bench-scale: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7
	$(VENV)/bin/python tests/bench/scale.py --floe $(FLOE) --doc docs/PERFORMANCE.md \
		--json-out $(TARGET)/bench/scale.json $(SCALE_ARGS)

# A table's commit cost and shape against its age: plots in docs/img/, figures in
# docs/BENCHMARKS.md#table-age (TABLE_ARGS=--commits 2000 for a shorter run).
bench-table: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7
	$(VENV)/bin/python tests/bench/table_age.py --floe $(FLOE) $(TABLE_ARGS)

# Writer peak RSS against batch size, and a decompression bomb (docs/BENCHMARKS.md#memory).
bench-memory: build venv
	$(VENV)/bin/python tests/bench/memory.py --floe $(FLOE) $(MEMORY_ARGS)

# Deployable Lambda functions (floe-writer, floe-committer, floe-compactor) as
# target/lambda/<name>/bootstrap.zip, for ARCH (arm64 or x86_64): stripped and without line
# tables (smaller to upload, faster to cold-start). cargo-lambda and the zig it links with come
# from a virtualenv of their own (pinned; nothing of the test stack), unless on the PATH already.
ARCH ?= arm64
LAMBDA_VENV ?= .venv-lambda
$(LAMBDA_VENV)/.installed:
	$(PYTHON) -m venv $(LAMBDA_VENV)
	$(LAMBDA_VENV)/bin/pip install --quiet --disable-pip-version-check cargo-lambda==1.9.2 ziglang==0.13.0
	touch $@

lambda:
	@case "$(ARCH)" in arm64|x86_64) ;; *) echo "ARCH must be arm64 or x86_64, got '$(ARCH)'" >&2; exit 2;; esac
	@command -v cargo-lambda >/dev/null || $(MAKE) --no-print-directory $(LAMBDA_VENV)/.installed
	$(LAMBDA_PROFILE) PATH="$(abspath $(LAMBDA_VENV))/bin:$$PATH" cargo lambda build --release $(if $(filter arm64,$(ARCH)),--arm64,--x86-64) \
		--output-format zip -p floe-writer-fn -p floe-committer-fn -p floe-compactor-fn

# Deploy the quickstart (infra/examples/quickstart): build the functions, then terraform apply,
# in the region of the environment (AWS_REGION, AWS_DEFAULT_REGION or the profile's) unless
# TF_VARS says `-var region=...`.
# TF_VARS passes more arguments to Terraform exactly as written, split at spaces only (quotes
# stay: TF_VARS='-var glue_databases=["web"]' reaches Terraform as typed), e.g.
# TF_VARS='-var catalog=glue -var glue_databases=["web"]'. A value with spaces goes in a
# variables file: TF_VARS='-var-file=prod.tfvars', or terraform.tfvars in the quickstart folder.
# LAMBDA_ARTIFACTS=DIR deploys the zips already in DIR (as make lambda lays them out) and
# builds nothing.
TF_DIR := infra/examples/quickstart
TF_INIT := terraform -chdir=$(TF_DIR) init -input=false $(if $(wildcard /opt/tf-plugins),-plugin-dir=/opt/tf-plugins)
export TF_VARS
TF_EXTRA := read -r -a extra <<< "$$TF_VARS";
ARTIFACTS = $(abspath $(if $(LAMBDA_ARTIFACTS),$(LAMBDA_ARTIFACTS),$(TARGET)/lambda))
deploy:
	$(if $(LAMBDA_ARTIFACTS),,$(MAKE) --no-print-directory lambda)
	$(TF_INIT)
	$(TF_EXTRA) terraform -chdir=$(TF_DIR) apply -var architecture=$(ARCH) -var artifacts_dir=$(ARTIFACTS) "$${extra[@]}"

# Destroy what make deploy made (its buckets must be empty unless force_destroy was set).
destroy:
	$(TF_EXTRA) terraform -chdir=$(TF_DIR) destroy -var architecture=$(ARCH) -var artifacts_dir=$(ARTIFACTS) "$${extra[@]}"

# The same against LocalStack or moto: the endpoint from AWS_ENDPOINT_URL (and DynamoDB's from
# AWS_ENDPOINT_URL_DYNAMODB when set: LocalStack without Docker serves no DynamoDB, moto beside
# it does), credentials from the usual AWS variables, the region from AWS_REGION (else
# us-east-1); buckets and tables may be destroyed (make destroy-local).
HOST_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86_64)
LOCAL_VARS = -var aws_endpoint_url=$$AWS_ENDPOINT_URL $${AWS_ENDPOINT_URL_DYNAMODB:+-var aws_endpoint_url_dynamodb=$$AWS_ENDPOINT_URL_DYNAMODB} \
	-var region=$${AWS_REGION:-$${AWS_DEFAULT_REGION:-us-east-1}} -var architecture=$(or $(LOCAL_ARCH),$(HOST_ARCH)) \
	-var artifacts_dir=$(ARTIFACTS) -var force_destroy=true -var deletion_protection=false -var check_sender_ids=false
deploy-local:
	@test -n "$$AWS_ENDPOINT_URL" || { echo "set AWS_ENDPOINT_URL (LocalStack: http://localhost:4566) and AWS credentials (any, e.g. test/test)" >&2; exit 2; }
	$(if $(LAMBDA_ARTIFACTS),,$(MAKE) --no-print-directory lambda ARCH=$(or $(LOCAL_ARCH),$(HOST_ARCH)))
	$(TF_INIT)
	$(TF_EXTRA) terraform -chdir=$(TF_DIR) apply -auto-approve $(LOCAL_VARS) "$${extra[@]}"

destroy-local:
	@test -n "$$AWS_ENDPOINT_URL" || { echo "set AWS_ENDPOINT_URL" >&2; exit 2; }
	$(TF_EXTRA) terraform -chdir=$(TF_DIR) destroy -auto-approve $(LOCAL_VARS) "$${extra[@]}"

lint:
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all --check

fmt:
	$(CARGO) fmt --all

clean:
	rm -rf $(RUN_DIR) $(WAREHOUSE)
