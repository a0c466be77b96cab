//! What the committer admits: every message is checked against the table it names, as only
//! Floe's own roles could have sent it, before anything is changed (docs/ARCHITECTURE.md,
//! "Trust"). A refusal is a [`Refusal`]: the message fails alone as poison, with its reason.
//!
//! - The table must be one this deployment routes objects to or compacts ([`Tables`]); its name
//!   is already `NAMESPACE.NAME` of letters, digits, `_` and `-` (no `/`, no `..`) when it parses.
//! - A file manifest's batch id must be the id of its own sources ([`batch_key`]), and each file
//!   it registers must lie under the table's `data/` location (the very scheme and prefix the
//!   table's metadata gives), be named as a writer of that batch names it, exist with the size
//!   the message says, and hold a Parquet footer with the message's row count and none but the
//!   file schema's field ids ([`check_files`]).
//! - A rewrite request's added files likewise, named for its task (`L<level>-<task>-…` or
//!   `late-<task>-…`).
//!
//! This module decides only; it never deletes and never commits. Whatever a message names is
//! never deleted on its say-so: a rejected rewrite's files are left to the orphan sweep, which
//! proves them unreachable from every kept snapshot first.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use futures::StreamExt;
use iceberg::spec::Schema;
use parquet::file::metadata::ParquetMetaDataReader;

use crate::message::{DataFileMeta, FileManifest, RewriteRequest, batch_key};
use crate::pipeline::ranged::{Ranged, Traffic};
use crate::ports::ObjectStore;
use crate::route::Router;
use crate::{PortError, Result, TableIdent};

/// Why a message is refused: said in the log, the dead-letter queue and the metric's reason.
pub(crate) type Refusal = String;

/// The tables a committer takes messages for: those its routes send objects to (`FLOE_CONFIG`,
/// `FLOE_DEFAULT_TABLE`) and those its compactors compact (`FLOE_COMPACT_TABLES`). A committer
/// given none takes any (embedded mode, whose queue is the process's own).
#[derive(Debug, Clone)]
pub struct Tables {
    router: Router,
    compacted: BTreeSet<TableIdent>,
}

impl Tables {
    /// The tables `router` reaches, and `compacted`.
    pub fn new(router: Router, compacted: impl IntoIterator<Item = TableIdent>) -> Self {
        Tables { router, compacted: compacted.into_iter().collect() }
    }

    /// Whether a message may name `table`; if not, why.
    pub fn admit(&self, table: &TableIdent) -> Result<(), String> {
        if self.router.reaches(table) || self.compacted.contains(table) {
            return Ok(());
        }
        Err(format!(
            "table {table} is not one this deployment routes objects to or compacts (FLOE_CONFIG, FLOE_DEFAULT_TABLE, \
             FLOE_COMPACT_TABLES)"
        ))
    }
}

/// Why `path` cannot be a data file Floe wrote into the table at `location`, named starting with
/// one of `prefixes`, if it cannot. It must start with `<location>/data/` exactly (the scheme
/// and spelling of the table's own location: no other bucket, table or scheme), its segments
/// below must be plain names (no `.`, `..`, empty or control-character segment: a local store
/// would resolve them), and its name must be one of Floe's data file names
/// ([`crate::table::is_floe_data_file`]) with one of the prefixes.
pub(super) fn check_path(location: &str, path: &str, prefixes: &[String]) -> Result<(), Refusal> {
    let data = format!("{}/data/", location.trim_end_matches('/'));
    let Some(rest) = path.strip_prefix(&data) else {
        return Err(format!("file {path} is not under the table's data location {data}"));
    };
    let plain = |s: &&str| !s.is_empty() && *s != "." && *s != ".." && !s.contains(['\\', '?', '#'])
        && !s.chars().any(char::is_control);
    if !rest.split('/').all(|s| plain(&s)) {
        return Err(format!("file {path} has a path segment that is empty, `.`, `..` or not a plain name"));
    }
    let name = rest.rsplit('/').next().unwrap_or_default();
    if !crate::table::is_floe_data_file(path) || !prefixes.iter().any(|p| name.starts_with(p.as_str())) {
        return Err(format!("file {path} is not named as Floe names this message's files ({})", prefixes.join(" or ")));
    }
    Ok(())
}

