//! Where a table's files live: names for table locations, data files and metadata files.
//! Data file names are deterministic in the writer batch's identity and the file's bytes, so a
//! retried batch finds its own files instead of leaving orphans (unless they are too old to be
//! committed: then [`refreshed_data_file_uri`]).

use iceberg::spec::{PartitionSpec, Schema, Struct};

use crate::TableIdent;

/// The location of a new table under a warehouse URI (`file:///w` or `s3://b/p`), in the
/// layout PyIceberg and Iceberg Java use: `<warehouse>/<namespace>.db/<name>`.
pub fn table_location(warehouse: &str, table: &TableIdent) -> String {
    format!("{}/{}.db/{}", warehouse.trim_end_matches('/'), table.namespace, table.name)
}

/// `<location>/metadata/<version:05>-<uuid>.metadata.json`.
pub fn metadata_file_uri(location: &str, version: u64) -> String {
    format!("{location}/metadata/{version:05}-{}.metadata.json", uuid::Uuid::new_v4())
}

/// `<location>/data/<partition path>/<batch>-<part:05>-<seq:03>-<content>.parquet`, where
/// `<content>` is a digest of the file's bytes: two different contents never share a name, so a
/// data file that a manifest may describe is never overwritten by a rewrite of its batch (the
/// Iceberg spec: files are immutable once written), while an identical rewrite finds its own file.
pub fn data_file_uri(
    location: &str,
    partition_path: &str,
    batch_key: &str,
    part: usize,
    seq: usize,
    content: &[u8],
) -> String {
    use sha2::{Digest, Sha256};
    let dir = if partition_path.is_empty() { String::new() } else { format!("{partition_path}/") };
    let digest = hex::encode(&Sha256::digest(content)[..8]);
    format!("{location}/data/{dir}{batch_key}-{part:05}-{seq:03}-{digest}.parquet")
}

/// Whether `uri` names a data file as Floe names them ([`data_file_uri`], perhaps
/// [`refreshed_data_file_uri`]): `…-NNNNN-NNN-<16 hex digits>[-r<ms>].parquet`. Another engine's
/// names (`00000-0-<uuid>-00001.parquet`) do not look so.
pub fn is_floe_data_file(uri: &str) -> bool {
    let name = uri.rsplit('/').next().unwrap_or_default();
    let Some(stem) = name.strip_suffix(".parquet") else { return false };
    let stem = match stem.rsplit_once("-r") {
        Some((rest, ms)) if !ms.is_empty() && ms.bytes().all(|b| b.is_ascii_digit()) => rest,
        _ => stem,
    };
    let mut parts = stem.rsplit('-');
    let digest = parts.next().unwrap_or_default();
    let seq = parts.next().unwrap_or_default();
    let part = parts.next().unwrap_or_default();
    let batch = parts.next().unwrap_or_default();
    digest.len() == 16
        && digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && seq.len() == 3
        && seq.bytes().all(|b| b.is_ascii_digit())
        && part.len() == 5
        && part.bytes().all(|b| b.is_ascii_digit())
        && !batch.is_empty()
}

/// A new name for a data file's bytes when the file already under `uri` is too old to be
/// committed by a fresh message (see the writer's `put_data_file`): `uri` with `-r<ms>` before
/// `.parquet`, `ms` the time of writing. Names are only ever read by their prefix (the batch
/// key, a compacted file's level), which stays.
pub fn refreshed_data_file_uri(uri: &str, now_ms: i64) -> String {
    let stem = uri.strip_suffix(".parquet").unwrap_or(uri);
    format!("{stem}-r{now_ms}.parquet")
}

