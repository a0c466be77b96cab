"""Embedded mode with an Iceberg REST catalog (`floe ingest --catalog rest`), read back by
PyIceberg's REST client.

The catalog is tests/rest_catalog/server.py: the REST protocol over PyIceberg's SQL catalog,
so every requirement Floe sends is checked, and every update applied and written to
metadata.json, by PyIceberg, not by Floe. Its test hooks inject the failures a REST catalog
shows in service: a commit raced by another writer (409), a commit refused before landing
(503), and a commit that landed with its answer lost (500).
"""

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import fastavro
import pytest
from pyiceberg.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))
TABLE = "web.events"


class Rest:
    """A running REST catalog server with a client id and secret."""

    def __init__(self, base: Path, auth=("--client", "floe:s3cret"), env=None):
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "tests/rest_catalog/server.py"), "--db", str(base / "catalog.db"),
             "--warehouse", f"file://{base}/unused", "--prefix", "main", *auth],
            stdout=subprocess.PIPE, text=True, env=env,
        )
        line = self.proc.stdout.readline()
        assert line.startswith("listening on "), line
        self.uri = f"http://127.0.0.1:{line.split()[-1]}"

    def post(self, path, body):
        req = urllib.request.Request(self.uri + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        return json.load(urllib.request.urlopen(req, timeout=10))

    def stats(self):
        return json.load(urllib.request.urlopen(self.uri + "/test/stats", timeout=10))

    def table(self, name=TABLE):
        return load_catalog("check", type="rest", uri=self.uri, credential="floe:s3cret",
                            **{"oauth2-server-uri": self.uri + "/v1/oauth/tokens"}).load_table(name)

    def env(self, **extra):
        # The test catalog listens on loopback without TLS: allowed explicitly, as a user must.
        return {**os.environ, "FLOE_REST_URI": self.uri, "FLOE_REST_CREDENTIAL": "floe:s3cret",
                "FLOE_REST_ALLOW_HTTP": "true", **extra}


@pytest.fixture
def rest(tmp_path):
    r = Rest(tmp_path)
    yield r
    r.proc.kill()
    r.proc.wait()


def floe(*args, env=None, expect=0):
    p = subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True, env=env)
    assert p.returncode == expect, f"floe {' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def avro_ids(folder: Path) -> set:
    ids = set()
    for p in sorted(folder.glob("*.avro")):
        with open(p, "rb") as f:
            ids.update(str(r["event_id"]) for r in fastavro.reader(f))
    return ids


def table_ids(table) -> list:
    import uuid
    col = table.scan().to_arrow().column("event_id").to_pylist()
    return [str(uuid.UUID(bytes=v)) if isinstance(v, bytes) else str(v) for v in col]


def ingest(rest, src, wh, *extra, batch=2, env=None, expect=0):
    return floe("ingest", src, "--warehouse", wh, "--catalog", "rest", "--table", TABLE,
                "--partition-by", "day(event_time),identity(tenant_id)", "--sort-by", "tenant_id,event_time",
                "--dedup-key", "event_id", "--batch-objects", batch, *extra, env=env or rest.env(), expect=expect)


def test_rows_land_exactly_once_through_races_refusals_and_lost_answers(rest, tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 8, "--events-per-file", 300, "--dup-rate", 0.05, "--seed", 3)
    ingest(rest, src, wh, "--writers", 1)
    first = rest.table()
    rest.post("/test/faults", {"race": 1, "fail_before": 1, "lose_answers": 1})
    more = tmp_path / "more"
    floe("gen", "--out", more, "--files", 8, "--events-per-file", 300, "--seed", 4)
    ingest(rest, more, wh, "--writers", 1)

    stats = rest.stats()
    assert stats["conflicts"] >= 1 and stats["lost_answers"] == 1, stats
    t = rest.table()
    ids = table_ids(t)
    assert len(ids) == len(set(ids)), "no row committed twice"
    assert set(ids) == avro_ids(src) | avro_ids(more)
    # The catalog, not Floe, wrote the metadata: a new file per commit, the old ones logged.
    assert t.metadata_location != first.metadata_location
    assert len(t.metadata.metadata_log) >= len(first.metadata.snapshots)
    # One snapshot chain, each parent the one before (the raced-in snapshot included).
    chain = {s.snapshot_id: s.parent_snapshot_id for s in t.metadata.snapshots}
    head, seen = t.metadata.current_snapshot_id, 0
    while head is not None:
        head, seen = chain[head], seen + 1
    assert seen == len(chain)

    # Ingesting the same files again adds nothing and commits nothing.
    before = len(t.metadata.snapshots)
    p = ingest(rest, more, wh)
    assert "0 committed row(s)" in p.stdout, p.stdout
    assert len(rest.table().metadata.snapshots) == before


def test_compaction_commits_its_rewrite_through_the_catalog(rest, tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 12, "--events-per-file", 200, "--tenants", 3, "--seed", 5)
    ingest(rest, src, wh, "--writers", 1, batch=1)
    before = rest.table()
    files_before = len(list(before.scan().plan_files()))
    floe("compact", "--warehouse", wh, "--catalog", "rest", "--table", TABLE, "--full", env=rest.env())
    after = rest.table()
    assert after.metadata.current_snapshot().summary.operation.value == "replace"
    assert len(list(after.scan().plan_files())) < files_before
    assert sorted(table_ids(after)) == sorted(table_ids(before))


def write(path, schema, rows):
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), rows)


