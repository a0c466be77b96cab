"""Iceberg Java (Spark 3.5, Iceberg 1.10) maintaining, branching and evolving tables Floe writes,
and Floe maintaining what Spark wrote: rewrite_data_files, rewrite_manifests, expire_snapshots and
remove_orphan_files against Floe's expiry and `floe sweep`; tags, branches, rollback and
cherry-pick under Floe's commits; schema, partition and sort order changes and gzip files before
Floe ingests. Exact rows throughout (Spark and PyIceberg against the Avro sources, fastavro). One
Spark session for the module (spark_engine.py).
"""

import datetime as dt
import re
import subprocess
from pathlib import Path

import fastavro
import pyarrow.parquet as pq

from spark_engine import assert_rows, avro_rows, canon_rows, FLAGS, lake_fixture
from test_pyiceberg import FLOE



lake = lake_fixture("spark-maint")


def files(*dirs):
    return sorted(p for d in dirs for p in d.glob("*.avro"))


def local(uri):
    """A local path from `file:///abs` (Floe, PyIceberg) or `file:/abs` (Hadoop, Spark)."""
    return Path(re.sub(r"^file:(//)?", "", uri))


def check(lake, table, rows, what, ref=None, snapshot_id=None):
    want = canon_rows(rows)
    assert_rows(lake.spark_rows(table, ref=ref), want, f"Spark reading {table}{f' at {ref}' if ref else ''} {what}")
    sid = snapshot_id if snapshot_id is not None else (lake.snapshot_id(table, ref) if isinstance(ref, str) else ref)
    assert_rows(lake.iceberg_rows(table, snapshot_id=sid), want, f"PyIceberg reading {table} at {sid} {what}")


def missing_files(lake, table):
    """Files some kept snapshot or ref needs that are gone from disk: data and delete files of
    every snapshot, manifests, manifest lists and the current metadata file."""
    fq = lake.fq(table)
    need = {r.file_path for r in lake.sql(f"SELECT file_path FROM {fq}.all_files")}
    need |= {r.path for r in lake.sql(f"SELECT path FROM {fq}.all_manifests")}
    need |= {s.manifest_list for s in lake.table(table).snapshots()}
    need.add(lake.table(table).metadata_location)
    return sorted(p for p in need if not local(p).exists())


def sweep(lake, table):
    p = subprocess.run([FLOE, "sweep", "--warehouse", str(lake.wh), "--table", table, "--older-than-hours", "0"],
                       capture_output=True, text=True)
    assert p.returncode == 0, f"floe sweep exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def spark_time(offset_s=0):
    t = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=offset_s)
    return f"TIMESTAMP '{t.strftime('%Y-%m-%d %H:%M:%S.%f')}'"


def delete_orphan_files(lake, table, older_than_ms=None):
    """Java's DeleteOrphanFiles with a cutoff of now (the remove_orphan_files procedure refuses
    one less than 24 hours old; its action API takes any); the locations it deleted."""
    import time
    jvm, js = lake.spark._jvm, lake.spark._jsparkSession
    t = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(js, lake.fq(table))
    cutoff = older_than_ms if older_than_ms is not None else int(time.time() * 1000)
    result = jvm.org.apache.iceberg.spark.actions.SparkActions.get(js).deleteOrphanFiles(t).olderThan(cutoff).execute()
    return [str(x) for x in result.orphanFileLocations()]


# Floe expires snapshots once this many are due (shared/src/table/maintain.rs, EXPIRE_BATCH).
EXPIRE_BATCH = 8


def expire_by_floe(lake, table, name, seed):
    """Enough one-file commits (each maintains the table) for Floe's expiry to run under the
    table's `history.expire.*`; the rows they landed."""
    src = lake.gen(name, seed, files=EXPIRE_BATCH + 1, events=5)
    before = len(lake.table(table).snapshots())
    lake.ingest(table, src, *FLAGS, "--batch-objects", "1")
    assert len(lake.table(table).snapshots()) < before + EXPIRE_BATCH + 1, "Floe's expiry ran"
    return avro_rows(files(src))


