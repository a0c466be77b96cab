//! Compaction planning, LSM-style, from a snapshot's live files alone (pure: no I/O).
//!
//! Levels: a writer's file is level 0; a compaction's output is level 1 (from level 0) or level 2
//! (from level 1). Per partition of the current spec:
//!
//! - **L0 → L1** once the partition has `min_files` level-0 files or their bytes reach the
//!   target file size: every level-0 file of the partition, merged, sorted, deduplicated, and cut
//!   into files of the target size. The partition's compacted files (levels 1 and 2) are the
//!   task's *references*: their keys win over the level-0 copies (they were committed first), and
//!   only their key columns are read.
//! - **L1 → L2** once the partition has `min_files` level-1 files or their bytes reach the target:
//!   every level-1 file and every level-2 file under half the target ("partial"). With exact
//!   dedup, a level-1 file of at least half the target stays where it is: merging it would only
//!   copy it.
//!
//! - **Late files** (`late-<task>-…`): where dedup is exact and the key leads with a time column,
//!   an L0 → L1 task writes the rows further behind than the table's late horizon to a file of
//!   their own, without probing them against the compacted files ([`Policy::late`]). At the
//!   next plan, a *late task*, first in the partition's plan, merges them (oldest first) against
//!   the partition's compacted files, all of a tick's late keys at once, into level 1. They are referenced by L0 → L1 tasks, never
//!   merged into level 2, and taken by `full` runs after the compacted files and before level 0.
//!   docs/ARCHITECTURE.md, "Late keys, once per partition", says why this stays exact.
//!
//! A hot partition's inputs are split into several tasks of at most `max_task_bytes`, in age
//! order (compacted files, then level-0 files by data sequence number and path); each task also
//! takes the inputs of the tasks before it as references, so the oldest copy of a key wins across
//! tasks as within one, and a task whose chain was cut short is consistent with any later plan.
//!
//! A row is written by a writer, rewritten once into level 1 and, unless its level-1 file is at
//! least half the target (with exact dedup), once into level 2; after that only while its level-2
//! file is partial (under half the target), which ends as soon as the partition holds that much
//! data. `full` compacts every partition regardless of the thresholds, merging
//! its level-0 files and its compacted files under the target size into level 2.

use std::collections::BTreeMap;

use iceberg::spec::Struct;
use sha2::{Digest, Sha256};

use super::deletes::TaskDeletes;

/// A live data file as compaction sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveFile {
    /// Path.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Rows.
    pub rows: u64,
    /// Data sequence number.
    pub seq: i64,
    /// Partition spec id.
    pub spec_id: i32,
    /// Partition tuple.
    pub partition: Struct,
    /// Which manifest of the snapshot's manifest list holds it (its index there).
    pub manifest: u32,
    /// The first row id its rows inherit (format v3), if it has one.
    pub first_row_id: Option<i64>,
    /// Its dedup key columns' bounds (from its manifest entry; empty if the table has no dedup
    /// key or the entry no bounds).
    pub key_bounds: super::prune::KeyBounds,
}

impl LiveFile {
    /// The file's level, from its name: `L<n>-…` for compacted files, 0 for a writer's (and a
    /// late file's: an older Floe takes it for a writer's file and checks every row of it).
    pub fn level(&self) -> u32 {
        level_of(&self.path)
    }

    /// Whether it is a late file: rows a level-0 task left for its partition's late task.
    pub fn is_late(&self) -> bool {
        is_late_file(&self.path)
    }

    /// Its age class: compacted files hold the oldest rows, then late files, then level-0
    /// files (a late file's rows were committed before any live level-0 file's copy of a key).
    fn class(&self) -> u8 {
        match (self.level(), self.is_late()) {
            (l, _) if l > 0 => 0,
            (_, true) => 1,
            _ => 2,
        }
    }
}

/// The start of a late file's name.
pub const LATE_PREFIX: &str = "late-";

/// Whether `path` names a late file (one Floe wrote, named `late-<task>-…`).
pub fn is_late_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or_default();
    name.starts_with(LATE_PREFIX) && crate::table::is_floe_data_file(path)
}

/// The level encoded in a data file's name.
pub fn level_of(path: &str) -> u32 {
    let name = path.rsplit('/').next().unwrap_or_default();
    name.strip_prefix('L').and_then(|rest| rest.split('-').next()).and_then(|n| n.parse().ok()).unwrap_or(0)
}

