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
//! Floe does not rewrite the rows of a v3 table (compaction would have to carry each row's
//! `_row_id` and `_last_updated_sequence_number` into the new files): [`ensure_rewritable`]
//! refuses it. It does not write column defaults or encrypt either: [`ensure_appendable`]
//! refuses a table whose schema has an `initial-default` or `write-default`, or that is
//! encrypted.

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
/// plaintext), or one with a column default (it would have to be written where the input lacks
/// the column, or is what readers fill in for files without it).
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
        if field.initial_default.is_some() || field.write_default.is_some() {
            let column = schema.name_by_field_id(id).unwrap_or(&field.name).to_string();
            return Err(Error::UnsupportedTableFeature {
                table: table.to_string(),
                feature: format!("a default value on column `{column}` (Floe does not write column defaults yet)"),
            });
        }
    }
    Ok(())
}

/// Refuses a rewrite of a v3 table's rows: the new files would have to carry every row's
/// `_row_id` and `_last_updated_sequence_number`, which Floe's compactor does not write yet.
pub fn ensure_rewritable(table: &str, meta: &TableMetadata) -> Result<()> {
    if tracks_rows(meta) {
        return Err(Error::UnsupportedTableFeature {
            table: table.to_string(),
            feature: "row lineage (format v3): Floe appends to it but does not rewrite its files yet, since a \
                      rewrite must keep each row's _row_id"
                .into(),
        });
    }
    Ok(())
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
    fn a_plain_v3_table_takes_appends_but_not_rewrites() {
        let m = v3(HashMap::new());
        assert!(tracks_rows(&m));
        ensure_appendable("t", &m).unwrap();
        let e = ensure_rewritable("t", &m).unwrap_err().to_string();
        assert!(e.contains("_row_id") && e.contains("nothing written"), "{e}");
    }

    #[test]
    fn an_encrypted_v3_table_is_refused() {
        let m = v3(HashMap::from([("encryption.key-id".to_string(), "k1".to_string())]));
        let e = ensure_appendable("t", &m).unwrap_err().to_string();
        assert!(e.contains("encryption"), "{e}");
    }
}
