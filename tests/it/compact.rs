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
use iceberg::spec::Operation;

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

/// A hot partition split into a chain of tasks: each task references the compacted files and
/// the inputs of the tasks before it, yet the run reads each referenced file's keys once, and
/// only its footer and key column; the chain still keeps the first copy of every key.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chain_of_tasks_reads_each_reference_once_and_only_its_keys() {
    let (t, taken, distinct) = chained_compaction("ev.chain", CompactOptions::default().shared_key_bytes).await;
    assert!(taken >= 2 * distinct, "the chains reference files repeatedly: {taken} for {distinct}");
    assert_eq!(t.reference_files, distinct, "each referenced file's keys read once in the run");
    eprintln!("reference keys: {} of {} bytes read", t.reference_key_bytes, t.reference_bytes);
    assert!(
        t.reference_key_bytes * 2 < t.reference_bytes,
        "footers and key columns only: {} of {} bytes",
        t.reference_key_bytes,
        t.reference_bytes
    );
}

/// With no budget to keep keys for the run, each task streams its references past its own
/// keys: more reads, the same table.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_runs_key_budget_each_task_streams_its_references_with_the_same_result() {
    let (t, taken, distinct) = chained_compaction("ev.streamed", 0).await;
    assert!(taken > distinct);
    assert_eq!(t.reference_files, taken, "each task read its references itself");
}

/// Two rounds of one partition (copies across them), the first compacted, then the second
/// compacted as a chain of one-file tasks keeping `shared_key_bytes` of reference keys: each key
/// once, files sorted. Returns the run's totals, the references its tasks named, and the distinct
/// files among them.
async fn chained_compaction(
    name: &str,
    shared_key_bytes: usize,
) -> (floe::pipeline::compact::TaskOutcome, usize, usize) {
    let h = Harness::new();
    // One partition, so the files are big enough for their key column to be a small part.
    let cfg =
        TableConfig::new(name.parse().unwrap()).with_sort_by("event_time").unwrap().with_dedup_key("event_id").unwrap();
    let first = h.events("a", 4, 3000, 11, 0.1).await;
    ingest_round(&h, &cfg, first.clone()).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("full compaction");
    let mut second = h.events("b", 5, 3000, 12, 0.1).await;
    second.push(copy_of(&h, &first[1], "b", "copy-of-a1.avro").await);
    second.push(copy_of(&h, &first[2], "b", "copy-of-a2.avro").await);
    ingest_round(&h, &cfg, second.clone()).await;

    // One input file per task: every partition with level-0 files becomes a chain.
    let chained = CompactOptions { max_task_bytes: 1, shared_key_bytes, ..opts(false) };
    let plan = plan_table(&h.ports, &cfg.table, &chained).await.unwrap();
    let distinct: HashSet<&String> = plan.tasks.iter().flat_map(|t| &t.references).collect();
    let taken: usize = plan.tasks.iter().map(|t| t.references.len()).sum();
    let (report, totals) =
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &chained, VISIBILITY).await.expect("chained compaction");
    assert_eq!(totals.rewrites, plan.tasks.len(), "{totals:?}");
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    let end = contents(&h.ports, &cfg.table).await;
    assert_each_key_once(&end, &all);
    assert_sorted(&end);
    (report.totals, taken, distinct.len())
}

/// A table without a dedup key compacts level-0 files next to compacted ones (references of
/// no use there) and keeps every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_table_without_a_dedup_key_compacts_again_and_keeps_every_row() {
    let h = Harness::new();
    let cfg = TableConfig::new("ev.keyless".parse().unwrap()).with_sort_by("event_time").unwrap();
    let first = h.events("a", 3, 100, 41, 0.0).await;
    ingest_round(&h, &cfg, first.clone()).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");
    let second = vec![copy_of(&h, &first[0], "b", "copy.avro").await, copy_of(&h, &first[1], "b", "copy1.avro").await];
    ingest_round(&h, &cfg, second.clone()).await;
    let plan = plan_table(&h.ports, &cfg.table, &opts(false)).await.unwrap();
    assert!(plan.tasks.iter().any(|t| t.level == 1 && !t.references.is_empty()), "{:?}", plan.tasks);
    let (_, totals) =
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");
    assert!(totals.rewrites > 0, "{totals:?}");
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    let mut got = contents(&h.ports, &cfg.table).await.event_ids();
    got.sort();
    all.sort();
    assert_eq!(got, all, "every row, copies included");
}

