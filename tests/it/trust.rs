//! The committer's trust boundary on moto (issue 50): messages no Floe role could have sent,
//! forged by a sender inside the account, are refused with their reason before anything
//! changes; nothing in any bucket is deleted or overwritten; the next good message commits; both
//! tables read back exactly in PyIceberg.

use std::collections::BTreeMap;
use std::time::Duration;

use aws_sdk_s3::primitives::ByteStream;
use bytes::Bytes;
use floe::adapters::aws::{self, Catalog, SqsQueue};
use floe::config::EngineConfig;
use floe::handlers::{Router, handle_committer_with, handle_writer};
use floe::message::{FileManifest, SourceRef, batch_key};
use floe::pipeline::commit::{Committer, Senders, Tables};
use floe::ports::{Ports, Queue};
use floe::sample::{self, EventsSpec};
use tokio::sync::Mutex;

use crate::aws::{Env, create_on_first_sight, pyiceberg_check};
use crate::common::contents;

/// Puts `n` generated Avro files under `prefix` in the landing bucket; their keys.
async fn put_sources(env: &Env, prefix: &str, seed: u64, n: u64) -> Vec<String> {
    let spec = EventsSpec { events_per_file: 50, ..Default::default() };
    let mut keys = vec![];
    for i in 0..n {
        let (bytes, _) = sample::events_file(&spec, seed, i).expect("gen");
        let key = format!("{prefix}/part-{i:03}.avro");
        let put = env.clients.s3.put_object().bucket(env.bucket("landing")).key(&key);
        put.body(ByteStream::from(bytes)).send().await.expect("put");
        keys.push(key);
    }
    keys
}

/// Writes `keys` into `table` through the writer handler (creating the table on first sight);
/// returns the file manifests it sent, not yet committed.
async fn write_through(env: &Env, ports: &Ports, table: &str, keys: &[String]) -> Vec<String> {
    let writer_env = env.writer_env(table);
    let records = env.created_records(keys.iter().map(String::as_str)).await;
    let event = serde_json::json!({ "Records": records });
    if floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), &table.parse().unwrap())
        .await
        .expect("load")
        .is_none()
    {
        create_on_first_sight(&writer_env, ports, event.clone()).await;
    }
    let response = handle_writer(&writer_env, ports, event).await.expect("writer");
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 1, Duration::from_secs(10)).await;
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    event["Records"].as_array().unwrap().iter().map(|r| r["body"].as_str().unwrap().to_string()).collect()
}

/// Every object of the lake and landing buckets, with its ETag.
async fn objects(env: &Env, ports: &Ports) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for b in ["lake", "landing"] {
        for o in ports.store.list(&format!("s3://{}/", env.bucket(b))).await.expect("list") {
            out.insert(o.uri, o.version);
        }
    }
    out
}

/// A data file name of batch `n`'s id under the table at `loc` (nothing is there).
fn missing_file_for(loc: &str, n: u32) -> String {
    format!("{loc}/data/{}-00000-000-00000000000000ff.parquet", fresh_source(n).1)
}

/// A source no writer ever read, and the id of a batch of it alone.
fn fresh_source(n: u32) -> (SourceRef, String) {
    let uri = format!("s3://nowhere/forged-{n}.avro");
    let s = SourceRef { id: format!("{uri}#\"e{n}\""), uri, size: 10, rows: 1, version_id: None, created_ms: None };
    let id = batch_key(std::slice::from_ref(&s));
    (s, id)
}

