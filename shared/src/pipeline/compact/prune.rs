//! The dedup key index: which parts of a reference file can hold one of a task's keys, from
//! what the table keeps about every file already.
//!
//! Two levels, both exact upper bounds of where a key can be (so skipping a file or page never
//! keeps a duplicate, and a false positive only costs a read):
//!
//! - **The file's key bounds** (the manifest entry's lower and upper bounds of each key column,
//!   read by the planner anyway): a reference none of whose bounds holds a task key is not read
//!   at all.
//! - **Its key pages** (the Parquet page index: each data page's min and max, written for the key
//!   columns by Floe's writers and compactors): of a reference that may hold a task key, only
//!   the pages whose range holds one are read, by ranged GETs.
//!
//! A key column is probed when it is a top-level column of an ordered type (integers, dates,
//! timestamps, strings, binary, fixed, uuid); floating-point columns are not (signed zeros and
//! NaN bounds), nor decimals. Anything missing or not to be trusted (no bounds, no page index, a
//! column order from before Parquet 2.4, a bound or statistic of another type) counts as
//! "anything may be here": the reference is read as before, never skipped.
//!
//! What it prunes depends on the keys: values ordered with the files' sort order (time-ordered
//! ids such as UUIDv7, ULIDs or snowflake ids in a table sorted by event time, or a key that
//! leads with a time column) confine a task's keys to the newest files and pages; random keys
//! (UUIDv4) fall in every file's range, and every reference is read as before. docs/ARCHITECTURE.md,
//! "The dedup key index", says why no index does better for random keys.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, FieldRef};
use iceberg::spec::Datum;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, RowSelection, RowSelector};
use parquet::basic::{ColumnOrder, SortOrder};

use crate::Result;
use crate::convert::conform;
use crate::table::WriterTable;

/// A reference's key bounds from its manifest entry: (field id, lower, upper) of each key
/// column that has both.
pub(super) type KeyBounds = Vec<(i32, Datum, Datum)>;

/// The key bounds of data file `path`'s manifest entry, for the table's probed key columns.
///
/// Uuid bounds are kept only for files Floe wrote: Iceberg Java merged row groups' uuid bounds
/// with `UUID.compareTo`, a signed comparison (apache/iceberg#14216, fixed in 2026), so another
/// engine's multi-row-group file may carry an upper bound below its largest id. Those files'
/// pages (ordered unsigned by every Parquet writer) still narrow what is read.
pub(super) fn key_bounds(
    path: &str,
    ids: &[i32],
    lower: &std::collections::HashMap<i32, Datum>,
    upper: &std::collections::HashMap<i32, Datum>,
) -> KeyBounds {
    let ours = crate::table::is_floe_data_file(path);
    let trusted = |d: &Datum| ours || !matches!(d.literal(), iceberg::spec::PrimitiveLiteral::UInt128(_));
    ids.iter()
        .filter_map(|id| Some((*id, lower.get(id)?.clone(), upper.get(id)?.clone())))
        .filter(|(_, lo, hi)| trusted(lo) && trusted(hi))
        .collect()
}

/// The field ids of `table`'s key columns that the index probes.
pub(super) fn probed_ids(table: &WriterTable) -> Vec<i32> {
    probed_fields(table).into_iter().filter_map(|f| conform::field_id(&f)).collect()
}

fn probed_fields(table: &WriterTable) -> Vec<FieldRef> {
    let mut out: Vec<FieldRef> = vec![];
    for k in &table.dedup_key {
        if k.contains('.') {
            continue;
        }
        let Ok(f) = table.arrow_schema.field_with_name(k) else { continue };
        if ordered(f.data_type()) && !out.iter().any(|o| o.name() == f.name()) {
            out.push(Arc::new(f.clone()));
        }
    }
    out
}

/// Types whose row encoding orders values as Iceberg bounds and Parquet statistics do.
fn ordered(t: &DataType) -> bool {
    use DataType::*;
    matches!(t, Int32 | Int64 | Date32 | Timestamp(_, _) | Utf8 | LargeUtf8 | Binary | LargeBinary | FixedSizeBinary(_))
}

/// One probed key column: a task's distinct values of it, sorted, in the column's row encoding
/// (which orders them as the column's type does).
struct Column {
    field: FieldRef,
    id: i32,
    converter: RowConverter,
    values: Vec<Box<[u8]>>,
}

impl Column {
    /// Whether a value of the task lies in `lo..=hi` (row encodings).
    fn holds(&self, lo: &[u8], hi: &[u8]) -> bool {
        let at = self.values.partition_point(|v| &v[..] < lo);
        at < self.values.len() && &self.values[at][..] <= hi
    }

