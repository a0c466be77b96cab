//! A table's current state as the roles see it: the pointer, the metadata it points at, and
//! what a writer derives from them ([`WriterTable`]).

use std::collections::HashSet;
use std::sync::Arc;

use arrow_schema::SchemaRef as ArrowSchemaRef;
use iceberg::spec::{FormatVersion, PartitionSpecRef, SchemaRef, SortOrderRef, TableMetadata};

use super::terms::{DEFAULT_COMPRESSION, DEFAULT_TARGET_FILE_SIZE, SortTerm};
use super::{PROP_COMPRESSION, PROP_DEDUP_KEY, PROP_TARGET_FILE_SIZE};
use crate::convert::conform::{Match, NameMap, lacks_field_ids};
use crate::convert::evolve::{Constraints, Evolution};
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
    let metadata: TableMetadata = serde_json::from_slice(&bytes).map_err(|e| {
        let v: Option<serde_json::Value> = serde_json::from_slice(&bytes).ok();
        match v.as_ref().and_then(unreadable_column) {
            Some((column, ty)) => Error::UnsupportedTableFeature {
                table: table.to_string(),
                feature: format!(
                    "column `{column}` of type {ty} (format v3), which Floe can neither read nor write yet"
                ),
            },
            None => e.into(),
        }
    })?;
    // The `iceberg` crate drops a default it cannot read (a nanosecond timestamp's, a float's
    // "NaN"): Floe would then write nulls where the default belongs.
    if bytes.windows(9).any(|w| w == b"-default\"") {
        let v: serde_json::Value = serde_json::from_slice(&bytes)?;
        if let Some(column) = unread_default(&v, &metadata) {
            return Err(Error::UnsupportedTableFeature {
                table: table.to_string(),
                feature: format!("a default value on column `{column}` that Floe cannot read"),
            });
        }
    }
    Ok(Some(TableState { pointer: p, metadata: Arc::new(metadata) }))
}

/// The first column of `metadata`'s current schema (by dotted path) that its JSON gives a
/// default which the parsed `parsed` lacks.
fn unread_default(metadata: &serde_json::Value, parsed: &TableMetadata) -> Option<String> {
    use serde_json::Value;
    fn walk(ty: &Value, path: &str, schema: &iceberg::spec::Schema) -> Option<String> {
        let o = ty.as_object()?;
        let children: Vec<(&Value, String)> = match o.get("type").and_then(Value::as_str) {
            Some("struct") => o.get("fields")?.as_array()?.iter().map(|f| (f, path.to_string())).collect(),
            Some("list") => vec![(o.get("element")?, format!("{path}.element"))],
            Some("map") => vec![(o.get("key")?, format!("{path}.key")), (o.get("value")?, format!("{path}.value"))],
            _ => return None,
        };
        for (child, path) in children {
            // A struct's field: its defaults, then its type.
            if let (Some(id), Some(name)) =
                (child.get("id").and_then(Value::as_i64), child.get("name").and_then(Value::as_str))
            {
                let path = if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
                let field = schema.field_by_id(id as i32);
                let lost = |key: &str, have: Option<&iceberg::spec::Literal>| {
                    child.get(key).is_some_and(|d| !d.is_null()) && have.is_none()
                };
                if field.is_none_or(|f| {
                    lost("initial-default", f.initial_default.as_ref())
                        || lost("write-default", f.write_default.as_ref())
                }) {
                    return Some(path);
                }
                if let Some(found) = child.get("type").and_then(|t| walk(t, &path, schema)) {
                    return Some(found);
                }
            } else if let Some(found) = walk(child, &path, schema) {
                return Some(found);
            }
        }
        None
    }
    let id = parsed.current_schema().schema_id();
    let schemas = metadata.get("schemas").and_then(Value::as_array).into_iter().flatten();
    let current = schemas.into_iter().find(|s| s.get("schema-id").and_then(Value::as_i64) == Some(i64::from(id)))?;
    walk(current, "", parsed.current_schema())
}

