"""The Terraform module (infra/) and its quickstart, tested for real:

- `terraform fmt -check` and `validate` of the module and the example;
- checkov over infra/ with no unexplained finding (each accepted one suppressed inline, with
  its reason);
- `terraform apply` of the quickstart against moto, then data end to end through what it made:
  Avro files dropped in its landing bucket, notified to its ingest queue by its bucket
  notification, written and committed by the functions' handlers run locally (`floe
  run-function`) with exactly the environment the module gives the functions (read from the
  Terraform state), compacted by the compactor, read back by PyIceberg through its DynamoDB
  catalog; a second plan proposes no change; then `terraform destroy`;
- the least-privilege claims, checked on the IAM policies of that plan (`terraform show -json`)
  by a small evaluator of IAM's allow logic; and exactly: every AWS call each function makes in
  the end-to-end run, recorded by a proxy in front of moto (aws_recorder.py), is allowed by its
  role, and every grant of its role is called or listed, with the reason, in NOT_EXERCISED;
- the queues' own policies (each accepts sends only from its senders, TLS only), the warehouse
  bucket's versioning and a KMS key given by its alias, on a plan.

moto creates the Lambda functions but does not run them (no Docker here): that is what
`floe run-function` stands in for, the way the SQS event source mapping feeds the functions.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import uuid
import zipfile
from pathlib import Path

import boto3
import pytest
from aws_recorder import Recorder
from test_pyiceberg import floe, read_avro

ROOT = Path(__file__).resolve().parents[2]
INFRA = ROOT / "infra"
QUICKSTART = INFRA / "examples" / "quickstart"
MIRROR = Path("/opt/tf-plugins")
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target/release/floe"))


def terraform(*args, cwd=QUICKSTART, env=None, check=True, data_dir=None):
    exe = shutil.which("terraform")
    assert exe, "terraform is not installed (see ../shared/TOOLING.md; CI machines have 1.11)"
    e = dict(os.environ if env is None else env)
    e["TF_IN_AUTOMATION"] = "1"
    e.setdefault("TF_CLI_CONFIG_FILE", "/dev/null")
    if data_dir:
        e["TF_DATA_DIR"] = str(data_dir)
    out = subprocess.run([exe, *map(str, args)], cwd=cwd, env=e, capture_output=True, text=True)
    if check:
        assert out.returncode == 0, f"terraform {' '.join(map(str, args))} failed:\n{out.stdout[-4000:]}\n{out.stderr[-4000:]}"
    return out


def init(cwd, data_dir):
    """`terraform init` from the local provider mirror when present, else the registry."""
    plugin = [f"-plugin-dir={MIRROR}"] if MIRROR.is_dir() else []
    terraform("init", "-backend=false", "-input=false", "-no-color", *plugin, cwd=cwd, data_dir=data_dir)


def destroy(state, tfvars, env, data_dir):
    """`terraform destroy`, asserted to succeed. Run once more when a delete found its resource
    already gone: when the SDK retries a delete whose first answer was lost (moto under load), the
    retry gets ResourceNotFoundException, which the provider forgives only with AWS's own wording
    ("Requested resource not found: Table: ..."), not moto's ("Requested resource not found").
    The second run refreshes the state, sees the resource gone and removes the rest."""
    args = ("destroy", "-auto-approve", "-input=false", "-no-color", f"-state={state}", *tfvars)
    run = terraform(*args, env=env, data_dir=data_dir, check=False)
    if run.returncode != 0 and "ResourceNotFoundException" in run.stderr:
        run = terraform(*args, env=env, data_dir=data_dir, check=False)
    assert run.returncode == 0, f"terraform destroy failed:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"


def test_terraform_fmt_and_validate(tmp_path):
    terraform("fmt", "-check", "-recursive", "-diff", cwd=INFRA)
    for cwd in (INFRA, QUICKSTART):
        data = tmp_path / cwd.name
        init(cwd, data)
        terraform("validate", "-no-color", cwd=cwd, data_dir=data)


def test_checkov_finds_nothing_unexplained():
    checkov = ROOT / ".venv-checkov/bin/checkov"
    assert checkov.exists(), "checkov's own virtualenv is missing: run `make checkov-venv` (make test does)"
    out = subprocess.run(
        [str(checkov), "-d", str(INFRA), "--framework", "terraform", "--skip-download", "-o", "json"],
        capture_output=True, text=True,
    )
    reports = json.loads(out.stdout)
    reports = reports if isinstance(reports, list) else [reports]
    failed, skipped = [], []
    for r in reports:
        failed += r["results"].get("failed_checks", [])
        skipped += r["results"].get("skipped_checks", [])
    assert not failed, "checkov findings:\n" + "\n".join(
        f"{c['check_id']} {c['resource']} ({c['file_path']}:{c['file_line_range']}): {c['check_name']}" for c in failed
    )
    assert skipped, "the suppressions in infra/ were not seen"
    for c in skipped:
        reason = (c.get("check_result") or {}).get("suppress_comment", "")
        assert len(reason.strip()) > 20, f"{c['check_id']} on {c['resource']} is suppressed without a reason"


# --- IAM: a small evaluator of identity-policy allows -------------------------------------

def _listify(v):
    return v if isinstance(v, list) else [v]


def _wild(pattern, value, fold=False):
    """IAM's wildcards: `*` any run of characters (also across `/`), `?` one; nothing else."""
    rx = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(rx, value, re.IGNORECASE if fold else 0) is not None


NEGATED = {"StringNotEquals": "StringEquals", "ArnNotEquals": "ArnEquals", "StringNotLike": "StringLike",
           "ArnNotLike": "ArnLike"}


def _condition_holds(test, key, values, context):
    values = [str(v) for v in _listify(values)]
    have = context.get(key)
    if test.endswith("IfExists"):
        # As IAM: true when the key is absent, else the operator without IfExists.
        return have is None or _condition_holds(test.removesuffix("IfExists"), key, values, context)
    if test in NEGATED:
        # As IAM: a negated operator holds when the key is absent, else when no value matches.
        return have is None or not _condition_holds(NEGATED[test], key, values, context)
    if test == "Null":
        assert len(values) == 1 and values[0] in ("true", "false"), values
        return (have is None) == (values[0] == "true")
    if test.startswith("ForAllValues:"):
        # As IAM: true when the key is absent or every value matches one of the condition's.
        op = test.split(":", 1)[1]
        return all(_condition_holds(op, key, values, {key: h}) for h in _listify(have or []))
    if have is None:
        return False
    h = str(_listify(have)[0])
    if test in ("StringEquals", "ArnEquals"):
        return h in values
    if test == "Bool":
        return h.lower() in [v.lower() for v in values]
    if test in ("StringLike", "ArnLike"):
        return any(_wild(v, h) for v in values)
    raise AssertionError(f"the evaluator does not know condition {test}")


KNOWN = {"Sid", "Effect", "Action", "Resource", "Condition", "Principal"}


def _principal_matches(stated, principal):
    """A statement's Principal ("*", {"AWS": ...}, {"Service": ...}) against the caller, given as
    {"AWS": arn} or {"Service": name}."""
    if stated == "*":
        return True
    assert isinstance(stated, dict) and set(stated) <= {"AWS", "Service"}, f"the evaluator cannot judge {stated}"
    (kind, who), = principal.items()
    names = _listify(stated.get(kind, []))
    return "*" in names or who in names


def verdict(policy, action, resource, context=None, principal=None):
    """"Deny", "Allow" or None (neither): what `policy` says of `action` on `resource`, explicit
    denies winning. A resource policy's statements apply only to the principal they name, so it
    needs `principal` (with its keys, aws:PrincipalArn, aws:PrincipalIsAWSService, in
    `context`). Refuses statements it cannot judge (NotAction, NotResource, NotPrincipal, ...),
    so none passes falsely."""
    context = context or {}
    out = None
    for st in _listify(policy["Statement"]):
        unknown = set(st) - KNOWN
        assert not unknown, f"the evaluator cannot judge {unknown} in {st}"
        if "Principal" in st:
            assert principal is not None, "a resource policy is judged for a principal"
            if not _principal_matches(st["Principal"], principal):
                continue
        if not any(_wild(a, action, fold=True) for a in _listify(st.get("Action", []))):
            continue
        if not any(_wild(r, resource) for r in _listify(st.get("Resource", []))):
            continue
        conds = st.get("Condition", {})
        if not all(_condition_holds(t, k, v, context) for t, kv in conds.items() for k, v in kv.items()):
            continue
        if st.get("Effect", "Allow") == "Deny":
            return "Deny"
        out = "Allow"
    return out


def allowed(policy, action, resource, context=None):
    """Whether the identity policy `policy` allows `action` on `resource` (explicit denies win)."""
    return verdict(policy, action, resource, context) == "Allow"


def permitted(action, resource, principal, context, identity=None, resource_policy=None):
    """IAM's answer for a principal of the resource's own account: an explicit Deny in either
    policy refuses; else an Allow in either grants."""
    said = [verdict(identity, action, resource, context) if identity else None,
            verdict(resource_policy, action, resource, context, principal) if resource_policy else None]
    return "Deny" not in said and "Allow" in said


def as_role(arn, tls=True, **context):
    """A role's call: the principal and the keys IAM puts in its request context."""
    return {"AWS": arn}, {"aws:PrincipalArn": arn, "aws:PrincipalIsAWSService": False,
                          "aws:SecureTransport": tls, **context}


def as_service(name, tls=True, **context):
    """An AWS service principal acting itself (S3 delivering a notification): no aws:PrincipalArn."""
    return {"Service": name}, {"aws:PrincipalIsAWSService": True, "aws:SecureTransport": tls, **context}


