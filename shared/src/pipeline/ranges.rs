//! Temporal values a table cannot hold exactly, refused per object before it is accepted (the
//! object is quarantined with the reason; the other objects of its batch go on).
//!
//! - A time of day outside [00:00, 24:00): Avro's `time-millis` and `time-micros` are plain
//!   counts and may hold any value; Iceberg's `time` is a time of day.
//! - A date or timestamp that a `year`, `month`, `day` or `hour` partition transform cannot
//!   carry: beyond about 200,000 years from 1970 the transforms of the iceberg crate and arrow
//!   give a null (past chrono's range) or a wrapped hour, so the row would sit in a partition
//!   that does not hold its value and readers would prune it wrongly.
//! - An int or long within `width` of its type's minimum under a `truncate[width]` partition:
//!   the transform's `v - v mod width` wraps to a large positive value (in Java too).

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Time32MillisecondType, Time64MicrosecondType};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{DataType, TimeUnit};
use iceberg::spec::Transform;

use super::cluster::column_by_path;
use crate::table::WriterTable;
use crate::{Rejection, RejectionKind};

/// Days from 1970 within which every temporal partition transform is exact (about 199,863
/// years; chrono holds ±262,143, and an hour count stays within i32 up to ±245,000).
const MAX_PARTITION_DAYS: i64 = 73_000_000;

/// Refuses `batch` if it holds a value its table cannot carry exactly (see the module doc).
pub(crate) fn check(batch: &RecordBatch, table: &WriterTable) -> Result<(), Rejection> {
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        check_times(field.name(), column)?;
    }
    for pf in table.spec.fields() {
        let Some(name) = table.schema.name_by_field_id(pf.source_id) else { continue };
        if let Transform::Truncate(width) = pf.transform {
            let Ok(column) = column_by_path(batch, name) else { continue };
            if let Some(v) = truncate_wraps(&column, width) {
                return Err(Rejection::new(
                    RejectionKind::Schema,
                    format!(
                        "field `{name}` holds {v}, whose `truncate[{width}]` partition value is below the type's range"
                    ),
                ));
            }
            continue;
        }
        if !matches!(pf.transform, Transform::Year | Transform::Month | Transform::Day | Transform::Hour) {
            continue;
        }
        let Ok(column) = column_by_path(batch, name) else { continue };
        if let Some(v) = out_of_partition_range(&column) {
            return Err(Rejection::new(
                RejectionKind::Schema,
                format!(
                    "field `{name}` holds {v}, beyond what its `{}` partition can carry (about 200,000 years from 1970)",
                    pf.transform
                ),
            ));
        }
    }
    Ok(())
}

/// Refuses a time of day outside [00:00, 24:00) in `column`, at any depth (structs, list
/// elements, map keys and values).
fn check_times(path: &str, column: &ArrayRef) -> Result<(), Rejection> {
    let bad = |v: i64, unit: &str| {
        Rejection::new(
            RejectionKind::Schema,
            format!("field `{path}` holds the time {v} {unit}, outside a day (00:00 to 24:00)"),
        )
    };
    match column.data_type() {
        DataType::Time64(TimeUnit::Microsecond) => {
            let a = column.as_primitive::<Time64MicrosecondType>();
            if let Some(v) = valid_values(a).find(|v| !(0..86_400_000_000).contains(v)) {
                return Err(bad(v, "µs"));
            }
        }
        DataType::Time32(TimeUnit::Millisecond) => {
            let a = column.as_primitive::<Time32MillisecondType>();
            if let Some(v) = valid_values(a).find(|v| !(0..86_400_000).contains(v)) {
                return Err(bad(i64::from(v), "ms"));
            }
        }
        DataType::Struct(fields) => {
            let s = column.as_struct();
            for (f, child) in fields.iter().zip(s.columns()) {
                check_times(&format!("{path}.{}", f.name()), child)?;
            }
        }
        DataType::List(_) => {
            let l = column.as_list::<i32>();
            check_times(&format!("{path}.element"), &elements(l.values(), l.value_offsets()))?;
        }
        DataType::LargeList(_) => {
            let l = column.as_list::<i64>();
            check_times(&format!("{path}.element"), &elements(l.values(), l.value_offsets()))?;
        }
        DataType::Map(_, _) => {
            let m = column.as_map();
            let entries: ArrayRef = std::sync::Arc::new(m.entries().clone());
            let entries = elements(&entries, m.value_offsets());
            let entries = entries.as_struct();
            check_times(&format!("{path}.key"), entries.column(0))?;
            check_times(&format!("{path}.value"), entries.column(1))?;
        }
        _ => {}
    }
    Ok(())
}

/// The elements of a list or map whose child array is `values`: those its offsets reach.
pub(super) fn elements<O: arrow_array::OffsetSizeTrait>(values: &ArrayRef, offsets: &[O]) -> ArrayRef {
    let (first, last) = (offsets.first().map_or(0, |o| o.as_usize()), offsets.last().map_or(0, |o| o.as_usize()));
    values.slice(first, last - first)
}

/// The first value of an int or long `column` whose `truncate[width]` (`v - v mod width`,
/// rounding down) is below the type's minimum: the transform would wrap it to a large positive
/// partition value, and readers would prune the row wrongly.
fn truncate_wraps(column: &ArrayRef, width: u32) -> Option<i64> {
    use arrow_array::types::{Int32Type, Int64Type};
    let w = i64::from(width.max(1));
    match column.data_type() {
        DataType::Int32 => valid_values(column.as_primitive::<Int32Type>())
            .map(i64::from)
            .find(|v| v - v.rem_euclid(w) < i64::from(i32::MIN)),
        DataType::Int64 => {
            valid_values(column.as_primitive::<Int64Type>()).find(|v| v.checked_sub(v.rem_euclid(w)).is_none())
        }
        _ => None,
    }
}

