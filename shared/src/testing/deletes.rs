//! Another engine's row-level deletes, for tests: position and equality delete files written as
//! Iceberg Java's writers lay them out (Parquet, the spec's reserved field ids), committed in a
//! `delete` snapshot as a `RowDelta` of deletes alone commits them.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema};
use bytes::Bytes;
use iceberg::spec::{DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Operation, Struct};
use parquet::arrow::{ArrowWriter, PARQUET_FIELD_ID_META_KEY};

use crate::ports::Ports;
use crate::table::{Added, Change, load_table, plan_snapshot};
use crate::{Error, Result, TableIdent};

/// A Parquet position delete file of `(data file path, row position)` pairs, sorted as the spec
/// asks.
pub fn position_deletes(rows: &[(&str, i64)]) -> Result<Bytes> {
    let mut rows = rows.to_vec();
    rows.sort();
    let field = |name: &str, t: DataType, id: i32| {
        Field::new(name, t, false).with_metadata(HashMap::from([(PARQUET_FIELD_ID_META_KEY.into(), id.to_string())]))
    };
    let schema = Arc::new(Schema::new(vec![
        field("file_path", DataType::Utf8, 2147483546),
        field("pos", DataType::Int64, 2147483545),
    ]));
    let files: ArrayRef = Arc::new(StringArray::from_iter_values(rows.iter().map(|(p, _)| *p)));
    let positions: ArrayRef = Arc::new(Int64Array::from_iter_values(rows.iter().map(|(_, n)| *n)));
    parquet_of(RecordBatch::try_new(schema, vec![files, positions])?)
}

/// A Parquet file of `batch` (an equality delete file: its fields carry the table's field ids).
pub fn parquet_of(batch: RecordBatch) -> Result<Bytes> {
    let mut out = vec![];
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), None)?;
    w.write(&batch)?;
    w.close()?;
    Ok(Bytes::from(out))
}

/// A delete file's entry: `content` position or equality deletes (with `equality_ids`), of
/// `rows` deletes, at `path` of `size` bytes, in `partition` of spec `spec_id`; a position delete
/// file of one data file names it (`referenced`) as Java's writers do.
#[allow(clippy::too_many_arguments)]
pub fn delete_file(
    path: &str,
    size: u64,
    content: DataContentType,
    spec_id: i32,
    partition: Struct,
    rows: u64,
    equality_ids: Option<Vec<i32>>,
    referenced: Option<&str>,
) -> Result<DataFile> {
    let mut b = DataFileBuilder::default();
    b.content(content)
        .file_path(path.to_string())
        .file_format(DataFileFormat::Parquet)
        .partition(partition)
        .partition_spec_id(spec_id)
        .record_count(rows)
        .file_size_in_bytes(size)
        .equality_ids(equality_ids);
    if let Some(r) = referenced {
        b.referenced_data_file(Some(r.to_string()));
        b.lower_bounds(HashMap::from([(2147483546, Datum::string(r))]));
        b.upper_bounds(HashMap::from([(2147483546, Datum::string(r))]));
    }
    b.build().map_err(|e| Error::internal(format!("delete file entry: {e}")))
}

/// A Puffin file holding one deletion vector (`deletion-vector-v1`) of `positions` in data file
/// `referenced`, as Iceberg Java writes it; with the blob's offset and length.
pub fn deletion_vector(referenced: &str, positions: &[u64]) -> Result<(Bytes, i64, i64)> {
    let bitmap: roaring::RoaringTreemap = positions.iter().copied().collect();
    let mut body = vec![0xD1, 0xD3, 0x39, 0x64];
    bitmap.serialize_into(&mut body).map_err(|e| Error::internal(format!("bitmap: {e}")))?;
    let mut blob = (body.len() as u32).to_be_bytes().to_vec();
    blob.extend_from_slice(&body);
    blob.extend_from_slice(&crc32fast::hash(&body).to_be_bytes());
    let mut out = b"PFA1".to_vec();
    let (offset, length) = (out.len() as i64, blob.len() as i64);
    out.extend_from_slice(&blob);
    let footer = serde_json::json!({"blobs": [{
        "type": "deletion-vector-v1", "fields": [2147483545], "snapshot-id": -1, "sequence-number": -1,
        "offset": offset, "length": length,
        "properties": {"referenced-data-file": referenced, "cardinality": bitmap.len().to_string()},
    }]})
    .to_string();
    out.extend_from_slice(b"PFA1");
    out.extend_from_slice(footer.as_bytes());
    out.extend_from_slice(&(footer.len() as i32).to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(b"PFA1");
    Ok((Bytes::from(out), offset, length))
}

/// A deletion vector's entry: `rows` deletes of data file `referenced`, in the blob at `offset`
/// and `length` of Puffin file `path` (`size` bytes), in `partition` of spec `spec_id`.
#[allow(clippy::too_many_arguments)]
pub fn vector_file(
    path: &str,
    size: u64,
    spec_id: i32,
    partition: Struct,
    rows: u64,
    referenced: &str,
    offset: i64,
    length: i64,
) -> Result<DataFile> {
    let mut b = DataFileBuilder::default();
    b.content(DataContentType::PositionDeletes)
        .file_path(path.to_string())
        .file_format(DataFileFormat::Puffin)
        .partition(partition)
        .partition_spec_id(spec_id)
        .record_count(rows)
        .file_size_in_bytes(size)
        .referenced_data_file(Some(referenced.to_string()))
        .content_offset(Some(offset))
        .content_size_in_bytes(Some(length));
    b.build().map_err(|e| Error::internal(format!("deletion vector entry: {e}")))
}

/// Commits `files` (delete files, each with its spec id) to `table` as one `delete` snapshot, as
/// another engine would; returns its id.
pub async fn commit_deletes(ports: &Ports, table: &TableIdent, files: Vec<(i32, DataFile)>) -> Result<i64> {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table)
        .await?
        .ok_or_else(|| Error::NoSuchTable(table.to_string()))?;
    let mut change = Change::append(vec![]);
    change.operation = Operation::Delete;
    change.added =
        files.into_iter().map(|(spec_id, file)| Added { spec_id, file, data_sequence_number: None }).collect();
    let snapshot_id = rand::random_range(1..i64::MAX);
    let plan = plan_snapshot(ports.store.as_ref(), &state, None, change, snapshot_id, &[]).await?;
    if ports.pointer.writes_metadata() {
        ports.pointer.commit(table, &state.pointer, &state.metadata, &plan.metadata).await?;
    } else {
        ports.store.put_if_absent(&plan.metadata_location, plan.metadata_json.clone()).await?;
        ports.pointer.swap(table, &state.pointer, &plan.metadata_location).await?;
    }
    Ok(snapshot_id)
}
