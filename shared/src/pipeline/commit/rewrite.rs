//! Rewrites: compactors' requests become `replace` snapshots (`overwrite` for those that dropped
//! duplicates, apart), each taking every request of the batch whose removed files are all still
//! live (up to [`REWRITES_PER_SNAPSHOT`]).
//! [`View::judge`] decides, purely, from the current snapshot's live files less those that the
//! requests taken before it in the same snapshot remove, and from what [`admit`](super::admit)
//! found of each request's added files; the committer then commits, acknowledges a duplicate, or
//! rejects a stale request. It deletes nothing a request names: a rejected request's files are
//! left to the orphan sweep, which proves them unreachable from every kept snapshot first (a
//! message's word that they are its own cannot be taken).

use std::collections::{HashMap, HashSet};

use iceberg::spec::{DataFile, Operation};
use tracing::{info, warn};

use super::admit::{self, Found};
use super::{Committer, Landed, Landing, MessageResult, TableCommit, fresh_snapshot_id};
use crate::message::RewriteRequest;
use crate::ports::Lease;
use crate::table::{Added, Change, DeleteRef, Manifests, TableState, plan_snapshot};
use crate::{Error, Result, TableIdent};

/// Rewrite requests committed together in one snapshot at most. Each costs its task id in the
/// snapshot's summary (21 bytes of metadata.json for as long as the snapshot is kept).
pub const REWRITES_PER_SNAPSHOT: usize = 100;

impl Committer {
    /// Commits a batch's rewrite requests (lock held): those that hold become one snapshot per
    /// [`REWRITES_PER_SNAPSHOT`], the others are settled. A snapshot of several that fails to
    /// build or land is tried again one request at a time, so that one request cannot hold the
    /// others back. On a lost lock the rest of the batch is left for redelivery.
    pub(super) async fn commit_rewrites(
        &mut self,
        table: &TableIdent,
        requests: &[(String, RewriteRequest)],
        lease: &mut Lease,
    ) -> Result<TableCommit> {
        let (mut results, mut landed) = (vec![], vec![]);
        let mut fresh = vec![];
        for (id, request) in requests {
            if self.too_old(request.written_ms) {
                // Its files may be gone (S3 Tables removes unreferenced files): planned again later.
                let reason = format!("task {} wrote its files longer ago than the commit age limit", request.task_id);
                warn!(%table, message = %id, %reason, "rewrite too old; rejected without committing or deleting");
                results.push((id.clone(), MessageResult::Stale { reason }));
            } else {
                fresh.push((id, request));
            }
        }
        // Those that drop duplicates change the table's rows: their snapshots are overwrites,
        // apart from the others' replaces, which readers and other engines' validations skip.
        let (replaces, overwrites): (Vec<_>, Vec<_>) = fresh.into_iter().partition(|(_, r)| r.duplicates == 0);
        let mut chunks: Vec<Vec<(&String, &RewriteRequest)>> = [replaces, overwrites]
            .iter()
            .flat_map(|kind| kind.chunks(REWRITES_PER_SNAPSHOT))
            .map(<[_]>::to_vec)
            .collect();
        chunks.reverse();
        while let Some(chunk) = chunks.pop() {
            match self.commit_rewrite_chunk(table, &chunk, lease).await {
                Ok((r, l)) => {
                    results.extend(r);
                    landed.extend(l);
                }
                Err(e @ Error::LockLost { .. }) => {
                    // The lock is gone: nothing more may be judged, let alone deleted, under it.
                    warn!(%table, error = %e, "lock lost; the rest of the batch is left for redelivery");
                    self.cache.remove(table);
                    let rest = chunk.iter().chain(chunks.iter().flatten());
                    results.extend(rest.map(|(id, _)| ((*id).clone(), MessageResult::Retry { reason: e.to_string() })));
                    break;
                }
                Err(e) if chunk.len() > 1 && !e.is_retryable() => {
                    // Not the store or the catalog: perhaps one request's files. Alone, the others
                    // go on without it.
                    warn!(%table, error = %e, requests = chunk.len(), "rewrites failed together; trying them one at a time");
                    self.cache.remove(table);
                    chunks.extend(chunk.into_iter().rev().map(|one| vec![one]));
                }
                Err(e) if results.is_empty() && chunks.is_empty() => return Err(e),
                Err(e) => {
                    warn!(%table, requests = chunk.len(), error = %e, "rewrites failed; left for redelivery");
                    self.cache.remove(table);
                    let reason = e.to_string();
                    results.extend(
                        chunk.iter().map(|(id, _)| ((*id).clone(), MessageResult::Retry { reason: reason.clone() })),
                    );
                }
            }
        }
        Ok((results, landed))
    }

