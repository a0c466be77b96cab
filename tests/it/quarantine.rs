//! The quarantine as an operator sees it: `outstanding` lists what is still refused, `replay`
//! lands what was fixed and keeps what is still bad.

use floe::pipeline::ingest::{IngestOptions, ingest};
use floe::pipeline::quarantine::{outstanding, replay};
use floe::sample::{self, Corruption};

use crate::common::*;

#[tokio::test]
async fn replay_lands_what_was_fixed_and_keeps_what_is_still_bad() {
    let mut h = Harness::new();
    let good = h.events("in", 3, 100, 71, 0.0).await;
    let big = h.events("big", 1, 400, 72, 0.0).await;
    let template = std::fs::read(floe::adapters::local::uri_to_path(&good[0].uri).unwrap()).unwrap();
    let broken = h.put_file("in", "broken.avro", &sample::corrupt(&template, Corruption::BadSync)).await;
    let still_bad = h.put_file("in", "still-bad.avro", &sample::corrupt(&template, Corruption::BadMagic)).await;
    let cfg = events_table("ops.events");

    // A limit too tight for one object, and two corrupt ones.
    let default_engine = h.engine.clone();
    h.engine.max_object_bytes = big[0].size - 1;
    let mut all = good.clone();
    all.extend([big[0].clone(), broken.clone(), still_bad.clone()]);
    let opts = IngestOptions::default();
    let first = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, all, &opts).await.unwrap();
    assert_eq!(first.quarantined.len(), 3);
    assert_eq!(outstanding(h.ports.ledger.as_ref()).await.unwrap().len(), 3);

    // The operator raises the limit and re-uploads a good copy over the broken object.
    h.engine = default_engine;
    let fixed = h.events("fixed", 1, 100, 73, 0.0).await;
    std::fs::copy(
        floe::adapters::local::uri_to_path(&fixed[0].uri).unwrap(),
        floe::adapters::local::uri_to_path(&broken.uri).unwrap(),
    )
    .unwrap();
    let records = outstanding(h.ports.ledger.as_ref()).await.unwrap();
    let router = floe::route::Router::new(None, "default.events".parse().unwrap());
    let r = replay(&h.engine, &h.ports, &h.warehouse, &records, None, &router, &opts).await.unwrap();
    assert_eq!(r.landed.len(), 2, "{r:?}");
    assert_eq!(r.refused.len(), 1, "{r:?}");
    assert!(r.refused[0].0.ends_with("still-bad.avro"));
    let left = outstanding(h.ports.ledger.as_ref()).await.unwrap();
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].uri, still_bad.uri);

    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    let mut want = source_event_ids(&good);
    want.extend(source_event_ids(&big));
    want.extend(source_event_ids(&fixed)); // the fixed copy's rows, read from its new place
    assert_eq!(ids.len(), want.len());
    assert!(counts(&ids).values().all(|c| *c == 1));

    // Replaying again changes nothing.
    let again = replay(&h.engine, &h.ports, &h.warehouse, &left, None, &router, &opts).await.unwrap();
    assert!(again.landed.is_empty());
    assert_eq!(contents(&h.ports, &cfg.table).await.rows(), want.len());
}

/// With a ledger retention the ledger forgets a committed source after a while, so a writer must
/// not trust it about a source older than that: such a source is refused unread (`too-old`), and
/// so is one whose creation time is unknown. One it still remembers as committed is skipped, as
/// always, and a young one lands.
#[tokio::test]
async fn with_a_ledger_retention_a_source_it_may_have_forgotten_is_refused_unread() {
    let mut h = Harness::new();
    let objects = h.events("in", 4, 50, 81, 0.0).await;
    let cfg = events_table("ops.aged");
    let opts = IngestOptions::default();
    let first = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, vec![objects[0].clone()], &opts).await.unwrap();
    assert_eq!(first.snapshots, 1);

    h.engine.ledger_retention = Some(std::time::Duration::from_secs(30 * 86_400));
    let day = 86_400_000;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let aged = |i: usize, at: Option<i64>| floe::ports::ObjectMeta { modified_ms: at, ..objects[i].clone() };
    let batch = vec![
        aged(0, Some(now - 40 * day)), // committed: the ledger still says so
        aged(1, Some(now - 16 * day)), // past 30 days less the 15-day margin
        aged(2, None),                 // a notification without eventTime
        aged(3, Some(now - 14 * day)), // a notification's longest life: read
    ];
    let r = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, batch, &opts).await.unwrap();
    assert_eq!(r.skipped, 1, "{r:?}");
    let mut refused: Vec<(String, String, String)> =
        r.quarantined.iter().map(|(uri, why)| (uri.clone(), why.kind.clone(), why.reason.clone())).collect();
    refused.sort();
    assert_eq!(refused.len(), 2, "{r:?}");
    assert_eq!((refused[0].0.as_str(), refused[0].1.as_str()), (objects[1].uri.as_str(), "too-old"));
    assert!(refused[0].2.contains("16.0 days ago") && refused[0].2.contains("last 15 days"), "{}", refused[0].2);
    assert_eq!((refused[1].0.as_str(), refused[1].1.as_str()), (objects[2].uri.as_str(), "too-old"));
    assert!(refused[1].2.contains("creation time is unknown"), "{}", refused[1].2);
    assert_eq!(r.bytes_in, objects[3].size, "only the young object was read");
    let outstanding = outstanding(h.ports.ledger.as_ref()).await.unwrap();
    assert_eq!(outstanding.iter().filter(|q| q.rejection.kind == "too-old").count(), 2, "{outstanding:?}");

    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    let mut want = source_event_ids(&objects[..1]);
    want.extend(source_event_ids(&objects[3..]));
    assert_eq!(counts(&ids), counts(&want), "the committed and the young object, once each");
}
