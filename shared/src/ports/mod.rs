//! Ports: the small async traits through which the engine touches the outside world.
//!
//! The pipeline functions take one [`Ports`] bundle and never name a backend. Local adapters
//! (files, SQLite) live in `adapters::local`; AWS adapters (S3, SQS, DynamoDB, Glue) live behind
//! the `aws` feature. Every adapter runs the same contract suite (`testing::contract`). No SDK
//! type appears in a signature here; adapters convert backend errors to [`PortError`].
//!
//! [`PortError`]: crate::PortError

mod ledger;
mod lock;
mod metrics;
pub(crate) mod object_store;
mod queue;
mod retry;
mod table_pointer;
pub mod wrap;

use std::sync::Arc;

pub use ledger::{Ledger, QuarantineRecord, SourceState};
pub use lock::{Lease, Lock};
pub use metrics::{KEPT_VALUES, Metrics, NoopMetrics, Observed, Recorded, Recorder, Tee};
pub use object_store::{ObjectMeta, ObjectStore};
pub use queue::{Message, Queue};
pub use retry::RetryPolicy;
pub use table_pointer::{Committed, Pointer, TableIdent, TablePointer};

/// Everything a pipeline function may touch, as trait objects.
#[derive(Clone)]
pub struct Ports {
    /// Source objects, data files and table metadata.
    pub store: Arc<dyn ObjectStore>,
    /// The commit queue: writers send file manifests, the committer receives them.
    pub commit_queue: Arc<dyn Queue>,
    /// The catalog's table pointer (load + compare-and-swap).
    pub pointer: Arc<dyn TablePointer>,
    /// Per-source-object idempotency records and quarantine.
    pub ledger: Arc<dyn Ledger>,
    /// The committer lock (avoids wasted work; the pointer swap is the fence).
    pub lock: Arc<dyn Lock>,
    /// Counters; a no-op by default.
    pub metrics: Arc<dyn Metrics>,
    /// Fault points; disarmed unless a test (feature `test-util`) arms them.
    pub faults: crate::fault::Faults,
}

impl std::fmt::Debug for Ports {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ports").finish_non_exhaustive()
    }
}

impl Ports {
    /// Replaces the metrics sink.
    pub fn with_metrics(mut self, metrics: Arc<dyn Metrics>) -> Self {
        self.metrics = metrics;
        self
    }

    /// Replaces the fault plan (tests only can build an armed one).
    pub fn with_faults(mut self, faults: crate::fault::Faults) -> Self {
        self.faults = faults;
        self
    }
}
