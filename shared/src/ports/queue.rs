//! The queue port: at-least-once delivery with a visibility timeout, as SQS offers it.

use std::time::Duration;

use async_trait::async_trait;

use crate::PortError;

/// A received message. It stays invisible to other receivers until acknowledged (deleted) or
/// until its visibility timeout runs out, after which it is delivered again.
#[derive(Debug, Clone)]
pub struct Message {
    /// Stable id of the message (the same on every delivery).
    pub id: String,
    /// Handle for this delivery, used to acknowledge it.
    pub receipt: String,
    /// The body as sent.
    pub body: String,
    /// How many times this message has been delivered, this delivery included.
    pub receive_count: u32,
    /// The principal that sent it, as the queue vouches for it (SQS's `SenderId`: a role's
    /// unique id and the session, `AROA…:name`, or a user's id); `None` where the queue says
    /// nothing (embedded mode's queue is the process's own).
    pub sender: Option<String>,
    /// On a copy the committer sent again (a contended message, or a refused one in the
    /// dead-letter queue), the sender of the original, as the committer recorded it: believed
    /// only when `sender` is the committer itself.
    pub sent_for: Option<String>,
}

/// An at-least-once queue.
#[async_trait]
pub trait Queue: Send + Sync {
    /// Enqueues one message.
    async fn send(&self, body: String) -> Result<(), PortError>;
    /// Enqueues a copy of a received message on behalf of `sent_for`, the original's sender, so
    /// that a receiver that checks senders admits the copy as the original's
    /// ([`Message::sent_for`]). A queue that vouches for no sender sends the body alone.
    async fn send_for(&self, body: String, sent_for: Option<&str>) -> Result<(), PortError> {
        let _ = sent_for;
        self.send(body).await
    }
    /// Receives up to `max` visible messages and hides them for `visibility`.
    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError>;
    /// Acknowledges (deletes) a delivered message.
    async fn ack(&self, receipt: &str) -> Result<(), PortError>;
    /// Makes a delivered message visible again now, for another attempt.
    async fn release(&self, receipt: &str) -> Result<(), PortError>;
}
