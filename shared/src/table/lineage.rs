//! Row lineage (Iceberg format v3): which row ids an append takes and how the ids a data file
//! inherits are kept when its manifest is rewritten.
//!
//! In a v3 table every row has a `_row_id`. A new data file has none written: its manifest gets a
//! `first_row_id` in the manifest list (the table's `next-row-id`, then onwards), and each file
//! with a null `first_row_id` inherits the next `record_count` ids of its manifest's range, in
//! entry order. A file keeps its ids forever after: when Floe rewrites a manifest (a merge, or a
//! file's removal) the ids it inherited are written into its entry explicitly, so a merged
//! manifest's own (new) range is never handed to rows that already had ids. The snapshot records
//! the range it assigned (`first-row-id`, `added-rows`) and the table's `next-row-id` advances by
//! it (the metadata builder does that).
//!
//! A rewrite (compaction) of a v3 table keeps every row's lineage: it reads each row's `_row_id`
//! and `_last_updated_sequence_number` (the columns if the file has them, else what a reader
//! infers: the file's `first_row_id` plus the row's position, and the file's data sequence
//! number) and writes both into the new files as the spec's reserved columns
//! ([`with_lineage_columns`], [`materialize`]), so a row's id never moves. Column defaults
//! (format v3, single values) are what writers and compaction fill in for a missing column
//! ([`defaults`]); Floe does not encrypt: [`ensure_appendable`] refuses an encrypted table, and
//! one with a default that is a struct, list or map.

use iceberg::spec::{
    DataFile, DataFileBuilder, FormatVersion, ManifestContentType, ManifestEntry, ManifestFile, ManifestStatus,
    TableMetadata,
};

use crate::{Error, Result};

/// Whether the table assigns row ids (format v3 and later).
pub(crate) fn tracks_rows(meta: &TableMetadata) -> bool {
    meta.format_version() >= FormatVersion::V3
}

/// Refuses an append to a v3 table Floe cannot write exactly: an encrypted one (Floe writes
/// plaintext), or one with a column default that is not a single value (a struct's, list's or
/// map's: Floe fills in single values only).
pub(crate) fn ensure_appendable(table: &str, meta: &TableMetadata) -> Result<()> {
    let encrypted = meta.encryption_keys_iter().len() > 0
        || meta.properties().contains_key("encryption.key-id")
        || meta.snapshots().any(|s| s.encryption_key_id().is_some());
    if encrypted {
        return Err(Error::UnsupportedTableFeature {
            table: table.to_string(),
            feature: "table encryption (Floe writes plaintext manifests and data files)".into(),
        });
    }
    let schema = meta.current_schema();
    for id in 0..=schema.highest_field_id() {
        let Some(field) = schema.field_by_id(id) else { continue };
        let single = |d: &Option<iceberg::spec::Literal>| {
            d.as_ref().is_none_or(|l| matches!(l, iceberg::spec::Literal::Primitive(_)))
        };
        if !single(&field.initial_default) || !single(&field.write_default) {
            let column = schema.name_by_field_id(id).unwrap_or(&field.name).to_string();
            return Err(Error::UnsupportedTableFeature {
                table: table.to_string(),
                feature: format!(
                    "a default value on column `{column}` that is a struct, list or map (Floe fills in single values only)"
                ),
            });
        }
    }
    Ok(())
}

/// A schema's column defaults (format v3): each column's `initial-default` (what a reader fills
/// in for a data file without the column) and `write-default` (what a writer writes when the
/// producer gives no value), single values only ([`ensure_appendable`] refuses others).
pub(crate) fn defaults(
    schema: &iceberg::spec::Schema,
) -> (crate::convert::conform::Defaults, crate::convert::conform::Defaults) {
    let (mut initial, mut write) = (crate::convert::conform::Defaults::new(), crate::convert::conform::Defaults::new());
    for id in 0..=schema.highest_field_id() {
        let Some(field) = schema.field_by_id(id) else { continue };
        if let Some(iceberg::spec::Literal::Primitive(p)) = &field.initial_default {
            initial.insert(id, p.clone());
        }
        if let Some(iceberg::spec::Literal::Primitive(p)) = &field.write_default {
            write.insert(id, p.clone());
        }
    }
    (initial, write)
}

