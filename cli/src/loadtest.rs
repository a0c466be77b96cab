//! `floe bench-committer`: the committer under load, against ports that take as long as AWS's
//! (`latency.rs`). Three measurements, each one invocation (`tests/bench/scale.py` runs them):
//!
//! - `--make-template FILE`: one real writer batch of `--objects` generated Avro files, through
//!   the writer with slow ports (timed: wall and CPU), whose file manifest is saved as the
//!   template of the load.
//! - the load (default): copies of the template (fresh sources and file paths, the same shape
//!   and statistics) offered at `--files-per-s` source files a second for `--seconds`, taken by
//!   one committer as Lambda's SQS event source mapping hands them over (up to `--max-batch`
//!   messages or 6 MB of event, after a `--window-s` batching window, one invocation at a
//!   time). Each invocation is the real committer handler (`handlers::handle_committer`):
//!   claim checks for bodies past SQS's limit read and deleted, and the real committer's
//!   metadata work (manifests, manifest lists, metadata.json, ledger, lock, pointer swap) on a
//!   local warehouse.
//! - `--batches 1,4,16`: the committer with a standing backlog, committing batches of so many
//!   messages back to back (`--commits` each): its cost per commit against the batch, from
//!   which the saturation point follows.
//!
//! Every run prints a JSON summary (also to `--json`) and, with `--csv`, one row per commit. The
//! committer runs on one thread (a current-thread runtime): one vCPU, as a committer Lambda of
//! 1,769 MB has.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use floe::adapters::aws::{CLAIM_CHECK_THRESHOLD, SqsQueue};
use floe::adapters::local;
use floe::config::{EngineConfig, TableConfig};
use floe::handlers::handle_committer;
use floe::message::FileManifest;
use floe::pipeline::commit::Committer;
use floe::pipeline::create::ensure_table;
use floe::pipeline::write::write;
use floe::ports::{ObjectMeta, Ports, Queue};
use floe::sample::{self, EventsSpec};
use floe::table::WriterTable;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::bench::{Cpu, cpu_now};
use crate::latency::{Profile, Spread, slow};

/// Lambda's synchronous payload limit: an event source mapping stops a batch there.
const EVENT_BYTES: usize = 6 * 1024 * 1024;
/// An SQS record around its body in the event (ids, receipt handle, attributes).
const RECORD_BYTES: usize = 800;

