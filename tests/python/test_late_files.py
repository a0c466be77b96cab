"""Late files read back by an independent reader (PyIceberg): with a dedup key that leads with
the event time, compaction leaves the rows far behind their snapshot (every row of `floe gen`'s,
whose events are months old) to late files; a later copy of a key stays visible until the
partition's late task runs, and after it each key is in the table once, with its source
contents.
"""

from pathlib import Path

import fastavro
from test_pyiceberg import catalog, floe, norm, read_avro, table_rows

TABLE = "l.events"


def ingest(src, wh):
    floe("ingest", src, "--warehouse", wh, "--table", TABLE, "--partition-by", "identity(tenant_id)",
         "--sort-by", "event_time", "--dedup-key", "event_time,event_id", "--batch-objects", 1)


def compact(wh):
    floe("compact", "--warehouse", wh, "--table", TABLE, "--min-files", 2)


def kinds(table):
    names = [Path(t.file.file_path).name for t in table.scan().plan_files()]
    return {"late": sum(n.startswith("late-") for n in names), "compacted": sum(n.startswith("L") for n in names),
            "other": sum(not n.startswith(("late-", "L")) for n in names)}


def test_late_rows_wait_in_late_files_then_land_once(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    for seed in (21, 22):
        floe("gen", "--out", src / f"r{seed}", "--files", 3, "--events-per-file", 400, "--seed", seed,
             "--tenants", 1, "--dup-rate", 0.05)
    # Later copies of committed rows (the same keys, another schema_version), landed in round 2.
    with open(src / "r21" / "part-00000.avro", "rb") as f:
        reader = fastavro.reader(f)
        schema, rows = reader.writer_schema, [dict(r, schema_version=r["schema_version"] + 100) for r in reader]
    with open(src / "r22" / "copy-of-r21-0.avro", "wb") as f:
        fastavro.writer(f, schema, rows)
    first = {}
    for r in read_avro((src / "r21").glob("*.avro")):
        first.setdefault(str(r["event_id"]), r)

    ingest(src / "r21", wh)
    compact(wh)
    table = catalog(wh).load_table(TABLE)
    assert kinds(table) == {"late": 1, "compacted": 0, "other": 0}, kinds(table)
    got, n = table_rows(table, "event_id")
    assert n == len(first) == len(got), "the late file holds each key of the round once"

    ingest(src / "r22", wh)
    compact(wh)  # the late task takes round 1's late file; round 2's rows wait in a new one
    table = catalog(wh).load_table(TABLE)
    assert kinds(table) == {"late": 1, "compacted": 1, "other": 0}, kinds(table)
    _, n = table_rows(table, "event_id")
    copies = len({str(r["event_id"]) for r in read_avro([src / "r22" / "copy-of-r21-0.avro"])})
    for r in read_avro((src / "r22").glob("part-*.avro")):
        first.setdefault(str(r["event_id"]), r)
    assert n == len(first) + copies, "the redelivered copies wait for the late task"

    compact(wh)
    table = catalog(wh).load_table(TABLE)
    assert kinds(table)["late"] == 0, kinds(table)
    got, n = table_rows(table, "event_id")
    assert n == len(first) == len(got), f"{n} rows for {len(first)} distinct keys"
    norm.uuid_bytes = True
    try:
        for eid, want in first.items():
            assert norm(got[eid]) == norm(want), f"row {eid} differs from its source"
    finally:
        norm.uuid_bytes = False
    assert all(r["schema_version"] < 100 for r in got.values()), "the first copies, not the later ones"
