//! A compactor tick's plan spread over several invocations, on local adapters: the tick runs
//! the most urgent share itself and sends the next ones to the share queue; the invocations
//! that take them run exactly those partitions; the partitions left over come first at the
//! next tick; and nothing is lost or doubled. Bad, expired and misdirected shares.

use std::collections::BTreeSet;
use std::time::Duration;

use floe::adapters::local::SqliteQueue;
use floe::config::TableConfig;
use floe::handlers::compactor::{CompactorEnv, ShareRequest, TableRun, handle_compactor, handle_shares};
use floe::pipeline::commit::Committer;
use floe::pipeline::compact::{CompactOptions, plan_table};
use floe::pipeline::ingest::{IngestOptions, ingest};
use floe::ports::{Message, Queue};

use crate::common::*;

const VISIBILITY: Duration = Duration::from_secs(60);

fn compactor_env(table: &str, invocations: &str) -> CompactorEnv {
    let vars = [
        ("FLOE_COMPACT_TABLES", table),
        ("FLOE_COMPACT_MIN_FILES", "2"),
        ("FLOE_COMPACT_MAX_TASKS", "2"),
        ("FLOE_COMPACT_SHARE_QUEUE_URL", "local:shares"),
        ("FLOE_COMPACT_MAX_INVOCATIONS", invocations),
        // The hot tenant's partition takes a chain of tasks, cut over shares.
        ("FLOE_COMPACT_MAX_TASK_BYTES", "40000"),
    ];
    CompactorEnv::from_lookup(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())).expect("env")
}

/// Messages shaped as the share queue's event source mapping delivers them.
fn sqs_event(msgs: &[Message]) -> aws_lambda_events::event::sqs::SqsEvent {
    let records: Vec<serde_json::Value> = msgs
        .iter()
        .map(|m| {
            serde_json::json!({
                "messageId": m.id, "receiptHandle": m.receipt, "body": m.body,
                "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {},
                "eventSource": "aws:sqs", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:shares",
                "awsRegion": "us-east-1"
            })
        })
        .collect();
    serde_json::from_value(serde_json::json!({ "Records": records })).expect("sqs event")
}

async fn tick(env: &CompactorEnv, h: &Harness, shares: &SqliteQueue) -> TableRun {
    let tick = serde_json::json!({"detail-type": "Scheduled Event", "source": "aws.events", "detail": {}});
    let mut runs = handle_compactor(env, &h.ports, Some(shares as &dyn Queue), tick).await.expect("tick");
    runs.pop().expect("one table")
}

/// Runs every share waiting on the queue, as its mapping would; returns the shares.
async fn run_shares(env: &CompactorEnv, h: &Harness, shares: &SqliteQueue) -> Vec<ShareRequest> {
    let msgs = shares.receive(100, VISIBILITY).await.expect("receive");
    let response = handle_shares(env, &h.ports, sqs_event(&msgs)).await;
    assert!(response.batch_item_failures.is_empty(), "{:?}", response.batch_item_failures);
    for m in &msgs {
        shares.ack(&m.receipt).await.expect("ack");
    }
    msgs.iter().map(|m| serde_json::from_str(&m.body).expect("a share")).collect()
}

async fn commit_all(h: &Harness) {
    let mut committer = Committer::new(h.engine.clone(), h.ports.clone());
    while committer.run_once(1000, VISIBILITY).await.expect("commit").is_some() {}
}

/// Ticks (each running every share it sent, then committing) until one plans nothing, at most
/// `ticks` of them; whether the table drained.
async fn drain(env: &CompactorEnv, h: &Harness, shares: &SqliteQueue, ticks: usize) -> bool {
    for _ in 0..ticks {
        let run = tick(env, h, shares).await;
        run_shares(env, h, shares).await;
        commit_all(h).await;
        if run.planned == 0 {
            return true;
        }
    }
    false
}

