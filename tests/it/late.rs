//! Late files (compact/plan.rs, docs/ARCHITECTURE.md "Late keys, once per partition"): with a
//! dedup key that leads with a time column, a level-0 task leaves the rows far behind its
//! snapshot to a late file, probed only against its chain; once due, the partition's late task
//! probes them all against the compacted files. These tests check that dedup stays exact and the
//! first committed copy wins through every step, and that an older compactor cannot remove a
//! late file.

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use arrow_array::{Array, Int64Array, StringArray};
use floe::config::TableConfig;
use floe::message::{CommitRequest, RewriteRequest};
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::compact::{CompactOptions, plan_table, run_task};
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::table::{PROP_LATE_AFTER, WriterTable};

use crate::common::*;
use crate::format::commit_foreign;

const VISIBILITY: Duration = Duration::from_secs(60);
const SCHEMA: &str = r#"{"type":"record","name":"E","fields":[
    {"name":"t","type":{"type":"long","logicalType":"timestamp-micros"}},{"name":"id","type":"string"},
    {"name":"tenant","type":"string"},{"name":"v","type":"long"}]}"#;
const HOUR_US: i64 = 3_600_000_000;

/// One partition, deduplicated on `t, id`.
fn table(name: &str) -> TableConfig {
    TableConfig::new(name.parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_sort_by("t")
        .unwrap()
        .with_dedup_key("t,id")
        .unwrap()
}

fn now_us() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_micros() as i64
}

/// Lands one Avro file of (t, id, "t1", v) rows per element of `files`, one writer batch each.
async fn land(h: &Harness, cfg: &TableConfig, folder: &str, files: &[&[(i64, &str, i64)]]) {
    let schema = apache_avro::Schema::parse_str(SCHEMA).unwrap();
    let mut objects = vec![];
    for (i, rows) in files.iter().enumerate() {
        let mut w = apache_avro::Writer::new(&schema, vec![]);
        for (t, id, v) in rows.iter() {
            let mut r = apache_avro::types::Record::new(&schema).unwrap();
            r.put("t", apache_avro::types::Value::TimestampMicros(*t));
            r.put("id", *id);
            r.put("tenant", "t1");
            r.put("v", *v);
            w.append(r).unwrap();
        }
        objects.push(h.put_file(folder, &format!("f{i}.avro"), &w.into_inner().unwrap()).await);
    }
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let r = ingest(&h.engine, &h.ports, cfg, &h.warehouse, objects, &opts).await.expect("ingest");
    assert!(r.quarantined.is_empty(), "{:?}", r.quarantined);
}

async fn compact(h: &Harness, cfg: &TableConfig, full: bool) {
    compact_with(h, cfg, CompactOptions { min_files: 2, full, parallelism: 2, ..Default::default() }).await;
}

async fn compact_with(h: &Harness, cfg: &TableConfig, opts: CompactOptions) {
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts, VISIBILITY).await.expect("compact");
}

/// The values of each id in the table, and the live files' names by kind.
async fn values(h: &Harness, cfg: &TableConfig) -> (BTreeMap<String, Vec<i64>>, HashMap<&'static str, usize>) {
    let (mut out, mut kinds): (BTreeMap<String, Vec<i64>>, HashMap<&'static str, usize>) = Default::default();
    for (path, _, b) in contents(&h.ports, &cfg.table).await.files {
        let name = path.rsplit('/').next().unwrap();
        let kind = if name.starts_with("late-") {
            "late"
        } else if name.starts_with('L') {
            "compacted"
        } else {
            "l0"
        };
        *kinds.entry(kind).or_default() += 1;
        let ids = b.column_by_name("id").unwrap();
        let ids = ids.as_any().downcast_ref::<StringArray>().unwrap();
        let v = b.column_by_name("v").unwrap();
        let v = v.as_any().downcast_ref::<Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.entry(ids.value(i).to_string()).or_default().push(v.value(i));
        }
    }
    out.values_mut().for_each(|v| v.sort_unstable());
    (out, kinds)
}