#[tokio::test]
async fn forged_messages_are_refused_with_their_reason_and_change_nothing() {
    let env = Env::new(Catalog::DynamoDb).await;
    let emf = floe::adapters::aws::emf::Emf::new("floe-test", |_| None);
    let ports: Ports = aws::connect(&env.settings).await.expect("connect").with_metrics(emf.recorder());
    let (a, b) = ("trust.a", "trust.b");
    let a_keys = put_sources(&env, "a", 11, 2).await;
    let b_keys = put_sources(&env, "b", 12, 2).await;
    let engine = EngineConfig { max_commit_age: Some(Duration::from_secs(3600)), ..EngineConfig::default() };
    // Writers are routed to a, b and e; compactors compact a, b and d (d is another engine's
    // table that Floe only compacts; e one it lands but leaves uncompacted).
    let routes = r#"
        [[table]]
        name = "trust.a"
        prefixes = ["a/", "a2/"]
        [[table]]
        name = "trust.b"
        prefixes = ["b/"]
        [[table]]
        name = "trust.e"
        prefixes = ["e/"]
    "#;
    let config = floe::config::FloeToml::parse(routes).expect("routes");
    let compacted = [a, b, "trust.d"].map(|t| t.parse().unwrap());
    let tables = Tables::new(Router::new(Some(config), a.parse().unwrap()), compacted);
    let committer =
        // A commit age limit, as deployments have: manifests past it are not registered.
        Mutex::new(Committer::new(engine, ports.clone()).with_tables(tables).with_warehouse(&format!(
            "s3://{}/warehouse",
            env.bucket("lake")
        )));
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix);
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &env.queue("ingest").await.0);
    let (dlq_url, _) = env.queue("commit-dlq").await;
    let dlq = SqsQueue::new(env.clients.sqs.clone(), &dlq_url);
    let handler = Handler { env: &env, committer, queue, requeue, dlq };
    // Two tables with rows, committed by the real handler.
    let a_manifests = write_through(&env, &ports, a, &a_keys).await;
    let b_manifests = write_through(&env, &ports, b, &b_keys).await;
    let response = handler.commit([a_manifests.clone(), b_manifests.clone()].concat()).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let sa = floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), &a.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let (a_before, b_before) =
        (contents(&ports, &a.parse().unwrap()).await, contents(&ports, &b.parse().unwrap()).await);
    let a_loc = sa.metadata.location().to_string();
    let a_file = a_before.files[0].0.clone();
    let b_file = b_before.files[0].0.clone();
    let a_metadata = sa.pointer.metadata_location.clone();
    let a_bytes = ports.store.get(&a_file).await.expect("a data file");
    let template = FileManifest::from_json(&a_manifests[0]).expect("manifest");

    // What an attacker who may write into the warehouse (a writer's role) leaves there.
    let forged_file = |id: &str, hex: &str| format!("{a_loc}/data/{id}-00000-000-{hex}.parquet");
    let manifest = |n: u32, path: String, size: u64| {
        let (s, id) = fresh_source(n);
        let mut m = template.clone();
        m.sources = vec![s];
        m.batch_id = id;
        m.files.truncate(1);
        m.files[0].path = path;
        m.files[0].file_size_in_bytes = size;
        m.files[0].record_count = a_before.files[0].2.num_rows() as u64;
        m
    };
    let (_, garbage_batch) = fresh_source(5);
    let garbage = forged_file(&garbage_batch, "00000000000000aa");
    ports.store.put(&garbage, Bytes::from_static(b"PAR1 this is not parquet PAR1")).await.unwrap();
    let (_, sized_batch) = fresh_source(4);
    let copied = forged_file(&sized_batch, "00000000000000bb");
    ports.store.put(&copied, a_bytes.clone()).await.unwrap();
    let stale_output = format!("{a_loc}/data/L1-feedface-00000-000-00000000000000cc.parquet");
    ports.store.put(&stale_output, a_bytes.clone()).await.unwrap();
    let big_claim = format!("{}/{}.json", env.settings.claim_check_prefix, uuid::Uuid::new_v4());
    ports.store.put(&big_claim, Bytes::from(vec![b' '; (32 << 20) + 1])).await.unwrap();

    let mut forged: Vec<(String, &str)> = vec![];
    let mut foreign = FileManifest::from_json(&b_manifests[0]).unwrap();
    foreign.table = a.parse().unwrap();
    forged.push((foreign.to_json().unwrap(), "is not under the table's data location"));
    let landing = format!("s3://{}/{}", env.bucket("landing"), a_keys[0]);
    forged.push((manifest(1, landing, 100).to_json().unwrap(), "is not under the table's data location"));
    let (_, missing_batch) = fresh_source(2);
    let missing = forged_file(&missing_batch, "00000000000000dd");
    forged.push((manifest(2, missing, 100).to_json().unwrap(), "does not exist"));
    let traversal = format!("{a_loc}/data/../../b/data/{}", b_file.rsplit('/').next().unwrap());
    forged.push((manifest(3, traversal, 100).to_json().unwrap(), "segment"));
    forged.push((manifest(4, copied.clone(), a_bytes.len() as u64 + 1).to_json().unwrap(), "bytes, not the"));
    // Its last bytes read as a footer length of 544 MB: refused unread.
    forged.push((manifest(5, garbage.clone(), 29).to_json().unwrap(), "says its footer holds"));
    // An aged manifest (no write time) is not registered, its sources go back to the writers:
    // only sources that route to its table and lie outside the warehouse.
    let mut aged = manifest(8, missing_file_for(&a_loc, 8), 100);
    aged.written_ms = None;
    aged.sources[0].uri = a_metadata.clone();
    aged.sources[0].id = format!("{a_metadata}#\"e\"");
    aged.batch_id = batch_key(&aged.sources);
    aged.files[0].path = forged_file(&aged.batch_id, "00000000000000ee");
    forged.push((aged.to_json().unwrap(), "would send it back to the writers"));
    let mut renamed = manifest(6, a_file.clone(), a_bytes.len() as u64);
    renamed.batch_id = template.batch_id.clone();
    forged.push((renamed.to_json().unwrap(), "is not the id of its sources"));
    let mut unrouted = manifest(7, copied.clone(), a_bytes.len() as u64);
    unrouted.table = "trust.c".parse().unwrap();
    forged.push((unrouted.to_json().unwrap(), "not one this deployment routes"));
    // Appends only to tables the writers are routed to: not to one Floe only compacts.
    let mut compacted_only = manifest(9, copied.clone(), a_bytes.len() as u64);
    compacted_only.table = "trust.d".parse().unwrap();
    forged.push((compacted_only.to_json().unwrap(), "no append or create of it is taken"));
    // One source whose id joins the ids of a committed batch's sources hashes to that batch's id:
    // its files (there, of their sizes, real Parquet) would be registered a second time.
    let mut joined = template.clone();
    let mut ids: Vec<&str> = template.sources.iter().map(|s| s.id.as_str()).collect();
    ids.sort_unstable();
    assert!(ids.len() > 1, "the committed batch has several sources");
    joined.sources.truncate(1);
    joined.sources[0].uri = ids[0].split('#').next().unwrap().to_string();
    joined.sources[0].id = ids.join("\n");
    assert_eq!(batch_key(&joined.sources), template.batch_id, "the forgery collides, but for the id check");
    forged.push((joined.to_json().unwrap(), "'#' or a control character"));
    let rewrite = |added: Vec<String>| {
        let files = added
            .into_iter()
            .map(|p| serde_json::json!(floe::message::DataFileMeta { path: p, ..template.files[0].clone() }))
            .collect::<Vec<_>>();
        serde_json::json!({
            "version": 1, "kind": "rewrite", "table": a, "task_id": "feedface",
            "planned_snapshot_id": sa.metadata.current_snapshot_id(), "data_sequence_number": 1, "level": 1,
            "schema_id": 0, "spec_id": 0, "removed": [format!("{a_loc}/data/gone-00000-000-0000000000000000.parquet")],
            "removed_rows": 1, "duplicates": 0, "applies_deletes": true, "knows_late": true, "added": files,
            "written_ms": std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64,
        })
        .to_string()
    };
    forged.push((rewrite(vec![b_file.clone(), a_metadata.clone()]), "not under the table's data location"));
    // Rewrites only of tables the compactors compact: not of one Floe lands but leaves alone.
    let mut uncompacted: serde_json::Value = serde_json::from_str(&rewrite(vec![stale_output.clone()])).unwrap();
    uncompacted["table"] = "trust.e".into();
    forged.push((uncompacted.to_string(), "not one this deployment compacts"));
    forged.push((format!("floe-claim-check:{a_metadata}"), "is not a claim object"));
    forged.push((format!("floe-claim-check:{big_claim}"), "past the limit"));
    forged.push((r#"{"version":1,"table":"../../etc.passwd","batch_id":"x"}"#.to_string(), "NAMESPACE.NAME"));
    let create =
        floe::message::CreateRequest::new("trust.c".parse().unwrap(), "s3://x/y".into(), (*sa.metadata).clone());
    forged.push((serde_json::to_string(&create).unwrap(), "not one this deployment routes"));
    // A well-named stale request: not refused (a compactor that lost a race sends it), but
    // nothing it names is deleted.
    let stale = rewrite(vec![stale_output.clone()]);

    let before = objects(&env, &ports).await;
    // The next good message: two more sources for table a.
    let more = put_sources(&env, "a2", 13, 1).await;
    let good = write_through(&env, &ports, a, &more).await;
    let written = objects(&env, &ports).await;
    let mut bodies: Vec<String> = forged.iter().map(|(b, _)| b.clone()).collect();
    bodies.push(stale);
    bodies.extend(good);
    let response = handler.commit(bodies).await;
    assert!(response.batch_item_failures.is_empty(), "refused ones dead-lettered: {:?}", response.batch_item_failures);

    // Each refused message in the dead-letter queue, unchanged, with its reason.
    let dead = dead_letters(&env, &dlq_url, forged.len()).await;
    assert_eq!(dead.len(), forged.len(), "{dead:#?}");
    for (body, why) in &forged {
        let reason = dead.get(body).unwrap_or_else(|| panic!("{body:.200} is not in the dead-letter queue"));
        assert!(reason.contains(why), "{body:.200}: {reason}");
    }
    let line = emf.take_line().expect("metrics");
    let doc: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(doc["messages_refused"], forged.len() as u64, "{doc}");

    // Nothing deleted or overwritten anywhere; what is new is the good commit's metadata.
    let after = objects(&env, &ports).await;
    for (uri, etag) in &written {
        assert_eq!(after.get(uri), Some(etag), "{uri} is unchanged");
    }
    for uri in after.keys().filter(|u| !written.contains_key(*u)) {
        assert!(uri.starts_with(&format!("{a_loc}/metadata/")), "only the good commit writes: {uri}");
    }
    assert!(before.keys().all(|k| after.contains_key(k)));

    // Both tables exact, in PyIceberg too: b unchanged, a with the good message's rows only.
    let b_after = contents(&ports, &b.parse().unwrap()).await;
    assert_eq!(b_after.event_ids(), b_before.event_ids());
    assert_eq!(b_after.snapshots, b_before.snapshots);
    let a_after = contents(&ports, &a.parse().unwrap()).await;
    assert_eq!(a_after.snapshots, a_before.snapshots + 1, "one snapshot: the good message's");
    let mut expected = a_before.event_ids();
    expected.extend(crate::common::event_ids_of(&fetch(&env, &more[0]).await));
    expected.sort();
    let mut got = a_after.event_ids();
    got.sort();
    assert_eq!(got, expected, "a holds its rows and the good message's, once");
    assert!(a_after.files.iter().all(|(p, _, _)| *p != copied && *p != garbage && *p != stale_output));
    let table = env.settings.catalog_table.clone();
    pyiceberg_check("dynamodb", &table, a, "--ids-file", &got.join("\n"));
    pyiceberg_check("dynamodb", &table, b, "--ids-file", &b_before.event_ids().join("\n"));
}

/// Each kind of message only from the role that sends it (SQS's `SenderId`, as the Lambda event
/// carries it): an append or a create from a writer, a rewrite from a compactor; the queue's
/// policy alone lets each of them send both. moto stamps every message with one sender id, so
/// the records are stamped here as SQS would have stamped them. A copy the committer sends (a
/// contended message) records its original's sender and is admitted as that sender; that record
/// is believed on no one else's message.
#[tokio::test]
async fn each_kind_of_message_is_admitted_only_from_the_role_that_sends_it() {
    const WRITER: &str = "AROAWRITER0000000001:trust-writer";
    const COMPACTOR: &str = "AROACOMPACTOR0000001:trust-compactor";
    const COMMITTER: &str = "AROACOMMITTER0000001:trust-committer";
    const ATTACKER: &str = "AROAOTHERROLE0000001:someone";
    // An operator who redrives the dead-letter queue, should SQS stamp the redriver's id.
    const OPERATOR: &str = "AROAOPERATOR00000001:on-call";
    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let table = "trust.s";
    let keys = put_sources(&env, "s", 21, 2).await;
    let manifests = write_through(&env, &ports, table, &keys).await;
    assert_eq!(manifests.len(), 1);
    let senders = Senders::new(
        ["AROAWRITER0000000001".into(), "AROAOPERATOR00000001".into()],
        ["AROACOMPACTOR0000001".into()],
        "AROACOMMITTER0000001".into(),
    );
    let engine = EngineConfig { lock_wait: Duration::from_millis(300), ..EngineConfig::default() };
    let tables = Tables::new(Router::new(None, table.parse().unwrap()), []);
    let committer = Mutex::new(Committer::new(engine, ports.clone()).with_tables(tables).with_senders(senders));
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix);
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &env.queue("ingest").await.0);
    let (dlq_url, _) = env.queue("commit-dlq").await;
    let dlq = SqsQueue::new(env.clients.sqs.clone(), &dlq_url);
    let good = manifests[0].clone();
    // Distinct bodies of each kind (the sender is checked before anything else).
    let append = |n: u32| {
        let mut m = FileManifest::from_json(&good).unwrap();
        m.batch_id = format!("forged-{n}");
        m.to_json().unwrap()
    };
    let rewrite = |task: &str| {
        serde_json::json!({
            "version": 1, "kind": "rewrite", "table": table, "task_id": task, "planned_snapshot_id": 1,
            "data_sequence_number": 1, "level": 1, "schema_id": 0, "spec_id": 0, "removed": [], "removed_rows": 0,
            "duplicates": 0, "applies_deletes": true, "knows_late": true, "added": [], "written_ms": 1,
        })
        .to_string()
    };
    // (body, SenderId, floe-sent-for, the reason it is refused, whom its dead letter names)
    let cases: Vec<(String, Option<&str>, Option<&str>, &str, Option<&str>)> = vec![
        (append(1), Some(COMPACTOR), None, "may not send appends or creates", Some(COMPACTOR)),
        (rewrite("feedface"), Some(WRITER), None, "may not send rewrites", Some(WRITER)),
        // A rewrite redriven by an operator, its copy's record of the compactor lost or not:
        // operators send appends only (a dead-lettered rewrite is planned again), and a
        // record is believed on the committer's own copies alone.
        (rewrite("0ddba11"), Some(OPERATOR), None, "may not send rewrites", Some(OPERATOR)),
        (rewrite("5ca1ab1e"), Some(OPERATOR), Some(COMPACTOR), "may not send rewrites", Some(OPERATOR)),
        (append(2), Some(COMMITTER), None, "names no original sender", None),
        (append(3), Some(COMMITTER), Some(COMPACTOR), "(sent on by the committer", Some(COMPACTOR)),
        // A forged record of a writer as the original sender, on another role's message.
        (append(4), Some(ATTACKER), Some(WRITER), "sender AROAOTHERROLE0000001:someone may not", Some(ATTACKER)),
        (append(5), None, None, "carries no sender id", None),
        // The compactor's rewrite passes the sender check (and so does the committer's copy
        // recording the compactor) and meets the next: this deployment compacts no table.
        (rewrite("c0ffee"), Some(COMPACTOR), None, "not one this deployment compacts", Some(COMPACTOR)),
        (rewrite("c0ffee2"), Some(COMMITTER), Some(COMPACTOR), "not one this deployment compacts", Some(COMPACTOR)),
    ];
    for (body, ..) in &cases {
        queue.send(body.clone()).await.expect("send");
    }
    let (mut event, receipts) =
        env.sqs_event(&env.settings.commit_queue_url, cases.len(), Duration::from_secs(10)).await;
    for record in event["Records"].as_array_mut().unwrap() {
        let (_, sender, sent_for, ..) = cases.iter().find(|c| c.0 == record["body"].as_str().unwrap()).unwrap();
        stamp(record, *sender, *sent_for);
    }
    let ev = serde_json::from_value(event).expect("sqs event");
    let response = handle_committer_with(&committer, &queue, &requeue, Some(&dlq), ev).await;
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let dead = dead_letters_sent_for(&env, &dlq_url, cases.len()).await;
    assert_eq!(dead.len(), cases.len(), "{dead:#?}");
    for (body, _, _, why, named) in &cases {
        let (reason, sent_for) = &dead[body];
        assert!(reason.contains(why), "{body:.80}: {reason}");
        assert_eq!(sent_for.as_deref(), *named, "{body:.80}: its dead letter's sender");
    }
    let ident: floe::TableIdent = table.parse().unwrap();
    assert!(contents(&ports, &ident).await.event_ids().is_empty(), "nothing committed");

    // The writer's manifest meets a held lock: sent again, for the writer.
    let entity = format!("floe-committer/{table}");
    let lease = ports.lock.try_acquire(&entity, "intruder", Duration::from_secs(300)).await.expect("acquire");
    let lease = lease.expect("free");
    queue.send(good.clone()).await.expect("send");
    let (mut event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 1, Duration::from_secs(10)).await;
    stamp(&mut event["Records"][0], Some(WRITER), None);
    let response =
        handle_committer_with(&committer, &queue, &requeue, Some(&dlq), serde_json::from_value(event).unwrap()).await;
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    ports.lock.release(&lease).await.expect("release");
    let (mut event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 1, Duration::from_secs(10)).await;
    let record = &mut event["Records"][0];
    assert_eq!(record["body"].as_str(), Some(good.as_str()), "the copy is the manifest");
    assert_eq!(record["messageAttributes"]["floe-sent-for"]["stringValue"], WRITER, "the copy names its sender");
    // SQS names the committer as the copy's sender; the committer admits it as the writer's.
    let sent_for = record["messageAttributes"]["floe-sent-for"]["stringValue"].as_str().map(str::to_string);
    stamp(record, Some(COMMITTER), sent_for.as_deref());
    let response =
        handle_committer_with(&committer, &queue, &requeue, Some(&dlq), serde_json::from_value(event).unwrap()).await;
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let mut expected = vec![];
    for key in &keys {
        expected.extend(crate::common::event_ids_of(&fetch(&env, key).await));
    }
    expected.sort();
    let mut got = contents(&ports, &ident).await.event_ids();
    got.sort();
    assert_eq!(got, expected, "the writer's rows, once");
    pyiceberg_check("dynamodb", &env.settings.catalog_table, table, "--ids-file", &got.join("\n"));
}

