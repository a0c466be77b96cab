//! `TablePointer` on DynamoDB in the item layout of Iceberg Java's `DynamoDbCatalog`, so that
//! Java's and PyIceberg's DynamoDB catalogs load what Floe commits:
//!
//! | attribute | value |
//! |---|---|
//! | `identifier` (hash key) | `namespace.table`, or `NAMESPACE` for a namespace item |
//! | `namespace` (range key) | the namespace |
//! | `v` | a version uuid, replaced at every commit: the compare-and-swap token |
//! | `created_at`, `updated_at` | epoch milliseconds (N) |
//! | `p.table_type` | `ICEBERG` |
//! | `p.metadata_location`, `p.previous_metadata_location` | the pointer |
//!
//! Only S and N attributes are written (PyIceberg refuses other types).

use std::collections::HashMap;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;

use super::{ensure_dynamodb_table, error};
use crate::PortError;
use crate::ports::{Pointer, TableIdent, TablePointer};

/// A DynamoDB catalog table.
#[derive(Debug, Clone)]
pub struct DynamoDbTablePointer {
    client: aws_sdk_dynamodb::Client,
    table: String,
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn now_ms() -> AttributeValue {
    AttributeValue::N(chrono::Utc::now().timestamp_millis().to_string())
}

impl DynamoDbTablePointer {
    /// The catalog in DynamoDB table `table`.
    pub fn new(client: aws_sdk_dynamodb::Client, table: &str) -> Self {
        DynamoDbTablePointer { client, table: table.to_string() }
    }

    /// Creates the catalog table if missing (keys and index as Iceberg Java creates them).
    pub async fn ensure_table(&self) -> Result<(), PortError> {
        ensure_dynamodb_table(
            &self.client,
            &self.table,
            "identifier",
            Some("namespace"),
            Some(("namespace-identifier", "namespace", "identifier")),
        )
        .await
    }

    fn key(t: &TableIdent) -> HashMap<String, AttributeValue> {
        HashMap::from([("identifier".to_string(), s(t.to_string())), ("namespace".to_string(), s(&t.namespace))])
    }
}

#[async_trait]
impl TablePointer for DynamoDbTablePointer {
    async fn load(&self, t: &TableIdent) -> Result<Option<Pointer>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(Self::key(t)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| error::map(format!("load {t}"), e))?;
        let Some(item) = out.item() else { return Ok(None) };
        let get = |k: &str| item.get(k).and_then(|v| v.as_s().ok()).cloned();
        match (get("p.metadata_location"), get("v")) {
            (Some(loc), Some(v)) => Ok(Some(Pointer { metadata_location: loc, version: v })),
            _ => Err(PortError::Invalid(format!("catalog item of {t} has no p.metadata_location or v"))),
        }
    }

    async fn create(&self, t: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        // The namespace item, if missing (a lost race here is fine).
        let ns = self
            .client
            .put_item()
            .table_name(&self.table)
            .item("identifier", s("NAMESPACE"))
            .item("namespace", s(&t.namespace))
            .item("v", s(uuid::Uuid::new_v4().to_string()))
            .item("created_at", now_ms())
            .item("updated_at", now_ms())
            .condition_expression("attribute_not_exists(identifier)")
            .send()
            .await;
        if let Err(e) = ns {
            match error::map("create namespace", e) {
                PortError::Conflict(_) => {}
                other => return Err(other),
            }
        }
        let v = uuid::Uuid::new_v4().to_string();
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(Self::key(t)))
            .item("v", s(&v))
            .item("created_at", now_ms())
            .item("updated_at", now_ms())
            .item("p.table_type", s("ICEBERG"))
            .item("p.metadata_location", s(metadata_location))
            .condition_expression("attribute_not_exists(identifier)")
            .send()
            .await
            .map_err(|e| error::map(format!("table {t} already exists"), e))?;
        Ok(Pointer { metadata_location: metadata_location.into(), version: v })
    }

    async fn swap(&self, t: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        let v = uuid::Uuid::new_v4().to_string();
        self.client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(Self::key(t)))
            .update_expression("SET #loc = :new, #prev = :old, #v = :nv, #u = :now")
            .condition_expression("#v = :ev AND #loc = :old")
            .expression_attribute_names("#loc", "p.metadata_location")
            .expression_attribute_names("#prev", "p.previous_metadata_location")
            .expression_attribute_names("#v", "v")
            .expression_attribute_names("#u", "updated_at")
            .expression_attribute_values(":new", s(new_location))
            .expression_attribute_values(":old", s(&expected.metadata_location))
            .expression_attribute_values(":nv", s(&v))
            .expression_attribute_values(":ev", s(&expected.version))
            .expression_attribute_values(":now", now_ms())
            .send()
            .await
            .map_err(|e| {
                error::map(format!("{t} moved on from {} (a concurrent commit won)", expected.metadata_location), e)
            })?;
        Ok(Pointer { metadata_location: new_location.into(), version: v })
    }
}
