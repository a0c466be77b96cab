//! Maintenance by the committer: manifests merged, snapshots expired (never one a pending ledger
//! record names), old metadata files and unreachable data files deleted — and every kept snapshot
//! still readable, with every file it names still there.

use std::collections::{BTreeSet, HashSet};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use floe::adapters::local;
use floe::config::TableConfig;
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::compact::{CompactOptions, compact};
use floe::pipeline::create::ensure_table;
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::pipeline::write::write;
use floe::ports::{Ports, SourceState};
use floe::table::{Manifests, WriterTable, load_table};
use iceberg::spec::{Manifest, ManifestList};

use crate::commit::DiesAfterSwap;
use crate::common::*;

/// Aggressive maintenance: merge past 4 manifests, keep 20 snapshots (a compaction's rewrites
/// must find the snapshot they were planned from: one expired since is rejected, as Iceberg Java
/// rejects a rewrite whose starting snapshot is gone), no age, 5 old metadata files.
fn maintained(name: &str, keep: usize) -> TableConfig {
    let mut cfg = events_table(name);
    for (k, v) in [
        ("commit.manifest.min-count-to-merge", "4"),
        ("history.expire.max-snapshot-age-ms", "0"),
        ("history.expire.min-snapshots-to-keep", &keep.to_string()),
        ("write.metadata.previous-versions-max", "5"),
    ] {
        cfg.properties.insert(k.into(), v.to_string());
    }
    cfg
}

/// Every object under the table location, as paths relative to it.
fn files_on_disk(h: &Harness, cfg: &TableConfig, sub: &str) -> BTreeSet<String> {
    let root = h.dir.path().join("wh").join(format!("{}.db", cfg.table.namespace)).join(&cfg.table.name).join(sub);
    let mut out = BTreeSet::new();
    let mut stack = vec![root];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                out.insert(local::path_to_uri(&e.path()));
            }
        }
    }
    out
}

/// Every data file and manifest any kept snapshot names; each must exist and parse.
async fn reachable(ports: &Ports, cfg: &TableConfig) -> (HashSet<String>, HashSet<String>) {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let (mut data, mut meta) = (HashSet::new(), HashSet::new());
    for snap in state.metadata.snapshots() {
        meta.insert(snap.manifest_list().to_string());
        let list = ports.store.get(snap.manifest_list()).await.expect("a kept snapshot's manifest list exists");
        for mf in ManifestList::parse_with_version(&list, state.metadata.format_version()).unwrap().entries() {
            meta.insert(mf.manifest_path.clone());
            let m = Manifest::parse_avro(&ports.store.get(&mf.manifest_path).await.expect("manifest exists")).unwrap();
            for e in m.entries().iter().filter(|e| e.is_alive()) {
                ports.store.head(e.file_path()).await.expect("a file a kept snapshot names exists");
                data.insert(e.file_path().to_string());
            }
        }
    }
    (data, meta)
}