/// Thresholds of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Policy {
    /// Target data file size.
    pub target_file_size: u64,
    /// Files of a level that trigger a merge.
    pub min_files: usize,
    /// Input bytes of one task (a hot partition splits into several).
    pub max_task_bytes: u64,
    /// Compact every partition, whatever the thresholds.
    pub full: bool,
    /// How far back an earlier copy of a key is looked for; `None`: in every compacted file of
    /// the partition (exact dedup).
    pub dedup_window: Option<DedupWindow>,
    /// Whether L0 → L1 tasks leave their late rows to late files, and from when rows are late;
    /// `None`: they probe every row (late files already written are planned all the same).
    pub late: Option<LateSplit>,
}

/// When a level-0 row is late (table property `floe.late-after-ms`): its key's leading time
/// column is more than `after_ms` behind the commit time of the newest snapshot its task's
/// inputs came from (never ahead of the compactor's clock), so a task's split depends on its
/// inputs alone.
#[derive(Debug, Clone, PartialEq)]
pub struct LateSplit {
    /// The horizon.
    pub after_ms: i64,
    /// The kept snapshots' sequence numbers and commit times.
    pub snapshots: Vec<(i64, i64)>,
    /// The compactor's clock when it planned.
    pub now_ms: i64,
}

impl LateSplit {
    /// The boundary of a task of `inputs`, in milliseconds since the epoch: rows whose key's
    /// leading column is before it are late. `None` (no row is) when the newest input's
    /// snapshot is not kept.
    fn before(&self, inputs: &[LiveFile]) -> Option<i64> {
        let seq = inputs.iter().map(|f| f.seq).max()?;
        let (_, at) = self.snapshots.iter().find(|(s, _)| *s == seq)?;
        Some((*at).min(self.now_ms).saturating_sub(self.after_ms))
    }
}

/// A dedup window (table property `floe.dedup-window-ms`): a level-0 row's key is looked for in
/// the compacted files that may hold a row committed within `window_ms` before it.
#[derive(Debug, Clone, PartialEq)]
pub struct DedupWindow {
    /// The window.
    pub window_ms: i64,
    /// The kept snapshots' sequence numbers and commit times.
    pub snapshots: Vec<(i64, i64)>,
}

impl DedupWindow {
    /// The cut for level-0 files the oldest of which has data sequence number `seq`: a compacted
    /// file at or below it holds only rows committed more than the window before that file (its
    /// data sequence number is that of the snapshot its task was planned from, which held all its
    /// rows). `None`, so every compacted file is a reference, when the snapshot of `seq` is not
    /// kept or none was committed before the window.
    fn cut(&self, seq: i64) -> Option<i64> {
        let (_, at) = self.snapshots.iter().find(|(s, _)| *s == seq)?;
        let since = at.saturating_sub(self.window_ms);
        let before = self.snapshots.iter().filter(|(_, t)| *t < since).map(|(s, _)| *s).max()?;
        // Commit times out of order (a clock's skew, another engine's): never past a snapshot
        // committed within the window.
        let within = self.snapshots.iter().filter(|(_, t)| *t >= since).map(|(s, _)| *s).min();
        Some(within.map_or(before, |w| before.min(w - 1)))
    }
}

impl Policy {
    /// The paths of `candidates` (compacted files) that are references of a merge of `inputs`:
    /// all of them, or with a dedup window those that may hold a row committed within the window
    /// before the oldest level-0 input.
    fn references<'a>(&self, candidates: impl Iterator<Item = &'a LiveFile>, inputs: &[&LiveFile]) -> Vec<String> {
        // Late inputs were never probed against the compacted files, and their sequence number
        // is newer than their rows: no cut.
        if inputs.iter().any(|f| f.is_late()) {
            return candidates.map(|f| f.path.clone()).collect();
        }
        let oldest = inputs.iter().filter(|f| f.level() == 0).map(|f| f.seq).min();
        let cut = self.dedup_window.as_ref().zip(oldest).and_then(|(w, seq)| w.cut(seq));
        candidates.filter(|f| cut.is_none_or(|c| f.seq > c)).map(|f| f.path.clone()).collect()
    }
}

