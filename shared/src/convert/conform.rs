//! Conforms decoded Arrow data to a table's Arrow schema.
//!
//! The Avro decoder yields arrays shaped by the file's writer schema; the table wants its own
//! shape: Iceberg field ids in the field metadata, microsecond times, plain strings for enums,
//! its own child names for lists and maps, and its column order. This module matches columns
//! (by name, with the renames schema evolution found, or by Iceberg field id for data files
//! written with an earlier schema), re-labels nested arrays without copying their buffers, casts
//! leaves where the physical type differs (exactly: a value the cast cannot carry is an error,
//! never a null; which types may meet at all is decided before, by `convert::compat` and
//! `convert::evolve`), fills optional columns the source lacks with nulls, and refuses (naming
//! the field) a source that lacks a required column, has a column the table does not, or
//! carries nulls in a required one. It owns no schema evolution policy.

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, ListArray, MapArray, RecordBatch, RecordBatchOptions, StructArray, new_null_array};
use arrow_schema::{DataType, Field, FieldRef, Fields, SchemaRef};

use crate::{Error, Result};

/// Casts that fail instead of turning a value they cannot carry into a null.
const EXACT: arrow_cast::CastOptions<'static> =
    arrow_cast::CastOptions { safe: false, format_options: arrow_cast::display::FormatOptions::new() };

/// How a table column finds its column in the source.
#[derive(Debug, Clone, Copy)]
pub enum Match<'a> {
    /// By name; the map gives, for a table column's dotted path, the source's name for it when
    /// the two differ (a producer still using a column's old name).
    Name(&'a HashMap<String, String>),
    /// By Iceberg field id (`PARQUET:field_id` in both sides' field metadata): data files
    /// written with an earlier schema of the table.
    Id,
    /// By field id, and a source field without one by the names the table's name mapping
    /// gives the id (the spec's column projection: files another engine registered with
    /// `add_files` or `migrate` carry no ids).
    IdOrName(&'a NameMap),
}

/// The names a table's `schema.name-mapping.default` gives each field id. Ids are unique in a
/// table, so one flat map serves every level: a field is only ever looked up among its
/// parent's children.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NameMap(HashMap<i32, Vec<String>>);

impl NameMap {
    /// The mapping in table properties `props`: `None` if there is none, an error (the
    /// property and why) if it does not parse.
    pub fn of(props: &HashMap<String, String>) -> std::result::Result<Option<Self>, String> {
        let key = iceberg::spec::DEFAULT_SCHEMA_NAME_MAPPING;
        let Some(json) = props.get(key) else { return Ok(None) };
        let mapping: iceberg::spec::NameMapping =
            serde_json::from_str(json).map_err(|e| format!("table property {key} is not a name mapping: {e}"))?;
        let mut out = HashMap::new();
        let mut stack: Vec<&iceberg::spec::MappedField> = mapping.fields().iter().collect();
        while let Some(f) = stack.pop() {
            if let Some(id) = f.field_id() {
                out.entry(id).or_insert_with(Vec::new).extend(f.names().iter().cloned());
            }
            stack.extend(f.fields().iter().map(|c| c.as_ref()));
        }
        Ok(Some(NameMap(out)))
    }

    /// Whether the mapping names field `id` `name`.
    pub fn names(&self, id: i32, name: &str) -> bool {
        self.0.get(&id).is_some_and(|n| n.iter().any(|m| m == name))
    }
}

/// Whether a top-level field of `fields` lacks a field id: a file another engine registered
/// (`add_files`, `migrate`), to be read through the table's name mapping.
pub fn lacks_field_ids(fields: &Fields) -> bool {
    fields.iter().any(|f| field_id(f).is_none())
}

/// Reshapes `batch` into the table schema `target`, matching columns by name.
pub fn conform_batch(batch: &RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
    conform_batch_with(batch, target, Match::Name(&HashMap::new()))
}

/// Reshapes `batch` into the table schema `target`, matching columns as `how` says.
pub fn conform_batch_with(batch: &RecordBatch, target: &SchemaRef, how: Match<'_>) -> Result<RecordBatch> {
    let source = StructArray::from(batch.clone());
    let columns = conform_children(&source, target.fields(), "", how)?;
    let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(target.clone(), columns, &opts)?)
}

/// The Iceberg field id in a field's metadata.
pub fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(parquet::arrow::PARQUET_FIELD_ID_META_KEY).and_then(|v| v.parse().ok())
}

