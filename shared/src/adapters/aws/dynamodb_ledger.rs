//! `Ledger` on DynamoDB: one item per (table, source object), key `pk` =
//! `<table>|<source id>`, with `state` (`pending`/`committed`), `snapshot_id` (the last mark)
//! and `pending_ids` (a number set of every pending mark, which accumulate); one item per
//! landed snapshot, `landed|<table>|<snapshot id>`; quarantine records under
//! `quarantine|<source id>`, all in the same table.
//!
//! A commit writes each of its sources once (pending, before the swap) and its snapshot once
//! (landed, after it): a lookup reads the sources' items, then the landed items of the
//! snapshots they are pending under (one more BatchGetItem of a few keys). Sources with no
//! rows are written `committed` directly. Ledgers written before landed records (two writes a
//! source: pending, then `committed`) read the same; their `pending-snapshots|<table>` index
//! item is no longer read or written.
//!
//! With a time to live ([`DynamoDbLedger::with_ttl`], `FLOE_LEDGER_TTL_DAYS`), every record
//! carries `expires_at` (epoch seconds), which DynamoDB's TTL deletes some time after: a source
//! from its pending mark, a snapshot from its landed record (written after the marks of its
//! sources, so it outlives them), a quarantine record from its refusal. A committed source sent
//! again (which the writer skips) has its record's time and its snapshot's restarted
//! ([`Ledger::keep`]). The TTL must outlive every way the same object can be sent again (its
//! notification, a backfill, a replay): the module derives it from the landing bucket's expiry.
//! A pending mark that expires unsettled was an attempt that never landed, or one whose
//! snapshot's landed record has the same TTL, written later.

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use futures::StreamExt;

use super::{ensure_dynamodb_table, error};
use crate::ports::{Ledger, QuarantineRecord, SourceState};
use crate::{PortError, Rejection, TableIdent};

/// Idempotency records and quarantine in a DynamoDB table.
#[derive(Debug, Clone)]
pub struct DynamoDbLedger {
    client: aws_sdk_dynamodb::Client,
    table: String,
    ttl: Option<std::time::Duration>,
    consistent: bool,
}

/// The attribute DynamoDB's time to live reads.
const TTL_ATTRIBUTE: &str = "expires_at";

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn pk(table: &TableIdent, id: &str) -> String {
    format!("{table}|{id}")
}

fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Whether an item's time to live has passed: DynamoDB deletes such items some time after, and
/// until then they read as absent here (a source and its snapshot are forgotten together).
fn expired(item: &HashMap<String, AttributeValue>, now: i64) -> bool {
    let at = item.get(TTL_ATTRIBUTE).and_then(|v| v.as_n().ok()).and_then(|n| n.parse::<i64>().ok());
    at.is_some_and(|at| at <= now)
}

fn landed_pk(table: &TableIdent, snapshot_id: i64) -> String {
    format!("{LANDED}{table}|{snapshot_id}")
}

const QUARANTINE: &str = "quarantine|";
const LANDED: &str = "landed|";
/// Ledger marks (one conditional UpdateItem per source) in flight at once.
pub const MARKS_IN_FLIGHT: usize = 32;

impl DynamoDbLedger {
    /// The ledger in DynamoDB table `table`.
    pub fn new(client: aws_sdk_dynamodb::Client, table: &str) -> Self {
        DynamoDbLedger { client, table: table.to_string(), ttl: None, consistent: true }
    }

    /// Records expire `ttl` after they are written (none by default).
    pub fn with_ttl(mut self, ttl: Option<std::time::Duration>) -> Self {
        self.ttl = ttl;
        self
    }

    /// Lookups read eventually consistent items (half the read units): for the writers, whose
    /// lookup only spares work. A stale answer misses a mark made in the last second or so, so
    /// the source is written again and the committer, which reads consistently, drops it; a
    /// committed source never reads as anything else while its record lives.
    pub fn with_eventually_consistent_lookups(mut self) -> Self {
        self.consistent = false;
        self
    }

