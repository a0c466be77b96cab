//! The committer against redelivery, overlap, lost races and a crash between swap and ledger.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::create::ensure_table;
use floe::pipeline::write::{write, write_rows};
use floe::ports::{Ledger, Message, ObjectMeta, Pointer, Ports, QuarantineRecord, SourceState, TablePointer};
use floe::table::WriterTable;
use floe::{PortError, TableIdent};
use rand::seq::SliceRandom;

use crate::common::*;

async fn writer_table(h: &Harness, ports: &Ports, objects: &[ObjectMeta]) -> WriterTable {
    let cfg = events_table("web.events");
    let (state, _) = ensure_table(ports, &h.engine, &cfg, &h.warehouse, objects).await.unwrap();
    WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap()
}

async fn drain(ports: &Ports) -> Vec<Message> {
    ports.commit_queue.receive(1000, Duration::from_secs(60)).await.unwrap()
}

fn table() -> TableIdent {
    "web.events".parse().unwrap()
}

#[tokio::test]
async fn every_message_delivered_three_times_in_any_order_commits_once() {
    let h = Harness::new();
    let inputs = h.events("in", 6, 150, 21, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    for pair in inputs.chunks(2) {
        write(&h.engine, &h.ports, &t, pair.to_vec()).await.unwrap();
    }
    let msgs = drain(&h.ports).await;
    assert_eq!(msgs.len(), 3);
    let mut deliveries: Vec<Message> = msgs.iter().flat_map(|m| std::iter::repeat_n(m.clone(), 3)).collect();
    deliveries.shuffle(&mut rand::rng());
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let mut committed = 0;
    for chunk in deliveries.chunks(2) {
        let out = committer.commit(chunk).await;
        for (_, r) in out.results {
            assert!(r.ack(), "{r:?}");
            committed += usize::from(matches!(r, MessageResult::Committed { .. }));
        }
    }
    assert_eq!(committed, 3, "each manifest committed exactly once; the copies were duplicates");
    let ids = contents(&h.ports, &table()).await.event_ids();
    assert_eq!(ids.len(), 900);
    assert!(counts(&ids).values().all(|c| *c == 1));
}

#[tokio::test]
async fn an_overlapping_batch_is_rejected_and_its_new_objects_requeued() {
    let h = Harness::new();
    let inputs = h.events("in", 3, 100, 22, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    // Batch A = {0, 1}; a retried writer batch B = {1, 2}, written before A committed,
    // overlaps it on object 1.
    write(&h.engine, &h.ports, &t, inputs[0..2].to_vec()).await.unwrap();
    let a = drain(&h.ports).await;
    write(&h.engine, &h.ports, &t, inputs[1..3].to_vec()).await.unwrap();
    let b = drain(&h.ports).await;
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    assert!(matches!(committer.commit(&a).await.results[0].1, MessageResult::Committed { .. }));
    let requeue = match &committer.commit(&b).await.results[0].1 {
        MessageResult::Overlap { requeue, .. } => requeue.clone(),
        other => panic!("expected an overlap, got {other:?}"),
    };
    assert_eq!(requeue.iter().map(|s| s.uri.clone()).collect::<Vec<_>>(), vec![inputs[2].uri.clone()]);
    // The new object, written again on its own, lands; nothing is doubled.
    write(&h.engine, &h.ports, &t, vec![inputs[2].clone()]).await.unwrap();
    let c = drain(&h.ports).await;
    assert!(matches!(committer.commit(&c).await.results[0].1, MessageResult::Committed { .. }));
    let ids = contents(&h.ports, &table()).await.event_ids();
    assert_eq!(ids.len(), 300);
    assert!(counts(&ids).values().all(|c| *c == 1));
}

/// When [`RivalSwap`]'s rival commits.
#[derive(Clone, Copy, PartialEq)]
pub enum Rival {
    /// Before the first swap: the swap is beaten.
    CommitsFirst,
    /// Just after the first swap lands, whose answer is then lost: a retry would find the
    /// pointer moved, so the swap says `Conflict`.
    CommitsOverTheLandedSwap,
}

/// A pointer whose first swap meets another committer's commit of `rival`'s messages.
pub struct RivalSwap {
    pub inner: Arc<dyn TablePointer>,
    pub when: Rival,
    pub fired: AtomicBool,
    pub rival: tokio::sync::Mutex<Option<(Committer, Vec<Message>)>>,
}

impl RivalSwap {
    pub fn new(inner: Arc<dyn TablePointer>, when: Rival, rival: Committer, msgs: Vec<Message>) -> Arc<Self> {
        Arc::new(RivalSwap {
            inner,
            when,
            fired: AtomicBool::new(false),
            rival: tokio::sync::Mutex::new(Some((rival, msgs))),
        })
    }

    async fn rival_commits(&self) {
        let (mut rival, msgs) = self.rival.lock().await.take().expect("rival");
        let out = rival.commit(&msgs).await;
        assert!(matches!(out.results[0].1, MessageResult::Committed { .. }), "{:?}", out.results);
    }
}

#[async_trait]
impl TablePointer for RivalSwap {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        self.inner.load(t).await
    }
    async fn create(&self, t: &TableIdent, loc: &str) -> Result<Pointer, PortError> {
        self.inner.create(t, loc).await
    }
    async fn swap(&self, t: &TableIdent, expected: &Pointer, loc: &str) -> Result<Pointer, PortError> {
        let first = !self.fired.swap(true, Ordering::SeqCst);
        if !first {
            return self.inner.swap(t, expected, loc).await;
        }
        match self.when {
            Rival::CommitsFirst => {
                self.rival_commits().await;
                self.inner.swap(t, expected, loc).await
            }
            Rival::CommitsOverTheLandedSwap => {
                self.inner.swap(t, expected, loc).await?;
                self.rival_commits().await;
                Err(PortError::Conflict("the answer was lost; a retry found the pointer moved".into()))
            }
        }
    }
}

/// A committer with a lock of its own (as a zombie past its lease would have): only the
/// pointer's compare-and-swap keeps it and `h`'s committers apart.
pub fn rival_committer(h: &Harness) -> Committer {
    let mut ports = h.ports.clone();
    ports.lock = Arc::new(floe::adapters::local::SqliteLock::open(&h.dir.path().join("rival-lock.db")).unwrap());
    Committer::new(h.engine.clone(), ports)
}

#[tokio::test]
async fn a_lost_compare_and_swap_replans_without_losing_or_doubling() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 120, 23, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, vec![inputs[0].clone()]).await.unwrap();
    write(&h.engine, &h.ports, &t, vec![inputs[1].clone()]).await.unwrap();
    let msgs = drain(&h.ports).await;
    // The rival uses a lock of its own: the pointer's compare-and-swap alone must keep the
    // table right.
    let mut ports = h.ports.clone();
    ports.pointer =
        RivalSwap::new(h.ports.pointer.clone(), Rival::CommitsFirst, rival_committer(&h), vec![msgs[1].clone()]);
    let mut loser = Committer::new(h.engine.clone(), ports);
    let out = loser.commit(&msgs[0..1]).await;
    assert!(matches!(out.results[0].1, MessageResult::Committed { .. }), "{:?}", out.results);
    let c = contents(&h.ports, &table()).await;
    assert_eq!(c.snapshots, 2, "both commits landed, one on top of the other");
    let ids = c.event_ids();
    assert_eq!(ids.len(), 240);
    assert!(counts(&ids).values().all(|c| *c == 1));
}

