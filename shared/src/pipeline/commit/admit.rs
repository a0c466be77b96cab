//! What the committer admits: every message is checked against the table it names, as only
//! Floe's own roles could have sent it, before anything is changed (docs/ARCHITECTURE.md,
//! "Trust"). A refusal is a [`Refusal`]: the message fails alone as poison, with its reason.
//!
//! - The sender must be the role that sends that kind of message ([`Senders`]): a writer for an
//!   append or a create, a compactor for a rewrite.
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

use crate::message::{CommitRequest, DataFileMeta, FileManifest, RewriteRequest, batch_key};
use crate::pipeline::ranged::{Ranged, Traffic};
use crate::ports::{Message, ObjectStore};
use crate::route::Router;
use crate::{PortError, Result, TableIdent};

/// Why a message is refused: said in the log, the dead-letter queue and the metric's reason.
pub(crate) type Refusal = String;

/// Who may send what to the commit queue, by principal: the part of SQS's `SenderId` before its
/// `:` (a role's unique id, `AROA…`, whatever the session; or a user's id). Appends and creates
/// come from a writer, rewrites from a compactor; each role's queue rights alone would let
/// either send both. A copy the committer sent (a contended message sent again, a refused one
/// redriven from the dead-letter queue) counts as sent by the original's sender, which the
/// committer recorded on it ([`Message::sent_for`]), and only then is that record believed.
/// Operators who redrive go in the appends list only: an append they send is held to every
/// check a writer's is ([`check_files`]) and can delete nothing, while a rewrite names files to
/// remove, so it is admitted from a compactor (or a committer's copy recording one) alone; a
/// dead-lettered rewrite is planned again from the table instead, and its outputs are left to
/// the orphan sweep. A committer given none admits any sender (embedded mode, whose queue is the
/// process's own).
#[derive(Debug, Clone)]
pub struct Senders {
    appends: BTreeSet<String>,
    rewrites: BTreeSet<String>,
    committer: String,
}

impl Senders {
    /// The principals that may send appends and creates, those that may send rewrites, and the
    /// committer's own.
    pub fn new(
        appends: impl IntoIterator<Item = String>,
        rewrites: impl IntoIterator<Item = String>,
        committer: String,
    ) -> Self {
        Senders { appends: appends.into_iter().collect(), rewrites: rewrites.into_iter().collect(), committer }
    }

    /// Whether `m`'s sender may send `request`; if not, why.
    pub fn admit(&self, request: &CommitRequest, m: &Message) -> Result<(), Refusal> {
        let sender = m.sender.as_deref().ok_or("the message carries no sender id (SenderId)")?;
        let origin = self.origin(m).ok_or_else(|| {
            format!("a message the committer ({sender}) sent names no original sender (floe-sent-for)")
        })?;
        let (allowed, what, setting) = match request {
            CommitRequest::Append(_) | CommitRequest::Create(_) => {
                (&self.appends, "appends or creates", "FLOE_APPEND_SENDERS")
            }
            CommitRequest::Rewrite(_) => (&self.rewrites, "rewrites", "FLOE_REWRITE_SENDERS"),
        };
        if allowed.contains(principal(origin)) {
            return Ok(());
        }
        let via = if origin == sender { String::new() } else { format!(" (sent on by the committer, {sender})") };
        Err(format!("sender {origin}{via} may not send {what}: it is not in {setting}"))
    }

    /// Who `m` was sent by, as far as the committer believes: its sender, or for a copy the
    /// committer itself sent, the original's sender it recorded (`None` if it recorded none).
    pub fn origin<'m>(&self, m: &'m Message) -> Option<&'m str> {
        match m.sender.as_deref() {
            Some(s) if principal(s) == self.committer => m.sent_for.as_deref(),
            s => s,
        }
    }
}