#[derive(Debug, Args)]
pub(crate) struct CommitterBenchArgs {
    /// Make the template instead: one writer batch, timed, its manifest saved to this file.
    #[arg(long, conflicts_with = "template")]
    make_template: Option<PathBuf>,
    /// The template the load copies (made by --make-template).
    #[arg(long, required_unless_present = "make_template")]
    template: Option<PathBuf>,
    /// Source files in the template's writer batch.
    #[arg(long, default_value_t = 1000)]
    objects: u64,
    /// Events per source file.
    #[arg(long, default_value_t = 3500)]
    events_per_file: usize,
    /// Tenants (one partition each per day; tenant k weighs 1/(k+1)).
    #[arg(long, default_value_t = 100)]
    tenants: usize,
    /// Source files a second offered to the committer (667: 40,000 a minute).
    #[arg(long, default_value_t = 667.0)]
    files_per_s: f64,
    /// How long the load is offered.
    #[arg(long, default_value_t = 600)]
    seconds: u64,
    /// The event source mapping's batching window, seconds.
    #[arg(long, default_value_t = 5.0)]
    window_s: f64,
    /// Most messages in one committer invocation (the event source mapping's batch size).
    #[arg(long, default_value_t = 1000)]
    max_batch: usize,
    /// Instead of the load: commit batches of these many messages back to back.
    #[arg(long, value_delimiter = ',')]
    batches: Vec<usize>,
    /// Commits of each batch size (with --batches).
    #[arg(long, default_value_t = 3)]
    commits: usize,
    /// S3 request latency, 5th and 95th percentiles in ms.
    #[arg(long, value_delimiter = ',', default_values_t = [100.0, 200.0])]
    s3_ms: Vec<f64>,
    /// S3 transfer rate per connection, MB/s.
    #[arg(long, default_value_t = 87.5)]
    s3_mbps: f64,
    /// DynamoDB single-item request latency, 5th and 95th percentiles in ms.
    #[arg(long, value_delimiter = ',', default_values_t = [2.0, 9.0])]
    ddb_ms: Vec<f64>,
    /// DynamoDB BatchGetItem (100 keys) latency, 5th and 95th percentiles in ms.
    #[arg(long, value_delimiter = ',', default_values_t = [2.0, 9.0])]
    ddb_batch_ms: Vec<f64>,
    /// Seed of the latencies drawn.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the JSON summary here too.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Write one CSV row per commit here.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// Scratch folder (default: a temporary folder on /dev/shm when there is one).
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

impl CommitterBenchArgs {
    fn profile(&self) -> anyhow::Result<Profile> {
        let spread = |v: &[f64], what: &str| match v {
            [lo, hi] if *lo > 0.0 && lo <= hi => Ok(Spread { p05_ms: *lo, p95_ms: *hi }),
            _ => bail!("--{what} takes two latencies in ms, 5th then 95th percentile, both > 0: got {v:?}"),
        };
        if self.s3_mbps <= 0.0 {
            bail!("--s3-mbps must be > 0");
        }
        Ok(Profile {
            s3: spread(&self.s3_ms, "s3-ms")?,
            s3_mbps: self.s3_mbps,
            ddb: spread(&self.ddb_ms, "ddb-ms")?,
            ddb_batch: spread(&self.ddb_batch_ms, "ddb-batch-ms")?,
        })
    }
}

/// What `--make-template` saves: a writer batch's manifest and what the batch took.
#[derive(Debug, Serialize, Deserialize)]
struct Template {
    manifest: FileManifest,
    objects: u64,
    events_per_file: usize,
    tenants: usize,
    avro_bytes: u64,
    writer_wall_s: f64,
    writer_cpu_s: f64,
}

pub(crate) fn run(a: CommitterBenchArgs) -> anyhow::Result<ExitCode> {
    let profile = a.profile()?;
    if a.files_per_s <= 0.0 || a.seconds == 0 || a.max_batch == 0 || a.window_s < 0.0 {
        bail!("--files-per-s, --seconds and --max-batch must be > 0, --window-s >= 0");
    }
    if a.batches.contains(&0) {
        bail!("--batches takes message counts > 0");
    }
    let scratch = match &a.work_dir {
        Some(d) => (d.clone(), None),
        None => {
            let shm = Path::new("/dev/shm");
            let t = if shm.is_dir() { tempfile::tempdir_in(shm)? } else { tempfile::tempdir()? };
            (t.path().to_path_buf(), Some(t))
        }
    };
    // On a thread of its own with a one-thread runtime: the committer gets one core, as a
    // 1,769 MB Lambda does.
    let summary = std::thread::scope(|s| {
        s.spawn(|| {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
            rt.block_on(async {
                match &a.make_template {
                    Some(out) => make_template(&a, profile, &scratch.0, out).await,
                    None if a.batches.is_empty() => load(&a, profile, &scratch.0).await,
                    None => backlog(&a, profile, &scratch.0).await,
                }
            })
        })
        .join()
        .map_err(|_| anyhow::anyhow!("the load test panicked"))?
    })?;
    let text = serde_json::to_string_pretty(&summary)?;
    println!("{text}");
    if let Some(p) = &a.json {
        std::fs::write(p, text).with_context(|| p.display().to_string())?;
    }
    Ok(ExitCode::SUCCESS)
}

fn table_config() -> anyhow::Result<TableConfig> {
    Ok(TableConfig::new("bench.load".parse()?)
        .with_partition_by("day(event_time), identity(tenant_id)")?
        .with_sort_by("tenant_id, event_time")?
        .with_dedup_key("event_id")?)
}

/// The generated events: a writer batch at the target rate holds about a minute of events, so
/// the batch's files span one minute, at noon (late events stay in the same day, as the model's
/// noon has almost none from the day before).
fn spec(a: &CommitterBenchArgs) -> EventsSpec {
    EventsSpec {
        events_per_file: a.events_per_file,
        tenants: a.tenants,
        start_us: 1_773_489_600_000_000, // 2026-03-14T12:00:00Z
        file_span_us: 60_000_000 / a.objects.max(1) as i64,
        ..Default::default()
    }
}

/// A fresh local warehouse under `work` holding the load's table; `objects` more generated
/// source files next to it (the first defines the table).
async fn warehouse(
    a: &CommitterBenchArgs,
    work: &Path,
    objects: u64,
) -> anyhow::Result<(Ports, EngineConfig, WriterTable, Vec<ObjectMeta>)> {
    let wh = work.join("wh");
    let ports = local::raw_ports(&wh)?;
    let (src, spec) = (work.join("in"), spec(a));
    std::fs::create_dir_all(&src)?;
    let mut objs = vec![];
    for i in 0..objects.max(1) {
        let (bytes, _) = sample::events_file(&spec, 4242, i)?;
        let path = src.join(format!("part-{i:06}.avro"));
        std::fs::write(&path, &bytes)?;
        objs.push(ports.store.head(&local::path_to_uri(&path)).await?);
    }
    let (engine, cfg) = (EngineConfig::default(), table_config()?);
    let (state, _) = ensure_table(&ports, &engine, &cfg, &local::warehouse_uri(&wh)?, &objs[..1]).await?;
    let table = WriterTable::from_metadata(&cfg.table, &state.metadata)?;
    Ok((ports, engine, table, objs))
}

async fn make_template(
    a: &CommitterBenchArgs,
    profile: Profile,
    work: &Path,
    out: &Path,
) -> anyhow::Result<serde_json::Value> {
    let (ports, engine, table, objs) = warehouse(a, work, a.objects).await?;
    let avro_bytes = objs.iter().map(|o| o.size).sum();
    let (ports, clock) = slow(ports, profile, a.seed);
    let (t, cpu) = (Instant::now(), cpu_now(Cpu::Process));
    let outcome = write(&engine, &ports, &table, objs).await?;
    let (wall, cpu) = (t.elapsed().as_secs_f64(), (cpu_now(Cpu::Process) - cpu).as_secs_f64());
    let manifest = outcome.manifest.context("the writer batch accepted no source")?;
    let template = Template {
        objects: manifest.sources.len() as u64,
        events_per_file: a.events_per_file,
        tenants: a.tenants,
        avro_bytes,
        writer_wall_s: wall,
        writer_cpu_s: cpu,
        manifest,
    };
    std::fs::write(out, serde_json::to_vec(&template)?).with_context(|| out.display().to_string())?;
    let body = template.manifest.to_json()?.len();
    Ok(json!({
        "kind": "writer batch",
        "sources": template.objects,
        "events": template.objects * a.events_per_file as u64,
        "avro_bytes": avro_bytes,
        "data_files": template.manifest.files.len(),
        "parquet_bytes": template.manifest.files.iter().map(|f| f.file_size_in_bytes).sum::<u64>(),
        "manifest_json_bytes": body,
        "wall_s": wall,
        "cpu_s": cpu,
        "requests": clock.waited(),
        "profile": profile,
    }))
}

/// One message of the load: a copy of the template with its own sources and file paths, as
/// the committer's event holds it.
struct Queued {
    record: serde_json::Value,
    /// Bytes it takes in the committer's event.
    event_bytes: usize,
    arrived: Instant,
}

/// Makes the load's messages: copies of the template under the table at `location`, sent the
/// way a writer sends them (a claim check past SQS's limit, stored without delay: the writer's
/// time, not the committer's).
struct Copier {
    template: FileManifest,
    location: String,
    queue: SqsQueue,
}

impl Copier {
    async fn copy(&self, i: u64) -> anyhow::Result<Queued> {
        let mut m = self.template.clone();
        m.batch_id = format!("load-{i:08}");
        m.written_ms = Some(chrono::Utc::now().timestamp_millis());
        for (j, s) in m.sources.iter_mut().enumerate() {
            s.uri = format!("s3://landing/load/{i:08}/{j:05}.avro");
            s.id = format!("{}#{i:08}{j:05}", s.uri);
        }
        for (k, f) in m.files.iter_mut().enumerate() {
            // the same partition folder under this table, a new name
            let dirs = f.path.split_once("/data/").map_or("", |(_, rest)| rest);
            let dirs = dirs.rsplit_once('/').map_or("", |(d, _)| d);
            f.path = format!("{}/data/{dirs}/load-{i:08}-{k:04}.parquet", self.location);
        }
        let body = self.queue.claim(m.to_json()?).await?;
        let event_bytes = body.len() * 112 / 100 + RECORD_BYTES;
        let record = json!({
            "messageId": m.batch_id, "receiptHandle": m.batch_id, "body": body, "eventSource": "aws:sqs",
            "attributes": {"ApproximateReceiveCount": "1"},
        });
        Ok(Queued { record, event_bytes, arrived: Instant::now() })
    }
}

/// A queue for the committer handler that never reaches SQS: claim checks only (`claim`,
/// `resolve`, `discard_claim` touch nothing but `store`).
fn claims_queue(store: Arc<dyn floe::ports::ObjectStore>, prefix: &str) -> SqsQueue {
    let conf = aws_sdk_sqs::Config::builder()
        .behavior_version(aws_sdk_sqs::config::BehaviorVersion::latest())
        .region(aws_sdk_sqs::config::Region::new("us-east-1"))
        .build();
    SqsQueue::new(aws_sdk_sqs::Client::from_conf(conf), "https://sqs.invalid/commit").with_claim_check(store, prefix)
}

/// The committer under test, with its slow ports.
struct Bench {
    committer: tokio::sync::Mutex<Committer>,
    queue: SqsQueue,
    requeue: Arc<dyn Queue>,
    clock: Arc<crate::latency::Clock>,
    copier: Arc<Copier>,
    per_message: (u64, u64),
    rows: Vec<CommitRow>,
    started: Instant,
}

#[derive(Debug, Clone, Serialize)]
struct CommitRow {
    at_s: f64,
    secs: f64,
    cpu_s: f64,
    messages: usize,
    sources: u64,
    files: u64,
    /// From the oldest message's arrival to the end of its commit.
    lag_s: f64,
    s3_requests: u64,
    ddb_requests: u64,
}

impl Bench {
    async fn new(a: &CommitterBenchArgs, profile: Profile, work: &Path) -> anyhow::Result<Self> {
        let path = a.template.as_ref().context("--template")?;
        let template: Template =
            serde_json::from_slice(&std::fs::read(path).with_context(|| path.display().to_string())?)
                .with_context(|| format!("{} is not a template made by --make-template", path.display()))?;
        let (raw, engine, table, _) = warehouse(a, work, 1).await?;
        let location = table.location.trim_end_matches('/').to_string();
        let (ports, clock) = slow(raw.clone(), profile, a.seed);
        let claims = work.join("claims");
        std::fs::create_dir_all(&claims)?;
        let prefix = local::path_to_uri(&claims);
        let per_message = (template.manifest.sources.len() as u64, template.manifest.files.len() as u64);
        let queue = claims_queue(raw.store.clone(), &prefix);
        let copier = Arc::new(Copier { template: template.manifest, location, queue });
        let committer = tokio::sync::Mutex::new(Committer::new(engine, ports.clone()));
        Ok(Bench {
            committer,
            queue: claims_queue(ports.store.clone(), &prefix),
            requeue: raw.commit_queue.clone(),
            clock,
            copier,
            per_message,
            rows: vec![],
            started: Instant::now(),
        })
    }