    /// The row encodings of `array` (this column's type, or one that widens into it), if it
    /// can be read as such.
    fn encode(&self, array: &ArrayRef) -> Option<arrow_row::Rows> {
        let array = if array.data_type() == self.field.data_type() {
            array.clone()
        } else if widens(array.data_type(), self.field.data_type()) {
            arrow_cast::cast(array, self.field.data_type()).ok()?
        } else {
            return None;
        };
        self.converter.convert_columns(&[array]).ok()
    }
}

/// Whether values of `from` read as `to` without changing their order or value.
fn widens(from: &DataType, to: &DataType) -> bool {
    use DataType::*;
    match (from, to) {
        // The same instants, whatever the zone's spelling.
        (Timestamp(a, _), Timestamp(b, _)) => a == b,
        _ => matches!(
            (from, to),
            (Int32, Int64) | (Utf8, LargeUtf8) | (LargeUtf8, Utf8) | (Binary, LargeBinary) | (LargeBinary, Binary)
        ),
    }
}

/// A task's keys as the index probes them.
pub(super) struct Probe {
    columns: Vec<Column>,
}

impl Probe {
    /// The probe of the keys of `batches` (a task's level-0 inputs, in the table's schema).
    pub(super) fn new(table: &WriterTable, batches: &[RecordBatch]) -> Result<Self> {
        Self::of(probed_fields(table), batches)
    }

    fn of(fields: Vec<FieldRef>, batches: &[RecordBatch]) -> Result<Self> {
        let mut columns = vec![];
        if batches.is_empty() {
            return Ok(Probe { columns });
        }
        for field in fields {
            let Some(id) = conform::field_id(&field) else { continue };
            let converter = RowConverter::new(vec![SortField::new(field.data_type().clone())])?;
            let mut values: Vec<Box<[u8]>> = vec![];
            for b in batches {
                let Some(col) = b.column_by_name(field.name()) else { continue };
                let rows = converter.convert_columns(std::slice::from_ref(col))?;
                values.extend((0..col.len()).filter(|i| col.is_valid(*i)).map(|i| Box::from(rows.row(i).data())));
            }
            values.sort_unstable();
            values.dedup();
            columns.push(Column { field, id, converter, values });
        }
        Ok(Probe { columns })
    }

    /// Whether the probe can rule anything out.
    pub(super) fn active(&self) -> bool {
        !self.columns.is_empty()
    }

    /// Whether a file with key `bounds` may hold one of the task's keys: every probed column
    /// with both bounds must have a task value between them.
    pub(super) fn may_hold(&self, bounds: &[(i32, Datum, Datum)]) -> bool {
        self.columns.iter().all(|c| {
            let Some((_, lo, hi)) = bounds.iter().find(|(id, _, _)| *id == c.id) else { return true };
            if [lo, hi].iter().any(|d| java_ordered(d)) {
                return true;
            }
            let dt = c.field.data_type();
            let (Some(lo), Some(hi)) = (conform::repeated(dt, lo.literal(), 1), conform::repeated(dt, hi.literal(), 1))
            else {
                return true;
            };
            match (c.encode(&lo), c.encode(&hi)) {
                (Some(lo), Some(hi)) => c.holds(lo.row(0).data(), hi.row(0).data()),
                _ => true,
            }
        })
    }

    /// The rows of a reference (opened with its page index) that may hold one of the task's
    /// keys: those of the pages, in every probed column, whose range holds a task value. `None`:
    /// no column could rule a page out (read every row). `how` matches the file's columns to
    /// the table's.
    pub(super) fn selection(&self, meta: &ArrowReaderMetadata, how: conform::Match<'_>) -> Option<RowSelection> {
        let md = meta.metadata();
        let (Some(index), Some(offsets)) = (md.column_index(), md.offset_index()) else { return None };
        let file_fields = meta.schema().fields();
        let mut out: Option<RowSelection> = None;
        for c in &self.columns {
            let Some(at) = conform::position(file_fields, &c.field, "", how) else { continue };
            let name = file_fields[at].name();
            let parquet_schema = md.file_metadata().schema_descr();
            let Ok(stats) = StatisticsConverter::try_new(name, meta.schema(), parquet_schema) else { continue };
            let Some(leaf) = stats.parquet_column_index() else { continue };
            // Statistics ordered as the type defines (Parquet 2.4 on); older files' are not
            // trusted.
            match md.file_metadata().column_order(leaf) {
                ColumnOrder::TYPE_DEFINED_ORDER(SortOrder::SIGNED | SortOrder::UNSIGNED) => {}
                _ => continue,
            }
            let Some(sel) = column_selection(c, &stats, md, index, offsets) else { continue };
            out = Some(match out {
                Some(o) => o.intersection(&sel),
                None => sel,
            });
        }
        out
    }
}