/// With a dedup window, a copy of a key committed within it is dropped as always; one committed
/// longer ago than the window is kept (both copies stay), and older compacted files are no
/// task's references.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dedup_window_bounds_how_far_back_compaction_looks_for_a_copy() {
    const WINDOW_MS: u64 = 10_000;
    let h = Harness::new();
    let mut cfg = events_table("ev.window");
    cfg.properties.insert(floe::table::PROP_DEDUP_WINDOW.into(), WINDOW_MS.to_string());
    let first = h.events("a", 3, 100, 31, 0.0).await;
    let started = std::time::Instant::now();
    ingest_round(&h, &cfg, first.clone()).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");

    // Within the window: the copy's rows are dropped against the compacted files.
    let mut second = vec![copy_of(&h, &first[0], "b", "copy-within.avro").await];
    second.extend(h.events("b", 1, 100, 32, 0.0).await);
    ingest_round(&h, &cfg, second.clone()).await;
    let plan = plan_table(&h.ports, &cfg.table, &opts(false)).await.unwrap();
    // The window runs back from the copy's commit: the first round's, which the compacted
    // files' sequence numbers stand for, must be within it.
    assert!(started.elapsed() < Duration::from_millis(WINDOW_MS - 2000), "the test ran too slowly to tell");
    assert!(plan.tasks.iter().any(|t| t.level == 1 && !t.references.is_empty()), "{:?}", plan.tasks);
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    assert_each_key_once(&contents(&h.ports, &cfg.table).await, &all);

    // Past the window: nothing committed before it is a reference, and a copy stays.
    tokio::time::sleep(Duration::from_millis(WINDOW_MS + 200)).await;
    let mut third = vec![copy_of(&h, &first[1], "c", "copy-after.avro").await];
    third.extend(h.events("c", 1, 100, 33, 0.0).await);
    // A writer batch per object, all committed in one snapshot (with a snapshot each, a merge
    // may take files of both).
    let state =
        floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
    for o in &third {
        floe::pipeline::write::write(&h.engine, &h.ports, &t, vec![o.clone()]).await.unwrap();
    }
    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    assert_eq!(msgs.len(), third.len());
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    assert!(out.results.iter().all(|(_, r)| matches!(r, MessageResult::Committed { .. })), "{:?}", out.results);
    for m in &msgs {
        h.ports.commit_queue.ack(&m.receipt).await.unwrap();
    }
    let plan = plan_table(&h.ports, &cfg.table, &opts(false)).await.unwrap();
    let now = plan.state.metadata.current_snapshot().unwrap().sequence_number();
    // A merge of this round's files alone has no compacted file as reference (one that also
    // takes a file of the last round, left uncompacted, still looks back from that one).
    let fresh: Vec<_> = plan.tasks.iter().filter(|t| t.level == 1 && t.inputs.iter().all(|f| f.seq == now)).collect();
    assert!(!fresh.is_empty(), "{:?}", plan.tasks);
    assert!(fresh.iter().all(|t| t.references.iter().all(|r| !r.contains("/L"))), "{fresh:?}");
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");
    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    let ids = counts(&ids);
    let copied: HashSet<String> = source_event_ids(&first[1..2]).into_iter().collect();
    all.extend(source_event_ids(&third));
    let mut kept_twice = 0;
    for id in counts(&all).keys() {
        let n = ids.get(id).copied().unwrap_or(0);
        match copied.contains(*id) {
            true => assert!(n == 1 || n == 2, "{id}: {n}"),
            false => assert_eq!(n, 1, "{id}"),
        }
        kept_twice += usize::from(n == 2);
    }
    assert!(kept_twice > 0, "a copy committed past the window stays");

    // A window that is not a number of milliseconds is refused when the table is created.
    let mut bad = events_table("ev.window-bad");
    bad.properties.insert(floe::table::PROP_DEDUP_WINDOW.into(), "1h".into());
    let objects = h.events("d", 1, 50, 34, 0.0).await;
    let refused = ingest(&h.engine, &h.ports, &bad, &h.warehouse, objects, &small_batches()).await;
    let said = format!("{refused:?}");
    assert!(said.contains("floe.dedup-window-ms") && said.contains("`1h`"), "{said}");
    assert!(plan_table(&h.ports, &bad.table, &opts(false)).await.is_err(), "no table was created");
}

/// The committer deletes nothing a message names (the message's word that the files are its own
/// cannot be taken): a stale request's files are left to the orphan sweep, which takes them
/// and nothing the table holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_rewrite_is_rejected_and_its_files_left_to_the_sweep() {
    stale_rewrite_rejected(Stale::Swept).await;
}

/// `gc.enabled = false`: nothing is deleted, not even a rejected rewrite's own files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_rewrite_of_a_table_without_gc_keeps_its_files() {
    stale_rewrite_rejected(Stale::NoGc).await;
}

/// A snapshot left off the current history by a rollback may name a rejected rewrite's files
/// (a rerun of its task finds and reuses them): they are left to the orphan sweep, which
/// checks every kept snapshot.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stale_rewrite_after_a_rollback_keeps_its_files() {
    stale_rewrite_rejected(Stale::RolledBack).await;
}

#[derive(PartialEq)]
enum Stale {
    Swept,
    NoGc,
    RolledBack,
}

async fn stale_rewrite_rejected(case: Stale) {
    let h = Harness::new();
    let mut cfg = events_table("ev.stale");
    if case == Stale::NoGc {
        cfg.properties.insert("gc.enabled".into(), "false".into());
    }
    ingest_round(&h, &cfg, h.events("a", 4, 100, 5, 0.0).await).await;
    if case == Stale::RolledBack {
        let state = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await;
        let snapshot = state.unwrap().unwrap().metadata.current_snapshot_id().unwrap();
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("compact");
        roll_back(&h.ports, &cfg.table, snapshot).await;
    }
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
        h.ports.store.head(&f.path).await.expect("the committer deletes no file a message names");
    }
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.event_ids(), current.event_ids(), "the table is unchanged");
    assert_eq!(after.snapshots, current.snapshots, "no snapshot for a rejected rewrite");
    if case == Stale::Swept {
        let swept = sweep_now(&h, &cfg.table).await;
        for f in &request.added {
            assert!(swept.orphans.contains(&f.path), "{} is the sweep's: {:?}", f.path, swept.orphans);
            assert!(h.ports.store.head(&f.path).await.is_err(), "{} swept", f.path);
        }
        assert_eq!(
            contents(&h.ports, &cfg.table).await.event_ids(),
            current.event_ids(),
            "the sweep took nothing live"
        );
    }
}

