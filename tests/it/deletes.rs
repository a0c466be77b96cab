//! Other engines' row-level deletes (position and equality delete files) under compaction: a
//! compaction drops the deleted rows, removes the delete files it left dangling, never brings a
//! deleted row back when a `DELETE` races it, keeps the new copy of a row another engine
//! updated, and survives a kill at every fault point of a rewrite that removes delete files.
//! The table's rows as a reader sees them are computed here by a reader of its own
//! ([`visible`]); the Python suite checks the same with PyIceberg.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use floe::TableIdent;
use floe::config::TableConfig;
use floe::fault::{FaultPoint, Faults};
use floe::message::{CommitRequest, RewriteRequest};
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::compact::{CompactOptions, plan_table, run_task};
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::ports::Ports;
use floe::table::{WriterTable, load_table};
use floe::testing::deletes::{commit_deletes, delete_file, parquet_of, position_deletes};
use iceberg::spec::{DataContentType, DataFile, Struct};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use crate::common::*;
use crate::compact::{kv_avro_in, values};
use crate::crash::quiet_crashes;

const VISIBILITY: Duration = Duration::from_secs(60);

fn kv_table(name: &str) -> TableConfig {
    TableConfig::new(name.parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap()
}

fn opts(full: bool) -> CompactOptions {
    CompactOptions { min_files: 2, full, parallelism: 2, ..Default::default() }
}

/// Ingests `files` (tenant, rows) one object per writer batch and commit.
async fn ingest_files(h: &Harness, cfg: &TableConfig, folder: &str, files: &[(&str, &[(&str, i64)])]) {
    let mut objects = vec![];
    for (i, (tenant, rows)) in files.iter().enumerate() {
        objects.push(h.put_file(folder, &format!("{i:03}.avro"), &kv_avro_in(tenant, rows)).await);
    }
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let r = ingest(&h.engine, &h.ports, cfg, &h.warehouse, objects, &opts).await.expect("ingest");
    assert!(r.quarantined.is_empty(), "{:?}", r.quarantined);
}

/// Where each key's rows are: (data file, position, partition).
async fn rows_of(ports: &Ports, table: &TableIdent) -> HashMap<String, Vec<(String, i64, Struct)>> {
    let mut out: HashMap<String, Vec<(String, i64, Struct)>> = HashMap::new();
    for (path, partition, b) in contents(ports, table).await.files {
        let ids = b.column_by_name("event_id").unwrap();
        let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
        for i in 0..b.num_rows() {
            out.entry(ids.value(i).to_string()).or_default().push((path.clone(), i as i64, partition.clone()));
        }
    }
    out
}

/// The table's location and the field id of `event_id`.
async fn location_and_key_id(ports: &Ports, table: &TableIdent) -> (String, i32) {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await.unwrap().unwrap();
    let id = state.metadata.current_schema().field_by_name("event_id").unwrap().id;
    (state.metadata.location().trim_end_matches('/').to_string(), id)
}

/// Another engine's position delete file of `rows` (data file, position), in `partition`;
/// naming its one data file if `referenced`.
async fn position_delete(
    ports: &Ports,
    table: &TableIdent,
    rows: &[(&str, i64)],
    partition: &Struct,
    referenced: bool,
) -> DataFile {
    let (location, _) = location_and_key_id(ports, table).await;
    let path = format!("{location}/data/delete-{}.parquet", uuid::Uuid::new_v4());
    let body = position_deletes(rows).unwrap();
    let size = body.len() as u64;
    ports.store.put(&path, body).await.unwrap();
    let named = referenced.then(|| rows[0].0);
    delete_file(&path, size, DataContentType::PositionDeletes, 0, partition.clone(), rows.len() as u64, None, named)
        .unwrap()
}

/// Another engine's equality delete file of `keys` (on `event_id`), in `partition`.
async fn equality_delete(ports: &Ports, table: &TableIdent, keys: &[&str], partition: &Struct) -> DataFile {
    let (location, id) = location_and_key_id(ports, table).await;
    let field = arrow_schema::Field::new("event_id", arrow_schema::DataType::Utf8, false)
        .with_metadata([(parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string())].into());
    let column: ArrayRef = std::sync::Arc::new(StringArray::from_iter_values(keys.iter().copied()));
    let batch =
        RecordBatch::try_new(std::sync::Arc::new(arrow_schema::Schema::new(vec![field])), vec![column]).unwrap();
    let body = parquet_of(batch).unwrap();
    let path = format!("{location}/data/eq-delete-{}.parquet", uuid::Uuid::new_v4());
    let size = body.len() as u64;
    ports.store.put(&path, body).await.unwrap();
    let ids = Some(vec![id]);
    delete_file(&path, size, DataContentType::EqualityDeletes, 0, partition.clone(), keys.len() as u64, ids, None)
        .unwrap()
}

/// The table's rows as a reader sees them, deletes applied: `v` per event id (in order of value).
/// Position deletes
/// apply to data files of at most their sequence number, equality deletes (on `event_id`) to
/// older files of their partition.
async fn visible(ports: &Ports, table: &TableIdent) -> BTreeMap<String, Vec<i64>> {
    let c = contents(ports, table).await;
    let mut positions: HashMap<String, Vec<(i64, i64)>> = HashMap::new();
    let mut keys: Vec<(Struct, i64, Vec<String>)> = vec![];
    for (d, seq) in &c.deletes {
        let bytes = ports.store.get(d.file_path()).await.unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap().build().unwrap();
        for b in reader {
            let b = b.unwrap();
            match d.content_type() {
                DataContentType::PositionDeletes => {
                    let files = b.column_by_name("file_path").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
                    let pos = b.column_by_name("pos").unwrap().as_any().downcast_ref::<Int64Array>().unwrap();
                    for i in 0..b.num_rows() {
                        positions.entry(files.value(i).to_string()).or_default().push((pos.value(i), *seq));
                    }
                }
                _ => {
                    let ids = b.column_by_name("event_id").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
                    let ids = (0..ids.len()).map(|i| ids.value(i).to_string()).collect();
                    keys.push((d.partition().clone(), *seq, ids));
                }
            }
        }
    }
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for (path, partition, b) in &c.files {
        let seq = c.seqs[path];
        let ids = b.column_by_name("event_id").unwrap();
        let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column_by_name("v").unwrap();
        let v = v.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            let by_position = positions.get(path).is_some_and(|ps| ps.iter().any(|(p, s)| *p == i as i64 && *s >= seq));
            let by_key =
                keys.iter().any(|(part, s, ks)| part == partition && *s > seq && ks.iter().any(|k| k == ids.value(i)));
            if !by_position && !by_key {
                out.entry(ids.value(i).to_string()).or_default().push(v.value(i));
            }
        }
    }
    out.values_mut().for_each(|v| v.sort_unstable());
    out
}

