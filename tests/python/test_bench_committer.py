"""`floe bench-committer`, the committer load test behind `make bench-scale`, checked from
outside: what it reports must be what happened to the table. PyIceberg reads the table it
loaded (manifests only: the load's data files are synthetic, by design) and finds every message's
files committed exactly once, in the snapshots the run reports; bad settings are refused."""

import json
from collections import Counter

from test_pyiceberg import catalog, floe


def live_files(table):
    """The data file paths of the table's current snapshot, from its manifests (PyIceberg plans a
    scan without opening a data file)."""
    return [task.file.file_path for task in table.scan().plan_files()]


def template(tmp_path, objects=6):
    out = tmp_path / "t.json"
    # near-zero latencies: this checks what happens, not how long it takes
    fast = ["--s3-ms", "0.1,0.2", "--ddb-ms", "0.1,0.2", "--ddb-batch-ms", "0.1,0.2"]
    summary = json.loads(floe("bench-committer", "--make-template", out, "--objects", objects,
                              "--events-per-file", 200, "--tenants", 5, *fast).stdout)
    return out, summary, fast


def test_the_load_commits_every_message_once_and_reports_it(tmp_path):
    t, writer, fast = template(tmp_path)
    assert writer["sources"] == 6 and writer["events"] == 1200 and writer["data_files"] >= 1
    # the writer batch went through the slow store: a GET per source, a PUT per data file
    assert writer["requests"]["s3_requests"] >= writer["sources"] + writer["data_files"]
    work = tmp_path / "work"
    # 30 source files a second in messages of 6: 5 messages a second for 4 s, a 1 s window
    load = json.loads(floe("bench-committer", "--template", t, "--files-per-s", 30, "--seconds", 4,
                           "--window-s", 1, "--work-dir", work, "--csv", tmp_path / "c.csv", *fast).stdout)
    assert load["messages"] == 20 and load["sources"] == 120
    assert load["sources_per_message"] == 6 and load["files_per_message"] == writer["data_files"]
    rows = (tmp_path / "c.csv").read_text().splitlines()[1:]
    assert len(rows) == load["commits"] >= 3, rows  # batched by the window, not one per message
    assert sum(int(r.split(",")[3]) for r in rows) == 20
    assert 0 < load["busy"] < 1 and load["lag_s"]["max"] < 4

    table = catalog(work / "wh").load_table("bench.load")
    paths = Counter(live_files(table))
    assert all(n == 1 for n in paths.values()), "a file committed twice"
    # the load's 20 messages and the warm-up one, each with the template's files
    assert len(paths) == 21 * writer["data_files"]
    warm_up = 2**63 - 1  # the copy the run commits first, so the committer is warm
    # each copy's files are named for its batch, the copy's number in the digest's place
    copies = {int(p.rsplit("/", 1)[1].removesuffix(".parquet").split("-")[-1], 16) for p in paths}
    assert copies == set(range(20)) | {warm_up}
    # one snapshot per commit the run reports, and the warm-up's
    assert len(table.snapshots()) == load["commits"] + 1


def test_a_backlog_commits_bigger_batches_in_fewer_commits(tmp_path):
    t, writer, fast = template(tmp_path, objects=3)
    out = json.loads(floe("bench-committer", "--template", t, "--batches", "1,4", "--commits", 2,
                          "--work-dir", tmp_path / "w", *fast).stdout)
    assert [b["messages"] for b in out["batches"]] == [1, 4]
    assert [b["sources"] for b in out["batches"]] == [3, 12]
    files = live_files(catalog(tmp_path / "w" / "wh").load_table("bench.load"))
    assert len(files) == (1 + 2 * 1 + 2 * 4) * writer["data_files"]
    # the ledger was asked about every source of a batch: more DynamoDB requests for more sources
    assert out["batches"][1]["ddb_requests"] > out["batches"][0]["ddb_requests"]


def test_bad_settings_are_refused_with_the_reason(tmp_path):
    t, _, _ = template(tmp_path, objects=1)
    for args, why in [
        (["--s3-ms", "200,100"], "--s3-ms takes two latencies"),
        (["--ddb-ms", "5"], "--ddb-ms takes two latencies"),
        (["--files-per-s", "0"], "must be > 0"),
        (["--batches", "0,4"], "--batches takes message counts > 0"),
    ]:
        p = floe("bench-committer", "--template", t, "--seconds", 1, *args, expect=1)
        assert why in p.stderr, p.stderr
    p = floe("bench-committer", "--template", tmp_path / "nowhere.json", "--seconds", 1, expect=1)
    assert "nowhere.json" in p.stderr
