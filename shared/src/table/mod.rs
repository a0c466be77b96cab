//! Iceberg table metadata: creating a table, loading its current state, and building the
//! metadata of an append snapshot. Named after the Iceberg spec; built on the `iceberg` crate's
//! spec types, manifest writers and metadata builder.
//!
//! This module decides *what* the metadata says; it writes through the `ObjectStore` port and
//! never swaps a pointer itself (that is `pipeline::commit`'s job, and the only place it happens).

mod append;
mod create;
mod layout;
mod state;
mod status;

pub use append::{AppendPlan, plan_append};
pub use create::{create_table_metadata, partition_spec_text, sort_order_text};
pub use layout::{data_file_uri, metadata_file_uri, partition_path, table_location};
pub use state::{TableState, WriterTable, load_table};
pub use status::{SIZE_BUCKETS, TableStatus, table_status};

/// Table property holding the dedup key columns (comma-separated).
pub const PROP_DEDUP_KEY: &str = "floe.dedup-key";
/// Table property holding the Parquet compression as Floe spells it (`zstd(3)`).
pub const PROP_COMPRESSION: &str = "floe.parquet-compression";
/// Iceberg's table property for the target data file size.
pub const PROP_TARGET_FILE_SIZE: &str = "write.target-file-size-bytes";