/// Why a file manifest's names cannot be a writer's, if they cannot: its batch id must be the id
/// of its sources, and its files named for that batch under the table's data location.
pub(super) fn check_manifest_names(location: &str, m: &FileManifest) -> Result<(), Refusal> {
    let expected = batch_key(&m.sources);
    if m.batch_id != expected {
        return Err(format!("batch id {:?} is not the id of its sources ({expected})", m.batch_id));
    }
    let prefixes = [format!("{expected}-")];
    m.files.iter().try_for_each(|f| check_path(location, &f.path, &prefixes))
}

/// The names a rewrite request's added files may have: `L<level>-<task>-…`, or a late file's
/// `late-<task>-…`.
pub(super) fn rewrite_prefixes(r: &RewriteRequest) -> [String; 2] {
    [format!("L{}-{}-", r.level, r.task_id), format!("{}{}-", crate::pipeline::compact::plan::LATE_PREFIX, r.task_id)]
}

/// Why a rewrite request's added files cannot be its compactor's, if they cannot.
pub(super) fn check_rewrite_names(location: &str, r: &RewriteRequest) -> Result<(), Refusal> {
    let prefixes = rewrite_prefixes(r);
    r.added.iter().try_for_each(|f| check_path(location, &f.path, &prefixes))
}

/// Footers read at once: each is a HEAD and (most often) one ranged GET.
const FOOTERS_IN_FLIGHT: usize = 16;

/// Bytes read from a file's end in one go: most footers fit, sparing a second read.
const FOOTER_HINT: usize = 64 << 10;

/// The lowest field id Iceberg reserves for metadata columns (`_row_id`, `_file`, ...): a v3
/// rewrite's files carry `_row_id` and `_last_updated_sequence_number` under theirs.
const RESERVED_IDS: i32 = i32::MAX - 200;

/// Whether every file is what its message says: there, of its size, Parquet with its row count
/// and only field ids of the schema it was written with. `files` are each the key of their
/// message, the schema and the file; the answer holds the first refusal of each message refused.
/// `Err` is the store failing (the messages are tried again later). [`FOOTERS_IN_FLIGHT`] files
/// are read at once, across messages.
pub(super) async fn check_files<K: Eq + std::hash::Hash>(
    store: &Arc<dyn ObjectStore>,
    files: Vec<(K, &Schema, &DataFileMeta)>,
) -> Result<HashMap<K, Refusal>> {
    let checks: Vec<_> = files.into_iter().map(|(key, schema, f)| check_keyed(store, key, schema, f)).collect();
    let mut results = futures::stream::iter(checks).buffer_unordered(FOOTERS_IN_FLIGHT);
    let mut refused = HashMap::new();
    while let Some((key, r)) = results.next().await {
        if let Err(why) = r? {
            refused.entry(key).or_insert(why);
        }
    }
    Ok(refused)
}

async fn check_keyed<K>(
    store: &Arc<dyn ObjectStore>,
    key: K,
    schema: &Schema,
    f: &DataFileMeta,
) -> (K, Result<Result<(), Refusal>>) {
    (key, check_file(store, schema, f).await)
}

async fn check_file(store: &Arc<dyn ObjectStore>, schema: &Schema, f: &DataFileMeta) -> Result<Result<(), Refusal>> {
    let path = f.path.as_str();
    let size = match store.head(path).await {
        Ok(meta) => meta.size,
        Err(PortError::NotFound(_)) => return Ok(Err(format!("file {path} does not exist"))),
        Err(e) => return Err(e.into()),
    };
    if size != f.file_size_in_bytes {
        return Ok(Err(format!("file {path} holds {size} bytes, not the {} the message says", f.file_size_in_bytes)));
    }
    let mut reader = Ranged::new(store.clone(), path, size, Arc::new(Traffic::default()));
    let footer = ParquetMetaDataReader::new().with_prefetch_hint(Some(FOOTER_HINT));
    let meta = match footer.load_and_finish(&mut reader, size).await {
        Ok(meta) => meta,
        Err(parquet::errors::ParquetError::External(e)) => match e.downcast::<PortError>() {
            Ok(port) if !matches!(*port, PortError::NotFound(_) | PortError::Invalid(_)) => return Err((*port).into()),
            Ok(port) => return Ok(Err(format!("file {path} could not be read as Parquet: {port}"))),
            Err(other) => return Ok(Err(format!("file {path} could not be read as Parquet: {other}"))),
        },
        Err(e) => return Ok(Err(format!("file {path} is not a Parquet file: {e}"))),
    };
    let rows = meta.file_metadata().num_rows();
    if u64::try_from(rows).ok() != Some(f.record_count) {
        return Ok(Err(format!("file {path} holds {rows} rows, not the {} the message says", f.record_count)));
    }
    Ok(field_ids(path, meta.file_metadata().schema_descr().root_schema(), schema))
}

