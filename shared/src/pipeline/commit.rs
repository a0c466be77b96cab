//! The committer role: the only code that writes Iceberg metadata and swaps table pointers.
//!
//! For a batch of file manifest messages: take the lock, work out per source object whether it
//! is already in the table (ledger records, a pending record verified against the snapshot
//! history), turn the rest into one append snapshot per table, record the sources as pending
//! under that snapshot id, write manifest + manifest list + metadata.json, swap the pointer
//! conditionally, then record them committed. Only then are the messages acknowledged (by the
//! caller, from [`MessageResult`]). A lost swap re-plans on the new state; an unknown swap
//! outcome leaves the messages for redelivery, which the pending records then resolve.
//!
//! A warm committer keeps each table's metadata and manifest list in memory and reads nothing
//! but the pointer: see [`Committer::reads`].

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use iceberg::spec::{DataFile, ManifestFile};
use rand::Rng;
use tracing::{info, instrument, warn};

use crate::config::EngineConfig;
use crate::fault::FaultPoint;
use crate::message::{FileManifest, SourceRef};
use crate::ports::{Lease, Message, Pointer, Ports, SourceState};
use crate::table::{TableState, load_table, plan_append};
use crate::{Error, PortError, Result, TableIdent};

/// What became of one message.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageResult {
    /// Its files are in this snapshot (or it had none and its sources are recorded).
    Committed {
        /// The snapshot holding its rows.
        snapshot_id: i64,
    },
    /// Every source it names was already committed: a redelivery. Acknowledge it.
    Duplicate,
    /// It overlaps sources committed by another batch. Its files are not committed; the
    /// listed sources (those not yet committed) must be written again. Acknowledge it.
    Overlap {
        /// Sources to re-enqueue for writing.
        requeue: Vec<SourceRef>,
    },
    /// Not processed now (lock not available, table missing, transient failure): leave it
    /// for redelivery. Do not acknowledge.
    Retry {
        /// Why.
        reason: String,
    },
    /// The lock stayed held by another committer for the whole wait. Not a failure of the
    /// message: re-enqueue it as a fresh message and acknowledge the original, so contention
    /// never walks it towards a dead-letter queue.
    Contended,
    /// Unreadable message: it can never succeed. Leave it to the dead-letter queue.
    Poison {
        /// Why.
        reason: String,
    },
}

impl MessageResult {
    /// Whether the message may be deleted from the queue.
    pub fn ack(&self) -> bool {
        matches!(self, MessageResult::Committed { .. } | MessageResult::Duplicate | MessageResult::Overlap { .. })
    }
}

/// The outcome of committing a batch of messages.
#[derive(Debug, Default)]
pub struct CommitOutcome {
    /// Per message id.
    pub results: Vec<(String, MessageResult)>,
    /// Snapshots created: table, snapshot id, data files, rows.
    pub snapshots: Vec<(TableIdent, i64, usize, u64)>,
}

/// Per-message results of one table's commit, and the snapshot it made (table, id, files, rows).
type TableCommit = (Vec<(String, MessageResult)>, Option<(TableIdent, i64, usize, u64)>);

struct Cached {
    state: TableState,
    manifests: Option<Vec<ManifestFile>>,
}

/// A committer: holds per-table state across batches (a warm Lambda keeps it).
pub struct Committer {
    cfg: EngineConfig,
    ports: Ports,
    owner: String,
    cache: HashMap<TableIdent, Cached>,
    reads: u64,
}

impl Committer {
    /// A committer with a unique owner id for the lock.
    pub fn new(cfg: EngineConfig, ports: Ports) -> Self {
        let owner = format!("committer-{}", uuid::Uuid::new_v4());
        Committer { cfg, ports, owner, cache: HashMap::new(), reads: 0 }
    }

    /// The fault plan (for the handlers' `committer.before_ack` point).
    pub fn faults(&self) -> &crate::fault::Faults {
        &self.ports.faults
    }

    /// Metadata objects read so far (metadata.json and manifest lists; 0 per commit when warm).
    pub fn reads(&self) -> u64 {
        self.reads
    }

    /// Receives up to `max` messages from the commit queue, commits them, and acknowledges
    /// those that are done. Returns `None` when the queue had nothing visible.
    pub async fn run_once(&mut self, max: usize, visibility: Duration) -> Result<Option<CommitOutcome>> {
        let msgs = self.ports.commit_queue.receive(max, visibility).await?;
        if msgs.is_empty() {
            return Ok(None);
        }
        let outcome = self.commit(&msgs).await;
        self.ports.faults.hit(FaultPoint::CommitterBeforeAck).await;
        let by_id: HashMap<&str, &Message> = msgs.iter().map(|m| (m.id.as_str(), m)).collect();
        for (id, r) in &outcome.results {
            if let Some(m) = by_id.get(id.as_str()) {
                if r.ack() {
                    self.ports.commit_queue.ack(&m.receipt).await?;
                } else if matches!(r, MessageResult::Contended) {
                    // A fresh copy, so waiting for the lock never counts towards dead-lettering.
                    self.ports.commit_queue.send(m.body.clone()).await?;
                    self.ports.commit_queue.ack(&m.receipt).await?;
                } else if matches!(r, MessageResult::Retry { .. }) {
                    self.ports.commit_queue.release(&m.receipt).await?;
                }
            }
        }
        Ok(Some(outcome))
    }

