//! The AWS adapters and Lambda handlers against a real emulator (moto's server, started by
//! `tests/with-moto.sh`), then the table read back by PyIceberg's DynamoDB and Glue catalogs.

use std::time::{Duration, Instant};

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{Event, NotificationConfiguration, QueueConfiguration};
use aws_sdk_sqs::types::QueueAttributeName;
use floe::adapters::aws::{self, AwsSettings, Catalog, Clients, SqsQueue};
use floe::config::EngineConfig;
use floe::handlers::compactor::{CompactorEnv, handle_compactor};
use floe::handlers::{Router, WriterEnv, handle_committer, handle_writer};
use floe::pipeline::commit::{Committer, MessageResult};
use floe::ports::Ports;
use floe::sample::{self, Corruption, EventsSpec};
use floe::testing::contract;
use tokio::sync::Mutex;

use crate::common::{contents, counts};

pub(crate) fn endpoint() -> String {
    std::env::var("AWS_ENDPOINT_URL")
        .expect("the AWS tests need moto: run them through tests/with-moto.sh (`make test` does)")
}

pub(crate) struct Env {
    pub(crate) settings: AwsSettings,
    pub(crate) clients: Clients,
    pub(crate) suffix: String,
}

impl Env {
    pub(crate) async fn new(catalog: Catalog) -> Self {
        let ep = endpoint();
        let suffix = uuid::Uuid::new_v4().simple().to_string()[..10].to_string();
        let mut settings = AwsSettings {
            endpoint_url: Some(ep),
            catalog,
            catalog_table: format!("iceberg-{suffix}"),
            lock_table: format!("locks-{suffix}"),
            ledger_table: format!("ledger-{suffix}"),
            commit_queue_url: String::new(),
            claim_check_prefix: format!("s3://lake-{suffix}/_floe/claims"),
            warehouse: format!("s3://lake-{suffix}/warehouse"),
            ingest_queue_url: None,
            create_dynamodb_tables: true,
            // As the module deploys it: every test's committed records carry a time to live.
            ledger_ttl: Some(std::time::Duration::from_secs(45 * 86_400)),
            eventually_consistent_lookups: false,
        };
        let clients = Clients::load(&settings).await;
        for b in ["landing", "lake"] {
            clients.s3.create_bucket().bucket(format!("{b}-{suffix}")).send().await.expect("create bucket");
        }
        let env = Env { settings: settings.clone(), clients, suffix };
        settings.commit_queue_url = env.queue("commit").await.0;
        Env { settings, ..env }
    }

    pub(crate) async fn queue(&self, name: &str) -> (String, String) {
        let url = self
            .clients
            .sqs
            .create_queue()
            .queue_name(format!("{name}-{}", self.suffix))
            .send()
            .await
            .expect("create queue")
            .queue_url()
            .expect("url")
            .to_string();
        let attrs = self
            .clients
            .sqs
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(QueueAttributeName::QueueArn)
            .send()
            .await
            .expect("queue attributes");
        let arn = attrs.attributes().and_then(|a| a.get(&QueueAttributeName::QueueArn)).expect("arn").clone();
        (url, arn)
    }

    /// Points the landing bucket's object-created notifications at the queue `arn`.
    pub(crate) async fn notify(&self, arn: String) {
        let to_queue = QueueConfiguration::builder().queue_arn(arn).events(Event::S3ObjectCreated).build();
        self.clients
            .s3
            .put_bucket_notification_configuration()
            .bucket(self.bucket("landing"))
            .notification_configuration(
                NotificationConfiguration::builder().queue_configurations(to_queue.expect("config")).build(),
            )
            .send()
            .await
            .expect("notification");
    }

    /// A writer's settings here: every object to `table`, data under the lake bucket, no
    /// dead-letter queue, tables created at first sight.
    pub(crate) fn writer_env(&self, table: &str) -> WriterEnv {
        WriterEnv {
            engine: EngineConfig::default(),
            router: Router::new(None, table.parse().unwrap()),
            warehouse: format!("s3://{}/warehouse", self.bucket("lake")),
            dead_letters: None,
            tables: Default::default(),
            create_wait: Duration::ZERO,
            retries: None,
        }
    }

    /// The object-created notification records S3 sends for `keys` of the landing bucket.
    pub(crate) async fn created_records<'a>(&self, keys: impl IntoIterator<Item = &'a str>) -> Vec<serde_json::Value> {
        let mut records = vec![];
        for key in keys {
            let head = self
                .clients
                .s3
                .head_object()
                .bucket(self.bucket("landing"))
                .key(key)
                .send()
                .await
                .expect("head object");
            records.push(serde_json::json!({
                "eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
                "s3": {"bucket": {"name": self.bucket("landing")},
                       "object": {"key": key, "size": head.content_length(), "eTag": head.e_tag()}}
            }));
        }
        records
    }

    pub(crate) fn bucket(&self, b: &str) -> String {
        format!("{b}-{}", self.suffix)
    }

    /// Receives raw messages and shapes them as the Lambda SQS event source would.
    pub(crate) async fn sqs_event(&self, url: &str, want: usize, wait: Duration) -> (serde_json::Value, Vec<String>) {
        let deadline = Instant::now() + wait;
        let mut records = vec![];
        let mut receipts = vec![];
        while records.len() < want && Instant::now() < deadline {
            let got = self
                .clients
                .sqs
                .receive_message()
                .queue_url(url)
                .max_number_of_messages(10)
                .wait_time_seconds(1)
                .message_system_attribute_names(aws_sdk_sqs::types::MessageSystemAttributeName::SenderId)
                .message_attribute_names("All")
                .send()
                .await
                .expect("receive");
            for m in got.messages() {
                receipts.push(m.receipt_handle().unwrap_or_default().to_string());
                let sender =
                    m.attributes().and_then(|a| a.get(&aws_sdk_sqs::types::MessageSystemAttributeName::SenderId));
                let attributes: serde_json::Map<String, serde_json::Value> = (m
                    .message_attributes()
                    .into_iter()
                    .flatten())
                .filter_map(|(k, v)| {
                    Some((k.clone(), serde_json::json!({"stringValue": v.string_value()?, "dataType": "String"})))
                })
                .collect();
                records.push(serde_json::json!({
                    "messageId": m.message_id(), "receiptHandle": m.receipt_handle(), "body": m.body(),
                    "attributes": {"ApproximateReceiveCount": "1", "SenderId": sender}, "messageAttributes": attributes,
                    "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q", "awsRegion": "us-east-1"
                }));
            }
        }
        (serde_json::json!({ "Records": records }), receipts)
    }

    pub(crate) async fn delete_all(&self, url: &str, receipts: &[String]) {
        for r in receipts {
            self.clients.sqs.delete_message().queue_url(url).receipt_handle(r).send().await.expect("delete");
        }
    }
}

/// What the writer and committer handlers recorded (as the functions print it in CloudWatch
/// EMF), and the changelog the committer left in the snapshot summary.
async fn check_metrics_and_changelog(
    emf: &floe::adapters::aws::emf::Emf,
    ports: &Ports,
    table: &floe::TableIdent,
    rows: usize,
) {
    let line = emf.take_line().expect("something was recorded");
    let doc: serde_json::Value = serde_json::from_str(&line).expect("EMF is JSON");
    assert_eq!(doc["_aws"]["CloudWatchMetrics"][0]["Namespace"], "Floe");
    assert_eq!(doc["rows"], rows as u64 * 2, "every good row decoded, in both deliveries of the batch: {doc}");
    assert_eq!(doc["quarantined"], 2, "{doc}");
    assert_eq!(doc["commits"], 1, "{doc}");
    assert_eq!(doc["committed_rows"], rows as u64, "{doc}");
    let lag = doc["freshness_lag_ms"].as_array().expect("a freshness lag per snapshot");
    assert_eq!(lag.len(), 1);
    let lag = lag[0].as_f64().unwrap();
    assert!((0.0..600_000.0).contains(&lag), "commit time − S3 eventTime of the oldest object: {lag}");
    assert!(doc["commit_latency_ms"].as_array().is_some_and(|v| v.len() == 1), "{doc}");
    let state = floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await.unwrap().unwrap();
    let summary = &state.metadata.current_snapshot().unwrap().summary().additional_properties;
    assert_eq!(summary["floe.source-objects"], "4");
    assert_eq!(summary["floe.source-rows"], rows.to_string());
    assert!(summary["floe.source-bytes"].parse::<u64>().unwrap() > 0);
    assert_eq!(summary["floe.writer-batches"], "1");
    assert_eq!(summary["floe.batch-ids"].len(), 20);
    let (oldest, newest): (i64, i64) =
        (summary["floe.oldest-source-ms"].parse().unwrap(), summary["floe.newest-source-ms"].parse().unwrap());
    assert!(oldest <= newest && newest <= state.metadata.last_updated_ms(), "{summary:?}");
}

/// A writer's first sight of a table on AWS: it cannot create the table itself, so it asks
/// the committer (here with no wait: the batch fails and nothing is written); the committer
/// registers the table; redelivered, the batch lands.
pub(crate) async fn create_on_first_sight(writer_env: &WriterEnv, ports: &Ports, event: serde_json::Value) {
    assert_eq!(writer_env.create_wait, Duration::ZERO, "the test runs the committer only after the writer");
    match handle_writer(writer_env, ports, event).await {
        Ok(r) => assert!(!r.batch_item_failures.is_empty(), "no table yet: the batch must fail"),
        Err(e) => assert!(e.to_string().contains("asked the committer to create it"), "{e}"),
    }
    let mut committer = Committer::new(EngineConfig::default(), ports.clone());
    let out = committer.run_once(10, Duration::from_secs(30)).await.expect("commit").expect("the create request");
    assert_eq!(out.results.len(), 1, "{:?}", out.results);
    assert_eq!(out.results[0].1, MessageResult::Created, "{:?}", out.results);
    assert!(out.snapshots.is_empty(), "nothing was written before the table existed");
}

