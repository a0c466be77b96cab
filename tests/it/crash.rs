//! The crash-point suite, embedded: for every named fault point (and its first and second
//! hit), kill the role there (in a life of ingest, compaction, ingest), restart, let the commit queue redeliver, run to quiescence, and
//! check that the table holds every good row exactly once, no data file twice, and that the
//! quarantine holds exactly the bad objects. Prints a table of points × results.

use std::collections::{BTreeSet, HashSet};
use std::sync::Once;
use std::time::Duration;

use floe::TableIdent;
use floe::adapters::local;
use floe::config::{EngineConfig, TableConfig};
use floe::fault::{FaultPoint, Faults, crash_point};
use floe::pipeline::compact::CompactOptions;
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::ports::{ObjectMeta, Ports};
use floe::sample::{self, Corruption};

use crate::common::{Harness, contents, events_table, source_event_ids};

/// Crash panics are the expected outcome here: keep them out of the test output.
pub fn quiet_crashes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if crash_point(info.payload()).is_none() {
                default(info);
            }
        }));
    });
}

/// What a table must hold after any run of failures, and what it does hold.
#[derive(Debug, Default)]
pub struct Verdict {
    pub rows_ok: bool,
    pub files_ok: bool,
    pub quarantine_ok: bool,
    pub detail: String,
}

impl Verdict {
    pub fn ok(&self) -> bool {
        self.rows_ok && self.files_ok && self.quarantine_ok
    }
}

/// Checks a table against the source: the event ids equal `expected` (each exactly once), no
/// data file is registered twice, and the quarantined URIs are exactly `bad` (overlaps landed
/// since aside).
pub async fn verify(ports: &Ports, table: &TableIdent, expected: &[String], bad: &BTreeSet<String>) -> Verdict {
    let c = contents(ports, table).await;
    let got = c.event_ids();
    let distinct: HashSet<&String> = got.iter().collect();
    let want: HashSet<&String> = expected.iter().collect();
    let paths: Vec<&String> = c.files.iter().map(|(p, _, _)| p).collect();
    let unique_paths: HashSet<&&String> = paths.iter().collect();
    // Sources of overlapping manifests a run was not given are quarantined as `overlap` until a
    // run over them lands them (the soak's rival runs do this); once committed they are
    // resolved, as `floe quarantine list` shows. Every other kind must be exactly `bad`.
    let open: HashSet<String> = floe::pipeline::quarantine::outstanding(ports.ledger.as_ref())
        .await
        .expect("outstanding")
        .into_iter()
        .map(|q| q.source_id)
        .collect();
    let quarantined: BTreeSet<String> = ports
        .ledger
        .quarantined()
        .await
        .expect("quarantined")
        .into_iter()
        .filter(|q| q.rejection.kind != floe::RejectionKind::Overlap || open.contains(&q.source_id))
        .map(|q| q.uri)
        .collect();
    let v = Verdict {
        rows_ok: got.len() == expected.len() && distinct == want,
        files_ok: unique_paths.len() == paths.len(),
        quarantine_ok: &quarantined == bad,
        detail: format!(
            "rows {} (distinct {}, want {}), files {} (distinct {}), quarantined {:?}",
            got.len(),
            distinct.len(),
            expected.len(),
            paths.len(),
            unique_paths.len(),
            quarantined
        ),
    };
    if !v.ok() {
        eprintln!("{table}: {}", v.detail);
    }
    v
}

/// One row of the printed table.
pub struct Row {
    pub point: FaultPoint,
    pub nth: u32,
    pub fired: bool,
    pub verdict: Verdict,
}

pub fn print_table(title: &str, rows: &[Row]) {
    eprintln!("\n{title}");
    eprintln!("{:<34} {:>3} {:<6} {:<5} {:<5} {:<10}", "fault point", "hit", "fired", "rows", "files", "quarantine");
    let mark = |b: bool| if b { "ok" } else { "FAIL" };
    for r in rows {
        eprintln!(
            "{:<34} {:>3} {:<6} {:<5} {:<5} {:<10}",
            r.point.name(),
            r.nth,
            if r.fired { "yes" } else { "no" },
            mark(r.verdict.rows_ok),
            mark(r.verdict.files_ok),
            mark(r.verdict.quarantine_ok)
        );
    }
}

/// Short leases and visibility timeouts, so a restart after a crash can go on at once.
fn engine() -> EngineConfig {
    EngineConfig { lock_lease: Duration::from_millis(700), ..EngineConfig::default() }
}

