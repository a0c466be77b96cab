//! `floe-compactor` Lambda: on a schedule, plans each table's LSM merges from its metadata,
//! runs the most urgent share of the tasks on the function's cores and sends the other shares to
//! the share queue; from that queue (its event source mapping), runs one share. Rewrite
//! requests go to the commit queue for the committer. It never writes table metadata.

use floe::adapters::aws::{ColdStart, SqsQueue, cold_start};
use floe::handlers::compactor::{CompactorEnv, handle_event};
use floe::ports::Queue;
use lambda_runtime::{Error, LambdaEvent, service_fn};

#[tokio::main]
async fn main() -> Result<(), Error> {
    let ColdStart { ports, clients, .. } = cold_start(floe::settings::env).await?;
    let emf = floe::adapters::aws::emf::Emf::new("floe-compactor", floe::settings::env);
    let ports = ports.with_metrics(emf.recorder());
    let env = CompactorEnv::from_lookup(floe::settings::env).map_err(|e| e.to_string())?;
    let shares = env.fan_out.as_ref().map(|f| SqsQueue::new(clients.sqs.clone(), &f.queue_url));
    let (env, ports, emf, shares, sqs) = (&env, &ports, &emf, shares.as_ref().map(|q| q as &dyn Queue), &clients.sqs);
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<serde_json::Value>| async move {
        let out = handle_event(env, ports, shares, Some(sqs), ev.payload).await;
        emf.flush();
        Ok::<serde_json::Value, Error>(out?)
    }))
    .await
}

#[cfg(test)]
mod tests {
    use floe::handlers::compactor::{CompactorEnv, handle_compactor};

    /// The sample events drive the handler on a local warehouse with no table: the scheduled
    /// tick compacts the environment's table, the full one names its own; both skip the table
    /// as not there yet (a schedule that starts before the first object is not an error).
    #[tokio::test]
    async fn the_sample_events_name_the_tables_to_compact() {
        let dir = tempfile::tempdir().unwrap();
        let ports = floe::adapters::local::ports(dir.path()).unwrap();
        let env = CompactorEnv::from_lookup(|k| (k == "FLOE_DEFAULT_TABLE").then(|| "web.clicks".to_string())).unwrap();
        for (sample, table) in [
            (include_str!("../../../events/compactor/scheduled.json"), "web.clicks"),
            (include_str!("../../../events/compactor/full-compaction.json"), "default.events"),
        ] {
            let ev: serde_json::Value = serde_json::from_str(sample).unwrap();
            let runs = handle_compactor(&env, &ports, None, ev).await.unwrap();
            assert_eq!(runs.len(), 1);
            assert_eq!((runs[0].table.as_str(), runs[0].exists, runs[0].tasks), (table, false, 0));
        }
    }
}
