//! A randomized soak, seeded and bounded in time (`FLOE_SOAK_SECS`, default 45): a few hundred
//! small files, some bad, ingested over and over in random subsets with duplicates, random
//! batch shapes, a random crash point armed in some rounds, transient faults in every port,
//! a rival process ingesting an overlapping subset at the same time in some rounds (two
//! committers, overlapping writer batches), a compactor running at the same time in some rounds,
//! and commit messages delivered twice. Then clean runs to quiescence, a full compaction, and
//! the exact check.
//! The seed is printed; `FLOE_TEST_SEED=<seed>` replays the same choices.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use floe::adapters::local;
use floe::config::EngineConfig;
use floe::fault::{FaultPoint, Faults};
use floe::pipeline::compact::CompactOptions;
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::ports::{ObjectMeta, Ports, RetryPolicy};
use floe::sample::{self, Corruption};
use floe::testing::flaky::{Dice, flaky};
use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::{Rng, SeedableRng};

use crate::common::{Harness, events_table, source_event_ids};
use crate::crash::{quiet_crashes, seed, verify};

const LEASE: Duration = Duration::from_millis(500);

fn engine() -> EngineConfig {
    EngineConfig { lock_lease: LEASE, ..EngineConfig::default() }
}

/// Re-sends copies of up to `n` commit messages (a queue delivering twice) and releases the
/// originals.
async fn duplicate_some(ports: &Ports, n: usize) {
    let Ok(msgs) = ports.commit_queue.receive(n, Duration::from_secs(5)).await else { return };
    for m in msgs {
        let _ = ports.commit_queue.send(m.body.clone()).await;
        let _ = ports.commit_queue.release(&m.receipt).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn randomized_soak_of_crashes_duplicates_and_transient_faults() {
    quiet_crashes();
    let seed = seed("soak");
    let budget = Duration::from_secs(std::env::var("FLOE_SOAK_SECS").ok().and_then(|s| s.parse().ok()).unwrap_or(45));
    let mut rng = StdRng::seed_from_u64(seed);
    let h = Harness::new();
    let good = h.events("in", 240, 25, seed, 0.0).await;
    let expected = source_event_ids(&good);
    let template = std::fs::read(local::uri_to_path(&good[0].uri).expect("path")).expect("read");
    let mut all: Vec<ObjectMeta> = good.clone();
    let mut bad = BTreeSet::new();
    for i in 0..12 {
        let how = *Corruption::ALL.choose(&mut rng).expect("kinds");
        let m = h.put_file("in", &format!("bad-{i:02}-{}.avro", how.name()), &sample::corrupt(&template, how)).await;
        bad.insert(m.uri.clone());
        all.push(m);
    }
    let table = events_table("soak.events");
    let dir = h.dir.path().join("wh");
    let started = Instant::now();
    let (mut rounds, mut crashed) = (0, 0);
    while started.elapsed() < budget {
        rounds += 1;
        // A random subset, some objects twice, in random order.
        let mut pick: Vec<ObjectMeta> = all.iter().filter(|_| rng.random_bool(0.3)).cloned().collect();
        let dups: Vec<ObjectMeta> = pick.iter().filter(|_| rng.random_bool(0.1)).cloned().collect();
        pick.extend(dups);
        pick.shuffle(&mut rng);
        let faults = if rng.random_bool(0.5) {
            Faults::crash_at(*FaultPoint::ALL.choose(&mut rng).expect("points"), rng.random_range(1..=3))
        } else {
            Faults::default()
        };
        let dice = Dice::new(rng.random_range(0.0..0.15), rng.random());
        let policy = RetryPolicy {
            attempts: 12,
            base_backoff: Duration::from_millis(1),
            max_backoff: Duration::from_millis(20),
        };
        let ports = flaky(local::raw_ports(&dir).expect("ports"), &dice).retrying(policy).with_faults(faults);
        let opts = IngestOptions {
            writers: rng.random_range(1..=3),
            batch_objects: rng.random_range(1..=12),
            visibility: LEASE,
            ..IngestOptions::default()
        };
        // Sometimes a second process at the same time, on an overlapping subset: two
        // committers contend for the lock (a short lease makes zombies), writers overlap.
        let rival = rng.random_bool(0.3).then(|| {
            let mut other: Vec<ObjectMeta> = all.iter().filter(|_| rng.random_bool(0.3)).cloned().collect();
            other.shuffle(&mut rng);
            let dice = Dice::new(rng.random_range(0.0..0.15), rng.random());
            let ports = flaky(local::raw_ports(&dir).expect("ports"), &dice).retrying(policy);
            let (t, wh) = (table.clone(), h.warehouse.clone());
            let opts = IngestOptions { writers: 1, batch_objects: 5, visibility: LEASE, ..IngestOptions::default() };
            tokio::spawn(async move { ingest(&engine(), &ports, &t, &wh, other, &opts).await })
        });
        // Sometimes the compactor too, on the same (faulty) ports, while ingest runs.
        let compactor = rng.random_bool(0.4).then(|| {
            let (t, p) = (table.table.clone(), ports.clone());
            let opts =
                CompactOptions { min_files: rng.random_range(2..=4), parallelism: 2, ..CompactOptions::default() };
            tokio::spawn(async move { compact_and_commit(&engine(), &p, &t, &opts, LEASE).await })
        });
        let (t, wh, p) = (table.clone(), h.warehouse.clone(), ports.clone());
        let run = tokio::spawn(async move { ingest(&engine(), &p, &t, &wh, pick, &opts).await }).await;
        crashed += usize::from(!matches!(run, Ok(Ok(_))));
        if let Some(compactor) = compactor {
            crashed += usize::from(!matches!(compactor.await, Ok(Ok(_))));
        }
        if let Some(rival) = rival {
            crashed += usize::from(!matches!(rival.await, Ok(Ok(_))));
        }
        if rng.random_bool(0.4) {
            duplicate_some(&ports, rng.random_range(1..=4)).await;
        }
        tokio::time::sleep(LEASE + Duration::from_millis(50)).await; // leases and visibilities lapse
    }
    // Quiescence: clean runs over everything until one has nothing left to do.
    let clean = local::ports(&dir).expect("ports");
    for _ in 0..5 {
        let r = ingest(&engine(), &clean, &table, &h.warehouse, all.clone(), &IngestOptions::default())
            .await
            .unwrap_or_else(|e| panic!("seed {seed}: the clean run failed: {e}"));
        if r.snapshots == 0 && r.rows_committed == 0 {
            break;
        }
        tokio::time::sleep(LEASE + Duration::from_millis(50)).await;
    }
    let full = CompactOptions { full: true, ..CompactOptions::default() };
    compact_and_commit(&engine(), &clean, &table.table, &full, LEASE)
        .await
        .unwrap_or_else(|e| panic!("seed {seed}: the final compaction failed: {e}"));
    eprintln!("soak: {rounds} rounds, {crashed} ended by a crash or an exhausted retry, seed {seed}");
    let v = verify(&clean, &table.table, &expected, &bad).await;
    assert!(v.ok(), "seed {seed}: {}", v.detail);
}