/// The orphan sweep of `table`, taking every unreachable file however young.
async fn sweep_now(h: &Harness, table: &floe::TableIdent) -> floe::table::sweep::SweepReport {
    let state =
        floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), table).await.unwrap().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let future = now + 60_000;
    floe::table::sweep::sweep_orphans(h.ports.store.as_ref(), &state, future, false).await.expect("sweep")
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

/// The rewrite request a compaction task sent (the only message on the commit queue).
async fn sent_request(h: &Harness) -> (floe::ports::Message, floe::message::RewriteRequest) {
    let msgs = h.ports.commit_queue.receive(10, VISIBILITY).await.unwrap();
    assert_eq!(msgs.len(), 1);
    let floe::message::CommitRequest::Rewrite(r) = floe::message::CommitRequest::from_json(&msgs[0].body).unwrap()
    else {
        panic!("a rewrite request")
    };
    (msgs.into_iter().next().unwrap(), r)
}

/// The current snapshot's live entries: data sequence number by path.
async fn live_sequence_numbers(h: &Harness, cfg: &TableConfig) -> std::collections::HashMap<String, i64> {
    let store = h.ports.store.as_ref();
    let state = floe::table::load_table(h.ports.pointer.as_ref(), store, &cfg.table).await.unwrap().unwrap();
    let mut reads = 0;
    let mut m = floe::table::Manifests::load(store, &state.metadata, &mut reads).await.unwrap();
    m.read_contents(store, &mut reads).await.unwrap();
    m.live_parsed().map(|(_, e)| (e.file_path().to_string(), e.sequence_number().unwrap())).collect()
}

/// A compaction plan of the table as it is now, its tasks run by hand (each sends its request).
struct Planned {
    tasks: Vec<floe::pipeline::compact::Task>,
    snapshot_id: i64,
    seq: i64,
    wt: Arc<WriterTable>,
}

impl Planned {
    async fn now(h: &Harness, cfg: &TableConfig) -> Self {
        let plan = plan_table(&h.ports, &cfg.table, &opts(true)).await.unwrap();
        let snap = plan.state.metadata.current_snapshot().unwrap();
        let (snapshot_id, seq) = (snap.snapshot_id(), snap.sequence_number());
        let wt = Arc::new(WriterTable::from_metadata(&cfg.table, &plan.state.metadata).unwrap());
        Planned { tasks: plan.tasks, snapshot_id, seq, wt }
    }

    /// Runs `task` and takes the rewrite request it sent off the commit queue.
    async fn run(
        &self,
        h: &Harness,
        task: &floe::pipeline::compact::Task,
    ) -> (floe::ports::Message, floe::message::RewriteRequest) {
        run_task(&h.engine, &h.ports, &self.wt, self.snapshot_id, self.seq, task).await.unwrap();
        sent_request(h).await
    }
}

/// Another task over the same inputs (an overlapping compactor run's): another id and level.
fn twin_of(task: &floe::pipeline::compact::Task) -> floe::pipeline::compact::Task {
    let mut twin = task.clone();
    twin.level = 1;
    twin.id = format!("{}-twin", task.id);
    twin
}

/// Rewrites planned from two different snapshots, committed in one batch: one snapshot holds
/// both, each added file keeping the sequence number of its own plan, and the summary names
/// both tasks (so that either, redelivered, is a duplicate).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrites_of_one_batch_land_in_one_snapshot_each_with_its_plans_sequence_number() {
    let h = Harness::new();
    let cfg = events_table("ev.batched");
    let first = h.events("a", 4, 120, 21, 0.0).await;
    ingest_round(&h, &cfg, first.clone()).await;
    let plan1 = Planned::now(&h, &cfg).await;
    let t1 = plan1.tasks[0].clone();
    let (m1, r1) = plan1.run(&h, &t1).await;

    let second = h.events("b", 3, 120, 22, 0.0).await;
    ingest_round(&h, &cfg, second.clone()).await;
    let plan2 = Planned::now(&h, &cfg).await;
    let (seq1, seq2) = (plan1.seq, plan2.seq);
    assert!(seq2 > seq1);
    let taken: HashSet<&String> = t1.inputs.iter().map(|f| &f.path).collect();
    let t2 = plan2.tasks.iter().find(|t| t.inputs.iter().all(|f| !taken.contains(&f.path))).expect("another partition");
    let (m2, r2) = plan2.run(&h, t2).await;

    let before = contents(&h.ports, &cfg.table).await;
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&[m1.clone(), m2.clone()]).await;
    let ids: Vec<_> = out.results.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(out.snapshots.len(), 1, "one snapshot for both: {ids:?}");
    let landed = &out.snapshots[0];
    assert_eq!(landed.rewrites, 2);
    assert!(ids.iter().all(|r| *r == MessageResult::Committed { snapshot_id: landed.snapshot_id }), "{ids:?}");
    let seqs = live_sequence_numbers(&h, &cfg).await;
    for (r, want) in [(&r1, seq1), (&r2, seq2)] {
        for f in &r.added {
            assert_eq!(seqs.get(&f.path), Some(&want), "{} keeps its plan's sequence number", f.path);
        }
        for f in &r.removed {
            assert!(!seqs.contains_key(f), "{f} is replaced");
        }
    }
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.snapshots, before.snapshots + 1);
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    assert_each_key_once(&after, &all);

    // Redelivered, together or alone: duplicates, and nothing deleted.
    let again = Committer::new(h.engine.clone(), h.ports.clone()).commit(&[m2, m1]).await;
    assert!(again.results.iter().all(|(_, r)| *r == MessageResult::Duplicate), "{:?}", again.results);
    for f in r1.added.iter().chain(&r2.added) {
        h.ports.store.head(&f.path).await.expect("a committed file is kept");
    }
    assert_eq!(contents(&h.ports, &cfg.table).await.snapshots, after.snapshots);
}

