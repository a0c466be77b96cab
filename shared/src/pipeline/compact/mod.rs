//! The compactor role: plan LSM merges from the table's metadata (read-only), run each task
//! (read its input files, drop the keys its references hold, merge, deduplicate, sort, write files
//! of the target size with the writer's inline statistics), and send a rewrite request on the
//! commit queue. It never writes table metadata: the committer commits the request as a replace
//! (or, when duplicates were dropped, an overwrite) snapshot if every input is still live.
//!
//! Which copy of a key wins: the one committed first. Compacted files hold rows committed before
//! any live level-0 file: a merge of level-0 files takes every level-0 file of its partition in
//! the snapshot it plans from (a chain's tasks take them in age order, each referencing the
//! earlier ones), level-0 files committed since are newer than anything it read, and the
//! committer commits it only if all its inputs are still live. So a task's references win over
//! its inputs; among inputs, the file with the lower data sequence number, then the lower path,
//! then the earlier row. A plan must therefore see every live file of the partitions it plans,
//! as of one snapshot: a share's run that reads only some manifests relies on that
//! (`share` module). Rows without a key (a null in any key column) are always kept. Keys are
//! unique per partition.

mod deletes;
mod identity;
mod keys;
mod late;
pub mod plan;
mod prune;
mod share;

use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use bytes::Bytes;
use futures::{StreamExt as _, TryStreamExt as _};
use iceberg::spec::PrimitiveLiteral;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use tracing::info;

use super::write::{encode, oldest, put_data_file};
use crate::config::EngineConfig;
use crate::convert::conform;
use crate::fault::FaultPoint;
use crate::message::{DataFileMeta, MESSAGE_VERSION, REWRITE_KIND, RewriteRequest};
use crate::ports::Ports;
use crate::table::{Manifests, TableState, WriterTable, dedup_window_ms, load_table};
use crate::{Error, Result, TableIdent};
use deletes::Loaded;
pub use deletes::{DeleteKind, LiveDelete, TaskDeletes};
use identity::{constants, identity_values, with_constants};
use keys::{Found, KeyIndex};
pub use plan::{DedupWindow, LateSplit, LiveFile, PartitionDebt, Policy, Task};
pub use share::{Held, Scope, Share};

/// A task's input files fetched at once.
const INPUTS_IN_FLIGHT: usize = 16;

/// Settings of a compaction run.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactOptions {
    /// Files of a level that make a partition due.
    pub min_files: usize,
    /// Input bytes of one task.
    pub max_task_bytes: u64,
    /// Compact every partition, whatever its debt.
    pub full: bool,
    /// Tasks run at once.
    pub parallelism: usize,
    /// Run at most this many tasks (the rest wait for the next run).
    pub max_tasks: usize,
    /// Bytes of dedup reference keys a run keeps, so that its tasks that reference the same
    /// file read it once; past it they stream it each (a task's own memory is its inputs').
    pub shared_key_bytes: usize,
    /// Plan and run only a share of the table; `None`: all of it.
    pub scope: Option<Scope>,
}

impl Default for CompactOptions {
    fn default() -> Self {
        CompactOptions {
            min_files: 8,
            max_task_bytes: 512 << 20,
            full: false,
            parallelism: std::thread::available_parallelism().map_or(2, |n| n.get()),
            max_tasks: usize::MAX,
            shared_key_bytes: 256 << 20,
            scope: None,
        }
    }
}

/// A table's compaction plan: the tasks, and the snapshot they were planned from.
#[derive(Debug, Clone)]
pub struct CompactPlan {
    /// The table's state when planned.
    pub state: TableState,
    /// The tasks.
    pub tasks: Vec<Task>,
    /// Every live file (for status reports).
    pub files: Vec<LiveFile>,
    /// The policy used.
    pub policy: Policy,
    /// The paths of the manifests read ([`LiveFile::manifest`] indexes them).
    pub manifests: Vec<String>,
}

impl CompactPlan {
    /// The tasks a run takes: up to `opts.max_tasks`, the most urgent (of its scope's stretch,
    /// if it has one).
    pub fn first_tasks(&self, opts: &CompactOptions) -> Vec<Task> {
        match &opts.scope {
            Some(scope) => scope.stretch(&self.tasks, opts.max_tasks),
            None => self.tasks.iter().take(opts.max_tasks).cloned().collect(),
        }
    }

