//! What an operator wants to see of a table at a glance: snapshots, live data files, rows,
//! bytes, a file-size histogram (small-file debt) and the last commit. Reads the current
//! snapshot's manifest list and manifests; never the data files.

use iceberg::spec::{Manifest, ManifestList, TableMetadata};

use super::{TableState, partition_spec_text, sort_order_text};
use crate::Result;
use crate::ports::ObjectStore;

/// Upper edges of the file-size histogram buckets, in bytes (the last bucket is open).
pub const SIZE_BUCKETS: [u64; 5] = [1 << 20, 8 << 20, 32 << 20, 128 << 20, 512 << 20];

/// A table's vital signs.
#[derive(Debug, Clone, Default)]
pub struct TableStatus {
    /// Table location.
    pub location: String,
    /// Current metadata file.
    pub metadata_location: String,
    /// Columns of the current schema (top level).
    pub columns: usize,
    /// Partition spec, as text.
    pub partition_by: String,
    /// Sort order, as text.
    pub sort_by: String,
    /// Snapshots kept in the metadata.
    pub snapshots: usize,
    /// Current snapshot id.
    pub current_snapshot_id: Option<i64>,
    /// Timestamp of the current snapshot (ms since the epoch).
    pub last_commit_ms: Option<i64>,
    /// Live data files.
    pub data_files: u64,
    /// Rows in live data files.
    pub rows: u64,
    /// Bytes of live data files.
    pub bytes: u64,
    /// Live data files per size bucket ([`SIZE_BUCKETS`] plus one open bucket).
    pub size_histogram: [u64; SIZE_BUCKETS.len() + 1],
    /// Properties of the table.
    pub properties: Vec<(String, String)>,
}

impl TableStatus {
    /// Files below the target size that compaction would merge (the first two buckets).
    pub fn small_files(&self) -> u64 {
        self.size_histogram[0] + self.size_histogram[1]
    }
}

/// Computes the status of a table.
pub async fn table_status(store: &dyn ObjectStore, state: &TableState) -> Result<TableStatus> {
    let m: &TableMetadata = &state.metadata;
    let schema = m.current_schema();
    let mut s = TableStatus {
        location: m.location().to_string(),
        metadata_location: state.pointer.metadata_location.clone(),
        columns: schema.as_struct().fields().len(),
        partition_by: partition_spec_text(m.default_partition_spec(), schema),
        sort_by: sort_order_text(m.default_sort_order(), schema),
        snapshots: m.snapshots().len(),
        current_snapshot_id: m.current_snapshot_id(),
        last_commit_ms: m.current_snapshot().map(|s| s.timestamp_ms()),
        ..Default::default()
    };
    let mut props: Vec<(String, String)> = m.properties().iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    props.sort();
    s.properties = props;
    let Some(snap) = m.current_snapshot() else { return Ok(s) };
    let list = ManifestList::parse_with_version(&store.get(snap.manifest_list()).await?, m.format_version())?;
    for mf in list.entries() {
        let manifest = Manifest::parse_avro(&store.get(&mf.manifest_path).await?)?;
        for e in manifest.entries().iter().filter(|e| e.is_alive()) {
            let f = e.data_file();
            s.data_files += 1;
            s.rows += f.record_count();
            s.bytes += f.file_size_in_bytes();
            let bucket =
                SIZE_BUCKETS.iter().position(|edge| f.file_size_in_bytes() < *edge).unwrap_or(SIZE_BUCKETS.len());
            s.size_histogram[bucket] += 1;
        }
    }
    Ok(s)
}
