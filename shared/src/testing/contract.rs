//! Port contract suites. Each takes an adapter and a fresh namespace (URI prefix, entity, table)
//! and panics with a message on the first broken promise.

use std::time::Duration;

use bytes::Bytes;

use crate::PortError;
use crate::ports::{Ledger, Lock, ObjectStore, QuarantineRecord, Queue, SourceState, TablePointer};
use crate::{Rejection, RejectionKind, TableIdent};

/// `ObjectStore`: get/put/head/list/delete, ranged reads and `put_if_absent`'s conflict, under `base`.
pub async fn object_store(s: &dyn ObjectStore, base: &str) {
    let a = format!("{base}/dir/a.bin");
    let b = format!("{base}/dir/sub/b.bin");
    assert!(matches!(s.get(&a).await, Err(PortError::NotFound(_))), "missing object is NotFound");
    assert!(matches!(s.head(&a).await, Err(PortError::NotFound(_))), "missing head is NotFound");
    s.put(&a, Bytes::from_static(b"one")).await.expect("put");
    assert_eq!(s.get(&a).await.expect("get"), Bytes::from_static(b"one"));
    let m1 = s.head(&a).await.expect("head");
    assert_eq!(m1.size, 3);
    assert_eq!(m1.uri, a);
    s.put(&a, Bytes::from_static(b"three")).await.expect("overwrite");
    assert_eq!(s.get(&a).await.expect("get"), Bytes::from_static(b"three"));
    assert_ne!(s.head(&a).await.expect("head").version, m1.version, "an overwrite changes the version");
    assert_eq!(s.get_range(&a, 1..4).await.expect("get_range"), Bytes::from_static(b"hre"));
    assert_eq!(s.get_range(&a, 0..5).await.expect("get_range of all"), Bytes::from_static(b"three"));
    assert!(s.get_range(&a, 3..3).await.expect("empty range").is_empty());
    for past in [5..6, 9..12, 6..6] {
        assert!(
            matches!(s.get_range(&a, past.clone()).await, Err(PortError::Invalid(_))),
            "a range from or past the end ({past:?}) is Invalid"
        );
    }
    assert!(
        matches!(s.get_range(&a, 2..6).await, Err(PortError::Invalid(_))),
        "a range past the end is Invalid, not a short read"
    );
    assert!(
        matches!(s.get_range(&format!("{base}/none"), 0..1).await, Err(PortError::NotFound(_))),
        "ranged read of a missing object"
    );
    s.put_if_absent(&b, Bytes::from_static(b"b")).await.expect("put_if_absent on a free name");
    assert!(
        matches!(s.put_if_absent(&b, Bytes::from_static(b"x")).await, Err(PortError::Conflict(_))),
        "put_if_absent on a taken name is a Conflict"
    );
    assert_eq!(s.get(&b).await.expect("get"), Bytes::from_static(b"b"), "the loser did not overwrite");
    let listed: Vec<String> = s.list(&format!("{base}/dir")).await.expect("list").into_iter().map(|m| m.uri).collect();
    assert_eq!(listed, vec![a.clone(), b.clone()], "list is recursive and ordered");
    s.delete(&a).await.expect("delete");
    s.delete(&a).await.expect("deleting a missing object succeeds");
    assert!(matches!(s.get(&a).await, Err(PortError::NotFound(_))));
}

/// `Queue`: send/receive/ack, visibility timeout and redelivery with receive counts, release.
pub async fn queue(q: &dyn Queue) {
    assert!(q.receive(10, Duration::from_secs(30)).await.expect("receive").is_empty(), "starts empty");
    q.send("m1".into()).await.expect("send");
    q.send("m2".into()).await.expect("send");
    let got = q.receive(10, Duration::from_millis(300)).await.expect("receive");
    assert_eq!(got.iter().map(|m| m.body.as_str()).collect::<Vec<_>>(), ["m1", "m2"]);
    assert!(got.iter().all(|m| m.receive_count == 1));
    assert!(q.receive(10, Duration::from_secs(30)).await.expect("receive").is_empty(), "in flight = invisible");
    q.ack(&got[0].receipt).await.expect("ack");
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let again = q.receive(10, Duration::from_secs(30)).await.expect("receive");
    assert_eq!(again.len(), 1, "the unacknowledged message comes back after its visibility timeout");
    assert_eq!(again[0].body, "m2");
    assert_eq!(again[0].id, got[1].id, "same message id on redelivery");
    assert_eq!(again[0].receive_count, 2);
    q.release(&again[0].receipt).await.expect("release");
    let third = q.receive(10, Duration::from_secs(30)).await.expect("receive");
    assert_eq!(third.len(), 1, "a released message is visible again at once");
    q.ack(&third[0].receipt).await.expect("ack");
    assert!(q.receive(10, Duration::from_millis(10)).await.expect("receive").is_empty());
}

