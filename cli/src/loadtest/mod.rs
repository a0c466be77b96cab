//! `floe bench-committer`: the committer under load, against ports that take as long as AWS's
//! (`latency.rs`). Four measurements, each one invocation (`tests/bench/scale.py` runs them):
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
//! - `--compaction-task`: one compaction task over the level-0 files of `--objects` sources
//!   (one partition with `--tenants 1`), timed with slow ports.
//! - `--batches 1,4,16`: the committer with a standing backlog, committing batches of so many
//!   messages back to back (`--commits` each): its cost per commit against the batch, from
//!   which the saturation point follows.
//!
//! Every run prints a JSON summary (also to `--json`) and, with `--csv`, one row per commit. The
//! committer runs on one thread (a current-thread runtime): one vCPU, as a committer Lambda of
//! 1,769 MB has.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use floe::adapters::local;
use floe::config::{EngineConfig, TableConfig};
use floe::message::FileManifest;
use floe::pipeline::commit::Committer;
use floe::pipeline::compact::{CompactOptions, compact};
use floe::pipeline::create::ensure_table;
use floe::pipeline::write::write;
use floe::ports::{ObjectMeta, Ports};
use floe::sample::{self, EventsSpec};
use floe::table::WriterTable;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::bench::{Cpu, cpu_now};
use crate::latency::{Profile, Spread, slow};

mod committer;

use committer::{backlog, load};

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
    #[arg(long, required_unless_present_any = ["make_template", "compaction_task"])]
    template: Option<PathBuf>,
    /// Instead: one compaction task over the level-0 files that writer batches of 10 make of
    /// --objects generated source files (--tenants 1: one partition), timed.
    #[arg(long, conflicts_with_all = ["template", "make_template"])]
    compaction_task: bool,
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
                    _ if a.compaction_task => compaction_task(&a, profile, &scratch.0).await,
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

/// One compaction task of the preset's size: the level-0 files of writer batches of 10 sources
/// (written and committed with fast ports), then the task with slow ones.
async fn compaction_task(a: &CommitterBenchArgs, profile: Profile, work: &Path) -> anyhow::Result<serde_json::Value> {
    let (raw, engine, table, objs) = warehouse(a, work, a.objects).await?;
    let mut committer = Committer::new(engine.clone(), raw.clone());
    for batch in objs.chunks(10) {
        write(&engine, &raw, &table, batch.to_vec()).await?;
        while committer.run_once(1000, Duration::from_secs(60)).await?.is_some() {}
    }
    let (ports, clock) = slow(raw.clone(), profile, a.seed);
    // One task, the first the plan gives: the biggest partition's oldest level-0 files.
    let opts = CompactOptions { max_tasks: 1, ..CompactOptions::default() };
    let (t, cpu) = (Instant::now(), cpu_now(Cpu::Process));
    let report = compact(&engine, &ports, &table.ident, &opts).await?;
    let (wall, cpu) = (t.elapsed().as_secs_f64(), (cpu_now(Cpu::Process) - cpu).as_secs_f64());
    anyhow::ensure!(report.tasks == 1, "the plan gave {} task(s) to run, not one", report.tasks);
    let o = &report.totals;
    Ok(json!({
        "kind": "compaction task",
        "planned": report.planned,
        "inputs": o.inputs,
        "bytes_read": o.bytes_read,
        "rows_in": o.rows_in,
        "rows_out": o.rows_out,
        "outputs": o.outputs,
        "bytes_written": o.bytes_written,
        "reference_files": o.reference_files,
        "wall_s": wall,
        "cpu_s": cpu,
        "requests": clock.waited(),
        "profile": profile,
    }))
}

/// The process's peak resident memory, MB.
pub(super) fn max_rss_mb() -> f64 {
    // SAFETY: getrusage fills one rusage through a valid pointer.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    if rc != 0 { 0.0 } else { u.ru_maxrss as f64 / 1024.0 }
}
