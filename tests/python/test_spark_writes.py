"""Iceberg Java (Spark 3.5, Iceberg 1.10) changing rows of tables Floe writes: DELETE, UPDATE and
MERGE INTO in merge-on-read (v2 position deletes, v3 deletion vectors) and copy-on-write mode,
then more Floe ingests and `floe compact --full`; and Spark inserting while Floe ingests. Every
check is of exact rows, read by Spark and PyIceberg (0.12 applies position deletes and deletion
vectors alike), against the Avro sources (fastavro) with the row changes applied here in Python.
One Spark session for the module (spark_engine.py).
"""

import re
import subprocess
import threading
import time

import pytest

from spark_engine import assert_rows, avro_rows, canon_rows, FLAGS, lake_fixture
from test_pyiceberg import FLOE



lake = lake_fixture("spark-writes")


def by_id(rows):
    return {str(r["event_id"]): dict(r, device=dict(r["device"])) for r in rows}


def files(paths):
    return sorted(p for d in paths for p in d.glob("*.avro"))


def check(lake, table, state, what):
    want = canon_rows(state.values())
    assert_rows(lake.spark_rows(table), want, f"Spark reading {table} {what}")
    assert_rows(lake.iceberg_rows(table), want, f"PyIceberg reading {table} {what}")


def live_delete_files(lake, table):
    return [(r.content, r.file_format) for r in lake.sql(f"SELECT content, file_format FROM {lake.fq(table)}.delete_files")]


@pytest.mark.parametrize("fmt,mode", [(2, "merge-on-read"), (3, "merge-on-read"), (2, "copy-on-write")])
def test_spark_row_changes_survive_floe_ingests_and_compaction(lake, fmt, mode):
    table = f"rows.v{fmt}_{mode.split('-')[0]}"
    tag = f"v{fmt}{mode[0]}"
    a = lake.gen(f"{tag}-a", 500 + fmt * 10 + len(mode), files=2, events=60)
    lake.ingest(table, a, *FLAGS)
    state = by_id(avro_rows(files([a])))
    # MERGE's source, made by Floe: a copy of one file Floe landed (its rows match) and a new file.
    src = lake.base / f"{tag}-merge"
    src.mkdir()
    (src / "copy.avro").write_bytes((a / "part-00000.avro").read_bytes())
    new = lake.gen(f"{tag}-new", 600 + fmt * 10 + len(mode), files=1, events=30)
    lake.ingest(f"{table}_src", src, new, *FLAGS)
    merge_source = avro_rows(files([src, new]))

    t = lake.fq(table)
    props = {"write.delete.mode": mode, "write.update.mode": mode, "write.merge.mode": mode}
    if fmt == 3:
        props["format-version"] = "3"
    lake.sql(f"ALTER TABLE {t} SET TBLPROPERTIES ({', '.join(f'{k!r}={v!r}' for k, v in props.items())})")

    lake.sql(f"DELETE FROM {t} WHERE event_type = 'CLICK'")
    state = {k: r for k, r in state.items() if r["event_type"] != "CLICK"}
    lake.sql(f"UPDATE {t} SET user_id = -1, device.model = 'updated' WHERE event_type = 'SCROLL'")
    for r in state.values():
        if r["event_type"] == "SCROLL":
            r["user_id"], r["device"]["model"] = -1, "updated"
    lake.sql(f"""MERGE INTO {t} t USING {lake.fq(table + '_src')} s ON t.event_id = s.event_id
                 WHEN MATCHED AND s.event_type = 'LOGIN' THEN UPDATE SET t.user_id = -2
                 WHEN MATCHED AND s.event_type = 'HEARTBEAT' THEN DELETE
                 WHEN NOT MATCHED THEN INSERT *""")
    for s in merge_source:
        k = str(s["event_id"])
        if k not in state:
            state[k] = dict(s, device=dict(s["device"]))  # incl. the copies of deleted CLICK rows
        elif s["event_type"] == "LOGIN":
            state[k]["user_id"] = -2
        elif s["event_type"] == "HEARTBEAT":
            del state[k]
    deletes = live_delete_files(lake, table)
    if mode == "merge-on-read":
        kind = "PUFFIN" if fmt == 3 else "PARQUET"
        assert deletes and all(d == (1, kind) for d in deletes), deletes
    else:
        assert deletes == []
    check(lake, table, state, f"after Spark's DELETE, UPDATE and MERGE ({mode}, v{fmt})")

    b = lake.gen(f"{tag}-b", 700 + fmt * 10 + len(mode), files=2, events=40)
    lake.ingest(table, b, *FLAGS)
    state.update(by_id(avro_rows(files([b]))))
    check(lake, table, state, "after a Floe ingest on top of Spark's changes")
    [r] = lake.sql(f"SELECT sum(record_count) AS n FROM {t}.data_files")
    [v] = lake.sql(f"SELECT count(*) AS n FROM {t}")
    out = lake.compact(table)
    # Rows the delete files removed are said to be that, not duplicates.
    removed = re.search(r"(\d+) removed by the table's delete files", out.stdout)
    if mode == "merge-on-read":
        assert removed and int(removed[1]) == r.n - v.n, (r.n, v.n, out.stdout)
    else:
        assert removed is None, out.stdout
    check(lake, table, state, "after floe compact --full")
    assert live_delete_files(lake, table) == [], "the compaction applied every delete and left none live"
    c = lake.gen(f"{tag}-c", 800 + fmt * 10 + len(mode), files=1, events=40)
    lake.ingest(table, c, *FLAGS)
    state.update(by_id(avro_rows(files([c]))))
    check(lake, table, state, "after one more Floe ingest")
    if fmt == 3:
        [r] = lake.sql(f"SELECT count(*) AS n, count(_row_id) AS ids, count(DISTINCT _row_id) AS distinct_ids "
                       f"FROM {t}")
        assert r.n == r.ids == r.distinct_ids == len(state), f"every row has its own _row_id: {r}"


