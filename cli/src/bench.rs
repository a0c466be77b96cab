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
    /// Scratch folder (default: a temporary folder, removed afterwards).
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<F: FnMut() -> anyhow::Result<()>>(runs: usize, mut f: F) -> anyhow::Result<Duration> {
    f()?; // warm-up
    let mut t = vec![];
    for _ in 0..runs.max(1) {
        let s = Instant::now();
        f()?;
        t.push(s.elapsed());
    }
    Ok(median(t))
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
        None => {
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
            dir
        }
    };
    let store = floe::adapters::local::LocalFsObjectStore::new();
    let objects = inputs::objects(&store, std::slice::from_ref(&input)).await?;
    let data: Vec<Vec<u8>> = objects
        .iter()
        .map(|o| std::fs::read(local::uri_to_path(&o.uri)?).with_context(|| o.uri.clone()))
        .collect::<anyhow::Result<_>>()?;
    let avro_bytes: u64 = data.iter().map(|d| d.len() as u64).sum();

    let engine = EngineConfig::default();
    let table_ident = "bench.events".parse()?;
    let mut cfg = TableConfig::new(table_ident).with_compression(&a.compression)?;
    if !a.partition_by.is_empty() {
        cfg = cfg.with_partition_by(&a.partition_by)?;
    }
    if !a.sort_by.is_empty() {
        cfg = cfg.with_sort_by(&a.sort_by)?;
    }
    if !a.dedup_key.is_empty() {
        cfg = cfg.with_dedup_key(&a.dedup_key)?;
    }
    let wh_dir = scratch.join("warehouse");
    let ports = local::ports(&wh_dir)?;
    let warehouse = local::warehouse_uri(&wh_dir)?;
    let (state, _) = ensure_table(&ports, &engine, &cfg, &warehouse, &objects).await?;
    let table = WriterTable::from_metadata(&cfg.table, &state.metadata)?;

    // Same writer batches as `floe ingest` makes.
    let opts = IngestOptions::default();
    let indexed: Vec<ObjectMeta> = objects.clone();
    let batches: Vec<Vec<usize>> = {
        let plan = plan_batches(indexed, &opts);
        let mut i = 0;
        plan.iter()
            .map(|b| {
                b.iter()
                    .map(|_| {
                        i += 1;
                        i - 1
                    })
                    .collect()
            })
            .collect()
    };
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

    let props = parquet::writer_properties(&a.compression, engine.row_group_rows)?;
    let baseline = time(a.runs, || {
        for b in &batches {
            let mut decoded = vec![];
            for &i in b {
                decoded.extend(
                    avro::decode(&data[i], &infos[i], avro::DecodeLimits::NONE).map_err(|r| anyhow::anyhow!("{r}"))?,
                );
            }
            let schema = decoded[0].schema();
            let all = arrow::compute::concat_batches(&schema, &decoded)?;
            let mut w = ::parquet::arrow::ArrowWriter::try_new(Vec::new(), schema, Some(props.clone()))?;
            w.write(&all)?;
            std::hint::black_box(w.into_inner()?);
        }
        Ok(())
    })?;
    let (mut read_t, mut encode_t) = (Duration::ZERO, Duration::ZERO);
    let writer = time(a.runs, || {
        for b in &batches {
            let mut decoded = vec![];
            let mut bytes = 0;
            let s = Instant::now();
            for &i in b {
                decoded.extend(read_object(&data[i], &table, &engine).map_err(|r| anyhow::anyhow!("{r}"))?.batches);
                bytes += data[i].len();
            }
            read_t += s.elapsed();
            let s = Instant::now();
            let rows: usize = decoded.iter().map(|b| b.num_rows()).sum();
            let mut files = 0;
            encode(&table, &engine, decoded, "bench", bytes as f64 / rows.max(1) as f64, &mut |meta, body| {
                std::hint::black_box((meta, body));
                files += 1;
                Ok(())
            })?;
            std::hint::black_box(files);
            encode_t += s.elapsed();
        }
        Ok(())
    })?;
    let calls = (a.runs.max(1) + 1) as u32;
    eprintln!(
        "writer path split: read+decode+conform {:?}, dedup+cluster+encode {:?} per pass",
        read_t / calls,
        encode_t / calls
    );
    let decode_arrow = time(a.runs, || {
        for (d, i) in data.iter().zip(&infos) {
            std::hint::black_box(avro::decode(d, i, avro::DecodeLimits::NONE).map_err(|r| anyhow::anyhow!("{r}"))?);
        }
        Ok(())
    })?;
    let decode_apache = time(a.runs, || {
        for d in &data {
            let reader = apache_avro_reader(d)?;
            let mut n = 0u64;
            for v in reader {
                std::hint::black_box(v?);
                n += 1;
            }
            std::hint::black_box(n);
        }
        Ok(())
    })?;
    // Whole pipeline, all cores, fresh table each run.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut runs = vec![];
    for r in 0..a.runs.max(1) {
        let dir = scratch.join(format!("ingest-{r}"));
        let p = local::ports(&dir)?;
        let s = Instant::now();
        let rep = ingest(&engine, &p, &cfg, &local::warehouse_uri(&dir)?, objects.clone(), &opts).await?;
        runs.push(s.elapsed());
        if rep.rows_in != events {
            bail!("ingest read {} events, expected {events}", rep.rows_in);
        }
        std::fs::remove_dir_all(&dir).ok();
    }
    let ingest_t = median(runs);

    let row = |name: &str, d: Duration, cores: usize| {
        let s = d.as_secs_f64() * cores as f64;
        println!(
            "{name:<22} {:>12.0} {:>12.1} {:>10.3}",
            events as f64 / s,
            avro_bytes as f64 / 1e6 / s,
            d.as_secs_f64()
        );
    };
    println!(
        "input: {} files, {events} events, {:.1} MB Avro; {} core(s); median of {} run(s)",
        data.len(),
        avro_bytes as f64 / 1e6,
        cores,
        a.runs.max(1)
    );
    println!("{:<22} {:>12} {:>12} {:>10}", "measurement", "events/s/core", "MB/s/core", "seconds");
    row("baseline (decode+encode)", baseline, 1);
    row("writer path", writer, 1);
    row("decode arrow-avro", decode_arrow, 1);
    row("decode apache-avro", decode_apache, 1);
    row(&format!("ingest ({cores} cores)"), ingest_t, cores);
    println!("writer / baseline throughput: {:.2}x", baseline.as_secs_f64() / writer.as_secs_f64());
    println!(
        "arrow-avro / apache-avro decode throughput: {:.2}x",
        decode_apache.as_secs_f64() / decode_arrow.as_secs_f64()
    );
    if a.work_dir.is_none() {
        std::fs::remove_dir_all(&scratch).ok();
    }
    Ok(ExitCode::SUCCESS)
}

fn apache_avro_reader(d: &[u8]) -> anyhow::Result<apache_avro::Reader<'_, &[u8]>> {
    Ok(apache_avro::Reader::new(d)?)
}

fn tempfile_in(parent: &std::path::Path) -> anyhow::Result<PathBuf> {
    let p = parent.join(format!("floe-bench-{}", std::process::id()));
    std::fs::create_dir_all(&p)?;
    Ok(p)
}
