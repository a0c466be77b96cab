//! Retries with exponential backoff and full jitter around every port, for errors that say
//! "try again" ([`PortError::is_retryable`]: throttling, transient I/O). Conflicts, missing
//! objects and invalid requests pass through at once: they need a decision, not patience.
//! What makes a repeated call safe is in [`wrap`](super::wrap).

use std::sync::Arc;
use std::time::Duration;

use rand::Rng;
use tracing::debug;

use super::Ports;
use super::wrap::{Around, wrap};
use crate::PortError;

/// How hard to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included.
    pub attempts: u32,
    /// Backoff before the second attempt; doubles each time, up to `max_backoff`.
    pub base_backoff: Duration,
    /// The longest pause between attempts.
    pub max_backoff: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy { attempts: 8, base_backoff: Duration::from_millis(50), max_backoff: Duration::from_secs(5) }
    }
}

impl RetryPolicy {
    /// Runs `op` until it succeeds, fails for good, or runs out of attempts.
    pub async fn run<T, F, Fut>(&self, what: &str, mut op: F) -> Result<T, PortError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, PortError>>,
    {
        let mut attempt = 1;
        loop {
            match op().await {
                Err(e) if e.is_retryable() && attempt < self.attempts => {
                    let cap = self.base_backoff.saturating_mul(1 << (attempt - 1).min(20)).min(self.max_backoff);
                    let pause = Duration::from_micros(rand::rng().random_range(0..=cap.as_micros() as u64));
                    debug!(what, attempt, error = %e, pause_ms = pause.as_millis() as u64, "retrying");
                    tokio::time::sleep(pause).await;
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

impl Around for RetryPolicy {
    fn call<T, F, Fut>(&self, what: &'static str, op: F) -> impl Future<Output = Result<T, PortError>> + Send
    where
        T: Send,
        F: FnMut() -> Fut + Send,
        Fut: Future<Output = Result<T, PortError>> + Send,
    {
        self.run(what, op)
    }
}

impl Ports {
    /// Wraps every port (but metrics and faults) in retries under `policy`.
    pub fn retrying(self, policy: RetryPolicy) -> Ports {
        wrap(self, Arc::new(policy))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;

    fn fast() -> RetryPolicy {
        RetryPolicy { attempts: 4, base_backoff: Duration::from_millis(1), max_backoff: Duration::from_millis(2) }
    }

    #[tokio::test]
    async fn retries_retryable_errors_until_success_or_the_limit() {
        let calls = AtomicU32::new(0);
        let r = fast()
            .run("t", || async {
                let n = calls.fetch_add(1, Ordering::SeqCst);
                if n < 2 { Err(PortError::Throttled("slow down".into())) } else { Ok(n) }
            })
            .await;
        assert_eq!(r.expect("third attempt succeeds"), 2);
        calls.store(0, Ordering::SeqCst);
        let r: Result<(), _> = fast()
            .run("t", || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(PortError::Throttled("always".into()))
            })
            .await;
        assert!(matches!(r, Err(PortError::Throttled(_))));
        assert_eq!(calls.load(Ordering::SeqCst), 4, "gives up after the attempts");
    }

    #[tokio::test]
    async fn conflicts_and_missing_objects_are_not_retried() {
        let calls = AtomicU32::new(0);
        let r: Result<(), _> = fast()
            .run("t", || async {
                calls.fetch_add(1, Ordering::SeqCst);
                Err(PortError::Conflict("lost".into()))
            })
            .await;
        assert!(matches!(r, Err(PortError::Conflict(_))));
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
