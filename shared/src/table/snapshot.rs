//! The metadata of one snapshot: an append of new data files, or a `replace` that swaps data
//! files for their compacted rewrite. Writes the manifests and the manifest list and builds the
//! next metadata.json (which the committer writes and swaps in); nothing here swaps a pointer.
//!
//! The committer keeps the parent snapshot's [`Manifests`] across commits, so in steady state a
//! commit reads little: an append needs only the list; a manifest merge needs the entries of the
//! small manifests, which stay parsed; a replace needs those of the manifests holding the files it
//! removes, found by their digests (the `manifests` module) and read if they are big.
//!
//! Manifests are merged as Iceberg Java merges them: see the `merge` module.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use iceberg::io::{MemoryStorage, OutputFile, Storage};
use iceberg::spec::{
    DataFile, FormatVersion, MAIN_BRANCH, ManifestContentType, ManifestEntry, ManifestFile, ManifestList,
    ManifestListWriter, ManifestStatus, ManifestWriterBuilder, Operation, Schema, Snapshot, SnapshotReference,
    SnapshotSummaryCollector, Struct, Summary, TableMetadata, TableMetadataBuilder,
};

use super::TableState;
use super::layout::metadata_file_uri;
use super::lineage;
use super::maintain::{Cleanup, DROPPED_PROPERTY, DroppedRecord, Expiry, write_dropped};
use super::manifests::{Manifests, path_hashes};
use super::merge::{MergePolicy, Slot, weights};
use crate::ports::ObjectStore;
use crate::{Error, Result};

/// What a snapshot changes.
#[derive(Debug, Clone)]
pub struct Change {
    /// `Append` (new rows) or `Replace` (the same rows in other files).
    pub operation: Operation,
    /// Files added.
    pub added: Vec<Added>,
    /// Paths of live files removed.
    pub removed: HashSet<String>,
    /// Live delete files removed (those a rewrite left applying to no live file).
    pub removed_deletes: HashSet<DeleteRef>,
    /// Snapshots and refs to expire in the same metadata update.
    pub expire: Expiry,
    /// A new current schema, set in the same metadata update (schema evolution: the schema
    /// change lands with the first data that needs it).
    pub schema: Option<Schema>,
}

/// A delete file's manifest entry: its path, and for a deletion vector (a Puffin file may hold
/// several, one per data file) its offset in that file.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(from = "DeleteRefForm")]
pub struct DeleteRef {
    /// The file's path.
    pub path: String,
    /// A deletion vector's `content_offset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<i64>,
}

#[cfg(test)]
mod delete_ref_tests {
    use super::DeleteRef;

