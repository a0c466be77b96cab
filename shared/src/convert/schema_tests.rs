use iceberg::spec::{PrimitiveType as P, Type};
use proptest::prelude::*;

use super::*;

fn map(json: &str) -> Result<Schema> {
    avro_to_iceberg(&parse_avro_schema(json)?)
}

fn record(fields: &str) -> String {
    format!(r#"{{"type":"record","name":"R","namespace":"n","fields":[{fields}]}}"#)
}

fn field_type(json_type: &str) -> Result<(Type, bool)> {
    let s = map(&record(&format!(r#"{{"name":"f","type":{json_type}}}"#)))?;
    let f = s.field_by_name("f").expect("field f").clone();
    Ok((f.field_type.as_ref().clone(), !f.required))
}

#[test]
fn primitives_and_logical_types() {
    let cases: &[(&str, Type)] = &[
        (r#""boolean""#, Type::Primitive(P::Boolean)),
        (r#""int""#, Type::Primitive(P::Int)),
        (r#""long""#, Type::Primitive(P::Long)),
        (r#""float""#, Type::Primitive(P::Float)),
        (r#""double""#, Type::Primitive(P::Double)),
        (r#""bytes""#, Type::Primitive(P::Binary)),
        (r#""string""#, Type::Primitive(P::String)),
        (r#"{"type":"enum","name":"E","symbols":["A","B"]}"#, Type::Primitive(P::String)),
        (r#"{"type":"fixed","name":"F","size":7}"#, Type::Primitive(P::Fixed(7))),
        (
            r#"{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}"#,
            Type::Primitive(P::Decimal { precision: 9, scale: 2 }),
        ),
        (
            r#"{"type":"fixed","name":"D","size":16,"logicalType":"decimal","precision":38,"scale":10}"#,
            Type::Primitive(P::Decimal { precision: 38, scale: 10 }),
        ),
        (r#"{"type":"string","logicalType":"uuid"}"#, Type::Primitive(P::Uuid)),
        (r#"{"type":"fixed","name":"U","size":16,"logicalType":"uuid"}"#, Type::Primitive(P::Uuid)),
        (r#"{"type":"int","logicalType":"date"}"#, Type::Primitive(P::Date)),
        (r#"{"type":"int","logicalType":"time-millis"}"#, Type::Primitive(P::Time)),
        (r#"{"type":"long","logicalType":"time-micros"}"#, Type::Primitive(P::Time)),
        (r#"{"type":"long","logicalType":"timestamp-millis"}"#, Type::Primitive(P::Timestamptz)),
        (r#"{"type":"long","logicalType":"timestamp-micros"}"#, Type::Primitive(P::Timestamptz)),
        (r#"{"type":"long","logicalType":"local-timestamp-millis"}"#, Type::Primitive(P::Timestamp)),
        (r#"{"type":"long","logicalType":"local-timestamp-micros"}"#, Type::Primitive(P::Timestamp)),
    ];
    for (avro, want) in cases {
        let (got, optional) = field_type(avro).unwrap_or_else(|e| panic!("{avro}: {e}"));
        assert_eq!(&got, want, "{avro}");
        assert!(!optional, "{avro} is required");
    }
}

#[test]
fn unions_with_null_are_optional_in_either_order() {
    for u in [r#"["null","long"]"#, r#"["long","null"]"#] {
        assert_eq!(field_type(u).unwrap(), (Type::Primitive(P::Long), true), "{u}");
    }
    assert_eq!(field_type(r#"["string"]"#).unwrap(), (Type::Primitive(P::String), false));
}

#[test]
fn nested_records_arrays_maps() {
    let s = map(&record(
        r#"{"name":"a","type":{"type":"array","items":["null",{"type":"record","name":"X","fields":[{"name":"x","type":"int"}]}]}},
           {"name":"m","type":{"type":"map","values":{"type":"array","items":"string"}}},
           {"name":"r","type":{"type":"record","name":"Y","fields":[{"name":"inner","type":["null","X"]}]}}"#,
    ))
    .unwrap();
    let Type::List(l) = s.field_by_name("a").unwrap().field_type.as_ref() else { panic!("list") };
    assert!(!l.element_field.required, "array of optional records");
    assert!(matches!(l.element_field.field_type.as_ref(), Type::Struct(_)));
    let Type::Map(m) = s.field_by_name("m").unwrap().field_type.as_ref() else { panic!("map") };
    assert_eq!(m.key_field.field_type.as_ref(), &Type::Primitive(P::String));
    assert!(matches!(m.value_field.field_type.as_ref(), Type::List(_)));
    assert!(s.field_by_name("r.inner.x").is_some(), "named type reused by reference");
}

#[test]
fn ids_follow_iceberg_fresh_assignment() {
    let s = map(&record(
        r#"{"name":"a","type":"int"},{"name":"s","type":{"type":"record","name":"S","fields":[{"name":"x","type":"int"},{"name":"y","type":{"type":"array","items":"long"}}]}},{"name":"z","type":"string"}"#,
    ))
    .unwrap();
    let ids: Vec<(String, i32)> = ["a", "s", "z", "s.x", "s.y", "s.y.element"]
        .iter()
        .map(|n| (n.to_string(), s.field_by_name(n).unwrap_or_else(|| panic!("{n}")).id))
        .collect();
    assert_eq!(ids.iter().map(|(_, i)| *i).collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
    // A new table reassigns ids; they must come out the same.
    let meta = iceberg::spec::TableMetadataBuilder::new(
        s.clone(),
        iceberg::spec::UnboundPartitionSpec::builder().build(),
        iceberg::spec::SortOrder::unsorted_order(),
        "file:///t".into(),
        iceberg::spec::FormatVersion::V2,
        Default::default(),
    )
    .unwrap()
    .build()
    .unwrap()
    .metadata;
    for (n, id) in ids {
        assert_eq!(meta.current_schema().field_by_name(&n).unwrap().id, id, "{n}");
    }
}

#[test]
fn refusals_name_the_field() {
    let cases = [
        (r#"["int","string"]"#, "f", "several non-null types"),
        (r#"["null","int","string"]"#, "f", "several non-null types"),
        (r#""null""#, "f", "`null`"),
        (r#"["null"]"#, "f", "only `null`"),
        (r#"{"type":"long","logicalType":"timestamp-nanos"}"#, "f", "nanosecond"),
        (r#"{"type":"fixed","name":"Du","size":12,"logicalType":"duration"}"#, "f", "duration"),
        (r#"{"type":"bytes","logicalType":"decimal","precision":40,"scale":2}"#, "f", "decimal(40, 2)"),
        (r#"{"type":"array","items":["int","string"]}"#, "f.element", "several non-null types"),
        (r#"{"type":"map","values":["int","string"]}"#, "f.value", "several non-null types"),
    ];
    for (ty, field, why) in cases {
        match field_type(ty) {
            Err(Error::Schema { field: f, reason }) => {
                assert_eq!(f, field, "{ty}");
                assert!(reason.contains(why), "{ty}: {reason}");
            }
            Err(e) => {
                // apache-avro itself rejects some schemas (e.g. decimal precision) at parse time.
                assert!(e.to_string().contains("precision") || e.to_string().contains(why), "{ty}: {e}");
            }
            Ok(t) => panic!("{ty} mapped to {t:?}"),
        }
    }
}

#[test]
fn recursive_types_are_refused() {
    let json = r#"{"type":"record","name":"Node","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","Node"]}]}"#;
    let err = map(json).unwrap_err().to_string();
    assert!(err.contains("recursive") && err.contains("next"), "{err}");
}

#[test]
fn top_level_must_be_a_record() {
    assert!(map(r#""string""#).unwrap_err().to_string().contains("record"));
}

/// Random Avro schemas: primitives, logical types, records, arrays, maps, optional unions.
fn avro_type(depth: u32) -> BoxedStrategy<String> {
    let leaf = prop_oneof![
        Just(r#""int""#.to_string()),
        Just(r#""long""#.to_string()),
        Just(r#""string""#.to_string()),
        Just(r#""bytes""#.to_string()),
        Just(r#""double""#.to_string()),
        Just(r#"{"type":"int","logicalType":"date"}"#.to_string()),
        Just(r#"{"type":"long","logicalType":"timestamp-micros"}"#.to_string()),
        Just(r#"{"type":"bytes","logicalType":"decimal","precision":12,"scale":3}"#.to_string()),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let inner = avro_type(depth - 1);
    prop_oneof![
        3 => leaf,
        1 => inner.clone().prop_map(|t| format!(r#"{{"type":"array","items":{t}}}"#)),
        1 => inner.clone().prop_map(|t| format!(r#"{{"type":"map","values":{t}}}"#)),
        1 => inner.clone().prop_map(|t| if t.starts_with('[') { t } else { format!(r#"["null",{t}]"#) }),
        1 => proptest::collection::vec(inner, 1..4).prop_map(|ts| {
            let fields: Vec<String> = ts.iter().enumerate().map(|(i, t)| format!(r#"{{"name":"c{i}","type":{t}}}"#)).collect();
            format!(r#"{{"type":"record","name":"R{}","fields":[{}]}}"#, uuid::Uuid::new_v4().simple(), fields.join(","))
        }),
    ]
    .boxed()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_schemas_map_with_unique_ids_and_decode(types in proptest::collection::vec(avro_type(3), 1..6)) {
        let fields: Vec<String> = types.iter().enumerate().map(|(i, t)| format!(r#"{{"name":"f{i}","type":{t}}}"#)).collect();
        let json = format!(r#"{{"type":"record","name":"Top","fields":[{}]}}"#, fields.join(","));
        let schema = map(&json).unwrap();
        let ids: Vec<i32> = schema.field_id_to_name_map().keys().copied().collect();
        let unique: std::collections::HashSet<i32> = ids.iter().copied().collect();
        prop_assert_eq!(ids.len(), unique.len());
        prop_assert_eq!(schema.as_struct().fields().len(), types.len());
        for (i, t) in types.iter().enumerate() {
            let f = schema.field_by_name(&format!("f{i}")).unwrap();
            prop_assert_eq!(!f.required, t.starts_with(r#"["null""#));
        }
        // An empty file with this schema decodes and conforms to the Iceberg schema's Arrow form.
        let avro = apache_avro::Schema::parse_str(&json).unwrap();
        let bytes = apache_avro::Writer::new(&avro, Vec::new()).into_inner().unwrap();
        let info = crate::convert::avro::inspect(&bytes).unwrap();
        let batches = crate::convert::avro::decode(&bytes, &info, crate::convert::avro::DecodeLimits::NONE).unwrap();
        let arrow = crate::convert::parquet::arrow_schema(&schema).unwrap();
        for b in batches {
            crate::convert::conform::conform_batch(&b, &arrow).unwrap();
        }
    }
}

/// A `logicalType` on the field object, not its type, is no logical type (Java, fastavro and the
/// decoder read a plain long): the column is a long, never a timestamp the decoded millisecond
/// counts would be relabelled as.
#[test]
fn a_logical_type_written_on_the_field_is_ignored_as_avro_readers_do() {
    let json = record(
        r#"{"name":"ts","type":"long","logicalType":"timestamp-millis"},
           {"name":"n","type":{"type":"record","name":"In","fields":[{"name":"d","type":"int","logicalType":"date"}]}},
           {"name":"ok","type":{"type":"long","logicalType":"timestamp-millis"}}"#,
    );
    let s = map(&json).unwrap();
    assert_eq!(*s.field_by_name("ts").unwrap().field_type, Type::Primitive(P::Long));
    assert_eq!(*s.field_by_name("n.d").unwrap().field_type, Type::Primitive(P::Int));
    assert_eq!(*s.field_by_name("ok").unwrap().field_type, Type::Primitive(P::Timestamptz));
}

/// A named decimal `fixed` used again by its name is the same decimal, not a plain fixed (which
/// the decoder, reading a decimal, would not match: every file quarantined, and a table created
/// from such a file would hold the wrong type for good).
#[test]
fn a_named_decimal_fixed_referenced_again_is_the_same_decimal() {
    let s = map(&record(
        r#"{"name":"price","type":{"type":"fixed","name":"Money","size":8,"logicalType":"decimal","precision":12,"scale":2}},
           {"name":"cost","type":"Money"},
           {"name":"tax","type":["null","Money"]}"#,
    ))
    .unwrap();
    let want = Type::Primitive(PrimitiveType::Decimal { precision: 12, scale: 2 });
    for name in ["price", "cost", "tax"] {
        assert_eq!(*s.field_by_name(name).unwrap().field_type, want, "{name}");
    }
}

#[test]
fn avro_defaults_are_carried_only_where_their_json_maps_onto_one_value() {
    use iceberg::spec::Literal;
    let parse = |s: &str| apache_avro::Schema::parse_str(s).unwrap();
    let v = |s: &str| serde_json::from_str::<serde_json::Value>(s).unwrap();
    assert_eq!(default_literal(&parse(r#""string""#), &v(r#""web""#)), Some(Literal::string("web")));
    assert_eq!(default_literal(&parse(r#""int""#), &v("7")), Some(Literal::int(7)));
    assert_eq!(default_literal(&parse(r#""int""#), &v("4294967296")), None, "out of range");
    assert_eq!(default_literal(&parse(r#""long""#), &v("-3")), Some(Literal::long(-3)));
    assert_eq!(default_literal(&parse(r#""boolean""#), &v("true")), Some(Literal::bool(true)));
    assert_eq!(
        default_literal(&parse(r#"["long", "null"]"#), &v("5")),
        Some(Literal::long(5)),
        "a union's first branch"
    );
    assert_eq!(default_literal(&parse(r#"["null", "long"]"#), &v("null")), None);
    let enumeration = parse(r#"{"type": "enum", "name": "C", "symbols": ["web", "app"]}"#);
    assert_eq!(default_literal(&enumeration, &v(r#""app""#)), Some(Literal::string("app")));
    // A logical type's default is not carried (its JSON is not the Iceberg value).
    let day = parse(r#"{"type": "int", "logicalType": "date"}"#);
    assert_eq!(default_literal(&day, &v("19000")), None);
    assert_eq!(default_literal(&parse(r#""bytes""#), &v(r#""\u00ff""#)), None);
}
