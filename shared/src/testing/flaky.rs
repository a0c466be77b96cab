//! Transient faults: every port wrapped so that a seeded random fraction of calls fails with a
//! retryable error, half of them *before* the call reaches the backend (throttling) and half
//! *after* it took effect (the answer lost on the way back, the nastier case: a put that
//! landed, a message that was sent, a swap that happened, all reported as failures).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::PortError;
use crate::ports::{
    Lease, Ledger, Lock, Message, ObjectMeta, ObjectStore, Pointer, Ports, QuarantineRecord, Queue, SourceState,
    TableIdent, TablePointer,
};

/// Shared dice and counters for one flaky set of ports.
#[derive(Debug)]
pub struct Dice {
    rng: Mutex<StdRng>,
    rate: f64,
    injected: Mutex<(u64, u64)>,
}

impl Dice {
    /// Fails `rate` (0..1) of calls, seeded.
    pub fn new(rate: f64, seed: u64) -> Arc<Self> {
        Arc::new(Dice { rng: Mutex::new(StdRng::seed_from_u64(seed)), rate, injected: Mutex::new((0, 0)) })
    }

    /// Faults injected so far: (before the call, after the call).
    pub fn injected(&self) -> (u64, u64) {
        *self.injected.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn roll(&self) -> Roll {
        let x: f64 = self.rng.lock().unwrap_or_else(|e| e.into_inner()).random();
        let mut n = self.injected.lock().unwrap_or_else(|e| e.into_inner());
        if x < self.rate / 2.0 {
            n.0 += 1;
            Roll::Before
        } else if x < self.rate {
            n.1 += 1;
            Roll::After
        } else {
            Roll::Pass
        }
    }

    async fn call<T>(&self, what: &str, f: impl Future<Output = Result<T, PortError>>) -> Result<T, PortError> {
        match self.roll() {
            Roll::Pass => f.await,
            Roll::Before => Err(PortError::Throttled(format!("{what}: injected throttling"))),
            Roll::After => {
                let _ = f.await;
                Err(PortError::io(what, "injected: connection reset after the request was sent"))
            }
        }
    }
}

enum Roll {
    Pass,
    Before,
    After,
}

/// Wraps every port of `ports` (but metrics and faults) with `dice`.
pub fn flaky(ports: Ports, dice: &Arc<Dice>) -> Ports {
    Ports {
        store: Arc::new(Flaky { inner: ports.store, dice: dice.clone() }),
        commit_queue: Arc::new(Flaky { inner: ports.commit_queue, dice: dice.clone() }),
        pointer: Arc::new(Flaky { inner: ports.pointer, dice: dice.clone() }),
        ledger: Arc::new(Flaky { inner: ports.ledger, dice: dice.clone() }),
        lock: Arc::new(Flaky { inner: ports.lock, dice: dice.clone() }),
        metrics: ports.metrics,
        faults: ports.faults,
    }
}

struct Flaky<P: ?Sized> {
    inner: Arc<P>,
    dice: Arc<Dice>,
}

#[async_trait]
impl ObjectStore for Flaky<dyn ObjectStore> {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        self.dice.call("get", self.inner.get(uri)).await
    }
    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        self.dice.call("head", self.inner.head(uri)).await
    }
    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        self.dice.call("put", self.inner.put(uri, body)).await
    }
    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        self.dice.call("put_if_absent", self.inner.put_if_absent(uri, body)).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
        self.dice.call("list", self.inner.list(prefix)).await
    }
    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        self.dice.call("delete", self.inner.delete(uri)).await
    }
}

#[async_trait]
impl Queue for Flaky<dyn Queue> {
    async fn send(&self, body: String) -> Result<(), PortError> {
        self.dice.call("send", self.inner.send(body)).await
    }
    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError> {
        self.dice.call("receive", self.inner.receive(max, visibility)).await
    }
    async fn ack(&self, receipt: &str) -> Result<(), PortError> {
        self.dice.call("ack", self.inner.ack(receipt)).await
    }
    async fn release(&self, receipt: &str) -> Result<(), PortError> {
        self.dice.call("release", self.inner.release(receipt)).await
    }
}

#[async_trait]
impl TablePointer for Flaky<dyn TablePointer> {
    async fn load(&self, table: &TableIdent) -> Result<Option<Pointer>, PortError> {
        self.dice.call("load pointer", self.inner.load(table)).await
    }
    async fn create(&self, table: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        self.dice.call("create table", self.inner.create(table, metadata_location)).await
    }
    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        self.dice.call("swap", self.inner.swap(table, expected, new_location)).await
    }
}

#[async_trait]
impl Ledger for Flaky<dyn Ledger> {
    async fn lookup(&self, table: &TableIdent, source_ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        self.dice.call("ledger lookup", self.inner.lookup(table, source_ids)).await
    }
    async fn record_pending(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError> {
        self.dice.call("record pending", self.inner.record_pending(table, source_ids, snapshot_id)).await
    }
    async fn record_committed(
        &self,
        table: &TableIdent,
        source_ids: &[String],
        snapshot_id: i64,
    ) -> Result<(), PortError> {
        self.dice.call("record committed", self.inner.record_committed(table, source_ids, snapshot_id)).await
    }
    async fn quarantine(&self, record: QuarantineRecord) -> Result<(), PortError> {
        self.dice.call("quarantine", self.inner.quarantine(record)).await
    }
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        self.dice.call("quarantined", self.inner.quarantined()).await
    }
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        self.dice.call("unquarantine", self.inner.remove_quarantined(source_ids)).await
    }
}

#[async_trait]
impl Lock for Flaky<dyn Lock> {
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError> {
        self.dice.call("lock", self.inner.try_acquire(entity, owner, lease)).await
    }
    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError> {
        self.dice.call("heartbeat", self.inner.heartbeat(lease)).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), PortError> {
        self.dice.call("unlock", self.inner.release(lease)).await
    }
}
