//! `Lock` on DynamoDB in the layout of Iceberg Java's `DynamoDbLockManager` (`entityId` hash
//! key, `ownerId`, `version`, `leaseDurationMs`), plus `expiresAtMs` so that an expired lease
//! can be taken over with one conditional write instead of a lease-long wait.

use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_dynamodb::types::AttributeValue;

use super::{ensure_dynamodb_table, error};
use crate::PortError;
use crate::ports::{Lease, Lock};

/// Leased locks in a DynamoDB table.
#[derive(Debug, Clone)]
pub struct DynamoDbLock {
    client: aws_sdk_dynamodb::Client,
    table: String,
}

fn n(v: i64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

impl DynamoDbLock {
    /// Locks in DynamoDB table `table`.
    pub fn new(client: aws_sdk_dynamodb::Client, table: &str) -> Self {
        DynamoDbLock { client, table: table.to_string() }
    }

    /// Creates the lock table if missing.
    pub async fn ensure_table(&self) -> Result<(), PortError> {
        ensure_dynamodb_table(&self.client, &self.table, "entityId", None, None).await
    }
}

fn is_conflict(e: &PortError) -> bool {
    matches!(e, PortError::Conflict(_))
}

#[async_trait]
impl Lock for DynamoDbLock {
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError> {
        let version = uuid::Uuid::new_v4().to_string();
        let now = chrono::Utc::now().timestamp_millis();
        let ms = lease.as_millis() as i64;
        let put = self
            .client
            .put_item()
            .table_name(&self.table)
            .item("entityId", s(entity))
            .item("ownerId", s(owner))
            .item("version", s(&version))
            .item("leaseDurationMs", n(ms))
            .item("expiresAtMs", n(now + ms))
            .condition_expression("attribute_not_exists(entityId) OR expiresAtMs <= :now OR ownerId = :me")
            .expression_attribute_values(":now", n(now))
            .expression_attribute_values(":me", s(owner))
            .send()
            .await;
        match put {
            Ok(_) => Ok(Some(Lease { entity: entity.into(), owner: owner.into(), version, duration: lease })),
            Err(e) => {
                let e = error::map(format!("lock {entity} is held"), e);
                if is_conflict(&e) { Ok(None) } else { Err(e) }
            }
        }
    }

    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError> {
        let version = lease.next_version();
        let now = chrono::Utc::now().timestamp_millis();
        // `#v = :nv` too: a repeat of this heartbeat after its first attempt landed.
        self.client
            .update_item()
            .table_name(&self.table)
            .key("entityId", s(&lease.entity))
            .update_expression("SET #v = :nv, expiresAtMs = :exp")
            .condition_expression("ownerId = :me AND (#v = :ov OR #v = :nv)")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":nv", s(&version))
            .expression_attribute_values(":exp", n(now + lease.duration.as_millis() as i64))
            .expression_attribute_values(":me", s(&lease.owner))
            .expression_attribute_values(":ov", s(&lease.version))
            .send()
            .await
            .map_err(|e| error::map(format!("lock {} was lost", lease.entity), e))?;
        Ok(Lease { version, ..lease.clone() })
    }

    async fn release(&self, lease: &Lease) -> Result<(), PortError> {
        let del = self
            .client
            .delete_item()
            .table_name(&self.table)
            .key("entityId", s(&lease.entity))
            // Or the version a heartbeat of this lease set whose answer was lost.
            .condition_expression("ownerId = :me AND (#v = :ov OR #v = :nv)")
            .expression_attribute_names("#v", "version")
            .expression_attribute_values(":me", s(&lease.owner))
            .expression_attribute_values(":ov", s(&lease.version))
            .expression_attribute_values(":nv", s(&lease.next_version()))
            .send()
            .await;
        match del {
            Ok(_) => Ok(()),
            Err(e) => {
                let e = error::map("release", e);
                if is_conflict(&e) { Ok(()) } else { Err(e) }
            }
        }
    }
}
