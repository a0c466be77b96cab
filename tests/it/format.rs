//! Tables other engines changed: a table upgraded to format v3 takes appends with row lineage
//! (its rows' ids never move, through manifest merges and compaction too; a rewrite planned
//! before the upgrade is rejected), its column defaults fill every row written without the
//! column; metadata other engines add (Puffin statistics) survives
//! Floe's maintenance.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::compact::{CompactOptions, compact};
use floe::pipeline::ingest::{IngestOptions, compact_and_commit, ingest};
use floe::pipeline::write::write;
use floe::ports::Pointer;
use floe::table::sweep::sweep_orphans;
use floe::table::{Manifests, PROP_MIN_COUNT_TO_MERGE, TableState, WriterTable, load_table, metadata_file_uri};
use iceberg::spec::{
    FormatVersion, Literal, Manifest, ManifestList, ManifestStatus, NestedField, NestedFieldRef,
    PartitionStatisticsFile, PrimitiveType, Schema, StatisticsFile, TableMetadataBuilder, Type,
};

use crate::common::*;

pub(crate) async fn state(h: &Harness, table: &floe::TableIdent) -> TableState {
    load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), table).await.unwrap().unwrap()
}

/// What another engine does to the table: a new metadata.json from `change`, and a swap.
pub(crate) async fn commit_foreign(
    h: &Harness,
    table: &floe::TableIdent,
    change: impl FnOnce(TableMetadataBuilder) -> TableMetadataBuilder,
) -> Pointer {
    let s = state(h, table).await;
    let builder =
        TableMetadataBuilder::new_from_metadata((*s.metadata).clone(), Some(s.pointer.metadata_location.clone()));
    let next = change(builder).build().unwrap().metadata;
    let at = metadata_file_uri(next.location().trim_end_matches('/'), 90_000 + next.metadata_log().len() as u64);
    h.ports.store.put(&at, serde_json::to_vec(&next).unwrap().into()).await.unwrap();
    h.ports.pointer.swap(table, &s.pointer, &at).await.unwrap()
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64
}

/// Each live data file's row ids (`first_row_id`, rows), as the table's manifests give them.
async fn row_ids(h: &Harness, table: &floe::TableIdent) -> BTreeMap<String, (i64, u64)> {
    let s = state(h, table).await;
    let mut reads = 0;
    let mut m = Manifests::load(h.ports.store.as_ref(), &s.metadata, &mut reads).await.unwrap();
    m.read_contents(h.ports.store.as_ref(), &mut reads).await.unwrap();
    m.live_parsed()
        .map(|(_, e)| {
            let first = e.data_file().first_row_id().unwrap_or_else(|| panic!("{} has no row ids", e.file_path()));
            (e.file_path().to_string(), (first, e.record_count()))
        })
        .collect()
}

