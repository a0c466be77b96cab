//! The committer function: an SQS batch of commit queue messages (claim checks resolved) ->
//! [`Committer::commit`] -> partial batch failures for what is not done. Overlapping manifests'
//! sources go back to the writers, contended messages are sent again, and refused ones (poison,
//! or a claim check that is not one of Floe's) go to the dead-letter queue with their reason.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use futures::StreamExt as _;
use tokio::sync::Mutex;
use tracing::{error, warn};

use super::{backoff, failures};
use crate::adapters::aws::SqsQueue;
use crate::fault::FaultPoint;
use crate::pipeline::commit::{Committer, MessageResult, Senders, Tables};
use crate::ports::{Message, ObjectStore, Queue};
use crate::route::Router;
use crate::{PortError, Result};

/// Claim checks read (and, once their messages are settled, deleted) at once by a committer
/// invocation: one at a time, S3's ~100-200 ms per request capped a committer at a handful of
/// claim-checked messages a second (`floe bench-committer`).
const CLAIMS_IN_FLIGHT: usize = 16;

/// What the committer function needs besides its ports and queues.
#[derive(Debug, Clone)]
pub struct CommitterEnv {
    /// The tables it takes messages for: those `FLOE_CONFIG` (or `FLOE_DEFAULT_TABLE`) routes
    /// objects to and those of `FLOE_COMPACT_TABLES`.
    pub tables: Tables,
    /// Where a refused message goes, unchanged, with its reason (`FLOE_DLQ_URL`, the commit
    /// queue's dead-letter queue); without one it fails until the queue's redrive policy moves it
    /// there, and its reason is only in the log.
    pub dead_letters: Option<SqsQueue>,
    /// Who may send which messages (`FLOE_APPEND_SENDERS`, `FLOE_REWRITE_SENDERS`,
    /// `FLOE_COMMITTER_SENDER`); `None`: any sender the queue's policy lets through.
    pub senders: Option<Senders>,
}

impl CommitterEnv {
    /// `committer`, admitting only the tables and senders these settings name.
    pub fn admitting(&self, committer: Committer) -> Committer {
        let committer = committer.with_tables(self.tables.clone());
        match &self.senders {
            Some(senders) => committer.with_senders(senders.clone()),
            None => committer,
        }
    }
}

/// The committer function's settings, looked up through `var`: `FLOE_CONFIG`,
/// `FLOE_DEFAULT_TABLE`, `FLOE_COMPACT_TABLES`, `FLOE_DLQ_URL` and the senders'.
pub async fn committer_env(
    var: impl Fn(&str) -> Option<String>,
    store: &dyn ObjectStore,
    clients: &crate::adapters::aws::Clients,
) -> Result<CommitterEnv> {
    let vars = crate::settings::Vars::new(&var);
    let config = match vars.get("FLOE_CONFIG") {
        Some(loc) => Some(super::load_floe_toml(&loc, store).await?),
        None => None,
    };
    // The compactor's own default: FLOE_COMPACT_TABLES, else the default table.
    let default = vars.default_table()?;
    let compacted = vars.tables("FLOE_COMPACT_TABLES")?.unwrap_or_else(|| vec![default.clone()]);
    Ok(CommitterEnv {
        tables: Tables::new(Router::new(config, default), compacted),
        dead_letters: vars.get("FLOE_DLQ_URL").map(|url| SqsQueue::new(clients.sqs.clone(), &url)),
        senders: senders(&vars)?,
    })
}