/// The field id of the `_row_id` column (reserved by the spec).
pub(crate) const ROW_ID: i32 = 2147483540;
/// The field id of the `_last_updated_sequence_number` column.
pub(crate) const LAST_UPDATED: i32 = 2147483539;

/// `schema` with the two row lineage columns after its own (a rewrite's files carry them).
pub(crate) fn with_lineage_columns(schema: &arrow_schema::Schema) -> arrow_schema::SchemaRef {
    let field = |name: &str, id: i32| {
        let meta = [(parquet::arrow::PARQUET_FIELD_ID_META_KEY.to_string(), id.to_string())].into();
        std::sync::Arc::new(arrow_schema::Field::new(name, arrow_schema::DataType::Int64, true).with_metadata(meta))
    };
    let mut fields: Vec<arrow_schema::FieldRef> = schema.fields().iter().cloned().collect();
    fields.push(field("_row_id", ROW_ID));
    fields.push(field("_last_updated_sequence_number", LAST_UPDATED));
    std::sync::Arc::new(arrow_schema::Schema::new_with_metadata(fields, schema.metadata().clone()))
}

/// `b`, the rows of a data file from ordinal `first` on, read with the lineage columns (null
/// where the file lacks them or has nulls), with each null replaced by what a reader infers:
/// `_row_id` is the file's `first_row_id` plus the row's ordinal, `_last_updated_sequence_number`
/// the file's data sequence number `seq`. A file without `first_row_id` has no lineage yet (the
/// spec, and Iceberg Java's readers, read both as null, whatever the file holds): both null.
/// (Compaction plans no such file: see `pipeline::compact`.)
pub(crate) fn materialize(
    b: arrow_array::RecordBatch,
    first: u64,
    first_row_id: Option<i64>,
    seq: i64,
) -> Result<arrow_array::RecordBatch> {
    use arrow_array::{Array, Int64Array};
    let at = |id: i32| {
        b.schema()
            .fields()
            .iter()
            .position(|f| crate::convert::conform::field_id(f) == Some(id))
            .ok_or_else(|| Error::internal(format!("row lineage column {id} not read")))
    };
    let (row_at, seq_at) = (at(ROW_ID)?, at(LAST_UPDATED)?);
    let fill = |column: &dyn Array, infer: &dyn Fn(usize) -> Option<i64>| -> Result<Int64Array> {
        let column = column
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| Error::data(format!("a row lineage column is {}, not long", column.data_type())))?;
        Ok((0..column.len()).map(|i| if column.is_valid(i) { Some(column.value(i)) } else { infer(i) }).collect())
    };
    let (ids, seqs) = match first_row_id {
        Some(f) => (
            fill(b.column(row_at).as_ref(), &|i| Some(f + first as i64 + i as i64))?,
            fill(b.column(seq_at).as_ref(), &|_| Some(seq))?,
        ),
        None => (Int64Array::new_null(b.num_rows()), Int64Array::new_null(b.num_rows())),
    };
    let mut columns = b.columns().to_vec();
    columns[row_at] = std::sync::Arc::new(ids);
    columns[seq_at] = std::sync::Arc::new(seqs);
    Ok(arrow_array::RecordBatch::try_new(b.schema(), columns)?)
}

/// The entries of `mf` with the row ids they inherit written in: each live data file without a
/// `first_row_id` takes the next `record_count` ids from the manifest's `first_row_id`, in entry
/// order (deleted entries take none). Entries are returned unchanged when the manifest has no
/// range (a v2 table, or a manifest the list has not assigned one yet).
pub(crate) fn inherit_row_ids(entries: &mut [ManifestEntry], mf: &ManifestFile) {
    let Some(first) = mf.first_row_id else { return };
    if mf.content != ManifestContentType::Data {
        return;
    }
    let mut next = first as i64;
    for e in entries.iter_mut() {
        if e.status == ManifestStatus::Deleted || e.data_file.first_row_id().is_some() {
            continue;
        }
        let rows = e.data_file.record_count() as i64;
        e.data_file = with_first_row_id(&e.data_file, next, mf.partition_spec_id);
        next += rows;
    }
}