/// The paths of the partitions that still hold level-0 files.
async fn partitions_with_level_zero(h: &Harness, cfg: &TableConfig, opts: &CompactOptions) -> BTreeSet<String> {
    let plan = plan_table(&h.ports, &cfg.table, opts).await.expect("plan");
    let meta = &plan.state.metadata;
    plan.files
        .iter()
        .filter(|f| f.level() == 0)
        .map(|f| floe::table::partition_path(meta.default_partition_spec(), meta.current_schema(), &f.partition))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticks_plan_runs_over_several_invocations_and_every_partition_gets_its_turn() {
    let h = Harness::new();
    let cfg = events_table("ev.fanout");
    let objects = h.events("a", 6, 200, 11, 0.05).await;
    let batches = IngestOptions { writers: 2, batch_objects: 1, ..Default::default() };
    // One snapshot per object, so the plan (its order is by data sequence number) is the same
    // on every run: one ingest of them all commits them in as many snapshots as its committer
    // happens to make.
    for o in &objects {
        let r = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, vec![o.clone()], &batches).await.expect("ingest");
        assert!(r.quarantined.is_empty());
    }
    let env = compactor_env("ev.fanout", "3");
    let shares = SqliteQueue::open(&h.dir.path().join("shares.db"), "shares").expect("queue");

    let plan = plan_table(&h.ports, &cfg.table, &env.options).await.expect("plan");
    let planned = plan.shares(2);
    assert!(planned.len() > 3, "more shares than a tick's three invocations: {}", planned.len());
    assert!(planned[1].from.is_some(), "the hot partition's chain is cut over the first shares: {planned:?}");
    // Each share planned again in its scope: the same tasks, from the manifests it names.
    let ids = |tasks: &[floe::pipeline::compact::Task]| tasks.iter().map(|t| t.id.clone()).collect::<Vec<_>>();
    for share in &planned {
        let scoped = CompactOptions { scope: Some(share.scope(&plan)), max_tasks: 2, ..env.options.clone() };
        let again = plan_table(&h.ports, &cfg.table, &scoped).await.expect("scoped plan");
        let start = share.from.as_ref().map_or(0, |p| again.tasks.iter().position(|t| &t.inputs[0].path == p).unwrap());
        assert_eq!(ids(&again.tasks[start..][..share.tasks.len()]), ids(&share.tasks), "{:?}", share.partitions);
        assert!(again.manifests.iter().all(|m| share.manifests.contains(m)));
    }
    // The manifests a share names are all its run reads, while the history runs through its
    // snapshot; on another history (here a snapshot id the table never had) it reads them all.
    let mut scope = planned[0].scope(&plan);
    scope.manifests.as_mut().unwrap().paths.clear();
    let none = CompactOptions { scope: Some(scope.clone()), ..env.options.clone() };
    assert!(plan_table(&h.ports, &cfg.table, &none).await.expect("plan").files.is_empty(), "no manifest read");
    scope.manifests.as_mut().unwrap().snapshot_id = 4242;
    let elsewhere = CompactOptions { scope: Some(scope), ..env.options.clone() };
    let all = plan_table(&h.ports, &cfg.table, &elsewhere).await.expect("plan");
    assert_eq!(ids(&all.tasks[..planned[0].tasks.len()]), ids(&planned[0].tasks), "every manifest read");
    let run = tick(&env, &h, &shares).await;
    assert_eq!((run.tasks, run.shares_sent), (planned[0].tasks.len(), 2), "{run:?}");
    // The tick's own share commits before the others plan again: a stretch of a chain whose
    // start has committed still finds its tasks, and the manifests written since are read.
    commit_all(&h).await;
    let sent = run_shares(&env, &h, &shares).await;
    let sent_partitions: Vec<Vec<String>> = sent.iter().map(|s| s.partitions.clone()).collect();
    let want: Vec<Vec<String>> = planned[1..3].iter().map(|s| s.partitions.clone()).collect();
    assert_eq!(sent_partitions, want, "the next two shares, in plan order");
    commit_all(&h).await;

    // The three shares' partitions are compacted, the others wait.
    let served: BTreeSet<String> = planned[..3].iter().flat_map(|s| s.partitions.clone()).collect();
    let waiting: BTreeSet<String> = planned[3..].iter().flat_map(|s| s.partitions.clone()).collect();
    let due: BTreeSet<String> = served.union(&waiting).cloned().collect();
    let left = partitions_with_level_zero(&h, &cfg, &env.options).await;
    assert_eq!(left.intersection(&due).cloned().collect::<BTreeSet<_>>(), waiting, "served: {served:?}");

    // More data for every partition: the next tick still takes the partitions that waited
    // first, their level-0 files being the oldest.
    let more = h.events("b", 4, 200, 13, 0.05).await;
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, more.clone(), &batches).await.expect("ingest");
    let next_plan = plan_table(&h.ports, &cfg.table, &env.options).await.expect("plan");
    let next = next_plan.shares(2);
    assert!(next.iter().any(|s| s.partitions.iter().any(|p| served.contains(p))), "served partitions are due again");
    // Partitions in the new plan's order, with their oldest input (its data sequence number and
    // whether it is a compacted file: one planned from a snapshot is newer than that snapshot's
    // level-0 files).
    let meta = &next_plan.state.metadata;
    let mut order: Vec<(String, (i64, bool))> = vec![];
    for t in &next_plan.tasks {
        let p = floe::table::partition_path(meta.default_partition_spec(), meta.current_schema(), &t.partition);
        let oldest = t.inputs.iter().map(|f| (f.seq, f.level() > 0)).min().expect("inputs");
        match order.last_mut() {
            Some((q, seq)) if *q == p => *seq = (*seq).min(oldest),
            _ => order.push((p, oldest)),
        }
    }
    let s1 = plan.state.metadata.current_snapshot().expect("a snapshot").sequence_number();
    let only_served = |p: &String| served.contains(p) && !waiting.contains(p);
    assert!(
        order.iter().filter(|(p, _)| only_served(p)).all(|(_, seq)| *seq >= (s1, true)),
        "served: all newer {order:?}"
    );
    assert!(order.windows(2).all(|w| w[0].1 <= w[1].1), "most urgent first: {order:?}");
    let first_served = order.iter().position(|(p, _)| only_served(p));
    let last_waiting = order.iter().rposition(|(p, seq)| waiting.contains(p) && *seq <= (s1, false));
    assert!(first_served.is_some(), "a partition the first shares served whole: {order:?}");
    assert!(last_waiting.is_some() && last_waiting < first_served, "the partitions that waited come first: {order:?}");

    // Ticks, with invocations enough for every share, until nothing is due: every key once.
    let env = compactor_env("ev.fanout", "100");
    assert!(drain(&env, &h, &shares, 20).await, "twenty ticks did not compact the table");
    let ids = contents(&h.ports, &cfg.table).await.event_ids();
    let want: BTreeSet<String> = source_event_ids(&objects).into_iter().chain(source_event_ids(&more)).collect();
    assert_eq!(ids.len(), want.len(), "every key once");
    assert_eq!(ids.into_iter().collect::<BTreeSet<_>>(), want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_share_that_is_bad_or_expired_runs_nothing_and_only_a_bad_one_fails() {
    let h = Harness::new();
    let cfg = events_table("ev.shares");
    let objects = h.events("a", 3, 100, 12, 0.0).await;
    let batches = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &batches).await.expect("ingest");
    let env = compactor_env("ev.shares", "3");
    let plan = plan_table(&h.ports, &cfg.table, &env.options).await.expect("plan");
    let due = plan.tasks.len();
    assert!(due > 0);
    let share = |planned_ms: i64, table: &str, partitions: Vec<String>| {
        let s = ShareRequest {
            version: 1,
            kind: "compact-share".into(),
            table: table.into(),
            partitions,
            from: None,
            manifests: None,
            planned_snapshot_id: None,
            planned_seq: None,
            full: false,
            max_tasks: 1000,
            planned_ms,
        };
        serde_json::to_string(&s).unwrap()
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as i64;
    let all: Vec<String> = plan.shares(usize::MAX).remove(0).partitions;
    let message = |id: &str, body: String| Message {
        id: id.into(),
        receipt: id.into(),
        body,
        receive_count: 1,
        sender: None,
        sent_for: None,
    };
    let msgs = [
        message("expired", share(now - 3_600_000, "ev.shares", all.clone())),
        message("not-json", "{\"partitions\": 3}".into()),
        message("other-version", share(now, "ev.shares", all.clone()).replace("\"version\":1", "\"version\":9")),
        message("no-table", share(now, "ev.missing", all.clone())),
        message("no-partition", share(now, "ev.shares", vec!["tenant_id=nobody".into()])),
    ];
    let response = handle_shares(&env, &h.ports, sqs_event(&msgs)).await;
    let failed: BTreeSet<&str> = response.batch_item_failures.iter().map(|f| f.item_identifier.as_str()).collect();
    assert_eq!(failed, BTreeSet::from(["not-json", "other-version", "no-table"]));
    // An expired share delivered again (its run failed before) fails again: in the end it is
    // dead-lettered, not dropped.
    let mut redelivered = sqs_event(&[message("expired-again", share(now - 3_600_000, "ev.shares", all.clone()))]);
    redelivered.records[0].attributes.insert("ApproximateReceiveCount".into(), "2".into());
    let response = handle_shares(&env, &h.ports, redelivered).await;
    assert_eq!(response.batch_item_failures.len(), 1);
    commit_all(&h).await;
    let again = plan_table(&h.ports, &cfg.table, &env.options).await.expect("plan");
    assert_eq!(again.tasks.len(), due, "no share ran a task");

    // The same share, fresh: it compacts every partition it names.
    let response = handle_shares(&env, &h.ports, sqs_event(&[message("fresh", share(now, "ev.shares", all))])).await;
    assert!(response.batch_item_failures.is_empty());
    commit_all(&h).await;
    let after = plan_table(&h.ports, &cfg.table, &env.options).await.expect("plan");
    assert!(after.tasks.iter().all(|t| t.level > 1), "no level-0 merge left: {:?}", after.tasks);
}

/// The table rolled back (to the snapshot before the one a tick planned from) while its shares
/// wait: their history no longer runs through their snapshot, so each run reads every manifest
/// and plans its partitions from the table as it is; nothing rolled back comes back, nothing
/// kept is lost or doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shares_planned_before_a_rollback_plan_again_from_the_rolled_back_table() {
    let h = Harness::new();
    let cfg = events_table("ev.rollback");
    let batches = IngestOptions { writers: 2, batch_objects: 1, ..Default::default() };
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, h.events("a", 5, 200, 21, 0.0).await, &batches).await.unwrap();
    let before = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table)
        .await
        .unwrap()
        .unwrap()
        .metadata
        .current_snapshot_id()
        .unwrap();
    ingest(&h.engine, &h.ports, &cfg, &h.warehouse, h.events("b", 2, 200, 22, 0.0).await, &batches).await.unwrap();
    let env = compactor_env("ev.rollback", "4");
    let shares = SqliteQueue::open(&h.dir.path().join("shares.db"), "shares").expect("queue");
    let run = tick(&env, &h, &shares).await;
    assert!(run.shares_sent > 0, "{run:?}");
    // Its own share's requests are rejected below: planned from a snapshot no longer in the
    // table's history.
    roll_back(&h.ports, &cfg.table, before).await;
    let meta = floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table)
        .await
        .unwrap()
        .unwrap()
        .metadata;
    let kept = contents(&h.ports, &cfg.table).await.event_ids();
    assert_eq!(counts(&kept).len(), kept.len(), "each key once before");

    run_shares(&env, &h, &shares).await;
    commit_all(&h).await;
    let after = contents(&h.ports, &cfg.table).await.event_ids();
    assert_eq!(counts(&after), counts(&kept), "the shares' runs kept exactly the rolled-back rows");
    let state =
        floe::table::load_table(h.ports.pointer.as_ref(), h.ports.store.as_ref(), &cfg.table).await.unwrap().unwrap();
    let rewrites = state.metadata.snapshots().filter(|s| s.sequence_number() > meta.last_sequence_number()).count();
    assert!(rewrites > 0, "the shares compacted the rolled-back table");
    let env = compactor_env("ev.rollback", "100");
    for _ in 0..20 {
        let run = tick(&env, &h, &shares).await;
        run_shares(&env, &h, &shares).await;
        commit_all(&h).await;
        if run.planned == 0 {
            break;
        }
    }
    assert_eq!(counts(&contents(&h.ports, &cfg.table).await.event_ids()), counts(&kept), "drained: the same rows");
}

