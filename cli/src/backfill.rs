//! `floe backfill s3://bucket/prefix`: objects already in the landing bucket, sent to the
//! deployed writers as notifications (initial loads, replays). Configured like the functions:
//! AWS credentials and region from the environment, `AWS_ENDPOINT_URL` for LocalStack or moto,
//! the queue from `--queue-url` or `FLOE_INGEST_QUEUE_URL`.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use floe::adapters::aws::backfill::{Backfill, objects, send};
use floe::adapters::aws::{AwsSettings, Clients, S3ObjectStore, SqsQueue};
use indicatif::{ProgressBar, ProgressStyle};

#[derive(Debug, Args)]
pub(crate) struct BackfillArgs {
    /// The objects to send: s3://bucket/prefix.
    prefix: String,
    /// The writers' queue (default: FLOE_INGEST_QUEUE_URL).
    #[arg(long, env = "FLOE_INGEST_QUEUE_URL")]
    queue_url: String,
    /// Only keys ending with this ("" for every key).
    #[arg(long, default_value = ".avro")]
    suffix: String,
    /// At most this many objects a second (0: no limit).
    #[arg(long, default_value_t = 500)]
    rate: u32,
    /// List what would be sent, and send nothing.
    #[arg(long)]
    dry_run: bool,
}

pub(crate) async fn run(a: BackfillArgs) -> anyhow::Result<ExitCode> {
    let settings = AwsSettings::from_env()?;
    let clients = Clients::load(&settings).await;
    let store = S3ObjectStore::new(clients.s3.clone());
    let b = Backfill { prefix: a.prefix.clone(), suffix: a.suffix.clone(), rate: a.rate };
    let sources = objects(&store, &b).await.with_context(|| format!("listing {}", a.prefix))?;
    let bytes: u64 = sources.iter().map(|s| s.size).sum();
    if a.dry_run {
        for s in &sources {
            println!("{}\t{}", s.uri, s.size);
        }
        println!("would send {} object(s), {bytes} bytes, to {}", sources.len(), a.queue_url);
        return Ok(ExitCode::SUCCESS);
    }
    let queue = SqsQueue::new(clients.sqs.clone(), &a.queue_url);
    let bar = ProgressBar::new(sources.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} objects, {per_sec}, eta {eta}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let sent = send(&queue, &sources, a.rate, &|n| bar.set_position(n)).await?;
    bar.finish_and_clear();
    println!(
        "sent {sent} object(s), {bytes} bytes, to {} (objects already committed are skipped by the writers)",
        a.queue_url
    );
    Ok(ExitCode::SUCCESS)
}
