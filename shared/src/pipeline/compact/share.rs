//! Shares of a compaction plan: how a tick's plan is cut for several runs (one per Lambda
//! invocation), and how a run plans its share again in a [`Scope`].
//!
//! A share is a stretch of the plan's tasks in plan order ([`plan::shares`]): whole partitions,
//! or a stretch of one hot partition's chain. Another run gets the share's partitions, the
//! manifests that held their live files with the snapshot planned from, and, for a stretch that
//! does not start its chain, the first input of its first task. It plans those partitions again
//! from the table as it is then:
//!
//! - **Manifests.** A manifest is immutable and every manifest a commit writes gets that
//!   snapshot's sequence number, so on a history that runs through the planned snapshot a manifest
//!   not named and not newer than it holds none of the partitions' live files, and is not read.
//!   On any other history (a rollback, a stale catalog read) every manifest is read.
//! - **Partitions** are named by their paths, which are not injective (`null` and the string
//!   `"null"` read the same); a share names the manifests of every partition with its paths, so
//!   a run sees each partition it plans whole.
//! - **The stretch** starts at the task holding the named input, wherever the chain begins by
//!   then; if that file is gone (compacted since), the stretch runs nothing and the next tick
//!   plans it again.

use std::collections::{BTreeSet, HashMap};

use iceberg::spec::{ManifestFile, Struct, TableMetadata};
use tracing::info;

use super::{CompactPlan, LiveFile, Task, plan};

/// The manifests that held a share's partitions' live files, and the snapshot planned from.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    /// Manifest paths.
    pub paths: BTreeSet<String>,
    /// The snapshot the share was planned from.
    pub snapshot_id: i64,
    /// Its sequence number.
    pub seq: i64,
}

/// A share of a plan as another run plans it again.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scope {
    /// Partition paths (as [`Share::partitions`]).
    pub partitions: BTreeSet<String>,
    /// The manifests to read, with those added since; `None`: every manifest.
    pub manifests: Option<Held>,
    /// For a stretch of a chain after its start: the first input of its first task.
    pub from: Option<String>,
}

/// A share of a plan, for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// The partitions' paths (`day=2026-12-03/tenant=acme`, percent-encoded as in data paths).
    pub partitions: Vec<String>,
    /// The manifests holding the live files of every partition with those paths.
    pub manifests: Vec<String>,
    /// For a stretch of a chain after its start: the first input of its first task.
    pub from: Option<String>,
    /// The share's tasks, in plan order.
    pub tasks: Vec<Task>,
}

impl Share {
    /// The scope in which another run plans this share again; `plan` is the plan it was cut from.
    pub fn scope(&self, plan: &CompactPlan) -> Scope {
        let snapshot = plan.state.metadata.current_snapshot();
        Scope {
            partitions: self.partitions.iter().cloned().collect(),
            manifests: snapshot.map(|s| Held {
                paths: self.manifests.iter().cloned().collect(),
                snapshot_id: s.snapshot_id(),
                seq: s.sequence_number(),
            }),
            from: self.from.clone(),
        }
    }
}