/// The metadata file lists snapshots oldest first (as Iceberg Java does; some readers take the
/// last entry for the newest), the current one last.
fn assert_commit_order(json: &[u8], round: u64) {
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let seqs: Vec<i64> =
        v["snapshots"].as_array().unwrap().iter().map(|s| s["sequence-number"].as_i64().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "round {round}: snapshots out of order: {seqs:?}");
    let last = v["snapshots"].as_array().unwrap().last().unwrap()["snapshot-id"].as_i64();
    assert_eq!(last, v["current-snapshot-id"].as_i64(), "round {round}: the current snapshot is listed last");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn maintenance_keeps_metadata_bounded_and_deletes_what_no_snapshot_reaches() {
    let h = Harness::new();
    let cfg = maintained("ev.maintained", 20);
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let compaction = CompactOptions { min_files: 3, parallelism: 2, ..Default::default() };
    let mut all = vec![];
    let (mut sizes, mut settled) = (vec![], 0);
    for round in 0..30u64 {
        let objects = h.events(&format!("r{round}"), 1, 60, 300 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.expect("ingest");
        if round % 5 == 4 {
            compact_and_commit(&h.engine, &h.ports, &cfg.table, &compaction, Duration::from_secs(60)).await.unwrap();
        }
        let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
        let mut reads = 0;
        let manifests = Manifests::load(h.ports.store.as_ref(), &state.metadata, &mut reads).await.unwrap();
        assert!(manifests.list.len() <= 5, "round {round}: {} manifests", manifests.list.len());
        let snapshots = state.metadata.snapshots().len();
        assert!(snapshots <= 20 + floe::table::maintain::EXPIRE_BATCH + 1, "round {round}: {snapshots} snapshots");
        if snapshots < 20 {
            settled = round as usize + 1; // the history has yet to reach what it keeps
        }
        let metadata_files =
            files_on_disk(&h, &cfg, "metadata").iter().filter(|f| f.ends_with(".metadata.json")).count();
        assert!(metadata_files <= 7, "round {round}: {metadata_files} metadata.json files");
        let json = h.ports.store.get(&state.pointer.metadata_location).await.unwrap();
        sizes.push(json.len());
        assert_commit_order(&json, round);
        let ids = contents(&h.ports, &cfg.table).await.event_ids();
        assert_eq!(counts(&ids).len(), counts(&all).len(), "round {round}: every key");
    }
    // Once the history holds what it keeps, metadata.json rides a sawtooth of EXPIRE_BATCH
    // snapshots: through one expiry at least, it stays within half again its size then.
    assert!(settled + floe::table::maintain::EXPIRE_BATCH < sizes.len(), "settled at round {settled}: {sizes:?}");
    let peak = sizes[settled..].iter().max().unwrap();
    assert!(*peak < sizes[settled] * 3 / 2, "metadata.json stays flat from round {settled}: {sizes:?}");
    // Nothing on disk that no kept snapshot reaches, beyond the snapshots still to expire: every
    // data file removed by a compaction whose ancestors all expired is gone.
    let (data, meta) = reachable(&h.ports, &cfg).await;
    let on_disk = files_on_disk(&h, &cfg, "data");
    let garbage: Vec<&String> = on_disk.iter().filter(|f| !data.contains(*f)).collect();
    let live_now = contents(&h.ports, &cfg.table).await.files.len();
    assert!(garbage.len() <= 3 * 10, "{} unreachable data files left ({} live)", garbage.len(), live_now);
    let lists = files_on_disk(&h, &cfg, "metadata").into_iter().filter(|f| f.contains("/snap-")).count();
    assert!(lists <= meta.len(), "manifest lists of expired snapshots are deleted: {lists} on disk");
}

/// A committer that dies between its swap and its landed record leaves its sources pending
/// under a snapshot that Floe's expiry later removes: the snapshot is recorded landed first, so
/// the redelivered manifest is still a duplicate (without that record its rows land twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_a_pending_record_names_is_recorded_landed_before_it_expires() {
    let h = Harness::new();
    let cfg = maintained("ev.pending", 3);
    let inputs = h.events("in", 1, 100, 77, 0.0).await;
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &inputs).await.unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
    write(&h.engine, &h.ports, &t, inputs.clone()).await.unwrap();
    let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    // The committer dies between its swap and its ledger update: the records stay pending.
    let mut dying = h.ports.clone();
    dying.ledger = Arc::new(DiesAfterSwap { inner: h.ports.ledger.clone(), armed: AtomicBool::new(true) });
    let out = Committer::new(h.engine.clone(), dying).commit(&msgs).await;
    assert!(matches!(out.results[0].1, MessageResult::Retry { .. }));
    let pending_snap = contents_snapshot(&h, &cfg).await;
    let sources: Vec<String> =
        floe::message::FileManifest::from_json(&msgs[0].body).unwrap().sources.into_iter().map(|s| s.id).collect();
    let states = h.ports.ledger.lookup(&cfg.table, &sources).await.unwrap();
    assert!(states.iter().all(|(_, s)| matches!(s, SourceState::Pending { .. })), "{states:?}");
    // Many commits later, with a policy that expires it...
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    for round in 0..20u64 {
        let more = h.events(&format!("m{round}"), 1, 20, 900 + round, 0.0).await;
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, more, &opts).await.unwrap();
    }
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    assert!(state.metadata.snapshots().len() < 15, "snapshots expired");
    assert!(state.metadata.snapshot_by_id(pending_snap).is_none(), "the pending records' snapshot expired too");
    let states = h.ports.ledger.lookup(&cfg.table, &sources).await.unwrap();
    assert!(
        states.iter().all(|(_, s)| *s == SourceState::Committed { snapshot_id: pending_snap }),
        "recorded landed before it expired: {states:?}"
    );
    // ...the redelivered manifest is recognised as committed: its rows are in the table once.
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&msgs).await;
    assert_eq!(out.results[0].1, MessageResult::Duplicate, "{:?}", out.results);
    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    for id in source_event_ids(&inputs) {
        assert_eq!(ids.iter().filter(|x| **x == id).count(), 1, "{id} once");
    }
}

