"""Scale and cost model of Floe on AWS for the target workload (`make bench-model`).

Plays 40,000 Avro files a minute (~3,500 events each, ~200 billion events a day) into one table
partitioned by day(event_time) and tenant through the writers, one committer and the compactors,
for a simulated day in 1-minute steps, and reports per role: Lambda concurrency and GB-seconds,
files per commit, commit interval, the committer's utilisation and the ingest rate at which one
committer per table saturates, manifests and metadata.json over the day, S3/SQS/DynamoDB request
counts, and the cost per TB of Avro ingested at list prices, against Amazon Data Firehose.

Measured inputs: the writer's events per CPU-second (`floe bench --json`), and, by running the
binary here (~1 minute), the committer's cost per commit and per data file (`floe bench-table`,
`floe ingest --metrics-json`), the compactor's rate and the rewrite commit cost (`floe compact`,
CPU from wait4), Parquet and manifest bytes per row. Everything else is a named assumption in
table K below (value and source, printed in the report); `--set NAME=VALUE` overrides any.
The AWS requests per unit of work are counted from the code (file:function in REQUESTS).

    python tests/bench/model.py --bench-json target/bench/bench.json [--floe target/release/floe]
        [--doc docs/PERFORMANCE.md] [--img-dir docs/img] [--quick] [--diurnal] [--set K=V ...]
"""

import argparse
import csv
import json
import math
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from docblock import replace_block  # noqa: E402

