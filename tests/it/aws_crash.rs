//! The crash-point suite on the emulator: real bucket notifications, real SQS visibility
//! timeouts and redelivery, the Lambda handlers, and a stand-in for Lambda's SQS event source
//! mapping (poll a batch, invoke, delete what the handler did not report as failed; when the
//! invocation dies, delete nothing and start a fresh "container"). Once both queues are empty
//! the compactor function gets two scheduled ticks (a full compaction), whose rewrite requests
//! the pump commits. For each fault point the role is killed there once; the pump runs until
//! the queues are empty after the last tick; then the table, its files and the quarantine are
//! checked.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_sqs::types::{MessageSystemAttributeName, QueueAttributeName};
use floe::adapters::aws::{self, Catalog, SqsQueue};
use floe::config::EngineConfig;
use floe::fault::{FaultPoint, Faults, crash_point};
use floe::handlers::compactor::{CompactorEnv, handle_compactor};
use floe::handlers::{Router, WriterEnv, handle_committer, handle_writer};
use floe::pipeline::commit::Committer;
use floe::ports::{Ports, Queue, RetryPolicy};
use floe::sample::{self, Corruption, EventsSpec};
use floe::testing::flaky::{Dice, flaky};
use tokio::sync::Mutex;

use crate::aws::Env;
use crate::common::event_ids_of;
use crate::crash::{Row, Verdict, print_table, quiet_crashes, seed, verify};

/// Seconds a received message stays invisible: short, so crashed batches come back quickly.
const VISIBILITY: i32 = 1;

/// One SQS queue as a Lambda event source mapping sees it.
struct Mapping<'a> {
    env: &'a Env,
    url: String,
}

impl Mapping<'_> {
    /// Receives a batch and shapes it as the Lambda SQS event; also returns receipts by id.
    async fn poll(&self) -> Option<(serde_json::Value, HashMap<String, String>)> {
        let got = self
            .env
            .clients
            .sqs
            .receive_message()
            .queue_url(&self.url)
            .max_number_of_messages(10)
            .visibility_timeout(VISIBILITY)
            .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
            .send()
            .await
            .expect("receive");
        if got.messages().is_empty() {
            return None;
        }
        let mut receipts = HashMap::new();
        let records: Vec<serde_json::Value> = got
            .messages()
            .iter()
            .map(|m| {
                let id = m.message_id().unwrap_or_default().to_string();
                receipts.insert(id.clone(), m.receipt_handle().unwrap_or_default().to_string());
                let count = m
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
                    .cloned()
                    .unwrap_or_else(|| "1".into());
                serde_json::json!({
                    "messageId": id, "receiptHandle": m.receipt_handle(), "body": m.body(),
                    "attributes": {"ApproximateReceiveCount": count}, "messageAttributes": {},
                    "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
                    "awsRegion": "us-east-1"
                })
            })
            .collect();
        Some((serde_json::json!({ "Records": records }), receipts))
    }

    /// What the mapping does after a successful invocation: delete all but the failures.
    async fn settle(&self, receipts: HashMap<String, String>, failed: &[String]) {
        for (id, receipt) in receipts {
            if !failed.contains(&id) {
                self.env.clients.sqs.delete_message().queue_url(&self.url).receipt_handle(receipt).send().await.ok();
            }
        }
    }

    /// Messages visible plus in flight.
    async fn depth(&self) -> u64 {
        let attrs = self
            .env
            .clients
            .sqs
            .get_queue_attributes()
            .queue_url(&self.url)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessages)
            .attribute_names(QueueAttributeName::ApproximateNumberOfMessagesNotVisible)
            .send()
            .await
            .expect("queue attributes");
        let a = attrs.attributes().cloned().unwrap_or_default();
        [QueueAttributeName::ApproximateNumberOfMessages, QueueAttributeName::ApproximateNumberOfMessagesNotVisible]
            .iter()
            .map(|k| a.get(k).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0))
            .sum()
    }
}

fn failures(r: &aws_lambda_events::event::sqs::SqsBatchResponse) -> Vec<String> {
    r.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect()
}

