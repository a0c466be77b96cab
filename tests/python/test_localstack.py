"""`make deploy-local` of the quickstart against LocalStack, and files through it to rows.

LocalStack is what users run as their AWS double (in Docker: `localstack start`). Here it runs
without Docker ("host mode", from the virtualenv `make localstack-venv` makes, pins in
../shared/TOOLING.md), which changes two things, both stood in for the way the moto deployment
(test_infra.py) stands in for them:
- DynamoDB: LocalStack would download DynamoDB Local and a Java at run time, so DynamoDB is
  served by moto beside it, through `AWS_ENDPOINT_URL_DYNAMODB` (make deploy-local hands it to
  Terraform and to the functions);
- Lambda runs nothing without Docker: LocalStack's executor is swapped for one that creates
  functions without a container (tests/localstack/), the event source mappings are created
  disabled, and `floe run-function` runs each handler with the environment LocalStack stored
  for its function.

What is LocalStack's own: the buckets and their notification to the ingest queue (a file dropped
in the landing bucket reaches the writer only through it), the queues with their redrive, the
functions' configuration, concurrency and event source mappings, the schedule rules, the alarms
and the IAM roles. PyIceberg reads the table back through the deployment's DynamoDB catalog.
"""

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import boto3
import pytest
from test_infra import ROOT, artifacts, finish, free_port
from test_pyiceberg import floe, read_avro

FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target/release/floe"))
LOCALSTACK_VENV = Path(os.environ.get("LOCALSTACK_VENV", ROOT / ".venv-localstack"))
REGION = "us-east-1"
CREDENTIALS = dict(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_REGION=REGION,
                   AWS_DEFAULT_REGION=REGION)


def serve(argv, port, log, env=None, ready=None, timeout=90):
    """A server process on a loopback port, up when `ready()` holds (else the port accepts)."""
    proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            if ready is None or ready():
                return proc
        except OSError:
            pass
        time.sleep(0.3)
    proc.kill()
    log.flush()
    raise AssertionError(f"{argv[0]} did not start on port {port}; its log:\n{Path(log.name).read_text()[-4000:]}")


@pytest.fixture(scope="module")
def emulators(tmp_path_factory):
    """LocalStack for every service the quickstart uses but DynamoDB, moto for DynamoDB."""
    tmp = tmp_path_factory.mktemp("localstack")
    python = LOCALSTACK_VENV / "bin" / "python"
    assert python.exists(), f"no LocalStack virtualenv at {LOCALSTACK_VENV}: run `make localstack-venv`"
    moto_port, ls_port = free_port(), free_port()
    moto = serve([str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(moto_port)],
                 moto_port, open(tmp / "moto.log", "w"))
    ls_url = f"http://127.0.0.1:{ls_port}"

    def healthy():
        import urllib.request
        try:
            with urllib.request.urlopen(f"{ls_url}/_localstack/health", timeout=2) as r:
                services = json.load(r)["services"]
            return all(services.get(s) in ("available", "running") for s in ("s3", "sqs", "lambda", "iam"))
        except OSError:
            return False

    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(GATEWAY_SERVER="hypercorn", GATEWAY_LISTEN=f"127.0.0.1:{ls_port}",
               SERVICES="s3,sqs,events,lambda,iam,sts,logs,cloudwatch",
               LOCALSTACK_VOLUME_DIR=str(tmp / "volume"), FILESYSTEM_ROOT=str(tmp / "fs"),
               # Queue URLs under the endpoint itself, http://127.0.0.1:PORT/ACCOUNT/NAME (the
               # default names a host under localhost.localstack.cloud, which public DNS resolves
               # and this machine cannot).
               SQS_ENDPOINT_STRATEGY="off", LOCALSTACK_HOST=f"127.0.0.1:{ls_port}",
               LAMBDA_RUNTIME_EXECUTOR="floe-no-docker")
    localstack = serve([str(python), "-m", "localstack.runtime.main"], ls_port, open(tmp / "localstack.log", "w"),
                       env=env, ready=healthy)
    try:
        yield {"localstack": ls_url, "moto": f"http://127.0.0.1:{moto_port}", "tmp": tmp}
    finally:
        for p in (localstack, moto):
            p.terminate()
        for p in (localstack, moto):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()


