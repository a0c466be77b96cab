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
use futures::StreamExt;
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

    /// Deletes the files, [`DELETE_PARALLEL`] at a time; returns how many deletes succeeded.
    /// Records in `known` (those this process wrote) are not read again. A file already gone is
    /// fine. A record is deleted only after every file it names is: a record that cannot be read,
    /// or whose files are not all deleted, is left with what remains of them for the orphan
    /// sweep, and the first such error is returned once everything else is done.
    pub async fn run(&self, store: &dyn ObjectStore, known: &HashMap<String, DroppedRecord>) -> Result<usize> {
        let reads: Vec<_> =
            self.dropped_records.iter().map(|at| read_record(store, at.clone(), known.get(at).cloned())).collect();
        let read: Vec<Result<Option<(String, DroppedRecord)>>> =
            futures::stream::iter(reads).buffer_unordered(DELETE_PARALLEL).collect().await;
        let mut failed = None;
        let mut records = vec![];
        for r in read {
            match r {
                Ok(record) => records.extend(record),
                Err(e) => failed = failed.or(Some(e)),
            }
        }
        let files = records.iter().flat_map(|(_, r)| r.data_files.iter().chain(&r.manifests));
        let files: Vec<String> = files.chain(&self.manifest_lists).cloned().collect();
        let deleted = match delete_all(store, files).await {
            Ok(n) => n + delete_all(store, records.into_iter().map(|(at, _)| at).collect()).await?,
            Err(e) => return Err(failed.unwrap_or(e)),
        };
        match failed {
            Some(e) => Err(e),
            None => Ok(deleted),
        }
    }
}

/// A dropped record: `known` if this process wrote it, else read; `None` if it is gone.
async fn read_record(
    store: &dyn ObjectStore,
    at: String,
    known: Option<DroppedRecord>,
) -> Result<Option<(String, DroppedRecord)>> {
    if let Some(r) = known {
        return Ok(Some((at, r)));
    }
    match store.get(&at).await {
        Ok(bytes) => {
            let r = serde_json::from_slice(&bytes)?;
            Ok(Some((at, r)))
        }
        Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

/// Deletes in flight at once: one cleanup's deletes are independent requests.
pub const DELETE_PARALLEL: usize = 64;

/// Deletes `uris`, [`DELETE_PARALLEL`] at a time; returns how many deletes succeeded. Every
/// delete is tried; the first error is returned after all have finished.
pub async fn delete_all(store: &dyn ObjectStore, uris: Vec<String>) -> Result<usize> {
    let deletes: Vec<_> = uris.into_iter().map(|u| async move { delete(store, &u).await }).collect();
    let results: Vec<Result<usize>> = futures::stream::iter(deletes).buffer_unordered(DELETE_PARALLEL).collect().await;
    let mut deleted = 0;
    for r in results {
        deleted += r?;
    }
    Ok(deleted)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::local::{LocalFsObjectStore, path_to_uri};

    /// A table folder with a dropped record naming `n` data files and two manifests, and three
    /// manifest lists of expired snapshots.
    async fn expired(store: &LocalFsObjectStore, root: &std::path::Path, n: usize) -> (Cleanup, DroppedRecord) {
        let location = path_to_uri(root);
        let mut record = DroppedRecord { snapshot_id: 7, ..Default::default() };
        for i in 0..n {
            record.data_files.push(format!("{location}/data/f{i}.parquet"));
        }
        record.manifests = vec![format!("{location}/metadata/m0.avro"), format!("{location}/metadata/m1.avro")];
        let mut cleanup = Cleanup::default();
        for i in 0..3 {
            cleanup.manifest_lists.push(format!("{location}/metadata/snap-{i}.avro"));
        }
        for uri in record.data_files.iter().chain(&record.manifests).chain(&cleanup.manifest_lists) {
            store.put(uri, Bytes::from_static(b"x")).await.unwrap();
        }
        cleanup.dropped_records.push(write_dropped(store, &location, &record).await.unwrap());
        (cleanup, record)
    }

    #[tokio::test]
    async fn cleanup_deletes_every_file_and_the_record_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsObjectStore::new();
        let (cleanup, _) = expired(&store, dir.path(), 200).await;
        assert_eq!(cleanup.run(&store, &HashMap::new()).await.unwrap(), 200 + 2 + 3 + 1);
        assert!(store.list(&path_to_uri(dir.path())).await.unwrap().is_empty(), "nothing left");
        // Again, as after a crash between the deletes and the commit's end: the record is gone, so
        // its files are not looked for; only the lists' deletes are repeated (a no-op).
        assert_eq!(cleanup.run(&store, &HashMap::new()).await.unwrap(), 3);
    }

    #[tokio::test]
    async fn a_failed_delete_keeps_the_record_for_the_sweep() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsObjectStore::new();
        let (cleanup, record) = expired(&store, dir.path(), 100).await;
        // A data file that cannot be deleted: a folder, not empty, under its name.
        let stuck = crate::adapters::local::uri_to_path(&record.data_files[40]).unwrap();
        std::fs::remove_file(&stuck).unwrap();
        std::fs::create_dir(&stuck).unwrap();
        std::fs::write(stuck.join("inside"), b"y").unwrap();
        assert!(cleanup.run(&store, &HashMap::new()).await.is_err());
        assert!(store.head(&cleanup.dropped_records[0]).await.is_ok(), "the record outlives a file it names");
        for (i, f) in record.data_files.iter().enumerate().filter(|(i, _)| *i != 40) {
            assert!(store.head(f).await.is_err(), "file {i} deleted though another failed");
        }
        // The record is read again (it is not in `known`) once the file can go.
        std::fs::remove_dir_all(&stuck).unwrap();
        cleanup.run(&store, &HashMap::new()).await.unwrap();
        assert!(store.head(&record.data_files[40]).await.is_err());
        assert!(store.head(&cleanup.dropped_records[0]).await.is_err());
    }
}
