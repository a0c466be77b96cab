"""Format v3 row lineage, checked by independent readers: a table `floe ingest` made, upgraded to
v3 the way another engine would (a new metadata.json with format-version 3 and next-row-id,
swapped into the SQL catalog), then appended to by `floe ingest`. PyIceberg reads every row
back; fastavro reads the manifest lists and manifests, and the row ids each data file inherits
are worked out here from the spec's rules, not by Floe's code.
"""

import json
import shutil
import sqlite3
import uuid
from pathlib import Path

import fastavro
import pytest

from test_pyiceberg import catalog, floe, norm_key, read_avro

TABLE = ["--table", "web.events", "--partition-by", "day(event_time),identity(tenant_id)",
         "--sort-by", "tenant_id,event_time", "--dedup-key", "event_id"]


def path(uri):
    return uri.removeprefix("file://")


def current_metadata(wh):
    with sqlite3.connect(wh / "catalog.db") as db:
        (loc,) = db.execute("SELECT metadata_location FROM iceberg_tables WHERE table_name = 'events'").fetchone()
    return loc, json.loads(Path(path(loc)).read_text())


def upgrade_to_v3(wh, properties):
    """What another engine's upgrade writes: format-version 3, next-row-id 0, a metadata log
    entry, and the catalog pointer moved with a compare-and-swap on the old location."""
    old, meta = current_metadata(wh)
    meta["format-version"] = 3
    meta["next-row-id"] = 0
    meta["properties"].update(properties)
    meta["metadata-log"].append({"metadata-file": old, "timestamp-ms": meta["last-updated-ms"]})
    meta["last-updated-ms"] += 1
    new = str(Path(path(old)).parent / f"09999-{uuid.uuid4()}.metadata.json")
    Path(new).write_text(json.dumps(meta))
    with sqlite3.connect(wh / "catalog.db") as db:
        cur = db.execute(
            "UPDATE iceberg_tables SET metadata_location = ?, previous_metadata_location = ? "
            "WHERE table_name = 'events' AND metadata_location = ?", (f"file://{new}", old, old))
        assert cur.rowcount == 1


def add_foreign_column(wh, field):
    """What another engine's schema change writes: a new current schema with `field` (given its
    id here) after the others, in a new metadata.json the catalog points at; returns its URI."""
    old, meta = current_metadata(wh)
    schema = json.loads(json.dumps(next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])))
    schema["schema-id"] = max(s["schema-id"] for s in meta["schemas"]) + 1
    meta["last-column-id"] += 1
    schema["fields"].append({"id": meta["last-column-id"], **field})
    meta["schemas"].append(schema)
    meta["current-schema-id"] = schema["schema-id"]
    new = str(Path(path(old)).parent / f"09998-{uuid.uuid4()}.metadata.json")
    Path(new).write_text(json.dumps(meta))
    with sqlite3.connect(wh / "catalog.db") as db:
        db.execute("UPDATE iceberg_tables SET metadata_location = ? WHERE table_name = 'events'", (f"file://{new}",))
    return f"file://{new}"


def avro_records(p):
    with open(path(p), "rb") as f:
        return list(fastavro.reader(f))


def live_row_ids(meta):
    """Each live data file's first row id and row count, by the spec's inheritance rules: a file
    without first_row_id takes the next ids of its manifest's range, in entry order, deleted
    entries taking none."""
    snap = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    out, manifests = {}, avro_records(snap["manifest-list"])
    for mf in manifests:
        if mf["content"] != 0:
            continue
        assert mf["first_row_id"] is not None, f"{mf['manifest_path']} has no first_row_id"
        nxt = mf["first_row_id"]
        for e in avro_records(mf["manifest_path"]):
            f = e["data_file"]
            if e["status"] == 2:
                continue
            first = f.get("first_row_id")
            if first is None:
                first, nxt = nxt, nxt + f["record_count"]
            out[f["file_path"]] = (first, f["record_count"])
    return out, manifests


