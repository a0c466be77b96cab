//! Retries with exponential backoff and full jitter around every port, for errors that say
//! "try again" ([`PortError::is_retryable`]: throttling, transient I/O). Conflicts, missing
//! objects and invalid requests pass through at once: they need a decision, not patience.
//!
//! A retried call may follow one that took effect although its answer was lost. Every port
//! operation is safe to repeat (puts overwrite with the same bytes, ledger writes are upserts,
//! a duplicate queue message is a duplicate delivery, locks are re-entrant for their owner),
//! except two whose second attempt can report a conflict with ourselves, handled here and in
//! the committer:
//!
//! - `put_if_absent`: a `Conflict` after a failed attempt is checked by reading the object
//!   back; the same bytes mean the first attempt landed.
//! - `swap`: a `Conflict` after a lost answer is checked by the committer, which reads the
//!   pointer back (`pipeline::commit`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use rand::Rng;
use tracing::debug;

use super::{
    Lease, Ledger, Lock, Message, ObjectMeta, ObjectStore, Pointer, Ports, QuarantineRecord, Queue, SourceState,
    TableIdent, TablePointer,
};
use crate::PortError;

/// How hard to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// Backoff before the second attempt; doubles each time, up to `max_backoff`.
    pub base_backoff: Duration,
    /// The longest pause between attempts.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { attempts: 8, base_backoff: Duration::from_millis(50), max_backoff: Duration::from_secs(5) }
    }
}

impl RetryPolicy {
    /// Runs `op` until it succeeds, fails for good, or runs out of attempts.
    pub async fn run<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, PortError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, PortError>>,
    {
        let mut attempt = 1;
        loop {
            match op().await {
                Err(e) if e.is_retryable() && attempt < self.attempts => {
                    let cap = self.base_backoff.saturating_mul(1 << (attempt - 1).min(20)).min(self.max_backoff);
                    let pause = Duration::from_micros(rand::rng().random_range(0..=cap.as_micros() as u64));
                    debug!(what, attempt, error = %e, pause_ms = pause.as_millis() as u64, "retrying");
                    tokio::time::sleep(pause).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

impl Ports {
    /// Wraps every port (but metrics and faults) in retries under `policy`.
    pub fn retrying(self, policy: RetryPolicy) -> Ports {
        Ports {
            store: Arc::new(Retrying { inner: self.store, policy }),
            commit_queue: Arc::new(Retrying { inner: self.commit_queue, policy }),
            pointer: Arc::new(Retrying { inner: self.pointer, policy }),
            ledger: Arc::new(Retrying { inner: self.ledger, policy }),
            lock: Arc::new(Retrying { inner: self.lock, policy }),
            metrics: self.metrics,
            faults: self.faults,
        }
    }
}

/// A port behind retries.
struct Retrying<P: ?Sized> {
    inner: Arc<P>,
    policy: RetryPolicy,
}

#[async_trait]
impl ObjectStore for Retrying<dyn ObjectStore> {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        self.policy.run("get", || self.inner.get(uri)).await
    }
    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        self.policy.run("head", || self.inner.head(uri)).await
    }
    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        self.policy.run("put", || self.inner.put(uri, body.clone())).await
    }
    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let mut tried = false;
        self.policy
            .run("put_if_absent", || {
                let first = !std::mem::replace(&mut tried, true);
                let body = body.clone();
                async move {
                    match self.inner.put_if_absent(uri, body.clone()).await {
                        // Our own earlier attempt may have landed: same bytes, same object.
                        Err(PortError::Conflict(why)) if !first => match self.inner.get(uri).await {
                            Ok(existing) if existing == body => Ok(()),
                            Ok(_) => Err(PortError::Conflict(why)),
                            Err(e) => Err(e),
                        },
                        other => other,
                    }
                }
            })
            .await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
        self.policy.run("list", || self.inner.list(prefix)).await
    }
    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        self.policy.run("delete", || self.inner.delete(uri)).await
    }
}

#[async_trait]
impl Queue for Retrying<dyn Queue> {
    async fn send(&self, body: String) -> Result<(), PortError> {
        self.policy.run("send", || self.inner.send(body.clone())).await
    }
    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError> {
        self.policy.run("receive", || self.inner.receive(max, visibility)).await
    }
    async fn ack(&self, receipt: &str) -> Result<(), PortError> {
        self.policy.run("ack", || self.inner.ack(receipt)).await
    }
    async fn release(&self, receipt: &str) -> Result<(), PortError> {
        self.policy.run("release", || self.inner.release(receipt)).await
    }
}

#[async_trait]
impl TablePointer for Retrying<dyn TablePointer> {
    async fn load(&self, table: &TableIdent) -> Result<Option<Pointer>, PortError> {
        self.policy.run("load pointer", || self.inner.load(table)).await
    }
    async fn create(&self, table: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        self.policy.run("create table", || self.inner.create(table, metadata_location)).await
    }
    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        self.policy.run("swap", || self.inner.swap(table, expected, new_location)).await
    }
}

#[async_trait]
impl Ledger for Retrying<dyn Ledger> {
    async fn lookup(&self, table: &TableIdent, source_ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        self.policy.run("ledger lookup", || self.inner.lookup(table, source_ids)).await
    }
    async fn record_pending(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError> {
        self.policy.run("record pending", || self.inner.record_pending(table, source_ids, snapshot_id)).await
    }
    async fn record_committed(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError> {
        self.policy.run("record committed", || self.inner.record_committed(table, source_ids, snapshot_id)).await
    }
    async fn quarantine(&self, record: QuarantineRecord) -> Result<(), PortError> {
        self.policy.run("quarantine", || self.inner.quarantine(record.clone())).await
    }
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        self.policy.run("quarantined", || self.inner.quarantined()).await
    }
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        self.policy.run("unquarantine", || self.inner.remove_quarantined(source_ids)).await
    }
}

#[async_trait]
impl Lock for Retrying<dyn Lock> {
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError> {
        self.policy.run("lock", || self.inner.try_acquire(entity, owner, lease)).await
    }
    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError> {
        self.policy.run("heartbeat", || self.inner.heartbeat(lease)).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), PortError> {
        self.policy.run("unlock", || self.inner.release(lease)).await
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn fast() -> RetryPolicy {
        RetryPolicy { attempts: 4, base_backoff: Duration::from_millis(1), max_backoff: Duration::from_millis(2) }
    }

    #[tokio::test]
    async fn retries_retryable_errors_until_success_or_the_limit() {
        let calls = AtomicU32::new(0);
        let r = fast()
            .run("t", || async {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                if n < 2 { Err(PortError::Throttled("slow down".into())) } else { Ok(n) }
            })
            .await;
        assert_eq!(r.expect("third attempt succeeds"), 2);
        calls.store(0, Ordering::SeqCst);
        let r: Result<(), _> = fast()
            .run("t", || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(PortError::Throttled("always".into()))
            })
            .await;
        assert!(matches!(r, Err(PortError::Throttled(_))));
        assert_eq!(calls.load(Ordering::SeqCst), 4, "gives up after the attempts");
    }

    #[tokio::test]
    async fn conflicts_and_missing_objects_are_not_retried() {
        let calls = AtomicU32::new(0);
        let r: Result<(), _> = fast()
            .run("t", || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(PortError::Conflict("lost".into()))
            })
            .await;
        assert!(matches!(r, Err(PortError::Conflict(_))));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
