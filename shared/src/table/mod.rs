//! Iceberg table metadata: creating a table, loading its current state, and building the
//! metadata of append and replace snapshots. Named after the Iceberg spec; built on the `iceberg` crate's
//! spec types, manifest writers and metadata builder.
//!
//! This module decides *what* the metadata says; it writes through the `ObjectStore` port and
//! never swaps a pointer itself (that is `pipeline::commit`'s job, and the only place it happens).

mod cache;
mod create;
mod layout;
mod lineage;
pub mod maintain;
mod snapshot;
mod state;
mod status;
pub mod sweep;

pub use cache::WriterTables;
pub use create::{create_table_metadata, partition_spec_text, sort_order_text};
pub use layout::{data_file_uri, metadata_file_uri, partition_path, table_location};
pub use lineage::ensure_rewritable;
pub use snapshot::{
    Added, Change, Manifests, PROP_MANIFEST_TARGET_SIZE, PROP_MERGE_ENABLED, PROP_MIN_COUNT_TO_MERGE, SnapshotPlan,
    plan_snapshot,
};
pub use state::{TableState, WriterTable, ensure_supported, load_table, metadata_json};
pub use status::{Freshness, SIZE_BUCKETS, TableStatus, freshness, table_status};

/// Table property holding the dedup key columns (comma-separated).
pub const PROP_DEDUP_KEY: &str = "floe.dedup-key";
/// Table property holding the Parquet compression as Floe spells it (`zstd(3)`).
pub const PROP_COMPRESSION: &str = "floe.parquet-compression";
/// Iceberg's table property for the target data file size.
pub const PROP_TARGET_FILE_SIZE: &str = "write.target-file-size-bytes";
/// Iceberg's table property: delete metadata files that fall out of the metadata log.
pub const PROP_DELETE_AFTER_COMMIT: &str = "write.metadata.delete-after-commit.enabled";
