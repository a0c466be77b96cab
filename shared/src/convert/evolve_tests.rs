use std::collections::HashMap;
use std::sync::Arc;

use iceberg::spec::{ListType, MapType, NestedField, PrimitiveType as P, Schema, StructType, Type};

use super::*;

fn prim(p: P) -> Type {
    Type::Primitive(p)
}

fn opt(id: i32, name: &str, t: Type) -> NestedFieldRef {
    Arc::new(NestedField::optional(id, name, t))
}

fn req(id: i32, name: &str, t: Type) -> NestedFieldRef {
    Arc::new(NestedField::required(id, name, t))
}

fn schema(fields: Vec<NestedFieldRef>) -> Schema {
    Schema::builder().with_fields(fields).build().unwrap()
}

fn no_extras() -> HashMap<i32, FieldExtras> {
    HashMap::new()
}

fn run(table: &Schema, file: &Schema) -> Result<Evolution> {
    evolve(table, table.highest_field_id(), file, &no_extras(), &Constraints::default())
}

fn prims() -> Vec<P> {
    vec![
        P::Boolean,
        P::Int,
        P::Long,
        P::Float,
        P::Double,
        P::Decimal { precision: 10, scale: 2 },
        P::Decimal { precision: 20, scale: 2 },
        P::Decimal { precision: 20, scale: 4 },
        P::Date,
        P::Time,
        P::Timestamp,
        P::Timestamptz,
        P::String,
        P::Uuid,
        P::Fixed(16),
        P::Binary,
    ]
}

#[test]
fn a_field_lands_or_promotes_only_along_icebergs_promotions() {
    for a in prims() {
        for b in prims() {
            let table = schema(vec![req(1, "id", prim(P::Long)), opt(2, "amount", prim(b.clone()))]);
            let file = schema(vec![req(1, "id", prim(P::Long)), opt(2, "amount", prim(a.clone()))]);
            let got = run(&table, &file);
            let widens = a != b && promotes(&b, &a);
            assert_eq!(got.is_ok(), promotes(&a, &b) || widens, "{a} into {b}: {got:?}");
            match got {
                Ok(e) if widens => {
                    assert_eq!(e.changes, vec![SchemaChange::Promote { id: 2, to: a.clone() }]);
                    assert_eq!(*e.schema.field_by_id(2).unwrap().field_type, prim(a.clone()));
                }
                Ok(e) => assert!(e.changes.is_empty(), "{a} into {b}: {:?}", e.changes),
                Err(e) => {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("`amount`") && msg.contains(&a.to_string()) && msg.contains(&b.to_string()),
                        "{msg}"
                    );
                }
            }
        }
    }
}

#[test]
fn a_new_optional_field_is_a_new_column_with_ids_above_the_last() {
    let table = schema(vec![req(1, "id", prim(P::Long)), opt(2, "name", prim(P::String))]);
    let nested = Type::Struct(StructType::new(vec![req(9, "city", prim(P::String)), opt(10, "zip", prim(P::Int))]));
    let file = schema(vec![
        req(1, "id", prim(P::Long)),
        opt(4, "address", nested),
        opt(2, "name", prim(P::String)),
        opt(3, "score", prim(P::Double)),
    ]);
    // The table's last column id is 5 (a column was dropped once): new ids start at 6.
    let e = evolve(&table, 5, &file, &no_extras(), &Constraints::default()).unwrap();
    let names: Vec<_> = e.schema.as_struct().fields().iter().map(|f| (f.id, f.name.as_str(), f.required)).collect();
    assert_eq!(names, vec![(1, "id", true), (2, "name", false), (6, "address", false), (9, "score", false)]);
    let address = e.schema.field_by_id(6).unwrap();
    let Type::Struct(s) = address.field_type.as_ref() else { panic!() };
    let kids: Vec<_> = s.fields().iter().map(|f| (f.id, f.name.as_str(), f.required)).collect();
    assert_eq!(kids, vec![(7, "city", true), (8, "zip", false)], "children after their field, required kept");
    assert_eq!(e.last_column_id, 9);
    assert!(
        matches!(&e.changes[..], [SchemaChange::AddColumn { parent: None, field: a }, SchemaChange::AddColumn { parent: None, field: b }] if a.id == 6 && b.id == 9)
    );
}

