//! Which Parquet columns of a writer batch's files skip dictionary encoding.
//!
//! A Parquet writer dictionary-encodes every column until the column's dictionary outgrows its
//! page limit (1 MiB) and only then falls back to plain encoding. A partition's data file of a
//! few thousand rows never reaches that limit, so a column whose values hardly repeat
//! (timestamps, opaque blobs) is hashed value by value into a dictionary that saves nothing and
//! is then written twice (the dictionary page and an index per row). This module decides, once
//! per writer batch, from a sample of rows of the batch's largest file, which leaf columns go
//! straight to plain encoding: those whose values would appear fewer than twice each, on
//! average, in that file. It changes how values are laid out in the file, never a value:
//! readers decode both encodings to the same data. (Fixed-width binary columns never get a
//! dictionary in the Parquet 1.0 pages Floe writes; judging them changes nothing.)

use std::collections::HashSet;

use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use parquet::arrow::ArrowSchemaConverter;
use parquet::schema::types::ColumnPath;

/// Rows sampled to judge a batch's columns.
pub(crate) const SAMPLE_ROWS: usize = 4096;

/// Fewest non-null sampled values on which a column is judged (below it, the defaults stand).
const MIN_VALUES: usize = 256;

/// The leaf columns of `sample` (the first rows of a data file of `file_rows` rows, in the
/// table's Arrow shape) whose values would appear fewer than twice each, on average, in the
/// whole file: a dictionary would hold most of them once more. Returns no column when the
/// sample's leaves cannot be matched to the Parquet schema's (the defaults then stand).
pub(crate) fn plain_columns(sample: &RecordBatch, file_rows: usize) -> Vec<ColumnPath> {
    let Ok(descr) = ArrowSchemaConverter::new().convert(sample.schema_ref()) else {
        return vec![];
    };
    let mut leaves = vec![];
    for column in sample.columns() {
        collect_leaves(&column.to_data(), &mut leaves);
    }
    if leaves.len() != descr.num_columns() || sample.num_rows() == 0 {
        return vec![];
    }
    let scale = file_rows.max(sample.num_rows()) as f64 / sample.num_rows() as f64;
    leaves
        .iter()
        .zip(descr.columns())
        .filter(|(leaf, _)| rarely_repeats(leaf, scale))
        .map(|(_, col)| col.path().clone())
        .collect()
}

/// The leaf arrays under `data`, depth first, in the order Parquet numbers its leaf columns.
fn collect_leaves(data: &ArrayData, out: &mut Vec<ArrayData>) {
    match data.data_type() {
        DataType::Struct(_)
        | DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(..)
        | DataType::Map(..) => {
            for child in data.child_data() {
                collect_leaves(child, out);
            }
        }
        _ => out.push(data.clone()),
    }
}

/// Whether the leaf's values would appear fewer than twice each, on average, in a file `scale`
/// times the sample: judged on its first [`SAMPLE_ROWS`] non-null values (at least
/// [`MIN_VALUES`] of them). When the sample is the whole file the distinct count is exact;
/// otherwise the file's distinct count is estimated from the sample's (see
/// [`estimated_distinct`]). Booleans are never dictionary-encoded, and types whose bytes are
/// not read here are left to the writer's defaults.
fn rarely_repeats(leaf: &ArrayData, scale: f64) -> bool {
    let Some(values) = Values::of(leaf) else { return false };
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(SAMPLE_ROWS);
    let (mut n, mut scanned) = (0, 0);
    for i in 0..leaf.len() {
        if n == SAMPLE_ROWS {
            break;
        }
        scanned += 1;
        if leaf.is_null(i) {
            continue;
        }
        seen.insert(values.get(i));
        n += 1;
    }
    if n < MIN_VALUES {
        return false;
    }
    // The file's non-null values of this leaf: the sample's, scaled by the part of the leaf
    // scanned and by the file's size over the sample's.
    let file_values = n as f64 * (leaf.len() as f64 / scanned as f64) * scale;
    let distinct =
        if scanned == leaf.len() && scale <= 1.0 { seen.len() as f64 } else { estimated_distinct(n, seen.len()) };
    distinct * 2.0 > file_values
}

