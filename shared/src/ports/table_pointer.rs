//! The table pointer port: a catalog reduced to "where is the current metadata.json" plus a
//! conditional swap. The committer builds the metadata itself; the swap is the commit. A catalog
//! that writes metadata.json itself (an Iceberg REST catalog) takes the commit as changes
//! instead ([`TablePointer::writes_metadata`], [`TablePointer::commit`]).

use std::fmt;
use std::str::FromStr;

use async_trait::async_trait;
use iceberg::spec::TableMetadata;

use crate::{Error, PortError};

/// A table name: a namespace and a name (`analytics.events`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct TableIdent {
    /// The namespace (one level).
    pub namespace: String,
    /// The table name.
    pub name: String,
}

impl TableIdent {
    /// Builds an identifier from its parts.
    pub fn new(namespace: impl Into<String>, name: impl Into<String>) -> Self {
        TableIdent { namespace: namespace.into(), name: name.into() }
    }
}

impl fmt::Display for TableIdent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.namespace, self.name)
    }
}

impl FromStr for TableIdent {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let valid = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
        match s.split_once('.') {
            Some((ns, name)) if valid(ns) && valid(name) => Ok(TableIdent::new(ns, name)),
            _ => Err(Error::Config(format!(
                "table name `{s}` must be NAMESPACE.NAME (letters, digits, `_`, `-`), e.g. `default.events`"
            ))),
        }
    }
}

impl TryFrom<String> for TableIdent {
    type Error = Error;
    fn try_from(s: String) -> Result<Self, Error> {
        s.parse()
    }
}

impl From<TableIdent> for String {
    fn from(t: TableIdent) -> String {
        t.to_string()
    }
}

/// The current pointer of a table, with the token a conditional swap must present.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pointer {
    /// URI of the current metadata.json.
    pub metadata_location: String,
    /// Backend version token (the previous location, a version number, a Glue VersionId).
    pub version: String,
}

/// What a catalog that writes metadata answers to a commit: the new pointer and, where it
/// says, the table's metadata as it now stands (which may hold more than the commit: changes
/// others made that the catalog merged, or later commits found on a read-back).
#[derive(Debug, Clone)]
pub struct Committed {
    /// Where the table now points.
    pub pointer: Pointer,
    /// The catalog's metadata at that pointer, if it sent it.
    pub metadata: Option<TableMetadata>,
}

/// Load and conditionally swap table pointers.
#[async_trait]
pub trait TablePointer: Send + Sync {
    /// The table's current pointer, or `None` if the table does not exist.
    async fn load(&self, table: &TableIdent) -> Result<Option<Pointer>, PortError>;
    /// Registers a new table; `Conflict` if it already exists.
    async fn create(&self, table: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError>;
    /// Points the table at `new_location` if it still points where `expected` says;
    /// `Conflict` otherwise (someone else committed, or a zombie lost its fence).
    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError>;
    /// Where a new table's files must go when the catalog decides (Amazon S3 Tables gives each
    /// table storage of its own, assigned when the table is created: this call creates it,
    /// empty, if missing). `None`: under Floe's warehouse, in the usual layout.
    async fn assign_location(&self, _table: &TableIdent) -> Result<Option<String>, PortError> {
        Ok(None)
    }
    /// Whether the catalog's service maintains the tables' files itself (S3 Tables: its own
    /// snapshot expiry and unreferenced-file removal, on storage that refuses deletes and
    /// listings). Floe then never expires snapshots nor deletes or lists files there.
    fn manages_files(&self) -> bool {
        false
    }
    /// Whether the catalog writes each new metadata.json itself from the changes it is sent
    /// (an Iceberg REST catalog's `updateTable`). The committer then writes no metadata file
    /// and commits with [`TablePointer::commit`] instead of [`TablePointer::swap`]; old
    /// metadata files are the catalog's to delete.
    fn writes_metadata(&self) -> bool {
        false
    }
    /// Commits `next`, planned over `base` (the metadata `expected` points at), as changes the
    /// catalog applies if the table is still at `base` (same table uuid, same `main` snapshot);
    /// `Conflict` otherwise. Only for catalogs that [write metadata](TablePointer::writes_metadata).
    async fn commit(
        &self,
        table: &TableIdent,
        _expected: &Pointer,
        _base: &TableMetadata,
        _next: &TableMetadata,
    ) -> Result<Committed, PortError> {
        Err(PortError::Invalid(format!("the catalog of {table} takes metadata files, not changes")))
    }
}