/// The first column (by dotted path) of a metadata document's schemas whose type Floe cannot
/// read (the `iceberg` crate has no `variant`, `geometry`, `geography` or `unknown`), and that
/// type: what an otherwise unparseable metadata file is refused for, by name.
fn unreadable_column(metadata: &serde_json::Value) -> Option<(String, String)> {
    use serde_json::Value;
    fn walk(ty: &Value, path: &str) -> Option<(String, String)> {
        match ty {
            Value::String(t) => {
                let unreadable = ["variant", "unknown"].contains(&t.as_str())
                    || t.starts_with("geometry")
                    || t.starts_with("geography");
                unreadable.then(|| (path.to_string(), t.clone()))
            }
            Value::Object(o) => match o.get("type").and_then(Value::as_str) {
                Some("struct") => o.get("fields")?.as_array()?.iter().find_map(|f| {
                    let name = f.get("name").and_then(Value::as_str).unwrap_or("?");
                    let path = if path.is_empty() { name.to_string() } else { format!("{path}.{name}") };
                    walk(f.get("type")?, &path)
                }),
                Some("list") => walk(o.get("element")?, &format!("{path}.element")),
                Some("map") => walk(o.get("key")?, &format!("{path}.key"))
                    .or_else(|| walk(o.get("value")?, &format!("{path}.value"))),
                _ => None,
            },
            _ => None,
        }
    }
    let schemas = metadata.get("schemas").and_then(Value::as_array).into_iter().flatten();
    schemas.chain(metadata.get("schema")).find_map(|s| walk(s, ""))
}

/// A metadata file's bytes: the spec's JSON, its snapshots in commit order (by sequence number,
/// then time), as Iceberg Java writes them. iceberg-rust keeps snapshots in a hash map and would
/// write them in that map's order, which readers that take the list's last entry for the newest
/// get wrong.
pub fn metadata_json(meta: &TableMetadata) -> Result<bytes::Bytes> {
    use serde_json::Value;
    let mut v = serde_json::to_value(meta)?;
    if let Some(Value::Array(snapshots)) = v.get_mut("snapshots") {
        let field = |s: &Value, k: &str| s.get(k).and_then(Value::as_i64).unwrap_or(0);
        snapshots.sort_by_key(|s| (field(s, "sequence-number"), field(s, "timestamp-ms"), field(s, "snapshot-id")));
    }
    Ok(bytes::Bytes::from(serde_json::to_vec(&v)?))
}

/// Refuses a table Floe cannot append to. Floe creates format v2 tables and appends to v2 and
/// v3 ones (assigning v3 row ids: see `table::lineage`); a v1 table's manifests have no sequence
/// numbers, and a v3 column default is not written yet. Every role (writer, compactor,
/// committer) stops before writing anything.
pub fn ensure_supported(table: &str, m: &TableMetadata) -> Result<()> {
    match m.format_version() {
        FormatVersion::V2 => Ok(()),
        FormatVersion::V3 => super::lineage::ensure_appendable(table, m),
        v => Err(Error::UnsupportedFormat { table: table.to_string(), version: v as u8 }),
    }
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
    /// Parquet compression (`floe.parquet-compression`), as the table states it: read
    /// ([`terms::parse_compression`](super::terms::parse_compression)) when a file is written.
    pub compression: String,
    /// Target data file size in bytes.
    pub target_file_size: u64,
    /// The highest field id the table has assigned (or, once evolved, proposes).
    pub last_column_id: i32,
    /// The table's schemas before the current one, oldest first.
    pub history: Vec<SchemaRef>,
    /// Partition field names of every spec the table has had (no column may take one).
    pub partition_names: HashSet<String>,
    /// The table's name mapping (`schema.name-mapping.default`), by which a data file without
    /// field ids is read: `Ok(None)` when it has none, `Err` why it does not parse.
    pub name_mapping: Arc<std::result::Result<Option<NameMap>, String>>,
    /// Whether the table tracks row lineage (format v3): a rewrite of its rows carries each
    /// row's `_row_id` and `_last_updated_sequence_number` ([`WriterTable::for_rewrite`]).
    pub tracks_rows: bool,
    /// The current schema's column defaults (format v3): `initial-default`s, which fill a data
    /// file's missing column when it is read, and `write-default`s, which fill an input's.
    pub(crate) defaults: Arc<(crate::convert::conform::Defaults, crate::convert::conform::Defaults)>,
}