/// Sets a record's `SenderId` and `floe-sent-for` as SQS would deliver them.
fn stamp(record: &mut serde_json::Value, sender: Option<&str>, sent_for: Option<&str>) {
    record["attributes"]["SenderId"] = sender.map_or(serde_json::Value::Null, |s| s.into());
    if sender.is_none() {
        record["attributes"].as_object_mut().unwrap().remove("SenderId");
    }
    record["messageAttributes"] = match sent_for {
        Some(s) => serde_json::json!({"floe-sent-for": {"stringValue": s, "dataType": "String"}}),
        None => serde_json::json!({}),
    };
}

/// The committer function as its event source mapping runs it, with a dead-letter queue.
struct Handler<'a> {
    env: &'a Env,
    committer: Mutex<Committer>,
    queue: SqsQueue,
    requeue: SqsQueue,
    dlq: SqsQueue,
}

impl Handler<'_> {
    /// Sends `bodies` to the commit queue and runs the handler once over all that is there.
    async fn commit(&self, bodies: Vec<String>) -> aws_lambda_events::event::sqs::SqsBatchResponse {
        for body in bodies {
            self.queue.send(body).await.expect("send");
        }
        let url = &self.env.settings.commit_queue_url;
        let n = queue_depth(self.env).await;
        let (event, receipts) = self.env.sqs_event(url, n, Duration::from_secs(10)).await;
        let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
        let response = handle_committer_with(&self.committer, &self.queue, &self.requeue, Some(&self.dlq), ev).await;
        self.env.delete_all(url, &receipts).await;
        response
    }
}

