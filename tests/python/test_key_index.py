"""The dedup key index with another engine's files (PyIceberg as that engine): a file PyIceberg
appends carries no page index and its uuid bounds come from another writer (Iceberg Java merged
those signed), so Floe's compaction reads its keys whole instead of trusting them; the copies of
its rows that Floe lands later are dropped, and PyIceberg reads each key once.
"""

import re
import shutil
from collections import Counter

from test_pyiceberg import catalog, floe


def ingest(src, wh, table):
    return floe("ingest", src, "--warehouse", wh, "--table", table, "--sort-by", "event_time",
                "--dedup-key", "event_id", "--target-file-size-mb", 1, "--batch-objects", 1)


def test_copies_of_another_engines_rows_are_dropped_though_its_file_has_no_index(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    for name, first in (("floe", 0), ("theirs", 10), ("later", 20)):
        floe("gen", "--out", src / name, "--files", 2, "--events-per-file", 2000, "--tenants", 1,
             "--time-ordered-ids", "--first-file", first)
    ingest(src / "floe", wh, "k.events")
    # The other engine's rows: the same Avro schema landed in a scratch table, then appended by
    # PyIceberg's own writer (its Parquet, its names, its metrics).
    ingest(src / "theirs", wh, "k.scratch")
    cat = catalog(wh)
    theirs = cat.load_table("k.scratch").scan().to_arrow()
    events = cat.load_table("k.events")
    events.append(theirs)
    events = cat.load_table("k.events")
    paths = [e.data_file.file_path for m in events.current_snapshot().manifests(events.io)
             for e in m.fetch_manifest_entry(events.io)]
    names = [p.rsplit("/", 1)[-1] for p in paths]
    assert any(n.startswith("00000-") for n in names), names
    # Floe lands redelivered copies of the other engine's rows, and new rows.
    for p in (src / "theirs").glob("*.avro"):
        shutil.copy(p, src / "later" / f"copy-{p.name}")
    ingest(src / "later", wh, "k.events")
    before = Counter(cat.load_table("k.events").scan(selected_fields=("event_id",)).to_arrow()
                     .column("event_id").to_pylist())
    assert max(before.values()) == 2, "the copies are there before compaction"
    # One input file per task: the task of the copies references the earlier tasks' inputs,
    # among them the other engine's file.
    out = floe("compact", "--warehouse", wh, "--table", "k.events", "--min-files", 2, "--max-task-mb", 1).stdout
    read = re.search(r"dedup keys of (\d+) reference file", out)
    assert read and int(read.group(1)) >= 1, out
    after = Counter(cat.load_table("k.events").scan(selected_fields=("event_id",)).to_arrow()
                    .column("event_id").to_pylist())
    assert set(after) == set(before), "no key lost"
    assert max(after.values()) == 1, [k for k, n in after.items() if n > 1][:3]