#[tokio::test]
async fn aws_adapters_pass_the_port_contracts() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports = aws::connect(&env.settings).await.expect("connect");
    let table = floe::TableIdent::new("ns", "t");
    contract::object_store(ports.store.as_ref(), &format!("s3://{}/contract", env.bucket("lake"))).await;
    contract::table_pointer(ports.pointer.as_ref(), &table).await;
    contract::ledger(ports.ledger.as_ref(), &table).await;
    contract::lock(ports.lock.as_ref(), "floe-committer/ns.t").await;
    contract::queue(ports.commit_queue.as_ref()).await;
}

#[tokio::test]
async fn glue_table_pointer_passes_the_port_contract() {
    let env = Env::new(Catalog::Glue { catalog_id: None, keep_archive: false }).await;
    let ports = aws::connect(&env.settings).await.expect("connect");
    // Glue databases are the namespaces: one per test run keeps runs apart.
    let table = floe::TableIdent::new(format!("ns_{}", env.suffix), "t");
    contract::table_pointer(ports.pointer.as_ref(), &table).await;
}

/// A fresh table bucket on the emulator: the S3 Tables catalog of one test.
pub(crate) async fn s3tables_catalog() -> Catalog {
    let settings = AwsSettings { endpoint_url: Some(endpoint()), ..AwsSettings::default() };
    let clients = Clients::load(&settings).await;
    let name = format!("tables-{}", &uuid::Uuid::new_v4().simple().to_string()[..10]);
    let out = clients.s3tables.create_table_bucket().name(name).send().await.expect("create table bucket");
    Catalog::S3Tables { bucket_arn: out.arn }
}

#[tokio::test]
async fn s3tables_table_pointer_passes_the_port_contract() {
    let env = Env::new(s3tables_catalog().await).await;
    let ports = aws::connect(&env.settings).await.expect("connect");
    assert!(ports.pointer.manages_files());
    contract::table_pointer(ports.pointer.as_ref(), &floe::TableIdent::new("ns", "t")).await;
}

#[tokio::test]
async fn large_manifests_travel_by_claim_check() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports = aws::connect(&env.settings).await.expect("connect");
    let big = "x".repeat(400 * 1024);
    ports.commit_queue.send(big.clone()).await.expect("send");
    let got = ports.commit_queue.receive(1, Duration::from_secs(30)).await.expect("receive");
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body, big, "the body comes back whole");
    let claims = ports.store.list(&env.settings.claim_check_prefix).await.expect("list");
    assert_eq!(claims.len(), 1, "stored once under the claim check prefix");
}

/// A claim-checked message the committer settles has its claim check deleted; one it leaves
/// for redelivery keeps it (it will be read again).
async fn settled_claim_checks_are_deleted(
    env: &Env,
    ports: &Ports,
    committer: &Mutex<Committer>,
    queue: &SqsQueue,
    requeue: &SqsQueue,
    table: &str,
) {
    // A manifest of sources without rows (empty objects: no files), too big for one message.
    let sources: Vec<floe::message::SourceRef> = (0..3000)
        .map(|i| floe::message::SourceRef {
            id: format!("s3://{}/empty/{i:05}-{}.avro#etag", env.bucket("landing"), "x".repeat(60)),
            uri: format!("s3://{}/empty/{i:05}-{}.avro", env.bucket("landing"), "x".repeat(60)),
            size: 0,
            rows: 0,
            version_id: None,
            created_ms: None,
        })
        .collect();
    let state = floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), &table.parse().unwrap())
        .await
        .unwrap()
        .unwrap();
    let manifest = floe::message::FileManifest {
        version: floe::message::MESSAGE_VERSION,
        table: table.parse().unwrap(),
        batch_id: floe::message::batch_key(&sources),
        schema_id: state.metadata.current_schema_id(),
        spec_id: state.metadata.default_partition_spec_id(),
        sources,
        files: vec![],
        evolution: None,
        written_ms: Some(epoch_ms()),
        rows: None,
    };
    let body = manifest.to_json().unwrap();
    assert!(body.len() > 240 * 1024, "{} bytes: a claim check", body.len());
    ports.commit_queue.send(body).await.expect("send");
    ports.commit_queue.send(format!("{{\"not a manifest\": \"{}\"}}", "y".repeat(300 * 1024))).await.expect("send");
    let claims = || async { ports.store.list(&env.settings.claim_check_prefix).await.expect("list").len() };
    assert_eq!(claims().await, 2);
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 2, Duration::from_secs(10)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let response = handle_committer(committer, queue, requeue, ev).await;
    assert_eq!(response.batch_item_failures.len(), 1, "only the bad message stays: {:?}", response.batch_item_failures);
    assert_eq!(claims().await, 1, "the settled manifest's claim check is gone, the other kept");
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
}

/// The ledger records of committed sources and of their snapshot carry a time to live (the test
/// env's 45 days); when the writer skips a committed source sent again, its record's time and
/// its snapshot's restart: made to run out tomorrow, the redelivery puts them 45 days ahead.
async fn ttl_restarts_when_a_committed_source_is_sent_again(
    env: &Env,
    writer_env: &WriterEnv,
    ports: &Ports,
    table: &str,
    delivery: serde_json::Value,
) {
    use aws_sdk_dynamodb::types::AttributeValue;
    let ddb = &env.clients.dynamodb;
    let items = ddb.scan().table_name(&env.settings.ledger_table).send().await.expect("scan").items.unwrap_or_default();
    let pk_of =
        |i: &std::collections::HashMap<String, AttributeValue>| i.get("pk").and_then(|v| v.as_s().ok()).cloned();
    // The objects of `delivery` (others were committed too), and the snapshot they landed in.
    let sources: Vec<_> = items.iter().filter(|i| pk_of(i).is_some_and(|pk| pk.contains("/events/dt="))).collect();
    assert!(!sources.is_empty(), "the sources' records");
    let snapshots: std::collections::BTreeSet<String> =
        sources.iter().filter_map(|i| i.get("snapshot_id").and_then(|v| v.as_n().ok()).cloned()).collect();
    let mut kept: Vec<String> = sources.iter().filter_map(|i| pk_of(i)).collect();
    kept.extend(snapshots.iter().map(|s| format!("landed|{table}|{s}")));
    let expires = |pk: &str| {
        let item = items.iter().find(|i| pk_of(i).is_some_and(|p| p == pk));
        item.and_then(|i| i.get("expires_at")).and_then(|v| v.as_n().ok()).and_then(|n| n.parse::<i64>().ok())
    };
    let day = 86_400;
    let now = epoch_ms() / 1000;
    for pk in &kept {
        assert!(expires(pk).is_some_and(|t| t >= now + 44 * day), "{pk}: 45 days from its commit");
    }
    for pk in &kept {
        let soon = ddb.update_item().table_name(&env.settings.ledger_table).key("pk", AttributeValue::S(pk.clone()));
        let soon = soon
            .update_expression("SET expires_at = :t")
            .expression_attribute_values(":t", AttributeValue::N((now + day).to_string()));
        soon.send().await.expect("shorten");
    }
    let response = handle_writer(writer_env, ports, delivery).await.expect("writer");
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    let items = ddb.scan().table_name(&env.settings.ledger_table).send().await.expect("scan").items.unwrap_or_default();
    for pk in &kept {
        let item = items.iter().find(|i| pk_of(i).is_some_and(|p| p == *pk)).expect("kept");
        let at: i64 = item["expires_at"].as_n().expect("n").parse().expect("secs");
        assert!(at >= now + 44 * day, "{pk}: the resend restarted its time ({at})");
    }
    let ids: Vec<String> =
        sources.iter().filter_map(|i| pk_of(i)?.split_once('|').map(|(_, id)| id.to_string())).collect();
    let states = ports.ledger.lookup(&table.parse().unwrap(), &ids).await.expect("lookup");
    assert_eq!(states.len(), ids.len());
    assert!(states.iter().all(|(_, s)| matches!(s, floe::ports::SourceState::Committed { .. })), "{states:?}");
}

fn epoch_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

async fn drop_files(env: &Env, n: u64) -> (Vec<String>, usize) {
    let spec = EventsSpec { events_per_file: 300, ..Default::default() };
    let mut keys = vec![];
    let mut rows = 0;
    let mut first = None;
    for i in 0..n {
        let (bytes, events) = sample::events_file(&spec, 77, i).expect("gen");
        let key = format!("events/dt=2026-11-29/part {i:03}.avro");
        env.clients
            .s3
            .put_object()
            .bucket(env.bucket("landing"))
            .key(&key)
            .body(ByteStream::from(bytes.clone()))
            .send()
            .await
            .expect("put");
        keys.push(key);
        rows += events;
        first.get_or_insert(bytes);
    }
    let bad = sample::corrupt(&first.expect("a file"), Corruption::Truncated);
    env.clients
        .s3
        .put_object()
        .bucket(env.bucket("landing"))
        .key("events/broken.avro")
        .body(ByteStream::from(bad))
        .send()
        .await
        .expect("put");
    (keys, rows)
}

#[tokio::test]
async fn s3_notifications_land_exactly_once_in_a_dynamodb_catalog() {
    notifications_through_writer_and_committer(Catalog::DynamoDb).await;
}

#[tokio::test]
async fn s3_notifications_land_exactly_once_in_the_glue_catalog() {
    notifications_through_writer_and_committer(Catalog::Glue { catalog_id: None, keep_archive: false }).await;
}

#[tokio::test]
async fn s3_notifications_land_exactly_once_in_s3_tables() {
    notifications_through_writer_and_committer(s3tables_catalog().await).await;
}

