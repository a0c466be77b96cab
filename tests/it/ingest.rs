//! Embedded ingest end to end: partitioning, sorting, dedup, idempotency, quarantine.

use std::collections::HashSet;

use arrow_array::{Array, StringArray, TimestampMicrosecondArray};
use floe::pipeline::ingest::{IngestOptions, ingest};
use floe::sample::{self, Corruption};

use crate::common::*;

#[tokio::test]
async fn partitions_sorts_and_drops_duplicates() {
    let h = Harness::new();
    let inputs = h.events("in", 6, 400, 3, 0.05).await;
    let cfg = events_table("web.events");
    let report =
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, inputs.clone(), &IngestOptions::default()).await.unwrap();
    assert!(report.created);
    assert!(report.quarantined.is_empty());
    let source = source_event_ids(&inputs);
    let distinct: HashSet<&String> = source.iter().collect();
    assert!(distinct.len() < source.len(), "the input has duplicates");
    let t = contents(&h.ports, &cfg.table).await;
    let ids = t.event_ids();
    assert_eq!(ids.len(), distinct.len(), "one row per event id");
    assert_eq!(ids.iter().collect::<HashSet<_>>(), distinct, "exactly the source's ids");
    assert_eq!(report.rows_committed as usize, distinct.len());
    assert_eq!(report.duplicates as usize, source.len() - distinct.len());
    for (path, part, batch) in &t.files {
        let tenants = batch.column_by_name("tenant_id").unwrap().as_any().downcast_ref::<StringArray>().unwrap();
        let times =
            batch.column_by_name("event_time").unwrap().as_any().downcast_ref::<TimestampMicrosecondArray>().unwrap();
        let tenant = part[1].as_ref().map(|l| format!("{l:?}")).unwrap();
        let day = match part[0].as_ref().unwrap() {
            iceberg::spec::Literal::Primitive(iceberg::spec::PrimitiveLiteral::Int(d)) => *d as i64,
            other => panic!("day partition is {other:?}"),
        };
        for i in 0..batch.num_rows() {
            assert!(tenant.contains(tenants.value(i)), "{path}: row {i} is in its tenant partition");
            assert_eq!(times.value(i).div_euclid(86_400_000_000), day, "{path}: row {i} is in its day");
            if i > 0 {
                assert!(times.value(i - 1) <= times.value(i), "{path}: sorted by event_time within the tenant");
            }
        }
        assert!(path.contains("tenant_id=") && path.contains("event_time_day="), "hive-style path {path}");
    }
}

#[tokio::test]
async fn reingest_commits_nothing_new() {
    let h = Harness::new();
    let inputs = h.events("in", 4, 200, 5, 0.0).await;
    let cfg = events_table("web.events");
    let opts = IngestOptions::default();
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, inputs.clone(), &opts).await.unwrap();
    let before = contents(&h.ports, &cfg.table).await;
    let again = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, inputs, &opts).await.unwrap();
    assert_eq!(again.skipped, 4);
    assert_eq!(again.rows_committed, 0);
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.rows(), before.rows());
    assert_eq!(after.snapshots, before.snapshots, "no empty snapshot either");
}

#[tokio::test]
async fn bad_files_are_quarantined_and_every_good_file_lands() {
    let h = Harness::new();
    let good = h.events("in", 5, 300, 9, 0.0).await;
    let template = std::fs::read(floe::adapters::local::uri_to_path(&good[0].uri).unwrap()).unwrap();
    let mut all = good.clone();
    let mut bad = HashSet::new();
    for how in Corruption::ALL {
        let m = h.put_file("in", &format!("bad-{}.avro", how.name()), &sample::corrupt(&template, how)).await;
        bad.insert(m.uri.clone());
        all.push(m);
    }
    let sink =
        h.put_file("in", "other-schema.avro", &sample::kitchen_sink(10, 1, apache_avro::Codec::Null).unwrap()).await;
    bad.insert(sink.uri.clone());
    all.push(sink);
    let cfg = events_table("web.events");
    let report = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, all, &IngestOptions::default()).await.unwrap();
    let quarantined: HashSet<String> = report.quarantined.iter().map(|(u, _)| u.clone()).collect();
    assert_eq!(quarantined, bad, "exactly the bad files are quarantined");
    for (uri, r) in &report.quarantined {
        assert!(!r.reason.is_empty(), "{uri} has a reason");
        if uri.ends_with("other-schema.avro") {
            assert_eq!(r.kind, floe::RejectionKind::Schema);
        }
        if uri.ends_with("bad-empty.avro") {
            assert_eq!(r.kind, floe::RejectionKind::Empty);
        }
    }
    let t = contents(&h.ports, &cfg.table).await;
    assert_eq!(t.rows(), source_event_ids(&good).len(), "every good row landed");
    let recorded = h.ports.ledger.quarantined().await.unwrap();
    assert_eq!(recorded.iter().map(|r| r.uri.clone()).collect::<HashSet<_>>(), bad);
}

