//! `floe run-function`: a deployed function, run locally. It reads its configuration from the
//! environment exactly as the Lambda binary does (`FLOE_*`, `AWS_*`), and is fed the way the
//! function is on AWS: the writer and the committer from their SQS queue, as the event source
//! mapping does (batches, partial batch failures, deletes), the compactor with one scheduled
//! event, or from its share queue (`--queue-url`) as that queue's mapping does. With the environment a deployment gives its functions (the Terraform module's
//! `function_environments` output), this runs the pipeline on LocalStack or moto, or steps in
//! for a function on AWS while debugging.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use aws_sdk_sqs::types::MessageSystemAttributeName;
use clap::{Args, ValueEnum};
use floe::adapters::aws::emf::Emf;
use floe::adapters::aws::{AwsSettings, Clients, SqsQueue, connect_with};
use floe::config::EngineConfig;
use floe::handlers::compactor::{CompactorEnv, handle_compactor, handle_share_event};
use floe::handlers::{committer_env, handle_committer_with, handle_writer, writer_env};
use floe::pipeline::commit::Committer;
use floe::ports::Queue;
use tokio::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Function {
    /// floe-writer, fed from the ingest queue.
    Writer,
    /// floe-committer, fed from the commit queue (FLOE_COMMIT_QUEUE_URL).
    Committer,
    /// floe-compactor, invoked once with a scheduled event (or fed from its share queue with --queue-url).
    Compactor,
}

#[derive(Debug, Args)]
pub(crate) struct RunFunctionArgs {
    /// Which function.
    #[arg(value_enum)]
    function: Function,
    /// The queue its event source mapping reads: required for the writer (the ingest queue);
    /// the committer's defaults to FLOE_COMMIT_QUEUE_URL; the compactor reads its share queue
    /// (FLOE_COMPACT_SHARE_QUEUE_URL) only if given one.
    #[arg(long)]
    queue_url: Option<String>,
    /// Messages per invocation (the mapping's batch size).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=10000))]
    batch_size: u16,
    /// Stop once the queue has been empty for this many seconds (default: run until killed).
    #[arg(long)]
    until_idle_secs: Option<u64>,
    /// Seconds a message the function reported as failed stays invisible before it is
    /// retried (on AWS it waits out the queue's visibility timeout).
    #[arg(long, default_value_t = 2)]
    retry_after_secs: i32,
    /// Compactor: the event to invoke it with (JSON file, e.g. events/compactor/full-compaction.json);
    /// default: a scheduled tick.
    #[arg(long)]
    event: Option<PathBuf>,
}

pub(crate) async fn run(a: RunFunctionArgs) -> anyhow::Result<ExitCode> {
    let settings = AwsSettings::from_lookup(floe::settings::env)?;
    let clients = Clients::load(&settings).await;
    let emf = Emf::new(
        match a.function {
            Function::Writer => "floe-writer",
            Function::Committer => "floe-committer",
            Function::Compactor => "floe-compactor",
        },
        floe::settings::env,
    );
    let ports = connect_with(&settings, &clients).await?.with_metrics(emf.recorder());
    // What each invocation recorded, as the function's CloudWatch EMF line (on stderr here).
    let emit = || {
        if let Some(line) = emf.take_line() {
            eprintln!("{line}");
        }
    };
    match a.function {
        Function::Compactor => {
            let env = CompactorEnv::from_lookup(floe::settings::env)?;
            if let Some(url) = a.queue_url.clone() {
                let mapping = Mapping::new(&clients, url, &a);
                return mapping
                    .run(|event| async {
                        let out = handle_share_event(&env, &ports, Some(&clients.sqs), event).await.ok();
                        emit();
                        out
                    })
                    .await;
            }
            let shares = env.fan_out.as_ref().map(|f| SqsQueue::new(clients.sqs.clone(), &f.queue_url));
            let event: serde_json::Value = match &a.event {
                Some(p) => serde_json::from_str(&std::fs::read_to_string(p).with_context(|| p.display().to_string())?)
                    .with_context(|| format!("{} is not JSON", p.display()))?,
                None => serde_json::json!({"detail-type": "Scheduled Event", "source": "aws.events", "detail": {}}),
            };
            let runs = handle_compactor(&env, &ports, shares.as_ref().map(|q| q as &dyn Queue), event).await;
            emit();
            let runs = runs?;
            println!("{}", serde_json::to_string_pretty(&runs)?);
            Ok(ExitCode::SUCCESS)
        }
        Function::Writer => {
            let Some(url) = a.queue_url.clone() else {
                bail!("the writer reads the ingest queue: pass --queue-url (the deployment's ingest_queue_url)")
            };
            let env = writer_env(floe::settings::env, ports.store.as_ref(), &clients).await?;
            let mapping = Mapping::new(&clients, url, &a);
            mapping
                .run(|event| async {
                    let out = handle_writer(&env, &ports, event).await;
                    emit();
                    match out {
                        Ok(r) => Some(r),
                        Err(e) => {
                            tracing::error!(error = %e, "writer invocation failed");
                            None
                        }
                    }
                })
                .await
        }
        Function::Committer => {
            let url = a.queue_url.clone().unwrap_or_else(|| settings.commit_queue_url.clone());
            let queue = SqsQueue::new(clients.sqs.clone(), &url)
                .with_claim_check(ports.store.clone(), &settings.claim_check_prefix);
            let requeue = SqsQueue::new(clients.sqs.clone(), settings.ingest_queue()?);
            let engine = EngineConfig::from_lookup(floe::settings::env)?;
            let env = committer_env(floe::settings::env, ports.store.as_ref(), &clients).await?;
            let committer = Committer::new(engine, ports.clone()).with_warehouse(&settings.warehouse);
            let committer = Mutex::new(env.admitting(committer));
            let mapping = Mapping::new(&clients, url, &a);
            mapping
                .run(|event| async {
                    let ev = serde_json::from_value(event).ok()?;
                    let out = handle_committer_with(&committer, &queue, &requeue, env.dead_letters.as_ref(), ev).await;
                    emit();
                    Some(out)
                })
                .await
        }
    }
}

