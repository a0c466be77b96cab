//! `floe bench-table`: a table's cost against its age, in embedded mode. Thousands of small
//! commits (one writer batch of one small file each) through one warm committer, with a
//! compaction every `--compact-every` commits; every commit is measured and written as a CSV row
//! (`tests/bench/table_age.py` plots them): latency, objects and bytes the committer read and
//! wrote, manifests, metadata.json size, snapshots, live data files and files per partition, and
//! the time of a fixed calibration workload run just before (the same work every time: latency
//! divided by it tells a costlier commit from a slower moment of the machine). The run ends
//! with write amplification and compaction throughput next to the writer's.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use async_trait::async_trait;
use bytes::Bytes;
use clap::Args;
use floe::PortError;
use floe::adapters::local;
use floe::config::{EngineConfig, TableConfig};
use floe::pipeline::commit::Committer;
use floe::pipeline::compact::{CompactOptions, compact};
use floe::pipeline::create::ensure_table;
use floe::pipeline::write::write;
use floe::ports::{ObjectMeta, ObjectStore, Ports};
use floe::sample::{self, EventsSpec};
use floe::table::{Manifests, WriterTable, load_table};

#[derive(Debug, Args)]
pub(crate) struct TableBenchArgs {
    /// Writer commits to make.
    #[arg(long, default_value_t = 10_000)]
    commits: u64,
    /// Events per source file (one file per commit).
    #[arg(long, default_value_t = 200)]
    events_per_file: usize,
    /// Tenants (one partition each per day).
    #[arg(long, default_value_t = 4)]
    tenants: usize,
    /// A compaction (then a commit of its rewrites) after every this many commits.
    #[arg(long, default_value_t = 100)]
    compact_every: u64,
    /// Snapshots older than this many milliseconds expire (the newest --keep are kept).
    #[arg(long, default_value_t = 2000)]
    max_snapshot_age_ms: u64,
    /// Snapshots always kept.
    #[arg(long, default_value_t = 50)]
    keep: u64,
    /// The table's manifest merge target (`commit.manifest.target-size-bytes`), in KiB: manifests
    /// at least this big are not merged, and a committer keeps only their digests (default:
    /// Iceberg's 8 MiB).
    #[arg(long)]
    manifest_target_kb: Option<u64>,
    /// Where the per-commit CSV goes.
    #[arg(long)]
    out: PathBuf,
    /// Scratch folder (default: a temporary folder, removed afterwards).
    #[arg(long)]
    work_dir: Option<PathBuf>,
}

/// An object store that counts what goes through it.
struct Counting {
    inner: Arc<dyn ObjectStore>,
    reads: AtomicU64,
    read_bytes: AtomicU64,
    writes: AtomicU64,
    write_bytes: AtomicU64,
    deletes: AtomicU64,
}

impl Counting {
    fn snapshot(&self) -> [u64; 5] {
        [&self.reads, &self.read_bytes, &self.writes, &self.write_bytes, &self.deletes]
            .map(|c| c.load(Ordering::Relaxed))
    }
    fn read(&self, n: usize) {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.read_bytes.fetch_add(n as u64, Ordering::Relaxed);
    }
    fn wrote(&self, n: usize) {
        self.writes.fetch_add(1, Ordering::Relaxed);
        self.write_bytes.fetch_add(n as u64, Ordering::Relaxed);
    }
}

#[async_trait]
impl ObjectStore for Counting {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        let b = self.inner.get(uri).await?;
        self.read(b.len());
        Ok(b)
    }
    async fn get_range(&self, uri: &str, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
        let b = self.inner.get_range(uri, range).await?;
        self.read(b.len());
        Ok(b)
    }
    async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError> {
        let b = self.inner.get_version(meta).await?;
        self.read(b.as_ref().map_or(0, Bytes::len));
        Ok(b)
    }
    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.head(uri).await
    }
    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        self.wrote(body.len());
        self.inner.put(uri, body).await
    }
    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        self.wrote(body.len());
        self.inner.put_if_absent(uri, body).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.list(prefix).await
    }
    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        self.deletes.fetch_add(1, Ordering::Relaxed);
        self.inner.delete(uri).await
    }
}