/// Drops six good objects and three bad ones into the landing bucket (with notifications to
/// the ingest queue); returns the expected event ids and the bad objects' URIs.
async fn land(env: &Env) -> (Vec<String>, BTreeSet<String>) {
    let spec = EventsSpec { events_per_file: 120, ..Default::default() };
    let mut expected = vec![];
    let mut objects: Vec<(String, Vec<u8>)> = vec![];
    for i in 0..6 {
        let (bytes, _) = sample::events_file(&spec, 515, i).expect("gen");
        expected.extend(event_ids_of(&bytes));
        objects.push((format!("events/part-{i:03}.avro"), bytes));
    }
    let good = objects[0].1.clone();
    let mut bad = BTreeSet::new();
    for (key, bytes) in [
        ("events/bad-trunc.avro", sample::corrupt(&good, Corruption::Truncated)),
        ("events/bad-sync.avro", sample::corrupt(&good, Corruption::BadSync)),
        ("events/bad-empty.avro", vec![]),
    ] {
        bad.insert(format!("s3://{}/{key}", env.bucket("landing")));
        objects.push((key.to_string(), bytes));
    }
    for (key, bytes) in objects {
        env.clients
            .s3
            .put_object()
            .bucket(env.bucket("landing"))
            .key(key)
            .body(ByteStream::from(bytes))
            .send()
            .await
            .expect("put");
    }
    (expected, bad)
}

/// A fresh committer "container" (cold start): new owner id, empty cache.
fn cold_committer(engine: &EngineConfig, ports: &Ports) -> Arc<Mutex<Committer>> {
    Arc::new(Mutex::new(Committer::new(engine.clone(), ports.clone())))
}

async fn crash_on_the_emulator(catalog: Catalog, point: FaultPoint) -> Row {
    let faults = Faults::crash_at(point, 1);
    let (verdict, crashes) = run_on_the_emulator(catalog, faults.clone(), None).await;
    Row { point, nth: 1, fired: crashes > 0 && faults.hits(point) >= 1, verdict }
}

