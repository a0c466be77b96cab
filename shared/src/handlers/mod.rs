//! The Lambda application layer: what the functions share, composed from the roles in
//! [`crate::pipeline`] over the ports the AWS adapters implement. S3 notifications (inside SQS
//! messages, or a direct S3 event) turned into source objects, routing to tables, and results
//! turned into SQS partial batch responses with [`backoff`]; the compactor's ticks and shares
//! ([`compactor`]); [`backfill`]. The handlers in `functions/` only wire these to
//! `lambda_runtime`. The adapters (`crate::adapters::aws`) never import this room or the
//! pipeline: they implement ports.

pub mod backfill;
pub mod backoff;
mod committer;
pub mod compactor;
mod notification;
mod writer;

use aws_lambda_events::event::sqs::{BatchItemFailure, SqsBatchResponse};
use tracing::{error, info, warn};

use crate::adapters::aws::SqsQueue;
use crate::config::{EngineConfig, FloeToml};
use crate::fault::FaultPoint;
use crate::pipeline::write::{quarantine, write_rows};
use crate::ports::{ObjectMeta, ObjectStore, Ports, Queue};
use crate::table::WriterTables;
use crate::{Error, PortError, Result, TableIdent};
pub use committer::{
    CommitterEnv, commit_messages, committer_env, handle_committer, handle_committer_with, notification_for,
};
pub use notification::{WriterInput, decode_key, objects_in_notification, writer_input};
pub use writer::writer_table;

pub use crate::route::Router;

/// A notified object, its identity complete.
enum Identified {
    /// The object as notified (or, where the notification lacked its ETag or size, as it is).
    Current(ObjectMeta),
    /// The notified object or version is no longer there to be read.
    Gone(ObjectMeta),
}

/// Completes a notification that lacks the object's ETag or size (hand-built, replayed by a
/// tool, moto's) with a HEAD of the object. A notified version that is not the object's current
/// one is `Gone`, never given the current version's identity; so is an object gone.
async fn identify(store: &dyn ObjectStore, o: ObjectMeta) -> std::result::Result<Identified, PortError> {
    if !o.version.is_empty() && o.size > 0 {
        return Ok(Identified::Current(o));
    }
    match store.head(&o.uri).await {
        Ok(m) if o.version_id.is_some() && m.version_id != o.version_id => Ok(Identified::Gone(o)),
        Ok(m) => Ok(Identified::Current(ObjectMeta { modified_ms: o.modified_ms.or(m.modified_ms), ..m })),
        Err(PortError::NotFound(_)) => Ok(Identified::Gone(o)),
        Err(e) => Err(e),
    }
}

/// An object routed to a table, with the SQS message that named it (`None`: a direct event).
type Routed = (Option<String>, ObjectMeta);

/// What the writer function needs besides its ports.
#[derive(Debug, Clone)]
pub struct WriterEnv {
    /// Engine limits.
    pub engine: EngineConfig,
    /// Routing.
    pub router: Router,
    /// Warehouse URI (`s3://bucket/prefix`) under which new tables are created.
    pub warehouse: String,
    /// Where each quarantined object is also reported, with its reason (`FLOE_DLQ_URL`).
    pub dead_letters: Option<SqsQueue>,
    /// Tables' writer views, kept across warm invocations (`FLOE_TABLE_CACHE_SECS`).
    pub tables: std::sync::Arc<WriterTables>,
    /// How long to wait for the committer to create a table this writer asked for
    /// (`FLOE_CREATE_WAIT_SECS`); then the batch fails and is redelivered.
    pub create_wait: std::time::Duration,
    /// The SQS client that makes failed messages visible again soon ([`backoff`]); without
    /// one they wait the ingest queue's whole visibility timeout.
    pub retries: Option<aws_sdk_sqs::Client>,
}

/// The dead-letter message of a quarantined object (JSON): what it was, where it was going,
/// and why it was refused. The quarantine record in the ledger is the durable copy.
pub fn dead_letter_body(table: Option<&TableIdent>, o: &ObjectMeta, r: &crate::Rejection) -> String {
    serde_json::json!({
        "floe": "quarantined", "source_id": crate::pipeline::write::source_id(o), "uri": o.uri,
        "table": table.map(ToString::to_string), "kind": r.kind, "reason": r.reason,
    })
    .to_string()
}

pub(crate) fn failures(ids: impl IntoIterator<Item = String>) -> SqsBatchResponse {
    let mut r = SqsBatchResponse::default();
    for id in ids {
        let mut f = BatchItemFailure::default();
        f.item_identifier = id;
        r.batch_item_failures.push(f);
    }
    r
}