/// The principal of a `SenderId`: a role's unique id without its session (`AROA…:session`).
fn principal(sender: &str) -> &str {
    sender.split_once(':').map_or(sender, |(p, _)| p)
}

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

    /// Whether `request` may name its table; if not, why. Appends and creates only for a table
    /// the writers are routed to, rewrites only for one the compactors compact: a compromised
    /// writer cannot append to a table another engine owns that Floe only compacts, nor a
    /// compactor rewrite a routed table it was not given.
    pub fn admit(&self, request: &CommitRequest) -> Result<(), String> {
        let table = request.table();
        match request {
            CommitRequest::Rewrite(_) if self.compacted.contains(table) => Ok(()),
            CommitRequest::Rewrite(_) => Err(format!(
                "table {table} is not one this deployment compacts (FLOE_COMPACT_TABLES, else FLOE_DEFAULT_TABLE): \
                 no rewrite of it is taken"
            )),
            _ if self.router.reaches(table) => Ok(()),
            _ => Err(format!(
                "table {table} is not one this deployment routes objects to (FLOE_CONFIG, FLOE_DEFAULT_TABLE): no \
                 append or create of it is taken"
            )),
        }
    }
}

impl Tables {
    /// Why the sources of a manifest for `table` may not go back to the writers (an overlapping
    /// or aged manifest's), if they may not: each must route to `table` and lie outside the
    /// warehouse bucket `warehouse` (a writer may read the warehouse: a forged source there would
    /// have table files ingested as data).
    pub(super) fn requeue(&self, table: &TableIdent, uris: &[&str], warehouse: Option<&str>) -> Result<(), Refusal> {
        let bucket = |u: &str| u.strip_prefix("s3://").and_then(|r| r.split('/').next()).map(str::to_string);
        let home = warehouse.and_then(bucket);
        for uri in uris {
            let routed = self.router.route(uri).is_ok_and(|to| to.iter().any(|c| c.table == *table));
            if !routed || (home.is_some() && bucket(uri) == home) {
                return Err(format!(
                    "source {uri} does not route to {table} or lies in the warehouse bucket: the committer would send \
                     it back to the writers"
                ));
            }
        }
        Ok(())
    }
}

/// Why `path` cannot be a data file Floe wrote into the table at `location`, named for one of
/// `keys` (a writer batch's id, or a compaction task's `L<level>-<task>` or `late-<task>`), if it
/// cannot. It must start with `<location>/data/` exactly (the scheme and spelling of the table's
/// own location, as writers join it: no other bucket, table or scheme), its segments below must
/// be plain names (no `.`, `..`, empty or control-character segment: a local store would
/// resolve them), and its name must be one of Floe's data file names
/// (`<key>-NNNNN-NNN-<16 hex>[-r<ms>].parquet`, [`crate::table::is_floe_data_file`]) whose key is
/// exactly one of `keys` (so task `a` cannot claim the files of task `a-b`).
pub(super) fn check_path(location: &str, path: &str, keys: &[String]) -> Result<(), Refusal> {
    // Writers join `<location>/data/` as the location is spelt (a trailing slash doubles).
    let spellings = [format!("{}/data/", location.trim_end_matches('/')), format!("{location}/data/")];
    let Some(rest) = spellings.iter().find_map(|d| path.strip_prefix(d.as_str())) else {
        return Err(format!("file {path} is not under the table's data location {}", spellings[0]));
    };
    let plain = |s: &&str| {
        !s.is_empty() && *s != "." && *s != ".." && !s.contains(['\\', '?', '#']) && !s.chars().any(char::is_control)
    };
    if !rest.split('/').all(|s| plain(&s)) {
        return Err(format!("file {path} has a path segment that is empty, `.`, `..` or not a plain name"));
    }
    let name = rest.rsplit('/').next().unwrap_or_default();
    if !crate::table::is_floe_data_file(path) || !keys.iter().any(|k| name_key(name) == Some(k.as_str())) {
        return Err(format!("file {path} is not named as Floe names this message's files ({}-…)", keys.join("-… or ")));
    }
    Ok(())
}

/// The key a data file's name starts with: its name less `-NNNNN-NNN-<digest>[-r<ms>].parquet`.
fn name_key(name: &str) -> Option<&str> {
    let stem = name.strip_suffix(".parquet")?;
    let stem = match stem.rsplit_once("-r") {
        Some((rest, ms)) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => stem,
    };
    stem.rsplitn(4, '-').nth(3)
}

