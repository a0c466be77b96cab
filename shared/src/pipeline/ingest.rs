//! Embedded mode: writers and the committer in one process over local (or any) ports.
//!
//! Splits the input into writer batches, runs up to `writers` of them at once, and runs the
//! committer alongside, committing manifests as they arrive. Sources that the committer sends
//! back (a manifest overlapping another batch) are written again. Leftover messages from an
//! earlier, interrupted run are committed too: the commit queue is durable.
//! [`compact_and_commit`] is embedded compaction: the compactor's tasks on every core, then the
//! committer over their rewrite requests.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use tokio::task::JoinSet;
use tracing::info;

use super::commit::{Committer, MessageResult};
use super::compact::{CompactOptions, CompactReport, compact};
use super::create::ensure_table;
use super::write::{WriteOutcome, quarantine, source_id, write_rows};
use crate::config::{EngineConfig, RowRoute, TableConfig};
use crate::fault::FaultPoint;
use crate::message::{RowsTaken, SourceRef};
use crate::ports::{ObjectMeta, Ports, SourceState};
use crate::table::WriterTable;
use crate::{Error, Rejection, RejectionKind, Result, TableIdent};

/// How embedded ingest splits and parallelizes work.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// Concurrent writer batches.
    pub writers: usize,
    /// A writer batch closes when its objects reach this many bytes...
    pub batch_bytes: u64,
    /// ...or this many objects.
    pub batch_objects: usize,
    /// Visibility timeout of commit messages.
    pub visibility: Duration,
}

impl Default for IngestOptions {
    fn default() -> Self {
        IngestOptions {
            writers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            batch_bytes: 64 * 1024 * 1024,
            batch_objects: 512,
            visibility: Duration::from_secs(300),
        }
    }
}

/// What an ingest run did.
#[derive(Debug, Default)]
pub struct IngestReport {
    /// Whether the table was created by this run.
    pub created: bool,
    /// Objects given.
    pub objects: usize,
    /// Objects skipped as already committed.
    pub skipped: usize,
    /// Objects refused, with why.
    pub quarantined: Vec<(String, Rejection)>,
    /// Objects whose listed version was gone when read (overwritten or deleted meanwhile).
    pub superseded: usize,
    /// Commit messages the committer refused meanwhile (not this run's: another's, or forged),
    /// with their reasons ([`CommitTotals::refused`]).
    pub refused_messages: Vec<String>,
    /// Rows decoded.
    pub rows_in: u64,
    /// Rows committed.
    pub rows_committed: u64,
    /// Duplicate rows dropped by the dedup key.
    pub duplicates: u64,
    /// Source bytes read.
    pub bytes_in: u64,
    /// Data files committed.
    pub files: usize,
    /// Snapshots created.
    pub snapshots: usize,
    /// Wall time.
    pub elapsed: Duration,
}

/// Splits objects into writer batches, keeping input order: as few batches as the size and
/// count limits allow, but at least one per writer when there are enough objects, and of
/// balanced size (each object goes to the batch its byte midpoint falls in).
pub fn plan_batches(objects: Vec<ObjectMeta>, opts: &IngestOptions) -> Vec<Vec<ObjectMeta>> {
    if objects.is_empty() {
        return vec![];
    }
    let n = objects.len();
    let total: u64 = objects.iter().map(|o| o.size.max(1)).sum();
    let k = (opts.writers.max(1) as u64)
        .max(total.div_ceil(opts.batch_bytes.max(1)))
        .max(n.div_ceil(opts.batch_objects.max(1)) as u64)
        .min(n as u64);
    let mut out: Vec<Vec<ObjectMeta>> = vec![];
    let mut before = 0u64;
    for o in objects {
        let size = o.size.max(1);
        let slot = ((before + size / 2) * k / total) as usize;
        before += size;
        let batches = out.len();
        match out.last_mut() {
            Some(cur) if batches > slot && cur.len() < opts.batch_objects.max(1) => cur.push(o),
            _ => out.push(vec![o]),
        }
    }
    out
}