def test_the_evaluator_follows_iam():
    p = {"Statement": [
        {"Effect": "Allow", "Action": "s3:Get*", "Resource": "arn:aws:s3:::b/p/*"},
        {"Effect": "Allow", "Action": "dynamodb:PutItem", "Resource": "t",
         "Condition": {"ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["quarantine|*"]}}},
        {"Effect": "Deny", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::b/p/secret",
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]}
    assert allowed(p, "S3:GETOBJECT", "arn:aws:s3:::b/p/x/y"), "actions are case-insensitive, * crosses /"
    assert not allowed(p, "s3:GetObject", "arn:aws:s3:::b/q/x")
    assert not allowed(p, "s3:GetObject", "arn:aws:s3:::b/p/secret", {"aws:SecureTransport": False})
    assert allowed(p, "s3:GetObject", "arn:aws:s3:::b/p/secret", {"aws:SecureTransport": True})
    assert allowed(p, "dynamodb:PutItem", "t", {"dynamodb:LeadingKeys": ["quarantine|a"]})
    assert not allowed(p, "dynamodb:PutItem", "t", {"dynamodb:LeadingKeys": ["quarantine|a", "x|b"]})
    assert allowed(p, "dynamodb:PutItem", "t"), "ForAllValues holds when the key is absent, as in IAM"
    assert not allowed({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "a[b]"}]}, "s3:x", "ab")
    with pytest.raises(AssertionError):
        allowed({"Statement": [{"Effect": "Allow", "NotAction": "s3:*", "Resource": "*"}]}, "sqs:x", "r")

    # A resource policy: its statements apply to the principals they name; negated and
    # IfExists operators hold when their key is absent.
    q = {"Statement": [
        {"Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"}, "Action": "sqs:SendMessage", "Resource": "q",
         "Condition": {"ArnEquals": {"aws:SourceArn": "arn:aws:s3:::b"}}},
        {"Effect": "Deny", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "q",
         "Condition": {"ArnNotEquals": {"aws:PrincipalArn": ["arn:aws:iam::1:role/a"]},
                       "BoolIfExists": {"aws:PrincipalIsAWSService": "false"}}},
    ]}
    anything = {"Statement": [{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}]}
    s3, ctx = as_service("s3.amazonaws.com", **{"aws:SourceArn": "arn:aws:s3:::b"})
    assert permitted("sqs:SendMessage", "q", s3, ctx, resource_policy=q)
    s3, ctx = as_service("s3.amazonaws.com", **{"aws:SourceArn": "arn:aws:s3:::other"})
    assert not permitted("sqs:SendMessage", "q", s3, ctx, resource_policy=q), "another bucket"
    assert permitted("sqs:SendMessage", "q", *as_role("arn:aws:iam::1:role/a"), anything, q)
    assert not permitted("sqs:SendMessage", "q", *as_role("arn:aws:iam::1:role/a"), None, q), "no Allow anywhere"
    assert not permitted("sqs:SendMessage", "q", *as_role("arn:aws:iam::1:role/b"), anything, q), "the Deny wins"
    assert permitted("sqs:PurgeQueue", "q", *as_role("arn:aws:iam::1:role/b"), anything, q), "only sending is denied"
    assert _condition_holds("StringNotEquals", "k", ["a"], {})
    assert not _condition_holds("StringNotEquals", "k", ["a"], {"k": "a"})
    with pytest.raises(AssertionError):
        verdict(q, "sqs:SendMessage", "q")


# --- the deployment on moto -------------------------------------------------------------

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


@pytest.fixture(scope="module")
def moto():
    port = free_port()
    log = open(Path(os.environ.get("TMPDIR", "/tmp")) / f"moto-infra-{port}.log", "w")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
                            stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    for _ in range(150):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait()


def artifacts(dir_):
    """Stand-in zips: moto stores a function's code but never runs it."""
    for name in ("floe-writer", "floe-committer", "floe-compactor"):
        (dir_ / name).mkdir(parents=True)
        with zipfile.ZipFile(dir_ / name / "bootstrap.zip", "w") as z:
            z.writestr("bootstrap", "#!/bin/sh\nexit 1\n")
    return dir_


@pytest.fixture(scope="module", params=["dynamodb", "glue"])
def deployed(request, moto, tmp_path_factory):
    catalog = request.param
    tmp = tmp_path_factory.mktemp(f"quickstart-{catalog}")
    env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1",
               AWS_DEFAULT_REGION="us-east-1")
    env.pop("AWS_ENDPOINT_URL", None)  # the provider gets it as a variable, as make deploy-local does
    data = tmp / "tf"
    init(QUICKSTART, data)
    state = tmp / "terraform.tfstate"
    prefix = "floe" + uuid.uuid4().hex[:6]
    tfvars = ["-var", f"aws_endpoint_url={moto}", "-var", f"artifacts_dir={artifacts(tmp / 'lambda')}",
              "-var", "force_destroy=true", "-var", "deletion_protection=false", "-var", f"name_prefix={prefix}",
              # moto's event source mappings take messages off the queues and "invoke" functions it
              # cannot run: paused, so that `floe run-function` is what feeds the functions.
              "-var", "event_sources_enabled=false", "-var", f"catalog={catalog}",
              # moto stamps one sender id on every message, no role's: the committer's sender
              # check is off, as make deploy-local has it (its settings: the queue policy test).
              "-var", "check_sender_ids=false"]
    terraform("apply", "-auto-approve", "-input=false", "-no-color", f"-state={state}", *tfvars, env=env, data_dir=data)
    # One recording proxy in front of moto per function: the end-to-end test runs each function
    # through its own, and test_each_function_calls_only_what_its_role_grants reads what it saw.
    recorders = {role: Recorder(moto) for role in ("writer", "committer", "compactor")}
    try:
        terraform("plan", "-input=false", "-no-color", f"-state={state}", f"-out={tmp / 'again.tfplan'}", *tfvars,
                  env=env, data_dir=data)
        plan = json.loads(terraform("show", "-json", tmp / "again.tfplan", env=env, data_dir=data).stdout)
        outputs = json.loads(terraform("output", "-json", f"-state={state}", env=env, data_dir=data).stdout)
        yield {"endpoint": moto, "plan": plan, "outputs": {k: v["value"] for k, v in outputs.items()}, "tmp": tmp,
               "catalog": catalog, "recorders": recorders}
    finally:
        for r in recorders.values():
            r.close()
        destroy(state, tfvars, env, data)


def test_an_s3_tables_deployment_plans_its_bucket_and_least_privilege(moto, tmp_path):
    """catalog = "s3tables" against moto. moto's S3 Tables lacks the maintenance API the provider
    reads back after creating a table bucket, so the bucket is planned, not applied: everything
    the functions need (queues, tables, roles, policies, the functions themselves) is applied
    with -target, then a full plan shows the table bucket and namespaces to create, the
    functions' environment (the bucket's ARN, the commit age limit a day under the removal
    window), and policies that give S3 Tables rights only where each role needs them."""
    env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1",
               AWS_DEFAULT_REGION="us-east-1")
    env.pop("AWS_ENDPOINT_URL", None)
    data, state = tmp_path / "tf", tmp_path / "terraform.tfstate"
    init(QUICKSTART, data)
    prefix = "floe" + uuid.uuid4().hex[:6]
    tfvars = ["-var", f"aws_endpoint_url={moto}", "-var", f"artifacts_dir={artifacts(tmp_path / 'lambda')}",
              "-var", "force_destroy=true", "-var", "deletion_protection=false", "-var", f"name_prefix={prefix}",
              "-var", "event_sources_enabled=false", "-var", "catalog=s3tables",
              "-var", 's3tables_namespaces=["web","default"]']
    terraform("apply", "-auto-approve", "-input=false", "-no-color", f"-state={state}",
              "-target=module.floe.aws_lambda_function.function", *tfvars, env=env, data_dir=data)
    try:
        terraform("plan", "-input=false", "-no-color", f"-state={state}", f"-out={tmp_path / 'p'}", *tfvars,
                  env=env, data_dir=data)
        plan = json.loads(terraform("show", "-json", tmp_path / "p", env=env, data_dir=data).stdout)
    finally:
        destroy(state, tfvars, env, data)
    creates = {c["address"]: c["change"]["after"] for c in plan["resource_changes"] if c["change"]["actions"] == ["create"]}
    bucket = creates["module.floe.aws_s3tables_table_bucket.tables[0]"]
    assert bucket["name"] == f"{prefix}-tables"
    removal = bucket["maintenance_configuration"]["iceberg_unreferenced_file_removal"]
    assert removal["status"] == "enabled" and removal["settings"]["unreferenced_days"] == 3, removal
    assert {v["namespace"] for a, v in creates.items() if ".aws_s3tables_namespace.namespace[" in a} == {"web", "default"}
    res = resources(plan)
    assert not any(".aws_dynamodb_table.catalog[" in a for a in res), "no DynamoDB catalog with S3 Tables"
    arn = f"arn:aws:s3tables:us-east-1:123456789012:bucket/{prefix}-tables"
    fns = [v for a, v in res.items() if ".aws_lambda_function.function[" in a]
    assert len(fns) == 3
    for v in fns:
        variables = v["environment"][0]["variables"]
        assert variables["FLOE_CATALOG"] == "s3tables", variables
        assert variables["FLOE_S3TABLES_BUCKET_ARN"] == arn, variables
        assert variables["FLOE_MAX_COMMIT_AGE_HOURS"] == "48", variables
    pol = {a.split('"')[1]: json.loads(v["policy"]) for a, v in res.items() if ".aws_iam_role_policy.function[" in a}
    w, c, k = pol["writer"], pol["committer"], pol["compactor"]
    table = f"{arn}/table/0f2b6a3c-9d7e-4e1a-b3c4-5d6e7f8a9b0c"
    for role in (w, c, k):
        for action in ("s3tables:GetTableMetadataLocation", "s3tables:GetTableData", "s3tables:PutTableData"):
            assert allowed(role, action, table), action
    for action in ("s3tables:UpdateTableMetadataLocation",):
        assert allowed(c, action, table)
        assert not allowed(w, action, table) and not allowed(k, action, table), "only the committer swaps"
    for action in ("s3tables:CreateTable", "s3tables:CreateNamespace"):
        assert allowed(c, action, arn)
        assert not allowed(w, action, arn) and not allowed(k, action, arn), "only the committer creates tables"
    for role in (w, c, k):
        for action in ("s3tables:DeleteTable", "s3tables:DeleteTableBucket", "s3tables:PutTableMaintenanceConfiguration"):
            assert not allowed(role, action, table) and not allowed(role, action, arn), action
        assert not allowed(role, "s3tables:GetTableData", "arn:aws:s3tables:us-east-1:123456789012:bucket/other/table/x")
    # The orphan sweep does not run on S3 Tables (its storage refuses deletes; the bucket's own
    # unreferenced-file removal does that work): the compactor deletes nothing, though the
    # sweep's schedule is on by default.
    warehouse = f"arn:aws:s3:::{prefix}-warehouse-123456789012-us-east-1/warehouse"
    for path in ("web.db/events/data/x.parquet", "web.db/events/metadata/x.avro"):
        assert not allowed(k, "s3:DeleteObject", f"{warehouse}/{path}"), path