    /// Runs the committer handler on `batch`, as one invocation: claim checks read, the commit,
    /// the settled messages' claim checks deleted.
    async fn commit(&mut self, batch: Vec<Queued>) -> anyhow::Result<()> {
        let (t, cpu, before) = (Instant::now(), cpu_now(Cpu::Thread), self.clock.waited());
        let event = serde_json::from_value(json!({"Records": batch.iter().map(|q| &q.record).collect::<Vec<_>>()}))?;
        let response = handle_committer(&self.committer, &self.queue, self.requeue.as_ref(), event).await;
        if let Some(f) = response.batch_item_failures.first() {
            bail!("message {} was not committed (see the log)", f.item_identifier);
        }
        let after = self.clock.waited();
        let oldest = batch.iter().map(|q| q.arrived).min().unwrap_or(t);
        self.rows.push(CommitRow {
            at_s: (t - self.started).as_secs_f64(),
            secs: t.elapsed().as_secs_f64(),
            cpu_s: (cpu_now(Cpu::Thread) - cpu).as_secs_f64(),
            messages: batch.len(),
            sources: batch.len() as u64 * self.per_message.0,
            files: batch.len() as u64 * self.per_message.1,
            lag_s: oldest.elapsed().as_secs_f64(),
            s3_requests: after.s3_requests - before.s3_requests,
            ddb_requests: after.ddb_requests - before.ddb_requests,
        });
        Ok(())
    }

