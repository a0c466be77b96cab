//! Table maintenance that rides on the committer's commits: which snapshots expire, and which
//! files become unreachable when they do.
//!
//! Expiry follows the spec's snapshot retention as Iceberg Java's `RemoveSnapshots` applies it
//! ([`Expiry::due`]: per-ref settings over the table's `history.expire.*` properties, refs
//! other than `main` removed past their age, what a kept ref reaches kept); the committer
//! removes from the candidates every snapshot a pending ledger record names, and expires them in
//! the metadata of its next commit (no extra compare-and-swap), with their statistics.
//!
//! Files are deleted without re-reading the history: a snapshot that drops manifests (a merge or a
//! rewrite) or data files (a rewrite) writes a *dropped record*, a small JSON object named in its
//! summary (`floe.dropped`). What a snapshot dropped is reachable only from the snapshots before
//! it; once those are all expired, the record's files, the record itself, and the expired
//! snapshots' manifest lists are deleted. Anything a crash leaves behind (a committer dying
//! between its swap and its deletes) is an orphan, for the orphan sweep.

use std::collections::{BTreeMap, HashMap, HashSet};

use bytes::Bytes;
use futures::StreamExt;
use iceberg::spec::{MAIN_BRANCH, SnapshotRef, SnapshotReference, SnapshotRetention, TableMetadata};
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

/// Iceberg's property: refs other than `main` whose snapshot is older than this are removed
/// (default: never).
pub const PROP_MAX_REF_AGE_MS: &str = "history.expire.max-ref-age-ms";

/// Expire only once this many snapshots are due (each expiry records its appends landed in the
/// ledger first, and rewrites metadata.json without them).
pub const EXPIRE_BATCH: usize = 8;

/// What one commit expires: snapshots past every retention that could keep them, and refs past
/// their age.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expiry {
    /// Snapshot ids, oldest first.
    pub snapshots: Vec<i64>,
    /// Refs (branches or tags, never `main`) to remove.
    pub refs: Vec<String>,
}

impl Expiry {
    /// Whether nothing expires.
    pub fn is_empty(&self) -> bool {
        self.snapshots.is_empty() && self.refs.is_empty()
    }

    /// Everything past retention at `now_ms`, as Iceberg Java's `RemoveSnapshots` decides it:
    /// - a ref other than `main` is removed once its snapshot is older than its
    ///   `max-ref-age-ms` (default the table's `history.expire.max-ref-age-ms`, else never);
    /// - a kept branch keeps, from its head back, the ancestors younger than its
    ///   `max-snapshot-age-ms` and at least its `min-snapshots-to-keep` (defaults: the table's
    ///   `history.expire.*` properties, else 5 days and 1); a kept tag keeps its snapshot;
    /// - a snapshot no kept ref reaches is kept while younger than the table's max age;
    /// - every other snapshot expires.
    ///
    /// Refs unreadable: nothing expires.
    pub fn due(meta: &TableMetadata, now_ms: i64) -> Self {
        if meta.snapshots().len() == 0 {
            return Expiry::default();
        }
        let Some(refs) = refs(meta) else { return Expiry::default() };
        // A property that does not parse: Java's expiry fails on it; nothing expires.
        let prop = |k: &str, default: i64| match meta.properties().get(k) {
            None => Some(default),
            Some(v) => v.trim().parse::<i64>().ok(),
        };
        let (Some(max_age), Some(min_keep), Some(max_ref_age)) = (
            prop(PROP_MAX_SNAPSHOT_AGE_MS, 5 * 24 * 3_600_000),
            prop(PROP_MIN_SNAPSHOTS_TO_KEEP, 1),
            prop(PROP_MAX_REF_AGE_MS, i64::MAX),
        ) else {
            return Expiry::default();
        };
        let mut out = Expiry::default();
        let mut kept = vec![];
        for (name, r) in refs {
            let ref_age = match r.retention {
                SnapshotRetention::Branch { max_ref_age_ms, .. } | SnapshotRetention::Tag { max_ref_age_ms } => {
                    max_ref_age_ms.unwrap_or(max_ref_age)
                }
            };
            let young =
                meta.snapshot_by_id(r.snapshot_id).is_some_and(|s| now_ms.saturating_sub(s.timestamp_ms()) <= ref_age);
            if name == MAIN_BRANCH || young {
                kept.push(r);
            } else {
                out.refs.push(name);
            }
        }
        let mut retain: HashSet<i64> = meta.current_snapshot_id().into_iter().collect();
        let mut reached: HashSet<i64> = HashSet::new();
        for r in &kept {
            retain.insert(r.snapshot_id);
            let SnapshotRetention::Branch { min_snapshots_to_keep, max_snapshot_age_ms, .. } = r.retention else {
                reached.insert(r.snapshot_id);
                continue;
            };
            let older_than = now_ms.saturating_sub(max_snapshot_age_ms.unwrap_or(max_age));
            let min = min_snapshots_to_keep.map_or(min_keep, i64::from);
            let mut branch_kept = 0i64;
            let mut keeping = true;
            for s in ancestors(meta, r.snapshot_id) {
                reached.insert(s.snapshot_id());
                keeping &= branch_kept < min || s.timestamp_ms() >= older_than;
                if keeping {
                    retain.insert(s.snapshot_id());
                    branch_kept += 1;
                }
            }
        }
        let older_than = now_ms.saturating_sub(max_age);
        let mut expired: Vec<(i64, i64)> = meta
            .snapshots()
            .filter(|s| !retain.contains(&s.snapshot_id()))
            .filter(|s| reached.contains(&s.snapshot_id()) || s.timestamp_ms() < older_than)
            .map(|s| (s.sequence_number(), s.snapshot_id()))
            .collect();
        expired.sort_unstable();
        out.snapshots = expired.into_iter().map(|(_, id)| id).collect();
        out
    }
}