const TWIN_SCHEMA: &str = r#"{"type":"record","name":"E","fields":[
    {"name":"event_id","type":"string"},{"name":"tenant","type":["null","string"]},{"name":"v","type":"long"}]}"#;

/// An Avro file of rows `{tag}{n}` for `n` in `ids`, all of one tenant (`None`: null).
fn twin_avro(tenant: Option<&str>, tag: &str, ids: std::ops::Range<u32>) -> Vec<u8> {
    use apache_avro::types::Value;
    let schema = apache_avro::Schema::parse_str(TWIN_SCHEMA).unwrap();
    let mut w = apache_avro::Writer::new(&schema, vec![]);
    for n in ids {
        let mut r = apache_avro::types::Record::new(&schema).unwrap();
        r.put("event_id", format!("{tag}{n}"));
        let t = match tenant {
            Some(t) => Value::Union(1, Box::new(Value::String(t.into()))),
            None => Value::Union(0, Box::new(Value::Null)),
        };
        r.put("tenant", t);
        r.put("v", i64::from(n));
        w.append(r).unwrap();
    }
    w.into_inner().unwrap()
}

/// Partition paths are not injective: a null tenant and the string "null" both read
/// `tenant=null`. Shares of one task each name that one path for two partitions; each run plans
/// every partition with the path, and each is compacted into files of its own: no row moves to
/// the other partition, and none is lost or doubled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twin_partitions_of_one_path_are_compacted_apart_over_shares() {
    let h = Harness::new();
    let cfg = TableConfig::new("kv.twins".parse().unwrap())
        .with_partition_by("identity(tenant)")
        .unwrap()
        .with_dedup_key("event_id")
        .unwrap();
    let mut objects = vec![];
    let mut want: BTreeSet<(String, Option<String>)> = BTreeSet::new();
    for i in 0..3u32 {
        for (tenant, tag) in [(None, "n"), (Some("null"), "s"), (Some("t1"), "t")] {
            let ids = i * 10..i * 10 + 5;
            want.extend(ids.clone().map(|n| (format!("{tag}{n}"), tenant.map(str::to_string))));
            let bytes = twin_avro(tenant, tag, ids);
            objects.push(h.put_file("in", &format!("{tag}-{i}.avro"), &bytes).await);
        }
    }
    let batches = IngestOptions { writers: 1, batch_objects: 1, ..Default::default() };
    let r = ingest(&h.engine, &h.ports, &cfg, &h.warehouse, objects, &batches).await.expect("ingest");
    assert!(r.quarantined.is_empty(), "{:?}", r.quarantined);
    let vars = [
        ("FLOE_COMPACT_TABLES", "kv.twins"),
        ("FLOE_COMPACT_MIN_FILES", "2"),
        ("FLOE_COMPACT_MAX_TASKS", "1"),
        ("FLOE_COMPACT_SHARE_QUEUE_URL", "local:shares"),
        ("FLOE_COMPACT_MAX_INVOCATIONS", "10"),
    ];
    let env = CompactorEnv::from_lookup(|k| vars.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())).unwrap();
    let plan = plan_table(&h.ports, &cfg.table, &env.options).await.expect("plan");
    let paths: Vec<Vec<String>> = plan.shares(1).into_iter().map(|s| s.partitions).collect();
    assert_eq!(paths.len(), 3, "{paths:?}");
    assert_eq!(paths.iter().filter(|p| p.as_slice() == ["tenant=null"]).count(), 2, "twins: {paths:?}");

    let shares = SqliteQueue::open(&h.dir.path().join("shares.db"), "shares").expect("queue");
    assert!(drain(&env, &h, &shares, 10).await, "ten ticks did not compact the table");
    let c = contents(&h.ports, &cfg.table).await;
    assert_eq!(c.files.len(), 3, "one file per partition");
    let mut got: Vec<(String, Option<String>)> = vec![];
    for (path, partition, b) in &c.files {
        let ids = b.column_by_name("event_id").unwrap();
        let ids = ids.as_any().downcast_ref::<arrow_array::StringArray>().unwrap();
        let tenants = b.column_by_name("tenant").unwrap();
        let tenants = tenants.as_any().downcast_ref::<arrow_array::StringArray>().unwrap();
        let rows: Vec<(String, Option<String>)> = (0..b.num_rows())
            .map(|i| {
                (ids.value(i).to_string(), arrow_array::Array::is_valid(tenants, i).then(|| tenants.value(i).into()))
            })
            .collect();
        let tenant = &rows[0].1;
        assert!(rows.iter().all(|(_, t)| t == tenant), "{path}: one tenant per file");
        let value = partition.fields().first().cloned().flatten();
        let expected = tenant.as_ref().map(|t| iceberg::spec::Literal::string(t.clone()));
        assert_eq!(value, expected, "{path}: the partition value is its rows' tenant");
        got.extend(rows);
    }
    assert_eq!(got.len(), want.len(), "every key once");
    assert_eq!(got.into_iter().collect::<BTreeSet<_>>(), want, "each row in its own partition, unchanged");
}