/// One compaction task: merge `inputs` into files of `level`.
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    /// Deterministic id: a hash of the level and the inputs.
    pub id: String,
    /// Output level.
    pub level: u32,
    /// Partition spec of the inputs (and outputs).
    pub spec_id: i32,
    /// The partition.
    pub partition: Struct,
    /// Files to rewrite, in age order (compacted files, then level-0 by sequence number, path).
    pub inputs: Vec<LiveFile>,
    /// Files whose keys win over the inputs' (only their key columns are read): the partition's
    /// older files, then from `chain_from` on the inputs of the tasks before it in its chain.
    pub references: Vec<String>,
    /// Where the chain's references begin in `references`.
    pub chain_from: usize,
    /// An L0 → L1 task's late boundary ([`LateSplit`]): its level-0 rows whose key's leading
    /// column is before it go to a late file, probed only against the chain's references.
    pub late_before: Option<i64>,
    /// Other engines' delete files that apply to the inputs and references.
    pub deletes: TaskDeletes,
}

impl Task {
    /// Input bytes.
    pub fn bytes(&self) -> u64 {
        self.inputs.iter().map(|f| f.size).sum()
    }
}

/// What a partition owes: files, level counts, small files, and whether a task is due.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PartitionDebt {
    /// Live files.
    pub files: usize,
    /// Bytes.
    pub bytes: u64,
    /// Files per level (0, 1, 2+), late files aside.
    pub levels: [usize; 3],
    /// Late files.
    pub late: usize,
    /// Files under the target size.
    pub small: usize,
    /// Tasks the plan would run for it now.
    pub tasks: usize,
}

/// Plans the tasks for the live files of the current spec `spec_id` (files of older specs are
/// left alone). A partition's tasks come together, in the order they must be planned (each
/// references the inputs of those before it); partitions come most urgent first: the one whose
/// oldest input has the lowest data sequence number, a compacted input after a level-0 one of
/// the same number, then in partition order.
///
/// That order is what keeps a run of bounded size (`max_tasks`, a share of a tick) from
/// starving a partition: a partition left for later keeps its oldest input, while a file a writer
/// adds is newer than every live file and a file a run writes takes the sequence number of the
/// snapshot it was planned from, no older than any file live then, and newer than a level-0 file
/// of that same number (its rows were committed by then); so a partition that waited comes
/// before those served since.
pub fn plan(files: &[LiveFile], spec_id: i32, policy: &Policy) -> Vec<Task> {
    let mut parts: Vec<Vec<Task>> = partitions(files, spec_id)
        .into_values()
        .map(|part| plan_partition(&part, policy))
        .filter(|tasks| !tasks.is_empty())
        .collect();
    // A stable sort: partitions of equal urgency stay in partition order.
    parts.sort_by_key(|tasks| tasks.iter().flat_map(|t| &t.inputs).map(|f| (f.seq, f.class() < 2)).min());
    parts.into_iter().flatten().collect()
}

/// Splits a plan (partition by partition, as [`plan`] orders it) into shares of at most
/// `max_tasks` tasks, in plan order: the index ranges of each share's tasks. Partitions with
/// fewer tasks share whole; a partition with more is cut into shares of its own, each a stretch
/// of its chain (the tasks of a chain do not wait on each other: each only references the inputs
/// of those before it, files that are live until the chain commits).
pub fn shares(tasks: &[Task], max_tasks: usize) -> Vec<std::ops::Range<usize>> {
    let max_tasks = max_tasks.max(1);
    let mut out: Vec<std::ops::Range<usize>> = vec![];
    // Whether the last share holds whole partitions, and may take more.
    let mut open = false;
    let mut i = 0;
    while i < tasks.len() {
        let end = i + tasks[i..].iter().take_while(|t| t.partition == tasks[i].partition).count();
        match out.last_mut() {
            Some(last) if open && end - last.start <= max_tasks => last.end = end,
            _ if end - i <= max_tasks => {
                out.push(i..end);
                open = true;
            }
            _ => {
                out.extend((i..end).step_by(max_tasks).map(|s| s..(s + max_tasks).min(end)));
                open = false;
            }
        }
        i = end;
    }
    out
}

/// The debt of each partition (keyed by its tuple), for status reports.
pub fn debt(files: &[LiveFile], spec_id: i32, policy: &Policy) -> Vec<(Struct, PartitionDebt)> {
    partitions(files, spec_id)
        .into_values()
        .map(|part| {
            let mut d = PartitionDebt { files: part.len(), ..Default::default() };
            for f in &part {
                d.bytes += f.size;
                match f.is_late() {
                    true => d.late += 1,
                    false => d.levels[(f.level() as usize).min(2)] += 1,
                }
                d.small += usize::from(f.size < policy.target_file_size);
            }
            d.tasks = plan_partition(&part, policy).len();
            (part[0].partition.clone(), d)
        })
        .collect()
}

