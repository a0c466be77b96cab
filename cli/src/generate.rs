//! `floe gen`: sample Avro files for demos, tests and benchmarks.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::Args;
use floe::sample::{self, Corruption, EventsSpec};

#[derive(Debug, Args)]
pub(crate) struct GenArgs {
    /// Output folder (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Number of event files.
    #[arg(long, default_value_t = 20)]
    files: u64,
    /// Events per file.
    #[arg(long, default_value_t = 1000)]
    events_per_file: usize,
    /// Seed: the same seed and arguments give the same bytes.
    #[arg(long, default_value_t = 42)]
    seed: u64,
    /// Avro block codec: null, deflate, snappy, zstandard.
    #[arg(long, default_value = "snappy")]
    codec: String,
    /// Fraction of events that exactly repeat an earlier event of the same file.
    #[arg(long, default_value_t = 0.0)]
    dup_rate: f64,
    /// Event ids that sort by event time (UUIDv7), as producers that stamp ids when the event
    /// happens make them; default: random (UUIDv4).
    #[arg(long)]
    time_ordered_ids: bool,
    /// Number of the first file: a later run with a higher number continues the series (its
    /// events later in time), with the same seed.
    #[arg(long, default_value_t = 0)]
    first_file: u64,
    /// Distinct tenants (skewed: the first is hot).
    #[arg(long, default_value_t = 20)]
    tenants: usize,
    /// Also write one file with every Avro type and logical type (kitchen-sink.avro, its own schema).
    #[arg(long)]
    kitchen_sink: bool,
    /// Also write one broken file of each kind (corrupt-*.avro) next to the good ones.
    #[arg(long)]
    corrupt: bool,
}

pub(crate) fn run(a: GenArgs) -> anyhow::Result<ExitCode> {
    if !(0.0..=1.0).contains(&a.dup_rate) {
        anyhow::bail!("--dup-rate must be between 0 and 1");
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("cannot create {}", a.out.display()))?;
    let spec = EventsSpec {
        events_per_file: a.events_per_file,
        tenants: a.tenants.max(1),
        dup_rate: a.dup_rate,
        codec: sample::codec(&a.codec)?,
        time_ordered_ids: a.time_ordered_ids,
        ..Default::default()
    };
    let (mut bytes, mut events) = (0u64, 0u64);
    let mut first = None;
    for i in a.first_file..a.first_file + a.files {
        let (data, n) = sample::events_file(&spec, a.seed, i)?;
        let path = a.out.join(format!("part-{i:05}.avro"));
        std::fs::write(&path, &data).with_context(|| format!("cannot write {}", path.display()))?;
        bytes += data.len() as u64;
        events += n as u64;
        first.get_or_insert(data);
    }
    if a.kitchen_sink {
        let data = sample::kitchen_sink(a.events_per_file, a.seed, spec.codec)?;
        std::fs::write(a.out.join("kitchen-sink.avro"), data)?;
    }
    if a.corrupt {
        let good = match first {
            Some(f) => f,
            None => sample::events_file(&spec, a.seed, 0)?.0,
        };
        for how in Corruption::ALL {
            std::fs::write(a.out.join(format!("corrupt-{}.avro", how.name())), sample::corrupt(&good, how))?;
        }
    }
    println!("wrote {} event file(s), {events} events, {:.1} MB to {}", a.files, bytes as f64 / 1e6, a.out.display());
    Ok(ExitCode::SUCCESS)
}