/// Why the Parquet schema `root` is not one written with `schema`, if it is not: each of its
/// top-level columns carries a field id, and every id it carries is one of `schema`'s (or
/// reserved for a metadata column).
fn field_ids(path: &str, root: &parquet::schema::types::Type, schema: &Schema) -> Result<(), Refusal> {
    fn walk(t: &parquet::schema::types::Type, out: &mut Vec<(String, Option<i32>)>) {
        for f in t.get_fields() {
            let info = f.get_basic_info();
            out.push((f.name().to_string(), info.has_id().then(|| info.id())));
            if f.is_group() {
                walk(f, out);
            }
        }
    }
    if let Some(top) = root.get_fields().iter().find(|f| !f.get_basic_info().has_id()) {
        return Err(format!("file {path}: column {} carries no field id (Floe writes one on every column)", top.name()));
    }
    let mut all = vec![];
    walk(root, &mut all);
    let foreign = all.iter().find(|(_, id)| id.is_some_and(|id| id < RESERVED_IDS && schema.field_by_id(id).is_none()));
    match foreign {
        Some((name, Some(id))) => Err(format!(
            "file {path}: column {name} carries field id {id}, which the schema it was written with (id {}) does not have",
            schema.schema_id()
        )),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOC: &str = "s3://lake/wh/web.db/events";

    fn file(name: &str) -> String {
        format!("{LOC}/data/day=2026-03-14/{name}-00000-000-0123456789abcdef.parquet")
    }

    #[test]
    fn only_files_named_for_the_message_under_the_tables_data_location_pass() {
        let ours = ["3f1c9a0e5b7d2c4a8e61-".to_string()];
        assert!(check_path(LOC, &file("3f1c9a0e5b7d2c4a8e61"), &ours).is_ok());
        assert!(check_path(&format!("{LOC}/"), &file("3f1c9a0e5b7d2c4a8e61"), &ours).is_ok(), "a trailing slash");
        let refused = |p: &str| check_path(LOC, p, &ours).unwrap_err();
        for (path, why) in [
            ("s3://other/wh/web.db/events/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3a://lake/wh/web.db/events/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3://lake/wh/web.db/other/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3://lake/wh/web.db/events/metadata/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3://lake/wh/web.db/events-2/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3://lake/wh/web.db/events/data/../../t2/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "segment"),
            ("s3://lake/wh/web.db/events/data/./3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "segment"),
            ("s3://lake/wh/web.db/events/data//3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "segment"),
            ("s3://lake/wh/web.db/events/data/00000-0-5d0e7a91-c2b4-f318-0000-000000000000-00001.parquet", "named"),
            ("s3://lake/wh/web.db/events/data/deadbeef-00000-000-0123456789abcdef.parquet", "named"),
            ("s3://lake/wh/web.db/events/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.json", "named"),
        ] {
            let got = refused(path);
            assert!(got.contains(why), "{path}: {got}");
        }
    }

    #[test]
    fn a_manifest_must_carry_its_own_sources_batch_id() {
        let source = crate::message::SourceRef {
            id: "s3://landing/a.avro#e".into(),
            uri: "s3://landing/a.avro".into(),
            size: 1,
            rows: 1,
            version_id: None,
            created_ms: None,
        };
        let id = batch_key(std::slice::from_ref(&source));
        let mut m = FileManifest {
            version: crate::message::MESSAGE_VERSION,
            table: "web.events".parse().unwrap(),
            batch_id: id.clone(),
            schema_id: 0,
            spec_id: 0,
            sources: vec![source],
            files: vec![],
            evolution: None,
            written_ms: None,
            rows: None,
        };
        assert!(check_manifest_names(LOC, &m).is_ok());
        m.batch_id = "L1-9a41c2e07b5d13f86e02".into();
        assert!(check_manifest_names(LOC, &m).unwrap_err().contains("is not the id of its sources"));
    }
}