/// The same through an Iceberg REST catalog signing in with OAuth2 client credentials, whose
/// first commit races another writer's (a 409: re-planned) and whose next commit lands with its
/// answer lost (a 500: settled by reading the table back, not committed twice).
#[tokio::test]
async fn s3_notifications_land_exactly_once_through_a_rest_catalog() {
    let server = crate::rest::RestServer::start(&["--prefix", "floe", "--client", "floe:s3cret"]);
    server.faults(serde_json::json!({ "race": 1, "lose_answers": 1 }));
    let auth = floe::adapters::rest::RestAuth::ClientCredentials {
        client_id: "floe".into(),
        client_secret: "s3cret".into(),
        token_uri: format!("{}/v1/oauth/tokens", server.uri),
        scope: "catalog".into(),
    };
    notifications_through_writer_and_committer(server.catalog(auth)).await;
    let stats = server.stats();
    assert_eq!(stats["lost_answers"], 1, "{stats}");
    assert!(stats["conflicts"].as_u64() >= Some(1), "the raced commit was refused: {stats}");
}

/// Real bucket notifications through both handlers, redelivered, with a corrupt object; then
/// the table read back by PyIceberg through the same catalog.
async fn notifications_through_writer_and_committer(catalog: Catalog) {
    let glue = catalog != Catalog::DynamoDb;
    let env = Env::new(catalog).await;
    // Glue databases are shared by the whole emulator: one namespace per run.
    let table_name = if glue { format!("ns_{}.events", env.suffix) } else { "default.events".to_string() };
    let (ingest_url, ingest_arn) = env.queue("ingest").await;
    env.notify(ingest_arn).await;
    let emf = floe::adapters::aws::emf::Emf::new("floe-test", |_| None);
    let ports: Ports = aws::connect(&env.settings).await.expect("connect").with_metrics(emf.recorder());
    let (dlq_url, _) = env.queue("dlq").await;
    let (_keys, rows) = drop_files(&env, 4).await;

    // Writer: the real notifications (5 objects, plus moto's s3:TestEvent).
    let writer_env = WriterEnv {
        dead_letters: Some(SqsQueue::new(env.clients.sqs.clone(), &dlq_url)),
        tables: std::sync::Arc::new(floe::table::WriterTables::new(Duration::from_secs(60))),
        ..env.writer_env(&table_name)
    };
    let (event, receipts) = env.sqs_event(&ingest_url, 6, Duration::from_secs(20)).await;
    create_on_first_sight(&writer_env, &ports, event.clone()).await;
    let response = handle_writer(&writer_env, &ports, event.clone()).await.expect("writer");
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    env.delete_all(&ingest_url, &receipts).await;
    // The same notifications delivered again: nothing new may land.
    let first_delivery = event.clone();
    let again = handle_writer(&writer_env, &ports, event).await.expect("writer again");
    assert!(again.batch_item_failures.is_empty());
    assert_eq!(writer_env.tables.loads(), 1, "a warm writer reads the table's metadata once, not per invocation");

    // Committer: the manifests, as the commit queue's event source mapping delivers them.
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix);
    let committer = Mutex::new(Committer::new(EngineConfig::default(), ports.clone()));
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 2, Duration::from_secs(10)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &ingest_url);
    let response = handle_committer(&committer, &queue, &requeue, ev).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    check_metrics_and_changelog(&emf, &ports, &table_name.parse().unwrap(), rows).await;
    settled_claim_checks_are_deleted(&env, &ports, &committer, &queue, &requeue, &table_name).await;

    // The compactor function (a full compaction), then the committer over its rewrite requests.
    let table: floe::TableIdent = table_name.parse().unwrap();
    let mut compactor_env = CompactorEnv::from_lookup(|_| None).expect("compactor env");
    compactor_env.tables = vec![table.clone()];
    compactor_env.options.full = true;
    let tick = serde_json::from_str(include_str!("../../events/compactor/scheduled.json")).expect("sample event");
    let runs = handle_compactor(&compactor_env, &ports, None, tick).await.expect("compactor");
    assert_eq!(runs.len(), 1);
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, runs[0].tasks, Duration::from_secs(10)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let response = handle_committer(&committer, &queue, &requeue, ev).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    let after = contents(&ports, &table).await;
    assert!(runs[0].tasks > 0, "{runs:?}");
    for (path, _, _) in &after.files {
        assert!(path.rsplit('/').next().unwrap_or_default().starts_with("L2-"), "every file compacted: {path}");
    }

    let c = contents(&ports, &table).await;
    if let Catalog::S3Tables { .. } = env.settings.catalog {
        // Every file where S3 Tables put the table, none under Floe's warehouse.
        let state =
            floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), &table).await.unwrap().unwrap();
        let home = state.metadata.location().to_string();
        assert!(home.ends_with("--table-s3"), "moto's table storage: {home}");
        assert!(state.pointer.metadata_location.starts_with(&home), "{}", state.pointer.metadata_location);
        assert!(c.files.iter().all(|(p, _, _)| p.starts_with(&format!("{home}/data/"))), "{:?}", c.files);
    }
    let ids = c.event_ids();
    assert_eq!(ids.len(), rows, "every row of every good object, once");
    assert!(counts(&ids).values().all(|n| *n == 1));
    let q = ports.ledger.quarantined().await.expect("quarantined");
    assert_eq!(q.len(), 1);
    assert!(q[0].uri.ends_with("events/broken.avro"), "{:?}", q[0]);
    ttl_restarts_when_a_committed_source_is_sent_again(&env, &writer_env, &ports, &table_name, first_delivery).await;
    // ... and reported to the DLQ with its reason (twice: the batch was delivered twice).
    let (dead, _) = env.sqs_event(&dlq_url, 2, Duration::from_secs(5)).await;
    let bodies: Vec<serde_json::Value> = dead["Records"]
        .as_array()
        .expect("records")
        .iter()
        .map(|r| serde_json::from_str(r["body"].as_str().expect("body")).expect("json"))
        .collect();
    assert!(!bodies.is_empty(), "the quarantined object reached the DLQ");
    for b in &bodies {
        assert!(b["uri"].as_str().unwrap_or_default().ends_with("events/broken.avro"), "{b}");
        assert_eq!(b["kind"], "corrupt", "{b}");
        assert!(!b["reason"].as_str().unwrap_or_default().is_empty(), "{b}");
    }

    // The independent reader: PyIceberg's catalog of the same kind, pointed at the same emulator.
    let (kind, catalog) = match &env.settings.catalog {
        Catalog::DynamoDb => ("dynamodb", env.settings.catalog_table.clone()),
        Catalog::Glue { .. } => ("glue", env.settings.catalog_table.clone()),
        Catalog::S3Tables { bucket_arn } => ("s3tables", bucket_arn.clone()),
        Catalog::Rest(rest) => match &rest.auth {
            floe::adapters::rest::RestAuth::ClientCredentials { client_id, client_secret, .. } => {
                ("rest", format!("{} {client_id}:{client_secret}", rest.uri))
            }
            _ => ("rest", rest.uri.clone()),
        },
    };
    pyiceberg_check(kind, &catalog, &table_name, "--ids-file", &ids.join("\n"));
}

#[tokio::test]
async fn lock_contention_hands_messages_back_with_a_fresh_receive_count() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let (keys, _) = drop_files(&env, 2).await;
    let records = env.created_records(keys.iter().map(String::as_str)).await;
    let writer_env = env.writer_env("default.events");
    create_on_first_sight(&writer_env, &ports, serde_json::json!({ "Records": records })).await;
    let response = handle_writer(&writer_env, &ports, serde_json::json!({ "Records": records })).await.expect("writer");
    assert!(response.batch_item_failures.is_empty());

    // Someone else holds the table's lock for longer than the committer is willing to wait.
    let lease = ports
        .lock
        .try_acquire("floe-committer/default.events", "intruder", Duration::from_secs(300))
        .await
        .expect("acquire")
        .expect("free");
    let impatient = EngineConfig { lock_wait: Duration::from_millis(300), ..EngineConfig::default() };
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix);
    let committer = Mutex::new(Committer::new(impatient, ports.clone()));
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 1, Duration::from_secs(10)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let original = ev.records[0].body.clone().expect("body");
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &env.queue("ingest").await.0);
    let response = handle_committer(&committer, &queue, &requeue, ev).await;
    assert!(response.batch_item_failures.is_empty(), "contention is not a failure: {:?}", response.batch_item_failures);
    env.delete_all(&env.settings.commit_queue_url, &receipts).await; // what the event source mapping does

    let again = ports.commit_queue.receive(10, Duration::from_secs(1)).await.expect("receive");
    assert_eq!(again.len(), 1, "the manifest is back on the queue");
    assert_eq!(again[0].receive_count, 1, "as a fresh message, so contention never walks it to a DLQ");
    assert_eq!(again[0].body, original);
    let table: floe::TableIdent = "default.events".parse().unwrap();
    assert!(contents(&ports, &table).await.event_ids().is_empty(), "nothing committed under contention");

    ports.lock.release(&lease).await.expect("release");
    tokio::time::sleep(Duration::from_millis(1100)).await; // the receive above made it invisible
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 1, Duration::from_secs(10)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let response = handle_committer(&committer, &queue, &requeue, ev).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    assert_eq!(contents(&ports, &table).await.event_ids().len(), 600, "both objects, once");
}

/// Records the body of every Glue `UpdateTable` request the client sends.
#[derive(Debug, Default, Clone)]
struct UpdateTableBodies(std::sync::Arc<std::sync::Mutex<Vec<String>>>);