async fn contents_snapshot(h: &Harness, cfg: &TableConfig) -> i64 {
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    state.metadata.current_snapshot_id().expect("a snapshot")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_orphan_sweep_deletes_only_old_unreachable_objects() {
    use floe::table::sweep::sweep_orphans;
    let h = Harness::new();
    let cfg = events_table("ev.sweep");
    let objects = h.events("in", 4, 100, 31, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects.clone(), &opts).await.unwrap();
    let full = CompactOptions { full: true, parallelism: 2, ..Default::default() };
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    // Orphans: a data file no manifest names, and a metadata file of a swap that was lost.
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let loc = state.metadata.location().trim_end_matches('/').to_string();
    let junk =
        [format!("{loc}/data/dead-batch-00000-000-00.parquet"), format!("{loc}/metadata/99999-lost.metadata.json")];
    for j in &junk {
        h.ports.store.put(j, bytes::Bytes::from_static(b"x")).await.unwrap();
    }
    let (data_before, _) = reachable(&h.ports, &cfg).await;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let young = sweep_orphans(h.ports.store.as_ref(), &state, now - 3_600_000, false).await.unwrap();
    assert!(young.orphans.is_empty() && young.young >= 2, "nothing younger than the safety age goes: {young:?}");
    let dry = sweep_orphans(h.ports.store.as_ref(), &state, now + 1000, true).await.unwrap();
    let mut found = dry.orphans.clone();
    found.sort();
    assert_eq!(found, junk.to_vec(), "exactly the orphans");
    let swept = sweep_orphans(h.ports.store.as_ref(), &state, now + 1000, false).await.unwrap();
    assert_eq!(swept.orphans.len(), 2);
    for j in &junk {
        assert!(h.ports.store.head(j).await.is_err(), "{j} deleted");
    }
    // Every snapshot kept still reads, with every file it names (the level-0 files the
    // compaction replaced included: older snapshots reach them).
    let (data_after, _) = reachable(&h.ports, &cfg).await;
    assert_eq!(data_before, data_after);
    assert!(data_after.iter().any(|p| !p.contains("/L2-")), "time travel keeps the replaced files");
    assert_eq!(counts(&contents(&h.ports, &cfg.table).await.event_ids()).len(), source_event_ids(&objects).len());
}

/// Commits every message on the commit queue with `committer`, acknowledging each; each must
/// land (or be a duplicate of one that did). Returns how many committed.
async fn commit_queued(h: &Harness, committer: &mut Committer) -> usize {
    let mut committed = 0;
    loop {
        let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
        if msgs.is_empty() {
            return committed;
        }
        let out = committer.commit(&msgs).await;
        for (m, (_, result)) in msgs.iter().zip(&out.results) {
            assert!(matches!(result, MessageResult::Committed { .. }), "{result:?}");
            committed += 1;
            h.ports.commit_queue.ack(&m.receipt).await.unwrap();
        }
    }
}

/// Manifest entries counted in the list, and the most entries the bin of the list's first
/// manifest can hold: those of the longest prefix of the list within `target` bytes (manifest
/// merging fills bins from the end, so the first bin is such a prefix, or the first manifest
/// alone).
fn first_bin_bound(list: &[iceberg::spec::ManifestFile], target: i64) -> (usize, usize) {
    let entries = |m: &iceberg::spec::ManifestFile| {
        (m.added_files_count.unwrap_or(0) + m.existing_files_count.unwrap_or(0) + m.deleted_files_count.unwrap_or(0))
            as usize
    };
    let (mut bytes, mut bound) = (0, 0);
    for (i, m) in list.iter().enumerate() {
        bytes += m.manifest_length;
        if i > 0 && bytes > target {
            break;
        }
        bound += entries(m);
    }
    (list.iter().map(entries).sum(), bound)
}

/// A committer keeps parsed only the manifests the next merge reads (the bin of the newest, at
/// most the merge target's worth); of the others it keeps a digest of their live paths, and
/// reads one again when a rewrite removes one of its files or a merge takes it. With a small
/// target, so that the table spans many bins, one warm committer lands every append and every
/// compaction exactly, its rewrites removing files that only digests told it where to find, and
/// no merged manifest grows past the target; the entries it keeps parsed stay within one bin's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_committer_keeps_manifests_beyond_the_next_merge_as_digests_and_rewrites_exactly() {
    const TARGET: i64 = 40_000;
    let h = Harness::new();
    let mut cfg = maintained("ev.digests", 40);
    cfg.properties.insert("commit.manifest.target-size-bytes".into(), TARGET.to_string());
    let first = h.events("r0", 1, 80, 500, 0.0).await;
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &first).await.unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
    let compaction = CompactOptions { min_files: 2, parallelism: 2, ..Default::default() };
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let (mut all, mut rewrites_past_first_bin, mut most_parsed, mut most_manifests) = (vec![], 0, 0, 0);
    let list_now = async |h: &Harness| {
        let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
        let mut reads = 0;
        Manifests::load(h.ports.store.as_ref(), &state.metadata, &mut reads).await.unwrap().list
    };
    for round in 0..24u64 {
        let objects =
            if round == 0 { first.clone() } else { h.events(&format!("r{round}"), 2, 80, 500 + round, 0.0).await };
        all.extend(source_event_ids(&objects));
        write(&h.engine, &h.ports, &t, objects).await.unwrap();
        assert!(commit_queued(&h, &mut committer).await > 0, "round {round}: the append lands");
        let list = list_now(&h).await;
        let (entries, bound) = first_bin_bound(&list, TARGET);
        let parsed = committer.parsed_entries(&cfg.table).unwrap_or(0);
        assert!(parsed <= bound, "round {round}: {parsed} entries parsed, the first bin holds at most {bound}");
        let merged_past: Vec<i64> =
            list.iter().skip(1).map(|m| m.manifest_length).filter(|l| *l > TARGET + TARGET / 2).collect();
        assert!(merged_past.is_empty(), "round {round}: merged manifests past the target: {merged_past:?}");
        most_parsed = most_parsed.max(parsed);
        most_manifests = most_manifests.max(list.len());
        if round % 3 == 2 {
            let report = compact(&h.engine, &h.ports, &cfg.table, &compaction).await.unwrap();
            assert!(report.tasks > 0, "round {round}: compaction has work");
            rewrites_past_first_bin += usize::from(entries > bound) * report.tasks;
            assert_eq!(commit_queued(&h, &mut committer).await, report.tasks, "round {round}: every rewrite lands");
        }
        let ids = contents(&h.ports, &cfg.table).await.event_ids();
        assert_eq!(counts(&ids), counts(&all), "round {round}: every key, once");
    }
    assert!(rewrites_past_first_bin > 0, "some rewrites ran while manifests lay beyond the first bin");
    assert!(most_parsed > 0, "the first bin stays parsed");
    assert!(most_manifests >= 4, "the table spans several bins: {most_manifests} manifests at most");
    // A cold committer learns the digests from one read, and lands a rewrite too.
    let more = h.events("cold", 3, 80, 900, 0.0).await;
    all.extend(source_event_ids(&more));
    write(&h.engine, &h.ports, &t, more).await.unwrap();
    let mut cold = Committer::new(h.engine.clone(), h.ports.clone());
    commit_queued(&h, &mut cold).await;
    let report = compact(&h.engine, &h.ports, &cfg.table, &compaction).await.unwrap();
    let mut cold = Committer::new(h.engine.clone(), h.ports.clone());
    assert_eq!(commit_queued(&h, &mut cold).await, report.tasks);
    let (_, bound) = first_bin_bound(&list_now(&h).await, TARGET);
    let parsed = cold.parsed_entries(&cfg.table).unwrap_or(0);
    assert!(parsed <= bound, "a cold committer keeps {parsed} entries parsed, the first bin holds at most {bound}");
    assert_eq!(counts(&contents(&h.ports, &cfg.table).await.event_ids()), counts(&all), "every key, once");
    let (data, _) = reachable(&h.ports, &cfg).await;
    assert!(!data.is_empty());
}