/// The number of distinct values `d` of a column such that `n` draws from them, uniformly at
/// random, show `seen` distinct ones on average: the root of `d * (1 - exp(-n / d)) = seen`,
/// infinite when no value repeated. Skewed columns look less distinct than they are, which
/// errs towards keeping the dictionary.
fn estimated_distinct(n: usize, seen: usize) -> f64 {
    if seen >= n {
        return f64::INFINITY;
    }
    let (n, seen) = (n as f64, seen as f64);
    let expected = |d: f64| d * (1.0 - (-n / d).exp());
    let (mut lo, mut hi) = (seen, seen.max(1.0));
    while expected(hi) < seen && hi < 1e15 {
        hi *= 2.0;
    }
    for _ in 0..100 {
        let mid = (lo + hi) / 2.0;
        if expected(mid) < seen {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// The bytes of a leaf's values, by physical layout.
enum Values<'a> {
    Fixed { bytes: &'a [u8], width: usize },
    Var32 { offsets: &'a [i32], bytes: &'a [u8] },
    Var64 { offsets: &'a [i64], bytes: &'a [u8] },
}

impl<'a> Values<'a> {
    fn of(leaf: &'a ArrayData) -> Option<Values<'a>> {
        use DataType::*;
        let ty = leaf.data_type();
        if leaf.is_empty() {
            return None;
        }
        Some(match ty {
            Utf8 | Binary => Values::Var32 { offsets: leaf.buffer::<i32>(0), bytes: leaf.buffers()[1].as_slice() },
            LargeUtf8 | LargeBinary => {
                Values::Var64 { offsets: leaf.buffer::<i64>(0), bytes: leaf.buffers()[1].as_slice() }
            }
            Boolean | Null => return None,
            _ => {
                let width = match ty {
                    FixedSizeBinary(w) => usize::try_from(*w).ok()?,
                    _ => ty.primitive_width()?,
                };
                let bytes = leaf.buffers().first()?.as_slice().get(leaf.offset() * width..)?;
                Values::Fixed { bytes, width }
            }
        })
    }

    /// The bytes of the array's value `i` (`ArrayData::buffer` starts the offsets at the
    /// array's offset already; fixed-width bytes are sliced to it in [`Values::of`]).
    fn get(&self, i: usize) -> &'a [u8] {
        match *self {
            Values::Fixed { bytes, width } => bytes.get(i * width..(i + 1) * width).unwrap_or_default(),
            Values::Var32 { offsets, bytes } => var(bytes, offsets, i),
            Values::Var64 { offsets, bytes } => var(bytes, offsets, i),
        }
    }
}

fn var<'a, O: Copy + TryInto<usize>>(bytes: &'a [u8], offsets: &[O], i: usize) -> &'a [u8] {
    let at = |k: usize| offsets.get(k).and_then(|o| (*o).try_into().ok());
    match (at(i), at(i + 1)) {
        (Some(s), Some(e)) if s <= e => bytes.get(s..e).unwrap_or_default(),
        _ => &[],
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{MapBuilder, StringBuilder};
    use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, Int64Array, RecordBatch, StringArray};
    use arrow_schema::{Field, Schema};

    use super::{estimated_distinct, plain_columns};

    fn paths(batch: &RecordBatch, file_rows: usize) -> Vec<String> {
        plain_columns(batch, file_rows).iter().map(|p| p.string()).collect()
    }

    /// `n` rows: a unique id and time, a repeating kind, and a map whose values are unique.
    fn events(n: u128) -> RecordBatch {
        let ids = FixedSizeBinaryArray::try_from_iter((0..n).map(|i| i.to_le_bytes())).unwrap();
        let times = Int64Array::from_iter_values((0..n as i64).map(|i| 1_700_000_000_000_000 + i * 7));
        let kinds = StringArray::from_iter_values((0..n).map(|i| ["click", "view", "buy"][i as usize % 3]));
        let mut map = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
        for i in 0..n {
            map.keys().append_value("order");
            map.values().append_value(format!("ord-{i}"));
            map.append(true).unwrap();
        }
        let map = map.finish();
        let schema = Schema::new(vec![
            Field::new("id", ids.data_type().clone(), false),
            Field::new("time", times.data_type().clone(), false),
            Field::new("kind", kinds.data_type().clone(), false),
            Field::new("props", map.data_type().clone(), false),
        ]);
        let cols: Vec<ArrayRef> = vec![Arc::new(ids), Arc::new(times), Arc::new(kinds), Arc::new(map)];
        RecordBatch::try_new(Arc::new(schema), cols).unwrap()
    }

    #[test]
    fn unique_columns_go_plain_and_repeating_ones_keep_their_dictionary() {
        let batch = events(2000);
        assert_eq!(paths(&batch, 2000), vec!["id", "time", "props.entries.values"]);
        // A slice is judged on its own rows (the fixed-width and offset buffers start at it).
        assert_eq!(paths(&batch.slice(1000, 1000), 1000), vec!["id", "time", "props.entries.values"]);
        // Too few rows to judge: the defaults stand.
        assert!(paths(&events(100), 100).is_empty());
    }

    #[test]
    fn a_column_that_repeats_in_the_whole_file_keeps_its_dictionary() {
        // 1,000 rows of a column with 700 distinct values (each 1-2 times).
        let values = Int64Array::from_iter_values((0..1000).map(|i| i % 700));
        let schema = Schema::new(vec![Field::new("v", values.data_type().clone(), false)]);
        let batch = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(values) as ArrayRef]).unwrap();
        // As the whole file: 700 distinct of 1,000, fewer than two each: plain.
        assert_eq!(paths(&batch, 1000), vec!["v"]);
        // As the first rows of a file 100 times larger: the values repeat there; dictionary.
        assert!(paths(&batch, 100_000).is_empty());
    }

    #[test]
    fn distinct_values_are_estimated_from_a_sample() {
        assert_eq!(estimated_distinct(100, 100), f64::INFINITY);
        // 4,096 draws from 5,000 values show ~2,797 of them.
        let d = estimated_distinct(4096, 2797);
        assert!((4900.0..5100.0).contains(&d), "{d}");
        assert!(estimated_distinct(4096, 10) >= 10.0);
    }
}