/// Ingests `objects` into `table_cfg.table` under `warehouse`, creating the table if needed.
pub async fn ingest(
    engine: &EngineConfig,
    ports: &Ports,
    table_cfg: &TableConfig,
    warehouse: &str,
    objects: Vec<ObjectMeta>,
    opts: &IngestOptions,
) -> Result<IngestReport> {
    let started = Instant::now();
    let mut report = IngestReport { objects: objects.len(), ..Default::default() };
    let (state, created) = match ensure_table(ports, engine, table_cfg, warehouse, &objects).await {
        Ok(found) => found,
        Err(Error::NoTableDefinition { refused, .. }) => {
            // No input can define the table: each is refused with its own reason.
            for (o, r) in refused {
                quarantine(ports, Some(&table_cfg.table), &o, &r).await?;
                report.quarantined.push((o.uri, r));
            }
            report.elapsed = started.elapsed();
            return Ok(report);
        }
        Err(e) => return Err(e),
    };
    report.created = created;
    let table = Arc::new(WriterTable::from_metadata(&table_cfg.table, &state.metadata)?);

    // The committer runs alongside the writers and stops once they are done and the queue is empty.
    let writers_done = Arc::new(AtomicBool::new(false));
    let committer = {
        let (engine, ports, done, visibility) = (engine.clone(), ports.clone(), writers_done.clone(), opts.visibility);
        let own = Own {
            table: table_cfg.table.clone(),
            rows: RowsTaken::of(table_cfg.route.as_ref()),
            sources: objects.iter().map(source_id).collect(),
        };
        tokio::spawn(async move { run_committer(engine, ports, done, visibility, Some(own)).await })
    };

    let batches = plan_batches(objects, opts);
    let outcomes = run_writers(engine, ports, &table, table_cfg.route.as_ref(), batches, opts.writers).await;
    writers_done.store(true, Ordering::SeqCst);
    let committed = committer.await.map_err(|e| Error::internal(format!("committer task failed: {e}")))?;
    let outcomes = outcomes?;
    let committed = committed?;
    for o in outcomes {
        report.skipped += o.skipped.len();
        report.rows_in += o.rows_in;
        report.duplicates += o.duplicates;
        report.bytes_in += o.bytes_in;
        report.quarantined.extend(o.quarantined.into_iter().map(|(m, r)| (m.uri, r)));
        report.superseded += o.superseded.len();
    }
    report.quarantined.extend(committed.quarantined);
    report.refused_messages = committed.refused;
    report.rows_committed = committed.rows;
    report.files = committed.files;
    report.snapshots = committed.snapshots;
    if !committed.requeue.is_empty() {
        // Sources bounced by an overlapping manifest: write them again, in batches of their own.
        // The very versions they name: one gone since is recorded as superseded by the writer.
        let again = committed.requeue.iter().map(SourceRef::object).collect();
        let second = Box::pin(ingest(engine, ports, table_cfg, warehouse, again, opts)).await?;
        report.rows_in += second.rows_in;
        report.rows_committed += second.rows_committed;
        report.duplicates += second.duplicates;
        report.files += second.files;
        report.snapshots += second.snapshots;
        report.quarantined.extend(second.quarantined);
        report.refused_messages.extend(second.refused_messages);
        report.superseded += second.superseded;
        unpark(ports, &table_cfg.table, &committed.parked).await?;
    }
    report.elapsed = started.elapsed();
    info!(
        table = %table_cfg.table,
        objects = report.objects,
        skipped = report.skipped,
        quarantined = report.quarantined.len(),
        rows = report.rows_committed,
        files = report.files,
        ms = report.elapsed.as_millis() as u64,
        "ingest done"
    );
    Ok(report)
}

async fn run_writers(
    engine: &EngineConfig,
    ports: &Ports,
    table: &Arc<WriterTable>,
    route: Option<&RowRoute>,
    batches: Vec<Vec<ObjectMeta>>,
    writers: usize,
) -> Result<Vec<WriteOutcome>> {
    let sem = Arc::new(tokio::sync::Semaphore::new(writers.max(1)));
    let mut set = JoinSet::new();
    for batch in batches {
        let permit = sem.clone().acquire_owned().await.map_err(|e| Error::internal(e.to_string()))?;
        let (engine, ports, table, route) = (engine.clone(), ports.clone(), table.clone(), route.cloned());
        set.spawn(async move {
            let r = write_rows(&engine, &ports, &table, route.as_ref(), batch).await;
            if r.is_ok() {
                ports.faults.hit(FaultPoint::WriterBeforeAck).await;
            }
            drop(permit);
            r
        });
    }
    let mut out = vec![];
    while let Some(r) = set.join_next().await {
        match r.map_err(|e| Error::internal(format!("writer task failed: {e}")))? {
            Ok(o) => out.push(o),
            Err(e) => {
                set.abort_all();
                return Err(e);
            }
        }
    }
    Ok(out)
}

