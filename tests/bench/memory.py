"""Writer peak memory against input size, and a decompression bomb (`make bench-memory`).

Runs `floe ingest` with one writer and one writer batch holding the whole input (so the figure
is one writer batch's peak, as a writer Lambda would see it), on event files that `floe gen`
makes, for batches of 1 MiB to 1 GiB of Avro; then on a 1.5 MiB file whose single value
inflates to 1.5 GiB. Peak RSS is the process's own (`wait4`), not a sample.

Prints a Markdown table: Avro bytes in, peak RSS, RSS / Avro, RSS - 2 x Avro (the goal is
RSS <= 2 x Avro + 100 MB), and the bomb's peak and verdict.

Then the metadata side: tables of growing size made by `floe bench-table` (one small file per
commit over 50 tenants, no compaction, a 64 KiB manifest merge target so that most manifests
count as big), and for each the peak RSS of `floe status` (which plans compaction as a
compactor's tick does: every manifest read, none kept) and the manifest entries the bench's warm
committer keeps parsed at the end.

    python3 tests/bench/memory.py [--floe target/release/floe] [--sizes-mb 1,16,128,512,1024]
"""

import argparse
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MB = 1024 * 1024


def zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def avro_bytes(b: bytes) -> bytes:
    return zigzag(len(b)) + b


def write_bomb(path: Path, value_bytes: int) -> int:
    """An Avro container, deflate codec, one record {blob: bytes} whose value is `value_bytes`
    zero bytes: a few MB on disk. Streamed, so making it needs no memory."""
    schema = b'{"type":"record","name":"Bomb","fields":[{"name":"blob","type":"bytes"}]}'
    sync = bytes(range(16))
    header = b"Obj\x01" + zigzag(2)
    header += avro_bytes(b"avro.schema") + avro_bytes(schema)
    header += avro_bytes(b"avro.codec") + avro_bytes(b"deflate")
    header += zigzag(0) + sync
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = bytearray(comp.compress(zigzag(value_bytes)))
    chunk = bytes(MB)
    left = value_bytes
    while left:
        n = min(left, len(chunk))
        block += comp.compress(chunk[:n])
        left -= n
    block += comp.flush()
    data = header + zigzag(1) + zigzag(len(block)) + bytes(block) + sync
    path.write_bytes(data)
    return len(data)


# Linux carries a process's peak RSS across fork and exec: a child forked straight from a big
# process (pytest after other tests) reports the parent's peak as its own. So the command is
# started by a small launcher process, and the launcher reports its child's peak.
LAUNCHER = """
import os, sys
report, argv = int(sys.argv[1]), sys.argv[2:]
pid = os.fork()
if pid == 0:
    os.close(report)
    os.execvp(argv[0], argv)
_, status, usage = os.wait4(pid, 0)
os.write(report, f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}".encode())
"""


def run_measured(argv, env=None) -> tuple[int, int, str]:
    """Runs argv (with `env` added to the environment); returns (exit code, peak RSS in bytes,
    stderr)."""
    with tempfile.TemporaryFile() as err:
        r, w = os.pipe()
        p = subprocess.Popen([sys.executable, "-c", LAUNCHER, str(w), *argv], stdout=subprocess.DEVNULL, stderr=err,
                             env={**os.environ, **(env or {})}, pass_fds=(w,))
        os.close(w)
        report = os.read(r, 100).decode()
        os.close(r)
        p.wait()
        code, rss = map(int, report.split())
        err.seek(0)
        return code, rss, err.read().decode(errors="replace")


EVENTS_TABLE = ["--partition-by", "day(event_time),identity(tenant_id)", "--sort-by", "tenant_id,event_time",
                "--dedup-key", "event_id"]


def ingest(floe: str, inputs: Path, wh: Path, batch_mb: int, table_flags=()):
    """`floe ingest` with one writer whose one batch holds the whole input; measured."""
    return run_measured([
        floe, "ingest", str(inputs), "--warehouse", str(wh), "--table", "bench.t", *table_flags,
        "--writers", "1", "--batch-objects", "100000", "--batch-mb", str(batch_mb),
    ])


