//! The commit queue's messages: the file manifest a writer hands the committer, the rewrite
//! request a compactor sends, and the create request a writer sends for a table it sees first
//! ([`CommitRequest`] tells them apart).
//!
//! Versioned JSON documents (documented in docs/MESSAGES.md). A file manifest names the destination table,
//! the source objects the batch consumed (their identities are the exactly-once keys), and the
//! data files written, each with its partition tuple and Iceberg metrics. Bounds use Iceberg's
//! binary single-value serialization, base64-encoded; partition values use Iceberg's JSON
//! single-value serialization. The committer needs nothing else to register the files: it never
//! opens them.

use std::collections::BTreeMap;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use iceberg::spec::{
    DataContentType, DataFile, DataFileBuilder, DataFileFormat, Datum, Literal, PartitionSpec, Schema, Struct, Type,
};
use serde::{Deserialize, Serialize};

use crate::convert::evolve::SchemaChange;
use crate::convert::parquet::FileMetrics;
use crate::{Error, Result, TableIdent};

/// The current message version.
pub const MESSAGE_VERSION: u32 = 1;

/// One source object: the unit of exactly-once.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRef {
    /// Identity: `uri#version`.
    pub id: String,
    /// Absolute URI.
    pub uri: String,
    /// Size in bytes.
    pub size: u64,
    /// Rows it held (before dedup).
    pub rows: u64,
    /// The store's id of the version read (an S3 `versionId`), so that a re-send of this source
    /// reads the same bytes. Absent from messages of older writers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    /// When the object was created (ms since the epoch: the S3 notification's `eventTime`, a
    /// local file's modification time), where known: the start of its freshness lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_ms: Option<i64>,
}

impl SourceRef {
    /// The source object this names: its URI, size and the version that was read.
    pub fn object(&self) -> crate::ports::ObjectMeta {
        let version = self.id.strip_prefix(&self.uri).and_then(|v| v.strip_prefix('#')).unwrap_or_default();
        crate::ports::ObjectMeta {
            version_id: self.version_id.clone(),
            modified_ms: self.created_ms,
            ..crate::ports::ObjectMeta::new(&self.uri, self.size, version)
        }
    }
}

/// One data file written by a writer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DataFileMeta {
    /// Absolute URI of the Parquet file.
    pub path: String,
    /// Size in bytes.
    pub file_size_in_bytes: u64,
    /// Rows.
    pub record_count: u64,
    /// Partition tuple, one JSON value per partition field (null for a null value), as Iceberg's
    /// JSON single-value serialization writes it. It cannot carry every value (a NaN or an
    /// infinity, a timestamp before 1970 with a fraction of a second): committers read
    /// [`DataFileMeta::partition_values`] when it is there, and this only from older writers.
    pub partition: Vec<serde_json::Value>,
    /// Partition tuple, exactly: one [`PartitionValue`] per field (None for a null value). Empty
    /// in messages of writers older than it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partition_values: Vec<Option<PartitionValue>>,
    /// Compressed bytes per field id.
    pub column_sizes: BTreeMap<i32, u64>,
    /// Values per field id.
    pub value_counts: BTreeMap<i32, u64>,
    /// Nulls per field id.
    pub null_value_counts: BTreeMap<i32, u64>,
    /// NaNs per float and double field id (empty from writers older than it).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nan_value_counts: BTreeMap<i32, u64>,
    /// Lower bounds per field id (base64 of the binary single-value serialization).
    pub lower_bounds: BTreeMap<i32, String>,
    /// Upper bounds per field id, likewise.
    pub upper_bounds: BTreeMap<i32, String>,
    /// Row group offsets.
    pub split_offsets: Vec<i64>,
    /// Sort order the rows follow.
    pub sort_order_id: Option<i32>,
}