def test_spark_and_floe_maintain_each_others_files_and_lose_none(lake):
    table, staging = "maint.t", "maint.src"
    t = lake.fq(table)
    flags = [*FLAGS, "--batch-objects", "1"]
    ingests = [lake.gen(f"maint-{i}", 1000 + i, files=2, events=30) for i in range(6)]
    spark_src = lake.gen("maint-spark", 1010, files=1, events=40)
    lake.ingest(staging, spark_src, *FLAGS)
    rows = []
    for d in ingests[:3]:
        lake.ingest(table, d, *flags)
        rows += avro_rows(files(d))
    lake.sql(f"INSERT INTO {t} SELECT * FROM {lake.fq(staging)}")
    rows += avro_rows(files(spark_src))
    [r] = lake.sql(f"CALL {lake.name}.system.rewrite_data_files(table => '{table}', "
                   "options => map('min-input-files', '2'))")
    assert r.rewritten_data_files_count > 0, r
    check(lake, table, rows, "after Java's rewrite_data_files")
    lake.ingest(table, ingests[3], *flags)
    rows += avro_rows(files(ingests[3]))
    lake.sql(f"CALL {lake.name}.system.rewrite_manifests('{table}')")
    lake.sql(f"ALTER TABLE {t} CREATE TAG keep")
    kept = list(rows)
    lake.ingest(table, ingests[4], *flags)
    rows += avro_rows(files(ingests[4]))
    [e] = lake.sql(f"CALL {lake.name}.system.expire_snapshots(table => '{table}', older_than => {spark_time(1)}, "
                   "retain_last => 1)")
    assert e.deleted_data_files_count > 0, e
    # No Floe process is running and every file Floe made is committed: now is a safe cutoff.
    orphans = delete_orphan_files(lake, table)
    assert missing_files(lake, table) == [], f"Java deleted files a snapshot or ref needs ({len(orphans)} orphans)"
    check(lake, table, rows, "after Java's expire_snapshots and remove_orphan_files")
    check(lake, table, kept, "after Java's expire_snapshots and remove_orphan_files", ref="keep")

    # Floe's turn: its expiry (at every commit, by the table's history.expire.*), compaction and
    # sweep, over Spark's snapshots, manifests and files.
    lake.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms'='1', "
             "'history.expire.min-snapshots-to-keep'='1')")
    lake.ingest(table, ingests[5], *flags)
    rows += avro_rows(files(ingests[5]))
    lake.compact(table)
    rows += expire_by_floe(lake, table, "maint-last", 1020)
    sweep(lake, table)
    assert missing_files(lake, table) == [], "Floe deleted files a snapshot or ref needs"
    check(lake, table, rows, "after Floe's expiry, compaction and sweep")
    check(lake, table, kept, "after Floe's expiry, compaction and sweep", ref="keep")
    snaps = lake.table(table).snapshots()
    assert len(snaps) <= 2 + EXPIRE_BATCH, f"Floe expired what neither main nor the tag keeps: {len(snaps)} kept"


def test_tags_branches_rollback_and_cherry_pick_under_floe_commits(lake):
    table, staging = "refs.t", "refs.src"
    t = lake.fq(table)
    a, b, c, e, f = (lake.gen(f"refs-{x}", 1100 + i, files=1, events=40) for i, x in enumerate("abcef"))
    d = lake.gen("refs-d", 1110, files=1, events=40)
    lake.ingest(staging, d, *FLAGS)
    A, B, C, D, E, F = (avro_rows(files(x)) for x in (a, b, c, d, e, f))
    lake.ingest(table, a, *FLAGS)
    lake.ingest(table, b, *FLAGS)
    s2 = lake.snapshot_id(table)
    lake.sql(f"ALTER TABLE {t} CREATE TAG t1")
    lake.sql(f"ALTER TABLE {t} CREATE BRANCH dev")
    lake.sql(f"INSERT INTO {t}.branch_dev SELECT * FROM {lake.fq(staging)}")
    sd = lake.snapshot_id(table, "dev")
    check(lake, table, A + B + D, "after Spark wrote into the branch", ref="dev")
    check(lake, table, A + B, "while Spark wrote into a branch")
    lake.ingest(table, c, *FLAGS)
    check(lake, table, A + B + C, "after Floe's ingest next to the branch")
    check(lake, table, A + B + D, "after Floe's ingest on main", ref="dev")

    lake.sql(f"CALL {lake.name}.system.rollback_to_snapshot('{table}', {s2})")
    check(lake, table, A + B, "after Java's rollback_to_snapshot")
    # Decided: a source whose snapshot was rolled back stays committed (the rollback took its
    # rows out on purpose); an ingest over it again skips it.
    again = lake.ingest(table, c, *FLAGS)
    assert "1 file(s) already ingested and skipped" in again.stdout, again.stdout
    check(lake, table, A + B, "after floe ingest over the rolled back source again")
    lake.sql(f"CALL {lake.name}.system.cherrypick_snapshot('{table}', {sd})")
    check(lake, table, A + B + D, "after Java's cherrypick_snapshot of the branch's commit")
    main = lake.snapshot_id(table)
    lake.ingest(table, e, *FLAGS)
    meta = lake.table(table).metadata
    new = meta.snapshot_by_id(meta.current_snapshot_id)
    assert new.parent_snapshot_id == main, "Floe's commit builds on what main is after the rollback and cherry-pick"
    seqs = sorted(s.sequence_number for s in meta.snapshots)
    assert len(set(seqs)) == len(seqs) and new.sequence_number == meta.last_sequence_number == seqs[-1]
    check(lake, table, A + B + D + E, "after Floe's ingest on the rolled back, cherry-picked main")
    check(lake, table, A + B, "tag t1", ref="t1")
    check(lake, table, A + B + D, "branch dev", ref="dev")

    lake.compact(table)
    lake.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ('history.expire.max-snapshot-age-ms'='1', "
             "'history.expire.min-snapshots-to-keep'='1')")
    lake.ingest(table, f, *FLAGS)
    F += expire_by_floe(lake, table, "refs-g", 1111)
    sweep(lake, table)
    assert missing_files(lake, table) == [], "Floe deleted files a tag or branch needs"
    check(lake, table, A + B + D + E + F, "after Floe's compaction, expiry and sweep")
    check(lake, table, A + B, "tag t1 after Floe's compaction, expiry and sweep", ref="t1")
    check(lake, table, A + B + D, "branch dev after Floe's compaction, expiry and sweep", ref="dev")
    assert set(lake.table(table).metadata.refs) == {"main", "t1", "dev"}


