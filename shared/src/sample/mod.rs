//! Test and demo data: deterministic Avro object container files.
//!
//! [`events`] makes realistic clickstream events (nested records, maps, arrays, enums, decimals,
//! logical timestamps, a skewed hot tenant, optional duplicates); [`kitchen_sink`] makes one
//! file exercising every Avro type and logical type Floe maps to Iceberg; [`corrupt`] makes the
//! broken inputs the quarantine must catch. Used by `floe gen`, the tests and the benchmark, so
//! that none of them depends on anything outside this repository.

mod corrupt;
mod events;
mod sink;

pub use corrupt::{Corruption, corrupt};
pub use events::{EVENT_SCHEMA, EventsSpec, events_file};
pub use sink::{KITCHEN_SINK_SCHEMA, kitchen_sink};

use apache_avro::Codec;

use crate::{Error, Result};

/// Parses a codec name as `floe gen` spells it: null, deflate, snappy, zstandard (or zstd).
pub fn codec(name: &str) -> Result<Codec> {
    Ok(match name {
        "null" => Codec::Null,
        "deflate" => Codec::Deflate(Default::default()),
        "snappy" => Codec::Snappy,
        "zstandard" | "zstd" => Codec::Zstandard(Default::default()),
        other => {
            return Err(Error::Config(format!("codec `{other}`: expected null, deflate, snappy or zstandard")));
        }
    })
}

pub(crate) fn avro_err(e: apache_avro::Error) -> Error {
    Error::internal(format!("avro: {e}"))
}