#[test]
fn nested_structs_lists_and_maps_evolve_inside() {
    let point = |fields| Type::Struct(StructType::new(fields));
    let table = schema(vec![
        opt(1, "pos", point(vec![req(4, "x", prim(P::Int))])),
        opt(
            2,
            "tags",
            Type::List(ListType::new(Arc::new(NestedField::list_element(
                5,
                point(vec![req(7, "k", prim(P::String))]),
                true,
            )))),
        ),
        opt(
            3,
            "attrs",
            Type::Map(MapType::new(
                Arc::new(NestedField::map_key_element(8, prim(P::String))),
                Arc::new(NestedField::map_value_element(9, prim(P::Float), true)),
            )),
        ),
    ]);
    let file = schema(vec![
        opt(1, "pos", point(vec![req(4, "x", prim(P::Long)), opt(10, "y", prim(P::Int))])),
        opt(
            2,
            "tags",
            Type::List(ListType::new(Arc::new(NestedField::list_element(
                5,
                point(vec![req(7, "k", prim(P::String)), opt(11, "v", prim(P::String))]),
                false,
            )))),
        ),
        opt(
            3,
            "attrs",
            Type::Map(MapType::new(
                Arc::new(NestedField::map_key_element(8, prim(P::String))),
                Arc::new(NestedField::map_value_element(9, prim(P::Double), true)),
            )),
        ),
    ]);
    let e = run(&table, &file).unwrap();
    let want = vec![
        SchemaChange::Promote { id: 4, to: P::Long },
        SchemaChange::AddColumn { parent: Some(1), field: opt(10, "y", prim(P::Int)) },
        SchemaChange::AddColumn { parent: Some(5), field: opt(11, "v", prim(P::String)) },
        SchemaChange::MakeOptional { id: 5 },
        SchemaChange::Promote { id: 9, to: P::Double },
    ];
    assert_eq!(e.changes, want);
    // The committer replays them onto the same schema and gets the writer's schema.
    let r = rebase(&table, 9, &e.schema, &e.changes).unwrap();
    assert_eq!(r.schema.unwrap().as_struct(), e.schema.as_struct());
    assert_eq!(r.last_column_id, 11);
}

#[test]
fn what_cannot_evolve_is_refused_naming_the_field() {
    let table = schema(vec![req(1, "id", prim(P::Long)), req(2, "name", prim(P::String))]);
    let cases = [
        (
            schema(vec![req(1, "id", prim(P::Long)), req(2, "name", prim(P::String)), req(3, "new", prim(P::Int))]),
            "`new`",
            "without a default",
        ),
        (schema(vec![req(1, "id", prim(P::Long))]), "`name`", "requires this field"),
        (schema(vec![req(1, "id", prim(P::String)), req(2, "name", prim(P::String))]), "`id`", "string"),
    ];
    for (file, field, why) in cases {
        let e = run(&table, &file).unwrap_err().to_string();
        assert!(e.contains(field) && e.contains(why), "{e}");
    }
    // A new required field with an Avro default is a new optional column.
    let file = schema(vec![req(1, "id", prim(P::Long)), req(2, "name", prim(P::String)), req(3, "new", prim(P::Int))]);
    let extras = HashMap::from([(3, FieldExtras { aliases: vec![], has_default: true, default: None })]);
    let e = evolve(&table, 2, &file, &extras, &Constraints::default()).unwrap();
    assert_eq!(e.changes, vec![SchemaChange::AddColumn { parent: None, field: opt(3, "new", prim(P::Int)) }]);
}

