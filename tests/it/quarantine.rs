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
