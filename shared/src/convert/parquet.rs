//! Arrow → Parquet, with the Iceberg data file metrics taken from that same write.
//!
//! Owns the encoding of one data file and the translation of the footer Parquet just built
//! (row counts, per-column sizes, value and null counts, min/max statistics) into Iceberg's
//! metrics, keyed by field id. The file is never read back. String and binary bounds follow
//! Iceberg's default metrics mode, `truncate(16)`: the lower bound is a prefix, the upper bound a
//! prefix with its last character incremented (dropped when no such bound exists).

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use bytes::Bytes;
use iceberg::spec::{Datum, PrimitiveType, Schema, Type};
use parquet::arrow::ArrowWriter;
use parquet::file::metadata::ParquetMetaData;
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::statistics::Statistics;

use crate::{Error, Result};

/// Iceberg's default truncation length for string and binary bounds.
pub const BOUND_TRUNCATE: usize = 16;

/// Iceberg metrics of one data file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FileMetrics {
    /// Rows in the file.
    pub record_count: u64,
    /// Compressed bytes per column (field id).
    pub column_sizes: BTreeMap<i32, u64>,
    /// Values (nulls included) per column.
    pub value_counts: BTreeMap<i32, u64>,
    /// Nulls per column.
    pub null_value_counts: BTreeMap<i32, u64>,
    /// NaNs per float and double column not inside a list or map (zeros included: readers
    /// take a missing count for "no NaN", and Iceberg's strict metrics evaluator would then
    /// prove `x < 5` of every row of a file holding a NaN).
    pub nan_value_counts: BTreeMap<i32, u64>,
    /// Lower bounds of top-level and struct-nested primitive columns.
    pub lower_bounds: BTreeMap<i32, Datum>,
    /// Upper bounds, likewise.
    pub upper_bounds: BTreeMap<i32, Datum>,
    /// Byte offsets of row groups.
    pub split_offsets: Vec<i64>,
}

