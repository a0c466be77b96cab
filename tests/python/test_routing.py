"""Routing: one landing folder feeds several tables, by key prefix and by a field's value,
each table with its own partition spec, sort order, dedup key and target size, through a real
floe.toml and `floe ingest` without --table; PyIceberg reads every table back."""

import os
import subprocess
from pathlib import Path

import fastavro
from pyiceberg.catalog.sql import SqlCatalog

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))

FLOE_TOML = """
[[table]]
name = "web.clicks"
prefixes = ["events/"]
route_by = "event_type"
route_values = ["click"]
partition_by = "identity(tenant)"
dedup_key = "id"

[[table]]
name = "web.views"
prefixes = ["events/"]
route_by = "event_type"
route_values = ["view", "impression"]
sort_by = "id desc"

[[table]]
name = "web.other"
prefixes = ["events/"]
target_file_size_mb = 64

[[table]]
name = "ops.audit"
prefixes = ["audit/"]
"""

SCHEMA = {
    "type": "record",
    "name": "ev",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "tenant", "type": "string"},
        {"name": "event_type", "type": ["null", "string"], "default": None},
    ],
}
KINDS = ["click", "view", "impression", "scroll", None]


def floe(*args, expect=0):
    p = subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == expect, f"floe {' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def write(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        fastavro.writer(f, SCHEMA, rows)


