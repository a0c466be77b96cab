"""Freshness under load through the AWS pipeline on moto (`make bench-soak-moto`).

Run under tests/with-moto.sh (the make target does). Files are put into a landing bucket at a
steady rate; its object-created notifications go to an ingest queue, as the Terraform module
wires them. `floe run-function writer` (WRITERS processes, each one Lambda instance reading the
queue as the event source mapping does) and one `floe run-function committer` run the real
handlers against moto's S3, SQS and DynamoDB, with the table partitioned by day and tenant,
sorted and deduplicated (a floe.toml in the warehouse bucket, as the Terraform module puts it). A file's drop->visible latency is the timestamp of
the snapshot that committed it (its ledger record names that snapshot; the snapshot's
`timestamp-ms` is when the committer built it, just before the swap) minus the moment its put
returned. Per rate: p50/p99/max and the throughput reached.

moto is an emulator on this same machine: its request handling (and the processes' sharing
two cores with it) sets these figures, not AWS's. They show the pipeline's shape under load
(batching, commit cadence, backlog), not Lambda's latency.

    tests/with-moto.sh .venv/bin/python tests/bench/soak_moto.py [--floe target/release/floe]
        [--rates 2,4,8,16,24] [--seconds 30] [--writers 2] [--doc docs/PERFORMANCE.md]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from docblock import replace_block  # noqa: E402
from soak import pct  # noqa: E402

TABLE = "soak.events"
# As in the embedded soak and `floe bench`: partitioned by day and tenant, sorted, deduplicated.
FLOE_TOML = f"""
[[table]]
name = "{TABLE}"
prefixes = ["events/"]
partition_by = "day(event_time), identity(tenant_id)"
sort_by = "tenant_id, event_time"
dedup_key = "event_id"
"""


class Stack:
    """One run's buckets, queues and the functions' environment on the emulator."""

    def __init__(self, tag: str):
        self.tag = tag
        self.s3 = boto3.client("s3")
        self.sqs = boto3.client("sqs")
        self.ddb = boto3.client("dynamodb")
        self.landing, self.lake = f"landing-{tag}", f"lake-{tag}"
        for b in (self.landing, self.lake):
            self.s3.create_bucket(Bucket=b)
        self.ingest_url = self.sqs.create_queue(QueueName=f"ingest-{tag}")["QueueUrl"]
        self.commit_url = self.sqs.create_queue(QueueName=f"commit-{tag}")["QueueUrl"]
        arn = self.sqs.get_queue_attributes(QueueUrl=self.ingest_url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        self.s3.put_object(Bucket=self.lake, Key="warehouse/_floe/floe.toml", Body=FLOE_TOML.encode())
        self.s3.put_bucket_notification_configuration(
            Bucket=self.landing,
            NotificationConfiguration={"QueueConfigurations": [{"QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]})
        self.env = dict(os.environ,
                        FLOE_WAREHOUSE=f"s3://{self.lake}/warehouse", FLOE_CATALOG="dynamodb",
                        FLOE_CATALOG_TABLE=f"iceberg-{tag}", FLOE_LOCK_TABLE=f"locks-{tag}",
                        FLOE_LEDGER_TABLE=f"ledger-{tag}", FLOE_COMMIT_QUEUE_URL=self.commit_url,
                        FLOE_INGEST_QUEUE_URL=self.ingest_url, FLOE_CONFIG=f"s3://{self.lake}/warehouse/_floe/floe.toml",
                        FLOE_TABLE_CACHE_SECS="300", FLOE_CREATE_WAIT_SECS="60", RUST_LOG="warn")

    def committed(self) -> dict[str, int]:
        """Landing key -> the snapshot id its ledger record names, for committed sources."""
        out, kw = {}, {}
        prefix = f"{TABLE}|s3://{self.landing}/"
        while True:
            page = self.ddb.scan(TableName=f"ledger-{self.tag}", **kw)
            for item in page["Items"]:
                pk = item["pk"]["S"]
                if pk.startswith(prefix) and item.get("state", {}).get("S") == "committed":
                    key = pk[len(prefix):].rsplit("#", 1)[0]
                    out[key] = int(item["snapshot_id"]["N"])
            if "LastEvaluatedKey" not in page:
                return out
            kw = {"ExclusiveStartKey": page["LastEvaluatedKey"]}

    def snapshot_times(self) -> dict[int, float]:
        """Snapshot id -> timestamp (s since the epoch), from the table's current metadata."""
        ns, name = TABLE.split(".")
        item = self.ddb.get_item(TableName=f"iceberg-{self.tag}",
                                 Key={"identifier": {"S": f"{ns}.{name}"}, "namespace": {"S": ns}}).get("Item")
        if not item:
            return {}
        location = item["p.metadata_location"]["S"]
        bucket, key = location.removeprefix("s3://").split("/", 1)
        meta = json.loads(self.s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        return {s["snapshot-id"]: s["timestamp-ms"] / 1000 for s in meta.get("snapshots", [])}


def soak_one(floe: str, pool: list[bytes], rate: float, seconds: float, writers: int, settle: float) -> dict:
    stack = Stack(uuid.uuid4().hex[:8])
    procs = [subprocess.Popen([floe, "run-function", "writer", "--queue-url", stack.ingest_url, "--batch-size", "10",
                               "--retry-after-secs", "5"], env=stack.env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(writers)]
    procs.append(subprocess.Popen([floe, "run-function", "committer", "--batch-size", "100"], env=stack.env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    dropped: dict[str, float] = {}
    try:
        t0 = time.time()
        n = int(rate * seconds)
        for i in range(n):
            delay = t0 + i / rate - time.time()
            if delay > 0:
                time.sleep(delay)
            key = f"events/f-{i:06d}.avro"
            stack.s3.put_object(Bucket=stack.landing, Key=key, Body=pool[i % len(pool)])
            dropped[key] = time.time()
        deadline = time.time() + settle
        committed = {}
        while time.time() < deadline:
            committed = stack.committed()
            if len(committed) >= len(dropped):
                break
            time.sleep(1)
        times = stack.snapshot_times()
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(timeout=30)
    series = sorted((dropped[k] - t0, times[s] - dropped[k]) for k, s in committed.items() if s in times)
    lat = [l for _, l in series]
    end = max((times[s] for s in committed.values() if s in times), default=t0) - t0
    return {"rate": rate, "dropped": len(dropped), "visible": len(lat), "snapshots": len(set(committed.values())),
            "p50": pct(lat, 0.5) if lat else float("nan"), "p99": pct(lat, 0.99) if lat else float("nan"),
            "max": max(lat, default=float("nan")), "throughput": len(lat) / end if end > 0 else 0.0,
            "series": series}


def report(results: list[dict], seconds: float, writers: int) -> str:
    lines = [
        f"Each rate for {seconds:g} s through moto: S3 notifications -> SQS -> {writers} writer process(es) "
        "(`floe run-function writer`, 10 notifications per invocation) -> commit queue -> one committer "
        "(`floe run-function committer`); 3,500 events per file.",
        "",
        "| rate (files/s) | files dropped | visible | snapshots | throughput (files/s) | p50 (s) | p99 (s) | max (s) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['rate']:g} | {r['dropped']} | {r['visible']} | {r['snapshots']} | {r['throughput']:.1f} | "
                     f"{r['p50']:.2f} | {r['p99']:.2f} | {r['max']:.2f} |")
    lost = [r["rate"] for r in results if r["visible"] < r["dropped"]]
    if lost:
        lines += ["", f"Not every file was visible when the run stopped waiting at rate(s) {', '.join(f'{x:g}' for x in lost)} "
                  "files/s: the pipeline on this emulator fell behind there."]
    return "\n".join(lines)


def plot(results: list[dict], out: Path) -> Path:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for r in results:
        if r["series"]:
            xs, ys = zip(*r["series"])
            ax.plot(xs, ys, ".", markersize=3, label=f"{r['rate']:g} files/s")
    ax.set_xlabel("seconds since the first drop")
    ax.set_ylabel("drop -> visible latency (s)")
    ax.set_title("Freshness through the AWS pipeline on moto (3,500 events per file)")
    ax.legend(markerscale=4)
    ax.grid(alpha=0.3)
    path = out / "soak-moto-latency-over-time.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--floe", default=str(ROOT / "target" / "release" / "floe"))
    ap.add_argument("--rates", default="2,4,8,16,24", help="files per second, comma-separated")
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--writers", type=int, default=2)
    ap.add_argument("--pool", type=int, default=40)
    ap.add_argument("--settle", type=float, default=120, help="seconds to wait for the last file after dropping")
    ap.add_argument("--plots", default=str(ROOT / "docs" / "img"))
    ap.add_argument("--doc", help="write the results into this Markdown file's soak-moto block")
    a = ap.parse_args()
    if "AWS_ENDPOINT_URL" not in os.environ:
        raise SystemExit("run under tests/with-moto.sh (it starts moto and sets AWS_ENDPOINT_URL)")
    with tempfile.TemporaryDirectory(prefix="floe-soak-moto-") as tmp:
        subprocess.run([a.floe, "gen", "--out", tmp, "--files", str(a.pool), "--events-per-file", "3500",
                        "--tenants", "100", "--dup-rate", "0.01"], check=True, capture_output=True)
        pool = [p.read_bytes() for p in sorted(Path(tmp).glob("*.avro"))]
    results = []
    for rate in [float(r) for r in a.rates.split(",")]:
        r = soak_one(a.floe, pool, rate, a.seconds, a.writers, a.settle)
        print(f"rate {rate:g}/s: {r['visible']}/{r['dropped']} visible in {r['snapshots']} snapshots, p50 {r['p50']:.2f} s, "
              f"p99 {r['p99']:.2f} s, max {r['max']:.2f} s, throughput {r['throughput']:.1f}/s", flush=True)
        results.append(r)
    text = report(results, a.seconds, a.writers)
    path = plot(results, Path(a.plots))
    text += f"\n\n![{path.stem}](img/{path.name})"
    print(text)
    if a.doc:
        replace_block(Path(a.doc), "soak-moto", text)


if __name__ == "__main__":
    main()
