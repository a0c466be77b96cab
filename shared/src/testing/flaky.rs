//! Transient faults: every port wrapped so that a seeded random fraction of calls fails with a
//! retryable error, half of them *before* the call reaches the backend (throttling) and half
//! *after* it took effect (the answer lost on the way back, the nastier case: a put that
//! landed, a message that was sent, a swap that happened, all reported as failures).

use std::sync::{Arc, Mutex};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::PortError;
use crate::ports::Ports;
use crate::ports::wrap::{Around, wrap};

/// Shared dice and counters for one flaky set of ports.
#[derive(Debug)]
pub struct Dice {
    rng: Mutex<StdRng>,
    rate: f64,
    injected: Mutex<(u64, u64)>,
}

impl Dice {
    /// Fails `rate` (0..1) of calls, seeded.
    pub fn new(rate: f64, seed: u64) -> Arc<Self> {
        Arc::new(Dice { rng: Mutex::new(StdRng::seed_from_u64(seed)), rate, injected: Mutex::new((0, 0)) })
    }

    /// Faults injected so far: (before the call, after the call).
    pub fn injected(&self) -> (u64, u64) {
        *self.injected.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn roll(&self) -> Roll {
        let x: f64 = self.rng.lock().unwrap_or_else(|e| e.into_inner()).random();
        let mut n = self.injected.lock().unwrap_or_else(|e| e.into_inner());
        if x < self.rate / 2.0 {
            n.0 += 1;
            Roll::Before
        } else if x < self.rate {
            n.1 += 1;
            Roll::After
        } else {
            Roll::Pass
        }
    }
}

impl Around for Dice {
    fn call<T, F, Fut>(&self, what: &'static str, mut op: F) -> impl Future<Output = Result<T, PortError>> + Send
    where
        T: Send,
        F: FnMut() -> Fut + Send,
        Fut: Future<Output = Result<T, PortError>> + Send,
    {
        let roll = self.roll();
        async move {
            match roll {
                Roll::Pass => op().await,
                Roll::Before => Err(PortError::Throttled(format!("{what}: injected throttling"))),
                Roll::After => {
                    let _ = op().await;
                    Err(PortError::io(what, "injected: connection reset after the request was sent"))
                }
            }
        }
    }
}

enum Roll {
    Pass,
    Before,
    After,
}

/// Wraps every port of `ports` (but metrics and faults) with `dice`.
pub fn flaky(ports: Ports, dice: &Arc<Dice>) -> Ports {
    wrap(ports, dice.clone())
}