/// A ledger whose first `record_landed` fails, as if the committer died right after the swap.
pub struct DiesAfterSwap {
    pub inner: Arc<dyn Ledger>,
    pub armed: AtomicBool,
}

#[async_trait]
impl Ledger for DiesAfterSwap {
    async fn lookup(&self, t: &TableIdent, ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        self.inner.lookup(t, ids).await
    }
    async fn record_pending(&self, t: &TableIdent, ids: &[String], s: i64) -> Result<(), PortError> {
        self.inner.record_pending(t, ids, s).await
    }
    async fn record_committed(&self, t: &TableIdent, ids: &[String], s: i64) -> Result<(), PortError> {
        self.inner.record_committed(t, ids, s).await
    }
    async fn record_landed(&self, t: &TableIdent, s: &[i64]) -> Result<(), PortError> {
        if self.armed.swap(false, Ordering::SeqCst) {
            return Err(PortError::io("ledger", std::io::Error::other("process died")));
        }
        self.inner.record_landed(t, s).await
    }
    async fn quarantine(&self, r: QuarantineRecord) -> Result<(), PortError> {
        self.inner.quarantine(r).await
    }
    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        self.inner.quarantined().await
    }
    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        self.inner.remove_quarantined(source_ids).await
    }
}

#[tokio::test]
async fn a_commit_whose_ledger_update_was_lost_is_recognised_on_redelivery() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 100, 24, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, inputs.clone()).await.unwrap();
    let msgs = drain(&h.ports).await;
    let mut ports = h.ports.clone();
    ports.ledger = Arc::new(DiesAfterSwap { inner: h.ports.ledger.clone(), armed: AtomicBool::new(true) });
    let mut first = Committer::new(h.engine.clone(), ports);
    let out = first.commit(&msgs).await;
    assert!(matches!(out.results[0].1, MessageResult::Retry { .. }), "not acknowledged: {:?}", out.results);
    assert_eq!(contents(&h.ports, &table()).await.rows(), 200, "the snapshot landed");
    // Redelivery to a fresh committer: the pending records point at a snapshot in the history.
    let mut second = Committer::new(h.engine.clone(), h.ports.clone());
    let out = second.commit(&msgs).await;
    assert_eq!(out.results[0].1, MessageResult::Duplicate);
    let c = contents(&h.ports, &table()).await;
    assert_eq!(c.rows(), 200, "not committed twice");
    assert_eq!(c.snapshots, 1);
    let ids: Vec<String> = msgs_sources(&msgs);
    let states = h.ports.ledger.lookup(&table(), &ids).await.unwrap();
    assert!(states.iter().all(|(_, s)| matches!(s, SourceState::Committed { .. })), "ledger healed: {states:?}");
}