impl aws_sdk_glue::config::Intercept for UpdateTableBodies {
    fn name(&self) -> &'static str {
        "UpdateTableBodies"
    }

    fn read_before_transmit(
        &self,
        ctx: &aws_sdk_glue::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _: &aws_sdk_glue::config::RuntimeComponents,
        _: &mut aws_sdk_glue::config::ConfigBag,
    ) -> Result<(), aws_sdk_glue::error::BoxError> {
        let req = ctx.request();
        let target = req.headers().get("x-amz-target").unwrap_or_default();
        if target.ends_with("UpdateTable") {
            let body = String::from_utf8_lossy(req.body().bytes().unwrap_or_default()).into_owned();
            self.0.lock().unwrap().push(body);
        }
        Ok(())
    }
}

/// Glue keeps an archived table version per `UpdateTable` unless told not to; at a commit every
/// few seconds that reaches Glue's version quota. moto keeps every version whatever the flag, so
/// the request itself is checked: the archive is skipped by default, kept only on request.
#[tokio::test]
async fn glue_swaps_skip_the_table_version_archive_unless_asked() {
    use floe::adapters::aws::GlueTablePointer;
    use floe::ports::TablePointer;

    let env = Env::new(Catalog::Glue { catalog_id: None, keep_archive: false }).await;
    for keep in [false, true] {
        let bodies = UpdateTableBodies::default();
        let conf = env.clients.glue.config().to_builder().interceptor(bodies.clone()).build();
        let pointer = GlueTablePointer::new(aws_sdk_glue::Client::from_conf(conf), None).keep_archive(keep);
        let table = floe::TableIdent::new(format!("ns_{}", env.suffix), format!("t_{keep}"));
        let v0 = pointer.create(&table, "s3://w/t/metadata/00000-a.metadata.json").await.expect("create");
        pointer.swap(&table, &v0, "s3://w/t/metadata/00001-b.metadata.json").await.expect("swap");
        let sent = bodies.0.lock().unwrap().clone();
        assert_eq!(sent.len(), 1, "one UpdateTable: {sent:?}");
        let body: serde_json::Value = serde_json::from_str(&sent[0]).expect("json body");
        assert_eq!(body["SkipArchive"], serde_json::Value::Bool(!keep), "keep_archive({keep}): {body}");
    }
}

/// Refuses every `CreateDatabase`, as Lake Formation may for a database that exists.
#[derive(Clone, Default, Debug)]
struct RefuseCreateDatabase;

impl aws_sdk_glue::config::Intercept for RefuseCreateDatabase {
    fn name(&self) -> &'static str {
        "RefuseCreateDatabase"
    }

    fn read_before_transmit(
        &self,
        ctx: &aws_sdk_glue::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _: &aws_sdk_glue::config::RuntimeComponents,
        _: &mut aws_sdk_glue::config::ConfigBag,
    ) -> Result<(), aws_sdk_glue::error::BoxError> {
        if ctx.request().headers().get("x-amz-target").unwrap_or_default().ends_with("CreateDatabase") {
            return Err("injected: CreateDatabase refused".into());
        }
        Ok(())
    }
}

/// A table's first commit in a database that exists (Athena's `default`, or one Lake Formation
/// governs) never asks to create the database: only a missing one is created.
#[tokio::test]
async fn a_table_in_an_existing_glue_database_never_asks_to_create_it() {
    use aws_sdk_glue::types::DatabaseInput;
    use floe::adapters::aws::GlueTablePointer;
    use floe::ports::TablePointer;

    let env = Env::new(Catalog::Glue { catalog_id: None, keep_archive: false }).await;
    let existing = format!("there_{}", env.suffix);
    let input = DatabaseInput::builder().name(&existing).build().expect("input");
    env.clients.glue.create_database().database_input(input).send().await.expect("made by another engine");
    let conf = env.clients.glue.config().to_builder().interceptor(RefuseCreateDatabase).build();
    let pointer = GlueTablePointer::new(aws_sdk_glue::Client::from_conf(conf), None);
    let table = floe::TableIdent::new(existing.clone(), "events".to_string());
    pointer.create(&table, "s3://w/t/metadata/00000-a.metadata.json").await.expect("created in the existing database");
    let missing = floe::TableIdent::new(format!("missing_{}", env.suffix), "events".to_string());
    let err = pointer.create(&missing, "s3://w/u/metadata/00000-a.metadata.json").await.expect_err("must create it");
    assert!(err.to_string().contains("injected"), "a missing database is created: {err}");
}

/// An object overwritten between its notification and the writer's read: K put as v1, then v2,
/// and both notifications delivered, in both orders. On a versioned bucket each notification
/// reads its own version (both land, once each); on an unversioned one v1's bytes are gone, so
/// its notification is recorded as superseded and only v2's rows land. Never v2's rows twice.
async fn overwritten_object_lands_what_each_notification_names(versioned: bool) {
    use aws_sdk_s3::types::{BucketVersioningStatus, VersioningConfiguration};

    let env = Env::new(Catalog::DynamoDb).await;
    if versioned {
        let on = VersioningConfiguration::builder().status(BucketVersioningStatus::Enabled).build();
        env.clients
            .s3
            .put_bucket_versioning()
            .bucket(env.bucket("landing"))
            .versioning_configuration(on)
            .send()
            .await
            .expect("versioning");
    }
    let (ingest_url, ingest_arn) = env.queue("ingest").await;
    env.notify(ingest_arn).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let spec = EventsSpec { events_per_file: 50, ..Default::default() };
    let (v1, _) = sample::events_file(&spec, 101, 0).expect("gen");
    let (v2, _) = sample::events_file(&spec, 202, 0).expect("gen");
    let mut version_ids = std::collections::HashMap::new();
    for body in [&v1, &v2] {
        let put = env.clients.s3.put_object().bucket(env.bucket("landing")).key("events/k.avro");
        let out = put.body(ByteStream::from(body.clone())).send().await.expect("put");
        let etag = out.e_tag().unwrap_or_default().trim_matches('"').to_string();
        assert_eq!(out.version_id().is_some(), versioned);
        version_ids.insert(etag, out.version_id().map(str::to_string));
    }
    let (event, _) = env.sqs_event(&ingest_url, 3, Duration::from_secs(20)).await;
    let mut records: Vec<serde_json::Value> = event["Records"]
        .as_array()
        .expect("records")
        .iter()
        .filter(|r| r["body"].as_str().is_some_and(|b| b.contains("ObjectCreated")))
        .cloned()
        .collect();
    assert_eq!(records.len(), 2, "one notification per put");
    // AWS names the version in the notification of a versioned bucket; moto 5.2.5 leaves
    // `versionId` out, so it is added here from the PUT's answer, as AWS would send it.
    for r in &mut records {
        let mut n: serde_json::Value = serde_json::from_str(r["body"].as_str().unwrap()).unwrap();
        let object = &mut n["Records"][0]["s3"]["object"];
        let etag = object["eTag"].as_str().unwrap_or_default().trim_matches('"').to_string();
        if let Some(Some(v)) = version_ids.get(&etag) {
            object["versionId"] = serde_json::Value::String(v.clone());
        }
        r["body"] = serde_json::Value::String(n.to_string());
    }

    let ids = |b: &[u8]| crate::common::event_ids_of(b);
    let mut expected: Vec<String> = if versioned { ids(&v1) } else { vec![] };
    expected.extend(ids(&v2));
    expected.sort();
    for (order, name) in [([0, 1], "default.forward"), ([1, 0], "default.reverse")] {
        let table: floe::TableIdent = name.parse().unwrap();
        let writer_env = env.writer_env(&table.to_string());
        // Both versions offered: on an unversioned bucket the first is gone and cannot define it.
        create_on_first_sight(&writer_env, &ports, serde_json::json!({ "Records": records.clone() })).await;
        for i in order {
            let one = serde_json::json!({ "Records": [records[i].clone()] });
            let response = handle_writer(&writer_env, &ports, one).await.expect("writer");
            assert!(response.batch_item_failures.is_empty(), "{name}: {:?}", response.batch_item_failures);
        }
        let mut committer = Committer::new(EngineConfig::default(), ports.clone());
        while committer.run_once(10, Duration::from_secs(30)).await.expect("commit").is_some() {}
        let mut got = contents(&ports, &table).await.event_ids();
        got.sort();
        assert_eq!(got, expected, "{name} (versioned: {versioned}): each notified version once, nothing else");
        let superseded: Vec<_> = ports
            .ledger
            .quarantined()
            .await
            .expect("quarantine")
            .into_iter()
            .filter(|r| r.table.as_deref() == Some(name) && r.rejection.kind == floe::RejectionKind::Superseded)
            .collect();
        assert_eq!(superseded.len(), usize::from(!versioned), "{name}: {superseded:?}");
    }
    if versioned {
        // The version records[0] names is deleted (a lifecycle expiry) before its notification is
        // redelivered to a writer of another table: recorded as superseded and reported to the
        // dead-letter queue, never a failing batch.
        let (dlq_url, _) = env.queue("late-dlq").await;
        let announced =
            version_ids.values().flatten().find(|v| records[0]["body"].as_str().unwrap().contains(v.as_str()));
        let announced = announced.expect("the version records[0] names").clone();
        let del = env.clients.s3.delete_object().bucket(env.bucket("landing")).key("events/k.avro");
        del.version_id(announced).send().await.expect("delete that version");
        let table: floe::TableIdent = "default.late".parse().unwrap();
        let writer_env = WriterEnv {
            dead_letters: Some(SqsQueue::new(env.clients.sqs.clone(), &dlq_url)),
            ..env.writer_env(&table.to_string())
        };
        let one = serde_json::json!({ "Records": [records[0].clone()] });
        let response = handle_writer(&writer_env, &ports, one.clone()).await.expect("writer");
        assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
        let untouched = ports.commit_queue.receive(10, Duration::from_secs(1)).await.expect("receive");
        assert!(untouched.is_empty(), "an object that cannot define the table asks for no table: {untouched:?}");
        // Once the table exists (defined by the other version), the gone version is refused
        // inside the writer's batch: reported all the same.
        create_on_first_sight(&writer_env, &ports, serde_json::json!({ "Records": [records[1].clone()] })).await;
        let response = handle_writer(&writer_env, &ports, one).await.expect("writer");
        assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
        let (reports, _) = env.sqs_event(&dlq_url, 2, Duration::from_secs(10)).await;
        let kinds: Vec<String> = reports["Records"]
            .as_array()
            .expect("records")
            .iter()
            .map(|r| {
                serde_json::from_str::<serde_json::Value>(r["body"].as_str().unwrap()).unwrap()["kind"].to_string()
            })
            .collect();
        assert_eq!(kinds, ["\"superseded\"", "\"superseded\""], "both refusals reported");
        let late: Vec<_> = ports.ledger.quarantined().await.expect("quarantine").into_iter().collect();
        assert!(
            late.iter()
                .any(|r| r.table.as_deref() == Some("default.late")
                    && r.rejection.kind == floe::RejectionKind::Superseded),
            "{late:?}"
        );
    }
}

