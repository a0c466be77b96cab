//! The compactor function's glue: which tables and settings (the environment, overridden by the
//! scheduled event's `detail`), one compaction run per table on a tick, and the fan-out of a
//! tick's plan over several invocations.
//!
//! A tick plans each table and cuts the plan into shares of at most `FLOE_COMPACT_MAX_TASKS`
//! tasks, most urgent partitions first (`pipeline::compact` share module: whole partitions, or a
//! stretch of a hot partition's chain). It runs one share itself, as many tasks at once as the
//! function has cores. With a share queue (`FLOE_COMPACT_SHARE_QUEUE_URL`) it first plans every
//! table, from a random one on, and sends the other shares it serves,
//! `FLOE_COMPACT_MAX_INVOCATIONS` in all across the tables, each table's next share in turn, a
//! message each ([`ShareRequest`]). The queue's event source mapping invokes this function on each; the
//! invocation plans those partitions afresh from the table, reading only the manifests that can
//! hold them, and runs their tasks. What is left waits for the next tick.
//!
//! Overlapping runs are safe: the same task planned twice writes the same files and its second
//! request is a duplicate, and a task planned on files compacted since is rejected as stale. A
//! share that waited in the queue past `FLOE_COMPACT_SHARE_TTL_SECS` (keep it under the
//! schedule's interval) is dropped unrun: the next tick plans its partitions again. A share that
//! cannot be read, or whose run failed, fails again on each delivery and ends in the
//! dead-letter queue.

use std::collections::BTreeSet;
use std::time::Duration;

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use serde::{Deserialize, Serialize};
use tracing::{error, info, warn};

use crate::config::EngineConfig;
use crate::message::MESSAGE_VERSION;
use crate::pipeline::compact::{
    CompactOptions, CompactPlan, CompactReport, Held, Scope, Share, Task, compact, plan_loaded, run_planned,
};
use crate::ports::{Ports, Queue};
use crate::table::load_table;
use crate::table::sweep::sweep_orphans;
use crate::{Error, Result, TableIdent};

/// The `kind` of a share message.
pub const SHARE_KIND: &str = "compact-share";

/// A share message's size past which it names no manifests (SQS takes 256 KiB).
const MAX_SHARE_BYTES: usize = 200 << 10;

/// Where a tick sends the shares of its plan it does not run itself.
#[derive(Debug, Clone, PartialEq)]
pub struct FanOut {
    /// The share queue: `FLOE_COMPACT_SHARE_QUEUE_URL`.
    pub queue_url: String,
    /// Shares of a tick, its own included: `FLOE_COMPACT_MAX_INVOCATIONS` (10).
    pub max_invocations: usize,
    /// How long a share may wait in the queue: `FLOE_COMPACT_SHARE_TTL_SECS` (240: under the default 5-minute schedule).
    pub ttl: Duration,
}

/// A share of a tick's plan, for another invocation: plan these partitions and run their tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShareRequest {
    /// Message version ([`MESSAGE_VERSION`]).
    pub version: u32,
    /// [`SHARE_KIND`].
    pub kind: String,
    /// The table.
    pub table: String,
    /// The partitions' paths (as in data file paths).
    pub partitions: Vec<String>,
    /// For a stretch of a chain after its start: the first input of its first task.
    #[serde(default)]
    pub from: Option<String>,
    /// The manifests that held the partitions' live files when planned (absent: read every
    /// manifest), ...
    #[serde(default)]
    pub manifests: Option<Vec<String>>,
    /// ... the snapshot planned from ...
    #[serde(default)]
    pub planned_snapshot_id: Option<i64>,
    /// ... and its sequence number.
    #[serde(default)]
    pub planned_seq: Option<i64>,
    /// A full compaction.
    pub full: bool,
    /// Tasks to run at most.
    pub max_tasks: usize,
    /// When the tick planned it (Unix ms).
    pub planned_ms: i64,
}

/// What the compactor function runs with.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactorEnv {
    /// Engine limits.
    pub engine: EngineConfig,
    /// Tables compacted on every tick.
    pub tables: Vec<TableIdent>,
    /// Compaction settings.
    pub options: CompactOptions,
    /// Fan-out of a tick's plan, if the function has a share queue.
    pub fan_out: Option<FanOut>,
}