/// Of one batch's rewrites, those that dropped duplicates land as an `overwrite` apart from the
/// others' `replace` (which does not change the table's rows: streaming readers and other
/// engines' conflict checks skip it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batchs_deduplicating_rewrites_land_as_an_overwrite_apart_from_its_replaces() {
    let h = Harness::new();
    let cfg = events_table("ev.kinds");
    let first = h.events("a", 4, 120, 24, 0.0).await;
    ingest_round(&h, &cfg, first.clone()).await;
    let plan1 = Planned::now(&h, &cfg).await;
    let t1 = plan1.tasks[0].clone();
    let (m1, r1) = plan1.run(&h, &t1).await;
    assert_eq!(r1.duplicates, 0);

    // A copy of a committed file: the other partitions now hold duplicates.
    ingest_round(&h, &cfg, vec![copy_of(&h, &first[0], "b", "copy-of-a0.avro").await]).await;
    let plan2 = Planned::now(&h, &cfg).await;
    let taken: HashSet<&String> = t1.inputs.iter().map(|f| &f.path).collect();
    let mut dedup = None;
    for t in plan2.tasks.iter().filter(|t| t.inputs.iter().all(|f| !taken.contains(&f.path))) {
        let (m, r) = plan2.run(&h, t).await;
        if r.duplicates > 0 {
            dedup = Some((m, r));
            break;
        }
    }
    let (m2, r2) = dedup.expect("a task of another partition drops the copy's rows");

    let before = contents(&h.ports, &cfg.table).await;
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&[m2.clone(), m1.clone()]).await;
    assert_eq!(out.snapshots.len(), 2, "{:?}", out.results);
    let result = |id: &str| out.results.iter().find(|(m, _)| m == id).map(|(_, r)| r.clone()).unwrap();
    for (m, want) in [(&m1, Operation::Replace), (&m2, Operation::Overwrite)] {
        let MessageResult::Committed { snapshot_id } = result(&m.id) else { panic!("{:?}", out.results) };
        let landed = out.snapshots.iter().find(|l| l.snapshot_id == snapshot_id).unwrap();
        assert_eq!((landed.operation.clone(), landed.rewrites), (want, 1));
    }
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.event_ids().len() as u64, before.event_ids().len() as u64 - r2.duplicates);
    assert_eq!(counts(&after.event_ids()).len(), counts(&before.event_ids()).len(), "no key lost");
}

/// Two requests removing the same files in one batch (overlapping compactor runs), and a copy
/// of the first (a redelivery in the same batch): the first lands, the copy is a duplicate, the
/// other is stale; nothing is deleted, and the orphan sweep then takes the stale one's files only.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_one_batch_the_first_rewrite_of_a_file_wins_and_only_the_losers_files_go() {
    let h = Harness::new();
    let cfg = events_table("ev.overlap");
    let objects = h.events("a", 4, 120, 23, 0.0).await;
    ingest_round(&h, &cfg, objects.clone()).await;
    let plan = Planned::now(&h, &cfg).await;
    let (winner, won) = plan.run(&h, &plan.tasks[0]).await;
    let (loser, lost) = plan.run(&h, &twin_of(&plan.tasks[0])).await;
    assert_eq!(won.removed, lost.removed);
    let copy = floe::ports::Message { id: format!("{}-copy", winner.id), ..winner.clone() };
    // A task id a snapshot's list of tasks would read as two: refused.
    let mut body: serde_json::Value = serde_json::from_str(&loser.body).unwrap();
    assert!(body.get("task_id").is_some(), "{body}");
    body["task_id"] = "x,y".into();
    let bad = floe::ports::Message { id: "bad-task-id".into(), body: body.to_string(), ..loser.clone() };

    let batch = [winner.clone(), loser.clone(), copy.clone(), bad.clone()];
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&batch).await;
    let result = |id: &str| out.results.iter().find(|(m, _)| m == id).map(|(_, r)| r.clone()).unwrap();
    assert_eq!(out.snapshots.len(), 1, "{:?}", out.results);
    assert_eq!(result(&winner.id), MessageResult::Committed { snapshot_id: out.snapshots[0].snapshot_id });
    assert!(matches!(result(&loser.id), MessageResult::Stale { .. }), "{:?}", out.results);
    assert_eq!(result(&copy.id), MessageResult::Duplicate);
    assert!(
        matches!(result(&bad.id), MessageResult::Poison { reason } if reason.contains("\"x,y\"")),
        "{:?}",
        out.results
    );
    for f in &won.added {
        h.ports.store.head(&f.path).await.expect("the winner's files are kept");
    }
    let swept = sweep_now(&h, &cfg.table).await;
    for f in &lost.added {
        assert!(swept.orphans.contains(&f.path), "{} of the loser is left to the sweep", f.path);
    }
    for f in &won.added {
        h.ports.store.head(&f.path).await.expect("the winner's files are kept by the sweep too");
    }
    assert_each_key_once(&contents(&h.ports, &cfg.table).await, &source_event_ids(&objects));
}