/// One partition value as the iceberg crate holds it (timestamps and dates as their numbers,
/// decimals and uuids as 128-bit integers), exactly: floats travel as their bits, so a NaN, an
/// infinity or a negative zero arrives as it left; 128-bit integers and bytes as strings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum PartitionValue {
    /// A boolean.
    Boolean(bool),
    /// int, date.
    Int(i32),
    /// long, time, timestamps.
    Long(i64),
    /// A float's bits.
    FloatBits(u32),
    /// A double's bits.
    DoubleBits(u64),
    /// A string.
    String(String),
    /// binary, fixed: base64.
    Binary(String),
    /// decimal: the unscaled value, in decimal digits.
    Int128(String),
    /// uuid: its 128 bits, in decimal digits.
    Uint128(String),
}

impl PartitionValue {
    fn of(lit: &Literal) -> Result<Self> {
        use iceberg::spec::PrimitiveLiteral as P;
        let Literal::Primitive(p) = lit else {
            return Err(Error::internal(format!("a partition value is not a primitive: {lit:?}")));
        };
        Ok(match p {
            P::Boolean(v) => PartitionValue::Boolean(*v),
            P::Int(v) => PartitionValue::Int(*v),
            P::Long(v) => PartitionValue::Long(*v),
            P::Float(v) => PartitionValue::FloatBits(v.0.to_bits()),
            P::Double(v) => PartitionValue::DoubleBits(v.0.to_bits()),
            P::String(v) => PartitionValue::String(v.clone()),
            P::Binary(v) => PartitionValue::Binary(B64.encode(v)),
            P::Int128(v) => PartitionValue::Int128(v.to_string()),
            P::UInt128(v) => PartitionValue::Uint128(v.to_string()),
            P::AboveMax | P::BelowMin => {
                return Err(Error::data(format!("a partition value is out of its type's range: {p:?}")));
            }
        })
    }

    fn literal(&self) -> Result<Literal> {
        use iceberg::spec::PrimitiveLiteral as P;
        let bad = |e: &dyn std::fmt::Display| Error::message(format!("bad partition value {self:?}: {e}"));
        Ok(Literal::Primitive(match self {
            PartitionValue::Boolean(v) => P::Boolean(*v),
            PartitionValue::Int(v) => P::Int(*v),
            PartitionValue::Long(v) => P::Long(*v),
            PartitionValue::FloatBits(v) => P::Float(f32::from_bits(*v).into()),
            PartitionValue::DoubleBits(v) => P::Double(f64::from_bits(*v).into()),
            PartitionValue::String(v) => P::String(v.clone()),
            PartitionValue::Binary(v) => P::Binary(B64.decode(v).map_err(|e| bad(&e))?),
            PartitionValue::Int128(v) => P::Int128(v.parse().map_err(|e| bad(&e))?),
            PartitionValue::Uint128(v) => P::UInt128(v.parse().map_err(|e| bad(&e))?),
        }))
    }
}

/// A writer batch's result, sent to the commit queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileManifest {
    /// Message version ([`MESSAGE_VERSION`]).
    pub version: u32,
    /// Destination table.
    pub table: TableIdent,
    /// Deterministic id of the writer batch (a hash of its source ids).
    pub batch_id: String,
    /// Schema the files were written with, or, with `evolution`, the schema it evolves.
    pub schema_id: i32,
    /// Partition spec the files were written with.
    pub spec_id: i32,
    /// Source objects consumed.
    pub sources: Vec<SourceRef>,
    /// Data files written.
    pub files: Vec<DataFileMeta>,
    /// The schema change the files need, when the table's schema (`schema_id`) does not hold
    /// them as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evolution: Option<Box<SchemaEvolution>>,
    /// When the files were written (ms since the epoch; absent from older writers): the
    /// committer will not commit files older than its commit age limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_ms: Option<i64>,
    /// Which rows of its sources the files hold (absent from older writers: unknown). A run of
    /// the same table taking the same rows may write the sources of an overlapping manifest
    /// again itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<RowsTaken>,
}

/// Which rows of its source objects a writer batch took.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "take")]
pub enum RowsTaken {
    /// Every row.
    All,
    /// The rows a value route selects (routing by value: `route_by` in `floe.toml`).
    Routed(crate::route::RowRoute),
}

