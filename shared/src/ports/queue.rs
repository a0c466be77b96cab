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
}

/// An at-least-once queue.
#[async_trait]
pub trait Queue: Send + Sync {
    /// Enqueues one message.
    async fn send(&self, body: String) -> Result<(), PortError>;
    /// Receives up to `max` visible messages and hides them for `visibility`.
    async fn receive(&self, max: usize, visibility: Duration) -> Result<Vec<Message>, PortError>;
    /// Acknowledges (deletes) a delivered message.
    async fn ack(&self, receipt: &str) -> Result<(), PortError>;
    /// Makes a delivered message visible again now, for another attempt.
    async fn release(&self, receipt: &str) -> Result<(), PortError>;
}