/// A committer dies just after its batch's snapshot landed (no acknowledgement, no cleanup):
/// the batch redelivered is all duplicates but the loser, which is stale, and its files (and only
/// its files) are the orphan sweep's then; the table holds one new snapshot and each key once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_redelivered_after_its_snapshot_landed_lands_nothing_twice() {
    crate::crash::quiet_crashes();
    let h = Harness::new();
    let cfg = events_table("ev.crashed");
    let objects = h.events("a", 4, 120, 25, 0.0).await;
    ingest_round(&h, &cfg, objects.clone()).await;
    let plan = Planned::now(&h, &cfg).await;
    assert!(plan.tasks.len() >= 2, "{} tasks", plan.tasks.len());
    let mut batch = vec![];
    let mut requests = vec![];
    for task in &plan.tasks[..2] {
        let (m, r) = plan.run(&h, task).await;
        batch.push(m);
        requests.push(r);
    }
    let (loser, lost) = plan.run(&h, &twin_of(&plan.tasks[0])).await;
    batch.push(loser.clone());
    let before = contents(&h.ports, &cfg.table).await;

    let engine = floe::config::EngineConfig { lock_lease: Duration::from_millis(300), ..h.engine.clone() };
    let faults = floe::fault::Faults::crash_at(floe::fault::FaultPoint::CommitterAfterPointerSwap, 1);
    let dying = Committer::new(engine, h.ports.clone().with_faults(faults.clone()));
    let b = batch.clone();
    let crashed = tokio::spawn(async move {
        let mut dying = dying;
        dying.commit(&b).await
    })
    .await;
    assert!(crashed.is_err() && faults.hits(floe::fault::FaultPoint::CommitterAfterPointerSwap) == 1);
    for f in &lost.added {
        h.ports.store.head(&f.path).await.expect("the dead committer deleted nothing");
    }
    tokio::time::sleep(Duration::from_millis(400)).await; // its lease expires

    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&batch).await;
    let result = |id: &str| out.results.iter().find(|(m, _)| m == id).map(|(_, r)| r.clone()).unwrap();
    assert!(out.snapshots.is_empty(), "{:?}", out.results);
    for m in &batch[..2] {
        assert_eq!(result(&m.id), MessageResult::Duplicate, "{:?}", out.results);
    }
    assert!(matches!(result(&loser.id), MessageResult::Stale { .. }), "{:?}", out.results);
    for f in requests.iter().flat_map(|r| &r.added) {
        h.ports.store.head(&f.path).await.expect("a committed file is kept");
    }
    let swept = sweep_now(&h, &cfg.table).await;
    for f in &lost.added {
        assert!(swept.orphans.contains(&f.path), "{} of the loser is left to the sweep", f.path);
    }
    for f in requests.iter().flat_map(|r| &r.added) {
        h.ports.store.head(&f.path).await.expect("a committed file is kept by the sweep");
    }
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.snapshots, before.snapshots + 1);
    assert_each_key_once(&after, &source_event_ids(&objects));
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

const KV_SCHEMA: &str = r#"{"type":"record","name":"E","fields":[
    {"name":"event_id","type":"string"},{"name":"tenant","type":"string"},{"name":"v","type":"long"}]}"#;

/// An Avro file of (event_id, "t1", v) rows.
fn kv_avro(rows: &[(&str, i64)]) -> Vec<u8> {
    kv_avro_in("t1", rows)
}

/// An Avro file of (event_id, tenant, v) rows.
pub(crate) fn kv_avro_in(tenant: &str, rows: &[(&str, i64)]) -> Vec<u8> {
    let schema = apache_avro::Schema::parse_str(KV_SCHEMA).unwrap();
    let mut w = apache_avro::Writer::new(&schema, vec![]);
    for (id, v) in rows {
        let mut r = apache_avro::types::Record::new(&schema).unwrap();
        r.put("event_id", *id);
        r.put("tenant", tenant);
        r.put("v", *v);
        w.append(r).unwrap();
    }
    w.into_inner().unwrap()
}

/// The value of `v` per event id in the table.
pub(crate) async fn values(h: &Harness, table: &floe::TableIdent) -> std::collections::BTreeMap<String, Vec<i64>> {
    let mut out: std::collections::BTreeMap<String, Vec<i64>> = Default::default();
    for (_, _, b) in contents(&h.ports, table).await.files {
        let ids = b.column_by_name("event_id").unwrap();
        let ids = ids.as_any().downcast_ref::<arrow_array::StringArray>().unwrap();
        let v = b.column_by_name("v").unwrap();
        let v = v.as_any().downcast_ref::<arrow_array::Int64Array>().unwrap();
        for i in 0..b.num_rows() {
            out.entry(ids.value(i).to_string()).or_default().push(v.value(i));
        }
    }
    out
}