def test_a_new_field_adds_a_schema_through_the_catalog(rest, tmp_path):
    v1 = {"type": "record", "name": "e", "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"}]}
    v2 = {**v1, "fields": v1["fields"] + [{"name": "country", "type": ["null", "string"], "default": None}]}
    write(tmp_path / "a.avro", v1, [{"id": 1, "name": "a"}])
    write(tmp_path / "b.avro", v2, [{"id": 2, "name": "b", "country": "fr"}])
    env = rest.env()
    for f in ("a.avro", "b.avro"):
        floe("ingest", tmp_path / f, "--warehouse", tmp_path / "wh", "--catalog", "rest", "--table", "crm.people",
             env=env)
    t = rest.table("crm.people")
    assert len(t.metadata.schemas) == 2
    fields = {f.name: f.field_id for f in t.schema().fields}
    assert fields == {"id": 1, "name": 2, "country": 3}, fields
    rows = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert rows == [{"id": 1, "name": "a", "country": None}, {"id": 2, "name": "b", "country": "fr"}]


def test_wrong_credentials_fail_clearly_and_lose_nothing(rest, tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 2, "--events-per-file", 100)
    p = ingest(rest, src, wh, env=rest.env(FLOE_REST_CREDENTIAL="floe:wrong"), expect=1)
    assert "FLOE_REST_CREDENTIAL" in p.stderr and "401" in p.stderr, p.stderr
    assert "invalid_client: unknown client or wrong secret" in p.stderr, p.stderr
    ingest(rest, src, wh)
    assert set(table_ids(rest.table())) == avro_ids(src)


@pytest.mark.parametrize(
    "env,message",
    [
        ({}, "FLOE_REST_URI"),
        ({"FLOE_REST_URI": "localhost:8181"}, "http:// or https://"),
        ({"FLOE_REST_URI": "http://127.0.0.1:9", "FLOE_REST_TOKEN": "t", "FLOE_REST_CREDENTIAL": "a:b"}, "not both"),
        ({"FLOE_REST_URI": "http://127.0.0.1:9", "FLOE_REST_CREDENTIAL": "nocolon"}, "CLIENT_ID:CLIENT_SECRET"),
        ({"FLOE_REST_URI": "http://127.0.0.1:9", "FLOE_REST_TOKEN": "t"}, "FLOE_REST_ALLOW_HTTP"),
    ],
)
def test_rest_settings_a_user_can_get_wrong_are_named(tmp_path, env, message):
    src = tmp_path / "in"
    floe("gen", "--out", src, "--files", 1, "--events-per-file", 10)
    clean = {k: v for k, v in os.environ.items() if not k.startswith("FLOE_REST_")}
    p = floe("ingest", src, "--warehouse", tmp_path / "wh", "--catalog", "rest", "--table", TABLE,
             env={**clean, **env}, expect=1)
    assert message in p.stderr, p.stderr


AWS = {"AWS_ACCESS_KEY_ID": "AKIDFLOETEST", "AWS_SECRET_ACCESS_KEY": "floe-test-secret",
       "AWS_SESSION_TOKEN": "floe-test-session", "AWS_REGION": "eu-west-1"}


def aws_env(**extra):
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "FLOE_REST_"))}
    return {**clean, **AWS, **extra}


def test_sigv4_signed_calls_are_accepted_and_a_wrong_key_is_refused(tmp_path):
    """The server recomputes every request's SigV4 signature with botocore (AWS's own Python
    signer) from the same credentials, and refuses any that differs."""
    rest = Rest(tmp_path, auth=("--sigv4", "glue:eu-west-1"), env=aws_env())
    try:
        src, wh = tmp_path / "in", tmp_path / "wh"
        floe("gen", "--out", src, "--files", 2, "--events-per-file", 100)
        signed = aws_env(FLOE_REST_URI=rest.uri, FLOE_REST_SIGV4="true", FLOE_REST_ALLOW_HTTP="true")
        p = ingest(rest, src, wh, env={**signed, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}, expect=1)
        assert "403" in p.stderr and "signature does not match" in p.stderr, p.stderr
        ingest(rest, src, wh, env=signed)
        assert rest.stats()["signed"] >= 3  # config, load, register, commit
        cat = load_catalog("check", type="rest", uri=rest.uri, **{"rest.sigv4-enabled": "true",
                           "rest.signing-region": "eu-west-1", "rest.signing-name": "glue",
                           "client.access-key-id": AWS["AWS_ACCESS_KEY_ID"],
                           "client.secret-access-key": AWS["AWS_SECRET_ACCESS_KEY"],
                           "client.session-token": AWS["AWS_SESSION_TOKEN"]})
        assert set(table_ids(cat.load_table(TABLE))) == avro_ids(src)
    finally:
        rest.proc.kill()
        rest.proc.wait()


def test_a_retention_set_on_main_by_another_engine_survives_floe_commits(rest, tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 2, "--events-per-file", 100, "--seed", 1)
    ingest(rest, src, wh)
    t = rest.table()
    from pyiceberg.table.update import AssertRefSnapshotId, SetSnapshotRefUpdate
    head = t.metadata.current_snapshot_id
    t.catalog.commit_table(t, (AssertRefSnapshotId(ref="main", snapshot_id=head),), (SetSnapshotRefUpdate(
        ref_name="main", type="branch", snapshot_id=head, max_snapshot_age_ms=86_400_000, min_snapshots_to_keep=7),))
    more = tmp_path / "more"
    floe("gen", "--out", more, "--files", 2, "--events-per-file", 100, "--seed", 2)
    ingest(rest, more, wh)
    main = rest.table().metadata.refs["main"]
    assert (main.min_snapshots_to_keep, main.max_snapshot_age_ms) == (7, 86_400_000), main
    assert main.snapshot_id != t.metadata.current_snapshot_id