def rewrite_producer(src: Path, dst: Path, rename=None, drop=()):
    """`src`'s rows under a producer schema with fields renamed and dropped."""
    rename = rename or {}
    with open(src, "rb") as f:
        r = fastavro.reader(f)
        schema = dict(r.writer_schema)
        rows = list(r)
    schema["fields"] = [dict(x, name=rename.get(x["name"], x["name"])) for x in schema["fields"] if x["name"] not in drop]
    out = [{rename.get(k, k): v for k, v in row.items() if k not in drop} for row in rows]
    dst.parent.mkdir(parents=True, exist_ok=True)
    with open(dst, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(schema), out)
    return out


def in_table(row, columns, **extra):
    """A source row as the evolved table shows it: session_id is `session`, and payload only
    where `columns` has it again."""
    r = {("session" if k == "session_id" else k): v for k, v in row.items()}
    r.update(extra)
    return {c: r.get(c) for c in columns}


def test_spark_schema_partition_and_sort_changes_before_floe_ingests(lake):
    table, staging = "evo.t", "evo.src"
    t = lake.fq(table)
    a = lake.gen("evo-a", 1200, files=1, events=60)
    b = lake.gen("evo-b", 1201, files=1, events=40)
    lake.ingest(table, a, *FLAGS)
    lake.ingest(staging, b, *FLAGS)
    old_payload_id = lake.table(table).schema().find_field("payload").field_id
    payload_type = lake.spark.table(t).schema["payload"].dataType.simpleString()
    for stmt in ["ADD COLUMN note string", "RENAME COLUMN session_id TO session", "DROP COLUMN payload",
                 "ADD PARTITION FIELD days(event_time)", "WRITE ORDERED BY user_id",
                 "SET TBLPROPERTIES ('write.parquet.compression-codec'='gzip')"]:
        lake.sql(f"ALTER TABLE {t} {stmt}")
    columns = [f.name for f in lake.spark.table(t).schema.fields]
    assert columns[-1] == "note" and "session" in columns and "payload" not in columns, columns
    select = ", ".join("session_id AS session" if c == "session" else "'spark' AS note" if c == "note" else c
                       for c in columns)
    lake.sql(f"INSERT INTO {t} SELECT {select} FROM {lake.fq(staging)}")
    spark_files = [local(r.file_path) for r in lake.sql(f"SELECT file_path FROM {t}.files WHERE spec_id = 1")]
    assert spark_files and all(pq.ParquetFile(p).metadata.row_group(0).column(0).compression == "GZIP"
                               for p in spark_files)
    rows = [in_table(r, columns) for r in avro_rows(files(a))] + \
        [in_table(r, columns, note="spark") for r in avro_rows(files(b))]
    check(lake, table, rows, "after Spark's schema, partition and sort changes and its gzip insert")

    # A producer that follows the rename and the drop: its rows land under the new spec and order.
    c = lake.gen("evo-c", 1202, files=1, events=40)
    c2 = lake.base / "evo-c2" / "part.avro"
    landed = rewrite_producer(c / "part-00000.avro", c2, rename={"session_id": "session"}, drop=("payload",))
    before = {r.file_path for r in lake.sql(f"SELECT file_path FROM {t}.files")}
    lake.ingest(table, c2)  # the table's partitioning, sort order and key
    rows += [in_table(r, columns) for r in landed]
    check(lake, table, rows, "after Floe ingested a producer that follows Spark's changes")
    spec_id = lake.table(table).metadata.default_spec_id
    floes = lake.sql(f"SELECT file_path, spec_id, sort_order_id FROM {t}.files")
    floes = [r for r in floes if r.file_path not in before]
    order_id = lake.table(table).metadata.default_sort_order_id
    assert floes and all(r.spec_id == spec_id for r in floes), "Floe writes under the table's current spec"
    mismatched = lake.sql(f"SELECT event_id FROM {t} WHERE _spec_id = {spec_id} AND NOT "
                          f"(_partition.tenant_id <=> tenant_id AND _partition.event_time_day <=> "
                          f"{lake.name}.system.days(event_time))")
    assert mismatched == [], "Java's transforms agree with the partition of every file Floe wrote"
    for r in floes:
        ids = pq.read_table(local(r.file_path), columns=["user_id"]).column("user_id").to_pylist()
        assert ids == sorted(ids, key=lambda v: (v is not None, v)), f"{r.file_path} is in the table's sort order"
        assert r.sort_order_id == order_id, r

    # The producer as it was (session_id, payload): Spark dropped payload, so the object is
    # quarantined with that reason and nothing of it lands (a dropped column never comes back
    # unasked). Once Spark adds the column again (a new id), a replay lands every row, its
    # session_id values under `session`, its payload values in the new column, the old ones gone.
    old = lake.base / "evo-old"
    (old / "x").mkdir(parents=True)
    (old / "x" / "part.avro").write_bytes((lake.gen("evo-old-src", 1203, files=1, events=30) / "part-00000.avro")
                                          .read_bytes())
    p = subprocess.run([FLOE, "ingest", str(old / "x"), "--warehouse", str(lake.wh), "--table", table],
                       capture_output=True, text=True)
    assert p.returncode == 2, f"floe ingest of the old producer exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    listed = subprocess.run([FLOE, "quarantine", "list", "--warehouse", str(lake.wh)], capture_output=True,
                            text=True).stdout
    line = next(x for x in listed.splitlines() if str(old / "x" / "part.avro") in x)
    assert "payload" in line and "was dropped" in line, f"the refusal names the column and why: {line}"
    assert "payload" not in [f.name for f in lake.table(table).schema().fields], "not brought back"
    check(lake, table, rows, "after the old producer's refused ingest")
    lake.sql(f"ALTER TABLE {t} ADD COLUMN payload {payload_type}")
    assert lake.table(table).schema().find_field("payload").field_id != old_payload_id, "a new id"
    p = subprocess.run([FLOE, "quarantine", "replay", "--warehouse", str(lake.wh)], capture_output=True, text=True)
    assert p.returncode == 0, f"floe quarantine replay exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    columns = [f.name for f in lake.table(table).schema().fields]
    rows = [dict(r, payload=None) for r in rows] + [in_table(r, columns) for r in avro_rows(files(old / "x"))]
    check(lake, table, rows, "after Spark added the column again and the old producer's object was replayed")

    # Java drops the first partition field; Floe compacts everything (Spark's gzip file too)
    # and lands more under the new spec.
    lake.sql(f"ALTER TABLE {t} DROP PARTITION FIELD tenant_id")
    d = lake.base / "evo-d" / "part.avro"
    landed = rewrite_producer(lake.gen("evo-d-src", 1204, files=1, events=30) / "part-00000.avro", d,
                              rename={"session_id": "session"}, drop=("payload",))
    lake.ingest(table, d)
    columns = [f.name for f in lake.table(table).schema().fields]
    rows = [{c: r.get(c) for c in columns} for r in rows] + [in_table(r, columns) for r in landed]
    check(lake, table, rows, "after Java dropped a partition field and Floe ingested")
    lake.compact(table)
    check(lake, table, rows, "after floe compact --full over every spec and Spark's gzip file")