def test_one_folder_feeds_several_tables_by_prefix_and_value(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    rows = {}
    for n, name in enumerate(["events/2026/a.avro", "events/2026/b.avro", "audit/c.avro", "logs/d.avro"]):
        rs = [{"id": n * 1000 + i, "tenant": f"t{i % 2}", "event_type": KINDS[i % len(KINDS)]} for i in range(40)]
        write(src / name, rs)
        rows[name] = rs
    # A duplicate click (same id): web.clicks' dedup key drops it; no other table has one.
    dup = dict(rows["events/2026/a.avro"][0])
    write(src / "events/2026/z.avro", [dup])
    (tmp_path / "floe.toml").write_text(FLOE_TOML)
    out = floe("ingest", src, "--warehouse", wh, "--config", tmp_path / "floe.toml", "--writers", 1, expect=2)
    assert "logs/d.avro" in out.stderr and "unrouted" in out.stderr, out.stderr

    events = rows["events/2026/a.avro"] + rows["events/2026/b.avro"]
    want = {
        "web.clicks": [r for r in events if r["event_type"] == "click"],
        "web.views": [r for r in events if r["event_type"] in ("view", "impression")],
        "web.other": [r for r in events if r["event_type"] not in ("click", "view", "impression")] + [],
        "ops.audit": rows["audit/c.avro"],
    }
    cat = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    for name, expected in want.items():
        t = cat.load_table(name)
        got = sorted(t.scan().to_arrow().to_pylist(), key=lambda r: r["id"])
        assert got == sorted(expected, key=lambda r: r["id"]), name
    # Each table was created with its own settings.
    assert [f.name for f in cat.load_table("web.clicks").spec().fields] == ["tenant"]
    assert cat.load_table("web.clicks").properties.get("floe.dedup-key") == "id"
    views_order = cat.load_table("web.views").sort_order()
    assert len(views_order.fields) == 1 and str(views_order.fields[0].direction).lower() == "desc"
    assert cat.load_table("web.other").properties["write.target-file-size-bytes"] == str(64 << 20)
    assert not cat.load_table("ops.audit").spec().fields
    # Nothing else was created, and the unrouted file is in the quarantine.
    assert sorted(".".join(i) for ns in cat.list_namespaces() for i in cat.list_tables(ns)) == sorted(want)
    listed = floe("quarantine", "list", "--warehouse", wh).stdout
    assert "logs/d.avro" in listed and "unrouted" in listed, listed

    # Again: every table skips what it committed; nothing lands twice.
    floe("ingest", src, "--warehouse", wh, "--config", tmp_path / "floe.toml", expect=2)
    for name, expected in want.items():
        assert len(cat.load_table(name).scan().to_arrow()) == len(expected), name


def test_routes_that_could_lose_rows_are_refused_before_anything_lands(tmp_path):
    write(tmp_path / "in" / "events" / "a.avro", [{"id": 1, "tenant": "t", "event_type": "x"}])
    bad = FLOE_TOML.replace('[[table]]\nname = "web.other"\nprefixes = ["events/"]\ntarget_file_size_mb = 64\n', "")
    (tmp_path / "floe.toml").write_text(bad)
    out = floe("ingest", tmp_path / "in", "--warehouse", tmp_path / "wh", "--config", tmp_path / "floe.toml", expect=1)
    assert "nowhere to go" in out.stderr, out.stderr
    assert not [p for p in (tmp_path / "wh").glob("*.db") if p.is_dir()], "no table was created"


def test_the_example_floe_toml_is_valid_and_routes_as_it_says(tmp_path):
    # The shipped example parses (floe refuses a bad one before reading any file) and splits
    # rows as its comments say; generated events carry every event_type.
    floe("gen", "--out", tmp_path / "in" / "events", "--files", 2, "--events-per-file", 300)
    wh = tmp_path / "wh"
    floe("ingest", tmp_path / "in", "--warehouse", wh, "--config", ROOT / "floe.toml.example")
    cat = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    kinds = {
        name: set(cat.load_table(name).scan().to_arrow().column("event_type").to_pylist())
        for name in ["web.events", "web.purchases", "web.errors"]
    }
    assert kinds["web.purchases"] == {"PURCHASE", "ADD_TO_CART"} and kinds["web.errors"] == {"ERROR"}, kinds
    assert kinds["web.events"] and not kinds["web.events"] & {"PURCHASE", "ADD_TO_CART", "ERROR"}, kinds


def test_a_replayed_object_of_a_split_prefix_goes_back_to_each_table_for_its_rows(tmp_path):
    src, wh, cfg = tmp_path / "in", tmp_path / "wh", tmp_path / "floe.toml"
    cfg.write_text(FLOE_TOML)
    good = [{"id": i, "tenant": "t", "event_type": KINDS[i % len(KINDS)]} for i in range(20)]
    write(src / "events" / "good.avro", good)
    (src / "events" / "late.avro").write_bytes(b"Obj\x01 truncated upload")
    floe("ingest", src, "--warehouse", wh, "--config", cfg, expect=2)
    # The producer re-uploads the object whole; the replay sends it to every table of its
    # prefix, each taking only its rows (a replay into the one table its record names would
    # have put every row there).
    late = [{"id": 100 + i, "tenant": "t", "event_type": KINDS[i % len(KINDS)]} for i in range(20)]
    write(src / "events" / "late.avro", late)
    floe("quarantine", "replay", "--warehouse", wh, "--config", cfg)
    cat = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    rows = good + late
    want = {
        "web.clicks": {r["id"] for r in rows if r["event_type"] == "click"},
        "web.views": {r["id"] for r in rows if r["event_type"] in ("view", "impression")},
        "web.other": {r["id"] for r in rows if r["event_type"] not in ("click", "view", "impression")},
    }
    for name, ids in want.items():
        got = cat.load_table(name).scan().to_arrow().column("id").to_pylist()
        assert sorted(got) == sorted(ids), name
    assert "late.avro" not in floe("quarantine", "list", "--warehouse", wh).stdout


def test_a_table_taking_whole_objects_of_one_prefix_and_some_rows_of_another(tmp_path):
    # raw.other is the only table of `a/` (whole objects) and the default table of `b/`, which
    # splits by event_type with no catch-all of its own: both kinds of batch in one run.
    cfg = tmp_path / "floe.toml"
    cfg.write_text(
        '[routing]\ndefault_table = "raw.other"\n'
        '[[table]]\nname = "raw.other"\nprefixes = ["a/"]\n'
        '[[table]]\nname = "web.clicks"\nprefixes = ["b/"]\nroute_by = "event_type"\nroute_values = ["click"]\n'
    )
    src, wh = tmp_path / "in", tmp_path / "wh"
    a_rows = [{"id": i, "tenant": "t", "event_type": "click"} for i in range(10)]
    b_rows = [{"id": 100 + i, "tenant": "t", "event_type": KINDS[i % len(KINDS)]} for i in range(20)]
    write(src / "a" / "1.avro", a_rows)
    write(src / "b" / "2.avro", b_rows)
    floe("ingest", src, "--warehouse", wh, "--config", cfg, "--writers", 1)
    cat = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    other = sorted(cat.load_table("raw.other").scan().to_arrow().column("id").to_pylist())
    clicks = sorted(cat.load_table("web.clicks").scan().to_arrow().column("id").to_pylist())
    assert other == sorted([r["id"] for r in a_rows] + [r["id"] for r in b_rows if r["event_type"] != "click"])
    assert clicks == sorted(r["id"] for r in b_rows if r["event_type"] == "click")