    /// Debt per partition.
    pub fn debt(&self) -> Vec<(iceberg::spec::Struct, PartitionDebt)> {
        let spec_id = self.state.metadata.default_partition_spec_id();
        plan::debt(&self.files, spec_id, &self.policy)
    }
}

/// Plans compaction of `table` from its current snapshot (reads the metadata, never writes it).
pub async fn plan_table(ports: &Ports, table: &TableIdent, opts: &CompactOptions) -> Result<CompactPlan> {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table)
        .await?
        .ok_or_else(|| Error::NoSuchTable(table.to_string()))?;
    plan_loaded(ports, table, state, opts).await
}

/// Plans compaction of `table` from `state`, just loaded (reads its manifests).
pub async fn plan_loaded(
    ports: &Ports,
    table: &TableIdent,
    state: TableState,
    opts: &CompactOptions,
) -> Result<CompactPlan> {
    let store = ports.store.as_ref();
    let mut reads = 0;
    let mut manifests = Manifests::load(store, &state.metadata, &mut reads).await?;
    if let Some(scope) = &opts.scope {
        scope.restrict_manifests(&mut manifests.list, &state.metadata);
    }
    let wt = WriterTable::from_metadata(table, &state.metadata)?;
    // Every live file, without its statistics but its dedup key's bounds (the key index's first
    // level): the entries are not kept.
    let probed = prune::probed_ids(&wt);
    let mut files: Vec<LiveFile> = vec![];
    manifests
        .scan_live(store, &mut reads, |manifest, mf, e| {
            files.push(LiveFile {
                path: e.file_path().to_string(),
                size: e.file_size_in_bytes(),
                rows: e.record_count(),
                seq: e.sequence_number().unwrap_or(0),
                spec_id: mf.partition_spec_id,
                partition: e.data_file().partition().clone(),
                manifest,
                first_row_id: e.data_file().first_row_id(),
                key_bounds: prune::key_bounds(
                    e.file_path(),
                    &probed,
                    e.data_file().lower_bounds(),
                    e.data_file().upper_bounds(),
                ),
            })
        })
        .await?;
    let deletes = live_deletes(store, &manifests, &state.metadata, table, &mut reads).await?;
    let manifest_paths: Vec<String> = manifests.list.iter().map(|mf| mf.manifest_path.clone()).collect();
    let policy = Policy {
        target_file_size: wt.target_file_size,
        min_files: opts.min_files,
        max_task_bytes: opts.max_task_bytes,
        full: opts.full,
        dedup_window: dedup_window(&state.metadata)?,
        late: None,
    };
    let policy = Policy { late: late::late_split(&state.metadata, &wt, &policy)?, ..policy };
    let spec_id = state.metadata.default_partition_spec_id();
    if let Some(scope) = &opts.scope {
        scope.restrict_files(&mut files, &state.metadata);
    }
    let mut tasks = plan::plan(&files, spec_id, &policy);
    if crate::table::tracks_rows(&state.metadata) {
        // Right after an upgrade to v3, files have no row ids until a v3 commit gives them
        // theirs: a rewrite would hand their rows new ids after that commit. Such files wait.
        let before = tasks.len();
        tasks.retain(|t| t.inputs.iter().all(|f| f.first_row_id.is_some()));
        if tasks.len() < before {
            info!(%table, waiting = before - tasks.len(), "tasks wait for the table's first v3 commit to give their files row ids");
        }
    }
    deletes::attach(&mut tasks, &deletes, &files, opts.scope.is_none());
    Ok(CompactPlan { state, tasks, files, policy, manifests: manifest_paths })
}

/// The live delete files of the snapshot (other engines' row-level deletes); an error naming the
/// first that Floe cannot apply.
async fn live_deletes(
    store: &dyn crate::ports::ObjectStore,
    manifests: &Manifests,
    meta: &iceberg::spec::TableMetadata,
    table: &TableIdent,
    reads: &mut u32,
) -> Result<Vec<LiveDelete>> {
    let mut out = vec![];
    let mut refused = None;
    manifests
        .scan_live_deletes(store, reads, |_, mf, e| match LiveDelete::from_entry(meta, mf.partition_spec_id, e) {
            Ok(d) => out.push(d),
            Err(why) => {
                refused.get_or_insert(why);
            }
        })
        .await?;
    match refused {
        Some(feature) => Err(Error::UnsupportedTableFeature { table: table.to_string(), feature }),
        None => Ok(out),
    }
}