const HEADER: &str = "commit,kind,calibration_ms,latency_ms,reads,read_bytes,writes,write_bytes,deletes,manifests,metadata_bytes,snapshots,live_files,partitions,max_files_per_partition,mean_files_per_partition";

pub(crate) async fn run(a: TableBenchArgs) -> anyhow::Result<ExitCode> {
    let scratch = match &a.work_dir {
        Some(d) => (d.clone(), None),
        None => {
            let t = tempfile::tempdir()?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let wh_dir = scratch.0.join("wh");
    let base = local::ports(&wh_dir)?;
    let counting = Arc::new(Counting {
        inner: base.store.clone(),
        reads: AtomicU64::new(0),
        read_bytes: AtomicU64::new(0),
        writes: AtomicU64::new(0),
        write_bytes: AtomicU64::new(0),
        deletes: AtomicU64::new(0),
    });
    let ports = Ports { store: counting.clone(), ..base };
    let engine = EngineConfig::default();
    let mut cfg = TableConfig::new("bench.age".parse()?)
        .with_partition_by("day(event_time), identity(tenant_id)")?
        .with_sort_by("tenant_id, event_time")?
        .with_dedup_key("event_id")?;
    cfg.properties.insert("history.expire.max-snapshot-age-ms".into(), a.max_snapshot_age_ms.to_string());
    cfg.properties.insert("history.expire.min-snapshots-to-keep".into(), a.keep.to_string());
    if let Some(kb) = a.manifest_target_kb {
        cfg.properties.insert("commit.manifest.target-size-bytes".into(), (kb * 1024).to_string());
    }
    let spec = EventsSpec { events_per_file: a.events_per_file, tenants: a.tenants, ..Default::default() };
    let src = scratch.0.join("in");
    std::fs::create_dir_all(&src)?;
    let warehouse = local::warehouse_uri(&wh_dir)?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(&a.out).with_context(|| a.out.display().to_string())?);
    writeln!(out, "{HEADER}")?;

    let mut committer = Committer::new(engine.clone(), ports.clone());
    let mut table: Option<WriterTable> = None;
    let (mut writer_time, mut writer_bytes, mut writer_rows) = (Duration::ZERO, 0u64, 0u64);
    let (mut compact_time, mut compact_in, mut compact_out, mut compact_rows) = (Duration::ZERO, 0u64, 0u64, 0u64);
    let mut written_by_writers = 0u64;
    let started = Instant::now();
    let mut row = 0u64;
    for i in 0..a.commits {
        let (bytes, _) = sample::events_file(&spec, 4242, i)?;
        let path = src.join(format!("part-{i:06}.avro"));
        std::fs::write(&path, &bytes)?;
        let obj = ports.store.head(&local::path_to_uri(&path)).await?;
        if table.is_none() {
            let (state, _) = ensure_table(&ports, &engine, &cfg, &warehouse, std::slice::from_ref(&obj)).await?;
            table = Some(WriterTable::from_metadata(&cfg.table, &state.metadata)?);
        }
        let t = Instant::now();
        let outcome = write(&engine, &ports, table.as_ref().expect("table"), vec![obj]).await?;
        writer_time += t.elapsed();
        writer_bytes += bytes.len() as u64;
        writer_rows += outcome.rows_in;
        written_by_writers += outcome.manifest.iter().flat_map(|m| &m.files).map(|f| f.file_size_in_bytes).sum::<u64>();
        row += 1;
        commit_all(&mut committer, &ports, &counting, &mut out, row, "append").await?;
        if (i + 1) % a.compact_every == 0 {
            let t = Instant::now();
            // One task at a time, so that its throughput is per core, next to the writer's.
            let one = CompactOptions { parallelism: 1, ..CompactOptions::default() };
            let report = compact(&engine, &ports, &cfg.table, &one).await?;
            compact_time += t.elapsed();
            compact_in += report.totals.bytes_read;
            compact_out += report.totals.bytes_written;
            compact_rows += report.totals.rows_in;
            row += 1;
            commit_all(&mut committer, &ports, &counting, &mut out, row, "rewrite").await?;
        }
        if i % 1000 == 999 {
            eprintln!("{} commits, {:.0} s", i + 1, started.elapsed().as_secs_f64());
        }
    }
    out.flush()?;
    let per_core = |bytes: u64, t: Duration| bytes as f64 / 1e6 / t.as_secs_f64().max(1e-9);
    println!(
        "commits            {} writer commits, {} rows, {:.0} s",
        a.commits,
        writer_rows,
        started.elapsed().as_secs_f64()
    );
    println!(
        "write amplification {:.2} (bytes rewritten by compaction / bytes written by writers)",
        compact_out as f64 / written_by_writers.max(1) as f64
    );
    println!(
        "throughput per core writer {:.1} MB/s of Avro ({:.0} rows/s); compaction {:.1} MB/s of Parquet in ({:.0} rows/s)",
        per_core(writer_bytes, writer_time),
        writer_rows as f64 / writer_time.as_secs_f64().max(1e-9),
        per_core(compact_in, compact_time),
        compact_rows as f64 / compact_time.as_secs_f64().max(1e-9)
    );
    let parsed = committer.parsed_entries(&cfg.table).unwrap_or(0);
    println!("committer memory   {parsed} manifest entries kept parsed (those of manifests under the merge target)");
    println!("per-commit figures in {}", a.out.display());
    drop(scratch);
    Ok(ExitCode::SUCCESS)
}

/// Commits everything waiting on the commit queue, one committer batch at a time, and writes a
/// CSV row per batch.
async fn commit_all(
    committer: &mut Committer,
    ports: &Ports,
    counting: &Counting,
    out: &mut impl std::io::Write,
    row: u64,
    kind: &str,
) -> anyhow::Result<()> {
    loop {
        let calibration = calibrate();
        let before = counting.snapshot();
        let t = Instant::now();
        let Some(outcome) = committer.run_once(1000, Duration::from_secs(60)).await? else { return Ok(()) };
        let latency = t.elapsed();
        let after = counting.snapshot();
        if let Some((_, r)) = outcome.results.iter().find(|(_, r)| !r.ack()) {
            anyhow::bail!("a commit was not acknowledged: {r:?}");
        }
        let table = outcome.snapshots.first().map(|l| l.table.clone());
        let Some(table) = table else { continue };
        let shape = shape(ports, &table).await?;
        let d: Vec<u64> = after.iter().zip(before).map(|(a, b)| a - b).collect();
        writeln!(
            out,
            "{row},{kind},{:.3},{:.3},{},{},{},{},{},{}",
            calibration.as_secs_f64() * 1e3,
            latency.as_secs_f64() * 1e3,
            d[0],
            d[1],
            d[2],
            d[3],
            d[4],
            shape
        )?;
    }
}

/// A fixed amount of CPU and allocation work (hashing and JSON-encoding the same 256 KiB),
/// timed next to every commit: the baseline that tells a slower machine from a costlier commit.
fn calibrate() -> Duration {
    use sha2::Digest;
    let t = Instant::now();
    let data: Vec<u64> = (0..32_768u64).collect();
    let json = serde_json::to_vec(&data).unwrap_or_default();
    let digest = sha2::Sha256::digest(&json);
    std::hint::black_box(digest);
    t.elapsed()
}

/// The table's shape now (read outside the measured commit): manifests, metadata.json bytes,
/// snapshots, live files, partitions, max and mean files per partition.
async fn shape(ports: &Ports, table: &floe::TableIdent) -> anyhow::Result<String> {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await?.context("table")?;
    let metadata_bytes = std::fs::metadata(local::uri_to_path(&state.pointer.metadata_location)?)?.len();
    let mut reads = 0;
    let m = Manifests::load(ports.store.as_ref(), &state.metadata, &mut reads).await?;
    let mut per_partition: HashMap<String, u64> = HashMap::new();
    let mut live = 0;
    m.scan_live(ports.store.as_ref(), &mut reads, |_, _, e| {
        live += 1;
        *per_partition.entry(format!("{:?}", e.data_file().partition())).or_default() += 1;
    })
    .await?;
    let max = per_partition.values().max().copied().unwrap_or(0);
    let mean = live as f64 / per_partition.len().max(1) as f64;
    Ok(format!(
        "{},{},{},{},{},{},{:.2}",
        m.list.len(),
        metadata_bytes,
        state.metadata.snapshots().len(),
        live,
        per_partition.len(),
        max,
        mean
    ))
}