class Planner:
    """Plans of the quickstart against moto, with only its queues applied (the functions'
    environment names their URLs, which a plan alone leaves unknown), and the module's
    resources in `targets` too; `extra` variables on every apply and plan."""

    def __init__(self, moto, tmp_path, targets=(), extra=()):
        self.env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                        AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1")
        self.env.pop("AWS_ENDPOINT_URL", None)
        self.tmp, self.data, self.state = tmp_path, tmp_path / "tf", tmp_path / "terraform.tfstate"
        init(QUICKSTART, self.data)
        self.vars = ["-var", f"aws_endpoint_url={moto}", "-var", f"artifacts_dir={artifacts(tmp_path / 'lambda')}",
                     "-var", f"name_prefix=floe{uuid.uuid4().hex[:6]}", "-var", "event_sources_enabled=false",
                     "-var", "force_destroy=true", "-var", "deletion_protection=false",
                     # The roles' unique ids (the committer's sender settings) are unknown until
                     # they exist, and would hide the functions' whole environment from a plan
                     # that did not apply them: the check is on only where a test asks for it.
                     "-var", "check_sender_ids=false", *extra]
        terraform("apply", "-auto-approve", "-input=false", "-no-color", f"-state={self.state}",
                  "-target=module.floe.aws_sqs_queue.ingest", "-target=module.floe.aws_sqs_queue.commit",
                  "-target=module.floe.aws_sqs_queue.share", *[f"-target=module.floe.{t}" for t in targets],
                  *self.vars, env=self.env, data_dir=self.data)

    def plan(self, *extra, check=True):
        """The plan as JSON, or the failed run when check is False."""
        out = self.tmp / f"p{uuid.uuid4().hex[:6]}"
        run = terraform("plan", "-input=false", "-no-color", f"-state={self.state}", f"-out={out}",
                        *self.vars, *extra, env=self.env, data_dir=self.data, check=check)
        if not check:
            return run
        return json.loads(terraform("show", "-json", out, env=self.env, data_dir=self.data).stdout)

    def destroy(self):
        destroy(self.state, self.vars, self.env, self.data)


def test_a_rest_catalog_deployment_gives_each_role_its_settings_and_keeps_secrets_out_of_outputs(moto, tmp_path):
    """catalog = "rest", planned against moto (a REST catalog needs no AWS resource of its own):
    every function gets the catalog's settings; the committer gets the committing credential,
    the writer and the compactor (which only load tables) the reader credential; no output
    shows a secret; and the settings a deployer can get wrong fail the plan with a clear error."""
    committer, reader = "floe-committer:c0mmit-s3cret", "floe-reader:r3ad-s3cret"
    rest = ["-var", "catalog=rest", "-var", "rest_uri=https://catalog.example.com/api/catalog",
            "-var", "rest_warehouse=lake"]
    planner = Planner(moto, tmp_path)
    try:
        rest_catalog_plans(planner, rest, committer, reader)
    finally:
        planner.destroy()


def rest_catalog_plans(planner, rest, committer, reader):
    plan = planner.plan(*rest, "-var", f"rest_credential={committer}", "-var", f"rest_reader_credential={reader}")
    creates = {c["address"]: c["change"] for c in plan["resource_changes"] if c["change"]["actions"] == ["create"]}
    assert not any(".aws_dynamodb_table.catalog[" in a for a in creates), "no DynamoDB catalog with a REST catalog"
    assert not any("glue_catalog_database" in a or "s3tables" in a for a in creates)
    fns = {a.split('"')[1]: c for a, c in creates.items() if ".aws_lambda_function.function[" in a}
    assert set(fns) == {"writer", "committer", "compactor"}
    for role, change in fns.items():
        variables = change["after"]["environment"][0]["variables"]
        assert variables["FLOE_CATALOG"] == "rest", variables
        assert variables["FLOE_REST_URI"] == "https://catalog.example.com/api/catalog"
        assert variables["FLOE_REST_WAREHOUSE"] == "lake"
        assert "FLOE_REST_TOKEN" not in variables and "FLOE_REST_SIGV4" not in variables
        assert variables["FLOE_REST_CREDENTIAL"] == (committer if role == "committer" else reader), role
        assert change["after_sensitive"]["environment"][0]["variables"], "the environment is marked sensitive"
    outputs = json.dumps(plan["planned_values"].get("outputs", {})) + json.dumps(plan.get("output_changes", {}))
    assert "s3cret" not in outputs, "a REST catalog secret shows in an output"

    signed = planner.plan(*rest, "-var", "rest_sigv4=true", "-var", "rest_signing_name=s3tables")
    for c in signed["resource_changes"]:
        if ".aws_lambda_function.function[" in c["address"]:
            variables = c["change"]["after"]["environment"][0]["variables"]
            assert variables["FLOE_REST_SIGV4"] == "true" and variables["FLOE_REST_SIGNING_NAME"] == "s3tables"
            assert variables["FLOE_REST_SIGNING_REGION"] == "us-east-1"
            assert "FLOE_REST_CREDENTIAL" not in variables and "FLOE_REST_TOKEN" not in variables

    # Secrets by ARN: only the ARN in the environment; the committer's secret only the committer
    # may read, the reader's only the writer and the compactor; neither any other secret.
    token_arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:floe/rest-token-AbCdEf"
    cred_arn = "arn:aws:ssm:us-east-1:123456789012:parameter/floe/rest-credential"
    reader_arns = {"secretsmanager": "arn:aws:secretsmanager:us-east-1:123456789012:secret:floe/rest-reader-XyZ012",
                   "ssm": "arn:aws:ssm:us-east-1:123456789012:parameter/floe/rest-reader"}
    for arn, var, env_name, action in [(token_arn, "rest_token_arn", "FLOE_REST_TOKEN_ARN", "secretsmanager:GetSecretValue"),
                                       (cred_arn, "rest_credential_arn", "FLOE_REST_CREDENTIAL_ARN", "ssm:GetParameter")]:
        service = action.split(":")[0]
        reader = reader_arns[service]
        by_arn = planner.plan(*rest, "-var", f"{var}={arn}", "-var", f"rest_reader_{var.removeprefix('rest_')}={reader}")
        for c in by_arn["resource_changes"]:
            after = c["change"]["after"] or {}
            if ".aws_lambda_function.function[" in c["address"]:
                role = c["address"].split('"')[1]
                variables = after["environment"][0]["variables"]
                assert variables[env_name] == (arn if role == "committer" else reader), (role, variables)
                assert "FLOE_REST_TOKEN" not in variables and "FLOE_REST_CREDENTIAL" not in variables, variables
        docs = resources(by_arn)
        committer = json.loads(docs['module.floe.data.aws_iam_policy_document.rest_secret["committer"]']["json"])
        readers = json.loads(docs['module.floe.data.aws_iam_policy_document.rest_secret["reader"]']["json"])
        assert allowed(committer, action, arn) and not allowed(committer, action, reader), committer
        assert allowed(readers, action, reader) and not allowed(readers, action, arn), readers
        for doc in (committer, readers):
            assert not allowed(doc, action, arn + "-other"), doc
            other = "secretsmanager:GetSecretValue" if service == "ssm" else "ssm:GetParameter"
            assert not allowed(doc, other, arn) and not allowed(doc, other, reader), doc
        # Sharing the committer's secret is a choice a deployer makes by name.
        shared = planner.plan(*rest, "-var", f"{var}={arn}", "-var", "rest_readers_share_committer_secret=true")
        docs = resources(shared)
        readers = json.loads(docs['module.floe.data.aws_iam_policy_document.rest_secret["reader"]']["json"])
        assert allowed(readers, action, arn), readers

    wrong = [
        ([*rest, "-var", f"rest_token_arn={token_arn}", "-var", "rest_token=t"], "not two"),
        ([*rest, "-var", f"rest_token_arn={token_arn}"], "rest_readers_share_committer_secret = true"),
        ([*rest, "-var", "rest_token=t"], "rest_readers_share_committer_secret = true"),
        ([*rest, "-var", "rest_token=t", "-var", "rest_reader_token=r", "-var", f"rest_reader_token_arn={token_arn}"],
         "not two"),
        ([*rest, "-var", "rest_token_arn=arn:aws:s3:::bucket/token"], "rest_token_arn must be a Secrets Manager secret ARN"),
        (["-var", "catalog=rest", "-var", "rest_uri=http://catalog.example.com"], "rest_allow_http"),
        (["-var", "catalog=rest", "-var", "rest_uri=catalog.example.com"], "http:// or https:// URL"),
        (["-var", "catalog=rest"], "needs rest_uri"),
        ([*rest, "-var", "rest_sigv4=true", "-var", "rest_token=t"], "leave rest_token and rest_credential unset"),
        ([*rest, "-var", "rest_token=t", "-var", "rest_credential=a:b"], "not both"),
        ([*rest, "-var", "rest_credential=no-colon"], "CLIENT_ID:CLIENT_SECRET"),
        (["-var", "catalog=rest", "-var", "rest_uri=catalog.example.com"], "http:// or https:// URL"),
        (["-var", "catalog=nessie"], "\"rest\""),
    ]
    for args, message in wrong:
        run = planner.plan(*args, check=False)
        text = " ".join((run.stdout + run.stderr).replace("│", " ").split())
        assert run.returncode != 0 and message in text, f"{args}: {text[-1500:]}"


