//! Error types: [`PortError`] for adapters behind the ports, [`Error`] for the engine.
//!
//! Context lives in fields (which object, which table, which field), not only in the message, so
//! callers can report and route failures without parsing strings. Both enums answer
//! `is_retryable()`: a retryable error is worth trying again unchanged (throttling, a lost race,
//! a transient I/O failure); a non-retryable one needs a different input or an operator.

use std::fmt;

/// Errors raised by port adapters (object store, queue, table pointer, ledger, lock).
#[derive(Debug, thiserror::Error)]
pub enum PortError {
    /// The object, message or row does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// A conditional write lost: someone else changed the thing first.
    #[error("conflict: {0}")]
    Conflict(String),
    /// The backend asked us to slow down.
    #[error("throttled: {0}")]
    Throttled(String),
    /// The caller passed something the backend cannot take (bad URI, message too large, ...).
    #[error("invalid request: {0}")]
    Invalid(String),
    /// Any other backend failure.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying failure.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl PortError {
    /// Wraps a backend failure with what was being done.
    pub fn io(context: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        PortError::Io { context: context.into(), source: source.into() }
    }

    /// Whether trying again unchanged may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(self, PortError::Throttled(_) | PortError::Io { .. })
    }
}

/// Why a source object was refused. The object is quarantined with this reason; it is never
/// silently dropped and never partly committed.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rejection {
    /// Short machine-readable class: `empty`, `corrupt`, `schema`, `too-large`, `unreadable`.
    pub kind: String,
    /// Human-readable reason, naming the field or byte offset where known.
    pub reason: String,
}

impl Rejection {
    /// A rejection of the given class.
    pub fn new(kind: &str, reason: impl Into<String>) -> Self {
        Rejection { kind: kind.to_string(), reason: reason.into() }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.reason)
    }
}

/// Engine errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A port (storage, queue, catalog, ledger, lock) failed.
    #[error(transparent)]
    Port(#[from] PortError),
    /// An Avro schema cannot be represented in Iceberg; `field` is the dotted path.
    #[error("schema: field `{field}`: {reason}")]
    Schema {
        /// Dotted path of the offending field (`device.model`), or `<root>`.
        field: String,
        /// Why it cannot be mapped.
        reason: String,
    },
    /// Configuration the user gave is wrong (bad partition spec, unknown column, ...).
    #[error("configuration: {0}")]
    Config(String),
    /// Arrow failed while converting data.
    #[error("arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// Parquet failed while encoding.
    #[error("parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// The `iceberg` crate refused metadata we built.
    #[error("iceberg: {0}")]
    Iceberg(#[from] iceberg::Error),
    /// A message or metadata document failed to (de)serialize.
    #[error("json: {0}")]
    Json(#[from] serde_json::Error),
    /// An invariant of Floe's own broke: a bug, please report it.
    #[error("internal error (a bug in Floe, please report it): {0}")]
    Internal(String),
    /// The table does not exist.
    #[error("table {0} does not exist")]
    NoSuchTable(String),
    /// Writing data for a batch of source objects failed.
    #[error("writing {table} from {objects} object(s) failed: {source}")]
    WriteFailed {
        /// Destination table.
        table: String,
        /// How many source objects the batch held.
        objects: usize,
        /// The cause.
        #[source]
        source: Box<Error>,
    },
    /// The committer lock stayed held by someone else for the whole wait.
    #[error("lock {entity} is held by another committer")]
    LockHeld {
        /// The lock entity.
        entity: String,
    },
    /// The table does not exist and none of the objects that would define it can: each is
    /// refused with its reason (the caller quarantines them).
    #[error("table {table} does not exist and none of {} object(s) can define it", refused.len())]
    NoTableDefinition {
        /// The table.
        table: String,
        /// Every object and why it cannot define (or land in) the table.
        refused: Vec<(crate::ports::ObjectMeta, Rejection)>,
    },
    /// The committer's lease expired and another committer took the lock mid-commit.
    #[error("lock {entity} was lost (lease expired and taken over)")]
    LockLost {
        /// The lock entity.
        entity: String,
    },
    /// A rewrite names files to remove that the table no longer holds live (compacted or
    /// rewritten since it was planned): it is stale and must be planned again.
    #[error("{} file(s) to remove are no longer live, e.g. {}", files.len(), files.first().map_or("", String::as_str))]
    NotLive {
        /// The files that are not live.
        files: Vec<String>,
    },
    /// The table is in an Iceberg format version Floe does not write (v1). Nothing is written to
    /// it and nothing is quarantined: the inputs wait (their messages are redelivered, then
    /// dead-lettered) until Floe supports the version.
    #[error(
        "table {table} is Iceberg format v{version}; Floe commits to format v2 and v3 tables only and \
         leaves this one unchanged (nothing written, nothing quarantined; the inputs are retried)"
    )]
    UnsupportedFormat {
        /// The table (its name, or its location where the name is not at hand).
        table: String,
        /// The table's format version.
        version: u8,
    },
    /// The table uses something Floe does not write yet (a v3 column default; a rewrite of a v3
    /// table's rows). As with [`Error::UnsupportedFormat`], nothing is written or quarantined.
    #[error(
        "table {table} uses {feature}; it is left unchanged (nothing written, nothing quarantined; \
         the inputs are retried)"
    )]
    UnsupportedTableFeature {
        /// The table (its name, or its location where the name is not at hand).
        table: String,
        /// What Floe does not support, and why.
        feature: String,
    },
    /// The orphan sweep will not delete anything under this table: its files may belong to
    /// another table (`gc.enabled=false`), or the store lists them under names that do not match
    /// the table's locations (a sweep would take every live file for an orphan).
    #[error("sweep of {location} refused: {reason}")]
    SweepRefused {
        /// The table's location.
        location: String,
        /// Why.
        reason: String,
    },
    /// A commit could not be completed after retrying lost compare-and-swaps.
    #[error("commit to {table} failed after {attempts} attempt(s): {reason}")]
    CommitFailed {
        /// Destination table.
        table: String,
        /// Attempts made.
        attempts: u32,
        /// Last reason.
        reason: String,
    },
}

impl Error {
    /// Whether trying again unchanged may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            Error::Port(p) => p.is_retryable() || matches!(p, PortError::Conflict(_)),
            Error::WriteFailed { source, .. } => source.is_retryable(),
            Error::CommitFailed { .. } | Error::LockHeld { .. } | Error::LockLost { .. } => true,
            _ => false,
        }
    }

    /// Shorthand for a schema error at `field`.
    pub fn schema(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Schema { field: field.into(), reason: reason.into() }
    }
}

/// Engine result.
pub type Result<T, E = Error> = std::result::Result<T, E>;
