//! `Ledger` on DynamoDB: one item per (table, source object), key `pk` =
//! `<table>|<source id>`, with `state` (`pending`/`committed`), `snapshot_id` (the last mark)
//! and `pending_ids` (a number set of every pending mark, which accumulate); quarantine
//! records live in the same table under `quarantine|<source id>`.
//!
//! Per table, the item `pending-snapshots|<table>` indexes the snapshot ids that pending records
//! name (snapshot expiry reads it; a scan would not scale): the number set `ids`, and per id a
//! count `n_<id>` of sources that may still be pending under it. A mark is counted before its
//! source records are written (a retried call counts twice, which only keeps an id longer); when
//! a source moves from pending to committed, every mark it carried is counted down, and an id
//! whose count reaches zero leaves the set. So the set always covers every pending record,
//! whichever message heals which source, and ids of attempts that never landed leave it once
//! their sources are committed by another.
//!
//! With a time to live ([`DynamoDbLedger::with_ttl`], `FLOE_LEDGER_TTL_DAYS`), a committed
//! record and a quarantine record carry `expires_at` (epoch seconds), which DynamoDB's TTL
//! deletes some time after. Pending records and the pending index never expire: a pending
//! source is settled only by its commit, which then sets the time, and a committed source sent
//! again (which the writer skips) has its time restarted ([`Ledger::keep`]). The TTL must
//! outlive every way the same object can be sent again (its notification, a backfill, a
//! replay): the module derives it from the landing bucket's expiry.

use std::collections::HashMap;

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
}

/// The attribute DynamoDB's time to live reads.
const TTL_ATTRIBUTE: &str = "expires_at";

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn pk(table: &TableIdent, id: &str) -> String {
    format!("{table}|{id}")
}

const QUARANTINE: &str = "quarantine|";
const PENDING_INDEX: &str = "pending-snapshots|";
/// Ledger marks (one conditional UpdateItem per source) in flight at once.
pub const MARKS_IN_FLIGHT: usize = 32;

impl DynamoDbLedger {
    /// The ledger in DynamoDB table `table`.
    pub fn new(client: aws_sdk_dynamodb::Client, table: &str) -> Self {
        DynamoDbLedger { client, table: table.to_string(), ttl: None }
    }

