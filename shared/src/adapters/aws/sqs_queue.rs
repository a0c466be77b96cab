//! `Queue` on SQS. A body too large for one message (256 KiB) is stored in S3 and the message
//! carries a pointer to it (a claim check), resolved transparently on receive. A pointer is
//! followed, and its object deleted, only if it names a claim object Floe writes
//! (`<prefix>/<uuid>.json`) of at most [`MAX_CLAIM_BYTES`], checked before it is read: any other
//! is refused (`Invalid`), so no message can make a reader fetch, hold or delete another object.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use aws_sdk_sqs::types::MessageSystemAttributeName;
use bytes::Bytes;

use super::error;
use crate::PortError;
use crate::ports::{Message, ObjectStore, Queue};

/// Bodies above this many bytes travel by claim check (SQS allows 262,144 with attributes).
pub const CLAIM_CHECK_THRESHOLD: usize = 240 * 1024;
/// SQS's largest message, attributes included.
const SQS_MAX_MESSAGE_BYTES: usize = 256 * 1024;
const CLAIM_PREFIX: &str = "floe-claim-check:";

/// The largest claim check followed (and written): a committer holds its bodies whole, up to 16
/// at once. A writer round's manifest stays far below it (about 1 KiB a data file).
pub(crate) const MAX_CLAIM_BYTES: u64 = 32 << 20;

/// The message attribute naming why a message was refused, on its copy in a dead-letter queue.
pub(crate) const REFUSED_ATTRIBUTE: &str = "floe-refused";

/// The message attribute naming the original's sender on a copy the committer sends (a contended
/// message sent again, a refused one in the dead-letter queue): [`Message::sent_for`].
pub const SENT_FOR_ATTRIBUTE: &str = "floe-sent-for";

/// A string message attribute.
fn string_attribute(value: String) -> Result<aws_sdk_sqs::types::MessageAttributeValue, PortError> {
    aws_sdk_sqs::types::MessageAttributeValue::builder()
        .data_type("String")
        .string_value(value)
        .build()
        .map_err(|e| PortError::Invalid(format!("message attribute: {e}")))
}

/// An SQS queue.
#[derive(Clone)]
pub struct SqsQueue {
    client: aws_sdk_sqs::Client,
    url: String,
    claims: Option<(Arc<dyn ObjectStore>, String)>,
}

impl std::fmt::Debug for SqsQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqsQueue").field("url", &self.url).finish_non_exhaustive()
    }
}

impl SqsQueue {
    /// The queue at `url`.
    pub fn new(client: aws_sdk_sqs::Client, url: &str) -> Self {
        SqsQueue { client, url: url.to_string(), claims: None }
    }

    /// The SQS client this queue sends through.
    pub fn client(&self) -> &aws_sdk_sqs::Client {
        &self.client
    }

    /// Stores large bodies under `prefix` (an `s3://` URI) in `store`.
    pub fn with_claim_check(mut self, store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        self.claims = Some((store, prefix.trim_end_matches('/').to_string()));
        self
    }
}

#[async_trait]
impl Queue for SqsQueue {
    async fn send(&self, body: String) -> Result<(), PortError> {
        let body = self.claim(body).await?;
        self.client
            .send_message()
            .queue_url(&self.url)
            .message_body(body)
            .send()
            .await
            .map_err(|e| error::map("send", e))?;
        Ok(())
    }

