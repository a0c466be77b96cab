//! The dedup key index (compact/prune.rs): a compaction task reads, of the partition's compacted
//! files, only those whose key bounds hold one of its keys, and of those only the key pages whose
//! range holds one. These tests check that it reads less as the partition grows and that it
//! never costs exactness: every copy of a key committed before is dropped, and a key that merely
//! falls inside a file's or page's range (a false positive) is kept.

use std::collections::HashSet;
use std::time::Duration;

use floe::config::TableConfig;
use floe::pipeline::compact::{CompactOptions, TaskOutcome, plan_table};
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::ports::ObjectMeta;
use floe::sample::{self, EventsSpec};

use crate::common::*;

const VISIBILITY: Duration = Duration::from_secs(60);

/// One partition sorted by event time, deduplicated on `event_id`, with small target files so
/// that each compaction leaves several compacted files, each a narrow slice of time.
fn table(name: &str) -> TableConfig {
    TableConfig::new(name.parse().unwrap())
        .with_sort_by("event_time")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap()
        .with_target_file_size(1 << 20)
        .unwrap()
}

/// Files `first..first + n` of a one-tenant series with time-ordered ids (UUIDv7), under
/// folder `name`; `seed` other than the series' gives other ids at the same times.
async fn series(h: &Harness, name: &str, first: u64, n: u64, seed: u64) -> Vec<ObjectMeta> {
    let spec = EventsSpec { events_per_file: 4000, tenants: 1, time_ordered_ids: true, ..Default::default() };
    let mut out = vec![];
    for i in first..first + n {
        let (bytes, _) = sample::events_file(&spec, seed, i).expect("gen");
        out.push(h.put_file(name, &format!("part-{i:05}.avro"), &bytes).await);
    }
    out
}

async fn land(h: &Harness, cfg: &TableConfig, objects: Vec<ObjectMeta>) {
    let opts = IngestOptions { writers: 2, batch_objects: 2, ..Default::default() };
    let r = ingest(&h.engine, &h.ports, cfg, &h.warehouse, objects, &opts).await.expect("ingest");
    assert!(r.quarantined.is_empty(), "{:?}", r.quarantined);
}

/// A full compaction (level-0 files and compacted files under the target merged; the files at
/// the target are the references), and its totals.
async fn compact(h: &Harness, cfg: &TableConfig) -> TaskOutcome {
    let opts = CompactOptions { min_files: 2, full: true, parallelism: 2, ..Default::default() };
    let (report, _) = compact_and_commit(&h.engine, &h.ports, &cfg.table, &opts, VISIBILITY).await.expect("compact");
    report.totals
}

/// `rounds` rounds of 2 files each, compacted after each: the partition's compacted files grow
/// with the rounds. Returns the sources landed.
async fn history(h: &Harness, cfg: &TableConfig, rounds: u64) -> Vec<ObjectMeta> {
    let mut all = vec![];
    for r in 0..rounds {
        let files = series(h, &format!("r{r}"), 2 * r, 2, 7).await;
        land(h, cfg, files.clone()).await;
        compact(h, cfg).await;
        all.extend(files);
    }
    all
}

/// New events plus copies of the oldest and of the newest committed events: the index skips the
/// compacted files between them, reads only the key pages that may hold the task's keys, and
/// drops every copy, the oldest one included.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_index_reads_only_files_and_pages_that_may_hold_a_key_and_drops_every_copy() {
    let h = Harness::new();
    let cfg = table("ev.indexed");
    let rounds = 6;
    let old = history(&h, &cfg, rounds).await;
    let references = plan_after(&h, &cfg).await;
    assert!(references >= 4, "the history leaves many compacted files: {references}");

    let mut new = series(&h, "new", 2 * rounds, 2, 7).await;
    // A copy of the very first file (compacted rounds ago) and of the last one.
    for (i, o) in [(0, &old[0]), (1, &old[old.len() - 1])] {
        let bytes = std::fs::read(floe::adapters::local::uri_to_path(&o.uri).unwrap()).unwrap();
        new.push(h.put_file("new", &format!("copy-{i}.avro"), &bytes).await);
    }
    land(&h, &cfg, new.clone()).await;
    let t = compact(&h, &cfg).await;
    eprintln!(
        "references: {} read ({} of {} bytes), {} skipped by their bounds",
        t.reference_files, t.reference_key_bytes, t.reference_bytes, t.references_skipped
    );
    assert!(t.references_skipped > 0, "files between the oldest and newest copies are not read: {t:?}");
    assert!(t.reference_files > 0, "the files holding the copies are read: {t:?}");
    assert!(
        t.reference_key_bytes * 4 < t.reference_bytes,
        "footers and some key pages only: {} of {} bytes",
        t.reference_key_bytes,
        t.reference_bytes
    );
    let mut all = source_event_ids(&old);
    all.extend(source_event_ids(&new));
    assert_each_key_once(&contents(&h.ports, &cfg.table).await, &all);
}

