//! `floe quarantine list|replay`, on a local warehouse or (`--aws`) on the deployed functions'
//! ledger, configured by the same environment variables as the Lambda functions.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use floe::TableIdent;
use floe::adapters::aws::{AwsSettings, Clients, DynamoDbLedger, S3ObjectStore, SqsQueue};
use floe::adapters::local;
use floe::config::EngineConfig;
use floe::handlers::notification_for;
use floe::pipeline::ingest::IngestOptions;
use floe::pipeline::quarantine::{outstanding, replay, replay_notifications};
use floe::ports::{QuarantineRecord, Queue};

#[derive(Debug, Subcommand)]
pub(crate) enum QuarantineCommand {
    /// List quarantined objects not committed since, and why they were refused.
    List(Target),
    /// Re-ingest quarantined objects (after fixing the cause); refused ones stay listed.
    Replay(ReplayArgs),
}

/// Where the quarantine lives.
#[derive(Debug, Args)]
pub(crate) struct Target {
    /// Warehouse directory (embedded mode).
    #[arg(long, env = "FLOE_WAREHOUSE_DIR", required_unless_present = "aws", conflicts_with = "aws")]
    warehouse: Option<PathBuf>,
    /// The deployed functions' ledger (`FLOE_LEDGER_TABLE`, AWS credentials and region from the
    /// environment, `AWS_ENDPOINT_URL` for LocalStack or moto).
    #[arg(long)]
    aws: bool,
    /// Only records of this kind (`corrupt`, `schema`, `too-large`, `empty`, `unrouted`, ...).
    /// A kind this build does not write is taken only when some record has it (one a newer
    /// build wrote); otherwise it is refused, as a misspelling.
    #[arg(long, value_parser = |k: &str| Ok::<_, String>(floe::RejectionKind::from(k.trim())))]
    kind: Option<floe::RejectionKind>,
    /// Only objects whose URI starts with this.
    #[arg(long)]
    prefix: Option<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    #[command(flatten)]
    target: Target,
    /// Destination table, NAMESPACE.NAME (default: the table each record names; required for
    /// unrouted objects). Embedded mode only: on AWS the writers route by FLOE_CONFIG.
    #[arg(long)]
    table: Option<String>,
    /// Show what would be replayed, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Table configuration (default: ./floe.toml if present), embedded mode: new tables get
    /// their settings, and an object of a prefix whose tables split its rows by value goes
    /// back to every table of the prefix, each taking its own rows.
    #[arg(long)]
    config: Option<PathBuf>,
}

pub(crate) async fn run(cmd: QuarantineCommand) -> anyhow::Result<ExitCode> {
    match cmd {
        QuarantineCommand::List(t) => list(&t).await,
        QuarantineCommand::Replay(a) => replay_cmd(&a).await,
    }
}

fn print(records: &[QuarantineRecord]) {
    if records.is_empty() {
        println!("no quarantined objects");
    }
    for r in records {
        println!("{}\t{}\t{}\t{}", r.uri, r.table.as_deref().unwrap_or("-"), r.rejection.kind, r.rejection.reason);
    }
}

fn selected(t: &Target, records: Vec<QuarantineRecord>) -> anyhow::Result<Vec<QuarantineRecord>> {
    if let Some(kind @ floe::RejectionKind::Other(name)) = &t.kind
        && !records.iter().any(|r| &r.rejection.kind == kind)
    {
        // Neither a kind this build writes nor one a record has: a misspelling.
        floe::RejectionKind::known(name)?;
    }
    Ok(records
        .into_iter()
        .filter(|r| t.kind.as_ref().is_none_or(|k| &r.rejection.kind == k))
        .filter(|r| t.prefix.as_ref().is_none_or(|p| r.uri.starts_with(p.as_str())))
        .collect())
}

fn local_ports(dir: &std::path::Path) -> anyhow::Result<floe::ports::Ports> {
    if !dir.join(".floe").exists() {
        bail!("{} is not a Floe warehouse (no .floe state); run `floe ingest` first", dir.display());
    }
    Ok(local::ports(dir)?)
}

