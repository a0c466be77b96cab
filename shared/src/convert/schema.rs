//! Avro schema → Iceberg schema.
//!
//! Owns the type mapping and nothing else: which Avro type and logical type becomes which Iceberg
//! type, and which Avro schemas Iceberg cannot hold (each refused with the dotted path of the
//! field). Field ids are assigned in Iceberg's order for a fresh schema (all fields of a struct,
//! then the children of each in turn), so the ids a new table gets are the ids returned here. Once a table exists its schema is the source of truth, and files are mapped
//! onto it by field name (see `convert::conform`).
//!
//! | Avro | Iceberg |
//! |---|---|
//! | boolean, int, long, float, double | boolean, int, long, float, double |
//! | string, enum | string |
//! | bytes | binary |
//! | fixed(n) | fixed\[n\] |
//! | record | struct |
//! | array | list |
//! | map | map<string, V> |
//! | union \[null, T\] (either order) | optional T |
//! | decimal(p, s) on bytes or fixed | decimal(p, s), p ≤ 38 |
//! | uuid on string or fixed(16) | uuid |
//! | date | date |
//! | time-millis, time-micros | time |
//! | timestamp-millis, timestamp-micros | timestamptz |
//! | local-timestamp-millis, local-timestamp-micros | timestamp |
//!
//! Refused: unions of several non-null types, a union of only `null`, a bare `null` field,
//! recursive types, `duration`, `big-decimal`, nanosecond timestamps (they need format v3),
//! records without fields and `fixed` of size 0 (values that take no bytes, which a hostile file
//! could repeat without end).

use std::collections::HashMap;
use std::sync::Arc;

use apache_avro::Schema as Avro;
use apache_avro::schema::{Name, RecordField};
use iceberg::spec::{ListType, MapType, NestedField, PrimitiveType, Schema, StructType, Type};

use super::evolve::FieldExtras;
use crate::{Error, Result};

/// Maps an Avro writer schema (which must be a record) to an Iceberg schema with fresh ids.
pub(crate) fn avro_to_iceberg(avro: &Avro) -> Result<Schema> {
    Ok(avro_to_iceberg_with_extras(avro)?.0)
}

/// [`avro_to_iceberg`], and what the Avro schema says of each field beyond its type (aliases,
/// whether it has a default), by the field's id in the returned schema.
pub(crate) fn avro_to_iceberg_with_extras(avro: &Avro) -> Result<(Schema, HashMap<i32, FieldExtras>)> {
    let Avro::Record(rec) = avro else {
        return Err(Error::schema("<root>", "the top-level Avro schema must be a record"));
    };
    let mut m = Mapper { names: HashMap::new(), stack: vec![], next_id: 1, extras: HashMap::new() };
    m.register(avro);
    let ty = m.record(&rec.name, &rec.fields, "")?;
    let fields = match ty {
        Type::Struct(s) => s.fields().to_vec(),
        _ => unreachable!("record maps to struct"),
    };
    Ok((Schema::builder().with_fields(fields).build()?, m.extras))
}

/// An Avro writer schema's text mapped by [`avro_to_iceberg_with_extras`].
pub(crate) type Mapped = Arc<(Schema, HashMap<i32, FieldExtras>)>;

/// Schemas most recently mapped by [`map_avro_json`], by their text (a bound, not a target).
const MAPPED_KEPT: usize = 64;

/// The longest schema text [`map_avro_json`] remembers (longer ones are mapped every time).
const MAPPED_TEXT_MAX: usize = 256 * 1024;