async fn fetch(env: &Env, key: &str) -> Vec<u8> {
    let got = env.clients.s3.get_object().bucket(env.bucket("landing")).key(key).send().await.expect("get");
    got.body.collect().await.expect("body").into_bytes().to_vec()
}

/// Messages visible in the commit queue.
async fn queue_depth(env: &Env) -> usize {
    use aws_sdk_sqs::types::QueueAttributeName;
    let attrs = env
        .clients
        .sqs
        .get_queue_attributes()
        .queue_url(&env.settings.commit_queue_url)
        .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
        .send()
        .await
        .expect("attributes");
    let n = attrs.attributes().and_then(|a| a.get(&QueueAttributeName::ApproximateNumberOfMessages)).cloned();
    n.and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// The dead-letter queue's messages: body → the reason in their `floe-refused` attribute.
async fn dead_letters(env: &Env, url: &str, want: usize) -> BTreeMap<String, String> {
    dead_letters_sent_for(env, url, want).await.into_iter().map(|(body, (reason, _))| (body, reason)).collect()
}

/// The dead-letter queue's messages: body → the reason and whom the committer sent it for
/// (`floe-refused`, `floe-sent-for`).
async fn dead_letters_sent_for(env: &Env, url: &str, want: usize) -> BTreeMap<String, (String, Option<String>)> {
    let mut out = BTreeMap::new();
    for _ in 0..20 {
        let got = env
            .clients
            .sqs
            .receive_message()
            .queue_url(url)
            .max_number_of_messages(10)
            .message_attribute_names("All")
            .wait_time_seconds(1)
            .send()
            .await
            .expect("receive");
        for m in got.messages() {
            let attribute = |name| m.message_attributes().and_then(|a| a.get(name)).and_then(|v| v.string_value());
            let reason = attribute("floe-refused").unwrap_or("(no reason)").to_string();
            out.insert(
                m.body().unwrap_or_default().to_string(),
                (reason, attribute("floe-sent-for").map(str::to_string)),
            );
        }
        if out.len() >= want {
            break;
        }
    }
    out
}

/// The REST catalog's secrets come from Secrets Manager or an SSM SecureString named by ARN, read
/// at the cold start with the function's credentials: never from the environment in the clear.
/// A plain String parameter, an ARN of anything else, and a secret given both ways are refused
/// by name.
#[tokio::test]
async fn rest_secrets_are_read_by_arn_from_secrets_manager_or_an_ssm_secure_string() {
    use floe::adapters::aws::secrets::resolve;
    let env = Env::new(Catalog::DynamoDb).await;
    let sdk = &env.clients.sdk;
    let sm = aws_sdk_secretsmanager::Client::new(sdk);
    let secret = sm
        .create_secret()
        .name(format!("floe-rest-{}", env.suffix))
        .secret_string("client:s3cret\n")
        .send()
        .await
        .expect("create secret");
    let secret_arn = secret.arn().expect("arn").to_string();
    let ssm = aws_sdk_ssm::Client::new(sdk);
    let put = |name: String, kind: aws_sdk_ssm::types::ParameterType| {
        let ssm = ssm.clone();
        async move {
            ssm.put_parameter().name(&name).value("tok-123").r#type(kind).send().await.expect("put parameter");
            let got = ssm.get_parameter().name(&name).send().await.expect("get parameter");
            got.parameter.and_then(|p| p.arn).expect("parameter arn")
        }
    };
    let secure = put(format!("/floe/{}/token", env.suffix), aws_sdk_ssm::types::ParameterType::SecureString).await;
    let plain = put(format!("/floe/{}/plain", env.suffix), aws_sdk_ssm::types::ParameterType::String).await;
    let lookup =
        |pairs: Vec<(&'static str, String)>| move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());

    let got = resolve(sdk, &lookup(vec![("FLOE_REST_CREDENTIAL_ARN", secret_arn.clone())])).await.expect("secret");
    assert_eq!(got.get("FLOE_REST_CREDENTIAL").map(String::as_str), Some("client:s3cret"));
    let got = resolve(sdk, &lookup(vec![("FLOE_REST_TOKEN_ARN", secure.clone())])).await.expect("secure string");
    assert_eq!(got.get("FLOE_REST_TOKEN").map(String::as_str), Some("tok-123"));
    assert!(resolve(sdk, &lookup(vec![])).await.expect("nothing to read").is_empty());

    let refused = |vars| async { resolve(sdk, &lookup(vars)).await.unwrap_err().to_string() };
    let e = refused(vec![("FLOE_REST_TOKEN_ARN", plain)]).await;
    assert!(e.contains("not a SecureString"), "{e}");
    let e = refused(vec![("FLOE_REST_TOKEN_ARN", secure), ("FLOE_REST_TOKEN", "t".into())]).await;
    assert!(e.contains("not both"), "{e}");
    let e = refused(vec![("FLOE_REST_CREDENTIAL_ARN", format!("arn:aws:s3:::lake-{}/secret", env.suffix))]).await;
    assert!(e.contains("must be the ARN of a Secrets Manager secret"), "{e}");
    let gone = secret_arn.replace("floe-rest-", "floe-gone-");
    let e = refused(vec![("FLOE_REST_CREDENTIAL_ARN", gone)]).await;
    assert!(e.contains("cannot read"), "{e}");
}