impl CompactPlan {
    /// The plan in shares of at most `max_tasks` tasks, most urgent first ([`plan::shares`]).
    pub fn shares(&self, max_tasks: usize) -> Vec<Share> {
        let meta = &self.state.metadata;
        // Where each due partition's tasks start.
        let mut first: HashMap<&Struct, usize> = HashMap::new();
        for (i, t) in self.tasks.iter().enumerate() {
            first.entry(&t.partition).or_insert(i);
        }
        // The manifests of each path's live files (of every partition with that path).
        let mut by_partition: HashMap<&Struct, BTreeSet<u32>> = HashMap::new();
        for f in self.files.iter().filter(|f| f.spec_id == meta.default_partition_spec_id()) {
            by_partition.entry(&f.partition).or_default().insert(f.manifest);
        }
        let mut by_path: HashMap<String, BTreeSet<u32>> = HashMap::new();
        for (p, m) in by_partition {
            by_path.entry(partition_path(meta, p)).or_default().extend(m);
        }
        plan::shares(&self.tasks, max_tasks)
            .into_iter()
            .map(|range| {
                let tasks = self.tasks[range.clone()].to_vec();
                let mut partitions: Vec<String> = tasks.iter().map(|t| partition_path(meta, &t.partition)).collect();
                partitions.dedup();
                let held: BTreeSet<u32> = partitions.iter().flat_map(|p| by_path[p].iter().copied()).collect();
                // A stretch of a cut chain names its first input, wherever its chain starts.
                let p = &tasks[0].partition;
                let cut = range.start > first[p] || self.tasks.get(range.end).is_some_and(|t| &t.partition == p);
                let from = cut.then(|| tasks[0].inputs[0].path.clone());
                Share {
                    partitions,
                    manifests: held.into_iter().map(|i| self.manifests[i as usize].clone()).collect(),
                    from,
                    tasks,
                }
            })
            .collect()
    }
}

impl Scope {
    /// Keeps the manifests of `list` that may hold the scope's partitions' live files.
    pub(super) fn restrict_manifests(&self, list: &mut Vec<ManifestFile>, meta: &TableMetadata) {
        let Some(held) = &self.manifests else { return };
        if !descends_from(meta, held.snapshot_id) {
            info!(
                planned = held.snapshot_id,
                "the table's history no longer runs through the share's snapshot: reading every manifest"
            );
            return;
        }
        // Every delete manifest stays: a delete file of any age may apply to the share's files.
        list.retain(|mf| {
            mf.content == iceberg::spec::ManifestContentType::Deletes
                || held.paths.contains(&mf.manifest_path)
                || mf.sequence_number > held.seq
        });
    }

    /// Keeps the files of the current spec in the scope's partitions.
    pub(super) fn restrict_files(&self, files: &mut Vec<LiveFile>, meta: &TableMetadata) {
        let spec_id = meta.default_partition_spec_id();
        let mut inside: HashMap<Struct, bool> = HashMap::new();
        files.retain(|f| {
            if f.spec_id != spec_id {
                return false;
            }
            if let Some(yes) = inside.get(&f.partition) {
                return *yes;
            }
            let yes = self.partitions.contains(&partition_path(meta, &f.partition));
            inside.insert(f.partition.clone(), yes);
            yes
        });
    }

    /// The scope's tasks of `tasks` (its plan): at most `max_tasks`; for a stretch, from the task
    /// holding its first input and of that task's partition only.
    pub(super) fn stretch(&self, tasks: &[Task], max_tasks: usize) -> Vec<Task> {
        let start = match &self.from {
            None => 0,
            Some(path) => match tasks.iter().position(|t| t.inputs.iter().any(|f| &f.path == path)) {
                Some(i) => i,
                None => {
                    info!(from = %path, "the stretch's first input is compacted already; nothing to run");
                    return vec![];
                }
            },
        };
        let stretch = tasks.iter().skip(start).take(max_tasks);
        match self.from {
            None => stretch.cloned().collect(),
            Some(_) => stretch.take_while(|t| t.partition == tasks[start].partition).cloned().collect(),
        }
    }
}

/// Whether the current snapshot is `snapshot_id` or descends from it.
fn descends_from(meta: &TableMetadata, snapshot_id: i64) -> bool {
    let mut at = meta.current_snapshot();
    while let Some(s) = at {
        if s.snapshot_id() == snapshot_id || s.parent_snapshot_id() == Some(snapshot_id) {
            return true;
        }
        at = s.parent_snapshot_id().and_then(|p| meta.snapshot_by_id(p));
    }
    false
}

fn partition_path(meta: &TableMetadata, partition: &Struct) -> String {
    crate::table::partition_path(meta.default_partition_spec(), meta.current_schema(), partition)
}
