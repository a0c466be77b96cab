"""Operator commands in embedded mode: `floe ingest --metrics-json` (the same counters and
observations the functions print as CloudWatch EMF) and `floe status --json`, checked against
what was ingested and against the table's own summaries as PyIceberg reads them."""

import json
import os
import sqlite3
import subprocess
import time
from pathlib import Path

import fastavro
from pyiceberg.catalog.sql import SqlCatalog

ROOT = Path(__file__).resolve().parents[2]
FLOE = os.environ.get("FLOE_BIN", str(ROOT / "target" / "release" / "floe"))
SCHEMA = {"type": "record", "name": "e", "fields": [{"name": "id", "type": "long"}, {"name": "tenant", "type": "string"}]}


def floe(*args, expect=0):
    p = subprocess.run([FLOE, *map(str, args)], capture_output=True, text=True)
    assert p.returncode == expect, f"floe {' '.join(map(str, args))} exited {p.returncode}\n{p.stdout}\n{p.stderr}"
    return p


def test_metrics_status_and_changelog_agree_with_what_landed(tmp_path):
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    for i in range(6):
        with open(src / f"f{i}.avro", "wb") as f:
            fastavro.writer(f, SCHEMA, [{"id": i * 100 + j, "tenant": f"t{j % 3}"} for j in range(50)])
    (src / "bad.avro").write_bytes(b"Obj\x01 not really")
    created = max(os.path.getmtime(p) for p in src.iterdir())
    metrics = tmp_path / "metrics.json"
    floe("ingest", src, "--warehouse", wh, "--table", "ops.events", "--partition-by", "identity(tenant)",
         "--metrics-json", metrics, "--batch-objects", "2", expect=2)
    done = time.time()
    m = json.loads(metrics.read_text())
    c, o = m["counters"], m["observed"]
    assert c["source_objects"] == 7 and c["rows"] == 300 and c["committed_rows"] == 300, c
    assert c["quarantined"] == 1 and c["committed_sources"] == 6, c
    assert c["data_files"] == o["files_per_commit"]["sum"], m
    assert o["commit_latency_ms"]["count"] == c["commits"] >= 1, m
    lag = o["freshness_lag_ms"]
    assert lag["count"] == c["commits"] and 0 <= lag["min"] <= lag["max"] <= (done - created + 5) * 1000 + 5000, lag

    status = json.loads(floe("status", "--warehouse", wh, "--json").stdout)
    (t,) = status["tables"]
    assert t["table"] == "ops.events" and t["rows"] == 300 and t["partition_by"] == "identity(tenant)"
    assert status["quarantined"] == {"total": 1, "by_table": {"ops.events": 1}, "by_kind": {"corrupt": 1}}
    assert sorted(d["partition"] for d in t["debt"]) == ["tenant=t0", "tenant=t1", "tenant=t2"]
    assert sum(d["files"] for d in t["debt"]) == t["data_files"]
    f = t["freshness"]
    assert f["snapshot_id"] == t["current_snapshot_id"] and f["lag_ms"] == f["committed_ms"] - f["oldest_source_ms"]

    # The changelog in the summaries, as any Iceberg reader sees it, adds up to what landed.
    table = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}").load_table("ops.events")
    sums = [s.summary.additional_properties for s in table.snapshots()]
    assert sum(int(p["floe.source-objects"]) for p in sums) == 6
    assert sum(int(p["floe.source-rows"]) for p in sums) == 300
    # At most two objects per writer batch: at least four batches, each listed by its id.
    batches = sum(int(p["floe.writer-batches"]) for p in sums)
    assert batches >= 4 and sum(len(p["floe.batch-ids"].split(",")) for p in sums) == batches
    assert sum(int(p["floe.source-bytes"]) for p in sums) == sum(
        p.stat().st_size for p in src.iterdir() if p.name != "bad.avro"
    )
    text = floe("status", "--warehouse", wh).stdout
    assert "freshness" in text and "quarantined  1 (corrupt: 1)" in text, text
    # The quarantine by kind: a kind Floe writes filters, a misspelt one is refused, not empty.
    assert "bad.avro\tops.events\tcorrupt\t" in floe("quarantine", "list", "--warehouse", wh, "--kind", "corrupt").stdout
    assert "bad.avro" not in floe("quarantine", "list", "--warehouse", wh, "--kind", "too-large").stdout
    typo = floe("quarantine", "list", "--warehouse", wh, "--kind", "toolarge", expect=1).stderr
    assert "quarantine kind `toolarge` is not one of empty, corrupt, schema, too-large" in typo, typo
    # A kind a newer build wrote is listed, and can be selected by name.
    with sqlite3.connect(wh / ".floe" / "state.db") as db:
        db.execute("INSERT INTO quarantine VALUES ('future-id', 's3://x/future.avro', 'ops.events', 'from-the-future', 'r', 1)")
    listed = floe("quarantine", "list", "--warehouse", wh).stdout
    assert "s3://x/future.avro\tops.events\tfrom-the-future\tr" in listed, listed
    only = floe("quarantine", "list", "--warehouse", wh, "--kind", "from-the-future").stdout
    assert "future.avro" in only and "bad.avro" not in only, only


