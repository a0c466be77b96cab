//! The writer role: source objects in, Parquet data files and one file manifest out.
//!
//! For one batch of source objects bound for one table: skip objects the ledger says are
//! committed, read and decode the rest (refusing bad ones into the quarantine, never failing
//! the batch for them), drop duplicates of the dedup key, cluster by partition and sort key,
//! encode Parquet with inline metrics under names derived from the batch's identity (the
//! `encode` module, shared with the compactor), upload, and send one [`FileManifest`] to the
//! commit queue. It never touches table metadata.

use std::sync::Arc;
use std::time::Instant;

use arrow_array::RecordBatch;
use bytes::Bytes;
use tracing::{debug, info, instrument, warn};

pub use super::encode::encode;
use crate::config::{EngineConfig, RowRoute};
use crate::convert::evolve::{self, Evolution, SchemaChange};
use crate::convert::{avro, conform, parquet, schema};
use crate::fault::FaultPoint;
use crate::message::{DataFileMeta, FileManifest, MESSAGE_VERSION, RowsTaken, SchemaEvolution, SourceRef};
use crate::ports::{ObjectMeta, Ports, QuarantineRecord, SourceState};
use crate::table::{WriterTable, refreshed_data_file_uri};
use crate::{Error, Rejection, RejectionKind, Result};

/// The identity of a source object: its URI and content version.
pub fn source_id(o: &ObjectMeta) -> String {
    format!("{}#{}", o.uri, o.version)
}

/// What a writer batch did.
#[derive(Debug, Default)]
pub struct WriteOutcome {
    /// The manifest sent to the commit queue, if any source was accepted.
    pub manifest: Option<FileManifest>,
    /// Objects refused, with why.
    pub quarantined: Vec<(ObjectMeta, Rejection)>,
    /// Objects skipped because the ledger says they are committed.
    pub skipped: Vec<ObjectMeta>,
    /// Objects whose notified version was gone when read (recorded, kind `superseded`).
    pub superseded: Vec<ObjectMeta>,
    /// Rows decoded from accepted objects.
    pub rows_in: u64,
    /// Rows written (after dedup).
    pub rows_out: u64,
    /// Duplicate rows dropped.
    pub duplicates: u64,
    /// Source bytes read.
    pub bytes_in: u64,
}

/// An accepted, decoded source object.
struct Decoded {
    source: SourceRef,
    batches: Vec<RecordBatch>,
}

/// An accepted object's rows, conformed to the schema the object needs, and that schema.
pub struct ReadObject {
    /// The rows, in the Arrow shape of `evolution.schema`.
    pub batches: Vec<RecordBatch>,
    /// The table's schema as this object needs it (no changes when the table holds it as is).
    pub evolution: Box<Evolution>,
}

/// Reads and checks one object against `table` (the table's view, possibly evolved by earlier
/// objects of the batch): framing, schema mapping and evolution, decoding, conformance, and,
/// when the table takes only some rows of its objects (`route`), those rows.
///
/// A panic inside a decoder (a bug reached by hostile input) rejects the object rather than
/// taking the batch down with it.
pub fn read_object(
    bytes: &[u8],
    table: &WriterTable,
    route: Option<&RowRoute>,
    cfg: &EngineConfig,
) -> Result<ReadObject, Rejection> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_object_inner(bytes, table, route, cfg)))
        .unwrap_or_else(|p| {
            let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            Err(Rejection::new(
                RejectionKind::Corrupt,
                format!("the decoder failed: {}", what.unwrap_or_else(|| "panic".into())),
            ))
        })
}

