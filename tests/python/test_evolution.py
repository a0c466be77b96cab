"""Schema evolution: producers change their Avro schemas while files keep landing.

A sequence of producer versions goes into one table through `floe ingest`, one call (one
snapshot) per version, and PyIceberg reads every snapshot back with that snapshot's schema:
every row with the values written, nulls where a row's file lacked a column, and field ids that
never move (a renamed column keeps its id; a promoted one keeps its values). Then changes that
cannot evolve are quarantined with the table unchanged, rival evolutions in one run both land
under their own columns, and a full compaction keeps every value.

The expected values are fastavro's (what it was given, a float as the float32 it wrote).
"""

import os
import struct
import subprocess
from pathlib import Path

import fastavro
import pytest
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.types import DoubleType, LongType, StructType

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))
TABLE = "shop.orders"


def floe(*args, expect=0):
    p = subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == expect, f"floe {' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0]


def opt(t, **extra):
    return {"type": ["null", t], "default": None, **extra}


def address(with_zip):
    fields = [{"name": "city", "type": "string"}]
    if with_zip:
        fields.append({"name": "zip", **opt("string")})
    return {"type": "record", "name": "address", "fields": fields}


def version(n):
    """Producer schema version n (1..6): each adds one kind of change to the one before."""
    fields = [
        {"name": "id", "type": "long"},
        {"name": "name", "type": "string"} if n < 4 else {"name": "name", **opt("string")},
        {"name": "amount", "type": "float" if n < 3 else "double"}
        if n < 5
        else {"name": "total", "type": "double", "aliases": ["amount"]},
        {"name": "score", "type": "int" if n < 3 else "long"},
        {"name": "address", **opt(address(with_zip=n >= 6))},
    ]
    if n >= 2:
        fields.append({"name": "country", **opt("string")})
    return {"type": "record", "name": "order", "fields": fields}


def rows_of(n, base):
    """Five rows for version n, as written, and as the final table must show them."""
    written, final = [], []
    for i in range(5):
        rid = base + i
        amount = rid + 0.25 if n < 3 else rid + 0.1
        row = {
            "id": rid,
            "name": None if (n >= 4 and i == 0) else f"n{rid}",
            "amount" if n < 5 else "total": amount,
            "score": rid * 10 if n < 3 else rid * 10_000_000_000,
            "address": None if i == 1 else {"city": f"c{rid}", **({"zip": f"z{rid}"} if n >= 6 else {})},
        }
        if n >= 2:
            row["country"] = f"k{rid}"
        written.append(row)
        final.append(
            {
                "id": rid,
                "name": row["name"],
                "total": f32(amount) if n < 3 else amount,
                "score": row["score"],
                "address": None if i == 1 else {"city": f"c{rid}", "zip": f"z{rid}" if n >= 6 else None},
                "country": row.get("country"),
            }
        )
    return written, final


def write_avro(path, schema, rows):
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), rows)


def project(row, snap_schema, final_schema):
    """A row in the final schema's names, as a scan with an earlier snapshot's schema shows it."""
    out = {}
    for f in snap_schema.fields:
        v = row.get(final_schema.find_field(f.field_id).name)
        if isinstance(f.field_type, StructType) and v is not None:
            v = {c.name: v.get(final_schema.find_field(c.field_id).name) for c in f.field_type.fields}
        out[f.name] = v
    return out


@pytest.fixture(scope="module")
def evolved(tmp_path_factory):
    base = tmp_path_factory.mktemp("evolve")
    wh = base / "wh"
    expected = []  # per snapshot: every row landed so far, in final names
    steps = [(1, 100), (2, 200), (3, 300), (4, 400), (5, 500), (6, 600), (1, 700)]
    for n, first in steps:
        written, final = rows_of(n, first)
        path = base / f"v{n}-{first}.avro"
        write_avro(path, version(n), written)
        floe("ingest", path, "--warehouse", wh, "--table", TABLE)
        expected.append((expected[-1][1] if expected else []) + final)
        expected[-1] = (n, expected[-1])
    cat = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    return wh, cat, expected


def test_every_snapshot_reads_back_with_its_schema(evolved):
    wh, cat, expected = evolved
    t = cat.load_table(TABLE)
    snaps = sorted(t.snapshots(), key=lambda s: s.sequence_number)
    assert len(snaps) == len(expected)
    final = t.schema()
    schemas = {s.schema_id: s for s in t.schemas().values()}
    for snap, (n, rows) in zip(snaps, expected):
        got = sorted(t.scan(snapshot_id=snap.snapshot_id).to_arrow().to_pylist(), key=lambda r: r["id"])
        want = sorted((project(r, schemas[snap.schema_id], final) for r in rows), key=lambda r: r["id"])
        assert got == want, f"snapshot after version {n}"


