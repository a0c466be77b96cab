//! Error types: [`PortError`] for adapters behind the ports, [`Error`] for the engine,
//! [`Rejection`] for a source object that is quarantined.
//!
//! [`Error`]'s variants say who must act, so a handler can decide what to do with a failure
//! (retry it, dead-letter it, tell the user) without reading its text:
//! - **the user's settings**: [`Error::Config`] (`floe.toml`, `FLOE_*` variables, flags, and a
//!   table's partition or sort terms checked against its schema);
//! - **the producer's data or message**: [`Error::Schema`], [`Error::Data`], [`Error::Message`],
//!   [`Error::NoTableDefinition`];
//! - **the outside world**: [`Error::Port`], [`Error::Io`], and the races a retry settles
//!   ([`Error::LockHeld`], [`Error::LockLost`], [`Error::NotLive`], [`Error::CommitFailed`]);
//! - **Floe itself**: [`Error::Internal`], a broken invariant (a bug), with a backtrace;
//! - **not supported yet**: [`Error::UnsupportedFormat`], [`Error::UnsupportedTableFeature`].
//!
//! Context lives in fields (which object, which table, which field), not only in the message, and
//! causes are kept as `source`s. Both enums answer `is_retryable()`: a retryable error is worth
//! trying again unchanged (throttling, a lost race, a transient I/O failure); a non-retryable one
//! needs a different input or an operator.

use std::fmt;

/// A boxed cause.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

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
        source: BoxError,
    },
}

impl PortError {
    /// Wraps a backend failure with what was being done.
    pub fn io(context: impl Into<String>, source: impl Into<BoxError>) -> Self {
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
    /// The class of refusal.
    pub kind: RejectionKind,
    /// Human-readable reason, naming the field or byte offset where known.
    pub reason: String,
}

impl Rejection {
    /// A rejection of the given class.
    pub fn new(kind: RejectionKind, reason: impl Into<String>) -> Self {
        Rejection { kind, reason: reason.into() }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.reason)
    }
}

/// The classes of [`Rejection`]. Each is stored and shown by its name (`too-large`); a name this
/// build does not know (a record a newer build wrote) reads back as [`RejectionKind::Other`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(from = "String", into = "String")]
pub enum RejectionKind {
    /// `empty`: the object holds no rows.
    Empty,
    /// `corrupt`: not an Avro object container file, or damaged (the reason gives the offset).
    Corrupt,
    /// `schema`: its schema or a value cannot land in the table exactly.
    Schema,
    /// `too-large`: over a size limit (rows, a block, a value).
    TooLarge,
    /// `unreadable`: it is there but cannot be read as things stand (archived, access denied):
    /// replayed once restored or permitted.
    Unreadable,
    /// `unsupported-codec`: compressed with a codec Floe does not read.
    UnsupportedCodec,
    /// `unrouted`: no table of the deployment takes it.
    Unrouted,
    /// `superseded`: the notified version was gone (overwritten or deleted) before it was read.
    Superseded,
    /// `overlap`: its manifest overlapped another batch's committed sources; replay lands it.
    Overlap,
    /// A name this build does not know.
    Other(String),
}

impl RejectionKind {
    /// Every class this build writes.
    pub const KNOWN: [RejectionKind; 9] = [
        RejectionKind::Empty,
        RejectionKind::Corrupt,
        RejectionKind::Schema,
        RejectionKind::TooLarge,
        RejectionKind::Unreadable,
        RejectionKind::UnsupportedCodec,
        RejectionKind::Unrouted,
        RejectionKind::Superseded,
        RejectionKind::Overlap,
    ];

    /// The stored name.
    pub fn as_str(&self) -> &str {
        match self {
            RejectionKind::Empty => "empty",
            RejectionKind::Corrupt => "corrupt",
            RejectionKind::Schema => "schema",
            RejectionKind::TooLarge => "too-large",
            RejectionKind::Unreadable => "unreadable",
            RejectionKind::UnsupportedCodec => "unsupported-codec",
            RejectionKind::Unrouted => "unrouted",
            RejectionKind::Superseded => "superseded",
            RejectionKind::Overlap => "overlap",
            RejectionKind::Other(s) => s,
        }
    }

    /// A class named by a user (a filter): one this build knows, or an error listing them.
    pub fn known(name: &str) -> Result<Self> {
        Self::KNOWN.into_iter().find(|k| k.as_str() == name).ok_or_else(|| {
            let names: Vec<&str> = Self::KNOWN.iter().map(RejectionKind::as_str).collect();
            Error::Config(format!("quarantine kind `{name}` is not one of {}", names.join(", ")))
        })
    }
}

impl From<String> for RejectionKind {
    fn from(name: String) -> Self {
        Self::KNOWN.into_iter().find(|k| k.as_str() == name).unwrap_or(RejectionKind::Other(name))
    }
}

impl From<&str> for RejectionKind {
    fn from(name: &str) -> Self {
        RejectionKind::from(name.to_string())
    }
}

impl From<RejectionKind> for String {
    fn from(kind: RejectionKind) -> Self {
        kind.as_str().to_string()
    }
}