/// The writer function: objects → per-table writer batches → file manifests on the commit
/// queue. Messages whose objects could not be written are reported as batch item failures
/// (only they are redelivered); objects that are bad are quarantined and count as done.
pub async fn handle_writer(env: &WriterEnv, ports: &Ports, payload: serde_json::Value) -> Result<SqsBatchResponse> {
    handle_writer_by(env, ports, payload, None).await
}

/// [`handle_writer`] for an invocation that must end by `deadline` (a Lambda's): a round starts
/// only while there is time left for it (twice the longest round so far, and at least
/// [`ROUND_MARGIN`]); the messages of the rounds not started are failed, to be delivered again
/// soon, rather than lost to a timeout with the whole batch's answer.
pub async fn handle_writer_by(
    env: &WriterEnv,
    ports: &Ports,
    payload: serde_json::Value,
    deadline: Option<std::time::Instant>,
) -> Result<SqsBatchResponse> {
    let input = writer_input(&payload)?;
    // A direct invocation has no message to fail alone: its errors fail the invocation, which
    // Lambda retries.
    let direct = input.iter().any(|(id, _)| id.is_none());
    let mut tally = Tally::default();
    let batches = route_input(env, ports, input, direct, &mut tally).await?;
    let mut longest = std::time::Duration::ZERO;
    for (cfg, items) in batches {
        let mut table_ok = true;
        for round in rounds(items, env.engine.writer_round_bytes) {
            let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
            let no_time = !direct && left.is_some_and(|left| left < (longest * 2).max(ROUND_MARGIN));
            if !table_ok || no_time {
                // The table could not be had (a later round would wait for it again), or the
                // round might not end in time: its messages come back.
                tally.failed.extend(round.into_iter().filter_map(|(id, _)| id));
                continue;
            }
            let started = std::time::Instant::now();
            table_ok = write_table(env, ports, &cfg, round, direct, &mut tally).await?;
            longest = longest.max(started.elapsed());
        }
    }
    if let Some(dlq) = &env.dead_letters {
        for r in &tally.refused {
            if let Err(e) = dlq.send(dead_letter_body(r.table.as_ref(), &r.object, &r.why)).await {
                warn!(uri = %r.object.uri, error = %e, "could not report a quarantined object to the DLQ (it is in the ledger)");
            }
        }
    }
    ports.faults.hit(FaultPoint::WriterBeforeAck).await;
    let mut failed = tally.failed;
    failed.sort();
    failed.dedup();
    if let Some(sqs) = env.retries.as_ref().filter(|_| !failed.is_empty()) {
        backoff::retry_soon(sqs, &backoff::failed_records(&payload, &failed)).await;
    }
    Ok(failures(failed))
}

/// A table's objects in rounds of at most `bound` bytes together (in source id order, so the
/// same batch delivered again splits the same way; an object larger than `bound` is a round
/// alone, and copies of one source share a round): what a writer holds decoded at once is one
/// round, whatever the batch size ([`EngineConfig::writer_round_bytes`]).
fn rounds(mut items: Vec<Routed>, bound: u64) -> Vec<Vec<Routed>> {
    items.sort_by_cached_key(|(_, o)| crate::pipeline::write::source_id(o));
    let mut out: Vec<Vec<Routed>> = vec![];
    let mut bytes = 0u64;
    for item in items {
        let size = item.1.size;
        // Copies of one source (a notification delivered twice) stay in one round: in two,
        // their manifests would overlap.
        let same = |round: &Vec<Routed>| {
            round.last().is_some_and(|(_, o)| {
                crate::pipeline::write::source_id(o) == crate::pipeline::write::source_id(&item.1)
            })
        };
        match out.last_mut() {
            Some(round) if bytes.saturating_add(size) <= bound || same(round) => round.push(item),
            _ => {
                out.push(vec![item]);
                bytes = 0;
            }
        }
        bytes = bytes.saturating_add(size);
    }
    out
}

/// The least time a writer round is started with before its invocation's deadline.
pub const ROUND_MARGIN: std::time::Duration = std::time::Duration::from_secs(10);

/// An object the writer refused (quarantined), for the dead-letter report.
struct Refused {
    /// The table it was refused for; `None`: no table takes it.
    table: Option<TableIdent>,
    object: ObjectMeta,
    why: crate::Rejection,
}