/// Whether any live data file of `entries` still waits for its inherited row ids.
pub(crate) fn unresolved(entries: &[ManifestEntry]) -> bool {
    entries.iter().any(|e| e.status != ManifestStatus::Deleted && e.data_file.first_row_id().is_none())
}

/// `f` with `first_row_id` set (the `iceberg` crate keeps the field behind its builder).
fn with_first_row_id(f: &DataFile, first_row_id: i64, spec_id: i32) -> DataFile {
    let mut b = DataFileBuilder::default();
    b.content(f.content_type())
        .file_path(f.file_path().to_string())
        .file_format(f.file_format())
        .partition(f.partition().clone())
        .record_count(f.record_count())
        .file_size_in_bytes(f.file_size_in_bytes())
        .column_sizes(f.column_sizes().clone())
        .value_counts(f.value_counts().clone())
        .null_value_counts(f.null_value_counts().clone())
        .nan_value_counts(f.nan_value_counts().clone())
        .lower_bounds(f.lower_bounds().clone())
        .upper_bounds(f.upper_bounds().clone())
        .key_metadata(f.key_metadata().map(<[u8]>::to_vec))
        .split_offsets(f.split_offsets().map(<[i64]>::to_vec))
        .equality_ids(f.equality_ids())
        .first_row_id(Some(first_row_id))
        .partition_spec_id(spec_id)
        .referenced_data_file(f.referenced_data_file())
        .content_offset(f.content_offset())
        .content_size_in_bytes(f.content_size_in_bytes());
    if let Some(id) = f.sort_order_id() {
        b.sort_order_id(id);
    }
    b.build().expect("every required field is copied")
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use iceberg::spec::{NestedField, PartitionSpec, PrimitiveType, Schema, SortOrder, TableMetadataBuilder, Type};

    use super::*;

    fn v3(properties: HashMap<String, String>) -> TableMetadata {
        let id = NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long));
        let schema = Schema::builder().with_fields(vec![id.into()]).build().unwrap();
        let spec = PartitionSpec::unpartition_spec();
        let order = SortOrder::unsorted_order();
        TableMetadataBuilder::new(schema, spec, order, "file:///t".into(), FormatVersion::V3, properties)
            .unwrap()
            .build()
            .unwrap()
            .metadata
    }

    #[test]
    fn a_plain_v3_table_takes_appends() {
        let m = v3(HashMap::new());
        assert!(tracks_rows(&m));
        ensure_appendable("t", &m).unwrap();
    }

    #[test]
    fn lineage_a_file_lacks_is_what_a_reader_infers() {
        use arrow_array::{Array, Int64Array, RecordBatch};
        let schema = with_lineage_columns(&arrow_schema::Schema::empty());
        let ids: Int64Array = vec![None, Some(7), None].into();
        let seqs: Int64Array = vec![Some(3), None, None].into();
        let b = RecordBatch::try_new(schema, vec![std::sync::Arc::new(ids), std::sync::Arc::new(seqs)]).unwrap();
        let out = materialize(b.clone(), 10, Some(100), 5).unwrap();
        let col = |i: usize| out.column(i).as_any().downcast_ref::<Int64Array>().unwrap().iter().collect::<Vec<_>>();
        assert_eq!(col(0), [Some(110), Some(7), Some(112)], "first_row_id + ordinal where the file has none");
        assert_eq!(col(1), [Some(3), Some(5), Some(5)], "the file's data sequence number where it has none");
        let out = materialize(b, 0, None, 5).unwrap();
        assert_eq!(out.column(0).null_count(), 3, "rows of a file without first_row_id have no lineage yet");
        assert_eq!(out.column(1).null_count(), 3);
    }

    #[test]
    fn an_encrypted_v3_table_is_refused() {
        let m = v3(HashMap::from([("encryption.key-id".to_string(), "k1".to_string())]));
        let e = ensure_appendable("t", &m).unwrap_err().to_string();
        assert!(e.contains("encryption"), "{e}");
    }
}