/// The current snapshot's summary.
async fn summary(ports: &Ports, table: &TableIdent) -> (iceberg::spec::Operation, HashMap<String, String>) {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await.unwrap().unwrap();
    let s = state.metadata.current_snapshot().unwrap().summary().clone();
    (s.operation, s.additional_properties)
}

/// Position deletes (one naming its file, one spanning two files of the partition) and equality
/// deletes in two partitions, committed by another engine: a full compaction drops exactly the
/// rows they delete, keeps every other row once with its value, and removes every delete file
/// (each applied only to files it rewrote), in a `replace` whose totals count none left.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_applies_other_engines_deletes_and_removes_those_left_dangling() {
    let h = Harness::new();
    let cfg = kv_table("kv.deletes");
    let t1: Vec<Vec<(String, i64)>> =
        (0..4).map(|f| (0..3).map(|k| (format!("k{f}{k}"), (f * 10 + k) as i64)).collect()).collect();
    let t1: Vec<Vec<(&str, i64)>> = t1.iter().map(|f| f.iter().map(|(k, v)| (k.as_str(), *v)).collect()).collect();
    let mut files: Vec<(&str, &[(&str, i64)])> = t1.iter().map(|f| ("t1", f.as_slice())).collect();
    files.push(("t2", &[("m0", 100), ("m1", 101)]));
    files.push(("t2", &[("m2", 102)]));
    ingest_files(&h, &cfg, "in", &files).await;
    let before = visible(&h.ports, &cfg.table).await;
    assert_eq!(before.len(), 15);

    let at = rows_of(&h.ports, &cfg.table).await;
    let row = |k: &str| at[k][0].clone();
    let (k00, k11, k21) = (row("k00"), row("k11"), row("k21"));
    let (p1, p2) = (k00.2.clone(), row("m0").2);
    let deletes = vec![
        (0, position_delete(&h.ports, &cfg.table, &[(&k00.0, k00.1)], &p1, true).await),
        (0, position_delete(&h.ports, &cfg.table, &[(&k11.0, k11.1), (&k21.0, k21.1)], &p1, false).await),
        (0, equality_delete(&h.ports, &cfg.table, &["k30", "k00"], &p1).await),
        (0, equality_delete(&h.ports, &cfg.table, &["m1"], &p2).await),
    ];
    commit_deletes(&h.ports, &cfg.table, deletes).await.unwrap();
    let mut expected = before.clone();
    for k in ["k00", "k11", "k21", "k30", "m1"] {
        expected.remove(k);
    }
    assert_eq!(visible(&h.ports, &cfg.table).await, expected, "the reader's view of the deletes");

    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    assert_eq!(report.totals.rows_deleted, 5, "{report:?}");
    let c = contents(&h.ports, &cfg.table).await;
    assert!(c.deletes.is_empty(), "every delete file was left dangling and removed: {:?}", c.deletes);
    assert_eq!(values(&h, &cfg.table).await, expected, "the deleted rows are gone, every other row is there once");
    let (op, props) = summary(&h.ports, &cfg.table).await;
    assert_eq!(op, iceberg::spec::Operation::Replace, "the rows a reader sees did not change");
    for total in ["total-delete-files", "total-position-deletes", "total-equality-deletes"] {
        assert_eq!(props.get(total).map(String::as_str), Some("0"), "{total} in {props:?}");
    }
    assert_eq!(props.get("removed-delete-files").map(String::as_str), Some("4"), "{props:?}");
}

