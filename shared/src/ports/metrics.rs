//! The metrics port: named counters. Lambda adapters print CloudWatch EMF; the `floe` command
//! drives its progress bar from them; tests count.

/// A sink for counters.
pub trait Metrics: Send + Sync {
    /// Adds `value` to the counter `name` (`source_objects`, `rows`, `source_bytes`, ...).
    fn count(&self, name: &'static str, value: u64);
}

/// Discards everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopMetrics;

impl Metrics for NoopMetrics {
    fn count(&self, _name: &'static str, _value: u64) {}
}
