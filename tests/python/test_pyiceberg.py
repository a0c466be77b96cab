"""Independent reader checks: tables written by `floe ingest`, read back by PyIceberg.

Every check compares against the Avro source as read by fastavro (a second, independent Avro
implementation), never against Floe's own reading of it.
"""

import datetime as dt
import decimal
import os
import subprocess
import uuid
from collections import defaultdict
from pathlib import Path

import fastavro
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.conversions import from_bytes

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))


def floe(*args, expect=0):
    p = subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == expect, f"floe {' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def catalog(wh: Path) -> SqlCatalog:
    return SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")


def read_avro(paths):
    rows = []
    for p in sorted(paths):
        with open(p, "rb") as f:
            rows.extend(fastavro.reader(f))
    return rows


def norm(v):
    """Canonical Python values, so that fastavro's and pyarrow's renderings compare equal."""
    if isinstance(v, dict):
        # An empty map: fastavro gives {}, pyarrow []; a record is never empty.
        return {k: norm(x) for k, x in v.items()} if v else []
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # pyarrow map
            return {k: norm(x) for k, x in v}
        return [norm(x) for x in v]
    if isinstance(v, uuid.UUID):
        return str(v)
    if isinstance(v, bytes) and len(v) == 16 and getattr(norm, "uuid_bytes", False):
        return str(uuid.UUID(bytes=v))
    if isinstance(v, dt.datetime):
        if v.tzinfo is not None:
            return ("tz", v.astimezone(dt.timezone.utc).replace(tzinfo=None))
        return ("local", v)
    if isinstance(v, decimal.Decimal):
        return v.normalize()
    return v


def table_rows(table, key):
    rows = table.scan().to_arrow().to_pylist()
    return {norm_key(r[key]): r for r in rows}, len(rows)


def norm_key(k):
    if isinstance(k, bytes) and len(k) == 16:
        return str(uuid.UUID(bytes=k))
    return str(k) if isinstance(k, uuid.UUID) else k


@pytest.fixture(scope="module")
def events(tmp_path_factory):
    base = tmp_path_factory.mktemp("events")
    src, wh = base / "in", base / "wh"
    floe("gen", "--out", src, "--files", 12, "--events-per-file", 400, "--dup-rate", 0.03, "--seed", 7, "--corrupt")
    p = floe(
        "ingest", src, "--warehouse", wh, "--table", "web.events",
        "--partition-by", "day(event_time),identity(tenant_id)",
        "--sort-by", "tenant_id,event_time", "--dedup-key", "event_id",
        expect=2,  # the corrupt files are quarantined, and floe says so
    )
    assert "7 file(s) quarantined" in p.stderr
    return src, wh


def test_rows_match_source_exactly(events):
    src, wh = events
    source = read_avro(src.glob("part-*.avro"))
    first = {}
    for r in source:
        first.setdefault(str(r["event_id"]), r)
    assert len(first) < len(source), "the generator made duplicates"
    table = catalog(wh).load_table("web.events")
    got, n = table_rows(table, "event_id")
    assert n == len(first), "one row per distinct event_id"
    norm.uuid_bytes = True
    for eid, want in first.items():
        have = got[eid]
        assert norm(have) == norm(want), f"row {eid} differs"
    norm.uuid_bytes = False


