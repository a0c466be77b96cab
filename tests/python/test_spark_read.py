"""Iceberg Java (Spark 3.5, Iceberg 1.10) reads every table shape Floe makes: format v2 and v3,
an evolved schema, every partition transform, compacted and deduplicated. Every row is compared
with the Avro source as fastavro reads it and with PyIceberg; Java recomputes every row's
partition values and reads the metadata tables. One Spark session over one warehouse for the
module (spark_engine.py); each test has its own tables.
"""

import pytest
from pyiceberg.transforms import BucketTransform, DayTransform, HourTransform, IdentityTransform, MonthTransform
from pyiceberg.transforms import TruncateTransform, YearTransform

from spark_engine import assert_rows, avro_rows, canon_rows, expected, lake_fixture
from test_evolution import project, rows_of, version, write_avro
from test_format_v3 import current_metadata, upgrade_to_v3


lake = lake_fixture("spark-read")


def java_partition_mismatches(lake, table):
    """Rows whose partition tuple (Spark's `_partition`, from Floe's manifests) differs from what
    Iceberg Java's own transform functions compute from the row's values."""
    t = lake.table(table)
    schema = t.schema()
    conds = []
    for f in t.spec().fields:
        col = schema.find_column_name(f.source_id)
        tr = f.transform
        if isinstance(tr, IdentityTransform):
            java = col
        elif isinstance(tr, BucketTransform):
            # A uuid column is a string to Spark; its 16 bytes, as the spec hashes them.
            arg = f"unhex(replace({col}, '-', ''))" if str(schema.find_type(f.source_id)) == "uuid" else col
            java = f"{lake.name}.system.bucket({tr.num_buckets}, {arg})"
        elif isinstance(tr, TruncateTransform):
            java = f"{lake.name}.system.truncate({tr.width}, {col})"
        else:
            fn = {YearTransform: "years", MonthTransform: "months", DayTransform: "days", HourTransform: "hours"}
            java = f"{lake.name}.system.{fn[type(tr)]}({col})"
        conds.append(f"_partition.{f.name} <=> {java}")
    assert conds, "the table is partitioned"
    q = f"SELECT event_id, _partition FROM {lake.fq(table)} WHERE NOT ({' AND '.join(conds)})"
    return lake.sql(q)


def check_exact(lake, table, want, what=""):
    assert_rows(lake.spark_rows(table), want, f"Spark reading {table} {what}")
    assert_rows(lake.iceberg_rows(table), want, f"PyIceberg reading {table} {what}")


@pytest.mark.parametrize("spec", [
    "identity(tenant_id)",
    "year(event_time)",
    "month(event_time),bucket(4,event_id)",
    "day(ingest_time),truncate(3,session_id),bucket(4,user_id)",
    "hour(event_time),truncate(100000,user_id),bucket(3,tenant_id)",
])
def test_spark_reads_every_partition_transform_exactly(lake, spec):
    name = "p" + "".join(c for c in spec if c.isalnum())[:40]
    table = f"parts.{name}"
    srcs = [lake.gen(f"{name}-{i}", 100 + i, files=2, events=60) for i in range(2)]
    for src in srcs:
        lake.ingest(table, src, "--partition-by", spec, "--sort-by", "event_time", "--dedup-key", "event_id")
    want = expected(avro_rows([p for s in srcs for p in s.glob("*.avro")]))
    check_exact(lake, table, want)
    assert java_partition_mismatches(lake, table) == [], "Java's transforms put every row in its file's partition"


def test_spark_reads_a_compacted_deduplicated_table(lake):
    table = "lake.dedup"
    flags = ["--partition-by", "day(event_time),identity(tenant_id)", "--sort-by", "tenant_id,event_time",
             "--dedup-key", "event_id", "--batch-objects", "1"]
    first = lake.gen("dedup-1", 201, files=3, events=80)
    dups = lake.gen("dedup-2", 202, files=3, events=80, dup_rate=0.1)
    # A later copy of a committed file: cross-batch duplicates, dropped by the compaction.
    (dups / "copy-of-first.avro").write_bytes((first / "part-00001.avro").read_bytes())
    lake.ingest(table, first, *flags)
    lake.ingest(table, dups, *flags)
    lake.compact(table)
    sources = sorted(first.glob("*.avro")) + sorted(p for p in dups.glob("part-*.avro")) + [dups / "copy-of-first.avro"]
    want = expected(avro_rows(sources))
    check_exact(lake, table, want, "after floe compact --full")
    assert java_partition_mismatches(lake, table) == []


