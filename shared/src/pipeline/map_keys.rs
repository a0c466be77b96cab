//! Maps whose entries repeat a key, refused per object before it is accepted.
//!
//! An Avro map is a sequence of key/value pairs, and nothing in the encoding stops a writer
//! (a hand-built or buggy one) from repeating a key. Readers then disagree: Java and fastavro
//! keep the last value, the decoder here keeps every entry, and Iceberg's maps (and some
//! engines reading them) require unique keys. No one value is the map's, so the object is
//! quarantined with the field and the key.

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, MapArray, RecordBatch};
use arrow_schema::DataType;

use super::ranges::elements;
use crate::{Rejection, RejectionKind};

/// Entries of one map compared pairwise up to this many; past it through a set.
const PAIRWISE: usize = 16;

/// Refuses `batch` if a map at any depth holds a key twice in one row.
pub(crate) fn check(batch: &RecordBatch) -> Result<(), Rejection> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        check_column(field.name(), column)?;
    }
    Ok(())
}

fn check_column(path: &str, column: &ArrayRef) -> Result<(), Rejection> {
    match column.data_type() {
        DataType::Struct(fields) => {
            for (f, child) in fields.iter().zip(column.as_struct().columns()) {
                check_column(&format!("{path}.{}", f.name()), child)?;
            }
        }
        DataType::List(_) => {
            let l = column.as_list::<i32>();
            check_column(&format!("{path}.element"), &elements(l.values(), l.value_offsets()))?;
        }
        DataType::LargeList(_) => {
            let l = column.as_list::<i64>();
            check_column(&format!("{path}.element"), &elements(l.values(), l.value_offsets()))?;
        }
        DataType::Map(_, _) => {
            let m = column.as_map();
            if let Some(key) = repeated_key(m) {
                return Err(Rejection::new(
                    RejectionKind::Schema,
                    format!("map `{path}` holds the key {key:?} twice in one row: readers disagree on its value"),
                ));
            }
            let entries: ArrayRef = std::sync::Arc::new(m.entries().clone());
            let entries = elements(&entries, m.value_offsets());
            check_column(&format!("{path}.value"), entries.as_struct().column(1))?;
        }
        _ => {}
    }
    Ok(())
}

/// The first key a row of `m` holds twice (keys are strings: Avro's map keys), as text.
fn repeated_key(m: &MapArray) -> Option<String> {
    let keys = m.keys();
    let keys = keys.as_string_opt::<i32>()?;
    let offsets = m.value_offsets();
    for i in 0..m.len() {
        let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
        if end - start < 2 || m.is_null(i) {
            continue;
        }
        if end - start <= PAIRWISE {
            for a in start..end {
                for b in a + 1..end {
                    if keys.value(a) == keys.value(b) {
                        return Some(keys.value(a).to_string());
                    }
                }
            }
        } else {
            let mut seen = std::collections::HashSet::with_capacity(end - start);
            if let Some(k) = (start..end).map(|j| keys.value(j)).find(|k| !seen.insert(*k)) {
                return Some(k.to_string());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::builder::{Int64Builder, ListBuilder, MapBuilder, StringBuilder};

    use super::*;

    fn map(rows: &[&[&str]]) -> ArrayRef {
        let mut b = MapBuilder::new(None, StringBuilder::new(), Int64Builder::new());
        for row in rows {
            for k in *row {
                b.keys().append_value(k);
                b.values().append_value(1);
            }
            b.append(true).unwrap();
        }
        Arc::new(b.finish())
    }

    #[test]
    fn a_key_twice_in_one_row_is_refused_at_any_depth() {
        check_column("m", &map(&[&["a", "b"], &["a"], &[], &["b", "a"]])).unwrap();
        let e = check_column("m", &map(&[&["a", "b"], &["x", "y", "x"]])).unwrap_err();
        assert!(e.reason.contains("\"x\"") && e.reason.contains("`m`"), "{e}");
        let many: Vec<String> = (0..40).map(|i| format!("k{i}")).chain(["k7".to_string()]).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(check_column("m", &map(&[&many])).unwrap_err().reason.contains("\"k7\""));
        assert!(check_column("m", &map(&[&many[..40]])).is_ok());
        // Only the rows a slice keeps are looked at.
        check_column("m", &map(&[&["x", "x"], &["a", "b"]]).slice(1, 1)).unwrap();
        // A map inside a list.
        let mut l = ListBuilder::new(MapBuilder::new(None, StringBuilder::new(), Int64Builder::new()));
        for k in ["q", "q"] {
            l.values().keys().append_value(k);
            l.values().values().append_value(2);
        }
        l.values().append(true).unwrap();
        l.append(true);
        let e = check_column("l", &(Arc::new(l.finish()) as ArrayRef)).unwrap_err();
        assert!(e.reason.contains("`l.element`"), "{e}");
    }
}
