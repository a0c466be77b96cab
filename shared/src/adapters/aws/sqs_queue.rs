//! `Queue` on SQS. A body too large for one message (256 KiB) is stored in S3 and the message
//! carries a pointer to it (a claim check), resolved transparently on receive.

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
const CLAIM_PREFIX: &str = "floe-claim-check:";

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
                out.push(Message {
                    id: m.message_id().unwrap_or_default().to_string(),
                    receipt: m.receipt_handle().unwrap_or_default().to_string(),
                    body,
                    receive_count: count,
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
        let uri = format!("{prefix}/{}.json", uuid::Uuid::new_v4());
        store.put_if_absent(&uri, Bytes::from(body)).await?;
        Ok(format!("{CLAIM_PREFIX}{uri}"))
    }

    /// Deletes the claim check `body` points to, if it is one: its message is settled (every
    /// effect of it is durable elsewhere), so nothing will read it again. Best effort: a claim
    /// left behind expires with the bucket's lifecycle rule.
    pub async fn discard_claim(&self, body: &str) {
        if let (Some(uri), Some((store, _))) = (body.strip_prefix(CLAIM_PREFIX), &self.claims)
            && let Err(e) = store.delete(uri).await
        {
            tracing::warn!(claim = %uri, error = %e, "could not delete a settled message's claim check");
        }
    }

    /// Follows a claim check, if the body is one.
    pub async fn resolve(&self, body: &str) -> Result<String, PortError> {
        match (body.strip_prefix(CLAIM_PREFIX), &self.claims) {
            (Some(uri), Some((store, _))) => {
                let bytes = store.get(uri).await?;
                String::from_utf8(bytes.to_vec()).map_err(|e| PortError::io(format!("claim check {uri}"), e))
            }
            (Some(uri), None) => Err(PortError::Invalid(format!("claim check {uri} but no store configured"))),
            (None, _) => Ok(body.to_string()),
        }
    }
}