    #[test]
    fn a_delete_ref_reads_from_an_object_or_a_bare_path() {
        let bare: DeleteRef = serde_json::from_str(r#""s3://b/d.parquet""#).unwrap();
        assert_eq!(bare, DeleteRef { path: "s3://b/d.parquet".into(), offset: None });
        let dv: DeleteRef = serde_json::from_str(r#"{"path": "s3://b/v.puffin", "offset": 4}"#).unwrap();
        assert_eq!(dv.offset, Some(4));
        assert_eq!(serde_json::to_string(&dv).unwrap(), r#"{"path":"s3://b/v.puffin","offset":4}"#);
    }
}

/// The forms a [`DeleteRef`] is read from: an object, or a bare path (as the first compactors
/// that removed delete files sent it).
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum DeleteRefForm {
    Path(String),
    Entry {
        path: String,
        #[serde(default)]
        offset: Option<i64>,
    },
}

impl From<DeleteRefForm> for DeleteRef {
    fn from(form: DeleteRefForm) -> Self {
        match form {
            DeleteRefForm::Path(path) => DeleteRef { path, offset: None },
            DeleteRefForm::Entry { path, offset } => DeleteRef { path, offset },
        }
    }
}

impl DeleteRef {
    /// The entry of delete file `f`.
    pub fn of(f: &DataFile) -> Self {
        DeleteRef { path: f.file_path().to_string(), offset: f.content_offset() }
    }
}

/// A file a snapshot adds.
#[derive(Debug, Clone)]
pub struct Added {
    /// The id of the partition spec it was written with.
    pub spec_id: i32,
    /// The file.
    pub file: DataFile,
    /// Its data sequence number, if not the new snapshot's: a compaction's output keeps the
    /// sequence number of the snapshot it was planned from, so that rows committed after the
    /// plan stay younger than the rows it rewrote (one snapshot may carry several compactions'
    /// outputs, each with its own).
    pub data_sequence_number: Option<i64>,
}

impl Change {
    /// An append of `files`, each with the id of the partition spec it was written with.
    pub fn append(files: Vec<(i32, DataFile)>) -> Self {
        let added = files.into_iter().map(|(spec_id, file)| Added { spec_id, file, data_sequence_number: None });
        Change {
            operation: Operation::Append,
            added: added.collect(),
            removed: HashSet::new(),
            removed_deletes: HashSet::new(),
            expire: Expiry::default(),
            schema: None,
        }
    }
}

/// A built, partly written (manifests, manifest list), not yet committed snapshot.
#[derive(Debug, Clone)]
pub struct SnapshotPlan {
    /// The new snapshot's id.
    pub snapshot_id: i64,
    /// The metadata that the pointer must be swapped to.
    pub metadata: Arc<TableMetadata>,
    /// Where that metadata is to be written (by the committer, just before the swap).
    pub metadata_location: String,
    /// The metadata.json document.
    pub metadata_json: Bytes,
    /// The new snapshot's manifests (to keep for the next commit).
    pub manifests: Manifests,
    /// Metadata files that dropped out of the metadata log with this commit.
    pub expired_metadata: Vec<String>,
    /// Files unreachable once this commit (which expires snapshots) has landed.
    pub cleanup: Cleanup,
    /// This snapshot's dropped record, if it drops anything: its location and contents.
    pub dropped: Option<(String, DroppedRecord)>,
    /// Objects read to build the plan (0 in steady state).
    pub reads: u32,
    /// Objects written (manifests and the manifest list).
    pub writes: u32,
}

/// Writes the manifests and manifest list of `change` on top of `state`, and builds (but does not
/// write) its metadata.json.
///
/// `parent` is the current snapshot's [`Manifests`] if the caller has them. A replace whose
/// removed files are not all live fails with [`Error::NotLive`] and writes nothing.
pub async fn plan_snapshot(
    store: &dyn ObjectStore,
    state: &TableState,
    parent: Option<Manifests>,
    change: Change,
    snapshot_id: i64,
    extra_summary: &[(&str, String)],
) -> Result<SnapshotPlan> {
    super::state::ensure_supported(state.metadata.location(), &state.metadata)?;
    let meta = &with_schema(&state.metadata, change.schema.as_ref())?;
    let mut reads = 0;
    let mut manifests = match parent {
        Some(m) => m,
        None => Manifests::load(store, meta, &mut reads).await?,
    };
    let merge = MergePolicy::of(meta);
    let seq = meta.next_sequence_number();
    let next_merge = merge.next_inputs(&manifests.list);
    manifests.read_holding(store, &change.removed, |p| next_merge.contains(p), &mut reads).await?;
    let mut summary = SnapshotSummaryCollector::default();
    let slots = removal_slots(meta, &manifests, &change.removed, snapshot_id, &mut summary)?;
    let Removed { slots, unreferenced: unreferenced_deletes, dvs } = if change.removed_deletes.is_empty() {
        Removed { slots, unreferenced: vec![], dvs: 0 }
    } else {
        let deletes = manifests.read_deletes(store, &mut reads).await?;
        let removal = DeleteRemoval { removed: &change.removed_deletes, snapshot_id };
        removal.apply(meta, slots, deletes, &mut summary)?
    };
    // New manifests first, as Iceberg Java orders them.
    let mut new_slots = added_slots(meta, change.added, snapshot_id, seq, &mut summary)?;
    new_slots.extend(slots.into_iter().filter(Slot::has_live_files));
    let bins = merge.bins(&weights(&new_slots, &manifests.list));
    let inputs: HashSet<String> = bins
        .iter()
        .filter(|b| b.merge)
        .flat_map(|b| b.members.iter())
        .filter_map(|i| match &new_slots[*i] {
            Slot::Kept(mf) => Some(mf.manifest_path.clone()),
            Slot::New { .. } => None,
        })
        .collect();
    manifests.read_parsed(store, &inputs, &mut reads).await?;
    let slots = merge.apply(&manifests, new_slots, &bins, snapshot_id)?;

    let location = meta.location().trim_end_matches('/').to_string();
    let mut writer = Written::new(&location, store);

    let mut next = writer.manifests(meta, &manifests, slots, snapshot_id).await?;
    let parent_id = meta.current_snapshot_id();
    let (list_path, list, row_range) = writer.manifest_list(meta, snapshot_id, parent_id, seq, &next.list).await?;
    next.list = list;
    next.settle_row_ids();
    let keep = merge.next_inputs(&next.list);
    next.retain_parsed(|path| keep.contains(path));

    let mut props = summary_properties(meta, &summary, extra_summary);
    if dvs > 0 {
        // The collector counts a vector as a position delete file; Java counts it apart.
        let files = props.get("removed-position-delete-files").and_then(|n| n.parse::<u64>().ok()).unwrap_or(0);
        match files.saturating_sub(dvs) {
            0 => props.remove("removed-position-delete-files"),
            n => props.insert("removed-position-delete-files".into(), n.to_string()),
        };
        props.insert("removed-dvs".into(), dvs.to_string());
    }
    let mut removed = change.removed.clone();
    removed.extend(unreferenced_deletes);
    let dropped = writer.dropped(snapshot_id, &manifests, &next, &removed).await?;
    if let Some((at, _)) = &dropped {
        props.insert(DROPPED_PROPERTY.into(), at.clone());
    }
    let builder = Snapshot::builder()
        .with_snapshot_id(snapshot_id)
        .with_parent_snapshot_id(parent_id)
        .with_sequence_number(seq)
        .with_timestamp_ms(chrono::Utc::now().timestamp_millis().max(meta.last_updated_ms() + 1))
        .with_manifest_list(list_path)
        .with_summary(Summary { operation: change.operation, additional_properties: props })
        .with_schema_id(meta.current_schema().schema_id());
    let snapshot = match row_range {
        Some((first_row_id, added_rows)) => builder.with_row_range(first_row_id, added_rows).build(),
        None => builder.build(),
    };
    let built = with_snapshot(meta, &state.pointer.metadata_location, snapshot, &change.expire)?;
    let metadata_location = metadata_file_uri(&location, next_metadata_version(&state.pointer.metadata_location));
    let metadata_json = super::metadata_json(&built.metadata)?;
    Ok(SnapshotPlan {
        snapshot_id,
        metadata: Arc::new(built.metadata),
        metadata_location,
        metadata_json,
        manifests: next,
        expired_metadata: built.expired_metadata_logs.into_iter().map(|l| l.metadata_file).collect(),
        cleanup: Cleanup::of(meta, &change.expire.snapshots),
        dropped,
        reads,
        writes: writer.writes,
    })
}

/// `meta` with `schema` made current (`meta` itself when there is none).
fn with_schema(meta: &Arc<TableMetadata>, schema: Option<&Schema>) -> Result<Arc<TableMetadata>> {
    let Some(schema) = schema else { return Ok(meta.clone()) };
    let built = TableMetadataBuilder::new_from_metadata(meta.as_ref().clone(), None)
        .add_current_schema(schema.clone())?
        .build()?;
    Ok(Arc::new(built.metadata))
}

/// The new manifests of `added` files, one per partition spec in spec order, each file counted
/// in `summary`: added by this snapshot, with sequence number `seq` unless the file keeps its
/// own data sequence number (a rewrite's output).
fn added_slots(
    meta: &TableMetadata,
    added: Vec<Added>,
    snapshot_id: i64,
    seq: i64,
    summary: &mut SnapshotSummaryCollector,
) -> Result<Vec<Slot>> {
    // Data files and delete files (which Floe itself never writes) go to manifests of their own.
    let mut by_spec: HashMap<(i32, bool), Vec<ManifestEntry>> = HashMap::new();
    for Added { spec_id, file, data_sequence_number } in added {
        summarized(meta, spec_id, &file, |f, schema, spec| summary.add_file(f, schema, spec))?;
        let deletes = file.content_type() != iceberg::spec::DataContentType::Data;
        by_spec.entry((spec_id, deletes)).or_default().push(ManifestEntry {
            status: ManifestStatus::Added,
            snapshot_id: Some(snapshot_id),
            sequence_number: Some(data_sequence_number.unwrap_or(seq)),
            file_sequence_number: Some(seq),
            data_file: file,
        });
    }
    let mut by_spec: Vec<_> = by_spec.into_iter().collect();
    by_spec.sort_by_key(|(key, _)| *key);
    let slots = by_spec.into_iter().map(|((spec_id, _), entries)| Slot::New { spec_id, entries }).collect();
    Ok(slots)
}

/// The next metadata: `meta` (last at `location`) with `snapshot` added and made `main`'s head,
/// and what `expire` names removed.
fn with_snapshot(
    meta: &TableMetadata,
    location: &str,
    snapshot: Snapshot,
    expire: &Expiry,
) -> Result<iceberg::spec::TableMetadataBuildResult> {
    let snapshot_id = snapshot.snapshot_id();
    let mut builder = TableMetadataBuilder::new_from_metadata(meta.clone(), Some(location.to_string()))
        .add_snapshot(snapshot)?
        .set_ref(MAIN_BRANCH, SnapshotReference::new(snapshot_id, super::maintain::main_retention(meta)))?;
    for name in expire.refs.iter().filter(|r| *r != MAIN_BRANCH) {
        builder = builder.remove_ref(name);
    }
    builder = builder.remove_snapshots(&expire.snapshots);
    // The `iceberg` crate's `remove_snapshots` keeps their statistics; Java's drops them.
    for id in &expire.snapshots {
        builder = builder.remove_statistics(*id).remove_partition_statistics(*id);
    }
    Ok(builder.build()?)
}

/// The manifests of `meta`'s snapshot with manifest list `list` that its next merge reads first
/// (a warm committer keeps them parsed).
pub fn merge_inputs(meta: &TableMetadata, list: &[ManifestFile]) -> HashSet<String> {
    MergePolicy::of(meta).next_inputs(list)
}

/// The parent's manifests with `removed` taken out: a manifest holding a removed file is
/// rewritten with that file's entry `DELETED` and its other live entries `EXISTING`.
fn removal_slots(
    meta: &TableMetadata,
    manifests: &Manifests,
    removed: &HashSet<String>,
    snapshot_id: i64,
    summary: &mut SnapshotSummaryCollector,
) -> Result<Vec<Slot>> {
    let mut found: HashSet<&str> = HashSet::new();
    let mut slots = vec![];
    let hashes = path_hashes(removed);
    for mf in &manifests.list {
        if removed.is_empty() || mf.content != ManifestContentType::Data || !manifests.may_hold(mf, &hashes) {
            slots.push(Slot::Kept(mf.clone()));
            continue;
        }
        let entries = manifests.entries(mf)?;
        if !entries.iter().any(|e| e.is_alive() && removed.contains(e.file_path())) {
            slots.push(Slot::Kept(mf.clone()));
            continue;
        }
        let mut out = Vec::with_capacity(entries.len());
        for e in entries.iter().filter(|e| e.is_alive()) {
            let mut e = e.clone();
            if removed.contains(e.file_path()) {
                found.insert(removed.get(e.file_path()).expect("contained").as_str());
                summarized(meta, mf.partition_spec_id, &e.data_file, |f, schema, spec| {
                    summary.remove_file(f, schema, spec)
                })?;
                e.status = ManifestStatus::Deleted;
                e.snapshot_id = Some(snapshot_id);
            } else {
                e.status = ManifestStatus::Existing;
            }
            out.push(e);
        }
        slots.push(Slot::New { spec_id: mf.partition_spec_id, entries: out });
    }
    let mut missing: Vec<String> = removed.iter().filter(|p| !found.contains(p.as_str())).cloned().collect();
    if !missing.is_empty() {
        missing.sort();
        return Err(Error::NotLive { files: missing });
    }
    Ok(slots)
}

/// The removal of delete files from the delete manifests holding them.
struct DeleteRemoval<'a> {
    removed: &'a HashSet<DeleteRef>,
    snapshot_id: i64,
}

impl DeleteRemoval<'_> {
    /// `slots` (the parent's manifests, in list order) with each delete manifest that holds a
    /// removed delete file to be rewritten (its entry `DELETED`, the others `EXISTING`; kept in
    /// this snapshot even if none is left live, as Iceberg Java keeps it, so that its removals
    /// are recorded); `deletes`: the delete manifests with their entries. Also the paths of the
    /// removed files that no live entry names any more (a Puffin file's other deletion vectors
    /// may live on): those the cleanup deletes once the snapshot expires.
    fn apply(
        &self,
        meta: &TableMetadata,
        slots: Vec<Slot>,
        deletes: Vec<(ManifestFile, Vec<ManifestEntry>)>,
        summary: &mut SnapshotSummaryCollector,
    ) -> Result<Removed> {
        let removes = |e: &ManifestEntry| e.is_alive() && self.removed.contains(&DeleteRef::of(e.data_file()));
        let found: HashSet<DeleteRef> = deletes
            .iter()
            .flat_map(|(_, es)| es)
            .filter(|e| removes(e))
            .map(|e| DeleteRef::of(e.data_file()))
            .collect();
        let mut missing: Vec<String> = self.removed.difference(&found).map(|r| r.path.clone()).collect();
        if !missing.is_empty() {
            missing.sort();
            return Err(Error::NotLive { files: missing });
        }
        let still_named: HashSet<String> = deletes
            .iter()
            .flat_map(|(_, es)| es)
            .filter(|e| e.is_alive() && !removes(e))
            .map(|e| e.file_path().to_string())
            .collect();
        let mut rewritten: HashMap<String, Slot> = HashMap::new();
        let mut dvs = 0;
        for (mf, entries) in deletes {
            if !entries.iter().any(removes) {
                continue;
            }
            let mut out = Vec::with_capacity(entries.len());
            for mut e in entries.into_iter().filter(|e| e.is_alive()) {
                if self.removed.contains(&DeleteRef::of(e.data_file())) {
                    // A deletion vector counts its blob's bytes, not its Puffin file's, as Java's
                    // summary does (several vectors share a file).
                    let counted = match e.data_file.content_size_in_bytes() {
                        Some(size) => {
                            dvs += 1;
                            with_size(&e.data_file, mf.partition_spec_id, size as u64)?
                        }
                        None => e.data_file.clone(),
                    };
                    summarized(meta, mf.partition_spec_id, &counted, |f, schema, spec| {
                        summary.remove_file(f, schema, spec)
                    })?;
                    e.status = ManifestStatus::Deleted;
                    e.snapshot_id = Some(self.snapshot_id);
                } else {
                    e.status = ManifestStatus::Existing;
                }
                out.push(e);
            }
            rewritten.insert(mf.manifest_path.clone(), Slot::New { spec_id: mf.partition_spec_id, entries: out });
        }
        let slots = slots
            .into_iter()
            .map(|slot| match slot {
                Slot::Kept(mf) => rewritten.remove(&mf.manifest_path).unwrap_or(Slot::Kept(mf)),
                new => new,
            })
            .collect();
        let mut unreferenced: Vec<String> =
            self.removed.iter().map(|r| r.path.clone()).filter(|p| !still_named.contains(p)).collect();
        unreferenced.sort();
        unreferenced.dedup();
        Ok(Removed { slots, unreferenced, dvs })
    }
}

/// What removing delete files does to a snapshot.
struct Removed {
    /// The parent's manifests, those holding removed delete files to be rewritten.
    slots: Vec<Slot>,
    /// Removed files no live entry names any more.
    unreferenced: Vec<String>,
    /// Deletion vectors removed.
    dvs: u64,
}

/// `f` (of partition spec `spec_id`) counted as `size` bytes.
fn with_size(f: &DataFile, spec_id: i32, size: u64) -> Result<DataFile> {
    let mut b = iceberg::spec::DataFileBuilder::default();
    b.content(f.content_type())
        .file_path(f.file_path().to_string())
        .file_format(f.file_format())
        .partition(f.partition().clone())
        .partition_spec_id(spec_id)
        .record_count(f.record_count())
        .file_size_in_bytes(size);
    b.build().map_err(|e| Error::internal(format!("summary of {}: {e}", f.file_path())))
}

/// Writes manifests and manifest lists through an in-memory `FileIO` (the `iceberg` crate's
/// writers need one) and uploads each to the object store.
struct Written<'a> {
    location: &'a str,
    store: &'a dyn ObjectStore,
    mem: Arc<dyn Storage>,
    commit: uuid::Uuid,
    writes: u32,
}