/// What a writer invocation could not do: the messages to deliver again, and the objects it
/// refused.
#[derive(Default)]
struct Tally {
    failed: Vec<String>,
    refused: Vec<Refused>,
}

impl Tally {
    async fn refuse(
        &mut self,
        ports: &Ports,
        table: Option<&TableIdent>,
        object: ObjectMeta,
        why: crate::Rejection,
    ) -> Result<()> {
        quarantine(ports, table, &object, &why).await?;
        self.refused.push(Refused { table: table.cloned(), object, why });
        Ok(())
    }
}

/// The notified objects as writer batches by table and route: each identified (its version
/// found, or gone), routed, and an object no table takes or whose version is gone refused.
/// Keyed by table and route: a table that takes whole objects of one prefix and some rows of
/// another's (a catch-all or default table shared by groups) writes each in its own batch.
async fn route_input(
    env: &WriterEnv,
    ports: &Ports,
    input: WriterInput,
    direct: bool,
    tally: &mut Tally,
) -> Result<crate::route::Batches<Routed>> {
    let mut by_table: crate::route::Batches<Routed> = crate::route::Batches::default();
    for (id, objects) in input {
        let objects = match objects {
            Ok(o) => o,
            Err(e) if direct => return Err(e),
            Err(e) => {
                warn!(message = ?id, error = %e, "unreadable notification; left for the DLQ");
                tally.failed.extend(id);
                continue;
            }
        };
        for o in objects {
            let identified = match identify(ports.store.as_ref(), o).await {
                Ok(i) => i,
                Err(e) if direct => return Err(e.into()),
                Err(e) => {
                    warn!(message = ?id, error = %e, "head failed; the message will be redelivered");
                    tally.failed.extend(id.clone());
                    continue;
                }
            };
            let (o, gone) = match identified {
                Identified::Current(o) => (o, false),
                Identified::Gone(o) => (o, true),
            };
            let tables = env.router.route(&o.uri)?;
            if tables.is_empty() {
                tally.refuse(ports, None, o, crate::route::unrouted()).await?;
            } else if gone {
                // As a version gone before its read is, in the writer: recorded and reported.
                let r = crate::pipeline::write::superseded(&o);
                for cfg in &tables {
                    tally.refuse(ports, Some(&cfg.table), o.clone(), r.clone()).await?;
                }
            } else {
                by_table.add(tables, &(id.clone(), o));
            }
        }
    }
    Ok(by_table)
}

/// Writes one table's batch (or round). What it refuses is tallied; if it fails, its messages
/// are delivered again (a direct invocation fails instead). Whether the table's next round may
/// be tried: not once the table could not be had (it is not there yet after the create wait).
async fn write_table(
    env: &WriterEnv,
    ports: &Ports,
    cfg: &crate::config::TableConfig,
    items: Vec<Routed>,
    direct: bool,
    tally: &mut Tally,
) -> Result<bool> {
    let table = &cfg.table;
    let objects: Vec<ObjectMeta> = items.iter().map(|(_, o)| o.clone()).collect();
    let outcome = async {
        let wt = writer_table(env, ports, cfg, &objects).await?;
        write_rows(&env.engine, ports, &wt, cfg.route.as_ref(), objects.clone()).await
    }
    .await;
    match outcome {
        Ok(o) => {
            info!(%table, objects = objects.len(), rows = o.rows_out, quarantined = o.quarantined.len(), "written");
            if o.manifest.as_ref().is_some_and(|m| m.evolution.is_some()) {
                // The schema is changing: the next batch reads the table afresh, so a proposal
                // the committer refuses (the table moved on) is not made again.
                env.tables.evict(table);
            }
            let refused =
                o.quarantined.into_iter().map(|(object, why)| Refused { table: Some(table.clone()), object, why });
            tally.refused.extend(refused);
            // A notified version gone before its read: on a versioned bucket its rows are lost
            // (a lifecycle expiry, a delete, a redrive later than the old versions are kept), so
            // an operator hears of it as of any refused object.
            let gone = o.superseded.into_iter().map(|object| {
                let why = crate::pipeline::write::superseded(&object);
                Refused { table: Some(table.clone()), object, why }
            });
            tally.refused.extend(gone);
        }
        Err(Error::NoTableDefinition { refused: none_fit, .. }) => {
            // Nothing here can define the table: every object is refused, with its reason.
            for (o, r) in none_fit {
                tally.refuse(ports, Some(table), o, r).await?;
            }
        }
        Err(e) => {
            error!(%table, error = %e, "writer batch failed; its messages will be redelivered");
            if direct {
                return Err(e);
            }
            tally.failed.extend(items.into_iter().filter_map(|(id, _)| id));
            return Ok(!matches!(e, Error::NoSuchTable(_)));
        }
    }
    Ok(true)
}

