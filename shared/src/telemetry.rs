//! Logging set-up for the Lambda functions: JSON lines, no ANSI colours, no timestamps
//! (CloudWatch adds ingestion time), filtered by `RUST_LOG` (default `info`).

/// Installs the JSON subscriber; harmless if one is already installed.
pub fn init_lambda() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .json()
        .with_env_filter(filter)
        .with_ansi(false)
        .without_time()
        .with_current_span(false)
        .try_init();
}
