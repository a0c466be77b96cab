//! Manifest merging, as Iceberg Java's `ManifestMergeManager` does it, driven by the table's
//! `commit.manifest-merge.enabled`, `commit.manifest.min-count-to-merge` (100) and
//! `commit.manifest.target-size-bytes` (8 MiB).
//!
//! A new snapshot's data manifests, grouped by partition spec and in order (the new manifests
//! first), are packed into consecutive bins of at most the target size, filled from the end so
//! that the under-filled bin is the first (a manifest bigger than the target sits alone). A bin of
//! several manifests is merged into one, except the bin holding the snapshot's first manifest
//! while it has fewer than the minimum count: so new manifests pile up until there are enough,
//! then merge, and no merged manifest grows much past the target. That bounds both what a merge
//! holds in memory (one bin's entries) and what any later reader of a manifest parses at once.
//! Delete manifests are never merged. Entries of earlier snapshots become `EXISTING`, and their
//! `DELETED` entries are dropped, as the spec allows.
//!
//! Two departures from Java: a snapshot merges at most [`MERGE_BUDGET_TARGETS`] targets' worth
//! of bins besides its first (a table that arrives with thousands of small manifests is merged a
//! few bins per commit, not parsed whole in one), and a new manifest's size is estimated from its
//! entries before it is written (Java writes it first), so bins may end a header's size off.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;

use iceberg::spec::{ManifestContentType, ManifestEntry, ManifestFile, ManifestStatus, TableMetadata};

use super::manifests::Manifests;
use crate::Result;

/// Bytes per entry assumed for a manifest not written yet, when the list gives no measure.
const ENTRY_BYTES: i64 = 800;

/// Manifest bytes one snapshot merges at most, besides its first bin, in merge targets: a table
/// that arrives with thousands of small manifests (another engine's fast appends, merging just
/// turned on) is merged a few bins per commit rather than parsed whole in one.
const MERGE_BUDGET_TARGETS: i64 = 2;

/// When and what to merge.
pub(super) struct MergePolicy {
    enabled: bool,
    min_count: usize,
    target_bytes: i64,
}

/// Iceberg's property: merge manifests once a snapshot would have more than this many.
pub const PROP_MIN_COUNT_TO_MERGE: &str = "commit.manifest.min-count-to-merge";
/// Iceberg's property: manifests at least this large are not merged.
pub const PROP_MANIFEST_TARGET_SIZE: &str = "commit.manifest.target-size-bytes";
/// Iceberg's property: whether manifests are merged at all.
pub const PROP_MERGE_ENABLED: &str = "commit.manifest-merge.enabled";

/// One manifest of the new snapshot: kept as it is, or to be written with these entries.
pub(super) enum Slot {
    Kept(ManifestFile),
    New { spec_id: i32, entries: Vec<ManifestEntry> },
}

impl Slot {
    pub(super) fn spec_id(&self) -> i32 {
        match self {
            Slot::Kept(mf) => mf.partition_spec_id,
            Slot::New { spec_id, .. } => *spec_id,
        }
    }

    /// Whether the slot goes into the new snapshot. A manifest written by this snapshot always
    /// does; one carried from the parent only while it lists a live file: an earlier rewrite
    /// that removed all of its files left it with nothing but `DELETED` entries, which no reader
    /// of a later snapshot needs (Iceberg Java's `MergingSnapshotProducer` drops it the same
    /// way). A count the list leaves out counts as live.
    pub(super) fn has_live_files(&self) -> bool {
        match self {
            Slot::Kept(mf) => lists_live_files(mf),
            Slot::New { .. } => true,
        }
    }
}

/// Whether a manifest's list entry counts a live (added or existing) file; a count the list
/// leaves out counts as live. The next snapshot drops a manifest of the list without one.
pub(super) fn lists_live_files(mf: &ManifestFile) -> bool {
    mf.added_files_count.is_none_or(|n| n > 0) || mf.existing_files_count.is_none_or(|n| n > 0)
}

/// Slots (indices into a snapshot's slots) that end up as one manifest, or stay as they are.
#[derive(Debug, PartialEq)]
pub(super) struct Bin {
    pub(super) members: Vec<usize>,
    pub(super) merge: bool,
}