impl fmt::Display for RejectionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    /// The user's settings are wrong (a `floe.toml` entry, a `FLOE_*` variable, a flag, a
    /// partition or sort term the table's schema cannot take).
    #[error("configuration: {0}")]
    Config(String),
    /// A message, event or request Floe was handed is malformed, or of a kind or version this
    /// build does not read. Its sender must act; retrying it unchanged fails again.
    #[error("message: {reason}{}", cause(source))]
    Message {
        /// What is wrong with it.
        reason: String,
        /// The decoder's failure, where there is one.
        #[source]
        source: Option<BoxError>,
    },
    /// A data file does not fit the table it is in or is committed to (another engine's file
    /// without field ids, a value outside its column's type, a manifest naming a schema the
    /// table lacks). Whoever wrote the file must act.
    #[error("data: {reason}{}", cause(source))]
    Data {
        /// What does not fit, naming the file.
        reason: String,
        /// The reader's failure, where there is one.
        #[source]
        source: Option<BoxError>,
    },
    /// The machine Floe runs on failed it outside the ports: a local file it was pointed at.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The failure.
        #[source]
        source: BoxError,
    },
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
    /// An invariant of Floe's own broke: a bug, please report it. Build it with
    /// [`Error::internal`], which captures a backtrace (shown by `{:?}` when `RUST_BACKTRACE`
    /// is set).
    #[error("internal error (a bug in Floe, please report it): {message}")]
    Internal {
        /// What broke.
        message: String,
        /// Where.
        trace: Box<std::backtrace::Backtrace>,
    },
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
    /// A run over several tables (a compaction tick) failed for some: each table with its
    /// error. The others' runs stand.
    #[error("{what} failed for {}", failures.iter().map(|(t, e)| format!("{t}: {e}")).collect::<Vec<_>>().join("; "))]
    Tables {
        /// What was run.
        what: String,
        /// Each table that failed, and why.
        failures: Vec<(String, Error)>,
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
            Error::Tables { failures, .. } => failures.iter().all(|(_, e)| e.is_retryable()),
            Error::CommitFailed { .. } | Error::LockHeld { .. } | Error::LockLost { .. } => true,
            _ => false,
        }
    }

    /// Shorthand for a schema error at `field`.
    pub fn schema(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Schema { field: field.into(), reason: reason.into() }
    }

    /// A broken invariant of Floe's own, with a backtrace of where it was found.
    pub fn internal(message: impl Into<String>) -> Self {
        Error::Internal { message: message.into(), trace: Box::new(std::backtrace::Backtrace::capture()) }
    }

    /// A malformed or unknown message.
    pub fn message(reason: impl Into<String>) -> Self {
        Error::Message { reason: reason.into(), source: None }
    }

    /// A message its decoder refused, with the decoder's failure.
    pub fn message_from(reason: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Message { reason: reason.into(), source: Some(source.into()) }
    }

    /// A data file that does not fit its table.
    pub fn data(reason: impl Into<String>) -> Self {
        Error::Data { reason: reason.into(), source: None }
    }

    /// A data file its reader refused, with the reader's failure.
    pub fn data_from(reason: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Data { reason: reason.into(), source: Some(source.into()) }
    }

    /// A failure of the machine outside the ports (a local file), with what was being done.
    pub fn io(context: impl Into<String>, source: impl Into<BoxError>) -> Self {
        Error::Io { context: context.into(), source: source.into() }
    }
}

/// `: cause` when there is one, for messages that show their source inline (as
/// [`PortError::Io`] does), so a caller that prints only the top error still sees why.
fn cause(source: &Option<BoxError>) -> String {
    source.as_ref().map_or_else(String::new, |e| format!(": {e}"))
}

/// Engine result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejection_kinds_are_stored_by_name_and_unknown_names_survive() {
        for kind in RejectionKind::KNOWN {
            let json = serde_json::to_string(&Rejection::new(kind.clone(), "why")).unwrap();
            assert!(json.contains(&format!("\"kind\":\"{kind}\"")), "{json}");
            let back: Rejection = serde_json::from_str(&json).unwrap();
            assert_eq!(back.kind, kind);
            assert_eq!(RejectionKind::known(kind.as_str()).unwrap(), kind);
        }
        assert_eq!(RejectionKind::TooLarge.as_str(), "too-large");
        // A record a newer build wrote reads back with its name, and is written back unchanged.
        let back: Rejection = serde_json::from_str(r#"{"kind":"from-the-future","reason":"r"}"#).unwrap();
        assert_eq!(back.kind, RejectionKind::Other("from-the-future".into()));
        assert!(serde_json::to_string(&back).unwrap().contains("\"kind\":\"from-the-future\""));
        // A user's filter must name a kind this build writes.
        let e = RejectionKind::known("toolarge").unwrap_err().to_string();
        assert!(matches!(RejectionKind::known("x"), Err(Error::Config(_))));
        assert!(e.contains("`toolarge`") && e.contains("too-large") && e.contains("overlap"), "{e}");
    }

    #[test]
    fn errors_keep_their_causes_and_say_who_acts() {
        let bad_json = serde_json::from_str::<serde_json::Value>("{").unwrap_err();
        let e = Error::message_from("not an S3 notification", bad_json);
        assert!(e.to_string().starts_with("message: not an S3 notification: EOF"), "{e}");
        assert!(std::error::Error::source(&e).is_some_and(|s| s.is::<serde_json::Error>()), "the cause is kept");
        assert!(!e.is_retryable(), "a malformed message fails again unchanged");
        assert_eq!(Error::data("file f lacks schema 3").to_string(), "data: file f lacks schema 3");
        assert!(std::error::Error::source(&Error::data("x")).is_none());
        let internal = Error::internal("not a list");
        assert!(internal.to_string().contains("a bug in Floe") && internal.to_string().ends_with("not a list"));
        let several = Error::Tables {
            what: "compaction".into(),
            failures: vec![("a.b".into(), Error::LockHeld { entity: "t".into() }), ("c.d".into(), Error::data("x"))],
        };
        assert_eq!(several.to_string(), "compaction failed for a.b: lock t is held by another committer; c.d: data: x");
        assert!(!several.is_retryable(), "one failure needs someone to act");
    }
}
