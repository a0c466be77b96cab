//! `floe status`.

use std::process::ExitCode;

use anyhow::bail;
use clap::Args;
use floe::TableIdent;
use floe::adapters::local::{self, CATALOG_NAME, SqliteTablePointer};
use floe::pipeline::compact::{CompactOptions, plan_table};
use floe::table::{SIZE_BUCKETS, load_table, partition_path, table_status};

#[derive(Debug, Args)]
pub(crate) struct StatusArgs {
    /// Warehouse directory.
    #[arg(long)]
    warehouse: std::path::PathBuf,
    /// Table, NAMESPACE.NAME (default: every table in the warehouse).
    #[arg(long)]
    table: Option<String>,
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

fn when(ms: i64) -> String {
    let t = chrono::DateTime::from_timestamp_millis(ms).map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string());
    let ago = (chrono::Utc::now().timestamp_millis() - ms).max(0) / 1000;
    format!("{} ({ago} s ago)", t.unwrap_or_else(|| ms.to_string()))
}

pub(crate) async fn run(a: StatusArgs) -> anyhow::Result<ExitCode> {
    if !a.warehouse.join("catalog.db").exists() {
        bail!("{} is not a Floe warehouse (no catalog.db); run `floe ingest` first", a.warehouse.display());
    }
    let ports = local::ports(&a.warehouse)?;
    let tables: Vec<TableIdent> = match &a.table {
        Some(t) => vec![t.parse()?],
        None => SqliteTablePointer::open(&a.warehouse.join("catalog.db"), CATALOG_NAME)?.list_tables()?,
    };
    if tables.is_empty() {
        println!("no tables in {}", a.warehouse.display());
    }
    for t in tables {
        let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &t).await? else {
            bail!("table {t} does not exist in {}", a.warehouse.display());
        };
        let s = table_status(ports.store.as_ref(), &state).await?;
        println!("table        {t}");
        println!("location     {}", s.location);
        println!("metadata     {}", s.metadata_location);
        println!("columns      {}", s.columns);
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
        print_debt(&ports, &t, &state).await?;
        println!();
    }
    Ok(ExitCode::SUCCESS)
}

/// Partitions shown in full; the rest are summed up.
const SHOWN_PARTITIONS: usize = 10;

/// Per partition: files, level counts, small files, and the compaction tasks due now.
async fn print_debt(ports: &floe::ports::Ports, t: &TableIdent, state: &floe::table::TableState) -> anyhow::Result<()> {
    let plan = plan_table(ports, t, &CompactOptions::default()).await?;
    let mut debt = plan.debt();
    if debt.is_empty() {
        return Ok(());
    }
    let m = &state.metadata;
    let backlog: usize = debt.iter().map(|(_, d)| d.tasks).sum();
    let small: usize = debt.iter().map(|(_, d)| d.small).sum();
    println!(
        "compaction   {} partition(s), {small} small file(s), backlog {backlog} task(s) (levels: L0 writer files, L1/L2 compacted)",
        debt.len()
    );
    debt.sort_by_key(|(_, d)| std::cmp::Reverse((d.tasks, d.small)));
    println!("  {:<48} {:>6} {:>6} {:>6} {:>6} {:>6} {:>5}", "partition", "files", "L0", "L1", "L2", "small", "tasks");
    for (p, d) in debt.iter().take(SHOWN_PARTITIONS) {
        let mut name = partition_path(m.default_partition_spec(), m.current_schema(), p);
        if name.is_empty() {
            name = "(unpartitioned)".into();
        }
        println!(
            "  {:<48} {:>6} {:>6} {:>6} {:>6} {:>6} {:>5}",
            name, d.files, d.levels[0], d.levels[1], d.levels[2], d.small, d.tasks
        );
    }
    if debt.len() > SHOWN_PARTITIONS {
        println!("  ... and {} more partition(s)", debt.len() - SHOWN_PARTITIONS);
    }
    Ok(())
}