fn msgs_sources(msgs: &[Message]) -> Vec<String> {
    msgs.iter()
        .flat_map(|m| floe::message::FileManifest::from_json(&m.body).unwrap().sources.into_iter().map(|s| s.id))
        .collect()
}

#[tokio::test]
async fn a_warm_committer_reads_no_metadata() {
    let h = Harness::new();
    let inputs = h.events("in", 4, 50, 25, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    for obj in &inputs {
        write(&h.engine, &h.ports, &t, vec![obj.clone()]).await.unwrap();
        let msgs = drain(&h.ports).await;
        assert!(matches!(committer.commit(&msgs).await.results[0].1, MessageResult::Committed { .. }));
    }
    assert_eq!(committer.reads(), 1, "only the first commit read the table metadata");
    assert_eq!(contents(&h.ports, &table()).await.snapshots, 4);
}

/// A message whose file entries the table cannot hold (here: an unknown partition spec) fails
/// alone, as poison; the other messages of the batch commit.
#[tokio::test]
async fn a_message_that_cannot_convert_fails_alone() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 100, 24, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, vec![inputs[0].clone()]).await.unwrap();
    write(&h.engine, &h.ports, &t, vec![inputs[1].clone()]).await.unwrap();
    let mut msgs = drain(&h.ports).await;
    assert_eq!(msgs.len(), 2);
    let mut bad = floe::message::FileManifest::from_json(&msgs[1].body).unwrap();
    bad.spec_id = 99;
    msgs[1].body = bad.to_json().unwrap();
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let out = committer.commit(&msgs).await;
    let result = |id: &str| out.results.iter().find(|(m, _)| m == id).map(|(_, r)| r.clone()).unwrap();
    assert!(matches!(result(&msgs[0].id), MessageResult::Committed { .. }), "{:?}", out.results);
    match result(&msgs[1].id) {
        MessageResult::Poison { reason } => assert!(reason.contains("partition spec 99"), "{reason}"),
        other => panic!("expected poison, got {other:?}"),
    }
    assert_eq!(contents(&h.ports, &table()).await.event_ids().len(), 100, "the good message's rows, once");
    let states = h.ports.ledger.lookup(&table(), &bad.sources.iter().map(|s| s.id.clone()).collect::<Vec<_>>()).await;
    assert!(states.unwrap().is_empty(), "the poisoned message's sources are not marked");
}

/// A poisoned message claims none of its sources: a second message holding the same sources
/// (here: the same sources plus another) is not rejected as an overlap because of it.
#[tokio::test]
async fn a_poisoned_message_claims_none_of_its_sources() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 100, 25, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, vec![inputs[0].clone()]).await.unwrap();
    write(&h.engine, &h.ports, &t, inputs.clone()).await.unwrap();
    let mut msgs = drain(&h.ports).await;
    msgs.sort_by_key(|m| floe::message::FileManifest::from_json(&m.body).unwrap().sources.len());
    let mut bad = floe::message::FileManifest::from_json(&msgs[0].body).unwrap();
    bad.spec_id = 99;
    msgs[0].body = bad.to_json().unwrap();
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let out = committer.commit(&msgs).await;
    let result = |id: &str| out.results.iter().find(|(m, _)| m == id).map(|(_, r)| r.clone()).unwrap();
    assert!(matches!(result(&msgs[0].id), MessageResult::Poison { .. }), "{:?}", out.results);
    assert!(matches!(result(&msgs[1].id), MessageResult::Committed { .. }), "{:?}", out.results);
    assert_eq!(contents(&h.ports, &table()).await.event_ids().len(), 200, "both objects, once");
}