def test_spark_reads_a_format_v3_table_floe_appended_to_with_its_row_ids(lake):
    """Upgraded to v3 the way another engine would (test_format_v3.upgrade_to_v3, which finds the
    table by the name `events`), then appended to and compacted by Floe: Java reads every row,
    and every row's `_row_id` is set, unique and unchanged by the compaction."""
    table = "v3.events"
    flags = ["--partition-by", "identity(tenant_id)", "--sort-by", "event_time", "--dedup-key", "event_id"]
    srcs = [lake.gen(f"v3-{i}", 300 + i, files=2, events=50) for i in range(3)]
    lake.ingest(table, srcs[0], *flags)
    upgrade_to_v3(lake.wh, {})
    lake.ingest(table, srcs[1], *flags, "--batch-objects", "1")
    lake.ingest(table, srcs[2], *flags)
    assert current_metadata(lake.wh)[1]["format-version"] == 3
    want = expected(avro_rows([p for s in srcs for p in s.glob("*.avro")]))
    check_exact(lake, table, want)

    def lineage():
        rows = lake.sql(f"SELECT event_id, _row_id, _last_updated_sequence_number FROM {lake.fq(table)}")
        return {r.event_id: (r._row_id, r._last_updated_sequence_number) for r in rows}
    before = lineage()
    ids = [rid for rid, _ in before.values()]
    assert None not in ids and len(set(ids)) == len(ids) == len(want), "every row has its own _row_id"
    assert all(seq is not None for _, seq in before.values())
    lake.compact(table)
    check_exact(lake, table, want, "after floe compact --full")
    assert lineage() == before, "the compaction kept every row's _row_id and _last_updated_sequence_number"


def test_spark_reads_an_evolved_schema_at_every_snapshot(lake):
    """test_evolution's six producer versions (adds, promotions, optional-making, a rename by
    alias, a nested add), one `floe ingest` each: Java reads every snapshot with its own schema."""
    table = "shop.orders"
    steps = [(1, 100), (2, 200), (3, 300), (4, 400), (5, 500), (6, 600), (1, 700)]
    finals = []
    for n, first in steps:
        written, final = rows_of(n, first)
        path = lake.base / "evolve" / f"v{n}-{first}.avro"
        path.parent.mkdir(exist_ok=True)
        write_avro(path, version(n), written)
        lake.ingest(table, path)
        finals.append(final)
    t = lake.table(table)
    schemas = {s.schema_id: s for s in t.schemas().values()}
    snaps = sorted(t.snapshots(), key=lambda s: s.sequence_number)
    assert len(snaps) == len(steps)
    assert_rows(lake.spark_rows(table), canon_rows(sum(finals, [])), "Spark reading the current schema")
    for i, snap in enumerate(snaps):
        want = canon_rows(project(r, schemas[snap.schema_id], t.schema()) for r in sum(finals[:i + 1], []))
        assert_rows(lake.spark_rows(table, ref=snap.snapshot_id), want, f"Spark at snapshot {i} (its own schema)")
    assert [f.name for f in lake.spark.table(lake.fq(table)).schema.fields] == \
        ["id", "name", "total", "score", "address", "country"]


def test_java_reads_the_metadata_tables_and_rewrites_the_manifests(lake):
    """snapshots, manifests, files, partitions, entries, refs and history read without error and
    agree with PyIceberg; Java's rewrite_manifests over Floe's manifests keeps every row; Floe then
    appends and compacts on top of Java's manifests."""
    table = "lake.meta"
    flags = ["--partition-by", "identity(tenant_id)", "--sort-by", "event_time", "--dedup-key", "event_id",
             "--batch-objects", "1"]
    srcs = [lake.gen(f"meta-{i}", 400 + i, files=2, events=40) for i in range(3)]
    lake.ingest(table, srcs[0], *flags)
    lake.ingest(table, srcs[1], *flags)
    lake.compact(table)
    t = lake.table(table)
    fq = lake.fq(table)
    snaps = lake.sql(f"SELECT snapshot_id, parent_id, operation FROM {fq}.snapshots")
    assert {r.snapshot_id for r in snaps} == {s.snapshot_id for s in t.snapshots()}
    files = lake.sql(f"SELECT file_path, record_count, partition FROM {fq}.files")
    live = {task.file.file_path: task.file.record_count for task in t.scan().plan_files()}
    assert {r.file_path: r.record_count for r in files} == live, "Java's files table is PyIceberg's plan"
    n = len(lake.spark_rows(table, columns="event_id"))
    parts = lake.sql(f"SELECT partition, record_count, file_count FROM {fq}.partitions")
    assert sum(r.record_count for r in parts) == n and sum(r.file_count for r in parts) == len(live)
    manifests = lake.sql(f"SELECT path, added_data_files_count, existing_data_files_count FROM {fq}.manifests")
    assert manifests and sum(r.added_data_files_count + r.existing_data_files_count for r in manifests) == len(live)
    # Without `readable_metrics`: Iceberg 1.10.2 cannot show a uuid column's bounds there (its
    # MetricsUtil casts the java.util.UUID bound to a CharSequence, whoever wrote the file).
    for meta in ("entries", "history", "refs", "all_data_files", "all_manifests", "metadata_log_entries"):
        df = lake.spark.table(f"{fq}.{meta}")
        df.drop("readable_metrics").collect()
    want = expected(avro_rows([p for s in srcs[:2] for p in s.glob("*.avro")]))
    check_exact(lake, table, want)

    [r] = lake.sql(f"CALL {lake.name}.system.rewrite_manifests('{table}')")
    assert r.added_manifests_count >= 1, r
    check_exact(lake, table, want, "after Java's rewrite_manifests")
    lake.ingest(table, srcs[2], *flags)
    lake.compact(table)
    want = expected(avro_rows([p for s in srcs for p in s.glob("*.avro")]))
    check_exact(lake, table, want, "after Floe appended to and compacted Java's manifests")