#[tokio::test]
async fn settings_that_contradict_the_table_are_refused() {
    let h = Harness::new();
    let inputs = h.events("in", 1, 50, 1, 0.0).await;
    let cfg = events_table("web.events");
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, inputs.clone(), &IngestOptions::default()).await.unwrap();
    let other = cfg.clone().with_partition_by("hour(event_time)").unwrap();
    let err =
        ingest(&h.engine, &h.ports, &other, &h.warehouse, inputs.clone(), &IngestOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("partitioning"), "{err}");
    let bad_col = floe::config::TableConfig::new("web.other".parse().unwrap()).with_sort_by("no_such_column").unwrap();
    let err = ingest(&h.engine, &h.ports, &bad_col, &h.warehouse, inputs, &IngestOptions::default()).await.unwrap_err();
    assert!(err.to_string().contains("no_such_column"), "{err}");
}

#[tokio::test]
async fn small_batches_make_several_snapshots_with_exact_rows() {
    let h = Harness::new();
    let inputs = h.events("in", 9, 100, 11, 0.0).await;
    let cfg = events_table("web.events");
    let opts = IngestOptions { batch_objects: 2, writers: 3, ..Default::default() };
    let report = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, inputs.clone(), &opts).await.unwrap();
    assert!(report.snapshots >= 1);
    let t = contents(&h.ports, &cfg.table).await;
    let ids = t.event_ids();
    assert_eq!(ids.len(), 900);
    assert!(counts(&ids).values().all(|c| *c == 1), "no row twice");
    let paths: HashSet<&String> = t.files.iter().map(|(p, _, _)| p).collect();
    assert_eq!(paths.len(), t.files.len(), "no data file registered twice");
}

/// A small file whose one value inflates to 64 MiB is refused while inflating, by whichever
/// limit is lower: what is left of the object's decoded budget, or the per-block limit.
#[tokio::test]
async fn a_decompression_bomb_is_refused_by_the_size_limits() {
    let schema =
        apache_avro::Schema::parse_str(r#"{"type":"record","name":"B","fields":[{"name":"blob","type":"bytes"}]}"#)
            .unwrap();
    let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), apache_avro::Codec::Deflate(Default::default()));
    w.append(apache_avro::types::Value::Record(vec![(
        "blob".into(),
        apache_avro::types::Value::Bytes(vec![0; 64 << 20]),
    )]))
    .unwrap();
    let bomb = w.into_inner().unwrap();
    assert!(bomb.len() < 1 << 20, "small on disk: {} bytes", bomb.len());
    let mut w = apache_avro::Writer::new(&schema, Vec::new());
    for i in 0..100u8 {
        w.append(apache_avro::types::Value::Record(vec![(
            "blob".into(),
            apache_avro::types::Value::Bytes(vec![i; 8]),
        )]))
        .unwrap();
    }
    let good = w.into_inner().unwrap();
    for (decoded, block, names) in
        [(16u64 << 20, 1u64 << 30, "decoded data passes"), (1 << 30, 8 << 20, "max_block_bytes")]
    {
        let mut h = Harness::new();
        h.engine.max_decoded_bytes = decoded;
        h.engine.max_block_bytes = block;
        let good = h.put_file("in", "good.avro", &good).await;
        let m = h.put_file("in", "bomb.avro", &bomb).await;
        let cfg = floe::config::TableConfig::new("web.blobs".parse().unwrap());
        let all = vec![good, m];
        let report = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, all, &IngestOptions::default()).await.unwrap();
        assert_eq!(report.quarantined.len(), 1);
        let (uri, r) = &report.quarantined[0];
        assert!(uri.ends_with("bomb.avro"));
        assert_eq!(r.kind, floe::RejectionKind::TooLarge, "{r}");
        assert!(r.reason.contains(names), "{r}");
        assert_eq!(contents(&h.ports, &cfg.table).await.rows(), 100);
    }
}