/// Parses and maps an Avro writer schema given as JSON text, remembering the result for the
/// same text: a producer's objects share one schema, and parsing and mapping it (~0.4 ms)
/// would otherwise be paid for every object. Only successes are kept, at most
/// [`MAPPED_KEPT`] texts of up to [`MAPPED_TEXT_MAX`] bytes (all forgotten when a new one
/// would pass that count).
pub(crate) fn map_avro_json(json: &str) -> Result<Mapped> {
    static KEPT: std::sync::LazyLock<std::sync::Mutex<HashMap<String, Mapped>>> =
        std::sync::LazyLock::new(Default::default);
    let kept = || KEPT.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(hit) = kept().get(json) {
        return Ok(hit.clone());
    }
    let mapped = Arc::new(avro_to_iceberg_with_extras(&parse_avro_schema(json)?)?);
    if json.len() > MAPPED_TEXT_MAX {
        return Ok(mapped);
    }
    let mut all = kept();
    if all.len() >= MAPPED_KEPT {
        all.clear();
    }
    all.insert(json.to_string(), mapped.clone());
    Ok(mapped)
}

/// Parses an Avro schema from its JSON text.
///
/// A `logicalType` written on a record field rather than on its type
/// (`{"name": "ts", "type": "long", "logicalType": "timestamp-millis"}`) is not one in Avro:
/// Java's parser, fastavro and the decoder all read such a field as its plain type. apache-avro
/// would take it for the logical type, so it is removed first: the table's column and the decoded
/// values then agree, and a millisecond count is never read as microseconds.
pub(crate) fn parse_avro_schema(json: &str) -> Result<Avro> {
    let invalid = |e: &dyn std::fmt::Display| Error::schema("<root>", format!("invalid Avro schema: {e}"));
    let mut value: serde_json::Value = serde_json::from_str(json).map_err(|e| invalid(&e))?;
    if !strip_field_logical_types(&mut value) {
        return Avro::parse_str(json).map_err(|e| invalid(&e));
    }
    Avro::parse(&value).map_err(|e| invalid(&e))
}

/// Removes `logicalType` from every record field object (not from the field's type); whether
/// there was any.
fn strip_field_logical_types(v: &mut serde_json::Value) -> bool {
    let mut stripped = false;
    match v {
        serde_json::Value::Object(m) => {
            if let Some(serde_json::Value::Array(fields)) = m.get_mut("fields") {
                for f in fields.iter_mut() {
                    if let serde_json::Value::Object(field) = f {
                        stripped |= field.contains_key("type") && field.remove("logicalType").is_some();
                    }
                }
            }
            for child in m.values_mut() {
                stripped |= strip_field_logical_types(child);
            }
        }
        serde_json::Value::Array(items) => {
            for child in items.iter_mut() {
                stripped |= strip_field_logical_types(child);
            }
        }
        _ => {}
    }
    stripped
}

struct Mapper {
    names: HashMap<Name, Avro>,
    stack: Vec<Name>,
    next_id: i32,
    extras: HashMap<i32, FieldExtras>,
}

impl Mapper {
    fn id(&mut self) -> i32 {
        self.next_id += 1;
        self.next_id - 1
    }

    /// Records every named type so that references can be expanded.
    fn register(&mut self, s: &Avro) {
        match s {
            Avro::Record(r) if self.names.insert(r.name.clone(), s.clone()).is_none() => {
                r.fields.iter().for_each(|f| self.register(&f.schema));
            }
            Avro::Enum(e) => {
                self.names.insert(e.name.clone(), s.clone());
            }
            Avro::Fixed(f) => {
                self.names.insert(f.name.clone(), s.clone());
            }
            Avro::Array(a) => self.register(&a.items),
            Avro::Map(m) => self.register(&m.types),
            Avro::Union(u) => u.variants().iter().for_each(|v| self.register(v)),
            Avro::Decimal(d) => match d.inner.as_ref() {
                // A named fixed that carries the decimal: a reference to its name is the decimal
                // too (the logical type belongs to the named type, and the decoder reads it so).
                Avro::Fixed(f) => {
                    self.names.insert(f.name.clone(), s.clone());
                }
                inner => self.register(inner),
            },
            _ => {}
        }
    }