    /// Commits a batch of messages; every message gets a result.
    pub async fn commit(&mut self, msgs: &[Message]) -> CommitOutcome {
        let mut out = CommitOutcome::default();
        let mut by_table: HashMap<TableIdent, Vec<(String, FileManifest)>> = HashMap::new();
        for m in msgs {
            match FileManifest::from_json(&m.body) {
                Ok(fm) => by_table.entry(fm.table.clone()).or_default().push((m.id.clone(), fm)),
                Err(e) => {
                    warn!(message = %m.id, error = %e, "unreadable commit message");
                    out.results.push((m.id.clone(), MessageResult::Poison { reason: e.to_string() }));
                }
            }
        }
        let mut tables: Vec<_> = by_table.into_iter().collect();
        tables.sort_by(|a, b| a.0.cmp(&b.0));
        for (table, group) in tables {
            match self.commit_table(&table, &group).await {
                Ok((results, snap)) => {
                    out.results.extend(results);
                    out.snapshots.extend(snap);
                }
                Err(Error::LockHeld { entity }) => {
                    warn!(%table, %entity, "lock held past the wait; messages handed back");
                    out.results.extend(group.into_iter().map(|(id, _)| (id, MessageResult::Contended)));
                }
                Err(e) => {
                    warn!(%table, error = %e, "commit failed; messages left for redelivery");
                    self.cache.remove(&table);
                    let reason = e.to_string();
                    out.results
                        .extend(group.into_iter().map(|(id, _)| (id, MessageResult::Retry { reason: reason.clone() })));
                }
            }
        }
        out
    }

    async fn acquire(&self, table: &TableIdent) -> Result<Lease> {
        let entity = format!("floe-committer/{table}");
        let deadline = Instant::now() + self.cfg.lock_wait;
        let mut backoff = Duration::from_millis(50);
        loop {
            if let Some(lease) = self.ports.lock.try_acquire(&entity, &self.owner, self.cfg.lock_lease).await? {
                return Ok(lease);
            }
            if Instant::now() >= deadline {
                return Err(Error::LockHeld { entity });
            }
            let jitter = rand::rng().random_range(0..=backoff.as_millis() as u64 / 2);
            tokio::time::sleep(backoff + Duration::from_millis(jitter)).await;
            backoff = (backoff * 2).min(Duration::from_secs(2));
        }
    }