/// Two writers see a new table at once, one with the events schema and one with another: each
/// defines it and asks the committer, whose create-if-absent lets the first definition win in
/// either order. The other request is a duplicate and leaves no metadata file behind; its
/// objects, written against the table that exists, are quarantined for their schema, and
/// nothing lands under a field id of a definition that lost.
#[tokio::test]
async fn concurrent_create_requests_register_the_first_definition_only() {
    use floe::message::CreateRequest;
    use floe::pipeline::create::define_table;

    for events_first in [true, false] {
        let h = Harness::new();
        let events = h.events("in", 2, 100, 5, 0.0).await;
        let sink = floe::sample::kitchen_sink(50, 3, floe::sample::codec("null").unwrap()).unwrap();
        let other = vec![h.put_file("other", "sink.avro", &sink).await];
        let cfg = floe::config::TableConfig::new(table());
        let mut requests = vec![];
        for objects in [&events, &other] {
            let d = define_table(&h.ports, &h.engine, &cfg, &h.warehouse, objects).await.unwrap();
            requests.push(CreateRequest::new(table(), d.defined_by, d.metadata));
        }
        if !events_first {
            requests.reverse();
        }
        let msgs: Vec<Message> = requests
            .iter()
            .enumerate()
            .map(|(i, r)| Message {
                id: format!("m{i}"),
                receipt: format!("r{i}"),
                body: serde_json::to_string(r).unwrap(),
                receive_count: 1,
                sender: None,
                sent_for: None,
            })
            .collect();
        let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
        let out = committer.commit(&msgs).await;
        let results: Vec<_> = out.results.iter().map(|(_, r)| r.clone()).collect();
        assert_eq!(results, [MessageResult::Created, MessageResult::Duplicate], "events first: {events_first}");
        assert!(out.snapshots.is_empty());

        let state = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &table())
            .await
            .unwrap()
            .expect("created");
        assert_eq!(state.metadata.current_schema().as_ref(), requests[0].metadata.current_schema().as_ref());
        let location = state.metadata.location();
        let files = h.ports.store.list(&format!("{location}/metadata/")).await.unwrap();
        assert_eq!(files.len(), 1, "only the winner's metadata.json: {files:?}");

        // Both writers write what they have against the table that exists.
        let wt = WriterTable::from_metadata(&table(), &state.metadata).unwrap();
        let (fits, misfits) = if events_first { (&events, &other) } else { (&other, &events) };
        let ok = write(&h.engine, &h.ports, &wt, fits.clone()).await.unwrap();
        assert!(ok.quarantined.is_empty(), "{:?}", ok.quarantined);
        let refused = write(&h.engine, &h.ports, &wt, misfits.clone()).await.unwrap();
        assert_eq!(refused.quarantined.len(), misfits.len(), "the losing definition's objects do not fit");
        assert!(
            refused.quarantined.iter().all(|(_, r)| r.kind == floe::RejectionKind::Schema),
            "{:?}",
            refused.quarantined
        );
        let msgs = drain(&h.ports).await;
        let out = committer.commit(&msgs).await;
        assert!(out.results.iter().all(|(_, r)| r.ack()), "{:?}", out.results);
        let landed = contents(&h.ports, &table()).await.rows();
        let want = if events_first { 200 } else { 50 };
        assert_eq!(landed, want, "only the objects that fit the registered definition");
    }
}

/// A create request is only ever a new table: one that carries snapshots is refused as poison.
#[tokio::test]
async fn a_create_request_with_history_is_poison() {
    use floe::message::CreateRequest;

    let h = Harness::new();
    let inputs = h.events("in", 1, 50, 9, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, inputs).await.unwrap();
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    committer.commit(&drain(&h.ports).await).await;
    let state = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &table()).await.unwrap();
    let metadata = state.expect("table").metadata.as_ref().clone();
    let other: TableIdent = "web.copy".parse().unwrap();
    let request = CreateRequest::new(other.clone(), "s3://x/y.avro".into(), metadata);
    let msg = Message {
        id: "m".into(),
        receipt: "r".into(),
        body: serde_json::to_string(&request).unwrap(),
        receive_count: 1,
        sender: None,
        sent_for: None,
    };
    let out = committer.commit(&[msg]).await;
    assert!(
        matches!(&out.results[0].1, MessageResult::Poison { reason } if reason.contains("not a new")),
        "{:?}",
        out.results
    );
    assert!(h.ports.pointer.load(&other).await.unwrap().is_none());
}

/// A create request without snapshots but with a metadata log (naming another table's metadata
/// file: the first commit's cleanup would delete it with `delete-after-commit`) is poison, and
/// the file it names is kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_create_request_whose_log_names_other_files_is_poison() {
    let h = Harness::new();
    let inputs = h.events("in", 1, 50, 9, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, inputs).await.unwrap();
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    committer.commit(&drain(&h.ports).await).await;
    let state = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &table()).await.unwrap();
    let state = state.expect("table");
    let victim = state.pointer.metadata_location.clone();
    let mut metadata = serde_json::to_value(state.metadata.as_ref()).unwrap();
    let location = metadata["location"].as_str().unwrap().replace("/events", "/forged");
    metadata["location"] = location.into();
    for k in ["snapshots", "snapshot-log", "refs", "current-snapshot-id"] {
        metadata.as_object_mut().unwrap().remove(k);
    }
    metadata["metadata-log"] = serde_json::json!([{"metadata-file": victim, "timestamp-ms": 1}]);
    let body = serde_json::json!({"version": 1, "kind": "create", "table": "web.forged", "defined_by": "x",
                                  "metadata": metadata});
    let msg = Message {
        id: "m".into(),
        receipt: "r".into(),
        body: body.to_string(),
        receive_count: 1,
        sender: None,
        sent_for: None,
    };
    let out = committer.commit(&[msg]).await;
    assert!(
        matches!(&out.results[0].1, MessageResult::Poison { reason } if reason.contains("metadata log")),
        "{:?}",
        out.results
    );
    assert!(h.ports.pointer.load(&"web.forged".parse().unwrap()).await.unwrap().is_none());
    h.ports.store.head(&victim).await.expect("the file it named is kept");
}