/// `id`'s snapshot and its parents, newest first, as far as the table still holds them.
fn ancestors(meta: &TableMetadata, id: i64) -> impl Iterator<Item = &SnapshotRef> {
    let mut at = meta.snapshot_by_id(id);
    std::iter::from_fn(move || {
        let s = at?;
        at = s.parent_snapshot_id().and_then(|p| meta.snapshot_by_id(p));
        Some(s)
    })
}

/// The table's refs by name (the `iceberg` crate does not expose the map); `None` if they
/// cannot be read.
pub(crate) fn refs(meta: &TableMetadata) -> Option<BTreeMap<String, SnapshotReference>> {
    let v = serde_json::to_value(meta).ok()?;
    match v.get("refs") {
        None => Some(BTreeMap::new()),
        Some(r) => serde_json::from_value(r.clone()).ok(),
    }
}

/// The retention settings of branch `main` (`min-snapshots-to-keep`, `max-snapshot-age-ms`,
/// `max-ref-age-ms`), to carry over when a commit moves it: another engine may have set them.
/// None set (or unreadable): a branch with none.
pub(crate) fn main_retention(meta: &TableMetadata) -> SnapshotRetention {
    refs(meta)
        .and_then(|mut r| r.remove(MAIN_BRANCH))
        .map(|r| r.retention)
        .unwrap_or_else(|| SnapshotRetention::branch(None, None, None))
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
    /// Statistics files (Puffin, partition statistics) of the expired snapshots that no kept
    /// snapshot's statistics name (as Java's expiry deletes them).
    pub statistics: Vec<String>,
    /// The table's location: only files under it are deleted. A file another engine registered
    /// from elsewhere (`add_files` of another table's or a Hive table's Parquet) is left where
    /// it is once no snapshot reaches it: Java would delete it, but it is not this table's.
    pub location: String,
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
        let mut out = Cleanup { location: meta.location().to_string(), ..Cleanup::default() };
        let stats = || {
            let table = meta.statistics_iter().map(|s| (s.snapshot_id, &s.statistics_path));
            table.chain(meta.partition_statistics_iter().map(|s| (s.snapshot_id, &s.statistics_path)))
        };
        let still: HashSet<&String> = stats().filter(|(id, _)| !gone.contains(id)).map(|(_, p)| p).collect();
        let stale: HashSet<&String> =
            stats().filter(|(id, p)| gone.contains(id) && !still.contains(p)).map(|(_, p)| p).collect();
        out.statistics = stale.into_iter().cloned().collect();
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
        let ours = |f: &&String| under(&self.location, f);
        let files: Vec<String> =
            files.chain(&self.manifest_lists).chain(&self.statistics).filter(ours).cloned().collect();
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

/// Whether `file` lies under table location `location` (schemes made the same: `s3a://` is
/// `s3://`).
pub(crate) fn under(location: &str, file: &str) -> bool {
    let location = super::sweep::same_scheme(location.trim_end_matches('/'));
    super::sweep::same_scheme(file).strip_prefix(location.as_ref()).is_some_and(|rest| rest.starts_with('/'))
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
pub(crate) mod retention_tests {
    use iceberg::spec::{
        FormatVersion, NestedField, Operation, PartitionSpec, PrimitiveType, Schema, Snapshot, SortOrder, Summary,
        TableMetadataBuilder, Type,
    };

    use super::*;

    const NOW: i64 = 1_000_000_000;
    const HOUR: i64 = 3_600_000;

    /// A table with `n` snapshots on `main` (ids 1..=n, one an hour, the newest an hour before
    /// [`NOW`]), table properties `props`, and `refs` (name, snapshot id, retention) set after.
    pub(crate) fn table(n: i64, props: &[(&str, &str)], refs: Vec<(&str, i64, SnapshotRetention)>) -> TableMetadata {
        let schema = Schema::builder()
            .with_fields(vec![NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)).into()])
            .build()
            .unwrap();
        let props = props.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let mut b = TableMetadataBuilder::new(
            schema,
            PartitionSpec::unpartition_spec(),
            SortOrder::unsorted_order(),
            "file:///t".into(),
            FormatVersion::V2,
            props,
        )
        .unwrap();
        for id in 1..=n {
            let snap = Snapshot::builder()
                .with_snapshot_id(id)
                .with_parent_snapshot_id((id > 1).then_some(id - 1))
                .with_sequence_number(id)
                .with_timestamp_ms(NOW - (n - id + 1) * HOUR)
                .with_manifest_list(format!("file:///t/metadata/snap-{id}.avro"))
                .with_summary(Summary { operation: Operation::Append, additional_properties: HashMap::new() })
                .with_schema_id(0)
                .build();
            b = b.add_snapshot(snap).unwrap();
            // `main` follows the snapshots until a ref given for it says otherwise (then the
            // later snapshots are off its line, as after a rollback).
            let main_at = refs.iter().find(|r| r.0 == MAIN_BRANCH).map_or(n, |r| r.1);
            if id <= main_at && !refs.iter().any(|r| r.0 == MAIN_BRANCH && r.1 == id) {
                b = b.set_ref(MAIN_BRANCH, SnapshotReference::new(id, branch())).unwrap();
            }
            for (name, _, retention) in refs.iter().filter(|r| r.1 == id) {
                b = b.set_ref(name, SnapshotReference::new(id, retention.clone())).unwrap();
            }
        }
        b.build().unwrap().metadata
    }

    fn branch() -> SnapshotRetention {
        SnapshotRetention::branch(None, None, None)
    }

    fn tag(max_ref_age_ms: Option<i64>) -> SnapshotRetention {
        SnapshotRetention::Tag { max_ref_age_ms }
    }

    const AGED: [(&str, &str); 2] = [(PROP_MIN_SNAPSHOTS_TO_KEEP, "3"), (PROP_MAX_SNAPSHOT_AGE_MS, "1")];

    #[test]
    fn a_tag_keeps_its_snapshot_and_the_rest_of_main_expires() {
        let meta = table(31, &AGED, vec![("audit", 5, tag(None))]);
        let due = Expiry::due(&meta, NOW);
        let want: Vec<i64> = (1..=28).filter(|id| *id != 5).collect();
        assert_eq!(due, Expiry { snapshots: want, refs: vec![] });
    }

    #[test]
    fn a_ref_past_its_max_age_is_removed_with_its_snapshot() {
        // The tag's snapshot (id 5) is 27 hours old: its own age limit of 2 hours removes it; the
        // table's limit (an hour) removes the branch whose head is 3 hours old, and with it the
        // branch's history.
        let props = [AGED[0], AGED[1], (PROP_MAX_REF_AGE_MS, "3600000")];
        let meta = table(31, &props, vec![("audit", 5, tag(Some(2 * HOUR))), ("dev", 29, branch())]);
        let due = Expiry::due(&meta, NOW);
        assert_eq!(due.refs, vec!["audit".to_string(), "dev".to_string()]);
        assert_eq!(due.snapshots, (1..=28).collect::<Vec<_>>());
    }

    #[test]
    fn a_branch_keeps_what_its_own_retention_asks_for() {
        // Branch `b` at snapshot 20 keeps 5 of its line (16..=20) by its own min-snapshots-to-keep;
        // `main` keeps 3.
        let retention = SnapshotRetention::branch(Some(5), Some(1), None);
        let meta = table(31, &AGED, vec![("b", 20, retention)]);
        let due = Expiry::due(&meta, NOW);
        let want: Vec<i64> = (1..=28).filter(|id| !(16..=20).contains(id)).collect();
        assert_eq!(due.snapshots, want);
        // And by its own age: the last 15 hours of its line (ids 20 back to 17 are 12 to 15 h old).
        let retention = SnapshotRetention::branch(Some(1), Some(15 * HOUR), None);
        let meta = table(31, &AGED, vec![("b", 20, retention)]);
        let want: Vec<i64> = (1..=28).filter(|id| !(17..=20).contains(id)).collect();
        assert_eq!(Expiry::due(&meta, NOW).snapshots, want);
    }

    #[test]
    fn min_snapshots_to_keep_counts_mains_ancestry_and_main_settings_override_the_table() {
        // `main`'s own retention: keep 10.
        let meta = table(31, &AGED, vec![(MAIN_BRANCH, 31, SnapshotRetention::branch(Some(10), None, None))]);
        assert_eq!(Expiry::due(&meta, NOW).snapshots, (1..=21).collect::<Vec<_>>());
        // Young snapshots off every ref's line (a rollback's) are kept while younger than the
        // table's max age; old ones expire.
        let ten_hours = (10 * HOUR).to_string();
        let props = [(PROP_MIN_SNAPSHOTS_TO_KEEP, "1"), (PROP_MAX_SNAPSHOT_AGE_MS, ten_hours.as_str())];
        let rolled_back = table(31, &props, vec![(MAIN_BRANCH, 25, branch())]);
        let due = Expiry::due(&rolled_back, NOW);
        // main at 25 keeps 25 (its head) and its ancestors younger than 10 h (ids 22..=25);
        // 26..=31 reach no ref but are younger than 10 h.
        assert_eq!(due.snapshots, (1..=21).collect::<Vec<_>>());
    }

    #[test]
    fn nothing_expires_within_the_defaults() {
        let meta = table(31, &[], vec![("audit", 5, tag(None))]);
        assert_eq!(Expiry::due(&meta, NOW), Expiry::default());
    }
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
        let mut cleanup = Cleanup { location: location.clone(), ..Cleanup::default() };
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
    async fn a_file_outside_the_table_location_is_never_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let store = LocalFsObjectStore::new();
        let table = dir.path().join("t");
        let (mut cleanup, mut record) = expired(&store, &table, 2).await;
        // A file another engine registered with add_files from its own folder, since compacted.
        let theirs = path_to_uri(&dir.path().join("elsewhere/part-0.parquet"));
        store.put(&theirs, Bytes::from_static(b"x")).await.unwrap();
        record.data_files.push(theirs.clone());
        cleanup.dropped_records = vec![write_dropped(&store, &path_to_uri(&table), &record).await.unwrap()];
        cleanup.run(&store, &HashMap::new()).await.unwrap();
        assert!(store.head(&theirs).await.is_ok(), "not this table's to delete");
        assert!(store.head(&record.data_files[0]).await.is_err(), "the table's own file goes");
        assert!(under("s3a://b/db/t", "s3://b/db/t/data/x.parquet") && !under("s3://b/db/t", "s3://b/db/t2/x"));
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
