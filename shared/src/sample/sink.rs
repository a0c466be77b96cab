//! One file with every Avro type and logical type Floe maps to Iceberg.

use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::{Codec, Decimal, Schema, Writer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::avro_err;
use super::events::minimal_be;
use crate::Result;

/// A schema using every supported type: primitives, nested records, arrays (also of records
/// and of optional values), maps (also of optional values), enums, fixed, decimals on bytes and
/// on fixed, uuid, date, times, timestamps (UTC and local), unions with null in either order.
pub const KITCHEN_SINK_SCHEMA: &str = r#"{
  "type": "record", "name": "Sink", "namespace": "floe.test",
  "fields": [
    {"name": "id", "type": "long"},
    {"name": "flag", "type": "boolean"},
    {"name": "i32", "type": "int"},
    {"name": "f32", "type": "float"},
    {"name": "f64", "type": "double"},
    {"name": "raw", "type": "bytes"},
    {"name": "text", "type": "string"},
    {"name": "maybe_text", "type": ["string", "null"]},
    {"name": "hash", "type": {"type": "fixed", "name": "Hash4", "size": 4}},
    {"name": "color", "type": {"type": "enum", "name": "Color", "symbols": ["RED", "GREEN", "BLUE"]}},
    {"name": "price", "type": {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}},
    {"name": "big", "type": ["null", {"type": "fixed", "name": "Big", "size": 10, "logicalType": "decimal", "precision": 22, "scale": 3}]},
    {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "day", "type": {"type": "int", "logicalType": "date"}},
    {"name": "t_ms", "type": {"type": "int", "logicalType": "time-millis"}},
    {"name": "t_us", "type": {"type": "long", "logicalType": "time-micros"}},
    {"name": "ts_ms", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "ts_us", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "lts_ms", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
    {"name": "lts_us", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
    {"name": "ints", "type": {"type": "array", "items": "int"}},
    {"name": "opt_items", "type": {"type": "array", "items": ["null", "string"]}},
    {"name": "points", "type": {"type": "array", "items": {"type": "record", "name": "Point",
      "fields": [{"name": "x", "type": "double"}, {"name": "y", "type": "double"}]}}},
    {"name": "counts", "type": {"type": "map", "values": "long"}},
    {"name": "opt_map", "type": ["null", {"type": "map", "values": ["null", "double"]}]},
    {"name": "nested", "type": {"type": "record", "name": "Outer", "fields": [
      {"name": "label", "type": "string"},
      {"name": "inner", "type": ["null", {"type": "record", "name": "Inner", "fields": [
        {"name": "depth", "type": "int"}, {"name": "hash2", "type": "Hash4"}]}]}]}}
  ]
}"#;

fn opt(v: Option<Value>) -> Value {
    match v {
        Some(v) => Value::Union(1, Box::new(v)),
        None => Value::Union(0, Box::new(Value::Null)),
    }
}

/// Generates `rows` rows of the kitchen-sink schema.
pub fn kitchen_sink(rows: usize, seed: u64, codec: Codec) -> Result<Vec<u8>> {
    let schema = Schema::parse_str(KITCHEN_SINK_SCHEMA).map_err(avro_err)?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut w = Writer::with_codec(&schema, Vec::new(), codec);
    for i in 0..rows as i64 {
        let maybe_text = if i % 3 == 0 {
            Value::Union(1, Box::new(Value::Null))
        } else {
            Value::Union(0, Box::new(Value::String(format!("m{i}"))))
        };
        let big = (i % 4 != 0).then(|| {
            let v: i64 = rng.random_range(-10_i64.pow(15)..10_i64.pow(15));
            let be = minimal_be(v);
            let mut fixed = vec![if v < 0 { 0xff } else { 0 }; 10 - be.len()];
            fixed.extend(be);
            Value::Decimal(Decimal::from(fixed))
        });
        let mut counts = HashMap::new();
        for k in 0..(i % 3) {
            counts.insert(format!("c{k}"), Value::Long(i * 10 + k));
        }
        let opt_map = (i % 2 == 0).then(|| {
            let mut m = HashMap::new();
            m.insert("a".to_string(), opt(Some(Value::Double(i as f64 / 2.0))));
            m.insert("b".to_string(), opt(None));
            Value::Map(m)
        });
        let hash = Value::Fixed(4, (0..4).map(|_| rng.random::<u8>()).collect());
        let inner = (i % 5 != 0)
            .then(|| Value::Record(vec![("depth".into(), Value::Int((i % 7) as i32)), ("hash2".into(), hash.clone())]));
        let row = Value::Record(vec![
            ("id".into(), Value::Long(i)),
            ("flag".into(), Value::Boolean(i % 2 == 0)),
            ("i32".into(), Value::Int(rng.random_range(i32::MIN..i32::MAX))),
            ("f32".into(), Value::Float(rng.random_range(-1e6..1e6))),
            ("f64".into(), Value::Double(rng.random_range(-1e12..1e12))),
            ("raw".into(), Value::Bytes((0..(i % 40) as usize).map(|_| rng.random::<u8>()).collect())),
            ("text".into(), Value::String(format!("row {i} \u{00e9}\u{4e2d}{}", "x".repeat((i % 30) as usize)))),
            ("maybe_text".into(), maybe_text),
            ("hash".into(), hash),
            ("color".into(), Value::Enum((i % 3) as u32, ["RED", "GREEN", "BLUE"][(i % 3) as usize].into())),
            ("price".into(), Value::Decimal(Decimal::from(minimal_be(rng.random_range(-9_999_999..99_999_999))))),
            ("big".into(), opt(big)),
            ("uid".into(), Value::Uuid(uuid::Uuid::from_u128(rng.random::<u128>()))),
            ("day".into(), Value::Date(19_000 + (i % 400) as i32)),
            ("t_ms".into(), Value::TimeMillis(rng.random_range(0..86_400_000))),
            ("t_us".into(), Value::TimeMicros(rng.random_range(0..86_400_000_000))),
            ("ts_ms".into(), Value::TimestampMillis(1_700_000_000_000 + i * 1000)),
            ("ts_us".into(), Value::TimestampMicros(1_700_000_000_000_000 + i * 1_000_001)),
            ("lts_ms".into(), Value::LocalTimestampMillis(1_600_000_000_000 + i)),
            ("lts_us".into(), opt((i % 2 == 1).then(|| Value::LocalTimestampMicros(1_600_000_000_000_000 + i)))),
            ("ints".into(), Value::Array((0..(i % 4)).map(|k| Value::Int(k as i32)).collect())),
            (
                "opt_items".into(),
                Value::Array((0..(i % 3)).map(|k| opt((k != 1).then(|| Value::String(format!("o{k}"))))).collect()),
            ),
            (
                "points".into(),
                Value::Array(
                    (0..(i % 3))
                        .map(|k| {
                            Value::Record(vec![
                                ("x".into(), Value::Double(k as f64)),
                                ("y".into(), Value::Double(-(i as f64))),
                            ])
                        })
                        .collect(),
                ),
            ),
            ("counts".into(), Value::Map(counts)),
            ("opt_map".into(), opt(opt_map)),
            (
                "nested".into(),
                Value::Record(vec![
                    ("label".into(), Value::String(format!("L{}", i % 10))),
                    ("inner".into(), opt(inner)),
                ]),
            ),
        ]);
        w.append_value_ref(&row).map_err(avro_err)?;
    }
    w.into_inner().map_err(avro_err)
}
