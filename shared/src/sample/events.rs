//! Realistic clickstream events.

use std::collections::HashMap;

use apache_avro::types::Value;
use apache_avro::{Codec, Decimal, Schema, Writer};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::avro_err;
use crate::Result;

/// The event schema (`com.example.Event`).
pub const EVENT_SCHEMA: &str = r#"{
  "type": "record", "name": "Event", "namespace": "com.example",
  "fields": [
    {"name": "event_id", "type": {"type": "string", "logicalType": "uuid"}},
    {"name": "tenant_id", "type": "string"},
    {"name": "event_type", "type": {"type": "enum", "name": "EventType",
      "symbols": ["PAGE_VIEW", "CLICK", "SCROLL", "HEARTBEAT", "SEARCH", "ADD_TO_CART", "PURCHASE", "LOGIN", "LOGOUT", "ERROR"]}},
    {"name": "event_time", "type": {"type": "long", "logicalType": "timestamp-micros"}},
    {"name": "ingest_time", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "user_id", "type": ["null", "long"], "default": null},
    {"name": "session_id", "type": "string"},
    {"name": "device", "type": {"type": "record", "name": "Device", "fields": [
      {"name": "os", "type": "string"},
      {"name": "os_version", "type": "string"},
      {"name": "model", "type": ["null", "string"], "default": null}]}},
    {"name": "geo", "type": ["null", {"type": "record", "name": "Geo", "fields": [
      {"name": "country", "type": "string"}, {"name": "city", "type": "string"},
      {"name": "lat", "type": "double"}, {"name": "lon", "type": "double"}]}], "default": null},
    {"name": "properties", "type": {"type": "map", "values": "string"}},
    {"name": "tags", "type": {"type": "array", "items": "string"}},
    {"name": "amount", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 18, "scale": 4}], "default": null},
    {"name": "payload", "type": ["null", "bytes"], "default": null},
    {"name": "schema_version", "type": "int"}
  ]
}"#;

const TYPES: [&str; 10] =
    ["PAGE_VIEW", "CLICK", "SCROLL", "HEARTBEAT", "SEARCH", "ADD_TO_CART", "PURCHASE", "LOGIN", "LOGOUT", "ERROR"];
const TYPE_WEIGHTS: [u32; 10] = [30, 25, 12, 10, 8, 5, 2, 3, 2, 3];
const CITIES: [(&str, &str, f64, f64); 6] = [
    ("US", "New York", 40.71, -74.0),
    ("US", "San Francisco", 37.77, -122.42),
    ("DE", "Berlin", 52.52, 13.40),
    ("FR", "Paris", 48.86, 2.35),
    ("JP", "Tokyo", 35.68, 139.69),
    ("BR", "São Paulo", -23.55, -46.63),
];
const OSES: [(&str, &str, Option<&str>); 4] = [
    ("ios", "17.4", Some("iPhone15,2")),
    ("android", "14", Some("Pixel 8")),
    ("macos", "14.4", None),
    ("windows", "11", None),
];
const TAGS: [&str; 8] = ["new", "returning", "promo", "mobile", "beta", "vip", "bot-suspect", "ab-test"];

/// What to generate.
#[derive(Debug, Clone)]
pub struct EventsSpec {
    /// Events per file.
    pub events_per_file: usize,
    /// Distinct tenants (tenant-0000 is the hot one).
    pub tenants: usize,
    /// Fraction of events that repeat an earlier event of the same file exactly.
    pub dup_rate: f64,
    /// First event time, microseconds since the epoch.
    pub start_us: i64,
    /// Event time span of one file, microseconds.
    pub file_span_us: i64,
    /// Avro block codec.
    pub codec: Codec,
    /// Event ids that sort by time (UUIDv7: the event time's milliseconds, then random bits),
    /// as a producer that stamps its ids when the event happens makes them; else random
    /// (UUIDv4).
    pub time_ordered_ids: bool,
}

impl Default for EventsSpec {
    fn default() -> Self {
        EventsSpec {
            events_per_file: 1000,
            tenants: 20,
            dup_rate: 0.0,
            // 2026-03-14T23:00:00Z: after 30 files (2 min each) the data crosses midnight UTC.
            start_us: 1_773_529_200_000_000,
            file_span_us: 120_000_000,
            codec: Codec::Snappy,
            time_ordered_ids: false,
        }
    }
}

fn weighted(rng: &mut StdRng, weights: &[u32]) -> usize {
    let total: u32 = weights.iter().sum();
    let mut x = rng.random_range(0..total);
    for (i, w) in weights.iter().enumerate() {
        if x < *w {
            return i;
        }
        x -= w;
    }
    weights.len() - 1
}