/// Reads `FLOE_CONFIG` (a path or an `s3://` URL) through `store`.
pub async fn load_floe_toml(location: &str, store: &dyn ObjectStore) -> Result<FloeToml> {
    let text = if location.starts_with("s3://") {
        String::from_utf8(store.get(location).await?.to_vec()).map_err(|e| Error::Config(format!("{location}: {e}")))?
    } else {
        std::fs::read_to_string(location)
            .map_err(|e| Error::Config(format!("cannot read FLOE_CONFIG {location}: {e}")))?
    };
    FloeToml::parse(&text).map_err(|e| Error::Config(format!("FLOE_CONFIG {location}: {e}")))
}

/// The writer function's settings, looked up through `var` (the binary passes
/// [`settings::env`](crate::settings::env)): `FLOE_WAREHOUSE`, `FLOE_CONFIG`,
/// `FLOE_DEFAULT_TABLE`, `FLOE_DLQ_URL`, `FLOE_TABLE_CACHE_SECS` (60), `FLOE_CREATE_WAIT_SECS`
/// (30) and the engine's ([`EngineConfig::from_lookup`]).
pub async fn writer_env(
    var: impl Fn(&str) -> Option<String>,
    store: &dyn ObjectStore,
    clients: &crate::adapters::aws::Clients,
) -> Result<WriterEnv> {
    let vars = crate::settings::Vars::new(&var);
    let warehouse = vars
        .get("FLOE_WAREHOUSE")
        .ok_or_else(|| Error::Config("FLOE_WAREHOUSE (s3://bucket/prefix) is not set".into()))?;
    if !warehouse.starts_with("s3://") {
        return Err(Error::Config(format!("FLOE_WAREHOUSE must be an s3:// URL, got `{warehouse}`")));
    }
    let config = match vars.get("FLOE_CONFIG") {
        Some(loc) => Some(load_floe_toml(&loc, store).await?),
        None => None,
    };
    let secs = |name: &str, default: u64| {
        Ok::<_, Error>(vars.seconds(name, 0)?.unwrap_or(std::time::Duration::from_secs(default)))
    };
    Ok(WriterEnv {
        engine: EngineConfig::from_lookup(&var)?,
        router: Router::new(config, vars.default_table()?),
        warehouse: warehouse.trim_end_matches('/').into(),
        dead_letters: vars.get("FLOE_DLQ_URL").map(|url| SqsQueue::new(clients.sqs.clone(), &url)),
        tables: std::sync::Arc::new(WriterTables::new(secs("FLOE_TABLE_CACHE_SECS", 60)?)),
        create_wait: secs("FLOE_CREATE_WAIT_SECS", 30)?,
        retries: Some(clients.sqs.clone()),
    })
}

#[cfg(test)]
mod tests {
    use super::committer::send_notifications;
    use super::*;
    use crate::ports::Message;

    #[test]
    fn rounds_hold_at_most_their_bound_in_source_id_order() {
        let item = |k: &str, size: u64| (Some(format!("m-{k}")), ObjectMeta::new(format!("s3://b/{k}"), size, "e"));
        let names = |rs: &[Vec<Routed>]| -> Vec<Vec<String>> {
            rs.iter()
                .map(|r| r.iter().map(|(_, o)| o.uri.trim_start_matches("s3://b/").to_string()).collect())
                .collect()
        };
        let items = vec![item("d", 40), item("a", 30), item("c", 100), item("b", 30), item("e", 1)];
        let got = rounds(items.clone(), 60);
        assert_eq!(names(&got), [vec!["a", "b"], vec!["c"], vec!["d", "e"]], "sorted; c alone is over the bound");
        let got = rounds(items.clone(), 160);
        assert_eq!(names(&got), [vec!["a", "b", "c"], vec!["d", "e"]], "up to the bound itself");
        let got = rounds(items.clone(), 59);
        assert_eq!(names(&got), [vec!["a"], vec!["b"], vec!["c"], vec!["d", "e"]]);
        assert_eq!(names(&rounds(items.clone(), u64::MAX)), [vec!["a", "b", "c", "d", "e"]], "unbounded: one round");
        assert!(rounds(vec![], 10).is_empty());
        let copies = vec![item("a", 30), item("b", 30), item("b", 30), item("c", 30)];
        assert_eq!(names(&rounds(copies, 60)), [vec!["a", "b", "b"], vec!["c"]], "copies of a source share a round");
        let all: usize = rounds(items, 1).iter().map(Vec::len).sum();
        assert_eq!(all, 5, "every object in exactly one round");
    }