def check_lineage(meta, upgraded_seq):
    assert meta["format-version"] == 3
    chain = sorted((s for s in meta["snapshots"] if s["sequence-number"] > upgraded_seq),
                   key=lambda s: s["sequence-number"])
    assert chain, "snapshots since the upgrade"
    nxt = 0
    for s in chain:
        assert s["first-row-id"] >= nxt, f"snapshot {s['snapshot-id']} reuses ids"
        nxt = s["first-row-id"] + s["added-rows"]
    assert meta["next-row-id"] == nxt
    ids, manifests = live_row_ids(meta)
    ranges = sorted(ids.values())
    for (a, n), (b, _) in zip(ranges, ranges[1:]):
        assert a + n <= b, f"row id ranges overlap: {a}+{n} > {b}"
    assert ranges[-1][0] + ranges[-1][1] <= meta["next-row-id"]
    return ids, manifests


@pytest.mark.parametrize("merge_after", ["3", "1"])
def test_appends_to_a_v3_table_assign_row_ids_that_never_move(tmp_path, merge_after):
    """merge_after 1: every commit merges, the first after the upgrade included (the manifests
    from before it, which have no ids yet, merged with new files into one new range)."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 8, "--events-per-file", 300, "--seed", 31)
    parts = sorted(src.glob("part-*.avro"))
    rounds = [parts[:2], parts[2:4], parts[4:6], parts[6:]]
    dirs = []
    for i, files in enumerate(rounds):
        d = tmp_path / f"round{i}"
        d.mkdir()
        for f in files:
            shutil.copy(f, d / f.name)
        dirs.append(d)
    floe("ingest", dirs[0], "--warehouse", wh, *TABLE, "--batch-objects", 1)
    # Compacted while v2: manifests with DELETED and EXISTING entries, and no row ids, carried
    # into the v3 table.
    floe("compact", "--warehouse", wh, "--table", "web.events", "--full")
    _, meta = current_metadata(wh)
    # The current snapshot, not the list's last: the list's order is not defined (iceberg-rust
    # keeps snapshots in a hash map and writes them in its order).
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    assert current["summary"]["operation"] in ("replace", "overwrite", "delete")
    upgrade_to_v3(wh, {"commit.manifest.min-count-to-merge": merge_after})
    _, meta = current_metadata(wh)
    upgraded_seq = meta["last-sequence-number"]

    floe("ingest", dirs[1], "--warehouse", wh, *TABLE)
    before, _ = check_lineage(current_metadata(wh)[1], upgraded_seq)
    for d in dirs[2:]:
        # One commit per object: the committer merges manifests it wrote itself in this process
        # (from its warm cache) as well as ones it read.
        floe("ingest", d, "--warehouse", wh, *TABLE, "--batch-objects", 1, "--writers", 1)
    # A producer adds a field: the schema change lands with the data in a v3 commit.
    evolved = tmp_path / "evolved"
    evolved.mkdir()
    with open(parts[0], "rb") as f:
        r = fastavro.reader(f)
        schema = dict(r.writer_schema)
        records = [dict(x, channel="web") for x in r]
    schema["fields"] = [*schema["fields"], {"name": "channel", "type": ["null", "string"], "default": None}]
    for x in records:
        x["event_id"] = str(uuid.uuid4())
    with open(evolved / "part-evolved.avro", "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records)
    floe("ingest", evolved, "--warehouse", wh, *TABLE)
    after, manifests = check_lineage(current_metadata(wh)[1], upgraded_seq)
    for f, ids in before.items():
        assert after[f] == ids, f"{f} kept its row ids"
    existing = [e for mf in manifests for e in avro_records(mf["manifest_path"]) if e["status"] == 0]
    assert existing, "manifests were merged (the test must exercise a rewrite of earlier entries)"
    assert all(e["data_file"]["first_row_id"] is not None for e in existing), "merged entries keep written ids"

    table = catalog(wh).load_table("web.events")
    assert table.format_version == 3
    source = {str(r["event_id"]) for r in read_avro([*parts, evolved / "part-evolved.avro"])}
    rows = table.scan(selected_fields=("event_id", "channel")).to_arrow()
    got = rows.column("event_id").to_pylist()
    assert len(got) == len(source) and {norm_key(k) for k in got} == source
    assert rows.column("channel").to_pylist().count("web") == len(records)


def row_lineage(meta):
    """Each live row's (_row_id, _last_updated_sequence_number) by event id, as the spec says a
    reader finds them: the data file's columns where it has them and they are not null, else the
    file's first_row_id plus the row's position and the file's data sequence number. Read with
    fastavro and pyarrow, not by Floe's code."""
    import pyarrow.parquet as pq
    ids, manifests = live_row_ids(meta)
    seqs = {}
    for mf in manifests:
        if mf["content"] != 0:
            continue
        for e in avro_records(mf["manifest_path"]):
            if e["status"] != 2:
                seq = e["sequence_number"] if e["sequence_number"] is not None else mf["sequence_number"]
                seqs[e["data_file"]["file_path"]] = seq
    out = {}
    for f, (first, n) in ids.items():
        t = pq.read_table(path(f))
        assert t.num_rows == n
        col = lambda name: t.column(name).to_pylist() if name in t.column_names else [None] * n  # noqa: E731
        for pos, (key, rid, lus) in enumerate(zip(t.column("event_id").to_pylist(), col("_row_id"),
                                                  col("_last_updated_sequence_number"))):
            out.setdefault(norm_key(key), []).append((first + pos if rid is None else rid,
                                                      seqs[f] if lus is None else lus))
    return out


