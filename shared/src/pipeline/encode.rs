//! Encoding a batch's rows into data files, the CPU part the writer and the compactor share:
//! dedup, cluster by partition and sort key, cut into files of the target size, and Parquet with
//! Iceberg metrics under names derived from the batch's identity.

use arrow_array::RecordBatch;
use bytes::Bytes;

use super::cluster::{cluster, dedup, key_batch};
use crate::Result;
use crate::config::EngineConfig;
use crate::convert::encoding::{self, SAMPLE_ROWS};
use crate::convert::{avro, parquet};
use crate::message::DataFileMeta;
use crate::table::{WriterTable, data_file_uri, partition_path};

/// The CPU part of a writer batch: dedup, cluster, and encode Parquet files with metrics,
/// handing each file to `sink` as soon as it is encoded. Returns the duplicate rows dropped.
pub fn encode(
    table: &WriterTable,
    cfg: &EngineConfig,
    batches: Vec<RecordBatch>,
    batch_key: &str,
    source_bytes_per_row: f64,
    sink: &mut dyn FnMut(DataFileMeta, Bytes) -> Result<()>,
) -> Result<usize> {
    let keys = key_batch(&batches, table)?;
    let keep = dedup(&keys, &table.dedup_key)?;
    let duplicates = keep.as_ref().map_or(0, |k| keys.num_rows() - k.len());
    let clustered = cluster(&batches, &keys, keep, table)?;
    drop(keys);
    let rows_per_file = ((table.target_file_size as f64 / source_bytes_per_row) as usize).max(1024);
    let files = file_ranges(&clustered.partitions, rows_per_file);
    // Columns whose values hardly repeat skip the dictionary, judged on the largest file's rows.
    let plain = match files.iter().max_by_key(|f| (f.rows.len(), std::cmp::Reverse(f.rows.start))) {
        Some(f) => {
            let sample = clustered.gather(&batches, f.rows.start..f.rows.end.min(f.rows.start + SAMPLE_ROWS))?;
            encoding::plain_columns(&sample, f.rows.len())
        }
        None => vec![],
    };
    let props = parquet::with_plain_columns(
        parquet::writer_properties(crate::table::terms::parse_compression(&table.compression)?, cfg.row_group_rows),
        plain,
    );
    let keys = table.dedup_key.iter().filter(|k| !k.contains('.'));
    let props = parquet::with_page_index(props, keys.map(|k| k.as_str().into()).collect());
    let ptype = table.spec.partition_type(&table.schema)?;
    let sort_order_id = (!table.sort_order.is_unsorted()).then_some(table.sort_order.order_id as i32);
    // Rows are gathered about an eighth of the batch at a time: small files a slab of several
    // per gather (one gather per small file costs a call's setup per column), a large file in
    // pieces written as they are gathered; the batch is never held twice whole.
    let total = clustered.partitions.last().map_or(0, |(r, _)| r.end);
    let chunk = (total / 8).max(avro::BATCH_ROWS);
    let mut emit = |f: &FileRange, pieces: &mut dyn Iterator<Item = Result<RecordBatch>>| -> Result<()> {
        let (body, metrics) = parquet::write_parquet(pieces, &table.arrow_schema, &table.schema, props.clone())?;
        let ppath = partition_path(&table.spec, &table.schema, f.value);
        let path = data_file_uri(&table.location, &ppath, batch_key, f.part_no, f.seq, &body);
        sink(DataFileMeta::new(path, body.len() as u64, f.value, &ptype, &metrics, sort_order_id)?, body)
    };
    for slab in slabs(&files, chunk) {
        match slab {
            [big] if big.rows.len() > chunk => {
                let starts = (big.rows.start..big.rows.end).step_by(chunk);
                emit(big, &mut starts.map(|s| clustered.gather(&batches, s..(s + chunk).min(big.rows.end))))?;
            }
            _ => {
                let first = slab.first().map_or(0, |f| f.rows.start);
                let rows = clustered.gather(&batches, first..slab.last().map_or(0, |f| f.rows.end))?;
                for f in slab {
                    emit(f, &mut std::iter::once(Ok(rows.slice(f.rows.start - first, f.rows.len()))))?;
                }
            }
        }
    }
    Ok(duplicates)
}

/// One data file of a writer batch: its rows in the clustered order and its partition.
struct FileRange<'a> {
    part_no: usize,
    seq: usize,
    rows: std::ops::Range<usize>,
    value: &'a iceberg::spec::Struct,
}

/// Cuts each partition into files of at most `rows_per_file` rows.
fn file_ranges(
    partitions: &[(std::ops::Range<usize>, iceberg::spec::Struct)],
    rows_per_file: usize,
) -> Vec<FileRange<'_>> {
    let mut out = vec![];
    for (part_no, (range, value)) in partitions.iter().enumerate() {
        let starts = (range.start..range.end).step_by(rows_per_file.max(1));
        for (seq, start) in starts.enumerate() {
            out.push(FileRange { part_no, seq, rows: start..(start + rows_per_file).min(range.end), value });
        }
    }
    out
}

/// Groups consecutive files into slabs of up to about `rows` rows; a file of more than `rows`
/// rows is a slab of its own.
fn slabs<'a, 'b>(files: &'b [FileRange<'a>], rows: usize) -> Vec<&'b [FileRange<'a>]> {
    let mut out = vec![];
    let mut start = 0;
    for (i, f) in files.iter().enumerate() {
        if f.rows.len() > rows && start < i {
            out.push(&files[start..i]); // close the slab before a big file
            start = i;
        }
        let last = i + 1 == files.len();
        if last || f.rows.len() > rows || f.rows.end - files[start].rows.start >= rows {
            out.push(&files[start..=i]);
            start = i + 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use iceberg::spec::Struct;

    use super::{file_ranges, slabs};

    #[test]
    fn files_group_into_slabs_and_a_big_file_stands_alone() {
        let parts = vec![(0..10, Struct::empty()), (10..15, Struct::empty()), (15..100, Struct::empty())];
        let files = file_ranges(&parts, 40);
        let shape: Vec<(usize, usize, std::ops::Range<usize>)> =
            files.iter().map(|f| (f.part_no, f.seq, f.rows.clone())).collect();
        assert_eq!(shape, vec![(0, 0, 0..10), (1, 0, 10..15), (2, 0, 15..55), (2, 1, 55..95), (2, 2, 95..100)]);
        let grouped: Vec<Vec<(usize, usize)>> =
            slabs(&files, 12).iter().map(|s| s.iter().map(|f| (f.part_no, f.seq)).collect()).collect();
        assert_eq!(grouped, vec![vec![(0, 0), (1, 0)], vec![(2, 0)], vec![(2, 1)], vec![(2, 2)]]);
        let all: usize = slabs(&files, 1000).iter().map(|s| s.len()).sum();
        assert_eq!(all, files.len(), "every file in exactly one slab");
    }
}