impl<'a> Written<'a> {
    fn new(location: &'a str, store: &'a dyn ObjectStore) -> Self {
        Written { location, store, mem: Arc::new(MemoryStorage::new()), commit: uuid::Uuid::new_v4(), writes: 0 }
    }

    async fn manifest(
        &mut self,
        meta: &TableMetadata,
        spec_id: i32,
        snapshot_id: i64,
        entries: &[ManifestEntry],
    ) -> Result<ManifestFile> {
        let path = format!("{}/metadata/{}-m{}.avro", self.location, self.commit, self.writes);
        let out = OutputFile::new(self.mem.clone(), path.clone());
        let spec = spec(meta, spec_id)?.as_ref().clone();
        let builder = ManifestWriterBuilder::new(out, Some(snapshot_id), meta.current_schema().clone(), spec);
        let deletes = entries.iter().any(|e| e.content_type() != iceberg::spec::DataContentType::Data);
        let mut w = match (lineage::tracks_rows(meta), deletes) {
            (true, false) => builder.build_v3_data(),
            (true, true) => builder.build_v3_deletes(),
            (false, false) => builder.build_v2_data(),
            (false, true) => builder.build_v2_deletes(),
        };
        for e in entries {
            let (seq, file_seq) = (e.sequence_number.unwrap_or(-1), e.file_sequence_number);
            if e.status != ManifestStatus::Added && e.sequence_number.is_none() {
                // Never written as -1: such a manifest breaks the spec (only ADDED entries inherit).
                return Err(Error::Iceberg(iceberg::Error::new(
                    iceberg::ErrorKind::DataInvalid,
                    format!("manifest entry of {} is {:?} without a data sequence number", e.file_path(), e.status),
                )));
            }
            match e.status {
                ManifestStatus::Added => w.add_file(e.data_file.clone(), seq)?,
                ManifestStatus::Existing => {
                    let snap = e.snapshot_id.unwrap_or(snapshot_id);
                    w.add_existing_file(e.data_file.clone(), snap, seq, file_seq)?
                }
                ManifestStatus::Deleted => w.add_delete_file(e.data_file.clone(), seq, file_seq)?,
            }
        }
        let mf = w.write_manifest_file().await?;
        self.upload(&path).await?;
        Ok(mf)
    }