def test_the_at_scale_settings_plan_what_the_scale_model_prices(moto, tmp_path):
    """infra/examples/quickstart/at-scale.tfvars (what docs/PERFORMANCE.md's model reads as its
    tuned column) validates and deploys those settings; without it the quickstart passes null
    and the module keeps its own defaults, the same but for the writer's memory (sized for 2 MB
    objects, capped at 2048 MB: a bigger batch is written in rounds)."""
    planner = Planner(moto, tmp_path)
    try:
        def settings(plan):
            out = {}
            for c in plan["resource_changes"]:
                after, a = c["change"]["after"] or {}, c["address"]
                if ".aws_lambda_function.function[" in a:
                    role = a.split('"')[1]
                    out[role] = after["memory_size"]
                    out[role + " env"] = after["environment"][0]["variables"]
                elif ".aws_lambda_event_source_mapping." in a:
                    out["esm " + a.split(".")[-1]] = after
            return out

        plain = settings(planner.plan())
        assert (plain["writer"], plain["committer"]) == (2048, 1769), "the module's defaults"
        scale = settings(planner.plan("-var-file", str(QUICKSTART / "at-scale.tfvars")))
        assert scale["writer"] == 1984, "3 x 1000 objects x 0.61 MB + 100 MB, rounded up to 64 MB"
        assert scale["committer"] == 1769
        assert scale["compactor env"]["FLOE_COMPACT_MAX_TASKS"] == "6"
        assert scale["compactor env"]["FLOE_COMPACT_MAX_INVOCATIONS"] == "200"
        esm = scale["esm writer"]
        assert (esm["batch_size"], esm["maximum_batching_window_in_seconds"]) == (1000, 5)
        assert scale["esm compactor[0]"]["scaling_config"] == [{"maximum_concurrency": 199}]
        assert (plain["esm writer"]["batch_size"], plain["compactor env"]["FLOE_COMPACT_MAX_TASKS"]) == (1000, "6")
        assert plain["esm writer"]["maximum_batching_window_in_seconds"] == 5, "a lone object waits 5 s at most"
        assert plain["compactor env"]["FLOE_COMPACT_MAX_INVOCATIONS"] == "200"

        # The committer's reservation: off on small accounts (their unreserved pool must stay at
        # 10), else the event source's maximum concurrency too; 1 would throttle the second poller.
        def committer(plan):
            fn = next(c["change"]["after"] for c in plan["resource_changes"]
                      if c["address"].endswith('aws_lambda_function.function["committer"]'))
            esm = next(c["change"]["after"] for c in plan["resource_changes"]
                       if c["address"].endswith("aws_lambda_event_source_mapping.committer"))
            return fn["reserved_concurrent_executions"], esm["scaling_config"][0]["maximum_concurrency"]

        assert committer(planner.plan()) == (2, 2)
        assert committer(planner.plan("-var", "committer_reserved_concurrency=0")) == (-1, 2)
        assert committer(planner.plan("-var", "committer_reserved_concurrency=4")) == (4, 4)
        bad = planner.plan("-var", "committer_reserved_concurrency=1", check=False)
        text = " ".join((bad.stdout + bad.stderr).replace("│", " ").split())
        assert bad.returncode != 0 and "committer_reserved_concurrency must be 0" in text, text[-1500:]

        # A 32-character name_prefix passes its own check, but the composed warehouse bucket
        # name (prefix, "-warehouse-", account, region) would pass S3's 63: refused at plan.
        long = planner.plan("-var", f"name_prefix=f{'x' * 30}1", check=False)
        text = " ".join((long.stdout + long.stderr).replace("│", " ").split())
        assert long.returncode != 0 and "is 65 characters; S3 allows 3 to 63" in text, text[-1500:]

        # Overlapping notification filters, which S3 refuses at apply, are refused at plan.
        overlap = planner.plan("-var", 'routes=[{prefix="events/"},{prefix="events/web/"}]', check=False)
        text = " ".join((overlap.stdout + overlap.stderr).replace("│", " ").split())
        assert overlap.returncode != 0 and "routes overlap" in text, text[-1500:]
        # The committer's recursive loop (re-sent contended messages) is allowed on AWS; the
        # emulators lack the API, so the quickstart leaves it out there unless asked.
        def recursion(plan):
            return [c["change"]["after"]["recursive_loop"] for c in plan["resource_changes"]
                    if ".aws_lambda_function_recursion_config.committer" in c["address"]]

        assert recursion(planner.plan()) == []
        assert recursion(planner.plan("-var", "committer_recursion_allowed=true")) == ["Allow"]

        # One prefix under two suffixes neither of which ends the other, and a prefix of its own.
        planner.plan("-var", 'routes=[{prefix="events/"},{prefix="events/",suffix=".avro.gz"},{prefix="clicks/"}]')
    finally:
        planner.destroy()


def test_a_real_account_gets_alarms_bounded_storage_and_no_clash_with_what_exists(moto, tmp_path):
    """What a first deploy to a real account needs beyond the emulator (issue 38), at plan:
    alarms on throttles, on Floe's own freshness lag and on quarantined objects (EMF metrics,
    dimension Function = the function's name); landing objects expiring after 30 days and the
    ledger's records 52 days after their commit (30 + 15 days of old versions + 7), none with
    null; Glue databases left to the committer unless asked (Athena's `default` exists in most
    accounts); floe.toml's upload keyed by source_hash, not an ETag SSE-KMS changes; an
    AWS-managed KMS key, which S3 cannot use for notifications, refused."""
    planner = Planner(moto, tmp_path)
    prefix = next(v.split("=", 1)[1] for v in planner.vars if v.startswith("name_prefix="))
    after = lambda plan: {c["address"]: c["change"]["after"] for c in plan["resource_changes"]}  # noqa: E731

    def refused(message, *args):
        run = planner.plan(*args, check=False)
        text = " ".join((run.stdout + run.stderr).replace("│", " ").split())
        assert run.returncode != 0 and message in text, f"{args}: {text[-1500:]}"

    try:
        toml = tmp_path / "floe.toml"
        toml.write_text('[tables."web.events"]\nprefixes = ["events/"]\n')
        plan = after(planner.plan("-var", f"floe_toml_path={toml}", "-var", 'routes=[{prefix="events/"}]'))
        alarm = lambda name: plan[f"module.floe.aws_cloudwatch_metric_alarm.{name}"]  # noqa: E731
        for role in ("writer", "committer", "compactor"):
            a = alarm(f'function_throttles["{role}"]')
            assert (a["namespace"], a["metric_name"], a["dimensions"]) == (
                "AWS/Lambda", "Throttles", {"FunctionName": f"{prefix}-{role}"}), a
        lag, quarantined = alarm('floe["freshness-lag"]'), alarm('floe["quarantined"]')
        assert (lag["namespace"], lag["metric_name"], lag["dimensions"], lag["threshold"]) == (
            "Floe", "freshness_lag_ms", {"Function": f"{prefix}-committer"}, 300_000), lag
        assert (quarantined["namespace"], quarantined["metric_name"], quarantined["dimensions"]) == (
            "Floe", "quarantined", {"Function": f"{prefix}-writer"}), quarantined

        def storage(plan):
            envs = {a.split('"')[1]: v["environment"][0]["variables"].get("FLOE_LEDGER_TTL_DAYS")
                    for a, v in plan.items() if ".aws_lambda_function.function[" in a}
            ttl = plan["module.floe.aws_dynamodb_table.ledger"].get("ttl") or []  # unknown until applied when unset
            rules = plan["module.floe.aws_s3_bucket_lifecycle_configuration.landing"]["rule"]
            expiry = [r["expiration"][0]["days"] for r in rules if r["id"] == "landed-objects"]
            return set(envs.values()), ttl, expiry

        assert storage(plan) == ({"52"}, [{"attribute_name": "expires_at", "enabled": True}], [30])
        assert storage(after(planner.plan("-var-file", str(QUICKSTART / "at-scale.tfvars")))) == (
            {"37"}, [{"attribute_name": "expires_at", "enabled": True}], [15])
        forever = tmp_path / "forever.tfvars"
        forever.write_text("landing_expiration_days = null\n")
        envs, ttl, expiry = storage(after(planner.plan("-var-file", str(forever))))
        assert envs == {None} and expiry == [] and not any(t.get("enabled") for t in ttl), (envs, ttl, expiry)
        refused("landing_expiration_days must be null or a whole number of at least 15",
                "-var", "landing_expiration_days=14")

        obj = plan["module.floe.aws_s3_object.floe_toml[0]"]
        assert obj["source_hash"] and obj.get("etag") is None, obj

        glue = after(planner.plan("-var", "catalog=glue"))
        assert not [a for a in glue if ".aws_glue_catalog_database." in a], "a database that may exist is created"
        glue = after(planner.plan("-var", "catalog=glue", "-var", "glue_create_databases=true",
                                  "-var", 'compact_tables=["web.events"]'))
        assert sorted(v["name"] for a, v in glue.items() if ".aws_glue_catalog_database." in a) == ["default", "web"]

        # Route filters reach S3 percent-encoded, as S3 wants special characters ("/" kept).
        hive = after(planner.plan("-var", 'routes=[{prefix="events/dt=2026-12-05/"},{prefix="raw data/"}]'))
        queues = hive["module.floe.aws_s3_bucket_notification.landing"]["queue"]
        assert sorted(q["filter_prefix"] for q in queues) == ["events/dt%3D2026-12-05/", "raw+data/"], queues
        tilde = after(planner.plan("-var", 'routes=[{prefix="~raw/"}]'))
        assert tilde["module.floe.aws_s3_bucket_notification.landing"]["queue"][0]["filter_prefix"] == "%7Eraw/"

        # With Glue, a floe.toml's tables may live in any namespace: the roles' Glue rights need the list.
        refused("list in glue_databases every namespace", "-var", "catalog=glue", "-var", f"floe_toml_path={toml}",
                "-var", 'routes=[{prefix="events/"}]')
        # A deployment from before glue_create_databases holds its databases at the old address:
        # the upgrade forgets them, never deletes them (Glue's DeleteDatabase drops their tables).
        glue_vars = ["-var", "catalog=glue", "-var", "glue_create_databases=true"]
        terraform("apply", "-auto-approve", "-input=false", "-no-color", f"-state={planner.state}",
                  "-target=module.floe.aws_glue_catalog_database.created", *planner.vars, *glue_vars,
                  env=planner.env, data_dir=planner.data)
        terraform("state", "mv", f"-state={planner.state}", 'module.floe.aws_glue_catalog_database.created["default"]',
                  'module.floe.aws_glue_catalog_database.namespace["default"]', env=planner.env, data_dir=planner.data)
        upgrade = planner.plan("-var", "catalog=glue")
        dbs = {c["address"]: c["change"]["actions"] for c in upgrade["resource_changes"]
               if c["type"] == "aws_glue_catalog_database"}
        assert dbs == {'module.floe.aws_glue_catalog_database.namespace["default"]': ["forget"]}, dbs
        terraform("state", "rm", f"-state={planner.state}", 'module.floe.aws_glue_catalog_database.namespace["default"]',
                  env=planner.env, data_dir=planner.data)

        refused("kms_key_arn must be a customer-managed key",
                "-var", "kms_key_arn=arn:aws:kms:us-east-1:123456789012:alias/aws/sqs")
    finally:
        planner.destroy()