def test_compacting_a_v3_table_keeps_every_rows_id(tmp_path):
    """Rows appended before the upgrade (ids assigned by the first v3 commit) and after it, and a
    later copy of one file's keys: a full compaction keeps each key once, the first committed
    copy, with the very `_row_id` and `_last_updated_sequence_number` a reader saw before."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 6, "--events-per-file", 150, "--seed", 32, "--dup-rate", 0)
    parts = sorted(src.glob("part-*.avro"))
    rounds = [tmp_path / f"round{i}" for i in range(3)]
    for d, files in zip(rounds, [parts[:3], parts[3:], parts[:1]]):
        d.mkdir()
        for f in files:
            shutil.copy(f, d / f"{d.name}-{f.name}")
    floe("ingest", rounds[0], "--warehouse", wh, *TABLE, "--batch-objects", 1)
    upgrade_to_v3(wh, {})
    _, meta = current_metadata(wh)
    upgraded_seq = meta["last-sequence-number"]
    floe("ingest", rounds[1], "--warehouse", wh, *TABLE, "--batch-objects", 1)
    floe("ingest", rounds[2], "--warehouse", wh, *TABLE)  # later copies of part 0's keys
    check_lineage(current_metadata(wh)[1], upgraded_seq)
    before = row_lineage(current_metadata(wh)[1])
    copies = [k for k, v in before.items() if len(v) > 1]
    assert len(copies) == 150, "round 2 copied one file's keys"

    floe("compact", "--warehouse", wh, "--table", "web.events", "--full")
    _, meta = current_metadata(wh)
    current = next(s for s in meta["snapshots"] if s["snapshot-id"] == meta["current-snapshot-id"])
    assert current["summary"]["operation"] == "overwrite", "the later copies were dropped"
    check_lineage(meta, upgraded_seq)
    after = row_lineage(meta)
    assert after.keys() == before.keys()
    for key, rows in after.items():
        assert len(rows) == 1, f"{key} kept once"
        first = min(before[key], key=lambda r: r[1])  # the copy committed first
        assert rows[0] == first, f"{key}: {rows[0]} after, {before[key]} before"
    assert all(r[0][0] is not None for r in after.values())
    table = catalog(wh).load_table("web.events")
    assert len(table.scan(selected_fields=("event_id",)).to_arrow()) == len(before)
    assert all(f.file.file_path.rsplit("/", 1)[-1].startswith("L") for f in table.scan().plan_files())


@pytest.mark.parametrize("ty", ["variant", "geometry(srid:4326)", "unknown"])
def test_a_v3_only_type_another_engine_added_is_refused_by_name(tmp_path, ty):
    """A column of a type Floe cannot read (the iceberg crate has none of these): every role
    refuses the table naming the column and its type, not with a parse error; nothing is written
    or quarantined."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 2, "--events-per-file", 50, "--seed", 33)
    floe("ingest", src, "--warehouse", wh, *TABLE, "--batch-objects", 1)
    upgrade_to_v3(wh, {})
    new = add_foreign_column(wh, {"name": "payload", "required": False, "type": ty})
    for args in (["compact", "--warehouse", wh, "--table", "web.events", "--full"],
                 ["ingest", src, "--warehouse", wh, *TABLE]):
        p = floe(*args, expect=1)
        assert "column `payload`" in p.stderr and ty in p.stderr and "format v3" in p.stderr, p.stderr
    assert current_metadata(wh)[0] == new, "the table is unchanged"