    /// Judges `chunk` and commits the requests that hold as one snapshot (lock held).
    async fn commit_rewrite_chunk(
        &mut self,
        table: &TableIdent,
        chunk: &[(&String, &RewriteRequest)],
        lease: &mut Lease,
    ) -> Result<TableCommit> {
        let refusals = self.admit_rewrites(table, chunk).await?;
        for attempt in 1..=self.cfg.commit_attempts {
            let paths: HashSet<String> = chunk
                .iter()
                .flat_map(|(_, r)| r.removed.iter().chain(r.added.iter().map(|f| &f.path)))
                .cloned()
                .collect();
            let (state, manifests) = self.current_holding(table, &paths).await?;
            let live_deletes = self.live_deletes(&manifests).await?;
            let mut view = View::new(&state, &manifests, &live_deletes);
            let judged = chunk.iter().zip(&refusals);
            let verdicts: Vec<Verdict> = judged.map(|((_, r), refused)| view.judge(r, refused.as_ref())).collect();
            drop(view);
            let taken: Vec<usize> = (0..chunk.len()).filter(|i| matches!(verdicts[*i], Verdict::Take(_))).collect();
            let snapshot = if taken.is_empty() {
                None
            } else {
                match self.publish_rewrites(table, &state, manifests, chunk, &verdicts, lease, attempt).await? {
                    Some(landed) => Some(landed),
                    None => continue, // lost the swap: judge again on the new state
                }
            };
            let mut out = vec![];
            for ((id, request), verdict) in chunk.iter().zip(verdicts) {
                out.push(((*id).clone(), self.settle(table, id, request, verdict, snapshot.as_ref())));
            }
            return Ok((out, snapshot.into_iter().collect()));
        }
        Err(self.out_of_attempts(table))
    }

    /// Plans and publishes one snapshot of the taken requests; `None` if the swap was lost.
    #[allow(clippy::too_many_arguments)]
    async fn publish_rewrites(
        &mut self,
        table: &TableIdent,
        state: &TableState,
        manifests: Manifests,
        chunk: &[(&String, &RewriteRequest)],
        verdicts: &[Verdict],
        lease: &mut Lease,
        attempt: u32,
    ) -> Result<Option<Landed>> {
        let mut change = Change::append(vec![]);
        let (mut tasks, mut levels, mut duplicates) = (vec![], vec![], 0u64);
        for ((_, request), verdict) in chunk.iter().zip(verdicts) {
            let Verdict::Take(files) = verdict else { continue };
            let dsn = Some(request.data_sequence_number);
            change.added.extend(files.iter().map(|(spec_id, file)| Added {
                spec_id: *spec_id,
                file: file.clone(),
                data_sequence_number: dsn,
            }));
            change.removed.extend(request.removed.iter().cloned());
            change.removed_deletes.extend(request.removed_deletes.iter().cloned());
            tasks.push(request.task_id.as_str());
            levels.push(request.level);
            duplicates += request.duplicates;
        }
        levels.sort_unstable();
        levels.dedup();
        let rows: u64 = change.added.iter().map(|a| a.file.record_count()).sum();
        let (nfiles, nremoved) = (change.added.len(), change.removed.len());
        // Dropping duplicates changes the table's rows: an overwrite, not a replace; one that
        // adds no file (every row a duplicate) a delete, as Java's `OverwriteFiles` names it.
        change.operation = match (duplicates, change.added.is_empty()) {
            (0, _) => Operation::Replace,
            (_, true) => Operation::Delete,
            (_, false) => Operation::Overwrite,
        };
        change.expire = self.expiring(table, state, attempt).await?;
        let snapshot_id = fresh_snapshot_id(state);
        let levels = levels.iter().map(u32::to_string).collect::<Vec<_>>().join(",");
        let extra = [(TASK_PROPERTY, tasks.join(",")), ("floe.level", levels)];
        let store = self.ports.store.clone();
        let operation = change.operation.clone();
        let plan = plan_snapshot(store.as_ref(), state, Some(manifests), change, snapshot_id, &extra).await?;
        match self.publish(table, state, &plan, lease, attempt).await? {
            Landing::Landed => {
                info!(%table, snapshot_id, rewrites = tasks.len(), removed = nremoved, added = nfiles, rows, "rewrites committed");
                self.ports.metrics.count("rewrites", tasks.len() as u64);
                let rewrites = tasks.len();
                Ok(Some(Landed { table: table.clone(), snapshot_id, operation, files: nfiles, rows, rewrites }))
            }
            Landing::Lost => Ok(None),
        }
    }