/// Parquet writer properties for a table's compression and row group size.
pub fn writer_properties(compression: parquet::basic::Compression, row_group_rows: usize) -> WriterProperties {
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_1_0)
        .set_compression(compression)
        .set_max_row_group_row_count(Some(row_group_rows))
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .set_statistics_truncate_length(None)
        .set_created_by(format!("floe version {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// `props` with dictionary encoding off for the `plain` leaf columns (see [`super::encoding`]).
pub fn with_plain_columns(props: WriterProperties, plain: Vec<parquet::schema::types::ColumnPath>) -> WriterProperties {
    plain.into_iter().fold(props.into_builder(), |b, c| b.set_column_dictionary_enabled(c, false)).build()
}

/// `props` with page statistics (the page index: each data page's min and max) for the `keys`
/// leaf columns, the dedup key's, in pages of about [`KEY_PAGE_BYTES`]: compaction's key index
/// reads only the pages of a file whose range holds a key it looks for
/// (pipeline/compact/prune.rs), so a late key costs one small page, not a 20,000-row one. A few
/// dozen bytes of page index per key page.
pub fn with_page_index(props: WriterProperties, keys: Vec<parquet::schema::types::ColumnPath>) -> WriterProperties {
    keys.into_iter()
        .fold(props.into_builder(), |b, c| {
            b.set_column_statistics_enabled(c.clone(), EnabledStatistics::Page)
                .set_column_data_page_size_limit(c, KEY_PAGE_BYTES)
        })
        .build()
}

/// The encoded size at which a dedup key column's page is cut (checked after each write batch
/// of 1,024 rows: a page of 16-byte ids holds about 1,024).
pub const KEY_PAGE_BYTES: usize = 16 << 10;

/// Encodes `batches` (all of `arrow_schema`, which carries Iceberg field ids) into one Parquet
/// file held in memory, and returns it with its Iceberg metrics. Batches are taken one at a
/// time, so a caller may make each just before it is written.
pub fn write_parquet<B: std::borrow::Borrow<RecordBatch>>(
    batches: impl IntoIterator<Item = Result<B>>,
    arrow_schema: &SchemaRef,
    schema: &Schema,
    props: WriterProperties,
) -> Result<(Bytes, FileMetrics)> {
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, arrow_schema.clone(), Some(props))?;
    let mut nans = BTreeMap::new();
    for b in batches {
        let b = b?;
        let b = b.borrow();
        for (array, field) in b.columns().iter().zip(b.schema_ref().fields()) {
            count_nans(array.as_ref(), field, None, &mut nans);
        }
        writer.write(b)?;
    }
    let meta = writer.close()?;
    let mut metrics = metrics_from_footer(&meta, schema)?;
    metrics.nan_value_counts = nans;
    Ok((Bytes::from(buf), metrics))
}

/// Adds the NaNs of `array` (field `field`, under parents valid where `parent` says) to `out`,
/// by field id, for float and double columns at any depth of structs: the columns that get
/// bounds. A value under a null parent is no value.
fn count_nans(
    array: &dyn arrow_array::Array,
    field: &arrow_schema::Field,
    parent: Option<&arrow_buffer::NullBuffer>,
    out: &mut BTreeMap<i32, u64>,
) {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{Float32Type, Float64Type};
    use arrow_schema::DataType;
    let valid = arrow_buffer::NullBuffer::union(parent, array.logical_nulls().as_ref());
    let id = || field.metadata().get(parquet::arrow::PARQUET_FIELD_ID_META_KEY).and_then(|v| v.parse::<i32>().ok());
    fn nans<T: Copy>(values: &[T], valid: Option<&arrow_buffer::NullBuffer>, is_nan: impl Fn(T) -> bool) -> u64 {
        match valid {
            None => values.iter().filter(|v| is_nan(**v)).count() as u64,
            Some(v) => values.iter().zip(v.iter()).filter(|(x, ok)| *ok && is_nan(**x)).count() as u64,
        }
    }
    match field.data_type() {
        DataType::Float32 => {
            if let Some(id) = id() {
                *out.entry(id).or_default() +=
                    nans(array.as_primitive::<Float32Type>().values(), valid.as_ref(), f32::is_nan);
            }
        }
        DataType::Float64 => {
            if let Some(id) = id() {
                *out.entry(id).or_default() +=
                    nans(array.as_primitive::<Float64Type>().values(), valid.as_ref(), f64::is_nan);
            }
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            for (child, f) in s.columns().iter().zip(fields) {
                count_nans(child.as_ref(), f, valid.as_ref(), out);
            }
        }
        _ => {}
    }
}

/// Translates a Parquet footer into Iceberg metrics for `schema`.
pub fn metrics_from_footer(meta: &ParquetMetaData, schema: &Schema) -> Result<FileMetrics> {
    let mut m = FileMetrics { record_count: meta.file_metadata().num_rows() as u64, ..Default::default() };
    let descr = meta.file_metadata().schema_descr();
    let mut mins: BTreeMap<i32, Datum> = BTreeMap::new();
    let mut maxs: BTreeMap<i32, Datum> = BTreeMap::new();
    let mut no_bounds: std::collections::BTreeSet<i32> = Default::default();
    for rg in meta.row_groups() {
        if let Some(first) = rg.columns().first() {
            let (start, _) = first.byte_range();
            m.split_offsets.push(start as i64);
        }
        for (i, cc) in rg.columns().iter().enumerate() {
            let col = descr.column(i);
            let info = col.self_type().get_basic_info();
            if !info.has_id() {
                continue;
            }
            let id = info.id();
            *m.column_sizes.entry(id).or_default() += cc.compressed_size() as u64;
            *m.value_counts.entry(id).or_default() += cc.num_values() as u64;
            let Some(stats) = cc.statistics() else {
                no_bounds.insert(id);
                continue;
            };
            *m.null_value_counts.entry(id).or_default() += stats.null_count_opt().unwrap_or(0);
            // Bounds only for columns not inside a list or map (as Iceberg Java and PyIceberg).
            let ty = match schema.field_by_id(id).map(|f| f.field_type.as_ref()) {
                Some(Type::Primitive(p)) if col.max_rep_level() == 0 => p.clone(),
                _ => continue,
            };
            match bounds(stats, &ty)? {
                Some((lo, hi)) => {
                    merge(&mut mins, id, lo, std::cmp::Ordering::Less);
                    merge(&mut maxs, id, hi, std::cmp::Ordering::Greater);
                }
                None if stats.min_bytes_opt().is_none() => {} // all nulls in this row group
                None => {
                    no_bounds.insert(id);
                }
            }
        }
    }
    // A column some row group could not bound has no file-level bound.
    for id in no_bounds {
        mins.remove(&id);
        maxs.remove(&id);
    }
    for (id, lo) in mins {
        if let Some(lo) = truncate_lower(lo) {
            m.lower_bounds.insert(id, lo);
        }
    }
    for (id, hi) in maxs {
        if let Some(hi) = truncate_upper(hi) {
            m.upper_bounds.insert(id, hi);
        }
    }
    Ok(m)
}

fn merge(acc: &mut BTreeMap<i32, Datum>, id: i32, v: Datum, keep: std::cmp::Ordering) {
    match acc.get(&id) {
        Some(cur) if v.partial_cmp(cur) != Some(keep) => {}
        _ => {
            acc.insert(id, v);
        }
    }
}

/// Min and max of one column chunk as Iceberg values, if the statistics have them.
fn bounds(stats: &Statistics, ty: &PrimitiveType) -> Result<Option<(Datum, Datum)>> {
    let (Some(lo), Some(hi)) = (stats.min_bytes_opt(), stats.max_bytes_opt()) else {
        return Ok(None);
    };
    let conv = |b: &[u8]| -> Result<Datum> {
        let bytes: Vec<u8> = match (ty, stats) {
            // Decimals stored as INT32/INT64 are little-endian; Iceberg wants big-endian.
            (PrimitiveType::Decimal { .. }, Statistics::Int32(_)) => {
                i128::from(i32::from_le_bytes(b.try_into().map_err(|_| bad_stat())?)).to_be_bytes().to_vec()
            }
            (PrimitiveType::Decimal { .. }, Statistics::Int64(_)) => {
                i128::from(i64::from_le_bytes(b.try_into().map_err(|_| bad_stat())?)).to_be_bytes().to_vec()
            }
            (PrimitiveType::Float | PrimitiveType::Double, _) => {
                let nan = match b.len() {
                    4 => f32::from_le_bytes(b.try_into().map_err(|_| bad_stat())?).is_nan(),
                    _ => f64::from_le_bytes(b.try_into().map_err(|_| bad_stat())?).is_nan(),
                };
                if nan {
                    return Err(bad_stat());
                }
                b.to_vec()
            }
            _ => b.to_vec(),
        };
        Ok(Datum::try_from_bytes(&bytes, ty.clone())?)
    };
    match (conv(lo), conv(hi)) {
        (Ok(l), Ok(h)) => Ok(Some((l, h))),
        _ => Ok(None),
    }
}

fn bad_stat() -> Error {
    Error::internal("unexpected Parquet statistic")
}

fn truncate_lower(d: Datum) -> Option<Datum> {
    match (d.data_type(), d.literal()) {
        (PrimitiveType::String, iceberg::spec::PrimitiveLiteral::String(s)) if s.chars().count() > BOUND_TRUNCATE => {
            Some(Datum::string(s.chars().take(BOUND_TRUNCATE).collect::<String>()))
        }
        (PrimitiveType::Binary, iceberg::spec::PrimitiveLiteral::Binary(b)) if b.len() > BOUND_TRUNCATE => {
            Some(Datum::binary(b[..BOUND_TRUNCATE].to_vec()))
        }
        _ => Some(d),
    }
}

fn truncate_upper(d: Datum) -> Option<Datum> {
    match (d.data_type(), d.literal()) {
        (PrimitiveType::String, iceberg::spec::PrimitiveLiteral::String(s)) if s.chars().count() > BOUND_TRUNCATE => {
            let mut chars: Vec<char> = s.chars().take(BOUND_TRUNCATE).collect();
            // Increment the last character that can be incremented; drop what follows it.
            while let Some(last) = chars.pop() {
                if let Some(next) = (last as u32).checked_add(1).and_then(next_char) {
                    chars.push(next);
                    return Some(Datum::string(chars.into_iter().collect::<String>()));
                }
            }
            None
        }
        (PrimitiveType::Binary, iceberg::spec::PrimitiveLiteral::Binary(b)) if b.len() > BOUND_TRUNCATE => {
            let mut bytes = b[..BOUND_TRUNCATE].to_vec();
            while let Some(last) = bytes.pop() {
                if last < u8::MAX {
                    bytes.push(last + 1);
                    return Some(Datum::binary(bytes));
                }
            }
            None
        }
        _ => Some(d),
    }
}

/// The next valid `char` at or after code point `c` (skipping surrogates).
fn next_char(c: u32) -> Option<char> {
    char::from_u32(c).or_else(|| if (0xD800..=0xDFFF).contains(&c) { char::from_u32(0xE000) } else { None })
}

/// An Arrow schema for `schema` with Iceberg field ids in the field metadata, and `uuid` columns
/// marked with Arrow's canonical `arrow.uuid` extension type, so that Parquet writes them as
/// `fixed_len_byte_array(16)` with the `UUID` logical type (the Iceberg spec's Appendix A).
pub fn arrow_schema(schema: &Schema) -> Result<SchemaRef> {
    let plain = iceberg::arrow::schema_to_arrow_schema(schema)?;
    let fields: Vec<arrow_schema::FieldRef> = plain.fields().iter().map(|f| Arc::new(mark_uuids(f, schema))).collect();
    Ok(Arc::new(arrow_schema::Schema::new_with_metadata(fields, plain.metadata().clone())))
}

const ARROW_EXTENSION_NAME: &str = "ARROW:extension:name";

/// `field` with every uuid field in it (itself included) marked `arrow.uuid`.
fn mark_uuids(field: &arrow_schema::Field, schema: &Schema) -> arrow_schema::Field {
    use arrow_schema::DataType as D;
    let nested = |f: &arrow_schema::FieldRef| Arc::new(mark_uuids(f, schema));
    let data_type = match field.data_type() {
        D::Struct(children) => D::Struct(children.iter().map(nested).collect()),
        D::List(elem) => D::List(nested(elem)),
        D::LargeList(elem) => D::LargeList(nested(elem)),
        D::Map(entries, sorted) => D::Map(nested(entries), *sorted),
        other => other.clone(),
    };
    let id = field.metadata().get(parquet::arrow::PARQUET_FIELD_ID_META_KEY).and_then(|v| v.parse::<i32>().ok());
    let is_uuid = id
        .and_then(|id| schema.field_by_id(id))
        .is_some_and(|f| matches!(*f.field_type, Type::Primitive(PrimitiveType::Uuid)));
    let mut out = field.clone().with_data_type(data_type);
    if is_uuid {
        let mut metadata = out.metadata().clone();
        metadata.insert(ARROW_EXTENSION_NAME.into(), "arrow.uuid".into());
        out = out.with_metadata(metadata);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// NaNs are counted per float and double column, zeros included, never a NaN under a null
    /// (the value or its struct), and summed over the batches of a file.
    #[test]
    fn nan_counts_cover_every_float_column_outside_lists() {
        use iceberg::spec::{NestedField, StructType};
        let schema = Schema::builder()
            .with_fields(vec![
                Arc::new(NestedField::optional(1, "x", Type::Primitive(PrimitiveType::Double))),
                Arc::new(NestedField::optional(2, "y", Type::Primitive(PrimitiveType::Float))),
                Arc::new(NestedField::optional(
                    3,
                    "s",
                    Type::Struct(StructType::new(vec![Arc::new(NestedField::optional(
                        4,
                        "z",
                        Type::Primitive(PrimitiveType::Double),
                    ))])),
                )),
            ])
            .build()
            .unwrap();
        let arrow = arrow_schema(&schema).unwrap();
        let arrow_schema::DataType::Struct(sf) = arrow.field(2).data_type() else { panic!("struct") };
        let batch = |x: Vec<Option<f64>>, z: Vec<Option<f64>>, s_valid: Vec<bool>| {
            let n = x.len();
            let z = arrow_array::Float64Array::from(z);
            let s = arrow_array::StructArray::try_new(sf.clone(), vec![Arc::new(z)], Some(s_valid.into())).unwrap();
            let y = arrow_array::Float32Array::from(vec![1.0f32; n]);
            RecordBatch::try_new(
                arrow.clone(),
                vec![Arc::new(arrow_array::Float64Array::from(x)), Arc::new(y), Arc::new(s)],
            )
            .unwrap()
        };
        let nan = f64::NAN;
        let b1 =
            batch(vec![Some(1.0), Some(nan), None], vec![Some(nan), Some(nan), Some(0.0)], vec![true, false, true]);
        let b2 = batch(vec![Some(nan), Some(-0.0)], vec![None, Some(nan)], vec![true, true]);
        let props = writer_properties(crate::table::terms::parse_compression("zstd").unwrap(), 1024);
        let (_, m) = write_parquet([Ok(b1), Ok(b2)], &arrow, &schema, props).unwrap();
        assert_eq!(m.nan_value_counts, BTreeMap::from([(1, 2), (2, 0), (4, 2)]));
    }

    #[test]
    fn uuid_columns_get_parquets_uuid_logical_type() {
        use iceberg::spec::{ListType, NestedField};
        use parquet::basic::LogicalType;
        let schema = Schema::builder()
            .with_fields(vec![
                Arc::new(NestedField::required(1, "id", Type::Primitive(PrimitiveType::Uuid))),
                Arc::new(NestedField::optional(
                    2,
                    "ids",
                    Type::List(ListType::new(Arc::new(NestedField::list_element(
                        3,
                        Type::Primitive(PrimitiveType::Uuid),
                        false,
                    )))),
                )),
                Arc::new(NestedField::required(4, "raw", Type::Primitive(PrimitiveType::Fixed(16)))),
            ])
            .build()
            .unwrap();
        let arrow = arrow_schema(&schema).unwrap();
        let id = arrow_array::FixedSizeBinaryArray::try_from_iter([[7u8; 16]].into_iter()).unwrap();
        let values = arrow_array::FixedSizeBinaryArray::try_from_iter([[8u8; 16]].into_iter()).unwrap();
        let arrow_schema::DataType::List(elem) = arrow.field(1).data_type() else { panic!("list") };
        let ids = arrow_array::ListArray::try_new(
            elem.clone(),
            arrow_buffer::OffsetBuffer::from_lengths([1]),
            Arc::new(values),
            None,
        )
        .unwrap();
        let raw = arrow_array::FixedSizeBinaryArray::try_from_iter([[9u8; 16]].into_iter()).unwrap();
        let batch = RecordBatch::try_new(arrow.clone(), vec![Arc::new(id), Arc::new(ids), Arc::new(raw)]).unwrap();
        let props = writer_properties(crate::table::terms::parse_compression("zstd").unwrap(), 1024);
        let (body, _) = write_parquet([Ok(batch)], &arrow, &schema, props).unwrap();
        let reader = parquet::file::reader::SerializedFileReader::new(body).unwrap();
        use parquet::file::reader::FileReader;
        let descr = reader.metadata().file_metadata().schema_descr_ptr();
        let logical: Vec<(String, Option<LogicalType>)> =
            descr.columns().iter().map(|c| (c.path().string(), c.logical_type_ref().cloned())).collect();
        assert_eq!(
            logical,
            vec![
                ("id".into(), Some(LogicalType::Uuid)),
                ("ids.list.element".into(), Some(LogicalType::Uuid)),
                ("raw".into(), None),
            ],
            "uuid columns carry the UUID logical type; a plain fixed[16] does not"
        );
        for c in descr.columns() {
            assert_eq!(c.physical_type(), parquet::basic::Type::FIXED_LEN_BYTE_ARRAY);
            assert_eq!(c.type_length(), 16);
        }
    }

    /// vendor/parquet keeps zstd contexts across codecs on a thread (vendor/README.md): a reused
    /// context must write exactly the bytes a fresh one writes, and read back what was written.
    #[test]
    fn writer_output_is_identical_with_warm_zstd_contexts() {
        use arrow_array::{Int64Array, StringArray};
        use iceberg::spec::NestedField;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReader;
        let schema = Schema::builder()
            .with_fields(vec![
                Arc::new(NestedField::required(1, "n", Type::Primitive(PrimitiveType::Long))),
                Arc::new(NestedField::optional(2, "s", Type::Primitive(PrimitiveType::String))),
            ])
            .build()
            .unwrap();
        let arrow = arrow_schema(&schema).unwrap();
        let batch = |seed: i64, rows: i64| {
            let n = Int64Array::from_iter_values((0..rows).map(|i| i * seed % 1009));
            let s = StringArray::from_iter((0..rows).map(|i| (i % 3 != 0).then(|| format!("v{}", i * seed % 4001))));
            RecordBatch::try_new(arrow.clone(), vec![Arc::new(n), Arc::new(s)]).unwrap()
        };
        let write = |b: &RecordBatch, codec: &str| {
            write_parquet(
                [Ok(b)],
                &arrow,
                &schema,
                writer_properties(crate::table::terms::parse_compression(codec).unwrap(), 1024),
            )
            .unwrap()
            .0
        };
        // The columns read back (each test file is one batch of the reader's).
        let read = |body: &Bytes| -> Vec<arrow_array::ArrayRef> {
            let r = ParquetRecordBatchReader::try_new(body.clone(), 100_000).unwrap();
            r.flat_map(|b| b.unwrap().columns().to_vec()).collect()
        };
        let a = batch(7, 5000);
        // A fresh thread has no pooled contexts: these bytes come from new ones.
        let cold = std::thread::scope(|s| s.spawn(|| write(&a, "zstd")).join().unwrap());
        let (warm, other, back) = std::thread::scope(|s| {
            s.spawn(|| {
                // Other data first, at the same level and another, so the thread's pool holds
                // used contexts, one of them grown on larger pages.
                let other = write(&batch(13, 20_000), "zstd");
                write(&batch(3, 100), "zstd(9)");
                let warm = write(&a, "zstd");
                let (other_back, back) = (read(&other), read(&warm));
                assert_eq!(other_back, batch(13, 20_000).columns());
                (warm, other, back)
            })
            .join()
            .unwrap()
        });
        assert_eq!(warm, cold, "a reused zstd context writes the bytes a fresh one writes");
        assert_ne!(other, cold);
        assert_eq!(back, a.columns(), "read back through reused decompression contexts");
    }

    #[test]
    fn string_bounds_truncate_like_iceberg() {
        let long = "abcdefghijklmnopqrstuvwxyz";
        let lo = truncate_lower(Datum::string(long)).unwrap();
        let hi = truncate_upper(Datum::string(long)).unwrap();
        assert_eq!(lo, Datum::string("abcdefghijklmnop"));
        assert_eq!(hi, Datum::string("abcdefghijklmnoq"));
        assert!(lo <= Datum::string(long) && hi > Datum::string(long));
        let short = Datum::string("abc");
        assert_eq!(truncate_upper(short.clone()).unwrap(), short);
        let max = Datum::binary(vec![0xff; 20]);
        assert!(truncate_upper(max).is_none(), "no upper bound exists for all-0xff");
    }
}
