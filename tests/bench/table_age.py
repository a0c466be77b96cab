"""A table's cost against its age: runs `floe bench-table`, plots each per-commit series against
the number of commits so far (PNG files in docs/img/), and prints a Markdown table comparing the
window around commit 100 with the last window (medians of appends; ratio = last / early).

    python tests/bench/table_age.py --floe target/release/floe --commits 10000 --out-dir docs/img
"""

import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [
    ("latency_ms", "commit latency (ms)"),
    ("latency_ratio", "commit latency / calibration workload"),
    ("reads", "objects read per commit"),
    ("writes", "objects written per commit"),
    ("write_bytes", "bytes written per commit"),
    ("manifests", "manifests in the current snapshot"),
    ("metadata_bytes", "metadata.json bytes"),
    ("snapshots", "snapshots kept"),
    ("mean_files_per_partition", "data files per partition (mean)"),
    ("max_files_per_partition", "data files per partition (max)"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--floe", default="target/release/floe")
    ap.add_argument("--commits", type=int, default=10000)
    ap.add_argument("--compact-every", type=int, default=100)
    ap.add_argument("--out-dir", default="docs/img")
    ap.add_argument("--window", type=int, default=200, help="commits per comparison window")
    ap.add_argument("--keep-csv", help="also copy the per-commit CSV here")
    a = ap.parse_args()
    out_dir = Path(a.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        csv_path = Path(tmp) / "age.csv"
        run = subprocess.run(
            [a.floe, "bench-table", "--commits", str(a.commits), "--compact-every", str(a.compact_every),
             "--out", str(csv_path)],
            capture_output=True, text=True, check=True,
        )
        rows = list(csv.DictReader(open(csv_path)))
        for r in rows:
            r["latency_ratio"] = float(r["latency_ms"]) / max(float(r["calibration_ms"]), 1e-6)
        if a.keep_csv:
            Path(a.keep_csv).write_text(csv_path.read_text())
    print(run.stdout.strip())
    appends = [r for r in rows if r["kind"] == "append"]
    rewrites = [r for r in rows if r["kind"] == "rewrite"]
    x = [int(r["commit"]) for r in appends]
    plots = [(k, label, appends, "append commits") for k, label in SERIES]
    plots += [(k, label + " (compaction)", rewrites, "compaction commits (one batch of rewrites)")
              for k, label in SERIES[:5]]
    for key, label, series, legend in plots:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        ax.plot([int(r["commit"]) for r in series], [float(r[key]) for r in series],
                "," if series is appends else "x", ms=3, alpha=0.6, label=legend)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("commits so far")
        ax.set_ylabel(label)
        ax.legend(loc="upper left", fontsize=7)
        fig.tight_layout()
        suffix = "" if series is appends else "-compaction"
        fig.savefig(out_dir / f"table-age-{key}{suffix}.png", dpi=90)
        plt.close(fig)
    w = a.window
    early = [r for r in appends if 100 <= int(r["commit"]) < 100 + w]
    late = appends[-w:]
    print(f"\n| per append commit (median) | commits 100-{100 + w} | last {w} commits | ratio |")
    print("|---|---|---|---|")
    for key, label in SERIES:
        e = statistics.median(float(r[key]) for r in early)
        l_ = statistics.median(float(r[key]) for r in late)
        ratio = "-" if e == 0 else f"{l_ / e:.2f}"
        print(f"| {label} | {e:g} | {l_:g} | {ratio} |")
    warm_reads = sum(int(r["reads"]) for r in appends[1:])
    print(f"\nobjects read by warm append commits (all but the first): {warm_reads}")
    lat = [float(r["latency_ms"]) for r in rewrites]
    if lat:
        print(f"compaction commits: {len(rewrites)}, median latency {statistics.median(lat):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