#[test]
fn key_columns_are_not_promoted_or_renamed_and_partition_names_stay_free() {
    let table = schema(vec![req(1, "id", prim(P::Int)), opt(2, "day", prim(P::Date))]);
    let c = Constraints {
        key_columns: [1].into(),
        partition_names: ["id_bucket".to_string()].into(),
        history: vec![],
        defaults: false,
    };
    let file = schema(vec![req(1, "id", prim(P::Long)), opt(2, "day", prim(P::Date))]);
    let e = evolve(&table, 2, &file, &no_extras(), &c).unwrap_err().to_string();
    assert!(e.contains("`id`") && e.contains("key column"), "{e}");
    let file = schema(vec![req(1, "key", prim(P::Int)), opt(2, "day", prim(P::Date))]);
    let extras = HashMap::from([(1, FieldExtras { aliases: vec!["id".into()], has_default: false, default: None })]);
    let e = evolve(&table, 2, &file, &extras, &c).unwrap_err().to_string();
    assert!(e.contains("renaming `id`, a key column"), "{e}");
    let file = schema(vec![req(1, "id", prim(P::Int)), opt(3, "id_bucket", prim(P::Int))]);
    let e = evolve(&table, 2, &file, &no_extras(), &c).unwrap_err().to_string();
    assert!(e.contains("partition field"), "{e}");
    // Making a key column optional is allowed.
    let file = schema(vec![opt(1, "id", prim(P::Int))]);
    assert_eq!(evolve(&table, 2, &file, &no_extras(), &c).unwrap().changes, vec![SchemaChange::MakeOptional { id: 1 }]);
}

#[test]
fn aliases_rename_and_old_names_still_find_their_column() {
    let v1 = schema(vec![req(1, "id", prim(P::Long)), opt(2, "amt", prim(P::Double))]);
    let file = schema(vec![req(1, "id", prim(P::Long)), opt(2, "amount", prim(P::Double))]);
    let extras = HashMap::from([(2, FieldExtras { aliases: vec!["amt".into()], has_default: false, default: None })]);
    let e = evolve(&v1, 2, &file, &extras, &Constraints::default()).unwrap();
    assert_eq!(e.changes, vec![SchemaChange::Rename { id: 2, from: "amt".into(), to: "amount".into() }]);
    assert_eq!(e.schema.field_by_id(2).unwrap().name, "amount");
    // A producer still on the old name, after the rename: same column, no new one.
    let v2 = e.schema.clone().into_builder().with_schema_id(1).build().unwrap();
    let c = Constraints { history: vec![Arc::new(v1.clone())], ..Default::default() };
    let old = evolve(&v2, 2, &v1, &no_extras(), &c).unwrap();
    assert!(old.changes.is_empty(), "{:?}", old.changes);
    assert_eq!(old.names, HashMap::from([("amount".to_string(), "amt".to_string())]));
    // Without the history it would have been a new column.
    let fresh = evolve(&v2, 2, &v1, &no_extras(), &Constraints::default()).unwrap();
    assert!(matches!(&fresh.changes[..], [SchemaChange::AddColumn { field, .. }] if field.name == "amt"));
}

