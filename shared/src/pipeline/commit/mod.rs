//! The committer role: the only code that writes Iceberg metadata and swaps table pointers.
//!
//! Every message is first checked against the table it names ([`admit`]: only what Floe's own
//! roles could have sent is taken; a refusal is poison, with its reason, and changes nothing).
//! A writer's create request for a table seen for the first time registers the table first
//! ([`Committer::create`]: the first definition wins, a later one is a duplicate).
//! For a batch of commit queue messages, per table under its lock: the file manifests become one
//! append snapshot ([`append`]: exactly-once per source object through the ledger), then the
//! rewrite requests whose removed files are all still live become one `replace` snapshot
//! ([`rewrite`]). Each snapshot is written (manifests, manifest list, metadata.json) and the
//! pointer swapped conditionally ([`Committer::publish`]); only then are the messages
//! acknowledged (by the caller, from [`MessageResult`]). A lost swap re-plans on the new state;
//! an unknown swap outcome leaves the messages for redelivery, which the pending records then
//! resolve.
//!
//! A warm committer keeps each table's metadata and manifest list in memory, with the parsed
//! entries of the manifests its next merge reads and a digest of the others (`table::manifests`,
//! `table::merge`). In steady state an append reads nothing but the pointer; a rewrite reads the
//! manifests it removes files from, and a merge of older bins their manifests: see
//! [`Committer::reads`] and [`Committer::parsed_entries`].

mod admit;
mod append;
mod rewrite;

pub use admit::{Senders, Tables};
pub use rewrite::REWRITES_PER_SNAPSHOT;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::Rng;
use tracing::{instrument, warn};

use crate::config::EngineConfig;
use crate::fault::FaultPoint;
use crate::message::{CommitRequest, CreateRequest, FileManifest, RewriteRequest, RowsTaken, SourceRef};
use crate::ports::{Committed, Lease, Message, Pointer, Ports};
use crate::table::maintain::{EXPIRE_BATCH, Expiry, gc_enabled};
use crate::table::{Manifests, SnapshotPlan, TableState, load_table};
use crate::{Error, PortError, Result, TableIdent};

/// What became of one message.
#[derive(Debug, Clone, PartialEq)]
pub enum MessageResult {
    /// Its files are in this snapshot (or it had none and its sources are recorded).
    Committed {
        /// The snapshot holding its rows.
        snapshot_id: i64,
    },
    /// A create request that registered its table. Acknowledge it.
    Created,
    /// Every source it names was already committed: a redelivery (or a create request for a
    /// table that exists). Acknowledge it.
    Duplicate,
    /// It overlaps sources committed by another batch. Its files are not committed; the
    /// listed sources (those not yet committed) must be written again. Acknowledge it.
    Overlap {
        /// The table the manifest was for.
        table: TableIdent,
        /// Sources to re-enqueue for writing.
        requeue: Vec<SourceRef>,
        /// Which rows of them the manifest's files held (`None`: unknown, an older writer's).
        rows: Option<RowsTaken>,
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
    /// A rewrite request planned on files that are no longer live (compacted again, or rewritten
    /// by a concurrent task): rejected; its added files are left to the orphan sweep. Acknowledge it.
    Stale {
        /// Why.
        reason: String,
    },
    /// Unreadable message: it can never succeed. Leave it to the dead-letter queue.
    Poison {
        /// Why.
        reason: String,
    },
}

impl MessageResult {
    /// Whether the message may be deleted from the queue.
    pub fn ack(&self) -> bool {
        matches!(
            self,
            MessageResult::Committed { .. }
                | MessageResult::Created
                | MessageResult::Duplicate
                | MessageResult::Overlap { .. }
                | MessageResult::Stale { .. }
        )
    }
}

/// The outcome of committing a batch of messages.
#[derive(Debug, Default)]
pub struct CommitOutcome {
    /// Per message id.
    pub results: Vec<(String, MessageResult)>,
    /// Snapshots created.
    pub snapshots: Vec<Landed>,
}

/// A snapshot the committer made.
#[derive(Debug, Clone, PartialEq)]
pub struct Landed {
    /// The table.
    pub table: TableIdent,
    /// The new snapshot.
    pub snapshot_id: i64,
    /// `append` or `replace`.
    pub operation: iceberg::spec::Operation,
    /// Data files added.
    pub files: usize,
    /// Rows added (for a replace, the rows of its added files).
    pub rows: u64,
    /// Rewrite requests it commits (0 for an append).
    pub rewrites: usize,
}

/// Per-message results of one table's commit, and the snapshots it made.
type TableCommit = (Vec<(String, MessageResult)>, Vec<Landed>);

/// One table's messages in a batch, by kind.
#[derive(Default)]
struct Group {
    appends: Vec<(String, FileManifest)>,
    rewrites: Vec<(String, RewriteRequest)>,
}

impl Group {
    fn ids(&self) -> impl Iterator<Item = String> + '_ {
        self.appends.iter().map(|(id, _)| id.clone()).chain(self.rewrites.iter().map(|(id, _)| id.clone()))
    }
}

