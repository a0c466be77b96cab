//! # Floe: Avro files in, Iceberg tables out
//!
//! The engine library. Each role is a library function over small traits, so the same code
//! runs as AWS Lambda functions (thin handlers in `functions/`) and as one local process
//! (the `floe` command, embedded mode).
//!
//! ## Stages
//!
//! ```text
//! source objects --writer--> Parquet data files + file manifest message --commit queue-->
//!   committer --> manifest, manifest list, metadata.json --> table pointer compare-and-swap
//! ```
//!
//! - [`pipeline::write`]: read Avro ([`convert::avro`]), map its schema ([`convert::schema`]),
//!   conform to the table ([`convert::conform`]), dedup and cluster ([`pipeline::cluster`]),
//!   encode Parquet with inline Iceberg metrics ([`convert::parquet`]), send a
//!   [`message::FileManifest`].
//! - [`pipeline::commit`]: the only writer of Iceberg metadata ([`table`]).
//! - [`pipeline::compact`]: LSM merges, sorted and deduplicated, committed as rewrites.
//! - [`pipeline::ingest`]: embedded mode, every role in one process.
//! - `handlers` (feature `aws`): the Lambda application layer over the roles: S3
//!   notifications and SQS events in, routing then quarantine, partial batch responses and
//!   retry backoff out, the compactor's ticks and shares, backfill. The functions in
//!   `functions/` only wire it to `lambda_runtime`.
//!
//! ## Ports
//!
//! | port | what | local adapter | AWS adapter |
//! |---|---|---|---|
//! | [`ports::ObjectStore`] | source objects, data, metadata | [`adapters::local::LocalFsObjectStore`] | S3 |
//! | [`ports::Queue`] | commit queue | [`adapters::local::SqliteQueue`] | SQS |
//! | [`ports::TablePointer`] | catalog pointer + CAS | [`adapters::local::SqliteTablePointer`] | DynamoDB, Glue, S3 Tables; REST (`adapters::rest`) |
//! | [`ports::Ledger`] | exactly-once records, quarantine | [`adapters::local::SqliteLedger`] | DynamoDB |
//! | [`ports::Lock`] | committer lock | [`adapters::local::SqliteLock`] | DynamoDB |
//! | [`ports::Metrics`] | counters, observations | [`ports::NoopMetrics`] | CloudWatch embedded metric format (`adapters::aws::emf`) |
//!
//! The core never reads the environment: binaries pass a lookup ([`settings::env`]) to the
//! settings readers ([`settings::Vars`], [`config::EngineConfig::from_lookup`]) or build
//! [`config::EngineConfig`] and [`config::TableConfig`] themselves, and pass them in. Errors
//! ([`Error`]) say who must act on them: the user's settings, the producer's data or message,
//! the outside world, or Floe itself.
#![warn(missing_docs)]

pub mod adapters;
pub mod config;
pub mod convert;
mod error;
pub mod fault;
#[cfg(feature = "aws")]
pub mod handlers;
pub mod message;
pub mod pipeline;
pub mod ports;
pub mod route;
pub mod sample;
pub mod settings;
pub mod table;
#[cfg(feature = "aws")]
pub mod telemetry;
#[cfg(any(test, feature = "test-util"))]
pub mod testing;

pub use error::{BoxError, Error, PortError, Rejection, RejectionKind, Result};
pub use ports::TableIdent;