/// Where table field `t` (at dotted `path`'s level) is among the source's fields `names`.
pub fn position(names: &Fields, t: &Field, path: &str, how: Match<'_>) -> Option<usize> {
    match how {
        Match::Name(renamed) => {
            let name = renamed.get(&join(path, t.name())).map_or(t.name().as_str(), String::as_str);
            names.find(name).map(|(i, _)| i)
        }
        Match::Id => field_id(t).and_then(|id| names.iter().position(|s| field_id(s) == Some(id))),
        Match::IdOrName(mapping) => field_id(t).and_then(|id| {
            names
                .iter()
                .position(|s| field_id(s) == Some(id))
                .or_else(|| names.iter().position(|s| field_id(s).is_none() && mapping.names(id, s.name())))
        }),
    }
}

fn conform_children(source: &StructArray, targets: &Fields, path: &str, how: Match<'_>) -> Result<Vec<ArrayRef>> {
    let names = match source.data_type() {
        DataType::Struct(f) => f.clone(),
        _ => unreachable!("StructArray has a struct type"),
    };
    let found: Vec<Option<usize>> = targets.iter().map(|t| position(&names, t, path, how)).collect();
    // By id, a source column the table no longer has (another engine dropped it) is not read,
    // as Iceberg readers ignore dropped ids; by name, it is a field the table lacks.
    let extra = names.iter().enumerate().find(|(i, _)| !found.contains(&Some(*i)));
    if let (Some(extra), Match::Name(_)) = (extra, how) {
        return Err(Error::schema(join(path, extra.1.name()), "the source has this field but the table does not"));
    }
    targets
        .iter()
        .zip(found)
        .map(|(t, at)| {
            let fpath = join(path, t.name());
            match at {
                Some(i) => conform_array(source.column(i), t, &fpath, how),
                None if t.is_nullable() => Ok(new_null_array(t.data_type(), source.len())),
                None => Err(Error::schema(fpath, "the table requires this field but the file does not have it")),
            }
        })
        .collect()
}

fn conform_array(array: &ArrayRef, target: &FieldRef, path: &str, how: Match<'_>) -> Result<ArrayRef> {
    if !target.is_nullable() && array.logical_null_count() > 0 {
        return Err(Error::schema(path, "the table requires a value but the file has nulls"));
    }
    let out: ArrayRef = match (target.data_type(), array.data_type()) {
        (DataType::Struct(tf), DataType::Struct(_)) => {
            let s = array.as_any().downcast_ref::<StructArray>().expect("struct type");
            let children = conform_children(s, tf, path, how)?;
            Arc::new(StructArray::try_new(tf.clone(), children, s.nulls().cloned())?)
        }
        (DataType::List(te), DataType::List(_)) => {
            let l = array.as_any().downcast_ref::<ListArray>().expect("list type");
            let values = conform_array(l.values(), te, &join(path, "element"), how)?;
            Arc::new(ListArray::try_new(te.clone(), l.offsets().clone(), values, l.nulls().cloned())?)
        }
        (DataType::Map(te, sorted), DataType::Map(_, _)) => {
            let m = array.as_any().downcast_ref::<MapArray>().expect("map type");
            let DataType::Struct(kv) = te.data_type() else {
                return Err(Error::schema(path, "malformed map type in table schema"));
            };
            let entries = m.entries();
            let key = conform_array(entries.column(0), &kv[0], &join(path, "key"), how)?;
            let value = conform_array(entries.column(1), &kv[1], &join(path, "value"), how)?;
            let entries = StructArray::try_new(kv.clone(), vec![key, value], None)?;
            Arc::new(MapArray::try_new(te.clone(), m.offsets().clone(), entries, m.nulls().cloned(), *sorted)?)
        }
        (DataType::Decimal128(p, _), _) => {
            let out = if target.data_type() == array.data_type() {
                array.clone()
            } else {
                arrow_cast::cast_with_options(array, target.data_type(), &EXACT).map_err(|e| {
                    Error::schema(
                        path,
                        format!("cannot convert {} to {} exactly: {e}", array.data_type(), target.data_type()),
                    )
                })?
            };
            check_precision(&out, *p, path)?;
            out
        }
        (t, s) if t == s => array.clone(),
        (t, s) if is_nested(t) || is_nested(s) => {
            return Err(Error::schema(path, format!("the file has {s} where the table has {t}")));
        }
        // Only representations of one Iceberg type (or its promotions) should reach here: the
        // file's schema passed `compat::check_file_against_table`. Still, a cast only ever stays
        // within one kind of value: a count of milliseconds is never relabelled a timestamp.
        (t, s) if kind(t).is_none() || kind(t) != kind(s) => {
            return Err(Error::schema(path, format!("the file has {s} where the table has {t}")));
        }
        // `safe: false` makes any value the cast cannot carry exactly (an overflow, an
        // unparsable string) an error, never a null.
        (t, s) => arrow_cast::cast_with_options(array, t, &EXACT)
            .map_err(|e| Error::schema(path, format!("cannot convert {s} to {t} exactly: {e}")))?,
    };
    Ok(out)
}

