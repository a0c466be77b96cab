//! The ledger port: per-source-object idempotency records and the quarantine.
//!
//! One write per source: a source's record is written as pending under the new snapshot id
//! *before* the catalog swap; after the swap lands, one record per snapshot says it landed
//! ([`Ledger::record_landed`]), and every source pending under a landed snapshot reads as
//! `Committed`. A pending record whose snapshot has no landed record is never trusted on its
//! own: whoever finds one checks whether one of its snapshots is in the table's history (see
//! `pipeline::commit`), and records it landed if so (a committer died between its swap and its
//! landed record). A snapshot is recorded landed before Floe expires it, so a source pending
//! under it still reads as committed once the table no longer holds it.
//!
//! Pending marks accumulate rather than replace each other: a committer that stalled past its
//! lease may still win its swap after another committer marked the same sources under its own
//! snapshot, and the one that lands must stay visible to the other, or the other would commit
//! the sources again. So correctness never leans on the lock.

use async_trait::async_trait;

use crate::{PortError, Rejection, TableIdent};

/// What the ledger knows about one source object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceState {
    /// Commits naming these snapshots were attempted; any of them may have landed.
    Pending {
        /// Every snapshot an attempt would have created, ascending.
        snapshot_ids: Vec<i64>,
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
    /// States of the given source ids for `table`; ids with no record are absent. A source
    /// pending under a snapshot recorded landed is `Committed` in it (the lowest such id).
    async fn lookup(&self, table: &TableIdent, source_ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError>;
    /// Records that a commit creating `snapshot_id` is about to be attempted for these ids,
    /// adding to (never replacing) earlier pending snapshots. Never downgrades a `Committed`
    /// record.
    async fn record_pending(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError>;
    /// Records that these snapshots landed (each was, or is, in the table's history): every
    /// source pending under one of them reads as committed in it from now on. One write per
    /// snapshot, however many sources it holds.
    async fn record_landed(&self, table: &TableIdent, snapshot_ids: &[i64]) -> Result<(), PortError>;
    /// Records that these ids are committed in `snapshot_id`, one write each (only where no
    /// pending mark came first: sources with no rows).
    async fn record_committed(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError>;
    /// Restarts the time to live of these committed sources' records and of the landed
    /// records of the snapshots they are committed in (as [`Ledger::lookup`] answered: source id,
    /// snapshot id): a source sent again, which the writer skips, is then remembered as long
    /// after this resend as after its commit. Where records never expire (the default) it does
    /// nothing.
    async fn keep(&self, table: &TableIdent, committed: &[(String, i64)]) -> Result<(), PortError> {
        let _ = (table, committed);
        Ok(())
    }
    /// Records a refused source object (replacing an earlier record of the same id).
    async fn quarantine(&self, record: QuarantineRecord) -> Result<(), PortError>;
    /// All quarantined objects, oldest first.
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError>;
    /// Removes the quarantine records of these source ids (replayed and committed since).
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError>;
}
