//! The metadata of one append snapshot: a manifest of the new data files, a manifest list of the
//! parent's manifests plus the new one, and the next metadata.json.
//!
//! Read-free in steady state: given the parent's manifest list entries from the caller's cache,
//! nothing is read; otherwise the parent's manifest list is read once. The data files themselves
//! are never opened. Nothing here swaps the pointer.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use iceberg::io::{MemoryStorage, OutputFile, Storage};
use iceberg::spec::{
    DataFile, FormatVersion, ManifestFile, ManifestList, ManifestListWriter, ManifestWriterBuilder, Operation,
    Snapshot, SnapshotReference, SnapshotRetention, SnapshotSummaryCollector, Summary, TableMetadata,
    TableMetadataBuilder,
};

use super::TableState;
use super::layout::metadata_file_uri;
use crate::ports::ObjectStore;
use crate::{Error, Result};

/// A built, partly written (manifests, manifest list), not yet committed snapshot.
#[derive(Debug, Clone)]
pub struct AppendPlan {
    /// The new snapshot's id.
    pub snapshot_id: i64,
    /// The metadata that the pointer must be swapped to.
    pub metadata: Arc<TableMetadata>,
    /// Where that metadata is to be written (by the committer, just before the swap).
    pub metadata_location: String,
    /// The metadata.json document.
    pub metadata_json: Bytes,
    /// The new snapshot's manifest list entries (to cache for the next commit).
    pub manifests: Vec<ManifestFile>,
    /// Objects read to build the plan (0 in steady state).
    pub reads: u32,
}

/// Writes the manifest and manifest list of an append of `files` on top of `state`, and builds
/// (but does not write) its metadata.json; each file comes with the id of the partition spec it
/// was written with.
///
/// `parent_manifests` are the current snapshot's manifest list entries if the caller has them.
pub async fn plan_append(
    store: &dyn ObjectStore,
    state: &TableState,
    parent_manifests: Option<Vec<ManifestFile>>,
    files: Vec<(i32, DataFile)>,
    snapshot_id: i64,
    extra_summary: &[(&str, String)],
) -> Result<AppendPlan> {
    let meta = &state.metadata;
    let location = meta.location().trim_end_matches('/').to_string();
    let mut reads = 0;
    let parent = meta.current_snapshot().cloned();
    let mut manifests = match (&parent, parent_manifests) {
        (None, _) => vec![],
        (Some(_), Some(cached)) => cached,
        (Some(p), None) => {
            reads += 1;
            let bytes = store.get(p.manifest_list()).await?;
            ManifestList::parse_with_version(&bytes, meta.format_version())?.consume_entries().into_iter().collect()
        }
    };
    let sequence_number = meta.next_sequence_number();
    let schema = meta.current_schema().clone();
    let mem: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
    let commit_uuid = uuid::Uuid::new_v4();

    // One manifest per partition spec among the files.
    let mut by_spec: HashMap<i32, Vec<DataFile>> = HashMap::new();
    for (spec_id, f) in files {
        by_spec.entry(spec_id).or_default().push(f);
    }
    let mut summary = SnapshotSummaryCollector::default();
    let mut new_manifests = vec![];
    for (i, (spec_id, files)) in by_spec.into_iter().enumerate() {
        let spec = meta
            .partition_spec_by_id(spec_id)
            .ok_or_else(|| Error::Config(format!("partition spec {spec_id} is not in the table metadata")))?
            .clone();
        let path = format!("{location}/metadata/{commit_uuid}-m{i}.avro");
        let out = OutputFile::new(mem.clone(), path.clone());
        let mut w =
            ManifestWriterBuilder::new(out, Some(snapshot_id), schema.clone(), spec.as_ref().clone()).build_v2_data();
        for f in files {
            summary.add_file(&f, schema.clone(), spec.clone());
            w.add_file(f, sequence_number)?;
        }
        let manifest = w.write_manifest_file().await?;
        upload(store, mem.as_ref(), &path).await?;
        new_manifests.push(manifest);
    }

    let list_path = format!("{location}/metadata/snap-{snapshot_id}-1-{commit_uuid}.avro");
    let writer = OutputFile::new(mem.clone(), list_path.clone()).writer().await?;
    let mut list =
        ManifestListWriter::v2(writer, snapshot_id, parent.as_ref().map(|p| p.snapshot_id()), sequence_number);
    // New manifests first, as Iceberg Java orders them.
    new_manifests.append(&mut manifests);
    list.add_manifests(new_manifests.clone().into_iter())?;
    list.close().await?;
    let list_bytes = upload(store, mem.as_ref(), &list_path).await?;
    // The list writer assigned sequence numbers to the new entries; cache what it wrote.
    let written = ManifestList::parse_with_version(&list_bytes, FormatVersion::V2)?;
    let manifests: Vec<ManifestFile> = written.consume_entries().into_iter().collect();

    let mut props = summary.build();
    let parent_props = parent.as_ref().map(|p| p.summary().additional_properties.clone()).unwrap_or_default();
    for (total, added) in [
        ("total-records", "added-records"),
        ("total-data-files", "added-data-files"),
        ("total-files-size", "added-files-size"),
    ] {
        let before: u64 = parent_props.get(total).and_then(|v| v.parse().ok()).unwrap_or(0);
        let add: u64 = props.get(added).and_then(|v| v.parse().ok()).unwrap_or(0);
        props.insert(total.into(), (before + add).to_string());
    }
    for total in ["total-delete-files", "total-position-deletes", "total-equality-deletes"] {
        props.insert(total.into(), parent_props.get(total).cloned().unwrap_or_else(|| "0".into()));
    }
    for (k, v) in extra_summary {
        props.insert(k.to_string(), v.clone());
    }
    let snapshot = Snapshot::builder()
        .with_snapshot_id(snapshot_id)
        .with_parent_snapshot_id(parent.as_ref().map(|p| p.snapshot_id()))
        .with_sequence_number(sequence_number)
        .with_timestamp_ms(chrono::Utc::now().timestamp_millis().max(meta.last_updated_ms() + 1))
        .with_manifest_list(list_path)
        .with_summary(Summary { operation: Operation::Append, additional_properties: props })
        .with_schema_id(schema.schema_id())
        .build();
    let built =
        TableMetadataBuilder::new_from_metadata(meta.as_ref().clone(), Some(state.pointer.metadata_location.clone()))
            .add_snapshot(snapshot)?
            .set_ref("main", SnapshotReference::new(snapshot_id, SnapshotRetention::branch(None, None, None)))?
            .build()?;
    let version = next_metadata_version(&state.pointer.metadata_location);
    let metadata_location = metadata_file_uri(&location, version);
    let metadata_json = Bytes::from(serde_json::to_vec(&built.metadata)?);
    Ok(AppendPlan {
        snapshot_id,
        metadata: Arc::new(built.metadata),
        metadata_location,
        metadata_json,
        manifests,
        reads,
    })
}

/// Moves a file the iceberg writers produced in memory to the object store; returns its bytes.
async fn upload(store: &dyn ObjectStore, mem: &dyn Storage, path: &str) -> Result<Bytes> {
    let bytes = mem.read(path).await?;
    store.put(path, bytes.clone()).await?;
    mem.delete(path).await?;
    Ok(bytes)
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