/// What the embedded committer loop committed.
#[derive(Debug, Default)]
pub struct CommitTotals {
    /// Rows appended.
    pub rows: u64,
    /// Data files appended.
    pub files: usize,
    /// Append snapshots.
    pub snapshots: usize,
    /// Rewrite requests committed (in replace or overwrite snapshots, several to a snapshot).
    pub rewrites: usize,
    /// Stale rewrites rejected.
    pub rejected: usize,
    /// Sources this run writes again (their manifest overlapped committed sources): those it
    /// was given, and another run's of the same table and rows.
    pub requeue: Vec<SourceRef>,
    /// Ids of the sources in `requeue`, recorded in the quarantine (kind `overlap`) until they
    /// land, so that a run that dies first loses none of them.
    pub parked: Vec<String>,
    /// Sources of overlapping manifests this run does not take (another table's, another
    /// route's or of unknown rows, or any met by a compaction), quarantined with kind `overlap` before their manifest
    /// was acknowledged: `floe quarantine replay` lands them.
    pub quarantined: Vec<(String, Rejection)>,
    /// Messages the committer refused (poison: nothing was changed for them), with the reason:
    /// they stay in the commit queue until its delivery limit dead-letters them.
    pub refused: Vec<String>,
}

/// Embedded compaction: plans and runs the tasks (see [`compact`]), then commits their rewrite
/// requests (and anything else waiting on the commit queue) with messages held for
/// `visibility` while they are committed.
pub async fn compact_and_commit(
    engine: &EngineConfig,
    ports: &Ports,
    table: &crate::TableIdent,
    opts: &CompactOptions,
    visibility: Duration,
) -> Result<(CompactReport, CommitTotals)> {
    let report = compact(engine, ports, table, opts).await?;
    let done = Arc::new(AtomicBool::new(true));
    let totals = run_committer(engine.clone(), ports.clone(), done, visibility, None).await?;
    Ok((report, totals))
}

/// Consecutive rounds in which every message had to be retried before giving up.
const MAX_STUCK_ROUNDS: u32 = 50;

/// What a run was given: its table, the rows it takes, and its sources. It writes again itself
/// the sources of an overlapping manifest it was given, and those of a manifest of the same
/// table that took the same rows (another run's, over the same inputs): for them it has the
/// settings and the route they were written with. A manifest of another route (a table may take
/// whole objects of one prefix and some rows of another's) or of unknown rows is not its own.
struct Own {
    table: TableIdent,
    rows: RowsTaken,
    sources: HashSet<String>,
}

impl Own {
    /// Whether `source`, of an overlapping manifest of `table` that took `rows`, is this run's to
    /// write again.
    fn takes(&self, table: &TableIdent, rows: Option<&RowsTaken>, source: &SourceRef) -> bool {
        &self.table == table && (rows == Some(&self.rows) || self.sources.contains(&source.id))
    }
}