async fn aws_ledger() -> anyhow::Result<(AwsSettings, Clients, DynamoDbLedger)> {
    let settings = AwsSettings::from_lookup(floe::settings::env)?;
    let clients = Clients::load(&settings).await;
    let ledger = DynamoDbLedger::new(clients.dynamodb.clone(), &settings.ledger_table).with_ttl(settings.ledger_ttl);
    Ok((settings, clients, ledger))
}

async fn list(t: &Target) -> anyhow::Result<ExitCode> {
    let records = match &t.warehouse {
        Some(dir) => outstanding(local_ports(dir)?.ledger.as_ref()).await?,
        None => outstanding(&aws_ledger().await?.2).await?,
    };
    print(&selected(t, records)?);
    Ok(ExitCode::SUCCESS)
}

async fn replay_cmd(a: &ReplayArgs) -> anyhow::Result<ExitCode> {
    let table: Option<TableIdent> = a.table.as_deref().map(str::parse).transpose()?;
    match &a.target.warehouse {
        Some(dir) => {
            let ports = local_ports(dir)?;
            let records = selected(&a.target, outstanding(ports.ledger.as_ref()).await?)?;
            if a.dry_run || records.is_empty() {
                print(&records);
                return Ok(ExitCode::SUCCESS);
            }
            let _writing = crate::catalog::hold_for_writing(dir).await?;
            let warehouse = local::warehouse_uri(dir)?;
            let opts = IngestOptions::default();
            let toml = match &a.config {
                Some(p) => Some(floe::config::FloeToml::load(p)?),
                None if std::path::Path::new("floe.toml").exists() => {
                    Some(floe::config::FloeToml::load(std::path::Path::new("floe.toml"))?)
                }
                None => None,
            };
            let router = floe::route::Router::new(toml, floe::settings::DEFAULT_TABLE.parse()?);
            let engine = EngineConfig::from_lookup(floe::settings::env)?;
            let r = replay(&engine, &ports, &warehouse, &records, table.as_ref(), &router, &opts).await?;
            for u in &r.landed {
                println!("landed\t{u}");
            }
            for (u, why) in &r.refused {
                println!("refused\t{u}\t{}\t{}", why.kind, why.reason);
            }
            for u in &r.vanished {
                println!("vanished\t{u}");
            }
            for u in &r.unrouted {
                println!("unrouted\t{u}\t(pass --table to replay it)");
            }
            println!(
                "{} landed, {} refused again, {} vanished, {} unrouted",
                r.landed.len(),
                r.refused.len(),
                r.vanished.len(),
                r.unrouted.len()
            );
            Ok(if r.refused.is_empty() && r.vanished.is_empty() && r.unrouted.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(2)
            })
        }
        None => {
            if table.is_some() {
                bail!("--table applies to embedded mode; on AWS the writers route objects by FLOE_CONFIG");
            }
            let (_, clients, ledger) = aws_ledger().await?;
            let records = selected(&a.target, outstanding(&ledger).await?)?;
            if a.dry_run || records.is_empty() {
                print(&records);
                return Ok(ExitCode::SUCCESS);
            }
            let url = std::env::var("FLOE_INGEST_QUEUE_URL")
                .ok()
                .filter(|u| !u.is_empty())
                .context("FLOE_INGEST_QUEUE_URL (the writers' queue) is not set")?;
            let store = S3ObjectStore::new(clients.s3.clone());
            let (batches, vanished) = replay_notifications(&store, &records).await?;
            let queue = SqsQueue::new(clients.sqs.clone(), &url);
            let mut sent = 0;
            for batch in &batches {
                queue.send(notification_for(batch)).await?;
                sent += batch.len();
            }
            for u in &vanished {
                println!("vanished\t{u}");
            }
            println!("{sent} object(s) sent to the writers; `floe quarantine list --aws` shows what is still refused");
            Ok(if vanished.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(2) })
        }
    }
}
