//! Metadata of a new table: schema, partition spec, sort order and properties from a
//! [`NewTable`] (what the user declared, typed), with every column the user named checked
//! against the schema.

use std::collections::{BTreeMap, HashMap};
use std::str::FromStr;

use iceberg::spec::{
    FormatVersion, NullOrder, PartitionSpec, Schema, SortDirection, SortField, SortOrder, TableMetadata,
    TableMetadataBuilder, Transform, Type, UnboundPartitionSpec,
};

use super::terms::{PartitionTerm, SortTerm};
use super::{PROP_COMPRESSION, PROP_DEDUP_KEY, PROP_TARGET_FILE_SIZE};
use crate::{Error, Result};

/// What a user declares about a table that its first metadata records (the settings of
/// `config::TableConfig` a table keeps).
#[derive(Debug, Clone, Copy)]
pub struct NewTable<'a> {
    /// Partition terms; none: unpartitioned.
    pub partition_by: &'a [PartitionTerm],
    /// The sort order of its data files.
    pub sort_by: &'a [SortTerm],
    /// Columns whose value identifies a row.
    pub dedup_key: &'a [String],
    /// Parquet compression, as the user wrote it (checked when it was read).
    pub compression: &'a str,
    /// Target size of one data file, in bytes.
    pub target_file_size: u64,
    /// Table properties set at creation.
    pub properties: &'a BTreeMap<String, String>,
}

/// Builds the first metadata of a table at `location`.
pub fn create_table_metadata(schema: Schema, cfg: &NewTable<'_>, location: &str) -> Result<TableMetadata> {
    let spec = partition_spec(&schema, cfg.partition_by)?;
    let order = sort_order(&schema, cfg.sort_by)?;
    for col in cfg.dedup_key {
        primitive_column(&schema, col, "dedup key")?;
    }
    let mut props: HashMap<String, String> = cfg.properties.clone().into_iter().collect();
    props.remove("format-version"); // not a property: Floe writes format v2
    super::dedup_window_ms(&props)?;
    if !cfg.dedup_key.is_empty() {
        props.insert(PROP_DEDUP_KEY.into(), cfg.dedup_key.join(","));
    }
    props.insert(PROP_COMPRESSION.into(), cfg.compression.to_string());
    let codec = cfg.compression.split('(').next().unwrap_or("zstd").to_ascii_lowercase();
    props.insert("write.parquet.compression-codec".into(), codec);
    props.insert(PROP_TARGET_FILE_SIZE.into(), cfg.target_file_size.to_string());
    // Old metadata.json files are deleted as they fall out of the log (unless the user said
    // otherwise): a table committed every few seconds would otherwise pile them up forever.
    props.entry(super::PROP_DELETE_AFTER_COMMIT.into()).or_insert_with(|| "true".into());
    // Snapshots expire after an hour (the newest ten kept), so metadata.json stays small at a
    // commit every few seconds; Iceberg's default (five days) would keep ~100,000 of them.
    props.entry(super::maintain::PROP_MAX_SNAPSHOT_AGE_MS.into()).or_insert_with(|| "3600000".into());
    props.entry(super::maintain::PROP_MIN_SNAPSHOTS_TO_KEEP.into()).or_insert_with(|| "10".into());
    let built =
        TableMetadataBuilder::new(schema, spec, order, location.to_string(), FormatVersion::V2, props)?.build()?;
    Ok(built.metadata)
}

fn primitive_column<'a>(schema: &'a Schema, col: &str, role: &str) -> Result<&'a iceberg::spec::NestedFieldRef> {
    let f = schema.field_by_name(col).ok_or_else(|| {
        Error::Config(format!(
            "{role} column `{col}` is not in the table schema (columns: {})",
            schema.as_struct().fields().iter().map(|f| f.name.as_str()).collect::<Vec<_>>().join(", ")
        ))
    })?;
    if !matches!(f.field_type.as_ref(), Type::Primitive(_)) {
        return Err(Error::Config(format!("{role} column `{col}` is {}, not a primitive column", f.field_type)));
    }
    if in_repeated(schema, col) {
        return Err(Error::Config(format!("{role} column `{col}` is inside a list or map")));
    }
    Ok(f)
}

/// Whether a dotted path passes through a list or map.
fn in_repeated(schema: &Schema, col: &str) -> bool {
    let parts: Vec<&str> = col.split('.').collect();
    (1..parts.len()).any(|i| {
        schema
            .field_by_name(&parts[..i].join("."))
            .is_some_and(|f| matches!(f.field_type.as_ref(), Type::List(_) | Type::Map(_)))
    })
}