/// A late copy of a key with another payload, committed before a level-1 → level-2 merge whose
/// output carries a newer sequence number: whichever compaction runs next (here a full one), the
/// copy committed first wins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_committed_copy_of_a_key_wins_whatever_the_compaction() {
    let h = Harness::new();
    let cfg = TableConfig::new("kv.first".parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap();
    let regular = opts(false);
    for (round, files) in
        [[("a1", vec![("k1", 1)]), ("a2", vec![("k3", 1)])], [("c1", vec![("k5", 1)]), ("c2", vec![("k6", 1)])]]
            .into_iter()
            .enumerate()
    {
        let mut objects = vec![];
        for (name, rows) in files {
            objects.push(h.put_file(&format!("r{round}"), &format!("{name}.avro"), &kv_avro(&rows)).await);
        }
        ingest_round(&h, &cfg, objects).await;
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &regular, VISIBILITY).await.expect("level 0 → 1");
    }
    // The late copy: one level-0 file (not due), then the two level-1 files merge into level 2.
    ingest_round(&h, &cfg, vec![h.put_file("late", "b.avro", &kv_avro(&[("k1", 2), ("k7", 2)])).await]).await;
    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &regular, VISIBILITY).await.unwrap();
    assert_eq!(report.tasks, 1, "the level-1 → level-2 merge only");
    assert_eq!(values(&h, &cfg.table).await["k1"].len(), 2, "both copies until the late file is compacted");
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("full");
    let v = values(&h, &cfg.table).await;
    assert_eq!(v["k1"], vec![1], "the copy committed first");
    assert_eq!(v.len(), 5, "{v:?}");
    assert!(v.values().all(|x| x.len() == 1));
}

/// Another engine deletes a file of a partition the task does not touch after the task was
/// planned: the task's files are all still live, but its view of the table is not, so its
/// rewrite is rejected (as Iceberg Java validates a rewrite against the changes since its start).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_planned_before_another_engine_changed_the_table_is_rejected() {
    use floe::table::{Change, plan_snapshot};
    let h = Harness::new();
    let cfg = TableConfig::new("kv.foreign".parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap();
    let objects = vec![
        h.put_file("in", "a.avro", &kv_avro_in("t1", &[("k1", 1)])).await,
        h.put_file("in", "b.avro", &kv_avro_in("t1", &[("k2", 1)])).await,
        h.put_file("in", "c.avro", &kv_avro_in("t2", &[("k3", 1)])).await,
    ];
    ingest_round(&h, &cfg, objects).await;
    let plan = plan_table(&h.ports, &cfg.table, &opts(false)).await.unwrap();
    assert_eq!(plan.tasks.len(), 1, "tenant t1 is due, t2 is not");
    let snap = plan.state.metadata.current_snapshot().unwrap();
    let (planned, seq) = (snap.snapshot_id(), snap.sequence_number());
    // The other engine: a delete of tenant t2's file.
    let t2 = plan.files.iter().find(|f| !plan.tasks[0].inputs.iter().any(|i| i.path == f.path)).unwrap();
    let change = Change {
        operation: iceberg::spec::Operation::Delete,
        added: vec![],
        removed: [t2.path.clone()].into(),
        removed_deletes: Default::default(),
        expire: Default::default(),
        schema: None,
    };
    let foreign = plan_snapshot(h.ports.store.as_ref(), &plan.state, None, change, 42, &[]).await.unwrap();
    h.ports.store.put(&foreign.metadata_location, foreign.metadata_json.clone()).await.unwrap();
    h.ports.pointer.swap(&cfg.table, &plan.state.pointer, &foreign.metadata_location).await.unwrap();

    let wt = Arc::new(WriterTable::from_metadata(&cfg.table, &plan.state.metadata).unwrap());
    run_task(&h.engine, &h.ports, &wt, planned, seq, &plan.tasks[0]).await.unwrap();
    let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    match &out.results[0].1 {
        MessageResult::Stale { reason } => assert!(reason.contains("changed since snapshot"), "{reason}"),
        other => panic!("expected a stale rewrite, got {other:?}"),
    }
    assert_eq!(values(&h, &cfg.table).await.len(), 2, "k1 and k2 as they were; k3 deleted by the other engine");
}

/// A task that fails (here: one of its inputs is gone from the store) fails its run, but only
/// once the run's other tasks are done: each of them sent its rewrite request, and those land.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_task_fails_its_run_after_the_others_sent_their_requests() {
    let h = Harness::new();
    let cfg = events_table("ev.one_fails");
    ingest_round(&h, &cfg, h.events("in", 6, 80, 41, 0.0).await).await;
    let plan = plan_table(&h.ports, &cfg.table, &opts(true)).await.unwrap();
    assert!(plan.tasks.len() >= 3, "{} tasks", plan.tasks.len());
    let doomed = &plan.tasks[plan.tasks.len() / 2];
    h.ports.store.delete(&doomed.inputs[0].path).await.unwrap();
    let o = opts(true);
    let run = floe::pipeline::compact::run_planned(&h.engine, &h.ports, &cfg.table, &plan, plan.tasks.clone(), &o);
    assert!(run.await.is_err(), "the run fails");
    let msgs = h.ports.commit_queue.receive(100, VISIBILITY).await.unwrap();
    let sent: HashSet<String> = msgs
        .iter()
        .map(|m| match floe::message::CommitRequest::from_json(&m.body).unwrap() {
            floe::message::CommitRequest::Rewrite(r) => r.task_id,
            other => panic!("a rewrite request, not {other:?}"),
        })
        .collect();
    let others: HashSet<String> = plan.tasks.iter().filter(|t| t.id != doomed.id).map(|t| t.id.clone()).collect();
    assert_eq!(sent, others, "every other task sent its request, the failed one none");
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    assert!(out.results.iter().all(|(_, r)| matches!(r, MessageResult::Committed { .. })), "{:?}", out.results);
}