    /// The new snapshot's manifests: each slot kept as it is (its parsed entries carried from
    /// `parent`), or written.
    async fn manifests(
        &mut self,
        meta: &TableMetadata,
        parent: &Manifests,
        slots: Vec<Slot>,
        snapshot_id: i64,
    ) -> Result<Manifests> {
        let mut next = Manifests::default();
        for slot in slots {
            match slot {
                Slot::Kept(mf) => {
                    next.carry(parent, &mf);
                    next.list.push(mf);
                }
                Slot::New { spec_id, entries } => {
                    let mf = self.manifest(meta, spec_id, snapshot_id, &entries).await?;
                    next.insert_parsed(&mf, entries);
                    next.list.push(mf);
                }
            }
        }
        Ok(next)
    }

    /// Records what the snapshot drops (the parent's manifests `next` no longer lists, the
    /// `removed` data files) for the cleanup once it expires: where the record was written.
    async fn dropped(
        &mut self,
        snapshot_id: i64,
        parent: &Manifests,
        next: &Manifests,
        removed: &HashSet<String>,
    ) -> Result<Option<(String, DroppedRecord)>> {
        let kept: HashSet<&str> = next.list.iter().map(|m| m.manifest_path.as_str()).collect();
        let mut dropped = DroppedRecord {
            snapshot_id,
            manifests: parent
                .list
                .iter()
                .map(|m| m.manifest_path.clone())
                .filter(|p| !kept.contains(p.as_str()))
                .collect(),
            data_files: removed.iter().cloned().collect(),
        };
        if dropped.is_empty() {
            return Ok(None);
        }
        dropped.data_files.sort();
        let at = write_dropped(self.store, self.location, &dropped).await?;
        self.writes += 1;
        Ok(Some((at, dropped)))
    }

