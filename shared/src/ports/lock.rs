//! The lock port: a leased, heartbeated mutual exclusion for the committer, in the spirit of
//! Iceberg Java's `DynamoDbLockManager`. It only avoids wasted work: correctness never depends
//! on it, because the table pointer's compare-and-swap fences a committer whose lease expired.

use std::time::Duration;

use async_trait::async_trait;

use crate::PortError;

/// A held lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// What is locked (e.g. `floe-committer/analytics.events`).
    pub entity: String,
    /// Who holds it (unique per process).
    pub owner: String,
    /// Version token, renewed at each heartbeat.
    pub version: String,
    /// How long the lease lasts without a heartbeat.
    pub duration: Duration,
}

impl Lease {
    /// The version a heartbeat of this lease sets: derived from the current one, so that every
    /// attempt of one heartbeat writes the same value.
    pub fn next_version(&self) -> String {
        use sha2::{Digest, Sha256};
        hex::encode(&Sha256::digest(format!("{}\n{}", self.owner, self.version))[..16])
    }
}

/// Leased locks.
#[async_trait]
pub trait Lock: Send + Sync {
    /// Takes the lock if it is free or its lease has expired; `None` if someone else holds it.
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError>;
    /// Extends the lease; `Conflict` if it was lost (expired and taken by someone else). The new
    /// version is [`Lease::next_version`], so a repeat of a heartbeat whose answer was lost
    /// finds its own earlier attempt and succeeds instead of reporting the lock lost.
    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError>;
    /// Releases the lock if still held by this lease (or by the heartbeat of it whose answer was
    /// lost, so that a failed heartbeat never leaves the lock held until its lease runs out).
    async fn release(&self, lease: &Lease) -> Result<(), PortError>;
}
