//! `Ledger` on SQLite: one row per (table, source object), every pending mark of it in
//! `ledger_pending`, the snapshots recorded landed in `ledger_landed`, plus the quarantine.

use std::path::Path;
use std::sync::Mutex;

use async_trait::async_trait;
use rusqlite::params;

use super::{open_db, sql_err};
use crate::ports::{Ledger, QuarantineRecord, SourceState};
use crate::{PortError, Rejection, TableIdent};

/// Idempotency records and quarantine in a SQLite database.
#[derive(Debug)]
pub struct SqliteLedger {
    conn: Mutex<rusqlite::Connection>,
}

impl SqliteLedger {
    /// Opens the ledger in the database at `path`.
    pub fn open(path: &Path) -> Result<Self, PortError> {
        let conn = open_db(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS ledger (
                table_name TEXT NOT NULL, source_id TEXT NOT NULL,
                state TEXT NOT NULL, snapshot_id INTEGER NOT NULL,
                PRIMARY KEY (table_name, source_id));
             CREATE TABLE IF NOT EXISTS ledger_pending (
                table_name TEXT NOT NULL, source_id TEXT NOT NULL, snapshot_id INTEGER NOT NULL,
                PRIMARY KEY (table_name, source_id, snapshot_id));
             CREATE TABLE IF NOT EXISTS ledger_landed (
                table_name TEXT NOT NULL, snapshot_id INTEGER NOT NULL,
                PRIMARY KEY (table_name, snapshot_id));
             CREATE TABLE IF NOT EXISTS quarantine (
                source_id TEXT PRIMARY KEY, uri TEXT NOT NULL, table_name TEXT,
                kind TEXT NOT NULL, reason TEXT NOT NULL, at_ms INTEGER NOT NULL);",
        )
        .map_err(|e| sql_err("create ledger tables", e))?;
        Ok(SqliteLedger { conn: Mutex::new(conn) })
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Every pending snapshot recorded for one source, ascending.
fn pending_marks(conn: &rusqlite::Connection, table: &str, id: &str) -> Result<Vec<i64>, PortError> {
    let mut st = conn
        .prepare_cached(
            "SELECT snapshot_id FROM ledger_pending WHERE table_name = ?1 AND source_id = ?2 ORDER BY snapshot_id",
        )
        .map_err(|e| sql_err("lookup", e))?;
    let rows = st.query_map(params![table, id], |r| r.get::<_, i64>(0)).map_err(|e| sql_err("lookup", e))?;
    rows.collect::<Result<Vec<_>, _>>().map_err(|e| sql_err("lookup", e))
}

/// The first of `marks` (ascending) recorded landed.
fn first_landed(conn: &rusqlite::Connection, table: &str, marks: &[i64]) -> Result<Option<i64>, PortError> {
    let mut st = conn
        .prepare_cached("SELECT 1 FROM ledger_landed WHERE table_name = ?1 AND snapshot_id = ?2")
        .map_err(|e| sql_err("lookup", e))?;
    for m in marks {
        if st.exists(params![table, m]).map_err(|e| sql_err("lookup", e))? {
            return Ok(Some(*m));
        }
    }
    Ok(None)
}

#[async_trait]
impl Ledger for SqliteLedger {
    async fn lookup(&self, table: &TableIdent, ids: &[String]) -> Result<Vec<(String, SourceState)>, PortError> {
        let conn = self.conn();
        let mut st = conn
            .prepare_cached("SELECT state, snapshot_id FROM ledger WHERE table_name = ?1 AND source_id = ?2")
            .map_err(|e| sql_err("lookup", e))?;
        let mut out = vec![];
        let t = table.to_string();
        for id in ids {
            let mut rows = st.query(params![t, id]).map_err(|e| sql_err("lookup", e))?;
            if let Some(r) = rows.next().map_err(|e| sql_err("lookup", e))? {
                let state: String = r.get(0).map_err(|e| sql_err("lookup", e))?;
                let snapshot_id: i64 = r.get(1).map_err(|e| sql_err("lookup", e))?;
                let s = if state == "committed" {
                    SourceState::Committed { snapshot_id }
                } else {
                    let mut snapshot_ids = pending_marks(&conn, &t, id)?;
                    // A ledger written before marks accumulated holds its one mark in `ledger`.
                    if !snapshot_ids.contains(&snapshot_id) {
                        snapshot_ids.push(snapshot_id);
                        snapshot_ids.sort_unstable();
                    }
                    match first_landed(&conn, &t, &snapshot_ids)? {
                        Some(snapshot_id) => SourceState::Committed { snapshot_id },
                        None => SourceState::Pending { snapshot_ids },
                    }
                };
                out.push((id.clone(), s));
            }
        }
        Ok(out)
    }

    async fn record_pending(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| sql_err("begin", e))?;
        {
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO ledger VALUES (?1, ?2, 'pending', ?3)
                     ON CONFLICT (table_name, source_id) DO UPDATE SET snapshot_id = excluded.snapshot_id
                     WHERE ledger.state = 'pending'",
                )
                .map_err(|e| sql_err("record pending", e))?;
            let mut mark = tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO ledger_pending SELECT ?1, ?2, ?3 WHERE NOT EXISTS
                     (SELECT 1 FROM ledger WHERE table_name = ?1 AND source_id = ?2 AND state = 'committed')",
                )
                .map_err(|e| sql_err("record pending", e))?;
            let t = table.to_string();
            for id in ids {
                st.execute(params![t, id, snapshot_id]).map_err(|e| sql_err("record pending", e))?;
                mark.execute(params![t, id, snapshot_id]).map_err(|e| sql_err("record pending", e))?;
            }
        }
        tx.commit().map_err(|e| sql_err("commit", e))
    }

    async fn record_landed(&self, table: &TableIdent, snapshot_ids: &[i64]) -> Result<(), PortError> {
        let conn = self.conn();
        let mut st = conn
            .prepare_cached("INSERT OR IGNORE INTO ledger_landed VALUES (?1, ?2)")
            .map_err(|e| sql_err("record landed", e))?;
        for id in snapshot_ids {
            st.execute(params![table.to_string(), id]).map_err(|e| sql_err("record landed", e))?;
        }
        Ok(())
    }

    async fn record_committed(&self, table: &TableIdent, ids: &[String], snapshot_id: i64) -> Result<(), PortError> {
        let mut conn = self.conn();
        let tx = conn.transaction().map_err(|e| sql_err("begin", e))?;
        {
            let mut st = tx
                .prepare_cached(
                    "INSERT INTO ledger VALUES (?1, ?2, 'committed', ?3)
                     ON CONFLICT (table_name, source_id) DO UPDATE SET state = 'committed', snapshot_id = excluded.snapshot_id
                     WHERE ledger.state = 'pending'",
                )
                .map_err(|e| sql_err("record committed", e))?;
            // A committed source's marks are history nobody reads: dropped.
            let mut unmark = tx
                .prepare_cached("DELETE FROM ledger_pending WHERE table_name = ?1 AND source_id = ?2")
                .map_err(|e| sql_err("record committed", e))?;
            let t = table.to_string();
            for id in ids {
                st.execute(params![t, id, snapshot_id]).map_err(|e| sql_err("record committed", e))?;
                unmark.execute(params![t, id]).map_err(|e| sql_err("record committed", e))?;
            }
        }
        tx.commit().map_err(|e| sql_err("commit", e))
    }

    async fn quarantine(&self, r: QuarantineRecord) -> Result<(), PortError> {
        self.conn()
            .execute(
                "INSERT OR REPLACE INTO quarantine VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![r.source_id, r.uri, r.table, r.rejection.kind.as_str(), r.rejection.reason, r.at_ms],
            )
            .map(|_| ())
            .map_err(|e| sql_err("quarantine", e))
    }

    async fn remove_quarantined(&self, source_ids: &[String]) -> Result<(), PortError> {
        let conn = self.conn();
        for id in source_ids {
            conn.execute("DELETE FROM quarantine WHERE source_id = ?1", params![id])
                .map_err(|e| sql_err("unquarantine", e))?;
        }
        Ok(())
    }

    async fn quarantined(&self) -> Result<Vec<QuarantineRecord>, PortError> {
        let conn = self.conn();
        let mut st = conn
            .prepare("SELECT source_id, uri, table_name, kind, reason, at_ms FROM quarantine ORDER BY at_ms, source_id")
            .map_err(|e| sql_err("quarantined", e))?;
        let rows = st
            .query_map([], |r| {
                Ok(QuarantineRecord {
                    source_id: r.get(0)?,
                    uri: r.get(1)?,
                    table: r.get(2)?,
                    rejection: Rejection { kind: r.get::<_, String>(3)?.into(), reason: r.get(4)? },
                    at_ms: r.get(5)?,
                })
            })
            .map_err(|e| sql_err("quarantined", e))?;
        rows.collect::<Result<_, _>>().map_err(|e| sql_err("quarantined", e))
    }
}
