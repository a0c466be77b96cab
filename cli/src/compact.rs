//! `floe compact` (and the compaction step of `floe ingest --compact`), and `floe sweep`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;
use floe::TableIdent;
use floe::adapters::local;
use floe::config::EngineConfig;
use floe::pipeline::compact::CompactOptions;
use floe::pipeline::ingest::compact_and_commit;
use floe::ports::Ports;

#[derive(Debug, Args)]
pub(crate) struct CompactArgs {
    /// Warehouse directory.
    #[arg(long)]
    warehouse: PathBuf,
    /// Table, NAMESPACE.NAME.
    #[arg(long)]
    table: String,
    #[command(flatten)]
    catalog: crate::catalog::CatalogArg,
    #[command(flatten)]
    settings: CompactSettings,
}

/// Compaction settings shared by `floe compact` and `floe ingest --compact`.
#[derive(Debug, Clone, Args)]
pub(crate) struct CompactSettings {
    /// Compact every partition, whatever its debt: all level-0 files and all files under the
    /// target size are merged.
    #[arg(long)]
    full: bool,
    /// Files of a level that make a partition due for a merge.
    #[arg(long, default_value_t = 8)]
    min_files: usize,
    /// Input megabytes of one compaction task (a hot partition splits into several).
    #[arg(long, default_value_t = 512)]
    max_task_mb: u64,
    /// Tasks run at once (default: the number of cores).
    #[arg(long)]
    parallelism: Option<usize>,
    /// Megabytes of dedup reference keys the run keeps so that tasks naming the same file read
    /// it once (0: each task streams its references; a task's own memory is its inputs').
    #[arg(long, default_value_t = 256)]
    shared_key_mb: usize,
}

impl CompactSettings {
    fn options(&self) -> anyhow::Result<CompactOptions> {
        if self.min_files < 2 {
            bail!("--min-files must be at least 2 (a merge of one file changes nothing)");
        }
        if self.max_task_mb == 0 {
            bail!("--max-task-mb must be at least 1");
        }
        let mut o = CompactOptions { full: self.full, min_files: self.min_files, ..Default::default() };
        o.max_task_bytes = self.max_task_mb << 20;
        o.shared_key_bytes = self.shared_key_mb << 20;
        if let Some(p) = self.parallelism {
            o.parallelism = p.max(1);
        }
        Ok(o)
    }
}

pub(crate) async fn run(a: CompactArgs) -> anyhow::Result<ExitCode> {
    let table: TableIdent = a.table.parse()?;
    let ports = a.catalog.ports(&a.warehouse, true)?;
    let _writing = crate::catalog::hold_for_writing(&a.warehouse).await?;
    let quarantined = compact_table(&ports, &table, &a.settings).await?;
    if quarantined == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("see them again with: floe quarantine list --warehouse {}", a.warehouse.display());
    Ok(ExitCode::from(2))
}

/// Compacts `table` and prints what was done; returns the sources quarantined meanwhile (of
/// overlapping manifests its committer met: see `CommitTotals::quarantined`).
pub(crate) async fn compact_table(ports: &Ports, table: &TableIdent, s: &CompactSettings) -> anyhow::Result<usize> {
    let engine = EngineConfig::from_lookup(floe::settings::env)?;
    let (report, totals) =
        compact_and_commit(&engine, ports, table, &s.options()?, std::time::Duration::from_secs(300))
            .await
            .with_context(|| format!("compaction of {table} failed"))?;
    let t = &report.totals;
    println!(
        "{table}: {} task(s) of {} planned; {} file(s) merged into {}; {} row(s) in, {} out ({} duplicate(s) dropped{})",
        report.tasks,
        report.planned,
        t.inputs,
        t.outputs,
        t.rows_in,
        t.rows_out,
        t.rows_in - t.rows_out - t.rows_deleted,
        match t.rows_deleted {
            0 => String::new(),
            n => format!(", {n} removed by the table's delete files"),
        }
    );
    println!(
        "  {:.1} MB read, {:.1} MB written in {:.2} s; {} rewrite(s) committed, {} stale rejected",
        t.bytes_read as f64 / 1e6,
        t.bytes_written as f64 / 1e6,
        report.elapsed.as_secs_f64(),
        totals.rewrites,
        totals.rejected
    );
    if t.reference_files + t.references_skipped > 0 {
        println!(
            "  dedup keys of {} reference file(s) of {:.1} MB: {:.2} MB read (footers and key column pages) in {} \
             GET(s); {} reference(s) skipped by their key bounds",
            t.reference_files,
            t.reference_bytes as f64 / 1e6,
            t.reference_key_bytes as f64 / 1e6,
            t.reference_requests,
            t.references_skipped
        );
    }
    if !totals.quarantined.is_empty() {
        eprintln!(
            "{} source(s) of overlapping manifests quarantined (not committed; `floe quarantine replay` lands them):",
            totals.quarantined.len()
        );
        for (uri, r) in &totals.quarantined {
            eprintln!("  {uri}: {r}");
        }
    }
    report_refused(&totals.refused);
    if !totals.refused.is_empty() {
        bail!(
            "the committer refused {} commit message(s) (above): nothing of them was committed, the table is as it \
             was, and the files a refused rewrite wrote are left to `floe sweep`",
            totals.refused.len()
        );
    }
    Ok(totals.quarantined.len())
}

