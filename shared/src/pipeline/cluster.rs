//! Clustering a writer batch: drop duplicates of the dedup key, sort by partition and cluster
//! key, and cut the sorted batch into one run per partition. Pure Arrow compute, no I/O.

use std::collections::HashSet;
use std::ops::Range;

use arrow_array::{Array, ArrayRef, BooleanArray, RecordBatch, StructArray};
use arrow_ord::sort::{SortColumn, SortOptions, lexsort_to_indices};
use arrow_row::{RowConverter, SortField};
use arrow_select::filter::filter_record_batch;
use arrow_select::take::{take, take_record_batch};
use iceberg::arrow::PartitionValueCalculator;
use iceberg::spec::{Literal, Struct};

use crate::config::SortTerm;
use crate::table::WriterTable;
use crate::{Error, Result};

/// A column by dotted path (`device.os`), descending through structs.
pub(crate) fn column_by_path(batch: &RecordBatch, path: &str) -> Result<ArrayRef> {
    let mut parts = path.split('.');
    let first = parts.next().unwrap_or_default();
    let mut col = batch
        .column_by_name(first)
        .cloned()
        .ok_or_else(|| Error::Config(format!("column `{path}` is not in the table")))?;
    for p in parts {
        let s = col
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| Error::Config(format!("column `{path}`: `{p}` is not inside a struct")))?;
        col = s
            .column_by_name(p)
            .cloned()
            .ok_or_else(|| Error::Config(format!("column `{path}` is not in the table")))?;
    }
    Ok(col)
}

/// Keeps the first row of each distinct dedup key (in source order); returns the rows dropped.
pub fn dedup(batch: RecordBatch, key: &[String]) -> Result<(RecordBatch, usize)> {
    if key.is_empty() || batch.num_rows() == 0 {
        return Ok((batch, 0));
    }
    let cols = key.iter().map(|k| column_by_path(&batch, k)).collect::<Result<Vec<_>>>()?;
    let conv = RowConverter::new(cols.iter().map(|c| SortField::new(c.data_type().clone())).collect())?;
    let rows = conv.convert_columns(&cols)?;
    let mut seen: HashSet<&[u8]> = HashSet::with_capacity(batch.num_rows());
    let keep: BooleanArray = (0..rows.num_rows()).map(|i| Some(seen.insert(rows.row(i).data()))).collect();
    let dropped = batch.num_rows() - seen.len();
    if dropped == 0 {
        return Ok((batch, 0));
    }
    Ok((filter_record_batch(&batch, &keep)?, dropped))
}

/// A sorted batch and the row ranges of its partitions, each with its partition tuple.
pub struct Clustered {
    /// Rows sorted by partition, then by the cluster key.
    pub batch: RecordBatch,
    /// One entry per partition, in order.
    pub partitions: Vec<(Range<usize>, Struct)>,
}

/// Sorts `batch` by its partition values and then the table's cluster key, and splits it.
pub fn cluster(batch: RecordBatch, table: &WriterTable) -> Result<Clustered> {
    let n = batch.num_rows();
    let part: Option<StructArray> = if table.spec.is_unpartitioned() {
        None
    } else {
        let calc = PartitionValueCalculator::try_new(&table.spec, &table.schema)?;
        let arr = calc.calculate(&batch)?;
        Some(arr.as_any().downcast_ref::<StructArray>().expect("partition values are a struct").clone())
    };
    let mut keys: Vec<SortColumn> = vec![];
    if let Some(p) = &part {
        keys.extend(p.columns().iter().map(|c| SortColumn { values: c.clone(), options: None }));
    }
    for SortTerm { column, descending, nulls_first } in &table.sort {
        keys.push(SortColumn {
            values: column_by_path(&batch, column)?,
            options: Some(SortOptions { descending: *descending, nulls_first: *nulls_first }),
        });
    }
    let (batch, part) = if keys.is_empty() || n <= 1 {
        (batch, part)
    } else {
        let idx = lexsort_to_indices(&keys, None)?;
        let sorted = take_record_batch(&batch, &idx)?;
        let part = match part {
            Some(p) => Some(take(&p, &idx, None)?.as_any().downcast_ref::<StructArray>().expect("struct").clone()),
            None => None,
        };
        (sorted, part)
    };
    let Some(part) = part else {
        let partitions = if n == 0 { vec![] } else { vec![(0..n, Struct::empty())] };
        return Ok(Clustered { batch, partitions });
    };
    let ranges = arrow_ord::partition::partition(part.columns())?.ranges();
    let ptype = table.spec.partition_type(&table.schema)?;
    let mut partitions = Vec::with_capacity(ranges.len());
    for r in ranges {
        let one: ArrayRef = std::sync::Arc::new(part.slice(r.start, 1));
        let lit = iceberg::arrow::arrow_struct_to_literal(&one, &ptype)?;
        let value = match lit.into_iter().next().flatten() {
            Some(Literal::Struct(s)) => s,
            _ => return Err(Error::Config("partition value is not a struct".into())),
        };
        partitions.push((r, value));
    }
    Ok(Clustered { batch, partitions })
}