def test_spark_inserts_while_floe_ingests_every_row_lands_once(lake):
    """A background thread of Spark INSERTs (8 commits, each a slice of a table Floe landed) while
    `floe ingest` runs in subprocesses over 16 folders (one commit per file): both writers race
    on the catalog's compare-and-swap, and every row of both is in the table exactly once."""
    table, staging = "race.t", "race.src"
    seed = lake.gen("race-seed", 900, files=1, events=20)
    lake.ingest(table, seed, *FLAGS)
    spark_src = lake.gen("race-spark", 901, files=4, events=50)
    lake.ingest(staging, spark_src, *FLAGS)
    folders = [lake.gen(f"race-floe-{i}", 910 + i, files=2, events=25) for i in range(16)]
    # Spark's commits retry a lost swap (Iceberg's default is 4 tries, too few against 32 commits).
    lake.sql(f"ALTER TABLE {lake.fq(table)} SET TBLPROPERTIES ('commit.retry.num-retries'='50', "
             "'commit.retry.min-wait-ms'='20', 'commit.retry.max-wait-ms'='500')")
    slices, errors, floe_runs = 8, [], []

    def spark_writer():
        try:
            for k in range(slices):
                lake.sql(f"INSERT INTO {lake.fq(table)} SELECT * FROM {lake.fq(staging)} "
                         f"WHERE pmod(unix_micros(event_time), {slices}) = {k}")
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(f"Spark: {e}"[:2000])

    def floe_writer():
        for d in folders:
            p = subprocess.run([FLOE, "ingest", str(d), "--warehouse", str(lake.wh), "--table", table, *FLAGS,
                                "--batch-objects", "1"], capture_output=True, text=True)
            floe_runs.append(p)
            if p.returncode != 0:
                errors.append(f"floe ingest {d} exited {p.returncode}: {p.stderr[-2000:]}")
            time.sleep(0.3)

    threads = [threading.Thread(target=spark_writer), threading.Thread(target=floe_writer)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=240)
    assert not any(th.is_alive() for th in threads), "the writers finished"
    assert not errors, "\n".join(errors)
    want = canon_rows(avro_rows(files([seed, spark_src, *folders])))
    assert_rows(lake.spark_rows(table), want, "Spark reading the raced table")
    assert_rows(lake.iceberg_rows(table), want, "PyIceberg reading the raced table")
    snaps = lake.sql(f"SELECT snapshot_id, parent_id, summary FROM {lake.fq(table)}.snapshots")
    by_spark = [s for s in snaps if "spark.app.id" in s.summary]
    assert len(by_spark) == slices, f"{len(by_spark)} Spark snapshots, {slices} inserts"
    lake.compact(table)
    assert_rows(lake.spark_rows(table), want, "Spark reading the raced table after floe compact --full")