/// A create request may only place its table where the table lives: under the committer's
/// warehouse, at `<ns>.db/<name>`; a definition for another table or another place is poison
/// (the committer's role may write anywhere in the warehouse, a writer's request must not
/// steer it).
#[tokio::test]
async fn a_create_request_for_another_place_is_poison() {
    use floe::message::CreateRequest;
    use floe::pipeline::create::define_table;

    let h = Harness::new();
    let inputs = h.events("in", 1, 20, 4, 0.0).await;
    let cfg = floe::config::TableConfig::new(table());
    let elsewhere = define_table(&h.ports, &h.engine, &cfg, "file:///tmp/elsewhere", &inputs).await.unwrap();
    let here = define_table(&h.ports, &h.engine, &cfg, &h.warehouse, &inputs).await.unwrap();
    let other: TableIdent = "web.other".parse().unwrap();
    let cases = [
        (CreateRequest::new(table(), "a".into(), elsewhere.metadata), true),
        (CreateRequest::new(other.clone(), "b".into(), here.metadata.clone()), false),
    ];
    for (request, with_warehouse) in cases {
        let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
        if with_warehouse {
            committer = committer.with_warehouse(&h.warehouse);
        }
        let body = serde_json::to_string(&request).unwrap();
        let out = committer
            .commit(&[Message {
                id: "m".into(),
                receipt: "r".into(),
                body,
                receive_count: 1,
                sender: None,
                sent_for: None,
            }])
            .await;
        assert!(
            matches!(&out.results[0].1, MessageResult::Poison { reason } if reason.contains("not under the warehouse")),
            "{:?}",
            out.results
        );
        assert!(h.ports.pointer.load(&request.table).await.unwrap().is_none());
    }
}

#[tokio::test]
async fn one_tables_lock_contention_never_holds_up_another_table() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 50, 41, 0.0).await;
    for (name, input) in ["routed.one", "routed.two"].iter().zip(&inputs) {
        let cfg = events_table(name);
        let (state, _) =
            ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, std::slice::from_ref(input)).await.unwrap();
        let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
        write(&h.engine, &h.ports, &t, vec![input.clone()]).await.unwrap();
    }
    // Another committer holds routed.one's lock for as long as this one will wait.
    let held =
        h.ports.lock.try_acquire("floe-committer/routed.one", "another", Duration::from_secs(600)).await.unwrap();
    assert!(held.is_some());
    let mut engine = h.engine.clone();
    engine.lock_wait = Duration::from_millis(300);
    let mut committer = Committer::new(engine, h.ports.clone());
    let msgs = drain(&h.ports).await;
    let out = committer.commit(&msgs).await;
    let by_table: Vec<(String, bool, bool)> = msgs
        .iter()
        .map(|m| {
            let r = &out.results.iter().find(|(id, _)| *id == m.id).unwrap().1;
            let table = if m.body.contains("routed.one") { "one" } else { "two" };
            (table.to_string(), matches!(r, MessageResult::Contended), matches!(r, MessageResult::Committed { .. }))
        })
        .collect();
    assert!(by_table.contains(&("one".into(), true, false)), "{by_table:?}");
    assert!(by_table.contains(&("two".into(), false, true)), "{by_table:?}");
    assert_eq!(contents(&h.ports, &"routed.two".parse().unwrap()).await.rows(), 50);
}

/// A catalog whose service maintains the tables' files (as S3 Tables does).
struct ManagesFiles(Arc<dyn TablePointer>);

#[async_trait]
impl TablePointer for ManagesFiles {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        self.0.load(t).await
    }
    async fn create(&self, t: &TableIdent, location: &str) -> Result<Pointer, PortError> {
        self.0.create(t, location).await
    }
    async fn swap(&self, t: &TableIdent, expected: &Pointer, location: &str) -> Result<Pointer, PortError> {
        self.0.swap(t, expected, location).await
    }
    fn manages_files(&self) -> bool {
        true
    }
}

