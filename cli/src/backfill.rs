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
    /// Only the objects the deployment routes to this table (NAMESPACE.NAME), by its routing:
    /// FLOE_CONFIG (a path or s3:// URL of its floe.toml) and FLOE_DEFAULT_TABLE, as the writer
    /// function reads them.
    #[arg(long)]
    table: Option<String>,
}

/// The writer function's routing, from the same environment it reads.
async fn deployment_router(store: &S3ObjectStore) -> anyhow::Result<floe::adapters::aws::lambda::Router> {
    let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let config = match var("FLOE_CONFIG") {
        Some(loc) => Some(floe::adapters::aws::lambda::load_floe_toml(&loc, store).await?),
        None => None,
    };
    let default_table = var("FLOE_DEFAULT_TABLE").unwrap_or_else(|| "default.events".into()).parse()?;
    Ok(floe::adapters::aws::lambda::Router::new(config, default_table))
}

pub(crate) async fn run(a: BackfillArgs) -> anyhow::Result<ExitCode> {
    let settings = AwsSettings::from_env()?;
    let clients = Clients::load(&settings).await;
    let store = S3ObjectStore::new(clients.s3.clone());
    let only = match &a.table {
        Some(t) => Some((t.parse()?, deployment_router(&store).await?)),
        None => None,
    };
    let b = Backfill { prefix: a.prefix.clone(), suffix: a.suffix.clone(), rate: a.rate, only };
    let sources = objects(&store, &b).await.with_context(|| format!("listing {}", a.prefix))?;
    let bytes: u64 = sources.iter().map(|s| s.size).sum();
    if let Some(warning) = too_old_warning(&settings, &sources) {
        eprintln!("warning: {warning}");
    }
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

/// With a ledger retention (`FLOE_LEDGER_RETENTION_DAYS`, as the functions have it), how many of
/// `sources` the writers will refuse as `too-old` unless the ledger knows them as committed.
fn too_old_warning(settings: &AwsSettings, sources: &[floe::message::SourceRef]) -> Option<String> {
    let engine = floe::config::EngineConfig { ledger_retention: settings.ledger_retention, ..Default::default() };
    let limit = engine.max_source_age()?;
    let oldest = chrono::Utc::now().timestamp_millis() - limit.as_millis() as i64;
    let old = sources.iter().filter(|s| s.created_ms.is_none_or(|at| at < oldest)).count();
    (old > 0).then(|| {
        format!(
            "{old} of {} object(s) were created more than {} days ago: with FLOE_LEDGER_RETENTION_DAYS set, the \
             writers refuse them (quarantine kind too-old) unless already committed",
            sources.len(),
            limit.as_secs() / 86_400
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ledger_retention_warns_of_objects_the_writers_will_refuse() {
        let day = 86_400_000;
        let now = chrono::Utc::now().timestamp_millis();
        let source = |created_ms| floe::message::SourceRef {
            id: "s3://b/k#e".into(),
            uri: "s3://b/k".into(),
            size: 1,
            rows: 0,
            version_id: None,
            created_ms,
        };
        let sources = [source(Some(now - 20 * day)), source(Some(now - day)), source(None)];
        assert_eq!(too_old_warning(&AwsSettings::default(), &sources), None, "no retention, no limit");
        let kept =
            AwsSettings { ledger_retention: Some(std::time::Duration::from_secs(30 * 86_400)), ..Default::default() };
        let warning = too_old_warning(&kept, &sources).expect("two are too old");
        assert!(warning.starts_with("2 of 3 object(s)") && warning.contains("15 days"), "{warning}");
        assert_eq!(too_old_warning(&kept, &sources[1..2]), None);
    }
}