def test_the_final_schema_keeps_ids_and_follows_every_change(evolved):
    _, cat, _ = evolved
    t = cat.load_table(TABLE)
    s = t.schema()
    first = min(t.schemas().values(), key=lambda x: x.schema_id)
    assert [f.name for f in s.fields] == ["id", "name", "total", "score", "address", "country"]
    # Renamed and promoted columns keep their ids; new ones take fresh ids.
    assert s.find_field("total").field_id == first.find_field("amount").field_id
    assert s.find_field("score").field_id == first.find_field("score").field_id
    assert s.find_field("total").field_type == DoubleType() and s.find_field("score").field_type == LongType()
    assert not s.find_field("name").required and s.find_field("id").required
    assert s.find_field("country").field_id > first.highest_field_id
    assert [f.name for f in s.find_field("address").field_type.fields] == ["city", "zip"]
    assert t.metadata.last_column_id == s.highest_field_id
    # One schema per evolving version, committed with its first data; the old producer after
    # the rename needed no new schema.
    assert len(t.schemas()) == 6
    changes = [s.summary.additional_properties.get("floe.schema-changes") for s in t.snapshots()]
    assert sum(c is not None for c in changes) == 5, changes


def test_filters_on_promoted_and_renamed_columns_use_the_old_files_stats_right(evolved):
    # Files written before the promotions carry int and float bounds under what are now long
    # and double columns; a filtered scan prunes with them and must keep every matching row.
    _, cat, expected = evolved
    t = cat.load_table(TABLE)
    rows = expected[-1][1]
    for expr, keep in [
        ("score >= 1020", lambda r: r["score"] >= 1020),
        ("total > 102.0", lambda r: r["total"] > 102.0),
        ("total < 300.0", lambda r: r["total"] < 300.0),
        ("country = 'k201'", lambda r: r["country"] == "k201"),
    ]:
        got = sorted(r["id"] for r in t.scan(row_filter=expr).to_arrow().to_pylist())
        assert got == sorted(r["id"] for r in rows if keep(r)), expr


@pytest.mark.parametrize(
    "name,field,reason",
    [
        ("type-change", {"name": "score", "type": "string"}, "score"),
        ("new-required", {"name": "must", "type": "long"}, "without a default"),
        ("union", {"name": "multi", "type": ["null", "string", "long"]}, "several non-null types"),
    ],
)
def test_what_cannot_evolve_is_quarantined_and_the_table_is_unchanged(evolved, tmp_path, name, field, reason):
    wh, cat, _ = evolved
    before = cat.load_table(TABLE).metadata
    schema = version(6)
    schema["fields"] = [f for f in schema["fields"] if f["name"] != field["name"]] + [field]
    row = {"id": 1, "name": "x", "total": 1.0, "score": "s" if name == "type-change" else 1, "address": None, "country": None}
    row[field["name"]] = {"type-change": "s", "new-required": 7, "union": "u"}[name]
    write_avro(tmp_path / f"{name}.avro", schema, [row])
    floe("ingest", tmp_path / f"{name}.avro", "--warehouse", wh, "--table", TABLE, expect=2)
    after = cat.load_table(TABLE).metadata
    assert after.current_schema_id == before.current_schema_id and after.last_column_id == before.last_column_id
    assert after.current_snapshot_id == before.current_snapshot_id
    listed = floe("quarantine", "list", "--warehouse", wh).stdout
    line = next(l for l in listed.splitlines() if f"{name}.avro" in l)
    assert reason in line, line


def test_rival_evolutions_in_one_run_land_under_their_own_columns(tmp_path):
    wh = tmp_path / "wh"
    base = {"type": "record", "name": "r", "fields": [{"name": "id", "type": "long"}]}
    write_avro(tmp_path / "base.avro", base, [{"id": 0}])
    floe("ingest", tmp_path / "base.avro", "--warehouse", wh, "--table", "t.rivals")
    files = []
    for col, first in [("p", 100), ("q", 200), ("r", 300)]:
        schema = {**base, "fields": base["fields"] + [{"name": col, **opt("string")}]}
        path = tmp_path / "in" / f"{col}.avro"
        path.parent.mkdir(exist_ok=True)
        write_avro(path, schema, [{"id": first + i, col: f"{col}{first + i}"} for i in range(4)])
        files.append(path)
    # One batch per file, all written from the same view of the table: each proposes the same
    # next field id for its own column; the committer takes one and has the others written again.
    floe("ingest", tmp_path / "in", "--warehouse", wh, "--table", "t.rivals", "--writers", "3", "--batch-objects", "1")
    t = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}").load_table("t.rivals")
    ids = {f.name: f.field_id for f in t.schema().fields}
    assert sorted(ids) == ["id", "p", "q", "r"] and len(set(ids.values())) == 4
    rows = t.scan().to_arrow().to_pylist()
    assert len(rows) == 13
    for r in rows:
        for col in "pqr":
            mine = r["id"] // 100 == "pqr".index(col) + 1
            assert r[col] == (f"{col}{r['id']}" if mine else None), r


def test_a_full_compaction_across_schemas_keeps_every_value(evolved):
    wh, cat, expected = evolved
    floe("compact", "--warehouse", wh, "--table", TABLE, "--full")
    t = cat.load_table(TABLE)
    files = list(t.inspect.files().to_pylist())
    assert len(files) == 1, [f["file_path"] for f in files]
    got = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
    assert got == sorted(expected[-1][1], key=lambda r: r["id"])
