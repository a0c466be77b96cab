//! Appends: file manifests become one `append` snapshot per table, exactly once per source
//! object. Pure steps ([`settle`], [`convert`], [`classify`]) decide what to take; the ledger
//! records the sources pending under the new snapshot id before the swap (one write a source)
//! and the snapshot landed after it (one write a commit).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::time::Instant;

use iceberg::spec::{DataFile, Operation, Schema};
use tracing::{info, warn};

use super::admit::{self, Found};
use super::{Committer, Landed, Landing, MessageResult, TableCommit, fresh_snapshot_id};
use crate::convert::evolve::rebase;
use crate::fault::FaultPoint;
use crate::message::{FileManifest, SourceRef};
use crate::ports::{Lease, SourceState};
use crate::table::{Change, TableState, plan_snapshot};
use crate::{Error, Result, TableIdent};

impl Committer {
    /// Commits a table's file manifests as one append snapshot (lock held).
    pub(super) async fn commit_appends(
        &mut self,
        table: &TableIdent,
        group: &[(String, FileManifest)],
        lease: &mut Lease,
    ) -> Result<TableCommit> {
        let started = Instant::now();
        let mut admitted = HashMap::new();
        for attempt in 1..=self.cfg.commit_attempts {
            let (state, manifests) = self.current(table).await?;
            crate::table::ensure_supported(&table.to_string(), &state.metadata)?; // before any ledger mark
            let ids: Vec<String> = group.iter().flat_map(|(_, m)| m.sources.iter().map(|s| s.id.clone())).collect();
            let known = self.ports.ledger.lookup(table, &ids).await?;
            let settled = settle(&state, known);
            if !settled.healed.is_empty() {
                let healed: Vec<i64> = settled.healed.iter().copied().collect();
                self.ports.ledger.record_landed(table, &healed).await?;
            }
            // Poison first, so that a message that can never commit claims none of its sources.
            let Converted { ready, poisoned } = convert(&state, group);
            let (ready, refused) = self.admit_appends(&state, ready, &settled.committed, &mut admitted).await?;
            let Classified { mut results, take } = classify(ready, &settled.committed);
            results.extend(poisoned);
            results.extend(refused);
            let before = results.len();
            let (take, aged): (Vec<_>, Vec<_>) = take.into_iter().partition(|r| !self.too_old(r.manifest.written_ms));
            let service_expires = !self.may_delete();
            results.extend(aged.into_iter().map(|r| aged_result(table, &r, &settled.unsettled, service_expires)));
            self.ports.metrics.count("aged_manifests", (results.len() - before) as u64);
            let Rebased { take, schema, changes, refused } = rebase_all(&state, take);
            for (id, result) in refused {
                warn!(%table, message = %id, ?result, "manifest written against a schema that moved on");
                self.ports.metrics.count("schema_conflicts", 1);
                results.push((id, result));
            }
            if take.is_empty() {
                return Ok((results, vec![]));
            }
            let sources: Vec<String> =
                take.iter().flat_map(|r| r.manifest.sources.iter().map(|s| s.id.clone())).collect();
            let taken_ids: Vec<String> = take.iter().map(|r| r.id.clone()).collect();
            let log = Changelog::of(&take);
            let files: Vec<(i32, DataFile)> = take.into_iter().flat_map(|r| r.files).collect();
            if files.is_empty() {
                // Only empty sources: no rows to double-count, nothing to snapshot.
                let snap = state.metadata.current_snapshot_id().unwrap_or(0);
                self.ports.ledger.record_committed(table, &sources, snap).await?;
                results.extend(taken_ids.into_iter().map(|id| (id, MessageResult::Committed { snapshot_id: snap })));
                return Ok((results, vec![]));
            }
            let rows: u64 = files.iter().map(|(_, f)| f.record_count()).sum();
            let nfiles = files.len();
            let snapshot_id = fresh_snapshot_id(&state);
            self.ports.ledger.record_pending(table, &sources, snapshot_id).await?;
            let mut extra = log.summary();
            if !changes.is_empty() {
                info!(%table, changes = %changes.join("; "), "schema evolves with this snapshot");
                extra.push(("floe.schema-changes", changes.join("; ")));
            }
            let store = self.ports.store.clone();
            let change =
                Change { expire: self.expiring(table, &state, attempt).await?, schema, ..Change::append(files) };
            let plan = plan_snapshot(store.as_ref(), &state, manifests, change, snapshot_id, &extra).await?;
            match self.publish(table, &state, &plan, lease, attempt).await? {
                Landing::Landed => {
                    self.ports.ledger.record_landed(table, &[snapshot_id]).await?;
                    self.ports.faults.hit(FaultPoint::CommitterAfterLedgerUpdate).await;
                    let ms = started.elapsed().as_millis() as u64;
                    info!(%table, snapshot_id, files = nfiles, rows, attempt, ms, "committed");
                    self.ports.metrics.count("commits", 1);
                    self.ports.metrics.count("committed_rows", rows);
                    self.ports.metrics.count("committed_sources", sources.len() as u64);
                    self.ports.metrics.observe("commit_latency_ms", ms as f64);
                    self.ports.metrics.observe("files_per_commit", nfiles as f64);
                    if let Some(oldest) = log.oldest_ms {
                        let lag = plan.metadata.last_updated_ms() - oldest;
                        self.ports.metrics.observe("freshness_lag_ms", lag.max(0) as f64);
                    }
                    results.extend(taken_ids.into_iter().map(|id| (id, MessageResult::Committed { snapshot_id })));
                    let landed = Landed {
                        table: table.clone(),
                        snapshot_id,
                        operation: Operation::Append,
                        files: nfiles,
                        rows,
                        rewrites: 0,
                    };
                    return Ok((results, vec![landed]));
                }
                Landing::Lost => continue,
            }
        }
        Err(self.out_of_attempts(table))
    }