    /// Writes the list; returns its path, the entries as written (the writer assigns the new
    /// manifests' sequence numbers and, in a v3 table, their row id ranges), and the snapshot's
    /// row range (`first-row-id`, `added-rows`) in a v3 table.
    async fn manifest_list(
        &mut self,
        meta: &TableMetadata,
        snapshot_id: i64,
        parent: Option<i64>,
        seq: i64,
        manifests: &[ManifestFile],
    ) -> Result<(String, Vec<ManifestFile>, Option<(u64, u64)>)> {
        let path = format!("{}/metadata/snap-{snapshot_id}-1-{}.avro", self.location, self.commit);
        let writer = OutputFile::new(self.mem.clone(), path.clone()).writer().await?;
        let first_row_id = lineage::tracks_rows(meta).then(|| meta.next_row_id());
        let mut list = match first_row_id {
            Some(first) => ManifestListWriter::v3(writer, snapshot_id, parent, seq, Some(first)),
            None => ManifestListWriter::v2(writer, snapshot_id, parent, seq),
        };
        list.add_manifests(manifests.iter().cloned())?;
        let row_range = first_row_id.map(|first| (first, list.next_row_id().unwrap_or(first) - first));
        list.close().await?;
        let bytes = self.upload(&path).await?;
        let version = if row_range.is_some() { FormatVersion::V3 } else { FormatVersion::V2 };
        let written = ManifestList::parse_with_version(&bytes, version)?;
        Ok((path, written.consume_entries().into_iter().collect(), row_range))
    }

