//! Iceberg table metadata: creating a table, loading its current state, and building the
//! metadata of append and replace snapshots. Named after the Iceberg spec; built on the `iceberg` crate's
//! spec types, manifest writers and metadata builder.
//!
//! This module decides *what* the metadata says; it writes through the `ObjectStore` port and
//! never swaps a pointer itself (that is `pipeline::commit`'s job, and the only place it happens).

mod cache;
mod create;
mod layout;
pub(crate) mod lineage;
pub mod maintain;
mod manifests;
mod merge;
mod snapshot;
mod state;
mod status;
pub mod sweep;
pub mod terms;

pub use cache::WriterTables;
pub use create::{NewTable, create_table_metadata, partition_spec_text, sort_order_text};
pub(crate) use layout::widened;
pub use layout::{
    data_file_uri, is_floe_data_file, metadata_file_uri, partition_path, refreshed_data_file_uri, renders,
    table_location,
};
pub(crate) use lineage::tracks_rows;
pub use manifests::Manifests;
pub use merge::{PROP_MANIFEST_TARGET_SIZE, PROP_MERGE_ENABLED, PROP_MIN_COUNT_TO_MERGE};
pub use snapshot::{Added, Change, DeleteRef, SnapshotPlan, merge_inputs, plan_snapshot};
pub use state::{TableState, WriterTable, ensure_supported, load_table, metadata_json};
pub use status::{Freshness, SIZE_BUCKETS, TableStatus, freshness, table_status};

/// Table property holding the dedup key columns (comma-separated).
pub const PROP_DEDUP_KEY: &str = "floe.dedup-key";
/// Table property: how far back (milliseconds) compaction looks for an earlier copy of a key;
/// absent, as far as the partition goes (exact dedup).
pub const PROP_DEDUP_WINDOW: &str = "floe.dedup-window-ms";

/// The dedup window in table properties `props`, in milliseconds: `None` when unset, an error
/// naming the property when it is not a whole number above 0.
pub fn dedup_window_ms(props: &std::collections::HashMap<String, String>) -> crate::Result<Option<i64>> {
    let Some(v) = props.get(PROP_DEDUP_WINDOW) else { return Ok(None) };
    let window = v.trim().parse::<i64>().ok().filter(|w| *w > 0);
    window.map(Some).ok_or_else(|| {
        crate::Error::Config(format!(
            "table property {PROP_DEDUP_WINDOW} must be a whole number of milliseconds above 0, got `{v}`"
        ))
    })
}
/// Table property holding the Parquet compression as Floe spells it (`zstd(3)`).
pub const PROP_COMPRESSION: &str = "floe.parquet-compression";
/// Iceberg's table property for the target data file size.
pub const PROP_TARGET_FILE_SIZE: &str = "write.target-file-size-bytes";
/// Iceberg's table property: delete metadata files that fall out of the metadata log.
pub const PROP_DELETE_AFTER_COMMIT: &str = "write.metadata.delete-after-commit.enabled";