/// The table's dedup window ([`crate::table::PROP_DEDUP_WINDOW`]) with its kept snapshots'
/// commit times, if it has one.
fn dedup_window(meta: &iceberg::spec::TableMetadata) -> Result<Option<DedupWindow>> {
    let Some(window_ms) = dedup_window_ms(meta.properties())? else { return Ok(None) };
    let mut snapshots: Vec<(i64, i64)> = meta.snapshots().map(|s| (s.sequence_number(), s.timestamp_ms())).collect();
    snapshots.sort_unstable();
    Ok(Some(DedupWindow { window_ms, snapshots }))
}

/// What one task did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskOutcome {
    /// Input files.
    pub inputs: usize,
    /// Files written.
    pub outputs: usize,
    /// Rows read from the inputs.
    pub rows_in: u64,
    /// Rows written.
    pub rows_out: u64,
    /// Rows read that other engines' deletes dropped.
    pub rows_deleted: u64,
    /// Bytes read (inputs and reference keys).
    pub bytes_read: u64,
    /// Reference files whose keys this task read (not those another task of its run had read).
    pub reference_files: usize,
    /// Their sizes.
    pub reference_bytes: u64,
    /// Bytes read of them (footers and the key column pages that may hold a key of the task;
    /// part of `bytes_read`).
    pub reference_key_bytes: u64,
    /// The GETs that read them.
    pub reference_requests: u64,
    /// References not read at all: the key index (their key bounds) says they hold none of the
    /// task's keys.
    pub references_skipped: usize,
    /// Bytes written.
    pub bytes_written: u64,
}

/// A compaction run's totals.
#[derive(Debug, Clone, Default)]
pub struct CompactReport {
    /// Tasks planned.
    pub planned: usize,
    /// Tasks run (each sent a rewrite request).
    pub tasks: usize,
    /// Totals over the tasks run.
    pub totals: TaskOutcome,
    /// Wall time.
    pub elapsed: std::time::Duration,
}

/// Plans `table` and runs up to `opts.max_tasks` tasks, the most urgent, `opts.parallelism` at
/// a time; each sends its rewrite request to the commit queue. Commits nothing.
pub async fn compact(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &TableIdent,
    opts: &CompactOptions,
) -> Result<CompactReport> {
    let plan = plan_table(ports, table, opts).await?;
    run_planned(cfg, ports, table, &plan, plan.first_tasks(opts), opts).await
}

/// Runs `tasks` of `plan` (all of them), `opts.parallelism` at a time; each sends its rewrite
/// request to the commit queue.
pub async fn run_planned(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &TableIdent,
    plan: &CompactPlan,
    tasks: Vec<Task>,
    opts: &CompactOptions,
) -> Result<CompactReport> {
    let started = Instant::now();
    let mut report = CompactReport { planned: plan.tasks.len(), ..Default::default() };
    let wt = Arc::new(WriterTable::from_metadata(table, &plan.state.metadata)?);
    let snapshot = plan.state.metadata.current_snapshot().map(|s| (s.snapshot_id(), s.sequence_number()));
    let Some((snapshot_id, seq)) = snapshot else { return Ok(report) };
    let keys = Arc::new(KeyIndex::new(wt.clone(), ports.store.clone(), &plan.files, &tasks, opts.shared_key_bytes)?);
    let sem = Arc::new(tokio::sync::Semaphore::new(opts.parallelism.max(1)));
    let mut set = tokio::task::JoinSet::new();
    for task in tasks {
        let permit = sem.clone().acquire_owned().await.map_err(|e| Error::internal(e.to_string()))?;
        let (cfg, ports, wt, keys) = (cfg.clone(), ports.clone(), wt.clone(), keys.clone());
        set.spawn(async move {
            let r = run_indexed(&cfg, &ports, &wt, snapshot_id, seq, &task, &keys).await;
            drop(permit);
            r
        });
    }
    // A failed task fails the run, once the others are done: their work is not thrown away.
    let mut failed = None;
    while let Some(joined) = set.join_next().await {
        let outcome = match joined {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(e)) => {
                tracing::error!(%table, error = %e, "compaction task failed");
                failed.get_or_insert(e);
                continue;
            }
            // A task that panicked takes the run down with it, as it would a process.
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(e) => return Err(Error::internal(format!("compaction task failed: {e}"))),
        };
        report.tasks += 1;
        let t = &mut report.totals;
        t.inputs += outcome.inputs;
        t.outputs += outcome.outputs;
        t.rows_in += outcome.rows_in;
        t.rows_out += outcome.rows_out;
        t.rows_deleted += outcome.rows_deleted;
        t.bytes_read += outcome.bytes_read;
        t.reference_files += outcome.reference_files;
        t.reference_bytes += outcome.reference_bytes;
        t.reference_key_bytes += outcome.reference_key_bytes;
        t.references_skipped += outcome.references_skipped;
        t.reference_requests += outcome.reference_requests;
        t.bytes_written += outcome.bytes_written;
    }
    if let Some(e) = failed {
        return Err(e);
    }
    report.elapsed = started.elapsed();
    info!(%table, planned = report.planned, tasks = report.tasks, ms = report.elapsed.as_millis() as u64, "compaction run done");
    Ok(report)
}