    async fn upload(&mut self, path: &str) -> Result<Bytes> {
        let bytes = self.mem.read(path).await?;
        self.store.put(path, bytes.clone()).await?;
        self.mem.delete(path).await?;
        self.writes += 1;
        Ok(bytes)
    }
}

/// Counts `file` in the snapshot's summary through `count` (the collector's `add_file` or
/// `remove_file`). The collector formats each file's partition as a path, which panics in the
/// iceberg crate for values it cannot format (a timestamp before 1970 with a fraction of a
/// second): such a file is counted without its partition (the per-partition summaries, which
/// Floe does not write, are all it is missing from).
fn summarized(
    meta: &TableMetadata,
    spec_id: i32,
    file: &DataFile,
    count: impl FnOnce(&DataFile, iceberg::spec::SchemaRef, iceberg::spec::PartitionSpecRef),
) -> Result<()> {
    let schema = meta.current_schema().clone();
    let spec = spec(meta, spec_id)?;
    let ptype = spec.partition_type(&schema)?;
    let renders = file
        .partition()
        .iter()
        .zip(ptype.fields())
        .all(|(v, f)| v.is_none_or(|lit| crate::table::renders(&f.field_type, lit)));
    if renders {
        count(file, schema, spec);
        return Ok(());
    }
    let mut b = iceberg::spec::DataFileBuilder::default();
    b.content(file.content_type())
        .file_path(file.file_path().to_string())
        .file_format(file.file_format())
        .partition(Struct::empty())
        .partition_spec_id(spec_id)
        .record_count(file.record_count())
        .file_size_in_bytes(file.file_size_in_bytes());
    let bare = b.build().map_err(|e| Error::internal(format!("summary of {}: {e}", file.file_path())))?;
    count(&bare, schema, spec);
    Ok(())
}

