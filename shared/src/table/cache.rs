//! What a writer needs of each table ([`WriterTable`]), kept for a while so that a warm writer
//! does not read the catalog pointer and metadata.json on every invocation.
//!
//! A writer's view of a table is its schema, spec, sort order and Floe's properties. Within the
//! time to live a cached view is used as is: a stale schema is safe (the committer checks every
//! file's field ids against the table's schema when it commits, and has a file written again if
//! the schema moved on under it), and a writer that proposes a schema change forgets its view,
//! so it reads the table afresh before proposing again.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::WriterTable;
use crate::TableIdent;

/// Writer views of tables, each kept for `ttl` after it was loaded (a zero `ttl` keeps none).
#[derive(Debug, Default)]
pub struct WriterTables {
    ttl: Duration,
    entries: Mutex<HashMap<TableIdent, (Instant, Arc<WriterTable>)>>,
    loads: AtomicU64,
}

impl WriterTables {
    /// A cache keeping each view for `ttl`.
    pub fn new(ttl: Duration) -> Self {
        WriterTables { ttl, ..Default::default() }
    }

    /// The view of `table` if one was loaded less than `ttl` ago.
    pub fn get(&self, table: &TableIdent) -> Option<Arc<WriterTable>> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        entries.get(table).filter(|(at, _)| at.elapsed() < self.ttl).map(|(_, t)| t.clone())
    }

    /// Keeps a freshly loaded view (and counts the load).
    pub fn put(&self, table: &TableIdent, view: Arc<WriterTable>) {
        self.loads.fetch_add(1, Ordering::Relaxed);
        if !self.ttl.is_zero() {
            self.entries.lock().unwrap_or_else(|p| p.into_inner()).insert(table.clone(), (Instant::now(), view));
        }
    }

    /// Forgets the view of `table`: the next batch loads it afresh.
    pub fn evict(&self, table: &TableIdent) {
        self.entries.lock().unwrap_or_else(|p| p.into_inner()).remove(table);
    }

    /// Views loaded from the catalog so far (one metadata.json read each).
    pub fn loads(&self) -> u64 {
        self.loads.load(Ordering::Relaxed)
    }
}