/// Files older than the commit age limit are never committed (S3 Tables may have removed
/// them): an append's sources go back to the writers (a manifest of unknown age counts as old),
/// unless an earlier attempt is unsettled where the catalog's service expires snapshots; a
/// fresh one commits.
#[tokio::test]
async fn manifests_past_the_commit_age_limit_send_their_sources_back() {
    let h = Harness::new();
    let inputs = h.events("in", 3, 100, 26, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    for i in &inputs {
        write(&h.engine, &h.ports, &t, vec![i.clone()]).await.unwrap();
    }
    let mut msgs = drain(&h.ports).await;
    msgs.sort_by_key(|m| floe::message::FileManifest::from_json(&m.body).unwrap().sources[0].uri.clone());
    let hour = 3_600_000;
    for (m, written) in msgs.iter_mut().zip([Some(-3 * hour), None]) {
        let mut manifest = floe::message::FileManifest::from_json(&m.body).unwrap();
        assert!(manifest.written_ms.is_some(), "writers stamp their manifests");
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
        manifest.written_ms = written.map(|ago| now + ago);
        m.body = manifest.to_json().unwrap();
    }
    // An earlier attempt of the first batch left a pending mark on a snapshot the table does not
    // hold: it may have landed and been expired since, so the batch is not written again.
    let first = floe::message::FileManifest::from_json(&msgs[0].body).unwrap();
    h.ports.ledger.record_pending(&table(), &[first.sources[0].id.clone()], 4242).await.unwrap();
    let engine = floe::config::EngineConfig { max_commit_age: Some(Duration::from_secs(3600)), ..h.engine.clone() };
    // Where the catalog's service expires snapshots (S3 Tables), that attempt may have landed.
    let managed = Ports { pointer: Arc::new(ManagesFiles(h.ports.pointer.clone())), ..h.ports.clone() };
    let mut committer = Committer::new(engine.clone(), managed);
    let out = committer.commit(&msgs).await;
    let result = |id: &str| out.results.iter().find(|(m, _)| m == id).map(|(_, r)| r.clone()).unwrap();
    match result(&msgs[0].id) {
        MessageResult::Poison { reason } => assert!(reason.contains("pending on a snapshot"), "{reason}"),
        other => panic!("an old batch with an unsettled attempt goes to an operator: {other:?}"),
    }
    // Where Floe expires them, never one a pending mark names: that attempt never landed.
    let out_floe = Committer::new(engine, h.ports.clone()).commit(&msgs[..1]).await;
    match &out_floe.results[0].1 {
        MessageResult::Overlap { requeue, .. } => assert_eq!(requeue[0].uri, inputs[0].uri),
        other => panic!("written again, as a fresh message would be: {other:?}"),
    }
    match result(&msgs[1].id) {
        MessageResult::Overlap { requeue, .. } => {
            assert_eq!(requeue.iter().map(|s| s.uri.clone()).collect::<Vec<_>>(), vec![inputs[1].uri.clone()])
        }
        other => panic!("an old manifest's sources go back to the writers: {other:?}"),
    }
    assert!(matches!(result(&msgs[2].id), MessageResult::Committed { .. }), "{:?}", out.results);
    assert_eq!(contents(&h.ports, &table()).await.event_ids().len(), 100, "only the fresh manifest's rows");
}

/// Two overlapping manifests of web.events left in the shared commit queue (a killed run and
/// its rerun with other batching), for whoever commits next; returns the three sources.
async fn overlapping_manifests_waiting(h: &Harness) -> Vec<ObjectMeta> {
    let inputs = h.events("in", 3, 100, 23, 0.0).await;
    let t = writer_table(h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, inputs[0..2].to_vec()).await.unwrap();
    write(&h.engine, &h.ports, &t, inputs[1..3].to_vec()).await.unwrap();
    inputs
}

/// `floe ingest` of `objects` into `cfg`'s table through `ports`.
async fn ingest_into(
    h: &Harness,
    ports: &Ports,
    cfg: floe::config::TableConfig,
    objects: Vec<ObjectMeta>,
) -> floe::Result<floe::pipeline::ingest::IngestReport> {
    let opts = floe::pipeline::ingest::IngestOptions::default();
    floe::pipeline::ingest::ingest(&h.engine, ports, &cfg, &h.warehouse, objects, &opts).await
}

/// Lands what `floe quarantine replay` would, and checks every web.events source landed once.
async fn replay_lands_the_rest(h: &Harness, inputs: &[ObjectMeta]) {
    let records = floe::pipeline::quarantine::outstanding(h.ports.ledger.as_ref()).await.unwrap();
    let router = floe::route::Router::new(None, "default.events".parse().unwrap());
    let opts = floe::pipeline::ingest::IngestOptions::default();
    floe::pipeline::quarantine::replay(&h.engine, &h.ports, &h.warehouse, &records, None, &router, &opts)
        .await
        .unwrap();
    assert!(floe::pipeline::quarantine::outstanding(h.ports.ledger.as_ref()).await.unwrap().is_empty());
    let mut ids = contents(&h.ports, &table()).await.event_ids();
    ids.sort();
    let mut want = source_event_ids(inputs);
    want.sort();
    assert_eq!(ids, want, "every source of web.events once, after the replay");
}

#[tokio::test]
async fn an_overlap_met_by_another_tables_ingest_is_quarantined_never_written_into_its_table() {
    let h = Harness::new();
    let inputs = overlapping_manifests_waiting(&h).await;
    // An ingest into another table commits the waiting manifests too (it resumes killed runs);
    // the second overlaps the first, and its remaining source is web.events's, not its own.
    let other_inputs = h.events("other", 2, 50, 24, 0.0).await;
    let other = events_table("ops.other");
    let opts = floe::pipeline::ingest::IngestOptions::default();
    let r = floe::pipeline::ingest::ingest(&h.engine, &h.ports, &other, &h.warehouse, other_inputs.clone(), &opts)
        .await
        .unwrap();
    let (uri, why) = r.quarantined.first().expect("the overlap's source is quarantined").clone();
    assert_eq!(r.quarantined.len(), 1, "{:?}", r.quarantined);
    assert!(inputs.iter().any(|i| i.uri == uri) && why.kind == floe::RejectionKind::Overlap, "{uri}: {why}");
    let mut landed = contents(&h.ports, &other.table).await.event_ids();
    landed.sort();
    let mut own = source_event_ids(&other_inputs);
    own.sort();
    assert_eq!(landed, own, "ops.other holds exactly its own sources' rows");
    assert_eq!(contents(&h.ports, &table()).await.rows(), 200, "one of the two manifests landed");
    replay_lands_the_rest(&h, &inputs).await;
}

#[tokio::test]
async fn an_overlap_met_by_a_compaction_is_quarantined_not_dropped() {
    let h = Harness::new();
    let inputs = overlapping_manifests_waiting(&h).await;
    let opts = floe::pipeline::compact::CompactOptions::default();
    let (_, totals) =
        floe::pipeline::ingest::compact_and_commit(&h.engine, &h.ports, &table(), &opts, Duration::from_secs(60))
            .await
            .unwrap();
    assert_eq!(totals.quarantined.len(), 1, "{:?}", totals.quarantined);
    assert_eq!(totals.quarantined[0].1.kind, floe::RejectionKind::Overlap);
    assert_eq!(contents(&h.ports, &table()).await.rows(), 200, "one of the two manifests landed");
    replay_lands_the_rest(&h, &inputs).await;
}

#[tokio::test]
async fn a_swap_that_landed_and_was_committed_over_keeps_its_metadata_file() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 120, 25, 0.0).await;
    let t = writer_table(&h, &h.ports, &inputs).await;
    write(&h.engine, &h.ports, &t, vec![inputs[0].clone()]).await.unwrap();
    write(&h.engine, &h.ports, &t, vec![inputs[1].clone()]).await.unwrap();
    let msgs = drain(&h.ports).await;
    let mut ports = h.ports.clone();
    let when = Rival::CommitsOverTheLandedSwap;
    ports.pointer = RivalSwap::new(h.ports.pointer.clone(), when, rival_committer(&h), vec![msgs[1].clone()]);
    let mut unlucky = Committer::new(h.engine.clone(), ports);
    let out = unlucky.commit(&msgs[0..1]).await;
    assert!(out.results[0].1.ack(), "its snapshot is in the table: {:?}", out.results);
    let state = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &table()).await.unwrap();
    let state = state.unwrap();
    // Every metadata file the table's log names is still there (it was deleted as "lost").
    for entry in state.metadata.metadata_log() {
        h.ports.store.head(&entry.metadata_file).await.unwrap_or_else(|e| panic!("{}: {e}", entry.metadata_file));
    }
    let ids = contents(&h.ports, &table()).await.event_ids();
    assert_eq!(ids.len(), 240);
    assert!(counts(&ids).values().all(|c| *c == 1));
}