fn spec(meta: &TableMetadata, spec_id: i32) -> Result<iceberg::spec::PartitionSpecRef> {
    meta.partition_spec_by_id(spec_id)
        .cloned()
        .ok_or_else(|| Error::data(format!("partition spec {spec_id} is not in the table metadata")))
}

/// The snapshot summary: what the collector counted, the running totals, and `extra`.
fn summary_properties(
    meta: &TableMetadata,
    summary: &SnapshotSummaryCollector,
    extra: &[(&str, String)],
) -> HashMap<String, String> {
    let mut props = summary.build();
    let parent = meta.current_snapshot().map(|p| p.summary().additional_properties.clone()).unwrap_or_default();
    let num = |m: &HashMap<String, String>, k: &str| -> i64 { m.get(k).and_then(|v| v.parse().ok()).unwrap_or(0) };
    // A total the parent (written by another engine) lacks is left out rather than counted
    // from zero, each on its own, as Iceberg Java's `SnapshotSummary.updateTotal` does.
    for (total, added, removed) in [
        ("total-records", "added-records", "deleted-records"),
        ("total-data-files", "added-data-files", "deleted-data-files"),
        ("total-files-size", "added-files-size", "removed-files-size"),
        ("total-delete-files", "added-delete-files", "removed-delete-files"),
        ("total-position-deletes", "added-position-deletes", "removed-position-deletes"),
        ("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes"),
    ] {
        let known = meta.current_snapshot().is_none() || parent.get(total).is_some_and(|v| v.parse::<i64>().is_ok());
        let value = num(&parent, total) + num(&props, added) - num(&props, removed);
        if known && value >= 0 {
            props.insert(total.into(), value.to_string());
        }
    }
    for (k, v) in extra {
        props.insert(k.to_string(), v.clone());
    }
    props
}

/// The version number after the one in a `NNNNN-uuid.metadata.json` name (1 if unparseable).
pub(crate) fn next_metadata_version(location: &str) -> u64 {
    location
        .rsplit('/')
        .next()
        .and_then(|f| f.split('-').next())
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(1, |v| v + 1)
}
