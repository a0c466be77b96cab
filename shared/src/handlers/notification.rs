//! What a writer is asked to read: S3 object-created notifications, delivered by SQS (raw, or
//! in an SNS envelope when S3 notifies a topic the queue subscribes to), or a direct S3 or SNS
//! invocation, turned into source objects. Anything else is refused with a clear error (its
//! SQS message goes to the dead-letter queue), never acknowledged as if it named nothing.

use serde::Deserialize;
use tracing::info;

use crate::ports::ObjectMeta;
use crate::{Error, Result};

/// A lenient S3 notification: only the fields Floe reads (moto and some tools omit others).
#[derive(Debug, Deserialize)]
struct Notification {
    #[serde(rename = "Records", default)]
    records: Vec<NotificationRecord>,
    #[serde(rename = "Event")]
    event: Option<String>,
}

#[derive(Debug, Deserialize)]
struct NotificationRecord {
    #[serde(rename = "eventName", default)]
    event_name: String,
    /// When the object was created (ISO 8601): the start of its freshness lag.
    #[serde(rename = "eventTime", default)]
    event_time: Option<String>,
    s3: Option<S3Entity>,
}

#[derive(Debug, Deserialize)]
struct S3Entity {
    bucket: S3Bucket,
    object: S3Object,
}

#[derive(Debug, Deserialize)]
struct S3Bucket {
    name: String,
}

#[derive(Debug, Deserialize)]
struct S3Object {
    key: String,
    size: Option<u64>,
    #[serde(rename = "eTag")]
    e_tag: Option<String>,
    #[serde(rename = "versionId")]
    version_id: Option<String>,
}

/// Decodes an S3 notification key: `+` is a space, then percent-decoding (right for AWS, which
/// leaves `/` alone, and for moto, which encodes it). S3 keys are UTF-8: bytes that do not
/// decode to UTF-8 are an error, never replaced.
pub fn decode_key(key: &str) -> Result<String> {
    let spaced = key.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced)
        .decode_utf8()
        .map(|k| k.into_owned())
        .map_err(|e| Error::message_from(format!("S3 notification key {key:?} is not UTF-8 once decoded"), e))
}

/// The objects an S3 notification document names. `s3:TestEvent` names none, nor do events
/// other than object-created (removals, restores, replication: logged and ignored; a removed
/// source's rows stay in the table). An SNS envelope is opened. A document that is not an S3
/// notification (no `Records`, a record without `s3`, an EventBridge event) is an error.
pub fn objects_in_notification(json: &str) -> Result<Vec<ObjectMeta>> {
    let v: serde_json::Value =
        serde_json::from_str(json).map_err(|e| Error::message_from("not an S3 notification", e))?;
    if v.get("Type").and_then(|t| t.as_str()) == Some("Notification") {
        let inner = v.get("Message").and_then(|m| m.as_str());
        let inner = inner.ok_or_else(|| Error::message("an SNS envelope without a `Message` string"))?;
        return objects_in_notification(inner);
    }
    if v.get("detail-type").is_some() {
        return Err(Error::message(
            "an EventBridge event, not an S3 notification: send the bucket's event notifications to the ingest \
             queue (directly, or through an SNS topic)",
        ));
    }
    let n: Notification = serde_json::from_value(v).map_err(|e| Error::message_from("not an S3 notification", e))?;
    if n.event.as_deref() == Some("s3:TestEvent") {
        return Ok(vec![]);
    }
    if n.records.is_empty() {
        return Err(Error::message("not an S3 notification: no `Records` and not an s3:TestEvent"));
    }
    let mut out = vec![];
    for r in n.records {
        if !(r.event_name.is_empty() || r.event_name.contains("ObjectCreated")) {
            info!(event = %r.event_name, "not an object-created event; ignored");
            continue;
        }
        let s = r.s3.ok_or_else(|| {
            Error::message(format!("an S3 notification record without `s3` (event {:?})", r.event_name))
        })?;
        out.push(ObjectMeta {
            uri: format!("s3://{}/{}", s.bucket.name, decode_key(&s.object.key)?),
            size: s.object.size.unwrap_or(0),
            version: s.object.e_tag.unwrap_or_default().trim_matches('"').to_string(),
            // An unversioned bucket's notifications carry no versionId (or "null").
            version_id: s.object.version_id.filter(|v| !v.is_empty() && v != "null"),
            modified_ms: r
                .event_time
                .and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok())
                .map(|t| t.timestamp_millis()),
        });
    }
    Ok(out)
}

