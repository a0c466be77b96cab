//! The metrics port: named counters and observations. The Lambda functions print what an
//! invocation recorded as one CloudWatch Embedded Metric Format line (`adapters::aws::emf`);
//! the `floe` command drives its progress bar from them and writes them with `--metrics-json`;
//! tests count.
//!
//! Names say their unit: `_ms` milliseconds, `_bytes` bytes, anything else a count.

use std::collections::BTreeMap;
use std::sync::Mutex;

use serde::Serialize;

/// A sink for counters and observations.
pub trait Metrics: Send + Sync {
    /// Adds `value` to the counter `name` (`source_objects`, `rows`, `source_bytes`, ...).
    fn count(&self, name: &'static str, value: u64);

    /// Records one observation of `name` (`commit_latency_ms`, `freshness_lag_ms`, ...).
    fn observe(&self, _name: &'static str, _value: f64) {}
}

/// Discards everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopMetrics;

impl Metrics for NoopMetrics {
    fn count(&self, _name: &'static str, _value: u64) {}
}

/// Observations kept per name: enough for a CloudWatch EMF values array.
pub const KEPT_VALUES: usize = 100;

/// What was observed of one name.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Observed {
    /// Observations.
    pub count: u64,
    /// Their sum.
    pub sum: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// The first [`KEPT_VALUES`] observations.
    #[serde(skip)]
    pub values: Vec<f64>,
}

/// Everything recorded since the last [`Recorder::take`].
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Recorded {
    /// Counters by name.
    pub counters: BTreeMap<&'static str, u64>,
    /// Observations by name.
    pub observed: BTreeMap<&'static str, Observed>,
}

impl Recorded {
    /// Whether nothing was recorded.
    pub fn is_empty(&self) -> bool {
        self.counters.is_empty() && self.observed.is_empty()
    }
}

/// Keeps counters and observations in memory (thread-safe).
#[derive(Debug, Default)]
pub struct Recorder {
    inner: Mutex<Recorded>,
}

impl Recorder {
    /// What was recorded so far.
    pub fn snapshot(&self) -> Recorded {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// What was recorded so far, starting afresh (one Lambda invocation's worth).
    pub fn take(&self) -> Recorded {
        std::mem::take(&mut *self.inner.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

impl Metrics for Recorder {
    fn count(&self, name: &'static str, value: u64) {
        *self.inner.lock().unwrap_or_else(|p| p.into_inner()).counters.entry(name).or_default() += value;
    }

    fn observe(&self, name: &'static str, value: f64) {
        let mut r = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let o = r.observed.entry(name).or_default();
        if o.count == 0 {
            (o.min, o.max) = (value, value);
        }
        o.count += 1;
        o.sum += value;
        o.min = o.min.min(value);
        o.max = o.max.max(value);
        if o.values.len() < KEPT_VALUES {
            o.values.push(value);
        }
    }
}

/// Sends everything to two sinks.
pub struct Tee<A, B>(pub A, pub B);

impl<A: Metrics, B: Metrics> Metrics for Tee<A, B> {
    fn count(&self, name: &'static str, value: u64) {
        self.0.count(name, value);
        self.1.count(name, value);
    }

    fn observe(&self, name: &'static str, value: f64) {
        self.0.observe(name, value);
        self.1.observe(name, value);
    }
}

impl<M: Metrics + ?Sized> Metrics for std::sync::Arc<M> {
    fn count(&self, name: &'static str, value: u64) {
        (**self).count(name, value)
    }

    fn observe(&self, name: &'static str, value: f64) {
        (**self).observe(name, value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_sums_counters_and_summarizes_observations() {
        let r = Recorder::default();
        r.count("rows", 3);
        r.count("rows", 4);
        for v in [5.0, 1.0, 9.0] {
            r.observe("commit_latency_ms", v);
        }
        let got = r.take();
        assert_eq!(got.counters["rows"], 7);
        let o = &got.observed["commit_latency_ms"];
        assert_eq!((o.count, o.sum, o.min, o.max), (3, 15.0, 1.0, 9.0));
        assert_eq!(o.values, vec![5.0, 1.0, 9.0]);
        assert!(r.take().is_empty(), "take starts afresh");
    }
}
