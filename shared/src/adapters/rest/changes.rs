//! A planned commit as an Iceberg REST `updateTable` body: the committer plans the whole next
//! metadata over the base it read, and this module states the difference as requirements (what
//! must still hold: the same table, the same `main` snapshot, and for a schema, spec or sort
//! order change the same current one) and updates (what to add, set and remove), in the order
//! the catalog applies them.

use std::collections::{BTreeMap, HashSet};

use iceberg::spec::{MAIN_BRANCH, TableMetadata};
use iceberg::{TableRequirement, TableUpdate};

use crate::table::maintain::refs;

/// Requirements and updates that turn `base` into `next`.
pub(crate) fn between(base: &TableMetadata, next: &TableMetadata) -> (Vec<TableRequirement>, Vec<TableUpdate>) {
    let mut requirements = vec![
        TableRequirement::UuidMatch { uuid: base.uuid() },
        TableRequirement::RefSnapshotIdMatch {
            r#ref: MAIN_BRANCH.to_string(),
            snapshot_id: base.current_snapshot_id(),
        },
    ];
    let mut updates = vec![];
    ref_requirements(base, next, &mut requirements);
    schema_changes(base, next, &mut requirements, &mut updates);
    spec_changes(base, next, &mut requirements, &mut updates);
    sort_order_changes(base, next, &mut requirements, &mut updates);
    property_changes(base, next, &mut updates);
    snapshot_changes(base, next, &mut updates);
    statistics_changes(base, next, &mut updates);
    (requirements, updates)
}