impl CompactorEnv {
    /// From settings looked up by name (the binary passes the environment):
    /// `FLOE_COMPACT_TABLES` (comma-separated; default `FLOE_DEFAULT_TABLE`, then
    /// `default.events`), `FLOE_COMPACT_MIN_FILES` (8), `FLOE_COMPACT_MAX_TASK_BYTES` (a quarter
    /// of `AWS_LAMBDA_FUNCTION_MEMORY_SIZE`, at most 512 MiB), `FLOE_COMPACT_MAX_TASKS` (16),
    /// `FLOE_COMPACT_SHARED_KEY_BYTES`, and the fan-out's `FLOE_COMPACT_SHARE_QUEUE_URL`,
    /// `FLOE_COMPACT_MAX_INVOCATIONS` (10) and `FLOE_COMPACT_SHARE_TTL_SECS` (240).
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let vars = crate::settings::Vars::new(&var);
        let number = |k: &str, min: u64| vars.number(k, min);
        let tables = match vars.tables("FLOE_COMPACT_TABLES")? {
            Some(list) => list,
            None => vec![vars.default_table()?],
        };
        let memory = number("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", 1)?.map(|mib| mib << 20);
        let mut options = CompactOptions { max_tasks: 16, ..CompactOptions::default() };
        options.max_task_bytes = memory.map_or(options.max_task_bytes, |m| (m / 4).min(options.max_task_bytes));
        options.shared_key_bytes =
            memory.map_or(options.shared_key_bytes, |m| (m / 8) as usize).min(options.shared_key_bytes);
        if let Some(n) = vars.count("FLOE_COMPACT_MIN_FILES", 2)? {
            options.min_files = n;
        }
        if let Some(n) = number("FLOE_COMPACT_MAX_TASK_BYTES", 1)? {
            options.max_task_bytes = n;
        }
        if let Some(n) = vars.count("FLOE_COMPACT_MAX_TASKS", 1)? {
            options.max_tasks = n;
        }
        if let Some(n) = vars.count("FLOE_COMPACT_SHARED_KEY_BYTES", 0)? {
            options.shared_key_bytes = n;
        }
        let fan_out = match vars.get("FLOE_COMPACT_SHARE_QUEUE_URL") {
            None => None,
            Some(queue_url) => Some(FanOut {
                queue_url,
                max_invocations: vars.count("FLOE_COMPACT_MAX_INVOCATIONS", 1)?.unwrap_or(10),
                ttl: vars.seconds("FLOE_COMPACT_SHARE_TTL_SECS", 1)?.unwrap_or(Duration::from_secs(240)),
            }),
        };
        if fan_out.is_none() {
            for k in ["FLOE_COMPACT_MAX_INVOCATIONS", "FLOE_COMPACT_SHARE_TTL_SECS"] {
                if vars.is_set(k) {
                    return Err(Error::Config(format!("{k} is set but FLOE_COMPACT_SHARE_QUEUE_URL is not")));
                }
            }
        }
        Ok(CompactorEnv { engine: EngineConfig::from_lookup(&var)?, tables, options, fan_out })
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
    /// Shares of the plan sent to other invocations.
    pub shares_sent: usize,
    /// Files merged.
    pub inputs: usize,
    /// Files written.
    pub outputs: usize,
    /// Orphans deleted by a sweep.
    pub orphans_deleted: usize,
}

/// The function's whole handler: records (the share queue's event source mapping) are shares,
/// anything else is a tick (a scheduled event, its `detail` optional).
/// Failed shares come back after [`super::backoff`]'s delay when `retries` is given.
pub async fn handle_event(
    env: &CompactorEnv,
    ports: &Ports,
    shares: Option<&dyn Queue>,
    retries: Option<&aws_sdk_sqs::Client>,
    payload: serde_json::Value,
) -> Result<serde_json::Value> {
    if payload.get("Records").is_some() {
        return Ok(serde_json::to_value(handle_share_event(env, ports, retries, payload).await?)?);
    }
    Ok(serde_json::to_value(handle_compactor(env, ports, shares, payload).await?)?)
}

