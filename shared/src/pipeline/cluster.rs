//! Clustering a writer batch: drop duplicates of the dedup key, sort by partition and cluster
//! key, and cut the sorted batch into one run per partition. Pure Arrow compute, no I/O.

use hashbrown::HashSet;
use std::ops::Range;

use arrow_array::{Array, ArrayRef, FixedSizeBinaryArray, RecordBatch, StringArray, StructArray, UInt32Array};
use arrow_buffer::NullBuffer;
use arrow_ord::sort::{SortColumn, SortOptions};
use arrow_row::{RowConverter, SortField};
use arrow_schema::DataType;
use arrow_select::take::take;
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
        .ok_or_else(|| Error::data(format!("column `{path}` is not in the table")))?;
    for p in parts {
        let s = col
            .as_any()
            .downcast_ref::<StructArray>()
            .ok_or_else(|| Error::data(format!("column `{path}`: `{p}` is not inside a struct")))?;
        let child =
            s.column_by_name(p).cloned().ok_or_else(|| Error::data(format!("column `{path}` is not in the table")))?;
        // A field under a null struct is null, whatever its own slot holds.
        col = match NullBuffer::union(s.nulls(), child.logical_nulls().as_ref()) {
            Some(nulls) if s.nulls().is_some() => {
                arrow_array::make_array(child.to_data().into_builder().nulls(Some(nulls)).build()?)
            }
            _ => child,
        };
    }
    Ok(col)
}

/// The rows to keep so that each distinct dedup key appears once (its first occurrence, in
/// source order), or `None` when there is no key or no duplicate. A row whose key is null in
/// any of its columns has no key (as in SQL, NULL equals nothing): it is always kept.
pub(crate) fn dedup(batch: &RecordBatch, key: &[String]) -> Result<Option<Vec<u32>>> {
    if key.is_empty() || batch.num_rows() == 0 {
        return Ok(None);
    }
    let cols = key.iter().map(|k| column_by_path(batch, k)).collect::<Result<Vec<_>>>()?;
    let n = batch.num_rows();
    let mut keep = Vec::with_capacity(n);
    // One fixed-width or string key column (a UUID, an id): hash its bytes directly. Otherwise
    // hash the row encoding of all key columns (which also tells null from empty).
    match (cols.as_slice(), cols[0].data_type()) {
        ([c], DataType::FixedSizeBinary(_)) if c.null_count() == 0 => {
            let a = c.as_any().downcast_ref::<FixedSizeBinaryArray>().expect("fixed size binary");
            let mut seen: HashSet<&[u8]> = HashSet::with_capacity(n);
            keep.extend((0..n as u32).filter(|i| seen.insert(a.value(*i as usize))));
        }
        ([c], DataType::Utf8) if c.null_count() == 0 => {
            let a = c.as_any().downcast_ref::<StringArray>().expect("utf8");
            let mut seen: HashSet<&str> = HashSet::with_capacity(n);
            keep.extend((0..n as u32).filter(|i| seen.insert(a.value(*i as usize))));
        }
        _ => {
            let conv = RowConverter::new(cols.iter().map(|c| SortField::new(c.data_type().clone())).collect())?;
            let rows = conv.convert_columns(&cols)?;
            let nulls = cols
                .iter()
                .fold(None, |acc: Option<NullBuffer>, c| NullBuffer::union(acc.as_ref(), c.logical_nulls().as_ref()));
            let keyless = |i: usize| nulls.as_ref().is_some_and(|n| n.is_null(i));
            let mut seen: HashSet<&[u8]> = HashSet::with_capacity(n);
            keep.extend((0..n as u32).filter(|i| keyless(*i as usize) || seen.insert(rows.row(*i as usize).data())));
        }
    }
    Ok((keep.len() < n).then_some(keep))
}