    /// The messages whose files are what they say (there, of their sizes, Parquet of their
    /// schema: [`admit::check_files`]), and the others refused as poison, before classification so
    /// that a refused message claims none of its sources. Not read: the files of a message every
    /// source of which is committed (a duplicate: they may be compacted and gone since) or past
    /// the commit age limit (never registered: its sources go back to the writers). `known`
    /// keeps what was found across the attempts of one commit.
    async fn admit_appends<'a>(
        &self,
        state: &TableState,
        ready: Vec<Ready<'a>>,
        committed: &HashSet<String>,
        known: &mut HashMap<String, Option<Found>>,
    ) -> Result<(Vec<Ready<'a>>, Vec<(String, MessageResult)>)> {
        let meta = &state.metadata;
        let read = |r: &Ready<'_>| {
            let m = r.manifest;
            !m.sources.iter().all(|s| committed.contains(&s.id)) && !self.too_old(m.written_ms)
        };
        let unread: Vec<&Ready<'_>> = ready.iter().filter(|r| read(r) && !known.contains_key(r.id)).collect();
        let mut files = vec![];
        for r in &unread {
            let schema = r.manifest.file_schema(meta).expect("convert checked the schema");
            files.extend(r.manifest.files.iter().map(|f| (r.id.as_str(), schema, f)));
        }
        let mut refused = admit::check_files(&self.ports.store, files, self.written_after()).await;
        for r in unread {
            known.insert(r.id.clone(), refused.remove(r.id.as_str()));
        }
        let (mut admitted, mut poisoned) = (vec![], vec![]);
        for r in ready {
            match known.get(r.id).filter(|_| read(&r)).cloned().flatten() {
                Some(Found::Refused(why)) => {
                    warn!(message = %r.id, batch = %r.manifest.batch_id, %why, "manifest refused; poison");
                    let reason = format!("manifest {}: {why}", r.manifest.batch_id);
                    poisoned.push((r.id.clone(), MessageResult::Poison { reason }));
                }
                Some(Found::Unreadable(why)) => {
                    warn!(message = %r.id, batch = %r.manifest.batch_id, %why, "a file of the manifest cannot be read now");
                    let reason = format!("manifest {}: {why}", r.manifest.batch_id);
                    poisoned.push((r.id.clone(), MessageResult::Retry { reason }));
                }
                None => admitted.push(r),
            }
        }
        Ok((admitted, poisoned))
    }
}

/// What an append snapshot commits, for its summary: Iceberg's own `added-records` and friends
/// count rows and files; these name the sources and writer batches behind them, so that any
/// Iceberg reader can audit what landed when (`floe status` reads them for freshness).
struct Changelog {
    sources: usize,
    source_bytes: u64,
    source_rows: u64,
    batches: Vec<String>,
    oldest_ms: Option<i64>,
    newest_ms: Option<i64>,
}

/// Writer batch ids listed in a summary at most; beyond, only their count.
const LISTED_BATCHES: usize = 50;

