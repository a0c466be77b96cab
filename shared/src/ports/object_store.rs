//! The object store port: whole-object get/put, and ranged reads, addressed by absolute URI
//! (`file:///…`, `s3://…`).

use async_trait::async_trait;
use bytes::Bytes;

use crate::PortError;

/// What the store knows of an object without reading it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// Absolute URI of the object.
    pub uri: String,
    /// Size in bytes.
    pub size: u64,
    /// Opaque version of the content (S3 ETag; locally size + modification time). Together with
    /// the URI it identifies one source object: an overwrite is a new object.
    pub version: String,
    /// The store's own id of this version, where it keeps several (an S3 `versionId` on a
    /// versioned bucket): [`ObjectStore::get_version`] reads it even after an overwrite.
    pub version_id: Option<String>,
    /// When the object was last written (milliseconds since the epoch), where a listing says
    /// (the orphan sweep's safety age).
    pub modified_ms: Option<i64>,
}

impl ObjectMeta {
    /// An object known by URI, size and content version (no version id).
    pub fn new(uri: impl Into<String>, size: u64, version: impl Into<String>) -> Self {
        ObjectMeta { uri: uri.into(), size, version: version.into(), version_id: None, modified_ms: None }
    }
}

/// Objects addressed by absolute URI.
#[async_trait]
pub trait ObjectStore: Send + Sync {
    /// Reads a whole object. `NotFound` if it does not exist.
    async fn get(&self, uri: &str) -> Result<Bytes, PortError>;
    /// Reads the bytes `range` of an object (a Parquet footer, a column chunk). `NotFound` if it
    /// does not exist; `Invalid` if the range reaches past its end. The default reads the whole
    /// object; adapters that can read part of one override it.
    async fn get_range(&self, uri: &str, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
        let all = self.get(uri).await?;
        slice(uri, all, range)
    }
    /// Reads exactly the version `meta` names: by its version id where it has one, otherwise only
    /// if the current content still has `meta.version` (an S3 `If-Match` on the ETag). `None`
    /// when that version is gone (overwritten or deleted): its bytes can no longer be read, and a
    /// newer version's notification carries the new bytes. `Invalid` when it is there but can
    /// never be read as things stand (archived, access denied): the object is refused with that
    /// reason, not retried with its batch.
    async fn get_version(&self, meta: &ObjectMeta) -> Result<Option<Bytes>, PortError>;
    /// Reads an object's size and version.
    async fn head(&self, uri: &str) -> Result<ObjectMeta, PortError>;
    /// Writes (or overwrites) an object atomically: readers see the old or the new content.
    async fn put(&self, uri: &str, body: Bytes) -> Result<(), PortError>;
    /// Writes an object only if none exists at `uri`; `Conflict` otherwise.
    async fn put_if_absent(&self, uri: &str, body: Bytes) -> Result<(), PortError>;
    /// Lists objects under a URI prefix (recursively), in key order.
    async fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, PortError>;
    /// Deletes an object; deleting a missing object succeeds.
    async fn delete(&self, uri: &str) -> Result<(), PortError>;
}

/// `range` of an object's bytes `all`, or `Invalid` if it reaches past their end.
pub(crate) fn slice(uri: &str, all: Bytes, range: std::ops::Range<u64>) -> Result<Bytes, PortError> {
    check_range(uri, &range, all.len() as u64)?;
    Ok(all.slice(range.start as usize..range.end as usize))
}

/// `Invalid` unless `range` is a range of an object of `len` bytes.
pub(crate) fn check_range(uri: &str, range: &std::ops::Range<u64>, len: u64) -> Result<(), PortError> {
    if range.start > range.end || range.end > len {
        return Err(PortError::Invalid(format!("{uri}: bytes {range:?} of an object of {len}")));
    }
    Ok(())
}