/// Row lineage holds: every snapshot since the upgrade took the range after its parent's, the
/// table's `next-row-id` is past every id, and no two files share an id.
async fn assert_lineage(h: &Harness, table: &floe::TableIdent, upgraded_at: i64) -> BTreeMap<String, (i64, u64)> {
    let s = state(h, table).await;
    let m = &s.metadata;
    assert_eq!(m.format_version(), FormatVersion::V3);
    let mut next = 0;
    let mut chain: Vec<_> = m.snapshots().filter(|s| s.sequence_number() > upgraded_at).collect();
    chain.sort_by_key(|s| s.sequence_number());
    for snap in &chain {
        let (first, added) =
            snap.row_range().unwrap_or_else(|| panic!("snapshot {} has no row range", snap.snapshot_id()));
        assert!(
            first >= next,
            "snapshot {} starts at {first}, inside the previous range (< {next})",
            snap.snapshot_id()
        );
        next = first + added;
    }
    assert_eq!(m.next_row_id(), next, "next-row-id is the last snapshot's range end");
    let ids = row_ids(h, table).await;
    let mut ranges: Vec<(i64, u64)> = ids.values().copied().collect();
    ranges.sort();
    for w in ranges.windows(2) {
        assert!(w[0].0 + w[0].1 as i64 <= w[1].0, "row id ranges overlap: {w:?}");
    }
    let end = ranges.last().map_or(0, |(f, n)| *f as u64 + n);
    assert!(end <= m.next_row_id(), "ids up to {end} but next-row-id {}", m.next_row_id());
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v3_table_takes_appends_and_its_row_ids_never_move() {
    let h = Harness::new();
    let cfg = events_table("ev.v3");
    let first = h.events("first", 2, 100, 41, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, first.clone(), &opts).await.unwrap();
    // A writer batch written while the table was v2, waiting in the commit queue.
    let later = h.events("later", 6, 100, 42, 0.0).await;
    let v2 = WriterTable::from_metadata(&cfg.table, &state(&h, &cfg.table).await.metadata).unwrap();
    write(&h.engine, &h.ports, &v2, later[..1].to_vec()).await.unwrap();
    let queued = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(queued.len(), 1);

    // Another engine upgrades the table, and asks for manifests to be merged early.
    commit_foreign(&h, &cfg.table, |b| {
        let props = HashMap::from([(PROP_MIN_COUNT_TO_MERGE.to_string(), "3".to_string())]);
        b.upgrade_format_version(FormatVersion::V3).unwrap().set_properties(props).unwrap()
    })
    .await;
    let upgraded_at = state(&h, &cfg.table).await.metadata.last_sequence_number();

    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let out = committer.commit(&queued).await;
    assert!(matches!(&out.results[..], [(_, MessageResult::Committed { .. })]), "{:?}", out.results);
    let before = assert_lineage(&h, &cfg.table, upgraded_at).await;
    let v2_files = contents(&h.ports, &cfg.table).await.files.len();
    assert_eq!(before.len(), v2_files, "the files committed before the upgrade have ids too");

    // More appends: the manifests are merged (entries of earlier snapshots become EXISTING).
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, later[1..].to_vec(), &opts).await.unwrap();
    let after = assert_lineage(&h, &cfg.table, upgraded_at).await;
    for (path, ids) in &before {
        assert_eq!(after.get(path), Some(ids), "{path} kept its row ids through the merges");
    }
    // The merged manifests carry the ids they inherited as written values.
    let s = state(&h, &cfg.table).await;
    let list = h.ports.store.get(s.metadata.current_snapshot().unwrap().manifest_list()).await.unwrap();
    let list = ManifestList::parse_with_version(&list, FormatVersion::V3).unwrap();
    let mut existing = 0;
    for mf in list.entries() {
        assert!(mf.first_row_id.is_some(), "{} has no first_row_id", mf.manifest_path);
        let manifest = Manifest::parse_avro(&h.ports.store.get(&mf.manifest_path).await.unwrap()).unwrap();
        for e in manifest.entries().iter().filter(|e| e.status() == ManifestStatus::Existing) {
            existing += 1;
            let written = e.data_file().first_row_id();
            assert_eq!(written, Some(after[e.file_path()].0), "{} written with its ids", e.file_path());
        }
    }
    assert!(existing > 0, "a merge rewrote earlier entries (the test must exercise it)");
    let all: Vec<_> = first.iter().chain(&later).cloned().collect();
    assert_eq!(contents(&h.ports, &cfg.table).await.event_ids().len(), source_event_ids(&all).len());
    assert!(h.ports.ledger.quarantined().await.unwrap().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_compare_and_swap_on_a_v3_table_replans_from_the_winners_next_row_id() {
    let h = Harness::new();
    let cfg = events_table("ev.v3race");
    let first = h.events("first", 1, 100, 47, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, first.clone(), &opts).await.unwrap();
    commit_foreign(&h, &cfg.table, |b| b.upgrade_format_version(FormatVersion::V3).unwrap()).await;
    let upgraded_at = state(&h, &cfg.table).await.metadata.last_sequence_number();
    let later = h.events("later", 2, 100, 48, 0.0).await;
    let v3 = WriterTable::from_metadata(&cfg.table, &state(&h, &cfg.table).await.metadata).unwrap();
    for o in &later {
        write(&h.engine, &h.ports, &v3, vec![o.clone()]).await.unwrap();
    }
    let msgs = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(msgs.len(), 2);
    // The rival commits the second batch between the loser's plan (on the old next-row-id)
    // and its swap; it has a lock of its own, so only the compare-and-swap keeps them apart.
    use crate::commit::{Rival, RivalSwap, rival_committer};
    let racing =
        RivalSwap::new(h.ports.pointer.clone(), Rival::CommitsFirst, rival_committer(&h), vec![msgs[1].clone()]);
    let mut ports = h.ports.clone();
    ports.pointer = racing.clone();
    let mut loser = Committer::new(h.engine.clone(), ports);
    let out = loser.commit(&msgs[..1]).await;
    assert!(matches!(&out.results[..], [(_, MessageResult::Committed { .. })]), "{:?}", out.results);
    assert!(racing.fired.load(Ordering::SeqCst), "the race happened");
    let s = state(&h, &cfg.table).await;
    assert_eq!(s.metadata.snapshots().filter(|x| x.sequence_number() > upgraded_at).count(), 2);
    assert_lineage(&h, &cfg.table, upgraded_at).await;
    let all: Vec<_> = first.iter().chain(&later).cloned().collect();
    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    assert_eq!(ids.len(), source_event_ids(&all).len());
    assert!(counts(&ids).values().all(|c| *c == 1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_planned_before_the_v3_upgrade_is_rejected_and_one_planned_after_keeps_every_rows_id() {
    let h = Harness::new();
    let cfg = events_table("ev.v3rewrite");
    let objects = h.events("in", 4, 100, 44, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects.clone(), &opts).await.unwrap();
    let full = CompactOptions { full: true, min_files: 2, ..Default::default() };
    compact(&h.engine, &h.ports, &cfg.table, &full).await.unwrap();
    let requests = h.ports.commit_queue.receive(100, Duration::from_secs(60)).await.unwrap();
    assert!(!requests.is_empty(), "compaction planned rewrites");
    let upgraded = commit_foreign(&h, &cfg.table, |b| b.upgrade_format_version(FormatVersion::V3).unwrap()).await;
    let before = contents(&h.ports, &cfg.table).await;

    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let out = committer.commit(&requests).await;
    for (_, r) in &out.results {
        match r {
            MessageResult::Stale { reason } => assert!(reason.contains("row lineage"), "{reason}"),
            other => panic!("a rewrite of a v3 table must be rejected: {other:?}"),
        }
    }
    assert_eq!(state(&h, &cfg.table).await.pointer, upgraded, "nothing committed");
    let after = contents(&h.ports, &cfg.table).await;
    assert_eq!(after.event_ids(), before.event_ids());

    // Until a v3 commit gives the files their row ids, none is planned: a rewrite would hand
    // their rows new ids once that commit had given them theirs.
    let (report, _) =
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    assert_eq!(report.tasks, 0, "{report:?}");
    // Planned after the first v3 commit (an append), the compaction lands and every row keeps
    // its lineage.
    let later = h.events("later", 1, 100, 45, 0.0).await;
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, later.clone(), &opts).await.unwrap();
    let lineage = row_lineage(&h, &cfg.table).await;
    assert!(lineage.values().all(|(id, _)| id.is_some()));
    let (report, _) =
        compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    assert!(report.tasks > 0);
    assert_eq!(row_lineage(&h, &cfg.table).await, lineage, "each row's _row_id and sequence number as before");
    let files = contents(&h.ports, &cfg.table).await.files;
    assert!(files.iter().all(|(p, _, _)| p.rsplit('/').next().unwrap().starts_with('L')), "all compacted");
}

/// Each live row's (`_row_id`, `_last_updated_sequence_number`) by event id, as a reader finds
/// them: the data file's columns where present and not null, else its `first_row_id` plus the
/// row's position and its data sequence number.
pub(crate) async fn row_lineage(h: &Harness, table: &floe::TableIdent) -> BTreeMap<String, (Option<i64>, i64)> {
    use arrow_array::{Array, FixedSizeBinaryArray, Int64Array, StringArray};
    let s = state(h, table).await;
    let mut reads = 0;
    let mut m = Manifests::load(h.ports.store.as_ref(), &s.metadata, &mut reads).await.unwrap();
    m.read_contents(h.ports.store.as_ref(), &mut reads).await.unwrap();
    let mut out = BTreeMap::new();
    for (_, e) in m.live_parsed() {
        let (first, seq) = (e.data_file().first_row_id(), e.sequence_number().unwrap());
        let bytes = h.ports.store.get(e.file_path()).await.unwrap();
        let reader =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap().build().unwrap();
        let mut pos = 0i64;
        for b in reader {
            let b = b.unwrap();
            let ids = b.column_by_name("event_id").unwrap();
            let long =
                |name: &str| b.column_by_name(name).map(|c| c.as_any().downcast_ref::<Int64Array>().unwrap().clone());
            let (row_ids, seqs) = (long("_row_id"), long("_last_updated_sequence_number"));
            for i in 0..b.num_rows() {
                let key = match ids.as_any().downcast_ref::<FixedSizeBinaryArray>() {
                    Some(u) => uuid::Uuid::from_slice(u.value(i)).unwrap().to_string(),
                    None => ids.as_any().downcast_ref::<StringArray>().unwrap().value(i).to_string(),
                };
                let id = row_ids.as_ref().filter(|c| c.is_valid(i)).map(|c| c.value(i)).or(first.map(|f| f + pos));
                let lus = seqs.as_ref().filter(|c| c.is_valid(i)).map_or(seq, |c| c.value(i));
                assert!(out.insert(key, (id, lus)).is_none(), "each key once");
                pos += 1;
            }
        }
    }
    out
}

/// Another engine upgrades the table and adds a column with `initial-default` and
/// `write-default` "web": a batch written before (its files lack the column) commits and reads
/// it as "web"; new rows without the column are written with "web"; compaction writes "web" into
/// the files that lacked it. Every row reads "web", none null.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v3_column_default_fills_every_row_written_without_the_column() {
    use arrow_array::{Array, StringArray};
    let h = Harness::new();
    let cfg = events_table("ev.v3default");
    let first = h.events("first", 2, 100, 45, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, first.clone(), &opts).await.unwrap();
    let later = h.events("later", 2, 100, 46, 0.0).await;
    let v2 = WriterTable::from_metadata(&cfg.table, &state(&h, &cfg.table).await.metadata).unwrap();
    write(&h.engine, &h.ports, &v2, later[..1].to_vec()).await.unwrap();
    let queued = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();

    let current = state(&h, &cfg.table).await.metadata.current_schema().clone();
    let mut fields: Vec<NestedFieldRef> = current.as_struct().fields().to_vec();
    let id = current.highest_field_id() + 1;
    fields.push(Arc::new(
        NestedField::optional(id, "channel", Type::Primitive(PrimitiveType::String))
            .with_initial_default(Literal::string("web"))
            .with_write_default(Literal::string("web")),
    ));
    let schema = Schema::builder().with_fields(fields).build().unwrap();
    commit_foreign(&h, &cfg.table, |b| {
        b.upgrade_format_version(FormatVersion::V3).unwrap().add_current_schema(schema).unwrap()
    })
    .await;

    let out = Committer::new(h.engine.clone(), h.ports.clone()).commit(&queued).await;
    assert!(matches!(&out.results[..], [(_, MessageResult::Committed { .. })]), "{:?}", out.results);
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, later[1..].to_vec(), &opts).await.unwrap();
    let channels = |c: &TableContents| -> (usize, usize) {
        let (mut web, mut without) = (0, 0);
        for (_, _, b) in &c.files {
            match b.column_by_name("channel") {
                Some(col) => {
                    let col = col.as_any().downcast_ref::<StringArray>().unwrap();
                    assert_eq!(col.null_count(), 0);
                    web += (0..col.len()).filter(|i| col.value(*i) == "web").count();
                }
                None => without += b.num_rows(),
            }
        }
        (web, without)
    };
    let c = contents(&h.ports, &cfg.table).await;
    let (web, without) = channels(&c);
    assert_eq!(web, 100, "the rows written after the column was added hold its write-default");
    assert_eq!(without, 300, "the files written before lack it (readers fill in its initial-default)");

    let full = CompactOptions { full: true, min_files: 2, ..Default::default() };
    compact_and_commit(&h.engine, &h.ports, &cfg.table, &full, Duration::from_secs(60)).await.unwrap();
    let c = contents(&h.ports, &cfg.table).await;
    assert_eq!(channels(&c), (400, 0), "compaction wrote the initial-default into the rows that lacked it");
    let all: Vec<_> = first.iter().chain(&later).cloned().collect();
    assert_eq!(c.event_ids().len(), source_event_ids(&all).len());
    assert!(h.ports.ledger.quarantined().await.unwrap().is_empty(), "nothing quarantined");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_orphan_sweep_keeps_statistics_files_other_engines_wrote() {
    let h = Harness::new();
    let cfg = events_table("ev.stats");
    let objects = h.events("in", 2, 100, 43, 0.0).await;
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &IngestOptions::default()).await.unwrap();
    let s = state(&h, &cfg.table).await;
    let loc = s.metadata.location().trim_end_matches('/').to_string();
    let snapshot_id = s.metadata.current_snapshot_id().unwrap();
    let (stats, partition_stats) = (
        format!("{loc}/metadata/{snapshot_id}-spark.stats"),
        format!("{loc}/metadata/partition-stats-{snapshot_id}.parquet"),
    );
    for p in [&stats, &partition_stats] {
        h.ports.store.put(p, bytes::Bytes::from_static(b"puffin")).await.unwrap();
    }
    commit_foreign(&h, &cfg.table, |b| {
        b.set_statistics(StatisticsFile {
            snapshot_id,
            statistics_path: stats.clone(),
            file_size_in_bytes: 6,
            file_footer_size_in_bytes: 4,
            key_metadata: None,
            blob_metadata: vec![],
        })
        .set_partition_statistics(PartitionStatisticsFile {
            snapshot_id,
            statistics_path: partition_stats.clone(),
            file_size_in_bytes: 6,
        })
    })
    .await;
    let junk = format!("{loc}/metadata/unreferenced.stats");
    h.ports.store.put(&junk, bytes::Bytes::from_static(b"x")).await.unwrap();
    let swept =
        sweep_orphans(h.ports.store.as_ref(), &state(&h, &cfg.table).await, now_ms() + 1000, false).await.unwrap();
    assert_eq!(swept.orphans, vec![junk], "only the unreferenced file goes");
    for p in [&stats, &partition_stats] {
        h.ports.store.head(p).await.unwrap_or_else(|e| panic!("{p} was deleted: {e}"));
    }
}