/// Commits whatever the commit queue holds, for any table (a killed run's messages too), until
/// `writers_done` and the queue is empty. An overlapping manifest's sources that `own` takes
/// ([`Own::takes`]) are recorded and returned to write again ([`CommitTotals::requeue`]); the
/// others are quarantined before their manifest is acknowledged, never written with settings
/// that may not be theirs.
async fn run_committer(
    engine: EngineConfig,
    ports: Ports,
    writers_done: Arc<AtomicBool>,
    visibility: Duration,
    own: Option<Own>,
) -> Result<CommitTotals> {
    let mut committer = Committer::new(engine, ports.clone());
    let mut totals = CommitTotals::default();
    let mut stuck = 0;
    loop {
        // Read the flag before receiving, so a manifest sent just before it flipped is seen.
        let done = writers_done.load(Ordering::SeqCst);
        match committer.receive_and_commit(1000, visibility).await? {
            Some((msgs, outcome)) => {
                for (_, r) in &outcome.results {
                    if let MessageResult::Overlap { table, requeue, rows } = r {
                        let takes = |s: &SourceRef| own.as_ref().is_some_and(|o| o.takes(table, rows.as_ref(), s));
                        let (mine, others): (Vec<SourceRef>, Vec<SourceRef>) = requeue.iter().cloned().partition(takes);
                        // A durable record first, so that if this run dies before writing them
                        // again a replay lands them.
                        park_overlap(&ports, table, &mine).await?;
                        totals.parked.extend(mine.iter().map(|s| s.id.clone()));
                        totals.requeue.extend(mine);
                        if !others.is_empty() {
                            totals.quarantined.extend(quarantine_overlap(&ports, table, &others).await?);
                        }
                    }
                }
                committer.acknowledge(&msgs, &outcome).await?;
                for landed in &outcome.snapshots {
                    if landed.operation == iceberg::spec::Operation::Append {
                        totals.rows += landed.rows;
                        totals.files += landed.files;
                        totals.snapshots += 1;
                    } else {
                        totals.rewrites += landed.rewrites;
                    }
                }
                let mut retried = None;
                let mut progressed = false;
                for (_, r) in outcome.results {
                    match r {
                        MessageResult::Stale { .. } => {
                            totals.rejected += 1;
                            progressed = true;
                        }
                        MessageResult::Overlap { .. } => progressed = true,
                        MessageResult::Retry { reason } => retried = Some(reason),
                        MessageResult::Contended => retried = Some("the committer lock is held elsewhere".into()),
                        MessageResult::Poison { reason } => {
                            tracing::error!(%reason, "commit message refused; it will be dead-lettered");
                            totals.refused.push(reason);
                        }
                        _ => progressed = true,
                    }
                }
                match retried {
                    Some(reason) if !progressed => {
                        stuck += 1;
                        if stuck >= MAX_STUCK_ROUNDS {
                            return Err(Error::CommitFailed { table: "*".into(), attempts: stuck, reason });
                        }
                        tokio::time::sleep(Duration::from_millis(100 * u64::from(stuck.min(20)))).await;
                    }
                    _ => stuck = 0,
                }
            }
            None if done => return Ok(totals),
            None => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
}

/// Quarantines the sources of an overlapping manifest of `table` that this run does not take
/// (another table's, another route's or of unknown rows, or met by a compaction), so that
/// acknowledging the manifest loses nothing.
async fn quarantine_overlap(
    ports: &Ports,
    table: &TableIdent,
    sources: &[SourceRef],
) -> Result<Vec<(String, Rejection)>> {
    let r = Rejection::new(
        RejectionKind::Overlap,
        format!(
            "its manifest overlapped sources another batch committed into {table}, and the run that met it was not \
             given it (another table's, another route's, or a compaction): land it with `floe quarantine replay`"
        ),
    );
    let mut out = vec![];
    for s in sources {
        quarantine(ports, Some(table), &s.object(), &r).await?;
        out.push((s.uri.clone(), r.clone()));
    }
    Ok(out)
}

/// Records the sources of an overlapping manifest that this run writes again, before the
/// manifest is acknowledged: their record is resolved once they land ([`unpark`] removes it),
/// and stays for `floe quarantine replay` if this run dies first (a rerun over the same inputs
/// lands them too).
async fn park_overlap(ports: &Ports, table: &TableIdent, sources: &[SourceRef]) -> Result<()> {
    let r = Rejection::new(
        RejectionKind::Overlap,
        format!(
            "its manifest overlapped sources another batch committed into {table}; a run of that table is writing \
             it again. If it is not committed, that run stopped first: land it with `floe quarantine replay`"
        ),
    );
    for s in sources {
        quarantine(ports, Some(table), &s.object(), &r).await?;
    }
    Ok(())
}

/// Removes the records [`park_overlap`] made of the sources that are committed now.
async fn unpark(ports: &Ports, table: &TableIdent, parked: &[String]) -> Result<()> {
    if parked.is_empty() {
        return Ok(());
    }
    let states = ports.ledger.lookup(table, parked).await?;
    let landed: Vec<String> =
        states.into_iter().filter(|(_, s)| matches!(s, SourceState::Committed { .. })).map(|(id, _)| id).collect();
    ports.ledger.remove_quarantined(&landed).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn objs(n: usize, size: u64) -> Vec<ObjectMeta> {
        (0..n).map(|i| ObjectMeta::new(format!("file:///o{i}"), size, "v")).collect()
    }

    #[test]
    fn batches_respect_limits_and_feed_every_writer() {
        let opts = IngestOptions { writers: 2, batch_bytes: 1000, batch_objects: 4, ..Default::default() };
        let b = plan_batches(objs(10, 100), &opts);
        assert!(b.iter().all(|b| b.len() <= 4 && b.iter().map(|o| o.size).sum::<u64>() <= 1000));
        assert_eq!(b.iter().map(Vec::len).sum::<usize>(), 10, "nothing lost");
        let few = plan_batches(objs(3, 10), &opts);
        assert_eq!(few.len(), 2, "both writers get work even for a small input: {few:?}");
        let even = plan_batches(objs(200, 600_000), &IngestOptions { writers: 2, ..Default::default() });
        assert_eq!(even.iter().map(Vec::len).collect::<Vec<_>>(), vec![100, 100], "balanced, no stragglers");
        let one = plan_batches(objs(1, 10_000), &opts);
        assert_eq!(one.len(), 1, "an object larger than the batch limit still makes a batch");
        assert!(plan_batches(vec![], &opts).is_empty());
    }
}