impl RowsTaken {
    /// What a writer with `route` takes.
    pub fn of(route: Option<&crate::config::RowRoute>) -> Self {
        route.map_or(RowsTaken::All, |r| RowsTaken::Routed(r.clone()))
    }
}

/// A writer's proposal of a schema change, committed with the first data that needs it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SchemaEvolution {
    /// The changes to the schema `schema_id`, in order, with the field ids the writer proposes.
    pub changes: Vec<SchemaChange>,
    /// The schema the files were written with (those changes applied; its id is not the
    /// table's).
    pub schema: Schema,
}

/// Why `source` cannot be one a writer sends, if it cannot: its id must be `<uri>#<version>`,
/// with no control character in either and no `#` in the version. That keeps [`batch_key`]
/// injective: its ids are joined by line breaks, so one id holding a line break could stand for
/// the sources of another batch and name that batch's files.
pub fn check_source_id(uri: &str, id: &str) -> std::result::Result<(), String> {
    if let Some(c) = uri.chars().find(|c| c.is_control()) {
        return Err(format!("source {uri:?} holds the control character {:?}, which a source id cannot carry", c));
    }
    let Some(version) = id.strip_prefix(uri).and_then(|v| v.strip_prefix('#')) else {
        return Err(format!("source id {id:?} is not its URI {uri:?}, '#' and its version"));
    };
    if version.chars().any(|c| c.is_control() || c == '#') {
        return Err(format!("source id {id:?} has a version holding '#' or a control character"));
    }
    Ok(())
}

/// The deterministic id of a writer batch of `sources`: a hash of their sorted ids. Its data
/// files' names start with it, and the committer admits a manifest only under the id of its own
/// sources (so no message can register another batch's files under fresh sources; the ids are
/// checked first, [`check_source_id`]).
pub fn batch_key(sources: &[SourceRef]) -> String {
    use sha2::{Digest, Sha256};
    let mut ids: Vec<&str> = sources.iter().map(|s| s.id.as_str()).collect();
    ids.sort_unstable();
    let mut h = Sha256::new();
    for id in ids {
        h.update(id.as_bytes());
        h.update(b"\n");
    }
    hex::encode(&h.finalize()[..10])
}

impl FileManifest {
    /// The schema the files were written with: the evolved one, or the table's `schema_id`.
    pub fn file_schema<'a>(&'a self, meta: &'a iceberg::spec::TableMetadata) -> Option<&'a Schema> {
        match &self.evolution {
            Some(e) => Some(&e.schema),
            None => meta.schema_by_id(self.schema_id).map(|s| s.as_ref()),
        }
    }

    /// Parses a message body, refusing versions this build does not know.
    pub fn from_json(body: &str) -> Result<Self> {
        #[derive(Deserialize)]
        struct Probe {
            version: u32,
        }
        let probe: Probe = serde_json::from_str(body)?;
        if probe.version != MESSAGE_VERSION {
            return Err(Error::message(format!(
                "file manifest version {} is not supported (this build reads version {MESSAGE_VERSION})",
                probe.version
            )));
        }
        Ok(serde_json::from_str(body)?)
    }

    /// Serializes the message.
    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string(self)?)
    }

    /// Total rows in the data files.
    pub fn rows(&self) -> u64 {
        self.files.iter().map(|f| f.record_count).sum()
    }
}

/// The `kind` of a rewrite request.
pub const REWRITE_KIND: &str = "rewrite";