    /// Creates the ledger table if missing, and turns its time to live on when records carry
    /// one.
    pub async fn ensure_table(&self) -> Result<(), PortError> {
        ensure_dynamodb_table(&self.client, &self.table, "pk", None, None).await?;
        if self.ttl.is_none() {
            return Ok(());
        }
        let described = self.client.describe_time_to_live().table_name(&self.table).send().await;
        let on = described
            .map_err(|e| error::map("ledger time to live", e))?
            .time_to_live_description()
            .and_then(|d| d.time_to_live_status())
            .is_some_and(|s| {
                // Being disabled: someone chose so (DynamoDB would refuse a change meanwhile).
                use aws_sdk_dynamodb::types::TimeToLiveStatus::{Disabling, Enabled, Enabling};
                matches!(s, Enabled | Enabling | Disabling)
            });
        if !on {
            let spec = aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
                .attribute_name(TTL_ATTRIBUTE)
                .enabled(true)
                .build()
                .map_err(error::build)?;
            let out = self.client.update_time_to_live().table_name(&self.table).time_to_live_specification(spec);
            out.send().await.map_err(|e| error::map("ledger time to live", e))?;
        }
        Ok(())
    }

    /// When a record written now expires (epoch seconds), if records expire.
    fn expires_at(&self) -> Option<AttributeValue> {
        let ttl = self.ttl?;
        let secs = now_secs().saturating_add(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
        Some(AttributeValue::N(secs.to_string()))
    }

    /// Every item of these keys that exists, by BatchGetItem (100 keys a call, unprocessed keys
    /// asked again with backoff).
    async fn get_all(&self, keys: Vec<String>, what: &str) -> Result<Vec<HashMap<String, AttributeValue>>, PortError> {
        let mut out = vec![];
        for chunk in keys.chunks(100) {
            let mut pending: Vec<HashMap<String, AttributeValue>> =
                chunk.iter().map(|k| HashMap::from([("pk".to_string(), s(k))])).collect();
            let mut rounds = 0;
            while !pending.is_empty() {
                rounds += 1;
                let ka = KeysAndAttributes::builder()
                    .set_keys(Some(pending))
                    .consistent_read(self.consistent)
                    .build()
                    .map_err(super::error::build)?;
                let got = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, ka)
                    .send()
                    .await
                    .map_err(|e| error::map(what, e))?;
                out.extend(got.responses().and_then(|r| r.get(&self.table)).into_iter().flatten().cloned());
                pending = got
                    .unprocessed_keys()
                    .and_then(|u| u.get(&self.table))
                    .map(|k| k.keys().to_vec())
                    .unwrap_or_default();
                if !pending.is_empty() {
                    if rounds > 20 {
                        return Err(PortError::Throttled(format!("{what}: keys left unprocessed")));
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20 << rounds.min(6))).await;
                }
            }
        }
        Ok(out)
    }

    async fn record(&self, table: &TableIdent, ids: &[String], snapshot_id: i64, state: &str) -> Result<(), PortError> {
        // One conditional update per source, independent of each other: up to MARKS_IN_FLIGHT at
        // once (one at a time, a committer would top out at ~12,000 sources a minute at 5 ms a
        // write).
        let updates: Vec<_> = ids.iter().map(|id| self.mark(table, id, snapshot_id, state)).collect();
        let results: Vec<Result<(), PortError>> =
            futures::stream::iter(updates).buffer_unordered(MARKS_IN_FLIGHT).collect().await;
        results.into_iter().collect()
    }

    /// Restarts the time to live of the record `key`, if there is one and it has not expired
    /// (DynamoDB deletes expired items some time after): whether it did.
    async fn keep_one(&self, key: String) -> Result<bool, PortError> {
        let Some(at) = self.expires_at() else { return Ok(false) };
        let update = self.client.update_item().table_name(&self.table).key("pk", s(key));
        let r = update
            .update_expression(format!("SET {TTL_ATTRIBUTE} = :exp"))
            .condition_expression(format!("attribute_exists(pk) AND {TTL_ATTRIBUTE} > :now"))
            .expression_attribute_values(":exp", at)
            .expression_attribute_values(":now", AttributeValue::N(now_secs().to_string()))
            .send()
            .await;
        match r.map_err(|e| error::map("ledger", e)) {
            Ok(_) => Ok(true),
            Err(PortError::Conflict(_)) => Ok(false), // gone, or expired: nothing to keep
            Err(e) => Err(e),
        }
    }

    /// Records `snapshot_id` landed: one UpdateItem, which never shortens a time to live a
    /// resend restarted.
    async fn land(&self, table: &TableIdent, snapshot_id: i64) -> Result<(), PortError> {
        let update = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("pk", s(landed_pk(table, snapshot_id)))
            .expression_attribute_values(":snap", AttributeValue::N(snapshot_id.to_string()));
        let update = match self.expires_at() {
            Some(at) => update
                .update_expression(format!("SET snapshot_id = :snap, {TTL_ATTRIBUTE} = :exp"))
                .condition_expression(format!("attribute_not_exists({TTL_ATTRIBUTE}) OR {TTL_ATTRIBUTE} < :exp"))
                .expression_attribute_values(":exp", at),
            None => update.update_expression("SET snapshot_id = :snap"),
        };
        match update.send().await.map_err(|e| error::map("ledger landed", e)) {
            Ok(_) | Err(PortError::Conflict(_)) => Ok(()), // landed already, and kept longer
            Err(e) => Err(e),
        }
    }

    /// Marks one source `state` for `snapshot_id` (never downgrading a committed one); a pending
    /// mark adds to the marks before it.
    async fn mark(&self, table: &TableIdent, id: &str, snapshot_id: i64, state: &str) -> Result<(), PortError> {
        let update = self.client.update_item().table_name(&self.table).key("pk", s(pk(table, id)));
        let (mut set, mut update) = ("SET #s = :s, snapshot_id = :snap".to_string(), update);
        if let Some(at) = self.expires_at() {
            set.push_str(&format!(", {TTL_ATTRIBUTE} = :exp"));
            update = update.expression_attribute_values(":exp", at);
        }
        if state == "pending" {
            set.push_str(" ADD pending_ids :marks");
            update = update.expression_attribute_values(":marks", AttributeValue::Ns(vec![snapshot_id.to_string()]));
        }
        let r = update
            .update_expression(set)
            .condition_expression("attribute_not_exists(#s) OR #s = :pending")
            .expression_attribute_names("#s", "state")
            .expression_attribute_values(":s", s(state))
            .expression_attribute_values(":snap", AttributeValue::N(snapshot_id.to_string()))
            .expression_attribute_values(":pending", s("pending"))
            .send()
            .await;
        match r.map_err(|e| error::map("ledger", e)) {
            Ok(_) | Err(PortError::Conflict(_)) => Ok(()), // already committed: never downgraded
            Err(e) => Err(e),
        }
    }
}