/// `TablePointer`: create once, load, swap with the right expectation, lose with a stale one.
/// Locations are under the one the catalog assigns, where it assigns one (S3 Tables).
pub async fn table_pointer(p: &dyn TablePointer, table: &TableIdent) {
    assert_eq!(p.load(table).await.expect("load"), None, "missing table loads as None");
    let base = match p.assign_location(table).await.expect("assign a location") {
        Some(at) => {
            assert_eq!(p.assign_location(table).await.expect("again").as_ref(), Some(&at), "one location per table");
            assert_eq!(p.load(table).await.expect("load"), None, "a table with no metadata yet loads as None");
            at
        }
        None => "s3://w/t".to_string(),
    };
    let at = |f: &str| format!("{base}/metadata/{f}.metadata.json");
    let v0 = p.create(table, &at("00000-a")).await.expect("create");
    assert!(matches!(p.create(table, &at("00000-b")).await, Err(PortError::Conflict(_))));
    assert_eq!(p.load(table).await.expect("load"), Some(v0.clone()));
    let v1 = p.swap(table, &v0, &at("00001-c")).await.expect("swap");
    assert_eq!(v1.metadata_location, at("00001-c"));
    let lost = p.swap(table, &v0, &at("00001-zombie")).await;
    assert!(matches!(lost, Err(PortError::Conflict(_))), "a stale expectation loses: {lost:?}");
    assert_eq!(p.load(table).await.expect("load"), Some(v1), "the loser left no trace");
}

