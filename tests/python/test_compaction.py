"""Compaction and maintenance read back by an independent reader (PyIceberg), against the Avro
source as fastavro reads it: after `floe compact` each distinct key is in the table once with its
source contents, files are sorted and few, snapshot summaries add up; under aggressive
maintenance PyIceberg reads every kept snapshot at every step and nothing unreachable piles up.
"""

import math
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from pyiceberg.manifest import ManifestEntryStatus
from test_pyiceberg import catalog, floe, norm, read_avro, table_rows

TARGET_MB = 1


def ingest(src, wh, table, *extra):
    return floe(
        "ingest", src, "--warehouse", wh, "--table", table,
        "--partition-by", "identity(tenant_id)", "--sort-by", "event_time", "--dedup-key", "event_id",
        "--target-file-size-mb", TARGET_MB, "--batch-objects", 1, *extra,
    )


def backlog(wh, table):
    """`floe status`'s compaction line: small files and tasks due."""
    line = next(x for x in floe("status", "--warehouse", wh, "--table", table).stdout.splitlines()
                if x.startswith("compaction"))
    words = line.split()
    return {"small": int(words[3]), "tasks": int(words[7])}


def local(uri):
    return uri.removeprefix("file://")


def test_compaction_keeps_each_key_once_sorted_in_few_files(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    for seed in (11, 12, 13):
        floe("gen", "--out", src / f"r{seed}", "--files", 10, "--events-per-file", 1500, "--seed", seed,
             "--dup-rate", 0.05, "--tenants", 2)
    # Duplicates across batches (a copy of a committed file) and late data for compacted partitions.
    shutil.copy(src / "r11" / "part-00000.avro", src / "r12" / "copy-of-r11-0.avro")
    shutil.copy(src / "r12" / "part-00003.avro", src / "r13" / "late-copy-of-r12-3.avro")
    ingest(src / "r11", wh, "c.events")
    ingest(src / "r12", wh, "c.events")
    before = backlog(wh, "c.events")
    assert before["tasks"] > 0 and before["small"] > 2, before
    floe("compact", "--warehouse", wh, "--table", "c.events", "--min-files", 2)
    after = backlog(wh, "c.events")
    assert after["small"] < before["small"] / 4, (before, after)
    ingest(src / "r13", wh, "c.events")
    out = floe("compact", "--warehouse", wh, "--table", "c.events", "--full")
    assert "rewrite(s) committed" in out.stdout
    assert backlog(wh, "c.events")["tasks"] == 0, "nothing left to compact"

    source = read_avro(src.rglob("*.avro"))
    first = {}
    for r in source:
        first.setdefault(str(r["event_id"]), r)
    table = catalog(wh).load_table("c.events")
    got, n = table_rows(table, "event_id")
    assert n == len(first), f"{n} rows for {len(first)} distinct keys"
    norm.uuid_bytes = True
    try:
        for eid, want in first.items():
            assert norm(got[eid]) == norm(want), f"row {eid} differs from its source"
    finally:
        norm.uuid_bytes = False

    # Few, sorted files: at most ceil(bytes / target) + 1 per partition.
    by_partition = {}
    for task in table.scan().plan_files():
        f = task.file
        by_partition.setdefault(f.partition[0], []).append(f)
        times = pq.read_table(local(f.file_path), columns=["event_time"]).column("event_time").to_pylist()
        assert times == sorted(times), f"{f.file_path} is sorted"
    for part, files in by_partition.items():
        total = sum(f.file_size_in_bytes for f in files)
        bound = math.ceil(total / (TARGET_MB << 20)) + 1
        assert len(files) <= bound, f"partition {part}: {len(files)} files for {total} bytes"
        assert all(Path(local(f.file_path)).name.startswith("L2-") for f in files)

    # Summaries: a rewrite adds what it removes, less the duplicates it dropped (an overwrite);
    # the running totals match what a scan of each kept snapshot reads.
    ops = set()
    for snap in table.metadata.snapshots:
        s = snap.summary
        op = s.operation.value
        ops.add(op)
        if op in ("replace", "overwrite", "delete"):
            added, deleted = int(s.get("added-records", 0)), int(s["deleted-records"])
            assert int(s["deleted-data-files"]) > 0
            assert added == deleted if op == "replace" else added < deleted, (op, added, deleted)
            assert op != "delete" or added == 0, "a rewrite that adds no file is a delete (as Java names it)"
        rows = table.scan(snapshot_id=snap.snapshot_id).to_arrow().num_rows
        assert rows == int(s["total-records"]), f"snapshot {snap.snapshot_id} ({op})"
    assert "append" in ops and ({"replace", "overwrite", "delete"} & ops), ops

    # A snapshot commits several rewrites, and the files each adds keep the data sequence number
    # of the snapshot it was planned on (older than the rewrite's own; the file sequence number
    # is the rewrite's), so rows appended since stay younger; every manifest's
    # min_sequence_number bounds its live entries'.
    tasks = [s.summary["floe.compaction-task"].split(",") for s in table.metadata.snapshots
             if s.summary["floe.compaction-task"] is not None]
    assert max(map(len, tasks)) > 1, tasks
    for snap in table.metadata.snapshots:
        if snap.summary.operation.value not in ("replace", "overwrite"):
            continue  # (a `delete` rewrite adds no file)
        # (table.inspect.entries cannot render this table's uuid bounds: the manifests, read.)
        added = []
        for m in snap.manifests(table.io):
            live = m.fetch_manifest_entry(table.io)
            assert not live or m.min_sequence_number <= min(e.sequence_number for e in live), m.manifest_path
            added += [e for e in live if e.status == ManifestEntryStatus.ADDED and e.snapshot_id == snap.snapshot_id]
        assert added, f"snapshot {snap.snapshot_id} adds files"
        for e in added:
            assert e.file_sequence_number == snap.sequence_number, e.data_file.file_path
            assert e.sequence_number < snap.sequence_number, e.data_file.file_path


def test_maintenance_keeps_metadata_bounded_and_every_kept_snapshot_readable(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    config = tmp_path / "floe.toml"
    config.write_text(
        '[[table]]\nname = "m.events"\n[table.properties]\n'
        '"commit.manifest.min-count-to-merge" = "4"\n"history.expire.max-snapshot-age-ms" = "0"\n'
        '"history.expire.min-snapshots-to-keep" = "12"\n"write.metadata.previous-versions-max" = "4"\n'
    )
    distinct = set()
    for step in range(24):
        folder = src / f"s{step}"
        floe("gen", "--out", folder, "--files", 1, "--events-per-file", 200, "--seed", 500 + step, "--tenants", 3)
        distinct.update(str(r["event_id"]) for r in read_avro(folder.glob("*.avro")))
        ingest(folder, wh, "m.events", "--config", config)
        if step % 4 == 3:
            floe("compact", "--warehouse", wh, "--table", "m.events", "--min-files", 3)
        table = catalog(wh).load_table("m.events")
        assert table.scan().to_arrow().num_rows == len(distinct), f"step {step}"
        snaps = table.metadata.snapshots
        assert len(snaps) <= 12 + 8 + 1, f"step {step}: {len(snaps)} snapshots"
        for snap in snaps:  # every kept snapshot reads, with every file it names
            assert table.scan(snapshot_id=snap.snapshot_id).to_arrow().num_rows == int(snap.summary["total-records"])
        manifests = table.current_snapshot().manifests(table.io)
        assert len(manifests) <= 5, f"step {step}: {len(manifests)} manifests"
        meta_dir = wh / "m.db" / "events" / "metadata"
        assert len(list(meta_dir.glob("*.metadata.json"))) <= 5, f"step {step}: old metadata.json files pile up"
    # Data files no kept snapshot reaches are deleted (a few wait for the next expiry).
    reachable = set()
    for snap in table.metadata.snapshots:
        reachable.update(local(t.file.file_path) for t in table.scan(snapshot_id=snap.snapshot_id).plan_files())
    on_disk = {str(p) for p in (wh / "m.db" / "events" / "data").rglob("*.parquet")}
    assert reachable <= on_disk
    assert len(on_disk - reachable) <= 12, f"{len(on_disk - reachable)} unreachable data files left"