#[tokio::test]
async fn an_overwritten_object_on_a_versioned_bucket_lands_both_versions() {
    overwritten_object_lands_what_each_notification_names(true).await;
}

#[tokio::test]
async fn an_overwritten_object_on_an_unversioned_bucket_supersedes_the_first() {
    overwritten_object_lands_what_each_notification_names(false).await;
}

/// `floe backfill`'s library half: objects that were in the bucket before any notification was
/// configured are sent to the writers, ten to a message, and land; sent again, nothing lands
/// twice (the writers skip committed sources through the ledger).
#[tokio::test]
async fn a_backfill_lands_existing_objects_once_however_often_it_runs() {
    use floe::handlers::backfill::{Backfill, objects, send};

    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let (ingest_url, _) = env.queue("ingest").await;
    let spec = EventsSpec { events_per_file: 50, ..Default::default() };
    let mut rows = 0;
    for i in 0..12u64 {
        let (bytes, n) = sample::events_file(&spec, 31, i).expect("gen");
        let key = format!("old/part-{i:03}.avro");
        let put = env.clients.s3.put_object().bucket(env.bucket("landing")).key(key);
        put.body(ByteStream::from(bytes)).send().await.expect("put");
        rows += n;
    }
    let skip = env.clients.s3.put_object().bucket(env.bucket("landing")).key("old/notes.txt");
    skip.body(ByteStream::from_static(b"not avro")).send().await.expect("put");
    let elsewhere = env.clients.s3.put_object().bucket(env.bucket("landing")).key("new/x.avro");
    elsewhere.body(ByteStream::from_static(b"not listed")).send().await.expect("put");

    let prefix = format!("s3://{}/old/", env.bucket("landing"));
    let b = Backfill { prefix: prefix.clone(), suffix: ".avro".into(), rate: 0, only: None };
    // `--table`: only what the routing sends to that table.
    let toml =
        floe::config::FloeToml::parse("[[table]]\nname = \"web.clicks\"\nprefixes = [\"old/part-00\"]\n").unwrap();
    let router = Router::new(Some(toml), "default.events".parse().unwrap());
    let only = |t: &str| Backfill { only: Some((t.parse().unwrap(), router.clone())), ..b.clone() };
    assert_eq!(objects(ports.store.as_ref(), &only("web.clicks")).await.expect("list").len(), 10);
    // With a floe.toml, a key no prefix matches is routed nowhere (the writer quarantines it):
    // a table no route reaches is a mistake, said as such.
    for table in ["default.events", "web.other"] {
        let e = objects(ports.store.as_ref(), &only(table)).await.unwrap_err().to_string();
        assert!(e.contains("no route of the deployment sends objects to"), "{e}");
    }
    let queue = SqsQueue::new(env.clients.sqs.clone(), &ingest_url);
    let writer_env = env.writer_env("default.events");
    let table: floe::TableIdent = "default.events".parse().unwrap();
    for round in 0..2 {
        let sources = objects(ports.store.as_ref(), &b).await.expect("list");
        assert_eq!(sources.len(), 12, "the .avro keys under the prefix only");
        let progress = std::sync::Mutex::new(vec![]);
        let sent = send(&queue, &sources, 0, &|n| progress.lock().unwrap().push(n)).await.expect("send");
        assert_eq!(sent, 12);
        assert_eq!(*progress.lock().unwrap(), [10, 12], "ten objects to a message");
        let (event, receipts) = env.sqs_event(&ingest_url, 2, Duration::from_secs(10)).await;
        if round == 0 {
            create_on_first_sight(&writer_env, &ports, event.clone()).await;
        }
        let response = handle_writer(&writer_env, &ports, event).await.expect("writer");
        assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
        env.delete_all(&ingest_url, &receipts).await;
        let mut committer = Committer::new(EngineConfig::default(), ports.clone());
        while committer.run_once(10, Duration::from_secs(30)).await.expect("commit").is_some() {}
        let ids = contents(&ports, &table).await.event_ids();
        assert_eq!(ids.len(), rows, "round {round}: every backfilled row, once");
        assert!(counts(&ids).values().all(|n| *n == 1));
    }
}

/// Runs `tests/python/check_aws_catalog.py`: PyIceberg's `kind` catalog on the emulator loads
/// `table` and compares it with `expected`, written to a file passed as `flag` (`--ids-file`:
/// event ids, one a line; `--rows-file`: JSON rows, one a line). Fails the test with its output.
pub(crate) fn pyiceberg_check(kind: &str, catalog_table: &str, table: &str, flag: &str, expected: &str) {
    let file = std::env::temp_dir().join(format!("floe-expected-{}.txt", uuid::Uuid::new_v4().simple()));
    std::fs::write(&file, expected).expect("write the expected values");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("repo root").to_path_buf();
    let python =
        std::env::var("FLOE_TEST_PYTHON").unwrap_or_else(|_| root.join(".venv/bin/python").display().to_string());
    let out = std::process::Command::new(python)
        .arg(root.join("tests/python/check_aws_catalog.py"))
        .args(["--catalog", kind, "--catalog-table", catalog_table, "--table", table, flag])
        .arg(&file)
        .output()
        .expect("run the PyIceberg check (python from .venv)");
    eprintln!("{}", String::from_utf8_lossy(&out.stdout));
    assert!(
        out.status.success(),
        "PyIceberg check of {table} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Event ids of Avro files with their `event_type` (an enum symbol).
fn ids_by_type(files: &[Vec<u8>]) -> Vec<(String, String)> {
    let mut out = vec![];
    for bytes in files {
        for v in apache_avro::Reader::new(&bytes[..]).expect("reader") {
            let apache_avro::types::Value::Record(fields) = v.expect("record") else { panic!("not a record") };
            let get = |k: &str| fields.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()).expect("field");
            let id = match get("event_id") {
                apache_avro::types::Value::Uuid(u) => u.to_string(),
                apache_avro::types::Value::String(s) => s,
                other => panic!("event_id is {other:?}"),
            };
            let kind = match get("event_type") {
                apache_avro::types::Value::Enum(_, s) => s,
                other => panic!("event_type is {other:?}"),
            };
            out.push((id, kind));
        }
    }
    out
}

/// Routing on moto: a floe.toml in S3 (as FLOE_CONFIG names it) splits one prefix's objects by
/// `event_type` into three tables and sends another prefix to a fourth; each table is created
/// by its own create request and committed on its own.
#[tokio::test]
async fn a_floe_toml_in_s3_routes_objects_and_rows_to_their_tables() {
    let env = Env::new(Catalog::DynamoDb).await;
    let (ingest_url, ingest_arn) = env.queue("ingest").await;
    env.notify(ingest_arn).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let toml = "[[table]]\nname = \"web.clicks\"\nprefixes = [\"events/\"]\nroute_by = \"event_type\"\nroute_values = [\"CLICK\"]\n\
        partition_by = \"identity(tenant_id)\"\n\
        [[table]]\nname = \"web.views\"\nprefixes = [\"events/\"]\nroute_by = \"event_type\"\nroute_values = [\"PAGE_VIEW\", \"SCROLL\"]\n\
        [[table]]\nname = \"web.rest\"\nprefixes = [\"events/\"]\n\
        [[table]]\nname = \"ops.audit\"\nprefixes = [\"audit/\"]\n";
    let config_uri = format!("s3://{}/config/floe.toml", env.bucket("lake"));
    ports.store.put(&config_uri, bytes::Bytes::from(toml)).await.expect("put floe.toml");
    let config = floe::handlers::load_floe_toml(&config_uri, ports.store.as_ref()).await.expect("FLOE_CONFIG");
    let writer_env = WriterEnv {
        router: Router::new(Some(config), "default.events".parse().unwrap()),
        ..env.writer_env("default.events")
    };
    let spec = EventsSpec { events_per_file: 120, ..Default::default() };
    let mut events = vec![];
    let mut audit = vec![];
    for (i, key) in ["events/a.avro", "events/b.avro", "audit/c.avro", "other/d.avro"].iter().enumerate() {
        let (bytes, _) = sample::events_file(&spec, 51, i as u64).expect("gen");
        let put = env.clients.s3.put_object().bucket(env.bucket("landing")).key(*key);
        put.body(ByteStream::from(bytes.clone())).send().await.expect("put");
        match i {
            0 | 1 => events.push(bytes),
            2 => audit.push(bytes),
            _ => {}
        }
    }
    let (event, receipts) = env.sqs_event(&ingest_url, 5, Duration::from_secs(20)).await;
    // First sight of four tables: each asks the committer to create it; the batch fails.
    let first = handle_writer(&writer_env, &ports, event.clone()).await.expect("writer");
    assert!(!first.batch_item_failures.is_empty());
    let mut committer = Committer::new(EngineConfig::default(), ports.clone());
    let created = committer.run_once(10, Duration::from_secs(30)).await.expect("commit").expect("creates");
    assert_eq!(
        created.results.iter().filter(|(_, r)| *r == MessageResult::Created).count(),
        4,
        "{:?}",
        created.results
    );
    let again = handle_writer(&writer_env, &ports, event).await.expect("writer");
    assert!(again.batch_item_failures.is_empty(), "{:?}", again.batch_item_failures);
    env.delete_all(&ingest_url, &receipts).await;
    while committer.run_once(10, Duration::from_secs(30)).await.expect("commit").is_some() {}

    let rows = ids_by_type(&events);
    let pick = |kinds: &[&str], keep: bool| -> Vec<String> {
        let mut v: Vec<String> =
            rows.iter().filter(|(_, k)| kinds.contains(&k.as_str()) == keep).map(|(id, _)| id.clone()).collect();
        v.sort();
        v
    };
    let want = [
        ("web.clicks", pick(&["CLICK"], true)),
        ("web.views", pick(&["PAGE_VIEW", "SCROLL"], true)),
        ("web.rest", pick(&["CLICK", "PAGE_VIEW", "SCROLL"], false)),
        ("ops.audit", {
            let mut v: Vec<String> = ids_by_type(&audit).into_iter().map(|(id, _)| id).collect();
            v.sort();
            v
        }),
    ];
    for (table, ids) in want {
        let mut got = contents(&ports, &table.parse().unwrap()).await.event_ids();
        got.sort();
        assert!(!ids.is_empty(), "{table}: the sample has rows for it");
        assert_eq!(got, ids, "{table}: exactly its rows, once");
        pyiceberg_check("dynamodb", &env.settings.catalog_table, table, "--ids-file", &ids.join("\n"));
    }
    let q = ports.ledger.quarantined().await.expect("quarantine");
    assert_eq!(q.len(), 1, "{q:?}");
    assert!(q[0].uri.ends_with("other/d.avro") && q[0].rejection.kind == floe::RejectionKind::Unrouted, "{:?}", q[0]);
}

/// Counts the DynamoDB requests a client sends, by operation, and keeps their bodies.
#[derive(Debug, Clone, Default)]
struct DynamoDbRequests(std::sync::Arc<std::sync::Mutex<Vec<(String, String)>>>);

impl DynamoDbRequests {
    fn of(&self, op: &str) -> Vec<String> {
        let seen = self.0.lock().expect("requests");
        seen.iter().filter(|(o, _)| o == op).map(|(_, b)| b.clone()).collect()
    }
    fn clear(&self) {
        self.0.lock().expect("requests").clear();
    }
}

impl aws_sdk_dynamodb::config::Intercept for DynamoDbRequests {
    fn name(&self) -> &'static str {
        "DynamoDbRequests"
    }

    fn read_before_transmit(
        &self,
        ctx: &aws_sdk_dynamodb::config::interceptors::BeforeTransmitInterceptorContextRef<'_>,
        _: &aws_sdk_dynamodb::config::RuntimeComponents,
        _: &mut aws_sdk_dynamodb::config::ConfigBag,
    ) -> Result<(), aws_sdk_dynamodb::error::BoxError> {
        let req = ctx.request();
        let target = req.headers().get("x-amz-target").unwrap_or_default();
        let op = target.rsplit('.').next().unwrap_or_default().to_string();
        let body = String::from_utf8_lossy(req.body().bytes().unwrap_or_default()).into_owned();
        self.0.lock().expect("requests").push((op, body));
        Ok(())
    }
}