    /// The pointer swap. A `Conflict` may hide a swap of ours that landed although its answer
    /// was lost (and a retry then found the pointer moved): the pointer is read back, and if
    /// it names our metadata the swap counts as done. Any other failure leaves the outcome
    /// unknown, for the pending records to settle on redelivery.
    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        match self.ports.pointer.swap(table, expected, new_location).await {
            Err(PortError::Conflict(why)) => match self.ports.pointer.load(table).await? {
                Some(p) if p.metadata_location == new_location => Ok(p),
                _ => Err(PortError::Conflict(why)),
            },
            other => other,
        }
    }

    #[instrument(skip_all, fields(table = %table, messages = group.len()))]
    async fn commit_table(&mut self, table: &TableIdent, group: &[(String, FileManifest)]) -> Result<TableCommit> {
        let mut lease = self.acquire(table).await?;
        self.ports.faults.hit(FaultPoint::CommitterAfterLock).await;
        let result = self.commit_locked(table, group, &mut lease).await;
        if let Err(e) = self.ports.lock.release(&lease).await {
            warn!(%table, error = %e, "lock release failed; it will expire");
        }
        result
    }

    async fn state(&mut self, table: &TableIdent) -> Result<&mut Cached> {
        let current = self.ports.pointer.load(table).await?.ok_or_else(|| Error::NoSuchTable(table.to_string()))?;
        let fresh = match self.cache.get(table) {
            Some(c) => c.state.pointer.metadata_location != current.metadata_location,
            None => true,
        };
        if fresh {
            self.reads += 1;
            let state = load_table(self.ports.pointer.as_ref(), self.ports.store.as_ref(), table)
                .await?
                .ok_or_else(|| Error::NoSuchTable(table.to_string()))?;
            self.cache.insert(table.clone(), Cached { state, manifests: None });
        }
        Ok(self.cache.get_mut(table).expect("inserted above"))
    }

    async fn commit_locked(
        &mut self,
        table: &TableIdent,
        group: &[(String, FileManifest)],
        lease: &mut Lease,
    ) -> Result<TableCommit> {
        let started = Instant::now();
        for attempt in 1..=self.cfg.commit_attempts {
            let state = self.state(table).await?.state.clone();
            let ids: Vec<String> = group.iter().flat_map(|(_, m)| m.sources.iter().map(|s| s.id.clone())).collect();
            let known = self.ports.ledger.lookup(table, &ids).await?;
            let settled = settle(&state, known);
            for (snap, ids) in &settled.healed {
                self.ports.ledger.record_committed(table, ids, *snap).await?;
            }
            // Poison first, so that a message that can never commit claims none of its sources.
            let Converted { ready, poisoned } = convert(&state, group);
            let Classified { mut results, take } = classify(ready, &settled.committed);
            results.extend(poisoned);
            if take.is_empty() {
                return Ok((results, None));
            }
            let sources: Vec<String> =
                take.iter().flat_map(|r| r.manifest.sources.iter().map(|s| s.id.clone())).collect();
            let taken_ids: Vec<String> = take.iter().map(|r| r.id.clone()).collect();
            let files: Vec<(i32, DataFile)> = take.into_iter().flat_map(|r| r.files).collect();
            if files.is_empty() {
                // Only empty sources: no rows to double-count, nothing to snapshot.
                let snap = state.metadata.current_snapshot_id().unwrap_or(0);
                self.ports.ledger.record_committed(table, &sources, snap).await?;
                results.extend(taken_ids.into_iter().map(|id| (id, MessageResult::Committed { snapshot_id: snap })));
                return Ok((results, None));
            }
            let rows: u64 = files.iter().map(|(_, f)| f.record_count()).sum();
            let nfiles = files.len();
            let snapshot_id = fresh_snapshot_id(&state);
            self.ports.ledger.record_pending(table, &sources, snapshot_id).await?;
            let cached = self.cache.get(table).and_then(|c| c.manifests.clone());
            self.reads += u64::from(cached.is_none() && state.metadata.current_snapshot().is_some());
            let extra = [("floe.source-objects", sources.len().to_string())];
            let plan = plan_append(self.ports.store.as_ref(), &state, cached, files, snapshot_id, &extra).await?;
            self.ports.faults.hit(FaultPoint::CommitterAfterManifestWrite).await;
            // Still ours? A committer paused past its lease stops here; the swap below is
            // still the fence for one that pauses between this check and the swap.
            *lease = match self.ports.lock.heartbeat(lease).await {
                Ok(renewed) => renewed,
                Err(PortError::Conflict(_)) => {
                    warn!(%table, "lease lost mid-commit; stopping");
                    self.cache.remove(table);
                    return Err(Error::LockLost { entity: lease.entity.clone() });
                }
                Err(e) => return Err(e.into()),
            };
            self.ports.store.put_if_absent(&plan.metadata_location, plan.metadata_json.clone()).await?;
            self.ports.faults.hit(FaultPoint::CommitterAfterMetadataWrite).await;
            match self.swap(table, &state.pointer, &plan.metadata_location).await {
                Ok(pointer) => {
                    self.ports.faults.hit(FaultPoint::CommitterAfterPointerSwap).await;
                    self.cache.insert(
                        table.clone(),
                        Cached {
                            state: TableState { pointer, metadata: plan.metadata.clone() },
                            manifests: Some(plan.manifests),
                        },
                    );
                    self.ports.ledger.record_committed(table, &sources, snapshot_id).await?;
                    self.ports.faults.hit(FaultPoint::CommitterAfterLedgerUpdate).await;
                    info!(%table, snapshot_id, files = nfiles, rows, attempt, ms = started.elapsed().as_millis() as u64, "committed");
                    self.ports.metrics.count("commits", 1);
                    self.ports.metrics.count("committed_rows", rows);
                    results.extend(taken_ids.into_iter().map(|id| (id, MessageResult::Committed { snapshot_id })));
                    return Ok((results, Some((table.clone(), snapshot_id, nfiles, rows))));
                }
                Err(PortError::Conflict(why)) => {
                    warn!(%table, attempt, %why, "pointer swap lost; re-planning");
                    self.cache.remove(table);
                    let _ = self.ports.store.delete(&plan.metadata_location).await;
                    let pause = rand::rng().random_range(10..50 * u64::from(attempt));
                    tokio::time::sleep(Duration::from_millis(pause)).await;
                }
                Err(e) => {
                    // The swap may or may not have landed: the pending records decide later.
                    self.cache.remove(table);
                    return Err(e.into());
                }
            }
        }
        Err(Error::CommitFailed {
            table: table.to_string(),
            attempts: self.cfg.commit_attempts,
            reason: "every compare-and-swap lost to a concurrent commit".into(),
        })
    }
}

