//! Backfill: objects already in a bucket, sent to the writers as if they had just landed.
//!
//! Lists `s3://bucket/prefix`, keeps the keys with the given suffix (and, for one table, those
//! the deployment's routing sends to it), and sends their S3
//! notifications to the ingest queue, ten objects to a message, at most `rate` objects a second.
//! Idempotent through the ledger: a writer skips a source object (key and ETag) already
//! committed, so a backfill run twice, or over objects that already landed, lands nothing twice.

use std::time::{Duration, Instant};

use super::{Router, notification_for};
use crate::message::SourceRef;
use crate::pipeline::write::source_id;
use crate::ports::{ObjectStore, Queue};
use crate::{Error, Result};

/// What to backfill.
#[derive(Debug, Clone)]
pub struct Backfill {
    /// `s3://bucket/prefix` to list.
    pub prefix: String,
    /// Only keys ending with this (empty: every key).
    pub suffix: String,
    /// At most this many objects a second (0: no limit).
    pub rate: u32,
    /// Only objects the deployment routes to this table, by this routing (`--table`).
    pub only: Option<(crate::TableIdent, Router)>,
}

/// Objects a backfill would send, in key order.
pub async fn objects(store: &dyn ObjectStore, b: &Backfill) -> Result<Vec<SourceRef>> {
    if !b.prefix.starts_with("s3://") {
        return Err(Error::message(format!("backfill takes an s3://bucket/prefix, got `{}`", b.prefix)));
    }
    let mut listed = store.list(&b.prefix).await?;
    listed.retain(|o| o.uri.ends_with(&b.suffix) && o.size > 0);
    if let Some((table, router)) = &b.only {
        if !router.reaches(table) {
            return Err(Error::message(format!("no route of the deployment sends objects to {table}")));
        }
        let mut kept = vec![];
        for o in listed {
            if router.route(&o.uri)?.iter().any(|c| c.table == *table) {
                kept.push(o);
            }
        }
        listed = kept;
    }
    Ok(listed
        .into_iter()
        .map(|o| SourceRef {
            id: source_id(&o),
            uri: o.uri,
            size: o.size,
            rows: 0,
            version_id: o.version_id,
            created_ms: o.modified_ms,
        })
        .collect())
}

/// Sends `sources` to `queue` as notifications of ten, at most `rate` objects a second,
/// calling `progress` with the number sent so far. Returns how many were sent.
pub async fn send(queue: &dyn Queue, sources: &[SourceRef], rate: u32, progress: &dyn Fn(u64)) -> Result<u64> {
    const PER_MESSAGE: usize = 10;
    let started = Instant::now();
    let mut sent = 0u64;
    for chunk in sources.chunks(PER_MESSAGE) {
        if rate > 0 {
            // Never ahead of the rate: the n-th object leaves no earlier than n / rate seconds in.
            let due = Duration::from_secs_f64(sent as f64 / f64::from(rate));
            if let Some(wait) = due.checked_sub(started.elapsed()) {
                tokio::time::sleep(wait).await;
            }
        }
        queue.send(notification_for(chunk)).await?;
        sent += chunk.len() as u64;
        progress(sent);
    }
    Ok(sent)
}