/// A commit that expires snapshots or refs decided what to keep from `base`'s refs: each must
/// still point where it did, or the catalog could drop a branch or tag another engine moved
/// onto an expiring snapshot meanwhile (and the committer delete its files). A ref created
/// meanwhile cannot be asserted by name: that window stays (docs/ARCHITECTURE.md).
fn ref_requirements(base: &TableMetadata, next: &TableMetadata, requirements: &mut Vec<TableRequirement>) {
    let expires = base.snapshots().any(|s| next.snapshot_by_id(s.snapshot_id()).is_none());
    let Some(was) = refs(base) else { return };
    let dropped = refs(next).is_none_or(|is| was.keys().any(|n| !is.contains_key(n)));
    if !expires && !dropped {
        return;
    }
    for (name, r) in was.into_iter().filter(|(n, _)| n != MAIN_BRANCH) {
        requirements.push(TableRequirement::RefSnapshotIdMatch { r#ref: name, snapshot_id: Some(r.snapshot_id) });
    }
}

fn schema_changes(
    base: &TableMetadata,
    next: &TableMetadata,
    requirements: &mut Vec<TableRequirement>,
    updates: &mut Vec<TableUpdate>,
) {
    let known: HashSet<i32> = base.schemas_iter().map(|s| s.schema_id()).collect();
    let mut added: Vec<_> = next.schemas_iter().filter(|s| !known.contains(&s.schema_id())).collect();
    added.sort_by_key(|s| s.schema_id());
    if added.is_empty() && base.current_schema_id() == next.current_schema_id() {
        return;
    }
    requirements.push(TableRequirement::CurrentSchemaIdMatch { current_schema_id: base.current_schema_id() });
    requirements.push(TableRequirement::LastAssignedFieldIdMatch { last_assigned_field_id: base.last_column_id() });
    updates.extend(added.iter().map(|s| TableUpdate::AddSchema { schema: s.as_ref().clone() }));
    if base.current_schema_id() != next.current_schema_id() {
        // -1: "the schema last added" (the catalog may number an added schema itself).
        let last_added = added.last().is_some_and(|s| s.schema_id() == next.current_schema_id());
        updates
            .push(TableUpdate::SetCurrentSchema { schema_id: if last_added { -1 } else { next.current_schema_id() } });
    }
}

fn spec_changes(
    base: &TableMetadata,
    next: &TableMetadata,
    requirements: &mut Vec<TableRequirement>,
    updates: &mut Vec<TableUpdate>,
) {
    let known: HashSet<i32> = base.partition_specs_iter().map(|s| s.spec_id()).collect();
    let mut added: Vec<_> = next.partition_specs_iter().filter(|s| !known.contains(&s.spec_id())).collect();
    added.sort_by_key(|s| s.spec_id());
    if added.is_empty() && base.default_partition_spec_id() == next.default_partition_spec_id() {
        return;
    }
    requirements.push(TableRequirement::DefaultSpecIdMatch { default_spec_id: base.default_partition_spec_id() });
    if !added.is_empty() {
        requirements.push(TableRequirement::LastAssignedPartitionIdMatch {
            last_assigned_partition_id: base.last_partition_id(),
        });
    }
    updates.extend(added.iter().map(|s| TableUpdate::AddSpec { spec: s.as_ref().clone().into_unbound() }));
    if base.default_partition_spec_id() != next.default_partition_spec_id() {
        let last_added = added.last().is_some_and(|s| s.spec_id() == next.default_partition_spec_id());
        updates.push(TableUpdate::SetDefaultSpec {
            spec_id: if last_added { -1 } else { next.default_partition_spec_id() },
        });
    }
}

fn sort_order_changes(
    base: &TableMetadata,
    next: &TableMetadata,
    requirements: &mut Vec<TableRequirement>,
    updates: &mut Vec<TableUpdate>,
) {
    let known: HashSet<i64> = base.sort_orders_iter().map(|s| s.order_id).collect();
    let mut added: Vec<_> = next.sort_orders_iter().filter(|s| !known.contains(&s.order_id)).collect();
    added.sort_by_key(|s| s.order_id);
    if added.is_empty() && base.default_sort_order_id() == next.default_sort_order_id() {
        return;
    }
    requirements
        .push(TableRequirement::DefaultSortOrderIdMatch { default_sort_order_id: base.default_sort_order_id() });
    updates.extend(added.iter().map(|s| TableUpdate::AddSortOrder { sort_order: s.as_ref().clone() }));
    if base.default_sort_order_id() != next.default_sort_order_id() {
        let last_added = added.last().is_some_and(|s| s.order_id == next.default_sort_order_id());
        updates.push(TableUpdate::SetDefaultSortOrder {
            sort_order_id: if last_added { -1 } else { next.default_sort_order_id() },
        });
    }
}

fn property_changes(base: &TableMetadata, next: &TableMetadata, updates: &mut Vec<TableUpdate>) {
    let set: std::collections::HashMap<String, String> = next
        .properties()
        .iter()
        .filter(|(k, v)| base.properties().get(*k) != Some(*v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut removed: Vec<String> =
        base.properties().keys().filter(|k| !next.properties().contains_key(*k)).cloned().collect();
    removed.sort();
    if !set.is_empty() {
        updates.push(TableUpdate::SetProperties { updates: set });
    }
    if !removed.is_empty() {
        updates.push(TableUpdate::RemoveProperties { removals: removed });
    }
}

/// New snapshots in commit order, then `main` moved to the new head, then expired snapshots
/// removed (after the move: the old head may be among them).
fn snapshot_changes(base: &TableMetadata, next: &TableMetadata, updates: &mut Vec<TableUpdate>) {
    let before: HashSet<i64> = base.snapshots().map(|s| s.snapshot_id()).collect();
    let after: HashSet<i64> = next.snapshots().map(|s| s.snapshot_id()).collect();
    let mut added: Vec<_> = next.snapshots().filter(|s| !before.contains(&s.snapshot_id())).collect();
    added.sort_by_key(|s| s.sequence_number());
    updates.extend(added.iter().map(|s| TableUpdate::AddSnapshot { snapshot: s.as_ref().clone() }));
    if let Some(head) = next.current_snapshot()
        && base.current_snapshot_id() != Some(head.snapshot_id())
    {
        updates.push(TableUpdate::SetSnapshotRef {
            ref_name: MAIN_BRANCH.to_string(),
            // The retention `main` has (the planner carries it over): a ref is set whole.
            reference: iceberg::spec::SnapshotReference::new(
                head.snapshot_id(),
                crate::table::maintain::main_retention(next),
            ),
        });
    }
    let mut removed: Vec<i64> = before.difference(&after).copied().collect();
    removed.sort();
    // Refs the commit expires, before their snapshots (`remove-snapshots` would drop a ref on
    // one of them silently).
    if let (Some(was), Some(is)) = (refs(base), refs(next)) {
        for name in was.keys().filter(|n| !is.contains_key(*n) && *n != MAIN_BRANCH) {
            updates.push(TableUpdate::RemoveSnapshotRef { ref_name: name.clone() });
        }
    }
    if !removed.is_empty() {
        updates.push(TableUpdate::RemoveSnapshots { snapshot_ids: removed });
    }
}

fn statistics_changes(base: &TableMetadata, next: &TableMetadata, updates: &mut Vec<TableUpdate>) {
    let before: BTreeMap<i64, _> = base.statistics_iter().map(|s| (s.snapshot_id, s)).collect();
    let after: BTreeMap<i64, _> = next.statistics_iter().map(|s| (s.snapshot_id, s)).collect();
    for (id, file) in &after {
        if before.get(id) != Some(file) {
            updates.push(TableUpdate::SetStatistics { statistics: (*file).clone() });
        }
    }
    // Statistics of a removed snapshot go with it (`remove-snapshots` drops them; removing
    // them again would be refused).
    let kept: HashSet<i64> = next.snapshots().map(|s| s.snapshot_id()).collect();
    for id in before.keys().filter(|id| !after.contains_key(id) && kept.contains(id)) {
        updates.push(TableUpdate::RemoveStatistics { snapshot_id: *id });
    }
}

/// Whether `now` (read back from the catalog) holds the commit of `next` over `base`. A commit
/// that adds a snapshot landed if the table holds that snapshot (its id is random and added
/// with the `main` move in one update; later commits may have moved `main` on since). One that
/// adds none landed if `main` and the snapshots are `next`'s.
pub(crate) fn landed(base: &TableMetadata, next: &TableMetadata, now: &TableMetadata) -> bool {
    if now.uuid() != next.uuid() {
        return false;
    }
    match next.current_snapshot_id() {
        Some(head) if next.current_snapshot_id() != base.current_snapshot_id() => now.snapshot_by_id(head).is_some(),
        _ => {
            let ids = |m: &TableMetadata| m.snapshots().map(|s| s.snapshot_id()).collect::<HashSet<_>>();
            now.current_snapshot_id() == next.current_snapshot_id() && ids(now) == ids(next)
        }
    }
}

/// Whether the table moved since `base` was read: another commit landed (a new sequence number,
/// on any branch), or its format or row ids changed.
pub(crate) fn moved(base: &TableMetadata, now: &TableMetadata) -> bool {
    now.uuid() != base.uuid()
        || now.last_sequence_number() != base.last_sequence_number()
        || now.current_snapshot_id() != base.current_snapshot_id()
        || now.format_version() != base.format_version()
        || now.next_row_id() != base.next_row_id()
}

#[cfg(test)]
mod tests {
    use iceberg::spec::{
        FormatVersion, NestedField, PartitionSpec, PrimitiveType, Schema, SortOrder, TableMetadataBuilder, Type,
    };

    use super::*;

    fn table() -> TableMetadata {
        let schema = Schema::builder()
            .with_fields(vec![NestedField::required(1, "id", Type::Primitive(PrimitiveType::Long)).into()])
            .build()
            .unwrap();
        let spec = PartitionSpec::unpartition_spec();
        TableMetadataBuilder::new(schema, spec, SortOrder::unsorted_order(), "file:///t".into(), FormatVersion::V2, {
            Default::default()
        })
        .unwrap()
        .build()
        .unwrap()
        .metadata
    }

    /// Another engine may move or drop a ref between Floe's read and its commit; a commit that
    /// expires decided from the refs it read, so it asserts each of them, and names the refs it
    /// removes before the snapshots (which would drop a ref on them silently).
    #[test]
    fn an_expiring_commit_asserts_every_ref_and_removes_expired_refs_by_name() {
        use iceberg::spec::SnapshotRetention;
        let tag = SnapshotRetention::Tag { max_ref_age_ms: None };
        let base =
            crate::table::maintain::retention_tests::table(6, &[], vec![("audit", 4, tag.clone()), ("old", 2, tag)]);
        let next =
            TableMetadataBuilder::new_from_metadata(base.clone(), None).remove_ref("old").remove_snapshots(&[1, 2]);
        let (requirements, updates) = between(&base, &next.build().unwrap().metadata);
        for (name, id) in [("audit", 4), ("old", 2)] {
            let want = TableRequirement::RefSnapshotIdMatch { r#ref: name.to_string(), snapshot_id: Some(id) };
            assert!(requirements.contains(&want), "{name}: {requirements:?}");
        }
        let at = |f: &dyn Fn(&TableUpdate) -> bool| updates.iter().position(f).unwrap();
        let ref_removed = at(&|u| matches!(u, TableUpdate::RemoveSnapshotRef { ref_name } if ref_name == "old"));
        let snapshots_removed = at(&|u| matches!(u, TableUpdate::RemoveSnapshots { .. }));
        assert!(ref_removed < snapshots_removed, "{updates:?}");
        // A commit that expires nothing asserts only the table and `main`.
        assert_eq!(between(&base, &base).0.len(), 2);
    }

    #[test]
    fn a_table_moved_when_its_format_or_commits_changed() {
        let base = table();
        assert!(!moved(&base, &base));
        let upgraded = TableMetadataBuilder::new_from_metadata(base.clone(), None)
            .upgrade_format_version(FormatVersion::V3)
            .unwrap()
            .build()
            .unwrap()
            .metadata;
        assert!(moved(&base, &upgraded), "an upgrade between plan and commit is a lost race");
        assert!(moved(&base, &table()), "another table of the same name");
    }
}
