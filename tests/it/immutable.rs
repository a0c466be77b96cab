//! Data files are immutable: a rewrite of a writer batch (redelivered in another order, or
//! written again after a table setting changed) never alters a file a manifest may describe.

use std::collections::HashMap;
use std::time::Duration;

use apache_avro::types::Record;
use floe::config::TableConfig;
use floe::message::FileManifest;
use floe::pipeline::commit::Committer;
use floe::pipeline::create::ensure_table;
use floe::pipeline::write::write;
use floe::ports::ObjectMeta;
use floe::table::WriterTable;

use crate::common::*;

const SCHEMA: &str = r#"{"type":"record","name":"E","fields":[
    {"name":"event_id","type":"string"},{"name":"tenant","type":"string"},{"name":"v","type":"long"}]}"#;

/// An Avro file of (event_id, tenant, v) rows.
fn avro(rows: &[(&str, &str, i64)]) -> Vec<u8> {
    let schema = apache_avro::Schema::parse_str(SCHEMA).unwrap();
    let mut w = apache_avro::Writer::new(&schema, vec![]);
    for (id, tenant, v) in rows {
        let mut r = Record::new(&schema).unwrap();
        r.put("event_id", *id);
        r.put("tenant", *tenant);
        r.put("v", *v);
        w.append(r).unwrap();
    }
    w.into_inner().unwrap()
}

/// Two sources sharing keys with different payloads: which copy survives dedup depends on the
/// order the writer reads them in, unless that order is fixed.
async fn sources(h: &Harness) -> Vec<ObjectMeta> {
    let a = avro(&[("k1", "t1", 1), ("k2", "t2", 1), ("k3", "t1", 1)]);
    let b = avro(&[("k1", "t1", 2), ("k3", "t1", 2), ("k4", "t2", 2)]);
    vec![h.put_file("in", "a.avro", &a).await, h.put_file("in", "b.avro", &b).await]
}

async fn files_of(h: &Harness, m: &FileManifest) -> HashMap<String, Vec<u8>> {
    let mut out = HashMap::new();
    for f in &m.files {
        out.insert(f.path.clone(), h.ports.store.get(&f.path).await.unwrap().to_vec());
    }
    out
}

async fn manifest(h: &Harness) -> FileManifest {
    let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(msgs.len(), 1);
    h.ports.commit_queue.ack(&msgs[0].receipt).await.unwrap();
    FileManifest::from_json(&msgs[0].body).unwrap()
}

#[tokio::test]
async fn a_batch_redelivered_in_another_order_writes_the_same_bytes() {
    let h = Harness::new();
    let objs = sources(&h).await;
    let cfg = TableConfig::new("web.kv".parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap();
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &objs).await.unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();

    write(&h.engine, &h.ports, &t, objs.clone()).await.unwrap();
    let first = manifest(&h).await;
    let first_files = files_of(&h, &first).await;
    let reversed: Vec<ObjectMeta> = objs.iter().rev().cloned().collect();
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let again_at = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    write(&h.engine, &h.ports, &t, reversed).await.unwrap();
    let second = manifest(&h).await;
    assert_eq!(first.batch_id, second.batch_id);
    // The files kept are as old as the first write (their modification time, give or take the
    // file system clock's tick): the committer's age limit judges that.
    let (first_at, second_at) = (first.written_ms.unwrap(), second.written_ms.unwrap());
    assert!((first_at - second_at).abs() < 40 && second_at < again_at, "{first_at} {second_at} {again_at}");
    assert_eq!(first.files, second.files, "same paths, sizes and statistics");
    assert_eq!(first_files, files_of(&h, &second).await, "same bytes");
    // The rule: the copy from the source with the smallest id wins (a.avro: v = 1).
    let rows = h.ports.store.get(&first.files[0].path).await.unwrap();
    let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(rows)
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let v = batch.column_by_name("v").unwrap().as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
    assert!(v.iter().all(|v| v == Some(1) || v == Some(2)));
    let total: u64 = first.files.iter().map(|f| f.record_count).sum();
    assert_eq!(total, 4, "k1..k4 once each");

    // The batch written again (not yet committed) after a table setting changed: its files
    // get other names, and the first manifest still describes the bytes it was made from.
    let mut changed = t.clone();
    changed.compression = "snappy".into();
    write(&h.engine, &h.ports, &changed, objs.clone()).await.unwrap();
    let third = manifest(&h).await;
    assert_eq!(third.batch_id, first.batch_id);
    for f in &third.files {
        assert!(!first_files.contains_key(&f.path), "{} would replace a file of the first manifest", f.path);
    }
    assert_eq!(first_files, files_of(&h, &first).await, "the first manifest's files are unchanged");
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    h.ports.commit_queue.send(first.to_json().unwrap()).await.unwrap();
    h.ports.commit_queue.send(third.to_json().unwrap()).await.unwrap();
    committer.run_once(10, Duration::from_secs(60)).await.unwrap();
    let table = contents(&h.ports, &cfg.table).await;
    assert_eq!(table.rows(), 4, "one of the two copies committed, read back with matching counts");
}

/// S3 answers 409 to a conditional PUT while another one to the same key is in flight: the
/// object may never appear (that writer may die). The writer must not send a manifest naming
/// files it has not seen land.
#[tokio::test]
async fn a_conflict_with_no_object_behind_it_sends_no_manifest() {
    use std::sync::Arc;

    use async_trait::async_trait;
    use bytes::Bytes;
    use floe::PortError;
    use floe::ports::ObjectStore;

    struct InFlight(Arc<dyn ObjectStore>);

    #[async_trait]
    impl ObjectStore for InFlight {
        async fn get(&self, uri: &str) -> Result<Bytes, PortError> {
            self.0.get(uri).await
        }
        async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError> {
            self.0.get_version(meta).await
        }
        async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError> {
            self.0.head(uri).await
        }
        async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
            self.0.put(uri, body).await
        }
        async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError> {
            if uri.ends_with(".parquet") {
                return Err(PortError::Conflict(format!("{uri}: a conditional write is in flight")));
            }
            self.0.put_if_absent(uri, body).await
        }
        async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError> {
            self.0.list(prefix).await
        }
        async fn delete(&self, uri: &str) -> Result<(), PortError> {
            self.0.delete(uri).await
        }
    }

    let h = Harness::new();
    let objs = sources(&h).await;
    let cfg = TableConfig::new("web.kv".parse().unwrap()).with_dedup_key("event_id").unwrap();
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &objs).await.unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
    let mut ports = h.ports.clone();
    ports.store = Arc::new(InFlight(h.ports.store.clone()));
    assert!(write(&h.engine, &ports, &t, objs).await.is_err(), "the batch fails, to be written again");
    let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(1)).await.unwrap();
    assert!(msgs.is_empty(), "no manifest names a file that is not there");
}