/// A compaction's result, sent to the commit queue: replace `removed` by `added`.
///
/// The committer commits it as an Iceberg `replace` snapshot only if every removed file is still
/// live; otherwise it is stale and rejected (its added files are left to the orphan sweep).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RewriteRequest {
    /// Message version ([`MESSAGE_VERSION`]).
    pub version: u32,
    /// Always [`REWRITE_KIND`].
    pub kind: String,
    /// The table.
    pub table: TableIdent,
    /// Deterministic id of the compaction task (a hash of its inputs): the added files' names
    /// start with it.
    pub task_id: String,
    /// The snapshot the task was planned from.
    pub planned_snapshot_id: i64,
    /// That snapshot's sequence number: the added files' data sequence number.
    pub data_sequence_number: i64,
    /// Level of the added files.
    pub level: u32,
    /// Schema the added files were written with.
    pub schema_id: i32,
    /// Partition spec the added files were written with.
    pub spec_id: i32,
    /// Paths of the files replaced.
    pub removed: Vec<String>,
    /// Rows of the removed files.
    pub removed_rows: u64,
    /// Rows dropped as duplicates of a key kept elsewhere: `removed_rows` = added rows +
    /// `duplicates` + `deleted`.
    pub duplicates: u64,
    /// Rows dropped because another engine's delete files deleted them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub deleted: u64,
    /// Whether the compactor applied the delete files that apply to its inputs (an older one did
    /// not: its request for a table with delete files is refused).
    #[serde(default)]
    pub applies_deletes: bool,
    /// Whether the compactor knows late files (`pipeline::compact::plan`): an older one takes
    /// them for writers' files and would order their rows after younger copies, so its request
    /// removing one is refused.
    #[serde(default)]
    pub knows_late: bool,
    /// Whether the added files carry their rows' lineage (`_row_id`, `_last_updated_sequence_number`):
    /// a compactor of a v3 table writes them; a rewrite without them is refused on a v3 table.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub row_lineage: bool,
    /// Delete files that applied only to the removed files, as of the plan: removed with them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed_deletes: Vec<crate::table::DeleteRef>,
    /// The files written.
    pub added: Vec<DataFileMeta>,
    /// When the added files were written (ms since the epoch; absent from older compactors).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub written_ms: Option<i64>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl RewriteRequest {
    /// Rows in the added files.
    pub fn added_rows(&self) -> u64 {
        self.added.iter().map(|f| f.record_count).sum()
    }

    /// Added rows, duplicates and deleted rows together: what the removed rows must come to;
    /// `None` past `u64` (a forged request could otherwise wrap the sum to balance).
    pub fn accounted_rows(&self) -> Option<u64> {
        self.added
            .iter()
            .try_fold(0u64, |n, f| n.checked_add(f.record_count))?
            .checked_add(self.duplicates)?
            .checked_add(self.deleted)
    }
}

/// The `kind` of a create request.
pub const CREATE_KIND: &str = "create";

/// A writer's request to create a table it has data for and that does not exist yet.
///
/// Writers define a new table (its schema from the first object's Avro schema, its partition
/// spec, sort order and properties from the configuration) but never register it: the committer
/// is the only component that writes table metadata or catalog pointers. It writes `metadata`
/// as the table's first metadata.json and creates the catalog entry if it is still absent; a
/// request for a table that exists by then is a duplicate (the first definition wins, and
/// writers conform to it or quarantine what does not fit).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CreateRequest {
    /// Message version ([`MESSAGE_VERSION`]).
    pub version: u32,
    /// Always [`CREATE_KIND`].
    pub kind: String,
    /// The table.
    pub table: TableIdent,
    /// The object whose schema defines the table (for the log).
    pub defined_by: String,
    /// The table's first metadata: no snapshots, format v2.
    pub metadata: iceberg::spec::TableMetadata,
}

impl CreateRequest {
    /// A request to create `table` as `metadata`, defined by the object `defined_by`.
    pub fn new(table: TableIdent, defined_by: String, metadata: iceberg::spec::TableMetadata) -> Self {
        CreateRequest { version: MESSAGE_VERSION, kind: CREATE_KIND.into(), table, defined_by, metadata }
    }
}

/// A message on the commit queue.
#[derive(Debug, Clone, PartialEq)]
pub enum CommitRequest {
    /// A writer batch's files: an append.
    Append(FileManifest),
    /// A compaction's files: a replace.
    Rewrite(RewriteRequest),
    /// A new table's definition.
    Create(Box<CreateRequest>),
}

