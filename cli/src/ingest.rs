//! `floe ingest`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use floe::TableIdent;
use floe::adapters::local;

use anyhow::bail;
use floe::config::{EngineConfig, FloeToml, TableConfig};
use floe::pipeline::ingest::{IngestOptions, ingest};
use floe::ports::{ObjectMeta, Ports};
use floe::route::Router;

use crate::inputs;
use crate::progress::{Counters, Progress};

#[derive(Debug, Args)]
pub(crate) struct IngestArgs {
    /// Avro object container files, or folders of them (searched recursively for *.avro).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// Warehouse directory (created if missing); holds catalog.db and the tables.
    #[arg(long)]
    warehouse: PathBuf,
    #[command(flatten)]
    catalog: crate::catalog::CatalogArg,
    /// Destination table, NAMESPACE.NAME. Without it, each file is routed by the floe.toml's
    /// `[[table]]` prefixes (and `route_by` values), matched against its path relative to the
    /// folder it was found under.
    #[arg(long)]
    table: Option<String>,
    /// Partition spec for a new table, e.g. "day(event_time),identity(tenant_id)".
    #[arg(long)]
    partition_by: Option<String>,
    /// Cluster key: rows are sorted by these columns, e.g. "tenant_id,event_time".
    #[arg(long)]
    sort_by: Option<String>,
    /// Columns identifying a row; duplicates within a writer batch are dropped.
    #[arg(long)]
    dedup_key: Option<String>,
    /// Parquet compression for a new table: zstd(N) (1..=22), snappy, uncompressed.
    #[arg(long)]
    compression: Option<String>,
    /// Target data file size in MiB for a new table.
    #[arg(long)]
    target_file_size_mb: Option<u64>,
    /// Table configuration file (default: ./floe.toml if present). Flags win over it.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Concurrent writer batches (default: the number of cores).
    #[arg(long)]
    writers: Option<usize>,
    /// Objects per writer batch at most.
    #[arg(long, default_value_t = 512)]
    batch_objects: usize,
    /// Source megabytes per writer batch at most.
    #[arg(long, default_value_t = 64)]
    batch_mb: u64,
    /// Compact the table after ingesting (see `floe compact`).
    #[arg(long)]
    compact: bool,
    #[command(flatten)]
    compaction: crate::compact::CompactSettings,
    /// Write the run's metrics (the counters and observations the functions report as
    /// CloudWatch EMF: objects, rows, bytes, quarantined, commit latency, files per commit,
    /// freshness lag, ...) to this file as JSON.
    #[arg(long)]
    metrics_json: Option<PathBuf>,
}

/// The floe.toml given, or ./floe.toml if present.
fn floe_toml(a: &IngestArgs) -> anyhow::Result<Option<FloeToml>> {
    Ok(match &a.config {
        Some(p) => Some(FloeToml::load(p)?),
        None if std::path::Path::new("floe.toml").exists() => Some(FloeToml::load(std::path::Path::new("floe.toml"))?),
        None => None,
    })
}

/// The table settings: floe.toml (explicit or ./floe.toml), then flags.
fn table_config(a: &IngestArgs, table: &TableIdent) -> anyhow::Result<TableConfig> {
    let toml = floe_toml(a)?.unwrap_or_default();
    let mut cfg = toml.table_config(table)?;
    if let Some(p) = &a.partition_by {
        cfg = cfg.with_partition_by(p)?;
    }
    if let Some(s) = &a.sort_by {
        cfg = cfg.with_sort_by(s)?;
    }
    if let Some(d) = &a.dedup_key {
        cfg = cfg.with_dedup_key(d)?;
    }
    if let Some(c) = &a.compression {
        cfg = cfg.with_compression(c)?;
    }
    if let Some(mb) = a.target_file_size_mb {
        cfg = cfg.with_target_file_size(mb.saturating_mul(1024 * 1024))?;
    }
    Ok(cfg)
}

/// Files routed to tables by the floe.toml; the ones no route takes come back on their own.
async fn routed(
    a: &IngestArgs,
    ports: &Ports,
) -> anyhow::Result<(Vec<(TableConfig, Vec<ObjectMeta>)>, Vec<ObjectMeta>)> {
    let given = [&a.partition_by, &a.sort_by, &a.dedup_key, &a.compression].iter().any(|o| o.is_some());
    if given || a.target_file_size_mb.is_some() {
        bail!(
            "--partition-by, --sort-by, --dedup-key, --compression and --target-file-size-mb go with --table; without it, set them per table in floe.toml"
        );
    }
    let Some(toml) = floe_toml(a)? else {
        bail!(
            "give --table, or a floe.toml (--config or ./floe.toml) whose [[table]] sections have `prefixes` to route by"
        );
    };
    if !toml.tables.iter().any(|t| t.prefixes.as_ref().is_some_and(|p| !p.is_empty())) {
        bail!("the floe.toml routes nothing (no [[table]] has `prefixes`): give --table");
    }
    let router = Router::new(Some(toml), floe::settings::DEFAULT_TABLE.parse()?);
    let mut batches = floe::route::Batches::default();
    let mut unrouted = vec![];
    for (path, key) in inputs::keyed(&a.paths)? {
        let meta = ports.store.head(&local::path_to_uri(&path)).await?;
        let cfgs = router.route(&key)?;
        if cfgs.is_empty() {
            unrouted.push(meta);
            continue;
        }
        batches.add(cfgs, &meta);
    }
    Ok((batches.into_iter().collect(), unrouted))
}

