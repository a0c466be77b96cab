//! Compaction: merged files hold every distinct key once, sorted, in few files; rewrites that went
//! stale are rejected and cleaned; a redelivered rewrite is a duplicate; compaction and ingest
//! interleave without losing or doubling a row.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use arrow_array::{Array, TimestampMicrosecondArray};
use floe::config::TableConfig;
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::compact::{CompactOptions, plan_table, run_task};
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::ports::ObjectMeta;
use floe::table::WriterTable;

use crate::common::*;

const VISIBILITY: Duration = Duration::from_secs(60);

fn small_batches() -> IngestOptions {
    IngestOptions { writers: 2, batch_objects: 1, ..Default::default() }
}

fn opts(full: bool) -> CompactOptions {
    CompactOptions { min_files: 2, full, parallelism: 2, ..Default::default() }
}

/// A copy of an input file under another name: the same rows from another source object.
async fn copy_of(h: &Harness, o: &ObjectMeta, folder: &str, name: &str) -> ObjectMeta {
    let bytes = std::fs::read(floe::adapters::local::uri_to_path(&o.uri).unwrap()).unwrap();
    h.put_file(folder, name, &bytes).await
}

async fn ingest_round(h: &Harness, cfg: &TableConfig, objects: Vec<ObjectMeta>) {
    let r = ingest(&h.engine, &h.ports, cfg, &h.warehouse, objects, &small_batches()).await.expect("ingest");
    assert!(r.quarantined.is_empty(), "{:?}", r.quarantined);
}

/// Every file is sorted by (tenant_id, event_time) — tenant is constant per partition.
fn assert_sorted(c: &TableContents) {
    for (path, _, b) in &c.files {
        let t = b.column_by_name("event_time").unwrap();
        let t = t.as_any().downcast_ref::<TimestampMicrosecondArray>().expect("timestamptz");
        for i in 1..t.len() {
            assert!(t.value(i - 1) <= t.value(i), "{path} is not sorted at row {i}");
        }
    }
}

