//! Which types may meet in one column: exact matches and Iceberg's promotions.
//!
//! A column holds values of its Iceberg type, or of a type the Iceberg spec promotes to it:
//! `int` → `long`, `float` → `double`, and `decimal(P, S)` → `decimal(P', S)` with `P' ≥ P`.
//! Everything else (a string and a long, a double and a long, a fixed and a uuid, two scales)
//! cannot meet without changing values: a file that would need it is quarantined with the
//! field's path, the file's type and the table's type, rather than cast into NULLs or rounded.
//! Units within one Iceberg type (Avro `timestamp-millis` and `timestamp-micros` both map to
//! `timestamptz`) are the same type here; the conform step converts their representation
//! exactly.
//!
//! This module owns the rule; `convert::evolve` applies it (a narrower file lands in a wider
//! column, a wider file promotes the column).

use iceberg::spec::{PrimitiveType, Type};

use crate::Error;

/// Whether a column of Iceberg type `from` may be read as `to` without changing any value.
pub(crate) fn promotes(from: &PrimitiveType, to: &PrimitiveType) -> bool {
    use PrimitiveType as P;
    match (from, to) {
        (a, b) if a == b => true,
        (P::Int, P::Long) | (P::Float, P::Double) => true,
        (P::Decimal { precision: p1, scale: s1 }, P::Decimal { precision: p2, scale: s2 }) => s1 == s2 && p2 >= p1,
        _ => false,
    }
}

/// The error for a file type that can neither land in the table's type nor promote it.
pub(crate) fn mismatch(path: &str, file: &Type, table: &Type) -> Error {
    Error::schema(
        path,
        format!(
            "the file has type {} where the table has {}; only the same type or an Iceberg promotion \
             (int to long, float to double, decimal precision widening, either way) can land without changing values",
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