/// Runs one task planned from snapshot `snapshot_id` (sequence number `seq`): writes its files
/// and sends its rewrite request.
pub async fn run_task(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &Arc<WriterTable>,
    snapshot_id: i64,
    seq: i64,
    task: &Task,
) -> Result<TaskOutcome> {
    let keys = KeyIndex::new(table.clone(), ports.store.clone(), &[], std::slice::from_ref(task), 0)?;
    run_indexed(cfg, ports, table, snapshot_id, seq, task, &keys).await
}

/// [`run_task`], its reference keys taken from a run's shared index.
async fn run_indexed(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &Arc<WriterTable>,
    snapshot_id: i64,
    seq: i64,
    task: &Task,
    keys: &KeyIndex,
) -> Result<TaskOutcome> {
    let started = Instant::now();
    // A v3 table's rows keep their lineage through the rewrite.
    let table = &Arc::new(table.for_rewrite());
    let mut out = TaskOutcome { inputs: task.inputs.len(), ..Default::default() };
    let (loaded, delete_bytes) = Loaded::read(ports.store.as_ref(), table, &task.deletes).await?;
    let loaded = Arc::new(loaded);
    out.bytes_read += delete_bytes;
    // The inputs, INPUTS_IN_FLIGHT at once (the task holds them all anyway): one at a time, a
    // task of ~900 level-0 files waited ~2 minutes on S3's first bytes alone.
    let gets: Vec<_> = task.inputs.iter().map(|f| ports.store.get(&f.path)).collect();
    let bodies: Vec<Bytes> = futures::stream::iter(gets).buffered(INPUTS_IN_FLIGHT).try_collect().await?;
    out.bytes_read += bodies.iter().map(|b| b.len() as u64).sum::<u64>();
    let inputs: Vec<(LiveFile, Bytes)> = task.inputs.iter().cloned().zip(bodies).collect();
    let (t, l) = (table.clone(), loaded.clone());
    let identity = identity_values(table, task);
    let (batches, bytes_in, deleted) = tokio::task::spawn_blocking(move || decode(&t, &inputs, &identity, &l))
        .await
        .map_err(|e| Error::internal(format!("decode task failed: {e}")))??;
    // Rows read: those the deletes dropped and those decoded.
    let rows_in: u64 = deleted + batches.iter().flatten().map(|b| b.num_rows() as u64).sum::<u64>();
    // The level-0 inputs' keys that older files hold: those rows are later copies. (A compacted
    // input is not checked: a `--full` run's references, compacted files at the target size,
    // may be younger than it, and a copy it holds was committed first.)
    let batches = Decoded::split(table, task, batches)?;
    let mine = keys.keys_of(task, batches.young(), &batches.late)?;
    let identity = identity_values(table, task);
    let (found, key_reads) = keys.found(task, &mine, &loaded, &identity).await?;
    drop(mine);
    out.bytes_read += key_reads.read;
    out.reference_files = key_reads.files;
    out.reference_bytes = key_reads.file_bytes;
    out.reference_key_bytes = key_reads.read;
    out.references_skipped = key_reads.skipped;
    out.reference_requests = key_reads.requests;
    let (t, c, id, level) = (table.clone(), cfg.clone(), task.id.clone(), task.level);
    let bytes_per_row = (bytes_in as f64 / rows_in.max(1) as f64).max(1.0);
    let files = tokio::task::spawn_blocking(move || {
        merge(&t, &c, batches, deleted, &found, (level, id.as_str()), bytes_per_row)
    })
    .await
    .map_err(|e| Error::internal(format!("merge task failed: {e}")))??;
    out.rows_in = rows_in;
    out.rows_deleted = deleted;
    let mut added: Vec<DataFileMeta> = vec![];
    let mut written_ms = Some(chrono::Utc::now().timestamp_millis());
    for (mut meta, body) in files {
        out.bytes_written += body.len() as u64;
        let (path, at) = put_data_file(ports, cfg, &meta.path, body).await?;
        (meta.path, written_ms) = (path, oldest(written_ms, at));
        added.push(meta);
    }
    ports.faults.hit(FaultPoint::CompactorAfterWrite).await;
    out.outputs = added.len();
    out.rows_out = added.iter().map(|f| f.record_count).sum();
    let removed_rows: u64 = task.inputs.iter().map(|f| f.rows).sum();
    if removed_rows != out.rows_in {
        return Err(Error::internal(format!(
            "task {}: the manifests say its inputs hold {removed_rows} rows, the files {}",
            task.id, out.rows_in
        )));
    }
    let request = RewriteRequest {
        version: MESSAGE_VERSION,
        kind: REWRITE_KIND.into(),
        table: table.ident.clone(),
        task_id: task.id.clone(),
        planned_snapshot_id: snapshot_id,
        data_sequence_number: seq,
        level: task.level,
        schema_id: table.schema.schema_id(),
        spec_id: task.spec_id,
        removed: task.inputs.iter().map(|f| f.path.clone()).collect(),
        removed_rows,
        duplicates: removed_rows - out.rows_out - deleted,
        deleted,
        applies_deletes: true,
        knows_late: true,
        row_lineage: table.tracks_rows,
        removed_deletes: task.deletes.dangling.clone(),
        added,
        written_ms,
    };
    ports.commit_queue.send(serde_json::to_string(&request)?).await?;
    ports.faults.hit(FaultPoint::CompactorAfterRequestSend).await;
    ports.metrics.count("compaction_tasks", 1);
    info!(
        table = %table.ident,
        task = %task.id,
        level = task.level,
        inputs = out.inputs,
        outputs = out.outputs,
        rows_in = out.rows_in,
        rows_out = out.rows_out,
        ms = started.elapsed().as_millis() as u64,
        "compaction task done"
    );
    Ok(out)
}