/// Lands the objects of [`land`] through the handlers and the stand-in event source mapping
/// until both queues are empty, with `faults` armed and, if given, transient faults in every
/// port; returns the verdict and how many invocations crashed.
async fn run_on_the_emulator(catalog: Catalog, faults: Faults, transient: Option<&Arc<Dice>>) -> (Verdict, usize) {
    let env = Env::new(catalog).await;
    let (ingest_url, ingest_arn) = env.queue("ingest").await;
    env.notify(ingest_arn).await;
    let mut ports: Ports = aws::connect(&env.settings).await.expect("connect").with_faults(faults);
    if let Some(dice) = transient {
        let quick = RetryPolicy {
            attempts: 12,
            base_backoff: Duration::from_millis(5),
            max_backoff: Duration::from_millis(100),
        };
        ports = flaky(ports, dice).retrying(quick);
    }
    let (expected, bad) = land(&env).await;

    let writer_env = Arc::new(WriterEnv {
        engine: EngineConfig::default(),
        router: Router::new(None, "default.events".parse().expect("table")),
        warehouse: format!("s3://{}/warehouse", env.bucket("lake")),
        dead_letters: None,
        tables: Default::default(),
        create_wait: Duration::ZERO,
        retries: None,
    });
    let engine = EngineConfig { lock_lease: Duration::from_secs(1), ..EngineConfig::default() };
    let commit_queue = Arc::new(
        SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
            .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix),
    );
    let requeue: Arc<dyn Queue> = Arc::new(SqsQueue::new(env.clients.sqs.clone(), &ingest_url));
    let ingest = Mapping { env: &env, url: ingest_url.clone() };
    let commits = Mapping { env: &env, url: env.settings.commit_queue_url.clone() };
    let mut committer = cold_committer(&engine, &ports);
    let mut compactor_env = CompactorEnv::from_lookup(|_| None).expect("compactor env");
    compactor_env.options.full = true;
    let compactor_env = Arc::new(compactor_env);
    let mut ticks = 0;

    let deadline = Instant::now() + Duration::from_secs(120);
    let mut crashes = 0;
    loop {
        assert!(Instant::now() < deadline, "the pipeline did not settle");
        let mut idle = true;
        if let Some((event, receipts)) = ingest.poll().await {
            idle = false;
            let (we, p) = (writer_env.clone(), ports.clone());
            match tokio::spawn(async move { handle_writer(&we, &p, event).await }).await {
                Ok(Ok(r)) => ingest.settle(receipts, &failures(&r)).await,
                Ok(Err(e)) => eprintln!("writer invocation failed: {e}"),
                Err(e) => {
                    assert!(crash_point(e.into_panic().as_ref()).is_some(), "only an armed point crashes");
                    crashes += 1;
                }
            }
        }
        if let Some((event, receipts)) = commits.poll().await {
            idle = false;
            let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
            let (c, q, rq) = (committer.clone(), commit_queue.clone(), requeue.clone());
            match tokio::spawn(async move { handle_committer(&c, &q, rq.as_ref(), ev).await }).await {
                Ok(r) => commits.settle(receipts, &failures(&r)).await,
                Err(e) => {
                    assert!(crash_point(e.into_panic().as_ref()).is_some(), "only an armed point crashes");
                    crashes += 1;
                    committer = cold_committer(&engine, &ports);
                }
            }
        }
        if idle {
            if ingest.depth().await == 0 && commits.depth().await == 0 {
                if ticks == 2 {
                    break;
                }
                // A scheduled compactor tick.
                ticks += 1;
                let (ce, p) = (compactor_env.clone(), ports.clone());
                let tick = serde_json::json!({"detail-type": "Scheduled Event", "detail": {}});
                match tokio::spawn(async move { handle_compactor(&ce, &p, None, tick).await }).await {
                    Ok(Ok(runs)) => assert!(ticks == 2 || runs[0].planned > 0, "the first tick has work: {runs:?}"),
                    Ok(Err(e)) => eprintln!("compactor invocation failed: {e}"),
                    Err(e) => {
                        assert!(crash_point(e.into_panic().as_ref()).is_some(), "only an armed point crashes");
                        crashes += 1;
                    }
                }
                continue;
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    let table: floe::TableIdent = "default.events".parse().expect("table");
    let clean = aws::connect(&env.settings).await.expect("connect");
    (verify(&clean, &table, &expected, &bad).await, crashes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_point_on_the_emulator_loses_and_doubles_nothing() {
    quiet_crashes();
    let mut rows = vec![];
    for point in FaultPoint::ALL {
        rows.push(crash_on_the_emulator(Catalog::DynamoDb, point).await);
    }
    print_table("crash-point suite (moto: S3 notifications, SQS redelivery, Lambda handlers, DynamoDB)", &rows);
    judge(&rows);
}

/// The same with the S3 Tables catalog, at every point of the committer (the role that talks
/// to the catalog): its version-token swap, its read-back of an unreadable answer, and a
/// committer that never deletes there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_point_of_the_committer_on_s3_tables_loses_and_doubles_nothing() {
    quiet_crashes();
    let mut rows = vec![];
    for point in FaultPoint::ALL.into_iter().filter(|p| p.name().starts_with("committer")) {
        rows.push(crash_on_the_emulator(crate::aws::s3tables_catalog().await, point).await);
    }
    print_table("crash-point suite (moto: S3 Tables catalog, committer points)", &rows);
    assert_eq!(rows.len(), 6);
    judge(&rows);
}

fn judge(rows: &[Row]) {
    let missed: Vec<_> = rows.iter().filter(|r| !r.fired).map(|r| r.point.name()).collect();
    assert!(missed.is_empty(), "points never reached: {missed:?}");
    let failed: Vec<String> =
        rows.iter().filter(|r| !r.verdict.ok()).map(|r| format!("{}: {}", r.point, r.verdict.detail)).collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Every port on the emulator fails 30% of its calls, before or after taking effect. (A run
/// makes only a few dozen port calls: the rate is high so that faults always occur.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_faults_on_the_emulator_lose_and_double_nothing() {
    let seed = seed("transient faults on the emulator");
    let dice = Dice::new(0.30, seed);
    let (verdict, crashes) = run_on_the_emulator(Catalog::DynamoDb, Faults::default(), Some(&dice)).await;
    let (before, after) = dice.injected();
    eprintln!("transient faults on the emulator: {before} before the call, {after} after it took effect");
    assert_eq!(crashes, 0);
    assert!(before + after > 0, "seed {seed}: the dice bit ({before}+{after})");
    assert!(verdict.ok(), "seed {seed}: {}", verdict.detail);
}