/// `FLOE_COMPACT_MAX_INVOCATIONS` bounds a tick across its tables: every table is planned and
/// the shares it serves go out, each table's next share in turn, before the tick runs its own;
/// so no table waits for another's run, and with more tables due than invocations the random
/// start gives each its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ticks_invocations_are_shared_by_its_tables_in_turn() {
    let h = Harness::new();
    let batches = IngestOptions { writers: 2, batch_objects: 1, ..Default::default() };
    let (a, b) = (events_table("ev.first"), events_table("ev.second"));
    let (in_a, in_b) = (h.events("a", 5, 200, 31, 0.0).await, h.events("b", 5, 200, 32, 0.0).await);
    ingest(&h.engine, &h.ports, &a, &h.warehouse, in_a.clone(), &batches).await.expect("ingest");
    ingest(&h.engine, &h.ports, &b, &h.warehouse, in_b.clone(), &batches).await.expect("ingest");
    let env = compactor_env("ev.first, ev.second", "3");
    for t in [&a, &b] {
        let plan = plan_table(&h.ports, &t.table, &env.options).await.expect("plan");
        assert!(plan.shares(2).len() >= 2, "{}: more shares than its turn", t.table);
    }
    let shares = SqliteQueue::open(&h.dir.path().join("shares.db"), "shares").expect("queue");
    let tick = serde_json::json!({"detail-type": "Scheduled Event", "source": "aws.events", "detail": {}});
    let runs = handle_compactor(&env, &h.ports, Some(&shares as &dyn Queue), tick).await.expect("tick");
    assert_eq!(runs.iter().map(|r| r.table.as_str()).collect::<Vec<_>>(), ["ev.first", "ev.second"]);
    // Three invocations: one table's first share here (the tick starts at a random table), the
    // other's first and this one's second sent.
    let here: Vec<&str> = runs.iter().filter(|r| r.tasks > 0).map(|r| r.table.as_str()).collect();
    assert_eq!(here.len(), 1, "{runs:?}");
    assert!(runs.iter().all(|r| r.shares_sent == 1), "{runs:?}");
    commit_all(&h).await;
    let sent = run_shares(&env, &h, &shares).await;
    let other = if here[0] == "ev.first" { "ev.second" } else { "ev.first" };
    assert_eq!(sent.iter().map(|s| s.table.as_str()).collect::<Vec<_>>(), [other, here[0]], "in turn");
    commit_all(&h).await;
    for (cfg, objects) in [(&a, &in_a), (&b, &in_b)] {
        let ids = contents(&h.ports, &cfg.table).await.event_ids();
        assert_eq!(counts(&ids), counts(&source_event_ids(objects)), "{}: every key once", cfg.table);
    }
}