impl CommitRequest {
    /// Parses a message body by its `kind` (absent: a file manifest), refusing versions this build
    /// does not know.
    pub fn from_json(body: &str) -> Result<Self> {
        #[derive(Deserialize)]
        struct Probe {
            version: u32,
            #[serde(default)]
            kind: Option<String>,
        }
        let probe: Probe = serde_json::from_str(body)?;
        match probe.kind.as_deref() {
            None => Ok(CommitRequest::Append(FileManifest::from_json(body)?)),
            Some(REWRITE_KIND) if probe.version == MESSAGE_VERSION => {
                Ok(CommitRequest::Rewrite(serde_json::from_str(body)?))
            }
            Some(CREATE_KIND) if probe.version == MESSAGE_VERSION => {
                Ok(CommitRequest::Create(Box::new(serde_json::from_str(body)?)))
            }
            Some(kind @ (REWRITE_KIND | CREATE_KIND)) => Err(Error::message(format!(
                "{kind} request version {} is not supported (this build reads version {MESSAGE_VERSION})",
                probe.version
            ))),
            Some(other) => Err(Error::message(format!("commit message kind `{other}` is not known to this build"))),
        }
    }

    /// The destination table.
    pub fn table(&self) -> &TableIdent {
        match self {
            CommitRequest::Append(m) => &m.table,
            CommitRequest::Rewrite(r) => &r.table,
            CommitRequest::Create(c) => &c.table,
        }
    }
}

impl DataFileMeta {
    /// Builds the entry for a written file.
    pub fn new(
        path: String,
        size: u64,
        partition: &Struct,
        partition_type: &iceberg::spec::StructType,
        metrics: &FileMetrics,
        sort_order_id: Option<i32>,
    ) -> Result<Self> {
        let partition_values =
            partition.iter().map(|v| v.map(PartitionValue::of).transpose()).collect::<Result<Vec<_>>>()?;
        // The JSON form, for committers older than `partition_values`; a value it cannot carry
        // (or whose formatting would panic in the iceberg crate) is written null there.
        let partition = partition
            .iter()
            .zip(partition_type.fields())
            .map(|(v, f)| match v {
                Some(lit) if crate::table::renders(&f.field_type, lit) => {
                    Ok(lit.clone().try_into_json(&f.field_type)?)
                }
                _ => Ok(serde_json::Value::Null),
            })
            .collect::<Result<Vec<_>>>()?;
        let enc = |m: &BTreeMap<i32, Datum>| -> Result<BTreeMap<i32, String>> {
            m.iter().map(|(k, d)| Ok((*k, B64.encode(d.to_bytes()?)))).collect()
        };
        Ok(DataFileMeta {
            path,
            file_size_in_bytes: size,
            record_count: metrics.record_count,
            partition,
            partition_values,
            column_sizes: metrics.column_sizes.clone(),
            value_counts: metrics.value_counts.clone(),
            null_value_counts: metrics.null_value_counts.clone(),
            nan_value_counts: metrics.nan_value_counts.clone(),
            lower_bounds: enc(&metrics.lower_bounds)?,
            upper_bounds: enc(&metrics.upper_bounds)?,
            split_offsets: metrics.split_offsets.clone(),
            sort_order_id,
        })
    }

    /// Converts to an Iceberg `DataFile` of `spec`, decoding bounds with `schema`'s types.
    pub fn to_data_file(&self, schema: &Schema, spec: &PartitionSpec) -> Result<DataFile> {
        self.to_data_file_of(schema, schema, spec)
    }