MB, MIB, GB, TB = 1e6, 2**20, 1e9, 1e12
AS_OF = "as of 2026, AWS public price pages (us-east-1)"
# name: [value, source]. Prices first; `--set NAME=VALUE` overrides any entry.
K = {
    "LAMBDA_GB_S": [0.0000133334, f"Lambda arm64 $ per GB-second, {AS_OF}"],
    "LAMBDA_REQ": [0.20 / 1e6, f"Lambda $ per request ($0.20 per 1M), {AS_OF}"],
    "S3_PUT": [0.005 / 1000, f"S3 Standard PUT/COPY/POST/LIST $ per request, {AS_OF}"],
    "S3_GET": [0.0004 / 1000, f"S3 Standard GET $ per request; DELETE is free, {AS_OF}"],
    "S3_GB_MONTH": [0.023, f"S3 Standard storage $ per GB-month (reported apart), {AS_OF}"],
    "SQS_REQ": [0.40 / 1e6, f"SQS standard $ per request, each 64 KB chunk of a payload one request, {AS_OF}"],
    "DDB_WRU": [0.625 / 1e6, f"DynamoDB on-demand $ per write request unit, {AS_OF}"],
    "DDB_RRU": [0.125 / 1e6, f"DynamoDB on-demand $ per read request unit, {AS_OF}"],
    "DDB_GB_MONTH": [0.25 + 0.20, f"DynamoDB storage + PITR $ per GB-month (infra/catalog.tf enables PITR), {AS_OF}"],
    "CW_LOGS_GB": [0.50, f"CloudWatch Logs ingestion $ per GB, {AS_OF}"],
    "FIREHOSE_ICEBERG_PER_GB": [0.075, "Amazon Data Firehose to Apache Iceberg Tables, published $ per GB ingested, "
                                "first 250 TB/month tier: the figure given with this task, NOT verified here; check "
                                "aws.amazon.com/firehose/pricing before quoting"],
    # Workload (the issue; ../shared/bench/README.md for the tenant skew and late events)
    "FILES_PER_MIN": [40000, "target workload (issue)"],
    "EVENTS_PER_FILE": [3500, "target workload (issue)"],
    "TENANTS": [100, "gen_events.py default --partitions"],
    "ZIPF_S": [1.2, "gen_events.py default --zipf-s: weight of tenant k ~ 1/(k+1)^s"],
    "LATE_FRAC": [0.03, "gen_events.py: 3% of events late by exponential(mean 30 s)"],
    "LATE_MEAN_S": [30, "gen_events.py"],
    "OFFLINE_FRAC": [0.005, "gen_events.py: 0.5% late by up to 2 h (taken as uniform)"],
    "OFFLINE_MAX_S": [7200, "gen_events.py"],
    "DIURNAL_AMPLITUDE": [0.5, "--diurnal only: rate = mean x (1 + A cos(2pi (t - 14:00)/24 h)); assumed shape"],
    # Deployment (infra/variables.tf defaults, infra/locals.tf, shared/src defaults)
    "WRITER_BATCH": [1000, "infra/variables.tf writer_batch_size (SQS event source batch size; read from there)"],
    "EXPECTED_OBJECT_MB": [2, "infra/variables.tf expected_object_mb (sizes writer memory in infra/locals.tf; read from there)"],
    "WRITER_MAX_CONCURRENCY": [100, "infra/variables.tf writer_max_concurrency"],
    "COMMIT_BATCH": [1000, "infra/variables.tf committer_batch_size"],
    "COMMIT_WINDOW_S": [5, "infra/variables.tf committer_batching_window_seconds"],
    "COMMITTER_MB": [1769, "infra/variables.tf committer_memory_mb (read from there)"],
    "COMPACTOR_MB": [3008, "infra/variables.tf compactor_memory_mb"],
    "COMPACT_TICK_S": [300, "infra/variables.tf compactor_schedule rate(5 minutes)"],
    "COMPACT_MAX_TASKS": [3, "infra/variables.tf compactor_max_tasks (FLOE_COMPACT_MAX_TASKS; read from there): tasks of one share, one invocation"],
    "COMPACT_MAX_INVOCATIONS": [200, "infra/variables.tf compactor_max_invocations (FLOE_COMPACT_MAX_INVOCATIONS; read from there): shares of a tick, its own included"],
    "COMPACT_TIMEOUT_S": [900, "infra/variables.tf compactor_timeout_seconds"],
    "COMPACT_PARALLEL": [2, "compact::CompactOptions parallelism = available cores (2 at 3008 MB)"],
    "MAX_TASK_BYTES": [512 * MIB, "compactor.rs: min(memory/4, 512 MiB)"],
    "TARGET_FILE_BYTES": [128 * MIB, "ARCHITECTURE.md#the-compactor: write.target-file-size-bytes default"],
    "MIN_FILES": [8, "compact::plan Policy min_files default"],
    "MERGE_PAST": [100, "table/merge.rs MergePolicy: commit.manifest.min-count-to-merge"],
    "MANIFEST_TARGET": [8 * MIB, "table/snapshot.rs MergePolicy: manifests >= 8 MiB are never merged"],
    "HISTORY_DAYS": [30, "days of compacted data the table holds (assumed retention); their files are manifest entries"],
    "SNAPSHOT_MAX_AGE_S": [3600, "table/create.rs: history.expire.max-snapshot-age-ms on tables Floe creates"],
    "EXPIRE_BATCH": [8, "table/maintain.rs EXPIRE_BATCH"],
    "CLAIM_CHECK_BYTES": [240 * 1024, "adapters/aws/sqs_queue.rs CLAIM_CHECK_THRESHOLD"],
    "LISTED_BATCH_IDS": [50, "pipeline/commit/append.rs LISTED_BATCHES (ids in each snapshot summary)"],
    # Code-level knobs: the code as it is
    "LEDGER_PARALLEL": [32, "adapters/aws/dynamodb_ledger.rs record: one UpdateItem per source, MARKS_IN_FLIGHT = 32 at once"],
    "LEDGER_WRITES": [1, "commit/append.rs: ledger writes per source (pending before the swap; one landed record a commit "
                      "after it); 2: the ledger before landed records (pending, then committed)"],
    "WRITER_LOOKUP_RRU": [0.5, "adapters/aws/mod.rs writer_cold_start: the writers' ledger lookups read eventually "
                          "consistent items (0.5 RRU an item; the committer's are consistent, 1 RRU)"],
    "DELETE_PARALLEL": [64, "table/maintain.rs DELETE_PARALLEL: Cleanup::run deletes expired files 64 at a time"],
    "FETCHES_IN_FLIGHT": [8, "pipeline/write.rs FETCHES_IN_FLIGHT: a writer batch's objects fetched ahead, in order"],
    "UPLOADS_IN_FLIGHT": [16, "pipeline/write.rs UPLOADS_IN_FLIGHT: a writer batch's data files uploaded side by side"],
    "CLAIMS_IN_FLIGHT": [16, "handlers/mod.rs CLAIMS_IN_FLIGHT: a committer invocation's claim checks read, then deleted, 16 at a time"],
    "INPUTS_IN_FLIGHT": [16, "compact/mod.rs INPUTS_IN_FLIGHT: a compaction task's input files fetched 16 at a time"],
    "REFERENCES_IN_FLIGHT": [8, "compact/keys.rs REFERENCES_IN_FLIGHT: a task's dedup references probed 8 at a time (whole key columns one at a time)"],
    "REWRITES_PER_SNAPSHOT": [100, "commit/rewrite.rs REWRITES_PER_SNAPSHOT: a batch's rewrite requests share a snapshot, 100 at most"],
    "REF_READ_FRACTION": [0.12, "compact/keys.rs: references read by ranged GETs of footer and key column (measured)"],
    "REF_GETS": [2, "compact/keys.rs: a ranged GET of the footer (64 KiB hint), then one of the key column chunk"],
    "DEDUP_WINDOW_S": [0, "table property floe.dedup-window-ms (compact/plan.rs Policy dedup_cut); 0: exact dedup against the whole partition"],
    "KEY_CONFINED": [1, "1: the dedup key follows event time (time-ordered ids, or the key `event_time, event_id` this model's "
                     "table uses), so the key index (compact/prune.rs) reads only the files and key pages that may hold a "
                     "task's keys; 0: random ids, every reference's key column (make bench-dedup)"],
    "LATE_DEFERRED": [1, "compact/plan.rs late files (docs/ARCHITECTURE.md, \"Late keys, once per partition\"): level-0 tasks "
                      "leave rows LATE_AFTER_S behind their snapshot to late files, which one task a partition a tick probes "
                      "against the window; 0: each task probes its own late keys (before late files)"],
    "LATE_AFTER_S": [600, "table/mod.rs DEFAULT_LATE_AFTER_MS (floe.late-after-ms): rows this far behind their task's snapshot are late"],
    "KEY_PAGE_ROWS": [1024, "convert/parquet.rs KEY_PAGE_BYTES: 16 KiB key pages of 16-byte ids"],
    "KEY_COALESCE_GAP": [1 << 20, "compact/keys.rs COALESCE_GAP: key page ranges less than 1 MiB apart share a GET"],
    "FOOTER_READ_BYTES": [64 * 1024, "compact/keys.rs FOOTER_HINT: a candidate reference's footer and page index, one ranged GET"],
    "SHARED_KEY_BYTES": [256 * MIB, "compactor.rs: min(memory/8, 256 MiB): reference keys a run keeps for its tasks (keys.rs KeyIndex); past it each task streams its references"],
    # AWS behaviour (not measured here: typical in-region figures; AWS's S3 guidelines quote
    # 100-200 ms for small objects, so the S3 latencies below are on the optimistic side)
    "MB_PER_VCPU": [1769, "Lambda: 1,769 MB = one vCPU, CPU share proportional below"],
    "ARM_SPEED": [1.0, "Graviton core speed / this machine's core (assumed equal; not measured)"],
    "S3_GET_MS": [30, "S3 GET first byte from Lambda in-region, typical p50 (assumed)"],
    "S3_PUT_MS": [50, "S3 PUT of a small object from Lambda, typical p50 (assumed)"],
    "S3_DELETE_MS": [20, "S3 DELETE, typical p50 (assumed)"],
    "S3_MBPS": [88, "per-connection S3 throughput, MB/s (S3 performance guidelines: 85-90 MB/s per request)"],
    "DDB_MS": [5, "DynamoDB single-item read/write latency ('single-digit ms', assumed 5)"],
    "DDB_BATCH_MS": [12, "DynamoDB BatchGetItem of up to 100 keys (assumed)"],
    "SQS_MS": [15, "SQS SendMessage latency (assumed)"],
    "INVOKE_MS": [5, "Lambda runtime overhead per invocation, billed (assumed)"],
    "LAMBDA_PAYLOAD": [6 * MB, "Lambda synchronous payload limit: an SQS event source stops a batch there"],
    "ESM_RECORD_BYTES": [800, "SQS event record around a body: ids, receipt handle, attributes (assumed)"],
    "JSON_ESCAPE": [1.12, "a JSON body re-escaped inside the event (~12% quote characters, sample events)"],
    "S3_EVENT_BYTES": [1200, "one S3 ObjectCreated notification body (assumed)"],
    "FILE_META_JSON": [1580, "DataFileMeta JSON per data file (message.rs): a floe gen table's manifest entries "
                       "re-serialised in that layout with fastavro, once (1,543-1,663 B)"],
    "SOURCE_REF_JSON": [350, "SourceRef JSON per source object (message.rs; URI, id, size, rows, version)"],
    "PATH_BYTES": [160, "one data file path in a rewrite request's removed list"],
    "KEY_BYTES_PER_ROW": [16, "event_id uuid, fixed[16], incompressible: the dedup key column per row"],
    "KEY_ROW_NS": [100, "decode + box + hash-set insert of one reference key (compact/keys.rs KeyIndex::read; assumed)"],
    "KEY_SET_BYTES": [48, "memory per reference key: Box<[u8]> of a 17-byte row + HashSet slot (assumed)"],
    "LOG_BYTES_OBJECT": [0, "writer log bytes per object read: the `object read` line is debug (RUST_LOG=info logs one line a "
                         "batch, pipeline/write.rs); it was 300 B at info"],
    "LOG_BYTES_INVOKE": [1500, "EMF line + writer/committer batch lines + START/END/REPORT per invocation"],
    "LEDGER_ITEM_BYTES": [300, "DynamoDB ledger item (pk table|uri#etag, state, snapshot ids); kept FLOE_LEDGER_TTL_DAYS"],
    # Measured by this script (defaults: a run on the 2-core CI VM, 2026-12-01; --quick uses them)
    "WRITER_EV_CPU_S": [318894, "measured: bench.json 'writer path' events per CPU-second"],
    "WRITER_BENCH_EVENTS": [350000, "floe bench: events per writer batch its WRITER_EV_CPU_S is measured on (200 files of 3,500 events, 2 batches)"],
    "WRITER_BIG_EV_CPU_S": [161000, "measured: make bench-scale (--scale-json), one writer batch of the preset's size: events per CPU-second "
                            "(between the two batch sizes the rate is interpolated in log-log)"],
    "WRITER_BIG_EVENTS": [3500000, "measured: make bench-scale, the events of that batch (1,000 files of 3,500 events)"],
    "DECODE_EV_CPU_S": [1583530, "measured: bench.json 'decode arrow-avro' events per CPU-second"],
    "AVRO_B_PER_EVENT": [174.0, "measured: bench.json avro_bytes / events"],
    "COMMIT_MS": [3.6, "measured: floe bench-table median append latency (embedded; CPU + local I/O)"],
    "APPEND_FILE_MS": [0.25, "measured: floe ingest --metrics-json, (commit ms - COMMIT_MS)/files"],
    "REWRITE_ENTRY_MS": [0.04, "measured: floe compact --full, rewrite-commit CPU per manifest entry rewritten"],
    "COMPACT_MB_CPU_S": [24.5, "measured: floe compact --full, Parquet MB merged per task-second (1 task)"],
    "PARQUET_L0_RATIO": [0.83, "measured: writer Parquet bytes / Avro bytes (floe gen + floe ingest)"],
    "PARQUET_C_RATIO": [0.71, "measured: compacted Parquet bytes / Avro bytes (floe compact --full)"],
    "ENTRY_BYTES": [790, "measured: manifest Avro bytes per data file entry"],
    "META_BASE": [18000, "measured: bench-table metadata.json bytes at 0 snapshots (schema, specs, 100-entry log)"],
    "SNAP_BYTES": [865, "measured: bench-table metadata.json bytes per snapshot kept"],
    "BENCH_TABLE_WA": [0.43, "measured: bench-table write amplification (small table; rows not yet in L2)"],
}