def live_files(status_out: str) -> int:
    for line in status_out.splitlines():
        if line.startswith("data files"):
            return int(line.split()[2])
    raise ValueError(f"no 'data files' line in:\n{status_out}")


def metadata_memory(floe: str, work: Path, commits: list[int], target_kb: int = 64) -> None:
    """Peak RSS of a compaction plan and a warm committer's parsed entries against live files."""
    print()
    print("| writer commits | live files | plan peak RSS (MiB) | plan RSS over an empty table's, per live file (bytes) | committer: entries kept parsed |")
    print("|---:|---:|---:|---:|---:|")
    base = None
    for n in [1, *commits]:
        d = work / f"age-{n}"
        out = subprocess.run([floe, "bench-table", "--commits", str(n), "--tenants", "50", "--compact-every", str(10**9),
                              "--manifest-target-kb", str(target_kb), "--work-dir", str(d), "--out", str(d / "c.csv")],
                             check=True, capture_output=True, text=True).stdout
        parsed = next(int(l.split()[2]) for l in out.splitlines() if l.startswith("committer memory"))
        argv = [floe, "status", "--warehouse", str(d / "wh"), "--table", "bench.age"]
        code, rss, err = run_measured(argv)
        if code != 0:
            raise SystemExit(err)
        text = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
        live = live_files(text)
        if base is None:
            base = rss
            continue
        print(f"| {n} | {live:,} | {rss / MB:.0f} | {(rss - base) / live:,.0f} | {parsed:,} |")
        shutil.rmtree(d)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--floe", default=str(ROOT / "target" / "release" / "floe"))
    ap.add_argument("--sizes-mb", default="1,16,128,512,1024")
    ap.add_argument("--bomb-mb", type=int, default=1536)
    ap.add_argument("--metadata-only", action="store_true", help="only the metadata side (tables of growing size)")
    ap.add_argument("--table-commits", default="100,300", help="writer commits of the tables whose metadata memory is measured")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="floe-mem-"))
    try:
        if a.metadata_only:
            metadata_memory(a.floe, work, [int(c) for c in a.table_commits.split(",") if c])
            return 0
        print("| Avro in (MiB) | files | peak RSS (MiB) | RSS / Avro | RSS - 2 x Avro (MiB) |")
        print("|---:|---:|---:|---:|---:|")
        for size in [int(s) for s in a.sizes_mb.split(",") if s]:
            events_per_file = 3500
            files = max(1, round(size * MB / (events_per_file * 195)))  # ~195 bytes/event (snappy)
            inputs = work / f"in-{size}"
            subprocess.run([a.floe, "gen", "--out", str(inputs), "--files", str(files),
                            "--events-per-file", str(events_per_file)], check=True, capture_output=True)
            avro = sum(f.stat().st_size for f in inputs.glob("*.avro"))
            code, rss, err = ingest(a.floe, inputs, work / f"wh-{size}", size * 4 + 64, EVENTS_TABLE)
            if code != 0:
                print(err, file=sys.stderr)
                return 1
            print(f"| {avro / MB:.1f} | {files} | {rss / MB:.0f} | {rss / avro:.2f} | {(rss - 2 * avro) / MB:.0f} |")
            shutil.rmtree(inputs)
            shutil.rmtree(work / f"wh-{size}")
        bomb_dir = work / "bomb"
        bomb_dir.mkdir()
        on_disk = write_bomb(bomb_dir / "bomb.avro", a.bomb_mb * MB)
        code, rss, err = ingest(a.floe, bomb_dir, work / "wh-bomb", 64)
        print()
        print(f"Decompression bomb: {on_disk / MB:.1f} MiB on disk, one value of {a.bomb_mb} MiB: "
              f"`floe ingest` exit {code}, peak RSS {rss / MB:.0f} MiB (goal: refused under 256 MiB).")
        metadata_memory(a.floe, work, [int(c) for c in a.table_commits.split(",") if c])
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