fn read_object_inner(
    bytes: &[u8],
    table: &WriterTable,
    route: Option<&RowRoute>,
    cfg: &EngineConfig,
) -> Result<ReadObject, Rejection> {
    let info = avro::inspect(bytes)?;
    let mapped = schema::map_avro_json(&info.schema_json).map_err(schema_rejection)?;
    let (file_schema, extras) = (&mapped.0, &mapped.1);
    let evolution = evolve::evolve(&table.schema, table.last_column_id, file_schema, extras, &table.constraints())
        .map_err(schema_rejection)?;
    check_fixed_sizes(file_schema, cfg.max_value_bytes)?;
    let limits = avro::DecodeLimits {
        fill_bytes_per_row: avro::fill_bytes_per_row(file_schema),
        max_decoded_bytes: cfg.max_decoded_bytes,
        max_block_bytes: cfg.max_block_bytes,
    };
    let batches = avro::decode(bytes, &info, limits)?;
    for b in &batches {
        check_value_sizes(b, cfg.max_value_bytes)?;
        super::map_keys::check(b)?;
    }
    let target = if evolution.changes.is_empty() {
        table.arrow_schema.clone()
    } else {
        parquet::arrow_schema(&evolution.schema).map_err(schema_rejection)?
    };
    let how = conform::Match::Name(&evolution.names);
    // A column the producer does not give takes its write-default (format v3), if it has one.
    let write_defaults = match table.tracks_rows {
        true => crate::table::lineage::defaults(&evolution.schema).1,
        false => Default::default(),
    };
    let mut batches: Vec<RecordBatch> = batches
        .iter()
        .map(|b| conform::conform_batch_filling(b, &target, how, &write_defaults).map_err(schema_rejection))
        .collect::<Result<_, _>>()?;
    if let Some(route) = route {
        // Routing by value: this table takes only its rows of the object.
        let why = |e: Error| Rejection::new(RejectionKind::Schema, format!("routing by {route}: {e}"));
        batches = batches.iter().map(|b| route.filter(b).map_err(why)).collect::<Result<_, _>>()?;
    }
    for b in &batches {
        super::ranges::check(b, table)?;
    }
    Ok(ReadObject { batches, evolution: Box::new(evolution) })
}