/// Checks that each distinct source key is in the table exactly once.
fn assert_each_key_once(c: &TableContents, sources: &[String]) {
    let want: HashSet<&str> = sources.iter().map(String::as_str).collect();
    let got = c.event_ids();
    let counts = counts(&got);
    let doubled: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "keys doubled: {doubled:?}");
    let have: HashSet<&str> = got.iter().map(String::as_str).collect();
    assert_eq!(have, want, "lost: {:?}", want.difference(&have).take(3).collect::<Vec<_>>());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_keeps_each_key_once_sorted_in_few_files() {
    let h = Harness::new();
    let cfg = events_table("ev.compact");
    let first = h.events("a", 6, 150, 1, 0.1).await;
    ingest_round(&h, &cfg, first.clone()).await;
    // Duplicates across batches: a copy of a committed file, under another name.
    let mut second = h.events("b", 4, 150, 2, 0.1).await;
    second.push(copy_of(&h, &first[0], "b", "copy-of-a0.avro").await);
    ingest_round(&h, &cfg, second.clone()).await;
    let before = contents(&h.ports, &cfg.table).await;
    assert!(before.event_ids().len() > counts(&before.event_ids()).len(), "the copy doubled keys before compaction");

    let (report, totals) =
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compact");
    assert!(report.tasks > 0 && totals.rewrites == report.tasks, "{report:?} {totals:?}");
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    let after = contents(&h.ports, &cfg.table).await;
    assert_each_key_once(&after, &all);
    assert_sorted(&after);

    // Late data for partitions compacted already, and more copies; then a full compaction.
    let mut third = vec![];
    for (i, o) in first.iter().take(3).enumerate() {
        third.push(copy_of(&h, o, "c", &format!("late-copy-{i}.avro")).await);
    }
    third.push(copy_of(&h, &second[1], "c", "copy-of-b1.avro").await);
    third.extend(h.events("d", 3, 150, 3, 0.2).await);
    ingest_round(&h, &cfg, third.clone()).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("full compaction");
    all.extend(source_event_ids(&third));
    let end = contents(&h.ports, &cfg.table).await;
    assert_each_key_once(&end, &all);
    assert_sorted(&end);
    let mut per_partition: std::collections::HashMap<String, usize> = Default::default();
    for (path, p, _) in &end.files {
        assert!(
            path.rsplit('/').next().unwrap().starts_with("L2-"),
            "after a full compaction every file is level 2: {path}"
        );
        *per_partition.entry(format!("{p:?}")).or_default() += 1;
    }
    assert!(per_partition.values().all(|n| *n == 1), "small partitions end in one file each: {per_partition:?}");
    let again = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("again");
    assert_eq!(again.0.planned, 0, "a compacted table has nothing left to do");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_rewrite_is_rejected_and_its_files_deleted() {
    let h = Harness::new();
    let cfg = events_table("ev.stale");
    ingest_round(&h, &cfg, h.events("a", 4, 100, 5, 0.0).await).await;
    let old = plan_table(&h.ports, &cfg.table, &opts(true)).await.expect("plan");
    assert!(!old.tasks.is_empty());
    let snap = old.state.metadata.current_snapshot().unwrap();
    let (old_id, old_seq) = (snap.snapshot_id(), snap.sequence_number());
    // Compacted since: every file the old plan would remove is gone from the current snapshot.
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("compact");
    let current = contents(&h.ports, &cfg.table).await;

    // A late task of the old plan writes different files (another level) and asks to commit.
    let mut task = old.tasks[0].clone();
    task.level = 1;
    task.id = format!("{}-late", task.id);
    let wt = Arc::new(WriterTable::from_metadata(&cfg.table, &old.state.metadata).unwrap());
    run_task(&h.engine, &h.ports, &wt, old_id, old_seq, &task).await.expect("task");
    let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(msgs.len(), 1);
    let request = floe::message::CommitRequest::from_json(&msgs[0].body).unwrap();
    let floe::message::CommitRequest::Rewrite(request) = request else { panic!("a rewrite request") };
    for f in &request.added {
        h.ports.store.head(&f.path).await.expect("written");
    }
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let outcome = committer.commit(&msgs).await;
    assert!(matches!(outcome.results[0].1, MessageResult::Stale { .. }), "{:?}", outcome.results);
    assert!(outcome.results[0].1.ack());
    for f in &request.added {
        assert!(h.ports.store.head(&f.path).await.is_err(), "{} of the rejected rewrite is deleted", f.path);
    }
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.event_ids(), current.event_ids(), "the table is unchanged");
    assert_eq!(after.snapshots, current.snapshots, "no snapshot for a rejected rewrite");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redelivered_rewrite_is_a_duplicate_and_keeps_its_files() {
    let h = Harness::new();
    let cfg = events_table("ev.redelivered");
    let objects = h.events("a", 4, 100, 6, 0.0).await;
    ingest_round(&h, &cfg, objects.clone()).await;
    floe::pipeline::compact::compact(&h.engine, &h.ports, &cfg.table, &opts(true)).await.expect("tasks");
    let msgs = h.ports.commit_queue.receive(100, Duration::from_secs(60)).await.unwrap();
    assert!(!msgs.is_empty());
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let first = committer.commit(&msgs).await;
    assert!(first.results.iter().all(|(_, r)| matches!(r, MessageResult::Committed { .. })), "{:?}", first.results);
    // The same messages again (a lost acknowledgement), to a cold committer.
    let mut cold = Committer::new(h.engine.clone(), h.ports.clone());
    let second = cold.commit(&msgs).await;
    assert!(second.results.iter().all(|(_, r)| *r == MessageResult::Duplicate), "{:?}", second.results);
    let c = contents(&h.ports, &cfg.table).await;
    assert_each_key_once(&c, &source_event_ids(&objects));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_concurrent_with_ingest_loses_and_doubles_nothing() {
    let h = Harness::new();
    let cfg = events_table("ev.concurrent");
    let first = h.events("a", 8, 100, 7, 0.05).await;
    ingest_round(&h, &cfg, first.clone()).await;
    let mut all = source_event_ids(&first);
    for round in 0..3u64 {
        let mut more = h.events(&format!("r{round}"), 4, 100, 100 + round, 0.05).await;
        more.push(copy_of(&h, &first[round as usize], &format!("r{round}"), "copy.avro").await);
        all.extend(source_event_ids(&more));
        let (engine, ports, table_cfg, wh) = (h.engine.clone(), h.ports.clone(), cfg.clone(), h.warehouse.clone());
        let ingesting =
            tokio::spawn(async move { ingest(&engine, &ports, &table_cfg, &wh, more, &small_batches()).await });
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(round == 2), VISIBILITY).await.expect("compact");
        ingesting.await.unwrap().expect("ingest");
    }
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("final compaction");
    let c = contents(&h.ports, &cfg.table).await;
    assert_each_key_once(&c, &all);
    assert_sorted(&c);
}