/// The share queue's event (its JSON): [`handle_shares`], then each failed share made visible
/// again after [`super::backoff`]'s delay (with `retries`), not after the queue's whole
/// visibility timeout: a share has a TTL of minutes, so a retry must come within it.
pub async fn handle_share_event(
    env: &CompactorEnv,
    ports: &Ports,
    retries: Option<&aws_sdk_sqs::Client>,
    payload: serde_json::Value,
) -> Result<SqsBatchResponse> {
    let event: SqsEvent = serde_json::from_value(payload.clone())
        .map_err(|e| Error::message_from("the event has records but is not an SQS event", e))?;
    let response = handle_shares(env, ports, event).await;
    let failed: Vec<String> = response.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect();
    if let Some(sqs) = retries.filter(|_| !failed.is_empty()) {
        super::backoff::retry_soon(sqs, &super::backoff::failed_records(&payload, &failed)).await;
    }
    Ok(response)
}

/// The compactor function on a tick: compacts each table, sending the shares of its plan it
/// does not run to `shares` (the share queue, if [`CompactorEnv::fan_out`] is set), and the
/// rewrite requests to the commit queue; the committer commits them.
pub async fn handle_compactor(
    env: &CompactorEnv,
    ports: &Ports,
    shares: Option<&dyn Queue>,
    payload: serde_json::Value,
) -> Result<Vec<TableRun>> {
    let detail: Detail = match payload.get("detail") {
        None | Some(serde_json::Value::Null) => Detail::default(),
        Some(d) => serde_json::from_value(d.clone())
            .map_err(|e| Error::message_from("the event's detail is not a compaction request", e))?,
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
    let sweep = detail.sweep_older_than_hours;
    if let Some(hours) = sweep.filter(|_| !ports.pointer.manages_files()) {
        check_sweep_age(hours, env.engine.max_commit_age)?;
    }
    let (out, failed) = match (&env.fan_out, shares) {
        (Some(fan_out), Some(queue)) => fan_out_tick(env, ports, queue, fan_out, &tables, &options, sweep).await,
        _ => {
            let mut out = vec![];
            let mut failed = vec![];
            for table in tables {
                match compact_one(env, ports, &table, &options, sweep).await {
                    Ok(run) => out.push(run),
                    Err(e) => failed.push(failure(&table, e)),
                }
            }
            (out, failed)
        }
    };
    if !failed.is_empty() {
        return Err(Error::Tables { what: "compaction".into(), failures: failed });
    }
    Ok(out)
}

/// A table's failure, logged: the other tables still get their tick; the invocation fails at
/// the end.
fn failure(table: &TableIdent, e: Error) -> (String, Error) {
    error!(%table, error = %e, "compaction failed");
    (table.to_string(), e)
}

/// One table's tick without a share queue: its plan's first share, run here. A table that does
/// not exist yet (no data has arrived for it) is skipped: a schedule that starts before the
/// first object is not an error.
async fn compact_one(
    env: &CompactorEnv,
    ports: &Ports,
    table: &TableIdent,
    options: &CompactOptions,
    sweep_older_than_hours: Option<u64>,
) -> Result<TableRun> {
    let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await? else {
        return Ok(absent(table));
    };
    let plan = plan_loaded(ports, table, state, options).await?;
    let report = run_planned(&env.engine, ports, table, &plan, plan.first_tasks(options), options).await?;
    let orphans_deleted = match sweep_older_than_hours {
        None => 0,
        // The table as it is now, not as planned: another engine may have added a file since.
        Some(_) => match load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await? {
            Some(state) => sweep(ports, &state, sweep_older_than_hours).await?,
            None => 0,
        },
    };
    Ok(table_run(table, &report, 0, orphans_deleted))
}

fn absent(table: &TableIdent) -> TableRun {
    info!(%table, "table does not exist yet; nothing to compact");
    TableRun { table: table.to_string(), exists: false, ..TableRun::default() }
}

fn table_run(table: &TableIdent, report: &CompactReport, shares_sent: usize, orphans_deleted: usize) -> TableRun {
    info!(%table, planned = report.planned, tasks = report.tasks, shares_sent, orphans_deleted, "compactor tick");
    TableRun {
        table: table.to_string(),
        exists: true,
        planned: report.planned,
        tasks: report.tasks,
        shares_sent,
        inputs: report.totals.inputs,
        outputs: report.totals.outputs,
        orphans_deleted,
    }
}

/// The orphan sweep a tick's `detail` asks for, if any: objects unreachable and older than the
/// hours given. S3 Tables removes unreferenced files itself, and its storage refuses listings. A
/// table whose `gc.enabled` is false (its files may be another table's too) is skipped with a
/// warning: the daily sweep covers every table, and this one is not Floe's to clean.
async fn sweep(ports: &Ports, state: &crate::table::TableState, hours: Option<u64>) -> Result<usize> {
    let Some(hours) = hours.filter(|_| !ports.pointer.manages_files()) else { return Ok(0) };
    if !crate::table::maintain::gc_enabled(&state.metadata) {
        tracing::warn!(location = state.metadata.location(), "gc.enabled is false: the table is not swept");
        return Ok(0);
    }
    let cutoff = chrono::Utc::now().timestamp_millis() - (hours as i64).saturating_mul(3_600_000);
    Ok(sweep_orphans(ports.store.as_ref(), state, cutoff, false).await?.orphans.len())
}

/// The least a sweep's safety age must exceed the longest time a written file may still be
/// committed by: the committer's age check, the swap, and the sweep's own run (between reading
/// the table and deleting) take minutes; clocks differ by seconds.
const SWEEP_MARGIN: Duration = Duration::from_secs(6 * 3600);

/// Refuses a sweep that could delete a file still on its way to a commit: its safety age must
/// exceed, by [`SWEEP_MARGIN`], the commit age limit (`FLOE_MAX_COMMIT_AGE_HOURS`, which the
/// committer must share), past which the committer sends a file's sources back to the writers
/// instead of committing it. Without a limit nothing bounds how long a file may wait: SQS keeps
/// a message 14 days, but a redrive from the dead-letter queue starts that afresh, and a
/// contended commit re-sends its message. A file of a manifest that waited longer than the
/// sweep's age would be deleted and then committed: its rows lost, the table naming a missing
/// file.
fn check_sweep_age(hours: u64, max_commit_age: Option<Duration>) -> Result<()> {
    let Some(limit) = max_commit_age else {
        return Err(Error::Config(format!(
            "sweep_older_than_hours {hours}: a sweep needs a commit age limit (FLOE_MAX_COMMIT_AGE_HOURS, set on the \
             committer too) at least {} hours below it, or it could delete files still waiting to be committed \
             (the Terraform module sets it a day below orphan_sweep_older_than_hours)",
            SWEEP_MARGIN.as_secs() / 3600
        )));
    };
    let least = (limit + SWEEP_MARGIN).as_secs().div_ceil(3600);
    if hours < least {
        return Err(Error::Config(format!(
            "sweep_older_than_hours {hours} could delete files still waiting to be committed: it must be at least \
             {least}, the commit age limit (FLOE_MAX_COMMIT_AGE_HOURS) plus {} hours; raise it, or lower the limit \
             (on the committer too)",
            SWEEP_MARGIN.as_secs() / 3600
        )));
    }
    Ok(())
}

/// Which shares of the tables' plans (`lens[t]` shares for table `t`, each list most urgent
/// first) a tick of `budget` invocations serves: round by round, each table's next share in
/// the order given, so every table with work gets its turn however much another has. The tick
/// runs the first itself.
fn pick_shares(lens: &[usize], budget: usize) -> Vec<(usize, usize)> {
    let mut picks = vec![];
    for round in 0..lens.iter().copied().max().unwrap_or(0) {
        for (t, len) in lens.iter().enumerate() {
            if picks.len() == budget {
                return picks;
            }
            if round < *len {
                picks.push((t, round));
            }
        }
    }
    picks
}

/// A table of a fan-out tick, once planned: what the tick needs of its plan.
struct Planned<'a> {
    table: &'a TableIdent,
    /// Tasks planned (`None`: the table does not exist yet).
    planned: Option<usize>,
    /// The share messages of its first shares, at most a tick's budget of them.
    messages: Vec<String>,
    /// The plan and its first share's tasks, kept only for the table whose share the tick runs.
    own: Option<(CompactPlan, Vec<Task>)>,
}