/// Keys at the very times of committed events but with other random bits fall inside the key
/// bounds and page ranges of the files holding those events: false positives, which cost a read
/// and keep every row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_false_positive_costs_a_read_and_never_drops_a_row() {
    let h = Harness::new();
    let cfg = table("ev.false_positive");
    let old = history(&h, &cfg, 3).await;
    // The same times as the first round's events, other ids.
    let twins = series(&h, "twins", 0, 2, 8).await;
    let (a, b): (HashSet<String>, HashSet<String>) =
        (source_event_ids(&old).into_iter().collect(), source_event_ids(&twins).into_iter().collect());
    assert!(a.is_disjoint(&b), "other ids");
    land(&h, &cfg, twins.clone()).await;
    let t = compact(&h, &cfg).await;
    assert!(t.reference_files > 0 && t.reference_key_bytes > 0, "the ranges hold the twins' keys: {t:?}");
    let mut all = source_event_ids(&old);
    all.extend(source_event_ids(&twins));
    let end = contents(&h.ports, &cfg.table).await;
    assert_eq!(end.event_ids().len(), all.len(), "every row kept");
    assert_each_key_once(&end, &all);
}

/// With random ids (UUIDv4) every file's range holds the task's keys: the index rules nothing
/// out and the references are read as before, with the same result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_keys_fall_back_to_reading_the_key_columns_with_the_same_result() {
    let h = Harness::new();
    let cfg = table("ev.random");
    let (first, second) = random_rounds(&h, &cfg, (6, 4000, 3), (2, 4000, 4), 2).await;
    let t = compact(&h, &cfg).await;
    assert_eq!(t.references_skipped, 0, "random keys fall in every range: {t:?}");
    assert!(t.reference_files > 0);
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    assert_each_key_once(&contents(&h.ports, &cfg.table).await, &all);
}

/// A task holds all its inputs anyway: it fetches them side by side, and probes its references
/// side by side too (one at a time, S3's first-byte latency added up per file), with the same
/// exact result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_fetches_its_inputs_and_probes_its_references_side_by_side() {
    let mut h = Harness::new();
    let cfg = table("ev.side_by_side");
    let (first, second) = random_rounds(&h, &cfg, (16, 4000, 5), (6, 2000, 6), 1).await;
    let (inputs, references) = (InFlight::new("get"), InFlight::new("get_range"));
    h.ports = floe::ports::wrap::wrap(floe::ports::wrap::wrap(h.ports.clone(), inputs.clone()), references.clone());
    let t = compact(&h, &cfg).await;
    assert!(t.inputs >= 4 && t.reference_files >= 2, "{t:?}");
    assert!(inputs.most() >= 2, "inputs fetched one at a time");
    assert!(references.most() >= 2, "references probed one at a time");
    let mut all = source_event_ids(&first);
    all.extend(source_event_ids(&second));
    assert_each_key_once(&contents(&h.ports, &cfg.table).await, &all);
}

/// Random-id files (count, events each, seed) landed and compacted, then a second round landed
/// with a copy of the first round's file `copied`: both rounds' sources.
async fn random_rounds(
    h: &Harness,
    cfg: &TableConfig,
    (n1, e1, s1): (u64, usize, u64),
    (n2, e2, s2): (u64, usize, u64),
    copied: usize,
) -> (Vec<ObjectMeta>, Vec<ObjectMeta>) {
    let first = h.events("a", n1, e1, s1, 0.0).await;
    land(h, cfg, first.clone()).await;
    compact(h, cfg).await;
    let mut second = h.events("b", n2, e2, s2, 0.0).await;
    let bytes = std::fs::read(floe::adapters::local::uri_to_path(&first[copied].uri).unwrap()).unwrap();
    second.push(h.put_file("b", "copy.avro", &bytes).await);
    land(h, cfg, second.clone()).await;
    (first, second)
}

/// The table's compacted files now.
async fn plan_after(h: &Harness, cfg: &TableConfig) -> usize {
    let plan = plan_table(&h.ports, &cfg.table, &CompactOptions { full: true, ..Default::default() }).await.unwrap();
    let files: HashSet<&String> = plan.files.iter().filter(|f| f.level() > 0).map(|f| &f.path).collect();
    files.len()
}
