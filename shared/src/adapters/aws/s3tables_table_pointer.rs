//! `TablePointer` on Amazon S3 Tables: the table bucket is the catalog, a namespace is Floe's
//! namespace, and each table's pointer is its metadata location with a `versionToken`.
//!
//! | S3 Tables | Floe |
//! |---|---|
//! | `GetTableMetadataLocation` | `load` (a table with no metadata location yet loads as absent) |
//! | `UpdateTableMetadataLocation` with the `versionToken` read | `swap` (and `create`): the service refuses a stale token with `ConflictException` |
//! | `CreateNamespace`, `CreateTable` (empty, format `ICEBERG`) | [`TablePointer::assign_location`]: the table's `warehouseLocation` is where all its files must live |
//!
//! S3 Tables maintains the files itself (compaction, snapshot expiry, unreferenced-file
//! removal) on storage that refuses `DeleteObject` and listings: [`TablePointer::manages_files`]
//! is true, so Floe's committer leaves expiry and deletion to it (see `docs/ARCHITECTURE.md`).
//!
//! An update whose answer is lost or unreadable (a timeout; moto 5.2.5 answers with a
//! `namespace` string where the SDK expects a list) is settled by reading the pointer back: it
//! landed if the table now names the new location.

use async_trait::async_trait;
use aws_sdk_s3tables::types::OpenTableFormat;

use super::error;
use crate::PortError;
use crate::ports::{Pointer, TableIdent, TablePointer};

/// The tables of one S3 table bucket.
#[derive(Debug, Clone)]
pub struct S3TablesPointer {
    client: aws_sdk_s3tables::Client,
    bucket_arn: String,
}

/// What `GetTableMetadataLocation` says about a table that exists.
struct Found {
    version_token: String,
    metadata_location: Option<String>,
    warehouse_location: String,
}

impl S3TablesPointer {
    /// The tables of the table bucket `bucket_arn` (`arn:aws:s3tables:REGION:ACCOUNT:bucket/NAME`).
    pub fn new(client: aws_sdk_s3tables::Client, bucket_arn: impl Into<String>) -> Self {
        S3TablesPointer { client, bucket_arn: bucket_arn.into() }
    }

    async fn get(&self, t: &TableIdent) -> Result<Option<Found>, PortError> {
        let out = self
            .client
            .get_table_metadata_location()
            .table_bucket_arn(&self.bucket_arn)
            .namespace(&t.namespace)
            .name(&t.name)
            .send()
            .await;
        match out {
            Ok(o) => Ok(Some(Found {
                version_token: o.version_token,
                metadata_location: o.metadata_location,
                warehouse_location: o.warehouse_location,
            })),
            Err(e) => match error::map(format!("S3 Tables table {t}"), e) {
                PortError::NotFound(_) => Ok(None),
                other => Err(other),
            },
        }
    }

    /// Sets the metadata location if the table's token is still `token`. An answer that is
    /// lost or unreadable is settled by reading the table back.
    async fn update(&self, t: &TableIdent, token: &str, location: &str) -> Result<Pointer, PortError> {
        let out = self
            .client
            .update_table_metadata_location()
            .table_bucket_arn(&self.bucket_arn)
            .namespace(&t.namespace)
            .name(&t.name)
            .version_token(token)
            .metadata_location(location)
            .send()
            .await;
        match out {
            Ok(o) => Ok(Pointer { metadata_location: o.metadata_location, version: o.version_token }),
            Err(e) => match error::map(format!("S3 Tables update of {t}"), e) {
                PortError::Conflict(why) => Err(PortError::Conflict(why)),
                other => match self.get(t).await {
                    Ok(Some(Found { metadata_location: Some(now), version_token, .. })) if now == location => {
                        Ok(Pointer { metadata_location: now, version: version_token })
                    }
                    _ => Err(other),
                },
            },
        }
    }

    async fn ensure_namespace(&self, namespace: &str) -> Result<(), PortError> {
        let out = self.client.create_namespace().table_bucket_arn(&self.bucket_arn).namespace(namespace).send().await;
        match out.map_err(|e| error::map(format!("S3 Tables namespace {namespace}"), e)) {
            Ok(_) | Err(PortError::Conflict(_)) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

/// S3 Tables accepts lowercase letters, digits and underscores in namespace and table names
/// (starting with a letter or digit); Floe's own names also allow `-` and capitals.
fn check_names(t: &TableIdent) -> Result<(), PortError> {
    let ok = |s: &str| {
        s.len() <= 255
            && s.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if ok(&t.namespace) && ok(&t.name) {
        return Ok(());
    }
    Err(PortError::Invalid(format!(
        "S3 Tables names are lowercase letters, digits and `_` (starting with a letter or digit): `{t}` cannot be created there"
    )))
}

#[async_trait]
impl TablePointer for S3TablesPointer {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        Ok(self
            .get(t)
            .await?
            .and_then(|f| f.metadata_location.map(|loc| Pointer { metadata_location: loc, version: f.version_token })))
    }

    /// The table was created (empty) by [`assign_location`](TablePointer::assign_location);
    /// its first metadata location is set if it has none yet.
    async fn create(&self, t: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        let found = match self.get(t).await? {
            Some(f) => f,
            None => {
                self.assign_location(t).await?;
                self.get(t).await?.ok_or_else(|| PortError::NotFound(format!("S3 Tables table {t}")))?
            }
        };
        if found.metadata_location.is_some() {
            return Err(PortError::Conflict(format!("S3 Tables table {t} already has metadata")));
        }
        self.update(t, &found.version_token, metadata_location).await
    }

    async fn swap(&self, t: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        self.update(t, &expected.version, new_location).await
    }

    async fn assign_location(&self, t: &TableIdent) -> Result<Option<String>, PortError> {
        check_names(t)?;
        if let Some(f) = self.get(t).await? {
            return Ok(Some(f.warehouse_location.trim_end_matches('/').to_string()));
        }
        self.ensure_namespace(&t.namespace).await?;
        let out = self
            .client
            .create_table()
            .table_bucket_arn(&self.bucket_arn)
            .namespace(&t.namespace)
            .name(&t.name)
            .format(OpenTableFormat::Iceberg)
            .send()
            .await;
        match out.map_err(|e| error::map(format!("S3 Tables create {t}"), e)) {
            Ok(_) | Err(PortError::Conflict(_)) => {}
            Err(e) => return Err(e),
        }
        let f =
            self.get(t).await?.ok_or_else(|| PortError::NotFound(format!("S3 Tables table {t} after creating it")))?;
        Ok(Some(f.warehouse_location.trim_end_matches('/').to_string()))
    }

    fn manages_files(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_s3_tables_refuses_are_refused_before_any_call() {
        assert!(check_names(&TableIdent::new("web", "events_2")).is_ok());
        for (ns, name) in [("Web", "events"), ("web", "page-views"), ("_web", "events"), ("web", "")] {
            let e = check_names(&TableIdent::new(ns, name)).unwrap_err().to_string();
            assert!(e.contains("lowercase letters"), "{e}");
        }
    }
}