/// Whether a string bound may be ordered as Java orders strings (UTF-16 code units) rather than
/// by code point: the two differ only where a character from U+E000 on meets one past U+FFFF,
/// whose UTF-8 encodings begin with bytes from 0xEE on.
fn java_ordered(d: &Datum) -> bool {
    matches!(d.literal(), iceberg::spec::PrimitiveLiteral::String(s) if s.bytes().any(|b| b >= 0xEE))
}

/// The rows of every row group whose page (of the column `stats` reads) may hold a value of
/// `c`; `None` if a row group's pages cannot be told.
fn column_selection(
    c: &Column,
    stats: &StatisticsConverter<'_>,
    md: &parquet::file::metadata::ParquetMetaData,
    index: &parquet::file::metadata::ParquetColumnIndex,
    offsets: &parquet::file::metadata::ParquetOffsetIndex,
) -> Option<RowSelection> {
    let mut selectors: Vec<RowSelector> = vec![];
    let push = |selectors: &mut Vec<RowSelector>, rows: usize, keep: bool| {
        if rows == 0 {
            return;
        }
        match selectors.last_mut() {
            Some(last) if last.skip != keep => last.row_count += rows,
            _ => selectors.push(if keep { RowSelector::select(rows) } else { RowSelector::skip(rows) }),
        }
    };
    let leaf = stats.parquet_column_index()?;
    for rg in 0..md.num_row_groups() {
        if md.row_group(rg).num_rows() == 0 {
            continue;
        }
        if offsets.get(rg)?.get(leaf)?.page_locations().is_empty() {
            return None;
        }
        let group = [rg];
        let rows = stats.data_page_row_counts(offsets, md.row_groups(), &group).ok()??;
        let mins = stats.data_page_mins(index, offsets, &group).ok()?;
        let maxes = stats.data_page_maxes(index, offsets, &group).ok()?;
        let nulls = stats.data_page_null_counts(index, offsets, &group).ok()?;
        if rows.len() != mins.len() || mins.len() != maxes.len() || rows.null_count() > 0 {
            return None;
        }
        let (lo, hi) = (c.encode(&mins), c.encode(&maxes));
        for p in 0..rows.len() {
            let n = rows.value(p);
            let keep = if nulls.is_valid(p) && nulls.value(p) == n {
                // Only nulls: no key (a row with a null key is never a duplicate).
                false
            } else if let (Some(lo), Some(hi), true, true) = (&lo, &hi, mins.is_valid(p), maxes.is_valid(p)) {
                c.holds(lo.row(p).data(), hi.row(p).data())
            } else {
                true
            };
            push(&mut selectors, n as usize, keep);
        }
    }
    Some(RowSelection::from(selectors))
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use arrow_array::{Int64Array, StringArray};
    use arrow_schema::{Field, Schema};
    use bytes::Bytes;
    use parquet::arrow::ArrowWriter;
    use parquet::arrow::arrow_reader::ArrowReaderOptions;
    use parquet::file::properties::{EnabledStatistics, WriterProperties};

    use super::*;

    fn field(name: &str, id: i32, t: DataType) -> FieldRef {
        let meta = HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]);
        Arc::new(Field::new(name, t, true).with_metadata(meta))
    }

    fn probe_of(f: &FieldRef, values: ArrayRef) -> Probe {
        let batch = RecordBatch::try_new(Arc::new(Schema::new(vec![f.clone()])), vec![values]).unwrap();
        Probe::of(vec![f.clone()], &[batch]).unwrap()
    }

    #[test]
    fn a_file_is_ruled_out_only_by_bounds_of_its_key_that_hold_no_task_value() {
        let k = field("k", 1, DataType::Int64);
        let p = probe_of(&k, Arc::new(Int64Array::from(vec![Some(30), Some(10), None, Some(20)])));
        assert!(!p.may_hold(&[(1, Datum::long(21), Datum::long(29))]), "between two values");
        assert!(!p.may_hold(&[(1, Datum::long(31), Datum::long(90))]), "past the last");
        assert!(p.may_hold(&[(1, Datum::long(25), Datum::long(30))]), "an end on a value");
        assert!(p.may_hold(&[(1, Datum::long(20), Datum::long(20))]));
        assert!(p.may_hold(&[]), "no bounds: may hold anything");
        assert!(p.may_hold(&[(2, Datum::long(0), Datum::long(1))]), "another column's bounds say nothing");
        assert!(p.may_hold(&[(1, Datum::string("a"), Datum::string("b"))]), "a bound of another type says nothing");
        // Bounds of a file written when the column was an int are not read as longs: they say
        // nothing.
        assert!(p.may_hold(&[(1, Datum::int(21), Datum::int(29))]));
    }

    #[test]
    fn uuid_bounds_are_trusted_only_in_files_floe_wrote() {
        let (lo, hi) = (Datum::uuid(uuid::Uuid::from_u128(1)), Datum::uuid(uuid::Uuid::from_u128(2)));
        let lower = HashMap::from([(1, lo.clone()), (2, Datum::long(0))]);
        let upper = HashMap::from([(1, hi.clone()), (2, Datum::long(9))]);
        let ours = "s3://b/t/data/L1-abc-00000-000-0123456789abcdef.parquet";
        assert_eq!(key_bounds(ours, &[1, 2], &lower, &upper).len(), 2);
        // Iceberg Java merged uuid bounds with a signed comparison: another engine's are not used.
        let theirs = "s3://b/t/data/00000-0-5b3c-00001.parquet";
        assert_eq!(key_bounds(theirs, &[1, 2], &lower, &upper), vec![(2, Datum::long(0), Datum::long(9))]);
    }

    #[test]
    fn string_bounds_java_may_order_otherwise_say_nothing() {
        let k = field("k", 1, DataType::Utf8);
        let p = probe_of(&k, Arc::new(StringArray::from(vec!["a", "m"])));
        assert!(!p.may_hold(&[(1, Datum::string("b"), Datum::string("l"))]));
        // UTF-16 order puts U+E000 after U+10000; code point order before: not trusted.
        assert!(p.may_hold(&[(1, Datum::string("\u{E000}"), Datum::string("\u{10000}"))]));
    }

    /// `k` = 0, 2, 4, ... in pages of 1000 rows, with the page index if `pages`.
    fn even_keys(pages: bool) -> ArrowReaderMetadata {
        let k = field("k", 1, DataType::Int64);
        let schema = Arc::new(Schema::new(vec![k]));
        let stats = if pages { EnabledStatistics::Page } else { EnabledStatistics::Chunk };
        let props = WriterProperties::builder()
            .set_statistics_enabled(stats)
            .set_data_page_row_count_limit(1000)
            .set_write_batch_size(1000)
            .set_max_row_group_row_count(Some(4000))
            .build();
        let mut buf = vec![];
        let mut w = ArrowWriter::try_new(&mut buf, schema.clone(), Some(props)).unwrap();
        let values: ArrayRef = Arc::new(Int64Array::from_iter_values((0..10_000).map(|i| 2 * i)));
        w.write(&RecordBatch::try_new(schema, vec![values]).unwrap()).unwrap();
        w.close().unwrap();
        let options =
            ArrowReaderOptions::new().with_page_index_policy(parquet::file::metadata::PageIndexPolicy::Required);
        ArrowReaderMetadata::load(&Bytes::from(buf), options).unwrap()
    }

    #[test]
    fn only_the_pages_whose_range_holds_a_task_value_are_read() {
        let meta = even_keys(true);
        let k = field("k", 1, DataType::Int64);
        let how = conform::Match::Name(&HashMap::new());
        // Rows 1250 (page 1) and 9000 (page 9, in the third row group).
        let p = probe_of(&k, Arc::new(Int64Array::from(vec![2500, 18_000])));
        let sel = p.selection(&meta, how).expect("a page index");
        assert_eq!(sel.row_count(), 2000, "{sel:?}");
        let picked: Vec<usize> = sel
            .iter()
            .scan(0, |at, s| {
                let start = *at;
                *at += s.row_count;
                Some((!s.skip).then_some(start))
            })
            .flatten()
            .collect();
        assert_eq!(picked, [1000, 9000]);
        // An odd key lies inside page 1's range and is in no row: a false positive, read.
        let p = probe_of(&k, Arc::new(Int64Array::from(vec![2501])));
        assert_eq!(p.selection(&meta, how).unwrap().row_count(), 1000);
        // Past every page: nothing to read.
        let p = probe_of(&k, Arc::new(Int64Array::from(vec![1_000_000])));
        assert!(!p.selection(&meta, how).unwrap().selects_any());
    }

    #[test]
    fn a_file_without_a_page_index_is_read_whole() {
        let k = field("k", 1, DataType::Int64);
        let p = probe_of(&k, Arc::new(Int64Array::from(vec![2500])));
        let sel = p.selection(&even_keys(false), conform::Match::Name(&HashMap::new()));
        assert!(sel.as_ref().is_none_or(|s| s.row_count() == 10_000), "{sel:?}");
    }
}