fn simple_file(schema: &str, rows: Vec<Vec<(&str, apache_avro::types::Value)>>) -> Vec<u8> {
    let schema = apache_avro::Schema::parse_str(schema).unwrap();
    let mut w = apache_avro::Writer::with_codec(&schema, Vec::new(), apache_avro::Codec::Deflate(Default::default()));
    for r in rows {
        w.append(apache_avro::types::Value::Record(r.into_iter().map(|(k, v)| (k.to_string(), v)).collect())).unwrap();
    }
    w.into_inner().unwrap()
}

#[tokio::test]
async fn a_100_mb_string_and_an_unmappable_schema_are_quarantined_with_reasons() {
    use apache_avro::types::Value;
    let mut h = Harness::new();
    // Blocks may inflate far enough here for the value limit to be the one that speaks (by
    // default the 64 MiB block limit refuses this block first, without naming a field).
    h.engine.max_block_bytes = 256 << 20;
    let schema =
        r#"{"type":"record","name":"Doc","fields":[{"name":"id","type":"long"},{"name":"payload","type":"string"}]}"#;
    let row = |id: i64, payload: String| vec![("id", Value::Long(id)), ("payload", Value::String(payload))];
    let good: Vec<_> =
        (0..3).map(|f| simple_file(schema, (0..50).map(|i| row(f * 100 + i, format!("p{i}"))).collect())).collect();
    let huge = simple_file(schema, vec![row(999, "x".repeat(100 << 20)), row(1000, "small".into())]);
    assert!(huge.len() < 1 << 20, "the 100 MB string compresses to {} bytes", huge.len());
    let unmappable = simple_file(
        r#"{"type":"record","name":"Doc","fields":[{"name":"id","type":"long"},{"name":"either","type":["int","string"]}]}"#,
        vec![vec![("id", Value::Long(1)), ("either", Value::Union(0, Box::new(Value::Int(1))))]],
    );
    let mut all = vec![];
    for (i, g) in good.iter().enumerate() {
        all.push(h.put_file("in", &format!("a-good-{i}.avro"), g).await);
    }
    all.push(h.put_file("in", "huge-string.avro", &huge).await);
    all.push(h.put_file("in", "unmappable.avro", &unmappable).await);
    let cfg = floe::config::TableConfig::new("docs.raw".parse().unwrap());
    let report = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, all, &IngestOptions::default()).await.unwrap();
    let reasons: std::collections::HashMap<String, floe::Rejection> =
        report.quarantined.iter().map(|(u, r)| (u.rsplit('/').next().unwrap().to_string(), r.clone())).collect();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    let r = &reasons["huge-string.avro"];
    assert_eq!(r.kind, floe::RejectionKind::TooLarge, "{r}");
    assert!(r.reason.contains("`payload`") && r.reason.contains("104857600"), "{r}");
    let r = &reasons["unmappable.avro"];
    assert_eq!(r.kind, floe::RejectionKind::Schema, "{r}");
    assert!(r.reason.contains("`either`"), "names the field: {r}");
    assert_eq!(contents(&h.ports, &cfg.table).await.rows(), 150, "every good row landed, none of the bad files'");
}

#[tokio::test]
async fn when_no_input_can_define_a_new_table_every_input_is_quarantined() {
    let h = Harness::new();
    let good = h.events("tmp", 1, 10, 3, 0.0).await;
    let template = std::fs::read(floe::adapters::local::uri_to_path(&good[0].uri).unwrap()).unwrap();
    let mut all = vec![];
    for how in [Corruption::Empty, Corruption::BadMagic, Corruption::Truncated] {
        all.push(h.put_file("in", &format!("bad-{}.avro", how.name()), &sample::corrupt(&template, how)).await);
    }
    let cfg = events_table("web.events");
    let report = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, all.clone(), &IngestOptions::default()).await.unwrap();
    assert!(!report.created);
    let q: HashSet<String> = report.quarantined.iter().map(|(u, _)| u.clone()).collect();
    assert_eq!(q, all.iter().map(|m| m.uri.clone()).collect::<HashSet<_>>(), "each with its own reason");
    assert!(report.quarantined.iter().any(|(_, r)| r.kind == floe::RejectionKind::Empty));
    assert_eq!(h.ports.ledger.quarantined().await.unwrap().len(), 3, "recorded for `floe quarantine list`");
    assert!(h.ports.pointer.load(&cfg.table).await.unwrap().is_none(), "no table was created");
}

