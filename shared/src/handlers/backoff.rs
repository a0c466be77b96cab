//! Retries that come back soon: a message a handler reports failed is made visible again after a
//! delay that grows with its receive count, instead of after the queue's whole visibility
//! timeout (30 minutes on the commit queue, 12 on the ingest queue). Without it a retried commit
//! waited half an hour, every retry tripped the freshness alarm, and a poison message took
//! `max_receive_count` times the timeout to reach its dead-letter queue.
//!
//! Best effort: if the visibility cannot be changed (a receipt gone stale, a missing
//! permission), the message simply waits its full timeout, as it did before.

use std::time::Duration;

use tracing::warn;

/// The first retry's delay.
const FIRST: Duration = Duration::from_secs(10);
/// The longest delay: well under any queue's visibility timeout, so a delay never lengthens one.
const LONGEST: Duration = Duration::from_secs(15 * 60);

/// How long a message that failed its `receives`-th delivery stays invisible: 10 s, doubling
/// with each receive, at most 15 minutes (10 s, 20 s, 40 s, 80 s, 160 s, ...).
pub fn retry_after(receives: u32) -> Duration {
    let doublings = receives.saturating_sub(1).min(16);
    (FIRST * 2u32.pow(doublings)).min(LONGEST)
}

/// A failed message's place in its queue, as the SQS event gave it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    /// The queue's ARN (`arn:aws:sqs:REGION:ACCOUNT:NAME`).
    pub queue_arn: String,
    /// The receipt of this delivery.
    pub receipt: String,
    /// `ApproximateReceiveCount` (1 on a first delivery).
    pub receives: u32,
}

/// The records of SQS event `event` (its JSON) whose message ids are in `failed`.
pub fn failed_records(event: &serde_json::Value, failed: &[String]) -> Vec<Failed> {
    let records = event.get("Records").and_then(serde_json::Value::as_array).into_iter().flatten();
    records
        .filter(|r| {
            r.get("messageId").and_then(serde_json::Value::as_str).is_some_and(|id| failed.iter().any(|f| f == id))
        })
        .filter_map(|r| {
            let text = |k: &str| r.get(k).and_then(serde_json::Value::as_str).map(str::to_string);
            let receives = r.pointer("/attributes/ApproximateReceiveCount").and_then(serde_json::Value::as_str);
            Some(Failed {
                queue_arn: text("eventSourceARN")?,
                receipt: text("receiptHandle")?,
                receives: receives.and_then(|n| n.parse().ok()).unwrap_or(1),
            })
        })
        .collect()
}

/// Makes each failed message visible again after [`retry_after`] its receive count.
pub async fn retry_soon(sqs: &aws_sdk_sqs::Client, failed: &[Failed]) {
    let mut urls: Vec<(String, String)> = vec![];
    for f in failed {
        let url = match urls.iter().find(|(arn, _)| *arn == f.queue_arn) {
            Some((_, url)) => url.clone(),
            None => match queue_url(sqs, &f.queue_arn).await {
                Some(url) => {
                    urls.push((f.queue_arn.clone(), url.clone()));
                    url
                }
                None => continue,
            },
        };
        let secs = retry_after(f.receives).as_secs() as i32;
        let changed =
            sqs.change_message_visibility().queue_url(&url).receipt_handle(&f.receipt).visibility_timeout(secs).send();
        if let Err(e) = changed.await {
            warn!(queue = %url, error = %aws_sdk_sqs::error::DisplayErrorContext(&e), "could not shorten a failed message's visibility; it waits its full timeout");
        }
    }
}

/// The URL of the queue `arn` names.
async fn queue_url(sqs: &aws_sdk_sqs::Client, arn: &str) -> Option<String> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), _, Some("sqs"), _, Some(account), Some(name)) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        warn!(%arn, "not an SQS queue ARN; a failed message waits its full visibility timeout");
        return None;
    };
    match sqs.get_queue_url().queue_name(name).queue_owner_aws_account_id(account).send().await {
        Ok(out) => out.queue_url().map(str::to_string),
        Err(e) => {
            warn!(%arn, error = %aws_sdk_sqs::error::DisplayErrorContext(&e), "could not find the queue of a failed message");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_start_at_seconds_and_never_pass_fifteen_minutes() {
        let delays: Vec<u64> = (0..=8).map(|n| retry_after(n).as_secs()).collect();
        assert_eq!(delays, [10, 10, 20, 40, 80, 160, 320, 640, 900]);
        assert_eq!(retry_after(u32::MAX), LONGEST);
    }

    #[test]
    fn failed_records_are_found_by_message_id() {
        let event = serde_json::json!({"Records": [
            {"messageId": "a", "receiptHandle": "r-a", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q",
             "attributes": {"ApproximateReceiveCount": "3"}},
            {"messageId": "b", "receiptHandle": "r-b", "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:q"}
        ]});
        let got = failed_records(&event, &["a".to_string()]);
        assert_eq!(
            got,
            [Failed { queue_arn: "arn:aws:sqs:us-east-1:123456789012:q".into(), receipt: "r-a".into(), receives: 3 }]
        );
        assert_eq!(failed_records(&event, &["b".to_string()])[0].receives, 1);
    }
}