fn want(pairs: &[(&str, &[i64])]) -> BTreeMap<String, Vec<i64>> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_vec())).collect()
}

/// Late rows wait in a late file (a later copy of one stays visible until the late task runs);
/// the late task keeps the first copy; an on-time copy is dropped against a live late file at
/// once, whatever the boundary was when the late file was written; a full run takes a late file
/// before a level-0 file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_rows_wait_for_their_partitions_late_task_and_the_first_copy_wins() {
    let h = Harness::new();
    let cfg = table("late.first");
    let (old, now) = (now_us() - 2 * HOUR_US, now_us());
    land(&h, &cfg, "a", &[&[(old, "k1", 1), (now, "k2", 1)], &[(old + 1, "k3", 1), (now + 1, "k4", 1)]]).await;
    compact(&h, &cfg, false).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!(v, want(&[("k1", &[1]), ("k2", &[1]), ("k3", &[1]), ("k4", &[1])]));
    assert_eq!((kinds.get("late"), kinds.get("compacted"), kinds.get("l0")), (Some(&1), Some(&1), None), "{kinds:?}");

    // Later copies: the on-time one is dropped against the level-1 file; the late one waits in a
    // new late file (the late task takes the first, planned before it was written).
    land(&h, &cfg, "b", &[&[(old, "k1", 2), (now, "k2", 2)], &[(old + 2, "k5", 2), (now + 2, "k6", 2)]]).await;
    compact(&h, &cfg, false).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!(v["k2"], [1], "the on-time copy is dropped at once");
    assert_eq!(v["k1"], [1, 2], "the late copy waits for the late task");
    assert_eq!(kinds.get("late"), Some(&1), "{kinds:?}");

    // The next plan's late task keeps the first copy.
    compact(&h, &cfg, false).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!(v["k1"], [1], "{v:?}");
    assert!(v.values().all(|x| x.len() == 1), "{v:?}");
    assert_eq!(kinds.get("late"), None, "{kinds:?}");

    // A late file holds k7's first copy; then the horizon grows (another engine sets it), so
    // its next copy is on time: dropped against the late file, before any late task runs.
    land(&h, &cfg, "c", &[&[(old + 7, "k7", 1)], &[(old + 8, "k8", 1)]]).await;
    compact(&h, &cfg, false).await;
    assert_eq!(values(&h, &cfg).await.1.get("late"), Some(&1));
    commit_foreign(&h, &cfg.table, |b| {
        b.set_properties(HashMap::from([(PROP_LATE_AFTER.to_string(), (240 * HOUR_US / 1000).to_string())])).unwrap()
    })
    .await;
    land(&h, &cfg, "d", &[&[(old + 7, "k7", 3)], &[(now + 9, "k9", 3)]]).await;
    compact(&h, &cfg, false).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!(v["k7"], [1], "the on-time copy meets the late file's first copy: {v:?}");
    assert_eq!(kinds.get("late"), None, "{kinds:?}");

    // A late file holds k10's first copy, a level-0 file (not due) its next: a full run keeps
    // the first.
    commit_foreign(&h, &cfg.table, |b| {
        b.set_properties(HashMap::from([(PROP_LATE_AFTER.to_string(), "1000".to_string())])).unwrap()
    })
    .await;
    land(&h, &cfg, "e", &[&[(old + 10, "k10", 1)], &[(old + 11, "k11", 1)]]).await;
    compact(&h, &cfg, false).await;
    land(&h, &cfg, "f", &[&[(old + 10, "k10", 2)]]).await;
    assert_eq!(values(&h, &cfg).await.1.get("late"), Some(&1));
    compact(&h, &cfg, true).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!(kinds.get("late"), None, "{kinds:?}");
    let firsts: Vec<(&str, &[i64])> = vec![
        ("k1", &[1]),
        ("k2", &[1]),
        ("k3", &[1]),
        ("k4", &[1]),
        ("k5", &[2]),
        ("k6", &[2]),
        ("k7", &[1]),
        ("k8", &[1]),
        ("k9", &[3]),
        ("k10", &[1]),
        ("k11", &[1]),
    ];
    assert_eq!(v, want(&firsts));
}