    fn record(&mut self, name: &Name, fields: &[RecordField], path: &str) -> Result<Type> {
        if self.stack.contains(name) {
            return Err(Error::schema(
                display_path(path),
                format!("recursive type `{}` cannot be represented in Iceberg", name.fullname(None)),
            ));
        }
        if fields.is_empty() {
            return Err(Error::schema(
                display_path(path),
                format!("record `{}` has no fields: an empty struct has no Iceberg columns", name.fullname(None)),
            ));
        }
        self.stack.push(name.clone());
        // Ids of one level first, then the children of each field, as Iceberg assigns them.
        let ids: Vec<i32> = fields.iter().map(|_| self.id()).collect();
        let mut out = Vec::with_capacity(fields.len());
        for (f, id) in fields.iter().zip(ids) {
            let fpath = join(path, &f.name);
            let (ty, optional) = self.field_type(&f.schema, &fpath)?;
            let aliases = f.aliases.clone().unwrap_or_default();
            if !aliases.is_empty() || f.default.is_some() {
                let default = f.default.as_ref().and_then(|v| default_literal(&f.schema, v));
                self.extras.insert(id, FieldExtras { aliases, has_default: f.default.is_some(), default });
            }
            let mut nf = NestedField::new(id, &f.name, ty, !optional);
            if let Some(doc) = &f.doc {
                nf = nf.with_doc(doc);
            }
            out.push(Arc::new(nf));
        }
        self.stack.pop();
        Ok(Type::Struct(StructType::new(out)))
    }

    /// The Iceberg type of a field and whether it is optional (a union with null).
    fn field_type(&mut self, s: &Avro, path: &str) -> Result<(Type, bool)> {
        if let Avro::Union(u) = s {
            let non_null: Vec<&Avro> = u.variants().iter().filter(|v| !matches!(v, Avro::Null)).collect();
            let has_null = non_null.len() < u.variants().len();
            return match non_null.as_slice() {
                [] => Err(Error::schema(display_path(path), "a union of only `null` has no Iceberg type")),
                [one] => Ok((self.ty(one, path)?, has_null)),
                many => Err(Error::schema(
                    display_path(path),
                    format!(
                        "a union of several non-null types ({}) cannot be represented in Iceberg; \
                         only [\"null\", T] unions can",
                        many.iter().map(|v| kind_name(v)).collect::<Vec<_>>().join(", ")
                    ),
                )),
            };
        }
        Ok((self.ty(s, path)?, false))
    }

