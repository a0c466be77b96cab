//! `TablePointer` on a SQLite catalog in the layout of PyIceberg's `SqlCatalog` and Iceberg
//! Java's `JdbcCatalog`, schema v1 (tables `iceberg_tables` with `iceberg_type`, and
//! `iceberg_namespace_properties`), so that
//! either can load what Floe commits. The swap is an `UPDATE … WHERE metadata_location = ?`.

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

use super::{open_db, sql_err};
use crate::PortError;
use crate::ports::{Pointer, TableIdent, TablePointer};

/// A SQLite catalog.
#[derive(Debug)]
pub struct SqliteTablePointer {
    conn: Mutex<rusqlite::Connection>,
    catalog: String,
}

impl SqliteTablePointer {
    /// Opens (and if needed creates) the catalog database at `path`.
    pub fn open(path: &Path, catalog: &str) -> Result<Self, PortError> {
        let conn = open_db(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS iceberg_tables (
                catalog_name VARCHAR(255) NOT NULL,
                table_namespace VARCHAR(255) NOT NULL,
                table_name VARCHAR(255) NOT NULL,
                metadata_location VARCHAR(1000),
                previous_metadata_location VARCHAR(1000),
                iceberg_type VARCHAR(5),
                PRIMARY KEY (catalog_name, table_namespace, table_name));
             CREATE TABLE IF NOT EXISTS iceberg_namespace_properties (
                catalog_name VARCHAR(255) NOT NULL,
                namespace VARCHAR(255) NOT NULL,
                property_key VARCHAR(255) NOT NULL,
                property_value VARCHAR(1000),
                PRIMARY KEY (catalog_name, namespace, property_key));",
        )
        .map_err(|e| sql_err("create catalog tables", e))?;
        // A catalog made by an older JDBC/PyIceberg (schema v0) lacks `iceberg_type`: migrate it
        // as PyIceberg does with schema_version=v1 (views live in the same table in v1).
        if conn.prepare("SELECT iceberg_type FROM iceberg_tables LIMIT 0").is_err() {
            conn.execute_batch("ALTER TABLE iceberg_tables ADD COLUMN iceberg_type VARCHAR(5)")
                .map_err(|e| sql_err("migrate catalog to schema v1", e))?;
        }
        Ok(SqliteTablePointer { conn: Mutex::new(conn), catalog: catalog.to_string() })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        // A poisoned lock only means another call panicked mid-statement; SQLite rolled it back.
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// All tables registered in this catalog.
    pub fn list_tables(&self) -> Result<Vec<TableIdent>, PortError> {
        let conn = self.conn();
        let mut st = conn
            .prepare(
                "SELECT table_namespace, table_name FROM iceberg_tables
                 WHERE catalog_name = ?1 AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL) ORDER BY 1, 2",
            )
            .map_err(|e| sql_err("list tables", e))?;
        let rows = st
            .query_map(params![self.catalog], |r| Ok(TableIdent::new(r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| sql_err("list tables", e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| sql_err("list tables", e))
    }
}

#[async_trait]
impl TablePointer for SqliteTablePointer {
    async fn load(&self, table: &TableIdent) -> Result<Option<Pointer>, PortError> {
        let conn = self.conn();
        conn.query_row(
            "SELECT metadata_location FROM iceberg_tables
             WHERE catalog_name = ?1 AND table_namespace = ?2 AND table_name = ?3
               AND (iceberg_type = 'TABLE' OR iceberg_type IS NULL)",
            params![self.catalog, table.namespace, table.name],
            |r| r.get::<_, String>(0),
        )
        .optional()
        .map(|o| o.map(|loc| Pointer { version: loc.clone(), metadata_location: loc }))
        .map_err(|e| sql_err(format!("load {table}"), e))
    }

    async fn create(&self, table: &TableIdent, metadata_location: &str) -> Result<Pointer, PortError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| sql_err("begin", e))?;
        tx.execute(
            "INSERT OR IGNORE INTO iceberg_namespace_properties (catalog_name, namespace, property_key, property_value)
             VALUES (?1, ?2, 'exists', 'true')",
            params![self.catalog, table.namespace],
        )
        .map_err(|e| sql_err(format!("create namespace {}", table.namespace), e))?;
        let n = tx
            .execute(
                "INSERT OR IGNORE INTO iceberg_tables (catalog_name, table_namespace, table_name,
                    metadata_location, previous_metadata_location, iceberg_type) VALUES (?1, ?2, ?3, ?4, NULL, 'TABLE')",
                params![self.catalog, table.namespace, table.name, metadata_location],
            )
            .map_err(|e| sql_err(format!("create {table}"), e))?;
        if n == 0 {
            return Err(PortError::Conflict(format!("table {table} already exists")));
        }
        tx.commit().map_err(|e| sql_err("commit", e))?;
        Ok(Pointer { metadata_location: metadata_location.into(), version: metadata_location.into() })
    }

    async fn swap(&self, table: &TableIdent, expected: &Pointer, new_location: &str) -> Result<Pointer, PortError> {
        let conn = self.conn();
        let n = conn
            .execute(
                "UPDATE iceberg_tables SET metadata_location = ?1, previous_metadata_location = ?2
                 WHERE catalog_name = ?3 AND table_namespace = ?4 AND table_name = ?5 AND metadata_location = ?2",
                params![new_location, expected.metadata_location, self.catalog, table.namespace, table.name],
            )
            .map_err(|e| sql_err(format!("swap {table}"), e))?;
        if n == 0 {
            return Err(PortError::Conflict(format!(
                "{table} no longer points at {} (a concurrent commit won)",
                expected.metadata_location
            )));
        }
        Ok(Pointer { metadata_location: new_location.into(), version: new_location.into() })
    }
}
