//! Ports that take as long as AWS's, for load tests in embedded mode (`floe bench-committer`).
//!
//! Each call runs on the local port (files, SQLite) and then waits as long as the AWS call it
//! stands for would have taken, drawn at random: S3 requests from a lognormal distribution plus
//! the transfer at a per-connection throughput, DynamoDB requests from another. The number and
//! order of AWS requests follow the AWS adapters: a ledger lookup is one BatchGetItem per 100
//! sources, in turn, and one more for the landed records of pending marks; a ledger mark one
//! UpdateItem per source, `MARKS_IN_FLIGHT` at once, a landed record one UpdateItem per
//! snapshot (`adapters/aws/dynamodb_ledger.rs`); a pointer load or swap, a
//! lock, heartbeat or release one request each. What the local port itself takes comes on top
//! (kept small by a warehouse on tmpfs).
//!
//! The default profile is AWS's published figures: S3 small-object latency "roughly 100–200
//! milliseconds" (Best Practices Design Patterns: Optimizing Amazon S3 Performance, taken as the
//! 5th–95th percentiles), 85–90 MB/s per connection (same paper), and DynamoDB's "single-digit
//! millisecond" reads and writes (taken as 2–9 ms, 5th–95th percentiles).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use floe::PortError;
use floe::adapters::aws::MARKS_IN_FLIGHT;
use floe::ports::{
    Lease, Ledger, Lock, ObjectMeta, ObjectStore, Pointer, Ports, QuarantineRecord, SourceState, TableIdent,
    TablePointer,
};
use futures::StreamExt as _;
use rand::rngs::StdRng;
use rand::{Rng as _, SeedableRng as _};
use serde::Serialize;

/// A lognormal latency given by its 5th and 95th percentiles (ms).
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Spread {
    pub p05_ms: f64,
    pub p95_ms: f64,
}

impl Spread {
    pub(crate) fn median_ms(&self) -> f64 {
        (self.p05_ms * self.p95_ms).sqrt()
    }
    fn sigma(&self) -> f64 {
        (self.p95_ms / self.p05_ms).ln() / (2.0 * 1.644_853_6)
    }
    fn draw(&self, rng: &mut StdRng) -> Duration {
        // Box-Muller: one standard normal from two uniforms.
        let (u1, u2): (f64, f64) = (rng.random_range(f64::EPSILON..1.0), rng.random());
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        Duration::from_secs_f64(self.median_ms() * (self.sigma() * z).exp() / 1e3)
    }
}

/// How long AWS takes.
#[derive(Debug, Clone, Copy, Serialize)]
pub(crate) struct Profile {
    /// Any S3 request (GET, PUT, DELETE, HEAD, LIST): time to first byte.
    pub s3: Spread,
    /// S3 transfer, MB/s per connection.
    pub s3_mbps: f64,
    /// Any single-item DynamoDB request.
    pub ddb: Spread,
    /// A consistent BatchGetItem of up to 100 keys.
    pub ddb_batch: Spread,
}

/// The clock of one set of slow ports: the profile, seeded dice, and counts of what was waited.
pub(crate) struct Clock {
    profile: Profile,
    rng: Mutex<StdRng>,
    waited: Mutex<Waited>,
}

/// Requests made and time spent waiting on them, per service.
#[derive(Debug, Default, Clone, Copy, Serialize)]
pub(crate) struct Waited {
    pub s3_requests: u64,
    pub ddb_requests: u64,
}

impl Clock {
    fn s3(&self, bytes: usize) -> Duration {
        self.waited.lock().expect("clock").s3_requests += 1;
        let first = self.profile.s3.draw(&mut self.rng.lock().expect("clock"));
        first + Duration::from_secs_f64(bytes as f64 / (self.profile.s3_mbps * 1e6))
    }
    fn ddb(&self, batch: bool) -> Duration {
        self.waited.lock().expect("clock").ddb_requests += 1;
        let spread = if batch { self.profile.ddb_batch } else { self.profile.ddb };
        spread.draw(&mut self.rng.lock().expect("clock"))
    }
    /// Requests so far.
    pub(crate) fn waited(&self) -> Waited {
        *self.waited.lock().expect("clock")
    }
    /// `n` single-item DynamoDB requests, `MARKS_IN_FLIGHT` at once.
    async fn ddb_many(&self, n: usize) {
        let waits: Vec<Duration> = (0..n).map(|_| self.ddb(false)).collect();
        futures::stream::iter(waits.into_iter().map(tokio::time::sleep))
            .buffer_unordered(MARKS_IN_FLIGHT)
            .collect::<Vec<()>>()
            .await;
    }
}

