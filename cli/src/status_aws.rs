//! What `floe status --aws` reads besides the tables: the tables the deployment routes to, and
//! its queues (depths from SQS; the oldest message's age from CloudWatch's
//! `ApproximateAgeOfOldestMessage`, which SQS itself does not expose: unknown where CloudWatch
//! has no datapoint, as on an emulator).

use aws_sdk_sqs::types::QueueAttributeName as Attr;
use floe::TableIdent;
use floe::adapters::aws::{AwsSettings, Clients};
use floe::handlers::load_floe_toml;
use floe::ports::ObjectStore;
use serde::Serialize;

/// One queue's depth.
#[derive(Debug, Serialize)]
pub(crate) struct QueueDepth {
    /// `ingest`, `commit`, `dlq`, or `<role>-dlq` for a queue's dead-letter queue.
    pub role: String,
    pub url: String,
    /// Messages waiting.
    pub visible: u64,
    /// Messages received and not yet deleted.
    pub in_flight: u64,
    /// Messages not yet visible (delayed sends).
    pub delayed: u64,
    /// Age of the oldest message in seconds, from CloudWatch (None: no datapoint).
    pub oldest_age_s: Option<f64>,
}

/// The tables the deployment routes to: every table FLOE_CONFIG names (its `[[table]]`s and
/// `[routing] default_table`), and FLOE_DEFAULT_TABLE.
pub(crate) async fn aws_tables(store: &dyn ObjectStore) -> anyhow::Result<Vec<TableIdent>> {
    let vars = floe::settings::Vars::new(&floe::settings::env);
    let mut out: Vec<TableIdent> = vec![];
    if let Some(loc) = vars.get("FLOE_CONFIG") {
        let cfg = load_floe_toml(&loc, store).await?;
        if let Some(t) = &cfg.routing.default_table {
            out.push(t.parse()?);
        }
        for t in cfg.tables {
            if let Some(name) = t.name {
                out.push(name.parse()?);
            }
        }
    }
    out.push(vars.default_table()?);
    out.sort();
    out.dedup();
    Ok(out)
}

/// The ingest, commit and report queues named by the environment, with their dead-letter
/// queues (from each one's redrive policy).
pub(crate) async fn aws_queues(clients: &Clients, settings: &AwsSettings) -> anyhow::Result<Vec<QueueDepth>> {
    let mut named: Vec<(String, String)> = vec![];
    if let Some(url) = &settings.ingest_queue_url {
        named.push(("ingest".into(), url.clone()));
    }
    named.push(("commit".into(), settings.commit_queue_url.clone()));
    if let Some(url) = std::env::var("FLOE_DLQ_URL").ok().filter(|v| !v.is_empty()) {
        named.push(("dlq".into(), url));
    }
    let cloudwatch = aws_sdk_cloudwatch::Client::new(&clients.sdk);
    let mut out = vec![];
    let mut i = 0;
    while i < named.len() {
        let (role, url) = named[i].clone();
        let attrs = clients
            .sqs
            .get_queue_attributes()
            .queue_url(&url)
            .attribute_names(Attr::All)
            .send()
            .await
            .map_err(|e| anyhow::anyhow!("{role} queue {url}: {}", aws_sdk_sqs::error::DisplayErrorContext(e)))?;
        let a = attrs.attributes().cloned().unwrap_or_default();
        let n = |k: Attr| a.get(&k).and_then(|v| v.parse().ok()).unwrap_or(0);
        if let Some(dlq) = a.get(&Attr::RedrivePolicy).and_then(|p| dead_letter_url(p, &url))
            && !named.iter().any(|(_, u)| *u == dlq)
        {
            named.push((format!("{role}-dlq"), dlq));
        }
        let name = url.rsplit('/').next().unwrap_or_default().to_string();
        out.push(QueueDepth {
            role,
            visible: n(Attr::ApproximateNumberOfMessages),
            in_flight: n(Attr::ApproximateNumberOfMessagesNotVisible),
            delayed: n(Attr::ApproximateNumberOfMessagesDelayed),
            oldest_age_s: oldest_age(&cloudwatch, &name).await,
            url,
        });
        i += 1;
    }
    Ok(out)
}

/// The dead-letter queue's URL from a redrive policy (`deadLetterTargetArn`), on the same
/// endpoint and account path as `url`.
fn dead_letter_url(policy: &str, url: &str) -> Option<String> {
    let p: serde_json::Value = serde_json::from_str(policy).ok()?;
    let name = p["deadLetterTargetArn"].as_str()?.rsplit(':').next()?.to_string();
    let (base, _) = url.rsplit_once('/')?;
    Some(format!("{base}/{name}"))
}

/// The latest maximum of `ApproximateAgeOfOldestMessage` over the last 15 minutes.
async fn oldest_age(cw: &aws_sdk_cloudwatch::Client, queue: &str) -> Option<f64> {
    use aws_sdk_cloudwatch::primitives::DateTime;
    use aws_sdk_cloudwatch::types::{Dimension, Statistic};
    let now = chrono::Utc::now().timestamp();
    let got = cw
        .get_metric_statistics()
        .namespace("AWS/SQS")
        .metric_name("ApproximateAgeOfOldestMessage")
        .dimensions(Dimension::builder().name("QueueName").value(queue).build())
        .start_time(DateTime::from_secs(now - 900))
        .end_time(DateTime::from_secs(now))
        .period(60)
        .statistics(Statistic::Maximum)
        .send()
        .await
        .ok()?;
    let mut points: Vec<_> = got.datapoints().to_vec();
    points.sort_by_key(|d| d.timestamp().map(|t| t.secs()));
    points.last().and_then(|d| d.maximum())
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_redrive_policy_names_its_dead_letter_queue_on_the_same_endpoint() {
        let policy =
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:123456789012:floe-ingest-dlq","maxReceiveCount":5}"#;
        assert_eq!(
            super::dead_letter_url(policy, "http://localhost:5000/123456789012/floe-ingest").as_deref(),
            Some("http://localhost:5000/123456789012/floe-ingest-dlq")
        );
        assert_eq!(super::dead_letter_url("not json", "http://x/1/q"), None);
    }
}