/// Generates file number `index` of a data set seeded with `seed`. Deterministic in
/// (seed, index, spec). Returns the file's bytes and its number of events.
pub fn events_file(spec: &EventsSpec, seed: u64, index: u64) -> Result<(Vec<u8>, usize)> {
    let schema = Schema::parse_str(EVENT_SCHEMA).map_err(avro_err)?;
    let mut rng = StdRng::seed_from_u64(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index);
    let mut w = Writer::with_codec(&schema, Vec::new(), spec.codec);
    let base = spec.start_us + index as i64 * spec.file_span_us;
    let mut emitted: Vec<Value> = Vec::new();
    for i in 0..spec.events_per_file {
        if !emitted.is_empty() && rng.random_bool(spec.dup_rate.clamp(0.0, 1.0)) {
            let j = rng.random_range(0..emitted.len());
            let dup = emitted[j].clone();
            w.append_value_ref(&dup).map_err(avro_err)?;
            continue;
        }
        // Zipf-like skew: tenant k has weight 1/(k+1).
        let tenant = {
            let weights: Vec<u32> = (0..spec.tenants.max(1)).map(|k| (10_000 / (k + 1)) as u32).collect();
            weighted(&mut rng, &weights)
        };
        let t = weighted(&mut rng, &TYPE_WEIGHTS);
        let offset = spec.file_span_us * i as i64 / spec.events_per_file.max(1) as i64;
        let jitter = rng.random_range(-200_000..200_000);
        let late = if rng.random_bool(0.03) { -rng.random_range(0..60_000_000) } else { 0 };
        let event_time = base + offset + jitter + late;
        let (os, ver, model) = OSES[rng.random_range(0..OSES.len())];
        let geo = if rng.random_bool(0.1) {
            Value::Union(0, Box::new(Value::Null))
        } else {
            let (c, city, lat, lon) = CITIES[rng.random_range(0..CITIES.len())];
            Value::Union(
                1,
                Box::new(Value::Record(vec![
                    ("country".into(), Value::String(c.into())),
                    ("city".into(), Value::String(city.into())),
                    ("lat".into(), Value::Double(lat + rng.random_range(-0.1..0.1))),
                    ("lon".into(), Value::Double(lon + rng.random_range(-0.1..0.1))),
                ])),
            )
        };
        let mut props = HashMap::new();
        props.insert("page".to_string(), Value::String(format!("/p/{}", rng.random_range(0..500))));
        props.insert(
            "locale".to_string(),
            Value::String(["en-US", "de-DE", "fr-FR", "ja-JP"][rng.random_range(0..4)].into()),
        );
        for k in 0..rng.random_range(1..5) {
            props.insert(format!("k{k}"), Value::String(format!("v{}", rng.random_range(0..100))));
        }
        let tags: Vec<Value> =
            (0..rng.random_range(0..4)).map(|_| Value::String(TAGS[rng.random_range(0..TAGS.len())].into())).collect();
        let amount = if TYPES[t] == "PURCHASE" || (TYPES[t] == "ADD_TO_CART" && rng.random_bool(0.8)) {
            let cents: i64 = rng.random_range(-50_000..5_000_000);
            Value::Union(1, Box::new(Value::Decimal(Decimal::from(minimal_be(cents)))))
        } else {
            Value::Union(0, Box::new(Value::Null))
        };
        let payload = if rng.random_bool(0.3) {
            let n = rng.random_range(8..400);
            Value::Union(1, Box::new(Value::Bytes((0..n).map(|_| rng.random::<u8>()).collect())))
        } else {
            Value::Union(0, Box::new(Value::Null))
        };
        let user = if rng.random_bool(0.15) {
            Value::Union(0, Box::new(Value::Null))
        } else {
            Value::Union(1, Box::new(Value::Long(rng.random_range(1..1_000_000))))
        };
        let model = match model {
            Some(m) => Value::Union(1, Box::new(Value::String(m.into()))),
            None => Value::Union(0, Box::new(Value::Null)),
        };
        let v = Value::Record(vec![
            ("event_id".into(), Value::Uuid(event_id(rng.random::<u128>(), event_time, spec.time_ordered_ids))),
            ("tenant_id".into(), Value::String(format!("tenant-{tenant:04}"))),
            ("event_type".into(), Value::Enum(t as u32, TYPES[t].into())),
            ("event_time".into(), Value::TimestampMicros(event_time)),
            ("ingest_time".into(), Value::TimestampMillis(event_time / 1000 + rng.random_range(50..2000))),
            ("user_id".into(), user),
            ("session_id".into(), Value::String(format!("s-{:016x}", rng.random::<u64>()))),
            (
                "device".into(),
                Value::Record(vec![
                    ("os".into(), Value::String(os.into())),
                    ("os_version".into(), Value::String(ver.into())),
                    ("model".into(), model),
                ]),
            ),
            ("geo".into(), geo),
            ("properties".into(), Value::Map(props)),
            ("tags".into(), Value::Array(tags)),
            ("amount".into(), amount),
            ("payload".into(), payload),
            ("schema_version".into(), Value::Int(if rng.random_bool(0.9) { 3 } else { 2 })),
        ]);
        w.append_value_ref(&v).map_err(avro_err)?;
        if emitted.len() < 4096 {
            emitted.push(v);
        }
    }
    Ok((w.into_inner().map_err(avro_err)?, spec.events_per_file))
}

/// An event id from 128 random bits: a UUIDv7 of `event_time_us` if `time_ordered`, else a
/// UUIDv4.
fn event_id(random: u128, event_time_us: i64, time_ordered: bool) -> uuid::Uuid {
    const VERSION: u128 = 0xF << 76;
    if !time_ordered {
        return uuid::Uuid::from_u128(random & !VERSION | (0x4 << 76));
    }
    let ms = (event_time_us.div_euclid(1000) as u128) & ((1 << 48) - 1);
    let variant: u128 = 0b11 << 62;
    let bits = random & ((1 << 80) - 1) & !VERSION & !variant;
    uuid::Uuid::from_u128(ms << 80 | bits | (0x7 << 76) | (0b10 << 62))
}

/// Minimal big-endian two's complement bytes of `v` (the Avro decimal encoding).
pub(crate) fn minimal_be(v: i64) -> Vec<u8> {
    let bytes = v.to_be_bytes();
    let mut start = 0;
    while start < 7 {
        let (b, next) = (bytes[start], bytes[start + 1]);
        if (b == 0x00 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            start += 1;
        } else {
            break;
        }
    }
    bytes[start..].to_vec()
}