fn options() -> IngestOptions {
    IngestOptions { writers: 2, batch_objects: 3, visibility: Duration::from_millis(700), ..IngestOptions::default() }
}

/// Nine good files and three bad ones, in one folder.
async fn inputs(h: &Harness) -> (Vec<ObjectMeta>, Vec<String>, BTreeSet<String>) {
    let good = h.events("in", 9, 150, 4242, 0.0).await;
    let expected = source_event_ids(&good);
    let first = std::fs::read(local::uri_to_path(&good[0].uri).expect("path")).expect("read");
    let mut all = good;
    let mut bad = BTreeSet::new();
    for (name, c) in [("z-trunc.avro", Corruption::Truncated), ("z-magic.avro", Corruption::BadMagic)] {
        let m = h.put_file("in", name, &sample::corrupt(&first, c)).await;
        bad.insert(m.uri.clone());
        all.insert(3, m);
    }
    let empty = h.put_file("in", "z-empty.avro", b"").await;
    bad.insert(empty.uri.clone());
    all.push(empty);
    (all, expected, bad)
}

fn compaction() -> CompactOptions {
    CompactOptions { min_files: 2, parallelism: 2, ..CompactOptions::default() }
}

/// The life of the table under test: half the objects ingested, a compaction, the other half.
async fn life(ports: &Ports, cfg: &TableConfig, warehouse: &str, objects: &[ObjectMeta]) -> floe::Result<()> {
    let (a, b) = objects.split_at(objects.len() / 2);
    ingest(&engine(), ports, cfg, warehouse, a.to_vec(), &options()).await?;
    compact_and_commit(&engine(), ports, &cfg.table, &compaction(), options().visibility).await?;
    ingest(&engine(), ports, cfg, warehouse, b.to_vec(), &options()).await?;
    Ok(())
}

