//! Which file types may land in which table types: exact matches and Iceberg's promotions.
//!
//! A source file's Avro schema, mapped to Iceberg (`convert::schema`), is compared with the
//! table's schema field by field (matched by name, as `convert::conform` matches them) before any
//! data is converted. A leaf lands only if its Iceberg type is the table's, or one of the
//! promotions the Iceberg spec allows for a column: `int` → `long`, `float` → `double`, and
//! `decimal(P, S)` → `decimal(P', S)` with `P' ≥ P`. Everything else (a string into a long, a
//! double into a long, a long into an int, a fixed into a uuid, a scale change) is refused with
//! the field's path, the file's type and the table's type, so the object is quarantined rather
//! than cast into NULLs or rounded. Units within one Iceberg type (Avro `timestamp-millis` and
//! `timestamp-micros` both map to `timestamptz`) are the same type here; the conform step
//! converts their representation exactly.
//!
//! This module owns the rule and nothing else; adding columns (schema evolution) is not decided
//! here.

use iceberg::spec::{NestedFieldRef, PrimitiveType, Schema, StructType, Type};

use crate::{Error, Result};

/// Checks that every field the file shares with the table has the table's type or a type the
/// Iceberg spec promotes to it. Fields present on one side only are left to `conform`.
pub fn check_file_against_table(file: &Schema, table: &Schema) -> Result<()> {
    check_struct(file.as_struct(), table.as_struct(), "")
}

/// Whether a column of Iceberg type `from` may be read as `to` without changing any value.
pub fn promotes(from: &PrimitiveType, to: &PrimitiveType) -> bool {
    use PrimitiveType as P;
    match (from, to) {
        (a, b) if a == b => true,
        (P::Int, P::Long) | (P::Float, P::Double) => true,
        (P::Decimal { precision: p1, scale: s1 }, P::Decimal { precision: p2, scale: s2 }) => s1 == s2 && p2 >= p1,
        _ => false,
    }
}

fn check_struct(file: &StructType, table: &StructType, path: &str) -> Result<()> {
    for f in file.fields() {
        if let Some(t) = table.fields().iter().find(|t| t.name == f.name) {
            check_field(f, t, &join(path, &f.name))?;
        }
    }
    Ok(())
}

fn check_field(file: &NestedFieldRef, table: &NestedFieldRef, path: &str) -> Result<()> {
    check_type(&file.field_type, &table.field_type, path)
}

fn check_type(file: &Type, table: &Type, path: &str) -> Result<()> {
    match (file, table) {
        (Type::Primitive(a), Type::Primitive(b)) if promotes(a, b) => Ok(()),
        (Type::Struct(a), Type::Struct(b)) => check_struct(a, b, path),
        (Type::List(a), Type::List(b)) => check_field(&a.element_field, &b.element_field, &join(path, "element")),
        (Type::Map(a), Type::Map(b)) => {
            check_field(&a.key_field, &b.key_field, &join(path, "key"))?;
            check_field(&a.value_field, &b.value_field, &join(path, "value"))
        }
        (a, b) => Err(mismatch(path, a, b)),
    }
}

fn mismatch(path: &str, file: &Type, table: &Type) -> Error {
    Error::schema(
        path,
        format!(
            "the file has type {} where the table has {}; only the same type or an Iceberg promotion \
             (int to long, float to double, decimal precision widening) can land without changing values",
            type_name(file),
            type_name(table)
        ),
    )
}

/// A short name of an Iceberg type: the primitive's spec name, or its kind for nested types.
fn type_name(t: &Type) -> String {
    match t {
        Type::Primitive(p) => p.to_string(),
        Type::Struct(_) => "struct".into(),
        Type::List(_) => "list".into(),
        Type::Map(_) => "map".into(),
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_string() } else { format!("{path}.{name}") }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use iceberg::spec::{ListType, NestedField};

    use super::*;

    fn schema(t: Type) -> Schema {
        Schema::builder().with_fields(vec![Arc::new(NestedField::optional(1, "amount", t))]).build().unwrap()
    }

    fn prims() -> Vec<PrimitiveType> {
        use PrimitiveType as P;
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
    fn only_exact_types_and_promotions_pass() {
        use PrimitiveType as P;
        let allowed = |a: &P, b: &P| {
            a == b
                || matches!((a, b), (P::Int, P::Long) | (P::Float, P::Double))
                || matches!((a, b), (P::Decimal { precision: 10, scale: 2 }, P::Decimal { precision: 20, scale: 2 }))
        };
        for a in prims() {
            for b in prims() {
                let got =
                    check_file_against_table(&schema(Type::Primitive(a.clone())), &schema(Type::Primitive(b.clone())));
                assert_eq!(got.is_ok(), allowed(&a, &b), "{a} into {b}: {got:?}");
                if let Err(e) = got {
                    let msg = e.to_string();
                    assert!(
                        msg.contains("`amount`") && msg.contains(&a.to_string()) && msg.contains(&b.to_string()),
                        "{msg}"
                    );
                }
            }
        }
    }

    #[test]
    fn nested_leaves_are_checked_with_their_path() {
        let list = |p| Type::List(ListType::new(Arc::new(NestedField::list_element(2, Type::Primitive(p), false))));
        let e = check_file_against_table(&schema(list(PrimitiveType::Double)), &schema(list(PrimitiveType::Long)))
            .unwrap_err()
            .to_string();
        assert!(e.contains("`amount.element`") && e.contains("double") && e.contains("long"), "{e}");
        check_file_against_table(&schema(list(PrimitiveType::Int)), &schema(list(PrimitiveType::Long))).unwrap();
        let e =
            check_file_against_table(&schema(list(PrimitiveType::Int)), &schema(Type::Primitive(PrimitiveType::Int)))
                .unwrap_err()
                .to_string();
        assert!(e.contains("list") && e.contains("int"), "{e}");
    }
}