/// The Hive-style path of a partition (`event_time_day=2026-03-14/tenant_id=t-01`), values
/// percent-encoded so that any string makes a safe key.
pub fn partition_path(spec: &PartitionSpec, schema: &Schema, value: &Struct) -> String {
    let Ok(ptype) = spec.partition_type(schema) else { return String::new() };
    spec.fields()
        .iter()
        .zip(ptype.fields())
        .enumerate()
        .map(|(i, (f, pf))| {
            let human = match value[i].as_ref() {
                Some(lit) if !renders(&pf.field_type, lit) => raw(lit),
                v => f.transform.to_human_string(&pf.field_type, v),
            };
            format!("{}={}", encode(&f.name), encode(&human))
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// Whether the iceberg crate can format `lit` of type `ty` as text (its JSON and its partition
/// path) exactly and without panicking: not a NaN or an infinity (JSON has neither; the crate
/// writes null), not a timestamp before 1970 with a fraction of a second (the crate's
/// conversion takes a negative remainder for unsigned), nor a date, time or timestamp outside
/// what chrono holds.
pub fn renders(ty: &iceberg::spec::Type, lit: &iceberg::spec::Literal) -> bool {
    use iceberg::spec::{Literal, PrimitiveLiteral as L, PrimitiveType as P, Type};
    let (Type::Primitive(p), Literal::Primitive(v)) = (ty, lit) else { return true };
    let epoch = chrono::DateTime::UNIX_EPOCH;
    match (p, v) {
        (_, L::Float(f)) => f.0.is_finite(),
        (_, L::Double(f)) => f.0.is_finite(),
        (P::Date, L::Int(d)) => {
            chrono::TimeDelta::try_days(i64::from(*d)).and_then(|t| epoch.checked_add_signed(t)).is_some()
        }
        (P::Time, L::Long(us)) => (0..86_400_000_000).contains(us),
        (P::Timestamp | P::Timestamptz, L::Long(us)) => {
            (*us >= 0 || us % 1_000_000 == 0) && chrono::DateTime::from_timestamp_micros(*us).is_some()
        }
        (P::TimestampNs | P::TimestamptzNs, L::Long(ns)) => *ns >= 0 || ns % 1_000_000_000 == 0,
        _ => true,
    }
}

/// A partition value's path text where the iceberg crate cannot format it: its number.
fn raw(lit: &iceberg::spec::Literal) -> String {
    use iceberg::spec::{Literal, PrimitiveLiteral as L};
    match lit {
        Literal::Primitive(L::Int(v)) => v.to_string(),
        Literal::Primitive(L::Long(v)) => v.to_string(),
        Literal::Primitive(L::Float(v)) => v.0.to_string(),
        Literal::Primitive(L::Double(v)) => v.0.to_string(),
        other => format!("{other:?}"),
    }
}

fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A partition tuple with its values in their widest type: a manifest's tuple is parsed with the
/// schema that manifest was written with, so after a promotion (int to long, float to double) of
/// a partition source the same partition reads `Int(5)` in an old manifest and `Long(5)` in a
/// new one; Iceberg Java compares tuples in the current spec's types.
pub(crate) fn widened(partition: &Struct) -> Struct {
    use iceberg::spec::{Literal, PrimitiveLiteral};
    partition
        .iter()
        .map(|v| {
            v.map(|lit| match lit {
                Literal::Primitive(PrimitiveLiteral::Int(i)) => Literal::long(i64::from(*i)),
                Literal::Primitive(PrimitiveLiteral::Float(f)) => Literal::double(f64::from(f.0)),
                other => other.clone(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn floe_data_file_names_are_told_from_other_engines() {
        let ours = super::data_file_uri("s3://b/t", "d=1", "L1-task", 3, 7, b"bytes");
        assert!(super::is_floe_data_file(&ours), "{ours}");
        assert!(super::is_floe_data_file(&super::refreshed_data_file_uri(&ours, 1_700_000_000_000)));
        for theirs in [
            "s3://b/t/data/00000-0-5b3c9a8e-0c1d-4e4b-9a77-1f2e3d4c5b6a-00001.parquet",
            "s3://b/t/data/part-00000-abc.c000.zstd.parquet",
            "s3://b/t/data/x-00001-001-0123456789ABCDEF.parquet",
            "s3://b/t/data/-00001-001-0123456789abcdef.parquet",
        ] {
            assert!(!super::is_floe_data_file(theirs), "{theirs}");
        }
    }
}