    /// Whether each request's added files are what it says (there, of their sizes, Parquet of
    /// its schema), read once for a chunk: a refusal, judged after the duplicate and stale
    /// checks, makes the request poison (a duplicate's files may be compacted and gone since, a
    /// stale one is refused anyway). Requests whose names or schema do not hold are left to
    /// [`View::well_formed`].
    async fn admit_rewrites(
        &mut self,
        table: &TableIdent,
        chunk: &[(&String, &RewriteRequest)],
    ) -> Result<Vec<Option<Found>>> {
        let (state, _) = self.current(table).await?;
        let meta = &state.metadata;
        let mut files = vec![];
        for (i, (_, r)) in chunk.iter().enumerate() {
            let named = admit::check_rewrite_names(meta.location(), r).is_ok();
            if let Some(schema) = meta.schema_by_id(r.schema_id).filter(|_| named) {
                files.extend(r.added.iter().map(|f| (i, schema.as_ref(), f)));
            }
        }
        let mut refused = admit::check_files(&self.ports.store, files, self.written_after()).await;
        Ok((0..chunk.len()).map(|i| refused.remove(&i)).collect())
    }

    /// The message result of one judged request, once its snapshot (if any) has landed.
    fn settle(
        &self,
        table: &TableIdent,
        id: &str,
        request: &RewriteRequest,
        verdict: Verdict,
        snapshot: Option<&Landed>,
    ) -> MessageResult {
        match verdict {
            Verdict::Take(_) => {
                let snapshot_id = snapshot.expect("a taken request's snapshot landed").snapshot_id;
                MessageResult::Committed { snapshot_id }
            }
            Verdict::Duplicate => MessageResult::Duplicate,
            Verdict::Poison(reason) => {
                warn!(%table, message = %id, task = %request.task_id, %reason, "rewrite request refused; poison");
                MessageResult::Poison { reason }
            }
            Verdict::Unreadable(reason) => {
                warn!(%table, message = %id, task = %request.task_id, %reason, "a file of the rewrite cannot be read now");
                MessageResult::Retry { reason }
            }
            Verdict::Stale(reason) => {
                warn!(%table, message = %id, task = %request.task_id, %reason, "stale rewrite rejected; its files are left to the orphan sweep");
                self.ports.metrics.count("rewrites_rejected", 1);
                MessageResult::Stale { reason }
            }
        }
    }

    /// The paths of the snapshot's live delete files (other engines' row-level deletes); none read
    /// when it has no delete manifest.
    async fn live_deletes(&mut self, manifests: &Manifests) -> Result<HashSet<DeleteRef>> {
        let mut out = HashSet::new();
        if manifests.has_deletes() {
            let mut reads = 0;
            let store = self.ports.store.clone();
            let each = |_, _: &_, e: &iceberg::spec::ManifestEntry| {
                out.insert(DeleteRef::of(e.data_file()));
            };
            manifests.scan_live_deletes(store.as_ref(), &mut reads, each).await?;
            self.reads += u64::from(reads);
        }
        Ok(out)
    }

    /// The current state with the contents of every manifest that may hold one of `paths` live
    /// (and of the small ones, kept warm); see the `table::manifests` module.
    async fn current_holding(
        &mut self,
        table: &TableIdent,
        paths: &HashSet<String>,
    ) -> Result<(TableState, Manifests)> {
        let store = self.ports.store.clone();
        let (state, cached) = self.current(table).await?;
        let mut reads = 0;
        let mut manifests = match cached {
            Some(m) => m,
            None => Manifests::load(store.as_ref(), &state.metadata, &mut reads).await?,
        };
        // Parsed: what the chunk names, and what the next merge reads; nothing left from before.
        let next_merge = crate::table::merge_inputs(&state.metadata, &manifests.list);
        manifests.read_holding(store.as_ref(), paths, |p| next_merge.contains(p), &mut reads).await?;
        self.reads += u64::from(reads);
        if let Some(c) = self.cache.get_mut(table) {
            c.manifests = Some(manifests.clone());
        }
        Ok((state, manifests))
    }
}

/// A snapshot between a task's plan and now.
struct Since {
    /// Not a Floe rewrite, and not an append of data files alone: another engine's overwrite,
    /// delete or replace, or its row-level deletes.
    foreign_change: bool,
}

/// The snapshots after `planned` in the current snapshot's ancestry, newest first; `None` if
/// `planned` is not an ancestor of the current snapshot (expired, or another branch of history).
fn since_plan(meta: &iceberg::spec::TableMetadata, planned: i64) -> Option<Vec<Since>> {
    let mut out = vec![];
    let mut at = meta.current_snapshot();
    while let Some(s) = at {
        if s.snapshot_id() == planned {
            return Some(out);
        }
        let summary = s.summary();
        let props = &summary.additional_properties;
        let floe_rewrite = props.contains_key(TASK_PROPERTY);
        // An append adds data files only; one that says it added delete files is not taken at
        // its word.
        let adds_deletes = props.get("added-delete-files").is_some_and(|n| n != "0");
        let append = summary.operation == Operation::Append && !adds_deletes;
        out.push(Since { foreign_change: !append && !floe_rewrite });
        at = s.parent_snapshot_id().and_then(|p| meta.snapshot_by_id(p));
    }
    None
}