#[async_trait]
impl Ledger for DynamoDbLedger {
    async fn lookup(&self, table: &TableIdent, ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        let by_pk: HashMap<String, &String> = ids.iter().map(|id| (pk(table, id), id)).collect();
        let mut out = vec![];
        let mut marks: BTreeSet<i64> = BTreeSet::new();
        let now = now_secs();
        let items = self.get_all(by_pk.keys().cloned().collect(), "ledger lookup").await?;
        for item in items.into_iter().filter(|i| !expired(i, now)) {
            let key = item.get("pk").and_then(|v| v.as_s().ok());
            let state = item.get("state").and_then(|v| v.as_s().ok());
            let snap = item.get("snapshot_id").and_then(|v| v.as_n().ok()).and_then(|n| n.parse().ok());
            if let (Some(id), Some(state), Some(snapshot_id)) = (key.and_then(|k| by_pk.get(k)), state, snap) {
                let st = if state == "committed" {
                    SourceState::Committed { snapshot_id }
                } else {
                    let marked = item.get("pending_ids").and_then(|v| v.as_ns().ok());
                    let mut snapshot_ids: Vec<i64> =
                        marked.into_iter().flatten().filter_map(|n| n.parse().ok()).collect();
                    snapshot_ids.push(snapshot_id);
                    snapshot_ids.sort_unstable();
                    snapshot_ids.dedup();
                    marks.extend(&snapshot_ids);
                    SourceState::Pending { snapshot_ids }
                };
                out.push(((*id).clone(), st));
            }
        }
        if marks.is_empty() {
            return Ok(out);
        }
        let keys = marks.iter().map(|m| landed_pk(table, *m)).collect();
        let landed: BTreeSet<i64> = self
            .get_all(keys, "ledger landed lookup")
            .await?
            .iter()
            .filter(|i| !expired(i, now))
            .filter_map(|item| item.get("snapshot_id").and_then(|v| v.as_n().ok()).and_then(|n| n.parse().ok()))
            .collect();
        for (_, st) in &mut out {
            if let SourceState::Pending { snapshot_ids } = st
                && let Some(snapshot_id) = snapshot_ids.iter().find(|m| landed.contains(m))
            {
                *st = SourceState::Committed { snapshot_id: *snapshot_id };
            }
        }
        Ok(out)
    }