/// A `DELETE` committed between a compaction's plan and its commit: the rewrite, which did not
/// apply it, is rejected (the deleted row is not brought back); the next compaction applies it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_racing_a_compaction_never_brings_a_row_back() {
    let h = Harness::new();
    let cfg = kv_table("kv.race");
    let files: Vec<(&str, &[(&str, i64)])> =
        vec![("t1", &[("a", 1), ("b", 2)]), ("t1", &[("c", 3), ("d", 4)]), ("t1", &[("e", 5)])];
    ingest_files(&h, &cfg, "in", &files).await;
    let plan = plan_table(&h.ports, &cfg.table, &opts(false)).await.unwrap();
    assert_eq!(plan.tasks.len(), 1);
    let snap = plan.state.metadata.current_snapshot().unwrap();
    let wt = std::sync::Arc::new(WriterTable::from_metadata(&cfg.table, &plan.state.metadata).unwrap());
    run_task(&h.engine, &h.ports, &wt, snap.snapshot_id(), snap.sequence_number(), &plan.tasks[0]).await.unwrap();

    let c = row_of(&h, &cfg, "c").await;
    let d = position_delete(&h.ports, &cfg.table, &[(&c.0, c.1)], &c.2, true).await;
    commit_deletes(&h.ports, &cfg.table, vec![(0, d)]).await.unwrap();
    let mut expected = visible(&h.ports, &cfg.table).await;
    assert!(!expected.contains_key("c"));

    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    match &out.results[0].1 {
        MessageResult::Stale { reason } => assert!(reason.contains("changed since snapshot"), "{reason}"),
        other => panic!("expected a stale rewrite, got {other:?}"),
    }
    for m in &msgs {
        h.ports.commit_queue.ack(&m.receipt).await.unwrap();
    }
    assert_eq!(visible(&h.ports, &cfg.table).await, expected, "c stays deleted");

    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    assert!(contents(&h.ports, &cfg.table).await.deletes.is_empty());
    assert_eq!(values(&h, &cfg.table).await, std::mem::take(&mut expected));
}