    /// [`DataFileMeta::to_data_file`] for a file written with `file_schema`, registered in a
    /// table whose schema is now `schema`: bounds are read as the file's types and widened to
    /// the table's (a promoted column).
    pub fn to_data_file_of(&self, file_schema: &Schema, schema: &Schema, spec: &PartitionSpec) -> Result<DataFile> {
        let ptype = spec.partition_type(file_schema)?;
        if ptype.fields().len() != self.partition.len() {
            return Err(Error::message(format!(
                "data file {} has {} partition values but spec {} has {} fields",
                self.path,
                self.partition.len(),
                spec.spec_id(),
                ptype.fields().len()
            )));
        }
        let partition: Struct = if self.partition_values.is_empty() {
            self.partition
                .iter()
                .zip(ptype.fields())
                .map(|(v, f)| Ok(Literal::try_from_json(v.clone(), &f.field_type)?))
                .collect::<Result<Vec<Option<Literal>>>>()?
                .into_iter()
                .collect()
        } else if self.partition_values.len() != self.partition.len() {
            return Err(Error::message(format!(
                "data file {} has two partition tuples of different lengths",
                self.path
            )));
        } else {
            self.partition_values
                .iter()
                .map(|v| v.as_ref().map(PartitionValue::literal).transpose())
                .collect::<Result<Vec<Option<Literal>>>>()?
                .into_iter()
                .collect()
        };
        let dec = |m: &BTreeMap<i32, String>| -> Result<std::collections::HashMap<i32, Datum>> {
            let mut out = std::collections::HashMap::new();
            for (id, b64) in m {
                let prim = |s: &Schema| match s.field_by_id(*id).map(|f| f.field_type.as_ref()) {
                    Some(Type::Primitive(p)) => Some(p.clone()),
                    _ => None,
                };
                let (Some(written), Some(now)) = (prim(file_schema), prim(schema)) else {
                    continue; // a column dropped from the schema: its bound is meaningless now
                };
                let bytes = B64.decode(b64).map_err(|e| Error::message_from(format!("bad bound for field {id}"), e))?;
                out.insert(*id, widen(Datum::try_from_bytes(&bytes, written)?, &now)?);
            }
            Ok(out)
        };
        let mut b = DataFileBuilder::default();
        b.content(DataContentType::Data)
            .file_path(self.path.clone())
            .file_format(DataFileFormat::Parquet)
            .partition(partition)
            .partition_spec_id(spec.spec_id())
            .record_count(self.record_count)
            .file_size_in_bytes(self.file_size_in_bytes)
            .column_sizes(self.column_sizes.iter().map(|(k, v)| (*k, *v)).collect())
            .value_counts(self.value_counts.iter().map(|(k, v)| (*k, *v)).collect())
            .null_value_counts(self.null_value_counts.iter().map(|(k, v)| (*k, *v)).collect())
            .nan_value_counts(self.nan_value_counts.iter().map(|(k, v)| (*k, *v)).collect())
            .lower_bounds(dec(&self.lower_bounds)?)
            .upper_bounds(dec(&self.upper_bounds)?)
            .split_offsets(Some(self.split_offsets.clone()));
        if let Some(id) = self.sort_order_id {
            b.sort_order_id(id);
        }
        b.build().map_err(|e| Error::message_from(format!("data file {}", self.path), e))
    }
}

