//! The ledger port: per-source-object idempotency records and the quarantine.
//!
//! A record is written as `Pending { snapshot_id }` *before* the catalog swap and marked
//! `Committed` after it. A pending record is never trusted on its own: whoever finds one checks
//! whether its snapshot is in the table's history (see `pipeline::commit`).

use async_trait::async_trait;

use crate::{PortError, Rejection, TableIdent};

/// What the ledger knows about one source object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceState {
    /// A commit naming this snapshot was attempted; it may or may not have landed.
    Pending {
        /// The snapshot the attempt would have created.
        snapshot_id: i64,
    },
    /// The object's rows are in this snapshot of the table.
    Committed {
        /// The snapshot that added them.
        snapshot_id: i64,
    },
}

/// A quarantined source object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuarantineRecord {
    /// The source object's identity (`uri#version`).
    pub source_id: String,
    /// Its URI.
    pub uri: String,
    /// Destination table, when known.
    pub table: Option<String>,
    /// Why it was refused.
    pub rejection: Rejection,
    /// When (milliseconds since the epoch).
    pub at_ms: i64,
}

/// Idempotency records and quarantine.
#[async_trait]
pub trait Ledger: Send + Sync {
    /// States of the given source ids for `table`; ids with no record are absent.
    async fn lookup(&self, table: &TableIdent, source_ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError>;
    /// Records that a commit creating `snapshot_id` is about to be attempted for these ids.
    /// Never downgrades a `Committed` record.
    async fn record_pending(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError>;
    /// Records that these ids are committed in `snapshot_id`.
    async fn record_committed(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError>;
    /// Records a refused source object (replacing an earlier record of the same id).
    async fn quarantine(&self, record: QuarantineRecord) -> Result<(), PortError>;
    /// All quarantined objects, oldest first.
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError>;
    /// Removes the quarantine records of these source ids (replayed and committed since).
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError>;
}