/// A rewrite that removes every file of a manifest leaves it with nothing but `DELETED`
/// entries. The rewrite's own snapshot lists it (its readers see what it removed); the next one
/// drops it, as Iceberg Java does, however big it is or whether merging would ever take it, and
/// once the snapshots that reach it expire it is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_left_with_only_deleted_entries_is_dropped_by_the_next_snapshot() {
    let h = Harness::new();
    let mut cfg = maintained("ev.dead_manifests", 3);
    cfg.properties.insert("commit.manifest-merge.enabled".into(), "false".into());
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let mut all = vec![];
    for round in 0..4u64 {
        let objects = h.events(&format!("r{round}"), 1, 60, 700 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.unwrap();
    }
    let live =
        |m: &iceberg::spec::ManifestFile| m.added_files_count.unwrap_or(1) + m.existing_files_count.unwrap_or(1) > 0;
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let mut reads = 0;
    let before = Manifests::load(h.ports.store.as_ref(), &state.metadata, &mut reads).await.unwrap().list;
    assert_eq!(before.len(), 4, "merging off: one manifest per append");
    let full = CompactOptions { full: true, parallelism: 2, ..Default::default() };
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let rewrite = state.metadata.current_snapshot_id().unwrap();
    let list = Manifests::load(h.ports.store.as_ref(), &state.metadata, &mut reads).await.unwrap().list;
    let dead: Vec<&iceberg::spec::ManifestFile> = list.iter().filter(|m| !live(m)).collect();
    assert!(!dead.is_empty(), "the full compaction emptied the appends' manifests: {list:?}");
    assert!(dead.iter().all(|m| m.added_snapshot_id == rewrite), "only the rewrite's own snapshot lists them");
    let dead: HashSet<String> = dead.iter().map(|m| m.manifest_path.clone()).collect();
    // Later snapshots list only manifests with live files, and the dead ones go from disk once
    // the snapshots that reach them expire (the table keeps 3).
    for round in 0..(6 + floe::table::maintain::EXPIRE_BATCH as u64) {
        let objects = h.events(&format!("n{round}"), 1, 20, 800 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.unwrap();
        let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
        let list = Manifests::load(h.ports.store.as_ref(), &state.metadata, &mut reads).await.unwrap().list;
        let kept: Vec<&String> = list.iter().filter(|m| !live(m)).map(|m| &m.manifest_path).collect();
        assert!(kept.is_empty(), "round {round}: manifests without a live file kept: {kept:?}");
        assert_eq!(counts(&contents(&h.ports, &cfg.table).await.event_ids()), counts(&all), "round {round}");
    }
    let (_, reached) = reachable(&h.ports, &cfg).await;
    let on_disk = files_on_disk(&h, &cfg, "metadata");
    assert!(dead.iter().all(|p| !reached.contains(p)), "no kept snapshot reaches them");
    let left: Vec<&String> = dead.iter().filter(|p| on_disk.contains(*p)).collect();
    assert!(left.is_empty(), "dropped manifests deleted once unreachable: {left:?}");
}

/// A compaction's rewrite request that waits while the snapshot it was planned from expires is
/// rejected as stale: the table's history no longer shows what changed since its plan. Its
/// output files are not deleted by the committer (with the plan gone, it cannot tell that no
/// kept snapshot holds them); no key is lost or doubled, and the orphan sweep removes them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_planned_from_a_snapshot_that_expired_meanwhile_is_stale_and_loses_nothing() {
    use floe::table::sweep::sweep_orphans;
    let h = Harness::new();
    let cfg = maintained("ev.expired_plan", 3);
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let mut all = vec![];
    for round in 0..4u64 {
        let objects = h.events(&format!("r{round}"), 1, 60, 600 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.unwrap();
    }
    let planned = contents_snapshot(&h, &cfg).await;
    let full = CompactOptions { full: true, parallelism: 2, ..Default::default() };
    let report = compact(&h.engine, &h.ports, &cfg.table, &full).await.unwrap();
    assert!(report.tasks > 0);
    // The requests wait on the commit queue (held invisible) while appends expire their plan.
    let held = h.ports.commit_queue.receive(100, Duration::from_secs(600)).await.unwrap();
    assert_eq!(held.len(), report.tasks);
    for round in 0..(4 + floe::table::maintain::EXPIRE_BATCH as u64) {
        let objects = h.events(&format!("n{round}"), 1, 20, 650 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.unwrap();
    }
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    assert!(state.metadata.snapshot_by_id(planned).is_none(), "the planned snapshot expired");
    let added: Vec<String> = held
        .iter()
        .flat_map(|m| match floe::message::CommitRequest::from_json(&m.body).unwrap() {
            floe::message::CommitRequest::Rewrite(r) => r.added.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
            other => panic!("a rewrite request: {other:?}"),
        })
        .collect();
    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&held).await;
    for (_, r) in &out.results {
        match r {
            MessageResult::Stale { reason } => assert!(reason.contains("no longer in its history"), "{reason}"),
            other => panic!("a rewrite whose plan expired is stale: {other:?}"),
        }
    }
    assert_eq!(counts(&contents(&h.ports, &cfg.table).await.event_ids()), counts(&all), "every key, once");
    for f in &added {
        h.ports.store.head(f).await.expect("left for the orphan sweep, not deleted by the committer");
    }
    let (data, _) = reachable(&h.ports, &cfg).await;
    assert!(added.iter().all(|f| !data.contains(f)), "no kept snapshot names them");
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let swept = sweep_orphans(h.ports.store.as_ref(), &state, now + 1000, false).await.unwrap();
    for f in &added {
        assert!(swept.orphans.contains(f), "{f} swept: {:?}", swept.orphans);
    }
    assert_eq!(counts(&contents(&h.ports, &cfg.table).await.event_ids()), counts(&all), "the sweep kept every key");
}

/// A manifest that waits in the commit queue longer than the orphan sweep's safety age (a
/// committer down for a day): the sweep deletes its files, as they are old and unreferenced, so
/// the committer must never commit them. The commit age limit the Terraform module derives from
/// the sweep's age (24 h gives 12 h) sends the batch's sources back to the writers instead, and
/// the compactor refuses a sweep that no limit covers. Nothing is lost, doubled, or committed
/// without its file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_waiting_past_the_sweeps_age_are_swept_and_written_again_never_committed() {
    use floe::handlers::compactor::{CompactorEnv, handle_compactor};
    let h = Harness::new();
    let cfg = events_table("ev.waiting");
    let objects = h.events("in", 2, 100, 41, 0.0).await;
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &objects).await.unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
    write(&h.engine, &h.ports, &t, vec![objects[0].clone()]).await.unwrap();
    let hours = |n: u64| Duration::from_secs(n * 3600);
    let limited = floe::config::EngineConfig { max_commit_age: Some(hours(12)), ..h.engine.clone() };
    let mut committer = Committer::new(limited.clone(), h.ports.clone());
    while committer.run_once(1000, Duration::from_secs(60)).await.unwrap().is_some() {}
    // The second batch is written, and its manifest waits 30 hours.
    write(&h.engine, &h.ports, &t, vec![objects[1].clone()]).await.unwrap();
    let mut waiting = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(waiting.len(), 1);
    let manifest = waited(&mut waiting[0], hours(30));
    let tick = serde_json::json!({"detail": {"sweep_older_than_hours": 24}});
    let env = |limit: Option<&str>| {
        let vars = [("FLOE_COMPACT_TABLES", Some("ev.waiting")), ("FLOE_MAX_COMMIT_AGE_HOURS", limit)];
        CompactorEnv::from_lookup(|k| vars.iter().find(|(n, _)| *n == k).and_then(|(_, v)| v.map(String::from)))
            .unwrap()
    };
    // Without a commit age limit, a 24-hour sweep is refused: nothing is deleted.
    let refused = handle_compactor(&env(None), &h.ports, None, tick.clone()).await.unwrap_err().to_string();
    assert!(
        refused.contains("sweep_older_than_hours 24") && refused.contains("FLOE_MAX_COMMIT_AGE_HOURS"),
        "{refused}"
    );
    for f in &manifest.files {
        assert!(h.ports.store.head(&f.path).await.is_ok(), "a refused sweep deletes nothing");
    }
    // With the limit the module sets, the sweep runs and deletes the waiting files...
    let runs = handle_compactor(&env(Some("12")), &h.ports, None, tick).await.unwrap();
    assert_eq!(runs[0].orphans_deleted, manifest.files.len(), "{runs:?}");
    for f in &manifest.files {
        assert!(h.ports.store.head(&f.path).await.is_err(), "{} swept", f.path);
    }
    // ... and the committer does not commit them: their sources go back to the writers.
    let out = committer.commit(&waiting).await;
    let requeue = match &out.results[0].1 {
        MessageResult::Overlap { requeue, .. } => requeue.clone(),
        other => panic!("files past the limit are written again, not committed: {other:?}"),
    };
    assert_eq!(requeue.iter().map(|s| s.uri.clone()).collect::<Vec<_>>(), vec![objects[1].uri.clone()]);
    h.ports.commit_queue.ack(&waiting[0].receipt).await.unwrap();
    write(&h.engine, &h.ports, &t, vec![objects[1].clone()]).await.unwrap();
    while committer.run_once(1000, Duration::from_secs(60)).await.unwrap().is_some() {}
    assert_eq!(
        counts(&contents(&h.ports, &cfg.table).await.event_ids()),
        counts(&source_event_ids(&objects)),
        "every key once, read from files that exist"
    );
}