/// A tick with a share queue. It plans every table, starting at a random one (so that, with
/// more tables due than invocations, each gets its turn), and keeps of each plan only its
/// first shares' messages, but the whole plan of the first table with work, whose first share
/// it runs itself. It sends the other shares it serves ([`pick_shares`],
/// `FLOE_COMPACT_MAX_INVOCATIONS` in all, each table's next share in turn) before that run, so
/// that no run here delays them; a tick that fails is not retried (the next one plans afresh;
/// sending a share twice is harmless).
async fn fan_out_tick(
    env: &CompactorEnv,
    ports: &Ports,
    queue: &dyn Queue,
    fan_out: &FanOut,
    tables: &[TableIdent],
    options: &CompactOptions,
    sweep_older_than_hours: Option<u64>,
) -> (Vec<TableRun>, Vec<(String, Error)>) {
    let budget = fan_out.max_invocations.max(1);
    let planned_ms = chrono::Utc::now().timestamp_millis();
    let first = if tables.is_empty() { 0 } else { rand::random_range(0..tables.len()) };
    let mut failed = vec![];
    let mut planned: Vec<Planned> = vec![];
    for table in tables.iter().cycle().skip(first).take(tables.len()) {
        let keep = planned.iter().all(|p| p.own.is_none());
        match plan_for_tick(ports, table, options, budget, planned_ms, keep).await {
            Ok(p) => planned.push(p),
            Err(e) => failed.push(failure(table, e)),
        }
    }
    let picks = pick_shares(&planned.iter().map(|p| p.messages.len()).collect::<Vec<_>>(), budget);
    let mut sent = vec![0; planned.len()];
    for &(t, i) in picks.iter().skip(1) {
        if let Err(e) = queue.send(planned[t].messages[i].clone()).await {
            failed.push(failure(planned[t].table, e.into()));
            break; // the queue is down: the other sends would only wait out their timeouts
        }
        sent[t] += 1;
    }
    let mut out = vec![];
    for (t, p) in planned.iter_mut().enumerate() {
        let Some(n) = p.planned else {
            out.push(absent(p.table));
            continue;
        };
        let run = async {
            let report = match p.own.take() {
                Some((plan, tasks)) => run_planned(&env.engine, ports, p.table, &plan, tasks, options).await?,
                None => CompactReport { planned: n, ..CompactReport::default() },
            };
            let orphans_deleted = match sweep_older_than_hours {
                None => 0,
                Some(_) => match load_table(ports.pointer.as_ref(), ports.store.as_ref(), p.table).await? {
                    Some(state) => sweep(ports, &state, sweep_older_than_hours).await?,
                    None => 0,
                },
            };
            Ok::<_, Error>(table_run(p.table, &report, sent[t], orphans_deleted))
        };
        match run.await {
            Ok(run) => out.push(run),
            Err(e) => failed.push(failure(p.table, e)),
        }
    }
    // Back in the order the tables were given.
    out.sort_by_key(|r| tables.iter().position(|t| t.to_string() == r.table));
    (out, failed)
}

