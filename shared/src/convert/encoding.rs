//! Which Parquet columns of a writer batch's files skip dictionary encoding.
//!
//! A Parquet writer dictionary-encodes every column until the column's dictionary outgrows its
//! page limit (1 MiB) and only then falls back to plain encoding. A partition's data file of a
//! few thousand rows never reaches that limit, so a column whose values hardly repeat (ids,
//! timestamps, opaque blobs) is hashed value by value into a dictionary that saves nothing and is
//! then written twice (the dictionary page and an index per row). This module decides, once per
//! writer batch, from a sample of rows of the batch's largest file, which leaf columns go
//! straight to plain encoding. It changes how values are laid out in the file, never a value:
//! readers decode both encodings to the same data.

use std::collections::HashSet;

use arrow_array::{Array, RecordBatch};
use arrow_data::ArrayData;
use arrow_schema::DataType;
use parquet::arrow::ArrowSchemaConverter;
use parquet::schema::types::ColumnPath;

/// Rows sampled to judge a batch's columns.
pub const SAMPLE_ROWS: usize = 4096;

/// Fewest non-null sampled values on which a column is judged (below it, the defaults stand).
const MIN_VALUES: usize = 256;

/// The leaf columns of `sample` (rows of one data file, in the table's Arrow shape) whose
/// sampled non-null values are more than half distinct: a dictionary would hold most of them
/// once more. Returns no column when the sample's leaves cannot be matched to the Parquet
/// schema's (the defaults then stand).
pub fn plain_columns(sample: &RecordBatch) -> Vec<ColumnPath> {
    let Ok(descr) = ArrowSchemaConverter::new().convert(sample.schema_ref()) else {
        return vec![];
    };
    let mut leaves = vec![];
    for column in sample.columns() {
        collect_leaves(&column.to_data(), &mut leaves);
    }
    if leaves.len() != descr.num_columns() {
        return vec![];
    }
    leaves
        .iter()
        .zip(descr.columns())
        .filter(|(leaf, _)| mostly_distinct(leaf))
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

/// Whether more than half of the leaf's first [`SAMPLE_ROWS`] non-null values are distinct.
/// Booleans are never dictionary-encoded, and types whose bytes are not read here are left to
/// the writer's defaults.
fn mostly_distinct(leaf: &ArrayData) -> bool {
    let Some(values) = Values::of(leaf) else { return false };
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(SAMPLE_ROWS);
    let mut n = 0;
    for i in 0..leaf.len() {
        if n == SAMPLE_ROWS {
            break;
        }
        if leaf.is_null(i) {
            continue;
        }
        seen.insert(values.get(i));
        n += 1;
    }
    n >= MIN_VALUES && seen.len() * 2 > n
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

    use super::plain_columns;

    fn paths(batch: &RecordBatch) -> Vec<String> {
        plain_columns(batch).iter().map(|p| p.string()).collect()
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
        assert_eq!(paths(&batch), vec!["id", "time", "props.entries.values"]);
        // A slice is judged on its own rows (the fixed-width and offset buffers start at it).
        assert_eq!(paths(&batch.slice(1000, 1000)), vec!["id", "time", "props.entries.values"]);
        // Too few rows to judge: the defaults stand.
        assert!(paths(&events(100)).is_empty());
    }
}