    /// A first commit (the committer loads the table), not counted.
    async fn warm(&mut self) -> anyhow::Result<()> {
        let q = self.copier.copy(u64::MAX / 2).await?;
        self.commit(vec![q]).await?;
        self.rows.clear();
        self.started = Instant::now();
        Ok(())
    }

    fn csv(&self, path: Option<&PathBuf>) -> anyhow::Result<()> {
        let Some(path) = path else { return Ok(()) };
        let mut out = std::io::BufWriter::new(std::fs::File::create(path).with_context(|| path.display().to_string())?);
        writeln!(out, "at_s,secs,cpu_s,messages,sources,files,lag_s,s3_requests,ddb_requests")?;
        for r in &self.rows {
            writeln!(
                out,
                "{:.3},{:.4},{:.4},{},{},{},{:.3},{},{}",
                r.at_s, r.secs, r.cpu_s, r.messages, r.sources, r.files, r.lag_s, r.s3_requests, r.ddb_requests
            )?;
        }
        Ok(out.flush()?)
    }
}

/// The load: messages offered at the rate, batched as the event source mapping does.
async fn load(a: &CommitterBenchArgs, profile: Profile, work: &Path) -> anyhow::Result<serde_json::Value> {
    let mut bench = Bench::new(a, profile, work).await?;
    bench.warm().await?;
    let per_s = a.files_per_s / bench.per_message.0 as f64;
    let total = (per_s * a.seconds as f64).round() as u64;
    let queue: Arc<Mutex<VecDeque<Queued>>> = Arc::default();
    let copier = bench.copier.clone();
    let start = tokio::time::Instant::now();
    let producer = {
        let (queue, copier) = (queue.clone(), copier.clone());
        tokio::spawn(async move {
            for i in 0..total {
                tokio::time::sleep_until(start + Duration::from_secs_f64(i as f64 / per_s)).await;
                let q = copier.copy(i).await?;
                queue.lock().expect("queue").push_back(q);
            }
            anyhow::Ok(())
        })
    };
    let window = Duration::from_secs_f64(a.window_s);
    let mut committed = 0u64;
    while committed < total {
        let first = queue.lock().expect("queue").front().map(|q| q.arrived);
        let Some(first) = first else {
            if producer.is_finished() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        let full = |q: &VecDeque<Queued>| {
            q.len() >= a.max_batch || q.iter().map(|m| m.event_bytes).sum::<usize>() >= EVENT_BYTES
        };
        while first.elapsed() < window && !full(&queue.lock().expect("queue")) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let batch = take(&mut queue.lock().expect("queue"), a.max_batch);
        committed += batch.len() as u64;
        bench.commit(batch).await?;
    }
    producer.await??;
    let elapsed = bench.started.elapsed().as_secs_f64();
    bench.csv(a.csv.as_ref())?;
    let r = &bench.rows;
    let sources: u64 = r.iter().map(|c| c.sources).sum();
    let busy: f64 = r.iter().map(|c| c.secs).sum();
    let gaps: Vec<f64> = r.windows(2).map(|w| w[1].at_s - w[0].at_s).collect();
    Ok(json!({
        "kind": "load",
        "offered_files_per_min": a.files_per_s * 60.0,
        "seconds": a.seconds,
        "committed_files_per_min": sources as f64 / elapsed * 60.0,
        "sources": sources,
        "messages": total,
        "commits": r.len(),
        "busy": busy / elapsed,
        "interval_s": summary(&gaps),
        "commit_s": summary(&r.iter().map(|c| c.secs).collect::<Vec<_>>()),
        "messages_per_commit": summary(&r.iter().map(|c| c.messages as f64).collect::<Vec<_>>()),
        "lag_s": summary(&r.iter().map(|c| c.lag_s).collect::<Vec<_>>()),
        "cpu_s_per_commit": summary(&r.iter().map(|c| c.cpu_s).collect::<Vec<_>>()),
        "sources_per_message": bench.per_message.0,
        "files_per_message": bench.per_message.1,
        "claim_checked": bench.copier.template.to_json()?.len() > CLAIM_CHECK_THRESHOLD,
        "max_rss_mb": max_rss_mb(),
        "parsed_entries": bench.committer.lock().await.parsed_entries(&"bench.load".parse()?),
        "profile": profile,
    }))
}

/// The committer with a standing backlog: batches of each size, back to back.
async fn backlog(a: &CommitterBenchArgs, profile: Profile, work: &Path) -> anyhow::Result<serde_json::Value> {
    let mut bench = Bench::new(a, profile, work).await?;
    bench.warm().await?;
    let mut next = 0u64;
    let mut out = vec![];
    for &m in &a.batches {
        let from = bench.rows.len();
        for _ in 0..a.commits {
            let mut batch = vec![];
            for _ in 0..m {
                batch.push(bench.copier.copy(next).await?);
                next += 1;
            }
            bench.commit(batch).await?;
        }
        let rows = &bench.rows[from..];
        let secs: Vec<f64> = rows.iter().map(|c| c.secs).collect();
        let mid = summary(&secs)["p50"].as_f64().unwrap_or(0.0);
        out.push(json!({
            "messages": m,
            "sources": m as u64 * bench.per_message.0,
            "files": m as u64 * bench.per_message.1,
            "commit_s": summary(&secs),
            "cpu_s": summary(&rows.iter().map(|c| c.cpu_s).collect::<Vec<_>>()),
            "s3_requests": rows.iter().map(|c| c.s3_requests).sum::<u64>() / rows.len().max(1) as u64,
            "ddb_requests": rows.iter().map(|c| c.ddb_requests).sum::<u64>() / rows.len().max(1) as u64,
            "files_per_min": m as f64 * bench.per_message.0 as f64 / mid.max(1e-9) * 60.0,
        }));
    }
    bench.csv(a.csv.as_ref())?;
    Ok(json!({
        "kind": "backlog",
        "sources_per_message": bench.per_message.0,
        "files_per_message": bench.per_message.1,
        "batches": out,
        "max_rss_mb": max_rss_mb(),
        "profile": profile,
    }))
}

/// The first messages of `q` that one invocation takes: up to `max`, within the event's bytes.
fn take(q: &mut VecDeque<Queued>, max: usize) -> Vec<Queued> {
    let (mut n, mut bytes) = (0, 0);
    while n < q.len().min(max) && (n == 0 || bytes + q[n].event_bytes <= EVENT_BYTES) {
        bytes += q[n].event_bytes;
        n += 1;
    }
    q.drain(..n).collect()
}

fn summary(v: &[f64]) -> serde_json::Value {
    if v.is_empty() {
        return json!(null);
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    json!({"mean": s.iter().sum::<f64>() / s.len() as f64, "p50": at(0.5), "p95": at(0.95), "max": s[s.len() - 1]})
}

/// The process's peak resident memory, MB.
fn max_rss_mb() -> f64 {
    // SAFETY: getrusage fills one rusage through a valid pointer.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    if rc != 0 { 0.0 } else { u.ru_maxrss as f64 / 1024.0 }
}