/// Plans `table` for a fan-out tick: the messages of its first `budget` shares, and, if `keep`,
/// the plan with its first share's tasks (when it has any).
async fn plan_for_tick<'a>(
    ports: &Ports,
    table: &'a TableIdent,
    options: &CompactOptions,
    budget: usize,
    planned_ms: i64,
    keep: bool,
) -> Result<Planned<'a>> {
    let Some(state) = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await? else {
        return Ok(Planned { table, planned: None, messages: vec![], own: None });
    };
    let plan = plan_loaded(ports, table, state, options).await?;
    let shares: Vec<Share> = plan.shares(options.max_tasks).into_iter().take(budget).collect();
    let messages =
        shares.iter().map(|s| share_message(table, &plan, s, options, planned_ms)).collect::<Result<Vec<_>>>()?;
    let planned = Some(plan.tasks.len());
    let own = match shares.into_iter().next() {
        Some(first) if keep => Some((plan, first.tasks)),
        _ => None,
    };
    Ok(Planned { table, planned, messages, own })
}

/// The share queue's message for `share` of `table`'s `plan`: it names the manifests holding
/// the share's partitions, or none (its run then reads them all) when they would not fit.
fn share_message(
    table: &TableIdent,
    plan: &CompactPlan,
    share: &Share,
    options: &CompactOptions,
    planned_ms: i64,
) -> Result<String> {
    let held = share.scope(plan).manifests;
    let mut request = ShareRequest {
        version: MESSAGE_VERSION,
        kind: SHARE_KIND.into(),
        table: table.to_string(),
        partitions: share.partitions.clone(),
        from: share.from.clone(),
        planned_snapshot_id: held.as_ref().map(|h| h.snapshot_id),
        planned_seq: held.as_ref().map(|h| h.seq),
        manifests: held.map(|h| h.paths.into_iter().collect()),
        full: options.full,
        max_tasks: options.max_tasks,
        planned_ms,
    };
    let mut body = serde_json::to_string(&request)?;
    if body.len() > MAX_SHARE_BYTES {
        // Too many manifests to name in one message: the share's run reads them all.
        request.manifests = None;
        body = serde_json::to_string(&request)?;
    }
    if body.len() > MAX_SHARE_BYTES {
        return Err(Error::Config(format!(
            "a compaction share of {} partitions does not fit an SQS message: lower max_tasks (FLOE_COMPACT_MAX_TASKS)",
            request.partitions.len()
        )));
    }
    Ok(body)
}

