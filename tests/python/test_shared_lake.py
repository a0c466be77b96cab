"""A table Floe writes, shared with another engine (PyIceberg plays it): what the other engine
adds, tags, registers or forbids survives Floe's commits, expiry, compaction and sweep, and every
table reads back exactly. docs/ARCHITECTURE.md ("Sharing a table with other engines") lists each
case with its test.
"""

import os
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.table.statistics import BlobMetadata, StatisticsFile
from test_pyiceberg import FLOE, catalog, floe

TABLE = "lake.events"


def gen(out, seed, files=1, events=200):
    floe("gen", "--out", out, "--files", files, "--events-per-file", events, "--seed", seed, "--dup-rate", 0,
         "--tenants", 2)


def ingest(src, wh, *extra):
    return floe("ingest", src, "--warehouse", wh, "--table", TABLE, "--partition-by", "identity(tenant_id)",
                "--sort-by", "event_time", "--dedup-key", "event_id", *extra)


def rounds(tmp_path, wh, first, n):
    """`n` more ingests of one small file each (one commit each)."""
    for seed in range(first, first + n):
        gen(tmp_path / f"in{seed}", seed, events=50)
        ingest(tmp_path / f"in{seed}", wh)


def files_under(root: Path):
    return {p for p in root.rglob("*") if p.is_file()}


def set_props(wh, **props):
    t = catalog(wh).load_table(TABLE)
    with t.transaction() as tx:
        tx.set_properties(**props)


def rows(table, snapshot_id=None):
    return table.scan(snapshot_id=snapshot_id).to_arrow().num_rows


def test_gc_disabled_floe_deletes_no_file_of_the_table(tmp_path):
    """`gc.enabled=false` (a table registered over another table's files): no file is deleted,
    not by expiry (nothing expires: Iceberg Java's `RemoveSnapshots` refuses such a table), not as
    an old metadata file, and `floe sweep` refuses, as Java's `DeleteOrphanFiles` does."""
    wh = tmp_path / "wh"
    gen(tmp_path / "in0", 100, events=50)
    ingest(tmp_path / "in0", wh)
    set_props(wh, **{
        "gc.enabled": "false",
        "history.expire.min-snapshots-to-keep": "1",
        "history.expire.max-snapshot-age-ms": "1",
        "write.metadata.delete-after-commit.enabled": "true",
        "write.metadata.previous-versions-max": "1",
    })
    location = Path(catalog(wh).load_table(TABLE).location().removeprefix("file://"))
    orphan = location / "data" / "left-by-another-engine.parquet"
    orphan.write_bytes(b"not ours")
    old = time.time() - 30 * 24 * 3600
    os.utime(orphan, (old, old))
    seen = files_under(location)
    for seed in range(101, 113):
        gen(tmp_path / f"in{seed}", seed, events=50)
        ingest(tmp_path / f"in{seed}", wh)
        now = files_under(location)
        assert seen <= now, f"deleted under gc.enabled=false: {sorted(map(str, seen - now))[:5]}"
        seen = now
    table = catalog(wh).load_table(TABLE)
    assert len(table.snapshots()) == 13, "nothing expires (Iceberg Java's expiry refuses such a table)"
    assert rows(table) == 13 * 50

    p = subprocess.run([FLOE, "sweep", "--warehouse", wh, "--table", TABLE, "--older-than-hours", "1"],
                       capture_output=True, text=True)
    assert p.returncode != 0 and "gc.enabled" in p.stderr, (p.returncode, p.stdout, p.stderr)
    assert orphan.exists() and seen <= files_under(location)