    fn ty(&mut self, s: &Avro, path: &str) -> Result<Type> {
        use PrimitiveType as P;
        let p = |t: P| Ok(Type::Primitive(t));
        match s {
            Avro::Null => Err(Error::schema(display_path(path), "a field of type `null` has no Iceberg type")),
            Avro::Boolean => p(P::Boolean),
            Avro::Int => p(P::Int),
            Avro::Long => p(P::Long),
            Avro::Float => p(P::Float),
            Avro::Double => p(P::Double),
            Avro::Bytes => p(P::Binary),
            Avro::String | Avro::Enum(_) => p(P::String),
            Avro::Fixed(f) if f.size == 0 => {
                Err(Error::schema(display_path(path), "a `fixed` of size 0 holds no value and has no Iceberg type"))
            }
            Avro::Fixed(f) => p(P::Fixed(f.size as u64)),
            Avro::Uuid => p(P::Uuid),
            Avro::Date => p(P::Date),
            Avro::TimeMillis | Avro::TimeMicros => p(P::Time),
            Avro::TimestampMillis | Avro::TimestampMicros => p(P::Timestamptz),
            Avro::LocalTimestampMillis | Avro::LocalTimestampMicros => p(P::Timestamp),
            Avro::TimestampNanos | Avro::LocalTimestampNanos => Err(Error::schema(
                display_path(path),
                "nanosecond timestamps are an Iceberg format v3 type, which Floe does not write yet",
            )),
            Avro::Duration => Err(Error::schema(display_path(path), "Avro `duration` has no Iceberg type")),
            Avro::BigDecimal => Err(Error::schema(display_path(path), "Avro `big-decimal` has no Iceberg type")),
            Avro::Decimal(d) => {
                let (precision, scale) = (d.precision as u32, d.scale as u32);
                if precision == 0 || precision > 38 || scale > precision {
                    return Err(Error::schema(
                        display_path(path),
                        format!(
                            "decimal({precision}, {scale}) is outside Iceberg's decimal (precision 1..=38, scale <= precision)"
                        ),
                    ));
                }
                p(P::Decimal { precision, scale })
            }
            Avro::Record(r) => self.record(&r.name, &r.fields, path),
            Avro::Array(a) => {
                let id = self.id();
                let (ty, optional) = self.field_type(&a.items, &join(path, "element"))?;
                let elem = NestedField::list_element(id, ty, !optional);
                Ok(Type::List(ListType::new(Arc::new(elem))))
            }
            Avro::Map(m) => {
                let (key_id, value_id) = (self.id(), self.id());
                let (ty, optional) = self.field_type(&m.types, &join(path, "value"))?;
                let key = NestedField::map_key_element(key_id, Type::Primitive(P::String));
                let value = NestedField::map_value_element(value_id, ty, !optional);
                Ok(Type::Map(MapType::new(Arc::new(key), Arc::new(value))))
            }
            Avro::Union(_) => {
                Err(Error::schema(display_path(path), "a union directly inside a union is not valid Avro"))
            }
            Avro::Ref { name } => match self.names.get(name).cloned() {
                Some(def) => self.ty(&def, path),
                None => Err(Error::schema(display_path(path), format!("unknown named type `{}`", name.fullname(None)))),
            },
        }
    }
}

fn kind_name(s: &Avro) -> String {
    match s {
        Avro::Record(r) => format!("record {}", r.name.name),
        Avro::Enum(e) => format!("enum {}", e.name.name),
        Avro::Fixed(f) => format!("fixed {}", f.name.name),
        Avro::Ref { name } => name.name.clone(),
        other => format!("{:?}", apache_avro::schema::SchemaKind::from(other)).to_lowercase(),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

fn display_path(path: &str) -> String {
    if path.is_empty() { "<root>".into() } else { path.to_string() }
}

/// The Iceberg value of an Avro field's `default`, for the types whose default JSON maps onto
/// one value exactly: boolean, int, long, float, double, string and enum (as its symbol); a
/// union's default is its first branch's. `None` for a null default and for every other type
/// (logical types, bytes, fixed, records, arrays, maps), whose columns are added without one.
fn default_literal(schema: &apache_avro::Schema, value: &serde_json::Value) -> Option<iceberg::spec::Literal> {
    use apache_avro::Schema as S;
    use iceberg::spec::Literal;
    use serde_json::Value;
    match (schema, value) {
        (S::Union(u), v) => default_literal(u.variants().first()?, v),
        (S::Boolean, Value::Bool(b)) => Some(Literal::bool(*b)),
        (S::Int, Value::Number(n)) => Some(Literal::int(i32::try_from(n.as_i64()?).ok()?)),
        (S::Long, Value::Number(n)) => Some(Literal::long(n.as_i64()?)),
        // A value past the type's range is not carried: it would be infinite, which Iceberg's
        // JSON cannot hold.
        (S::Float, Value::Number(n)) => Some(n.as_f64()? as f32).filter(|f| f.is_finite()).map(Literal::float),
        (S::Double, Value::Number(n)) => Some(n.as_f64()?).filter(|f| f.is_finite()).map(Literal::double),
        (S::String | S::Enum(_), Value::String(s)) => Some(Literal::string(s)),
        _ => None,
    }
}

#[cfg(test)]
#[path = "schema_tests.rs"]
mod tests;