/// Prints the commit messages the committer refused during a run, with their reasons.
pub(crate) fn report_refused(refused: &[String]) {
    if refused.is_empty() {
        return;
    }
    eprintln!(
        "{} commit message(s) refused by the committer (they stay in the commit queue until {} deliveries \
         dead-letter them; `floe status` counts them):",
        refused.len(),
        local::DEFAULT_MAX_RECEIVES
    );
    for r in refused {
        eprintln!("  {r}");
    }
}

#[derive(Debug, Args)]
pub(crate) struct SweepArgs {
    /// Warehouse directory.
    #[arg(long)]
    warehouse: PathBuf,
    /// Table, NAMESPACE.NAME.
    #[arg(long)]
    table: String,
    /// Only objects last written more than this many hours ago are deleted. A warehouse whose
    /// commit queue still holds messages (an interrupted `floe ingest`, which the next run
    /// resumes) is not swept at all: their files are unreferenced until committed. Nor is one
    /// another Floe process is writing to (ingest, compact, quarantine replay); those wait for a
    /// running sweep to end.
    #[arg(long, default_value_t = 120)]
    older_than_hours: u64,
    /// List the orphans without deleting them.
    #[arg(long)]
    dry_run: bool,
}

pub(crate) async fn sweep(a: SweepArgs) -> anyhow::Result<ExitCode> {
    if !a.warehouse.join("catalog.db").exists() {
        bail!("{} is not a Floe warehouse (no catalog.db); run `floe ingest` first", a.warehouse.display());
    }
    let table: TableIdent = a.table.parse()?;
    // Held until the sweep ends: no writer starts, enqueues or names an old file meanwhile.
    let Some(_alone) = local::WarehouseLock::try_take(&a.warehouse, local::WarehouseUse::Sweep)? else {
        bail!(
            "{} is in use by a `floe ingest`, `floe compact` or `floe quarantine replay`: a sweep beside it could \
             delete a file it is about to commit. Sweep when it has finished",
            a.warehouse.display()
        );
    };
    let waiting = local::commit_queue_depth(&a.warehouse)?;
    if waiting > 0 {
        bail!(
            "{} has {waiting} commit message(s) not yet committed (an interrupted or running `floe ingest` or \
             `floe compact`): no snapshot references their files yet, so a sweep could delete files that are \
             about to be committed. Run `floe ingest` again to commit them (sources already committed are \
             skipped), then sweep",
            a.warehouse.display()
        );
    }
    let ports = local::ports(&a.warehouse)?;
    let state = floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), &table)
        .await?
        .with_context(|| format!("table {table} does not exist"))?;
    let cutoff = chrono::Utc::now().timestamp_millis() - (a.older_than_hours as i64) * 3_600_000;
    let r = floe::table::sweep::sweep_orphans(ports.store.as_ref(), &state, cutoff, a.dry_run).await?;
    for o in &r.orphans {
        println!("{} {o}", if a.dry_run { "orphan" } else { "deleted" });
    }
    println!(
        "{table}: {} object(s) listed, {} reachable, {} orphan(s) {}, {} unreachable but younger than {} h (kept)",
        r.listed,
        r.reachable,
        r.orphans.len(),
        if a.dry_run { "found" } else { "deleted" },
        r.young,
        a.older_than_hours
    );
    Ok(ExitCode::SUCCESS)
}