#[tokio::test]
async fn the_same_object_twice_in_one_batch_lands_once() {
    let h = Harness::new();
    let inputs = h.events("in", 2, 100, 5, 0.0).await;
    let twice: Vec<_> = inputs.iter().chain(inputs.iter()).cloned().collect();
    // No dedup key: only the writer's own bookkeeping keeps the rows single.
    let cfg = floe::config::TableConfig::new("web.plain".parse().unwrap());
    let opts = IngestOptions { writers: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, twice, &opts).await.unwrap();
    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    assert_eq!(ids.len(), 200);
    assert!(counts(&ids).values().all(|c| *c == 1));
}

/// Embedded mode keys a file by its size and modification time when it lists it, and reads
/// exactly that: a file rewritten between the listing and the read is recorded as superseded
/// (its listed version is gone), never ingested under the old identity with the new bytes.
#[tokio::test]
async fn a_file_rewritten_after_it_was_listed_is_superseded() {
    let h = Harness::new();
    let listed = h.events("in", 2, 50, 8, 0.0).await;
    let path = floe::adapters::local::uri_to_path(&listed[1].uri).unwrap();
    let (other, _) =
        floe::sample::events_file(&floe::sample::EventsSpec { events_per_file: 70, ..Default::default() }, 9, 0)
            .unwrap();
    std::fs::write(&path, other).unwrap();
    let cfg = events_table("web.events");
    let report =
        ingest(&h.engine, &h.ports, &cfg, &h.warehouse, listed.clone(), &IngestOptions::default()).await.unwrap();
    assert_eq!(report.superseded, 1);
    assert_eq!(contents(&h.ports, &cfg.table).await.rows(), 50, "only the file that is still as listed");
    let records = h.ports.ledger.quarantined().await.unwrap();
    assert!(
        records.iter().any(|r| r.uri == listed[1].uri && r.rejection.kind == floe::RejectionKind::Superseded),
        "{records:?}"
    );
}

/// A batch spanning many partitions makes many small files: the writer fetches its objects
/// ahead and uploads its files side by side, not one after another, and every row lands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_batch_fetches_and_uploads_side_by_side() {
    let mut h = Harness::new();
    let (puts, gets) = (InFlight::new("put_if_absent"), InFlight::new("get_version"));
    h.ports = floe::ports::wrap::wrap(floe::ports::wrap::wrap(h.ports.clone(), puts.clone()), gets.clone());
    let cfg = events_table("ev.uploads");
    let files = h.events("a", 8, 200, 21, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 8, ..Default::default() };
    let r = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, files.clone(), &opts).await.expect("ingest");
    assert!(r.quarantined.is_empty());
    let c = contents(&h.ports, &cfg.table).await;
    assert!(c.files.len() >= 16, "many partitions, many files: {}", c.files.len());
    assert!(puts.most() >= 4, "data files uploaded side by side: at most {} at once", puts.most());
    assert!(gets.most() >= 4, "objects fetched ahead: at most {} at once", gets.most());
    assert_eq!(c.event_ids().len(), source_event_ids(&files).len());
}

/// Fetching ahead stays within the bytes the memory settings allow for one object: with room
/// for two of these objects, never more than two are fetched and not yet decoded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_writer_fetches_ahead_only_within_its_object_budget() {
    let mut h = Harness::new();
    let gets = InFlight::new("get_version");
    h.ports = floe::ports::wrap::wrap(h.ports.clone(), gets.clone());
    let cfg = events_table("ev.budget");
    let files = h.events("a", 8, 1000, 22, 0.0).await;
    let biggest = files.iter().map(|f| f.size).max().unwrap();
    h.engine.max_object_bytes = 2 * biggest + 1024;
    let opts = IngestOptions { writers: 1, batch_objects: 8, ..Default::default() };
    let r = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, files.clone(), &opts).await.expect("ingest");
    assert!(r.quarantined.is_empty());
    assert!(gets.most() <= 2, "{} objects fetched at once within room for two", gets.most());
    assert!(gets.most() >= 2, "still fetched ahead: {}", gets.most());
    assert_eq!(contents(&h.ports, &cfg.table).await.event_ids().len(), source_event_ids(&files).len());
}
