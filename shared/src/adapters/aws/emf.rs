//! CloudWatch Embedded Metric Format: what one Lambda invocation recorded through the metrics
//! port, as one structured log line that CloudWatch turns into metrics (namespace `Floe`,
//! dimension `Function`) without any API call or extra permission.
//!
//! Counters become single values; observations (`commit_latency_ms`, `freshness_lag_ms`, ...)
//! become arrays of up to 100 values, as EMF allows. Units follow the name: `_ms`
//! milliseconds, `_bytes` bytes, else a count.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::ports::{Recorded, Recorder};

/// The CloudWatch namespace of Floe's metrics.
pub const NAMESPACE: &str = "Floe";

/// The EMF document of `recorded` for `function` at `timestamp_ms`, or `None` if nothing was
/// recorded.
pub fn document(function: &str, recorded: &Recorded, timestamp_ms: i64) -> Option<Value> {
    if recorded.is_empty() {
        return None;
    }
    let mut doc = Map::new();
    let mut metrics = vec![];
    for (name, v) in &recorded.counters {
        metrics.push(json!({"Name": name, "Unit": unit(name)}));
        doc.insert((*name).to_string(), json!(v));
    }
    for (name, o) in &recorded.observed {
        metrics.push(json!({"Name": name, "Unit": unit(name)}));
        doc.insert((*name).to_string(), json!(o.values));
    }
    doc.insert("Function".into(), json!(function));
    doc.insert(
        "_aws".into(),
        json!({
            "Timestamp": timestamp_ms,
            "CloudWatchMetrics": [{"Namespace": NAMESPACE, "Dimensions": [["Function"]], "Metrics": metrics}],
        }),
    );
    Some(Value::Object(doc))
}

fn unit(name: &str) -> &'static str {
    if name.ends_with("_ms") {
        "Milliseconds"
    } else if name.ends_with("_bytes") {
        "Bytes"
    } else {
        "Count"
    }
}

/// A function's metrics: the recorder its ports write to, printed once per invocation.
#[derive(Debug, Clone)]
pub struct Emf {
    recorder: Arc<Recorder>,
    function: String,
}

impl Emf {
    /// Metrics of `function`, or of the Lambda's own name (`AWS_LAMBDA_FUNCTION_NAME`, looked up
    /// through `var`) when it runs on Lambda.
    pub fn new(function: &str, var: impl Fn(&str) -> Option<String>) -> Self {
        let name = crate::settings::Vars::new(&var).get("AWS_LAMBDA_FUNCTION_NAME").unwrap_or_else(|| function.into());
        Emf { recorder: Arc::new(Recorder::default()), function: name }
    }

    /// The recorder to give the ports.
    pub fn recorder(&self) -> Arc<Recorder> {
        self.recorder.clone()
    }

    /// The EMF line of what was recorded since the last call (`None` if nothing was).
    pub fn take_line(&self) -> Option<String> {
        document(&self.function, &self.recorder.take(), chrono::Utc::now().timestamp_millis()).map(|d| d.to_string())
    }

    /// Prints what was recorded since the last call on stdout, where Lambda's log capture
    /// hands it to CloudWatch.
    pub fn flush(&self) {
        if let Some(line) = self.take_line() {
            println!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::Metrics;

    #[test]
    fn every_metric_is_declared_and_present_with_its_unit() {
        let r = Recorder::default();
        r.count("source_objects", 3);
        r.count("source_bytes", 4096);
        r.observe("freshness_lag_ms", 1500.0);
        r.observe("freshness_lag_ms", 2500.0);
        let doc = document("floe-writer", &r.take(), 1_796_040_000_000).unwrap();
        let aws = &doc["_aws"];
        assert_eq!(aws["Timestamp"], 1_796_040_000_000_i64);
        let directive = &aws["CloudWatchMetrics"][0];
        assert_eq!(directive["Namespace"], "Floe");
        assert_eq!(directive["Dimensions"], json!([["Function"]]));
        assert_eq!(doc["Function"], "floe-writer", "every dimension key is a member");
        let declared = directive["Metrics"].as_array().unwrap();
        assert_eq!(declared.len(), 3);
        for m in declared {
            let name = m["Name"].as_str().unwrap();
            assert!(doc.get(name).is_some(), "{name} has a value");
        }
        let units: Vec<(&str, &str)> =
            declared.iter().map(|m| (m["Name"].as_str().unwrap(), m["Unit"].as_str().unwrap())).collect();
        assert!(units.contains(&("source_bytes", "Bytes")) && units.contains(&("freshness_lag_ms", "Milliseconds")));
        assert_eq!(doc["source_objects"], 3);
        assert_eq!(doc["freshness_lag_ms"], json!([1500.0, 2500.0]));
        assert!(document("f", &Recorded::default(), 0).is_none(), "nothing recorded, nothing printed");
    }
}