/// `Ledger`: pending marks accumulate, pending → committed, never downgraded; quarantine records.
pub async fn ledger(l: &dyn Ledger, table: &TableIdent) {
    let ids = vec!["s3://b/k1#e1".to_string(), "s3://b/k2#e2".to_string()];
    assert!(l.lookup(table, &ids).await.expect("lookup").is_empty());
    l.record_pending(table, &ids, 11).await.expect("pending");
    l.record_pending(table, &ids[..1], 12).await.expect("pending again");
    let mut got = l.lookup(table, &ids).await.expect("lookup");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            (ids[0].clone(), SourceState::Pending { snapshot_ids: vec![11, 12] }),
            (ids[1].clone(), SourceState::Pending { snapshot_ids: vec![11] })
        ],
        "a second pending mark adds to the first (a stalled committer may still land the first)"
    );
    l.record_pending(table, &ids[..1], 11).await.expect("pending repeated");
    let got = l.lookup(table, &ids[..1]).await.expect("lookup");
    assert_eq!(
        got,
        vec![(ids[0].clone(), SourceState::Pending { snapshot_ids: vec![11, 12] })],
        "a repeat is one mark"
    );
    l.record_committed(table, &ids[..1], 12).await.expect("committed");
    l.record_pending(table, &ids[..1], 13).await.expect("pending after commit");
    let got = l.lookup(table, &ids[..1]).await.expect("lookup");
    assert_eq!(got, vec![(ids[0].clone(), SourceState::Committed { snapshot_id: 12 })], "never downgraded");
    let other = TableIdent::new(format!("{}x", table.namespace), table.name.clone());
    assert!(l.lookup(&other, &ids).await.expect("lookup").is_empty(), "records are per table");
    // Landed records: a source pending under a landed snapshot is committed in it (the lowest
    // landed mark); one landed record settles every source pending under it, per table.
    l.record_pending(&other, &ids, 21).await.expect("pending");
    l.record_pending(&other, &ids[1..], 22).await.expect("a second attempt");
    l.record_landed(table, &[21, 22]).await.expect("landed, in another table");
    let mut got = l.lookup(&other, &ids).await.expect("lookup");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            (ids[0].clone(), SourceState::Pending { snapshot_ids: vec![21] }),
            (ids[1].clone(), SourceState::Pending { snapshot_ids: vec![21, 22] })
        ],
        "landed records are per table"
    );
    l.record_landed(&other, &[22]).await.expect("the second attempt landed");
    let mut got = l.lookup(&other, &ids).await.expect("lookup");
    got.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        got,
        vec![
            (ids[0].clone(), SourceState::Pending { snapshot_ids: vec![21] }),
            (ids[1].clone(), SourceState::Committed { snapshot_id: 22 })
        ],
        "only the sources pending under the landed snapshot"
    );
    l.record_landed(&other, &[21, 21]).await.expect("landed, twice");
    let got: std::collections::BTreeMap<String, SourceState> =
        l.lookup(&other, &ids).await.expect("lookup").into_iter().collect();
    assert_eq!(got[&ids[0]], SourceState::Committed { snapshot_id: 21 });
    assert_eq!(got[&ids[1]], SourceState::Committed { snapshot_id: 21 }, "the first landed mark");
    l.record_pending(&other, &ids[..1], 23).await.expect("a mark after landing");
    let got = l.lookup(&other, &ids[..1]).await.expect("lookup");
    assert_eq!(got, vec![(ids[0].clone(), SourceState::Committed { snapshot_id: 21 })], "still committed");
    let r = QuarantineRecord {
        source_id: "s3://b/bad#e".into(),
        uri: "s3://b/bad".into(),
        table: Some(table.to_string()),
        rejection: Rejection::new(RejectionKind::Corrupt, "bad magic"),
        at_ms: 1,
    };
    l.quarantine(r.clone()).await.expect("quarantine");
    assert!(l.quarantined().await.expect("quarantined").contains(&r));
    l.remove_quarantined(std::slice::from_ref(&r.source_id)).await.expect("unquarantine");
    assert!(!l.quarantined().await.expect("quarantined").contains(&r), "removed");
    l.remove_quarantined(std::slice::from_ref(&r.source_id)).await.expect("removing twice is harmless");
}

/// `Lock`: exclusive while leased, heartbeat, release, and steal after the lease expires.
pub async fn lock(l: &dyn Lock, entity: &str) {
    let lease = Duration::from_millis(800);
    let a = l.try_acquire(entity, "owner-a", lease).await.expect("acquire").expect("free lock is granted");
    assert!(l.try_acquire(entity, "owner-b", lease).await.expect("acquire").is_none(), "held lock is refused");
    let renewed = l.heartbeat(&a).await.expect("heartbeat");
    let repeat = l.heartbeat(&a).await.expect("a repeated heartbeat (its first answer lost) keeps the lock");
    assert_eq!(repeat, renewed, "a repeat is the same heartbeat");
    let first = a.clone();
    let a = l.heartbeat(&renewed).await.expect("the next heartbeat");
    assert!(matches!(l.heartbeat(&first).await, Err(PortError::Conflict(_))), "a lease two heartbeats old is stale");
    // A heartbeat landed but its answer was lost: releasing with the lease in hand frees it.
    l.heartbeat(&a).await.expect("a heartbeat whose answer is lost");
    l.release(&a).await.expect("release");
    let x = l.try_acquire(entity, "owner-x", lease).await.expect("acquire").expect("released, not left to expire");
    l.release(&x).await.expect("release");
    let b = l.try_acquire(entity, "owner-b", lease).await.expect("acquire").expect("released lock is granted");
    tokio::time::sleep(lease + Duration::from_millis(400)).await;
    let c = l.try_acquire(entity, "owner-c", lease).await.expect("acquire").expect("an expired lease can be stolen");
    assert!(matches!(l.heartbeat(&b).await, Err(PortError::Conflict(_))), "the old holder learns it lost the lock");
    l.release(&b).await.expect("a stale release is harmless");
    assert!(l.try_acquire(entity, "owner-d", lease).await.expect("acquire").is_none(), "c still holds it");
    l.release(&c).await.expect("release");
}