/// One ledger write per source: a commit marks each source pending (one UpdateItem each) and
/// its snapshot landed (one PutItem), and a lookup reads the sources, then the landed records of
/// their marks. The committer's lookups read consistently, the writers' eventually
/// consistently. Records the ledger wrote before landed records (pending with accumulated marks,
/// committed) read as they did.
#[tokio::test]
async fn a_commit_writes_each_source_once_and_its_snapshot_once() {
    use aws_sdk_dynamodb::types::AttributeValue as V;
    use floe::adapters::aws::DynamoDbLedger;
    use floe::ports::{Ledger, SourceState};

    let env = Env::new(Catalog::DynamoDb).await;
    let seen = DynamoDbRequests::default();
    let conf = env.clients.dynamodb.config().to_builder().interceptor(seen.clone()).build();
    let client = aws_sdk_dynamodb::Client::from_conf(conf);
    let name = format!("marks-{}", env.suffix);
    let ledger = DynamoDbLedger::new(client.clone(), &name);
    ledger.ensure_table().await.expect("ledger table");
    let table = floe::TableIdent::new("ns", "t");
    let ids: Vec<String> = (1..=5).map(|i| format!("s3://b/k{i}#e")).collect();
    seen.clear();
    ledger.record_pending(&table, &ids, 7).await.expect("pending");
    ledger.record_landed(&table, &[7]).await.expect("landed");
    let (landed, marks): (Vec<String>, Vec<String>) =
        seen.of("UpdateItem").into_iter().partition(|b| b.contains("landed|ns.t|7"));
    assert_eq!(marks.len(), 5, "one write a source");
    assert_eq!(landed.len(), 1, "one write a snapshot");
    let states = ledger.lookup(&table, &ids).await.expect("lookup");
    assert_eq!(states.len(), 5);
    assert!(states.iter().all(|(_, s)| *s == SourceState::Committed { snapshot_id: 7 }), "{states:?}");
    let reads = seen.of("BatchGetItem");
    assert_eq!(reads.len(), 2, "the sources, then their marks' landed records");
    assert!(reads.iter().all(|b| b.contains("\"ConsistentRead\":true")), "{reads:?}");

    seen.clear();
    let writers = DynamoDbLedger::new(client.clone(), &name).with_eventually_consistent_lookups();
    let states = writers.lookup(&table, &ids).await.expect("lookup");
    assert!(states.iter().all(|(_, s)| *s == SourceState::Committed { snapshot_id: 7 }), "{states:?}");
    let reads = seen.of("BatchGetItem");
    assert!(!reads.is_empty() && reads.iter().all(|b| b.contains("\"ConsistentRead\":false")), "{reads:?}");

    // As the ledger was written before landed records: a source pending under two attempts,
    // one committed, and the pending index (no longer read).
    let put = |pk: &str, attrs: Vec<(&str, V)>| {
        let mut req = env.clients.dynamodb.put_item().table_name(&name).item("pk", V::S(pk.into()));
        for (k, v) in attrs {
            req = req.item(k, v);
        }
        req.send()
    };
    let ns = |v: &[&str]| V::Ns(v.iter().map(|s| s.to_string()).collect());
    let st = |v: &str| V::S(v.into());
    let n = |v: &str| V::N(v.into());
    put(
        "ns.t|s3://b/old1#e",
        vec![("state", st("pending")), ("snapshot_id", n("9")), ("pending_ids", ns(&["8", "9"]))],
    )
    .await
    .expect("old pending record");
    put("ns.t|s3://b/old2#e", vec![("state", st("committed")), ("snapshot_id", n("8"))]).await.expect("old committed");
    put("pending-snapshots|ns.t", vec![("ids", ns(&["8", "9"])), ("n_8", n("1")), ("n_9", n("1"))])
        .await
        .expect("index");
    let old = vec!["s3://b/old1#e".to_string(), "s3://b/old2#e".to_string()];
    let got: std::collections::BTreeMap<String, SourceState> =
        ledger.lookup(&table, &old).await.expect("lookup").into_iter().collect();
    assert_eq!(got[&old[0]], SourceState::Pending { snapshot_ids: vec![8, 9] });
    assert_eq!(got[&old[1]], SourceState::Committed { snapshot_id: 8 });
    ledger.record_landed(&table, &[9]).await.expect("landed");
    let got: std::collections::BTreeMap<String, SourceState> =
        ledger.lookup(&table, &old).await.expect("lookup").into_iter().collect();
    assert_eq!(got[&old[0]], SourceState::Committed { snapshot_id: 9 }, "an old mark settles by a landed record");
}