pub(crate) async fn run(a: IngestArgs) -> anyhow::Result<ExitCode> {
    let counters = Arc::new(Counters::default());
    let recorder = Arc::new(floe::ports::Recorder::default());
    let ports = a
        .catalog
        .ports(&a.warehouse, false)?
        .with_metrics(Arc::new(floe::ports::Tee(counters.clone(), recorder.clone())));
    let _writing = crate::catalog::hold_for_writing(&a.warehouse).await?;
    let dead_before = local::commit_queue_counts(&a.warehouse)?.dead_letters;
    let (jobs, unrouted) = match &a.table {
        Some(t) => {
            let table: TableIdent = t.parse()?;
            let cfg = table_config(&a, &table)?;
            (vec![(cfg, inputs::objects(ports.store.as_ref(), &a.paths).await?)], vec![])
        }
        None => routed(&a, &ports).await?,
    };
    let mut quarantined = 0;
    for o in &unrouted {
        let r = floe::route::unrouted();
        floe::pipeline::write::quarantine(&ports, None, o, &r).await?;
        eprintln!("  {}: {r}", o.uri);
        quarantined += 1;
    }
    for (cfg, objects) in jobs {
        quarantined += ingest_one(&a, &ports, &counters, cfg, objects).await?;
    }
    if let Some(path) = &a.metrics_json {
        let json = serde_json::to_string_pretty(&recorder.snapshot())?;
        std::fs::write(path, json).with_context(|| format!("writing {}", path.display()))?;
    }
    let dead = local::commit_queue_counts(&a.warehouse)?.dead_letters.saturating_sub(dead_before);
    if dead > 0 {
        eprintln!(
            "{dead} commit message(s) dead-lettered during this run after {} deliveries each: their sources are not \
             committed; run `floe ingest` over the same inputs again to write them again (`floe status` counts dead \
             letters)",
            local::DEFAULT_MAX_RECEIVES
        );
    }
    if quarantined == 0 && dead == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    if quarantined > 0 {
        eprintln!("see them again with: floe quarantine list --warehouse {}", a.warehouse.display());
    }
    Ok(ExitCode::from(2))
}

/// Ingests `objects` into one table and prints its report; returns the files quarantined.
async fn ingest_one(
    a: &IngestArgs,
    ports: &Ports,
    counters: &Arc<Counters>,
    cfg: TableConfig,
    objects: Vec<ObjectMeta>,
) -> anyhow::Result<usize> {
    let table = cfg.table.clone();
    let warehouse = local::warehouse_uri(&a.warehouse)?;
    let mut opts = IngestOptions {
        batch_objects: a.batch_objects.max(1),
        batch_bytes: a.batch_mb.max(1) << 20,
        ..Default::default()
    };
    if let Some(w) = a.writers {
        opts.writers = w.max(1);
    }
    let progress = Progress::start(counters.clone(), objects.len() as u64);
    let engine = EngineConfig::from_lookup(floe::settings::env)?;
    let report = ingest(&engine, ports, &cfg, &warehouse, objects, &opts)
        .await
        .with_context(|| format!("ingest into {table} failed"))?;
    drop(progress);

    let secs = report.elapsed.as_secs_f64().max(1e-6);
    println!(
        "{table}: {} file(s) in, {} committed row(s) in {} data file(s), {} snapshot(s){}",
        report.objects,
        report.rows_committed,
        report.files,
        report.snapshots,
        if report.created { " (table created)" } else { "" }
    );
    println!(
        "  {} row(s) read, {} duplicate(s) dropped, {} file(s) already ingested and skipped",
        report.rows_in, report.duplicates, report.skipped
    );
    println!(
        "  {:.2} s, {:.0} rows/s, {:.1} MB/s of Avro",
        secs,
        report.rows_in as f64 / secs,
        report.bytes_in as f64 / 1e6 / secs
    );
    if report.superseded > 0 {
        println!(
            "  {} file(s) changed or vanished after they were listed: that version was not read (kind `superseded`)",
            report.superseded
        );
    }
    crate::compact::report_refused(&report.refused_messages);
    let compacted_away = match a.compact {
        true => crate::compact::compact_table(ports, &table, &a.compaction).await?,
        false => 0,
    };
    if !report.quarantined.is_empty() {
        eprintln!("{} file(s) quarantined (not committed; every other file landed):", report.quarantined.len());
        for (uri, r) in &report.quarantined {
            eprintln!("  {uri}: {r}");
        }
    }
    Ok(report.quarantined.len() + compacted_away)
}