/// Why a file manifest's names cannot be a writer's, if they cannot: its batch id must be the id
/// of its sources, and its files named for that batch under the table's data location.
pub(super) fn check_manifest_names(location: &str, m: &FileManifest) -> Result<(), Refusal> {
    let mut ids = std::collections::HashSet::new();
    for s in &m.sources {
        crate::message::check_source_id(&s.uri, &s.id)?;
        if !ids.insert(s.id.as_str()) {
            return Err(format!("source {} is listed twice", s.id));
        }
    }
    let expected = batch_key(&m.sources);
    if m.batch_id != expected {
        return Err(format!("batch id {:?} is not the id of its sources ({expected})", m.batch_id));
    }
    let keys = [expected];
    m.files.iter().try_for_each(|f| check_path(location, &f.path, &keys))?;
    let mut seen = std::collections::HashSet::new();
    if let Some(f) = m.files.iter().find(|f| !seen.insert(f.path.as_str())) {
        return Err(format!("file {} is listed twice", f.path));
    }
    // A batch without files records its sources as committed: only when none of them held a row
    // it takes (a writer's sources of a value route may hold rows of other tables only).
    let takes_all = !matches!(m.rows, Some(crate::message::RowsTaken::Routed(_)));
    if m.files.is_empty()
        && takes_all
        && let Some(s) = m.sources.iter().find(|s| s.rows > 0)
    {
        return Err(format!("it writes no file for its sources, but {} holds {} rows", s.uri, s.rows));
    }
    Ok(())
}

/// The keys a rewrite request's added files are named for: `L<level>-<task>`, or a late file's
/// `late-<task>`.
fn rewrite_keys(r: &RewriteRequest) -> [String; 2] {
    [format!("L{}-{}", r.level, r.task_id), format!("{}{}", crate::pipeline::compact::plan::LATE_PREFIX, r.task_id)]
}

/// Why a rewrite request's added files cannot be its compactor's, if they cannot.
pub(super) fn check_rewrite_names(location: &str, r: &RewriteRequest) -> Result<(), Refusal> {
    let keys = rewrite_keys(r);
    r.added.iter().try_for_each(|f| check_path(location, &f.path, &keys))?;
    let mut seen = std::collections::HashSet::new();
    match r.added.iter().find(|f| !seen.insert(f.path.as_str())) {
        Some(f) => Err(format!("file {} is listed twice", f.path)),
        None => Ok(()),
    }
}

/// Footers read at once: each is a HEAD and (most often) one ranged GET.
const FOOTERS_IN_FLIGHT: usize = 16;

/// Bytes read from a file's end in one go: most footers fit, sparing a second read.
const FOOTER_HINT: usize = 64 << 10;

/// The lowest field id Iceberg reserves for metadata columns (`_row_id`, `_file`, ...): a v3
/// rewrite's files carry `_row_id` and `_last_updated_sequence_number` under theirs.
const RESERVED_IDS: i32 = i32::MAX - 200;

/// What reading a message's files found against it.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Found {
    /// A file is not what the message says: the message is refused.
    Refused(Refusal),
    /// A file could not be read now (the store failing, or the object unreadable to this role):
    /// the message alone is tried again later; the others go on.
    Unreadable(String),
}

/// Whether every file is what its message says: there, of its size, Parquet with its row count
/// and only field ids of the schema it was written with. `files` are each the key of their
/// message, the schema and the file; the answer holds what was found against each message that
/// does not pass (a refusal rather than a read failure). [`FOOTERS_IN_FLIGHT`] files are read at
/// once, across messages; the files of a message already refused are not read (a forged
/// message of many files costs the reads up to its first refusal).
///
/// `written_after` (ms since the epoch: the commit age limit, where there is one) refuses a
/// file the store says was last written before it, whatever its message says: a message cannot
/// make the committer register a file old enough for the orphan sweep to have judged it.
pub(super) async fn check_files<K: Eq + std::hash::Hash + Clone>(
    store: &Arc<dyn ObjectStore>,
    files: Vec<(K, &Schema, &DataFileMeta)>,
    written_after: Option<i64>,
) -> HashMap<K, Found> {
    let refused = std::sync::Mutex::new(std::collections::HashSet::new());
    let checks: Vec<_> =
        files.into_iter().map(|(key, schema, f)| check_keyed(store, key, schema, f, written_after, &refused)).collect();
    let mut results = futures::stream::iter(checks).buffer_unordered(FOOTERS_IN_FLIGHT);
    let mut found: HashMap<K, Found> = HashMap::new();
    while let Some((key, r)) = results.next().await {
        match r {
            Ok(Ok(())) => {}
            Ok(Err(why)) => {
                refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key.clone());
                let slot = found.entry(key).or_insert_with(|| Found::Refused(why.clone()));
                if matches!(slot, Found::Unreadable(_)) {
                    *slot = Found::Refused(why);
                }
            }
            Err(e) => {
                found.entry(key).or_insert(Found::Unreadable(e.to_string()));
            }
        }
    }
    found
}