/// With a time to live, every record carries `expires_at` (now + TTL, epoch seconds) and the
/// table's TTL is on: a source's from its pending mark, a snapshot's from its landed record, a
/// quarantine record's from its refusal; a committed source sent again restarts its own and its
/// snapshot's. Without one, nothing carries it.
#[tokio::test]
async fn ledger_records_expire_only_with_a_ttl_and_a_resend_restarts_them() {
    use floe::adapters::aws::DynamoDbLedger;
    use floe::ports::{Ledger, QuarantineRecord};

    let env = Env::new(Catalog::DynamoDb).await;
    let ddb = env.clients.dynamodb.clone();
    let name = format!("ttl-{}", env.suffix);
    let day = std::time::Duration::from_secs(86_400);
    let ledger = DynamoDbLedger::new(ddb.clone(), &name).with_ttl(Some(day * 30));
    ledger.ensure_table().await.expect("ledger table");
    let ttl = ddb.describe_time_to_live().table_name(&name).send().await.expect("describe ttl");
    let ttl = ttl.time_to_live_description().expect("ttl description");
    assert_eq!(ttl.attribute_name(), Some("expires_at"));
    assert_eq!(ttl.time_to_live_status(), Some(&aws_sdk_dynamodb::types::TimeToLiveStatus::Enabled));

    let table = floe::TableIdent::new("ns", "t");
    let expires = |pk: String| {
        let ddb = ddb.clone();
        let name = name.clone();
        async move {
            let got = ddb.get_item().table_name(&name).key("pk", aws_sdk_dynamodb::types::AttributeValue::S(pk));
            let item = got.send().await.expect("get").item.expect("the record");
            item.get("expires_at").map(|v| v.as_n().expect("a number").parse::<i64>().expect("seconds"))
        }
    };
    let ids = vec!["s3://b/a#1".to_string(), "s3://b/b#1".to_string()];
    let now = || std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock").as_secs() as i64;
    let before = now();
    let month = |at: Option<i64>| at.is_some_and(|at| (before + 30 * 86_400..=now() + 30 * 86_400).contains(&at));
    ledger.record_pending(&table, &ids, 5).await.expect("pending");
    assert!(month(expires("ns.t|s3://b/a#1".into()).await), "a pending mark expires");
    ledger.record_landed(&table, &[5]).await.expect("landed");
    assert!(month(expires("landed|ns.t|5".into()).await), "a landed record expires");
    let rejection = floe::Rejection { kind: floe::RejectionKind::Corrupt, reason: "not avro".into() };
    let record =
        QuarantineRecord { source_id: "s3://b/c#1".into(), uri: "s3://b/c".into(), table: None, rejection, at_ms: 1 };
    ledger.quarantine(record).await.expect("quarantine");
    assert!(
        expires("quarantine|s3://b/c#1".into()).await.expect("a quarantine record expires") >= before + 30 * 86_400
    );

    // A committed source sent again restarts its time, and its snapshot's; others are left alone.
    let longer = DynamoDbLedger::new(ddb.clone(), &name).with_ttl(Some(day * 60));
    longer.keep(&table, &[(ids[0].clone(), 5)]).await.expect("keep");
    for pk in ["ns.t|s3://b/a#1", "landed|ns.t|5"] {
        let kept = expires(pk.into()).await.expect("still expires");
        assert!(kept >= before + 60 * 86_400, "{pk} restarted: {kept}");
    }
    assert!(month(expires("ns.t|s3://b/b#1".into()).await), "not sent again: as it was");
    longer.keep(&table, &[("s3://b/never#1".into(), 77)]).await.expect("keeping what is gone is harmless");
    let gone =
        ddb.get_item().table_name(&name).key("pk", aws_sdk_dynamodb::types::AttributeValue::S("landed|ns.t|77".into()));
    assert!(gone.send().await.expect("get").item.is_none(), "keep creates nothing");

    // Without a TTL: no attribute.
    let forever = DynamoDbLedger::new(ddb.clone(), &name);
    forever.record_pending(&table, &["s3://b/d#1".to_string()], 6).await.expect("pending");
    forever.record_landed(&table, &[6]).await.expect("landed");
    forever.record_committed(&table, &["s3://b/e#1".to_string()], 6).await.expect("committed");
    for pk in ["ns.t|s3://b/d#1", "landed|ns.t|6", "ns.t|s3://b/e#1"] {
        assert_eq!(expires(pk.into()).await, None, "{pk}");
    }
}

/// What names no object to read is never acknowledged as if it did: a message that is no S3
/// notification fails alone (to the DLQ), a direct invocation fails whole (Lambda retries it),
/// and a notified object gone before its HEAD is recorded `superseded`, not skipped unheard.
#[tokio::test]
async fn notifications_naming_nothing_readable_are_never_dropped_silently() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let writer_env = env.writer_env("default.events");
    let eventbridge = serde_json::json!({"version": "0", "detail-type": "Object Created", "source": "aws.s3",
        "detail": {"bucket": {"name": env.bucket("landing")}, "object": {"key": "events/x.avro"}}});
    let sqs = serde_json::json!({"Records": [
        {"messageId": "eventbridge", "eventSource": "aws:sqs", "body": eventbridge.to_string()},
        {"messageId": "empty", "eventSource": "aws:sqs", "body": "{}"},
    ]});
    let response = handle_writer(&writer_env, &ports, sqs).await.expect("writer");
    let mut failed: Vec<String> = response.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect();
    failed.sort();
    assert_eq!(failed, ["empty", "eventbridge"], "each fails alone, towards the DLQ");

    let no_s3 = serde_json::json!({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put"}]});
    let e = handle_writer(&writer_env, &ports, no_s3).await.expect_err("a direct event that names nothing fails");
    assert!(e.to_string().contains("without `s3`"), "{e}");

    // No eTag in the notification (as tools send): the HEAD finds nothing there.
    let gone = serde_json::json!({"Records": [{"eventSource": "aws:s3", "eventName": "ObjectCreated:Put",
        "s3": {"bucket": {"name": env.bucket("landing")}, "object": {"key": "events/never-there.avro"}}}]});
    let response = handle_writer(&writer_env, &ports, gone).await.expect("writer");
    assert!(response.batch_item_failures.is_empty());
    let records = ports.ledger.quarantined().await.expect("quarantined");
    assert!(
        records
            .iter()
            .any(|r| r.uri.ends_with("events/never-there.avro") && r.rejection.kind == floe::RejectionKind::Superseded),
        "{records:?}"
    );
}

/// An archived object in a writer batch is refused with its reason (kind `unreadable`), and the
/// batch's other objects land: it never fails its batch round and round to the DLQ, not even
/// as the first object of a table's first batch, which defines the table (the next one does).
#[tokio::test]
async fn an_archived_object_is_refused_alone_and_its_batch_lands() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let (keys, rows) = drop_files(&env, 2).await;
    let (bytes, _) = sample::events_file(&EventsSpec { events_per_file: 10, ..Default::default() }, 78, 0).unwrap();
    let archived = "events/dt=2026-11-29/archived.avro";
    env.clients
        .s3
        .put_object()
        .bucket(env.bucket("landing"))
        .key(archived)
        .storage_class(aws_sdk_s3::types::StorageClass::Glacier)
        .body(ByteStream::from(bytes))
        .send()
        .await
        .expect("put");
    let records = env.created_records(keys.iter().map(String::as_str).chain([archived])).await;
    let writer_env = env.writer_env("default.events");
    create_on_first_sight(&writer_env, &ports, serde_json::json!({ "Records": records })).await;
    let response = handle_writer(&writer_env, &ports, serde_json::json!({ "Records": records })).await.expect("writer");
    assert!(response.batch_item_failures.is_empty());
    let q = ports.ledger.quarantined().await.expect("quarantined");
    let refused = q.iter().find(|r| r.uri.ends_with("archived.avro")).expect("the archived object is quarantined");
    assert_eq!(refused.rejection.kind, floe::RejectionKind::Unreadable, "{refused:?}");
    assert!(refused.rejection.reason.contains("archived"), "{refused:?}");
    let committer = Mutex::new(Committer::new(EngineConfig::default(), ports.clone()));
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix);
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &env.queue("ingest").await.0);
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 10, Duration::from_secs(30)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let response = handle_committer(&committer, &queue, &requeue, ev).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    let table: floe::TableIdent = "default.events".parse().unwrap();
    assert_eq!(contents(&ports, &table).await.rows(), rows, "the batch's good objects landed");
}

/// A writer batch past its round bound (`FLOE_WRITER_ROUND_BYTES`, sized from the function's
/// memory) is written in rounds, one manifest each, in source id order: four objects of which
/// two fit a round make two manifests, and every row lands once.
#[tokio::test]
async fn a_writer_batch_past_its_round_bound_is_written_in_rounds() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let (keys, rows) = drop_files(&env, 4).await;
    let records = env.created_records(keys.iter().map(String::as_str)).await;
    let sizes: Vec<u64> = records.iter().map(|r| r["s3"]["object"]["size"].as_u64().expect("size")).collect();
    let bound = sizes.iter().max().unwrap() * 2 + sizes.iter().min().unwrap() / 2;
    assert!(bound < sizes.iter().take(3).sum::<u64>(), "{sizes:?}: three objects never share a round");
    let writer_env = WriterEnv {
        engine: EngineConfig { writer_round_bytes: bound, ..EngineConfig::default() },
        ..env.writer_env("default.events")
    };
    create_on_first_sight(&writer_env, &ports, serde_json::json!({ "Records": records })).await;
    let response = handle_writer(&writer_env, &ports, serde_json::json!({ "Records": records })).await.expect("writer");
    assert!(response.batch_item_failures.is_empty());
    let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, 10, Duration::from_secs(30)).await;
    let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("sqs event");
    let mut rounds: Vec<Vec<String>> = ev
        .records
        .iter()
        .filter_map(|m| floe::message::FileManifest::from_json(m.body.as_deref()?).ok())
        .map(|m| m.sources.iter().map(|s| s.uri.rsplit('/').next().unwrap_or_default().to_string()).collect())
        .collect();
    rounds.sort();
    assert_eq!(
        rounds,
        vec![vec!["part 000.avro", "part 001.avro"], vec!["part 002.avro", "part 003.avro"]],
        "two rounds of two, in source id order"
    );
    let committer = Mutex::new(Committer::new(EngineConfig::default(), ports.clone()));
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &env.settings.claim_check_prefix);
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &env.queue("ingest").await.0);
    let response = handle_committer(&committer, &queue, &requeue, ev).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    env.delete_all(&env.settings.commit_queue_url, &receipts).await;
    let table: floe::TableIdent = "default.events".parse().unwrap();
    let got = contents(&ports, &table).await;
    assert_eq!(got.rows(), rows, "every row once");
    assert_eq!(counts(&got.event_ids()).values().max(), Some(&1));
}