async fn row_of(h: &Harness, cfg: &TableConfig, key: &str) -> (String, i64, Struct) {
    rows_of(&h.ports, &cfg.table).await[key][0].clone()
}

/// Another engine's `UPDATE` of a row in a compacted file (a position delete of the old row, the
/// new row in a new file): the next compaction keeps the new copy, since the compacted file's copy
/// is deleted and no longer the first committed one; a plain late copy of another key is still
/// dropped. The delete file applies to a file the merge only read keys of, so it stays until a
/// compaction rewrites that file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_by_another_engine_keeps_its_new_copy_through_compaction() {
    let h = Harness::new();
    let cfg = kv_table("kv.update");
    ingest_files(&h, &cfg, "in0", &[("t1", &[("k1", 1), ("k2", 1)]), ("t1", &[("k3", 1)])]).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    let old = row_of(&h, &cfg, "k1").await;
    assert!(old.0.rsplit('/').next().unwrap().starts_with('L'), "k1 is in a compacted file");
    let d = position_delete(&h.ports, &cfg.table, &[(&old.0, old.1)], &old.2, true).await;
    commit_deletes(&h.ports, &cfg.table, vec![(0, d)]).await.unwrap();
    ingest_files(&h, &cfg, "in1", &[("t1", &[("k1", 2)]), ("t1", &[("k2", 5)])]).await;

    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.unwrap();
    assert_eq!(report.tasks, 1, "the two new files merge, the compacted file is a reference");
    let want: BTreeMap<String, Vec<i64>> =
        [("k1", vec![2]), ("k2", vec![1]), ("k3", vec![1])].into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    assert_eq!(visible(&h.ports, &cfg.table).await, want, "k1's new value lives; k2's late copy is dropped");
    assert_eq!(contents(&h.ports, &cfg.table).await.deletes.len(), 1, "the delete still applies to the reference");

    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    assert!(contents(&h.ports, &cfg.table).await.deletes.is_empty());
    assert_eq!(values(&h, &cfg.table).await, want);
}

/// A rewrite request from a compactor that does not apply delete files (one built before it
/// could) is refused on a table with delete files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_that_does_not_apply_deletes_is_refused_on_a_table_with_deletes() {
    let h = Harness::new();
    let cfg = kv_table("kv.old");
    ingest_files(&h, &cfg, "in", &[("t1", &[("a", 1)]), ("t1", &[("b", 2)]), ("t2", &[("c", 3)])]).await;
    let c = row_of(&h, &cfg, "c").await;
    let d = position_delete(&h.ports, &cfg.table, &[(&c.0, c.1)], &c.2, true).await;
    commit_deletes(&h.ports, &cfg.table, vec![(0, d)]).await.unwrap();
    let plan = plan_table(&h.ports, &cfg.table, &opts(false)).await.unwrap();
    let snap = plan.state.metadata.current_snapshot().unwrap();
    let wt = std::sync::Arc::new(WriterTable::from_metadata(&cfg.table, &plan.state.metadata).unwrap());
    run_task(&h.engine, &h.ports, &wt, snap.snapshot_id(), snap.sequence_number(), &plan.tasks[0]).await.unwrap();
    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    let CommitRequest::Rewrite(r) = CommitRequest::from_json(&msgs[0].body).unwrap() else { panic!("a rewrite") };
    h.ports.commit_queue.ack(&msgs[0].receipt).await.unwrap();
    // As an older compactor sends it: without the fields.
    let mut old: serde_json::Value = serde_json::to_value(&r).unwrap();
    old.as_object_mut()
        .unwrap()
        .retain(|k, _| !["applies_deletes", "deleted", "removed_deletes"].contains(&k.as_str()));
    assert!(serde_json::from_value::<RewriteRequest>(old.clone()).is_ok());
    h.ports.commit_queue.send(old.to_string()).await.unwrap();
    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    match &out.results[0].1 {
        MessageResult::Stale { reason } => assert!(reason.contains("does not apply"), "{reason}"),
        other => panic!("expected a refused rewrite, got {other:?}"),
    }
    h.ports.commit_queue.ack(&msgs[0].receipt).await.unwrap();
    // This build's compaction of the same files lands.
    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.unwrap();
    assert_eq!(report.tasks, 1);
    let want: BTreeMap<String, Vec<i64>> =
        [("a", vec![1]), ("b", vec![2])].into_iter().map(|(k, v)| (k.into(), v)).collect();
    assert_eq!(visible(&h.ports, &cfg.table).await, want);
}

