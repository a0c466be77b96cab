//! How the writer function comes by a table's writer view: from its cache, from the catalog,
//! or, for a table it sees first, by asking the committer to create it.
//!
//! A writer on AWS never writes table metadata or a catalog entry (its IAM role cannot): it
//! defines a new table from the first readable object and sends a
//! [`CreateRequest`](crate::message::CreateRequest) on the commit queue, then waits up to
//! `FLOE_CREATE_WAIT_SECS` for the committer to register it. Whichever definition the committer
//! registered first is the table; this batch is then written against it (objects that do not fit
//! are quarantined as usual). If the table is still absent after the wait, the batch fails and
//! its messages are redelivered.

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::info;

use super::WriterEnv;
use crate::config::TableConfig;
use crate::message::CreateRequest;
use crate::pipeline::create::{define_table, load_checked};
use crate::ports::{ObjectMeta, Ports};
use crate::table::WriterTable;
use crate::{Error, Result};

/// The writer view of `cfg.table`, asking the committer to create the table if it is missing.
pub async fn writer_table(
    env: &WriterEnv,
    ports: &Ports,
    cfg: &TableConfig,
    objects: &[ObjectMeta],
) -> Result<Arc<WriterTable>> {
    if let Some(wt) = env.tables.get(&cfg.table) {
        return Ok(wt);
    }
    let state = match load_checked(ports, cfg).await? {
        Some(state) => state,
        None => {
            let definition = define_table(ports, &env.engine, cfg, &env.warehouse, objects).await?;
            let request = CreateRequest::new(cfg.table.clone(), definition.defined_by.clone(), definition.metadata);
            ports.commit_queue.send(serde_json::to_string(&request)?).await?;
            info!(table = %cfg.table, defined_by = %definition.defined_by, "asked the committer to create the table");
            wait_for(ports, cfg, env.create_wait).await?
        }
    };
    let wt = Arc::new(WriterTable::from_metadata(&cfg.table, &state.metadata)?);
    env.tables.put(&cfg.table, wt.clone());
    Ok(wt)
}

/// Polls the catalog until the table exists, for at most `wait`.
async fn wait_for(ports: &Ports, cfg: &TableConfig, wait: Duration) -> Result<crate::table::TableState> {
    let deadline = Instant::now() + wait;
    let mut pause = Duration::from_millis(200);
    loop {
        if let Some(state) = load_checked(ports, cfg).await? {
            return Ok(state);
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::NoSuchTable(format!(
                "{} (asked the committer to create it; not there after {} s, the batch will be retried)",
                cfg.table,
                wait.as_secs()
            )));
        }
        tokio::time::sleep(pause.min(deadline - now)).await;
        pause = (pause * 2).min(Duration::from_secs(2));
    }
}
