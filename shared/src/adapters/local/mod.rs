//! Local adapters for embedded mode: files on disk and SQLite.
//!
//! A warehouse directory holds everything: the tables (`<ns>.db/<name>/`), the catalog
//! (`catalog.db`, PyIceberg/JDBC layout, catalog name `floe`), and Floe's own state
//! (`.floe/state.db`: commit queue, ledger, quarantine, locks; `.floe/warehouse.lock`, which
//! keeps the orphan sweep apart from writers). SQLite calls are short and run
//! inline on the async executor; each adapter serializes its calls through one connection.

mod fs_object_store;
mod sqlite_ledger;
mod sqlite_lock;
mod sqlite_queue;
mod sqlite_table_pointer;
mod warehouse_lock;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use fs_object_store::{LocalFsObjectStore, path_to_uri, uri_to_path};
pub use sqlite_ledger::SqliteLedger;
pub use sqlite_lock::SqliteLock;
pub use sqlite_queue::{DEFAULT_MAX_RECEIVES, QueueCounts, SqliteQueue};
pub use sqlite_table_pointer::SqliteTablePointer;
pub use warehouse_lock::{WarehouseLock, WarehouseUse};

use crate::ports::{NoopMetrics, Ports, RetryPolicy};
use crate::{PortError, Result};

/// The catalog name embedded mode registers tables under.
pub const CATALOG_NAME: &str = "floe";

/// Builds the ports of a local warehouse at `dir` (created if missing), behind retries.
pub fn ports(dir: &Path) -> Result<Ports> {
    Ok(raw_ports(dir)?.retrying(RetryPolicy::default()))
}

/// Where embedded mode keeps table pointers (`--catalog`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum LocalCatalog {
    /// `catalog.db` in the warehouse (PyIceberg/JDBC layout).
    #[default]
    Sqlite,
    /// An Iceberg REST catalog; the tables' files stay in the warehouse directory.
    Rest(crate::adapters::rest::RestSettings),
}

/// The ports of a local warehouse at `dir` with table pointers in `catalog`, behind retries.
pub fn ports_with(dir: &Path, catalog: &LocalCatalog) -> Result<Ports> {
    let mut raw = raw_ports(dir)?;
    if let LocalCatalog::Rest(settings) = catalog {
        raw.pointer = Arc::new(crate::adapters::rest::RestCatalog::new(settings)?);
    }
    Ok(raw.retrying(RetryPolicy::default()))
}

/// The ports of a local warehouse without retries (for tests that put faults underneath).
pub fn raw_ports(dir: &Path) -> Result<Ports> {
    std::fs::create_dir_all(dir.join(".floe"))
        .map_err(|e| PortError::io(format!("cannot create warehouse {}", dir.display()), e))?;
    let state = state_db(dir);
    Ok(Ports {
        store: Arc::new(LocalFsObjectStore::new()),
        commit_queue: Arc::new(SqliteQueue::open(&state, "commit")?),
        pointer: Arc::new(SqliteTablePointer::open(&dir.join("catalog.db"), CATALOG_NAME)?),
        ledger: Arc::new(SqliteLedger::open(&state)?),
        lock: Arc::new(SqliteLock::open(&state)?),
        metrics: Arc::new(NoopMetrics),
        faults: crate::fault::Faults::default(),
    })
}

/// Messages in the warehouse's commit queue at `dir` (visible or held by a running process):
/// manifests and rewrite requests whose files no snapshot references yet. Dead letters are not
/// counted: nothing commits them.
pub fn commit_queue_depth(dir: &Path) -> Result<u64> {
    Ok(SqliteQueue::open(&state_db(dir), "commit")?.depth()?)
}

/// What the warehouse's commit queue at `dir` holds, dead letters included: manifests a
/// committer gave up on after too many deliveries (their sources are not committed; an ingest
/// over the same inputs writes them again).
pub fn commit_queue_counts(dir: &Path) -> Result<QueueCounts> {
    Ok(SqliteQueue::open(&state_db(dir), "commit")?.counts()?)
}

/// The warehouse URI of a local directory (`file:///abs/dir`).
pub fn warehouse_uri(dir: &Path) -> Result<String> {
    let abs = std::path::absolute(dir).map_err(|e| PortError::io(format!("bad path {}", dir.display()), e))?;
    Ok(path_to_uri(&abs))
}

fn state_db(dir: &Path) -> PathBuf {
    dir.join(".floe").join("state.db")
}

/// Opens a SQLite database with the settings every local adapter uses.
pub(crate) fn open_db(path: &Path) -> Result<rusqlite::Connection, PortError> {
    let conn = rusqlite::Connection::open(path).map_err(|e| sql_err(format!("open {}", path.display()), e))?;
    conn.busy_timeout(std::time::Duration::from_secs(30)).map_err(|e| sql_err("busy_timeout", e))?;
    conn.pragma_update(None, "journal_mode", "WAL").map_err(|e| sql_err("journal_mode", e))?;
    conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| sql_err("synchronous", e))?;
    Ok(conn)
}

pub(crate) fn sql_err(context: impl Into<String>, e: rusqlite::Error) -> PortError {
    match &e {
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::DatabaseBusy => {
            PortError::Throttled(format!("{}: {e}", context.into()))
        }
        _ => PortError::io(context, e),
    }
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::contract;

    #[tokio::test]
    async fn local_adapters_pass_the_port_contracts() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ports = ports(dir.path()).expect("ports");
        let base = warehouse_uri(dir.path()).expect("uri");
        let table = crate::TableIdent::new("ns", "t");
        contract::object_store(ports.store.as_ref(), &format!("{base}/objects")).await;
        contract::table_pointer(ports.pointer.as_ref(), &table).await;
        contract::ledger(ports.ledger.as_ref(), &table).await;
        contract::lock(ports.lock.as_ref(), "floe-committer/ns.t").await;
        contract::queue(ports.commit_queue.as_ref()).await;
    }
}