/// Each row's partition as a rank among the distinct partition tuples in sort order: rows
/// then compare by one integer before their sort key. Distinct tuples are few (tens to
/// thousands), so this costs one row encoding and one hash lookup per row.
fn partition_ranks(part: &StructArray) -> Result<Vec<u32>> {
    let cols: Vec<ArrayRef> = part.columns().to_vec();
    let conv = RowConverter::new(cols.iter().map(|c| SortField::new(c.data_type().clone())).collect())?;
    let rows = conv.convert_columns(&cols)?;
    let mut ids: hashbrown::HashMap<&[u8], u32> = hashbrown::HashMap::new();
    let group: Vec<u32> = (0..rows.num_rows())
        .map(|i| {
            let next = ids.len() as u32;
            *ids.entry(rows.row(i).data()).or_insert(next)
        })
        .collect();
    let mut distinct: Vec<(&[u8], u32)> = ids.into_iter().collect();
    distinct.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let mut rank = vec![0u32; distinct.len()];
    for (r, (_, g)) in distinct.iter().enumerate() {
        rank[*g as usize] = r as u32;
    }
    Ok(group.into_iter().map(|g| rank[g as usize]).collect())
}

/// Indices of the rows in `keep` (all rows if `None`) sorted by partition, then by `keys`
/// (stable: ties keep source order).
fn sort_indices(
    part: Option<&StructArray>,
    keys: &[SortColumn],
    n: usize,
    keep: Option<Vec<u32>>,
) -> Result<UInt32Array> {
    let rank = part.map(partition_ranks).transpose()?;
    let rank_of = |i: u32| rank.as_ref().map_or(0, |r| r[i as usize]);
    let mut idx: Vec<u32> = keep.unwrap_or_else(|| (0..n as u32).collect());
    match keys {
        [] => idx.sort_by_key(|i| rank_of(*i)),
        // The common cluster key, one non-null 64-bit column (a timestamp): compare integers.
        [k] if k.values.null_count() == 0
            && k.values.data_type().primitive_width() == Some(8)
            && !matches!(k.values.data_type(), DataType::Float64) =>
        {
            let data = k.values.to_data();
            let v: &[i64] = &data.buffer::<i64>(0)[..k.values.len()];
            let desc = k.options.is_some_and(|o| o.descending);
            if desc {
                idx.sort_by_key(|i| (rank_of(*i), std::cmp::Reverse(v[*i as usize])));
            } else {
                idx.sort_by_key(|i| (rank_of(*i), v[*i as usize]));
            }
        }
        _ => {
            // Compare row encodings of the sort key (one memcmp) after the partition rank.
            let fields = keys
                .iter()
                .map(|k| SortField::new_with_options(k.values.data_type().clone(), k.options.unwrap_or_default()))
                .collect();
            let cols: Vec<ArrayRef> = keys.iter().map(|k| k.values.clone()).collect();
            let rows = RowConverter::new(fields)?.convert_columns(&cols)?;
            idx.sort_by(|a, b| {
                rank_of(*a).cmp(&rank_of(*b)).then_with(|| rows.row(*a as usize).cmp(&rows.row(*b as usize)))
            });
        }
    }
    Ok(UInt32Array::from(idx))
}

/// The order of a writer batch's rows, sorted by partition and then the cluster key, with the
/// range of each partition in that order. Rows are gathered from the decoded batches one data
/// file at a time ([`Clustered::gather`]), so the batch is never held twice whole.
pub(crate) struct Clustered {
    /// (decoded batch, row) of each output row, in output order.
    rows: Vec<(usize, usize)>,
    /// One entry per partition, in order: its range of `rows` and its partition tuple.
    pub partitions: Vec<(Range<usize>, Struct)>,
}

impl Clustered {
    /// The output rows in `range` (a part of one partition), gathered from `batches`.
    pub(crate) fn gather(&self, batches: &[RecordBatch], range: Range<usize>) -> Result<RecordBatch> {
        super::gather::gather_rows(batches, &self.rows[range])
    }
}