/// A catalog whose first load misses a table that exists: another process created it between
/// this one's look and its own create.
pub struct CreatedMeanwhile {
    pub inner: Arc<dyn TablePointer>,
    pub missed: AtomicBool,
}

#[async_trait]
impl TablePointer for CreatedMeanwhile {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        if !self.missed.swap(true, Ordering::SeqCst) {
            return Ok(None);
        }
        self.inner.load(t).await
    }
    async fn create(&self, t: &TableIdent, loc: &str) -> Result<Pointer, PortError> {
        self.inner.create(t, loc).await
    }
    async fn swap(&self, t: &TableIdent, expected: &Pointer, loc: &str) -> Result<Pointer, PortError> {
        self.inner.swap(t, expected, loc).await
    }
}

#[tokio::test]
async fn a_table_created_meanwhile_with_other_settings_is_refused_not_adopted() {
    let h = Harness::new();
    let inputs = h.events("in", 1, 10, 26, 0.0).await;
    writer_table(&h, &h.ports, &inputs).await; // partitioned by day and tenant
    let mut ports = h.ports.clone();
    ports.pointer = Arc::new(CreatedMeanwhile { inner: h.ports.pointer.clone(), missed: AtomicBool::new(false) });
    let cfg = floe::config::TableConfig::new(table()).with_partition_by("identity(tenant_id)").unwrap();
    let e = ensure_table(&ports, &h.engine, &cfg, &h.warehouse, &inputs).await.unwrap_err().to_string();
    assert!(e.contains("exists with"), "{e}");
}