/// The table a crash run starts from: 6 files over two tenants (two of them, committed last, with
/// later copies of two keys), and another engine's position and equality deletes; returns the
/// rows a reader sees.
async fn with_deletes(h: &Harness, cfg: &TableConfig) -> BTreeMap<String, Vec<i64>> {
    let first: Vec<(&str, &[(&str, i64)])> = vec![
        ("t1", &[("a", 1), ("b", 2), ("c", 3)]),
        ("t1", &[("d", 4), ("e", 5)]),
        ("t2", &[("g", 8), ("h", 9)]),
        ("t2", &[("i", 10)]),
    ];
    ingest_files(h, cfg, "in", &first).await;
    // Later copies of `a` and `g`, committed after the first ones.
    ingest_files(h, cfg, "in2", &[("t1", &[("f", 6), ("a", 7)]), ("t2", &[("j", 11), ("g", 12)])]).await;
    let at = rows_of(&h.ports, &cfg.table).await;
    let (b, c, e, t2) = (at["b"][0].clone(), at["c"][0].clone(), at["e"][0].clone(), at["h"][0].2.clone());
    let deletes = vec![
        (0, position_delete(&h.ports, &cfg.table, &[(&b.0, b.1)], &b.2, true).await),
        (0, position_delete(&h.ports, &cfg.table, &[(&e.0, e.1), (&c.0, c.1)], &e.2, false).await),
        // `a` is in t1: this delete of t2 does not reach it.
        (0, equality_delete(&h.ports, &cfg.table, &["i", "a"], &t2).await),
        (0, equality_delete(&h.ports, &cfg.table, &["f"], &b.2).await),
    ];
    commit_deletes(&h.ports, &cfg.table, deletes).await.unwrap();
    visible(&h.ports, &cfg.table).await
}