fn partitions(files: &[LiveFile], spec_id: i32) -> BTreeMap<String, Vec<&LiveFile>> {
    let mut out: BTreeMap<String, Vec<&LiveFile>> = BTreeMap::new();
    for f in files.iter().filter(|f| f.spec_id == spec_id) {
        out.entry(format!("{:?}", f.partition)).or_default().push(f);
    }
    // Age order, the order in which copies of a key win: compacted files first, the highest
    // level first (a level holds rows committed before any live file of a lower level: under a
    // dedup window a level-2 file may hold a key's first copy and a level-1 file its later one),
    // then late files, then level-0 files; within a level by data sequence number and path. (A
    // compacted or late file's sequence number is that of the snapshot its task was planned
    // from, newer than its rows: it may not be compared across levels.) Every kind of run takes
    // its inputs in this one order.
    for part in out.values_mut() {
        part.sort_by_key(|f| (f.class(), std::cmp::Reverse(f.level()), f.seq, f.path.clone()));
    }
    out
}

fn plan_partition(part: &[&LiveFile], policy: &Policy) -> Vec<Task> {
    let target = policy.target_file_size;
    let due = |fs: &[&LiveFile]| {
        !fs.is_empty() && (fs.len() >= policy.min_files.max(2) || fs.iter().map(|f| f.size).sum::<u64>() >= target)
    };
    if policy.full {
        // Every level-0 file (newer than any compacted file, so it may not be a reference) and
        // every compacted file under the target.
        let rewrite = |f: &LiveFile| f.level() == 0 || f.size < target;
        let small: Vec<&LiveFile> = part.iter().copied().filter(|f| rewrite(f)).collect();
        if small.len() < 2 && small.iter().all(|f| f.level() >= 2) {
            return vec![];
        }
        let refs = policy.references(part.iter().copied().filter(|f| !rewrite(f)), &small);
        return chain(&small, 2, refs, policy);
    }
    let late: Vec<&LiveFile> = part.iter().copied().filter(|f| f.is_late()).collect();
    let l0: Vec<&LiveFile> = part.iter().copied().filter(|f| f.class() == 2).collect();
    // With exact dedup, a level-1 file of at least half the target is done: a merge would only
    // copy it (a hot partition's level-0 tasks cut their output at the target size already), and
    // no compacted file holds a key another holds, so no merge needs it for the order of copies.
    // Under a dedup window one may hold a key's first copy whose later copy a level-1 file kept:
    // every level-1 file goes on to level 2, which comes first in any later merge.
    let done = |f: &LiveFile| policy.dedup_window.is_none() && f.size >= target / 2;
    let l1: Vec<&LiveFile> = part.iter().copied().filter(|f| f.level() == 1 && !done(f)).collect();
    let mut tasks = vec![];
    // Late files wait for no threshold: their later copies are visible until the late task runs.
    if !late.is_empty() {
        // First: a tick cut short never leaves it out. Every compacted file is a reference,
        // whatever a dedup window says (the rows were not probed when they were compacted).
        let refs = part.iter().filter(|f| f.level() > 0).map(|f| f.path.clone()).collect();
        tasks.extend(chain(&late, 1, refs, policy));
    }
    if due(&l0) {
        // Every live late file, whatever a dedup window cuts: one may hold the first copy of an
        // on-time key, which the late task would otherwise drop for the later one.
        let mut refs = policy.references(part.iter().copied().filter(|f| f.level() > 0), &l0);
        refs.extend(late.iter().map(|f| f.path.clone()));
        let mut l0_tasks = chain(&l0, 1, refs, policy);
        for t in &mut l0_tasks {
            t.late_before = policy.late.as_ref().and_then(|l| l.before(&t.inputs));
        }
        tasks.extend(l0_tasks);
    }
    if due(&l1) {
        // Partial level-2 files first: under a dedup window one may hold the first copy of a key
        // whose later copy a level-1 file kept, and a merge keeps its first input's copy.
        let partial = part.iter().copied().filter(|f| f.level() >= 2 && f.size < target / 2);
        let inputs: Vec<&LiveFile> = partial.chain(l1.iter().copied()).collect();
        tasks.extend(chain(&inputs, 2, vec![], policy));
    }
    tasks
}

