//! Late rows of a level-0 task ([`plan`](super::plan) module docs, "Late files"): the rows whose
//! dedup key leads with a time before the task's boundary, split from the others.
//!
//! The split decides only who probes a row's key against what (docs/ARCHITECTURE.md, "Late keys,
//! once per partition"): a row on either side is dropped only for a copy an older file holds.
//! A row whose leading key column is null has no key; it is never late.

use arrow_array::{Array, BooleanArray, Int64Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use arrow_select::filter::filter_record_batch;

use super::{LateSplit, Policy};
use crate::table::WriterTable;
use crate::{Error, Result};

const MS_PER_DAY: i64 = 86_400_000;

/// When the table's L0 → L1 tasks leave late rows to late files: with exact dedup, a dedup key
/// whose leading column is a timestamp or a date, and a late horizon
/// ([`crate::table::PROP_LATE_AFTER`]).
pub(super) fn late_split(
    meta: &iceberg::spec::TableMetadata,
    wt: &WriterTable,
    policy: &Policy,
) -> Result<Option<LateSplit>> {
    let lead = wt.dedup_key.first().and_then(|name| wt.arrow_schema.field_with_name(name).ok());
    if policy.dedup_window.is_some() || !lead.is_some_and(|f| timed(f.data_type())) {
        return Ok(None);
    }
    let Some(after_ms) = crate::table::late_after_ms(meta.properties())? else { return Ok(None) };
    let snapshots = meta.snapshots().map(|s| (s.sequence_number(), s.timestamp_ms())).collect();
    Ok(Some(LateSplit { after_ms, snapshots, now_ms: chrono::Utc::now().timestamp_millis() }))
}

/// Whether a dedup key leading with a column of type `dt` can be split by time.
pub(super) fn timed(dt: &DataType) -> bool {
    matches!(dt, DataType::Timestamp(_, _) | DataType::Date32)
}

/// `batches` split by their column `column` (of a [`timed`] type) against `before_ms`, in
/// milliseconds since the epoch: the rows at or after it (and those with no value), then the
/// rows before it.
pub(super) fn split(
    batches: Vec<RecordBatch>,
    column: &str,
    before_ms: i64,
) -> Result<(Vec<RecordBatch>, Vec<RecordBatch>)> {
    let (mut on_time, mut late) = (vec![], vec![]);
    for b in batches {
        let Some(col) = b.column_by_name(column) else {
            return Err(Error::internal(format!("late rows: the batch lacks the key column {column}")));
        };
        let bound = bound(col.data_type(), before_ms)?;
        let values = arrow_cast::cast(col, &DataType::Int64)?;
        let values = values
            .as_any()
            .downcast_ref::<Int64Array>()
            .ok_or_else(|| Error::internal(format!("late rows: {column} did not cast to integers")))?;
        let is_late: BooleanArray =
            (0..values.len()).map(|i| Some(values.is_valid(i) && values.value(i) < bound)).collect();
        let not_late: BooleanArray = is_late.iter().map(|l| l.map(|l| !l)).collect();
        match is_late.true_count() {
            0 => on_time.push(b),
            n if n == b.num_rows() => late.push(b),
            _ => {
                on_time.push(filter_record_batch(&b, &not_late)?);
                late.push(filter_record_batch(&b, &is_late)?);
            }
        }
    }
    Ok((on_time, late))
}

/// The least value of a column of type `dt` that is not before `before_ms`: a value is before
/// the boundary exactly when it is less than this.
fn bound(dt: &DataType, before_ms: i64) -> Result<i64> {
    let ceil = |per: i64| before_ms.div_euclid(per) + i64::from(before_ms.rem_euclid(per) != 0);
    Ok(match dt {
        DataType::Timestamp(TimeUnit::Second, _) => ceil(1000),
        DataType::Timestamp(TimeUnit::Millisecond, _) => before_ms,
        DataType::Timestamp(TimeUnit::Microsecond, _) => before_ms.saturating_mul(1000),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => before_ms.saturating_mul(1_000_000),
        DataType::Date32 => ceil(MS_PER_DAY),
        other => return Err(Error::internal(format!("late rows: a key leading with {other} is not split by time"))),
    })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Date32Array, TimestampMicrosecondArray};
    use arrow_schema::{Field, Schema};

    use super::*;

    fn micros(values: Vec<Option<i64>>) -> RecordBatch {
        let field = Field::new("t", DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())), true);
        let col = TimestampMicrosecondArray::from(values).with_timezone("UTC");
        RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::new(col)]).unwrap()
    }

    fn rows(bs: &[RecordBatch]) -> Vec<Option<i64>> {
        let mut out = vec![];
        for b in bs {
            let c = arrow_cast::cast(b.column(0), &DataType::Int64).unwrap();
            let c = c.as_any().downcast_ref::<Int64Array>().unwrap();
            out.extend(c.iter());
        }
        out
    }

    #[test]
    fn rows_before_the_boundary_are_late_and_keyless_rows_never() {
        let b = micros(vec![Some(999_999), Some(1_000_000), None, Some(-5), Some(2_000_000)]);
        let (on_time, late) = split(vec![b], "t", 1_000).unwrap();
        assert_eq!(rows(&on_time), [Some(1_000_000), None, Some(2_000_000)]);
        assert_eq!(rows(&late), [Some(999_999), Some(-5)]);
        let (on_time, late) = split(vec![micros(vec![Some(1), Some(2)])], "t", 1).unwrap();
        assert!(on_time.is_empty() && rows(&late) == [Some(1), Some(2)], "a batch wholly late stays whole");
    }

    #[test]
    fn a_date_is_late_when_its_midnight_is() {
        let field = Field::new("d", DataType::Date32, true);
        let col = Date32Array::from(vec![Some(0), Some(1), Some(2)]);
        let b = RecordBatch::try_new(Arc::new(Schema::new(vec![field])), vec![Arc::new(col)]).unwrap();
        // One millisecond into day 1: days 0 and 1 began before it, day 2 did not.
        let (on_time, late) = split(vec![b], "d", MS_PER_DAY + 1).unwrap();
        assert_eq!((on_time[0].num_rows(), late[0].num_rows()), (1, 2));
        let (on_time, late) = split(late, "d", MS_PER_DAY).unwrap();
        assert_eq!((on_time[0].num_rows(), late[0].num_rows()), (1, 1), "day 1 begins at the boundary");
        assert_eq!(bound(&DataType::Date32, -1).unwrap(), 0, "day 0 begins after a boundary just before it");
        assert!(!timed(&DataType::Utf8) && timed(&DataType::Date32));
    }
}