async fn check_keyed<K: Eq + std::hash::Hash>(
    store: &Arc<dyn ObjectStore>,
    key: K,
    schema: &Schema,
    f: &DataFileMeta,
    written_after: Option<i64>,
    refused: &std::sync::Mutex<std::collections::HashSet<K>>,
) -> (K, std::result::Result<Result<(), Refusal>, PortError>) {
    if refused.lock().unwrap_or_else(std::sync::PoisonError::into_inner).contains(&key) {
        return (key, Ok(Ok(())));
    }
    let r = check_file(store, schema, f, written_after).await;
    (key, r)
}

/// The largest footer read: a file that says its footer is larger is refused unread (a forged
/// length would have the committer fetch gigabytes). Floe's footers are kilobytes.
const MAX_FOOTER_BYTES: u64 = 16 << 20;

async fn check_file(
    store: &Arc<dyn ObjectStore>,
    schema: &Schema,
    f: &DataFileMeta,
    written_after: Option<i64>,
) -> std::result::Result<Result<(), Refusal>, PortError> {
    let path = f.path.as_str();
    let (size, modified) = match store.head(path).await {
        Ok(meta) => (meta.size, meta.modified_ms),
        Err(PortError::NotFound(_)) => return Ok(Err(format!("file {path} does not exist"))),
        Err(e) => return Err(e),
    };
    if let (Some(limit), Some(at)) = (written_after, modified)
        && at < limit
    {
        return Ok(Err(format!(
            "file {path} was last written at {at} ms, before the commit age limit ({limit} ms), whatever its message \
             says: the orphan sweep may have judged it"
        )));
    }
    if size != f.file_size_in_bytes {
        return Ok(Err(format!("file {path} holds {size} bytes, not the {} the message says", f.file_size_in_bytes)));
    }
    if size < 12 {
        return Ok(Err(format!("file {path} is not a Parquet file: {size} bytes")));
    }
    // The tail first (the reader keeps it, so the footer parse below reads nothing more when the
    // footer fits in it): its last 8 bytes give the footer's length.
    let mut reader = Ranged::new(store.clone(), path, size, Arc::new(Traffic::default()));
    let tail = match reader.read(size.saturating_sub(FOOTER_HINT as u64)..size).await {
        Ok(tail) => tail,
        Err(PortError::NotFound(_)) => return Ok(Err(format!("file {path} does not exist"))),
        Err(e) => return Err(e),
    };
    let end = &tail[tail.len() - 8..];
    let footer = u64::from(u32::from_le_bytes([end[0], end[1], end[2], end[3]]));
    if &end[4..] != b"PAR1" {
        return Ok(Err(format!("file {path} is not a Parquet file (no PAR1 at its end)")));
    }
    if footer > MAX_FOOTER_BYTES.min(size - 8) {
        return Ok(Err(format!(
            "file {path} says its footer holds {footer} bytes, past {MAX_FOOTER_BYTES} or the file"
        )));
    }
    let parse = ParquetMetaDataReader::new().with_prefetch_hint(Some(FOOTER_HINT));
    let meta = match parse.load_and_finish(&mut reader, size).await {
        Ok(meta) => meta,
        Err(parquet::errors::ParquetError::External(e)) => match e.downcast::<PortError>() {
            Ok(port) => return Err(*port),
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
        return Err(format!(
            "file {path}: column {} carries no field id (Floe writes one on every column)",
            top.name()
        ));
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
        let ours = ["3f1c9a0e5b7d2c4a8e61".to_string()];
        assert!(check_path(LOC, &file("3f1c9a0e5b7d2c4a8e61"), &ours).is_ok());
        assert!(check_path(&format!("{LOC}/"), &file("3f1c9a0e5b7d2c4a8e61"), &ours).is_ok(), "a trailing slash");
        let doubled = format!("{LOC}//data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet");
        assert!(check_path(&format!("{LOC}/"), &doubled, &ours).is_ok(), "as a writer joins a trailing slash");
        let refreshed = file("3f1c9a0e5b7d2c4a8e61").replace(".parquet", "-r1700000000000.parquet");
        assert!(check_path(LOC, &refreshed, &ours).is_ok(), "a refreshed name");
        let task = ["L1-abc".to_string()];
        assert!(check_path(LOC, &file("L1-abc"), &task).is_ok());
        assert!(check_path(LOC, &file("L1-abc-def"), &task).is_err(), "task abc cannot claim task abc-def's files");
        let refused = |p: &str| check_path(LOC, p, &ours).unwrap_err();
        for (path, why) in [
            ("s3://other/wh/web.db/events/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3a://lake/wh/web.db/events/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            ("s3://lake/wh/web.db/other/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            (
                "s3://lake/wh/web.db/events/metadata/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet",
                "not under",
            ),
            ("s3://lake/wh/web.db/events-2/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet", "not under"),
            (
                "s3://lake/wh/web.db/events/data/../../t2/data/3f1c9a0e5b7d2c4a8e61-00000-000-0123456789abcdef.parquet",
                "segment",
            ),
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
            rows: 0,
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
        assert!(check_manifest_names(LOC, &m).is_ok(), "an empty source, no files");
        m.sources[0].rows = 3;
        assert!(check_manifest_names(LOC, &m).unwrap_err().contains("writes no file for its sources"));
        m.rows = Some(crate::message::RowsTaken::Routed(crate::route::RowRoute {
            column: "event_type".into(),
            values: ["click".to_string()].into(),
            others: false,
        }));
        assert!(check_manifest_names(LOC, &m).is_ok(), "a value route may take none of a source's rows");
        m.batch_id = "L1-9a41c2e07b5d13f86e02".into();
        assert!(check_manifest_names(LOC, &m).unwrap_err().contains("is not the id of its sources"));
    }

    #[test]
    fn one_source_cannot_stand_for_another_batchs_sources() {
        let source = |uri: &str, id: &str| crate::message::SourceRef {
            id: id.into(),
            uri: uri.into(),
            size: 1,
            rows: 0,
            version_id: None,
            created_ms: None,
        };
        let victim = [source("s3://l/a", "s3://l/a#1"), source("s3://l/b", "s3://l/b#2")];
        let manifest = |sources: Vec<crate::message::SourceRef>| FileManifest {
            version: crate::message::MESSAGE_VERSION,
            table: "web.events".parse().unwrap(),
            batch_id: batch_key(&sources),
            schema_id: 0,
            spec_id: 0,
            sources,
            files: vec![],
            evolution: None,
            written_ms: None,
            rows: None,
        };
        assert!(check_manifest_names(LOC, &manifest(victim.to_vec())).is_ok());
        // One id that joins the victim's ids by a line break hashes to the victim's batch id.
        for (uri, id, why) in [
            ("s3://l/a", "s3://l/a#1\ns3://l/b#2", "'#' or a control character"),
            ("s3://l/a#1\ns3://l/b", "s3://l/a#1\ns3://l/b#2", "control character"),
            ("s3://l/z", "s3://l/a#1\ns3://l/b#2", "is not its URI"),
        ] {
            let forged = manifest(vec![source(uri, id)]);
            assert_eq!(forged.batch_id, batch_key(&victim), "the forgery collides without the check");
            let got = check_manifest_names(LOC, &forged).unwrap_err();
            assert!(got.contains(why), "{id:?}: {got}");
        }
        let twice = manifest(vec![victim[0].clone(), victim[0].clone()]);
        assert!(check_manifest_names(LOC, &twice).unwrap_err().contains("listed twice"));
    }
}
