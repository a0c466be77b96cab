//! `Lock` on SQLite, in the shape of Iceberg Java's `DynamoDbLockManager` items
//! (`entityId`, `ownerId`, `version`, `leaseDurationMs`), with expiry by wall clock.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::params;

use super::{now_ms, open_db, sql_err};
use crate::PortError;
use crate::ports::{Lease, Lock};

/// Leased locks in a SQLite database.
#[derive(Debug)]
pub struct SqliteLock {
    conn: Mutex<rusqlite::Connection>,
}

impl SqliteLock {
    /// Opens the lock table in the database at `path`.
    pub fn open(path: &Path) -> Result<Self, PortError> {
        let conn = open_db(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS locks (
                entity_id TEXT PRIMARY KEY, owner_id TEXT NOT NULL, version TEXT NOT NULL,
                lease_duration_ms INTEGER NOT NULL, expires_at_ms INTEGER NOT NULL);",
        )
        .map_err(|e| sql_err("create lock table", e))?;
        Ok(SqliteLock { conn: Mutex::new(conn) })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl Lock for SqliteLock {
    async fn try_acquire(&self, entity: &str, owner: &str, lease: Duration) -> Result<Option<Lease>, PortError> {
        let version = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let ms = lease.as_millis() as i64;
        let n = self
            .conn()
            .execute(
                "INSERT INTO locks VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (entity_id) DO UPDATE SET owner_id = excluded.owner_id, version = excluded.version,
                    lease_duration_ms = excluded.lease_duration_ms, expires_at_ms = excluded.expires_at_ms
                 WHERE locks.expires_at_ms <= ?6 OR locks.owner_id = ?2",
                params![entity, owner, version, ms, now + ms, now],
            )
            .map_err(|e| sql_err(format!("acquire {entity}"), e))?;
        Ok((n == 1).then(|| Lease { entity: entity.into(), owner: owner.into(), version, duration: lease }))
    }

    async fn heartbeat(&self, lease: &Lease) -> Result<Lease, PortError> {
        let version = lease.next_version();
        let ms = lease.duration.as_millis() as i64;
        // `version = ?1` too: a repeat of this heartbeat after its first attempt landed.
        let n = self
            .conn()
            .execute(
                "UPDATE locks SET version = ?1, expires_at_ms = ?2
                 WHERE entity_id = ?3 AND owner_id = ?4 AND (version = ?5 OR version = ?1)",
                params![version, now_ms() + ms, lease.entity, lease.owner, lease.version],
            )
            .map_err(|e| sql_err("heartbeat", e))?;
        if n == 0 {
            return Err(PortError::Conflict(format!("lock {} was lost", lease.entity)));
        }
        Ok(Lease { version, ..lease.clone() })
    }

    async fn release(&self, lease: &Lease) -> Result<(), PortError> {
        self.conn()
            .execute(
                // Or the version a heartbeat of this lease set whose answer was lost.
                "DELETE FROM locks WHERE entity_id = ?1 AND owner_id = ?2 AND (version = ?3 OR version = ?4)",
                params![lease.entity, lease.owner, lease.version, lease.next_version()],
            )
            .map(|_| ())
            .map_err(|e| sql_err("release", e))
    }
}