/// The columns clustering reads (dedup key, sort key, partition sources), concatenated over a
/// writer batch: a small copy, where concatenating every column would copy all the data once
/// more before sorting copies it again.
pub(crate) fn key_batch(batches: &[RecordBatch], table: &WriterTable) -> Result<RecordBatch> {
    let mut names: Vec<&str> =
        table.dedup_key.iter().chain(table.sort.iter().map(|t| &t.column)).map(String::as_str).collect();
    for pf in table.spec.fields() {
        names.push(table.schema.name_by_field_id(pf.source_id).unwrap_or_default());
    }
    let mut idx: Vec<usize> = names
        .iter()
        .filter_map(|n| table.arrow_schema.index_of(n.split('.').next().unwrap_or_default()).ok())
        .collect();
    idx.sort_unstable();
    idx.dedup();
    let schema = std::sync::Arc::new(table.arrow_schema.project(&idx)?);
    let cols = idx
        .iter()
        .map(|&i| {
            let parts: Vec<&dyn Array> = batches.iter().map(|b| b.column(i).as_ref()).collect();
            Ok(arrow_select::concat::concat(&parts)?)
        })
        .collect::<Result<Vec<ArrayRef>>>()?;
    let rows = batches.iter().map(|b| b.num_rows()).sum();
    let opts = arrow_array::RecordBatchOptions::new().with_row_count(Some(rows));
    Ok(RecordBatch::try_new_with_options(schema, cols, &opts)?)
}

/// Partition tuples of every row, computed from the source columns in `keys`.
fn partition_values(keys: &RecordBatch, table: &WriterTable) -> Result<Option<StructArray>> {
    if table.spec.is_unpartitioned() {
        return Ok(None);
    }
    let ptype = table.spec.partition_type(&table.schema)?;
    let DataType::Struct(fields) = iceberg::arrow::type_to_arrow_type(&iceberg::spec::Type::Struct(ptype))? else {
        return Err(Error::internal("partition type is not a struct"));
    };
    let cols = table
        .spec
        .fields()
        .iter()
        .map(|pf| {
            let name = table.schema.name_by_field_id(pf.source_id).unwrap_or_default();
            let source = column_by_path(keys, name)?;
            Ok(iceberg::transform::create_transform_function(&pf.transform)?.transform(source)?)
        })
        .collect::<Result<Vec<ArrayRef>>>()?;
    Ok(Some(StructArray::try_new(fields, cols, None)?))
}