/// The senders' settings: principal ids (a role's unique id, `AROA…`, or a user's, `AIDA…`),
/// comma-separated. `FLOE_APPEND_SENDERS` and `FLOE_COMMITTER_SENDER` go together;
/// `FLOE_REWRITE_SENDERS` may be left out where nothing compacts (no rewrite is then admitted).
pub(super) fn senders(vars: &crate::settings::Vars) -> Result<Option<Senders>> {
    let ids = |name: &str| -> Result<Option<Vec<String>>> {
        let Some(list) = vars.get(name) else { return Ok(None) };
        list.split(',')
            .map(|id| {
                let id = id.trim();
                if !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric()) {
                    Ok(id.to_string())
                } else {
                    Err(crate::Error::Config(format!(
                        "{name} must list principal ids (a role's unique id, AROA…, or a user's), comma-separated, \
                         got `{id}`"
                    )))
                }
            })
            .collect::<Result<Vec<_>>>()
            .map(Some)
    };
    let (appends, rewrites, committer) =
        (ids("FLOE_APPEND_SENDERS")?, ids("FLOE_REWRITE_SENDERS")?, ids("FLOE_COMMITTER_SENDER")?);
    match (appends, rewrites, committer) {
        (None, None, None) => {
            warn!(
                "FLOE_APPEND_SENDERS is not set: the committer admits appends and rewrites from any sender the commit \
                 queue's policy lets through"
            );
            Ok(None)
        }
        (Some(appends), rewrites, Some(committer)) if committer.len() == 1 => {
            let (committer, rewrites) = (committer.concat(), rewrites.unwrap_or_default());
            if appends.contains(&committer) || rewrites.contains(&committer) {
                return Err(crate::Error::Config(format!(
                    "FLOE_COMMITTER_SENDER ({committer}) is also listed in FLOE_APPEND_SENDERS or FLOE_REWRITE_SENDERS: \
                     the committer's copies would be admitted as its own, whoever sent the original"
                )));
            }
            Ok(Some(Senders::new(appends, rewrites, committer)))
        }
        (_, _, Some(committer)) if committer.len() != 1 => {
            Err(crate::Error::Config("FLOE_COMMITTER_SENDER must be one principal id, the committer role's".into()))
        }
        _ => Err(crate::Error::Config(
            "FLOE_APPEND_SENDERS and FLOE_COMMITTER_SENDER go together (the committer's own copies name their \
             original's sender): set both, or neither"
                .into(),
        )),
    }
}

/// A record's sender, as SQS vouches for it, and the original's sender a committer's copy
/// records ([`Message::sender`], [`Message::sent_for`]).
fn senders_of(m: &aws_lambda_events::event::sqs::SqsMessage) -> (Option<String>, Option<String>) {
    let sent_for =
        m.message_attributes.get(crate::adapters::aws::SENT_FOR_ATTRIBUTE).and_then(|a| a.string_value.clone());
    (m.attributes.get("SenderId").cloned(), sent_for)
}

/// A record of a committer event that cannot be read.
#[derive(Debug)]
pub struct Unread {
    /// Its message id.
    pub id: String,
    /// Why.
    pub reason: String,
    /// Whether it never can be (a claim check that is not one of Floe's, or too large): it is
    /// refused, rather than tried again.
    pub refused: bool,
}

/// Claim-checked bodies one invocation holds at most (each reserved from its HEAD before it is
/// read): the messages past it are left for redelivery, so that a batch of claim checks, each
/// under the per-object cap, cannot add up to more than the committer's memory.
const CLAIM_BYTES_PER_INVOCATION: u64 = 512 << 20;

/// Messages of a committer invocation, with claim checks resolved (`CLAIMS_IN_FLIGHT` at once,
/// in the event's order, [`CLAIM_BYTES_PER_INVOCATION`] in all).
pub async fn commit_messages(queue: &SqsQueue, event: &SqsEvent) -> Vec<std::result::Result<Message, Unread>> {
    let held = std::sync::atomic::AtomicU64::new(0);
    let each: Vec<_> = event.records.iter().map(|m| commit_message(queue, m, &held)).collect();
    futures::stream::iter(each).buffered(CLAIMS_IN_FLIGHT).collect().await
}

