//! Table maintenance that rides on the committer's commits: which snapshots expire, and which
//! files become unreachable when they do.
//!
//! Expiry follows Iceberg's `history.expire.max-snapshot-age-ms` and
//! `history.expire.min-snapshots-to-keep`; the committer removes from the candidates every
//! snapshot a pending ledger record names, and expires them in the metadata of its next commit
//! (no extra compare-and-swap).
//!
//! Files are deleted without re-reading the history: a snapshot that drops manifests (a merge or a
//! rewrite) or data files (a rewrite) writes a *dropped record*, a small JSON object named in its
//! summary (`floe.dropped`). What a snapshot dropped is reachable only from the snapshots before
//! it; once those are all expired, the record's files, the record itself, and the expired
//! snapshots' manifest lists are deleted. Anything a crash leaves behind (a committer dying
//! between its swap and its deletes) is an orphan, for the orphan sweep.

use std::collections::{HashMap, HashSet};

use bytes::Bytes;
use iceberg::spec::TableMetadata;
use serde::{Deserialize, Serialize};

use crate::ports::ObjectStore;
use crate::{PortError, Result};

/// Iceberg's property: snapshots older than this may expire.
pub const PROP_MAX_SNAPSHOT_AGE_MS: &str = "history.expire.max-snapshot-age-ms";
/// Iceberg's property: the newest snapshots kept whatever their age.
pub const PROP_MIN_SNAPSHOTS_TO_KEEP: &str = "history.expire.min-snapshots-to-keep";
/// Iceberg's property: whether files may be deleted at all.
pub const PROP_GC_ENABLED: &str = "gc.enabled";
/// The snapshot summary property naming a snapshot's dropped record.
pub const DROPPED_PROPERTY: &str = "floe.dropped";

/// Expire only once this many snapshots are due (each expiry costs a ledger read).
pub const EXPIRE_BATCH: usize = 8;

/// When snapshots expire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExpiryPolicy {
    /// Maximum age.
    pub max_age_ms: i64,
    /// Newest snapshots always kept.
    pub min_keep: usize,
}

impl ExpiryPolicy {
    /// The table's policy (Iceberg's defaults where a property is absent: 5 days, 1 snapshot).
    pub fn of(meta: &TableMetadata) -> Self {
        let p = meta.properties();
        ExpiryPolicy {
            max_age_ms: p.get(PROP_MAX_SNAPSHOT_AGE_MS).and_then(|v| v.parse().ok()).unwrap_or(5 * 24 * 3_600_000),
            min_keep: p.get(PROP_MIN_SNAPSHOTS_TO_KEEP).and_then(|v| v.parse().ok()).unwrap_or(1).max(1),
        }
    }

    /// Snapshots past the policy at `now_ms`, oldest first; never the current one or one a ref
    /// (a branch or tag, perhaps made by another tool) names.
    pub fn candidates(&self, meta: &TableMetadata, now_ms: i64) -> Vec<i64> {
        let old = meta.snapshots().filter(|s| s.timestamp_ms() < now_ms - self.max_age_ms).count();
        if old == 0 || meta.snapshots().len() <= self.min_keep {
            return vec![];
        }
        let named = named_snapshots(meta);
        if named.iter().any(|id| Some(*id) != meta.current_snapshot_id()) {
            // Branches or tags (another tool's): history is not one line, and what a snapshot
            // dropped may still be reachable from them. Expire nothing; Floe does not manage them.
            return vec![];
        }
        let mut snaps: Vec<(i64, i64, i64)> =
            meta.snapshots().map(|s| (s.sequence_number(), s.timestamp_ms(), s.snapshot_id())).collect();
        snaps.sort_unstable();
        let keep_from = snaps.len().saturating_sub(self.min_keep);
        snaps[..keep_from]
            .iter()
            .filter(|(_, ts, id)| *ts < now_ms - self.max_age_ms && !named.contains(id))
            .map(|(_, _, id)| *id)
            .collect()
    }
}

/// Snapshot ids named by the table's refs (the `iceberg` crate does not expose the map).
fn named_snapshots(meta: &TableMetadata) -> HashSet<i64> {
    let mut out: HashSet<i64> = meta.current_snapshot_id().into_iter().collect();
    match serde_json::to_value(meta) {
        Ok(serde_json::Value::Object(m)) => {
            let refs = m.get("refs").and_then(serde_json::Value::as_object).into_iter().flat_map(|r| r.values());
            out.extend(refs.filter_map(|r| r.get("snapshot-id").and_then(serde_json::Value::as_i64)));
            out
        }
        // Refs unknown: every snapshot counts as named, so none expires.
        _ => meta.snapshots().map(|s| s.snapshot_id()).collect(),
    }
}