/// Another engine rolls the table back past a compaction: the compaction's inputs are live
/// again, and the same plan (the same task ids) compacts them again; a task that landed only in
/// a snapshot rolled away from is not a duplicate. Every key once throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_rolled_back_by_another_engine_can_land_again() {
    let h = Harness::new();
    let cfg = events_table("ev.rolled");
    let objects = h.events("in", 6, 200, 51, 0.0).await;
    let batches = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects.clone(), &batches).await.unwrap();
    let level_zero = |c: &TableContents| {
        c.files.iter().filter(|(p, _, _)| !p.rsplit('/').next().unwrap_or_default().starts_with('L')).count()
    };
    let before = level_zero(&contents(&h.ports, &cfg.table).await);
    assert!(before >= 6);
    let snapshot = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table)
        .await
        .unwrap()
        .unwrap()
        .metadata
        .current_snapshot_id()
        .unwrap();
    let full = CompactOptions { full: true, parallelism: 2, ..Default::default() };
    let (_, first) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    assert!(first.rewrites > 0);
    assert_eq!(level_zero(&contents(&h.ports, &cfg.table).await), 0);
    roll_back(&h.ports, &cfg.table, snapshot).await;
    assert_eq!(level_zero(&contents(&h.ports, &cfg.table).await), before, "the compaction rolled away");
    let (_, again) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    assert_eq!(again.rewrites, first.rewrites, "the same tasks land again");
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(level_zero(&after), 0);
    assert_eq!(counts(&after.event_ids()), counts(&source_event_ids(&objects)), "every key once");
}

/// The events of an Avro file with `schema_version` set to `version`: the same keys, another value.
fn with_schema_version(file: &[u8], version: i32) -> Vec<u8> {
    use apache_avro::types::Value;
    let reader = apache_avro::Reader::new(file).unwrap();
    let schema = reader.writer_schema().clone();
    let mut w = apache_avro::Writer::new(&schema, Vec::new());
    for v in reader {
        let Value::Record(mut fields) = v.unwrap() else { panic!("a record") };
        for (name, value) in &mut fields {
            if name == "schema_version" {
                *value = Value::Int(version);
            }
        }
        w.append(Value::Record(fields)).unwrap();
    }
    w.into_inner().unwrap()
}

/// `schema_version` of every row of `b` holding `key`.
fn versions_in(b: &arrow_array::RecordBatch, key: &str) -> Vec<i32> {
    let ids = b.column_by_name("event_id").unwrap();
    let ids = ids.as_any().downcast_ref::<arrow_array::FixedSizeBinaryArray>().unwrap();
    let v = b.column_by_name("schema_version").unwrap();
    let v = v.as_any().downcast_ref::<arrow_array::Int32Array>().unwrap();
    (0..b.num_rows())
        .filter(|i| uuid::Uuid::from_slice(ids.value(*i)).unwrap().to_string() == key)
        .map(|i| v.value(i))
        .collect()
}

/// A `--full` run's references are the compacted files at the target size, which may be younger
/// than a compacted input under it: under a dedup window a key's first copy may sit in such an
/// input and a later copy in a reference. The first copy stays (under a window both may); it
/// was dropped for the later one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_compaction_never_drops_a_keys_first_copy_for_a_younger_reference() {
    const WINDOW_MS: u64 = 500;
    const TARGET: u64 = 64 * 1024;
    let h = Harness::new();
    let mut cfg = TableConfig::new("ev.full".parse().unwrap())
        .with_sort_by("event_time")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap();
    cfg.target_file_size = TARGET;
    cfg.properties.insert(floe::table::PROP_DEDUP_WINDOW.into(), WINDOW_MS.to_string());
    let t0 = floe::sample::EventsSpec::default().start_us;
    let file = |n: usize, start_us: i64, seed: u64| {
        let spec = floe::sample::EventsSpec { events_per_file: n, start_us, ..Default::default() };
        floe::sample::events_file(&spec, seed, 0).unwrap().0
    };
    let first = file(5, t0, 1);
    let a1 = h.put_file("a", "a1.avro", &first).await;
    let a2 = h.put_file("a", "a2.avro", &file(5, t0 + 10_000_000, 2)).await;
    ingest_round(&h, &cfg, vec![a1.clone(), a2]).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");

    // Past the window, a later copy of a1's events (one value changed) and many more events
    // after them: their compaction has no reference, and its first file, at the target size,
    // holds the later copies.
    tokio::time::sleep(Duration::from_millis(WINDOW_MS + 300)).await;
    let later = h.put_file("b", "b.avro", &with_schema_version(&first, 99)).await;
    let filler = h.put_file("b", "filler.avro", &file(3000, t0 + 3_600_000_000, 3)).await;
    ingest_round(&h, &cfg, vec![later, filler]).await;
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(false), VISIBILITY).await.expect("compaction");
    let keys = source_event_ids(std::slice::from_ref(&a1));
    let c = contents(&h.ports, &cfg.table).await;
    let mut sizes = vec![];
    for (path, _, b) in &c.files {
        let size = h.ports.store.head(path).await.unwrap().size;
        let level1 = path.rsplit('/').next().unwrap().starts_with("L1-");
        sizes.push((versions_in(b, &keys[0]), size, level1));
    }
    assert!(sizes.iter().any(|(v, s, l1)| v == &[99] && *s >= TARGET && *l1), "the later copies' file: {sizes:?}");
    assert!(sizes.iter().any(|(v, s, l1)| v.len() == 1 && v != &[99] && *s < TARGET && *l1), "the first's: {sizes:?}");

    compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.expect("full compaction");
    let c = contents(&h.ports, &cfg.table).await;
    for key in &keys {
        let versions: Vec<i32> = c.files.iter().flat_map(|(_, _, b)| versions_in(b, key)).collect();
        assert!(versions.iter().any(|v| *v != 99), "{key}: the first committed copy is gone: {versions:?}");
    }
}