impl MergePolicy {
    pub(super) fn of(meta: &TableMetadata) -> Self {
        let p = meta.properties();
        MergePolicy {
            // As Java's `Boolean.parseBoolean`: anything but "true" (any case) turns it off.
            enabled: p.get(PROP_MERGE_ENABLED).is_none_or(|v| v.eq_ignore_ascii_case("true")),
            min_count: p.get(PROP_MIN_COUNT_TO_MERGE).and_then(|v| v.parse().ok()).unwrap_or(100),
            target_bytes: p.get(PROP_MANIFEST_TARGET_SIZE).and_then(|v| v.parse().ok()).unwrap_or(8 << 20),
        }
    }

    /// The bins of a snapshot's slots, given each one's weight; slot 0 is the snapshot's first
    /// manifest.
    pub(super) fn bins(&self, slots: &[Weight]) -> Vec<Bin> {
        // Data manifests by spec, newest spec first (as Iceberg Java orders them); delete
        // manifests after, never merged.
        let mut groups: BTreeMap<(bool, std::cmp::Reverse<i32>), Vec<usize>> = BTreeMap::new();
        for (i, w) in slots.iter().enumerate() {
            groups.entry((!w.data, std::cmp::Reverse(w.spec_id))).or_default().push(i);
        }
        let mut bins = vec![];
        for ((deletes, _), members) in groups {
            if deletes || !self.enabled {
                bins.extend(members.into_iter().map(|i| Bin { members: vec![i], merge: false }));
                continue;
            }
            let weights: Vec<i64> = members.iter().map(|i| slots[*i].bytes).collect();
            let mut budget = MERGE_BUDGET_TARGETS * self.target_bytes;
            for range in pack_end(&weights, self.target_bytes) {
                let weight: i64 = weights[range.clone()].iter().sum();
                let members = members[range].to_vec();
                let first = members.contains(&0);
                let waiting = first && members.len() < self.min_count.max(1);
                // Past the budget, older bins wait for later commits (the first bin never does).
                let affordable = first || weight <= budget;
                let merge = members.len() > 1 && !waiting && affordable;
                if merge && !first {
                    budget -= weight;
                }
                bins.push(Bin { merge, members });
            }
        }
        bins
    }

    /// The manifests of `list` that the next snapshot will merge first: those in the bin of
    /// its first manifest (kept parsed by a warm committer).
    pub(super) fn next_inputs(&self, list: &[ManifestFile]) -> HashSet<String> {
        if !self.enabled {
            return HashSet::new();
        }
        // The next snapshot drops the manifests without a live file before it packs its bins.
        let list: Vec<&ManifestFile> = list.iter().filter(|m| lists_live_files(m)).collect();
        let slots: Vec<Weight> = list.iter().map(|m| weight_of(m)).collect();
        let Some(first) = self.bins(&slots).into_iter().find(|b| b.members.contains(&0)) else { return HashSet::new() };
        // A manifest that fills a bin alone is merged with nothing: not kept for a merge.
        if first.members.len() == 1 && slots[first.members[0]].bytes >= self.target_bytes {
            return HashSet::new();
        }
        first.members.iter().map(|i| list[*i].manifest_path.clone()).collect()
    }

    /// Merges `slots` as `bins` say. The kept manifests of merged bins must have been read.
    pub(super) fn apply(
        &self,
        manifests: &Manifests,
        slots: Vec<Slot>,
        bins: &[Bin],
        snapshot_id: i64,
    ) -> Result<Vec<Slot>> {
        let mut slots: Vec<Option<Slot>> = slots.into_iter().map(Some).collect();
        let mut out = vec![];
        for bin in bins {
            let mut taken = bin.members.iter().map(|i| slots[*i].take().expect("a slot is in one bin"));
            if !bin.merge {
                out.extend(taken);
                continue;
            }
            if let Some(slot) = merge_bin(&mut taken, manifests, snapshot_id)? {
                out.push(slot);
            }
        }
        Ok(out)
    }
}

