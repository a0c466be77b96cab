//! Schema evolution through the writer and the committer: rival proposals for the same field
//! ids, files written against a schema that has moved on, and compaction across schemas.

use std::collections::HashMap;

use apache_avro::types::Value;
use arrow_array::{Array, RecordBatch, StringArray};
use floe::TableIdent;
use floe::config::TableConfig;
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::create::ensure_table;
use floe::pipeline::write::write;
use floe::ports::{Message, ObjectMeta};
use floe::table::{WriterTable, load_table};

use crate::common::*;

fn table() -> TableIdent {
    "ev.people".parse().unwrap()
}

fn schema_json(extra: &[(&str, &str)]) -> String {
    let mut fields =
        vec![r#"{"name":"id","type":"long"}"#.to_string(), r#"{"name":"name","type":"string"}"#.to_string()];
    for (name, ty) in extra {
        fields.push(format!(r#"{{"name":"{name}","type":["null",{ty}],"default":null}}"#));
    }
    format!(r#"{{"type":"record","name":"person","fields":[{}]}}"#, fields.join(","))
}

/// An Avro file of `ids`, each row `{id, name: "n<id>", <extra>: "<extra><id>"}`.
fn people(extra: &[&str], ids: std::ops::Range<i64>) -> Vec<u8> {
    let typed: Vec<(&str, &str)> = extra.iter().map(|e| (*e, r#""string""#)).collect();
    let schema = apache_avro::Schema::parse_str(&schema_json(&typed)).unwrap();
    let mut w = apache_avro::Writer::new(&schema, vec![]);
    for id in ids {
        let mut fields =
            vec![("id".to_string(), Value::Long(id)), ("name".to_string(), Value::String(format!("n{id}")))];
        for e in extra {
            fields.push((e.to_string(), Value::Union(1, Box::new(Value::String(format!("{e}{id}"))))));
        }
        w.append(Value::Record(fields)).unwrap();
    }
    w.into_inner().unwrap()
}

async fn view(h: &Harness, objects: &[ObjectMeta]) -> WriterTable {
    let cfg = TableConfig::new(table());
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, objects).await.unwrap();
    WriterTable::from_metadata(&table(), &state.metadata).unwrap()
}

async fn drain(h: &Harness) -> Vec<Message> {
    h.ports.commit_queue.receive(1000, std::time::Duration::from_secs(60)).await.unwrap()
}

/// Every live file's columns carry the field ids the table's schema gives their names, and each
/// row's extra columns hold the values written for them (or nothing).
async fn check_ids_and_values(h: &Harness, expect_rows: usize) {
    check_ids_and_values_in(&h.ports, expect_rows).await
}

async fn check_ids_and_values_in(ports: &floe::ports::Ports, expect_rows: usize) {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &table()).await.unwrap().unwrap();
    let schema = state.metadata.current_schema();
    let c = contents(ports, &table()).await;
    let mut rows = 0;
    for (path, _, batch) in &c.files {
        for f in batch.schema().fields() {
            let id: i32 = f.metadata()["PARQUET:field_id"].parse().unwrap();
            assert_eq!(schema.name_by_field_id(id), Some(f.name().as_str()), "{path}: column {} has id {id}", f.name());
        }
        rows += batch.num_rows();
        check_values(batch);
    }
    assert_eq!(rows, expect_rows);
}

fn check_values(batch: &RecordBatch) {
    let ids = batch.column_by_name("id").unwrap().as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
    for f in batch.schema().fields().iter().filter(|f| !["id", "name"].contains(&f.name().as_str())) {
        let col = batch.column_by_name(f.name()).unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..batch.num_rows() {
            if col.is_valid(i) {
                assert_eq!(col.value(i), format!("{}{}", f.name(), ids.value(i)), "a value under another column");
            }
        }
    }
}

#[tokio::test]
async fn rival_evolutions_of_one_table_never_land_under_each_others_ids() {
    for a_first in [true, false] {
        let h = Harness::new();
        let v1 = h.put_file("in", "v1.avro", &people(&[], 0..10)).await;
        let t0 = view(&h, std::slice::from_ref(&v1)).await;
        write(&h.engine, &h.ports, &t0, vec![v1.clone()]).await.unwrap();
        let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
        committer.commit(&drain(&h).await).await;
        // Two producers evolve the same table differently, from the same view of it: each
        // proposes the next field id for its own new column.
        let a = h.put_file("in", "a.avro", &people(&["x"], 100..110)).await;
        let b = h.put_file("in", "b.avro", &people(&["y"], 200..210)).await;
        let t1 = view(&h, &[]).await;
        write(&h.engine, &h.ports, &t1, vec![a.clone()]).await.unwrap();
        write(&h.engine, &h.ports, &t1, vec![b.clone()]).await.unwrap();
        let mut msgs = drain(&h).await;
        assert_eq!(msgs.len(), 2);
        msgs.sort_by_key(|m| m.body.contains(&b.uri));
        if !a_first {
            msgs.reverse();
        }
        let out = committer.commit(&msgs).await;
        let results: HashMap<String, MessageResult> = out.results.into_iter().collect();
        let (first, second) = (&results[&msgs[0].id], &results[&msgs[1].id]);
        assert!(matches!(first, MessageResult::Committed { .. }), "{first:?}");
        let requeue = match second {
            MessageResult::Overlap { requeue, .. } => requeue.clone(),
            other => panic!("the rival proposal must be written again, got {other:?}"),
        };
        let loser = if a_first { &b } else { &a };
        assert_eq!(requeue.iter().map(|s| s.uri.as_str()).collect::<Vec<_>>(), vec![loser.uri.as_str()]);
        check_ids_and_values(&h, 20).await;
        // Written again against the table as it is now, the loser's column gets a fresh id.
        let t2 = view(&h, &[]).await;
        write(&h.engine, &h.ports, &t2, requeue.iter().map(|s| s.object()).collect()).await.unwrap();
        let out = committer.commit(&drain(&h).await).await;
        assert!(matches!(out.results[0].1, MessageResult::Committed { .. }), "{:?}", out.results);
        check_ids_and_values(&h, 30).await;
        let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &table()).await.unwrap().unwrap();
        let s = state.metadata.current_schema();
        let (x, y) = (s.field_by_name("x").unwrap().id, s.field_by_name("y").unwrap().id);
        assert_eq!((x, y), if a_first { (3, 4) } else { (4, 3) });
        assert_eq!(state.metadata.last_column_id(), 4);
    }
}

#[tokio::test]
async fn a_file_written_against_an_older_schema_lands_and_compacts_with_the_new() {
    let h = Harness::new();
    let v1 = h.put_file("in", "v1.avro", &people(&[], 0..10)).await;
    let t0 = view(&h, std::slice::from_ref(&v1)).await;
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    write(&h.engine, &h.ports, &t0, vec![v1]).await.unwrap();
    committer.commit(&drain(&h).await).await;
    // A writer with a fresh view adds `x`; another, still on the first view, writes an old file.
    let t1 = view(&h, &[]).await;
    let v2 = h.put_file("in", "v2.avro", &people(&["x"], 10..20)).await;
    write(&h.engine, &h.ports, &t1, vec![v2]).await.unwrap();
    committer.commit(&drain(&h).await).await;
    let old = h.put_file("in", "old.avro", &people(&[], 20..30)).await;
    write(&h.engine, &h.ports, &t0, vec![old]).await.unwrap();
    let out = committer.commit(&drain(&h).await).await;
    assert!(matches!(out.results[0].1, MessageResult::Committed { .. }), "{:?}", out.results);
    check_ids_and_values(&h, 30).await;
    // Compaction reads the three files by field id into the current schema.
    let opts = floe::pipeline::compact::CompactOptions { full: true, ..Default::default() };
    floe::pipeline::ingest::compact_and_commit(
        &h.engine,
        &h.ports,
        &table(),
        &opts,
        std::time::Duration::from_secs(60),
    )
    .await
    .unwrap();
    let c = contents(&h.ports, &table()).await;
    assert_eq!(c.files.len(), 1, "one compacted file");
    let batch = &c.files[0].2;
    assert_eq!(batch.num_rows(), 30);
    let x = batch.column_by_name("x").unwrap();
    assert_eq!(x.null_count(), 20, "rows written without x read as null");
    check_values(batch);
    check_ids_and_values(&h, 30).await;
}

/// The same rivalry through the Lambda handlers on moto: two warm writer invocations with the
/// same cached view propose the same field id; the committer function takes one and sends the
/// other's source back to the ingest queue; the writer, which forgot its view when it proposed,
/// writes it again against the new schema. PyIceberg's DynamoDB catalog reads every value back.
#[tokio::test]
async fn rival_evolutions_through_the_functions_on_moto() {
    use std::time::Duration;

    use aws_sdk_s3::primitives::ByteStream;
    use floe::adapters::aws::{self, Catalog, SqsQueue};
    use floe::config::EngineConfig;
    use floe::handlers::{Router, WriterEnv, handle_committer, handle_writer};
    use tokio::sync::Mutex;

    use crate::aws::{Env, create_on_first_sight};

    let env = Env::new(Catalog::DynamoDb).await;
    let (ingest_url, ingest_arn) = env.queue("ingest").await;
    env.notify(ingest_arn).await;
    let ports = aws::connect(&env.settings).await.expect("connect");
    let writer_env = WriterEnv {
        engine: EngineConfig::default(),
        router: Router::new(None, table()),
        warehouse: format!("s3://{}/warehouse", env.bucket("lake")),
        dead_letters: None,
        tables: std::sync::Arc::new(floe::table::WriterTables::new(Duration::from_secs(600))),
        create_wait: Duration::ZERO,
        retries: None,
    };
    let put = |key: &'static str, body: Vec<u8>| {
        let req = env.clients.s3.put_object().bucket(env.bucket("landing")).key(key).body(ByteStream::from(body));
        async move { req.send().await.expect("put") }
    };
    let queue = SqsQueue::new(env.clients.sqs.clone(), &env.settings.commit_queue_url);
    let requeue = SqsQueue::new(env.clients.sqs.clone(), &ingest_url);
    let committer = Mutex::new(Committer::new(EngineConfig::default(), ports.clone()));
    let commit = |want: usize| {
        let (env, queue, requeue, committer) = (&env, &queue, &requeue, &committer);
        async move {
            let (event, receipts) = env.sqs_event(&env.settings.commit_queue_url, want, Duration::from_secs(10)).await;
            let ev: aws_lambda_events::event::sqs::SqsEvent = serde_json::from_value(event).expect("event");
            let response = handle_committer(committer, queue, requeue, ev).await;
            assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
            env.delete_all(&env.settings.commit_queue_url, &receipts).await;
        }
    };

    put("p/v1.avro", people(&[], 0..10)).await;
    let (mut event, receipts) = env.sqs_event(&ingest_url, 2, Duration::from_secs(20)).await;
    // moto's s3:TestEvent comes first; only the object's notification matters.
    event["Records"].as_array_mut().unwrap().retain(|r| r["body"].as_str().unwrap_or_default().contains("v1.avro"));
    create_on_first_sight(&writer_env, &ports, event.clone()).await;
    assert!(handle_writer(&writer_env, &ports, event).await.expect("writer").batch_item_failures.is_empty());
    env.delete_all(&ingest_url, &receipts).await;
    commit(1).await;

    // Two producers' new versions, each in its own invocation of a warm writer.
    put("p/a.avro", people(&["x"], 100..110)).await;
    put("p/b.avro", people(&["y"], 200..210)).await;
    let (event, receipts) = env.sqs_event(&ingest_url, 2, Duration::from_secs(20)).await;
    let records = event["Records"].as_array().unwrap().clone();
    assert_eq!(records.len(), 2);
    assert_eq!(writer_env.tables.loads(), 1);
    for r in records {
        let one = serde_json::json!({ "Records": [r] });
        assert!(handle_writer(&writer_env, &ports, one).await.expect("writer").batch_item_failures.is_empty());
        // Both proposals come from the view loaded before either: the first forgot it after
        // proposing, so the second loaded it again, but the table had not moved yet.
    }
    env.delete_all(&ingest_url, &receipts).await;
    commit(2).await;
    // One proposal landed; the other's source is back on the ingest queue.
    let (event, receipts) = env.sqs_event(&ingest_url, 1, Duration::from_secs(10)).await;
    assert_eq!(event["Records"].as_array().unwrap().len(), 1, "one source written again");
    assert!(handle_writer(&writer_env, &ports, event).await.expect("writer").batch_item_failures.is_empty());
    env.delete_all(&ingest_url, &receipts).await;
    commit(1).await;

    check_ids_and_values_in(&ports, 30).await;
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &table()).await.unwrap().unwrap();
    assert_eq!(state.metadata.last_column_id(), 4);
    let mut rows = vec![];
    for id in 0..10 {
        rows.push(serde_json::json!({"id": id, "name": format!("n{id}"), "x": null, "y": null}));
    }
    for (col, first) in [("x", 100), ("y", 200)] {
        for id in first..first + 10 {
            let mut r = serde_json::json!({"id": id, "name": format!("n{id}"), "x": null, "y": null});
            r[col] = serde_json::json!(format!("{col}{id}"));
            rows.push(r);
        }
    }
    let lines: Vec<String> = rows.iter().map(|r| r.to_string()).collect();
    crate::aws::pyiceberg_check(
        "dynamodb",
        &env.settings.catalog_table,
        &table().to_string(),
        "--rows-file",
        &lines.join("\n"),
    );
}
