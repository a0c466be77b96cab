"""Lambda binaries: size and cold start, measured locally (`make bench-coldstart`).

Each function binary (floe-writer, floe-committer, floe-compactor) is started as Lambda starts
it, against a stand-in for the Lambda Runtime API served by this script on loopback, with the
environment the Terraform module sets (FLOE_CREATE_DYNAMODB_TABLES=false, so no table checks).
The stand-in hands out one event and records:

- init: process start (just before exec) to the runtime's first `GET .../invocation/next`,
  i.e. everything the function does before it can take an event: loading the binary, reading
  settings, building the AWS clients;
- first event: process start to the function's response to that event.

The events are the smallest each function handles without calling AWS (an empty SQS batch for
the writer and the committer, a scheduled event naming no table for the compactor), so the
figure is the function's own start-up, not the emulator's latency. Sizes are of the binaries as
built (`--bin-dir`) and stripped of symbols (`objcopy --strip-all`, as `make lambda` ships them).

`--compare-dir` measures a second build of the same binaries (the Makefile's
`bench-coldstart-lambda` passes the one `make lambda` makes: link-time optimisation, one
codegen unit, no debug info) and adds its rows and the size ratio.

    python3 tests/bench/coldstart.py [--bin-dir target/release] [--runs 7] [--doc docs/PERFORMANCE.md]
        [--compare-dir DIR --compare-label TEXT]
"""

import argparse
import http.server
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from docblock import replace_block  # noqa: E402
FUNCTIONS = {
    "floe-writer": {"Records": []},
    "floe-committer": {"Records": []},
    "floe-compactor": {
        "version": "0", "id": "cold-start", "detail-type": "Scheduled Event", "source": "aws.events",
        "account": "123456789012", "time": "2026-12-01T00:00:00Z", "region": "us-east-1",
        "resources": [], "detail": {"tables": []},
    },
}


class RuntimeApi(http.server.BaseHTTPRequestHandler):
    """One invocation: `next` returns the event once (later calls block until the process is
    killed); `response`/`error` record when the function answered."""

    event: bytes = b"{}"
    served = threading.Event()
    first_next: float | None = None
    answered: float | None = None
    outcome: str = ""

    def log_message(self, *args):  # quiet
        pass

    def do_GET(self):
        cls = type(self)
        if not self.path.endswith("/invocation/next"):
            self.send_error(404)
            return
        if cls.served.is_set():
            time.sleep(30)
            return
        cls.first_next = time.perf_counter()
        cls.served.set()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Lambda-Runtime-Aws-Request-Id", "cold-start-1")
        self.send_header("Lambda-Runtime-Deadline-Ms", str(int(time.time() * 1000) + 60_000))
        self.send_header("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:f")
        self.send_header("Content-Length", str(len(cls.event)))
        self.end_headers()
        self.wfile.write(cls.event)

    def do_POST(self):
        cls = type(self)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        cls.answered = time.perf_counter()
        cls.outcome = ("error: " if "/error" in self.path else "") + body.decode(errors="replace")[:200]
        self.send_response(202)
        self.send_header("Content-Length", "0")
        self.end_headers()


def environment(port: int, name: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOE_", "AWS_"))}
    env.update({
        "AWS_LAMBDA_RUNTIME_API": f"127.0.0.1:{port}",
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1769",
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        # Nothing listens here: an AWS call during start-up would show as an error.
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "FLOE_WAREHOUSE": "s3://warehouse/floe",
        "FLOE_CATALOG": "dynamodb",
        "FLOE_CATALOG_TABLE": "floe-catalog",
        "FLOE_LOCK_TABLE": "floe-locks",
        "FLOE_LEDGER_TABLE": "floe-ledger",
        "FLOE_COMMIT_QUEUE_URL": "http://127.0.0.1:9/000000000000/floe-commit",
        "FLOE_INGEST_QUEUE_URL": "http://127.0.0.1:9/000000000000/floe-ingest",
        "FLOE_CREATE_DYNAMODB_TABLES": "false",
        "RUST_LOG": "warn",
    })
    return env


def one_start(binary: Path, name: str) -> tuple[float, float, str]:
    RuntimeApi.event = json.dumps(FUNCTIONS[name]).encode()
    RuntimeApi.served = threading.Event()
    RuntimeApi.first_next = RuntimeApi.answered = None
    RuntimeApi.outcome = ""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RuntimeApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    start = time.perf_counter()
    proc = subprocess.Popen([str(binary)], env=environment(server.server_port, name),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = start + 30
        while RuntimeApi.answered is None and time.perf_counter() < deadline and proc.poll() is None:
            time.sleep(0.0005)
    finally:
        proc.kill()
        _, err = proc.communicate()
        server.shutdown()
        server.server_close()
    if RuntimeApi.answered is None or RuntimeApi.first_next is None:
        raise SystemExit(f"{name}: no answer to its first event; stderr:\n{err.decode(errors='replace')[-2000:]}")
    return (RuntimeApi.first_next - start) * 1000, (RuntimeApi.answered - start) * 1000, RuntimeApi.outcome


def stripped_size(binary: Path, scratch: Path) -> int:
    out = scratch / (binary.name + ".stripped")
    subprocess.run(["objcopy", "--strip-all", str(binary), str(out)], check=True)
    return out.stat().st_size


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin-dir", default=str(ROOT / "target" / "release"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--doc", help="write the results into this Markdown file's coldstart block")
    ap.add_argument("--compare-dir", help="a second build of the same binaries to measure")
    ap.add_argument("--compare-label", default="compared", help="what the second build is")
    a = ap.parse_args()
    builds = [("as built", Path(a.bin_dir))]
    if a.compare_dir:
        builds.append((a.compare_label, Path(a.compare_dir)))
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        for label, bin_dir in builds:
            for name in FUNCTIONS:
                rows.append((label, *measure(bin_dir / name, name, a.runs, Path(scratch))))
    lines = [
        f"Median of {a.runs} starts each (after one start to warm the page cache), this machine:",
        "",
        "| function | build | binary (MB) | stripped (MB) | init (ms) | first event handled (ms) | slowest (ms) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for label, name, size, stripped, init, first, worst in rows:
        lines.append(f"| {name} | {label} | {size / 1e6:.1f} | {stripped / 1e6:.1f} | {init:.1f} | {first:.1f} | {worst:.1f} |")
    if a.compare_dir:
        base = sum(r[3] for r in rows if r[0] == "as built")
        other = sum(r[3] for r in rows if r[0] == a.compare_label)
        lines += ["", f"Stripped size, {a.compare_label} / as built: {other / base:.2f}x."]
    text = "\n".join(lines)
    print(text)
    if a.doc:
        replace_block(Path(a.doc), "coldstart", text)


def measure(binary: Path, name: str, runs: int, scratch: Path):
    if not binary.exists():
        raise SystemExit(f"{binary} is missing: build it first (cargo build --release --workspace)")
    one_start(binary, name)  # warm the page cache: Lambda's own cache is not measured
    starts = [one_start(binary, name) for _ in range(runs)]
    outcome = starts[-1][2]
    if outcome.startswith("error"):
        raise SystemExit(f"{name} answered its first event with an error: {outcome}")
    return (name, binary.stat().st_size, stripped_size(binary, scratch), statistics.median(r[0] for r in starts),
            statistics.median(r[1] for r in starts), max(r[1] for r in starts))


if __name__ == "__main__":
    if shutil.which("objcopy") is None:
        raise SystemExit("objcopy (binutils) is needed to measure stripped sizes")
    main()