/// One merged slot of a bin's slots (`None` if they held only earlier snapshots' deletions).
fn merge_bin(taken: &mut dyn Iterator<Item = Slot>, manifests: &Manifests, snapshot_id: i64) -> Result<Option<Slot>> {
    let mut spec = None;
    let mut merged: Vec<ManifestEntry> = vec![];
    for slot in taken {
        spec = Some(slot.spec_id());
        let entries: Vec<ManifestEntry> = match slot {
            Slot::Kept(mf) => manifests.entries(&mf)?.as_ref().clone(),
            Slot::New { entries, .. } => entries,
        };
        for mut e in entries {
            let ours = e.snapshot_id == Some(snapshot_id);
            match e.status {
                ManifestStatus::Deleted if !ours => continue,
                ManifestStatus::Added if !ours => e.status = ManifestStatus::Existing,
                _ => {}
            }
            merged.push(e);
        }
    }
    Ok(match spec {
        Some(spec_id) if !merged.is_empty() => Some(Slot::New { spec_id, entries: merged }),
        _ => None,
    })
}

/// What the merge needs of a manifest of the new snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Weight {
    /// Its partition spec.
    pub(super) spec_id: i32,
    /// A data manifest (delete manifests are never merged).
    pub(super) data: bool,
    /// Its size in bytes (estimated for one not written yet).
    pub(super) bytes: i64,
}

/// A kept manifest's spec, kind and size.
fn weight_of(mf: &ManifestFile) -> Weight {
    Weight { spec_id: mf.partition_spec_id, data: mf.content == ManifestContentType::Data, bytes: mf.manifest_length }
}

/// Each slot's spec, kind and size: a manifest not written yet is its entries times the bytes per
/// entry of the manifests in `list`.
pub(super) fn weights(slots: &[Slot], list: &[ManifestFile]) -> Vec<Weight> {
    let entries: i64 = list
        .iter()
        .map(|m| {
            i64::from(
                m.added_files_count.unwrap_or(0)
                    + m.existing_files_count.unwrap_or(0)
                    + m.deleted_files_count.unwrap_or(0),
            )
        })
        .sum();
    let bytes: i64 = list.iter().map(|m| m.manifest_length).sum();
    let per_entry = if entries > 0 { (bytes / entries).max(1) } else { ENTRY_BYTES };
    slots
        .iter()
        .map(|s| match s {
            Slot::Kept(mf) => weight_of(mf),
            Slot::New { spec_id, entries } => Weight {
                spec_id: *spec_id,
                data: entries.iter().all(|e| e.content_type() == iceberg::spec::DataContentType::Data),
                bytes: entries.len() as i64 * per_entry,
            },
        })
        .collect()
}