/// Splits `inputs` (oldest first) into tasks of at most `max_task_bytes`; each task references
/// `refs` and the inputs of the tasks before it.
fn chain(inputs: &[&LiveFile], level: u32, mut refs: Vec<String>, policy: &Policy) -> Vec<Task> {
    let mut tasks = vec![];
    let mut current: Vec<LiveFile> = vec![];
    let mut bytes = 0;
    let chain_from = refs.len();
    let flush = |current: &mut Vec<LiveFile>, refs: &mut Vec<String>, tasks: &mut Vec<Task>| {
        if current.is_empty() {
            return;
        }
        let inputs = std::mem::take(current);
        let task = Task {
            id: task_id(level, &inputs),
            level,
            spec_id: inputs[0].spec_id,
            partition: inputs[0].partition.clone(),
            references: refs.clone(),
            chain_from,
            late_before: None,
            inputs,
            deletes: TaskDeletes::default(),
        };
        refs.extend(task.inputs.iter().map(|f| f.path.clone()));
        tasks.push(task);
    };
    for f in inputs {
        if !current.is_empty() && bytes + f.size > policy.max_task_bytes {
            flush(&mut current, &mut refs, &mut tasks);
            bytes = 0;
        }
        bytes += f.size;
        current.push((*f).clone());
    }
    flush(&mut current, &mut refs, &mut tasks);
    tasks
}

/// The id of task `id` that also applies `deletes`.
pub(super) fn with_deletes(id: &str, deletes: &TaskDeletes) -> String {
    let mut h = Sha256::new();
    h.update(id.as_bytes());
    for d in &deletes.files {
        h.update(b"\n");
        h.update(d.path.as_bytes());
        if let Some(offset) = d.entry().offset {
            h.update(format!("@{offset}").as_bytes());
        }
    }
    hex::encode(&h.finalize()[..10])
}

