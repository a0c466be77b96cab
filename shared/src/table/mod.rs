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

/// Table property: how far (milliseconds) a level-0 row's key may lead with a time behind its
/// task's snapshot before compaction leaves it to a late file (`pipeline::compact::plan`); `0`
/// writes none. Absent: [`DEFAULT_LATE_AFTER_MS`].
pub const PROP_LATE_AFTER: &str = "floe.late-after-ms";
/// Ten minutes: well past the seconds most events are late by, far short of the hours some are.
pub const DEFAULT_LATE_AFTER_MS: i64 = 600_000;

/// The late horizon in table properties `props`, in milliseconds: `None` when `0`, an error
/// naming the property when it is not a whole number of milliseconds.
pub fn late_after_ms(props: &std::collections::HashMap<String, String>) -> crate::Result<Option<i64>> {
    let Some(v) = props.get(PROP_LATE_AFTER) else { return Ok(Some(DEFAULT_LATE_AFTER_MS)) };
    match v.trim().parse::<i64>() {
        Ok(0) => Ok(None),
        Ok(ms) if ms > 0 => Ok(Some(ms)),
        _ => Err(crate::Error::Config(format!(
            "table property {PROP_LATE_AFTER} must be a whole number of milliseconds (0: no late files), got `{v}`"
        ))),
    }
}

/// Whether compaction may leave late files in the table now: exact dedup (no dedup window) on a
/// key whose first column is a top-level timestamp or date column. (A table may also hold late
/// files written before its key or window changed.)
pub fn may_hold_late_files(meta: &iceberg::spec::TableMetadata) -> bool {
    use iceberg::spec::{PrimitiveType as P, Type};
    let props = meta.properties();
    let lead = props.get(PROP_DEDUP_KEY).and_then(|k| k.split(',').next()).map(str::trim).unwrap_or_default();
    let field = meta.current_schema().as_struct().field_by_name(lead);
    !props.contains_key(PROP_DEDUP_WINDOW)
        && field.is_some_and(|f| {
            matches!(
                *f.field_type,
                Type::Primitive(P::Timestamp | P::Timestamptz | P::TimestampNs | P::TimestamptzNs | P::Date)
            )
        })
}

/// Table property holding the Parquet compression as Floe spells it (`zstd(3)`).
pub const PROP_COMPRESSION: &str = "floe.parquet-compression";
/// Iceberg's table property for the target data file size.
pub const PROP_TARGET_FILE_SIZE: &str = "write.target-file-size-bytes";
/// Iceberg's table property: delete metadata files that fall out of the metadata log.
pub const PROP_DELETE_AFTER_COMMIT: &str = "write.metadata.delete-after-commit.enabled";