/// Whether snapshot `id` may have had live delete files: its summary does not say it had none.
fn had_deletes(meta: &iceberg::spec::TableMetadata, id: i64) -> bool {
    let total =
        meta.snapshot_by_id(id).and_then(|s| s.summary().additional_properties.get("total-delete-files").cloned());
    total.is_none_or(|n| n != "0")
}

/// The snapshot summary property listing the compaction tasks a snapshot committed, joined by
/// ','.
const TASK_PROPERTY: &str = "floe.compaction-task";

/// The longest task id accepted (Floe's own are 20 hex digits).
const MAX_TASK_ID: usize = 128;

/// Whether `id` can be listed in [`TASK_PROPERTY`] and read back as itself.
fn valid_task_id(id: &str) -> bool {
    (1..=MAX_TASK_ID).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

/// A live file a rewrite removes.
#[derive(Debug, Clone, Copy)]
struct Input<'a> {
    spec_id: i32,
    file: &'a DataFile,
}

/// A rewrite keeps every row in its partition and every non-null value non-null: each output
/// lies in one of its inputs' partitions (under the same spec), and no column has more nulls
/// out than its inputs can hold (dedup only drops rows). A rewrite that read a file wrongly
/// (another engine's, without field ids, read as nulls) fails here instead of landing.
///
/// An input without a column's null count may hold up to its row count of them; an output
/// without one is not compared. Columns inside lists and maps, and below optional structs
/// (`nested`, [`counted_differently`]), are not compared: writers count their nulls differently
/// there (Java records none; pyarrow undercounts some).
fn keeps_values(
    inputs: &[Input<'_>],
    added: &[(i32, DataFile)],
    nested: &HashSet<i32>,
) -> std::result::Result<(), String> {
    if let Some((spec, f)) = added.iter().find(|(spec, f)| {
        let mut same_spec = inputs.iter().filter(|i| i.spec_id == *spec);
        // Compared in their widest types: a tuple read from a manifest written before a
        // promotion of a partition source (int to long) is the same partition.
        let partition = crate::table::widened(f.partition());
        !same_spec.any(|i| crate::table::widened(i.file.partition()) == partition)
    }) {
        return Err(format!(
            "it adds {} in partition {:?} of spec {}, which none of its inputs is in",
            f.file_path(),
            f.partition(),
            spec
        ));
    }
    let columns: HashSet<i32> = inputs.iter().flat_map(|i| i.file.null_value_counts().keys().copied()).collect();
    for id in columns.into_iter().filter(|id| !nested.contains(id)) {
        let before: u64 =
            inputs.iter().map(|i| i.file.null_value_counts().get(&id).copied().unwrap_or(i.file.record_count())).sum();
        let after: Option<u64> = added.iter().map(|(_, f)| f.null_value_counts().get(&id).copied()).sum();
        if let Some(after) = after
            && after > before
        {
            return Err(format!("column {id} would hold {after} nulls where its inputs hold {before}"));
        }
    }
    Ok(())
}

/// The ids of `schema`'s fields whose null counts writers keep differently, so that a rewrite
/// cannot be held to its inputs' counts there: fields inside a list or a map (element, key and
/// value fields and everything below them), and fields below an optional struct. Where a
/// struct is null, Parquet stores no value for any field below it; Iceberg Java's writers
/// count none of those as nulls (it writes the struct's null, not its fields'), Floe's count
/// every one, so a file Spark wrote and its faithful rewrite disagree there.
fn counted_differently(schema: &iceberg::spec::Schema) -> HashSet<i32> {
    use iceberg::spec::Type;
    fn walk(ty: &Type, inside: bool, out: &mut HashSet<i32>) {
        let mut visit = |f: &iceberg::spec::NestedFieldRef, inside: bool| {
            if inside {
                out.insert(f.id);
            }
            let below_optional_struct = matches!(*f.field_type, Type::Struct(_)) && !f.required;
            walk(&f.field_type, inside || below_optional_struct, out);
        };
        match ty {
            Type::Struct(s) => s.fields().iter().for_each(|f| visit(f, inside)),
            Type::List(l) => visit(&l.element_field, true),
            Type::Map(m) => {
                visit(&m.key_field, true);
                visit(&m.value_field, true);
            }
            Type::Primitive(_) => {}
        }
    }
    let mut out = HashSet::new();
    walk(&Type::Struct(schema.as_struct().clone()), false, &mut out);
    out
}

/// What to do with a rewrite request.
#[derive(Debug)]
enum Verdict {
    /// Commit these files in place of the removed ones.
    Take(Vec<(i32, DataFile)>),
    /// It landed already (a snapshot of the history names its task).
    Duplicate,
    /// Some removed file is no longer live, or the table changed under it: reject it (its
    /// files are left to the orphan sweep).
    Stale(String),
    /// It can never commit (unknown spec, malformed entries, rows that do not add up).
    Poison(String),
    /// A file it adds cannot be read now: tried again later, alone.
    Unreadable(String),
}

/// What a chunk of rewrite requests is judged against: the current snapshot's live files, less
/// those removed by the requests taken before in the same chunk. Of the live files it knows those
/// of the manifests parsed, which hold every live file the chunk's requests name
/// ([`Committer::current_holding`]).
struct View<'a> {
    state: &'a TableState,
    /// Live files: record count, data sequence number, and the file with its spec id.
    live: HashMap<&'a str, (u64, i64, Input<'a>)>,
    /// Task ids named by a snapshot of the current snapshot's ancestry (after a rollback, a
    /// task of a snapshot rolled away from has not landed: its inputs are live again).
    landed: HashSet<&'a str>,
    /// Whether the table has row-level delete files.
    deletes: bool,
    /// Whether a live file it knows is a late file.
    late: bool,
    /// The live delete files.
    live_deletes: &'a HashSet<DeleteRef>,
    /// Files removed, delete files removed, files added and tasks taken by the requests taken
    /// so far.
    removed: HashSet<String>,
    removed_deletes: HashSet<DeleteRef>,
    added: HashSet<String>,
    tasks: HashSet<String>,
}