def test_queues_accept_only_their_senders_and_a_kms_alias_resolves_to_its_key(moto, tmp_path):
    """Issue 50, planned against moto with the roles, queues, log groups and tables applied (so
    that every policy is known at plan), TLS required as on AWS:

    - each queue's policy lets send only the roles that send to it (commit queue: writer,
      committer, compactor, commit_senders; share queue: the compactor; ingest queue: the
      committer and ingest_senders; commit dead-letter queue: the committer; the other
      dead-letter queues: no role), and AWS services only from their source (the landing bucket's
      notifications; SQS's redrive from the source queue); any other principal is refused even
      with an identity policy granting sqs:* (an explicit Deny), while it may still manage the
      queue; a request without TLS is refused to everyone;
    - the warehouse bucket is versioned, with old versions expiring after 7 days (none of it
      with warehouse_versioning = false);
    - kms_key_arn given as an alias ARN (made in moto) is resolved to its key: every grant and
      every resource names the key's ARN; a key ARN is used as it is; a key id, a bare alias
      name or another region's alias is refused at plan with the fix."""
    # A customer key named by its alias, made in moto; the resources the roles' policies name
    # are applied with it (a plan defers a policy whose resources have changes pending).
    acct = "123456789012"
    kms = boto3.client("kms", endpoint_url=moto, region_name="us-east-1", aws_access_key_id="test",
                       aws_secret_access_key="test")
    key = kms.create_key(Description="floe test")["KeyMetadata"]["Arn"]
    alias_name = f"alias/floe-test-{uuid.uuid4().hex[:6]}"
    kms.create_alias(AliasName=alias_name, TargetKeyId=key)
    alias = f"arn:aws:kms:us-east-1:{acct}:{alias_name}"
    planner = Planner(moto, tmp_path, extra=["-var", f"kms_key_arn={alias}"], targets=[
        "aws_iam_role.function", "aws_s3_bucket.landing", "aws_cloudwatch_log_group.function",
        "aws_dynamodb_table.lock", "aws_dynamodb_table.ledger", "aws_dynamodb_table.catalog"])
    ops_ingest, ops_commit = f"arn:aws:iam::{acct}:role/ops-backfill", f"arn:aws:iam::{acct}:role/ops-redrive"

    def refused(message, *args):
        run = planner.plan(*args, check=False)
        text = " ".join((run.stdout + run.stderr).replace("│", " ").split())
        assert run.returncode != 0 and message in text, f"{args}: {text[-1500:]}"

    try:
        plan = planner.plan("-var", "require_tls=true", "-var", "check_sender_ids=true", "-var", f'ingest_senders=["{ops_ingest}"]',
                            "-var", f'commit_senders=["{ops_commit}"]')
        res = resources(plan)
        after = {c["address"]: c["change"]["after"] for c in plan["resource_changes"]}
        prefix = next(v.split("=", 1)[1] for v in planner.vars if v.startswith("name_prefix="))
        roles = {a.split('"')[1]: v["arn"] for a, v in res.items() if ".aws_iam_role.function[" in a}
        queues = {v["name"].removeprefix(prefix + "-"): v["arn"] for a, v in res.items() if ".aws_sqs_queue." in a}
        assert set(queues) == {"ingest", "ingest-dlq", "commit", "commit-dlq", "compact-share", "compact-share-dlq"}
        policies = {a.split('"')[1]: json.loads(v["policy"]) for a, v in after.items()
                    if ".aws_sqs_queue_policy.queue[" in a}
        names = {"ingest": "ingest", "commit": "commit", "share": "compact-share", "ingest_dlq": "ingest-dlq",
                 "commit_dlq": "commit-dlq", "share_dlq": "compact-share-dlq"}
        assert set(policies) == set(names), sorted(policies)
        # The committer binds each kind of message to its role by SQS's sender id: appends and
        # creates the writer's, rewrites the compactor's (and the operators' ids), its own copies.
        ids = {a.split('"')[1]: v["unique_id"] for a, v in res.items() if ".aws_iam_role.function[" in a}
        assert all(i.startswith("AROA") for i in ids.values()), ids
        committer_env = lambda p: {c["address"]: c["change"]["after"] for c in p["resource_changes"]}[  # noqa: E731
            'module.floe.aws_lambda_function.function["committer"]']["environment"][0]["variables"]
        env = committer_env(plan)
        assert env["FLOE_APPEND_SENDERS"] == ids["writer"], env
        assert env["FLOE_REWRITE_SENDERS"] == ids["compactor"], env
        assert env["FLOE_COMMITTER_SENDER"] == ids["committer"], env
        ops_id = "AROAOPSREDRIVE000001"
        env = committer_env(planner.plan("-var", "check_sender_ids=true", "-var", f'commit_sender_ids=["{ops_id}"]'))
        assert env["FLOE_APPEND_SENDERS"] == f"{ids['writer']},{ops_id}", env
        assert env["FLOE_REWRITE_SENDERS"] == ids["compactor"], env  # never an operator: a redriven rewrite is planned again
        env = committer_env(planner.plan("-var", "check_sender_ids=false"))
        assert not {"FLOE_APPEND_SENDERS", "FLOE_REWRITE_SENDERS", "FLOE_COMMITTER_SENDER"} & set(env), env
        refused("commit_sender_ids must be principal ids", "-var", f'commit_sender_ids=["{ops_commit}"]')
        landing = f"arn:aws:s3:::{prefix}-landing-{acct}-us-east-1"
        senders = {
            "ingest": {roles["committer"], ops_ingest},
            "commit": {roles["writer"], roles["committer"], roles["compactor"], ops_commit},
            "share": {roles["compactor"]},
            "ingest_dlq": set(),
            "commit_dlq": {roles["committer"]},
            "share_dlq": set(),
        }
        services = {"ingest": ("s3.amazonaws.com", landing), "ingest_dlq": ("sqs.amazonaws.com", queues["ingest"]),
                    "commit_dlq": ("sqs.amazonaws.com", queues["commit"]),
                    "share_dlq": ("sqs.amazonaws.com", queues["compact-share"])}
        admin = {"Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
        everyone = {*roles.values(), ops_ingest, ops_commit, f"arn:aws:iam::{acct}:role/admin",
                    f"arn:aws:iam::{acct}:root", "arn:aws:iam::999999999999:role/elsewhere"}
        for queue, policy in policies.items():
            q = queues[names[queue]]
            for who in everyone:
                # An identity policy granting everything: only the queue's policy can refuse.
                may = permitted("sqs:SendMessage", q, *as_role(who), identity=admin, resource_policy=policy)
                assert may == (who in senders[queue]), f"{who} {'cannot' if not may else 'can'} send to {queue}"
                assert not permitted("sqs:SendMessage", q, *as_role(who, tls=False), identity=admin,
                                     resource_policy=policy), f"{who} sends to {queue} without TLS"
                for manage in ("sqs:GetQueueAttributes", "sqs:SetQueueAttributes", "sqs:PurgeQueue",
                               "sqs:ReceiveMessage"):
                    assert permitted(manage, q, *as_role(who), identity=admin, resource_policy=policy), f"{who} {manage} {queue}"
                    assert not permitted(manage, q, *as_role(who, tls=False), identity=admin, resource_policy=policy)
            for service in ("s3.amazonaws.com", "sqs.amazonaws.com", "sns.amazonaws.com"):
                for source in (landing, *queues.values(), "arn:aws:s3:::someone-elses-bucket"):
                    ctx = {"aws:SourceArn": source, "aws:SourceAccount": acct}
                    may = permitted("sqs:SendMessage", q, *as_service(service, **ctx), resource_policy=policy)
                    assert may == (services.get(queue) == (service, source)), f"{service} from {source} -> {queue}: {may}"
                    assert not permitted("sqs:SendMessage", q, *as_service(service, tls=False, **ctx), resource_policy=policy)
            other_account = {"aws:SourceArn": landing, "aws:SourceAccount": "999999999999"}
            assert not permitted("sqs:SendMessage", q, *as_service("s3.amazonaws.com", **other_account),
                                 resource_policy=policy), "a bucket of the same name in another account"

        # The warehouse bucket: versioned, old versions (claim checks' too) kept 7 days.
        assert after["module.floe.aws_s3_bucket_versioning.warehouse[0]"]["versioning_configuration"][0]["status"] == "Enabled"
        rules = {r["id"]: r for r in after["module.floe.aws_s3_bucket_lifecycle_configuration.warehouse"]["rule"]}
        old = rules["old-versions"]
        assert old["noncurrent_version_expiration"][0]["noncurrent_days"] == 7, old
        assert old["expiration"][0]["expired_object_delete_marker"] is True, old
        assert not any((old["filter"][0] or {}).get(k) for k in ("prefix", "tag", "and")), "every key, claim checks' too"
        assert rules["claim-checks"]["expiration"][0]["days"] == 90
        off = {c["address"]: c["change"]["after"] for c in planner.plan("-var", "warehouse_versioning=false")["resource_changes"]}
        assert not [a for a in off if ".aws_s3_bucket_versioning.warehouse" in a]
        assert {r["id"] for r in off["module.floe.aws_s3_bucket_lifecycle_configuration.warehouse"]["rule"]} == {
            "claim-checks", "incomplete-uploads"}

        # The alias (the planner's kms_key_arn) and the key's ARN: every grant and resource
        # names the key itself.
        def uses(plan):
            """The key every role is granted (the statements all three policies take from
            every_function: the roles' own documents wait on the queues, whose redrive policy moto
            echoes with other whitespace, so a plan on moto leaves them to the apply), and every
            key a resource of the plan names."""
            res = resources(plan)
            shared = json.loads(res["module.floe.data.aws_iam_policy_document.every_function"]["json"])
            grants = {st["Sid"]: st for st in shared["Statement"]}["UseKey"]
            named = set()
            for c in plan["resource_changes"]:
                v = c["change"]["after"] or {}
                for k in ("kms_master_key_id", "kms_key_id", "kms_key_arn"):
                    if v.get(k):
                        named.add(v[k])
                for sse in v.get("server_side_encryption") or []:
                    if sse.get("kms_key_arn"):
                        named.add(sse["kms_key_arn"])
                if c["type"] == "aws_s3_bucket_server_side_encryption_configuration":
                    for rule in v["rule"]:
                        for d in rule["apply_server_side_encryption_by_default"]:
                            named.add(d["kms_master_key_id"])
            return shared, grants, named, plan

        for given in (alias, key):
            shared, grants, named, plan = uses(planner.plan("-var", f"kms_key_arn={given}"))
            assert _listify(grants["Resource"]) == [key], grants
            for action in ("kms:Decrypt", "kms:GenerateDataKey"):
                assert allowed(shared, action, key), f"{action} on the key ({given})"
            assert not allowed(shared, "kms:Decrypt", alias), "a grant on the alias covers no key"
            # The kinds of resource that take a key: queues, log groups, functions, tables, buckets.
            kinds = {c["type"] for c in plan["resource_changes"]
                     if any((c["change"]["after"] or {}).get(k) for k in ("kms_master_key_id", "kms_key_id", "kms_key_arn"))}
            assert {"aws_sqs_queue", "aws_cloudwatch_log_group", "aws_lambda_function"} <= kinds, kinds
            sse = [c for c in plan["resource_changes"] if c["type"] == "aws_s3_bucket_server_side_encryption_configuration"]
            assert len(sse) == 2, "both buckets"
            assert named == {key}, f"{given}: {named}"
        # Each role's policy takes every_function's statements (the plan's configuration).
        config = plan["configuration"]["root_module"]["module_calls"]["floe"]["module"]["resources"]
        sources = {r["name"]: r.get("expressions", {}).get("source_policy_documents", {}).get("references", [])
                   for r in config if r["type"] == "aws_iam_policy_document"}
        for doc, base in (("writer", "data_file_producer"), ("compactor", "data_file_producer"),
                          ("data_file_producer", "every_function"), ("committer", "every_function")):
            assert f"data.aws_iam_policy_document.{base}.json" in sources[doc], (doc, sources[doc])
        refused("must be a key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID) or an alias ARN",
                "-var", f"kms_key_arn={key.rsplit('/', 1)[1]}")
        refused("must be a key ARN", "-var", f"kms_key_arn={alias_name}")
        refused("is an alias of another account or region", "-var", f"kms_key_arn=arn:aws:kms:eu-west-1:{acct}:{alias_name}")
    finally:
        planner.destroy()


def test_the_committer_never_commits_a_file_the_orphan_sweep_may_have_deleted(moto, tmp_path):
    """The sweep deletes unreferenced files older than orphan_sweep_older_than_hours, and a
    manifest may wait in the commit queue for days: every function gets a commit age limit a day
    under the sweep's age (half of it below 48 hours), which the committer enforces and the
    compactor checks its sweep against. An age that is not a whole number of hours (the
    sweep's event carries a whole number) is refused at plan time."""
    planner = Planner(moto, tmp_path)
    try:
        def limits(plan):
            return {c["address"].split('"')[1]: c["change"]["after"]["environment"][0]["variables"].get(
                "FLOE_MAX_COMMIT_AGE_HOURS") for c in plan["resource_changes"]
                if ".aws_lambda_function.function[" in c["address"]}

        assert limits(planner.plan()) == dict.fromkeys(["writer", "committer", "compactor"], "336")
        assert set(limits(planner.plan("-var", "orphan_sweep_older_than_hours=30")).values()) == {"15"}
        bad = planner.plan("-var", "orphan_sweep_older_than_hours=36.5", check=False)
        assert bad.returncode != 0 and "whole number of at least 24" in bad.stderr, bad.stderr[-2000:]
    finally:
        planner.destroy()


def resources(plan):
    """Every resource of the plan's prior state (all values known after the apply), by address."""
    out = {}

    def walk(module):
        for r in module.get("resources", []):
            out[r["address"]] = r["values"]
        for child in module.get("child_modules", []):
            walk(child)

    walk(plan["prior_state"]["values"]["root_module"])
    return out


def _same_json(a, b):
    try:
        return json.loads(a) == json.loads(b)
    except (TypeError, ValueError):
        return False


def test_a_second_plan_changes_nothing(deployed):
    """The apply converged: a second plan changes no value. moto echoes a queue's redrive
    policy with other whitespace (AWS does not), which the provider reports as an update and
    which defers the reads that depend on the queue: values that only wait on such a read
    ("known after apply") and JSON equal up to whitespace are not changes; nor are the tags of a
    Glue database, which moto drops."""
    changes = []
    for c in deployed["plan"].get("resource_changes", []):
        actions = c["change"]["actions"]
        if actions in (["no-op"], ["read"]):
            continue
        if actions != ["update"]:
            changes.append((c["address"], actions))
            continue
        before, after, unknown = c["change"]["before"], c["change"]["after"], c["change"]["after_unknown"]
        for k in set(before) | set(after):
            b, a = before.get(k), after.get(k)
            if unknown.get(k) or b == a or _same_json(b, a):
                continue
            if c["type"] == "aws_glue_catalog_database" and k == "tags_all" and b == {}:
                continue  # moto does not keep a Glue database's tags
            changes.append((c["address"], k, b, a))
    assert not changes, f"the apply did not converge: {changes}"


def test_roles_are_least_privilege(deployed):
    res = resources(deployed["plan"])
    fn = {v["function_name"].rsplit("-", 1)[1]: v for a, v in res.items() if ".aws_lambda_function.function[" in a}
    pol = {a.split('"')[1]: json.loads(v["policy"]) for a, v in res.items() if ".aws_iam_role_policy.function[" in a}
    assert set(pol) == {"writer", "committer", "compactor"}, sorted(pol)
    o = deployed["outputs"]
    acct, region = "123456789012", "us-east-1"
    ddb = lambda t: f"arn:aws:dynamodb:{region}:{acct}:table/{t}"  # noqa: E731
    wh = o["warehouse"].removeprefix("s3://")
    meta = f"arn:aws:s3:::{wh}/default.db/events/metadata/00001-{uuid.uuid4()}.metadata.json"
    data = f"arn:aws:s3:::{wh}/default.db/events/data/tenant_id=1/x.parquet"
    landing = f"arn:aws:s3:::{o['landing_bucket']}/events/a.avro"
    created = {"s3:if-none-match": "*"}
    w, c, k = pol["writer"], pol["committer"], pol["compactor"]
    if deployed["catalog"] == "dynamodb":
        entry = ddb(o["catalog_table"])
        cat_reads, cat_writes = [("dynamodb:GetItem", entry)], [("dynamodb:PutItem", entry), ("dynamodb:UpdateItem", entry)]
    else:
        entry = f"arn:aws:glue:{region}:{acct}:table/default/events"
        cat_reads = [("glue:GetTable", entry)]
        cat_writes = [("glue:CreateTable", entry), ("glue:UpdateTable", entry),
                      ("glue:CreateDatabase", f"arn:aws:glue:{region}:{acct}:database/default")]
        # Only the deployment's databases (the namespaces of its tables): another team's tables
        # in the same account's Glue catalog are out of reach.
        for action, resource in [("glue:UpdateTable", f"arn:aws:glue:{region}:{acct}:table/finance/ledger"),
                                 ("glue:GetTable", f"arn:aws:glue:{region}:{acct}:table/finance/ledger"),
                                 ("glue:CreateDatabase", f"arn:aws:glue:{region}:{acct}:database/finance")]:
            for role in (w, c, k):
                assert not allowed(role, action, resource), f"{action} on {resource}"

    # The writer: reads sources, creates data files only, sends manifests, writes quarantine.
    assert allowed(w, "s3:GetObjectVersion", landing)
    assert allowed(w, "s3:PutObject", data, created)
    assert not allowed(w, "s3:PutObject", data), "an overwrite (no If-None-Match) of a data file"
    assert not allowed(w, "s3:PutObject", meta, created), "the writer must not write metadata"
    assert not allowed(w, "s3:DeleteObject", data)
    assert allowed(w, "s3:GetObject", meta)
    assert allowed(w, "sqs:SendMessage", arn_of(o["commit_queue_url"]))
    for action, resource in cat_reads:
        assert allowed(w, action, resource)
    for action, resource in cat_writes + [("dynamodb:DeleteItem", ddb(f"{prefix_of(o)}_iceberg"))]:
        assert not allowed(w, action, resource), f"writer {action} on the catalog"
    for action in ("dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"):
        assert not allowed(w, action, ddb(o["lock_table"])), f"writer {action} on the lock"
    assert allowed(w, "dynamodb:PutItem", ddb(o["ledger_table"]), {"dynamodb:LeadingKeys": ["quarantine|s3://l/k#v"]})
    assert not allowed(w, "dynamodb:PutItem", ddb(o["ledger_table"]),
                       {"dynamodb:LeadingKeys": ["default.events|s3://l/k#v"]}), "the writer forging a ledger record"
    assert not allowed(w, "dynamodb:UpdateItem", ddb(o["ledger_table"]))
    assert not allowed(w, "dynamodb:UpdateItem", ddb(o["ledger_table"]),
                       {"dynamodb:Attributes": ["pk", "state", "snapshot_id", "expires_at"]}), "the writer forging a mark"
    assert not allowed(w, "dynamodb:CreateTable", ddb(o["ledger_table"]))

    # The committer: the only one that writes metadata, swaps pointers and holds the lock.
    assert allowed(c, "s3:PutObject", meta)
    for action, resource in cat_reads + cat_writes:
        assert allowed(c, action, resource), f"committer {action}"
    assert allowed(c, "dynamodb:PutItem", ddb(o["lock_table"]))
    assert allowed(c, "sqs:SendMessage", arn_of(o["ingest_queue_url"]))
    assert not allowed(c, "s3:GetObject", landing), "the committer never reads sources"

    # The compactor: reads tables, creates data files, asks the committer.
    assert allowed(k, "s3:GetObject", meta)
    assert allowed(k, "s3:PutObject", data, created)
    assert not allowed(k, "s3:PutObject", meta, created)
    assert allowed(k, "sqs:SendMessage", arn_of(o["commit_queue_url"]))
    for table in (f"{prefix_of(o)}_iceberg", o["lock_table"], o["ledger_table"]):
        for action in ("dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"):
            assert not allowed(k, action, ddb(table)), f"compactor {action} on {table}"
    for action, resource in cat_writes:
        assert not allowed(k, action, resource), f"compactor {action}"

    # What each role's code calls (shared/src/adapters/aws), all allowed.
    claim = f"arn:aws:s3:::{wh}/_floe/claims/{uuid.uuid4()}.json"
    ledger_key = {"dynamodb:LeadingKeys": ["default.events|s3://l/k#v"]}
    needed = {
        "writer": [("s3:GetObject", landing, {}), ("s3:PutObject", claim, created),
                   ("sqs:ReceiveMessage", arn_of(o["ingest_queue_url"]), {}),
                   ("sqs:DeleteMessage", arn_of(o["ingest_queue_url"]), {}),
                   ("sqs:ChangeMessageVisibility", arn_of(o["ingest_queue_url"]), {}),
                   ("sqs:GetQueueUrl", arn_of(o["ingest_queue_url"]), {}),
                   ("dynamodb:BatchGetItem", ddb(o["ledger_table"]), ledger_key),
                   # Ledger::keep: a resent committed source's time to live, and its snapshot's
                   *[("dynamodb:UpdateItem", ddb(o["ledger_table"]),
                      {"dynamodb:LeadingKeys": [key], "dynamodb:Attributes": ["pk", "expires_at"]})
                     for key in ("default.events|s3://l/k#v", "landed|default.events|42")],
                   *[(a, r, {}) for a, r in cat_reads]],
        "committer": [("s3:GetObject", claim, {}), ("s3:DeleteObject", claim, {}), ("s3:DeleteObject", data, {}),
                      ("s3:DeleteObject", meta, {}), ("s3:GetObject", data, {}),
                      ("dynamodb:UpdateItem", ddb(o["lock_table"]), {}),
                      ("dynamodb:DeleteItem", ddb(o["lock_table"]), {}),
                      *[(a, r, {}) for a, r in cat_reads + cat_writes],
                      ("dynamodb:BatchGetItem", ddb(o["ledger_table"]), ledger_key),
                      ("dynamodb:UpdateItem", ddb(o["ledger_table"]), ledger_key),
                      ("dynamodb:UpdateItem", ddb(o["ledger_table"]),
                       {"dynamodb:LeadingKeys": ["landed|default.events|42"]}),  # Ledger::record_landed
                      ("sqs:ReceiveMessage", arn_of(o["commit_queue_url"]), {}),
                      ("sqs:ChangeMessageVisibility", arn_of(o["commit_queue_url"]), {}),
                      ("sqs:GetQueueUrl", arn_of(o["commit_queue_url"]), {}),
                      ("sqs:SendMessage", arn_of(o["commit_queue_url"]), {}),
                      # A message it refuses goes to its dead-letter queue, with the reason.
                      ("sqs:SendMessage", arn_of(o["dead_letter_queue_urls"]["commit"]), {})],
        "compactor": [("s3:GetObject", data, {}), ("s3:PutObject", claim, created),
                      ("s3:ListBucket", f"arn:aws:s3:::{wh.split('/')[0]}", {"s3:prefix": wh.split("/", 1)[1] + "/default.db/"}),
                      ("s3:DeleteObject", data, {}),  # the orphan sweep is on by default
                      *[(a, arn_of(o["share_queue_url"]), {}) for a in (
                          "sqs:SendMessage", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes",
                          "sqs:ChangeMessageVisibility", "sqs:GetQueueUrl")],
                      *[(a, r, {}) for a, r in cat_reads]],
    }
    if deployed["catalog"] == "glue":  # the committer asks for a table's database before it creates one
        needed["committer"].append(("glue:GetDatabase", f"arn:aws:glue:{region}:{acct}:database/default", {}))
    # A GET or HEAD of a missing key is a 404 only for a caller that may list the bucket, and
    # S3 checks that without an `s3:prefix`: with a prefix condition, every "not found" the code
    # expects (maintenance, quarantine replay, a writer's put-conflict check) was a 403.
    for role in needed:
        needed[role].append(("s3:ListBucket", f"arn:aws:s3:::{wh.split('/')[0]}", {}))
    for role, calls in needed.items():
        for action, resource, context in calls:
            assert allowed(pol[role], action, resource, context), f"{role} needs {action} on {resource}"
    for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage"):
        assert not allowed(k, action, arn_of(o["commit_queue_url"])), f"compactor {action} on the commit queue"
        assert not allowed(w, action, arn_of(o["commit_queue_url"])), f"writer {action} on the commit queue"
    for role in (w, c):
        for action in ("sqs:SendMessage", "sqs:ReceiveMessage"):
            assert not allowed(role, action, arn_of(o["share_queue_url"])), f"{action} on the share queue"
    # Grants no call needs (issue 50): no role reads a lock or ledger item one at a time (the
    # lock only writes, the ledger reads by BatchGetItem), and only the committer, which
    # creates tables and their databases, asks Glue for a database.
    for role in (w, c, k):
        for table in (o["lock_table"], o["ledger_table"]):
            assert not allowed(role, "dynamodb:GetItem", ddb(table)), f"GetItem on {table}"
    for role in (w, k):
        assert not allowed(role, "glue:GetDatabase", f"arn:aws:glue:{region}:{acct}:database/default")
    # Only the committer sends to a dead-letter queue (the module sets no writer FLOE_DLQ_URL).
    assert fn["committer"]["environment"][0]["variables"]["FLOE_DLQ_URL"] == o["dead_letter_queue_urls"]["commit"]
    assert "FLOE_DLQ_URL" not in fn["writer"]["environment"][0]["variables"]
    for url in o["dead_letter_queue_urls"].values():
        for name, role in (("writer", w), ("compactor", k), ("committer", c)):
            if name != "committer" or url != o["dead_letter_queue_urls"]["commit"]:
                assert not allowed(role, "sqs:SendMessage", arn_of(url)), f"{name} sends to {url}"

    # Each function writes only its own log group.
    groups = o["log_groups"]
    for role, p in pol.items():
        for other, group in groups.items():
            stream = f"arn:aws:logs:{region}:{acct}:log-group:{group}:log-stream:x"
            assert allowed(p, "logs:PutLogEvents", stream) == (role == other), f"{role} -> {group}"

    # One committer; visibility timeouts 6x the consumer's timeout; dead-letter queues.
    # The committer's reservation and its event source's maximum concurrency are one number:
    # never a throttled batch (each would count a receive toward the dead-letter queue).
    assert fn["committer"]["reserved_concurrent_executions"] == 2
    esm = {a.split(".")[-1]: v for a, v in res.items() if ".aws_lambda_event_source_mapping." in a}
    assert esm["committer"]["scaling_config"] == [{"maximum_concurrency": 2}], "the reservation, the fewest SQS allows"
    queues = {v["name"]: v for a, v in res.items() if ".aws_sqs_queue." in a}
    prefix = fn["writer"]["function_name"].rsplit("-", 1)[0]
    assert queues[f"{prefix}-ingest"]["visibility_timeout_seconds"] == 6 * fn["writer"]["timeout"]
    assert queues[f"{prefix}-commit"]["visibility_timeout_seconds"] == 6 * fn["committer"]["timeout"]
    # One invocation holds a share (batch size 1): retried a minute after the compactor's timeout.
    assert queues[f"{prefix}-compact-share"]["visibility_timeout_seconds"] == fn["compactor"]["timeout"] + 60
    for q in ("ingest", "commit", "compact-share"):
        redrive = json.loads(queues[f"{prefix}-{q}"]["redrive_policy"])
        assert redrive["deadLetterTargetArn"] == queues[f"{prefix}-{q}-dlq"]["arn"]
    assert fn["writer"]["architectures"] == ["arm64"]


def prefix_of(outputs):
    return outputs["lock_table"].removesuffix("_locks")


def arn_of(queue_url):
    name = queue_url.rstrip("/").rsplit("/", 1)[1]
    return f"arn:aws:sqs:us-east-1:123456789012:{name}"


def function_env(plan, role):
    for a, v in resources(plan).items():
        if ".aws_lambda_function.function[" in a and a.endswith(f'["{role}"]'):
            return v["environment"][0]["variables"]
    raise AssertionError(f"no {role} function in the state")


def run_function(plan, role, *args, via=None):
    """A function's handler, locally, with exactly the environment the module gives it (plus
    the credentials Lambda would provide); with `via` (a Recorder), every AWS call through it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_"))}
    env.update(function_env(plan, role))
    env.update(AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1")
    if via is not None:
        for k in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB"):
            if k in env:
                env[k] = via.url
    return subprocess.Popen([FLOE, "run-function", role, *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc, name, timeout=240):
    out, err = proc.communicate(timeout=timeout)
    print(f"--- {name}: {err[-6000:]}")  # shown when the test fails
    assert proc.returncode == 0, f"{name} failed:\n{out[-3000:]}\n{err[-3000:]}"
    return out, err


def test_files_dropped_in_the_landing_bucket_land_in_the_table(deployed, tmp_path, monkeypatch):
    o, plan, ep = deployed["outputs"], deployed["plan"], deployed["endpoint"]
    # Each function's AWS calls go through its recorder (test_each_function_calls_only_what_its_role_grants).
    run = lambda role, *args: run_function(plan, role, *args, via=deployed["recorders"][role])  # noqa: E731
    for k, v in dict(AWS_ENDPOINT_URL=ep, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
                     AWS_REGION="us-east-1", AWS_DEFAULT_REGION="us-east-1", AWS_ENDPOINT_URL_DYNAMODB=ep).items():
        monkeypatch.setenv(k, v)
    src = tmp_path / "gen"
    floe("gen", "--out", src, "--files", 6, "--events-per-file", 400, "--seed", 7)
    files = sorted(src.glob("*.avro"))
    want = {str(r["event_id"]) for r in read_avro(files)}
    s3 = boto3.client("s3", endpoint_url=ep)
    for f in files:
        s3.upload_file(str(f), o["landing_bucket"], f"events/{f.name}")
    s3.put_object(Bucket=o["landing_bucket"], Key="events/garbage.avro", Body=b"not avro at all")
    s3.put_object(Bucket=o["landing_bucket"], Key="events/readme.txt", Body=b"no .avro suffix: never notified")

    # The writers and the committer side by side, as the event source mappings run them.
    committer = run("committer", "--until-idle-secs", 20)
    writer = run("writer", "--queue-url", o["ingest_queue_url"], "--until-idle-secs", 10)
    _, werr = finish(writer, "writer")
    _, cerr = finish(committer, "committer")
    # Each invocation's CloudWatch EMF line (the functions print them on stdout; run-function
    # on stderr): the writers decoded every row, the committer committed them.
    emf = lambda err: [json.loads(l) for l in err.splitlines() if l.startswith("{") and '"_aws"' in l]
    assert sum(d.get("rows", 0) for d in emf(werr)) == len(want), werr[-2000:]
    assert sum(d.get("committed_rows", 0) for d in emf(cerr)) == len(want), cerr[-2000:]
    assert all(d["_aws"]["CloudWatchMetrics"][0]["Namespace"] == "Floe" for d in emf(werr) + emf(cerr))
    # A share of a tick's plan (what a tick with more partitions than one invocation runs sends),
    # on the module's share queue: the compactor's mapping runs it (a full compaction of the
    # table's one partition), then the committer commits its rewrites.
    share = {"version": 1, "kind": "compact-share", "table": "default.events", "partitions": [""], "full": True,
             "max_tasks": 16, "planned_ms": int(time.time() * 1000)}
    boto3.client("sqs", endpoint_url=ep).send_message(QueueUrl=o["share_queue_url"], MessageBody=json.dumps(share))
    _, kerr = finish(run("compactor", "--queue-url", o["share_queue_url"], "--until-idle-secs", 5),
                     "compactor shares")
    assert "1 message(s), 0 reported failed" in kerr, kerr[-2000:]
    finish(run("committer", "--until-idle-secs", 5), "committer")
    # A scheduled full compaction then finds nothing left to merge, and sends no share.
    event = ROOT / "events/compactor/full-compaction.json"
    out, _ = finish(run("compactor", "--event", event), "compactor")
    runs = json.loads(out)
    assert runs and runs[0]["exists"] and runs[0]["tasks"] == runs[0]["shares_sent"] == 0, runs

    # PyIceberg, through the catalog the module made.
    from pyiceberg.catalog import load_catalog

    if deployed["catalog"] == "dynamodb":
        kind = {"type": "dynamodb", "table-name": o["catalog_table"], "dynamodb.region": "us-east-1"}
    else:
        kind = {"type": "glue", "glue.endpoint": ep, "glue.region": "us-east-1"}
    cat = load_catalog("floe", **kind, **{
        "s3.endpoint": ep, "s3.region": "us-east-1", "s3.access-key-id": "test", "s3.secret-access-key": "test",
        "s3.force-virtual-addressing": "false", "py-io-impl": "pyiceberg.io.pyarrow.PyArrowFileIO",
    })
    table = cat.load_table("default.events")
    got = [str(uuid.UUID(bytes=g)) if isinstance(g, bytes) else str(g)
           for g in table.scan().to_arrow().column("event_id").to_pylist()]
    assert len(got) == len(set(got)), "a row landed twice"
    assert set(got) == want, f"{len(want - set(got))} missing, {len(set(got) - want)} unexpected"
    names = [Path(t.file.file_path).name for t in table.scan().plan_files()]
    assert names and all(n.startswith("L2-") for n in names), names
    assert table.metadata.location.startswith(o["warehouse"])

    # The garbage object is quarantined in the module's ledger; the .txt was never notified.
    ddb = boto3.client("dynamodb", endpoint_url=ep)
    items = ddb.scan(TableName=o["ledger_table"])["Items"]
    quarantined = [i["pk"]["S"] for i in items if i["pk"]["S"].startswith("quarantine|")]
    assert len(quarantined) == 1 and "garbage.avro" in quarantined[0], quarantined
    assert not any("readme.txt" in i["pk"]["S"] for i in items)
    # `floe backfill` of the same prefix: every object sent again, nothing lands twice.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_"))}
    env.update(function_env(plan, "committer"), AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test",
               AWS_REGION="us-east-1")
    out = subprocess.run([FLOE, "backfill", f"s3://{o['landing_bucket']}/events/", "--rate", "50"], env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0 and "sent 7 object(s)" in out.stdout, (out.stdout, out.stderr)
    committer = run("committer", "--until-idle-secs", 8)
    finish(run("writer", "--queue-url", o["ingest_queue_url"], "--until-idle-secs", 5), "writer")
    finish(committer, "committer")
    again = cat.load_table("default.events").scan().to_arrow().column("event_id").to_pylist()
    assert len(again) == len(got), "a backfill landed rows twice"

    sqs = boto3.client("sqs", endpoint_url=ep)
    for url in (o["ingest_queue_url"], o["commit_queue_url"], *o["dead_letter_queue_urls"].values()):
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
        assert attrs["ApproximateNumberOfMessages"] == "0" and attrs["ApproximateNumberOfMessagesNotVisible"] == "0", (url, attrs)

    # `floe status --aws --json` with the committer's environment: the table, its freshness, the
    # quarantine, and every queue of the deployment (the dead-letter queues found by redrive).
    out = subprocess.run([FLOE, "status", "--aws", "--json"], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    status = json.loads(out.stdout)
    (t,) = status["tables"]
    assert t["table"] == "default.events" and t["rows"] == len(got), t
    assert t["freshness"] and t["freshness"]["lag_ms"] >= 0, t["freshness"]
    assert status["quarantined"]["total"] == 1 and status["quarantined"]["by_kind"] == {"corrupt": 1}, status
    roles = {q["role"]: q for q in status["queues"]}
    # The committer's FLOE_DLQ_URL names its dead-letter queue ("dlq"), found by redrive otherwise.
    assert {"ingest", "commit", "ingest-dlq"} <= set(roles), roles
    urls = {q["url"] for q in status["queues"]}
    assert {o["dead_letter_queue_urls"]["ingest"], o["dead_letter_queue_urls"]["commit"]} <= urls, urls
    assert all(q["visible"] == 0 and q["in_flight"] == 0 for q in roles.values()), roles
    deployed["landed"] = True


# Grants the end-to-end run exercises no call of, each with why the role keeps it: keyed by
# (function, statement Sid, action). Anything else a role grants must be seen called.
_LAMBDA_LOGS = "Lambda's runtime writes the function's logs with its role; floe run-function prints them"
_MAPPING = "Lambda's event source mapping reads the queue's attributes with the function's role; floe run-function does not"
_BACKOFF = ("backoff.rs: a message the handler reports failed is made visible again sooner (the queue's URL looked up "
            "from its ARN); nothing fails in the run")
_NOT_FOUND = ("no call lists: S3 answers a GET or HEAD of a missing key 404, not 403, only to a caller that may list "
              "the bucket; the run reads no missing key")
NOT_EXERCISED = {
    **{(f, "OwnLogGroup", a): _LAMBDA_LOGS for f in ("writer", "committer", "compactor")
       for a in ("logs:CreateLogStream", "logs:PutLogEvents")},
    **{(f, sid, a): why for f, sid in (("writer", "ConsumeIngestQueue"), ("committer", "ConsumeCommitQueue"),
                                       ("compactor", "ReceiveShares"))
       for a, why in (("sqs:GetQueueAttributes", _MAPPING), ("sqs:GetQueueUrl", _BACKOFF),
                      ("sqs:ChangeMessageVisibility", _BACKOFF))},
    ("writer", "ListWarehouseSoMissingIsNotFound", "s3:ListBucket"): _NOT_FOUND,
    ("writer", "ListLandingSoMissingIsNotFound", "s3:ListBucket"): _NOT_FOUND,
    ("committer", "ListWarehouseSoMissingIsNotFound", "s3:ListBucket"): _NOT_FOUND,
    ("writer", "ReadLandingObjects", "s3:GetObjectVersion"):
        "moto's notifications name no versionId; on AWS every notification of the versioned landing bucket does",
    ("committer", "TableFilesAndMaintenance", "s3:DeleteObject"):
        "claim checks (messages past SQS's 256 KB: none here) and the files of expired snapshots and rejected rewrites "
        "(none old enough in the run)",
    ("committer", "ConsumeCommitQueue", "sqs:SendMessage"):
        "a message that waited out a table's lock is sent again; the run's commits never contend",
    ("committer", "RequeueOverlappingSources", "sqs:SendMessage"):
        "the sources of a manifest that overlaps a committed one go back to the writers; none overlap in the run",
    ("committer", "SendRefusalsToDeadLetterQueue", "sqs:SendMessage"):
        "a message the committer refuses goes to its dead-letter queue (FLOE_DLQ_URL); the run sends none it refuses",
    ("compactor", "SendShares", "sqs:SendMessage"):
        "a tick with more work than one invocation runs sends shares; the run's tick finds nothing to merge",
    ("compactor", "OrphanSweep", "s3:DeleteObject"):
        "the daily sweep deletes unreferenced files older than 15 days; the run's sweep finds none that old",
}
# Grants the run may or may not exercise, with why: neither seen nor unseen is a finding.
MAYBE_EXERCISED = {
    ("committer", "CreateAndSwapGlueTables", "glue:CreateDatabase"):
        "only for a missing database: the run creates `default` unless an earlier test on the same moto left it there",
}


def test_each_function_calls_only_what_its_role_grants(deployed, tmp_path, monkeypatch):
    """Least privilege, exact: every AWS call each function made in the end-to-end run (its
    handler's, and `floe run-function`'s in place of Lambda's event source mapping, which calls
    with the function's role too), recorded by a proxy in front of moto, is allowed by that
    function's role policy (from the applied plan, by the evaluator above), and no send of
    theirs is refused by the queue's own policy; and every action each role's policy grants,
    statement by statement, was called on one of the statement's resources or is listed in
    NOT_EXERCISED with the reason the role keeps it. A grant no call needs fails this test."""
    recorders = deployed["recorders"]
    if not deployed.get("landed"):
        if any(r.calls for r in recorders.values()):
            pytest.fail("the end-to-end test stopped part way: the calls recorded are not the whole run")
        test_files_dropped_in_the_landing_bucket_land_in_the_table(deployed, tmp_path, monkeypatch)
    plan = deployed["plan"]
    # The daily orphan sweep as well (nothing is old enough for it to delete).
    finish(run_function(plan, "compactor", "--event", ROOT / "events/compactor/daily-sweep.json",
                        via=recorders["compactor"]), "compactor sweep")
    res = resources(plan)
    pol = {a.split('"')[1]: json.loads(v["policy"]) for a, v in res.items() if ".aws_iam_role_policy.function[" in a}
    role_arns = {a.split('"')[1]: v["arn"] for a, v in res.items() if ".aws_iam_role.function[" in a}
    queue_policies = {arn_of(v["queue_url"]): json.loads(v["policy"])
                      for a, v in res.items() if ".aws_sqs_queue_policy.queue[" in a}
    assert len(queue_policies) == 6, sorted(queue_policies)
    problems = []
    for role, rec in recorders.items():
        assert not rec.errors, f"{role}: requests the recorder could not name: {rec.errors[:5]}"
        calls = sorted({(c.action, c.resource, json.dumps(c.context, sort_keys=True)) for c in rec.calls})
        assert calls, f"no call of the {role} was recorded"
        print(f"--- {role}: {len(rec.calls)} calls, {len(calls)} distinct")
        for action, resource, context in calls:
            print(f"    {action} {resource} {context}")
            if not allowed(pol[role], action, resource, json.loads(context)):
                problems.append(f"{role} called {action} on {resource} ({context}): its role does not allow it")
            if action == "sqs:SendMessage":
                assert resource in queue_policies, f"{role} sends to {resource}, a queue of no policy"
                principal, ctx = as_role(role_arns[role])
                if verdict(queue_policies[resource], action, resource, ctx, principal) == "Deny":
                    problems.append(f"{role} sends to {resource}, which its queue policy refuses")
        for st in pol[role]["Statement"]:
            for action in _listify(st["Action"]):
                seen = any(_wild(action, a, fold=True) and any(_wild(r, called) for r in _listify(st["Resource"]))
                           for a, called, _ in calls)
                key = (role, st.get("Sid"), action)
                if key in MAYBE_EXERCISED:
                    continue
                if seen and key in NOT_EXERCISED:
                    problems.append(f"{key} is called now: take it out of NOT_EXERCISED")
                elif not seen and key not in NOT_EXERCISED:
                    problems.append(f"{key} is granted, but no call needed it (or add it to NOT_EXERCISED with why)")
    assert not problems, "\n".join(problems)


def test_make_passes_tf_vars_to_terraform_as_written(tmp_path):
    """`make deploy TF_VARS='-var glue_databases=["web"]'`, as the README says: the quotes reach
    Terraform (before, the shell took them away and Terraform refused `[web]`). Checked through
    `make destroy-local`, which runs nothing but Terraform, with a stand-in that records its
    arguments."""
    fake = tmp_path / "bin" / "terraform"
    fake.parent.mkdir()
    fake.write_text('#!/bin/bash\nprintf "%s\\n" "$@" > "$FAKE_TF_ARGS"\n')
    fake.chmod(0o755)
    args = tmp_path / "args"
    env = dict(os.environ, PATH=f"{fake.parent}:{os.environ['PATH']}", FAKE_TF_ARGS=str(args),
               AWS_ENDPOINT_URL="http://127.0.0.1:1")
    run = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "destroy-local",
                          'TF_VARS=-var glue_databases=["web"] -var-file=prod.tfvars'],
                         env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    got = args.read_text().splitlines()
    assert got[-3:] == ["-var", 'glue_databases=["web"]', "-var-file=prod.tfvars"], got


def test_make_targets_follow_cargo_target_dir(tmp_path):
    """With CARGO_TARGET_DIR set, cargo builds there, so every target that runs a binary or
    deploys the zips must look there too (before, the Makefile ran target/release/floe)."""
    where = tmp_path / "elsewhere"
    env = {k: v for k, v in os.environ.items() if k not in ("LAMBDA_ARTIFACTS", "TF_VARS")}
    env["CARGO_TARGET_DIR"] = str(where)
    run = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(ROOT), "run", "bench-coldstart", "deploy"],
                         env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    lines = [l for l in run.stdout.splitlines() if "release/floe" in l or "--bin-dir" in l or "artifacts_dir" in l]
    assert len(lines) >= 4, run.stdout
    assert all(str(where) in l for l in lines), lines
    assert "target/release" not in run.stdout.replace(str(where), ""), run.stdout