#[tokio::test]
async fn an_overlap_of_another_runs_sources_is_written_by_a_run_of_the_same_table_and_rows() {
    let h = Harness::new();
    let inputs = overlapping_manifests_waiting(&h).await;
    // A run of the same table over other inputs (two cron runs of one folder that overlap in
    // time): it takes the same rows as the run that wrote the overlapping manifest, so it writes
    // that run's remaining source itself instead of quarantining it.
    let mine = h.events("mine", 2, 50, 27, 0.0).await;
    let r = ingest_into(&h, &h.ports, events_table("web.events"), mine.clone()).await.unwrap();
    assert!(r.quarantined.is_empty(), "{:?}", r.quarantined);
    let mut all = inputs.clone();
    all.extend(mine);
    let mut ids = contents(&h.ports, &table()).await.event_ids();
    ids.sort();
    let mut want = source_event_ids(&all);
    want.sort();
    assert_eq!(ids, want, "every source of web.events once");
    let left = h.ports.ledger.quarantined().await.unwrap();
    assert!(left.is_empty(), "the record kept while it was written again is removed: {left:?}");
}

#[tokio::test]
async fn an_overlap_of_another_route_is_quarantined_even_for_the_same_table() {
    let h = Harness::new();
    let inputs = h.events("in", 3, 100, 23, 0.0).await;
    // The overlapping manifests took some rows of their objects (routing by value); a run of the
    // same table that takes them all must not write those sources with its own rows.
    let route = floe::route::RowRoute {
        column: "event_type".into(),
        values: ["click".to_string(), "view".to_string()].into(),
        others: false,
    };
    let t = writer_table(&h, &h.ports, &inputs).await;
    write_rows(&h.engine, &h.ports, &t, Some(&route), inputs[0..2].to_vec()).await.unwrap();
    write_rows(&h.engine, &h.ports, &t, Some(&route), inputs[1..3].to_vec()).await.unwrap();
    let mine = h.events("mine", 2, 50, 27, 0.0).await;
    let r = ingest_into(&h, &h.ports, events_table("web.events"), mine).await.unwrap();
    assert_eq!(r.quarantined.len(), 1, "{:?}", r.quarantined);
    assert_eq!(r.quarantined[0].1.kind, floe::RejectionKind::Overlap);
    assert_eq!(r.quarantined[0].0, inputs[2].uri);
}

/// Fails every `get_version` after the first `after`: a run that dies reading its sources.
struct DiesReading {
    after: AtomicUsize,
}

impl floe::ports::wrap::Around for DiesReading {
    async fn call<T, F, Fut>(&self, what: &'static str, mut op: F) -> Result<T, PortError>
    where
        T: Send,
        F: FnMut() -> Fut + Send,
        Fut: std::future::Future<Output = Result<T, PortError>> + Send,
    {
        if what == "get_version"
            && self.after.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_err()
        {
            return Err(PortError::io("get_version", "the run died"));
        }
        op().await
    }
}

#[tokio::test]
async fn another_runs_source_taken_by_a_run_that_dies_before_writing_it_is_replayable() {
    let h = Harness::new();
    let inputs = overlapping_manifests_waiting(&h).await;
    let mine = h.events("mine", 2, 50, 27, 0.0).await;
    // The run reads its own two sources, acknowledges the overlapping manifest, and dies reading
    // the other run's source it took to write again.
    let dying = floe::ports::wrap::wrap(h.ports.clone(), Arc::new(DiesReading { after: AtomicUsize::new(2) }));
    ingest_into(&h, &dying, events_table("web.events"), mine.clone()).await.expect_err("the run dies");
    let left = floe::pipeline::quarantine::outstanding(h.ports.ledger.as_ref()).await.unwrap();
    assert_eq!(left.iter().map(|r| r.uri.clone()).collect::<Vec<_>>(), vec![inputs[2].uri.clone()]);
    let mut all = inputs.clone();
    all.extend(mine);
    replay_lands_the_rest(&h, &all).await;
}
