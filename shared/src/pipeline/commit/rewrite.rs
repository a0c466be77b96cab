//! Rewrites: a compactor's request becomes a `replace` snapshot if every file it removes is still
//! live. [`judge`] decides, purely, from the current snapshot's live files; the committer then
//! commits, acknowledges a duplicate, or rejects a stale request and deletes its added files
//! (never one that is live: a redelivered request that already landed is a duplicate).

use std::collections::{HashMap, HashSet};

use iceberg::spec::{DataFile, Operation};
use tracing::{info, warn};

use super::{Committer, Landed, Landing, MessageResult, fresh_snapshot_id};
use crate::message::RewriteRequest;
use crate::ports::Lease;
use crate::table::{Change, Manifests, TableState, plan_snapshot};
use crate::{Error, Result, TableIdent};

impl Committer {
    /// Commits one rewrite request as a replace snapshot, or settles it (lock held).
    pub(super) async fn commit_rewrite(
        &mut self,
        table: &TableIdent,
        id: &str,
        request: &RewriteRequest,
        lease: &mut Lease,
    ) -> Result<(MessageResult, Option<Landed>)> {
        if self.too_old(request.written_ms) {
            // Its files may be gone (S3 Tables removes unreferenced files): planned again later.
            let reason = format!("task {} wrote its files longer ago than the commit age limit", request.task_id);
            warn!(%table, message = %id, %reason, "rewrite too old; rejected without committing or deleting");
            return Ok((MessageResult::Stale { reason }, None));
        }
        for attempt in 1..=self.cfg.commit_attempts {
            let (state, manifests) = self.current_with_contents(table).await?;
            let files = match judge(&state, &manifests, request) {
                Verdict::Take(files) => files,
                Verdict::Duplicate => return Ok((MessageResult::Duplicate, None)),
                Verdict::Poison(reason) => {
                    warn!(%table, message = %id, task = %request.task_id, %reason, "rewrite request refused; poison");
                    return Ok((MessageResult::Poison { reason }, None));
                }
                Verdict::Stale { reason, orphans } => {
                    warn!(%table, message = %id, task = %request.task_id, %reason, "stale rewrite rejected");
                    self.ports.metrics.count("rewrites_rejected", 1);
                    for path in orphans.into_iter().filter(|_| self.may_delete()) {
                        if let Err(e) = self.ports.store.delete(&path).await {
                            warn!(%table, file = %path, error = %e, "file of a rejected rewrite not deleted");
                        }
                    }
                    return Ok((MessageResult::Stale { reason }, None));
                }
            };
            let rows: u64 = files.iter().map(|(_, f)| f.record_count()).sum();
            let nfiles = files.len();
            // Dropping duplicates changes the table's rows: an overwrite, not a replace.
            let operation = if request.duplicates == 0 { Operation::Replace } else { Operation::Overwrite };
            let change = Change {
                operation: operation.clone(),
                added: files,
                removed: request.removed.iter().cloned().collect(),
                data_sequence_number: Some(request.data_sequence_number),
                expire: self.expiring(table, &state).await?,
                schema: None,
            };
            let snapshot_id = fresh_snapshot_id(&state);
            let extra = [(TASK_PROPERTY, request.task_id.clone()), ("floe.level", request.level.to_string())];
            let store = self.ports.store.clone();
            let plan = plan_snapshot(store.as_ref(), &state, Some(manifests), change, snapshot_id, &extra).await?;
            if let Landing::Landed = self.publish(table, &state, &plan, lease, attempt).await? {
                info!(%table, snapshot_id, removed = request.removed.len(), added = nfiles, rows, "rewrite committed");
                self.ports.metrics.count("rewrites", 1);
                let landed = Landed { table: table.clone(), snapshot_id, operation, files: nfiles, rows };
                return Ok((MessageResult::Committed { snapshot_id }, Some(landed)));
            }
        }
        Err(self.out_of_attempts(table))
    }

    /// The current state with every manifest's contents (read once, then kept warm).
    async fn current_with_contents(&mut self, table: &TableIdent) -> Result<(TableState, Manifests)> {
        let store = self.ports.store.clone();
        let (state, cached) = self.current(table).await?;
        let mut reads = 0;
        let mut manifests = match cached {
            Some(m) => m,
            None => Manifests::load(store.as_ref(), &state.metadata, &mut reads).await?,
        };
        manifests.read_contents(store.as_ref(), &mut reads).await?;
        self.reads += u64::from(reads);
        if let Some(c) = self.cache.get_mut(table) {
            c.manifests = Some(manifests.clone());
        }
        Ok((state, manifests))
    }
}

/// A snapshot between a task's plan and now.
struct Since {
    /// Not an append, and not a Floe rewrite: another engine's overwrite, delete or replace.
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
        let floe_rewrite = summary.additional_properties.contains_key(TASK_PROPERTY);
        out.push(Since { foreign_change: summary.operation != Operation::Append && !floe_rewrite });
        at = s.parent_snapshot_id().and_then(|p| meta.snapshot_by_id(p));
    }
    None
}

/// The snapshot summary property naming the compaction task a replace snapshot committed.
const TASK_PROPERTY: &str = "floe.compaction-task";

/// What to do with a rewrite request.
#[derive(Debug)]
enum Verdict {
    /// Commit these files in place of the removed ones.
    Take(Vec<(i32, DataFile)>),
    /// It landed already (a snapshot of the history names its task).
    Duplicate,
    /// Some removed file is no longer live: reject, and delete `orphans` (its added files that
    /// are not live).
    Stale { reason: String, orphans: Vec<String> },
    /// It can never commit (unknown spec, malformed entries, rows that do not add up).
    Poison(String),
}