    /// Committed and quarantine records expire `ttl` after they are written (none by default).
    pub fn with_ttl(mut self, ttl: Option<std::time::Duration>) -> Self {
        self.ttl = ttl;
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
        let now = chrono::Utc::now().timestamp();
        let secs = now.saturating_add(i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX));
        Some(AttributeValue::N(secs.to_string()))
    }

    /// Counts `delta` sources up or down under `snapshot_id` in the table's pending index; an id
    /// whose count reaches zero leaves the set.
    async fn count(&self, table: &TableIdent, snapshot_id: i64, delta: i64) -> Result<(), PortError> {
        let key = s(format!("{PENDING_INDEX}{table}"));
        let id = AttributeValue::Ns(vec![snapshot_id.to_string()]);
        let got = self
            .client
            .update_item()
            .table_name(&self.table)
            .key("pk", key.clone())
            .update_expression("ADD ids :id, #n :d")
            .expression_attribute_names("#n", format!("n_{snapshot_id}"))
            .expression_attribute_values(":id", id.clone())
            .expression_attribute_values(":d", AttributeValue::N(delta.to_string()))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
            .send()
            .await
            .map_err(|e| error::map("ledger pending index", e))?;
        let left = got.attributes().and_then(|a| a.get(&format!("n_{snapshot_id}"))).and_then(|v| v.as_n().ok());
        if left.and_then(|n| n.parse::<i64>().ok()).is_some_and(|n| n <= 0) {
            let r = self
                .client
                .update_item()
                .table_name(&self.table)
                .key("pk", key)
                .update_expression("DELETE ids :id REMOVE #n")
                .condition_expression("#n <= :zero")
                .expression_attribute_names("#n", format!("n_{snapshot_id}"))
                .expression_attribute_values(":id", id)
                .expression_attribute_values(":zero", AttributeValue::N("0".into()))
                .send()
                .await;
            match r.map_err(|e| error::map("ledger pending index", e)) {
                Ok(_) | Err(PortError::Conflict(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn record(&self, table: &TableIdent, ids: &[String], snapshot_id: i64, state: &str) -> Result<(), PortError> {
        let pending = state == "pending";
        if pending {
            self.count(table, snapshot_id, ids.len() as i64).await?;
        }
        // One conditional update per source, independent of each other: up to MARKS_IN_FLIGHT at
        // once (one at a time, two marks per source capped a committer at ~4,000 sources a
        // minute at 5 ms a write). Every update is awaited, even after one fails, so that the
        // pending marks of every source that did move to committed are counted down: a retry of
        // the call finds those sources committed already and would never count them.
        let updates: Vec<_> = ids.iter().map(|id| self.mark(table, id, snapshot_id, state)).collect();
        let results: Vec<Result<Option<Vec<i64>>, PortError>> =
            futures::stream::iter(updates).buffer_unordered(MARKS_IN_FLIGHT).collect().await;
        // Every mark carried by a source that moved from pending to committed, with how many.
        let mut settled: HashMap<i64, i64> = HashMap::new();
        let mut first_error = None;
        for r in results {
            match r {
                Ok(marks) => marks.into_iter().flatten().for_each(|m| *settled.entry(m).or_default() += 1),
                Err(e) => first_error = first_error.or(Some(e)),
            }
        }
        for (mark, n) in settled {
            self.count(table, mark, -n).await?;
        }
        first_error.map_or(Ok(()), Err)
    }

    /// Restarts one committed record's time to live; a record not committed is left alone.
    async fn keep_one(&self, table: &TableIdent, id: &str) -> Result<(), PortError> {
        let Some(at) = self.expires_at() else { return Ok(()) };
        let update = self.client.update_item().table_name(&self.table).key("pk", s(pk(table, id)));
        let r = update
            .update_expression(format!("SET {TTL_ATTRIBUTE} = :exp"))
            .condition_expression("#s = :committed")
            .expression_attribute_names("#s", "state")
            .expression_attribute_values(":exp", at)
            .expression_attribute_values(":committed", s("committed"))
            .send()
            .await;
        match r.map_err(|e| error::map("ledger", e)) {
            Ok(_) | Err(PortError::Conflict(_)) => Ok(()), // not (or no longer) committed
            Err(e) => Err(e),
        }
    }

    /// Marks one source `state` for `snapshot_id` (never downgrading a committed one). For a
    /// committed mark, returns the pending marks the source carried until now.
    async fn mark(
        &self,
        table: &TableIdent,
        id: &str,
        snapshot_id: i64,
        state: &str,
    ) -> Result<Option<Vec<i64>>, PortError> {
        let pending = state == "pending";
        let update = self.client.update_item().table_name(&self.table).key("pk", s(pk(table, id)));
        let update = if pending {
            update
                .update_expression("SET #s = :s, snapshot_id = :snap ADD pending_ids :marks")
                .expression_attribute_values(":marks", AttributeValue::Ns(vec![snapshot_id.to_string()]))
        } else if let Some(at) = self.expires_at() {
            update
                .update_expression(format!("SET #s = :s, snapshot_id = :snap, {TTL_ATTRIBUTE} = :exp"))
                .expression_attribute_values(":exp", at)
        } else {
            update.update_expression("SET #s = :s, snapshot_id = :snap")
        };
        let r = update
            .condition_expression("attribute_not_exists(#s) OR #s = :pending")
            .expression_attribute_names("#s", "state")
            .expression_attribute_values(":s", s(state))
            .expression_attribute_values(":snap", AttributeValue::N(snapshot_id.to_string()))
            .expression_attribute_values(":pending", s("pending"))
            .return_values(aws_sdk_dynamodb::types::ReturnValue::AllOld)
            .send()
            .await;
        match r {
            Ok(out) if !pending => {
                let old = out.attributes().cloned().unwrap_or_default();
                let marks = old.get("pending_ids").and_then(|v| v.as_ns().ok()).into_iter().flatten();
                let marks: std::collections::BTreeSet<i64> = marks.filter_map(|n| n.parse().ok()).collect();
                Ok(Some(marks.into_iter().collect()))
            }
            Ok(_) => Ok(None),
            Err(e) => match error::map("ledger", e) {
                PortError::Conflict(_) => Ok(None), // already committed: never downgraded
                other => Err(other),
            },
        }
    }
}

#[async_trait]
impl Ledger for DynamoDbLedger {
    async fn lookup(&self, table: &TableIdent, ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        let by_pk: HashMap<String, &String> = ids.iter().map(|id| (pk(table, id), id)).collect();
        let mut out = vec![];
        let keys: Vec<String> = by_pk.keys().cloned().collect();
        for chunk in keys.chunks(100) {
            let mut pending: Vec<HashMap<String, AttributeValue>> =
                chunk.iter().map(|k| HashMap::from([("pk".to_string(), s(k))])).collect();
            let mut rounds = 0;
            while !pending.is_empty() {
                rounds += 1;
                let ka = KeysAndAttributes::builder()
                    .set_keys(Some(pending))
                    .consistent_read(true)
                    .build()
                    .map_err(super::error::build)?;
                let got = self
                    .client
                    .batch_get_item()
                    .request_items(&self.table, ka)
                    .send()
                    .await
                    .map_err(|e| error::map("ledger lookup", e))?;
                for item in got.responses().and_then(|r| r.get(&self.table)).into_iter().flatten() {
                    let key = item.get("pk").and_then(|v| v.as_s().ok());
                    let state = item.get("state").and_then(|v| v.as_s().ok());
                    let snap = item.get("snapshot_id").and_then(|v| v.as_n().ok()).and_then(|n| n.parse().ok());
                    if let (Some(id), Some(state), Some(snapshot_id)) = (key.and_then(|k| by_pk.get(k)), state, snap) {
                        let st = if state == "committed" {
                            SourceState::Committed { snapshot_id }
                        } else {
                            let marks = item.get("pending_ids").and_then(|v| v.as_ns().ok());
                            let mut snapshot_ids: Vec<i64> =
                                marks.into_iter().flatten().filter_map(|n| n.parse().ok()).collect();
                            snapshot_ids.push(snapshot_id);
                            snapshot_ids.sort_unstable();
                            snapshot_ids.dedup();
                            SourceState::Pending { snapshot_ids }
                        };
                        out.push(((*id).clone(), st));
                    }
                }
                pending = got
                    .unprocessed_keys()
                    .and_then(|u| u.get(&self.table))
                    .map(|k| k.keys().to_vec())
                    .unwrap_or_default();
                if !pending.is_empty() {
                    if rounds > 20 {
                        return Err(PortError::Throttled("ledger lookup: keys left unprocessed".into()));
                    }
                    tokio::time::sleep(std::time::Duration::from_millis(20 << rounds.min(6))).await;
                }
            }
        }
        Ok(out)
    }

    async fn record_pending(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        self.record(table, ids, snapshot_id, "pending").await
    }

    async fn keep(&self, table: &TableIdent, ids: &[String]) -> Result<(), PortError> {
        if self.ttl.is_none() || ids.is_empty() {
            return Ok(());
        }
        let updates: Vec<_> = ids.iter().map(|id| self.keep_one(table, id)).collect();
        let results: Vec<Result<(), PortError>> =
            futures::stream::iter(updates).buffer_unordered(MARKS_IN_FLIGHT).collect().await;
        results.into_iter().collect()
    }

    async fn record_committed(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        self.record(table, ids, snapshot_id, "committed").await
    }

    async fn pending_snapshots(&self, table: &TableIdent) -> Result<std::collections::BTreeSet<i64>, PortError> {
        let got = self
            .client
            .get_item()
            .table_name(&self.table)
            .key("pk", s(format!("{PENDING_INDEX}{table}")))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| error::map("ledger pending index", e))?;
        let ids = got.item().and_then(|i| i.get("ids")).and_then(|v| v.as_ns().ok());
        Ok(ids.into_iter().flatten().filter_map(|n| n.parse().ok()).collect())
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
