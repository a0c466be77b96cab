"""Throughput against the raw limit and against the Python peer (`make bench`).

1. Generates the workload with ../shared/bench/gen_events.py (the yardstick: 200 files x
   3,500 events, 100 Zipf-skewed tenants, 1% duplicates, snappy; `floe gen` where that script
   is missing), unless `--input` names a folder of Avro files.
2. Runs `floe bench --input DIR --json ...`: the raw baseline (arrow-avro decode, sort by the
   cluster key, one Parquet file per writer batch), Floe's writer path, the decoders, and the
   whole embedded ingest, in interleaved rounds, as CPU time per event (see cli/src/bench.rs).
3. Runs the peer on the same files: fastavro decode, a pyarrow table, sorted by the same key,
   appended with PyIceberg to a table partitioned the same way (day(event_time),
   identity(tenant_id)), one append per writer batch of 100 files, in this process; its CPU
   time comes from getrusage. The peer does not deduplicate (PyIceberg has no such step).
4. Prints the ratios next to their goals, and writes the Markdown block of
   docs/PERFORMANCE.md (`--doc`).

    python3 tests/bench/throughput.py [--floe target/release/floe] [--input DIR] [--runs 5]
        [--peer-files 40] [--doc docs/PERFORMANCE.md]
"""

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from docblock import replace_block  # noqa: E402


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def peer(files: list[Path], work: Path, batch: int) -> dict:
    """fastavro + pyarrow + PyIceberg appends; returns events and CPU seconds."""
    import fastavro
    import pyarrow as pa
    from pyiceberg.catalog.sql import SqlCatalog
    from pyiceberg.partitioning import PartitionField, PartitionSpec
    from pyiceberg.transforms import DayTransform, IdentityTransform

    wh = work / "peer-warehouse"
    wh.mkdir()
    catalog = SqlCatalog("peer", uri=f"sqlite:///{wh}/catalog.db", warehouse=f"file://{wh}")
    catalog.create_namespace("bench")
    table = None
    events = 0
    start = cpu_seconds()
    wall = time.perf_counter()
    for i in range(0, len(files), batch):
        records = []
        for f in files[i:i + batch]:
            with open(f, "rb") as fh:
                records.extend(fastavro.reader(fh))
        data = pa.Table.from_pylist(records).sort_by([("tenant_id", "ascending"), ("event_time", "ascending")])
        events += data.num_rows
        if table is None:
            table = catalog.create_table("bench.events", schema=data.schema)
            schema = table.schema()
            spec = PartitionSpec(
                PartitionField(schema.find_field("event_time").field_id, 1000, DayTransform(), "event_time_day"),
                PartitionField(schema.find_field("tenant_id").field_id, 1001, IdentityTransform(), "tenant_id"),
            )
            with table.transaction() as tx:
                with tx.update_spec() as us:
                    for f in spec.fields:
                        us.add_field(schema.find_column_name(f.source_id), f.transform, f.name)
            table = catalog.load_table("bench.events")
        table.append(data)
    return {"events": events, "cpu_s": cpu_seconds() - start, "wall_s": time.perf_counter() - wall}


def generate(floe: str, out: Path, files: int) -> Path:
    """The yardstick workload (../shared/bench/gen_events.py, the generator the issue's own
    figures came from), or `floe gen`'s events where that script is not beside the repo."""
    yardstick = ROOT.parent / "shared" / "bench" / "gen_events.py"
    if yardstick.exists():
        subprocess.run([sys.executable, str(yardstick), "--out", str(out), "--files", str(files),
                        "--events-per-file", "3500", "--seed", "42", "--dup-rate", "0.01"], check=True,
                       capture_output=True)
    else:
        subprocess.run([floe, "gen", "--out", str(out), "--files", str(files), "--events-per-file", "3500",
                        "--tenants", "100", "--dup-rate", "0.01"], check=True, capture_output=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floe", default=str(ROOT / "target" / "release" / "floe"))
    ap.add_argument("--input", help="folder of Avro files (default: generate the workload)")
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--peer-files", type=int, default=40, help="files the peer ingests (it is slow)")
    ap.add_argument("--doc", help="write the results into this Markdown file's throughput block")
    ap.add_argument("--json-out", help="keep floe bench's JSON figures here (the cost model reads them)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="floe-throughput-") as tmp:
        work = Path(tmp)
        inp = Path(a.input) if a.input else generate(a.floe, work / "input", a.files)
        out = subprocess.run([a.floe, "bench", "--input", str(inp), "--runs", str(a.runs), "--json",
                              str(work / "bench.json")], check=True, capture_output=True, text=True)
        print(out.stdout, end="")
        bench = json.loads((work / "bench.json").read_text())
        if a.json_out:
            Path(a.json_out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.json_out).write_text(json.dumps(bench, indent=2))
        files = sorted(inp.rglob("*.avro"))[: a.peer_files]
        p = peer(files, work, batch=100)
    per_cpu = {r["name"]: r["events_per_cpu_s"] for r in bench["results"]}
    ingest = next((v for k, v in per_cpu.items() if k.startswith("ingest")), None)
    peer_rate = p["events"] / p["cpu_s"]
    lines = [f"peer (fastavro + PyIceberg appends): {peer_rate:,.0f} events per CPU-second "
             f"({p['events']:,} events, {p['cpu_s']:.1f} CPU-s)"]
    if ingest:
        lines.append(f"floe ingest / peer (events per CPU-second): {ingest / peer_rate:.1f}x")
    print("\n".join(lines))
    if a.doc:
        block = [
            f"`make bench` on {bench['files']} files, {bench['events']:,} events, "
            f"{bench['avro_bytes'] / 1e6:.1f} MB of snappy Avro ({bench['cores']} cores, "
            f"median of {bench['runs']} interleaved rounds, CPU time per event):",
            "",
            "```",
            out.stdout.rstrip(),
            *lines,
            "```",
        ]
        replace_block(Path(a.doc), "throughput", "\n".join(block))


if __name__ == "__main__":
    main()