def test_a_tag_keeps_its_snapshot_while_the_rest_of_main_expires(tmp_path):
    """Refs are retained as the spec says: a tag keeps its snapshot (and every file it reads)
    while `main`'s history past its `min-snapshots-to-keep` expires; a tag past its own
    `max-ref-age-ms` is removed; statistics of expired snapshots go with them."""
    wh = tmp_path / "wh"
    gen(tmp_path / "in0", 200, events=50)
    ingest(tmp_path / "in0", wh)
    rounds(tmp_path, wh, 201, 1)
    table = catalog(wh).load_table(TABLE)
    first, second = sorted(table.snapshots(), key=lambda s: s.sequence_number)[:2]
    location = Path(table.location().removeprefix("file://"))
    puffin = location / "metadata" / "stats-of-second.puffin"
    puffin.write_bytes(b"PFA1" * 4)
    with table.transaction() as tx:
        tx.set_properties(**{"history.expire.min-snapshots-to-keep": "3",
                             "history.expire.max-snapshot-age-ms": "1"})
    table = catalog(wh).load_table(TABLE)
    table.manage_snapshots().create_tag(first.snapshot_id, "audit").create_tag(
        second.snapshot_id, "brief", max_ref_age_ms=1).commit()
    with table.update_statistics() as u:
        u.set_statistics(StatisticsFile(
            snapshot_id=second.snapshot_id, statistics_path=f"file://{puffin}", file_size_in_bytes=16,
            file_footer_size_in_bytes=8, blob_metadata=[BlobMetadata(
                type="apache-datasketches-theta-v1", snapshot_id=second.snapshot_id,
                sequence_number=second.sequence_number, fields=[1], properties={})]))
    # A compaction replaces the files the tag reads; the snapshots that reach them expire below.
    rounds(tmp_path, wh, 202, 2)
    out = floe("compact", "--warehouse", wh, "--table", TABLE, "--full")
    assert "rewrite(s) committed" in out.stdout, out.stdout
    rounds(tmp_path, wh, 204, 10)

    table = catalog(wh).load_table(TABLE)
    ids = {s.snapshot_id for s in table.snapshots()}
    assert first.snapshot_id in ids, "the tagged snapshot is kept"
    assert second.snapshot_id not in ids, "a tag past its max-ref-age-ms no longer keeps its snapshot"
    assert len(ids) <= 1 + 3 + 8, f"main's history expires despite the tag: {len(ids)} snapshots kept"
    assert all(s.sequence_number >= 6 for s in table.snapshots() if s.snapshot_id != first.snapshot_id), \
        "the compaction's snapshot and those before it expired (the tag's files stay: it reads them below)"
    assert set(table.metadata.refs) == {"main", "audit"}, table.metadata.refs
    assert table.metadata.refs["audit"].snapshot_id == first.snapshot_id
    assert not table.metadata.statistics, "statistics of an expired snapshot are removed"
    assert not puffin.exists(), "and their file deleted"
    # Time travel to the tag reads every row it held; the table reads every row.
    assert rows(table, first.snapshot_id) == 50
    assert rows(table) == 14 * 50
    # Another expiry batch later, the tag still holds.
    rounds(tmp_path, wh, 300, 10)
    table = catalog(wh).load_table(TABLE)
    assert rows(table, first.snapshot_id) == 50 and rows(table) == 24 * 50


def strip_ids(t: pa.DataType) -> pa.DataType:
    """`t` without field ids at any depth (as another engine's Parquet writer leaves it)."""
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, strip_ids(f.type), f.nullable) for f in t])
    if pa.types.is_map(t):
        return pa.map_(pa.field(t.key_field.name, strip_ids(t.key_type), False),
                       pa.field(t.item_field.name, strip_ids(t.item_type), t.item_field.nullable))
    if pa.types.is_list(t):
        return pa.list_(pa.field(t.value_field.name, strip_ids(t.value_type), t.value_field.nullable))
    return t


def without_field_ids(src: Path, dst: Path):
    t = pq.read_table(src)
    schema = pa.schema([pa.field(f.name, strip_ids(f.type), f.nullable) for f in t.schema])
    pq.write_table(t.cast(schema), dst)