/// One record of a committer event, its claim check resolved.
async fn commit_message(
    queue: &SqsQueue,
    m: &aws_lambda_events::event::sqs::SqsMessage,
    held: &std::sync::atomic::AtomicU64,
) -> std::result::Result<Message, Unread> {
    use std::sync::atomic::Ordering;
    let id = m.message_id.clone().unwrap_or_default();
    let raw = m.body.as_deref().unwrap_or_default();
    let (sender, sent_for) = senders_of(m);
    // A claim check's size is reserved from its HEAD before it is read, so the claim checks read
    // at once cannot pass the budget between them.
    let reserve = |size: u64| {
        if held.fetch_add(size, Ordering::SeqCst) + size > CLAIM_BYTES_PER_INVOCATION {
            held.fetch_sub(size, Ordering::SeqCst);
            return Err(PortError::Throttled(format!(
                "this invocation holds {CLAIM_BYTES_PER_INVOCATION} bytes of claim checks already: left for redelivery"
            )));
        }
        Ok(())
    };
    match queue.resolve_reserving(raw, reserve).await {
        Ok(body) => Ok(Message {
            sender,
            sent_for,
            id,
            receipt: m.receipt_handle.clone().unwrap_or_default(),
            receive_count: m.attributes.get("ApproximateReceiveCount").and_then(|c| c.parse().ok()).unwrap_or(1),
            body,
        }),
        Err(e) => {
            let refused = matches!(e, PortError::Invalid(_));
            warn!(message = %id, error = %e, refused, "claim check unreadable");
            Err(Unread { id, reason: e.to_string(), refused })
        }
    }
}

/// [`handle_committer_with`] without a dead-letter queue of its own: refused messages fail until
/// the queue's redrive policy moves them.
pub async fn handle_committer(
    committer: &Mutex<Committer>,
    queue: &SqsQueue,
    requeue: &dyn Queue,
    event: SqsEvent,
) -> SqsBatchResponse {
    handle_committer_with(committer, queue, requeue, None, event).await
}

/// The committer function: one snapshot per table for the batch; only messages that are not
/// done are reported as failures. Sources of an overlapping manifest are sent back to the
/// ingest queue (`requeue`) as S3 notifications, so a writer picks them up again. Messages that
/// found the lock held for the whole wait are sent again as new messages (the same body, a
/// claim check stays a claim check) and the originals acknowledged: lock contention must never
/// count towards a dead-letter queue's receive limit. A refused message (poison: it can never
/// commit, and nothing was changed for it) goes to `dead_letters` as it arrived, its reason in
/// the `floe-refused` message attribute, and is acknowledged; without `dead_letters`, or if that
/// send fails, it fails and is redelivered. The claim check of a message settled otherwise is
/// deleted (a contended one keeps its own: its copy points to it; so does a dead-lettered one),
/// so claim checks live only as long as their messages may still be read: the bucket's
/// lifecycle rule for them is a backstop, which must outlast any message left unsettled
/// (dead-letter queues included).
pub async fn handle_committer_with(
    committer: &Mutex<Committer>,
    queue: &SqsQueue,
    requeue: &dyn Queue,
    dead_letters: Option<&SqsQueue>,
    event: SqsEvent,
) -> SqsBatchResponse {
    let mut failed = vec![];
    let mut refused = vec![];
    let mut msgs = vec![];
    for m in commit_messages(queue, &event).await {
        match m {
            Ok(m) => msgs.push(m),
            Err(Unread { id, reason, refused: true }) => refused.push((id, reason)),
            Err(Unread { id, .. }) => failed.push(id),
        }
    }
    if !refused.is_empty() {
        committer.lock().await.count("messages_refused", refused.len() as u64);
    }
    let outcome = committer.lock().await.commit(&msgs).await;
    committer.lock().await.faults().hit(FaultPoint::CommitterBeforeAck).await;
    let raw =
        |id: &str| event.records.iter().find(|r| r.message_id.as_deref() == Some(id)).and_then(|r| r.body.clone());
    // Who each message's copies (sent again, or to the dead-letter queue) are sent for.
    let origins: std::collections::HashMap<String, String> = {
        let committer = committer.lock().await;
        event
            .records
            .iter()
            .filter_map(|r| {
                let (sender, sent_for) = senders_of(r);
                let m = Message {
                    id: String::new(),
                    receipt: String::new(),
                    body: String::new(),
                    receive_count: 1,
                    sender,
                    sent_for,
                };
                Some((r.message_id.clone()?, committer.origin(&m)?.to_string()))
            })
            .collect()
    };
    let origin = |id: &str| origins.get(id).map(String::as_str);
    let mut settled = vec![];
    for (id, r) in outcome.results {
        if !matches!(r, MessageResult::Contended | MessageResult::Poison { .. }) {
            settled.push(id.clone());
        }
        match r {
            MessageResult::Contended => {
                let sent = match raw(&id) {
                    Some(body) => queue.send_for(body, origin(&id)).await.map_err(|e| e.to_string()),
                    None => Err("the message vanished from the event".into()),
                };
                if let Err(e) = sent {
                    warn!(message = %id, error = %e, "could not re-enqueue a contended message; left for redelivery");
                    failed.push(id);
                }
            }
            MessageResult::Overlap { requeue: sources, .. } => {
                if let Err(e) = send_notifications(requeue, &sources).await {
                    error!(message = %id, error = %e, "could not re-enqueue the sources of an overlapping manifest");
                    failed.push(id);
                }
            }
            MessageResult::Poison { reason } => refused.push((id, reason)),
            r if r.ack() => {}
            r => {
                warn!(message = %id, result = ?r, "not committed now; left for redelivery");
                failed.push(id);
            }
        }
    }
    for (id, reason) in refused {
        let sent = match (dead_letters, raw(&id)) {
            (Some(dlq), Some(body)) => dlq.send_refused(body, &reason, origin(&id)).await.map_err(|e| e.to_string()),
            (Some(_), None) => Err("the message vanished from the event".into()),
            (None, _) => Err("no dead-letter queue (FLOE_DLQ_URL): left to the queue's redrive policy".into()),
        };
        match sent {
            Ok(()) => warn!(message = %id, %reason, "refused message sent to the dead-letter queue"),
            Err(e) => {
                warn!(message = %id, %reason, error = %e, "refused message left for redelivery");
                failed.push(id);
            }
        }
    }
    let bodies: Vec<String> = settled.iter().filter(|id| !failed.contains(id)).filter_map(|id| raw(id)).collect();
    let discards: Vec<_> = bodies.iter().map(|body| queue.discard_claim(body)).collect();
    futures::stream::iter(discards).buffer_unordered(CLAIMS_IN_FLIGHT).collect::<Vec<()>>().await;
    if !failed.is_empty() {
        match serde_json::to_value(&event) {
            Ok(ev) => backoff::retry_soon(queue.client(), &backoff::failed_records(&ev, &failed)).await,
            Err(e) => warn!(error = %e, "failed messages wait their full visibility timeout"),
        }
    }
    failures(failed)
}