/// A rewrite request read against the table.
struct Formed<'r> {
    /// The schema its files were written with.
    written: iceberg::spec::SchemaRef,
    /// Its files, in the table's current types.
    added: Vec<(i32, DataFile)>,
    /// The files it removes.
    removed: HashSet<&'r str>,
}

impl<'a> View<'a> {
    fn new(state: &'a TableState, manifests: &'a Manifests, live_deletes: &'a HashSet<DeleteRef>) -> Self {
        let live: HashMap<&'a str, (u64, i64, Input<'a>)> = manifests
            .live_parsed()
            .map(|(mf, e)| {
                let input = Input { spec_id: mf.partition_spec_id, file: e.data_file() };
                (e.file_path(), (e.record_count(), e.sequence_number().unwrap_or(i64::MAX), input))
            })
            .collect();
        let meta = &state.metadata;
        let ancestry = std::iter::successors(meta.current_snapshot(), |s| {
            s.parent_snapshot_id().and_then(|p| meta.snapshot_by_id(p))
        });
        let landed = ancestry
            .filter_map(|s| s.summary().additional_properties.get(TASK_PROPERTY))
            .flat_map(|tasks| tasks.split(','))
            .collect();
        let late = live.keys().any(|p: &&str| crate::pipeline::compact::plan::is_late_file(p));
        View {
            state,
            live,
            landed,
            deletes: manifests.has_deletes(),
            late,
            live_deletes,
            removed: HashSet::new(),
            removed_deletes: HashSet::new(),
            added: HashSet::new(),
            tasks: HashSet::new(),
        }
    }

    /// Whether `path` is live in the snapshot being built (before this request).
    fn is_live(&self, path: &str) -> bool {
        self.live.contains_key(path) && !self.removed.contains(path)
    }

    /// Judges `request` (`refused`: why its added files are not what it says, if they are not),
    /// and if it is taken, records what it removes and adds.
    fn judge(&mut self, request: &RewriteRequest, refused: Option<&Found>) -> Verdict {
        let verdict = self.verdict(request, refused);
        if matches!(verdict, Verdict::Take(_)) {
            self.removed.extend(request.removed.iter().cloned());
            self.removed_deletes.extend(request.removed_deletes.iter().cloned());
            self.added.extend(request.added.iter().map(|f| f.path.clone()));
            self.tasks.insert(request.task_id.clone());
        }
        verdict
    }

    /// The verdict on `request`, judged against this view.
    fn verdict(&self, request: &RewriteRequest, refused: Option<&Found>) -> Verdict {
        let checked = self.well_formed(request).and_then(|formed| {
            // A request that landed before (its task is in the history) is a redelivery, even
            // if its files have been compacted again since: they may still be in older
            // snapshots. So is a second copy of a request taken in this snapshot.
            if self.landed.contains(request.task_id.as_str()) || self.tasks.contains(&request.task_id) {
                return Err(Verdict::Duplicate);
            }
            self.still_applies(request, &formed)?;
            match refused {
                Some(Found::Refused(why)) => {
                    return Err(Verdict::Poison(format!("rewrite {}: {why}", request.task_id)));
                }
                Some(Found::Unreadable(why)) => return Err(Verdict::Unreadable(why.clone())),
                None => {}
            }
            self.accounts(request, &formed)?;
            Ok(formed.added)
        });
        checked.map_or_else(|verdict| verdict, Verdict::Take)
    }

    /// The request read against the table: its files converted to the table's types, or why it
    /// never can be (poison).
    fn well_formed<'r>(&self, request: &'r RewriteRequest) -> Result<Formed<'r>, Verdict> {
        let poison = |why: String| Verdict::Poison(why);
        if !valid_task_id(&request.task_id) {
            // A summary lists its snapshot's tasks joined by ',': such an id would read as others.
            return Err(poison(format!(
                "rewrite task id {:?} is not 1 to {MAX_TASK_ID} letters, digits, '.', '_' or '-'",
                request.task_id
            )));
        }
        let meta = &self.state.metadata;
        admit::check_rewrite_names(meta.location(), request)
            .map_err(|why| poison(format!("rewrite {}: {why}", request.task_id)))?;
        let spec = meta.partition_spec_by_id(request.spec_id).ok_or_else(|| {
            poison(format!(
                "rewrite {} names partition spec {} which the table lacks",
                request.task_id, request.spec_id
            ))
        })?;
        let written = meta.schema_by_id(request.schema_id).ok_or_else(|| {
            poison(format!("rewrite {} names schema {} which the table lacks", request.task_id, request.schema_id))
        })?;
        // Written with an earlier schema, its bounds take the promoted types.
        let current = meta.current_schema();
        let added = request
            .added
            .iter()
            .map(|f| Ok((request.spec_id, f.to_data_file_of(written, current, spec)?)))
            .collect::<Result<Vec<(i32, DataFile)>>>()
            .map_err(|e| poison(format!("rewrite {}: {e}", request.task_id)))?;
        let removed: HashSet<&str> = request.removed.iter().map(String::as_str).collect();
        if removed.is_empty() || removed.len() != request.removed.len() {
            return Err(poison(format!("rewrite {} removes no files or names one twice", request.task_id)));
        }
        Ok(Formed { written: written.clone(), added, removed })
    }

    /// Whether the rewrite still applies to the table as it is now: if not, it is stale.
    fn still_applies(&self, request: &RewriteRequest, formed: &Formed<'_>) -> Result<(), Verdict> {
        let (meta, written, removed) = (&self.state.metadata, &formed.written, &formed.removed);
        // Its columns must still mean the same in the table's schema (they do unless another
        // engine dropped one since); if not, the files are left to the orphan sweep.
        if let Err(why) = crate::convert::evolve::rebase(meta.current_schema(), meta.last_column_id(), written, &[]) {
            let reason = format!("its files no longer fit the table's schema: {why}");
            return Err(Verdict::Stale(reason));
        }
        let missing: Vec<&str> = removed.iter().copied().filter(|p| !self.is_live(p)).collect();
        let since = since_plan(meta, request.planned_snapshot_id);
        if !missing.is_empty() {
            let reason = Error::NotLive { files: missing.iter().map(|p| p.to_string()).collect() }.to_string();
            return Err(Verdict::Stale(reason));
        }
        // The next two are refusals of an older compactor's request (this build's rerun of the
        // same task may write the very same files, same task id and bytes, and commit them).
        // A v3 table (perhaps upgraded since the plan) and files without the rows' lineage:
        // their ids would not survive the rewrite.
        let planned_with_ids =
            meta.snapshot_by_id(request.planned_snapshot_id).is_some_and(|s| s.row_range().is_some());
        if crate::table::tracks_rows(meta) && !(request.row_lineage && planned_with_ids) {
            let reason = "the table tracks row lineage (format v3) and this rewrite's files do not carry its rows' \
                          _row_id (planned before the upgrade or its first v3 commit, or by a compactor that does \
                          not)"
                .to_string();
            return Err(Verdict::Stale(reason));
        }
        // Written by a compactor that does not apply other engines' delete files, on a table
        // that has some now or had some when it was planned (they may have been removed since,
        // with files whose deleted rows the task counted as committed copies).
        if !request.applies_deletes && (self.deletes || had_deletes(meta, request.planned_snapshot_id)) {
            let reason = "the table has (or had when this rewrite was planned) row-level delete files, which the \
                          compactor that wrote it does not apply"
                .to_string();
            return Err(Verdict::Stale(reason));
        }
        // A compactor that takes late files for writers' files orders their rows after younger
        // level-0 copies of their keys, whether or not its own task removes one (an earlier task
        // of its chain drops the late file's first copy for a younger one): none of its requests
        // lands on a table that may hold late files (docs/ARCHITECTURE.md, "Late keys, once per
        // partition").
        let late = |p: &String| crate::pipeline::compact::plan::is_late_file(p);
        if !request.knows_late
            && (self.late || crate::table::may_hold_late_files(meta) || request.removed.iter().any(late))
        {
            let reason = "the table may hold late files, which the compactor that wrote it does not know".to_string();
            return Err(Verdict::Stale(reason));
        }
        // The delete files it removes must be live still: it was planned on them (a rewrite taken
        // before in this snapshot that removed one applied it too, so the two overlap).
        let gone: Vec<&str> = request
            .removed_deletes
            .iter()
            .filter(|r| !self.live_deletes.contains(*r) || self.removed_deletes.contains(*r))
            .map(|r| r.path.as_str())
            .collect();
        if !gone.is_empty() {
            let reason = format!("delete file(s) it removes are no longer live: {gone:?}");
            return Err(Verdict::Stale(reason));
        }
        // Another engine's row-level deletes, or its rewrite of the files this task read (its
        // references included), since the plan: the merge did not apply those deletes (it would
        // bring deleted rows back) or may drop a key whose kept copy is gone. Neither reason is
        // for good (a rerun plans the same inputs again and applies what is live then; a task
        // with other deletes has another id): the files are left to the sweep.
        if since.as_ref().is_none_or(|s| s.iter().any(|op| op.foreign_change)) {
            let reason = format!(
                "the table changed since snapshot {} other than by appends and Floe's rewrites (or that snapshot is no longer in its history)",
                request.planned_snapshot_id
            );
            return Err(Verdict::Stale(reason));
        }
        Ok(())
    }

    /// Whether the rewrite accounts for its inputs: new files, the planned snapshot's data
    /// sequence number, every row, every value. If not, it is poison.
    fn accounts(&self, request: &RewriteRequest, formed: &Formed<'_>) -> Result<(), Verdict> {
        let (live, removed, task) = (&self.live, &formed.removed, &request.task_id);
        let added_live = request.added.iter().filter(|f| self.holds(f.path.as_str())).count();
        if added_live > 0 {
            return Err(Verdict::Poison(format!("rewrite {task} adds {added_live} file(s) the table already holds")));
        }
        let removed_rows: u64 = removed.iter().map(|p| live[p].0).sum();
        if request.deleted > 0 && !had_deletes(&self.state.metadata, request.planned_snapshot_id) {
            return Err(Verdict::Poison(format!(
                "rewrite {task} claims {} rows deleted by delete files, but the table had none when it was planned",
                request.deleted
            )));
        }
        let newest_input = removed.iter().map(|p| live[p].1).max().unwrap_or(i64::MAX);
        let planned_seq = self.state.metadata.snapshot_by_id(request.planned_snapshot_id).map(|s| s.sequence_number());
        if planned_seq != Some(request.data_sequence_number) || request.data_sequence_number < newest_input {
            return Err(Verdict::Poison(format!(
                "rewrite {task} carries data sequence number {}, not that of its planned snapshot ({planned_seq:?}) at least {newest_input}",
                request.data_sequence_number
            )));
        }
        let keyed =
            self.state.metadata.properties().get(crate::table::PROP_DEDUP_KEY).is_some_and(|k| !k.trim().is_empty());
        if request.duplicates > 0 && !keyed {
            return Err(Verdict::Poison(format!(
                "rewrite {task} drops {} rows as duplicates, but the table has no dedup key ({})",
                request.duplicates,
                crate::table::PROP_DEDUP_KEY
            )));
        }
        if removed_rows != request.removed_rows || request.accounted_rows() != Some(removed_rows) {
            return Err(Verdict::Poison(format!(
                "rewrite {task} does not account for every row: the removed files hold {removed_rows}, it claims {} removed, {} added, {} duplicates and {} deleted",
                request.removed_rows,
                request.added_rows(),
                request.duplicates,
                request.deleted
            )));
        }
        let inputs: Vec<Input<'_>> = removed.iter().map(|p| live[p].2).collect();
        let current = self.state.metadata.current_schema();
        if let Err(why) = keeps_values(&inputs, &formed.added, &counted_differently(current)) {
            return Err(Verdict::Poison(format!("rewrite {task} would change values: {why}")));
        }
        Ok(())
    }

    /// Whether the table holds `path` live, or this snapshot adds it.
    fn holds(&self, path: &str) -> bool {
        self.live.contains_key(path) || self.added.contains(path)
    }
}