/// Wraps the store, pointer, ledger and lock of `ports` so that each call takes as long as
/// `profile` says its AWS requests would. The queue is left alone (a load test feeds the
/// committer itself).
pub(crate) fn slow(ports: Ports, profile: Profile, seed: u64) -> (Ports, Arc<Clock>) {
    let clock = Arc::new(Clock {
        profile,
        rng: Mutex::new(StdRng::seed_from_u64(seed)),
        waited: Mutex::new(Waited::default()),
    });
    let ports = Ports {
        store: Arc::new(Slow { inner: ports.store, clock: clock.clone() }),
        pointer: Arc::new(Slow { inner: ports.pointer, clock: clock.clone() }),
        ledger: Arc::new(Slow { inner: ports.ledger, clock: clock.clone() }),
        lock: Arc::new(Slow { inner: ports.lock, clock: clock.clone() }),
        ..ports
    };
    (ports, clock)
}

struct Slow<P: ?Sized> {
    inner: Arc<P>,
    clock: Arc<Clock>,
}

async fn after<T>(wait: Duration, r: T) -> T {
    tokio::time::sleep(wait).await;
    r
}

#[async_trait]
impl ObjectStore for Slow<dyn ObjectStore> {
    async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
        let r = self.inner.get(uri).await;
        let n = r.as_ref().map_or(0, Bytes::len);
        after(self.clock.s3(n), r).await
    }
    async fn get_range(&self, uri: &str, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
        let r = self.inner.get_range(uri, range).await;
        let n = r.as_ref().map_or(0, Bytes::len);
        after(self.clock.s3(n), r).await
    }
    async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError> {
        let r = self.inner.get_version(meta).await;
        let n = r.as_ref().ok().and_then(Option::as_ref).map_or(0, Bytes::len);
        after(self.clock.s3(n), r).await
    }
    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
        let r = self.inner.head(uri).await;
        after(self.clock.s3(0), r).await
    }
    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let wait = self.clock.s3(body.len());
        after(wait, self.inner.put(uri, body).await).await
    }
    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
        let wait = self.clock.s3(body.len());
        after(wait, self.inner.put_if_absent(uri, body).await).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
        let r = self.inner.list(prefix).await;
        // one ListObjectsV2 page per 1,000 keys, in turn
        let pages = r.as_ref().map_or(1, |l| l.len().div_ceil(1000).max(1));
        let wait = (0..pages).map(|_| self.clock.s3(0)).sum();
        after(wait, r).await
    }
    async fn delete(&self, uri: &str) -> Result<(), PortError> {
        let r = self.inner.delete(uri).await;
        after(self.clock.s3(0), r).await
    }
}

#[async_trait]
impl TablePointer for Slow<dyn TablePointer> {
    async fn load(&self, table: &TableIdent) -> Result<Option<Pointer>, PortError> {
        let r = self.inner.load(table).await;
        after(self.clock.ddb(false), r).await
    }
    async fn create(&self, table: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        let r = self.inner.create(table, metadata_location).await;
        after(self.clock.ddb(false), r).await
    }
    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        let r = self.inner.swap(table, expected, new_location).await;
        after(self.clock.ddb(false), r).await
    }
}