/// Sorts the rows of the writer batch `batches` listed in `keep` (all if `None`) by partition
/// and then the table's cluster key, reading only `keys` (see [`key_batch`]); the rows are
/// gathered later, a data file at a time.
pub(crate) fn cluster(
    batches: &[RecordBatch],
    keys: &RecordBatch,
    keep: Option<Vec<u32>>,
    table: &WriterTable,
) -> Result<Clustered> {
    let part = partition_values(keys, table)?;
    let mut sort: Vec<SortColumn> = vec![];
    for SortTerm { column, descending, nulls_first } in &table.sort {
        // A column already partitioned by identity is constant within a partition: skip it.
        let field = table.schema.field_by_name(column).map(|f| f.id);
        let constant = table
            .spec
            .fields()
            .iter()
            .any(|pf| Some(pf.source_id) == field && pf.transform == iceberg::spec::Transform::Identity);
        if !constant {
            sort.push(SortColumn {
                values: column_by_path(keys, column)?,
                options: Some(SortOptions { descending: *descending, nulls_first: *nulls_first }),
            });
        }
    }
    let starts: Vec<usize> = batches
        .iter()
        .scan(0usize, |acc, b| {
            let s = *acc;
            *acc += b.num_rows();
            Some(s)
        })
        .collect();
    let locate = |g: usize| {
        let b = starts.partition_point(|&s| s <= g) - 1;
        (b, g - starts[b])
    };
    let (rows, part): (Vec<(usize, usize)>, _) = if sort.is_empty() && part.is_none() && keep.is_none() {
        ((0..keys.num_rows()).map(locate).collect(), part)
    } else {
        let idx = sort_indices(part.as_ref(), &sort, keys.num_rows(), keep)?;
        let rows = idx.values().iter().map(|&g| locate(g as usize)).collect();
        let part = match part {
            Some(p) => Some(take(&p, &idx, None)?.as_any().downcast_ref::<StructArray>().expect("struct").clone()),
            None => None,
        };
        (rows, part)
    };
    let n = rows.len();
    let Some(part) = part else {
        let partitions = if n == 0 { vec![] } else { vec![(0..n, Struct::empty())] };
        return Ok(Clustered { rows, partitions });
    };
    let ranges = arrow_ord::partition::partition(part.columns())?.ranges();
    let ptype = table.spec.partition_type(&table.schema)?;
    let mut partitions = Vec::with_capacity(ranges.len());
    for r in ranges {
        let one: ArrayRef = std::sync::Arc::new(part.slice(r.start, 1));
        let lit = iceberg::arrow::arrow_struct_to_literal(&one, &ptype)?;
        let value = match lit.into_iter().next().flatten() {
            Some(Literal::Struct(s)) => s,
            _ => return Err(Error::internal("partition value is not a struct")),
        };
        partitions.push((r, value));
    }
    Ok(Clustered { rows, partitions })
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use arrow_array::{Int64Array, RecordBatch, StringArray, StructArray};
    use arrow_schema::{DataType, Field, Fields, Schema};

    use super::dedup;

    fn batch(ids: Vec<Option<&str>>, n: Vec<Option<i64>>) -> RecordBatch {
        let schema = Schema::new(vec![Field::new("id", DataType::Utf8, true), Field::new("n", DataType::Int64, true)]);
        RecordBatch::try_new(Arc::new(schema), vec![Arc::new(StringArray::from(ids)), Arc::new(Int64Array::from(n))])
            .unwrap()
    }

    #[test]
    fn first_occurrence_of_each_key_wins() {
        let b = batch(vec![Some("a"), Some("b"), Some("a"), Some("c"), Some("b")], vec![Some(1); 5]);
        assert_eq!(dedup(&b, &["id".into()]).unwrap(), Some(vec![0, 1, 3]));
    }

    #[test]
    fn rows_with_a_null_key_are_all_kept() {
        let b = batch(vec![None, Some("a"), None, Some("a"), None], vec![Some(1); 5]);
        assert_eq!(dedup(&b, &["id".into()]).unwrap(), Some(vec![0, 1, 2, 4]));
        let b = batch(vec![None, None, None], vec![Some(1); 3]);
        assert_eq!(dedup(&b, &["id".into()]).unwrap(), None);
        // Composite key: null in either column means no key.
        let b = batch(vec![Some("a"), Some("a"), None, None, Some("a")], vec![None, None, Some(1), Some(1), Some(1)]);
        assert_eq!(dedup(&b, &["id".into(), "n".into()]).unwrap(), None);
        let b = batch(vec![Some("a"), Some("a"), Some("a")], vec![Some(1), None, Some(1)]);
        assert_eq!(dedup(&b, &["id".into(), "n".into()]).unwrap(), Some(vec![0, 1]));
    }

    #[test]
    fn a_key_under_a_null_struct_is_null() {
        let inner = Fields::from(vec![Field::new("k", DataType::Int64, true)]);
        let k = Int64Array::from(vec![Some(5), Some(5), Some(5)]);
        let s = StructArray::try_new(
            inner.clone(),
            vec![Arc::new(k)],
            Some(arrow_buffer::NullBuffer::from(vec![true, false, false])),
        )
        .unwrap();
        let schema = Schema::new(vec![Field::new("s", DataType::Struct(inner), true)]);
        let b = RecordBatch::try_new(Arc::new(schema), vec![Arc::new(s)]).unwrap();
        assert_eq!(dedup(&b, &["s.k".into()]).unwrap(), None);
    }
}
