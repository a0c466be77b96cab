//! Conforms decoded Arrow data to a table's Arrow schema.
//!
//! The Avro decoder yields arrays shaped by the file's writer schema; the table wants its own
//! shape: Iceberg field ids in the field metadata, microsecond times, plain strings for enums,
//! its own child names for lists and maps, and its column order. This module matches columns
//! (by name, with the renames schema evolution found, or by Iceberg field id for data files
//! written with an earlier schema), re-labels nested arrays without copying their buffers, casts
//! leaves where the physical type differs (exactly: a value the cast cannot carry is an error,
//! never a null; which types may meet at all is decided before, by `convert::compat` and
//! `convert::evolve`), fills columns the source lacks with their default (format v3: the
//! caller says which, a writer's `write-default` or a reader's `initial-default`) or else, if
//! optional, with nulls, and refuses (naming the field) a source that lacks a required column
//! without a default, has a column the table does not, or carries nulls in a required one. It
//! owns no schema evolution policy.

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
        let mut levels: Vec<Vec<&iceberg::spec::MappedField>> = vec![mapping.fields().iter().collect()];
        while let Some(level) = levels.pop() {
            // One name, one field per level (Java's `NameMapping` refuses a mapping that repeats
            // one: a column would be read into two fields).
            let mut seen = std::collections::HashSet::new();
            if let Some(name) = level.iter().flat_map(|f| f.names()).find(|n| !seen.insert(n.as_str())) {
                return Err(format!("table property {key} maps the name `{name}` twice at one level"));
            }
            for f in level {
                if let Some(id) = f.field_id() {
                    out.entry(id).or_insert_with(Vec::new).extend(f.names().iter().cloned());
                }
                levels.push(f.fields().iter().map(|c| c.as_ref()).collect());
            }
        }
        Ok(Some(NameMap(out)))
    }

    /// Whether the mapping names field `id` `name`.
    pub fn names(&self, id: i32, name: &str) -> bool {
        self.0.get(&id).is_some_and(|n| n.iter().any(|m| m == name))
    }
}

/// Whether a field of `fields` lacks a field id, at any depth where fields are matched (struct
/// fields, also inside lists and maps): a file another engine registered (`add_files`,
/// `migrate`), to be read through the table's name mapping (as PyIceberg does unless every
/// field has an id).
pub(crate) fn lacks_field_ids(fields: &Fields) -> bool {
    fn inside(dt: &DataType) -> bool {
        match dt {
            DataType::Struct(f) => lacks_field_ids(f),
            DataType::List(e) | DataType::LargeList(e) => inside(e.data_type()),
            DataType::Map(e, _) => match e.data_type() {
                DataType::Struct(kv) => kv.iter().any(|f| inside(f.data_type())),
                _ => false,
            },
            _ => false,
        }
    }
    fields.iter().any(|f| field_id(f).is_none() || inside(f.data_type()))
}

/// `n` copies of the partition value `value` as an array of `dt` (the table column's Arrow
/// type): the column an identity partition gives a data file that lacks it (the spec's column
/// projection, its first rule). `None` for a pairing no identity partition produces.
pub(crate) fn repeated(dt: &DataType, value: &iceberg::spec::PrimitiveLiteral, n: usize) -> Option<ArrayRef> {
    use arrow_array::{BinaryArray, BooleanArray, Float32Array, Float64Array, Int32Array, Int64Array, StringArray};
    use iceberg::spec::PrimitiveLiteral as L;
    let one: ArrayRef = match (dt, value) {
        (DataType::Boolean, L::Boolean(b)) => Arc::new(BooleanArray::from(vec![*b])),
        (DataType::Int32 | DataType::Date32 | DataType::Time32(_), L::Int(v)) => {
            let data = Int32Array::from(vec![*v]).into_data().into_builder().data_type(dt.clone());
            arrow_array::make_array(data.build().ok()?)
        }
        (DataType::Int64 | DataType::Time64(_) | DataType::Timestamp(_, _), L::Long(v)) => {
            let data = Int64Array::from(vec![*v]).into_data().into_builder().data_type(dt.clone());
            arrow_array::make_array(data.build().ok()?)
        }
        (DataType::Float32, L::Float(v)) => Arc::new(Float32Array::from(vec![v.0])),
        (DataType::Float64, L::Double(v)) => Arc::new(Float64Array::from(vec![v.0])),
        (DataType::Utf8, L::String(v)) => Arc::new(StringArray::from(vec![v.as_str()])),
        (DataType::Binary, L::Binary(v)) => Arc::new(BinaryArray::from(vec![v.as_slice()])),
        (DataType::FixedSizeBinary(w), L::Binary(v)) if v.len() == *w as usize => {
            Arc::new(arrow_array::FixedSizeBinaryArray::try_from_iter([v.as_slice()].into_iter()).ok()?)
        }
        (DataType::FixedSizeBinary(16), L::UInt128(v)) => {
            Arc::new(arrow_array::FixedSizeBinaryArray::try_from_iter([v.to_be_bytes()].into_iter()).ok()?)
        }
        (DataType::Decimal128(p, s), L::Int128(v)) => {
            Arc::new(arrow_array::Decimal128Array::from(vec![*v]).with_precision_and_scale(*p, *s).ok()?)
        }
        _ => return None,
    };
    let zeros = arrow_array::UInt32Array::from(vec![0u32; n]);
    arrow_select::take::take(one.as_ref(), &zeros, None).ok()
}