/// A hot partition's chain: a later task's late copy of a key an earlier task's input holds is
/// dropped against that input, before any late task (sibling late files share a sequence
/// number, so their order could not say which copy came first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_late_copy_in_a_later_task_of_a_chain_is_dropped_against_the_earlier_inputs() {
    let h = Harness::new();
    let cfg = table("late.chain");
    let old = now_us() - 2 * HOUR_US;
    // Two commits, so that the first copy is first by sequence number (one snapshot's files are
    // ordered by their names).
    land(&h, &cfg, "a", &[&[(old, "k1", 1), (old + 1, "k2", 1)]]).await;
    land(&h, &cfg, "b", &[&[(old, "k1", 2), (old + 3, "k3", 2)]]).await;
    compact_with(&h, &cfg, CompactOptions { min_files: 2, max_task_bytes: 1, parallelism: 2, ..Default::default() })
        .await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!(kinds.get("late"), Some(&2), "a late file per task of the chain: {kinds:?}");
    assert_eq!(v, want(&[("k1", &[1]), ("k2", &[1]), ("k3", &[2])]));
    compact(&h, &cfg, false).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!((v, kinds.get("late")), (want(&[("k1", &[1]), ("k2", &[1]), ("k3", &[2])]), None));
}

/// A compactor that does not know late files would take one for a writer's file; its request
/// removing one is refused, and this build's compaction of the same files lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_from_a_compactor_that_does_not_know_late_files_is_refused() {
    let h = Harness::new();
    let cfg = table("late.fenced");
    let old = now_us() - 2 * HOUR_US;
    land(&h, &cfg, "a", &[&[(old, "k1", 1)], &[(old + 1, "k2", 1)]]).await;
    compact(&h, &cfg, false).await;
    assert_eq!(values(&h, &cfg).await.1.get("late"), Some(&1));
    let opts = CompactOptions { min_files: 2, full: true, ..Default::default() };
    let plan = plan_table(&h.ports, &cfg.table, &opts).await.unwrap();
    assert!(plan.tasks[0].inputs.iter().any(|f| f.is_late()), "the full run takes the late file");
    let snap = plan.state.metadata.current_snapshot().unwrap();
    let wt = std::sync::Arc::new(WriterTable::from_metadata(&cfg.table, &plan.state.metadata).unwrap());
    run_task(&h.engine, &h.ports, &wt, snap.snapshot_id(), snap.sequence_number(), &plan.tasks[0]).await.unwrap();
    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    let CommitRequest::Rewrite(r) = CommitRequest::from_json(&msgs[0].body).unwrap() else { panic!("a rewrite") };
    h.ports.commit_queue.ack(&msgs[0].receipt).await.unwrap();
    let mut old_request: serde_json::Value = serde_json::to_value(&r).unwrap();
    old_request.as_object_mut().unwrap().remove("knows_late");
    assert!(serde_json::from_value::<RewriteRequest>(old_request.clone()).is_ok());
    h.ports.commit_queue.send(old_request.to_string()).await.unwrap();
    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    match &out.results[0].1 {
        MessageResult::Stale { reason } => assert!(reason.contains("late file"), "{reason}"),
        other => panic!("expected a refused rewrite, got {other:?}"),
    }
    h.ports.commit_queue.ack(&msgs[0].receipt).await.unwrap();
    assert_eq!(values(&h, &cfg).await.1.get("late"), Some(&1), "the late file stays");
    compact(&h, &cfg, true).await;
    let (v, kinds) = values(&h, &cfg).await;
    assert_eq!((v, kinds.get("late")), (want(&[("k1", &[1]), ("k2", &[1])]), None));
}
