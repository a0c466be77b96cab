//! What an operator wants to see of a table at a glance: snapshots, live data files, rows,
//! bytes, a file-size histogram (small-file debt), the last commit and its freshness lag (from
//! the changelog Floe's committer writes in each append's summary). Reads the current
//! snapshot's manifest list and manifests; never the data files.

use iceberg::spec::{Manifest, ManifestList, TableMetadata};

use super::{TableState, partition_spec_text, sort_order_text};
use crate::Result;
use crate::ports::ObjectStore;

/// Upper edges of the file-size histogram buckets, in bytes (the last bucket is open).
pub const SIZE_BUCKETS: [u64; 5] = [1 << 20, 8 << 20, 32 << 20, 128 << 20, 512 << 20];

/// A table's vital signs.
#[derive(Debug, Clone, Default, serde::Serialize)]
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
    /// Current schema id and the schemas the table has had.
    pub schema_id: i32,
    /// Schemas in the metadata.
    pub schemas: usize,
    /// The newest append that says when its sources were created.
    pub freshness: Option<Freshness>,
}

/// How fresh the newest append is: from object creation to commit.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Freshness {
    /// The append snapshot.
    pub snapshot_id: i64,
    /// When it was committed (ms since the epoch).
    pub committed_ms: i64,
    /// Its source objects.
    pub sources: u64,
    /// When its oldest source object was created.
    pub oldest_source_ms: i64,
    /// When its newest source object was created.
    pub newest_source_ms: i64,
    /// Commit time − creation time of its oldest source: the freshness lag of that commit.
    pub lag_ms: i64,
}

/// The newest snapshot whose summary carries Floe's source times (`floe.oldest-source-ms`).
pub fn freshness(m: &TableMetadata) -> Option<Freshness> {
    let mut snaps: Vec<_> = m.snapshots().collect();
    snaps.sort_by_key(|s| std::cmp::Reverse(s.timestamp_ms()));
    snaps.into_iter().find_map(|s| {
        let p = &s.summary().additional_properties;
        let num = |k: &str| p.get(k).and_then(|v| v.parse::<i64>().ok());
        let (oldest, newest) = (num("floe.oldest-source-ms")?, num("floe.newest-source-ms")?);
        Some(Freshness {
            snapshot_id: s.snapshot_id(),
            committed_ms: s.timestamp_ms(),
            sources: num("floe.source-objects").unwrap_or_default() as u64,
            oldest_source_ms: oldest,
            newest_source_ms: newest,
            lag_ms: s.timestamp_ms() - oldest,
        })
    })
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
        schema_id: m.current_schema_id(),
        schemas: m.schemas_iter().len(),
        freshness: freshness(m),
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
