//! A table's current state as the roles see it: the pointer, the metadata it points at, and
//! what a writer derives from them ([`WriterTable`]).

use std::sync::Arc;

use arrow_schema::SchemaRef as ArrowSchemaRef;
use iceberg::spec::{PartitionSpecRef, SchemaRef, SortOrderRef, TableMetadata};

use super::{PROP_COMPRESSION, PROP_DEDUP_KEY, PROP_TARGET_FILE_SIZE};
use crate::config::{DEFAULT_COMPRESSION, DEFAULT_TARGET_FILE_SIZE, SortTerm};
use crate::convert::parquet::arrow_schema;
use crate::ports::{ObjectStore, Pointer, TablePointer};
use crate::{Error, Result, TableIdent};

/// A table's pointer and the metadata it points at.
#[derive(Debug, Clone)]
pub struct TableState {
    /// The catalog pointer this state was read through.
    pub pointer: Pointer,
    /// The metadata at `pointer.metadata_location`.
    pub metadata: Arc<TableMetadata>,
}

/// Loads a table's current state; `None` if the table does not exist.
pub async fn load_table(
    pointer: &dyn TablePointer,
    store: &dyn ObjectStore,
    table: &TableIdent,
) -> Result<Option<TableState>> {
    let Some(p) = pointer.load(table).await? else { return Ok(None) };
    let bytes = store.get(&p.metadata_location).await?;
    let metadata: TableMetadata = serde_json::from_slice(&bytes)?;
    Ok(Some(TableState { pointer: p, metadata: Arc::new(metadata) }))
}

/// What a writer needs to know about its destination table, derived from the metadata.
#[derive(Debug, Clone)]
pub struct WriterTable {
    /// The table.
    pub ident: TableIdent,
    /// Table location URI.
    pub location: String,
    /// Current schema.
    pub schema: SchemaRef,
    /// The same schema as Arrow, with field ids.
    pub arrow_schema: ArrowSchemaRef,
    /// Default partition spec.
    pub spec: PartitionSpecRef,
    /// Default sort order.
    pub sort_order: SortOrderRef,
    /// Cluster key, resolved to column paths.
    pub sort: Vec<SortTerm>,
    /// Dedup key columns.
    pub dedup_key: Vec<String>,
    /// Parquet compression.
    pub compression: String,
    /// Target data file size in bytes.
    pub target_file_size: u64,
}

impl WriterTable {
    /// Derives the writer's view from table metadata.
    pub fn from_metadata(ident: &TableIdent, m: &TableMetadata) -> Result<Self> {
        let schema = m.current_schema().clone();
        let sort_order = m.default_sort_order().clone();
        let sort = sort_order
            .fields
            .iter()
            .map(|f| {
                let column = schema
                    .name_by_field_id(f.source_id)
                    .ok_or_else(|| Error::Config(format!("sort field id {} not in schema", f.source_id)))?
                    .to_string();
                Ok(SortTerm {
                    column,
                    descending: f.direction == iceberg::spec::SortDirection::Descending,
                    nulls_first: f.null_order == iceberg::spec::NullOrder::First,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let props = m.properties();
        let dedup_key = props
            .get(PROP_DEDUP_KEY)
            .map(|s| s.split(',').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).collect())
            .unwrap_or_default();
        Ok(WriterTable {
            ident: ident.clone(),
            location: m.location().to_string(),
            arrow_schema: arrow_schema(&schema)?,
            schema,
            spec: m.default_partition_spec().clone(),
            sort_order,
            sort,
            dedup_key,
            compression: props.get(PROP_COMPRESSION).cloned().unwrap_or_else(|| DEFAULT_COMPRESSION.into()),
            target_file_size: props
                .get(PROP_TARGET_FILE_SIZE)
                .and_then(|v| v.parse().ok())
                .unwrap_or(DEFAULT_TARGET_FILE_SIZE),
        })
    }
}