/// The compactor function on shares from the share queue: plans each share's partitions afresh
/// and runs their tasks. A share that cannot run (a message that is not a share, a table that
/// is gone, a failed task) is reported failed, to be delivered again. A share older than the
/// fan-out's TTL is dropped when delivered first, and reported failed again when delivered
/// after a failure: so a failing share ends in the dead-letter queue (and its alarm), while the
/// ticks since have planned its partitions again.
pub async fn handle_shares(env: &CompactorEnv, ports: &Ports, event: SqsEvent) -> SqsBatchResponse {
    let mut failed = vec![];
    for record in event.records {
        let id = record.message_id.clone().unwrap_or_default();
        let deliveries: u32 =
            record.attributes.get("ApproximateReceiveCount").and_then(|n| n.parse().ok()).unwrap_or(1);
        if let Err(e) = run_share(env, ports, record.body.as_deref().unwrap_or_default(), deliveries).await {
            error!(message = %id, error = %e, "compaction share failed");
            failed.push(id);
        }
    }
    super::failures(failed)
}

/// Parses and runs one share message.
async fn run_share(env: &CompactorEnv, ports: &Ports, body: &str, deliveries: u32) -> Result<()> {
    let share: ShareRequest = serde_json::from_str(body)
        .map_err(|e| Error::message_from("a message on the share queue is not a compaction share", e))?;
    if share.version != MESSAGE_VERSION || share.kind != SHARE_KIND {
        return Err(Error::message(format!(
            "a compaction share of kind `{}` version {} is not supported (this build reads `{SHARE_KIND}` version \
             {MESSAGE_VERSION})",
            share.kind, share.version
        )));
    }
    let table: TableIdent = share.table.parse()?;
    let age_ms = chrono::Utc::now().timestamp_millis().saturating_sub(share.planned_ms);
    let ttl = env.fan_out.as_ref().map_or(Duration::from_secs(240), |f| f.ttl);
    if age_ms > ttl.as_millis() as i64 {
        if deliveries > 1 {
            return Err(Error::message(format!(
                "a compaction share of {table} failed before and is now {age_ms} ms old (past its TTL): \
                 left to the dead-letter queue; later ticks plan its partitions again"
            )));
        }
        warn!(%table, age_ms, partitions = share.partitions.len(), "compaction share expired; later ticks plan it again");
        return Ok(());
    }
    let mut options = env.options.clone();
    options.full = share.full;
    options.max_tasks = share.max_tasks.max(1);
    let held = match (share.manifests, share.planned_snapshot_id, share.planned_seq) {
        (Some(paths), Some(snapshot_id), Some(seq)) => {
            Some(Held { paths: paths.into_iter().collect(), snapshot_id, seq })
        }
        _ => None,
    };
    options.scope = Some(Scope {
        partitions: share.partitions.iter().cloned().collect::<BTreeSet<String>>(),
        manifests: held,
        from: share.from,
    });
    let report = compact(&env.engine, ports, &table, &options).await?;
    info!(%table, partitions = share.partitions.len(), planned = report.planned, tasks = report.tasks, "compaction share done");
    Ok(())
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
        assert_eq!(env(&[]).unwrap().fan_out, None, "no share queue: a tick runs one share");
        let e = env(&[("FLOE_COMPACT_SHARE_QUEUE_URL", "https://q"), ("FLOE_COMPACT_MAX_INVOCATIONS", "50")]).unwrap();
        let want = FanOut { queue_url: "https://q".into(), max_invocations: 50, ttl: Duration::from_secs(240) };
        assert_eq!(e.fan_out, Some(want));
        let bad = env(&[("FLOE_COMPACT_MAX_INVOCATIONS", "5")]).unwrap_err().to_string();
        assert!(bad.contains("FLOE_COMPACT_SHARE_QUEUE_URL"), "{bad}");
        let bad = env(&[("FLOE_COMPACT_SHARE_QUEUE_URL", "q"), ("FLOE_COMPACT_SHARE_TTL_SECS", "0")]).unwrap_err();
        assert!(bad.to_string().contains("FLOE_COMPACT_SHARE_TTL_SECS"), "{bad}");
    }

    #[test]
    fn a_sweep_must_be_older_than_any_file_still_on_its_way_to_a_commit() {
        let hours = |h: u64| Some(Duration::from_secs(h * 3600));
        let bad = check_sweep_age(10_000, None).unwrap_err().to_string();
        assert!(bad.contains("needs a commit age limit (FLOE_MAX_COMMIT_AGE_HOURS"), "{bad}");
        let bad = check_sweep_age(29, hours(24)).unwrap_err().to_string();
        assert!(bad.contains("at least 30") && bad.contains("commit age limit"), "{bad}");
        check_sweep_age(30, hours(24)).unwrap();
        // What the Terraform module derives from orphan_sweep_older_than_hours h: the limit is
        // max(h - 24, h / 2), which leaves the margin for every h it accepts (24 and up).
        for h in [24, 25, 47, 48, 49, 100, 360, 10_000] {
            check_sweep_age(h, hours((h - 24).max(h / 2))).unwrap();
        }
        let sample: serde_json::Value =
            serde_json::from_str(include_str!("../../../events/compactor/daily-sweep.json")).unwrap();
        let detail: Detail = serde_json::from_value(sample["detail"].clone()).unwrap();
        check_sweep_age(detail.sweep_older_than_hours.unwrap(), hours(336))
            .expect("the sample event, as the module deploys it");
    }

    #[test]
    fn a_ticks_budget_serves_every_table_in_turn() {
        assert_eq!(pick_shares(&[3, 1, 0, 2], 10), [(0, 0), (1, 0), (3, 0), (0, 1), (3, 1), (0, 2)]);
        assert_eq!(pick_shares(&[5, 5], 3), [(0, 0), (1, 0), (0, 1)], "the budget counts across tables");
        assert_eq!(pick_shares(&[0, 4], 2), [(1, 0), (1, 1)]);
        assert!(pick_shares(&[], 5).is_empty() && pick_shares(&[0, 0], 5).is_empty());
    }

    #[tokio::test]
    async fn a_detail_that_is_not_a_compaction_request_is_refused() {
        let e = env(&[]).unwrap();
        let ports = crate::adapters::local::ports(tempfile::tempdir().unwrap().path()).unwrap();
        let err =
            handle_compactor(&e, &ports, None, serde_json::json!({"detail": {"tabels": ["a.b"]}})).await.unwrap_err();
        assert!(err.to_string().contains("tabels"), "{err}");
    }
}
