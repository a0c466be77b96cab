//! The compactor function's glue: which tables and settings (the environment, overridden by the
//! scheduled event's `detail`), and one compaction run per table.
//!
//! Fan-out on AWS: each scheduled invocation plans its tables and runs up to
//! `FLOE_COMPACT_MAX_TASKS` tasks, as many at once as the function has cores; the rest wait for
//! the next tick, planned afresh from the table then. Overlapping invocations are safe: the same
//! task planned twice writes the same files and its second request is a duplicate, and a task
//! planned on files compacted since is rejected as stale.

use serde::{Deserialize, Serialize};
use tracing::{error, info};

use crate::config::EngineConfig;
use crate::pipeline::compact::{CompactOptions, compact};
use crate::ports::Ports;
use crate::table::load_table;
use crate::table::sweep::sweep_orphans;
use crate::{Error, Result, TableIdent};

/// What the compactor function runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactorEnv {
    /// Engine limits.
    pub engine: EngineConfig,
    /// Tables compacted on every tick.
    pub tables: Vec<TableIdent>,
    /// Compaction settings.
    pub options: CompactOptions,
}

impl CompactorEnv {
    /// From settings looked up by name (the binary passes the environment):
    /// `FLOE_COMPACT_TABLES` (comma-separated; default `FLOE_DEFAULT_TABLE`, then
    /// `default.events`), `FLOE_COMPACT_MIN_FILES` (8), `FLOE_COMPACT_MAX_TASK_BYTES` (a quarter
    /// of `AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, at most 512 MiB) and `FLOE_COMPACT_MAX_TASKS` (16).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let var = |k: &str| var(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
        let number = |k: &str, min: u64| -> Result<Option<u64>> {
            match var(k) {
                None => Ok(None),
                Some(v) => match v.parse::<u64>() {
                    Ok(n) if n >= min => Ok(Some(n)),
                    _ => Err(Error::Config(format!("{k} must be a whole number of at least {min}, got `{v}`"))),
                },
            }
        };
        let tables = var("FLOE_COMPACT_TABLES")
            .or_else(|| var("FLOE_DEFAULT_TABLE"))
            .unwrap_or_else(|| "default.events".into())
            .split(',')
            .map(|t| t.trim().parse())
            .collect::<Result<Vec<TableIdent>>>()?;
        let memory = number("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", 1)?.map(|mib| mib << 20);
        let mut options = CompactOptions { max_tasks: 16, ..CompactOptions::default() };
        options.max_task_bytes = memory.map_or(options.max_task_bytes, |m| (m / 4).min(options.max_task_bytes));
        options.shared_key_bytes =
            memory.map_or(options.shared_key_bytes, |m| (m / 8) as usize).min(options.shared_key_bytes);
        if let Some(n) = number("FLOE_COMPACT_MIN_FILES", 2)? {
            options.min_files = n as usize;
        }
        if let Some(n) = number("FLOE_COMPACT_MAX_TASK_BYTES", 1)? {
            options.max_task_bytes = n;
        }
        if let Some(n) = number("FLOE_COMPACT_MAX_TASKS", 1)? {
            options.max_tasks = n as usize;
        }
        if let Some(n) = number("FLOE_COMPACT_SHARED_KEY_BYTES", 0)? {
            options.shared_key_bytes = n as usize;
        }
        Ok(CompactorEnv { engine: EngineConfig::from_lookup(var)?, tables, options })
    }
}

/// What a scheduled event may say in its `detail` (all optional): other tables, a full
/// compaction, another task budget, and an orphan sweep of objects older than so many hours (a
/// daily rule; it reads every kept snapshot's manifests).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Detail {
    tables: Option<Vec<String>>,
    full: Option<bool>,
    max_tasks: Option<usize>,
    sweep_older_than_hours: Option<u64>,
}

/// One table's result, as the function returns it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct TableRun {
    /// The table.
    pub table: String,
    /// Whether the table exists (one that does not yet is skipped).
    pub exists: bool,
    /// Tasks planned.
    pub planned: usize,
    /// Tasks run (a rewrite request sent for each).
    pub tasks: usize,
    /// Files merged.
    pub inputs: usize,
    /// Files written.
    pub outputs: usize,
    /// Orphans deleted by a sweep.
    pub orphans_deleted: usize,
}