/// Avro's decimal bytes can hold more digits than the declared precision; Parquet would then
/// store a truncated unscaled value. Such a value cannot land exactly: refuse it.
fn check_precision(array: &ArrayRef, precision: u8, path: &str) -> Result<()> {
    let d = array.as_any().downcast_ref::<arrow_array::Decimal128Array>().expect("decimal128 type");
    d.validate_decimal_precision(precision).map_err(|e| {
        Error::schema(path, format!("a value has more digits than the declared precision {precision}: {e}"))
    })
}

/// The kinds of value a cast may move between representations of (a timestamp's unit, a
/// string's offsets, an integer's width); `None` for types no cast may produce.
fn kind(t: &DataType) -> Option<u8> {
    use DataType::*;
    Some(match t {
        Boolean => 0,
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => 1,
        Float16 | Float32 | Float64 => 2,
        Date32 | Date64 => 3,
        Time32(_) | Time64(_) => 4,
        Timestamp(_, None) => 5,
        Timestamp(_, Some(_)) => 6,
        Utf8 | LargeUtf8 | Utf8View => 7,
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => 8,
        Dictionary(_, v) => return kind(v),
        _ => return None,
    })
}

fn is_nested(t: &DataType) -> bool {
    matches!(t, DataType::Struct(_) | DataType::List(_) | DataType::Map(_, _) | DataType::LargeList(_))
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

/// Returns `field` with its data type replaced (keeps name, nullability and metadata).
pub fn with_type(field: &Field, dt: DataType) -> Field {
    field.clone().with_data_type(dt)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Decimal128Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    use super::conform_batch;

    #[test]
    fn a_cast_never_moves_a_value_to_another_kind() {
        use arrow_array::Int64Array;
        let file = Arc::new(Schema::new(vec![Field::new("ts", DataType::Int64, true)]));
        let batch = RecordBatch::try_new(file, vec![Arc::new(Int64Array::from(vec![1_700_000_000_123]))]).unwrap();
        for target in [DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())), DataType::Float64]
        {
            let table = Arc::new(Schema::new(vec![Field::new("ts", target.clone(), true)]));
            let e = conform_batch(&batch, &table).unwrap_err().to_string();
            assert!(e.contains("the file has Int64 where the table has"), "{target}: {e}");
        }
    }

    #[test]
    fn by_id_a_dropped_column_is_not_read_and_a_new_one_is_null() {
        use std::collections::HashMap;

        use arrow_array::{Array, Int64Array, StringArray};

        use super::{Match, conform_batch_with};
        let with_id = |name: &str, dt: DataType, id: i32| {
            Field::new(name, dt, true).with_metadata(HashMap::from([("PARQUET:field_id".to_string(), id.to_string())]))
        };
        let file = Arc::new(Schema::new(vec![with_id("a", DataType::Int32, 1), with_id("gone", DataType::Utf8, 2)]));
        let batch = RecordBatch::try_new(
            file,
            vec![Arc::new(arrow_array::Int32Array::from(vec![7])), Arc::new(StringArray::from(vec!["x"]))],
        )
        .unwrap();
        // The table now: `a` renamed `b` and promoted to long, `gone` dropped, `c` added.
        let table = Arc::new(Schema::new(vec![with_id("b", DataType::Int64, 1), with_id("c", DataType::Utf8, 3)]));
        let out = conform_batch_with(&batch, &table, Match::Id).unwrap();
        assert_eq!(out.column(0).as_any().downcast_ref::<Int64Array>().unwrap().value(0), 7);
        assert!(out.column(1).is_null(0));
        // By name, the same extra column is an error.
        let e = conform_batch_with(&batch, &table, Match::Name(&HashMap::new())).unwrap_err().to_string();
        assert!(e.contains("`a`") || e.contains("`gone`"), "{e}");
    }

    #[test]
    fn a_decimal_with_more_digits_than_its_precision_is_refused() {
        let schema = Arc::new(Schema::new(vec![Field::new("amount", DataType::Decimal128(12, 2), true)]));
        // Avro decimal bytes are unchecked: 2^70 fits the bytes but not 12 digits.
        let wide = Decimal128Array::from(vec![Some(1_i128 << 70), None]).with_precision_and_scale(12, 2).unwrap();
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(wide)]).unwrap();
        let e = conform_batch(&batch, &schema).unwrap_err().to_string();
        assert!(e.contains("`amount`") && e.contains("precision 12"), "{e}");
        let fits = Decimal128Array::from(vec![Some(999_999_999_999), None]).with_precision_and_scale(12, 2).unwrap();
        let batch = RecordBatch::try_new(schema.clone(), vec![Arc::new(fits)]).unwrap();
        assert_eq!(conform_batch(&batch, &schema).unwrap().num_rows(), 2);
    }
}