fn partition_spec(schema: &Schema, terms: &[PartitionTerm]) -> Result<UnboundPartitionSpec> {
    let mut b = UnboundPartitionSpec::builder().with_spec_id(0);
    for t in terms {
        let f = primitive_column(schema, &t.column, "partition")?;
        let transform = Transform::from_str(&t.transform)
            .map_err(|e| Error::Config(format!("partition transform `{}`: {e}", t.transform)))?;
        if transform.result_type(&f.field_type).is_err() {
            return Err(Error::Config(format!(
                "partition transform `{}` cannot apply to column `{}` of type {}",
                t.transform, t.column, f.field_type
            )));
        }
        if matches!(transform, Transform::Truncate(_))
            && matches!(f.field_type.as_ref(), Type::Primitive(iceberg::spec::PrimitiveType::Binary))
        {
            // The iceberg crate's transform takes no large binary (how binary columns decode),
            // so every batch would fail: refuse it here, once.
            return Err(Error::Config(format!(
                "partition transform `{}` on binary column `{}` is not supported; partition by bucket[N] or identity",
                t.transform, t.column
            )));
        }
        let base = t.column.replace('.', "_");
        let name = match transform {
            Transform::Identity => base,
            Transform::Year => format!("{base}_year"),
            Transform::Month => format!("{base}_month"),
            Transform::Day => format!("{base}_day"),
            Transform::Hour => format!("{base}_hour"),
            Transform::Bucket(_) => format!("{base}_bucket"),
            Transform::Truncate(_) => format!("{base}_trunc"),
            _ => format!("{base}_{}", t.transform),
        };
        b = b.add_partition_field(f.id, name, transform)?;
    }
    let spec = b.build();
    // Bind once to surface errors (duplicate names, redundant transforms) as configuration errors.
    PartitionSpec::builder(schema.clone())
        .add_unbound_fields(spec.fields().iter().cloned())
        .and_then(|b| b.build())
        .map_err(|e| Error::Config(format!("partition spec: {e}")))?;
    Ok(spec)
}

fn sort_order(schema: &Schema, terms: &[SortTerm]) -> Result<SortOrder> {
    if terms.is_empty() {
        return Ok(SortOrder::unsorted_order());
    }
    let mut b = SortOrder::builder();
    b.with_order_id(1);
    for t in terms {
        let f = primitive_column(schema, &t.column, "sort")?;
        b.with_sort_field(SortField {
            source_id: f.id,
            transform: Transform::Identity,
            direction: if t.descending { SortDirection::Descending } else { SortDirection::Ascending },
            null_order: if t.nulls_first { NullOrder::First } else { NullOrder::Last },
        });
    }
    Ok(b.build(schema)?)
}

/// The partition spec in Floe's text form (`day(event_time), identity(tenant_id)`).
pub fn partition_spec_text(spec: &PartitionSpec, schema: &Schema) -> String {
    spec.fields()
        .iter()
        .map(|f| {
            let col = schema.name_by_field_id(f.source_id).unwrap_or("?");
            match f.transform {
                Transform::Bucket(n) => format!("bucket({n}, {col})"),
                Transform::Truncate(n) => format!("truncate({n}, {col})"),
                t => format!("{t}({col})"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The sort order in Floe's text form (`tenant_id, event_time desc`).
pub fn sort_order_text(order: &SortOrder, schema: &Schema) -> String {
    order
        .fields
        .iter()
        .map(|f| {
            let col = schema.name_by_field_id(f.source_id).unwrap_or("?").to_string();
            let desc = f.direction == SortDirection::Descending;
            let nulls_first = f.null_order == NullOrder::First;
            match (desc, nulls_first) {
                (false, true) => col,
                (true, false) => format!("{col} desc"),
                (false, false) => format!("{col} asc nulls last"),
                (true, true) => format!("{col} desc nulls first"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use iceberg::spec::{NestedField, PrimitiveType};

    use super::*;

    #[test]
    fn a_partition_transform_no_batch_could_apply_is_refused_when_the_table_is_defined() {
        let schema = Schema::builder()
            .with_fields(vec![NestedField::optional(1, "b", Type::Primitive(PrimitiveType::Binary)).into()])
            .build()
            .unwrap();
        let term = |t: &str| vec![PartitionTerm { transform: t.into(), column: "b".into() }];
        let e = partition_spec(&schema, &term("truncate[4]")).unwrap_err().to_string();
        assert!(e.contains("not supported") && e.contains("`b`"), "{e}");
        partition_spec(&schema, &term("bucket[4]")).unwrap();
        partition_spec(&schema, &term("identity")).unwrap();
    }
}
