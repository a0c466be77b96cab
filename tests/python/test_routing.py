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