/// Reshapes `batch` into the table schema `target`, matching columns by name.
#[cfg(test)]
pub(crate) fn conform_batch(batch: &RecordBatch, target: &SchemaRef) -> Result<RecordBatch> {
    conform_batch_with(batch, target, Match::Name(&HashMap::new()))
}

/// Column defaults by field id: what a column the source lacks is filled with.
pub(crate) type Defaults = HashMap<i32, iceberg::spec::PrimitiveLiteral>;

/// Reshapes `batch` into the table schema `target`, matching columns as `how` says.
pub(crate) fn conform_batch_with(batch: &RecordBatch, target: &SchemaRef, how: Match<'_>) -> Result<RecordBatch> {
    conform_batch_filling(batch, target, how, &Defaults::new())
}

/// [`conform_batch_with`], a column the source lacks filled with its value in `defaults` if it
/// has one there.
pub(crate) fn conform_batch_filling(
    batch: &RecordBatch,
    target: &SchemaRef,
    how: Match<'_>,
    defaults: &Defaults,
) -> Result<RecordBatch> {
    let source = StructArray::from(batch.clone());
    let columns = conform_children(&source, target.fields(), "", How { how, defaults })?;
    let opts = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(target.clone(), columns, &opts)?)
}

/// The Iceberg field id in a field's metadata.
pub(crate) fn field_id(f: &Field) -> Option<i32> {
    f.metadata().get(parquet::arrow::PARQUET_FIELD_ID_META_KEY).and_then(|v| v.parse().ok())
}

/// Where table field `t` (at dotted `path`'s level) is among the source's fields `names`.
pub(crate) fn position(names: &Fields, t: &Field, path: &str, how: Match<'_>) -> Option<usize> {
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

/// How columns are matched, and what a missing one is filled with.
#[derive(Clone, Copy)]
struct How<'a> {
    how: Match<'a>,
    defaults: &'a Defaults,
}

fn conform_children(source: &StructArray, targets: &Fields, path: &str, fill: How<'_>) -> Result<Vec<ArrayRef>> {
    let how = fill.how;
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
            let default = field_id(t).and_then(|id| fill.defaults.get(&id));
            match at {
                Some(i) => conform_array(source.column(i), t, &fpath, fill),
                None if default.is_some() => {
                    let value = default.expect("some");
                    repeated(t.data_type(), value, source.len()).ok_or_else(|| {
                        Error::schema(fpath, format!("its default {value:?} does not fit the column's type"))
                    })
                }
                None if t.is_nullable() => Ok(new_null_array(t.data_type(), source.len())),
                None => Err(Error::schema(fpath, "the table requires this field but the file does not have it")),
            }
        })
        .collect()
}

fn conform_array(array: &ArrayRef, target: &FieldRef, path: &str, how: How<'_>) -> Result<ArrayRef> {
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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Decimal128Array, RecordBatch};
    use arrow_schema::{DataType, Field, Schema};

    use super::conform_batch;

    #[test]
    fn a_name_mapping_gives_each_id_its_names_and_refuses_a_repeated_name() {
        use super::NameMap;
        use std::collections::HashMap;
        let props = |json: &str| HashMap::from([("schema.name-mapping.default".to_string(), json.to_string())]);
        let m = NameMap::of(&props(
            r#"[{"field-id":1,"names":["id","uid"]},{"field-id":2,"names":["s"],"fields":[{"field-id":3,"names":["x"]}]}]"#,
        ))
        .unwrap()
        .unwrap();
        assert!(m.names(1, "uid") && m.names(3, "x") && !m.names(3, "id"));
        let twice = NameMap::of(&props(r#"[{"field-id":1,"names":["a"]},{"field-id":2,"names":["a"]}]"#));
        assert!(twice.unwrap_err().contains("maps the name `a` twice"));
        // The same name at two levels is fine.
        assert!(
            NameMap::of(&props(r#"[{"field-id":1,"names":["a"],"fields":[{"field-id":2,"names":["a"]}]}]"#)).is_ok()
        );
        assert_eq!(NameMap::of(&HashMap::new()), Ok(None));
    }

    #[test]
    fn a_file_lacks_field_ids_when_any_struct_field_at_any_depth_has_none() {
        use super::lacks_field_ids;
        use arrow_schema::Fields;
        use std::collections::HashMap;
        let id = |f: Field, i: i32| f.with_metadata(HashMap::from([("PARQUET:field_id".into(), i.to_string())]));
        let inner = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
        let nested = Fields::from(vec![id(Field::new("s", DataType::Struct(inner.clone()), true), 1)]);
        assert!(lacks_field_ids(&nested), "a nested field without an id");
        let element = Arc::new(Field::new("element", DataType::Struct(inner), true));
        let list = Fields::from(vec![id(Field::new("l", DataType::List(element), true), 1)]);
        assert!(lacks_field_ids(&list), "a struct in a list");
        let all = Fields::from(vec![id(Field::new("a", DataType::Int32, true), 1)]);
        assert!(!lacks_field_ids(&all));
    }

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