/// A bound written as one type, as the value of the type its column was promoted to (exactly:
/// Iceberg's promotions widen without changing a value).
fn widen(d: Datum, to: &iceberg::spec::PrimitiveType) -> Result<Datum> {
    use iceberg::spec::{PrimitiveLiteral as L, PrimitiveType as P};
    if d.data_type() == to {
        return Ok(d);
    }
    let out = match (d.literal(), to) {
        (L::Int(v), P::Long) => Datum::long(i64::from(*v)),
        (L::Float(v), P::Double) => Datum::double(f64::from(v.0)),
        // The same unscaled bytes at the same scale: a wider precision reads them as they are.
        (L::Int128(_), P::Decimal { .. }) => Datum::try_from_bytes(&d.to_bytes()?, to.clone())?,
        _ => return Err(Error::data(format!("a {} bound cannot be read as {to}", d.data_type()))),
    };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use iceberg::spec::{
        NestedField, PartitionSpec, PrimitiveLiteral as L, PrimitiveType as P, Schema, Transform, Type,
    };

    use super::*;

    /// Partition values the JSON form cannot carry (a NaN, an infinity, a negative zero, a
    /// timestamp before 1970 with a fraction of a second, whose formatting panics in the
    /// iceberg crate) arrive at the committer exactly, and the JSON form leaves them null.
    #[test]
    fn partition_values_travel_exactly() {
        let schema = Schema::builder()
            .with_fields(vec![
                NestedField::optional(1, "x", Type::Primitive(P::Double)).into(),
                NestedField::optional(2, "ts", Type::Primitive(P::Timestamptz)).into(),
                NestedField::optional(3, "d", Type::Primitive(P::Decimal { precision: 38, scale: 2 })).into(),
            ])
            .build()
            .unwrap();
        let spec = PartitionSpec::builder(schema.clone())
            .add_partition_field("x", "x", Transform::Identity)
            .unwrap()
            .add_partition_field("ts", "ts", Transform::Identity)
            .unwrap()
            .add_partition_field("d", "d", Transform::Identity)
            .unwrap()
            .build()
            .unwrap();
        let ptype = spec.partition_type(&schema).unwrap();
        let nan = f64::from_bits(0x7ff8_0000_0000_0abc);
        for (x, ts) in [(nan, -14_182_939_500_000), (f64::INFINITY, -1), (-0.0, 1_700_000_000_123_456)] {
            let values = vec![
                Some(Literal::Primitive(L::Double(x.into()))),
                Some(Literal::Primitive(L::Long(ts))),
                Some(Literal::Primitive(L::Int128(-170_141_183_460_469_231_731_687_303_715_884_105_727))),
            ];
            let partition: Struct = values.clone().into_iter().collect();
            let meta =
                DataFileMeta::new("s3://b/f.parquet".into(), 1, &partition, &ptype, &FileMetrics::default(), None)
                    .unwrap();
            let meta: DataFileMeta = serde_json::from_str(&serde_json::to_string(&meta).unwrap()).unwrap();
            let got = meta.to_data_file(&schema, &spec).unwrap().partition().clone();
            let got: Vec<Option<Literal>> = got.iter().map(|v| v.cloned()).collect();
            match (&got[0], &values[0]) {
                (Some(Literal::Primitive(L::Double(a))), Some(Literal::Primitive(L::Double(b)))) => {
                    assert_eq!(a.0.to_bits(), b.0.to_bits(), "{x}: the very bits")
                }
                other => panic!("{other:?}"),
            }
            assert_eq!(got[1..], values[1..]);
            assert_eq!(meta.partition[0].is_null(), !x.is_finite(), "{:?}", meta.partition);
            assert_eq!(meta.partition[1].is_null(), ts < 0 && ts % 1_000_000 != 0, "{:?}", meta.partition);
            assert!(!crate::table::partition_path(&spec, &schema, &partition).is_empty());
        }
    }

    /// The rows a manifest took travel in the documented form (docs/MESSAGES.md); an older
    /// writer's manifest, without them, says nothing (not "all").
    #[test]
    fn rows_taken_have_the_documented_form_and_absent_means_unknown() {
        let routed = RowsTaken::Routed(crate::route::RowRoute {
            column: "event_type".into(),
            values: ["click".to_string()].into(),
            others: false,
        });
        let text = serde_json::to_string(&routed).unwrap();
        assert_eq!(text, r#"{"take":"routed","column":"event_type","values":["click"],"others":false}"#);
        assert_eq!(serde_json::from_str::<RowsTaken>(&text).unwrap(), routed);
        assert_eq!(serde_json::to_string(&RowsTaken::All).unwrap(), r#"{"take":"all"}"#);
        let old = r#"{"version":1,"table":"a.b","batch_id":"x","schema_id":0,"spec_id":0,"sources":[],"files":[]}"#;
        assert_eq!(FileManifest::from_json(old).unwrap().rows, None);
    }
}