/// An SQS event source mapping, locally: receive a batch, invoke, delete what succeeded.
struct Mapping {
    sqs: aws_sdk_sqs::Client,
    url: String,
    batch: usize,
    idle: Option<Duration>,
    retry_after: i32,
}

type Response = aws_lambda_events::event::sqs::SqsBatchResponse;

impl Mapping {
    fn new(clients: &Clients, url: String, a: &RunFunctionArgs) -> Self {
        Mapping {
            sqs: clients.sqs.clone(),
            url,
            batch: usize::from(a.batch_size),
            idle: a.until_idle_secs.map(Duration::from_secs),
            retry_after: a.retry_after_secs.max(0),
        }
    }

    /// Invokes `handler` on batches until the queue has been idle long enough. A handler that
    /// returns `None` failed as a whole: every message of its batch is retried.
    async fn run<F, Fut>(&self, handler: F) -> anyhow::Result<ExitCode>
    where
        F: Fn(serde_json::Value) -> Fut,
        Fut: std::future::Future<Output = Option<Response>>,
    {
        let mut last_seen = Instant::now();
        let (mut invocations, mut messages, mut failed) = (0u64, 0u64, 0u64);
        loop {
            let batch = self.receive().await?;
            if batch.is_empty() {
                if self.idle.is_some_and(|idle| last_seen.elapsed() >= idle) {
                    break;
                }
                continue;
            }
            last_seen = Instant::now();
            let records: Vec<serde_json::Value> = batch.iter().map(record).collect();
            let response = handler(serde_json::json!({ "Records": records })).await;
            invocations += 1;
            messages += batch.len() as u64;
            let failures: Vec<String> = match &response {
                Some(r) => r.batch_item_failures.iter().map(|f| f.item_identifier.clone()).collect(),
                None => batch.iter().filter_map(|m| m.message_id().map(str::to_string)).collect(),
            };
            failed += failures.len() as u64;
            self.settle(&batch, &failures).await?;
        }
        eprintln!("{invocations} invocation(s), {messages} message(s), {failed} reported failed");
        Ok(ExitCode::SUCCESS)
    }

    /// Up to one batch of messages (several receives of 10).
    async fn receive(&self) -> anyhow::Result<Vec<aws_sdk_sqs::types::Message>> {
        let mut out = vec![];
        while out.len() < self.batch {
            let got = self
                .sqs
                .receive_message()
                .queue_url(&self.url)
                .max_number_of_messages((self.batch - out.len()).min(10) as i32)
                .wait_time_seconds(if out.is_empty() { 1 } else { 0 })
                .message_system_attribute_names(MessageSystemAttributeName::All)
                .message_attribute_names("All")
                .send()
                .await
                .with_context(|| format!("receive from {}", self.url))?;
            let n = got.messages().len();
            out.extend(got.messages().iter().cloned());
            if n == 0 {
                break;
            }
        }
        Ok(out)
    }

    /// Deletes what succeeded; failed messages come back after `retry_after`.
    async fn settle(&self, batch: &[aws_sdk_sqs::types::Message], failures: &[String]) -> anyhow::Result<()> {
        for m in batch {
            let receipt = m.receipt_handle().unwrap_or_default();
            if failures.iter().any(|f| Some(f.as_str()) == m.message_id()) {
                let retry = self.sqs.change_message_visibility().queue_url(&self.url).receipt_handle(receipt);
                retry.visibility_timeout(self.retry_after).send().await.context("change visibility")?;
            } else {
                self.sqs
                    .delete_message()
                    .queue_url(&self.url)
                    .receipt_handle(receipt)
                    .send()
                    .await
                    .context("delete")?;
            }
        }
        Ok(())
    }
}

/// A received message as a record of the Lambda SQS event: its receive count and sender, and its
/// string message attributes.
fn record(m: &aws_sdk_sqs::types::Message) -> serde_json::Value {
    let system = |name| m.attributes().and_then(|a| a.get(&name)).cloned();
    let mut attributes = serde_json::json!({
        "ApproximateReceiveCount": system(MessageSystemAttributeName::ApproximateReceiveCount).unwrap_or_else(|| "1".into())
    });
    if let Some(sender) = system(MessageSystemAttributeName::SenderId) {
        attributes["SenderId"] = sender.into();
    }
    let message_attributes: serde_json::Map<String, serde_json::Value> = m
        .message_attributes()
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            let value = v.string_value()?;
            Some((k.clone(), serde_json::json!({"stringValue": value, "dataType": v.data_type()})))
        })
        .collect();
    serde_json::json!({
        "messageId": m.message_id(), "receiptHandle": m.receipt_handle(), "body": m.body(),
        "attributes": attributes, "messageAttributes": message_attributes,
        "eventSource": "aws:sqs", "eventSourceARN": "", "awsRegion": std::env::var("AWS_REGION").unwrap_or_default()
    })
}