#[test]
fn a_column_another_engine_dropped_is_not_brought_back_by_a_producer_still_sending_it() {
    let v1 = schema(vec![req(1, "id", prim(P::Long)), opt(2, "payload", prim(P::String))]);
    let v2 = schema(vec![req(1, "id", prim(P::Long))]).into_builder().with_schema_id(1).build().unwrap();
    let c = Constraints { history: vec![Arc::new(v1.clone())], ..Default::default() };
    let e = evolve(&v2, 2, &v1, &no_extras(), &c).unwrap_err().to_string();
    assert!(e.contains("`payload`") && e.contains("field id 2") && e.contains("was dropped"), "{e}");
    // Nested too: a struct's dropped field.
    let inner = |fields| Type::Struct(StructType::new(fields));
    let n1 = schema(vec![req(1, "id", prim(P::Long)), opt(2, "geo", inner(vec![opt(3, "lat", prim(P::Double))]))]);
    let n2 = schema(vec![req(1, "id", prim(P::Long)), opt(2, "geo", inner(vec![]))]);
    let c = Constraints { history: vec![Arc::new(n1.clone())], ..Default::default() };
    let e = evolve(&n2, 3, &n1, &no_extras(), &c).unwrap_err().to_string();
    assert!(e.contains("geo.lat") && e.contains("was dropped"), "{e}");
    // Added again by its owner (a new id under the old name): the producer's values land there.
    let v3 = schema(vec![req(1, "id", prim(P::Long)), opt(3, "payload", prim(P::String))]);
    let back = evolve(&v3, 3, &v1, &no_extras(), &c_of(&[&v1, &v2])).unwrap();
    assert!(back.changes.is_empty(), "{:?}", back.changes);
    // A name no schema ever had is still a new column.
    let new = schema(vec![req(1, "id", prim(P::Long)), opt(2, "note", prim(P::String))]);
    let c = Constraints { history: vec![Arc::new(v1)], ..Default::default() };
    assert!(matches!(&evolve(&v2, 2, &new, &no_extras(), &c).unwrap().changes[..], [SchemaChange::AddColumn { .. }]));
}

fn c_of(history: &[&Schema]) -> Constraints {
    Constraints { history: history.iter().map(|s| Arc::new((*s).clone())).collect(), ..Default::default() }
}

#[test]
fn the_committer_accepts_the_same_evolution_twice_and_refuses_a_rival_on_the_same_ids() {
    let table = schema(vec![req(1, "id", prim(P::Long))]);
    let with = |name: &str, t: P| schema(vec![req(1, "id", prim(P::Long)), opt(2, name, prim(t))]);
    let a = run(&table, &with("x", P::String)).unwrap();
    let b = run(&table, &with("y", P::String)).unwrap();
    let same = run(&table, &with("x", P::String)).unwrap();
    // `a` lands first.
    let after_a = rebase(&table, 1, &a.schema, &a.changes).unwrap();
    let current = after_a.schema.unwrap();
    assert_eq!(after_a.last_column_id, 2);
    // The same proposal again (another writer, the same producer version): nothing to change.
    assert_eq!(rebase(&current, 2, &same.schema, &same.changes), Ok(Rebased { schema: None, last_column_id: 2 }));
    // A rival that gave id 2 to `y`: its files would put y's values under x.
    let e = rebase(&current, 2, &b.schema, &b.changes).unwrap_err();
    assert!(e.contains("`y`") && e.contains("`x`"), "{e}");
    // Written again against the table as it is now, `y` gets id 3 and lands.
    let b2 = run(&current, &schema(vec![req(1, "id", prim(P::Long)), opt(5, "y", prim(P::String))])).unwrap();
    let r = rebase(&current, 2, &b2.schema, &b2.changes).unwrap();
    assert_eq!(r.last_column_id, 3);
    // An id above the last that someone else has used meanwhile (the last moved on).
    let e = rebase(&table, 2, &b.schema, &b.changes).unwrap_err();
    assert!(e.contains("assigned"), "{e}");
}

#[test]
fn the_committer_refuses_files_whose_columns_left_the_table() {
    let old = schema(vec![req(1, "id", prim(P::Long)), opt(2, "gone", prim(P::String))]);
    let now = schema(vec![req(1, "id", prim(P::Long)), opt(3, "gone", prim(P::String))]);
    let e = rebase(&now, 3, &old, &[]).unwrap_err();
    assert!(e.contains("`gone`") && e.contains("not in the table"), "{e}");
    // A required column added by another engine, which the file lacks.
    let now = schema(vec![req(1, "id", prim(P::Long)), opt(2, "gone", prim(P::String)), req(3, "must", prim(P::Int))]);
    assert!(rebase(&now, 3, &old, &[]).unwrap_err().contains("`must`"));
    // A promotion that landed meanwhile: the narrower file still fits.
    let wide = schema(vec![req(1, "id", prim(P::Long)), opt(2, "gone", prim(P::String))]);
    let narrow = schema(vec![req(1, "id", prim(P::Int)), opt(2, "gone", prim(P::String))]);
    assert_eq!(rebase(&wide, 2, &narrow, &[]), Ok(Rebased { schema: None, last_column_id: 2 }));
    let promote = [SchemaChange::Promote { id: 1, to: P::Long }];
    assert_eq!(rebase(&wide, 2, &wide, &promote), Ok(Rebased { schema: None, last_column_id: 2 }));
}