/// Makes a manifest's message and its files look written `ago` before now; returns it.
fn waited(message: &mut floe::ports::Message, ago: Duration) -> floe::message::FileManifest {
    let mut manifest = floe::message::FileManifest::from_json(&message.body).unwrap();
    let then = std::time::SystemTime::now() - ago;
    manifest.written_ms = Some(then.duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64);
    message.body = manifest.to_json().unwrap();
    for f in &manifest.files {
        let file = std::fs::File::options().write(true).open(local::uri_to_path(&f.path).unwrap()).unwrap();
        file.set_modified(then).unwrap();
    }
    manifest
}

/// A batch whose files waited past the commit age limit goes back to the writers. If the
/// writer then finds those very files still there (no sweep has run yet), it must not hand the
/// committer their old age again: the sources would circle between writer and committer until
/// a sweep deleted the files. It writes the same bytes under fresh names, and the batch lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_found_too_old_to_commit_are_written_afresh_and_their_batch_lands() {
    let h = Harness::new();
    let cfg = events_table("ev.refreshed");
    let objects = h.events("in", 1, 100, 43, 0.0).await;
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &objects).await.unwrap();
    let t = WriterTable::from_metadata(&cfg.table, &state.metadata).unwrap();
    let hours = |n: u64| Duration::from_secs(n * 3600);
    let limited = floe::config::EngineConfig { max_commit_age: Some(hours(12)), ..h.engine.clone() };
    let mut committer = Committer::new(limited.clone(), h.ports.clone());
    write(&limited, &h.ports, &t, objects.clone()).await.unwrap();
    let mut waiting = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    let manifest = waited(&mut waiting[0], hours(30));
    let out = committer.commit(&waiting).await;
    assert!(matches!(&out.results[0].1, MessageResult::Overlap { .. }), "{:?}", out.results);
    h.ports.commit_queue.ack(&waiting[0].receipt).await.unwrap();
    // Written again: the same bytes, found 30 hours old, go to new names.
    write(&limited, &h.ports, &t, objects.clone()).await.unwrap();
    let again = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    let rewritten = floe::message::FileManifest::from_json(&again[0].body).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let age = now - rewritten.written_ms.unwrap();
    assert!(age < 600_000, "the manifest says its files were written {age} ms ago: the old files came back");
    let old: HashSet<&str> = manifest.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(rewritten.files.len(), manifest.files.len());
    for f in &rewritten.files {
        assert!(!old.contains(f.path.as_str()), "{} is a file found too old", f.path);
        assert_eq!(h.ports.store.head(&f.path).await.unwrap().size, f.file_size_in_bytes);
    }
    let out = committer.commit(&again).await;
    assert!(matches!(&out.results[0].1, MessageResult::Committed { .. }), "{:?}", out.results);
    h.ports.commit_queue.ack(&again[0].receipt).await.unwrap();
    assert_eq!(
        counts(&contents(&h.ports, &cfg.table).await.event_ids()),
        counts(&source_event_ids(&objects)),
        "every key once"
    );
    // Within half the limit, a file found is reused as before (a redelivered batch's own files).
    let fresh = h.events("fresh", 1, 50, 44, 0.0).await;
    write(&limited, &h.ports, &t, fresh.clone()).await.unwrap();
    write(&limited, &h.ports, &t, fresh.clone()).await.unwrap();
    let twice = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    let paths = |m: &str| {
        floe::message::FileManifest::from_json(m).unwrap().files.into_iter().map(|f| f.path).collect::<Vec<_>>()
    };
    assert_eq!(twice.len(), 2);
    assert_eq!(paths(&twice[0].body), paths(&twice[1].body));
}

