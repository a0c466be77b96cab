//! `floe-committer` Lambda (reserved concurrency 1): file manifests from the commit queue →
//! `pipeline::commit` (DynamoDB lock, one snapshot per table, conditional pointer swap) →
//! partial batch failures for what is not committed yet. The committer is kept across warm
//! invocations, so steady-state commits read no table metadata.

use aws_lambda_events::event::sqs::{SqsBatchResponse, SqsEvent};
use floe::adapters::aws::{ColdStart, SqsQueue, cold_start};
use floe::config::EngineConfig;
use floe::handlers::{committer_env, handle_committer_with};
use floe::pipeline::commit::Committer;
use lambda_runtime::{Error, LambdaEvent, service_fn};
use tokio::sync::Mutex;

#[tokio::main]
async fn main() -> Result<(), Error> {
    let ColdStart { settings, clients, ports } = cold_start(floe::settings::env).await?;
    let emf = floe::adapters::aws::emf::Emf::new("floe-committer", floe::settings::env);
    let ports = ports.with_metrics(emf.recorder());
    let queue = SqsQueue::new(clients.sqs.clone(), &settings.commit_queue_url)
        .with_claim_check(ports.store.clone(), &settings.claim_check_prefix);
    let requeue = SqsQueue::new(clients.sqs.clone(), settings.ingest_queue()?);
    let engine = EngineConfig::from_lookup(floe::settings::env)?;
    let env = committer_env(floe::settings::env, ports.store.as_ref(), &clients).await?;
    let committer = Mutex::new(env.admitting(Committer::new(engine, ports).with_warehouse(&settings.warehouse)));
    let (committer, queue, requeue, emf, dlq) = (&committer, &queue, &requeue, &emf, env.dead_letters.as_ref());
    lambda_runtime::run(service_fn(move |ev: LambdaEvent<SqsEvent>| async move {
        let out = handle_committer_with(committer, queue, requeue, dlq, ev.payload).await;
        emf.flush();
        Ok::<SqsBatchResponse, Error>(out)
    }))
    .await
}

#[cfg(test)]
mod tests {
    use aws_lambda_events::event::sqs::SqsEvent;
    use floe::message::FileManifest;

    #[test]
    fn sample_commit_batch_parses_into_manifests() {
        let ev: SqsEvent = serde_json::from_str(include_str!("../../../events/committer/commit-batch.json")).unwrap();
        assert_eq!(ev.records.len(), 1);
        let m = FileManifest::from_json(ev.records[0].body.as_deref().unwrap()).unwrap();
        assert_eq!(m.table.to_string(), "default.events");
        assert_eq!(m.files.len(), 1);
        assert_eq!(m.rows(), 1000);
        assert_eq!(ev.records[0].attributes.get("ApproximateReceiveCount").map(String::as_str), Some("1"));
    }

    #[test]
    fn scheduled_event_sample_is_valid_json() {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("../../../events/compactor/scheduled.json")).unwrap();
        assert_eq!(v["detail-type"], "Scheduled Event");
    }
}
