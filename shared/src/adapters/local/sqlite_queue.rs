//! `Queue` on a SQLite table: at-least-once delivery with visibility timeouts, receive counts
//! and a dead-letter table after too many deliveries, mirroring SQS with a redrive policy.

use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use rusqlite::params;

use super::{now_ms, open_db, sql_err};
use crate::PortError;
use crate::ports::{Message, Queue};

/// Deliveries after which a message moves to the dead-letter table.
pub const DEFAULT_MAX_RECEIVES: u32 = 10;

/// What a local queue holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueCounts {
    /// Messages a receive would take now.
    pub visible: u64,
    /// Messages a receiver holds (until acknowledged, or visible again when its hold lapses).
    pub in_flight: u64,
    /// Messages moved aside after too many deliveries: nothing takes them again.
    pub dead_letters: u64,
}

/// A named queue in a SQLite database.
#[derive(Debug)]
pub struct SqliteQueue {
    conn: Mutex<rusqlite::Connection>,
    name: String,
    max_receives: u32,
}

impl SqliteQueue {
    /// Opens queue `name` in the database at `path`.
    pub fn open(path: &Path, name: &str) -> Result<Self, PortError> {
        let conn = open_db(path)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS queue_messages (
                queue TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                visible_at INTEGER NOT NULL, receive_count INTEGER NOT NULL DEFAULT 0,
                receipt TEXT, seq INTEGER PRIMARY KEY AUTOINCREMENT);
             CREATE INDEX IF NOT EXISTS queue_visible ON queue_messages (queue, visible_at);
             CREATE TABLE IF NOT EXISTS queue_dead_letters (
                queue TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL,
                receive_count INTEGER NOT NULL, at_ms INTEGER NOT NULL);",
        )
        .map_err(|e| sql_err("create queue tables", e))?;
        Ok(SqliteQueue { conn: Mutex::new(conn), name: name.into(), max_receives: DEFAULT_MAX_RECEIVES })
    }

    /// Sets the deliveries after which a message is dead-lettered.
    pub fn with_max_receives(mut self, n: u32) -> Self {
        self.max_receives = n.max(1);
        self
    }

    fn conn(&self) -> std::sync::MutexGuard<'_, rusqlite::Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Messages waiting (visible or in flight).
    pub fn depth(&self) -> Result<u64, PortError> {
        self.conn()
            .query_row("SELECT COUNT(*) FROM queue_messages WHERE queue = ?1", params![self.name], |r| {
                r.get::<_, i64>(0)
            })
            .map(|n| n as u64)
            .map_err(|e| sql_err("queue depth", e))
    }

    /// Messages visible now, held by a receiver (in flight), and dead-lettered.
    pub fn counts(&self) -> Result<QueueCounts, PortError> {
        let count = |sql: &str, with_now: bool| -> Result<u64, PortError> {
            let conn = self.conn();
            let n: i64 = if with_now {
                conn.query_row(sql, params![self.name, now_ms()], |r| r.get(0))
            } else {
                conn.query_row(sql, params![self.name], |r| r.get(0))
            }
            .map_err(|e| sql_err("queue counts", e))?;
            Ok(n as u64)
        };
        Ok(QueueCounts {
            visible: count("SELECT COUNT(*) FROM queue_messages WHERE queue = ?1 AND visible_at <= ?2", true)?,
            in_flight: count("SELECT COUNT(*) FROM queue_messages WHERE queue = ?1 AND visible_at > ?2", true)?,
            dead_letters: count("SELECT COUNT(*) FROM queue_dead_letters WHERE queue = ?1", false)?,
        })
    }

    /// Bodies of dead-lettered messages.
    pub fn dead_letters(&self) -> Result<Vec<String>, PortError> {
        let conn = self.conn();
        let mut st = conn
            .prepare("SELECT body FROM queue_dead_letters WHERE queue = ?1 ORDER BY at_ms")
            .map_err(|e| sql_err("dead letters", e))?;
        let rows =
            st.query_map(params![self.name], |r| r.get::<_, String>(0)).map_err(|e| sql_err("dead letters", e))?;
        rows.collect::<Result<_, _>>().map_err(|e| sql_err("dead letters", e))
    }
}

#[async_trait]
impl Queue for SqliteQueue {
    async fn send(&self, body: String) -> Result<(), PortError> {
        self.conn()
            .execute(
                "INSERT INTO queue_messages (queue, id, body, visible_at) VALUES (?1, ?2, ?3, 0)",
                params![self.name, uuid::Uuid::new_v4().to_string(), body],
            )
            .map(|_| ())
            .map_err(|e| sql_err("send", e))
    }

    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError> {
        let mut conn = self.conn();
        let now = now_ms();
        let tx = conn.transaction().map_err(|e| sql_err("begin", e))?;
        let candidates: Vec<(i64, String, String, u32)> = {
            let mut st = tx
                .prepare(
                    "SELECT seq, id, body, receive_count FROM queue_messages
                     WHERE queue = ?1 AND visible_at <= ?2 ORDER BY seq LIMIT ?3",
                )
                .map_err(|e| sql_err("receive", e))?;
            let rows = st
                .query_map(params![self.name, now, max as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .map_err(|e| sql_err("receive", e))?;
            rows.collect::<Result<_, _>>().map_err(|e| sql_err("receive", e))?
        };
        let mut out = vec![];
        for (seq, id, body, count) in candidates {
            if count >= self.max_receives {
                tx.execute(
                    "INSERT INTO queue_dead_letters VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![self.name, id, body, count, now],
                )
                .map_err(|e| sql_err("dead-letter", e))?;
                tx.execute("DELETE FROM queue_messages WHERE seq = ?1", params![seq])
                    .map_err(|e| sql_err("dead-letter", e))?;
                continue;
            }
            let receipt = format!("{seq}:{}", uuid::Uuid::new_v4().simple());
            tx.execute(
                "UPDATE queue_messages SET visible_at = ?1, receive_count = receive_count + 1, receipt = ?2 WHERE seq = ?3",
                params![now + visibility.as_millis() as i64, receipt, seq],
            )
            .map_err(|e| sql_err("receive", e))?;
            out.push(Message { id, receipt, body, receive_count: count + 1, sender: None, sent_for: None });
        }
        tx.commit().map_err(|e| sql_err("commit", e))?;
        Ok(out)
    }

    async fn ack(&self, receipt: &str) -> Result<(), PortError> {
        // A stale receipt (the message was redelivered since) does not delete, as in SQS FIFO;
        // the newer delivery will be acknowledged by its own receiver.
        self.conn()
            .execute("DELETE FROM queue_messages WHERE queue = ?1 AND receipt = ?2", params![self.name, receipt])
            .map(|_| ())
            .map_err(|e| sql_err("ack", e))
    }

    async fn release(&self, receipt: &str) -> Result<(), PortError> {
        self.conn()
            .execute(
                "UPDATE queue_messages SET visible_at = 0 WHERE queue = ?1 AND receipt = ?2",
                params![self.name, receipt],
            )
            .map(|_| ())
            .map_err(|e| sql_err("release", e))
    }
}
