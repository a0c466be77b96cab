//! The writer role: source objects in, Parquet data files and one file manifest out.
//!
//! For one batch of source objects bound for one table: skip objects the ledger says are
//! committed, read and decode the rest (refusing bad ones into the quarantine, never failing
//! the batch for them), drop duplicates of the dedup key, cluster by partition and sort key,
//! encode Parquet with inline metrics under names derived from the batch's identity, upload,
//! and send one [`FileManifest`] to the commit queue. It never touches table metadata.

use std::time::Instant;

use arrow_array::RecordBatch;
use bytes::Bytes;
use sha2::{Digest, Sha256};
use tracing::{info, instrument, warn};

use super::cluster::{cluster, dedup, key_batch};
use crate::config::EngineConfig;
use crate::convert::{avro, conform, parquet, schema};
use crate::fault::FaultPoint;
use crate::message::{DataFileMeta, FileManifest, MESSAGE_VERSION, SourceRef};
use crate::ports::{ObjectMeta, Ports, QuarantineRecord, SourceState};
use crate::table::{WriterTable, data_file_uri, partition_path};
use crate::{Error, Rejection, Result};

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

/// Reads and checks one object: framing, schema mapping, decoding, conformance to the table.
///
/// A panic inside a decoder (a bug reached by hostile input) rejects the object rather than
/// taking the batch down with it.
pub fn read_object(bytes: &[u8], table: &WriterTable, cfg: &EngineConfig) -> Result<Vec<RecordBatch>, Rejection> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| read_object_inner(bytes, table, cfg))).unwrap_or_else(
        |p| {
            let what = p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()));
            Err(Rejection::new("corrupt", format!("the decoder failed: {}", what.unwrap_or_else(|| "panic".into()))))
        },
    )
}

fn read_object_inner(bytes: &[u8], table: &WriterTable, cfg: &EngineConfig) -> Result<Vec<RecordBatch>, Rejection> {
    let info = avro::inspect(bytes)?;
    let avro_schema = schema::parse_avro_schema(&info.schema_json).map_err(schema_rejection)?;
    schema::avro_to_iceberg(&avro_schema).map_err(schema_rejection)?;
    let batches = avro::decode(bytes, &info, cfg.max_decoded_bytes)?;
    for b in &batches {
        check_value_sizes(b, cfg.max_value_bytes)?;
    }
    batches.iter().map(|b| conform::conform_batch(b, &table.arrow_schema).map_err(schema_rejection)).collect()
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
                "too-large",
                format!(
                    "field `{}` holds a value of {n} bytes, over the limit of {limit} (max_value_bytes)",
                    field.name()
                ),
            ));
        }
    }
    Ok(())
}