/// Sources per re-enqueued notification: a message stays far below SQS's 256 KiB whatever the
/// keys, and a writer batch picks up a few at a time.
const SOURCES_PER_NOTIFICATION: usize = 10;

/// Sends `sources` back to the writers' queue, a few per notification.
pub(super) async fn send_notifications(
    queue: &dyn Queue,
    sources: &[crate::message::SourceRef],
) -> Result<(), PortError> {
    for chunk in sources.chunks(SOURCES_PER_NOTIFICATION) {
        queue.send(notification_for(chunk)).await?;
    }
    Ok(())
}

/// A minimal S3 notification naming `sources`, for re-enqueueing them to the writers.
pub fn notification_for(sources: &[crate::message::SourceRef]) -> String {
    let records: Vec<serde_json::Value> = sources
        .iter()
        .filter_map(|s| {
            let rest = s.uri.strip_prefix("s3://")?;
            let (bucket, key) = rest.split_once('/')?;
            let version = s.id.rsplit_once('#').map(|(_, v)| v).unwrap_or_default();
            let key: String =
                percent_encoding::utf8_percent_encode(key, percent_encoding::NON_ALPHANUMERIC).to_string();
            let mut object = serde_json::json!({"key": key, "size": s.size, "eTag": version});
            if let Some(v) = &s.version_id {
                object["versionId"] = serde_json::Value::String(v.clone());
            }
            let mut record = serde_json::json!({
                "eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
                "s3": {"bucket": {"name": bucket}, "object": object}
            });
            // The object's creation time travels on, so its freshness lag counts from there.
            if let Some(at) = s.created_ms.and_then(chrono::DateTime::from_timestamp_millis) {
                record["eventTime"] =
                    serde_json::Value::String(at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
            }
            Some(record)
        })
        .collect();
    serde_json::json!({ "Records": records }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::CommitRequest;

    fn parse(pairs: &[(&str, &str)]) -> Result<Option<Senders>> {
        let lookup = |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string());
        senders(&crate::settings::Vars::new(&lookup))
    }

    fn message(sender: Option<&str>, sent_for: Option<&str>) -> Message {
        let (sender, sent_for) = (sender.map(str::to_string), sent_for.map(str::to_string));
        Message { id: "m".into(), receipt: "r".into(), body: String::new(), receive_count: 1, sender, sent_for }
    }

    #[test]
    fn sender_settings_go_together_and_hold_only_ids() {
        assert!(parse(&[]).unwrap().is_none(), "unset: not checked");
        let both = [("FLOE_APPEND_SENDERS", "AROAW1, AROAOPS"), ("FLOE_COMMITTER_SENDER", "AROAC")];
        assert!(parse(&both).unwrap().is_some());
        for (bad, says) in [
            (&[("FLOE_APPEND_SENDERS", "AROAW1")][..], "go together"),
            (&[("FLOE_COMMITTER_SENDER", "AROAC")][..], "go together"),
            (&[("FLOE_REWRITE_SENDERS", "AROAK"), ("FLOE_COMMITTER_SENDER", "AROAC")][..], "go together"),
            (
                &[("FLOE_APPEND_SENDERS", "arn:aws:iam::1:role/w"), ("FLOE_COMMITTER_SENDER", "AROAC")][..],
                "principal ids",
            ),
            (&[("FLOE_APPEND_SENDERS", "AROAW1,,AROAW2"), ("FLOE_COMMITTER_SENDER", "AROAC")][..], "principal ids"),
            (&[("FLOE_APPEND_SENDERS", "AROAW1"), ("FLOE_COMMITTER_SENDER", "AROAC,AROAD")][..], "one principal"),
            (&[("FLOE_APPEND_SENDERS", "AROAW1,AROAC"), ("FLOE_COMMITTER_SENDER", "AROAC")][..], "also listed"),
            (
                &[
                    ("FLOE_APPEND_SENDERS", "AROAW1"),
                    ("FLOE_REWRITE_SENDERS", "AROAC"),
                    ("FLOE_COMMITTER_SENDER", "AROAC"),
                ][..],
                "also listed",
            ),
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }

    #[test]
    fn each_kind_is_admitted_from_its_role_and_copies_as_their_original() {
        let senders = Senders::new(["AROAW".into()], ["AROAK".into()], "AROAC".into());
        let event: SqsEvent =
            serde_json::from_str(include_str!("../../../events/committer/commit-batch.json")).unwrap();
        let append = CommitRequest::from_json(event.records[0].body.as_deref().unwrap()).unwrap();
        let (sender, sent_for) = senders_of(&event.records[0]);
        assert_eq!((sender.as_deref(), sent_for), (Some("AROAEXAMPLEWRITER:floe-writer"), None), "as Lambda gives it");
        let ok = |m: &Message| senders.admit(&append, m);
        assert!(ok(&message(Some("AROAW:writer-fn"), None)).is_ok());
        assert!(ok(&message(Some("AROAW"), None)).is_ok(), "a bare id (a user's) matches too");
        assert!(ok(&message(Some("AROAC:committer-fn"), Some("AROAW:writer-fn"))).is_ok(), "the committer's copy");
        for (m, says) in [
            (message(Some("AROAK:compactor-fn"), None), "may not send appends"),
            (message(Some("AROAWX:writer-fn"), None), "may not send appends"),
            (message(Some("AROAX:other"), Some("AROAW:writer-fn")), "sender AROAX:other may not"),
            (message(Some("AROAC:committer-fn"), None), "names no original sender"),
            (message(Some("AROAC:committer-fn"), Some("AROAC:committer-fn")), "may not send appends"),
            (message(None, Some("AROAW")), "no sender id"),
        ] {
            let e = ok(&m).unwrap_err();
            assert!(e.contains(says), "{m:?}: {e}");
        }
        assert_eq!(senders.origin(&message(Some("AROAX:other"), Some("AROAW"))), Some("AROAX:other"));
        assert_eq!(senders.origin(&message(Some("AROAC:c"), Some("AROAW:w"))), Some("AROAW:w"));
    }
}