/// Rewrites every manifest of the table's current snapshot as Iceberg 1.0 and older wrote them:
/// each entry `EXISTING`, with its data sequence number and no `file_sequence_number` (a field
/// those versions did not write). Returns the rewritten manifests' paths.
async fn age_manifests_as_iceberg_1_0(h: &Harness, cfg: &TableConfig) -> Vec<String> {
    use iceberg::io::{MemoryStorage, OutputFile, Storage};
    use iceberg::spec::ManifestWriterBuilder;
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let meta = &state.metadata;
    let list = h.ports.store.get(meta.current_snapshot().unwrap().manifest_list()).await.unwrap();
    let mut aged = vec![];
    for mf in ManifestList::parse_with_version(&list, meta.format_version()).unwrap().entries() {
        let manifest = Manifest::parse_avro(&h.ports.store.get(&mf.manifest_path).await.unwrap()).unwrap();
        let mem: Arc<dyn Storage> = Arc::new(MemoryStorage::new());
        let out = OutputFile::new(mem.clone(), mf.manifest_path.clone());
        let spec = meta.partition_spec_by_id(mf.partition_spec_id).unwrap().as_ref().clone();
        let mut w = ManifestWriterBuilder::new(out, Some(mf.added_snapshot_id), meta.current_schema().clone(), spec)
            .build_v2_data();
        for e in manifest.entries().iter().filter(|e| e.is_alive()) {
            let seq = e.sequence_number().unwrap_or(mf.sequence_number);
            let snap = e.snapshot_id().unwrap_or(mf.added_snapshot_id);
            w.add_existing_file(e.data_file().clone(), snap, seq, None).unwrap();
        }
        w.write_manifest_file().await.unwrap();
        let bytes = mem.read(&mf.manifest_path).await.unwrap();
        std::fs::write(local::uri_to_path(&mf.manifest_path).unwrap(), &bytes).unwrap();
        aged.push(mf.manifest_path.clone());
    }
    aged
}