/// Runs the table's life (ingest, compact, ingest) with `faults` armed, then "restarts" (fresh
/// ports on the same warehouse, no faults) and lives it again, compacting fully at the end.
async fn crash_and_recover(point: FaultPoint, nth: u32) -> Row {
    let h = Harness::new();
    let (objects, expected, bad) = inputs(&h).await;
    let table_cfg = events_table("crash.events");
    let faults = Faults::crash_at(point, nth);
    let ports = h.ports.clone().with_faults(faults.clone());
    let first = {
        let (ports, cfg, wh, objs) = (ports, table_cfg.clone(), h.warehouse.clone(), objects.clone());
        tokio::spawn(async move { life(&ports, &cfg, &wh, &objs).await }).await
    };
    let fired = faults.hits(point) >= nth;
    match (&first, fired) {
        (Ok(Ok(_)), true) => panic!("{point} #{nth} fired but the run reported success"),
        (Ok(Ok(_)), false) | (Ok(Err(_)), true) | (Err(_), true) => {}
        (Ok(Err(e)), false) => panic!("{point} #{nth}: the run failed without a crash: {e}"),
        (Err(e), false) => panic!("{point} #{nth}: the run died without a crash: {e}"),
    }
    // The restart: leases and visibility timeouts of the dead run expire first.
    tokio::time::sleep(Duration::from_millis(800)).await;
    let restarted = local::ports(&h.dir.path().join("wh")).expect("ports");
    life(&restarted, &table_cfg, &h.warehouse, &objects).await.expect("recovery run");
    let full = CompactOptions { full: true, ..compaction() };
    compact_and_commit(&engine(), &restarted, &table_cfg.table, &full, options().visibility).await.expect("compaction");
    let verdict = verify(&restarted, &table_cfg.table, &expected, &bad).await;
    Row { point, nth, fired, verdict }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_fault_point_embedded_loses_and_doubles_nothing() {
    quiet_crashes();
    let mut rows = vec![];
    for point in FaultPoint::ALL {
        for nth in [1, 2] {
            rows.push(crash_and_recover(point, nth).await);
        }
    }
    print_table("crash-point suite (embedded): kill at the point, restart, check", &rows);
    for point in FaultPoint::ALL {
        assert!(rows.iter().any(|r| r.point == point && r.fired), "{point} was never reached");
    }
    let failed: Vec<String> = rows
        .iter()
        .filter(|r| !r.verdict.ok())
        .map(|r| format!("{} #{}: {}", r.point, r.nth, r.verdict.detail))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
}

/// Four event files written as two writer batches, their manifests waiting on the commit
/// queue; returns every event id they hold and the table's config.
async fn two_batches_waiting(h: &Harness, table: &str, seed: u64) -> (Vec<String>, floe::config::TableConfig) {
    use floe::pipeline::create::ensure_table;
    use floe::pipeline::write::write;
    use floe::table::WriterTable;

    let objects = h.events("in", 4, 120, seed, 0.0).await;
    let cfg = events_table(table);
    let (state, _) = ensure_table(&h.ports, &h.engine, &cfg, &h.warehouse, &objects).await.expect("table");
    let wt = WriterTable::from_metadata(&cfg.table, &state.metadata).expect("writer table");
    for pair in objects.chunks(2) {
        write(&h.engine, &h.ports, &wt, pair.to_vec()).await.expect("write");
    }
    (source_event_ids(&objects), cfg)
}

/// Two committers: the first pauses mid-commit past its lease, the second takes the lock and
/// commits the same messages, then the first wakes. Paused before its lease check, it stops
/// there; paused after it (just before the swap), the swap is the fence. Either way the table
/// holds every row once and nothing of the zombie's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_committer_past_its_lease_is_fenced() {
    use std::sync::Arc;

    use floe::pipeline::commit::{Committer, MessageResult};
    use floe::table::load_table;
    use tokio::sync::Notify;

    for point in [FaultPoint::CommitterAfterManifestWrite, FaultPoint::CommitterAfterMetadataWrite] {
        let h = Harness::new();
        let (expected, cfg) = two_batches_waiting(&h, "zombie.events", 99).await;
        let lease = Duration::from_millis(400);
        let engine = EngineConfig { lock_lease: lease, ..EngineConfig::default() };
        let (reached, resume) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
        let zombie_ports = h.ports.clone().with_faults(Faults::pause_at(point, 1, reached.clone(), resume.clone()));
        let mut zombie = Committer::new(engine.clone(), zombie_ports);
        let zombie = tokio::spawn(async move { zombie.run_once(10, lease).await });
        reached.notified().await;
        tokio::time::sleep(lease + Duration::from_millis(200)).await; // lease and visibility expire

        let mut second = Committer::new(engine.clone(), h.ports.clone());
        let out = second.run_once(10, Duration::from_secs(30)).await.expect("second").expect("messages");
        assert_eq!(out.snapshots.len(), 1, "{point}: the second committer commits");
        let before = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();

        resume.notify_one();
        let z = zombie.await.expect("zombie task").expect("zombie run").expect("it had messages");
        assert!(z.snapshots.is_empty(), "{point}: the zombie committed nothing: {:?}", z.results);
        assert!(
            z.results.iter().all(|(_, r)| matches!(r, MessageResult::Retry { .. } | MessageResult::Duplicate)),
            "{point}: {:?}",
            z.results
        );
        let after = load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
        assert_eq!(before.pointer, after.pointer, "{point}: the zombie left the pointer alone");
        // No metadata.json of the zombie's lingers next to the table's own.
        let meta_dir = format!("{}/metadata", after.metadata.location().trim_end_matches('/'));
        let known: HashSet<String> = after
            .metadata
            .metadata_log()
            .iter()
            .map(|l| l.metadata_file.clone())
            .chain([after.pointer.metadata_location.clone()])
            .collect();
        for m in h.ports.store.list(&meta_dir).await.expect("list") {
            if m.uri.ends_with(".metadata.json") {
                assert!(known.contains(&m.uri), "{point}: stray metadata {}", m.uri);
            }
        }
        // Whatever the zombie handed back is a duplicate now.
        tokio::time::sleep(lease + Duration::from_millis(100)).await;
        while second.run_once(10, Duration::from_secs(30)).await.expect("drain").is_some() {}
        let v = verify(&h.ports, &cfg.table, &expected, &BTreeSet::new()).await;
        assert!(v.ok(), "{point}: {}", v.detail);
    }
}