/// Decodes a task's inputs (oldest first) without the rows `deletes` drop; returns their
/// batches, bytes, and the rows dropped.
fn decode(
    table: &WriterTable,
    inputs: &[(LiveFile, Bytes)],
    identity: &[(i32, PrimitiveLiteral)],
    deletes: &Loaded,
) -> Result<(Vec<Vec<RecordBatch>>, u64, u64)> {
    let mut batches = vec![];
    let (mut bytes, mut deleted) = (0u64, 0u64);
    for (file, body) in inputs {
        bytes += body.len() as u64;
        let (read, dropped) = read_file(table, file, body.clone(), identity, deletes)?;
        batches.push(read);
        deleted += dropped;
    }
    Ok((batches, bytes, deleted))
}

/// A task's decoded inputs in age order: the compacted files' rows, then the level-0 (and late)
/// files' ("young"), of which an L0 → L1 task's late rows apart.
struct Decoded {
    batches: Vec<RecordBatch>,
    /// Where the level-0 files' rows begin.
    young: usize,
    /// The young rows whose key leads with a time before the task's late boundary.
    late: Vec<RecordBatch>,
}

impl Decoded {
    /// `per_file`, decoded from `task`'s inputs in their order (compacted files first).
    fn split(table: &WriterTable, task: &Task, per_file: Vec<Vec<RecordBatch>>) -> Result<Self> {
        let mut out = Decoded { batches: vec![], young: 0, late: vec![] };
        for (f, batches) in task.inputs.iter().zip(per_file) {
            debug_assert!(f.level() == 0 || out.young == out.batches.len(), "compacted inputs come first");
            out.batches.extend(batches);
            if f.level() > 0 {
                out.young = out.batches.len();
            }
        }
        if let (Some(before), Some(lead)) = (task.late_before, table.dedup_key.first()) {
            let young = out.batches.split_off(out.young);
            let (on_time, late) = late::split(young, lead, before)?;
            out.batches.extend(on_time);
            out.late = late;
        }
        Ok(out)
    }