/// A table another engine once wrote with Iceberg 1.0 or older: its manifests' `EXISTING`
/// entries carry no `file_sequence_number`. Merging those manifests (appends) and rewriting
/// their files (compaction) carries each entry over with the null kept, as Iceberg Java's
/// `ManifestWriter` does; before, every such commit failed ("should have sequence number") and
/// every append to the table retried into the dead-letter queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_entry_without_a_file_sequence_number_is_carried_over_with_the_null_kept() {
    let h = Harness::new();
    let cfg = maintained("ev.old_manifests", 50);
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let mut all = vec![];
    for round in 0..3u64 {
        let objects = h.events(&format!("a{round}"), 1, 80, 700 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.expect("ingest");
    }
    let aged = age_manifests_as_iceberg_1_0(&h, &cfg).await;
    assert!(!aged.is_empty());
    let aged_files: HashSet<String> = {
        let mut files = HashSet::new();
        for m in &aged {
            let manifest = Manifest::parse_avro(&h.ports.store.get(m).await.unwrap()).unwrap();
            assert!(manifest.entries().iter().all(|e| e.file_sequence_number.is_none()), "aged as 1.0 wrote it");
            files.extend(manifest.entries().iter().map(|e| e.file_path().to_string()));
        }
        files
    };
    // Appends until manifests merge (past 4), then a full compaction that removes the files.
    for round in 3..8u64 {
        let objects = h.events(&format!("a{round}"), 1, 80, 700 + round, 0.0).await;
        all.extend(source_event_ids(&objects));
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &opts).await.expect("append over 1.0 manifests");
    }
    let state = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let mut merged_with_null = 0;
    let list = h.ports.store.get(state.metadata.current_snapshot().unwrap().manifest_list()).await.unwrap();
    for mf in ManifestList::parse_with_version(&list, state.metadata.format_version()).unwrap().entries() {
        assert!(!aged.contains(&mf.manifest_path), "the aged manifests were merged into new ones");
        let manifest = Manifest::parse_avro(&h.ports.store.get(&mf.manifest_path).await.unwrap()).unwrap();
        for e in manifest.entries().iter().filter(|e| aged_files.contains(e.file_path())) {
            assert_eq!(e.file_sequence_number, None, "the null is kept, never invented");
            merged_with_null += 1;
        }
    }
    assert_eq!(merged_with_null, aged_files.len());
    let full = CompactOptions { full: true, parallelism: 2, ..Default::default() };
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.expect("compaction");
    let c = contents(&h.ports, &cfg.table).await;
    assert!(c.files.iter().all(|(p, _, _)| !aged_files.contains(p)), "the old files were compacted away");
    assert_eq!(counts(&c.event_ids()), counts(&all), "every row once");
}