/// More tables due than a tick's invocations, and all kept due by new data: each tick serves
/// one, from a random table on, so every table is compacted within a few ticks (a fixed order
/// would serve the first for ever).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tables_past_a_ticks_budget_get_their_turn_over_ticks() {
    let h = Harness::new();
    let batches = IngestOptions { writers: 2, batch_objects: 1, ..Default::default() };
    let names = ["ev.t1", "ev.t2", "ev.t3", "ev.t4"];
    for (i, name) in names.iter().enumerate() {
        let objects = h.events(&format!("in{i}"), 3, 100, 40 + i as u64, 0.0).await;
        ingest(&h.engine, &h.ports, &events_table(name), &h.warehouse, objects, &batches).await.expect("ingest");
    }
    let env = compactor_env(&names.join(","), "1");
    let shares = SqliteQueue::open(&h.dir.path().join("shares.db"), "shares").expect("queue");
    let tick_event = serde_json::json!({"detail-type": "Scheduled Event", "source": "aws.events", "detail": {}});
    let mut served = BTreeSet::new();
    for tick in 0..40u64 {
        let runs = handle_compactor(&env, &h.ports, Some(&shares as &dyn Queue), tick_event.clone()).await.unwrap();
        assert_eq!(runs.iter().filter(|r| r.tasks > 0).count(), 1, "one invocation: one table a tick");
        assert!(runs.iter().all(|r| r.shares_sent == 0));
        served.extend(runs.iter().filter(|r| r.tasks > 0).map(|r| r.table.clone()));
        commit_all(&h).await;
        if served.len() == names.len() {
            break;
        }
        for (i, name) in names.iter().enumerate() {
            let objects = h.events(&format!("more{i}-{tick}"), 2, 50, 1000 * tick + i as u64, 0.0).await;
            ingest(&h.engine, &h.ports, &events_table(name), &h.warehouse, objects, &batches).await.expect("ingest");
        }
    }
    assert_eq!(served.len(), names.len(), "every table served within 40 ticks: {served:?}");
}
