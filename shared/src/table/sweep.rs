//! The orphan sweep: deletes the objects under a table's location that no kept snapshot, no
//! metadata file in the log, no statistics file and no dropped record reaches, once they are older than a safety age.
//!
//! Orphans are files of attempts that never landed (a writer batch or a compaction task whose
//! request was rejected or never sent, a commit that lost its swap), files a committer could
//! not delete after an expiry, and records skipped after a rollback. The safety age must exceed
//! the longest time a written file may still be committed: the commit queue's message retention
//! (plus its dead-letter queue's, if messages are ever redriven). It reads every kept snapshot's
//! manifests (a full read of the table's metadata) and lists the table's location: run it
//! rarely (daily), not per commit.

use std::collections::HashSet;

use iceberg::spec::{Manifest, ManifestList};

use super::TableState;
use super::maintain::DROPPED_PROPERTY;
use crate::ports::ObjectStore;
use crate::{Error, Result};

/// What a sweep found and did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SweepReport {
    /// Objects listed under the table's `data/` and `metadata/`.
    pub listed: usize,
    /// Objects some kept snapshot or metadata file reaches.
    pub reachable: usize,
    /// Unreachable objects younger than the safety age (kept).
    pub young: usize,
    /// Unreachable objects deleted (or, in a dry run, that would be).
    pub orphans: Vec<String>,
}

/// Sweeps `state`'s table: unreachable objects last written before `cutoff_ms` are deleted
/// (listed only, if `dry_run`).
pub async fn sweep_orphans(
    store: &dyn ObjectStore,
    state: &TableState,
    cutoff_ms: i64,
    dry_run: bool,
) -> Result<SweepReport> {
    let meta = &state.metadata;
    super::ensure_supported(meta.location(), meta)?;
    let location = meta.location().trim_end_matches('/').to_string();
    let mut keep: HashSet<String> = HashSet::new();
    keep.insert(state.pointer.metadata_location.clone());
    keep.extend(meta.metadata_log().iter().map(|l| l.metadata_file.clone()));
    // Puffin statistics other engines (Spark, Trino) wrote and the metadata references.
    keep.extend(meta.statistics_iter().map(|s| s.statistics_path.clone()));
    keep.extend(meta.partition_statistics_iter().map(|s| s.statistics_path.clone()));
    for snap in meta.snapshots() {
        keep.insert(snap.manifest_list().to_string());
        if let Some(record) = snap.summary().additional_properties.get(DROPPED_PROPERTY) {
            keep.insert(record.clone());
        }
        let list = ManifestList::parse_with_version(&store.get(snap.manifest_list()).await?, meta.format_version())?;
        for mf in list.entries() {
            if !keep.insert(mf.manifest_path.clone()) {
                continue; // read through another snapshot already
            }
            let manifest = Manifest::parse_avro(&store.get(&mf.manifest_path).await?)?;
            keep.extend(manifest.entries().iter().map(|e| e.file_path().to_string()));
        }
    }
    let mut report = SweepReport::default();
    for dir in ["data", "metadata"] {
        for o in store.list(&format!("{location}/{dir}/")).await? {
            report.listed += 1;
            if keep.contains(&o.uri) {
                report.reachable += 1;
                continue;
            }
            let Some(modified) = o.modified_ms else {
                return Err(Error::Internal(format!("the store gave no modification time for {}", o.uri)));
            };
            if modified >= cutoff_ms {
                report.young += 1;
                continue;
            }
            report.orphans.push(o.uri);
        }
    }
    if !dry_run {
        super::maintain::delete_all(store, report.orphans.clone()).await?;
    }
    Ok(report)
}
