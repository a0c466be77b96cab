# Floe: make targets. `make test` is what CI runs (through .ci/run).
SHELL := /bin/bash
CARGO ?= cargo
PYTHON ?= python3
VENV ?= .venv
FLOE := target/release/floe
RUN_DIR ?= data/sample
WAREHOUSE ?= warehouse

.PHONY: build build-tests run test test-rust test-python venv bench bench-memory bench-table lint fmt clean lambda

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

test: test-rust test-python

# The AWS tests run against moto's server, started (on a free port) and stopped by with-moto.sh.
# The crash-point suites run last, uncaptured, so that their tables of fault points x results
# show in the output.
test-rust: build-tests venv
	VENV=$(VENV) tests/with-moto.sh $(CARGO) test --release --workspace -- --skip every_fault_point
	VENV=$(VENV) tests/with-moto.sh $(CARGO) test --release --workspace -- every_fault_point --nocapture

test-python: build-tests venv
	FLOE_BIN=$(abspath $(FLOE)) $(VENV)/bin/pytest -q tests/python

# Writer path vs raw decode+encode, per core. BENCH_ARGS="--input DIR" to use your own files.
bench: build
	$(FLOE) bench $(BENCH_ARGS)
	$(MAKE) --no-print-directory bench-memory
	$(MAKE) --no-print-directory bench-table

# A table's commit cost and shape against its age: plots in docs/img/, figures in
# docs/BENCHMARKS.md#table-age (TABLE_ARGS=--commits 2000 for a shorter run).
bench-table: build venv
	$(VENV)/bin/pip install --quiet matplotlib==3.10.7
	$(VENV)/bin/python tests/bench/table_age.py --floe $(FLOE) $(TABLE_ARGS)

# Writer peak RSS against batch size, and a decompression bomb (docs/BENCHMARKS.md#memory).
bench-memory: build venv
	$(VENV)/bin/python tests/bench/memory.py --floe $(FLOE) $(MEMORY_ARGS)

# Deployable Lambda binaries (floe-writer, floe-committer, floe-compactor) under target/lambda/: stripped and
# without line tables (smaller to upload, faster to cold-start).
lambda: venv
	@command -v cargo-lambda >/dev/null || $(VENV)/bin/pip install --quiet cargo-lambda==1.9.2
	CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_PROFILE_RELEASE_DEBUG=false \
		PATH="$(abspath $(VENV))/bin:$$PATH" cargo lambda build --release -p floe-writer-fn -p floe-committer-fn -p floe-compactor-fn

lint:
	$(CARGO) clippy --release --workspace --all-targets -- -D warnings
	$(CARGO) fmt --all --check

fmt:
	$(CARGO) fmt --all

clean:
	rm -rf $(RUN_DIR) $(WAREHOUSE)