def test_a_sweep_leaves_a_warehouse_alone_while_its_commit_queue_holds_messages(tmp_path):
    """An interrupted `floe ingest` leaves manifests in the warehouse's commit queue; the next run
    commits them. Their files are unreferenced until then, so `floe sweep` must not delete them
    however old they are: it refuses while the queue holds anything, and sweeps once it is empty."""
    import shutil
    import sqlite3

    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    for i in range(2):
        with open(src / f"f{i}.avro", "wb") as f:
            fastavro.writer(f, SCHEMA, [{"id": i * 100 + j, "tenant": "t"} for j in range(50)])
    floe("ingest", src, "--warehouse", wh, "--table", "ops.sweep")
    data = next((wh / "ops.db" / "sweep" / "data").rglob("*.parquet"))
    waiting = data.with_name("waiting-to-be-committed.parquet")
    shutil.copy(data, waiting)
    old = time.time() - 200 * 3600
    os.utime(waiting, (old, old))
    # What an interrupted run leaves: a message in the durable commit queue (only its presence
    # matters to the sweep).
    db = sqlite3.connect(wh / ".floe" / "state.db")
    db.execute("INSERT INTO queue_messages (queue, id, body, visible_at) VALUES ('commit', 'm1', '{}', 0)")
    db.commit()
    refused = floe("sweep", "--warehouse", wh, "--table", "ops.sweep", expect=1)
    assert "1 commit message(s) not yet committed" in refused.stderr, refused.stderr
    assert waiting.exists(), "nothing is deleted while the queue holds messages"
    db.execute("DELETE FROM queue_messages")
    db.commit()
    db.close()
    swept = floe("sweep", "--warehouse", wh, "--table", "ops.sweep")
    assert f"deleted file://{waiting}" in swept.stdout, swept.stdout
    assert not waiting.exists() and data.exists(), "the old unreferenced file goes, the table's own stays"
    table = SqlCatalog("floe", uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=f"file://{wh}").load_table("ops.sweep")
    assert table.scan().to_arrow().num_rows == 100