    async fn record_pending(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        self.record(table, ids, snapshot_id, "pending").await
    }

    async fn record_landed(&self, table: &TableIdent, snapshot_ids: &[i64]) -> Result<(), PortError> {
        let snapshots: BTreeSet<i64> = snapshot_ids.iter().copied().collect();
        let writes: Vec<_> = snapshots.into_iter().map(|id| self.land(table, id)).collect();
        let results: Vec<Result<(), PortError>> =
            futures::stream::iter(writes).buffer_unordered(MARKS_IN_FLIGHT).collect().await;
        results.into_iter().collect()
    }

    async fn keep(&self, table: &TableIdent, committed: &[(String, i64)]) -> Result<(), PortError> {
        if self.ttl.is_none() || committed.is_empty() {
            return Ok(());
        }
        // The snapshots' landed records first, then the sources of those whose time restarted:
        // a source's record never outlives its snapshot's, whichever write fails, so a source
        // is forgotten whole, never left pending on a landed record that is gone.
        let snapshots: BTreeSet<i64> = committed.iter().map(|(_, s)| *s).collect();
        let firsts: Vec<_> = snapshots.iter().map(|s| self.keep_one(landed_pk(table, *s))).collect();
        let kept: Vec<Result<bool, PortError>> =
            futures::stream::iter(firsts).buffer_unordered(MARKS_IN_FLIGHT).collect().await;
        let mut alive = BTreeSet::new();
        for (snapshot, r) in snapshots.iter().zip(kept) {
            if r? {
                alive.insert(*snapshot);
            }
        }
        let thens: Vec<_> =
            committed.iter().filter(|(_, s)| alive.contains(s)).map(|(id, _)| self.keep_one(pk(table, id))).collect();
        let kept: Vec<Result<bool, PortError>> =
            futures::stream::iter(thens).buffer_unordered(MARKS_IN_FLIGHT).collect().await;
        kept.into_iter().try_for_each(|r| r.map(|_| ()))
    }

    async fn record_committed(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        self.record(table, ids, snapshot_id, "committed").await
    }

    async fn quarantine(&self, r: QuarantineRecord) -> Result<(), PortError> {
        let mut req = self
            .client
            .put_item()
            .table_name(&self.table)
            .item("pk", s(format!("{QUARANTINE}{}", r.source_id)))
            .item("source_id", s(&r.source_id))
            .item("uri", s(&r.uri))
            .item("kind", s(r.rejection.kind.as_str()))
            .item("reason", s(&r.rejection.reason))
            .item("at_ms", AttributeValue::N(r.at_ms.to_string()));
        if let Some(t) = &r.table {
            req = req.item("table", s(t));
        }
        if let Some(at) = self.expires_at() {
            req = req.item(TTL_ATTRIBUTE, at);
        }
        req.send().await.map_err(|e| error::map("quarantine", e))?;
        Ok(())
    }

    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        for id in source_ids {
            self.client
                .delete_item()
                .table_name(&self.table)
                .key("pk", s(format!("{QUARANTINE}{id}")))
                .send()
                .await
                .map_err(|e| error::map("unquarantine", e))?;
        }
        Ok(())
    }

    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        let mut out = vec![];
        let mut start = None;
        loop {
            let page = self
                .client
                .scan()
                .table_name(&self.table)
                .filter_expression("begins_with(pk, :q)")
                .expression_attribute_values(":q", s(QUARANTINE))
                .set_exclusive_start_key(start.take())
                .consistent_read(true)
                .send()
                .await
                .map_err(|e| error::map("quarantined", e))?;
            for item in page.items() {
                let get = |k: &str| item.get(k).and_then(|v| v.as_s().ok()).cloned();
                out.push(QuarantineRecord {
                    source_id: get("source_id").unwrap_or_default(),
                    uri: get("uri").unwrap_or_default(),
                    table: get("table"),
                    rejection: Rejection {
                        kind: get("kind").unwrap_or_default().into(),
                        reason: get("reason").unwrap_or_default(),
                    },
                    at_ms: item.get("at_ms").and_then(|v| v.as_n().ok()).and_then(|n| n.parse().ok()).unwrap_or(0),
                });
            }
            match page.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => break,
            }
        }
        out.sort_by(|a, b| (a.at_ms, &a.source_id).cmp(&(b.at_ms, &b.source_id)));
        Ok(out)
    }
}