def test_compaction_reads_files_another_engine_added_without_field_ids(tmp_path):
    """Files another engine registered with `add_files` carry no Parquet field ids; the table
    has `schema.name-mapping.default`. Compaction reads them through the mapping: every value
    survives (before the fix, most read as nulls and landed as a `replace`). With the mapping
    removed, compaction refuses them by name instead of reading nulls."""
    wh = tmp_path / "wh"
    gen(tmp_path / "in0", 400, files=2, events=100)
    ingest(tmp_path / "in0", wh)
    # The other engine's files: Parquet of other rows of the same shape, without field ids, one
    # per partition (add_files takes a file's partition from its column statistics).
    gen(tmp_path / "other", 401, files=2, events=125)
    floe("ingest", tmp_path / "other", "--warehouse", tmp_path / "other-wh", "--table", "o.t",
         "--partition-by", "identity(tenant_id)")
    theirs = []
    for task in catalog(tmp_path / "other-wh").load_table("o.t").scan().plan_files():
        dst = tmp_path / "added" / Path(task.file.file_path).name
        dst.parent.mkdir(exist_ok=True)
        without_field_ids(Path(task.file.file_path.removeprefix("file://")), dst)
        theirs.append(f"file://{dst}")
    table = catalog(wh).load_table(TABLE)
    table.add_files(theirs)
    table = catalog(wh).load_table(TABLE)
    assert "schema.name-mapping.default" in table.properties
    files_before = len(list(table.scan().plan_files()))
    before = table.scan().to_arrow()
    assert before.num_rows == 450 and before.column("event_id").null_count == 0

    out = floe("compact", "--warehouse", wh, "--table", TABLE, "--full")
    assert "rewrite(s) committed" in out.stdout, out.stdout
    table = catalog(wh).load_table(TABLE)
    assert table.current_snapshot().summary.operation.value == "replace"
    after = table.scan().to_arrow()
    assert after.num_rows == before.num_rows
    for name in before.column_names:
        assert after.column(name).null_count == before.column(name).null_count, name
    by_key = lambda t: sorted(t.to_pylist(), key=lambda r: str(r["event_id"]))  # noqa: E731
    assert by_key(after) == by_key(before), "every value as it was"
    assert len(list(table.scan().plan_files())) < files_before, "the files were compacted"


def test_compaction_refuses_files_without_field_ids_when_the_table_has_no_name_mapping(tmp_path):
    wh = tmp_path / "wh"
    gen(tmp_path / "in0", 500, files=2, events=100)
    ingest(tmp_path / "in0", wh)
    table = catalog(wh).load_table(TABLE)
    added = []
    for i, task in enumerate(table.scan().plan_files()):
        dst = tmp_path / f"copy-{i}.parquet"
        without_field_ids(Path(task.file.file_path.removeprefix("file://")), dst)
        added.append(f"file://{dst}")
    # Copies of a table's files added to a second table over the same source (no dedup key).
    floe("ingest", tmp_path / "in0", "--warehouse", tmp_path / "wh2", "--table", TABLE,
         "--partition-by", "identity(tenant_id)")
    other = catalog(tmp_path / "wh2").load_table(TABLE)
    other.add_files(added)
    other = catalog(tmp_path / "wh2").load_table(TABLE)
    with other.transaction() as tx:
        tx.remove_properties("schema.name-mapping.default")
    other = catalog(tmp_path / "wh2").load_table(TABLE)
    before = other.current_snapshot().snapshot_id
    p = subprocess.run([FLOE, "compact", "--warehouse", tmp_path / "wh2", "--table", TABLE, "--full"],
                       capture_output=True, text=True)
    assert "without Iceberg field ids" in p.stdout + p.stderr, (p.stdout, p.stderr)
    other = catalog(tmp_path / "wh2").load_table(TABLE)
    assert other.current_snapshot().snapshot_id == before, "nothing committed"