/// Judges `request` against the live files of the current snapshot.
fn judge(state: &TableState, manifests: &Manifests, request: &RewriteRequest) -> Verdict {
    let meta = &state.metadata;
    let Some(spec) = meta.partition_spec_by_id(request.spec_id) else {
        return Verdict::Poison(format!(
            "rewrite {} names partition spec {} which the table lacks",
            request.task_id, request.spec_id
        ));
    };
    let Some(written) = meta.schema_by_id(request.schema_id) else {
        return Verdict::Poison(format!(
            "rewrite {} names schema {} which the table lacks",
            request.task_id, request.schema_id
        ));
    };
    // Written with an earlier schema, its bounds take the promoted types.
    let current = meta.current_schema();
    let added: Result<Vec<(i32, DataFile)>> =
        request.added.iter().map(|f| Ok((request.spec_id, f.to_data_file_of(written, current, spec)?))).collect();
    let added = match added {
        Ok(files) => files,
        Err(e) => return Verdict::Poison(format!("rewrite {}: {e}", request.task_id)),
    };
    let removed: HashSet<&str> = request.removed.iter().map(String::as_str).collect();
    if removed.is_empty() || removed.len() != request.removed.len() {
        return Verdict::Poison(format!("rewrite {} removes no files or names one twice", request.task_id));
    }
    // A request that landed before (its task is in the history) is a redelivery, even if its
    // files have been compacted again since: they may still be in older snapshots.
    let landed = meta
        .snapshots()
        .any(|s| s.summary().additional_properties.get(TASK_PROPERTY).is_some_and(|t| *t == request.task_id));
    if landed {
        return Verdict::Duplicate;
    }
    // Its columns must still mean the same in the table's schema (they do unless another
    // engine dropped one since); if not, the files are left to the orphan sweep.
    if let Err(why) = crate::convert::evolve::rebase(current, meta.last_column_id(), written, &[]) {
        let reason = format!("its files no longer fit the table's schema: {why}");
        return Verdict::Stale { reason, orphans: vec![] };
    }
    let live: HashMap<&str, (u64, i64)> = manifests
        .live()
        .map(|(_, e)| (e.file_path(), (e.record_count(), e.sequence_number().unwrap_or(i64::MAX))))
        .collect();
    let added_live = request.added.iter().filter(|f| live.contains_key(f.path.as_str())).count();
    let missing: Vec<&str> = removed.iter().copied().filter(|p| !live.contains_key(p)).collect();
    let since = since_plan(meta, request.planned_snapshot_id);
    // Its added files may be deleted only while the current snapshot's own history reaches back
    // to its plan: had it landed, its snapshot would then be there to say so (checked above).
    // Otherwise they are left to the orphan sweep, which checks every kept snapshot.
    let orphans = || -> Vec<String> {
        let unreferenced = request.added.iter().filter(|f| !live.contains_key(f.path.as_str()));
        if since.is_some() { unreferenced.map(|f| f.path.clone()).collect() } else { vec![] }
    };
    if !missing.is_empty() {
        let reason = Error::NotLive { files: missing.iter().map(|p| p.to_string()).collect() }.to_string();
        return Verdict::Stale { reason, orphans: orphans() };
    }
    // A table upgraded to v3 since the plan: its rows' ids would not survive the rewrite.
    if let Err(e) = crate::table::ensure_rewritable(meta.location(), meta) {
        return Verdict::Stale { reason: e.to_string(), orphans: orphans() };
    }
    // Another engine's row-level deletes, or its rewrite of the files this task read (its
    // references included), since the plan: the merge may bring deleted rows back or drop a key
    // whose kept copy is gone.
    let deletes = manifests.list.iter().any(|m| m.content != iceberg::spec::ManifestContentType::Data);
    let foreign = since.as_ref().is_none_or(|s| s.iter().any(|op| op.foreign_change));
    if deletes || foreign {
        let reason = if deletes {
            "the table has row-level delete files, which Floe does not compact".to_string()
        } else {
            format!(
                "the table changed since snapshot {} other than by appends and Floe's rewrites (or that snapshot is no longer in its history)",
                request.planned_snapshot_id
            )
        };
        return Verdict::Stale { reason, orphans: if deletes { orphans() } else { vec![] } };
    }
    if added_live > 0 {
        return Verdict::Poison(format!(
            "rewrite {} adds {added_live} file(s) the table already holds",
            request.task_id
        ));
    }
    let removed_rows: u64 = removed.iter().map(|p| live[p].0).sum();
    let newest_input = removed.iter().map(|p| live[p].1).max().unwrap_or(i64::MAX);
    let planned_seq = meta.snapshot_by_id(request.planned_snapshot_id).map(|s| s.sequence_number());
    if planned_seq != Some(request.data_sequence_number) || request.data_sequence_number < newest_input {
        return Verdict::Poison(format!(
            "rewrite {} carries data sequence number {}, not that of its planned snapshot ({planned_seq:?}) at least {newest_input}",
            request.task_id, request.data_sequence_number
        ));
    }
    if removed_rows != request.removed_rows || request.added_rows() + request.duplicates != removed_rows {
        return Verdict::Poison(format!(
            "rewrite {} does not account for every row: the removed files hold {removed_rows}, it claims {} removed, {} added and {} duplicates",
            request.task_id,
            request.removed_rows,
            request.added_rows(),
            request.duplicates
        ));
    }
    Verdict::Take(added)
}
