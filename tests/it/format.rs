//! Tables Floe does not write: a table another engine upgraded to format v3 is refused by every
//! role before it writes anything, and nothing is quarantined; metadata other engines add to a
//! v2 table (Puffin statistics) survives Floe's maintenance.

use std::time::Duration;

use floe::Error;
use floe::pipeline::commit::{Committer, MessageResult};
use floe::pipeline::compact::{CompactOptions, plan_table};
use floe::pipeline::ingest::{IngestOptions, ingest};
use floe::pipeline::write::write;
use floe::ports::Pointer;
use floe::table::sweep::sweep_orphans;
use floe::table::{TableState, WriterTable, load_table, metadata_file_uri};
use iceberg::spec::{FormatVersion, PartitionStatisticsFile, StatisticsFile, TableMetadataBuilder};

use crate::common::*;

async fn state(h: &Harness, table: &floe::TableIdent) -> TableState {
    load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), table).await.unwrap().unwrap()
}

/// What another engine does to the table: a new metadata.json from `change`, and a swap.
async fn commit_foreign(
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_v3_table_is_refused_by_every_role_and_left_unchanged() {
    let h = Harness::new();
    let cfg = events_table("ev.v3");
    let first = h.events("first", 2, 100, 41, 0.0).await;
    let opts = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, first.clone(), &opts).await.unwrap();
    // A writer batch written while the table was v2, waiting in the commit queue.
    let later = h.events("later", 2, 100, 42, 0.0).await;
    let v2 = WriterTable::from_metadata(&cfg.table, &state(&h, &cfg.table).await.metadata).unwrap();
    write(&h.engine, &h.ports, &v2, later[..1].to_vec()).await.unwrap();
    let queued = h.ports.commit_queue.receive(10, Duration::from_secs(60)).await.unwrap();
    assert_eq!(queued.len(), 1);

    let upgraded = commit_foreign(&h, &cfg.table, |b| b.upgrade_format_version(FormatVersion::V3).unwrap()).await;
    let is_v3 = |e: &Error| matches!(e, Error::UnsupportedFormat { version: 3, .. });

    // The committer: the queued batch is left for redelivery, not poisoned, and nothing lands.
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    let out = committer.commit(&queued).await;
    match &out.results[..] {
        [(_, MessageResult::Retry { reason })] => assert!(reason.contains("format v3"), "{reason}"),
        other => panic!("the batch must wait for redelivery: {other:?}"),
    }
    // The embedded ingest and the writer view.
    let err = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, later[1..].to_vec(), &opts).await.unwrap_err();
    assert!(is_v3(&err), "{err}");
    assert!(err.to_string().contains("nothing quarantined"), "{err}");
    let err = WriterTable::from_metadata(&cfg.table, &state(&h, &cfg.table).await.metadata).unwrap_err();
    assert!(is_v3(&err), "{err}");
    // The compactor and the orphan sweep.
    let err = plan_table(&h.ports, &cfg.table, &CompactOptions { full: true, ..Default::default() }).await.unwrap_err();
    assert!(is_v3(&err), "{err}");
    let err = sweep_orphans(h.ports.store.as_ref(), &state(&h, &cfg.table).await, now_ms() + 1000, false).await;
    assert!(is_v3(&err.unwrap_err()));

    let after = state(&h, &cfg.table).await;
    assert_eq!(after.pointer, upgraded, "the table is exactly as the other engine left it");
    assert!(h.ports.ledger.quarantined().await.unwrap().is_empty(), "nothing quarantined");
    assert_eq!(contents(&h.ports, &cfg.table).await.event_ids().len(), source_event_ids(&first).len());
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
