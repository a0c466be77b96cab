//! Columns an identity partition gives: a data file that lacks such a column (another engine's,
//! or one written before the column was added) reads it as the partition value its manifest
//! entry records, as the spec's first column-projection rule says.

use std::sync::Arc;

use arrow_array::RecordBatch;
use iceberg::spec::{Literal, PrimitiveLiteral, Transform};

use super::Task;
use crate::convert::conform;
use crate::table::WriterTable;
use crate::{Error, Result};

/// The values `task`'s partition gives its identity-partitioned columns, by source field id:
/// what a file without such a column reads it as (another engine's `add_files` of Hive-style
/// files, whose partition lives in their path).
pub(super) fn identity_values(table: &WriterTable, task: &Task) -> Vec<(i32, PrimitiveLiteral)> {
    if task.spec_id != table.spec.spec_id() {
        return vec![];
    }
    let fields = table.spec.fields().iter().zip(task.partition.fields());
    let identity = fields.filter(|(f, _)| f.transform == Transform::Identity);
    identity
        .filter_map(|(f, v)| match v {
            Some(Literal::Primitive(p)) => Some((f.source_id, p.clone())),
            _ => None,
        })
        .collect()
}

/// The fields of `expected` that a file with fields `file_fields` lacks and an identity
/// partition gives, with their values: the spec's first rule reads such a column as the
/// partition value (from the manifest), before the name mapping's or a null.
pub(super) fn constants<'a>(
    expected: &arrow_schema::Schema,
    file_fields: &arrow_schema::Fields,
    identity: &'a [(i32, PrimitiveLiteral)],
    how: conform::Match<'_>,
) -> Vec<(arrow_schema::FieldRef, &'a PrimitiveLiteral)> {
    identity
        .iter()
        .filter_map(|(id, value)| {
            let t = expected.fields().iter().find(|f| conform::field_id(f) == Some(*id))?;
            conform::position(file_fields, t, "", how).is_none().then(|| (t.clone(), value))
        })
        .collect()
}

/// `batch` with a column of `value` for each table field given, under the table's field (and
/// so its field id).
pub(super) fn with_constants(
    batch: RecordBatch,
    fill: &[(arrow_schema::FieldRef, &PrimitiveLiteral)],
    path: &str,
) -> Result<RecordBatch> {
    let mut fields: Vec<arrow_schema::FieldRef> = batch.schema().fields().iter().cloned().collect();
    let mut columns = batch.columns().to_vec();
    for (field, value) in fill {
        let column = conform::repeated(field.data_type(), value, batch.num_rows()).ok_or_else(|| {
            Error::data(format!(
                "data file {path} lacks column `{}`, and its identity partition value {value:?} does not fit the \
                 column's type {}",
                field.name(),
                field.data_type()
            ))
        })?;
        fields.push(field.clone());
        columns.push(column);
    }
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
    Ok(RecordBatch::try_new_with_options(Arc::new(arrow_schema::Schema::new(fields)), columns, &opts)?)
}