impl Changelog {
    fn of(take: &[Ready<'_>]) -> Self {
        let sources = || take.iter().flat_map(|r| r.manifest.sources.iter());
        Changelog {
            sources: sources().count(),
            source_bytes: sources().map(|s| s.size).sum(),
            source_rows: sources().map(|s| s.rows).sum(),
            batches: take.iter().map(|r| r.manifest.batch_id.clone()).collect(),
            oldest_ms: sources().filter_map(|s| s.created_ms).min(),
            newest_ms: sources().filter_map(|s| s.created_ms).max(),
        }
    }

    fn summary(&self) -> Vec<(&'static str, String)> {
        let mut ids = self.batches.iter().take(LISTED_BATCHES).cloned().collect::<Vec<_>>().join(",");
        if self.batches.len() > LISTED_BATCHES {
            ids.push_str(&format!(",+{} more", self.batches.len() - LISTED_BATCHES));
        }
        let mut out = vec![
            ("floe.source-objects", self.sources.to_string()),
            ("floe.source-bytes", self.source_bytes.to_string()),
            ("floe.source-rows", self.source_rows.to_string()),
            ("floe.writer-batches", self.batches.len().to_string()),
            ("floe.batch-ids", ids),
        ];
        if let (Some(oldest), Some(newest)) = (self.oldest_ms, self.newest_ms) {
            out.push(("floe.oldest-source-ms", oldest.to_string()));
            out.push(("floe.newest-source-ms", newest.to_string()));
        }
        out
    }
}

/// What the ledger and the table's history say of a group's sources.
#[derive(Debug, Default, PartialEq)]
struct Settled {
    /// Sources whose rows are in the table.
    committed: HashSet<String>,
    /// Snapshots in the history that pending sources name and the ledger does not know landed:
    /// to be recorded landed (a committer died between its swap and its ledger update).
    healed: BTreeSet<i64>,
    /// Pending sources none of whose snapshots the table holds: attempts that never landed, or,
    /// where another engine expires snapshots, attempts that landed and were expired since.
    unsettled: HashSet<String>,
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
                    out.healed.insert(snap);
                    out.committed.insert(id);
                } else {
                    out.unsettled.insert(id);
                }
            }
        }
    }
    out
}

/// A manifest whose files are past the commit age limit is not committed: its files may be gone
/// (S3 Tables removes unreferenced files after 3 days; the orphan sweep deletes them past its
/// age). Its sources go back to the writers to be written afresh, as an overlapping manifest's
/// do. Where the catalog's service expires snapshots (`service_expires`: S3 Tables), a source
/// pending on a snapshot the table no longer holds may have landed and been expired since, and
/// writing it again could double it: that message is left to the dead-letter queue for an
/// operator. Where Floe expires them, it records each append snapshot landed before it expires
/// it, so such an attempt never landed, and its sources are written again as a fresh message's
/// would be.
fn aged_result(
    table: &TableIdent,
    r: &Ready<'_>,
    unsettled: &HashSet<String>,
    service_expires: bool,
) -> (String, MessageResult) {
    let m = r.manifest;
    if let Some(s) = m.sources.iter().find(|s| service_expires && unsettled.contains(&s.id)) {
        let reason = format!(
            "batch {} is past the commit age limit and its source {} is pending on a snapshot the table no \
             longer holds (never landed, or landed and expired since): check the table's history before \
             replaying its sources",
            m.batch_id, s.uri
        );
        warn!(%table, message = %r.id, %reason, "aged manifest left to the dead-letter queue");
        return (r.id.clone(), MessageResult::Poison { reason });
    }
    warn!(%table, message = %r.id, batch = %m.batch_id, "files older than the commit age limit; sources sent back to be written again");
    (r.id.clone(), MessageResult::Overlap { table: m.table.clone(), requeue: m.sources.clone(), rows: m.rows.clone() })
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

/// Duplicates (every source committed, or a copy of a manifest taken in this group, the same
/// in all but its write time: its fate is that manifest's) are settled; a manifest that overlaps
/// committed sources is rejected with the rest of its sources to requeue; one that otherwise
/// shares a source with a manifest taken in this group (a forgery of a batch, or another batch
/// of the same sources) is retried, judged again once that manifest's fate is known: it may
/// still be refused (its schema change, say), and a message settled on its word now would lose
/// the sources; the others are taken.
fn classify<'a>(ready: Vec<Ready<'a>>, committed: &HashSet<String>) -> Classified<'a> {
    let mut results = vec![];
    let mut take: Vec<Ready<'a>> = vec![];
    let mut taken: HashSet<&str> = HashSet::new();
    let mut batches: HashMap<&str, &FileManifest> = HashMap::new();
    for r in ready {
        let (id, m) = (r.id, r.manifest);
        let done = |s: &SourceRef| committed.contains(&s.id);
        if m.sources.iter().all(done) {
            results.push((id.clone(), MessageResult::Duplicate));
        } else if m.sources.iter().any(done) {
            let requeue: Vec<SourceRef> = m.sources.iter().filter(|s| !done(s)).cloned().collect();
            warn!(message = %id, batch = %m.batch_id, requeue = requeue.len(), "manifest overlaps committed sources; rejected");
            results
                .push((id.clone(), MessageResult::Overlap { table: m.table.clone(), requeue, rows: m.rows.clone() }));
        } else if batches.get(m.batch_id.as_str()).is_some_and(|first| same_but_written(first, m)) {
            results.push((id.clone(), MessageResult::Duplicate));
        } else if m.sources.iter().any(|s| taken.contains(s.id.as_str())) {
            let reason = format!(
                "manifest {} shares sources with another message of this commit: judged again once that one's fate is known",
                m.batch_id
            );
            results.push((id.clone(), MessageResult::Retry { reason }));
        } else {
            taken.extend(m.sources.iter().map(|s| s.id.as_str()));
            batches.insert(m.batch_id.as_str(), m);
            take.push(r);
        }
    }
    Classified { results, take }
}