/// Refuses a batch holding a single string or bytes value over `limit` (a runaway field that
/// no query engine handles well), naming the top-level field. Only columns whose value buffer
/// exceeds the limit are scanned, so the usual cost is one length check per column.
fn check_value_sizes(batch: &RecordBatch, limit: u64) -> Result<(), Rejection> {
    fn largest(data: &arrow_data::ArrayData, limit: usize) -> Option<usize> {
        use arrow_schema::DataType::*;
        let widest = |lens: &mut dyn Iterator<Item = usize>| lens.max().filter(|m| *m > limit);
        match data.data_type() {
            Utf8 | Binary if data.buffers()[1].len() > limit => {
                widest(&mut data.buffer::<i32>(0).windows(2).map(|w| (w[1] - w[0]) as usize))
            }
            LargeUtf8 | LargeBinary if data.buffers()[1].len() > limit => {
                widest(&mut data.buffer::<i64>(0).windows(2).map(|w| (w[1] - w[0]) as usize))
            }
            _ => data.child_data().iter().find_map(|c| largest(c, limit)),
        }
    }
    let limit_usize = usize::try_from(limit).unwrap_or(usize::MAX);
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if let Some(n) = largest(&column.to_data(), limit_usize) {
            return Err(Rejection::new(
                RejectionKind::TooLarge,
                format!(
                    "field `{}` holds a value of {n} bytes, over the limit of {limit} (max_value_bytes)",
                    field.name()
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a schema with a `fixed` wider than one value may be (`max_value_bytes`), before
/// decoding: the decoder fills a null one with that many zero bytes.
fn check_fixed_sizes(schema: &iceberg::spec::Schema, limit: u64) -> Result<(), Rejection> {
    fn widest(t: &iceberg::spec::Type) -> u64 {
        use iceberg::spec::{PrimitiveType as P, Type};
        match t {
            Type::Primitive(P::Fixed(n)) => *n,
            Type::Primitive(_) => 0,
            Type::Struct(s) => s.fields().iter().map(|f| widest(&f.field_type)).max().unwrap_or(0),
            Type::List(l) => widest(&l.element_field.field_type),
            Type::Map(m) => widest(&m.key_field.field_type).max(widest(&m.value_field.field_type)),
        }
    }
    for f in schema.as_struct().fields() {
        let n = widest(&f.field_type);
        if n > limit {
            let why =
                format!("field `{}` is a fixed of {n} bytes, over the limit of {limit} (max_value_bytes)", f.name);
            return Err(Rejection::new(RejectionKind::TooLarge, why));
        }
    }
    Ok(())
}

fn schema_rejection(e: Error) -> Rejection {
    match e {
        Error::Schema { field, reason } => Rejection::new(RejectionKind::Schema, format!("field `{field}`: {reason}")),
        other => Rejection::new(RejectionKind::Schema, other.to_string()),
    }
}

/// Records a refused source object (and the table it was bound for, if known) in the quarantine.
pub async fn quarantine(
    ports: &Ports,
    table: Option<&crate::TableIdent>,
    obj: &ObjectMeta,
    rejection: &Rejection,
) -> Result<()> {
    warn!(uri = %obj.uri, kind = %rejection.kind, reason = %rejection.reason, "source object quarantined");
    ports.metrics.count("quarantined", 1);
    let record = QuarantineRecord {
        source_id: source_id(obj),
        uri: obj.uri.clone(),
        table: table.map(ToString::to_string),
        rejection: rejection.clone(),
        at_ms: chrono::Utc::now().timestamp_millis(),
    };
    ports.ledger.quarantine(record).await?;
    Ok(())
}

/// Runs the writer role on one batch of source objects for `table`, which takes every row of
/// them.
pub async fn write(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &WriterTable,
    objects: Vec<ObjectMeta>,
) -> Result<WriteOutcome> {
    write_rows(cfg, ports, table, None, objects).await
}

/// Runs the writer role on one batch of source objects for `table`, which takes the rows
/// `route` selects (every row when `None`: routing by value, [`crate::route`]): the new
/// sources are read (each accepted, quarantined or found superseded), their rows encoded and
/// uploaded as data files, and a file manifest sent to the committer.
#[instrument(skip_all, fields(table = %table.ident, objects = objects.len()))]
pub async fn write_rows(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &WriterTable,
    route: Option<&RowRoute>,
    objects: Vec<ObjectMeta>,
) -> Result<WriteOutcome> {
    let started = Instant::now();
    let mut out = WriteOutcome::default();
    let objects = new_sources(ports, &table.ident, objects, &mut out).await?;
    let read = read_all(cfg, ports, table, route, objects, &mut out).await?;
    ports.faults.hit(FaultPoint::WriterAfterRead).await;
    if read.accepted.is_empty() {
        return Ok(out);
    }
    let Read { accepted, view, changes } = read;
    let sources: Vec<SourceRef> = accepted.iter().map(|d| d.source.clone()).collect();
    let batch_id = crate::message::batch_key(&sources);
    let table: &WriterTable = &view;
    let (files, written_ms) = encode_and_upload(cfg, ports, table, accepted, &batch_id, &mut out).await?;
    ports.faults.hit(FaultPoint::WriterAfterUpload).await;
    let manifest = FileManifest {
        version: MESSAGE_VERSION,
        table: table.ident.clone(),
        batch_id,
        schema_id: table.schema.schema_id(),
        spec_id: table.spec.spec_id(),
        sources,
        files,
        evolution: (!changes.is_empty())
            .then(|| Box::new(SchemaEvolution { changes, schema: table.schema.as_ref().clone() })),
        written_ms,
        rows: Some(RowsTaken::of(route)),
    };
    ports.commit_queue.send(manifest.to_json()?).await?;
    ports.faults.hit(FaultPoint::WriterAfterManifestSend).await;
    ports.metrics.count("data_files", manifest.files.len() as u64);
    ports.metrics.count("rows_written", out.rows_out);
    ports.metrics.observe("writer_batch_ms", started.elapsed().as_millis() as f64);
    info!(
        rows_in = out.rows_in,
        rows_out = out.rows_out,
        duplicates = out.duplicates,
        files = manifest.files.len(),
        quarantined = out.quarantined.len(),
        ms = started.elapsed().as_millis() as u64,
        "writer batch done"
    );
    out.manifest = Some(manifest);
    Ok(out)
}

/// The batch's objects that `table` has not committed, once each, in source id order; the
/// committed ones go to `out.skipped`.
///
/// The same notification twice in one batch (S3 delivers at least once) is one object; and
/// objects are read in id order, whatever the delivery order, so a redelivered batch makes the
/// same rows in the same order (dedup keeps the first copy in that order). A committed source
/// sent again (a redelivery, a backfill, the same bytes uploaded again) is skipped; its ledger
/// record's time to live restarts, so it is remembered for as long as this copy could be sent
/// again too.
async fn new_sources(
    ports: &Ports,
    table: &crate::TableIdent,
    mut objects: Vec<ObjectMeta>,
    out: &mut WriteOutcome,
) -> Result<Vec<(String, ObjectMeta)>> {
    objects.sort_by_cached_key(source_id);
    objects.dedup_by_key(|o| source_id(o));
    let ids: Vec<String> = objects.iter().map(source_id).collect();
    let known = ports.ledger.lookup(table, &ids).await?;
    let again: Vec<(String, i64)> = known
        .into_iter()
        .filter_map(|(id, s)| match s {
            SourceState::Committed { snapshot_id } => Some((id, snapshot_id)),
            SourceState::Pending { .. } => None,
        })
        .collect();
    if !again.is_empty() {
        ports.ledger.keep(table, &again).await?;
    }
    let committed: std::collections::HashSet<&str> = again.iter().map(|(id, _)| id.as_str()).collect();
    let mut new = vec![];
    for (id, obj) in ids.into_iter().zip(objects) {
        if committed.contains(id.as_str()) {
            out.skipped.push(obj);
        } else {
            new.push((id, obj));
        }
    }
    Ok(new)
}

/// What the read step accepted, and the schema it needs.
struct Read {
    accepted: Vec<Decoded>,
    /// The batch's schema: the table's, evolved by each accepted object in turn.
    view: std::sync::Arc<WriterTable>,
    /// The changes from the table's schema to `view`'s.
    changes: Vec<SchemaChange>,
}

/// Source objects a writer batch fetches ahead of the one it decodes.
const FETCHES_IN_FLIGHT: usize = 8;

/// Reads each object in turn against the batch's schema so far: accepted (evolving the schema
/// where it adds to it), quarantined with its reason, or recorded as superseded. The objects'
/// bytes are fetched up to [`FETCHES_IN_FLIGHT`] ahead, in order (a batch of 1,000 small objects
/// would otherwise wait 1,000 GETs one after another), while the bytes fetched and not yet
/// decoded stay within `max_object_bytes`: the one object's bytes the memory settings allow for
/// (`EngineConfig::for_memory`), so a batch of big objects is read one at a time as before.
/// Decoding stays in order, since each object is read against the schema the ones before it
/// left.
async fn read_all(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &WriterTable,
    route: Option<&RowRoute>,
    objects: Vec<(String, ObjectMeta)>,
    out: &mut WriteOutcome,
) -> Result<Read> {
    use futures::StreamExt;
    let mut read = Read { accepted: vec![], view: std::sync::Arc::new(table.clone()), changes: vec![] };
    // In KiB; an object bigger than the whole budget takes all of it and is read alone.
    let total = (cfg.max_object_bytes >> 10).clamp(1, u32::MAX as u64) as u32;
    let budget = Arc::new(tokio::sync::Semaphore::new(total as usize));
    // Permits are taken one object after another, in order (`then`), before a fetch starts: a
    // later object never holds bytes an earlier one waits for. Each lives until its object is
    // decoded. (The budget is never closed.)
    let fetches = futures::stream::iter(objects)
        .then(|(id, obj)| {
            let budget = budget.clone();
            async move {
                let kib = (obj.size >> 10).clamp(1, total as u64) as u32;
                let permit = budget.acquire_many_owned(kib).await.ok();
                (id, obj, permit)
            }
        })
        .map(|(id, obj, permit)| async move {
            let got = fetch(cfg, ports, &obj).await;
            (id, obj, got, permit)
        })
        .buffered(FETCHES_IN_FLIGHT);
    let mut fetches = std::pin::pin!(fetches);
    while let Some((id, obj, got, permit)) = fetches.next().await {
        let read_started = Instant::now();
        let fetched = decode_fetched(cfg, ports, &read.view, route, got?, out).await?;
        drop(permit);
        ports.metrics.count("source_objects", 1);
        match fetched {
            Fetched::Superseded(rejection) => {
                info!(uri = %obj.uri, version = %obj.version, "source version superseded before it was read");
                ports.metrics.count("superseded", 1);
                quarantine(ports, Some(&table.ident), &obj, &rejection).await?;
                out.superseded.push(obj);
            }
            Fetched::Read(Ok(ReadObject { batches, evolution })) => {
                if !evolution.changes.is_empty() {
                    info!(uri = %obj.uri, changes = %evolution.changes.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "), "object evolves the schema");
                    read.view = std::sync::Arc::new(read.view.evolved(&evolution)?);
                    read.changes.extend(evolution.changes.iter().cloned());
                }
                let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
                out.rows_in += rows;
                ports.metrics.count("rows", rows);
                debug!(uri = %obj.uri, bytes = obj.size, rows, ms = read_started.elapsed().as_millis() as u64, "object read");
                let source = SourceRef {
                    id,
                    uri: obj.uri.clone(),
                    size: obj.size,
                    rows,
                    version_id: obj.version_id.clone(),
                    created_ms: obj.modified_ms,
                };
                read.accepted.push(Decoded { source, batches });
            }
            Fetched::Read(Err(rejection)) => {
                quarantine(ports, Some(&table.ident), &obj, &rejection).await?;
                out.quarantined.push((obj, rejection));
            }
        }
    }
    Ok(read)
}

/// Files a writer batch uploads at once, and the bytes they may hold together (at most
/// `max_object_bytes`, which the memory settings size; a file bigger than that goes alone).
const UPLOADS_IN_FLIGHT: usize = 16;
const UPLOAD_BYTES_IN_FLIGHT: usize = 64 << 20;

/// Encodes the accepted rows into `table`'s data files (sorted, deduplicated) and uploads them
/// while the next are encoded, [`UPLOADS_IN_FLIGHT`] at a time within
/// [`UPLOAD_BYTES_IN_FLIGHT`] (a batch of ~200 partitions makes ~200 small files: one PUT after
/// another would wait ~200 round trips); the encoder waits when those are taken, so the whole
/// batch's Parquet is never held. Returns the files in the order they were encoded and the
/// oldest time one was written.
async fn encode_and_upload(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &WriterTable,
    accepted: Vec<Decoded>,
    batch_id: &str,
    out: &mut WriteOutcome,
) -> Result<(Vec<DataFileMeta>, Option<i64>)> {
    let objects = accepted.len();
    let bytes_per_row = (out.bytes_in as f64 / out.rows_in.max(1) as f64).max(1.0);
    // Objects read before a later one evolved the schema further take its shape (by field id).
    let batches: Vec<RecordBatch> = accepted
        .into_iter()
        .flat_map(|d| d.batches)
        .map(|b| {
            if b.schema() == table.arrow_schema {
                Ok(b)
            } else {
                conform::conform_batch_filling(&b, &table.arrow_schema, conform::Match::Id, &table.defaults.1)
            }
        })
        .collect::<Result<_>>()?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<(DataFileMeta, Bytes)>(2);
    let (t, c, key) = (table.clone(), cfg.clone(), batch_id.to_string());
    let encoder = tokio::task::spawn_blocking(move || {
        encode(&t, &c, batches, &key, bytes_per_row, &mut |meta, body| {
            tx.blocking_send((meta, body)).map_err(|_| Error::internal("the uploader stopped"))
        })
    });
    // Written before any upload starts: the oldest a file's bytes can be.
    let mut written_ms = Some(chrono::Utc::now().timestamp_millis());
    let bytes_in_flight = UPLOAD_BYTES_IN_FLIGHT.min(cfg.max_object_bytes as usize).max(1 << 20);
    let slots = Arc::new(tokio::sync::Semaphore::new(UPLOADS_IN_FLIGHT));
    let budget = Arc::new(tokio::sync::Semaphore::new(bytes_in_flight >> 10));
    let mut uploads = tokio::task::JoinSet::new();
    let mut done: Vec<(usize, DataFileMeta, Option<i64>)> = vec![];
    let closed = |e: tokio::sync::AcquireError| Error::internal(format!("upload slots closed: {e}"));
    let joined = |r: std::result::Result<Result<_>, tokio::task::JoinError>| {
        r.map_err(|e| Error::internal(format!("upload task failed: {e}")))?
    };
    let mut n = 0;
    while let Some((meta, body)) = rx.recv().await {
        let kib = (body.len() >> 10).clamp(1, bytes_in_flight >> 10) as u32;
        let slot = slots.clone().acquire_owned().await.map_err(closed)?;
        let bytes = budget.clone().acquire_many_owned(kib).await.map_err(closed)?;
        let (ports, cfg, i) = (ports.clone(), cfg.clone(), n);
        n += 1;
        uploads.spawn(async move {
            let mut meta = meta;
            let (path, at) = put_data_file(&ports, &cfg, &meta.path, body).await?;
            drop((slot, bytes));
            meta.path = path;
            Ok::<_, Error>((i, meta, at))
        });
        while let Some(r) = uploads.try_join_next() {
            done.push(joined(r)?);
        }
    }
    while let Some(r) = uploads.join_next().await {
        done.push(joined(r)?);
    }
    done.sort_unstable_by_key(|(i, _, _)| *i);
    let mut files = Vec::with_capacity(done.len());
    for (_, meta, at) in done {
        written_ms = oldest(written_ms, at);
        out.rows_out += meta.record_count;
        files.push(meta);
    }
    let duplicates = encoder
        .await
        .map_err(|e| Error::internal(format!("encoder task failed: {e}")))?
        .map_err(|e| Error::WriteFailed { table: table.ident.to_string(), objects, source: Box::new(e) })?;
    out.duplicates = duplicates as u64;
    Ok((files, written_ms))
}

/// What reading one source object gave.
enum Fetched {
    /// Its batches, or why it is refused.
    Read(Result<ReadObject, Rejection>),
    /// The notified version is gone (overwritten or deleted before it was read): recorded with
    /// kind `superseded`, not as a bad object; a newer version's notification carries its bytes.
    Superseded(Rejection),
}

/// Exactly the notified version of `obj`'s bytes, or why there are none to read.
async fn fetch(cfg: &EngineConfig, ports: &Ports, obj: &ObjectMeta) -> Result<std::result::Result<Bytes, Fetched>> {
    if obj.size > cfg.max_object_bytes {
        let why = format!("{} bytes is over the limit of {}", obj.size, cfg.max_object_bytes);
        return Ok(Err(Fetched::Read(Err(Rejection::new(RejectionKind::TooLarge, why)))));
    }
    if let Err(why) = crate::message::check_source_id(&obj.uri, &source_id(obj)) {
        // The committer would refuse its manifest: say so here, once, for this object alone.
        let why = format!("{why}: rename the object");
        return Ok(Err(Fetched::Read(Err(Rejection::new(RejectionKind::Unreadable, why)))));
    }
    match ports.store.get_version(obj).await {
        Ok(Some(bytes)) => Ok(Ok(bytes)),
        Ok(None) => Ok(Err(Fetched::Superseded(superseded(obj)))),
        Err(crate::PortError::Invalid(why)) => {
            Ok(Err(Fetched::Read(Err(Rejection::new(RejectionKind::Unreadable, why)))))
        }
        Err(e) => Err(e.into()),
    }
}

/// Decodes an object's fetched bytes against `table` (on a blocking thread).
async fn decode_fetched(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &std::sync::Arc<WriterTable>,
    route: Option<&RowRoute>,
    got: std::result::Result<Bytes, Fetched>,
    out: &mut WriteOutcome,
) -> Result<Fetched> {
    let bytes = match got {
        Ok(bytes) => bytes,
        Err(fetched) => return Ok(fetched),
    };
    out.bytes_in += bytes.len() as u64;
    ports.metrics.count("source_bytes", bytes.len() as u64);
    let (t, r, c) = (table.clone(), route.cloned(), cfg.clone());
    let read = tokio::task::spawn_blocking(move || read_object(&bytes, &t, r.as_ref(), &c))
        .await
        .map_err(|e| Error::internal(format!("decoder task failed: {e}")))?;
    Ok(Fetched::Read(read))
}

/// Why `obj` cannot be read: its notified version is gone.
pub(crate) fn superseded(obj: &ObjectMeta) -> Rejection {
    let version = obj.version_id.as_deref().unwrap_or(&obj.version);
    let why = format!("version {version} is no longer there (overwritten or deleted before it was read)");
    Rejection::new(RejectionKind::Superseded, why)
}

/// Uploads a data file create-only; returns where it lives and when its bytes were written
/// (now, or the kept object's modification time, `None` if the store does not say: what the
/// committer's age limit judges).
///
/// Its name carries a digest of its bytes, so an object already there of the same size holds
/// these very bytes (an earlier attempt of the same batch) and is kept, unless it was written
/// more than half the commit age limit ago: a message naming it would reach the committer too
/// old to commit, be sent back, and find the same file again until the orphan sweep deleted
/// it. Those bytes go to a fresh name instead ([`refreshed_data_file_uri`]) and the old file
/// stays where it is (the sweep deletes it unless an earlier commit holds it; sources and tasks
/// commit once by their ids, never by file names). A conflict with no object there (S3's 409 for a
/// concurrent conditional write still in flight) fails the batch, to be written again: a
/// manifest never names a file that is not there.
pub(crate) async fn put_data_file(
    ports: &Ports,
    cfg: &EngineConfig,
    uri: &str,
    body: Bytes,
) -> Result<(String, Option<i64>)> {
    let size = body.len() as u64;
    let existing = match ports.store.put_if_absent(uri, body.clone()).await {
        Ok(()) => return Ok((uri.to_string(), Some(chrono::Utc::now().timestamp_millis()))),
        Err(crate::PortError::Conflict(why)) => match ports.store.head(uri).await {
            Ok(existing) => existing,
            Err(crate::PortError::NotFound(_)) => return Err(crate::PortError::Conflict(why).into()),
            Err(e) => return Err(e.into()),
        },
        Err(e) => return Err(e.into()),
    };
    if existing.size != size {
        return Err(Error::internal(format!(
            "data file {uri} exists with {} bytes where these bytes are {size}: a digest collision or a bug",
            existing.size
        )));
    }
    let now = chrono::Utc::now().timestamp_millis();
    let limit = cfg.commit_age_limit(ports.pointer.manages_files());
    let reusable = match (limit, existing.modified_ms) {
        (None, at) => Some(at),
        (Some(limit), Some(at)) => (now - at <= limit.as_millis() as i64 / 2).then_some(Some(at)),
        (Some(_), None) => None,
    };
    if let Some(at) = reusable {
        return Ok((uri.to_string(), at));
    }
    let fresh = refreshed_data_file_uri(uri, now);
    warn!(%uri, %fresh, "a file found already written is too old to commit; its bytes go to a fresh name");
    ports.store.put_if_absent(&fresh, body).await?;
    Ok((fresh, Some(now)))
}

/// The oldest of the write times of a message's files (unknown if any is unknown).
pub(crate) fn oldest(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a?.min(b?))
}
