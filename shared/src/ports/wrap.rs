//! Port decorators: one policy ([`Around`]) applied to every call of every port of a
//! [`Ports`] bundle. Retries (`RetryPolicy`) and the tests' injected faults
//! (`testing::flaky::Dice`) are such policies; the forwarding lives here once.
//!
//! A policy may run an operation more than once. Every port operation is safe to repeat (puts
//! overwrite with the same bytes, ledger writes are upserts, a duplicate message is a duplicate
//! delivery, locks are re-entrant for their owner) except `put_if_absent`, whose repeat may
//! find its own earlier write: a `Conflict` on a repeat is checked here by reading the object
//! back (the same bytes: it was ours). The pointer swap's equivalent is checked by the
//! committer, which reads the pointer back after a lost swap (`pipeline::commit`).

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;

use super::{
    Lease, Ledger, Lock, Message, ObjectMeta, ObjectStore, Pointer, Ports, QuarantineRecord, Queue, SourceState,
    TableIdent, TablePointer,
};
use crate::PortError;

/// A policy run around each port call. `op` starts the call; the policy may call it again.
pub trait Around: Send + Sync + 'static {
    /// Runs `op` under the policy. `what` names the operation for logs.
    fn call<T, F, Fut>(&self, what: &'static str, op: F) -> impl Future<Output = Result<T, PortError>> + Send
    where
        T: Send,
        F: FnMut() -> Fut + Send,
        Fut: Future<Output = Result<T, PortError>> + Send;
}

/// Wraps every port of `ports` (but metrics and faults) in `around`.
pub fn wrap<A: Around>(ports: Ports, around: Arc<A>) -> Ports {
    Ports {
        store: Arc::new(Wrapped { inner: ports.store, around: around.clone() }),
        commit_queue: Arc::new(Wrapped { inner: ports.commit_queue, around: around.clone() }),
        pointer: Arc::new(Wrapped { inner: ports.pointer, around: around.clone() }),
        ledger: Arc::new(Wrapped { inner: ports.ledger, around: around.clone() }),
        lock: Arc::new(Wrapped { inner: ports.lock, around }),
        metrics: ports.metrics,
        faults: ports.faults,
    }
}

/// A port behind a policy.
struct Wrapped<A, P: ?Sized> {
    inner: Arc<P>,
    around: Arc<A>,
}

#[async_trait]
impl<A: Around> ObjectStore for Wrapped<A, dyn ObjectStore> {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        self.around.call("get", || self.inner.get(uri)).await
    }
    async fn get_range(&self, uri: &str, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
        self.around.call("get_range", || self.inner.get_range(uri, range.clone())).await
    }
    async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError> {
        self.around.call("get_version", || self.inner.get_version(meta)).await
    }
    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        self.around.call("head", || self.inner.head(uri)).await
    }
    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        self.around.call("put", || self.inner.put(uri, body.clone())).await
    }
    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let mut attempts = 0;
        self.around
            .call("put_if_absent", || {
                attempts += 1;
                let (repeat, body) = (attempts > 1, body.clone());
                async move {
                    match self.inner.put_if_absent(uri, body.clone()).await {
                        // Our own earlier attempt may have landed: same bytes, same object.
                        Err(PortError::Conflict(why)) if repeat => match self.inner.get(uri).await {
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
        self.around.call("list", || self.inner.list(prefix)).await
    }
    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        self.around.call("delete", || self.inner.delete(uri)).await
    }
}

#[async_trait]
impl<A: Around> Queue for Wrapped<A, dyn Queue> {
    async fn send(&self, body: String) -> Result<(), PortError> {
        self.around.call("send", || self.inner.send(body.clone())).await
    }
    async fn send_for(&self, body: String, sent_for: Option<&str>) -> Result<(), PortError> {
        self.around.call("send", || self.inner.send_for(body.clone(), sent_for)).await
    }
    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError> {
        self.around.call("receive", || self.inner.receive(max, visibility)).await
    }
    async fn ack(&self, receipt: &str) -> Result<(), PortError> {
        self.around.call("ack", || self.inner.ack(receipt)).await
    }
    async fn release(&self, receipt: &str) -> Result<(), PortError> {
        self.around.call("release", || self.inner.release(receipt)).await
    }
}

#[async_trait]
impl<A: Around> TablePointer for Wrapped<A, dyn TablePointer> {
    async fn load(&self, table: &TableIdent) -> Result<Option<Pointer>, PortError> {
        self.around.call("load pointer", || self.inner.load(table)).await
    }
    async fn create(&self, table: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        self.around.call("create table", || self.inner.create(table, metadata_location)).await
    }
    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        self.around.call("swap", || self.inner.swap(table, expected, new_location)).await
    }
    async fn assign_location(&self, table: &TableIdent) -> Result<Option<String>, PortError> {
        self.around.call("assign table location", || self.inner.assign_location(table)).await
    }
    fn manages_files(&self) -> bool {
        self.inner.manages_files()
    }
    fn writes_metadata(&self) -> bool {
        self.inner.writes_metadata()
    }
    async fn commit(
        &self,
        table: &TableIdent,
        expected: &Pointer,
        base: &iceberg::spec::TableMetadata,
        next: &iceberg::spec::TableMetadata,
    ) -> Result<super::Committed, PortError> {
        self.around.call("commit changes", || self.inner.commit(table, expected, base, next)).await
    }
}

#[async_trait]
impl<A: Around> Ledger for Wrapped<A, dyn Ledger> {
    async fn lookup(&self, table: &TableIdent, source_ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        self.around.call("ledger lookup", || self.inner.lookup(table, source_ids)).await
    }
    async fn record_pending(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError> {
        self.around.call("record pending", || self.inner.record_pending(table, source_ids, snapshot_id)).await
    }
    async fn record_committed(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError> {
        self.around.call("record committed", || self.inner.record_committed(table, source_ids, snapshot_id)).await
    }
    async fn record_landed(&self, table: &TableIdent, snapshot_ids: &[i64]) -> Result<(), PortError> {
        self.around.call("record landed", || self.inner.record_landed(table, snapshot_ids)).await
    }
    async fn keep(&self, table: &TableIdent, committed: &[(String, i64)]) -> Result<(), PortError> {
        self.around.call("keep", || self.inner.keep(table, committed)).await
    }
    async fn quarantine(&self, record: QuarantineRecord) -> Result<(), PortError> {
        self.around.call("quarantine", || self.inner.quarantine(record.clone())).await
    }
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        self.around.call("quarantined", || self.inner.quarantined()).await
    }
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        self.around.call("unquarantine", || self.inner.remove_quarantined(source_ids)).await
    }
}

#[async_trait]
impl<A: Around> Lock for Wrapped<A, dyn Lock> {
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError> {
        self.around.call("lock", || self.inner.try_acquire(entity, owner, lease)).await
    }
    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError> {
        self.around.call("heartbeat", || self.inner.heartbeat(lease)).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), PortError> {
        self.around.call("unlock", || self.inner.release(lease)).await
    }
}