    #[test]
    fn a_round_is_a_third_of_the_memory_past_100_mib() {
        assert_eq!(EngineConfig::for_memory(2048).writer_round_bytes, 649 * 1024 * 1024);
        assert_eq!(EngineConfig::for_memory(128).writer_round_bytes, 16 * 1024 * 1024, "at least 16 MiB");
        assert_eq!(EngineConfig::default().writer_round_bytes, u64::MAX, "embedded: unbounded");
        let cfg = EngineConfig::from_lookup(|k| match k {
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE" => Some("2048".into()),
            "FLOE_WRITER_ROUND_BYTES" => Some("1000".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(cfg.writer_round_bytes, 1000, "the setting wins");
        assert!(EngineConfig::from_lookup(|k| (k == "FLOE_WRITER_ROUND_BYTES").then(|| "0".into())).is_err());
    }

    /// A queue that keeps what is sent to it.
    #[derive(Default)]
    struct Sent(std::sync::Mutex<Vec<String>>);

    #[async_trait::async_trait]
    impl Queue for Sent {
        async fn send(&self, body: String) -> Result<(), PortError> {
            self.0.lock().unwrap().push(body);
            Ok(())
        }
        async fn receive(&self, _: usize, _: std::time::Duration) -> Result<Vec<Message>, PortError> {
            Ok(vec![])
        }
        async fn ack(&self, _: &str) -> Result<(), PortError> {
            Ok(())
        }
        async fn release(&self, _: &str) -> Result<(), PortError> {
            Ok(())
        }
    }

    #[tokio::test]
    async fn many_requeued_sources_travel_a_few_per_notification() {
        let key = "a/".repeat(300);
        let sources: Vec<crate::message::SourceRef> = (0..1000)
            .map(|i| crate::message::SourceRef {
                id: format!("s3://b/{key}{i}#e{i}"),
                uri: format!("s3://b/{key}{i}"),
                size: 1,
                rows: 0,
                version_id: None,
                created_ms: Some(1_700_000_000_123),
            })
            .collect();
        let q = Sent::default();
        send_notifications(&q, &sources).await.unwrap();
        let sent = q.0.lock().unwrap().clone();
        assert_eq!(sent.len(), 100);
        assert!(sent.iter().all(|m| m.len() < 64 * 1024), "far below SQS's 256 KiB");
        let back: Vec<String> = sent.iter().flat_map(|m| objects_in_notification(m).unwrap()).map(|o| o.uri).collect();
        assert_eq!(back, sources.iter().map(|s| s.uri.clone()).collect::<Vec<_>>(), "every source, once, in order");
    }

    #[test]
    fn a_notification_names_the_version_it_announces() {
        let n = r#"{"Records":[{"eventName":"ObjectCreated:Put","eventTime":"2026-11-30T12:00:00.250Z","s3":{"bucket":{"name":"b"},
            "object":{"key":"a/k+1.avro","size":10,"eTag":"\"e1\"","versionId":"v-1"}}},
            {"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},
            "object":{"key":"u.avro","size":3,"eTag":"e2","versionId":"null"}}}]}"#;
        let objs = objects_in_notification(n).unwrap();
        assert_eq!(objs[0].uri, "s3://b/a/k 1.avro");
        assert_eq!((objs[0].version.as_str(), objs[0].version_id.as_deref()), ("e1", Some("v-1")));
        assert_eq!(objs[1].version_id, None, "an unversioned bucket's `null` version id is no version id");
        assert_eq!(objs[0].modified_ms, Some(1_796_040_000_250), "eventTime: when the object was created");
        assert_eq!(objs[1].modified_ms, None);
        // What the committer sends back for an overlap reads the same version again.
        let refs: Vec<crate::message::SourceRef> = objs
            .iter()
            .map(|o| crate::message::SourceRef {
                id: crate::pipeline::write::source_id(o),
                uri: o.uri.clone(),
                size: o.size,
                rows: 0,
                version_id: o.version_id.clone(),
                created_ms: o.modified_ms,
            })
            .collect();
        assert_eq!(objects_in_notification(&notification_for(&refs)).unwrap(), objs);
        assert_eq!(refs.iter().map(crate::message::SourceRef::object).collect::<Vec<_>>(), objs);
    }
}