/// The retention settings of branch `main` (`min-snapshots-to-keep`, `max-snapshot-age-ms`,
/// `max-ref-age-ms`), to carry over when a commit moves it: another engine may have set them.
/// None set (or unreadable): a branch with none.
pub(crate) fn main_retention(meta: &TableMetadata) -> iceberg::spec::SnapshotRetention {
    serde_json::to_value(meta)
        .ok()
        .and_then(|v| v.pointer("/refs/main").cloned())
        .and_then(|r| serde_json::from_value::<iceberg::spec::SnapshotReference>(r).ok())
        .map(|r| r.retention)
        .unwrap_or_else(|| iceberg::spec::SnapshotRetention::branch(None, None, None))
}

/// Whether snapshot `id` has `ancestor` in its line of parents (or is it).
fn descends(meta: &TableMetadata, id: i64, ancestor: i64) -> bool {
    let floor = meta.snapshot_by_id(ancestor).map_or(i64::MAX, |s| s.sequence_number());
    let mut at = meta.snapshot_by_id(id);
    while let Some(s) = at {
        if s.snapshot_id() == ancestor {
            return true;
        }
        if s.sequence_number() <= floor {
            return false;
        }
        at = s.parent_snapshot_id().and_then(|p| meta.snapshot_by_id(p));
    }
    false
}

/// Whether the table allows deleting files (Iceberg's `gc.enabled`, default true).
pub fn gc_enabled(meta: &TableMetadata) -> bool {
    meta.properties().get(PROP_GC_ENABLED).is_none_or(|v| v != "false")
}

/// What a snapshot dropped from the table: files reachable only from the snapshots before it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DroppedRecord {
    /// The snapshot that dropped them.
    pub snapshot_id: i64,
    /// Manifests no longer in its manifest list.
    pub manifests: Vec<String>,
    /// Data files it removed.
    pub data_files: Vec<String>,
}

impl DroppedRecord {
    /// Whether there is nothing to record.
    pub fn is_empty(&self) -> bool {
        self.manifests.is_empty() && self.data_files.is_empty()
    }

    /// Where the record of `snapshot_id` lives.
    pub fn location(table_location: &str, snapshot_id: i64) -> String {
        format!("{}/metadata/floe-dropped-{snapshot_id}.json", table_location.trim_end_matches('/'))
    }
}

/// Files to delete once a commit expiring snapshots has landed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cleanup {
    /// Manifest lists of the expired snapshots.
    pub manifest_lists: Vec<String>,
    /// Dropped records whose files are now unreachable (read, then deleted with their files).
    pub dropped_records: Vec<String>,
}

impl Cleanup {
    /// What expiring `expired` from `meta` (whose current snapshot becomes the new snapshot's
    /// parent) makes unreachable: their manifest lists, and the dropped records of expired
    /// snapshots that every kept snapshot descends from (after a rollback, a kept snapshot may
    /// descend from an older one and still reach what a later one dropped: such a record is left,
    /// for the orphan sweep).
    pub fn of(meta: &TableMetadata, expired: &[i64]) -> Self {
        let gone: HashSet<i64> = expired.iter().copied().collect();
        let kept: Vec<i64> = meta.snapshots().map(|s| s.snapshot_id()).filter(|id| !gone.contains(id)).collect();
        let mut out = Cleanup::default();
        for s in meta.snapshots().filter(|s| gone.contains(&s.snapshot_id())) {
            out.manifest_lists.push(s.manifest_list().to_string());
            let Some(record) = s.summary().additional_properties.get(DROPPED_PROPERTY) else { continue };
            if kept.iter().all(|k| descends(meta, *k, s.snapshot_id())) {
                out.dropped_records.push(record.clone());
            }
        }
        out
    }

    /// Deletes the files; returns how many were deleted. Records in `known` (those this process
    /// wrote) are not read again. A file already gone is fine; a record that cannot be read is
    /// left (its files become orphans for the sweep).
    pub async fn run(&self, store: &dyn ObjectStore, known: &HashMap<String, DroppedRecord>) -> Result<usize> {
        let mut deleted = 0;
        for record in &self.dropped_records {
            let r: DroppedRecord = match known.get(record) {
                Some(r) => r.clone(),
                None => match store.get(record).await {
                    Ok(bytes) => serde_json::from_slice(&bytes)?,
                    Err(PortError::NotFound(_)) => continue,
                    Err(e) => return Err(e.into()),
                },
            };
            for f in r.data_files.iter().chain(&r.manifests) {
                deleted += delete(store, f).await?;
            }
            deleted += delete(store, record).await?;
        }
        for list in &self.manifest_lists {
            deleted += delete(store, list).await?;
        }
        Ok(deleted)
    }
}

async fn delete(store: &dyn ObjectStore, uri: &str) -> Result<usize> {
    match store.delete(uri).await {
        Ok(()) => Ok(1),
        Err(PortError::NotFound(_)) => Ok(0),
        Err(e) => Err(e.into()),
    }
}

/// Writes a snapshot's dropped record; returns its location.
pub async fn write_dropped(store: &dyn ObjectStore, table_location: &str, record: &DroppedRecord) -> Result<String> {
    let at = DroppedRecord::location(table_location, record.snapshot_id);
    store.put(&at, Bytes::from(serde_json::to_vec(record)?)).await?;
    Ok(at)
}
