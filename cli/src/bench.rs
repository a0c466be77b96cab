//! `floe bench`: the writer path against the raw limit, measured in the same run.
//!
//! All inputs are read into memory first, so the figures are CPU per core (one thread):
//!
//! - `baseline`: arrow-avro decode of each file + one Parquet encode per writer batch of the
//!   decoded data, same compression, nothing else;
//! - `writer`: Floe's writer path on the same batches: framing check, schema mapping, decode,
//!   conform to the table, dedup, partition + sort, Parquet with Iceberg metrics;
//! - `decode arrow-avro` / `decode apache-avro`: the two Avro decoders alone (apache-avro only
//!   to its `Value`s, a lower bound on its cost), to justify the choice of decoder;
//! - `ingest`: the whole embedded pipeline (writers on every core, committer, local files and
//!   SQLite), whole wall time, reported per core.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::Args;
use floe::adapters::local;
use floe::config::{EngineConfig, TableConfig};
use floe::convert::{avro, parquet};
use floe::pipeline::create::ensure_table;
use floe::pipeline::ingest::{IngestOptions, ingest, plan_batches};
use floe::pipeline::write::{encode, read_object};
use floe::ports::ObjectMeta;
use floe::sample::{self, EventsSpec};
use floe::table::WriterTable;

use crate::inputs;