/// Fencing that does not lean on the lock: a zombie paused after writing its metadata, a second
/// committer that took the expired lock and marked the same sources pending under its own
/// snapshot, paused at the same point; the zombie swaps and dies before recording the commit;
/// the second resumes, loses its swap and re-plans. The zombie's pending mark must still be
/// visible, or the second commits every row again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_zombie_that_swaps_after_a_rival_marked_its_sources_doubles_nothing() {
    use std::sync::Arc;

    use floe::pipeline::commit::{Committer, MessageResult};
    use tokio::sync::Notify;

    quiet_crashes();
    let h = Harness::new();
    let (expected, cfg) = two_batches_waiting(&h, "fence.events", 77).await;
    let lease = Duration::from_millis(400);
    let engine = EngineConfig { lock_lease: lease, ..EngineConfig::default() };
    let at = FaultPoint::CommitterAfterMetadataWrite;
    let pause = || (Arc::new(Notify::new()), Arc::new(Notify::new()));

    let ((z_reached, z_resume), (s_reached, s_resume)) = (pause(), pause());
    let zombie_faults = Faults::pause_at(at, 1, z_reached.clone(), z_resume.clone())
        .then_crash_at(FaultPoint::CommitterAfterPointerSwap, 1);
    let mut zombie = Committer::new(engine.clone(), h.ports.clone().with_faults(zombie_faults));
    let zombie = tokio::spawn(async move { zombie.run_once(10, lease).await });
    z_reached.notified().await;
    tokio::time::sleep(lease + Duration::from_millis(200)).await; // lease and visibility expire

    let second_ports = h.ports.clone().with_faults(Faults::pause_at(at, 1, s_reached.clone(), s_resume.clone()));
    let mut second = Committer::new(engine.clone(), second_ports);
    let second = tokio::spawn(async move {
        let out = second.run_once(10, Duration::from_secs(30)).await;
        (second, out)
    });
    s_reached.notified().await;

    z_resume.notify_one();
    let z = zombie.await;
    assert!(z.is_err_and(|e| e.is_panic()), "the zombie swapped, then died before recording it");

    s_resume.notify_one();
    let (mut second, out) = second.await.expect("second committer");
    let out = out.expect("second run").expect("it had messages");
    assert!(out.snapshots.is_empty(), "the second committer found the zombie's commit: {:?}", out.results);
    assert!(out.results.iter().all(|(_, r)| matches!(r, MessageResult::Duplicate)), "{:?}", out.results);
    tokio::time::sleep(lease + Duration::from_millis(100)).await;
    while second.run_once(10, Duration::from_secs(30)).await.expect("drain").is_some() {}
    let v = verify(&h.ports, &cfg.table, &expected, &BTreeSet::new()).await;
    assert!(v.ok(), "{}", v.detail);
}

/// A seed from `FLOE_TEST_SEED`, or a fresh one; printed so a failure can be replayed.
pub fn seed(test: &str) -> u64 {
    let s = std::env::var("FLOE_TEST_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or_else(rand::random);
    eprintln!("{test}: seed {s} (rerun with FLOE_TEST_SEED={s})");
    s
}

/// Every port fails 20% of its calls, half before reaching the backend and half after it took
/// effect (the answer lost). Retries with backoff carry the run through; nothing is lost or
/// doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_faults_in_every_port_lose_and_double_nothing() {
    use floe::ports::RetryPolicy;
    use floe::testing::flaky::{Dice, flaky};

    let seed = seed("transient faults");
    let h = Harness::new();
    let (objects, expected, bad) = inputs(&h).await;
    let table_cfg = events_table("flaky.events");
    let dice = Dice::new(0.20, seed);
    let policy =
        RetryPolicy { attempts: 12, base_backoff: Duration::from_millis(2), max_backoff: Duration::from_millis(50) };
    let ports = flaky(local::raw_ports(&h.dir.path().join("wh")).expect("ports"), &dice).retrying(policy);
    let first = ingest(&engine(), &ports, &table_cfg, &h.warehouse, objects.clone(), &options()).await;
    assert!(first.is_ok(), "seed {seed}: the run finishes despite the faults: {first:?}");
    // A receive whose answer was lost hides its messages for a visibility timeout: later runs
    // (with the same faults) pick them up, until one finds nothing left to do.
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(800)).await;
        let r = ingest(&engine(), &ports, &table_cfg, &h.warehouse, objects.clone(), &options())
            .await
            .unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        if r.snapshots == 0 && r.rows_committed == 0 {
            break;
        }
    }
    let (before, after) = dice.injected();
    eprintln!("transient faults: {before} before the call, {after} after it took effect");
    assert!(before + after > 10, "seed {seed}: the dice actually bit ({before}+{after})");
    let v = verify(&h.ports, &table_cfg.table, &expected, &bad).await;
    assert!(v.ok(), "seed {seed}: {}", v.detail);
}