/// Another engine replaces one of a partition's files with a Hive-style copy that lacks the
/// partition column (its value lives in the path and in the manifest): compaction reads that
/// column as the manifest's identity partition value, the first rule of the spec's column
/// projection, and every row keeps its tenant. (Before, the task failed on every run: "the table
/// requires this field but the file does not have it"; an optional column would have read null.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_without_its_identity_partition_column_reads_it_from_the_manifest() {
    use floe::table::{Added, Change, load_table, plan_snapshot};
    use iceberg::spec::{DataFileBuilder, Manifest, ManifestList};
    let h = Harness::new();
    let cfg = TableConfig::new("kv.hive".parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap();
    let objects = vec![
        h.put_file("in", "a.avro", &kv_avro_in("t1", &[("k1", 1), ("k2", 2)])).await,
        h.put_file("in", "b.avro", &kv_avro_in("t1", &[("k3", 3)])).await,
    ];
    ingest_round(&h, &cfg, objects).await;
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let meta = &state.metadata;
    let list = h.ports.store.get(meta.current_snapshot().unwrap().manifest_list()).await.unwrap();
    let mut live = vec![];
    for mf in ManifestList::parse_with_version(&list, meta.format_version()).unwrap().entries() {
        let m = Manifest::parse_avro(&h.ports.store.get(&mf.manifest_path).await.unwrap()).unwrap();
        live.extend(m.entries().iter().filter(|e| e.is_alive()).map(|e| (mf.partition_spec_id, e.data_file().clone())));
    }
    let (spec_id, original) = live.into_iter().max_by_key(|(_, f)| f.record_count()).unwrap();
    assert_eq!(original.record_count(), 2, "a.avro's file");
    // The other engine's copy: the same rows, without the `tenant` column.
    let bytes = h.ports.store.get(original.file_path()).await.unwrap();
    let reader =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap().build().unwrap();
    let batches: Vec<arrow_array::RecordBatch> = reader.map(|b| b.unwrap()).collect();
    let schema = batches[0].schema();
    let keep: Vec<usize> = (0..schema.fields().len()).filter(|i| schema.field(*i).name() != "tenant").collect();
    let projected: Vec<_> = batches.iter().map(|b| b.project(&keep).unwrap()).collect();
    let mut out = vec![];
    let mut w = parquet::arrow::ArrowWriter::try_new(&mut out, projected[0].schema(), None).unwrap();
    for b in &projected {
        w.write(b).unwrap();
    }
    w.close().unwrap();
    let copy = format!("{}/data/tenant=t1/hive-copy.parquet", meta.location().trim_end_matches('/'));
    h.ports.store.put(&copy, out.clone().into()).await.unwrap();
    let tenant_id = meta.current_schema().field_by_name("tenant").unwrap().id;
    let counts = |m: &std::collections::HashMap<i32, u64>| {
        m.iter().filter(|(k, _)| **k != tenant_id).map(|(k, v)| (*k, *v)).collect()
    };
    let file = DataFileBuilder::default()
        .content(iceberg::spec::DataContentType::Data)
        .file_path(copy.clone())
        .file_format(iceberg::spec::DataFileFormat::Parquet)
        .partition(original.partition().clone())
        .partition_spec_id(spec_id)
        .record_count(original.record_count())
        .file_size_in_bytes(out.len() as u64)
        .value_counts(counts(original.value_counts()))
        .null_value_counts(counts(original.null_value_counts()))
        .build()
        .unwrap();
    let change = Change {
        operation: Operation::Replace,
        added: vec![Added { spec_id, file, data_sequence_number: None }],
        removed: [original.file_path().to_string()].into(),
        removed_deletes: Default::default(),
        expire: Default::default(),
        schema: None,
    };
    let foreign = plan_snapshot(h.ports.store.as_ref(), &state, None, change, 43, &[]).await.unwrap();
    h.ports.store.put(&foreign.metadata_location, foreign.metadata_json.clone()).await.unwrap();
    h.ports.pointer.swap(&cfg.table, &state.pointer, &foreign.metadata_location).await.unwrap();

    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts(true), VISIBILITY).await.unwrap();
    assert_eq!(report.tasks, 1);
    let c = contents(&h.ports, &cfg.table).await;
    assert!(c.files.iter().all(|(p, _, _)| *p != copy), "the copy was compacted");
    let v = values(&h, &cfg.table).await;
    assert_eq!(v.keys().cloned().collect::<Vec<_>>(), ["k1", "k2", "k3"]);
    for (path, _, b) in &c.files {
        let t = b.column_by_name("tenant").unwrap();
        let t = t.as_any().downcast_ref::<arrow_array::StringArray>().unwrap();
        assert!((0..t.len()).all(|i| t.is_valid(i) && t.value(i) == "t1"), "{path}: every row keeps its tenant");
    }
}