#[derive(Debug, Args)]
pub(crate) struct BenchArgs {
    /// Folder of Avro files to ingest (default: generate --files x --events-per-file events).
    #[arg(long)]
    input: Option<PathBuf>,
    /// Files to generate when no --input is given.
    #[arg(long, default_value_t = 200)]
    files: u64,
    /// Events per generated file.
    #[arg(long, default_value_t = 3500)]
    events_per_file: usize,
    /// Codec of generated files.
    #[arg(long, default_value = "snappy")]
    codec: String,
    /// Timed repetitions of each measurement (the median is reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Partition spec of the benchmark table.
    #[arg(long, default_value = "day(event_time), identity(tenant_id)")]
    partition_by: String,
    /// Sort order of the benchmark table.
    #[arg(long, default_value = "tenant_id, event_time")]
    sort_by: String,
    /// Dedup key of the benchmark table ("" for none).
    #[arg(long, default_value = "event_id")]
    dedup_key: String,
    /// Parquet compression.
    #[arg(long, default_value = "zstd(3)")]
    compression: String,
    /// Run only these measurements (comma-separated: baseline, writer, decode, ingest), e.g.
    /// under a profiler.
    #[arg(long, value_delimiter = ',')]
    only: Vec<String>,
    /// Also write the figures as JSON to this file.
    #[arg(long)]
    json: Option<PathBuf>,
    /// Scratch folder (default: a temporary folder, removed afterwards).
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

pub(crate) async fn run(a: BenchArgs) -> anyhow::Result<ExitCode> {
    let scratch = match &a.work_dir {
        Some(d) => {
            std::fs::create_dir_all(d)?;
            tempfile_in(d)?
        }
        None => tempfile_in(&std::env::temp_dir())?,
    };
    let input = match &a.input {
        Some(p) => p.clone(),
        None => generate_input(&a, &scratch)?,
    };
    let store = floe::adapters::local::LocalFsObjectStore::new();
    let objects = inputs::objects(&store, std::slice::from_ref(&input)).await?;
    let data: Vec<Vec<u8>> = objects
        .iter()
        .map(|o| std::fs::read(local::uri_to_path(&o.uri)?).with_context(|| o.uri.clone()))
        .collect::<anyhow::Result<_>>()?;
    let avro_bytes: u64 = data.iter().map(|d| d.len() as u64).sum();

    let engine = EngineConfig::default();
    let cfg = table_config(&a)?;
    let wh_dir = scratch.join("warehouse");
    let ports = local::ports(&wh_dir)?;
    let warehouse = local::warehouse_uri(&wh_dir)?;
    let (state, _) = ensure_table(&ports, &engine, &cfg, &warehouse, &objects).await?;
    let table = WriterTable::from_metadata(&cfg.table, &state.metadata)?;

    // Same writer batches as `floe ingest` makes.
    let opts = IngestOptions::default();
    let batches = batch_indices(&objects, &opts);
    let infos: Vec<avro::ContainerInfo> =
        data.iter().map(|d| avro::inspect(d).map_err(|r| anyhow::anyhow!("{r}"))).collect::<anyhow::Result<_>>()?;
    let events: u64 = infos.iter().map(|i| i.records).sum();
    if events == 0 {
        bail!("the input holds no events");
    }
    eprintln!(
        "{} files, {events} events, {:.1} MB of Avro, {} writer batch(es)",
        data.len(),
        avro_bytes as f64 / 1e6,
        batches.len()
    );

    let props = parquet::writer_properties(floe::config::parse_compression(&a.compression)?, engine.row_group_rows);
    let want = |name: &str| a.only.is_empty() || a.only.iter().any(|o| o == name);
    // The single-threaded measurements run in rounds, one run of each per round, so that a
    // slower or faster spell of the machine falls on all of them alike.
    let sort = cfg.sort_by.clone();
    let mut rounds = Rounds::default();
    if want("baseline") {
        rounds.add("baseline", || {
            for b in &batches {
                let mut decoded = vec![];
                for &i in b {
                    let d = avro::decode(&data[i], &infos[i], avro::DecodeLimits::NONE);
                    decoded.extend(d.map_err(|r| anyhow::anyhow!("{r}"))?);
                }
                std::hint::black_box(raw_sort_encode(&decoded, &sort, &props)?);
            }
            Ok(())
        });
    }
    if want("writer") {
        rounds.add("writer path", || {
            for b in &batches {
                let mut decoded = vec![];
                let mut bytes = 0;
                for &i in b {
                    decoded.extend(
                        read_object(&data[i], &table, None, &engine).map_err(|r| anyhow::anyhow!("{r}"))?.batches,
                    );
                    bytes += data[i].len();
                }
                let rows: usize = decoded.iter().map(|b| b.num_rows()).sum();
                let mut files = 0;
                encode(&table, &engine, decoded, "bench", bytes as f64 / rows.max(1) as f64, &mut |meta, body| {
                    std::hint::black_box((meta, body));
                    files += 1;
                    Ok(())
                })?;
                std::hint::black_box(files);
            }
            Ok(())
        });
    }
    if want("decode") {
        rounds.add("decode arrow-avro", || {
            for (d, i) in data.iter().zip(&infos) {
                std::hint::black_box(avro::decode(d, i, avro::DecodeLimits::NONE).map_err(|r| anyhow::anyhow!("{r}"))?);
            }
            Ok(())
        });
        rounds.add("decode apache-avro", || {
            for d in &data {
                for v in apache_avro_reader(d)? {
                    std::hint::black_box(v?);
                }
            }
            Ok(())
        });
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    if want("ingest") {
        // The whole pipeline on all cores (process CPU time), a fresh table each run. The runs'
        // folders are removed only after the last round: ext4 skips over inodes freed in the
        // last minutes when it allocates new ones, so removing a run's ~500 files just before
        // the next run makes that run's file creations pay for the benchmark's own cleanup.
        let runtime = tokio::runtime::Handle::current();
        let mut run_no = 0;
        let (cfg, objects, opts, engine) = (&cfg, &objects, &opts, &engine);
        let scratch = &scratch;
        rounds.add_process(&format!("ingest ({cores} cores)"), cores, move || {
            run_no += 1;
            let dir = scratch.join(format!("ingest-{run_no}"));
            let p = local::ports(&dir)?;
            let rep = tokio::task::block_in_place(|| {
                runtime.block_on(ingest(engine, &p, cfg, &local::warehouse_uri(&dir)?, objects.clone(), opts))
            })?;
            if rep.rows_in != events {
                bail!("ingest read {} events, expected {events}", rep.rows_in);
            }
            Ok(())
        });
    }
    let results = rounds.run(a.runs)?;
    for entry in std::fs::read_dir(&scratch).into_iter().flatten().flatten() {
        if entry.file_name().to_string_lossy().starts_with("ingest-") {
            std::fs::remove_dir_all(entry.path()).ok();
        }
    }
    let report = Report { files: data.len(), events, avro_bytes, cores, runs: a.runs.max(1), results };
    report.print();
    if let Some(path) = &a.json {
        std::fs::write(path, serde_json::to_vec_pretty(&report.json())?).with_context(|| path.display().to_string())?;
    }
    if a.work_dir.is_none() {
        std::fs::remove_dir_all(&scratch).ok();
    }
    Ok(ExitCode::SUCCESS)
}

/// Generates the benchmark's events under `scratch/input` (`--files` x `--events-per-file`).
fn generate_input(a: &BenchArgs, scratch: &std::path::Path) -> anyhow::Result<PathBuf> {
    let dir = scratch.join("input");
    std::fs::create_dir_all(&dir)?;
    let spec = EventsSpec {
        events_per_file: a.events_per_file,
        tenants: 100,
        dup_rate: 0.01,
        codec: sample::codec(&a.codec)?,
        ..Default::default()
    };
    eprintln!("generating {} files x {} events into {}", a.files, a.events_per_file, dir.display());
    for i in 0..a.files {
        std::fs::write(dir.join(format!("part-{i:05}.avro")), sample::events_file(&spec, 42, i)?.0)?;
    }
    Ok(dir)
}

/// The benchmark table's settings, from the flags.
fn table_config(a: &BenchArgs) -> anyhow::Result<TableConfig> {
    let mut cfg = TableConfig::new("bench.events".parse()?).with_compression(&a.compression)?;
    if !a.partition_by.is_empty() {
        cfg = cfg.with_partition_by(&a.partition_by)?;
    }
    if !a.sort_by.is_empty() {
        cfg = cfg.with_sort_by(&a.sort_by)?;
    }
    if !a.dedup_key.is_empty() {
        cfg = cfg.with_dedup_key(&a.dedup_key)?;
    }
    Ok(cfg)
}

/// The writer batches `floe ingest` makes of `objects`, as indices into it (batches keep the
/// objects' order).
fn batch_indices(objects: &[ObjectMeta], opts: &IngestOptions) -> Vec<Vec<usize>> {
    let mut next = 0;
    plan_batches(objects.to_vec(), opts)
        .iter()
        .map(|b| {
            let start = next;
            next += b.len();
            (start..next).collect()
        })
        .collect()
}

/// The raw limit of a writer batch: its decoded rows concatenated, sorted by the table's sort
/// columns, and encoded as one Parquet file, with nothing else (no dedup, partitioning,
/// metrics, or checks).
fn raw_sort_encode(
    decoded: &[arrow::record_batch::RecordBatch],
    sort: &[floe::config::SortTerm],
    props: &::parquet::file::properties::WriterProperties,
) -> anyhow::Result<Vec<u8>> {
    let schema = decoded[0].schema();
    let all = arrow::compute::concat_batches(&schema, decoded)?;
    let keys = sort
        .iter()
        .map(|t| {
            let values = all.column_by_name(&t.column).with_context(|| format!("sort column {}", t.column))?;
            let options = arrow::compute::SortOptions { descending: t.descending, nulls_first: t.nulls_first };
            Ok(arrow::compute::SortColumn { values: values.clone(), options: Some(options) })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let sorted = if keys.is_empty() {
        all
    } else {
        arrow::compute::take_record_batch(&all, &arrow::compute::lexsort_to_indices(&keys, None)?)?
    };
    let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, Some(props.clone()))?;
    w.write(&sorted)?;
    Ok(w.into_inner()?)
}

/// Which CPU time a measurement counts: the calling thread's (single-threaded work) or the
/// whole process's (the pipeline, on every core).
#[derive(Clone, Copy)]
pub(crate) enum Cpu {
    Thread,
    Process,
}

pub(crate) fn cpu_now(which: Cpu) -> Duration {
    let id = match which {
        Cpu::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
        Cpu::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
    };
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    let rc = unsafe { libc::clock_gettime(id, &mut ts) };
    if rc != 0 {
        return Duration::ZERO;
    }
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Wall and CPU time of one run.
#[derive(Clone, Copy)]
struct Sample {
    wall: Duration,
    cpu: Duration,
}

struct Clock {
    wall: Instant,
    thread: Duration,
    process: Duration,
}

impl Clock {
    fn start() -> Self {
        Clock { wall: Instant::now(), thread: cpu_now(Cpu::Thread), process: cpu_now(Cpu::Process) }
    }

    fn stop(&self, which: Cpu) -> Sample {
        let cpu = match which {
            Cpu::Thread => cpu_now(which).saturating_sub(self.thread),
            Cpu::Process => cpu_now(which).saturating_sub(self.process),
        };
        Sample { wall: self.wall.elapsed(), cpu }
    }
}

/// One measurement: the run of median CPU time, and every run in round order (for ratios
/// taken round by round).
struct Measured {
    name: String,
    cores: usize,
    wall: Duration,
    cpu: Duration,
    rounds: Vec<Duration>,
}

impl Measured {
    fn median(name: &str, cores: usize, runs: Vec<Sample>) -> Self {
        let rounds = runs.iter().map(|s| s.cpu).collect();
        let mut sorted = runs;
        sorted.sort_by_key(|s| s.cpu);
        let m = sorted[sorted.len() / 2];
        Measured { name: name.to_string(), cores, wall: m.wall, cpu: m.cpu, rounds }
    }
}

/// A ratio of events per CPU-second taken round by round: the median and the range.
struct Paired {
    name: &'static str,
    median: f64,
    min: f64,
    max: f64,
    goal: f64,
}

/// `base`'s CPU time over `m`'s in each round (both ran the same events in that round, one
/// after the other), so that the machine's speed drifting between rounds cancels out.
fn paired(name: &'static str, goal: f64, base: &Measured, m: &Measured) -> Option<Paired> {
    let mut r: Vec<f64> =
        base.rounds.iter().zip(&m.rounds).map(|(b, x)| b.as_secs_f64() / x.as_secs_f64().max(1e-9)).collect();
    r.sort_by(f64::total_cmp);
    Some(Paired { name, median: *r.get(r.len() / 2)?, min: *r.first()?, max: *r.last()?, goal })
}

/// Measurements taken in rounds: a warm-up round, then `runs` rounds of one run each.
#[derive(Default)]
struct Rounds<'a> {
    runs: Vec<Round<'a>>,
}

/// One measurement of [`Rounds`]: what it runs, and on how many cores.
struct Round<'a> {
    name: String,
    cores: usize,
    cpu: Cpu,
    f: Box<dyn FnMut() -> anyhow::Result<()> + 'a>,
}

impl<'a> Rounds<'a> {
    /// A single-threaded measurement (the calling thread's CPU time).
    fn add(&mut self, name: &str, f: impl FnMut() -> anyhow::Result<()> + 'a) {
        self.runs.push(Round { name: name.into(), cores: 1, cpu: Cpu::Thread, f: Box::new(f) });
    }

    /// A measurement on `cores` cores (the whole process's CPU time).
    fn add_process(&mut self, name: &str, cores: usize, f: impl FnMut() -> anyhow::Result<()> + 'a) {
        self.runs.push(Round { name: name.into(), cores, cpu: Cpu::Process, f: Box::new(f) });
    }

    fn run(mut self, runs: usize) -> anyhow::Result<Vec<Measured>> {
        let mut samples: Vec<Vec<Sample>> = vec![vec![]; self.runs.len()];
        for round in 0..=runs.max(1) {
            for (r, out) in self.runs.iter_mut().zip(&mut samples) {
                let clock = Clock::start();
                (r.f)()?;
                if round > 0 {
                    out.push(clock.stop(r.cpu));
                }
            }
        }
        Ok(self.runs.iter().zip(samples).map(|(r, s)| Measured::median(&r.name, r.cores, s)).collect())
    }
}

/// The goals of the performance issue: CPU per event against the raw baseline.
const GOALS: [(&str, f64); 2] = [("writer path", 0.9), ("ingest", 0.8)];

struct Report {
    files: usize,
    events: u64,
    avro_bytes: u64,
    cores: usize,
    runs: usize,
    results: Vec<Measured>,
}

impl Report {
    fn per_cpu_second(&self, m: &Measured) -> f64 {
        self.events as f64 / m.cpu.as_secs_f64().max(1e-9)
    }

    fn find(&self, prefix: &str) -> Option<&Measured> {
        self.results.iter().find(|m| m.name.starts_with(prefix))
    }

    /// Each measurement's events per CPU-second over the baseline's, round by round.
    fn ratios(&self) -> Vec<Paired> {
        let Some(base) = self.find("baseline") else { return vec![] };
        GOALS.iter().filter_map(|(name, goal)| paired(name, *goal, base, self.find(name)?)).collect()
    }

    fn print(&self) {
        println!(
            "input: {} files, {} events, {:.1} MB Avro; {} core(s); median of {} run(s)",
            self.files,
            self.events,
            self.avro_bytes as f64 / 1e6,
            self.cores,
            self.runs
        );
        println!(
            "{:<26} {:>14} {:>10} {:>9} {:>9} {:>14}",
            "measurement", "events/cpu-s", "MB/cpu-s", "cpu s", "wall s", "events/s/core"
        );
        for m in &self.results {
            let wall_core = m.wall.as_secs_f64() * m.cores as f64;
            println!(
                "{:<26} {:>14.0} {:>10.1} {:>9.3} {:>9.3} {:>14.0}",
                m.name,
                self.per_cpu_second(m),
                self.avro_bytes as f64 / 1e6 / m.cpu.as_secs_f64().max(1e-9),
                m.cpu.as_secs_f64(),
                m.wall.as_secs_f64(),
                self.events as f64 / wall_core.max(1e-9)
            );
        }
        for p in self.ratios() {
            let verdict = if p.median >= p.goal { "met" } else { "NOT met" };
            println!(
                "{} / baseline (events per CPU-second, median of the rounds' ratios): {:.2}x (rounds {:.2}-{:.2})  goal >= {:.2}x: {verdict}",
                p.name, p.median, p.min, p.max, p.goal
            );
        }
        if let (Some(a), Some(b)) = (self.find("decode arrow-avro"), self.find("decode apache-avro")) {
            println!("arrow-avro / apache-avro decode throughput: {:.2}x", b.cpu.as_secs_f64() / a.cpu.as_secs_f64());
        }
    }

    fn json(&self) -> serde_json::Value {
        let rows: Vec<serde_json::Value> = self
            .results
            .iter()
            .map(|m| {
                serde_json::json!({
                    "name": m.name, "cpu_s": m.cpu.as_secs_f64(), "wall_s": m.wall.as_secs_f64(),
                    "cores": m.cores, "events_per_cpu_s": self.per_cpu_second(m),
                })
            })
            .collect();
        let ratios: Vec<serde_json::Value> = self
            .ratios()
            .into_iter()
            .map(|p| serde_json::json!({"name": p.name, "ratio": p.median, "min": p.min, "max": p.max, "goal": p.goal}))
            .collect();
        serde_json::json!({
            "files": self.files, "events": self.events, "avro_bytes": self.avro_bytes,
            "cores": self.cores, "runs": self.runs, "results": rows, "ratios": ratios,
        })
    }
}

fn apache_avro_reader(d: &[u8]) -> anyhow::Result<apache_avro::Reader<'_, &[u8]>> {
    Ok(apache_avro::Reader::new(d)?)
}

fn tempfile_in(parent: &std::path::Path) -> anyhow::Result<PathBuf> {
    let p = parent.join(format!("floe-bench-{}", std::process::id()));
    std::fs::create_dir_all(&p)?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(name: &str, secs: &[f64]) -> Measured {
        let runs = secs
            .iter()
            .map(|s| Sample { wall: Duration::from_secs_f64(*s), cpu: Duration::from_secs_f64(*s) })
            .collect();
        Measured::median(name, 1, runs)
    }

    #[test]
    fn ratios_are_taken_round_by_round() {
        // The machine's speed changes from round to round; in four rounds of five the measurement
        // costs 1.25x the baseline (0.8x), in one a slow spell hit it alone (0.5x). The paired
        // median is 0.8x, where the ratio of the two medians (1.5 s over 2.0 s) would say 0.75x.
        let base = measured("baseline", &[1.0, 2.0, 1.0, 2.0, 1.5]);
        let m = measured("ingest", &[2.0, 2.5, 1.25, 2.5, 1.875]);
        let p = paired("ingest", 0.8, &base, &m).unwrap();
        assert_eq!((p.min, p.median, p.max), (0.5, 0.8, 0.8));
        assert_eq!(base.cpu.as_secs_f64() / m.cpu.as_secs_f64(), 0.75);
        let none = Measured { rounds: vec![], ..measured("ingest", &[1.0]) };
        assert!(paired("ingest", 0.8, &base, &none).is_none());
    }
}