impl WriterTable {
    /// Derives the writer's view from table metadata.
    pub fn from_metadata(ident: &TableIdent, m: &TableMetadata) -> Result<Self> {
        ensure_supported(&ident.to_string(), m)?;
        let schema = m.current_schema().clone();
        let sort_order = m.default_sort_order().clone();
        let sort = sort_order
            .fields
            .iter()
            .map(|f| {
                let column = schema
                    .name_by_field_id(f.source_id)
                    .ok_or_else(|| Error::data(format!("sort field id {} not in schema", f.source_id)))?
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
            last_column_id: m.last_column_id(),
            partition_names: m.partition_specs_iter().flat_map(|s| s.fields().iter().map(|f| f.name.clone())).collect(),
            name_mapping: Arc::new(NameMap::of(props)),
            tracks_rows: super::lineage::tracks_rows(m),
            defaults: Arc::new(match super::lineage::tracks_rows(m) {
                true => super::lineage::defaults(m.current_schema()),
                false => Default::default(),
            }),
            history: {
                let mut h: Vec<SchemaRef> =
                    m.schemas_iter().filter(|s| s.schema_id() != m.current_schema_id()).cloned().collect();
                h.sort_by_key(|s| s.schema_id());
                h
            },
        })
    }

    /// How the columns of data file `path` (its Arrow fields `file`) find the table's: by field
    /// id, and, where the file has none (another engine's `add_files` or `migrate`), by the
    /// table's name mapping, as the spec's column projection says. Without a usable mapping such
    /// a file is refused, as PyIceberg refuses to read it, rather than read as nulls.
    pub fn file_match(&self, path: &str, file: &arrow_schema::Fields) -> Result<Match<'_>> {
        if !lacks_field_ids(file) {
            return Ok(Match::Id);
        }
        match self.name_mapping.as_ref() {
            Ok(Some(mapping)) => Ok(Match::IdOrName(mapping)),
            Ok(None) => Err(Error::data(format!(
                "data file {path} has columns without Iceberg field ids (another engine's add_files or migrate) \
                 and table {} has no {} to read them by",
                self.ident,
                iceberg::spec::DEFAULT_SCHEMA_NAME_MAPPING
            ))),
            Err(why) => Err(Error::data(format!("data file {path} has columns without Iceberg field ids and {why}"))),
        }
    }

    /// The view a rewrite reads and writes rows through: in a table that tracks row lineage, its
    /// Arrow schema has the two lineage columns after the table's.
    pub fn for_rewrite(&self) -> WriterTable {
        match self.tracks_rows {
            true => {
                WriterTable { arrow_schema: super::lineage::with_lineage_columns(&self.arrow_schema), ..self.clone() }
            }
            false => self.clone(),
        }
    }

    /// What schema evolution may not change: the key columns (partition sources, sort and
    /// dedup keys), the partition field names, and the earlier schemas for old names.
    pub fn constraints(&self) -> Constraints {
        let mut key_columns: HashSet<i32> = self.spec.fields().iter().map(|f| f.source_id).collect();
        key_columns.extend(self.sort_order.fields.iter().map(|f| f.source_id));
        key_columns.extend(self.dedup_key.iter().filter_map(|c| self.schema.field_by_name(c).map(|f| f.id)));
        Constraints {
            key_columns,
            partition_names: self.partition_names.clone(),
            history: self.history.clone(),
            defaults: self.tracks_rows,
        }
    }

    /// This view with its schema evolved (see `convert::evolve`). The schema before joins the
    /// history, so that a later object of the batch still on a name the evolution changed finds
    /// its column.
    pub fn evolved(&self, evolution: &Evolution) -> Result<WriterTable> {
        let mut history = self.history.clone();
        history.push(self.schema.clone());
        Ok(WriterTable {
            schema: Arc::new(evolution.schema.clone()),
            arrow_schema: arrow_schema(&evolution.schema)?,
            defaults: Arc::new(match self.tracks_rows {
                true => super::lineage::defaults(&evolution.schema),
                false => Default::default(),
            }),
            last_column_id: evolution.last_column_id,
            history,
            ..self.clone()
        })
    }
}