#[async_trait]
impl Ledger for Slow<dyn Ledger> {
    async fn lookup(&self, table: &TableIdent, ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        let r = self.inner.lookup(table, ids).await;
        // The sources' items, then (where any is pending) the landed records of their marks: a
        // source committed through a landed record reads as committed here, so this undercounts
        // the second request of a lookup that finds only such sources.
        let pending = r.as_ref().is_ok_and(|got| got.iter().any(|(_, s)| matches!(s, SourceState::Pending { .. })));
        let wait = (0..ids.len().div_ceil(100) + usize::from(pending)).map(|_| self.clock.ddb(true)).sum();
        after(wait, r).await
    }
    async fn record_pending(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        let r = self.inner.record_pending(table, ids, snapshot_id).await;
        self.clock.ddb_many(ids.len()).await;
        r
    }
    async fn record_committed(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        let r = self.inner.record_committed(table, ids, snapshot_id).await;
        self.clock.ddb_many(ids.len()).await;
        r
    }
    async fn record_landed(&self, table: &TableIdent, snapshot_ids: &[i64]) -> Result<(), PortError> {
        let r = self.inner.record_landed(table, snapshot_ids).await;
        let wait = snapshot_ids.iter().map(|_| self.clock.ddb(false)).sum();
        after(wait, r).await
    }
    async fn keep(&self, table: &TableIdent, committed: &[(String, i64)]) -> Result<(), PortError> {
        let r = self.inner.keep(table, committed).await;
        let snapshots: std::collections::BTreeSet<i64> = committed.iter().map(|(_, s)| *s).collect();
        self.clock.ddb_many(snapshots.len()).await; // the landed records first, then the sources
        self.clock.ddb_many(committed.len()).await;
        r
    }
    async fn quarantine(&self, record: QuarantineRecord) -> Result<(), PortError> {
        let r = self.inner.quarantine(record).await;
        after(self.clock.ddb(false), r).await
    }
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        self.inner.quarantined().await
    }
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        self.inner.remove_quarantined(source_ids).await
    }
}

#[async_trait]
impl Lock for Slow<dyn Lock> {
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError> {
        let r = self.inner.try_acquire(entity, owner, lease).await;
        after(self.clock.ddb(false), r).await
    }
    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError> {
        let r = self.inner.heartbeat(lease).await;
        after(self.clock.ddb(false), r).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), PortError> {
        let r = self.inner.release(lease).await;
        after(self.clock.ddb(false), r).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_draws_between_its_percentiles_nine_times_in_ten() {
        let s = Spread { p05_ms: 100.0, p95_ms: 200.0 };
        let mut rng = StdRng::seed_from_u64(7);
        let draws: Vec<f64> = (0..20_000).map(|_| s.draw(&mut rng).as_secs_f64() * 1e3).collect();
        let inside = draws.iter().filter(|d| (100.0..=200.0).contains(*d)).count() as f64 / draws.len() as f64;
        assert!((0.88..0.92).contains(&inside), "{inside}");
        let below = draws.iter().filter(|d| **d < s.median_ms()).count() as f64 / draws.len() as f64;
        assert!((0.48..0.52).contains(&below), "{below}");
    }

    #[tokio::test]
    async fn ledger_marks_wait_in_rounds_of_marks_in_flight() {
        let dir = tempfile::tempdir().expect("dir");
        let base = floe::adapters::local::raw_ports(dir.path()).expect("ports");
        let fixed = Spread { p05_ms: 20.0, p95_ms: 20.0 };
        let profile = Profile { s3: fixed, s3_mbps: 10.0, ddb: fixed, ddb_batch: fixed };
        let (ports, clock) = slow(base, profile, 1);
        let table: TableIdent = "a.b".parse().expect("table");
        let ids: Vec<String> = (0..(2 * MARKS_IN_FLIGHT + 1)).map(|i| i.to_string()).collect();
        // Three rounds of marks (65 one after another would take 1.3 s): 60 ms, and whatever
        // SQLite takes.
        let t = std::time::Instant::now();
        ports.ledger.record_pending(&table, &ids, 1).await.expect("pending");
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(60) && took < Duration::from_millis(600), "{took:?}");
        let t = std::time::Instant::now();
        ports.ledger.lookup(&table, &ids).await.expect("lookup");
        let took = t.elapsed();
        assert!(
            took >= Duration::from_millis(40) && took < Duration::from_millis(60 + 300),
            "one BatchGetItem of the sources, one of their marks' landed records: {took:?}"
        );
        let t = std::time::Instant::now();
        let dir_uri = floe::adapters::local::path_to_uri(&dir.path().join("x"));
        ports.store.put(&dir_uri, Bytes::from(vec![0u8; 1_000_000])).await.expect("put");
        let took = t.elapsed();
        assert!(took >= Duration::from_millis(120), "20 ms, then 1 MB at 10 MB/s: {took:?}");
        assert_eq!(clock.waited().ddb_requests, ids.len() as u64 + 2);
    }
}