/// What the ledger and the table's history say of a group's sources.
#[derive(Debug, Default, PartialEq)]
struct Settled {
    /// Sources whose rows are in the table.
    committed: HashSet<String>,
    /// Pending sources found in the history, by the snapshot that holds them: to be recorded
    /// committed (a committer died between its swap and its ledger update).
    healed: HashMap<i64, Vec<String>>,
}

/// A source is committed if the ledger says so, or if any of its pending snapshots made it
/// into the table, whichever committer attempted it.
fn settle(state: &TableState, known: Vec<(String, SourceState)>) -> Settled {
    let mut out = Settled::default();
    for (id, s) in known {
        match s {
            SourceState::Committed { .. } => {
                out.committed.insert(id);
            }
            SourceState::Pending { snapshot_ids } => {
                if let Some(snap) = snapshot_ids.into_iter().find(|s| state.metadata.snapshot_by_id(*s).is_some()) {
                    out.healed.entry(snap).or_default().push(id.clone());
                    out.committed.insert(id);
                }
            }
        }
    }
    out
}

/// A message whose file entries convert: ready to be classified and committed.
struct Ready<'a> {
    id: &'a String,
    manifest: &'a FileManifest,
    files: Vec<(i32, DataFile)>,
}

/// A group's messages sorted into those settled now and those to commit.
struct Classified<'a> {
    results: Vec<(String, MessageResult)>,
    take: Vec<Ready<'a>>,
}

/// Duplicates (a batch seen already, or every source committed) are settled; a manifest that
/// overlaps committed sources, or sources taken by an earlier message of the group, is
/// rejected with the rest of its sources to requeue; the others are taken.
fn classify<'a>(ready: Vec<Ready<'a>>, committed: &HashSet<String>) -> Classified<'a> {
    let mut results = vec![];
    let mut take: Vec<Ready<'a>> = vec![];
    let mut taken: HashSet<&str> = HashSet::new();
    let mut batches: HashSet<&str> = HashSet::new();
    for r in ready {
        let (id, m) = (r.id, r.manifest);
        let done = |s: &SourceRef| committed.contains(&s.id) || taken.contains(s.id.as_str());
        if !batches.insert(m.batch_id.as_str()) || m.sources.iter().all(done) {
            results.push((id.clone(), MessageResult::Duplicate));
        } else if m.sources.iter().any(done) {
            let requeue: Vec<SourceRef> = m.sources.iter().filter(|s| !done(s)).cloned().collect();
            warn!(message = %id, batch = %m.batch_id, requeue = requeue.len(), "manifest overlaps committed sources; rejected");
            results.push((id.clone(), MessageResult::Overlap { requeue }));
        } else {
            taken.extend(m.sources.iter().map(|s| s.id.as_str()));
            take.push(r);
        }
    }
    Classified { results, take }
}

/// A group's messages as Iceberg data file entries, or poison.
struct Converted<'a> {
    ready: Vec<Ready<'a>>,
    /// Messages whose entries cannot be converted: they fail alone.
    poisoned: Vec<(String, MessageResult)>,
}

/// Converts each message on its own: one whose file entries the table cannot hold (an unknown
/// partition spec, a malformed bound) is poison, and the others still commit.
fn convert<'a>(state: &TableState, group: &'a [(String, FileManifest)]) -> Converted<'a> {
    let schema = state.metadata.current_schema();
    let mut out = Converted { ready: vec![], poisoned: vec![] };
    for (id, m) in group {
        let files: Result<Vec<(i32, DataFile)>> = match state.metadata.partition_spec_by_id(m.spec_id) {
            None => Err(Error::Config(format!("it names partition spec {} which the table lacks", m.spec_id))),
            Some(spec) => m.files.iter().map(|f| Ok((m.spec_id, f.to_data_file(schema, spec)?))).collect(),
        };
        match files {
            Ok(files) => out.ready.push(Ready { id, manifest: m, files }),
            Err(e) => {
                warn!(message = %id, batch = %m.batch_id, error = %e, "manifest cannot be committed; poison");
                let reason = format!("manifest {}: {e}", m.batch_id);
                out.poisoned.push((id.clone(), MessageResult::Poison { reason }));
            }
        }
    }
    out
}

/// A snapshot id the table has not used.
fn fresh_snapshot_id(state: &TableState) -> i64 {
    loop {
        let id = rand::rng().random_range(1..i64::MAX);
        if state.metadata.snapshot_by_id(id).is_none() {
            return id;
        }
    }
}