/// The compactor function: compacts each table and sends the rewrite requests; the committer
/// commits them.
pub async fn handle_compactor(env: &CompactorEnv, ports: &Ports, payload: serde_json::Value) -> Result<Vec<TableRun>> {
    let detail: Detail = match payload.get("detail") {
        None | Some(serde_json::Value::Null) => Detail::default(),
        Some(d) => serde_json::from_value(d.clone())
            .map_err(|e| Error::Config(format!("the event's detail is not a compaction request: {e}")))?,
    };
    let tables = match detail.tables {
        Some(t) => t.iter().map(|t| t.parse()).collect::<Result<Vec<TableIdent>>>()?,
        None => env.tables.clone(),
    };
    let mut options = env.options.clone();
    options.full |= detail.full.unwrap_or(false);
    if let Some(n) = detail.max_tasks {
        options.max_tasks = n.max(1);
    }
    let mut out = vec![];
    let mut failed = vec![];
    for table in tables {
        match compact_one(env, ports, &table, &options, detail.sweep_older_than_hours).await {
            Ok(run) => out.push(run),
            Err(e) => {
                // The other tables still get their tick; the invocation fails at the end.
                error!(%table, error = %e, "compaction failed");
                failed.push(format!("{table}: {e}"));
            }
        }
    }
    if !failed.is_empty() {
        return Err(Error::Config(format!("compaction failed for {}", failed.join("; "))));
    }
    Ok(out)
}

/// One table's tick. A table that does not exist yet (no data has arrived for it) is skipped:
/// a schedule that starts before the first object is not an error.
async fn compact_one(
    env: &CompactorEnv,
    ports: &Ports,
    table: &TableIdent,
    options: &CompactOptions,
    sweep_older_than_hours: Option<u64>,
) -> Result<TableRun> {
    let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await? else {
        info!(%table, "table does not exist yet; nothing to compact");
        return Ok(TableRun { table: table.to_string(), exists: false, ..TableRun::default() });
    };
    let report = compact(&env.engine, ports, table, options).await?;
    let mut orphans_deleted = 0;
    // S3 Tables removes unreferenced files itself, and its storage refuses listings.
    if let Some(hours) = sweep_older_than_hours.filter(|_| !ports.pointer.manages_files()) {
        let cutoff = chrono::Utc::now().timestamp_millis() - (hours as i64).saturating_mul(3_600_000);
        orphans_deleted = sweep_orphans(ports.store.as_ref(), &state, cutoff, false).await?.orphans.len();
    }
    info!(%table, planned = report.planned, tasks = report.tasks, orphans_deleted, "compactor tick");
    Ok(TableRun {
        table: table.to_string(),
        exists: true,
        planned: report.planned,
        tasks: report.tasks,
        inputs: report.totals.inputs,
        outputs: report.totals.outputs,
        orphans_deleted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Result<CompactorEnv> {
        let m: std::collections::HashMap<String, String> =
            pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        CompactorEnv::from_lookup(|k| m.get(k).cloned())
    }

    #[test]
    fn settings_come_from_the_environment_with_clear_errors() {
        let e = env(&[("FLOE_DEFAULT_TABLE", "a.b")]).unwrap();
        assert_eq!(e.tables, vec![TableIdent::new("a", "b")]);
        assert_eq!((e.options.min_files, e.options.max_tasks), (8, 16));
        let e = env(&[("FLOE_COMPACT_TABLES", "a.b, c.d"), ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "1024")]).unwrap();
        assert_eq!(e.tables.len(), 2);
        assert_eq!(e.options.max_task_bytes, 256 << 20, "a quarter of the function's memory");
        let bad = env(&[("FLOE_COMPACT_MIN_FILES", "1")]).unwrap_err().to_string();
        assert!(bad.contains("FLOE_COMPACT_MIN_FILES") && bad.contains("at least 2"), "{bad}");
        let bad = env(&[("FLOE_COMPACT_TABLES", "nodot")]).unwrap_err().to_string();
        assert!(bad.contains("nodot"), "{bad}");
    }

    #[tokio::test]
    async fn a_detail_that_is_not_a_compaction_request_is_refused() {
        let e = env(&[]).unwrap();
        let ports = crate::adapters::local::ports(tempfile::tempdir().unwrap().path()).unwrap();
        let err = handle_compactor(&e, &ports, serde_json::json!({"detail": {"tabels": ["a.b"]}})).await.unwrap_err();
        assert!(err.to_string().contains("tabels"), "{err}");
    }
}
