//! `floe backfill s3://bucket/prefix`: objects already in the landing bucket, sent to the
//! deployed writers as notifications (initial loads, replays). Configured like the functions:
//! AWS credentials and region from the environment, `AWS_ENDPOINT_URL` for LocalStack or moto,
//! the queue from `--queue-url` or `FLOE_INGEST_QUEUE_URL`.

use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use floe::adapters::aws::{AwsSettings, Clients, S3ObjectStore, SqsQueue};
use floe::handlers::backfill::{Backfill, objects, send};
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
    /// Only the objects the deployment routes to this table (NAMESPACE.NAME), by its routing:
    /// FLOE_CONFIG (a path or s3:// URL of its floe.toml) and FLOE_DEFAULT_TABLE, as the writer
    /// function reads them.
    #[arg(long)]
    table: Option<String>,
}

/// The writer function's routing, from the same environment it reads.
async fn deployment_router(store: &S3ObjectStore) -> anyhow::Result<floe::handlers::Router> {
    let vars = floe::settings::Vars::new(&floe::settings::env);
    let config = match vars.get("FLOE_CONFIG") {
        Some(loc) => Some(floe::handlers::load_floe_toml(&loc, store).await?),
        None => None,
    };
    Ok(floe::handlers::Router::new(config, vars.default_table()?))
}

pub(crate) async fn run(a: BackfillArgs) -> anyhow::Result<ExitCode> {
    let settings = AwsSettings::from_lookup(floe::settings::env)?;
    let clients = Clients::load(&settings).await;
    let store = S3ObjectStore::new(clients.s3.clone());
    let only = match &a.table {
        Some(t) => Some((t.parse()?, deployment_router(&store).await?)),
        None => None,
    };
    let b = Backfill { prefix: a.prefix.clone(), suffix: a.suffix.clone(), rate: a.rate, only };
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
