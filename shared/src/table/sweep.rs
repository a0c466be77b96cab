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

use std::borrow::Cow;
use std::collections::HashSet;

use iceberg::spec::{Manifest, ManifestList};

use super::TableState;
use super::maintain::{DROPPED_PROPERTY, PROP_GC_ENABLED, gc_enabled};
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

/// `uri` with its scheme spelt one way for each store: `s3a://` and `s3n://` (Hadoop's names
/// for S3, which open-source Spark writes) are `s3://`, and Hadoop's `file:/path` is
/// `file:///path`. Locations are compared in this form only: the same object may be named
/// `s3a://b/k` in a table's metadata and `s3://b/k` by the store's listing.
pub fn same_scheme(uri: &str) -> Cow<'_, str> {
    for hadoop in ["s3a://", "s3n://"] {
        if let Some(rest) = uri.strip_prefix(hadoop) {
            return Cow::Owned(format!("s3://{rest}"));
        }
    }
    match uri.strip_prefix("file:") {
        Some(rest) if rest.starts_with('/') && !rest.starts_with("//") => Cow::Owned(format!("file://{rest}")),
        _ => Cow::Borrowed(uri),
    }
}

/// Sweeps `state`'s table: unreachable objects last written before `cutoff_ms` are deleted
/// (listed only, if `dry_run`).
///
/// Refused, with nothing deleted, where Iceberg Java's `DeleteOrphanFiles` refuses: the table's
/// `gc.enabled` is false (its files may be another table's too), or a listed object's name does
/// not fall under the table's location once schemes are made the same (Java's prefix mismatch
/// error). Floe also refuses when the current metadata file, under the table's location, is not
/// among the listed objects: the listing and the metadata then spell names differently, and
/// every live file would look like an orphan. `version-hint.text` (Hadoop tables) is kept.
pub async fn sweep_orphans(
    store: &dyn ObjectStore,
    state: &TableState,
    cutoff_ms: i64,
    dry_run: bool,
) -> Result<SweepReport> {
    let meta = &state.metadata;
    super::ensure_supported(meta.location(), meta)?;
    let location = same_scheme(meta.location().trim_end_matches('/')).into_owned();
    let refuse = |reason: String| Error::SweepRefused { location: meta.location().to_string(), reason };
    if !gc_enabled(meta) {
        return Err(refuse(format!(
            "the table's {PROP_GC_ENABLED} is false, so its files may belong to another table as well \
             (Iceberg Java refuses too); nothing was deleted"
        )));
    }
    let current = same_scheme(&state.pointer.metadata_location).into_owned();
    let mut keep: HashSet<String> = HashSet::new();
    let mut reach = |uri: &str| keep.insert(same_scheme(uri).into_owned());
    reach(&current);
    for l in meta.metadata_log() {
        reach(&l.metadata_file);
    }
    // Puffin statistics other engines (Spark, Trino) wrote and the metadata references.
    for s in meta.statistics_iter() {
        reach(&s.statistics_path);
    }
    for s in meta.partition_statistics_iter() {
        reach(&s.statistics_path);
    }
    for snap in meta.snapshots() {
        reach(snap.manifest_list());
        if let Some(record) = snap.summary().additional_properties.get(DROPPED_PROPERTY) {
            reach(record);
        }
        let list = ManifestList::parse_with_version(&store.get(snap.manifest_list()).await?, meta.format_version())?;
        for mf in list.entries() {
            if !reach(&mf.manifest_path) {
                continue; // read through another snapshot already
            }
            let manifest = Manifest::parse_avro(&store.get(&mf.manifest_path).await?)?;
            for e in manifest.entries() {
                reach(e.file_path());
            }
        }
    }
    let mut report = SweepReport::default();
    let mut current_listed = false;
    for dir in ["data", "metadata"] {
        let prefix = format!("{location}/{dir}/");
        for o in store.list(&prefix).await? {
            let uri = same_scheme(&o.uri);
            if !uri.starts_with(&prefix) {
                return Err(refuse(format!(
                    "the store listed `{}` for `{prefix}`: names that do not match the table's location \
                     (Iceberg Java's prefix mismatch); nothing was deleted",
                    o.uri
                )));
            }
            report.listed += 1;
            current_listed |= *uri == current;
            if keep.contains(uri.as_ref()) || uri.ends_with("/metadata/version-hint.text") {
                report.reachable += 1;
                continue;
            }
            let Some(modified) = o.modified_ms else {
                return Err(Error::internal(format!("the store gave no modification time for {}", o.uri)));
            };
            if modified >= cutoff_ms {
                report.young += 1;
                continue;
            }
            report.orphans.push(o.uri);
        }
    }
    if current.starts_with(&format!("{location}/metadata/")) && !current_listed {
        return Err(refuse(format!(
            "the current metadata file `{}` is not among the objects the store listed under `{location}/metadata/`: \
             the listing and the table's metadata name files differently, and every live file would look \
             like an orphan; nothing was deleted",
            state.pointer.metadata_location
        )));
    }
    if !dry_run {
        super::maintain::delete_all(store, report.orphans.clone()).await?;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::same_scheme;

    #[test]
    fn hadoop_schemes_name_the_same_objects() {
        assert_eq!(same_scheme("s3a://b/db/t/data/x.parquet"), "s3://b/db/t/data/x.parquet");
        assert_eq!(same_scheme("s3n://b/k"), "s3://b/k");
        assert_eq!(same_scheme("s3://b/k"), "s3://b/k");
        assert_eq!(same_scheme("file:/tmp/wh/t"), "file:///tmp/wh/t");
        assert_eq!(same_scheme("file:///tmp/wh/t"), "file:///tmp/wh/t");
        assert_eq!(same_scheme("gs://b/k"), "gs://b/k");
    }
}