/// Whether two manifests say the same in all but when their files were written (a writer that
/// wrote a batch again finds its files, named for their content, and sends the same manifest).
fn same_but_written(a: &FileManifest, b: &FileManifest) -> bool {
    (&a.table, &a.batch_id, a.schema_id, a.spec_id, &a.sources, &a.files, &a.evolution, &a.rows)
        == (&b.table, &b.batch_id, b.schema_id, b.spec_id, &b.sources, &b.files, &b.evolution, &b.rows)
}

/// A group's messages as Iceberg data file entries, or poison.
struct Converted<'a> {
    ready: Vec<Ready<'a>>,
    /// Messages whose entries cannot be converted: they fail alone.
    poisoned: Vec<(String, MessageResult)>,
}

/// Converts each message on its own: one whose file entries the table cannot hold (an unknown
/// partition spec or schema, a malformed bound) is poison, and the others still commit.
fn convert<'a>(state: &TableState, group: &'a [(String, FileManifest)]) -> Converted<'a> {
    let mut out = Converted { ready: vec![], poisoned: vec![] };
    for (id, m) in group {
        let named = admit::check_manifest_names(state.metadata.location(), m).map_err(Error::message);
        let files = named.and_then(|()| match m.file_schema(&state.metadata) {
            None => Err(Error::data(format!("it was written with schema {} which the table lacks", m.schema_id))),
            Some(schema) => data_files(state, m, schema, schema),
        });
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

/// A manifest's files as entries of a table whose schema is `schema`, written with `written`.
fn data_files(state: &TableState, m: &FileManifest, written: &Schema, schema: &Schema) -> Result<Vec<(i32, DataFile)>> {
    let Some(spec) = state.metadata.partition_spec_by_id(m.spec_id) else {
        return Err(Error::data(format!("it names partition spec {} which the table lacks", m.spec_id)));
    };
    m.files.iter().map(|f| Ok((m.spec_id, f.to_data_file_of(written, schema, spec)?))).collect()
}

/// The messages to commit once their schemas are settled, and the table's schema after them.
struct Rebased<'a> {
    take: Vec<Ready<'a>>,
    /// The new schema, if any message changes it.
    schema: Option<Schema>,
    /// The changes that made it, for the snapshot summary.
    changes: Vec<String>,
    /// Messages whose files hold field ids the table's schema now gives to other columns (or
    /// no longer has): acknowledged with their sources to write again.
    refused: Vec<(String, MessageResult)>,
}