/// Kill a compaction that applies and removes delete files at each compactor and committer
/// fault point (first and second hit), restart, compact fully: the table holds exactly the rows
/// a reader saw before (no deleted row back, none lost, each key once) and no delete file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_point_of_a_rewrite_that_removes_delete_files_loses_and_resurrects_nothing() {
    quiet_crashes();
    // Those a compaction passes (the ledger is for sources: a rewrite does not update it).
    let points = FaultPoint::ALL
        .into_iter()
        .filter(|p| !p.name().starts_with("writer.") && *p != FaultPoint::CommitterAfterLedgerUpdate);
    let engine = floe::config::EngineConfig { lock_lease: Duration::from_millis(700), ..Default::default() };
    let visibility = Duration::from_millis(700);
    let mut failed = vec![];
    for point in points {
        for nth in [1, 2] {
            let h = Harness::new();
            let cfg = kv_table("kv.crash");
            let before = with_deletes(&h, &cfg).await;
            let rows = |r: &[(&str, &[i64])]| -> BTreeMap<String, Vec<i64>> {
                r.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect()
            };
            let seen = rows(&[("a", &[1, 7]), ("d", &[4]), ("g", &[8, 12]), ("h", &[9]), ("j", &[11])]);
            assert_eq!(before, seen, "the reader's view of the deletes");
            // Each key once, its first committed copy.
            let want = rows(&[("a", &[1]), ("d", &[4]), ("g", &[8]), ("h", &[9]), ("j", &[11])]);
            let faults = Faults::crash_at(point, nth);
            let ports = h.ports.clone().with_faults(faults.clone());
            let (e, t) = (engine.clone(), cfg.table.clone());
            let first =
                tokio::spawn(async move { compact_and_commit(&e, &ports, &t, &opts(false), visibility).await }).await;
            let fired = faults.hits(point) >= nth;
            assert!(fired || matches!(first, Ok(Ok(_))), "{point} #{nth}: failed without a crash: {first:?}");
            assert!(fired || nth > 1, "{point} was never reached");
            tokio::time::sleep(Duration::from_millis(800)).await;
            let restarted = floe::adapters::local::ports(&h.dir.path().join("wh")).unwrap();
            compact_and_commit(&engine, &restarted, &cfg.table, &opts(true), visibility).await.expect("recovery");
            let got = values(&h, &cfg.table).await;
            let left = contents(&restarted, &cfg.table).await.deletes.len();
            if got != want || left != 0 {
                failed.push(format!("{point} #{nth} (fired {fired}): {left} delete files left, rows {got:?}"));
            }
        }
    }
    assert!(failed.is_empty(), "{failed:#?}");
}

/// A deletion vector another engine wrote in a v3 table (a Puffin blob of positions, naming its
/// data file): compaction drops exactly those rows, every other row keeps its `_row_id` and
/// `_last_updated_sequence_number`, and the vector, dangling once its file is rewritten, is
/// removed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_vector_is_applied_and_removed_and_the_other_rows_keep_their_ids() {
    use floe::testing::deletes::{deletion_vector, vector_file};
    let h = Harness::new();
    let cfg = kv_table("kv.vectors");
    ingest_files(&h, &cfg, "in", &[("t1", &[("a", 1), ("b", 2), ("c", 3)]), ("t1", &[("d", 4)])]).await;
    crate::format::commit_foreign(&h, &cfg.table, |b| {
        b.upgrade_format_version(iceberg::spec::FormatVersion::V3).unwrap()
    })
    .await;
    // The first v3 commit gives the earlier files their row ids.
    ingest_files(&h, &cfg, "in2", &[("t1", &[("e", 5)])]).await;
    let before = crate::format::row_lineage(&h, &cfg.table).await;
    assert!(before.values().all(|(id, _)| id.is_some()));

    let b = row_of(&h, &cfg, "b").await;
    let c = row_of(&h, &cfg, "c").await;
    assert_eq!(b.0, c.0);
    let (location, _) = location_and_key_id(&h.ports, &cfg.table).await;
    let (puffin, offset, length) = deletion_vector(&b.0, &[b.1 as u64, c.1 as u64]).unwrap();
    let path = format!("{location}/data/dv-{}.puffin", uuid::Uuid::new_v4());
    let size = puffin.len() as u64;
    h.ports.store.put(&path, puffin).await.unwrap();
    let dv = vector_file(&path, size, 0, b.2.clone(), 2, &b.0, offset, length).unwrap();
    commit_deletes(&h.ports, &cfg.table, vec![(0, dv)]).await.unwrap();

    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    assert_eq!(report.totals.rows_deleted, 2, "{report:?}");
    let mut want = before.clone();
    want.remove("b");
    want.remove("c");
    assert_eq!(crate::format::row_lineage(&h, &cfg.table).await, want);
    assert!(contents(&h.ports, &cfg.table).await.deletes.is_empty(), "the vector was removed");
    let (_, props) = summary(&h.ports, &cfg.table).await;
    assert_eq!(props.get("total-delete-files").map(String::as_str), Some("0"), "{props:?}");
    assert_eq!(props.get("removed-dvs").map(String::as_str), Some("1"), "counted as Java counts it: {props:?}");
    assert!(!props.contains_key("removed-position-delete-files"), "{props:?}");
}

