//! `TablePointer` on the AWS Glue Data Catalog, in the layout Iceberg Java's `GlueCatalog` and
//! PyIceberg's Glue catalog use, so that Athena, EMR, Spark and Trino query what Floe commits:
//!
//! | Glue | value |
//! |---|---|
//! | database | the namespace (created on first sight) |
//! | table | the table name, `TableType` `EXTERNAL_TABLE` |
//! | `Parameters.table_type` | `ICEBERG` |
//! | `Parameters.metadata_location`, `previous_metadata_location` | the pointer |
//! | `StorageDescriptor.Location` | the table location |
//! | `VersionId` | the compare-and-swap token: `UpdateTable` names the version it replaces |
//!
//! A swap reads the table first and refuses if it no longer points where the committer
//! expects (as Iceberg Java does), then updates with `VersionId`, which Glue checks atomically.
//! Other parameters on the table (set by users or crawlers) are carried over unchanged.

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_glue::types::{DatabaseInput, StorageDescriptor, Table, TableInput};

use super::error;
use crate::PortError;
use crate::ports::{Pointer, TableIdent, TablePointer};

const METADATA_LOCATION: &str = "metadata_location";
const PREVIOUS_METADATA_LOCATION: &str = "previous_metadata_location";

/// A Glue Data Catalog (the account's, or `catalog_id`'s).
#[derive(Debug, Clone)]
pub struct GlueTablePointer {
    client: aws_sdk_glue::Client,
    catalog_id: Option<String>,
    keep_archive: bool,
}

impl GlueTablePointer {
    /// The catalog of the calling account, or of `catalog_id` (cross-account). Swaps skip Glue's
    /// archived table version, as Iceberg Java does by default: at a commit every few seconds
    /// the archive would reach Glue's table-version quota and stop ingestion.
    pub fn new(client: aws_sdk_glue::Client, catalog_id: Option<String>) -> Self {
        GlueTablePointer { client, catalog_id, keep_archive: false }
    }

    /// Keeps an archived Glue table version per commit (`FLOE_GLUE_SKIP_ARCHIVE=false`), for
    /// low-rate tables whose history someone browses in Glue.
    pub fn keep_archive(mut self, keep: bool) -> Self {
        self.keep_archive = keep;
        self
    }

    async fn get(&self, t: &TableIdent) -> Result<Option<Table>, PortError> {
        let out = self
            .client
            .get_table()
            .set_catalog_id(self.catalog_id.clone())
            .database_name(&t.namespace)
            .name(&t.name)
            .send()
            .await;
        match out {
            Ok(o) => Ok(o.table),
            Err(e) => match error::map(format!("Glue table {t}"), e) {
                PortError::NotFound(_) => Ok(None),
                other => Err(other),
            },
        }
    }

    fn pointer(t: &TableIdent, table: &Table) -> Result<Pointer, PortError> {
        let params = table.parameters();
        let is_iceberg = params.and_then(|p| p.get("table_type")).is_some_and(|v| v.eq_ignore_ascii_case("iceberg"));
        if !is_iceberg {
            return Err(PortError::Invalid(format!("Glue table {t} exists but is not an Iceberg table")));
        }
        let location = params.and_then(|p| p.get(METADATA_LOCATION)).cloned();
        match (location, table.version_id()) {
            (Some(loc), Some(v)) => Ok(Pointer { metadata_location: loc, version: v.to_string() }),
            _ => Err(PortError::Invalid(format!("Glue table {t} has no metadata_location or VersionId"))),
        }
    }

    /// Creates the database `namespace` if it is missing. An existing one is used as it is, and
    /// asked for first: where databases are governed (Lake Formation), `CreateDatabase` of one
    /// that exists may be refused outright, and the role needs no right to create it.
    async fn ensure_database(&self, namespace: &str) -> Result<(), PortError> {
        let got = self.client.get_database().set_catalog_id(self.catalog_id.clone()).name(namespace).send().await;
        match got.map_err(|e| error::map(format!("Glue database {namespace}"), e)) {
            Ok(_) => return Ok(()),
            Err(PortError::NotFound(_)) => {}
            Err(other) => return Err(other),
        }
        let input =
            DatabaseInput::builder().name(namespace).description("Created by Floe").build().map_err(error::build)?;
        let out =
            self.client.create_database().set_catalog_id(self.catalog_id.clone()).database_input(input).send().await;
        match out {
            Ok(_) => Ok(()),
            Err(e) => match error::map(format!("create Glue database {namespace}"), e) {
                PortError::Conflict(_) => Ok(()), // exists already
                other => Err(other),
            },
        }
    }
}