fn schema_rejection(e: Error) -> Rejection {
    match e {
        Error::Schema { field, reason } => Rejection::new("schema", format!("field `{field}`: {reason}")),
        other => Rejection::new("schema", other.to_string()),
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

/// Runs the writer role on one batch of source objects for `table`.
#[instrument(skip_all, fields(table = %table.ident, objects = objects.len()))]
pub async fn write(
    cfg: &EngineConfig,
    ports: &Ports,
    table: &WriterTable,
    objects: Vec<ObjectMeta>,
) -> Result<WriteOutcome> {
    let started = Instant::now();
    let mut out = WriteOutcome::default();
    // The same notification twice in one batch (S3 delivers at least once) is one object.
    let mut seen = std::collections::HashSet::new();
    let objects: Vec<ObjectMeta> = objects.into_iter().filter(|o| seen.insert(source_id(o))).collect();
    let ids: Vec<String> = objects.iter().map(source_id).collect();
    let known = ports.ledger.lookup(&table.ident, &ids).await?;
    let committed: std::collections::HashSet<&str> =
        known.iter().filter(|(_, s)| matches!(s, SourceState::Committed { .. })).map(|(id, _)| id.as_str()).collect();

    let mut accepted: Vec<Decoded> = vec![];
    for (obj, id) in objects.into_iter().zip(ids.iter()) {
        if committed.contains(id.as_str()) {
            out.skipped.push(obj);
            continue;
        }
        let read_started = Instant::now();
        let read = if obj.size > cfg.max_object_bytes {
            Err(Rejection::new(
                "too-large",
                format!("{} bytes is over the limit of {}", obj.size, cfg.max_object_bytes),
            ))
        } else {
            let bytes = ports.store.get(&obj.uri).await?;
            out.bytes_in += bytes.len() as u64;
            ports.metrics.count("source_bytes", bytes.len() as u64);
            let (t, c) = (table.clone(), cfg.clone());
            tokio::task::spawn_blocking(move || read_object(&bytes, &t, &c))
                .await
                .map_err(|e| Error::Config(format!("decoder task failed: {e}")))?
        };
        ports.metrics.count("source_objects", 1);
        match read {
            Ok(batches) => {
                let rows: u64 = batches.iter().map(|b| b.num_rows() as u64).sum();
                out.rows_in += rows;
                ports.metrics.count("rows", rows);
                info!(uri = %obj.uri, bytes = obj.size, rows, ms = read_started.elapsed().as_millis() as u64, "object read");
                let source = SourceRef { id: id.clone(), uri: obj.uri.clone(), size: obj.size, rows };
                accepted.push(Decoded { source, batches });
            }
            Err(rejection) => {
                quarantine(ports, Some(&table.ident), &obj, &rejection).await?;
                out.quarantined.push((obj, rejection));
            }
        }
    }
    ports.faults.hit(FaultPoint::WriterAfterRead).await;
    if accepted.is_empty() {
        return Ok(out);
    }

    let sources: Vec<SourceRef> = accepted.iter().map(|d| d.source.clone()).collect();
    let batch_id = batch_key(&sources);
    let bytes_per_row = (out.bytes_in as f64 / out.rows_in.max(1) as f64).max(1.0);
    let batches: Vec<RecordBatch> = accepted.into_iter().flat_map(|d| d.batches).collect();
    let (t, c, key) = (table.clone(), cfg.clone(), batch_id.clone());
    let encoded = tokio::task::spawn_blocking(move || encode(&t, &c, batches, &key, bytes_per_row))
        .await
        .map_err(|e| Error::Config(format!("encoder task failed: {e}")))?
        .map_err(|e| Error::WriteFailed {
            table: table.ident.to_string(),
            objects: sources.len(),
            source: Box::new(e),
        })?;
    out.duplicates = encoded.duplicates as u64;
    let mut files = Vec::with_capacity(encoded.files.len());
    for (meta, body) in encoded.files {
        ports.store.put(&meta.path, body).await?;
        out.rows_out += meta.record_count;
        files.push(meta);
    }
    ports.faults.hit(FaultPoint::WriterAfterUpload).await;
    let manifest = FileManifest {
        version: MESSAGE_VERSION,
        table: table.ident.clone(),
        batch_id,
        schema_id: table.schema.schema_id(),
        spec_id: table.spec.spec_id(),
        sources,
        files,
    };
    ports.commit_queue.send(manifest.to_json()?).await?;
    ports.faults.hit(FaultPoint::WriterAfterManifestSend).await;
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

/// Deterministic id of a batch: a hash of its sorted source ids.
fn batch_key(sources: &[SourceRef]) -> String {
    let mut ids: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
    ids.sort_unstable();
    let mut h = Sha256::new();
    for id in ids {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    hex::encode(&h.finalize()[..10])
}

/// Encoded data files of a batch.
pub struct Encoded {
    /// Each file's manifest entry and bytes.
    pub files: Vec<(DataFileMeta, Bytes)>,
    /// Duplicate rows dropped.
    pub duplicates: usize,
}

/// The CPU part of a writer batch: dedup, cluster, and encode Parquet files with metrics.
pub fn encode(
    table: &WriterTable,
    cfg: &EngineConfig,
    batches: Vec<RecordBatch>,
    batch_key: &str,
    source_bytes_per_row: f64,
) -> Result<Encoded> {
    let keys = key_batch(&batches, table)?;
    let keep = dedup(&keys, &table.dedup_key)?;
    let duplicates = keep.as_ref().map_or(0, |k| keys.num_rows() - k.len());
    let clustered = cluster(&batches, &keys, keep, table)?;
    drop((batches, keys));
    let props = parquet::writer_properties(&table.compression, cfg.row_group_rows)?;
    let ptype = table.spec.partition_type(&table.schema)?;
    let rows_per_file = ((table.target_file_size as f64 / source_bytes_per_row) as usize).max(1024);
    let sort_order_id = (!table.sort_order.is_unsorted()).then_some(table.sort_order.order_id as i32);
    let mut files = vec![];
    for (part_no, (range, value)) in clustered.partitions.iter().enumerate() {
        let ppath = partition_path(&table.spec, &table.schema, value);
        let mut start = range.start;
        let mut seq = 0;
        while start < range.end {
            let len = rows_per_file.min(range.end - start);
            let slice = clustered.batch.slice(start, len);
            let (body, metrics) = parquet::write_parquet(&[slice], &table.arrow_schema, &table.schema, props.clone())?;
            let path = data_file_uri(&table.location, &ppath, batch_key, part_no, seq);
            let meta = DataFileMeta::new(path, body.len() as u64, value, &ptype, &metrics, sort_order_id)?;
            files.push((meta, body));
            start += len;
            seq += 1;
        }
    }
    Ok(Encoded { files, duplicates })
}
