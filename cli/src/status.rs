//! `floe status`: a table's vital signs, compaction debt, freshness and quarantine, of the
//! embedded warehouse (`--warehouse`) or of the deployed pipeline (`--aws`, which adds the
//! queues: depth and oldest-message age); `--json` for scripts.

use std::collections::BTreeMap;
use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use floe::TableIdent;
use floe::adapters::local::{self, CATALOG_NAME, SqliteTablePointer};
use floe::pipeline::compact::{CompactOptions, PartitionDebt, plan_table};
use floe::ports::Ports;
use floe::table::{SIZE_BUCKETS, TableStatus, load_table, partition_path, table_status};
use serde::Serialize;

use crate::status_aws::{QueueDepth, aws_queues, aws_tables};

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Warehouse directory (embedded mode).
    #[arg(long, required_unless_present = "aws", conflicts_with = "aws")]
    warehouse: Option<std::path::PathBuf>,
    /// Table, NAMESPACE.NAME (default: every table of the warehouse; with --aws, those
    /// FLOE_CONFIG names and FLOE_DEFAULT_TABLE).
    #[arg(long)]
    table: Option<String>,
    /// The deployed pipeline, through the functions' environment (FLOE_CATALOG, FLOE_WAREHOUSE,
    /// FLOE_COMMIT_QUEUE_URL, FLOE_INGEST_QUEUE_URL, FLOE_LEDGER_TABLE, ... and AWS_*).
    #[arg(long)]
    aws: bool,
    /// Print one JSON document instead of text.
    #[arg(long)]
    json: bool,
}

/// Everything `floe status` shows.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// The warehouse directory, or `aws`.
    source: String,
    tables: Vec<TableReport>,
    quarantined: Quarantined,
    /// Queue depths (`--aws` only).
    queues: Vec<QueueDepth>,
}

#[derive(Debug, Serialize)]
struct TableReport {
    table: String,
    #[serde(flatten)]
    status: TableStatus,
    /// Partitions with compaction debt, most tasks first.
    debt: Vec<PartitionRow>,
}

#[derive(Debug, Serialize)]
struct PartitionRow {
    partition: String,
    #[serde(flatten)]
    debt: PartitionDebt,
}

#[derive(Debug, Default, Serialize)]
struct Quarantined {
    total: usize,
    by_table: BTreeMap<String, usize>,
    by_kind: BTreeMap<String, usize>,
}

pub(crate) async fn run(a: StatusArgs) -> anyhow::Result<ExitCode> {
    let report = if a.aws { aws_report(&a).await? } else { local_report(&a).await? };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

async fn local_report(a: &StatusArgs) -> anyhow::Result<Report> {
    let warehouse = a.warehouse.as_ref().expect("clap requires --warehouse without --aws");
    if !warehouse.join("catalog.db").exists() {
        bail!("{} is not a Floe warehouse (no catalog.db); run `floe ingest` first", warehouse.display());
    }
    let ports = local::ports(warehouse)?;
    let tables: Vec<TableIdent> = match &a.table {
        Some(t) => vec![t.parse()?],
        None => SqliteTablePointer::open(&warehouse.join("catalog.db"), CATALOG_NAME)?.list_tables()?,
    };
    let q = local::commit_queue_counts(warehouse)?;
    let url = format!("{}#commit", warehouse.join(".floe").join("state.db").display());
    let depth = |role: &str, visible, in_flight| QueueDepth {
        role: role.into(),
        url: url.clone(),
        visible,
        in_flight,
        delayed: 0,
        oldest_age_s: None,
    };
    let queues = vec![depth("commit", q.visible, q.in_flight), depth("commit-dlq", q.dead_letters, 0)];
    report(&ports, warehouse.display().to_string(), tables, true, queues).await
}

async fn aws_report(a: &StatusArgs) -> anyhow::Result<Report> {
    let settings = floe::adapters::aws::AwsSettings::from_lookup(floe::settings::env)?;
    let clients = floe::adapters::aws::Clients::load(&settings).await;
    let ports = floe::adapters::aws::connect_with(&settings, &clients).await?;
    let (tables, named) = match &a.table {
        Some(t) => (vec![t.parse()?], true),
        None => (aws_tables(ports.store.as_ref()).await?, false),
    };
    let queues = aws_queues(&clients, &settings).await?;
    report(&ports, "aws".into(), tables, named, queues).await
}

/// The report of `tables`; a table that does not exist is an error if it was asked for by name
/// (`strict`), and left out otherwise (a configured table no object has reached yet).
async fn report(
    ports: &Ports,
    source: String,
    tables: Vec<TableIdent>,
    strict: bool,
    queues: Vec<QueueDepth>,
) -> anyhow::Result<Report> {
    let mut out = Report { source, tables: vec![], quarantined: Quarantined::default(), queues };
    for t in tables {
        let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &t).await? else {
            if strict {
                bail!("table {t} does not exist in {}", out.source);
            }
            continue;
        };
        let status = table_status(ports.store.as_ref(), &state).await?;
        let plan = plan_table(ports, &t, &CompactOptions::default()).await?;
        let m = &state.metadata;
        let mut debt: Vec<PartitionRow> = plan
            .debt()
            .into_iter()
            .map(|(p, debt)| {
                let name = partition_path(m.default_partition_spec(), m.current_schema(), &p);
                PartitionRow { partition: if name.is_empty() { "(unpartitioned)".into() } else { name }, debt }
            })
            .collect();
        debt.sort_by_key(|r| std::cmp::Reverse((r.debt.tasks, r.debt.small)));
        out.tables.push(TableReport { table: t.to_string(), status, debt });
    }
    // Those not committed since (as `floe quarantine list` shows them).
    for q in floe::pipeline::quarantine::outstanding(ports.ledger.as_ref()).await? {
        out.quarantined.total += 1;
        *out.quarantined.by_table.entry(q.table.unwrap_or_else(|| "(unrouted)".into())).or_default() += 1;
        *out.quarantined.by_kind.entry(q.rejection.kind.to_string()).or_default() += 1;
    }
    Ok(out)
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

fn when(ms: i64) -> String {
    let t = chrono::DateTime::from_timestamp_millis(ms).map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string());
    let ago = (chrono::Utc::now().timestamp_millis() - ms).max(0) / 1000;
    format!("{} ({ago} s ago)", t.unwrap_or_else(|| ms.to_string()))
}