/// The table location a metadata file lives under (`<location>/metadata/<file>`).
fn table_location(metadata_location: &str) -> &str {
    metadata_location.rsplit_once("/metadata/").map_or(metadata_location, |(loc, _)| loc)
}

#[async_trait]
impl TablePointer for GlueTablePointer {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        match self.get(t).await? {
            Some(table) => Self::pointer(t, &table).map(Some),
            None => Ok(None),
        }
    }

    async fn create(&self, t: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        self.ensure_database(&t.namespace).await?;
        let input = TableInput::builder()
            .name(&t.name)
            .table_type("EXTERNAL_TABLE")
            .parameters("table_type", "ICEBERG")
            .parameters(METADATA_LOCATION, metadata_location)
            .storage_descriptor(StorageDescriptor::builder().location(table_location(metadata_location)).build())
            .build()
            .map_err(error::build)?;
        self.client
            .create_table()
            .set_catalog_id(self.catalog_id.clone())
            .database_name(&t.namespace)
            .table_input(input)
            .send()
            .await
            .map_err(|e| error::map(format!("table {t} already exists"), e))?;
        // The VersionId is Glue's to assign: read it back.
        let table = self.get(t).await?.ok_or_else(|| PortError::NotFound(format!("Glue table {t} just created")))?;
        let p = Self::pointer(t, &table)?;
        if p.metadata_location != metadata_location {
            return Err(PortError::Conflict(format!("table {t} was created concurrently")));
        }
        Ok(p)
    }

    async fn swap(&self, t: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        let lost = || {
            PortError::Conflict(format!("{t} moved on from {} (a concurrent commit won)", expected.metadata_location))
        };
        let current = self.get(t).await?.ok_or_else(|| PortError::NotFound(format!("Glue table {t}")))?;
        let now = Self::pointer(t, &current)?;
        if now != *expected {
            return Err(lost());
        }
        let mut params: HashMap<String, String> = current.parameters().cloned().unwrap_or_default();
        params.insert(PREVIOUS_METADATA_LOCATION.into(), expected.metadata_location.clone());
        params.insert(METADATA_LOCATION.into(), new_location.into());
        let input = TableInput::builder()
            .name(current.name())
            .set_description(current.description().map(str::to_string))
            .set_owner(current.owner().map(str::to_string))
            .retention(current.retention())
            .set_storage_descriptor(current.storage_descriptor().cloned())
            .set_partition_keys(Some(current.partition_keys().to_vec()))
            .set_table_type(current.table_type().map(str::to_string))
            .set_parameters(Some(params))
            .build()
            .map_err(error::build)?;
        self.client
            .update_table()
            .set_catalog_id(self.catalog_id.clone())
            .database_name(&t.namespace)
            .table_input(input)
            .version_id(&expected.version)
            .skip_archive(!self.keep_archive)
            .send()
            .await
            .map_err(|e| match error::map(format!("swap {t}"), e) {
                PortError::Conflict(_) => lost(),
                other => other,
            })?;
        // The swap has landed. Glue assigns the next VersionId: read it back. Should another
        // writer have moved the table on already, the token stays empty, so the next swap
        // from this pointer fails and re-plans (never an error here: the commit did happen).
        let version = match self.get(t).await.ok().flatten().map(|after| Self::pointer(t, &after)) {
            Some(Ok(p)) if p.metadata_location == new_location => p.version,
            _ => String::new(),
        };
        Ok(Pointer { metadata_location: new_location.into(), version })
    }
}

#[cfg(test)]
mod tests {
    use super::table_location;

    #[test]
    fn table_location_is_the_folder_above_metadata() {
        assert_eq!(table_location("s3://b/wh/ns/t/metadata/00001-x.metadata.json"), "s3://b/wh/ns/t");
        assert_eq!(table_location("s3://b/odd.json"), "s3://b/odd.json");
    }
}