def test_a_sweep_and_the_processes_that_write_a_warehouse_never_run_together(tmp_path):
    """A writer may name in its commit an identical file an interrupted run left behind, old and
    unreferenced: exactly what a sweep deletes. So `floe sweep` refuses a warehouse another Floe
    process writes to, and `floe ingest` waits for a running sweep to end. The stand-ins here
    hold the warehouse's lock file as those processes do (flock, shared for writers, exclusive
    for a sweep)."""
    import fcntl
    import shutil

    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    with open(src / "f0.avro", "wb") as f:
        fastavro.writer(f, SCHEMA, [{"id": j, "tenant": "t"} for j in range(50)])
    floe("ingest", src, "--warehouse", wh, "--table", "ops.locks")
    data = next((wh / "ops.db" / "locks" / "data").rglob("*.parquet"))
    left = data.with_name("left-by-an-interrupted-run.parquet")
    shutil.copy(data, left)
    old = time.time() - 200 * 3600
    os.utime(left, (old, old))
    lock_path = wh / ".floe" / "warehouse.lock"

    with open(lock_path, "a") as writer:  # an ingest in progress
        fcntl.flock(writer, fcntl.LOCK_SH)
        refused = floe("sweep", "--warehouse", wh, "--table", "ops.locks", expect=1)
        assert "is in use by a `floe ingest`" in refused.stderr, refused.stderr
        assert left.exists(), "nothing is deleted beside a writer"
        # Writers share the warehouse: another ingest runs beside this one.
        with open(src / "f1.avro", "wb") as f:
            fastavro.writer(f, SCHEMA, [{"id": 100 + j, "tenant": "t"} for j in range(50)])
        floe("ingest", src, "--warehouse", wh, "--table", "ops.locks")

    with open(src / "f2.avro", "wb") as f:
        fastavro.writer(f, SCHEMA, [{"id": 200 + j, "tenant": "t"} for j in range(50)])
    with open(lock_path, "a") as sweep:  # a sweep in progress
        fcntl.flock(sweep, fcntl.LOCK_EX)
        ingest = subprocess.Popen([FLOE, "ingest", str(src), "--warehouse", str(wh), "--table", "ops.locks"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            ingest.wait(timeout=3)
            raise AssertionError(f"ingest ran during a sweep: {ingest.communicate()}")
        except subprocess.TimeoutExpired:
            pass
        table = SqlCatalog("floe", uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=f"file://{wh}").load_table("ops.locks")
        assert table.scan().to_arrow().num_rows == 100, "nothing committed while the sweep holds the warehouse"
        fcntl.flock(sweep, fcntl.LOCK_UN)
        out, err = ingest.communicate(timeout=60)
    assert ingest.returncode == 0, f"{out}\n{err}"
    assert "waiting: `floe sweep` is running" in err, err
    swept = floe("sweep", "--warehouse", wh, "--table", "ops.locks")
    assert f"deleted file://{left}" in swept.stdout, swept.stdout
    table = SqlCatalog("floe", uri=f"sqlite:///{wh / 'catalog.db'}", warehouse=f"file://{wh}").load_table("ops.locks")
    assert sorted(table.scan().to_arrow().column("id").to_pylist()) == list(range(50)) + list(range(100, 150)) + list(range(200, 250))


def test_a_commit_message_dead_lettered_during_an_ingest_is_reported_not_silent(tmp_path):
    """A manifest delivered too often (ten times: committers that kept failing on it) is moved
    aside, and nothing commits it again: its sources wait for an ingest over the same inputs.
    The run it happens in says so and exits 2, and `floe status` counts dead letters."""
    import sqlite3

    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    with open(src / "f0.avro", "wb") as f:
        fastavro.writer(f, SCHEMA, [{"id": j, "tenant": "t"} for j in range(50)])
    floe("ingest", src, "--warehouse", wh, "--table", "ops.dead")
    status = json.loads(floe("status", "--warehouse", wh, "--json").stdout)
    assert {q["role"]: q["visible"] for q in status["queues"]} == {"commit": 0, "commit-dlq": 0}, status["queues"]
    db = sqlite3.connect(wh / ".floe" / "state.db")
    db.execute("INSERT INTO queue_messages (queue, id, body, visible_at, receive_count)"
               " VALUES ('commit', 'm1', '{}', 0, 10)")
    db.commit()
    db.close()
    with open(src / "f1.avro", "wb") as f:
        fastavro.writer(f, SCHEMA, [{"id": 100 + j, "tenant": "t"} for j in range(50)])
    run = floe("ingest", src, "--warehouse", wh, "--table", "ops.dead", expect=2)
    assert "1 commit message(s) dead-lettered during this run" in run.stderr, run.stderr
    status = json.loads(floe("status", "--warehouse", wh, "--json").stdout)
    assert {q["role"]: q["visible"] for q in status["queues"]} == {"commit": 0, "commit-dlq": 1}, status["queues"]
    assert "commit-dlq" in floe("status", "--warehouse", wh).stdout
    # The next run adds no dead letter: it succeeds.
    floe("ingest", src, "--warehouse", wh, "--table", "ops.dead")


def test_a_refused_rewrite_fails_floe_compact_with_its_reason_and_changes_nothing(tmp_path):
    """A rewrite request the committer refuses (here a forged one that would drop every row of a
    file as duplicates of a table without a dedup key) is named with its reason, `floe compact`
    exits 1, not 0, and the table keeps every row."""
    src, wh = tmp_path / "in", tmp_path / "wh"
    src.mkdir()
    with open(src / "f0.avro", "wb") as f:
        fastavro.writer(f, SCHEMA, [{"id": j, "tenant": "t"} for j in range(50)])
    floe("ingest", src, "--warehouse", wh, "--table", "ops.forged")
    cat = SqlCatalog("floe", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    table = cat.load_table("ops.forged")
    snap = table.current_snapshot()
    (task,) = list(table.scan().plan_files())
    forged = {
        "version": 1, "kind": "rewrite", "table": "ops.forged", "task_id": "forged1",
        "planned_snapshot_id": snap.snapshot_id, "data_sequence_number": snap.sequence_number,
        "level": 1, "schema_id": table.schema().schema_id, "spec_id": table.spec().spec_id,
        "removed": [task.file.file_path], "removed_rows": task.file.record_count,
        "duplicates": task.file.record_count, "added": [],
    }
    with sqlite3.connect(wh / ".floe" / "state.db") as db:
        db.execute("INSERT INTO queue_messages (queue, id, body, visible_at) VALUES ('commit', 'forged', ?, 0)",
                   (json.dumps(forged),))
    run = floe("compact", "--warehouse", wh, "--table", "ops.forged", expect=1)
    assert "1 commit message(s) refused by the committer" in run.stderr, run.stderr
    assert "rewrite forged1 drops 50 rows as duplicates, but the table has no dedup key" in run.stderr, run.stderr
    assert "the table is as it was" in run.stderr, run.stderr
    table = cat.load_table("ops.forged")
    assert table.current_snapshot().snapshot_id == snap.snapshot_id
    assert sorted(table.scan().to_arrow()["id"].to_pylist()) == list(range(50))
