//! Named fault points: the places where the crash-point suite kills (or pauses) a role.
//!
//! Every role calls [`Faults::hit`] at its named steps. A [`Faults`] value rides in
//! [`Ports`](crate::ports::Ports) and is disarmed everywhere production code builds one. Only
//! the `test-util` feature compiles the arming constructors ([`Faults::crash_at`],
//! [`Faults::pause_at`]) and the state behind them; without it `Faults` is an empty struct and
//! `hit` compiles to nothing, so no setting, variable or input can reach a fault in a
//! production build.
//!
//! A crash is a panic whose payload is a [`Crash`]: nothing after the point runs, no error
//! path cleans up, leases are not released and messages not acknowledged, as when a Lambda
//! runtime or a process dies.

use std::fmt;

/// A named step of a role at which a test may crash or pause it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FaultPoint {
    /// Writer: every object of the batch read and decoded (quarantine records written).
    WriterAfterRead,
    /// Writer: every Parquet file of the batch uploaded.
    WriterAfterUpload,
    /// Writer: the file manifest sent to the commit queue.
    WriterAfterManifestSend,
    /// Writer: the batch done, its input not yet acknowledged.
    WriterBeforeAck,
    /// Compactor: a task's merged files written.
    CompactorAfterWrite,
    /// Compactor: a task's rewrite request sent.
    CompactorAfterRequestSend,
    /// Committer: the table lock taken.
    CommitterAfterLock,
    /// Committer: manifests and manifest list written (and pending records).
    CommitterAfterManifestWrite,
    /// Committer: the new metadata.json written, the pointer not swapped.
    CommitterAfterMetadataWrite,
    /// Committer: the pointer swapped, the ledger not updated.
    CommitterAfterPointerSwap,
    /// Committer: sources recorded as committed in the ledger.
    CommitterAfterLedgerUpdate,
    /// Committer: the batch done, its messages not yet acknowledged.
    CommitterBeforeAck,
}

impl FaultPoint {
    /// Every point, in pipeline order.
    pub const ALL: [FaultPoint; 12] = [
        FaultPoint::WriterAfterRead,
        FaultPoint::WriterAfterUpload,
        FaultPoint::WriterAfterManifestSend,
        FaultPoint::WriterBeforeAck,
        FaultPoint::CompactorAfterWrite,
        FaultPoint::CompactorAfterRequestSend,
        FaultPoint::CommitterAfterLock,
        FaultPoint::CommitterAfterManifestWrite,
        FaultPoint::CommitterAfterMetadataWrite,
        FaultPoint::CommitterAfterPointerSwap,
        FaultPoint::CommitterAfterLedgerUpdate,
        FaultPoint::CommitterBeforeAck,
    ];

    /// The point's name as the suite prints it (`writer.after_read`).
    pub fn name(self) -> &'static str {
        match self {
            FaultPoint::WriterAfterRead => "writer.after_read",
            FaultPoint::WriterAfterUpload => "writer.after_upload",
            FaultPoint::WriterAfterManifestSend => "writer.after_manifest_send",
            FaultPoint::WriterBeforeAck => "writer.before_ack",
            FaultPoint::CompactorAfterWrite => "compactor.after_write",
            FaultPoint::CompactorAfterRequestSend => "compactor.after_request_send",
            FaultPoint::CommitterAfterLock => "committer.after_lock",
            FaultPoint::CommitterAfterManifestWrite => "committer.after_manifest_write",
            FaultPoint::CommitterAfterMetadataWrite => "committer.after_metadata_write",
            FaultPoint::CommitterAfterPointerSwap => "committer.after_pointer_swap",
            FaultPoint::CommitterAfterLedgerUpdate => "committer.after_ledger_update",
            FaultPoint::CommitterBeforeAck => "committer.before_ack",
        }
    }
}

impl fmt::Display for FaultPoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The panic payload of a crash at a fault point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Crash(pub FaultPoint);

/// The fault plan a role consults at each point. Disarmed by default.
#[derive(Clone, Default)]
pub struct Faults {
    #[cfg(feature = "test-util")]
    plan: Option<std::sync::Arc<armed::Plan>>,
}

impl fmt::Debug for Faults {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Faults").finish_non_exhaustive()
    }
}