    /// The young rows that are not late.
    fn young(&self) -> &[RecordBatch] {
        &self.batches[self.young..]
    }
}

/// The CPU part of a task once its inputs are decoded (`deleted` rows dropped by deletes): drop
/// the level-0 rows whose key a reference holds, then dedup (the first input's copy wins), sort
/// and encode as the writer does: into `L<level>-<id>-…`, and its late rows into a late file.
fn merge(
    table: &WriterTable,
    cfg: &EngineConfig,
    batches: Decoded,
    deleted: u64,
    found: &Found,
    (level, id): (u32, &str),
    bytes_per_row: f64,
) -> Result<Vec<(DataFileMeta, Bytes)>> {
    let rows = |bs: &[RecordBatch]| bs.iter().map(|b| b.num_rows() as u64).sum::<u64>();
    let rows_in = rows(&batches.batches) + rows(&batches.late);
    let Decoded { mut batches, young, late } = batches;
    let level0 = found.drop_from(table, batches.split_off(young))?;
    batches.extend(level0);
    // A key is late or not in all its copies (they share its leading column): the two groups
    // are deduplicated apart with the same result as together.
    let late = found.drop_from(table, late)?;
    let older = rows_in - rows(&batches) - rows(&late);
    let mut files = vec![];
    let mut keep = |meta: DataFileMeta, body: Bytes| -> Result<()> {
        files.push((meta, body));
        Ok(())
    };
    let mut duplicates = 0;
    // No rows at all (every row late, or deleted by another engine): no level-1 file; the encoder
    // takes no empty list of batches.
    if !batches.is_empty() {
        duplicates += encode(table, cfg, batches, &format!("L{level}-{id}"), bytes_per_row, &mut keep)? as u64;
    }
    if !late.is_empty() {
        let key = format!("{}{id}", plan::LATE_PREFIX);
        duplicates += encode(table, cfg, late, &key, bytes_per_row, &mut keep)? as u64;
    }
    // Every row read is accounted for: deleted, written, or dropped as a later copy of a key
    // (one an older file holds, or another input's). A row lost between them would otherwise
    // pass as a duplicate (the request's count is rows in minus rows out and deleted).
    let written: u64 = files.iter().map(|(m, _)| m.record_count).sum();
    if written + older + duplicates != rows_in {
        return Err(Error::internal(format!(
            "{} rows read, {deleted} deleted, {older} dropped as keys older files hold, {duplicates} duplicates, but \
             {written} written",
            rows_in + deleted
        )));
    }
    Ok(files)
}

/// Decodes a data file into the table's current schema, without the rows `deletes` drop (and
/// how many those were). Columns are matched by field id, so a file written with an earlier
/// schema reads with its renamed columns, promoted types, and nulls for columns added since; a
/// file without ids through the table's name mapping. A table that tracks row lineage reads
/// each row's lineage too ([`crate::table::lineage`]).
fn read_file(
    table: &WriterTable,
    file: &LiveFile,
    body: Bytes,
    identity: &[(i32, PrimitiveLiteral)],
    deletes: &Loaded,
) -> Result<(Vec<RecordBatch>, u64)> {
    let path = file.path.as_str();
    let builder = ParquetRecordBatchReaderBuilder::try_new(body)?;
    let expected = &table.arrow_schema;
    let file_fields = builder.schema().fields().clone();
    let how = table.file_match(path, &file_fields)?;
    let fill = constants(expected, &file_fields, identity, how);
    let reader = builder.with_batch_size(8192).build()?;
    let mut out = vec![];
    let (mut at, mut deleted) = (0u64, 0u64);
    for b in reader {
        let b = if fill.is_empty() { b? } else { with_constants(b?, &fill, path)? };
        // A column the file lacks reads as its initial-default (format v3), else null.
        let b = conform::conform_batch_filling(&b, expected, how, &table.defaults.0)
            .map_err(|e| Error::data_from(format!("data file {path} does not fit the table's schema"), e))?;
        let rows = b.num_rows() as u64;
        let b = match table.tracks_rows {
            true => crate::table::lineage::materialize(b, at, file.first_row_id, file.seq)?,
            false => b,
        };
        let (b, dropped) = deletes.apply(path, at, b)?;
        (at, deleted) = (at + rows, deleted + dropped);
        if b.num_rows() > 0 {
            out.push(b);
        }
    }
    Ok((out, deleted))
}