struct Cached {
    state: TableState,
    manifests: Option<Manifests>,
}

/// Whether a planned snapshot landed.
enum Landing {
    /// The pointer names it now.
    Landed,
    /// Another commit moved the pointer first: plan again on the new state.
    Lost,
}

/// A committer: holds per-table state across batches (a warm Lambda keeps it).
pub struct Committer {
    cfg: EngineConfig,
    ports: Ports,
    owner: String,
    cache: HashMap<TableIdent, Cached>,
    /// Dropped records this committer wrote and has not cleaned up yet (so cleanup reads none).
    dropped: HashMap<String, crate::table::maintain::DroppedRecord>,
    reads: u64,
    /// Where tables live (`FLOE_WAREHOUSE`): a create request must place its table there.
    warehouse: Option<String>,
    /// The tables messages may name (any, if `None`).
    tables: Option<Tables>,
    /// Who may send which messages (anyone, if `None`).
    senders: Option<Senders>,
}

impl Committer {
    /// A committer with a unique owner id for the lock.
    pub fn new(cfg: EngineConfig, ports: Ports) -> Self {
        let owner = format!("committer-{}", uuid::Uuid::new_v4());
        Committer {
            cfg,
            ports,
            owner,
            cache: HashMap::new(),
            dropped: HashMap::new(),
            reads: 0,
            warehouse: None,
            tables: None,
            senders: None,
        }
    }

    /// Takes messages only for `tables`: one naming another table is refused (poison) before
    /// anything is read or changed.
    pub fn with_tables(mut self, tables: Tables) -> Self {
        self.tables = Some(tables);
        self
    }

    /// Takes appends and creates only from the writers, rewrites only from the compactors
    /// ([`Senders`]).
    pub fn with_senders(mut self, senders: Senders) -> Self {
        self.senders = Some(senders);
        self
    }