fn print_report(r: &Report) {
    if r.tables.is_empty() {
        println!("no tables in {}", r.source);
    }
    for t in &r.tables {
        print_table(t);
        println!();
    }
    if !r.queues.is_empty() {
        println!("{:<10} {:>9} {:>9} {:>9} {:>12}  queue", "role", "visible", "in flight", "delayed", "oldest");
        for q in &r.queues {
            let oldest = q.oldest_age_s.map_or("unknown".into(), |s| format!("{s:.0} s"));
            println!("{:<10} {:>9} {:>9} {:>9} {:>12}  {}", q.role, q.visible, q.in_flight, q.delayed, oldest, q.url);
        }
        println!();
    }
    let q = &r.quarantined;
    let kinds: Vec<String> = q.by_kind.iter().map(|(k, n)| format!("{k}: {n}")).collect();
    println!(
        "quarantined  {}{}",
        q.total,
        if kinds.is_empty() { String::new() } else { format!(" ({})", kinds.join(", ")) }
    );
}

fn print_table(t: &TableReport) {
    let s = &t.status;
    println!("table        {}", t.table);
    println!("location     {}", s.location);
    println!("metadata     {}", s.metadata_location);
    println!("columns      {} (schema {}, {} schema(s) in the metadata)", s.columns, s.schema_id, s.schemas);
    println!("partitioned  {}", if s.partition_by.is_empty() { "no".into() } else { s.partition_by.clone() });
    println!("sorted by    {}", if s.sort_by.is_empty() { "-".into() } else { s.sort_by.clone() });
    println!("snapshots    {}", s.snapshots);
    println!("data files   {}", s.data_files);
    println!("rows         {}", s.rows);
    println!("bytes        {} ({} B)", mib(s.bytes), s.bytes);
    let mut hist = vec![];
    let mut lo = "0".to_string();
    for (i, edge) in SIZE_BUCKETS.iter().enumerate() {
        let hi = format!("{}M", edge >> 20);
        hist.push(format!("[{lo}-{hi}): {}", s.size_histogram[i]));
        lo = hi;
    }
    hist.push(format!("[{lo}-): {}", s.size_histogram[SIZE_BUCKETS.len()]));
    println!("file sizes   {}", hist.join("  "));
    if s.data_files > 0 {
        println!(
            "small files  {} of {} under {} ({:.0}%): compaction debt",
            s.small_files(),
            s.data_files,
            mib(SIZE_BUCKETS[1]),
            100.0 * s.small_files() as f64 / s.data_files as f64
        );
    }
    match s.last_commit_ms {
        Some(ms) => println!("last commit  {} snapshot {}", when(ms), s.current_snapshot_id.unwrap_or_default()),
        None => println!("last commit  never (empty table)"),
    }
    if let Some(f) = &s.freshness {
        println!(
            "freshness    {:.1} s from the oldest of {} object(s) created to its commit (snapshot {})",
            f.lag_ms as f64 / 1000.0,
            f.sources,
            f.snapshot_id
        );
    }
    print_debt(&t.debt);
}

/// Partitions shown in full; the rest are summed up.
const SHOWN_PARTITIONS: usize = 10;

fn print_debt(debt: &[PartitionRow]) {
    if debt.is_empty() {
        return;
    }
    let backlog: usize = debt.iter().map(|r| r.debt.tasks).sum();
    let small: usize = debt.iter().map(|r| r.debt.small).sum();
    println!(
        "compaction   {} partition(s), {small} small file(s), backlog {backlog} task(s) (levels: L0 writer files, L1/L2 compacted, late: rows left for a late task)",
        debt.len()
    );
    println!(
        "  {:<48} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>5}",
        "partition", "files", "L0", "L1", "L2", "late", "small", "tasks"
    );
    for r in debt.iter().take(SHOWN_PARTITIONS) {
        let d = &r.debt;
        println!(
            "  {:<48} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>5}",
            r.partition, d.files, d.levels[0], d.levels[1], d.levels[2], d.late, d.small, d.tasks
        );
    }
    if debt.len() > SHOWN_PARTITIONS {
        println!("  ... and {} more partition(s)", debt.len() - SHOWN_PARTITIONS);
    }
}
