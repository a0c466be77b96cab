//! `floe`: embedded mode and administration. Parses arguments, builds ports and configuration,
//! and calls the engine's pipeline functions; it holds no pipeline logic of its own.

mod backfill;
mod bench;
mod catalog;
mod compact;
mod function;
mod generate;
mod ingest;
mod inputs;
mod latency;
mod loadtest;
mod longrun;
mod progress;
mod quarantine;
mod status;
mod status_aws;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Land Avro files in Apache Iceberg tables.
#[derive(Debug, Parser)]
#[command(name = "floe", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Ingest Avro object container files (or folders of them) into a table.
    Ingest(ingest::IngestArgs),
    /// Merge small data files LSM-style, deduplicate by the table's key, and commit the rewrite.
    Compact(compact::CompactArgs),
    /// Delete the objects under a table's location that no kept snapshot reaches (orphans of
    /// failed attempts), once older than a safety age.
    Sweep(compact::SweepArgs),
    /// Show a table's snapshots, files, rows, bytes and small-file debt.
    Status(status::StatusArgs),
    /// Generate sample Avro files (events, every-type, or corrupt ones).
    Gen(generate::GenArgs),
    /// Measure the writer path against raw Avro decode + Parquet encode.
    Bench(bench::BenchArgs),
    /// Measure a table's commit cost and shape against its age (thousands of small commits and
    /// compactions; one CSV row per commit).
    BenchTable(longrun::TableBenchArgs),
    /// Load one committer at a rate (synthetic file manifests copied from a real writer batch)
    /// against ports that take as long as S3's and DynamoDB's published latencies.
    BenchCommitter(loadtest::CommitterBenchArgs),
    /// List and replay quarantined source objects.
    #[command(subcommand)]
    Quarantine(quarantine::QuarantineCommand),
    /// Run a deployed function (writer, committer, compactor) locally, configured by the same
    /// environment variables and fed from its queue as its event source mapping would.
    RunFunction(function::RunFunctionArgs),
    /// Send objects already in a bucket (s3://bucket/prefix) to the deployed writers, as if
    /// they had just landed; objects already committed are skipped.
    Backfill(backfill::BackfillArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    progress::init_logging();
    let rt = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = rt.block_on(async {
        match cli.command {
            Command::Ingest(a) => ingest::run(a).await,
            Command::Status(a) => status::run(a).await,
            Command::Compact(a) => compact::run(a).await,
            Command::Sweep(a) => compact::sweep(a).await,
            Command::Gen(a) => generate::run(a),
            Command::RunFunction(a) => function::run(a).await,
            Command::Backfill(a) => backfill::run(a).await,
            Command::Bench(a) => bench::run(a).await,
            Command::BenchTable(a) => longrun::run(a).await,
            Command::BenchCommitter(a) => loadtest::run(a),
            Command::Quarantine(c) => quarantine::run(c).await,
        }
    });
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