#[test]
fn changes_travel_as_json() {
    let changes = vec![
        SchemaChange::AddColumn { parent: Some(4), field: opt(7, "v", prim(P::Decimal { precision: 12, scale: 2 })) },
        SchemaChange::Promote { id: 2, to: P::Long },
        SchemaChange::MakeOptional { id: 3 },
        SchemaChange::Rename { id: 1, from: "a".into(), to: "b".into() },
    ];
    let json = serde_json::to_string(&changes).unwrap();
    assert!(json.contains(r#""op":"add-column""#) && json.contains(r#""op":"make-optional""#), "{json}");
    let back: Vec<SchemaChange> = serde_json::from_str(&json).unwrap();
    assert_eq!(back, changes);
}

#[test]
fn a_struct_holding_a_key_column_is_not_renamed_and_no_name_takes_a_partition_fields() {
    let inner = |k: &str| Type::Struct(StructType::new(vec![req(3, k, prim(P::String))]));
    let table = schema(vec![req(1, "id", prim(P::Long)), opt(2, "user", inner("k"))]);
    let c = Constraints {
        key_columns: [3].into(),
        partition_names: ["id_bucket".to_string(), "user.name".to_string()].into(),
        history: vec![],
        defaults: false,
    };
    // `account` with alias `user`: renaming the struct would lose the dedup key `user.k`.
    let file = schema(vec![req(1, "id", prim(P::Long)), opt(2, "account", inner("k"))]);
    let extras = HashMap::from([(2, FieldExtras { aliases: vec!["user".into()], has_default: false, default: None })]);
    let e = evolve(&table, 3, &file, &extras, &c).unwrap_err().to_string();
    assert!(e.contains("struct holding one"), "{e}");
    // A rename onto a partition field's name, and a nested new field whose full name is one.
    let file = schema(vec![req(1, "id_bucket", prim(P::Long)), opt(2, "user", inner("k"))]);
    let extras = HashMap::from([(1, FieldExtras { aliases: vec!["id".into()], has_default: false, default: None })]);
    let c2 = Constraints { key_columns: Default::default(), ..c.clone() };
    let e = evolve(&table, 3, &file, &extras, &c2).unwrap_err().to_string();
    assert!(e.contains("partition field"), "{e}");
    let with_name = Type::Struct(StructType::new(vec![req(3, "k", prim(P::String)), opt(4, "name", prim(P::String))]));
    let file = schema(vec![req(1, "id", prim(P::Long)), opt(2, "user", with_name)]);
    let e = evolve(&table, 3, &file, &no_extras(), &c2).unwrap_err().to_string();
    assert!(e.contains("`user.name`") && e.contains("partition field"), "{e}");
}

#[test]
fn a_promoted_columns_defaults_are_widened_with_it() {
    use iceberg::spec::Literal;
    let f = NestedField::optional(1, "n", Type::Primitive(P::Int))
        .with_initial_default(Literal::int(7))
        .with_write_default(Literal::int(7));
    let wide = with_type(&f, Type::Primitive(P::Long), false);
    assert_eq!((wide.initial_default, wide.write_default), (Some(Literal::long(7)), Some(Literal::long(7))));
    let f = NestedField::optional(2, "x", Type::Primitive(P::Float)).with_initial_default(Literal::float(0.5));
    assert_eq!(with_type(&f, Type::Primitive(P::Double), false).initial_default, Some(Literal::double(0.5)));
}