/// Replays each taken message's schema changes, in order, onto the table's current schema
/// (`convert::evolve::rebase`). A message whose files no longer fit is refused with its
/// sources to write again; one whose change Iceberg would refuse (a name a partition field of
/// an older spec holds) is poison on its own. Files written with another schema than the one
/// they are committed under are converted anew, so that their bounds take the columns' types.
fn rebase_all<'a>(state: &TableState, take: Vec<Ready<'a>>) -> Rebased<'a> {
    let meta = &state.metadata;
    let mut schema: Schema = meta.current_schema().as_ref().clone();
    let mut last = meta.last_column_id();
    let mut out = Rebased { take: vec![], schema: None, changes: vec![], refused: vec![] };
    let mut kept = vec![];
    for r in take {
        let m = r.manifest;
        let Some(written) = m.file_schema(meta) else { unreachable!("convert checked the schema") };
        let proposed = m.evolution.as_ref().map_or(&[][..], |e| e.changes.as_slice());
        match rebase(&schema, last, written, proposed) {
            Ok(done) => {
                if let Some(s) = done.schema {
                    if let Err(e) = committable(meta, &s) {
                        let reason = format!("manifest {}: its schema change cannot be committed: {e}", m.batch_id);
                        out.refused.push((r.id.clone(), MessageResult::Poison { reason }));
                        continue;
                    }
                    schema = s;
                    out.changes.extend(proposed.iter().map(ToString::to_string));
                }
                last = done.last_column_id;
                kept.push(r);
            }
            Err(reason) => {
                warn!(message = %r.id, batch = %m.batch_id, %reason, "files do not fit the table's schema now; written again");
                out.refused.push((
                    r.id.clone(),
                    MessageResult::Overlap { table: m.table.clone(), requeue: m.sources.clone(), rows: m.rows.clone() },
                ));
            }
        }
    }
    let changed = !out.changes.is_empty();
    for mut r in kept {
        let m = r.manifest;
        if changed || m.evolution.is_some() || m.schema_id != meta.current_schema_id() {
            let written = m.file_schema(meta).expect("convert checked the schema");
            match data_files(state, m, written, &schema) {
                Ok(files) => r.files = files,
                // Not expected (the types were checked): the message fails alone.
                Err(e) => {
                    let reason = format!("manifest {}: {e}", m.batch_id);
                    out.refused.push((r.id.clone(), MessageResult::Poison { reason }));
                    continue;
                }
            }
        }
        out.take.push(r);
    }
    if changed {
        out.schema = Some(schema);
    }
    out
}

/// Whether the table's metadata accepts `schema` as its current one (Iceberg refuses, for
/// instance, a column named like a partition field of any of its specs).
fn committable(meta: &iceberg::spec::TableMetadata, schema: &Schema) -> Result<(), iceberg::Error> {
    iceberg::spec::TableMetadataBuilder::new_from_metadata(meta.clone(), None)
        .add_current_schema(schema.clone())?
        .build()
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(sources: &[&str]) -> FileManifest {
        let sources: Vec<SourceRef> = sources
            .iter()
            .map(|u| SourceRef {
                id: format!("{u}#v"),
                uri: u.to_string(),
                size: 1,
                rows: 1,
                version_id: None,
                created_ms: None,
            })
            .collect();
        FileManifest {
            version: crate::message::MESSAGE_VERSION,
            table: "web.events".parse().unwrap(),
            batch_id: crate::message::batch_key(&sources),
            schema_id: 0,
            spec_id: 0,
            sources,
            files: vec![],
            evolution: None,
            written_ms: None,
            rows: None,
        }
    }

    #[test]
    fn a_manifest_sharing_sources_with_one_taken_waits_for_its_fate_unless_it_is_the_same() {
        let (first, mut forged, partial, fresh, old) =
            (manifest(&["a", "b"]), manifest(&["a", "b"]), manifest(&["b", "c"]), manifest(&["d"]), manifest(&["e"]));
        forged.schema_id = 7;
        let mut copy = first.clone();
        copy.written_ms = Some(1);
        let ids: Vec<String> = (0..6).map(|i| format!("m{i}")).collect();
        let ready = [&first, &forged, &partial, &fresh, &old, &copy]
            .into_iter()
            .zip(&ids)
            .map(|(manifest, id)| Ready { id, manifest, files: vec![] })
            .collect();
        let committed: HashSet<String> = ["e#v".to_string()].into();
        let Classified { results, take } = classify(ready, &committed);
        let taken: Vec<&str> = take.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(taken, ["m0", "m3"]);
        let by_id: HashMap<&str, &MessageResult> = results.iter().map(|(id, r)| (id.as_str(), r)).collect();
        // A manifest of the first's batch that says otherwise, and one sharing a source with it,
        // are judged again later: the first may still be refused (its schema change, say), and
        // then their sources would be lost. A copy that says the same shares the first's fate.
        assert!(matches!(by_id["m1"], MessageResult::Retry { .. }), "{:?}", by_id["m1"]);
        assert!(matches!(by_id["m2"], MessageResult::Retry { .. }), "{:?}", by_id["m2"]);
        assert!(matches!(by_id["m4"], MessageResult::Duplicate), "every source committed: {:?}", by_id["m4"]);
        assert!(matches!(by_id["m5"], MessageResult::Duplicate), "the same manifest again: {:?}", by_id["m5"]);
    }
}
