//! Operator tools over the quarantine: what is still refused, and replaying it once the cause
//! is fixed (the object re-uploaded, a limit raised, the table changed).
//!
//! A quarantine record is resolved when its source object is committed since: [`outstanding`]
//! leaves those out, and an embedded [`replay`] removes the records of the objects it lands.
//! Objects refused again keep (or get) a record with the new reason. On AWS a replay re-sends
//! the objects' notifications to the writers' queue ([`replay_notifications`]); what they
//! commit drops out of [`outstanding`], what they refuse again is quarantined again.

use std::collections::BTreeMap;

use super::ingest::{IngestOptions, ingest};
use super::write::source_id;
use crate::config::{EngineConfig, TableConfig};
use crate::message::SourceRef;
use crate::ports::{Ledger, ObjectMeta, ObjectStore, Ports, QuarantineRecord, SourceState};
use crate::{PortError, Rejection, Result, TableIdent};

/// Quarantine records whose source object has not been committed since.
pub async fn outstanding(ledger: &dyn Ledger) -> Result<Vec<QuarantineRecord>> {
    let records = ledger.quarantined().await?;
    let mut by_table: BTreeMap<Option<TableIdent>, Vec<QuarantineRecord>> = BTreeMap::new();
    for r in records {
        let table = r.table.as_deref().and_then(|t| t.parse().ok());
        by_table.entry(table).or_default().push(r);
    }
    let mut out = vec![];
    for (table, records) in by_table {
        let committed: Vec<String> = match &table {
            Some(t) => {
                let ids: Vec<String> = records.iter().map(|r| r.source_id.clone()).collect();
                let states = ledger.lookup(t, &ids).await?;
                states
                    .into_iter()
                    .filter(|(_, s)| matches!(s, SourceState::Committed { .. }))
                    .map(|(id, _)| id)
                    .collect()
            }
            None => vec![],
        };
        out.extend(records.into_iter().filter(|r| !committed.contains(&r.source_id)));
    }
    out.sort_by(|a, b| (a.at_ms, &a.source_id).cmp(&(b.at_ms, &b.source_id)));
    Ok(out)
}

/// What a replay did, per object URI.
#[derive(Debug, Default)]
pub struct ReplayReport {
    /// Objects now committed (their records removed).
    pub landed: Vec<String>,
    /// Objects refused again, with the new reason (their records kept, updated).
    pub refused: Vec<(String, Rejection)>,
    /// Objects no longer in the store (records kept: the operator decides).
    pub vanished: Vec<String>,
    /// Records with no destination table (unrouted), when no table was given.
    pub unrouted: Vec<String>,
}

/// The tables (and routes) an object is written to again.
type RouteKey = Vec<(TableIdent, Option<String>)>;

/// Re-ingests quarantined objects (embedded mode) into the table each record names, or into
/// `table` if given. Objects are read at their current version. `router` gives the tables'
/// settings, and, for a table that splits its prefix's objects by value with others, the whole
/// group: each of those tables takes its own rows again (skipping what it committed).
pub async fn replay(
    engine: &EngineConfig,
    ports: &Ports,
    warehouse: &str,
    records: &[QuarantineRecord],
    table: Option<&TableIdent>,
    router: &crate::route::Router,
    opts: &IngestOptions,
) -> Result<ReplayReport> {
    let mut report = ReplayReport::default();
    let mut groups: BTreeMap<TableIdent, Vec<(&QuarantineRecord, ObjectMeta)>> = BTreeMap::new();
    for r in records {
        let Some(t) = table.cloned().or_else(|| r.table.as_deref().and_then(|t| t.parse().ok())) else {
            report.unrouted.push(r.uri.clone());
            continue;
        };
        match current(ports.store.as_ref(), &r.uri).await? {
            Some(meta) => groups.entry(t).or_default().push((r, meta)),
            None => report.vanished.push(r.uri.clone()),
        }
    }
    for (t, items) in groups {
        // Objects of one record table may belong to different prefixes: each goes where its
        // own URI routes it.
        let mut by_route: BTreeMap<RouteKey, (Vec<TableConfig>, Vec<usize>)> = BTreeMap::new();
        for (i, (_, m)) in items.iter().enumerate() {
            let tables = match table {
                Some(_) => vec![router.settings(&t)?],
                None => router.tables_of(&t, &m.uri)?,
            };
            let key = tables.iter().map(|c| (c.table.clone(), c.route.as_ref().map(ToString::to_string))).collect();
            by_route.entry(key).or_insert_with(|| (tables, vec![])).1.push(i);
        }
        for (_, (tables, picked)) in by_route {
            let objects: Vec<ObjectMeta> = picked.iter().map(|i| items[*i].1.clone()).collect();
            let ids: Vec<String> = objects.iter().map(source_id).collect();
            // Resolved only once every table of the group has committed the object: a record
            // is one per object, so a table that refuses it again keeps it listed.
            let mut committed_everywhere: std::collections::HashSet<String> = ids.iter().cloned().collect();
            for cfg in &tables {
                let done = ingest(engine, ports, cfg, warehouse, objects.clone(), opts).await?;
                report.refused.extend(done.quarantined);
                let states = ports.ledger.lookup(&cfg.table, &ids).await?;
                let here: std::collections::HashSet<&String> =
                    states.iter().filter(|(_, s)| matches!(s, SourceState::Committed { .. })).map(|(i, _)| i).collect();
                committed_everywhere.retain(|id| here.contains(id));
            }
            let mut resolved = vec![];
            for i in picked {
                let (r, m) = &items[i];
                if committed_everywhere.contains(&source_id(m)) {
                    // The old record (maybe of an older version of the object) and any new one.
                    resolved.extend([r.source_id.clone(), source_id(m)]);
                    report.landed.push(m.uri.clone());
                }
            }
            ports.ledger.remove_quarantined(&resolved).await?;
        }
    }
    Ok(report)
}

/// S3-style notification bodies for the objects of `records` that still exist (at their
/// current version), for the writers' queue; also the URIs that vanished.
pub async fn replay_notifications(
    store: &dyn ObjectStore,
    records: &[QuarantineRecord],
) -> Result<(Vec<Vec<SourceRef>>, Vec<String>)> {
    let mut sources = vec![];
    let mut vanished = vec![];
    for r in records {
        match current(store, &r.uri).await? {
            Some(m) => sources.push(SourceRef {
                id: source_id(&m),
                uri: m.uri,
                size: m.size,
                rows: 0,
                version_id: m.version_id,
                created_ms: m.modified_ms,
            }),
            None => vanished.push(r.uri.clone()),
        }
    }
    // Ten objects per message, as S3 batches them.
    Ok((sources.chunks(10).map(<[SourceRef]>::to_vec).collect(), vanished))
}

async fn current(store: &dyn ObjectStore, uri: &str) -> Result<Option<ObjectMeta>> {
    match store.head(uri).await {
        Ok(m) => Ok(Some(m)),
        Err(PortError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}