/// Two delete files in one manifest, one left dangling by a compaction of its partition and one
/// of a partition not compacted: the manifest is rewritten with the first `DELETED` and the
/// second `EXISTING` with its own sequence number, so it still deletes its row and still does not
/// reach a row of the same key written after it (a reinsert).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_manifest_rewritten_keeps_its_other_entries_sequence_numbers() {
    let h = Harness::new();
    let cfg = kv_table("kv.keep");
    let files: Vec<(&str, &[(&str, i64)])> =
        vec![("t1", &[("a", 1), ("b", 2)]), ("t1", &[("c", 3)]), ("t1", &[("d", 4)]), ("t2", &[("x", 10), ("y", 11)])];
    ingest_files(&h, &cfg, "in", &files).await;
    let (a, x) = (row_of(&h, &cfg, "a").await, row_of(&h, &cfg, "x").await);
    let deletes = vec![
        (0, position_delete(&h.ports, &cfg.table, &[(&a.0, a.1)], &a.2, true).await),
        (0, equality_delete(&h.ports, &cfg.table, &["x"], &x.2).await),
    ];
    commit_deletes(&h.ports, &cfg.table, deletes).await.unwrap();
    // x again, after the delete: a reader sees it.
    ingest_files(&h, &cfg, "in2", &[("t2", &[("x", 12)])]).await;
    let seen = visible(&h.ports, &cfg.table).await;
    assert_eq!(seen.get("x"), Some(&vec![12]));
    assert!(!seen.contains_key("a"));

    // Only t1 is due (three files); t2 has two.
    let three = CompactOptions { min_files: 3, ..opts(false) };
    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &three, VISIBILITY).await.unwrap();
    assert_eq!(report.tasks, 1);
    let c = contents(&h.ports, &cfg.table).await;
    assert_eq!(c.deletes.len(), 1, "t1's delete removed, t2's kept: {:?}", c.deletes);
    assert_eq!(c.deletes[0].0.content_type(), DataContentType::EqualityDeletes);
    assert_eq!(visible(&h.ports, &cfg.table).await, seen, "t2's delete reaches x=10, not the reinsert");

    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    assert!(contents(&h.ports, &cfg.table).await.deletes.is_empty());
    assert_eq!(values(&h, &cfg.table).await, seen);
}

/// Another engine deleted every row of a partition's level-0 files: compaction removes the files
/// and writes none (the encoder is never handed an empty list of batches).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_every_row_is_deleted_removes_its_files_and_writes_none() {
    let h = Harness::new();
    let cfg = kv_table("kv.gone");
    ingest_files(&h, &cfg, "in", &[("t1", &[("a", 1)]), ("t1", &[("b", 2)]), ("t2", &[("c", 3)])]).await;
    let (a, b) = (row_of(&h, &cfg, "a").await, row_of(&h, &cfg, "b").await);
    let d = position_delete(&h.ports, &cfg.table, &[(&a.0, a.1), (&b.0, b.1)], &a.2, false).await;
    commit_deletes(&h.ports, &cfg.table, vec![(0, d)]).await.unwrap();
    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.unwrap();
    assert_eq!(report.tasks, 1, "tenant t1's two files");
    let c = contents(&h.ports, &cfg.table).await;
    let rows: Vec<(&String, usize)> = c.files.iter().map(|f| (&f.0, f.2.num_rows())).collect();
    assert_eq!(c.files.len(), 1, "t1's files are gone, none written: {rows:?}");
    assert!(c.deletes.is_empty(), "the delete file, dangling, goes with them");
    let want: BTreeMap<String, Vec<i64>> = [("c".to_string(), vec![3])].into_iter().collect();
    assert_eq!(visible(&h.ports, &cfg.table).await, want);
}