/// Writer input: each SQS message id (or `None` for a direct event) with its objects.
pub type WriterInput = Vec<(Option<String>, Result<Vec<ObjectMeta>>)>;

/// Splits a writer invocation payload: an SQS event of notifications, a direct SNS event of
/// them, or a direct S3 event.
pub fn writer_input(payload: &serde_json::Value) -> Result<WriterInput> {
    let source = |key: &str| payload.pointer(&format!("/Records/0/{key}")).and_then(|v| v.as_str());
    if source("eventSource") == Some("aws:sqs") {
        let ev: aws_lambda_events::event::sqs::SqsEvent =
            serde_json::from_value(payload.clone()).map_err(|e| Error::message_from("SQS event", e))?;
        let body = |b: Option<String>| b.ok_or_else(|| Error::message("an SQS message without a body"));
        Ok(ev
            .records
            .into_iter()
            .map(|m| (m.message_id.clone(), body(m.body).and_then(|b| objects_in_notification(&b))))
            .collect())
    } else if source("EventSource") == Some("aws:sns") {
        let records = payload.get("Records").and_then(|r| r.as_array()).into_iter().flatten();
        Ok(records
            .map(|r| {
                let message = r.pointer("/Sns/Message").and_then(|m| m.as_str());
                let message = message.ok_or_else(|| Error::message("an SNS record without `Sns.Message`"));
                (None, message.and_then(objects_in_notification))
            })
            .collect())
    } else {
        Ok(vec![(None, objects_in_notification(&payload.to_string()))])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREATED: &str = r#"{"Records":[{"eventName":"ObjectCreated:Put","s3":{"bucket":{"name":"b"},
        "object":{"key":"in/a+b%2Bc%25d%C3%A9.avro","size":10,"eTag":"\"e1\""}}}]}"#;

    #[test]
    fn keys_decode_spaces_plus_percent_and_utf8_and_refuse_what_is_not_utf8() {
        let objs = objects_in_notification(CREATED).unwrap();
        assert_eq!(objs[0].uri, "s3://b/in/a b+c%dé.avro");
        let bad = decode_key("latin1-%E9.avro").unwrap_err().to_string();
        assert!(bad.contains("not UTF-8"), "{bad}");
    }

    #[test]
    fn an_sns_envelope_is_opened_and_what_is_no_notification_is_refused() {
        let envelope = serde_json::json!({"Type": "Notification", "MessageId": "m", "Message": CREATED}).to_string();
        assert_eq!(objects_in_notification(&envelope).unwrap(), objects_in_notification(CREATED).unwrap());
        let refused = |json: &str| objects_in_notification(json).unwrap_err().to_string();
        assert!(refused("{}").contains("no `Records`"));
        assert!(refused(r#"{"Type":"Notification"}"#).contains("without a `Message`"));
        let eventbridge = r#"{"version":"0","detail-type":"Object Created","source":"aws.s3","detail":{}}"#;
        assert!(refused(eventbridge).contains("EventBridge"));
        assert!(refused(r#"{"Records":[{"eventName":"ObjectCreated:Put"}]}"#).contains("without `s3`"));
        assert!(refused("not json").contains("not an S3 notification"));
        // A test event and a removal are no objects, not errors.
        assert!(objects_in_notification(r#"{"Event":"s3:TestEvent","Bucket":"b"}"#).unwrap().is_empty());
        let removed =
            r#"{"Records":[{"eventName":"ObjectRemoved:Delete","s3":{"bucket":{"name":"b"},"object":{"key":"k"}}}]}"#;
        assert!(objects_in_notification(removed).unwrap().is_empty());
    }

    #[test]
    fn sqs_messages_without_a_body_and_direct_sns_events_are_read() {
        let sqs = serde_json::json!({"Records": [
            {"messageId": "1", "eventSource": "aws:sqs", "body": CREATED},
            {"messageId": "2", "eventSource": "aws:sqs"},
        ]});
        let input = writer_input(&sqs).unwrap();
        assert_eq!(input[0].1.as_ref().unwrap().len(), 1);
        assert!(input[1].1.as_ref().is_err_and(|e| e.to_string().contains("without a body")));
        let sns = serde_json::json!({"Records": [{"EventSource": "aws:sns", "Sns": {"Message": CREATED}}]});
        let input = writer_input(&sns).unwrap();
        assert_eq!((input[0].0.clone(), input[0].1.as_ref().unwrap().len()), (None, 1));
    }
}