/// The first value of a date or timestamp `column` beyond [`MAX_PARTITION_DAYS`], as text.
fn out_of_partition_range(column: &ArrayRef) -> Option<String> {
    use arrow_array::types::{TimestampMicrosecondType, TimestampMillisecondType, TimestampSecondType};
    fn beyond<T: arrow_array::ArrowPrimitiveType<Native = i64>>(column: &ArrayRef, per_day: i64) -> Option<String> {
        let limit = MAX_PARTITION_DAYS * per_day;
        valid_values(column.as_primitive::<T>()).find(|t| t.abs() > limit).map(|t| format!("the timestamp {t}"))
    }
    match column.data_type() {
        DataType::Date32 => valid_values(column.as_primitive::<Date32Type>())
            .find(|d| i64::from(*d).abs() > MAX_PARTITION_DAYS)
            .map(|d| format!("the date {d} days")),
        DataType::Timestamp(TimeUnit::Second, _) => beyond::<TimestampSecondType>(column, 86_400),
        DataType::Timestamp(TimeUnit::Millisecond, _) => beyond::<TimestampMillisecondType>(column, 86_400_000),
        DataType::Timestamp(TimeUnit::Microsecond, _) => beyond::<TimestampMicrosecondType>(column, 86_400_000_000),
        _ => None, // i64 nanoseconds span ±292 years
    }
}

/// The non-null values of `a`.
fn valid_values<T: arrow_array::ArrowPrimitiveType>(
    a: &arrow_array::PrimitiveArray<T>,
) -> impl Iterator<Item = T::Native> + '_ {
    let nulls = a.nulls();
    a.values().iter().enumerate().filter(move |(i, _)| nulls.is_none_or(|n| n.is_valid(*i))).map(|(_, v)| *v)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Date32Array, Time64MicrosecondArray, TimestampMicrosecondArray};

    use super::*;

    #[test]
    fn a_time_outside_a_day_and_a_date_no_partition_carries_are_found() {
        let times = |v: Vec<Option<i64>>| -> ArrayRef { Arc::new(Time64MicrosecondArray::from(v)) };
        check_times("t", &times(vec![Some(0), None, Some(86_399_999_999)])).unwrap();
        let e = check_times("t", &times(vec![Some(1), Some(-5)])).unwrap_err();
        assert!(e.to_string().contains("-5 µs"), "{e}");
        assert!(check_times("t", &times(vec![Some(86_400_000_000)])).is_err());
        let longs: ArrayRef = Arc::new(arrow_array::Int64Array::from(vec![Some(-7), None, Some(i64::MIN + 9)]));
        assert_eq!(truncate_wraps(&longs, 10), None, "-7 -> -10, MIN + 9 -> MIN + 8");
        let longs: ArrayRef = Arc::new(arrow_array::Int64Array::from(vec![Some(i64::MIN)]));
        assert_eq!(truncate_wraps(&longs, 10), Some(i64::MIN));
        let ints: ArrayRef = Arc::new(arrow_array::Int32Array::from(vec![i32::MIN + 1, i32::MIN]));
        assert_eq!(truncate_wraps(&ints, 2), None, "i32::MIN is a multiple of 2");
        assert_eq!(truncate_wraps(&ints, 10), Some(i64::from(i32::MIN + 1)));
        // Inside lists and maps too, and only the elements the offsets reach.
        let list = |v: Vec<Option<Vec<Option<i64>>>>| -> ArrayRef {
            let mut b = arrow_array::builder::ListBuilder::new(arrow_array::builder::Time64MicrosecondBuilder::new());
            for item in v {
                match item {
                    Some(xs) => {
                        xs.into_iter().for_each(|x| b.values().append_option(x));
                        b.append(true);
                    }
                    None => b.append(false),
                }
            }
            Arc::new(b.finish())
        };
        check_times("slots", &list(vec![Some(vec![Some(0), None]), None, Some(vec![])])).unwrap();
        let e = check_times("slots", &list(vec![Some(vec![Some(1)]), Some(vec![Some(86_400_000_000)])])).unwrap_err();
        assert!(e.to_string().contains("`slots.element`"), "{e}");
        let sliced = list(vec![Some(vec![Some(-5)]), Some(vec![Some(7)])]).slice(1, 1);
        check_times("slots", &sliced).unwrap();
        let mut m = arrow_array::builder::MapBuilder::new(
            None,
            arrow_array::builder::StringBuilder::new(),
            arrow_array::builder::Time64MicrosecondBuilder::new(),
        );
        m.keys().append_value("a");
        m.values().append_value(-1);
        m.append(true).unwrap();
        let e = check_times("by_name", &(Arc::new(m.finish()) as ArrayRef)).unwrap_err();
        assert!(e.to_string().contains("`by_name.value`"), "{e}");
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![Some(19_000), None, Some(-73_000_000)]));
        assert_eq!(out_of_partition_range(&dates), None);
        let dates: ArrayRef = Arc::new(Date32Array::from(vec![Some(100_000_000)]));
        assert!(out_of_partition_range(&dates).unwrap().contains("100000000"));
        let ts: ArrayRef = Arc::new(TimestampMicrosecondArray::from(vec![Some(-1), Some(8_000_000_000_000_000_000)]));
        assert!(out_of_partition_range(&ts).unwrap().contains("8000000000000000000"));
    }
}