    /// Sends `body` (a claim check stays one) again, on behalf of `sent_for`, the original's
    /// sender ([`SENT_FOR_ATTRIBUTE`]).
    async fn send_for(&self, body: String, sent_for: Option<&str>) -> Result<(), PortError> {
        let body = self.claim(body).await?;
        self.send_with(body, [(SENT_FOR_ATTRIBUTE, sent_for.map(str::to_string))]).await
    }

    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError> {
        let mut out = vec![];
        while out.len() < max {
            let got = self
                .client
                .receive_message()
                .queue_url(&self.url)
                .max_number_of_messages((max - out.len()).min(10) as i32)
                .visibility_timeout(visibility.as_secs().max(1) as i32)
                .message_system_attribute_names(MessageSystemAttributeName::ApproximateReceiveCount)
                .message_system_attribute_names(MessageSystemAttributeName::SenderId)
                .message_attribute_names(SENT_FOR_ATTRIBUTE)
                .send()
                .await
                .map_err(|e| error::map("receive", e))?;
            let msgs = got.messages();
            if msgs.is_empty() {
                break;
            }
            for m in msgs {
                let count = m
                    .attributes()
                    .and_then(|a| a.get(&MessageSystemAttributeName::ApproximateReceiveCount))
                    .and_then(|c| c.parse().ok())
                    .unwrap_or(1);
                let body = self.resolve(m.body().unwrap_or_default()).await?;
                let sender = m.attributes().and_then(|a| a.get(&MessageSystemAttributeName::SenderId)).cloned();
                let sent_for = m
                    .message_attributes()
                    .and_then(|a| a.get(SENT_FOR_ATTRIBUTE))
                    .and_then(|v| v.string_value())
                    .map(str::to_string);
                out.push(Message {
                    id: m.message_id().unwrap_or_default().to_string(),
                    receipt: m.receipt_handle().unwrap_or_default().to_string(),
                    body,
                    receive_count: count,
                    sender,
                    sent_for,
                });
            }
        }
        Ok(out)
    }

    async fn ack(&self, receipt: &str) -> Result<(), PortError> {
        self.client
            .delete_message()
            .queue_url(&self.url)
            .receipt_handle(receipt)
            .send()
            .await
            .map_err(|e| error::map("ack", e))?;
        Ok(())
    }

    async fn release(&self, receipt: &str) -> Result<(), PortError> {
        self.client
            .change_message_visibility()
            .queue_url(&self.url)
            .receipt_handle(receipt)
            .visibility_timeout(0)
            .send()
            .await
            .map_err(|e| error::map("release", e))?;
        Ok(())
    }
}

impl SqsQueue {
    /// The body as it travels on SQS: itself, or past [`CLAIM_CHECK_THRESHOLD`] bytes a claim
    /// check to it, stored first (create-only, like every object Floe writes: a fresh name never
    /// exists).
    pub async fn claim(&self, body: String) -> Result<String, PortError> {
        if body.len() <= CLAIM_CHECK_THRESHOLD {
            return Ok(body);
        }
        let (store, prefix) = self.claims.as_ref().ok_or_else(|| {
            PortError::Invalid(format!("a {} byte message needs a claim check store (FLOE_WAREHOUSE)", body.len()))
        })?;
        if body.len() as u64 > MAX_CLAIM_BYTES {
            return Err(PortError::Invalid(format!(
                "a {} byte message is past the claim check limit of {MAX_CLAIM_BYTES} bytes",
                body.len()
            )));
        }
        let uri = format!("{prefix}/{}.json", uuid::Uuid::new_v4());
        store.put_if_absent(&uri, Bytes::from(body)).await?;
        Ok(format!("{CLAIM_PREFIX}{uri}"))
    }

    /// Deletes the claim check `body` points to, if it is one: its message is settled (every
    /// effect of it is durable elsewhere), so nothing will read it again. Best effort: a claim
    /// left behind expires with the bucket's lifecycle rule.
    pub async fn discard_claim(&self, body: &str) {
        if let (Some(uri), Some((store, prefix))) = (body.strip_prefix(CLAIM_PREFIX), &self.claims)
            && claim_object(prefix, uri).is_ok()
            && let Err(e) = store.delete(uri).await
        {
            tracing::warn!(claim = %uri, error = %e, "could not delete a settled message's claim check");
        }
    }

    /// Follows a claim check, if the body is one: only to a claim object under the prefix, of at
    /// most [`MAX_CLAIM_BYTES`] (a HEAD first; the read stops at the size it gave).
    pub async fn resolve(&self, body: &str) -> Result<String, PortError> {
        self.resolve_reserving(body, |_| Ok(())).await
    }

