"""Exact dedup's reads against the partition's size (`make bench-dedup`).

One partition (one tenant, sorted by event time, deduplicated on `event_id`) is built up round
by round: each round `floe gen` makes the next files of a series, `floe ingest --compact` lands and
compacts them (level 0 into level 1, eight level-1 files into level 2), so the compacted files
grow with the rounds. When
the partition holds 1x, 4x and 16x the base number of compacted files, a copy of the warehouse
takes the measured round: the next files plus a copy of the previous round's first file (a
redelivery: every one of its keys is a duplicate of a committed row), then `floe compact`, whose
level-0 task references every compacted file of the partition; its report says how many references its tasks read, skipped and how many bytes of them.

Done for time-ordered ids (UUIDv7, which the key index prunes), for random ids (UUIDv4, which no
index can confine: docs/ARCHITECTURE.md, "The dedup key index"), and for random ids under a dedup
key that leads with the event time (which the files are sorted by). The goal: with time-ordered
ids, the dedup bytes read per task at 16x are at most 1.2 times those at 1x.

    python3 tests/bench/dedup_index.py [--floe target/release/floe] [--base 2] [--doc docs/PERFORMANCE.md]
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docblock import replace_block  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TABLE = "bench.events"
REPORT = re.compile(
    r"dedup keys of (\d+) reference file\(s\) of ([\d.]+) MB: ([\d.]+) MB read .*? in (\d+) GET\(s\); "
    r"(\d+) reference\(s\) skipped"
)


def run(cmd: list) -> str:
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p.stdout


def gen(floe: Path, out: Path, first: int, files: int, events: int, ordered: bool) -> None:
    cmd = [floe, "gen", "--out", out, "--files", files, "--events-per-file", events, "--tenants", 1,
           "--first-file", first, "--seed", 5]
    if ordered:
        cmd.append("--time-ordered-ids")
    run(cmd)


def table_args(a) -> list:
    config = ["--config", a.config] if getattr(a, "config", None) else []
    return ["--table", TABLE, "--sort-by", "event_time", "--dedup-key", a.key, "--target-file-size-mb", a.target_mb,
            *config]


def measure(floe: Path, wh: Path, work: Path, at: int, a, ordered: bool) -> dict:
    """The measured round on a copy of `wh`: files `at..` plus a copy of the previous round's
    first file, then a full compaction; what its dedup read."""
    copy = work / "measured"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(wh, copy)
    new = work / "new"
    shutil.rmtree(new, ignore_errors=True)
    gen(floe, new, at, a.files_per_round, a.events_per_file, ordered)
    previous = work / f"round-{at // a.files_per_round - 1}"
    first = sorted(previous.glob("*.avro"))[0]
    shutil.copy(first, new / f"redelivered-{first.name}")
    run([floe, "ingest", new, "--warehouse", copy, *table_args(a)])
    out = run([floe, "compact", "--warehouse", copy, "--table", TABLE])
    m = REPORT.search(out)
    if not m:
        raise SystemExit(f"no dedup report in `floe compact`'s output:\n{out}")
    read, gets, skipped = int(m.group(1)), int(m.group(4)), int(m.group(5))
    return {
        "compacted_files": read + skipped,
        "references_read": read,
        "references_skipped": skipped,
        "reference_mb": float(m.group(2)),
        "dedup_mb_read": float(m.group(3)),
        "dedup_gets": gets,
        # The round's level-0 files make one task (under --max-task-mb): the only one with
        # references (a level-1 merge has none).
        "dedup_mb_per_task": float(m.group(3)),
    }


def series(floe: Path, work: Path, a, ordered: bool) -> list:
    """Builds the partition round by round; measures at 1x, 4x and 16x the base."""
    wh = work / "warehouse"
    shutil.rmtree(wh, ignore_errors=True)
    results, r = [], 0
    for mult in (1, 4, 16):
        goal = a.base * mult
        while True:
            status = json.loads(run([floe, "status", "--warehouse", wh, "--table", TABLE, "--json"])) if r else None
            # After `--compact` (a round's level-0 files reach the target) every live file is a
            # compacted one.
            compacted = status["tables"][0]["data_files"] if status else 0
            if compacted >= goal:
                break
            d = work / f"round-{r}"
            shutil.rmtree(d, ignore_errors=True)
            gen(floe, d, r * a.files_per_round, a.files_per_round, a.events_per_file, ordered)
            run([floe, "ingest", d, "--warehouse", wh, *table_args(a), "--compact"])
            r += 1
        m = measure(floe, wh, work, r * a.files_per_round, a, ordered)
        m["multiple"] = mult
        results.append(m)
        print(f"  {'time-ordered' if ordered else 'random'} ids, key {a.key}, {mult}x: {m}", flush=True)
    return results


def report(ordered: list, random: list, timed: list, a) -> str:
    def row(kind, rs):
        cells = [f"{r['dedup_mb_per_task']:.2f} MB, {r['dedup_gets']} GETs ({r['references_read']} read, "
                 f"{r['references_skipped']} skipped)" for r in rs]
        ratio = rs[-1]["dedup_mb_per_task"] / max(rs[0]["dedup_mb_per_task"], 1e-9)
        return f"| {kind} | " + " | ".join(cells) + f" | **{ratio:.2f}x** |"

    counts = " / ".join(str(r["compacted_files"]) for r in ordered)
    lines = [
        f"Generated by `tests/bench/dedup_index.py --base {a.base}` (`make bench-dedup`): one partition of "
        f"{a.target_mb} MiB compacted files; each round {a.files_per_round} files of {a.events_per_file:,} events; "
        f"the measured round adds the next files and a redelivered copy of the previous round's first file, "
        f"then `floe compact` (one level-0 task, which references them all). Compacted files in the partition at 1x / 4x / 16x: {counts}.",
        "",
        "| dedup bytes and GETs per task (references read, skipped) | 1x | 4x | 16x | bytes 16x / 1x (goal <= 1.2x) |",
        "|---|---|---|---|---|",
        row("time-ordered ids (UUIDv7)", ordered),
        row("random ids (UUIDv4)", random),
        row("random ids, dedup key `event_time, event_id` (no late files: `floe.late-after-ms` 0)", timed),
    ]
    ratio = ordered[-1]["dedup_mb_per_task"] / max(ordered[0]["dedup_mb_per_task"], 1e-9)
    verdict = "meets" if ratio <= 1.2 else "misses"
    lines += ["", f"Time-ordered ids: 16x / 1x = {ratio:.2f}, which {verdict} the goal of <= 1.2x."]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floe", type=Path, default=ROOT / "target/release/floe")
    ap.add_argument("--base", type=int, default=4, help="compacted files at 1x")
    ap.add_argument("--files-per-round", type=int, default=2)
    ap.add_argument("--events-per-file", type=int, default=12_000)
    ap.add_argument("--target-mb", type=int, default=2)
    ap.add_argument("--doc", type=Path, help="write the table into this file's dedup-index block")
    ap.add_argument("--json-out", type=Path)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="floe-dedup-") as tmp:
        work = Path(tmp)
        a.key = "event_id"
        ordered = series(a.floe, work / "ordered", a, True)
        random = series(a.floe, work / "random", a, False)
        # A key that leads with the column the files are sorted by: the index prunes it whatever
        # the ids (two copies of an event carry the same time).
        # Without late files (the generator's events are months old, so every row would be
        # late): this measures the key index itself.
        a.key = "event_time,event_id"
        a.config = work / "no-late-files.toml"
        a.config.write_text('[defaults.properties]\n"floe.late-after-ms" = "0"\n')
        timed = series(a.floe, work / "timed", a, False)
    text = report(ordered, random, timed, a)
    print(text)
    if a.doc:
        replace_block(a.doc, "dedup-index", text)
    if a.json_out:
        a.json_out.parent.mkdir(parents=True, exist_ok=True)
        a.json_out.write_text(json.dumps({"time_ordered": ordered, "random": random, "time_key": timed}, indent=2))


if __name__ == "__main__":
    main()