def test_a_producers_avro_default_fills_older_rows_of_a_v3_table(tmp_path):
    """A producer adds `channel` (a string, Avro default "web") to a v3 table: the column takes
    "web" as its initial-default and write-default, so PyIceberg reads the rows written before
    as "web"; an older producer's rows are written with "web"; after a full compaction every
    file holds the values itself."""
    import pyarrow.parquet as pq
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 3, "--events-per-file", 80, "--seed", 34, "--dup-rate", 0)
    parts = sorted(src.glob("part-*.avro"))
    rounds = [tmp_path / f"r{i}" for i in range(3)]
    for d, f in zip(rounds, parts):
        d.mkdir()
        shutil.copy(f, d / f.name)
    floe("ingest", rounds[0], "--warehouse", wh, *TABLE)
    upgrade_to_v3(wh, {})
    floe("ingest", rounds[1], "--warehouse", wh, *TABLE)
    evolved = tmp_path / "evolved"
    evolved.mkdir()
    with open(parts[0], "rb") as f:
        r = fastavro.reader(f)
        schema = dict(r.writer_schema)
        records = [dict(x, channel="app", event_id=str(uuid.uuid4())) for x in r]
    schema["fields"] = [*schema["fields"], {"name": "channel", "type": "string", "default": "web"}]
    with open(evolved / "part-evolved.avro", "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), records)
    floe("ingest", evolved, "--warehouse", wh, *TABLE)
    _, meta = current_metadata(wh)
    current = next(s for s in meta["schemas"] if s["schema-id"] == meta["current-schema-id"])
    channel = next(f for f in current["fields"] if f["name"] == "channel")
    assert channel.get("initial-default") == "web" and channel.get("write-default") == "web", channel
    floe("ingest", rounds[2], "--warehouse", wh, *TABLE)  # an older producer: no channel

    def read():
        t = catalog(wh).load_table("web.events").scan(selected_fields=("event_id", "channel")).to_arrow()
        return sorted(t.column("channel").to_pylist(), key=str)
    want = sorted(["app"] * len(records) + ["web"] * 240)
    assert read() == want, "older rows read the initial-default, new ones without the field its write-default"
    floe("compact", "--warehouse", wh, "--table", "web.events", "--full")
    assert read() == want
    for task in catalog(wh).load_table("web.events").scan().plan_files():
        col = pq.read_table(path(task.file.file_path)).column("channel")
        assert col.null_count == 0, "every compacted file holds the values itself"


def test_a_default_floe_cannot_read_is_refused_by_name(tmp_path):
    """A nanosecond timestamp column's default, which the iceberg crate cannot parse (it drops
    it): Floe would write nulls where the default belongs, so every role refuses the table."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    floe("gen", "--out", src, "--files", 1, "--events-per-file", 50, "--seed", 35)
    floe("ingest", src, "--warehouse", wh, *TABLE)
    upgrade_to_v3(wh, {})
    add_foreign_column(wh, {"name": "seen", "required": False, "type": "timestamp_ns",
                            "initial-default": "2026-01-01T00:00:00.000000001",
                            "write-default": "2026-01-01T00:00:00.000000001"})
    p = floe("ingest", src, "--warehouse", wh, *TABLE, expect=1)
    assert "default value on column `seen`" in p.stderr, p.stderr