    /// Who sent `m`, as this committer believes it: what a copy it sends of `m` records as the
    /// original's sender. A committer that checks no senders believes no record either (any
    /// sender may write one): its copies name the sender the queue vouched for.
    pub fn origin<'m>(&self, m: &'m Message) -> Option<&'m str> {
        match &self.senders {
            Some(senders) => senders.origin(m),
            None => m.sender.as_deref(),
        }
    }

    /// Registers new tables only at their place under `warehouse` (`<warehouse>/<ns>.db/<name>`);
    /// without it, a create request's location must still end in `/<ns>.db/<name>`.
    pub fn with_warehouse(mut self, warehouse: &str) -> Self {
        self.warehouse = Some(warehouse.trim_end_matches('/').to_string());
        self
    }

    /// Manifest entries of `table` this committer keeps parsed (the share of its memory that
    /// grows with the table's recent commits rather than its size); `None` before it has read
    /// the table's manifests.
    pub fn parsed_entries(&self, table: &TableIdent) -> Option<usize> {
        self.cache.get(table).and_then(|c| c.manifests.as_ref()).map(Manifests::parsed_entries)
    }

    /// Counts `n` of `name` through the metrics port (for what the handlers refuse before a
    /// message reaches [`Committer::commit`]).
    pub fn count(&self, name: &'static str, n: u64) {
        self.ports.metrics.count(name, n);
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
        let Some((msgs, outcome)) = self.receive_and_commit(max, visibility).await? else {
            return Ok(None);
        };
        self.acknowledge(&msgs, &outcome).await?;
        Ok(Some(outcome))
    }

    /// [`Committer::run_once`] up to the acknowledgements: receives up to `max` messages and
    /// commits them, so a caller can first make durable what an acknowledgement ends (an
    /// overlapping manifest's sources), then [`Committer::acknowledge`]. `None` when the queue had
    /// nothing visible.
    pub async fn receive_and_commit(
        &mut self,
        max: usize,
        visibility: Duration,
    ) -> Result<Option<(Vec<Message>, CommitOutcome)>> {
        let msgs = self.ports.commit_queue.receive(max, visibility).await?;
        if msgs.is_empty() {
            return Ok(None);
        }
        let outcome = self.commit(&msgs).await;
        self.ports.faults.hit(FaultPoint::CommitterBeforeAck).await;
        Ok(Some((msgs, outcome)))
    }

    /// Acknowledges the messages `outcome` settles, re-sends the contended ones as fresh
    /// messages and releases those to retry.
    pub async fn acknowledge(&self, msgs: &[Message], outcome: &CommitOutcome) -> Result<()> {
        let by_id: HashMap<&str, &Message> = msgs.iter().map(|m| (m.id.as_str(), m)).collect();
        for (id, r) in &outcome.results {
            if let Some(m) = by_id.get(id.as_str()) {
                if r.ack() {
                    self.ports.commit_queue.ack(&m.receipt).await?;
                } else if matches!(r, MessageResult::Contended) {
                    // A fresh copy, so waiting for the lock never counts towards dead-lettering.
                    self.ports.commit_queue.send_for(m.body.clone(), self.origin(m)).await?;
                    self.ports.commit_queue.ack(&m.receipt).await?;
                } else if matches!(r, MessageResult::Retry { .. }) {
                    self.ports.commit_queue.release(&m.receipt).await?;
                }
            }
        }
        Ok(())
    }

    /// Commits a batch of messages; every message gets a result.
    pub async fn commit(&mut self, msgs: &[Message]) -> CommitOutcome {
        let mut out = CommitOutcome::default();
        let mut by_table: HashMap<TableIdent, Group> = HashMap::new();
        let mut creates = vec![];
        for m in msgs {
            let request = CommitRequest::from_json(&m.body);
            let admitted = match &request {
                Ok(r) => (self.senders.as_ref().map(|s| s.admit(r, m)).transpose())
                    .and_then(|_| self.tables.as_ref().map(|t| t.admit(r)).transpose()),
                Err(_) => Ok(None),
            };
            if let Err(reason) = admitted {
                warn!(message = %m.id, %reason, "commit message refused");
                out.results.push((m.id.clone(), MessageResult::Poison { reason }));
                continue;
            }
            match request {
                Ok(CommitRequest::Create(c)) => creates.push((m.id.clone(), c)),
                Ok(CommitRequest::Append(fm)) => {
                    by_table.entry(fm.table.clone()).or_default().appends.push((m.id.clone(), fm))
                }
                Ok(CommitRequest::Rewrite(r)) => {
                    by_table.entry(r.table.clone()).or_default().rewrites.push((m.id.clone(), r))
                }
                Err(e) => {
                    warn!(message = %m.id, error = %e, "unreadable commit message");
                    out.results.push((m.id.clone(), MessageResult::Poison { reason: e.to_string() }));
                }
            }
        }
        for (id, request) in creates {
            let result = self.create(&request).await;
            out.results.push((id, result));
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
                    out.results.extend(group.ids().map(|id| (id, MessageResult::Contended)));
                }
                Err(e) => {
                    if matches!(e, Error::UnsupportedFormat { .. } | Error::UnsupportedTableFeature { .. }) {
                        self.ports.metrics.count("unsupported_format", 1);
                    }
                    warn!(%table, error = %e, "commit failed; messages left for redelivery");
                    self.cache.remove(&table);
                    let reason = e.to_string();
                    out.results.extend(group.ids().map(|id| (id, MessageResult::Retry { reason: reason.clone() })));
                }
            }
        }
        if let Some(tables) = &self.tables {
            for (_, r) in &mut out.results {
                if let MessageResult::Overlap { table, requeue, .. } = r {
                    let uris: Vec<&str> = requeue.iter().map(|s| s.uri.as_str()).collect();
                    if let Err(reason) = tables.requeue(table, &uris, self.warehouse.as_deref()) {
                        warn!(%table, %reason, "overlapping manifest refused");
                        *r = MessageResult::Poison { reason };
                    }
                }
            }
        }
        let refused = out.results.iter().filter(|(_, r)| matches!(r, MessageResult::Poison { .. })).count();
        self.ports.metrics.count("messages_refused", refused as u64);
        out
    }

    /// Registers a table a writer defined, unless it exists: the catalog's create-if-absent
    /// makes the first definition win. Needs no lock (it never touches an existing table).
    async fn create(&mut self, request: &CreateRequest) -> MessageResult {
        let table = &request.table;
        let m = &request.metadata;
        if m.snapshots().next().is_some() || m.format_version() != iceberg::spec::FormatVersion::V2 {
            let reason = format!("create request for {table} is not a new format v2 table");
            return MessageResult::Poison { reason };
        }
        // A new table has no history: a log, refs or statistics would name files (another
        // table's metadata, say) that a later commit's cleanup could delete.
        let history = m.metadata_log().len() + m.history().len();
        let refs = crate::table::maintain::refs(m).is_none_or(|r| !r.is_empty());
        if history > 0 || refs || m.statistics_iter().next().is_some() || m.partition_statistics_iter().next().is_some()
        {
            let reason = format!("create request for {table} carries a metadata log, snapshot log, refs or statistics");
            return MessageResult::Poison { reason };
        }
        let place = match &self.warehouse {
            Some(w) => m.location() == crate::table::table_location(w, table),
            None => m.location().ends_with(&format!("/{}.db/{}", table.namespace, table.name)),
        };
        if !place {
            let reason = format!("create request for {table} places it at {}, not under the warehouse", m.location());
            return MessageResult::Poison { reason };
        }
        match self.ports.pointer.load(table).await {
            Ok(Some(_)) => return MessageResult::Duplicate,
            Ok(None) => {}
            Err(e) => return MessageResult::Retry { reason: e.to_string() },
        }
        match crate::pipeline::create::register_table(&self.ports, table, m).await {
            Ok((_, ours)) => {
                tracing::info!(%table, defined_by = %request.defined_by, ours, "create request settled");
                self.cache.remove(table);
                if ours { MessageResult::Created } else { MessageResult::Duplicate }
            }
            Err(e) => MessageResult::Retry { reason: e.to_string() },
        }
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

    #[instrument(skip_all, fields(table = %table, appends = group.appends.len(), rewrites = group.rewrites.len()))]
    async fn commit_table(&mut self, table: &TableIdent, group: &Group) -> Result<TableCommit> {
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

    /// Appends first (new rows wait for nothing), then rewrites. A failure of the rewrites
    /// leaves them for redelivery without undoing the appends' results.
    async fn commit_locked(&mut self, table: &TableIdent, group: &Group, lease: &mut Lease) -> Result<TableCommit> {
        let (mut results, mut landed) = if group.appends.is_empty() {
            (vec![], vec![])
        } else {
            self.commit_appends(table, &group.appends, lease).await?
        };
        if !group.rewrites.is_empty() {
            match self.commit_rewrites(table, &group.rewrites, lease).await {
                Ok((r, l)) => {
                    results.extend(r);
                    landed.extend(l);
                }
                Err(e) if results.is_empty() => return Err(e),
                Err(e) => {
                    warn!(%table, error = %e, "rewrites failed; left for redelivery");
                    self.cache.remove(table);
                    let reason = e.to_string();
                    results.extend(
                        group
                            .rewrites
                            .iter()
                            .map(|(id, _)| (id.clone(), MessageResult::Retry { reason: reason.clone() })),
                    );
                }
            }
        }
        Ok((results, landed))
    }

    /// The table's current state and manifests (cached while the pointer has not moved).
    async fn current(&mut self, table: &TableIdent) -> Result<(TableState, Option<Manifests>)> {
        let cached = self.state(table).await?;
        Ok((cached.state.clone(), cached.manifests.clone()))
    }

    /// Writes a planned snapshot's metadata.json and swaps the pointer to it, after checking the
    /// lease is still ours. On success the new state is cached and metadata files that fell out
    /// of the log are deleted (Iceberg's `write.metadata.delete-after-commit.enabled`).
    async fn publish(
        &mut self,
        table: &TableIdent,
        state: &TableState,
        plan: &SnapshotPlan,
        lease: &mut Lease,
        attempt: u32,
    ) -> Result<Landing> {
        self.reads += u64::from(plan.reads);
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
        let catalog_writes = self.ports.pointer.writes_metadata();
        if !catalog_writes {
            self.ports.store.put_if_absent(&plan.metadata_location, plan.metadata_json.clone()).await?;
        }
        self.ports.faults.hit(FaultPoint::CommitterAfterMetadataWrite).await;
        let swapped = if catalog_writes {
            // The catalog settles a lost answer itself, by looking for this snapshot.
            self.ports.pointer.commit(table, &state.pointer, &state.metadata, &plan.metadata).await
        } else {
            let swapped = self.swap(table, &state.pointer, &plan.metadata_location).await;
            swapped.map(|pointer| Committed { pointer, metadata: None })
        };
        match swapped {
            Ok(committed) => {
                self.ports.faults.hit(FaultPoint::CommitterAfterPointerSwap).await;
                // A catalog that merged others' changes answers with them: one that turned
                // `gc.enabled` off meanwhile stops the deletes below as well.
                let gc = gc_enabled(&plan.metadata) && committed.metadata.as_ref().is_none_or(gc_enabled);
                self.remember(table, plan, committed);
                if let Some((at, record)) = &plan.dropped {
                    self.dropped.insert(at.clone(), record.clone());
                }
                if gc && self.may_delete() {
                    let known = std::mem::take(&mut self.dropped);
                    let cleaned = plan.cleanup.run(self.ports.store.as_ref(), &known).await;
                    self.dropped = known;
                    for r in &plan.cleanup.dropped_records {
                        self.dropped.remove(r);
                    }
                    match cleaned {
                        Ok(n) => self.ports.metrics.count("files_deleted", n as u64),
                        Err(e) => {
                            warn!(%table, error = %e, "files of expired snapshots not all deleted; the orphan sweep will")
                        }
                    }
                }
                // Java deletes them on `delete-after-commit` alone; Floe also asks `gc.enabled`: a
                // table registered over another's metadata shares its log, and a file this
                // deletes would break the other table's history.
                if delete_after_commit(&plan.metadata) && gc && self.may_delete() && !catalog_writes {
                    // Only the table's own metadata files, whatever its log says.
                    let own = format!("{}/metadata/", plan.metadata.location().trim_end_matches('/'));
                    let own = |f: &&String| f.starts_with(&own) && f.ends_with(".metadata.json");
                    for old in plan.expired_metadata.iter().filter(own) {
                        if let Err(e) = self.ports.store.delete(old).await {
                            warn!(%table, file = %old, error = %e, "old metadata file not deleted");
                        }
                    }
                }
                Ok(Landing::Landed)
            }
            Err(PortError::Conflict(why)) => {
                warn!(%table, attempt, %why, "pointer swap lost; re-planning");
                self.cache.remove(table);
                if self.may_delete() && !catalog_writes && !self.maybe_landed(table, &plan.metadata_location).await {
                    let _ = self.ports.store.delete(&plan.metadata_location).await;
                }
                let pause = rand::rng().random_range(10..50 * u64::from(attempt));
                tokio::time::sleep(Duration::from_millis(pause)).await;
                Ok(Landing::Lost)
            }
            Err(e) => {
                // The swap may or may not have landed: the pending records decide later.
                self.cache.remove(table);
                Err(e.into())
            }
        }
    }

    /// Caches the table as a commit left it: the planned metadata and manifests, or, where the
    /// catalog wrote the metadata and answered with it, the catalog's (it may hold changes
    /// others made that it merged); the planned manifests only while they are the head's.
    fn remember(&mut self, table: &TableIdent, plan: &SnapshotPlan, committed: Committed) {
        let Committed { pointer, metadata } = committed;
        let (metadata, manifests) = match metadata {
            None => (plan.metadata.clone(), Some(plan.manifests.clone())),
            Some(m) => {
                let ours = m.current_snapshot_id() == plan.metadata.current_snapshot_id();
                (std::sync::Arc::new(m), ours.then(|| plan.manifests.clone()))
            }
        };
        self.cache.insert(table.clone(), Cached { state: TableState { pointer, metadata }, manifests });
    }

    /// What to expire with the next commit: past retention ([`Expiry::due`]). No snapshot until
    /// [`EXPIRE_BATCH`] are due; refs past their age go with the next commit. Each snapshot is
    /// recorded landed in the ledger first: a source pending under it, whose committer died
    /// before its own landed record, then still reads as committed once the table no longer
    /// holds the snapshot. A commit retried after a lost swap expires nothing: through a REST
    /// catalog an expiring commit asserts every ref, and another engine committing to a branch
    /// between read and commit would otherwise keep the new rows waiting.
    async fn expiring(&self, table: &TableIdent, state: &TableState, attempt: u32) -> Result<Expiry> {
        if !self.may_delete() || attempt > 1 {
            return Ok(Expiry::default()); // the catalog's service expires snapshots itself
        }
        if !gc_enabled(&state.metadata) {
            // Iceberg Java's `RemoveSnapshots` refuses to expire a table whose `gc.enabled` is
            // false ("deleting files may corrupt other tables"): nothing expires, no ref goes.
            return Ok(Expiry::default());
        }
        let mut due = Expiry::due(&state.metadata, chrono::Utc::now().timestamp_millis());
        if due.snapshots.len() < EXPIRE_BATCH {
            due.snapshots.clear();
            return Ok(due);
        }
        let appends: Vec<i64> = due
            .snapshots
            .iter()
            .copied()
            .filter(|id| {
                let snap = state.metadata.snapshot_by_id(*id);
                snap.is_some_and(|s| s.summary().operation == iceberg::spec::Operation::Append)
            })
            .collect();
        if !appends.is_empty() {
            self.ports.ledger.record_landed(table, &appends).await?;
        }
        Ok(due)
    }

    /// Files written longer ago than this are not committed ([`EngineConfig::max_commit_age`]).
    fn max_commit_age(&self) -> Option<Duration> {
        self.cfg.commit_age_limit(self.ports.pointer.manages_files())
    }

    /// Whether written files are past the commit age limit (files of unknown age are, where
    /// there is a limit: they come from a writer older than the limit itself).
    fn too_old(&self, written_ms: Option<i64>) -> bool {
        let Some(limit) = self.max_commit_age() else { return false };
        written_ms.is_none_or(|at| chrono::Utc::now().timestamp_millis().saturating_sub(at) > limit.as_millis() as i64)
    }

    /// The oldest a file may have been written to be committed now (ms since the epoch), if
    /// there is a commit age limit: see [`admit::check_files`].
    fn written_after(&self) -> Option<i64> {
        let limit = self.max_commit_age()?;
        Some(chrono::Utc::now().timestamp_millis().saturating_sub(limit.as_millis() as i64))
    }

    /// Whether a swap to `location` that answered `Conflict` may have landed all the same: an
    /// attempt whose answer was lost, retried after another commit moved the pointer on, leaves
    /// `location` in the table's metadata log, and deleting it would break the history every
    /// engine reads. Unknown (the table cannot be read now) counts as maybe.
    async fn maybe_landed(&self, table: &TableIdent, location: &str) -> bool {
        match load_table(self.ports.pointer.as_ref(), self.ports.store.as_ref(), table).await {
            Ok(Some(now)) => {
                now.pointer.metadata_location == location
                    || now.metadata.metadata_log().iter().any(|l| l.metadata_file == location)
            }
            Ok(None) | Err(_) => true,
        }
    }

    /// Whether the committer deletes files and expires snapshots itself: not where the
    /// catalog's service maintains the table's files (S3 Tables), whose storage refuses deletes.
    fn may_delete(&self) -> bool {
        !self.ports.pointer.manages_files()
    }

    fn out_of_attempts(&self, table: &TableIdent) -> Error {
        Error::CommitFailed {
            table: table.to_string(),
            attempts: self.cfg.commit_attempts,
            reason: "every compare-and-swap lost to a concurrent commit".into(),
        }
    }
}

/// Iceberg's `write.metadata.delete-after-commit.enabled` (default false; Floe sets it on the
/// tables it creates).
fn delete_after_commit(meta: &iceberg::spec::TableMetadata) -> bool {
    meta.properties().get(crate::table::PROP_DELETE_AFTER_COMMIT).is_some_and(|v| v == "true")
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