def make(target, em, prefix, tf_vars=""):
    tmp = em["tmp"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(CREDENTIALS, AWS_ENDPOINT_URL=em["localstack"], AWS_ENDPOINT_URL_DYNAMODB=em["moto"],
               TF_IN_AUTOMATION="1", TF_CLI_CONFIG_FILE="/dev/null", TF_DATA_DIR=str(tmp / "tf"),
               TF_VARS=f"-state={tmp / 'terraform.tfstate'} -no-color -var name_prefix={prefix} {tf_vars}".strip())
    lambda_dir = tmp / "lambda"
    if not lambda_dir.exists():
        artifacts(lambda_dir)  # LocalStack stores a function's zip but never runs it here
    out = subprocess.run(["make", "--no-print-directory", target, f"LAMBDA_ARTIFACTS={lambda_dir}"], cwd=ROOT,
                         env=env, capture_output=True, text=True)
    assert out.returncode == 0, f"make {target} failed:\n{out.stdout[-5000:]}\n{out.stderr[-3000:]}"
    return out.stdout


def run_function(environment, role, *args):
    """A handler, locally, with the environment LocalStack stored for its function (plus the
    credentials Lambda would provide)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_"))}
    env.update(environment, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_REGION=REGION)
    return subprocess.Popen([FLOE, "run-function", role, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_make_deploy_local_on_localstack_lands_dropped_files(emulators, tmp_path):
    ls, ddb_ep = emulators["localstack"], emulators["moto"]
    prefix = "floe" + uuid.uuid4().hex[:6]
    # The mappings paused: LocalStack here cannot invoke the functions, `floe run-function` does.
    make("deploy-local", emulators, prefix, "-var event_sources_enabled=false")
    try:
        outputs = json.loads(subprocess.run(
            ["terraform", "-chdir=infra/examples/quickstart", "output", "-json",
             f"-state={emulators['tmp'] / 'terraform.tfstate'}"],
            cwd=ROOT, capture_output=True, text=True, check=True,
            env=dict(os.environ, TF_DATA_DIR=str(emulators["tmp"] / "tf"), TF_CLI_CONFIG_FILE="/dev/null")).stdout)
        o = {k: v["value"] for k, v in outputs.items()}
        client = lambda service, ep=ls: boto3.client(service, endpoint_url=ep, region_name=REGION,
                                                     aws_access_key_id="test", aws_secret_access_key="test")

        # What LocalStack made, read back through its APIs.
        lam = client("lambda")
        env = {}
        for role in ("writer", "committer", "compactor"):
            cfg = lam.get_function_configuration(FunctionName=f"{prefix}-{role}")
            assert cfg["Runtime"] == "provided.al2023" and cfg["Handler"] == "bootstrap", cfg
            assert cfg["State"] == "Active", cfg
            env[role] = cfg["Environment"]["Variables"]
            assert env[role]["AWS_ENDPOINT_URL"] == ls and env[role]["AWS_ENDPOINT_URL_DYNAMODB"] == ddb_ep, env[role]
        assert lam.get_function_concurrency(FunctionName=f"{prefix}-committer")["ReservedConcurrentExecutions"] == 2
        mappings = {m["FunctionArn"].rsplit(":", 1)[1]: m for m in lam.list_event_source_mappings()["EventSourceMappings"]
                    if f":{prefix}-" in m["FunctionArn"]}
        assert set(mappings) == {f"{prefix}-writer", f"{prefix}-committer", f"{prefix}-compactor"}, mappings
        assert mappings[f"{prefix}-committer"]["ScalingConfig"]["MaximumConcurrency"] == 2, mappings
        assert all(m["State"] in ("Disabled", "Disabling") for m in mappings.values()), mappings
        notification = client("s3").get_bucket_notification_configuration(Bucket=o["landing_bucket"])
        (queue_rule,) = notification["QueueConfigurations"]
        assert queue_rule["QueueArn"].endswith(f":{prefix}-ingest"), notification
        rules = client("events").list_rules(NamePrefix=prefix)["Rules"]
        assert rules and all(r["State"] == "ENABLED" for r in rules), rules
        alarms = client("cloudwatch").describe_alarms(AlarmNamePrefix=prefix)["MetricAlarms"]
        assert alarms, "no alarm was made"

        # Avro files dropped in the landing bucket: LocalStack's notification puts them on the
        # ingest queue; the writer reads them from there.
        src = tmp_path / "gen"
        floe("gen", "--out", src, "--files", 4, "--events-per-file", 300, "--seed", 11)
        files = sorted(src.glob("*.avro"))
        want = {str(r["event_id"]) for r in read_avro(files)}
        s3 = client("s3")
        for f in files:
            s3.upload_file(str(f), o["landing_bucket"], f"events/{f.name}")
        s3.put_object(Bucket=o["landing_bucket"], Key="events/notes.txt", Body=b"no .avro suffix: never notified")
        # Peeked (visibility 0): one notification per .avro object, none for the .txt, plus the
        # s3:TestEvent S3 sends when a notification is configured (AWS sends it too; the writer
        # must take it without a failure).
        sqs = client("sqs")
        deadline, keys, tests = time.monotonic() + 30, set(), 0
        while time.monotonic() < deadline and len(keys) < len(files):
            for m in sqs.receive_message(QueueUrl=o["ingest_queue_url"], MaxNumberOfMessages=10,
                                         VisibilityTimeout=0, WaitTimeSeconds=1).get("Messages", []):
                body = json.loads(m["Body"])
                if body.get("Event") == "s3:TestEvent":
                    tests += 1
                keys |= {r["s3"]["object"]["key"] for r in body.get("Records", [])}
        assert keys == {f"events/{f.name}" for f in files}, keys
        assert tests <= 1

        committer = run_function(env["committer"], "committer", "--until-idle-secs", 15)
        _, werr = finish(run_function(env["writer"], "writer", "--queue-url", o["ingest_queue_url"],
                                      "--until-idle-secs", 8), "writer")
        _, cerr = finish(committer, "committer")
        emf = lambda err: [json.loads(l) for l in err.splitlines() if l.startswith("{") and '"_aws"' in l]
        assert sum(d.get("rows", 0) for d in emf(werr)) == len(want), werr[-2000:]
        assert sum(d.get("committed_rows", 0) for d in emf(cerr)) == len(want), cerr[-2000:]

        from pyiceberg.catalog import load_catalog

        os.environ["AWS_ENDPOINT_URL_DYNAMODB"] = ddb_ep  # PyIceberg's DynamoDB catalog has no endpoint property
        try:
            cat = load_catalog("floe", **{
                "type": "dynamodb", "table-name": o["catalog_table"], "dynamodb.region": REGION,
                "dynamodb.access-key-id": "test", "dynamodb.secret-access-key": "test",
                "s3.endpoint": ls, "s3.region": REGION, "s3.access-key-id": "test", "s3.secret-access-key": "test",
                "s3.force-virtual-addressing": "false", "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
            })
            table = cat.load_table("default.events")
        finally:
            os.environ.pop("AWS_ENDPOINT_URL_DYNAMODB", None)
        got = [str(uuid.UUID(bytes=g)) if isinstance(g, bytes) else str(g)
               for g in table.scan().to_arrow().column("event_id").to_pylist()]
        assert len(got) == len(set(got)), "a row landed twice"
        assert set(got) == want, f"{len(want - set(got))} missing, {len(set(got) - want)} unexpected"
        assert table.metadata.location.startswith(o["warehouse"])
        for url in (o["ingest_queue_url"], o["commit_queue_url"], *o["dead_letter_queue_urls"].values()):
            attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
            assert attrs["ApproximateNumberOfMessages"] == "0" and attrs["ApproximateNumberOfMessagesNotVisible"] == "0", (url, attrs)
    finally:
        make("destroy-local", emulators, prefix, "-var event_sources_enabled=false")
    # make destroy-local took everything away.
    lam = boto3.client("lambda", endpoint_url=ls, region_name=REGION, aws_access_key_id="test",
                       aws_secret_access_key="test")
    assert not [f for f in lam.list_functions()["Functions"] if f["FunctionName"].startswith(prefix)]