fn task_id(level: u32, inputs: &[LiveFile]) -> String {
    let mut h = Sha256::new();
    h.update(level.to_le_bytes());
    for f in inputs {
        h.update(f.path.as_bytes());
        h.update(b"\n");
    }
    hex::encode(&h.finalize()[..10])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str, size: u64, seq: i64, part: i64) -> LiveFile {
        let partition = Struct::from_iter([Some(iceberg::spec::Literal::long(part))]);
        LiveFile {
            path: path.into(),
            size,
            rows: size / 10,
            seq,
            spec_id: 0,
            partition,
            manifest: 0,
            first_row_id: None,
            key_bounds: vec![],
        }
    }

    fn policy() -> Policy {
        Policy {
            target_file_size: 1000,
            min_files: 3,
            max_task_bytes: 10_000,
            full: false,
            dedup_window: None,
            late: None,
        }
    }

    #[test]
    fn levels_come_from_names() {
        assert_eq!(level_of("s3://b/t/data/d=1/0a1b-00000-000-ff.parquet"), 0);
        assert_eq!(level_of("s3://b/t/data/d=1/L1-0a1b-00000-000-ff.parquet"), 1);
        assert_eq!(level_of("file:///w/t/data/L2-0a-00000-000-ff.parquet"), 2);
        assert_eq!(level_of("file:///w/t/data/Lx-0a.parquet"), 0);
        let late = "s3://b/t/data/d=1/late-0a1b-00000-000-0123456789abcdef.parquet";
        assert!(is_late_file(late));
        assert_eq!(level_of(late), 0, "an older Floe takes it for a writer's file");
        assert!(!is_late_file("s3://b/t/data/late-notes.parquet"), "not a name Floe writes");
        assert!(!is_late_file("s3://b/t/data/L1-0a1b-00000-000-0123456789abcdef.parquet"));
    }

    fn late(name: &str, size: u64, seq: i64) -> LiveFile {
        file(&format!("late-{name}-00000-000-0123456789abcdef.parquet"), size, seq, 1)
    }

    #[test]
    fn late_files_go_first_to_a_late_task_and_are_references_of_level_zero_tasks_only() {
        let (x, y) = (late("x", 100, 3), late("y", 100, 5));
        let files = vec![file("a", 100, 6, 1), file("b", 100, 7, 1), y.clone(), file("L1-c", 400, 2, 1), x.clone()];
        let split = LateSplit { after_ms: 10, snapshots: vec![(6, 1_000), (7, 2_000)], now_ms: 1_500 };
        let p = Policy { min_files: 2, late: Some(split.clone()), ..policy() };
        let tasks = plan(&files, 0, &p);
        let names = |t: &Task| t.inputs.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        assert_eq!(tasks.len(), 2);
        assert_eq!(names(&tasks[0]), [x.path.clone(), y.path.clone()], "the late task first, oldest first");
        // Under a dedup window that cuts the compacted file for the level-0 task, the late task
        // still references it, and the level-0 task every late file.
        let window = DedupWindow { window_ms: 1, snapshots: vec![(1, 0), (2, 0), (6, 1_000), (7, 2_000)] };
        let windowed = plan(&files, 0, &Policy { dedup_window: Some(window), ..p.clone() });
        assert_eq!(windowed[0].references, ["L1-c"]);
        assert_eq!(windowed[1].references, [x.path.clone(), y.path.clone()]);
        assert_eq!(
            (tasks[0].references.clone(), tasks[0].chain_from, tasks[0].late_before),
            (vec!["L1-c".into()], 1, None)
        );
        assert_eq!(names(&tasks[1]), ["a", "b"]);
        assert_eq!(tasks[1].references, ["L1-c".to_string(), x.path.clone(), y.path.clone()]);
        assert_eq!(tasks[1].chain_from, 3, "no chain: every reference is an older file");
        assert_eq!(tasks[1].late_before, Some(1_490), "its newest input's snapshot, never ahead of the clock");
        let gone = Policy { late: Some(LateSplit { snapshots: vec![(6, 1_000)], ..split }), ..p.clone() };
        assert_eq!(plan(&files, 0, &gone)[1].late_before, None, "that snapshot is not kept: nothing is late");
        assert!(plan(&files[..2], 0, &Policy { late: None, ..p.clone() })[0].late_before.is_none());
        let d = debt(&files, 0, &p);
        assert_eq!((d[0].1.levels, d[0].1.late), ([2, 1, 0], 2));

        // A hot partition's chain: its references past `chain_from` are the earlier tasks' inputs.
        let hot: Vec<LiveFile> = (0..4).map(|i| file(&format!("f{i}"), 400, 10 + i, 1)).chain([x.clone()]).collect();
        let chained = plan(&hot, 0, &Policy { max_task_bytes: 800, ..p.clone() });
        assert_eq!(chained.len(), 3, "the late task, then a chain of two");
        assert_eq!(chained[2].references, [x.path.clone(), "f0".into(), "f1".into()]);
        assert_eq!(chained[2].chain_from, 1);

        // Never merged into level 2; a full run takes them after compacted files, before level 0.
        let l1 = vec![file("L1-a", 300, 1, 1), file("L1-b", 300, 2, 1), late("z", 100, 3)];
        let merge = plan(&l1, 0, &p);
        assert_eq!(merge.len(), 2);
        assert_eq!(names(&merge[0]), [late("z", 100, 3).path], "one late file is due: its copies are visible");
        assert_eq!(names(&merge[1]), ["L1-a", "L1-b"]);
        let full = plan(&files, 0, &Policy { full: true, ..p });
        assert_eq!(names(&full[0]), ["L1-c".to_string(), x.path, y.path, "a".into(), "b".into()]);
    }

    #[test]
    fn level_zero_merges_once_enough_files_and_compacted_files_are_references() {
        let files = vec![file("a", 100, 3, 1), file("b", 100, 1, 1), file("L1-c", 400, 2, 1), file("d", 100, 4, 2)];
        assert!(plan(&files, 0, &policy()).is_empty(), "two level-0 files are below the threshold");
        let mut more = files.clone();
        more.push(file("e", 100, 5, 1));
        let tasks = plan(&more, 0, &policy());
        assert_eq!(tasks.len(), 1);
        let t = &tasks[0];
        assert_eq!(t.level, 1);
        let inputs: Vec<&str> = t.inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(inputs, ["b", "a", "e"], "oldest first");
        assert_eq!(t.references, ["L1-c"]);
        let other_spec: Vec<LiveFile> = more.iter().cloned().map(|f| LiveFile { spec_id: 1, ..f }).collect();
        assert!(plan(&other_spec, 0, &policy()).is_empty(), "files of an older spec are left alone");
    }

    #[test]
    fn a_hot_partition_splits_into_a_chain_of_tasks() {
        let files: Vec<LiveFile> = (0..10).map(|i| file(&format!("f{i}"), 400, i, 1)).collect();
        let p = Policy { max_task_bytes: 1000, ..policy() };
        let tasks = plan(&files, 0, &p);
        assert_eq!(tasks.len(), 5, "two files of 400 per task of at most 1000 bytes");
        assert!(tasks[0].references.is_empty());
        assert_eq!(tasks[2].references, ["f0", "f1", "f2", "f3"], "earlier tasks' inputs win");
        let ids: std::collections::HashSet<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids.len(), 5);
        assert_eq!(plan(&files, 0, &p), tasks, "deterministic");
    }

    #[test]
    fn level_one_merges_with_partial_level_two_files() {
        let files = vec![
            file("L1-a", 300, 1, 1),
            file("L1-b", 300, 2, 1),
            file("L1-c", 300, 3, 1),
            file("L2-full", 900, 0, 1),
            file("L2-part", 200, 0, 1),
        ];
        let tasks = plan(&files, 0, &policy());
        assert_eq!(tasks.len(), 1);
        let inputs: Vec<&str> = tasks[0].inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(inputs, ["L2-part", "L1-a", "L1-b", "L1-c"], "the partial file, holding older rows, first");
        assert_eq!(tasks[0].level, 2);
    }

    /// A hot partition's level-0 tasks write level-1 files at the target size: with exact dedup
    /// those are done, and only the small ones go on to level 2; under a dedup window all do.
    #[test]
    fn level_one_files_of_half_the_target_stay_unless_a_dedup_window_orders_copies() {
        let files = vec![
            file("L1-full", 1000, 1, 1),
            file("L1-half", 500, 1, 1),
            file("L1-a", 300, 2, 1),
            file("L1-b", 300, 3, 1),
            file("L1-c", 499, 3, 1),
            file("L2-part", 200, 0, 1),
        ];
        let tasks = plan(&files, 0, &policy());
        let inputs: Vec<&str> = tasks[0].inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(inputs, ["L2-part", "L1-a", "L1-b", "L1-c"]);
        assert!(plan(&files[..2], 0, &policy()).is_empty(), "nothing left to merge");
        let window = DedupWindow { window_ms: 100, snapshots: vec![] };
        let tasks = plan(&files, 0, &Policy { dedup_window: Some(window), ..policy() });
        let inputs: Vec<&str> = tasks[0].inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(inputs, ["L2-part", "L1-full", "L1-half", "L1-a", "L1-b", "L1-c"]);
    }

    #[test]
    fn full_merges_every_small_file_and_stops_when_nothing_is_left() {
        let files = vec![file("a", 100, 1, 1), file("L1-b", 300, 2, 1), file("L2-big", 1500, 0, 1)];
        let tasks = plan(&files, 0, &Policy { full: true, ..policy() });
        assert_eq!(tasks.len(), 1);
        let inputs: Vec<&str> = tasks[0].inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            inputs,
            ["L1-b", "a"],
            "a compacted file's keys win over a level-0 file's, whatever the sequence numbers"
        );
        assert_eq!(tasks[0].references, ["L2-big"]);
        let done = vec![file("L2-x", 400, 1, 1), file("L2-big", 1500, 0, 1)];
        assert!(plan(&done, 0, &Policy { full: true, ..policy() }).is_empty());
        let d = debt(&files, 0, &policy());
        assert_eq!(d[0].1.levels, [1, 1, 1]);
        assert_eq!(d[0].1.small, 2);
    }

    /// Under a dedup window a level-2 file may hold a key's first copy and a level-1 file,
    /// planned from the same snapshot (the same sequence number), its later copy: a full run
    /// takes the level-2 file first, as a level-1 merge does, so both keep the first copy.
    #[test]
    fn every_run_takes_higher_levels_first_whatever_the_sequence_numbers() {
        let files =
            vec![file("L1-t", 300, 11, 1), file("L2-u", 400, 11, 1), file("L1-s", 300, 9, 1), file("a", 100, 12, 1)];
        let full = plan(&files, 0, &Policy { full: true, ..policy() });
        let inputs: Vec<&str> = full[0].inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(inputs, ["L2-u", "L1-s", "L1-t", "a"]);
        let l1 = plan(&files[..3], 0, &Policy { min_files: 2, ..policy() });
        let inputs: Vec<&str> = l1[0].inputs.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(inputs, ["L2-u", "L1-s", "L1-t"], "the level-1 merge: the same order");
    }

    #[test]
    fn partitions_come_most_urgent_first_and_share_whole() {
        // Partition 1's oldest input is newer than partition 2's and 3's.
        let mut files: Vec<LiveFile> = (0..3).map(|i| file(&format!("p1-{i}"), 100, 10 + i, 1)).collect();
        files.extend((0..3).map(|i| file(&format!("p2-{i}"), 100, 5 + i, 2)));
        files.extend((0..3).map(|i| file(&format!("p3-{i}"), 100, 5 + i, 3)));
        files.extend((0..10).map(|i| file(&format!("p4-{i}"), 400, 20 + i, 4)));
        let p = Policy { max_task_bytes: 1000, ..policy() };
        let tasks = plan(&files, 0, &p);
        let firsts: Vec<&str> = tasks.iter().map(|t| t.inputs[0].path.as_str()).collect();
        assert_eq!(
            firsts,
            ["p2-0", "p3-0", "p1-0", "p4-0", "p4-2", "p4-4", "p4-6", "p4-8"],
            "oldest input first, ties in partition order, a chain kept together and in order"
        );
        let shares = shares(&tasks, 2);
        assert_eq!(shares, [0..2, 2..3, 3..5, 5..7, 7..8], "two partitions fit a share of two; a chain of five is cut");
        assert_eq!(super::shares(&tasks, 100), vec![0..8usize], "all in one share");
        assert_eq!(super::shares(&tasks, 4), [0..3, 3..7, 7..8], "no partition joins a cut chain's last share");
        assert!(super::shares(&[], 3).is_empty());
        // Partition 2 compacted: its level-1 file was planned from the latest snapshot (30), so
        // it now comes after the partitions left waiting.
        let mut after: Vec<LiveFile> = files.iter().filter(|f| !f.path.starts_with("p2")).cloned().collect();
        after.extend((0..3).map(|i| file(&format!("L1-p2-{i}"), 300, 30, 2)));
        after.extend((0..3).map(|i| file(&format!("p2-new{i}"), 100, 31 + i, 2)));
        let next = plan(&after, 0, &p);
        let firsts: Vec<&str> = next.iter().map(|t| t.inputs[0].path.as_str()).take(3).collect();
        assert_eq!(firsts, ["p3-0", "p1-0", "p4-0"]);
        // Partition 1 compacted from snapshot 8, which committed partition 2's oldest file: its
        // level-1 files (due for a merge) were planned once that file was committed, so they
        // come after it.
        let mut tie: Vec<LiveFile> = (0..3).map(|i| file(&format!("L1-p1-{i}"), 300, 8, 1)).collect();
        tie.extend((0..3).map(|i| file(&format!("p1-new{i}"), 100, 31 + i, 1)));
        tie.extend((0..3).map(|i| file(&format!("p2-{i}"), 100, 8 + i, 2)));
        let firsts: Vec<String> = plan(&tie, 0, &p).iter().map(|t| t.inputs[0].path.clone()).collect();
        assert_eq!(firsts, ["p2-0", "p1-new0", "L1-p1-0"], "a compacted file after a level-0 file of its number");
    }

    #[test]
    fn a_dedup_window_cuts_before_the_oldest_level_zero_file_and_never_past_the_window() {
        // Snapshots: sequence number, commit time.
        let w = DedupWindow { window_ms: 100, snapshots: vec![(1, 0), (2, 50), (3, 120), (4, 300), (5, 310)] };
        assert_eq!(w.cut(4), Some(3), "committed before 200: snapshots 1 to 3");
        assert_eq!(w.cut(3), Some(1), "committed before 20: snapshot 1");
        assert_eq!(w.cut(1), None, "nothing committed before -100");
        assert_eq!(w.cut(9), None, "the level-0 file's snapshot is not kept: no cut");
        // A clock that ran backwards: snapshot 3 stamped before snapshot 2.
        let skewed = DedupWindow { window_ms: 100, snapshots: vec![(1, 0), (2, 250), (3, 150), (4, 300)] };
        assert_eq!(skewed.cut(4), Some(1), "never past snapshot 2, committed within the window");
        let mut p = policy();
        p.dedup_window = Some(w);
        let (old, young) = (file("L1-old", 500, 3, 1), file("L1-young", 500, 4, 1));
        let l0 = file("f", 100, 5, 1);
        assert_eq!(p.references([&old, &young].into_iter(), &[&l0]), ["L1-young"]);
        assert_eq!(p.references([&old, &young].into_iter(), &[]), ["L1-old", "L1-young"], "no level-0 input: all");
    }
}