def test_partitions_sorting_and_bounds(events):
    _, wh = events
    table = catalog(wh).load_table("web.events")
    schema = table.schema()
    assert [f.name for f in table.spec().fields] == ["event_time_day", "tenant_id"]
    files = [t.file for t in table.scan().plan_files()]
    assert files, "data files are registered"
    assert len({f.file_path for f in files}) == len(files), "no data file registered twice"
    total = 0
    for f in files:
        data = pq.read_table(f.file_path.removeprefix("file://"))
        total += data.num_rows
        assert f.record_count == data.num_rows
        assert f.file_size_in_bytes == os.path.getsize(f.file_path.removeprefix("file://"))
        day, tenant = f.partition[0], f.partition[1]
        days = {(t.replace(tzinfo=None) - dt.datetime(1970, 1, 1)).days for t in data.column("event_time").to_pylist()}
        assert days == {day}, "every row is in its file's day partition"
        assert set(data.column("tenant_id").to_pylist()) == {tenant}
        times = data.column("event_time").to_pylist()
        assert times == sorted(times), "rows sorted by the cluster key within a partition file"
        for col in ["event_time", "ingest_time", "tenant_id", "session_id", "schema_version", "user_id", "amount"]:
            field = schema.find_field(col)
            values = [v for v in data.column(col).to_pylist() if v is not None]
            assert f.null_value_counts[field.field_id] == data.column(col).null_count, col
            assert f.value_counts[field.field_id] == data.num_rows, col
            if not values:
                continue
            lo = from_bytes(field.field_type, f.lower_bounds[field.field_id])
            hi = from_bytes(field.field_type, f.upper_bounds[field.field_id])
            want_lo, want_hi = min(values), max(values)
            if isinstance(want_lo, dt.datetime):
                epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
                want_lo, want_hi = [(v - epoch) // dt.timedelta(microseconds=1) for v in (want_lo, want_hi)]
            if isinstance(want_lo, decimal.Decimal):
                lo, hi = decimal.Decimal(lo), decimal.Decimal(hi)
            if isinstance(want_lo, str):
                assert lo == want_lo[:16] and want_hi[:16] <= hi, col
            else:
                assert (lo, hi) == (want_lo, want_hi), col
    assert total == table.scan().to_arrow().num_rows


def test_reingest_is_idempotent(events):
    src, wh = events
    table = catalog(wh).load_table("web.events")
    before_rows = table.scan().to_arrow().num_rows
    before_snaps = len(table.metadata.snapshots)
    p = floe("ingest", src, "--warehouse", wh, "--table", "web.events", expect=2)
    assert "12 file(s) already ingested and skipped" in p.stdout
    table = catalog(wh).load_table("web.events")
    assert table.scan().to_arrow().num_rows == before_rows
    assert len(table.metadata.snapshots) == before_snaps


def test_quarantine_lists_the_bad_files(events):
    _, wh = events
    out = floe("quarantine", "list", "--warehouse", wh).stdout
    bad = sorted(line.split("\t")[0].rsplit("/", 1)[1] for line in out.strip().splitlines())
    assert bad == sorted(f"corrupt-{k}.avro" for k in
                         ["empty", "truncated", "bad-magic", "bad-sync", "unknown-codec", "corrupt-block",
                          "trailing-bytes"])


def test_every_avro_type_round_trips(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 0, "--events-per-file", 300, "--kitchen-sink")
    floe("ingest", src / "kitchen-sink.avro", "--warehouse", wh, "--table", "t.sink")
    source = {r["id"]: r for r in read_avro([src / "kitchen-sink.avro"])}
    table = catalog(wh).load_table("t.sink")
    got, n = table_rows(table, "id")
    assert n == len(source) == 300
    types = {f.name: str(f.field_type) for f in table.schema().fields}
    assert types["uid"] == "uuid" and types["big"] == "decimal(22, 3)" and types["t_ms"] == "time"
    assert types["ts_ms"] == "timestamptz" and types["lts_ms"] == "timestamp" and types["color"] == "string"
    assert types["hash"] == "fixed[4]" and types["day"] == "date"
    norm.uuid_bytes = True
    for i, want in source.items():
        want = dict(want)
        assert norm(got[i]) == norm(want), f"row {i} differs"
    norm.uuid_bytes = False


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy", "zstandard"])
def test_codecs(tmp_path, codec):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 3, "--events-per-file", 200, "--codec", codec)
    floe("ingest", src, "--warehouse", wh, "--table", "c.events")
    table = catalog(wh).load_table("c.events")
    assert table.scan().to_arrow().num_rows == 600
    ids = {str(r["event_id"]) for r in read_avro(src.glob("*.avro"))}
    got = table.scan().to_arrow().column("event_id").to_pylist()
    assert {norm_key(b) for b in got} == ids


def test_quarantine_replay_lands_a_fixed_file(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 3, "--events-per-file", 200, "--seed", 11)
    good = sorted(src.glob("part-*.avro"))
    broken = src / "broken.avro"
    broken.write_bytes(good[0].read_bytes()[:-700])  # cut off in its last block
    floe("ingest", src, "--warehouse", wh, "--table", "ops.events", expect=2)
    listed = floe("quarantine", "list", "--warehouse", wh).stdout
    assert "broken.avro" in listed and "\tops.events\t" in listed
    assert catalog(wh).load_table("ops.events").scan().to_arrow().num_rows == 600

    # Nothing fixed yet: a replay refuses it again and keeps it listed (exit 2).
    p = floe("quarantine", "replay", "--warehouse", wh, expect=2)
    assert "0 landed, 1 refused again" in p.stdout
    # Fixed: a complete file uploaded over the broken one.
    fixed = tmp_path / "fixed"
    floe("gen", "--out", fixed, "--files", 1, "--events-per-file", 150, "--seed", 12)
    broken.write_bytes((fixed / "part-00000.avro").read_bytes())
    assert "broken.avro" in floe("quarantine", "replay", "--warehouse", wh, "--dry-run").stdout
    p = floe("quarantine", "replay", "--warehouse", wh)
    assert "1 landed, 0 refused again" in p.stdout
    assert floe("quarantine", "list", "--warehouse", wh).stdout.strip() == "no quarantined objects"
    table = catalog(wh).load_table("ops.events")
    want = {str(r["event_id"]) for r in read_avro(good + [broken])}
    got = [norm_key(k) for k in table.scan().to_arrow().column("event_id").to_pylist()]
    assert len(got) == len(set(got)) == len(want) == 750
    assert set(got) == want