    /// [`SqsQueue::resolve`], with `reserve` asked for a claim check's size (from its HEAD)
    /// before it is read: an error from it leaves the object unread.
    pub async fn resolve_reserving(
        &self,
        body: &str,
        reserve: impl FnOnce(u64) -> Result<(), PortError>,
    ) -> Result<String, PortError> {
        match (body.strip_prefix(CLAIM_PREFIX), &self.claims) {
            (Some(uri), Some((store, prefix))) => {
                claim_object(prefix, uri)?;
                let size = store.head(uri).await?.size;
                if size > MAX_CLAIM_BYTES {
                    return Err(PortError::Invalid(format!(
                        "claim check {uri} holds {size} bytes, past the limit of {MAX_CLAIM_BYTES}"
                    )));
                }
                reserve(size)?;
                let bytes = store.get_range(uri, 0..size).await?;
                String::from_utf8(bytes.to_vec()).map_err(|e| PortError::io(format!("claim check {uri}"), e))
            }
            (Some(uri), None) => Err(PortError::Invalid(format!("claim check {uri} but no store configured"))),
            (None, _) => Ok(body.to_string()),
        }
    }

    /// Sends `body` (a refused message, as it arrived) with why it was refused in the
    /// [`REFUSED_ATTRIBUTE`] message attribute, so that its copy in a dead-letter queue says why
    /// and a redrive delivers it unchanged; `sent_for` is the original's sender
    /// ([`SENT_FOR_ATTRIBUTE`]).
    pub async fn send_refused(&self, body: String, reason: &str, sent_for: Option<&str>) -> Result<(), PortError> {
        // SQS counts attributes (names, types and values) in its 256 KiB: the reason takes what
        // the body and the sender leave, so a body near the limit is still dead-lettered.
        let used = body.len() + sent_for.map_or(0, str::len) + REFUSED_ATTRIBUTE.len() + SENT_FOR_ATTRIBUTE.len() + 64;
        let room = (SQS_MAX_MESSAGE_BYTES.saturating_sub(used)).min(4096);
        let mut reason: String = reason.chars().take(4096).collect();
        while reason.len() > room {
            reason.pop();
        }
        self.send_with(
            body,
            [
                (REFUSED_ATTRIBUTE, Some(reason).filter(|r| !r.is_empty())),
                (SENT_FOR_ATTRIBUTE, sent_for.map(str::to_string)),
            ],
        )
        .await
    }

    async fn send_with<const N: usize>(
        &self,
        body: String,
        attributes: [(&str, Option<String>); N],
    ) -> Result<(), PortError> {
        let mut send = self.client.send_message().queue_url(&self.url).message_body(body);
        for (name, value) in attributes {
            if let Some(value) = value {
                send = send.message_attributes(name, string_attribute(value)?);
            }
        }
        send.send().await.map_err(|e| error::map("send", e))?;
        Ok(())
    }
}

/// Why `uri` is not a claim object under `prefix` (`<prefix>/<uuid>.json`, as [`SqsQueue::claim`]
/// names them), if it is not.
fn claim_object(prefix: &str, uri: &str) -> Result<(), PortError> {
    let name = uri.strip_prefix(prefix).and_then(|rest| rest.strip_prefix('/')).and_then(|n| n.strip_suffix(".json"));
    match name.and_then(|n| uuid::Uuid::try_parse(n).ok().filter(|u| u.hyphenated().to_string() == n)) {
        Some(_) => Ok(()),
        None => Err(PortError::Invalid(format!("claim check {uri} is not a claim object under {prefix}/"))),
    }
}

#[cfg(test)]
mod tests {
    use super::claim_object;

    #[test]
    fn only_claim_objects_under_the_prefix_are_followed() {
        let prefix = "s3://lake/wh/_floe/claims";
        let ours = format!("{prefix}/{}.json", uuid::Uuid::new_v4());
        assert!(claim_object(prefix, &ours).is_ok());
        for bad in [
            "s3://lake/wh/web.db/events/metadata/00001-x.metadata.json".to_string(),
            format!("s3://other/wh/_floe/claims/{}.json", uuid::Uuid::new_v4()),
            format!("{prefix}/../../web.db/events/metadata/{}.json", uuid::Uuid::new_v4()),
            format!("{prefix}/sub/{}.json", uuid::Uuid::new_v4()),
            format!("{prefix}x/{}.json", uuid::Uuid::new_v4()),
            format!("{prefix}/{}.json", uuid::Uuid::new_v4().simple()),
            format!("{prefix}/{}", uuid::Uuid::new_v4()),
            format!("{prefix}/{}.json", uuid::Uuid::new_v4().to_string().to_uppercase()),
        ] {
            assert!(claim_object(prefix, &bad).is_err(), "{bad}");
        }
    }
}
