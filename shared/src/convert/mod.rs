//! Avro → Arrow → Parquet, pure and synchronous: decoding source objects, mapping their schema
//! to Iceberg, conforming the data to the table schema, and encoding Parquet with its metrics.
//! Nothing here does I/O beyond byte slices.

pub mod avro;
pub(crate) mod compat;
pub(crate) mod conform;
pub(crate) mod encoding;
pub(crate) mod evolve;
pub mod parquet;
pub(crate) mod schema;