def k(name):
    return K[name][0]


# AWS requests per unit of work, counted from the code (rendered in the report).
REQUESTS = [
    ("writer batch", "DynamoDB BatchGetItem, eventually consistent", "ceil(n/100) calls, n/2 RRU", "pipeline/write.rs write -> DynamoDbLedger::lookup"),
    ("writer batch", "S3 GET (versionId + If-Match), in turn", "n", "write.rs fetch_and_read -> S3ObjectStore::get_version"),
    ("writer batch", "S3 PUT If-None-Match, in turn with encoding", "one per data file", "write.rs write/put_data_file"),
    ("writer batch", "SQS SendMessage (+ S3 PUT if > 240 KiB)", "1 (64 KB chunks)", "write.rs write -> SqsQueue::send"),
    ("writer batch", "SQS receive / DeleteMessageBatch (event source)", "ceil(n/10) each", "infra/functions.tf aws_lambda_event_source_mapping.writer"),
    ("warm writer, per 60 s", "DynamoDB GetItem + S3 GET metadata.json", "1 + 1", "lambda/writer.rs writer_table -> create::load_checked"),
    ("source object", "SQS SendMessage by S3 notification", "1", "infra/storage.tf bucket notification"),
    ("writer", "S3 HEAD", "0 in steady state: only for a notification without size/ETag, or a PUT conflict",
     "handlers/mod.rs handle_writer, write.rs put_data_file"),
    ("commit", "DynamoDB PutItem lock / DeleteItem release", "1 + 1 WRU", "commit/mod.rs acquire, commit_table -> DynamoDbLock"),
    ("commit", "DynamoDB GetItem pointer", "1 RRU", "commit/mod.rs state -> DynamoDbTablePointer::load"),
    ("commit", "DynamoDB BatchGetItem ledger (+ landed records of pending marks)", "ceil(S/100) calls, S RRU", "commit/append.rs commit_appends -> lookup"),
    ("commit", "DynamoDB UpdateItem pending, one per source, 32 in flight", "S", "append.rs -> DynamoDbLedger::record_pending"),
    ("commit", "DynamoDB UpdateItem heartbeat, swap", "1 + 1", "commit/mod.rs publish -> heartbeat, swap"),
    ("commit", "DynamoDB PutItem landed, one per snapshot", "1", "append.rs -> DynamoDbLedger::record_landed"),
    ("commit", "DynamoDB PutItem landed, per snapshot expired", "1 per append expired", "commit/mod.rs expiring -> record_landed"),
    ("commit", "S3 PUT manifest, manifest list, metadata.json", "3 (+ merged manifest, dropped record)", "table/snapshot.rs plan_snapshot, mod.rs publish"),
    ("commit", "S3 DELETE old metadata.json, expired lists, dropped files", "1 + expired, in turn", "mod.rs publish, table/maintain.rs Cleanup::run"),
    ("commit", "S3 GET claim check, then DELETE once settled, 16 at a time", "per message > 240 KiB", "handlers/mod.rs commit_messages, handle_committer"),
    ("compaction tick", "S3 GET metadata.json, list, every manifest", "2 + manifests", "compact/mod.rs plan_table"),
    ("compaction task", "S3 GET inputs (16 at a time), then dedup references' footers and key pages", "inputs + references", "compact/mod.rs run_task, keys.rs"),
    ("compaction task", "S3 PUT outputs; SQS rewrite request (+ claim check)", "outputs + 1", "compact/mod.rs run_task"),
    ("rewrite commit", "S3 PUT every manifest holding a removed file", "manifests touched + 3", "snapshot.rs removal_slots"),
]