impl Faults {
    /// Called by the roles at each named step: a no-op unless a test armed this point.
    #[inline]
    pub async fn hit(&self, point: FaultPoint) {
        #[cfg(feature = "test-util")]
        if let Some(plan) = &self.plan {
            plan.hit(point).await;
        }
        #[cfg(not(feature = "test-util"))]
        let _ = point;
    }
}

#[cfg(feature = "test-util")]
mod armed {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};

    use tokio::sync::Notify;

    use super::{Crash, FaultPoint, Faults};

    #[derive(Debug)]
    pub(super) enum Action {
        Crash,
        Pause { reached: Arc<Notify>, resume: Arc<Notify> },
    }

    #[derive(Debug)]
    pub(super) struct Plan {
        steps: Vec<(FaultPoint, u32, Action)>,
        hits: Mutex<HashMap<FaultPoint, u32>>,
    }

    impl Plan {
        pub(super) async fn hit(&self, point: FaultPoint) {
            let n = {
                let mut hits = self.hits.lock().unwrap_or_else(|e| e.into_inner());
                let n = hits.entry(point).or_insert(0);
                *n += 1;
                *n
            };
            let Some((_, _, action)) = self.steps.iter().find(|(p, nth, _)| *p == point && *nth == n) else {
                return;
            };
            match action {
                Action::Crash => std::panic::panic_any(Crash(point)),
                Action::Pause { reached, resume } => {
                    reached.notify_one();
                    resume.notified().await;
                }
            }
        }
    }

    impl Faults {
        fn armed(point: FaultPoint, nth: u32, action: Action) -> Self {
            Faults { plan: Some(Arc::new(Plan { steps: vec![(point, nth.max(1), action)], hits: Mutex::default() })) }
        }

        /// This plan, and also a crash the `nth` time `point` is reached (e.g. pause at one
        /// point, then die at a later one). Call it before the plan is shared.
        pub fn then_crash_at(self, point: FaultPoint, nth: u32) -> Self {
            let mut steps = self
                .plan
                .map(|p| Arc::try_unwrap(p).expect("then_crash_at on a plan not yet shared").steps)
                .unwrap_or_default();
            steps.push((point, nth.max(1), Action::Crash));
            Faults { plan: Some(Arc::new(Plan { steps, hits: Mutex::default() })) }
        }

        /// Crashes (panics with [`Crash`]) the `nth` time (1-based) `point` is reached.
        pub fn crash_at(point: FaultPoint, nth: u32) -> Self {
            Faults::armed(point, nth, Action::Crash)
        }

        /// Pauses the `nth` time `point` is reached: signals `reached`, then waits for `resume`.
        pub fn pause_at(point: FaultPoint, nth: u32, reached: Arc<Notify>, resume: Arc<Notify>) -> Self {
            Faults::armed(point, nth, Action::Pause { reached, resume })
        }

        /// How many times `point` was reached so far under this plan.
        pub fn hits(&self, point: FaultPoint) -> u32 {
            self.plan
                .as_ref()
                .map_or(0, |p| p.hits.lock().unwrap_or_else(|e| e.into_inner()).get(&point).copied().unwrap_or(0))
        }
    }
}

/// Whether a panic payload is a fault-point crash, and at which point.
pub fn crash_point(payload: &(dyn std::any::Any + Send)) -> Option<FaultPoint> {
    payload.downcast_ref::<Crash>().map(|c| c.0)
}

#[cfg(all(test, feature = "test-util"))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn crashes_on_the_nth_hit_only() {
        let f = Faults::crash_at(FaultPoint::WriterAfterUpload, 2);
        f.hit(FaultPoint::WriterAfterUpload).await;
        f.hit(FaultPoint::WriterAfterRead).await;
        let f2 = f.clone();
        let r = tokio::spawn(async move { f2.hit(FaultPoint::WriterAfterUpload).await }).await;
        let payload = r.expect_err("second hit crashes").into_panic();
        assert_eq!(crash_point(payload.as_ref()), Some(FaultPoint::WriterAfterUpload));
        assert_eq!(f.hits(FaultPoint::WriterAfterUpload), 2);
        f.hit(FaultPoint::WriterAfterUpload).await; // the third passes
    }

    #[tokio::test]
    async fn disarmed_faults_never_fire() {
        let f = Faults::default();
        for p in FaultPoint::ALL {
            f.hit(p).await;
        }
    }
}