#[cfg(test)]
mod tests {
    use iceberg::spec::{DataContentType, DataFileBuilder, DataFileFormat, Literal, Struct};

    use super::*;

    fn file(path: &str, tenant: &str, nulls: &[(i32, u64)]) -> DataFile {
        DataFileBuilder::default()
            .content(DataContentType::Data)
            .file_path(path.to_string())
            .file_format(DataFileFormat::Parquet)
            .partition(Struct::from_iter([Some(Literal::string(tenant))]))
            .partition_spec_id(0)
            .record_count(10)
            .file_size_in_bytes(100)
            .null_value_counts(nulls.iter().copied().collect())
            .build()
            .unwrap()
    }

    #[test]
    fn a_rewrite_that_turns_values_into_nulls_or_moves_rows_is_refused() {
        let (a, b) = (file("a", "t1", &[(1, 0), (2, 3)]), file("b", "t1", &[(1, 0), (2, 1)]));
        let inputs = [Input { spec_id: 0, file: &a }, Input { spec_id: 0, file: &b }];
        let none = HashSet::new();
        let keeps_values = |i: &[Input<'_>], a: &[(i32, DataFile)]| super::keeps_values(i, a, &none);
        let good = vec![(0, file("c", "t1", &[(1, 0), (2, 4)]))];
        assert!(keeps_values(&inputs, &good).is_ok());
        // Dedup drops rows, so fewer nulls out is fine.
        assert!(keeps_values(&inputs, &[(0, file("c", "t1", &[(1, 0), (2, 2)]))]).is_ok());
        // Ids read as nulls (a file without field ids read without its name mapping).
        let nulled = keeps_values(&inputs, &[(0, file("c", "t1", &[(1, 20), (2, 4)]))]).unwrap_err();
        assert!(nulled.contains("column 1 would hold 20 nulls where its inputs hold 0"), "{nulled}");
        // A row moved to another partition.
        let moved = keeps_values(&inputs, &[(0, file("c", "t1", &[])), (0, file("d", "t2", &[]))]).unwrap_err();
        assert!(moved.contains("adds d in partition"), "{moved}");
        // Counts an output lacks are not compared.
        assert!(keeps_values(&inputs, &[(0, file("c", "t1", &[]))]).is_ok());
        // An input without a count may hold up to its rows of nulls, no more.
        let e = file("e", "t1", &[(2, 0)]);
        let uncounted = [Input { spec_id: 0, file: &a }, Input { spec_id: 0, file: &e }];
        assert!(keeps_values(&uncounted, &[(0, file("c", "t1", &[(1, 10)]))]).is_ok());
        assert!(keeps_values(&uncounted, &[(0, file("c", "t1", &[(1, 11)]))]).is_err());
        // Inputs of two partitions: each output in one of them.
        let f = file("f", "t2", &[(1, 0)]);
        let two = [Input { spec_id: 0, file: &a }, Input { spec_id: 0, file: &f }];
        assert!(keeps_values(&two, &[(0, file("c", "t1", &[])), (0, file("d", "t2", &[]))]).is_ok());
        assert!(keeps_values(&two, &[(0, file("c", "t3", &[]))]).is_err());
        // A partition tuple read from a manifest written before its source was promoted (int to
        // long) is the same partition.
        let with_partition = |p: Literal| {
            DataFileBuilder::default()
                .content(DataContentType::Data)
                .file_path("n".into())
                .file_format(DataFileFormat::Parquet)
                .partition(Struct::from_iter([Some(p)]))
                .partition_spec_id(0)
                .record_count(10)
                .file_size_in_bytes(100)
                .build()
                .unwrap()
        };
        let (narrow, wide) = (with_partition(Literal::int(5)), with_partition(Literal::long(5)));
        assert!(keeps_values(&[Input { spec_id: 0, file: &narrow }], &[(0, wide)]).is_ok());
        // A column inside a list is not compared.
        let nested = HashSet::from([1]);
        assert!(super::keeps_values(&inputs, &[(0, file("c", "t1", &[(1, 20)]))], &nested).is_ok());
    }

    /// Fields in lists and maps and below optional structs (Spark's null `geo` counts no null
    /// `geo.lat`) are not compared; those of required structs and top-level fields are.
    #[test]
    fn null_counts_are_compared_where_every_writer_keeps_them() {
        use iceberg::spec::{ListType, NestedField, PrimitiveType, Schema, StructType, Type};
        let int = |id, name: &str, required| {
            let t = Type::Primitive(PrimitiveType::Int);
            std::sync::Arc::new(if required {
                NestedField::required(id, name, t)
            } else {
                NestedField::optional(id, name, t)
            })
        };
        let schema = Schema::builder()
            .with_fields([
                int(1, "id", true),
                int(2, "n", false),
                NestedField::optional(
                    3,
                    "geo",
                    Type::Struct(StructType::new(vec![int(4, "lat", true), int(5, "lon", false)])),
                )
                .into(),
                NestedField::required(
                    6,
                    "r",
                    Type::Struct(StructType::new(vec![int(7, "x", false), int(8, "y", true)])),
                )
                .into(),
                NestedField::optional(9, "l", Type::List(ListType::new(int(10, "element", false)))).into(),
            ])
            .build()
            .unwrap();
        let skipped = super::counted_differently(&schema);
        assert_eq!(skipped, HashSet::from([4, 5, 10]), "below the optional struct and in the list");
    }
}