/// Consecutive bins of `weights` of at most `target` each (a heavier item alone), filled from
/// the end, so that only the first may be under-filled.
fn pack_end(weights: &[i64], target: i64) -> Vec<Range<usize>> {
    let mut bins = vec![];
    let (mut end, mut sum) = (weights.len(), 0i64);
    for i in (0..weights.len()).rev() {
        if end > i + 1 && sum.saturating_add(weights[i]) > target {
            bins.push(i + 1..end);
            (end, sum) = (i + 1, 0);
        }
        sum = sum.saturating_add(weights[i]);
    }
    if end > 0 {
        bins.push(0..end);
    }
    bins.reverse();
    bins
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(min_count: usize, target_bytes: i64) -> MergePolicy {
        MergePolicy { enabled: true, min_count, target_bytes }
    }

    #[test]
    fn bins_fill_from_the_end_and_a_heavy_manifest_sits_alone() {
        assert_eq!(pack_end(&[3, 3, 3, 3, 3], 10), [0..2, 2..5]);
        assert_eq!(pack_end(&[1, 20, 4, 4, 4], 10), [0..1, 1..2, 2..3, 3..5]);
        assert_eq!(pack_end(&[], 10), Vec::<Range<usize>>::new());
        assert_eq!(pack_end(&[50], 10), vec![Range { start: 0, end: 1 }]);
        assert_eq!(pack_end(&[50, 3, 3], 10), [0..1, 1..3], "a heavy first manifest alone");
        assert_eq!(pack_end(&[5, 5], 10), vec![Range { start: 0, end: 2 }], "an exact fit");
        assert_eq!(pack_end(&[0, 0, 10], 10), vec![Range { start: 0, end: 3 }], "empty manifests weigh nothing");
    }

    #[test]
    fn a_snapshot_merges_at_most_its_budget_besides_the_first_bin() {
        // Twenty full bins of two manifests behind a new one: two targets' worth merge now.
        let w = |bytes| Weight { spec_id: 0, data: true, bytes };
        let slots: Vec<Weight> = std::iter::once(w(1)).chain((0..40).map(|_| w(5))).collect();
        let bins = policy(100, 10).bins(&slots);
        assert_eq!(bins.iter().filter(|b| b.merge).count(), 2, "{bins:?}");
        assert_eq!(bins.iter().map(|b| b.members.len()).sum::<usize>(), 41, "every slot in a bin");
    }

    #[test]
    fn only_a_first_bin_that_can_merge_is_kept_for_the_next_merge() {
        let mf = |path: &str, len: i64| ManifestFile {
            manifest_path: path.into(),
            manifest_length: len,
            partition_spec_id: 0,
            content: ManifestContentType::Data,
            sequence_number: 1,
            min_sequence_number: 1,
            added_snapshot_id: 1,
            added_files_count: Some(1),
            existing_files_count: Some(0),
            deleted_files_count: Some(0),
            added_rows_count: Some(1),
            existing_rows_count: Some(0),
            deleted_rows_count: Some(0),
            partitions: None,
            key_metadata: None,
            first_row_id: None,
        };
        let p = policy(100, 10);
        let kept = p.next_inputs(&[mf("a", 3), mf("b", 3), mf("c", 9)]);
        assert_eq!(kept, HashSet::from(["a".to_string(), "b".to_string()]));
        assert!(p.next_inputs(&[mf("big", 80), mf("c", 9)]).is_empty(), "a big new manifest is not kept");
        assert!(MergePolicy { enabled: false, ..policy(100, 10) }.next_inputs(&[mf("a", 3)]).is_empty());
        // A manifest a rewrite emptied is dropped by the next snapshot, not merged: the bin
        // forms without it.
        let emptied = ManifestFile { added_files_count: Some(0), deleted_files_count: Some(4), ..mf("gone", 6) };
        let kept = p.next_inputs(&[mf("a", 3), emptied, mf("b", 3), mf("c", 9)]);
        assert_eq!(kept, HashSet::from(["a".to_string(), "b".to_string()]));
    }

    #[test]
    fn the_first_bin_waits_for_the_minimum_count_and_the_others_merge() {
        let data = |bytes: i64| Weight { spec_id: 0, data: true, bytes };
        // new, then two small, then three that fill a bin, then a big one
        let slots = [data(1), data(2), data(2), data(3), data(3), data(3), data(50)];
        let bins = policy(4, 10).bins(&slots);
        let got: Vec<(Vec<usize>, bool)> = bins.into_iter().map(|b| (b.members, b.merge)).collect();
        assert_eq!(got, [(vec![0, 1, 2], false), (vec![3, 4, 5], true), (vec![6], false)]);
        let bins = policy(3, 10).bins(&slots);
        assert!(bins[0].merge, "enough in the first bin");
        // specs apart, delete manifests never merged
        let w = |spec_id, data| Weight { spec_id, data, bytes: 1 };
        let slots = [w(1, true), w(0, true), w(1, true), w(0, false), w(0, false)];
        let got: Vec<(Vec<usize>, bool)> =
            policy(2, 10).bins(&slots).into_iter().map(|b| (b.members, b.merge)).collect();
        assert_eq!(got, [(vec![0, 2], true), (vec![1], false), (vec![3], false), (vec![4], false)]);
        let off = MergePolicy { enabled: false, min_count: 1, target_bytes: 10 };
        assert!(off.bins(&slots).iter().all(|b| !b.merge && b.members.len() == 1));
    }
}