def run(cmd):
    """Runs cmd (exit 0); returns its output and the CPU seconds it used (rusage of children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return out, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def measure(floe, work):
    """Commit and compaction costs and byte ratios from the binary (about a minute)."""
    m = {}
    bt = work / "bt.csv"
    out, _ = run([floe, "bench-table", "--out", bt, "--commits", "300", "--compact-every", "100"])
    rows = [r for r in csv.DictReader(open(bt)) if r["kind"] == "append" and int(r["commit"]) > 120]
    m["COMMIT_MS"] = statistics.median(float(r["latency_ms"]) for r in rows)
    fit = statistics.linear_regression([float(r["snapshots"]) for r in rows], [float(r["metadata_bytes"]) for r in rows])
    m["SNAP_BYTES"], m["META_BASE"] = fit.slope, fit.intercept
    m["BENCH_TABLE_WA"] = float(re.search(r"write amplification\s+([\d.]+)", out).group(1))
    gen, wh = work / "gen", work / "wh"
    run([floe, "gen", "--out", gen, "--files", 100, "--events-per-file", k("EVENTS_PER_FILE"),
         "--tenants", k("TENANTS"), "--dup-rate", 0.01])
    avro = sum(p.stat().st_size for p in gen.glob("*.avro"))
    run([floe, "ingest", gen, "--warehouse", wh, "--table", "m.events", "--partition-by",
         "day(event_time),identity(tenant_id)", "--sort-by", "tenant_id,event_time", "--dedup-key", "event_id",
         "--writers", 1, "--batch-objects", 10, "--metrics-json", work / "m.json"])
    obs = json.load(open(work / "m.json"))["observed"]
    lat, files = obs["commit_latency_ms"], obs["files_per_commit"]
    m["APPEND_FILE_MS"] = max(0.0, (lat["sum"] - lat["count"] * m["COMMIT_MS"]) / files["sum"])
    table = wh / "m.db" / "events"
    l0 = sum(p.stat().st_size for p in (table / "data").rglob("*.parquet"))
    m["PARQUET_L0_RATIO"] = l0 / avro
    m["ENTRY_BYTES"] = sum(p.stat().st_size for p in (table / "metadata").glob("*-m*.avro")) / files["sum"]
    out, cpu = run([floe, "compact", "--warehouse", wh, "--table", "m.events", "--full", "--parallelism", 1])
    got = re.search(r"(\d+) file\(s\) merged into (\d+).*?([\d.]+) MB read.*? in ([\d.]+) s; (\d+) rewrite", out, re.S)
    n_in, n_out, mb_read, task_s, rewrites = (float(x) for x in got.groups())
    m["COMPACT_MB_CPU_S"] = mb_read / task_s
    m["REWRITE_ENTRY_MS"] = max(0.0, cpu - task_s) * 1000 / (rewrites * (n_in + n_out) / 2)
    compacted = sum(p.stat().st_size for p in (table / "data").rglob("L*.parquet"))
    m["PARQUET_C_RATIO"] = compacted / avro
    # A second day's worth of files on top: its level-0 merge reads the compacted files' keys.
    gen2 = work / "gen2"
    run([floe, "gen", "--out", gen2, "--files", 20, "--events-per-file", k("EVENTS_PER_FILE"),
         "--tenants", k("TENANTS"), "--seed", 7])
    run([floe, "ingest", gen2, "--warehouse", wh, "--table", "m.events", "--writers", 1, "--batch-objects", 10])
    out, _ = run([floe, "compact", "--warehouse", wh, "--table", "m.events", "--min-files", 2, "--parallelism", 1])
    got = re.search(r"dedup keys of (\d+) reference file\(s\) of ([\d.]+) MB: ([\d.]+) MB read", out)
    m["REF_READ_FRACTION"] = float(got.group(3)) / float(got.group(2))
    return m


# ---------------------------------------------------------------- workload
def tenant_shares():
    w = [1 / (i + 1) ** k("ZIPF_S") for i in range(int(k("TENANTS")))]
    return [x / sum(w) for x in w]


def late_fraction(t):
    """Share of events arriving t seconds after midnight that belong to the previous day."""
    off = k("OFFLINE_FRAC") * max(0.0, 1 - t / k("OFFLINE_MAX_S"))
    return k("LATE_FRAC") * math.exp(-t / k("LATE_MEAN_S")) + off


def distinct(n, shares):
    """Expected distinct tenants among n events."""
    return sum(1 - (1 - p) ** n for p in shares) if n > 0 else 0.0


def vcpu(mb):
    return min(1.0, mb / k("MB_PER_VCPU")) * k("ARM_SPEED")


def put_s(nbytes):
    return k("S3_PUT_MS") / 1000 + nbytes / (k("S3_MBPS") * MB)


def get_s(nbytes):
    return k("S3_GET_MS") / 1000 + nbytes / (k("S3_MBPS") * MB)


def writer_rate(n):
    """The writer's events per CPU-second for a batch of n events: measured at floe bench's batch
    and at the preset's (make bench-scale); bigger batches run slower per event (more memory
    touched per row: page faults and allocator time dominate a profile of the big one)."""
    n0, r0, n1, r1 = k("WRITER_BENCH_EVENTS"), k("WRITER_EV_CPU_S"), k("WRITER_BIG_EVENTS"), k("WRITER_BIG_EV_CPU_S")
    if n <= n0 or n1 <= n0:
        return r0
    if n >= n1:
        return r1
    return r0 * (r1 / r0) ** (math.log(n / n0) / math.log(n1 / n0))


def writer_memory(batch):
    """infra/locals.tf writer_memory: 3 x Avro bytes of a batch + 100 MB, 64 MB steps, from 1024
    to 2048 (past it a batch is written in rounds of a third of the memory past 100 MB, each its
    own files: priced as one batch while the workload's objects fit a round)."""
    cap = max(2048, math.ceil((8 * k("EXPECTED_OBJECT_MB") + 100) / 64) * 64)
    return min(cap, max(1024, math.ceil((3 * batch * k("EXPECTED_OBJECT_MB") + 100) / 64) * 64), 10240)


# ---------------------------------------------------------------- roles
def writer(files_s, q, shares):
    """One writer batch at this rate: its shape, wall time and the role's totals per second."""
    record = k("S3_EVENT_BYTES") * k("JSON_ESCAPE") + k("ESM_RECORD_BYTES")
    b = min(k("WRITER_BATCH"), k("LAMBDA_PAYLOAD") // record)
    n = b * k("EVENTS_PER_FILE")
    d = distinct(n * (1 - q), shares) + distinct(n * q, shares)
    mem = writer_memory(b)
    cpu = n / writer_rate(n) / vcpu(mem)
    dec = n / k("DECODE_EV_CPU_S") / vcpu(mem)
    obj = k("EVENTS_PER_FILE") * k("AVRO_B_PER_EVENT")
    fbytes = n * k("AVRO_B_PER_EVENT") * k("PARQUET_L0_RATIO") / d
    msg = 300 + b * k("SOURCE_REF_JSON") + d * k("FILE_META_JSON")
    claim = msg > k("CLAIM_CHECK_BYTES")
    # objects fetched FETCHES_IN_FLIGHT ahead of the decoder, files uploaded UPLOADS_IN_FLIGHT at once
    fetch = max(dec, math.ceil(b / k("FETCHES_IN_FLIGHT")) * get_s(obj))
    upload = math.ceil(d / k("UPLOADS_IN_FLIGHT")) * put_s(fbytes)
    wall = (math.ceil(b / 100) * k("DDB_BATCH_MS") / 1000 + fetch
            + max(cpu - dec, upload) + k("SQS_MS") / 1000 + claim * put_s(msg) + k("INVOKE_MS") / 1000)
    nb = files_s / b
    return dict(b=b, n=n, d=d, mem=mem, wall=wall, batches_s=nb, conc=nb * wall, msg=msg, claim=claim,
                files_s=nb * d, fbytes=fbytes, gbs=nb * wall * mem / 1024)


def append_time(m, w, meta_bytes):
    """Seconds one append commit of m manifests takes (commit/append.rs commit_appends)."""
    s, f = m * w["b"], m * w["d"]
    cpu = (k("COMMIT_MS") + k("APPEND_FILE_MS") * f) / 1000 / vcpu(k("COMMITTER_MB"))
    ddb = (8 + 1 / k("EXPIRE_BATCH")) * k("DDB_MS") / 1000 + math.ceil(s / 100) * k("DDB_BATCH_MS") / 1000
    ledger = k("LEDGER_WRITES") * s * k("DDB_MS") / 1000 / k("LEDGER_PARALLEL")
    claims = math.ceil(m / k("CLAIMS_IN_FLIGHT")) * w["claim"] * (get_s(w["msg"]) + k("S3_DELETE_MS") / 1000)
    s3 = put_s(f * k("ENTRY_BYTES")) + put_s(2000) + put_s(meta_bytes) + claims
    return cpu + ddb + ledger + s3 + k("S3_DELETE_MS") / 1000


def commit_cap(w):
    body = 400 if w["claim"] else w["msg"]
    return max(1, min(k("COMMIT_BATCH"), int(k("LAMBDA_PAYLOAD") // (body * k("JSON_ESCAPE") + k("ESM_RECORD_BYTES")))))


def committer(w, other, meta_bytes):
    """Batch size, interval and utilisation of appends when `other` (0..) of the committer's time
    goes to rewrites and deletes. Over 1, every kind of work is served in proportion (1/rho)."""
    lam, cap = w["batches_s"], commit_cap(w)
    free = max(0.05, 1 - other)
    m = 1.0
    for _ in range(60):  # fixed point: m manifests arrive while the last commit runs (or the window)
        c = max(k("COMMIT_WINDOW_S"), append_time(m, w, meta_bytes) / free)
        m = min(cap, max(1.0, lam * c))
    t = append_time(m, w, meta_bytes)
    rho = other + lam * t / m
    served = lam / max(1.0, rho)
    return dict(m=m, cap=cap, t=t, interval=m / served, rho=rho, rho_append=lam * t / m, served=served,
                files=m * w["d"], backlog_h=(lam - served) * 3600)


def key_page_reads(touched, pages, files):
    """Pages fetched and GETs for `touched` key pages scattered at random over `pages` pages of
    `files` files, where pages less than KEY_COALESCE_GAP apart share a GET (compact/keys.rs
    coalesce): per file, a page starts a new GET when the gap to the one before exceeds the
    gap (probability exp(-density x gap)); a merged gap is fetched too."""
    per_file, span = touched / files, pages / files
    if per_file <= 1:
        return touched, touched
    gap = k("KEY_COALESCE_GAP") / (k("KEY_PAGE_ROWS") * k("KEY_BYTES_PER_ROW"))
    rate = per_file / span  # touched pages per page
    new = math.exp(-rate * gap)
    gets = 1 + (per_file - 1) * new
    merged_gap = 1 / rate - gap * new / max(1e-12, 1 - new)  # mean gap, given it is under the limit
    fetched = min(span, per_file + (per_file - gets) * max(0.0, merged_gap))
    return fetched * files, gets * files


def chain(c, mt, shared):
    """Bytes a chain of c tasks reads as references to the inputs of the tasks before it
    (compact/plan.rs chain): each task all earlier ones, or each input once if shared."""
    return (c - 1) * mt if shared else c * (c - 1) / 2 * mt


def key_mem(parquet_bytes):
    """Memory of the keys of the rows in `parquet_bytes` of compacted Parquet, held in a set."""
    return parquet_bytes / (k("AVRO_B_PER_EVENT") * k("PARQUET_C_RATIO")) * k("KEY_SET_BYTES")


def compaction(q0, files0, today_c, yest_c, late_y, shares, commits_tick, meta, live, today_live, files_commit,
               batch_events):
    """One compactor tick for the L0 bytes q0 (files0 files) written since the last one: tasks,
    bytes, requests, Lambda-seconds, and the committer's time for the rewrites
    (compact/plan.rs plan_partition, compact/mod.rs run_task, commit/rewrite.rs, snapshot.rs)."""
    tgt, mt = k("TARGET_FILE_BYTES"), k("MAX_TASK_BYTES")
    q1 = q0 * k("PARQUET_C_RATIO") / k("PARQUET_L0_RATIO")
    t0 = t2 = refs = ch0 = ch2 = 0.0
    if k("DEDUP_WINDOW_S"):
        # references: the compacted files planned within the window, and those of the ticks that
        # made them (a file's sequence number is its plan's)
        span = (k("DEDUP_WINDOW_S") + 2 * k("COMPACT_TICK_S")) / k("COMPACT_TICK_S")
        today_c = min(today_c, q1 * span)
        yest_c = min(yest_c, q1 * span)
    # a writer batch writes one file per partition it holds rows of: a partition's level-0 files
    present = [1 - (1 - p) ** batch_events for p in shares]
    ch0_files = 0.0
    q2 = 0.0  # level-1 bytes merged into level 2
    for p, y, pr in zip(shares, late_y, present):
        c0 = math.ceil(q0 * p / mt)  # L0 -> L1 of today's partition; references: all its compacted files
        # L1 -> L2, no references: with exact dedup only the level-1 files under half the target
        # (compact/plan.rs), each task's last file when it is; under a dedup window all of them
        rem = q1 * p / c0 % tgt
        l1 = q1 * p if k("DEDUP_WINDOW_S") else c0 * rem * (rem < tgt / 2)
        q2 += l1
        c2 = math.ceil(l1 / mt) if l1 >= tgt else 1 / k("MIN_FILES")
        t0, t2 = t0 + c0 + y, t2 + c2
        # a run keeps a reference's keys for the chain's other tasks while they fit its budget
        shared = key_mem(today_c * p + c0 * mt) <= k("SHARED_KEY_BYTES")
        refs += (1 if shared else c0) * today_c * p + y * yest_c * p  # late rows: yesterday's too
        ch0, ch2 = ch0 + chain(c0, mt, shared), ch2 + chain(max(c2, 1), mt, True)
        # the chain's references are the partition's own level-0 files, of its own size
        ch0_files += chain(c0, mt, shared) / max(1.0, q0 * p / max(1e-9, files0 * pr / sum(present)))
    tasks, n_out = t0 + t2, (q1 + q2) / tgt + len(shares) * 2
    idx_read = idx_gets = idx_keys = late_tasks = late_files = 0.0
    if k("KEY_CONFINED") and not k("DEDUP_WINDOW_S"):
        # The key index (compact/prune.rs): a level-0 task's on-time keys fall in the newest
        # compacted file; its late ones (OFFLINE_FRAC, up to OFFLINE_MAX_S back) in the files of
        # that window, of which the task reads the footer and page index and the key pages they
        # fall in. Not the partition's key columns.
        row_c = k("AVRO_B_PER_EVENT") * k("PARQUET_C_RATIO")
        for p, c0 in zip(shares, (math.ceil(q0 * p / mt) for p in shares)):
            back = k("OFFLINE_MAX_S") if k("OFFLINE_FRAC") else 5 * k("LATE_MEAN_S")
            window = min(today_c * p, q1 * p * (back / k("COMPACT_TICK_S") + 1))
            if window <= 0:
                continue
            files_w = max(1.0, window / tgt)
            pages_w = max(1.0, window / row_c / k("KEY_PAGE_ROWS"))
            late = q0 * p / (k("AVRO_B_PER_EVENT") * k("PARQUET_L0_RATIO")) / c0 * k("OFFLINE_FRAC")
            page_bytes = k("KEY_PAGE_ROWS") * k("KEY_BYTES_PER_ROW")
            if k("LATE_DEFERRED"):
                # each task: the newest file's footer and last page for its on-time keys; the
                # partition's late keys of the tick: one late task, one probe of the window
                idx_read += c0 * (k("FOOTER_READ_BYTES") + page_bytes)
                idx_gets += c0 * 2
                idx_keys += c0 * k("KEY_PAGE_ROWS")
                late_rows = late * c0
                touched = pages_w * (1 - math.exp(-late_rows / pages_w))
                fetched, gets = key_page_reads(touched, pages_w, files_w)
                idx_read += files_w * k("FOOTER_READ_BYTES") + fetched * page_bytes
                idx_gets += files_w + gets
                idx_keys += touched * k("KEY_PAGE_ROWS")
                late_tasks += 1
                late_files += c0  # each task's late rows: a file of their own, rewritten by the late task
                continue
            touched = pages_w * (1 - math.exp(-late / pages_w)) + 1  # and the newest file's last page
            fetched, gets = key_page_reads(touched, pages_w, files_w)
            idx_read += c0 * (files_w * k("FOOTER_READ_BYTES") + fetched * page_bytes)
            idx_gets += c0 * (files_w + gets)
            idx_keys += c0 * touched * k("KEY_PAGE_ROWS")
        refs = 0.0
    # the late tasks: inputs the late files (read once more, written once more: a row in 200 late)
    tasks += late_tasks
    n_out += late_files + late_tasks
    files0 += late_files
    whole = refs + ch0 + ch2  # reference bytes; the code reads REF_READ_FRACTION of them
    ref_files = refs / tgt + ch0_files + ch2 / tgt
    gets = files0 + n_out / 2 + ref_files * k("REF_GETS") + idx_gets
    # a task's inputs are fetched INPUTS_IN_FLIGHT at once, its references probed
    # REFERENCES_IN_FLIGHT at once (each a footer, then its key pages)
    waits = (files0 / k("INPUTS_IN_FLIGHT") + n_out / 2
             + (ref_files * k("REF_GETS") + idx_gets) / k("REFERENCES_IN_FLIGHT"))
    io = waits * k("S3_GET_MS") / 1000 + (q0 + q2 + whole * k("REF_READ_FRACTION") + idx_read) / (k("S3_MBPS") * MB)
    io += n_out * put_s(min(tgt, (q1 + q2) / n_out)) + tasks * k("SQS_MS") / 1000
    rows_per_byte = 1 / (k("AVRO_B_PER_EVENT") * k("PARQUET_C_RATIO"))
    cpu = (q0 + q2) / (k("COMPACT_MB_CPU_S") * MB * k("ARM_SPEED")) + (whole * rows_per_byte + idx_keys) * k("KEY_ROW_NS") / 1e9
    # the hottest partition's task holds its inputs, their keys, and the run's kept reference keys
    hot_mem = k("MAX_TASK_BYTES") + key_mem(k("MAX_TASK_BYTES")) + k("SHARED_KEY_BYTES")
    inv_s = io / k("COMPACT_PARALLEL") + cpu / (k("COMPACTOR_MB") / k("MB_PER_VCPU"))
    # planning reads every manifest of the snapshot (compact/mod.rs plan_table), parsed like a rewrite
    inv_s += get_s(live * k("ENTRY_BYTES")) + live * k("REWRITE_ENTRY_MS") / 1000 / vcpu(k("COMPACTOR_MB"))
    req = files0 / max(t0, 1) * k("PATH_BYTES") + n_out / tasks * k("FILE_META_JSON")
    claim = req > k("CLAIM_CHECK_BYTES")
    # A rewrite snapshot rewrites every manifest holding a file it removes: every append manifest
    # since the last tick holds L0 files of (nearly) every partition, so each L0 rewrite rewrites
    # them all, less the entries earlier rewrites of the tick already dropped (files0 / 2 on average).
    # a batch's rewrites share one snapshot: REWRITES_PER_SNAPSHOT, or as many requests as one
    # committer event holds
    per_event = int(k("LAMBDA_PAYLOAD") // ((400 if claim else req) * k("JSON_ESCAPE") + k("ESM_RECORD_BYTES")))
    snaps = max(1.0, math.ceil(tasks / max(1, min(k("REWRITES_PER_SNAPSHOT"), k("COMMIT_BATCH"), per_event))))
    l0_snaps = snaps * t0 / tasks
    entries = files0 * (l0_snaps + 1) / 2 + n_out
    merge_at = min(k("MERGE_PAST"), max(2, k("MANIFEST_TARGET") // max(1, files_commit * k("ENTRY_BYTES"))))
    touched = min(commits_tick, merge_at) / 2  # the append manifests since the last merge, on average
    busy = (snaps * (6 * k("DDB_MS") / 1000 + 2 * put_s(2000) + put_s(meta) + claim * get_s(req))
            + (l0_snaps * touched + snaps - l0_snaps) * k("S3_PUT_MS") / 1000 + entries * k("ENTRY_BYTES") / (k("S3_MBPS") * MB)
            + entries * k("REWRITE_ENTRY_MS") / 1000 / vcpu(k("COMMITTER_MB")))
    deletes = files0 + n_out / 2 + snaps * 2 + l0_snaps * touched  # expired: L0, L1 files, lists, manifests
    # a tick's plan in shares of COMPACT_MAX_TASKS tasks, one invocation each (compactor.rs
    # fan_out_tick; whole partitions packed, a hot partition's chain cut): as many as allowed run
    n_shares = math.ceil(tasks / k("COMPACT_MAX_TASKS"))
    invocations = min(n_shares, k("COMPACT_MAX_INVOCATIONS"))
    # each share's invocation plans again, reading the manifests that hold its partitions'
    # files (compact/share.rs): today's (appends and today's merged manifests), not history's
    inv_s += (invocations - 1) * (get_s(today_live * k("ENTRY_BYTES"))
                                  + today_live * k("REWRITE_ENTRY_MS") / 1000 / vcpu(k("COMPACTOR_MB")))
    share_gets = (invocations - 1) * (today_live * k("ENTRY_BYTES") / k("MANIFEST_TARGET") + 2)
    return dict(tasks=tasks, snaps=snaps, share_gets=share_gets, refs=whole * k("REF_READ_FRACTION") + idx_read, gets=gets, puts=n_out,
                inv_s=inv_s, busy=busy, shares=n_shares, invocations=invocations, share_s=inv_s / max(n_shares, 1),
                max_tasks=k("COMPACT_MAX_TASKS"), max_inv=k("COMPACT_MAX_INVOCATIONS"), claim=claim, manifests_rewritten=l0_snaps * touched + snaps, deletes=deletes,
                n_out=n_out, hot_mem=hot_mem, q0=q0, rewritten=(q1 + q2) / q1)


# ---------------------------------------------------------------- the day
def simulate(diurnal=False, fpm=None, t0=0, t1=86400, step=60):
    """Steps through [t0, t1) at `fpm` files/min (default FILES_PER_MIN). The table holds
    HISTORY_DAYS compacted days (yesterday's partitions as big as today's) and today's so far."""
    shares, fpm = tenant_shares(), fpm or k("FILES_PER_MIN")
    day_c = 86400 * fpm / 60 * k("EVENTS_PER_FILE") * k("AVRO_B_PER_EVENT") * k("PARQUET_C_RATIO")
    day_files = day_c / k("TARGET_FILE_BYTES") + len(shares)  # target-size files + a partial per partition
    today_c, q0, files0, rw = day_c * t0 / 86400, 0.0, 0.0, None
    rows, small, meta, other = [], 0.0, k("META_BASE"), 0.0
    for t in range(t0, t1, step):
        rate = fpm / 60
        if diurnal:
            rate *= 1 + k("DIURNAL_AMPLITUDE") * math.cos(2 * math.pi * (t - 14 * 3600) / 86400)
        q = late_fraction(t)
        w = writer(rate, q, shares)
        c = committer(w, other, meta)
        ev = rate * k("EVENTS_PER_FILE") * step
        q0 += ev * k("AVRO_B_PER_EVENT") * k("PARQUET_L0_RATIO")
        files0 += w["files_s"] * step
        today_c += ev * (1 - q) * k("AVRO_B_PER_EVENT") * k("PARQUET_C_RATIO")
        commits, demand = c["served"] * step / c["m"], w["batches_s"] * step / c["m"]
        live = files0 + today_c / k("TARGET_FILE_BYTES") + k("HISTORY_DAYS") * day_files
        if (t + step) % k("COMPACT_TICK_S") == 0:
            nb_tick = w["batches_s"] * k("COMPACT_TICK_S")
            late_y = [nb_tick * (1 - (1 - p) ** (w["n"] * q)) >= k("MIN_FILES") for p in shares]
            rw = compaction(q0, files0, today_c, day_c, late_y, shares, demand * k("COMPACT_TICK_S") / step, meta, live,
                            files0 + today_c / k("TARGET_FILE_BYTES"), c["files"], w["n"])
            q0 = files0 = 0.0
        rw_snaps_s = rw["snaps"] / k("COMPACT_TICK_S") / max(1.0, c["rho"]) if rw else 0.0
        # manifests: one per snapshot since the last merge, plus the 8 MiB manifests the live
        # entries fill. Merges are bin-packed (table/merge.rs): the newest manifests wait in the
        # first bin until it holds MERGE_PAST of them or outgrows the target, then merge.
        merge_at = min(k("MERGE_PAST"), max(2, k("MANIFEST_TARGET") // max(1, c["files"] * k("ENTRY_BYTES"))))
        small += commits + rw_snaps_s * step
        small = (small - 1) % merge_at + 1 if small > merge_at else small
        big = live * k("ENTRY_BYTES") // k("MANIFEST_TARGET")
        kept = (commits / step + rw_snaps_s) * k("SNAPSHOT_MAX_AGE_S") + k("EXPIRE_BATCH")
        meta = k("META_BASE") + kept * (k("SNAP_BYTES") + min(c["m"], k("LISTED_BATCH_IDS")) * 21)
        deletes_s = (rw["deletes"] / k("COMPACT_TICK_S") if rw else 0) + 3 * demand / step
        rw_rho = rw["busy"] / k("COMPACT_TICK_S") if rw else 0.0
        other = rw_rho + deletes_s * k("S3_DELETE_MS") / 1000 / k("DELETE_PARALLEL")
        rows.append(dict(t=t, rate=rate, q=q, w=w, c=c, rw=rw, rw_rho=rw_rho, del_rho=other - rw_rho,
                         manifests=big + max(1, small), live=live, manifest_bytes=live * k("ENTRY_BYTES"),
                         meta=meta, commits=demand))
    return rows


def saturation():
    """The committer's demand at noon against the ingest rate: where appends alone, and all its
    work (appends, rewrites, deletes), reach 1."""
    curve = []
    for fpm in [50 * 1.25**i for i in range(40)]:
        c = simulate(fpm=fpm, t0=11 * 3600, t1=12 * 3600 + 300)[-1]["c"]
        curve.append((fpm, c["rho"], c["rho_append"]))

    def first(i):  # log-linear interpolation of the first crossing of 1
        for (f0, *r0), (f1, *r1) in zip(curve, curve[1:]):
            if r1[i] >= 1 > r0[i]:
                x = math.log(1 / r0[i]) / math.log(r1[i] / r0[i])
                return f0 * (f1 / f0) ** x
        return curve[0][0] if curve[0][1 + i] >= 1 else None

    return first(0), first(1), curve


# ---------------------------------------------------------------- totals and cost
def totals(rows, step=60):
    s = dict(events=0.0, avro=0.0, req={}, cost={}, gbs={"writer": 0.0, "committer": 0.0, "compactor": 0.0})
    req = s["req"]

    def add(name, n):
        req[name] = req.get(name, 0.0) + n

    for r in rows:
        w, c, rw = r["w"], r["c"], r["rw"]
        ev = r["rate"] * step * k("EVENTS_PER_FILE")
        s["events"] += ev
        s["avro"] += ev * k("AVRO_B_PER_EVENT")
        nb = w["batches_s"] * step
        s["gbs"]["writer"] += w["gbs"] * step
        s["gbs"]["committer"] += min(1.0, r["c"]["rho"]) * step * k("COMMITTER_MB") / 1024
        add("Lambda invocations", nb + r["commits"])
        add("S3 GET landing objects", nb * w["b"])
        add("S3 PUT data files (writers)", nb * (w["d"] + w["claim"]))
        add("S3 GET writers' metadata.json refresh", w["conc"] * step / 60)
        add("S3 PUT commit metadata (manifest, list, metadata.json)", 3 * r["commits"])
        add("S3 GET claim checks", r["commits"] * c["m"] * w["claim"])
        add("SQS ingest queue (S3 send, receive, delete)", nb * (w["b"] + 2 * math.ceil(w["b"] / 10)))
        chunks = 1 if w["claim"] else math.ceil(w["msg"] / 65536)
        add("SQS commit queue (send, receive, delete)", nb * (2 * chunks + 0.1))
        add("DynamoDB RRU", nb * w["b"] * (1 + k("WRITER_LOOKUP_RRU")) + r["commits"] * 2 + w["conc"] * step / 60)
        add("DynamoDB WRU", nb * w["b"] * k("LEDGER_WRITES") + r["commits"] * 8)
        add("CloudWatch Logs GB", (nb * (w["b"] * k("LOG_BYTES_OBJECT") + k("LOG_BYTES_INVOKE"))
                                   + r["commits"] * k("LOG_BYTES_INVOKE")) / GB)
        if rw and (r["t"] + step) % k("COMPACT_TICK_S") == 0:
            s["gbs"]["compactor"] += rw["inv_s"] * k("COMPACTOR_MB") / 1024
            add("Lambda invocations", rw["invocations"])
            add("SQS share queue (send, receive, delete)", 3 * (rw["invocations"] - 1))
            add("S3 GET compaction inputs + references", rw["gets"])
            add("S3 GET compactor plan (every manifest)", r["manifests"] + 2)
            add("S3 GET compaction shares' plans (their manifests)", rw["share_gets"])
            add("S3 PUT compaction outputs, rewrites", rw["puts"] + rw["manifests_rewritten"] + 3 * rw["snaps"]
                + rw["tasks"] * rw["claim"])
            add("SQS commit queue (send, receive, delete)", rw["tasks"] * 2.1)
            add("DynamoDB WRU", rw["snaps"] * 6)
    p = s["cost"]
    p["Lambda writer"] = s["gbs"]["writer"] * k("LAMBDA_GB_S")
    p["Lambda committer"] = s["gbs"]["committer"] * k("LAMBDA_GB_S")
    p["Lambda compactor"] = s["gbs"]["compactor"] * k("LAMBDA_GB_S")
    p["Lambda requests"] = req["Lambda invocations"] * k("LAMBDA_REQ")
    p["S3 PUT"] = sum(v for n, v in req.items() if n.startswith("S3 PUT")) * k("S3_PUT")
    p["S3 GET"] = sum(v for n, v in req.items() if n.startswith("S3 GET")) * k("S3_GET")
    p["SQS"] = sum(v for n, v in req.items() if n.startswith("SQS")) * k("SQS_REQ")
    p["DynamoDB"] = req["DynamoDB WRU"] * k("DDB_WRU") + req["DynamoDB RRU"] * k("DDB_RRU")
    p["CloudWatch Logs"] = req["CloudWatch Logs GB"] * k("CW_LOGS_GB")
    return s


# ---------------------------------------------------------------- scenarios (reported by model_report)
def streamed_after(tenant):
    """Seconds after midnight when the keys of tenant's day-partition references outgrow the
    run's budget (compact/keys.rs KeyIndex): from then on each task of its chain streams them."""
    rows_s = k("FILES_PER_MIN") / 60 * k("EVENTS_PER_FILE") * tenant_shares()[tenant]
    seconds = k("SHARED_KEY_BYTES") / (rows_s * k("KEY_SET_BYTES"))
    window = k("DEDUP_WINDOW_S") + 2 * k("COMPACT_TICK_S") if k("DEDUP_WINDOW_S") else math.inf
    return seconds if seconds < window else math.inf


def scenario(name, diurnal):
    rows = simulate(diurnal)
    sat, sat_append, curve = saturation()
    return dict(name=name, rows=rows, s=totals(rows), mid=rows[len(rows) // 2], sat=sat, sat_append=sat_append,
                curve=curve, og=(streamed_after(0), streamed_after(int(k("TENANTS")) - 1)))


# The tuned settings with assumptions changed: before late files (each task probing its own late
# keys), and a design not built, one ledger write per source.
WHAT_IF = [{"LATE_DEFERRED": 0}, {"LEDGER_WRITES": 2, "WRITER_LOOKUP_RRU": 1, "LOG_BYTES_OBJECT": 300}]


def what_if(sets, diurnal):
    """The day's cost per TB, and per component, with the assumptions `sets` changed."""
    saved = {n: K[n][0] for n in sets}
    for n, v in sets.items():
        K[n][0] = v
    s = totals(simulate(diurnal))
    for n, v in saved.items():
        K[n][0] = v
    tb = s["avro"] / TB
    return {n: c / tb for n, c in s["cost"].items()} | {"total": sum(s["cost"].values()) / tb}


# What the model says it takes: the Terraform settings of infra/examples/quickstart/at-scale.tfvars
# (read from there, so the model prices what that file deploys).
AT_SCALE = Path(__file__).resolve().parents[2] / "infra" / "examples" / "quickstart" / "at-scale.tfvars"
TFVARS = {  # model assumption <- Terraform variable
    "WRITER_BATCH": "writer_batch_size",
    "EXPECTED_OBJECT_MB": "expected_object_mb",
    "COMMITTER_MB": "committer_memory_mb",
    "COMPACT_MAX_TASKS": "compactor_max_tasks",
    "COMPACT_MAX_INVOCATIONS": "compactor_max_invocations",
}


def tuned_settings(path=AT_SCALE):
    """The tuned assumptions: TFVARS's variables from `path` (lines `name = number`). Dedup stays
    exact (DEDUP_WINDOW_S as in K)."""
    values = {}
    for line in path.read_text().splitlines():
        m = re.match(r"\s*([a-z_]+)\s*=\s*([0-9.]+)\s*(#.*)?$", line)
        if m:
            v = float(m.group(2))
            values[m.group(1)] = int(v) if v.is_integer() else v
    missing = [v for v in TFVARS.values() if v not in values]
    if missing:
        raise SystemExit(f"{path} does not set {', '.join(missing)}")
    return {name: values[var] for name, var in TFVARS.items()}


TUNED = tuned_settings()


def module_defaults(path=Path(__file__).resolve().parents[2] / "infra" / "variables.tf"):
    """The deployed assumptions: TFVARS's variables' defaults in the module's variables.tf, so
    the "as deployed" column prices what `terraform apply` deploys."""
    text = path.read_text()
    out = {}
    for name, var in TFVARS.items():
        block = re.search(r'variable "' + var + r'" \{(.*?)\n\}', text, re.S)
        m = block and re.search(r"^\s*default\s*=\s*([0-9.]+)\s*$", block.group(1), re.M)
        if not m:
            raise SystemExit(f"{path}: no numeric default for {var}")
        v = float(m.group(1))
        out[name] = int(v) if v.is_integer() else v
    return out


for _name, _v in module_defaults().items():
    K[_name][0] = _v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--floe", default="target/release/floe")
    ap.add_argument("--bench-json", help="output of `floe bench --json` (the writer's measured rate)")
    ap.add_argument("--scale-json", help="output of tests/bench/scale.py (the writer's rate at the preset's batch)")
    ap.add_argument("--doc", help="write the report between the model markers of this Markdown file")
    ap.add_argument("--img-dir", default="docs/img")
    ap.add_argument("--quick", action="store_true", help="run nothing: the measured figures' defaults")
    ap.add_argument("--diurnal", action="store_true", help="shape the day (peak 14:00 UTC) instead of flat")
    ap.add_argument("--commit-ms", type=float, help="COMMIT_MS, and skip measuring")
    ap.add_argument("--append-file-ms", type=float, help="APPEND_FILE_MS")
    ap.add_argument("--compact-mb-per-cpu-s", type=float, help="COMPACT_MB_CPU_S")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override an assumption")
    a = ap.parse_args()
    a.bench_source = "the default in K (no --bench-json)"
    if a.bench_json:
        b = json.load(open(a.bench_json))
        by = {r["name"]: r for r in b["results"]}
        K["WRITER_EV_CPU_S"][0] = by["writer path"]["events_per_cpu_s"]
        K["DECODE_EV_CPU_S"][0] = by["decode arrow-avro"]["events_per_cpu_s"]
        K["AVRO_B_PER_EVENT"][0] = b["avro_bytes"] / b["events"]
        a.bench_source = f"`floe bench` on {b['files']} files, {b['events']:,} events, {b['avro_bytes'] / MB:,.1f} MB of Avro"
    if a.scale_json and Path(a.scale_json).exists():
        w = json.load(open(a.scale_json))["writer"]
        K["WRITER_BIG_EV_CPU_S"][0] = w["events"] / w["cpu_s"]
        K["WRITER_BIG_EVENTS"][0] = w["events"]
    measured = not (a.quick or a.commit_ms is not None)
    if measured:
        with tempfile.TemporaryDirectory() as tmp:
            for name, value in measure(a.floe, Path(tmp)).items():
                K[name][0] = value
    flags = {"COMMIT_MS": a.commit_ms, "APPEND_FILE_MS": a.append_file_ms, "COMPACT_MB_CPU_S": a.compact_mb_per_cpu_s}
    sets = dict(kv.split("=", 1) for kv in a.set)
    for name, value in {**{n: v for n, v in flags.items() if v is not None}, **sets}.items():
        if name not in K:
            raise SystemExit(f"unknown assumption {name}; known: {', '.join(K)}")
        K[name][0] = float(value)
    deployed = scenario("as deployed", a.diurnal)
    saved = {n: K[n][0] for n in TUNED}
    K.update({n: [v, K[n][1]] for n, v in TUNED.items()})
    tuned = scenario("tuned", a.diurnal)
    tuned["what_if"] = [(sets, what_if(sets, a.diurnal)) for sets in WHAT_IF]
    K.update({n: [v, K[n][1]] for n, v in saved.items()})
    from model_report import plots, report  # it imports this module: not at the top

    text = report([deployed, tuned], a, measured)
    print(text)
    plots([deployed, tuned], Path(a.img_dir))
    if a.doc:
        replace_block(Path(a.doc), "model", text)
    return 0


if __name__ == "__main__":
    # Run as the module `model`, the one model_report imports, so that both see one K.
    import model

    sys.exit(model.main())
