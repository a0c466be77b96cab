//! Logging set-up and the ingest progress display: a bar on a terminal, log lines otherwise.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use floe::ports::Metrics;
use indicatif::{ProgressBar, ProgressStyle};

/// Human-readable logs on stderr, filtered by `RUST_LOG` (default: warnings).
pub(crate) fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

/// Counters fed by the engine through the `Metrics` port.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    objects: AtomicU64,
    rows: AtomicU64,
    bytes: AtomicU64,
    quarantined: AtomicU64,
    commits: AtomicU64,
}

impl Metrics for Counters {
    fn count(&self, name: &'static str, value: u64) {
        let c = match name {
            "source_objects" => &self.objects,
            "rows" => &self.rows,
            "source_bytes" => &self.bytes,
            "quarantined" => &self.quarantined,
            "commits" => &self.commits,
            _ => return,
        };
        c.fetch_add(value, Ordering::Relaxed);
    }
}

/// Shows progress until dropped.
pub(crate) struct Progress {
    task: tokio::task::JoinHandle<()>,
    bar: Option<ProgressBar>,
}

impl Progress {
    /// Starts showing progress over `total` objects.
    pub(crate) fn start(counters: Arc<Counters>, total: u64) -> Self {
        let started = Instant::now();
        let bar = std::io::stderr().is_terminal().then(|| {
            let b = ProgressBar::new(total);
            b.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} files {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            b
        });
        let shown = bar.clone();
        let task = tokio::spawn(async move {
            let mut last_log = Instant::now();
            loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let objects = counters.objects.load(Ordering::Relaxed);
                let rows = counters.rows.load(Ordering::Relaxed);
                let mb = counters.bytes.load(Ordering::Relaxed) as f64 / 1e6;
                let secs = started.elapsed().as_secs_f64().max(1e-3);
                let msg = format!(
                    "{rows} rows, {:.1} MB/s, {} quarantined, {} commits",
                    mb / secs,
                    counters.quarantined.load(Ordering::Relaxed),
                    counters.commits.load(Ordering::Relaxed)
                );
                match &shown {
                    Some(b) => {
                        b.set_position(objects);
                        b.set_message(msg);
                    }
                    None if last_log.elapsed() >= Duration::from_secs(5) => {
                        eprintln!("progress: {objects}/{total} files, {msg}");
                        last_log = Instant::now();
                    }
                    None => {}
                }
            }
        });
        Progress { task, bar }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.task.abort();
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