/// A writer's rounds fail their messages, not the invocation, when the table cannot be had or
/// the invocation's deadline is near: a table not there yet is asked for once (not once a
/// round, each waiting `FLOE_CREATE_WAIT_SECS` again), and a round that might not end by the
/// Lambda's deadline is not started. Nothing is written twice or lost: with time, every object
/// lands once.
#[tokio::test]
async fn writer_rounds_fail_their_messages_when_the_table_or_the_time_is_missing() {
    let env = Env::new(Catalog::DynamoDb).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let (keys, rows) = drop_files(&env, 4).await;
    let records = env.created_records(keys.iter().map(String::as_str)).await;
    let sizes: Vec<u64> = records.iter().map(|r| r["s3"]["object"]["size"].as_u64().expect("size")).collect();
    let bound = sizes.iter().max().unwrap() * 2 + sizes.iter().min().unwrap() / 2;
    let writer_env = WriterEnv {
        engine: EngineConfig { writer_round_bytes: bound, ..EngineConfig::default() },
        ..env.writer_env("default.events")
    };
    let messages: Vec<serde_json::Value> = records
        .iter()
        .enumerate()
        .map(|(i, r)| {
            serde_json::json!({"messageId": format!("m{i}"), "eventSource": "aws:sqs",
                               "body": serde_json::json!({"Records": [r]}).to_string()})
        })
        .collect();
    let event = serde_json::json!({ "Records": messages });
    let all: Vec<String> = (0..4).map(|i| format!("m{i}")).collect();
    let failed = |r: aws_lambda_events::event::sqs::SqsBatchResponse| {
        let mut ids: Vec<String> = r.batch_item_failures.into_iter().map(|f| f.item_identifier).collect();
        ids.sort();
        ids
    };
    // No table: the first round asks for it and fails; the second does not ask again.
    let response = handle_writer(&writer_env, &ports, event.clone()).await.expect("writer");
    assert_eq!(failed(response), all, "both rounds' messages come back");
    let mut committer = Committer::new(EngineConfig::default(), ports.clone());
    let out = committer.run_once(10, Duration::from_secs(30)).await.expect("commit").expect("the create request");
    assert_eq!(out.results.len(), 1, "one create request, not one a round: {:?}", out.results);
    assert_eq!(out.results[0].1, MessageResult::Created, "{:?}", out.results);
    // The deadline is here: no round starts, every message comes back, nothing is written.
    let now = std::time::Instant::now();
    let response =
        floe::handlers::handle_writer_by(&writer_env, &ports, event.clone(), Some(now)).await.expect("writer");
    assert_eq!(failed(response), all);
    assert!(committer.run_once(10, Duration::from_secs(2)).await.expect("commit").is_none(), "nothing was sent");
    // With time: both rounds, every row once.
    let later = Some(std::time::Instant::now() + Duration::from_secs(600));
    let response = floe::handlers::handle_writer_by(&writer_env, &ports, event, later).await.expect("writer");
    assert!(failed(response).is_empty());
    let mut results = vec![];
    while results.len() < 2 {
        let out = committer.run_once(10, Duration::from_secs(30)).await.expect("commit");
        let Some(out) = out else { break };
        results.extend(out.results);
    }
    assert_eq!(results.len(), 2, "a manifest a round: {results:?}");
    assert!(results.iter().all(|(_, r)| matches!(r, MessageResult::Committed { .. })), "{results:?}");
    let got = contents(&ports, &"default.events".parse().unwrap()).await;
    assert_eq!(got.rows(), rows, "every row once");
    assert_eq!(counts(&got.event_ids()).values().max(), Some(&1));
}

/// A table at an `s3a://` location (as open-source Spark creates one), whose metadata names
/// every file `s3a://…` while the S3 store lists them as `s3://…`: the sweep compares names with
/// their schemes made the same, so it deletes the one orphan and nothing a snapshot reaches
/// (compared byte for byte, every live object would have looked like an orphan).
#[tokio::test]
async fn the_sweep_of_a_table_at_an_s3a_location_deletes_only_its_orphans() {
    use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
    use floe::table::sweep::sweep_orphans;
    let mut env = Env::new(Catalog::DynamoDb).await;
    env.settings.warehouse = format!("s3a://{}/warehouse", env.bucket("lake"));
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let cfg = crate::common::events_table("default.spark_t");
    let spec = EventsSpec { events_per_file: 200, ..Default::default() };
    let mut objects = vec![];
    for i in 0..3 {
        let uri = format!("s3://{}/in/part-{i}.avro", env.bucket("landing"));
        let (bytes, _) = sample::events_file(&spec, 5, i).expect("gen");
        ports.store.put(&uri, bytes.into()).await.expect("put");
        objects.push(ports.store.head(&uri).await.expect("head"));
    }
    let engine = EngineConfig::default();
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&engine, &ports, &cfg, &env.settings.warehouse, objects, &opts).await.expect("ingest");
    let full = floe::pipeline::compact::CompactOptions { full: true, parallelism: 2, ..Default::default() };
    compact_and_commit(&engine, &ports, &cfg.table, &full, Duration::from_secs(60)).await.expect("compact");
    let state = floe::table::load_table(ports.pointer.as_ref(), ports.store.as_ref(), &cfg.table)
        .await
        .expect("load")
        .expect("table");
    let location = state.metadata.location().trim_end_matches('/').to_string();
    assert!(location.starts_with("s3a://") && state.pointer.metadata_location.starts_with("s3a://"), "{location}");
    let orphan = format!("{location}/data/orphan-of-a-lost-batch.parquet");
    ports.store.put(&orphan, bytes::Bytes::from_static(b"x")).await.expect("put");
    let ids = |c: &crate::common::TableContents| {
        let mut ids = c.event_ids();
        ids.sort();
        ids
    };
    let before = ids(&contents(&ports, &cfg.table).await);
    assert_eq!(before.len(), 600);

    let swept = sweep_orphans(ports.store.as_ref(), &state, epoch_ms() + 60_000, false).await.expect("sweep");
    assert_eq!(swept.orphans, vec![orphan.replacen("s3a://", "s3://", 1)], "{swept:?}");
    assert_eq!(swept.reachable + 1, swept.listed);
    // Everything else stays: a second sweep finds nothing, and the table (with every snapshot's
    // files) reads as before.
    let again = sweep_orphans(ports.store.as_ref(), &state, epoch_ms() + 60_000, true).await.expect("sweep");
    assert!(again.orphans.is_empty() && again.reachable == again.listed, "{again:?}");
    assert_eq!(ids(&contents(&ports, &cfg.table).await), before);
}

/// A writer batch that fails (here: its table does not exist yet, and the writer does not wait
/// for the committer to create it) is delivered again within seconds: the handler shortens the
/// failed message's visibility by its receive count. Before, it stayed invisible for the ingest
/// queue's whole visibility timeout (six times the writer's timeout: 12 minutes as deployed).
#[tokio::test]
async fn a_failed_message_comes_back_in_seconds_not_after_the_visibility_timeout() {
    let env = Env::new(Catalog::DynamoDb).await;
    let (url, arn) = env.queue("ingest").await;
    env.clients
        .sqs
        .set_queue_attributes()
        .queue_url(&url)
        .attributes(QueueAttributeName::VisibilityTimeout, "600")
        .send()
        .await
        .expect("visibility");
    env.notify(arn.clone()).await;
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let (bytes, _) = sample::events_file(&EventsSpec { events_per_file: 10, ..Default::default() }, 3, 0).expect("gen");
    let put = env.clients.s3.put_object().bucket(env.bucket("landing")).key("events/a.avro");
    put.body(ByteStream::from(bytes)).send().await.expect("put");
    // The test event and the object's notification, as the event source mapping delivers them.
    let (mut event, _) = env.sqs_event(&url, 2, Duration::from_secs(10)).await;
    for r in event["Records"].as_array_mut().expect("records") {
        r["eventSourceARN"] = serde_json::Value::String(arn.clone());
    }
    let writer_env = WriterEnv { retries: Some(env.clients.sqs.clone()), ..env.writer_env("default.new_table") };
    let failed_at = Instant::now();
    let response = handle_writer(&writer_env, &ports, event).await.expect("writer");
    assert_eq!(response.batch_item_failures.len(), 1, "the object's message fails: no table yet");
    let (again, _) = env.sqs_event(&url, 1, Duration::from_secs(40)).await;
    let back = again["Records"].as_array().expect("records").len();
    assert_eq!(back, 1, "the failed message is delivered again within 40 s (its queue's visibility timeout is 600 s)");
    let waited = failed_at.elapsed();
    assert!(waited >= Duration::from_secs(8), "not before its first retry's delay (10 s): {waited:?}");
}

/// A compaction share that fails (here: a share this build cannot read) is delivered again
/// within seconds too, well inside a share's TTL (4 minutes), not after the share queue's
/// visibility timeout.
#[tokio::test]
async fn a_failed_compaction_share_comes_back_in_seconds() {
    use floe::handlers::compactor::handle_event;

    let env = Env::new(Catalog::DynamoDb).await;
    let (url, arn) = env.queue("compact-share").await;
    let visibility = env.clients.sqs.set_queue_attributes().queue_url(&url);
    visibility.attributes(QueueAttributeName::VisibilityTimeout, "600").send().await.expect("visibility");
    let share = serde_json::json!({"version": 99, "kind": "compact-share", "table": "default.events",
        "partitions": [""], "full": true, "max_tasks": 1, "planned_ms": epoch_ms()});
    env.clients.sqs.send_message().queue_url(&url).message_body(share.to_string()).send().await.expect("send");
    let (mut event, _) = env.sqs_event(&url, 1, Duration::from_secs(10)).await;
    for r in event["Records"].as_array_mut().expect("records") {
        r["eventSourceARN"] = serde_json::Value::String(arn.clone());
    }
    let ports: Ports = aws::connect(&env.settings).await.expect("connect");
    let compactor_env = CompactorEnv::from_lookup(|_| None).expect("compactor env");
    let failed_at = Instant::now();
    let response = handle_event(&compactor_env, &ports, None, Some(&env.clients.sqs), event).await.expect("shares");
    assert_eq!(response["batchItemFailures"].as_array().map(Vec::len), Some(1), "{response}");
    let (again, _) = env.sqs_event(&url, 1, Duration::from_secs(40)).await;
    assert_eq!(again["Records"].as_array().expect("records").len(), 1, "delivered again within 40 s (timeout 600 s)");
    assert!(
        failed_at.elapsed() >= Duration::from_secs(8),
        "not before the first retry's delay: {:?}",
        failed_at.elapsed()
    );
}
