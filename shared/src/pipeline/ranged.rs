//! A Parquet file read by byte ranges through the object store port (a compaction's reference
//! files, the footers the committer checks): the footer with a hint, then the ranges a reader
//! asks for, those close together fetched by one GET; what that cost.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};

use crate::ports::ObjectStore;

/// Bytes and GETs a reader fetched.
#[derive(Default)]
pub(crate) struct Traffic {
    pub(crate) bytes: AtomicU64,
    pub(crate) gets: AtomicU64,
}

/// Ranges of one file closer than this are fetched by one GET. The break-even of a GET's price
/// ($0.0004 per 1,000) against the Lambda time the bytes between take (a 3,008 MB compactor
/// reading ~88 MB/s per connection): ~0.9 MB. Late keys scatter over the key pages of the files
/// of their hours, so a task that fetched each page alone paid a GET per late key.
const COALESCE_GAP: u64 = 1 << 20;

/// `ranges` sorted and merged where they overlap or lie less than [`COALESCE_GAP`] apart: each
/// of `ranges` lies within one of the result, which is sorted and disjoint.
fn coalesce(ranges: &[Range<u64>]) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.to_vec();
    sorted.sort_unstable_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = vec![];
    for r in sorted {
        match out.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(COALESCE_GAP) => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Footer bytes read in one go: most footers fit, sparing a second read.
const FOOTER_HINT: usize = 64 << 10;

/// A Parquet file read through the object store port by byte ranges. The largest range read
/// so far from the file's end (the footer read) is kept: a small file's key columns are in it.
pub(crate) struct Ranged {
    pub(crate) store: Arc<dyn ObjectStore>,
    pub(crate) uri: String,
    pub(crate) size: u64,
    pub(crate) fetched: Arc<Traffic>,
    tail: Mutex<Option<(u64, Bytes)>>,
}

impl Ranged {
    /// The file at `uri` of `size` bytes, its reads counted in `fetched`.
    pub(crate) fn new(store: Arc<dyn ObjectStore>, uri: &str, size: u64, fetched: Arc<Traffic>) -> Self {
        Ranged { store, uri: uri.to_string(), size, fetched, tail: Mutex::new(None) }
    }

    async fn range(&self, range: Range<u64>) -> parquet::errors::Result<Bytes> {
        self.read(range).await.map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))
    }

    /// The bytes `range` of the file (from the kept tail when it holds them).
    pub(crate) async fn read(&self, range: Range<u64>) -> Result<Bytes, crate::PortError> {
        if let Some((start, tail)) = &*self.tail.lock().unwrap_or_else(|e| e.into_inner())
            && range.start >= *start
            && range.end <= self.size
        {
            return Ok(tail.slice((range.start - start) as usize..(range.end - start) as usize));
        }
        let bytes = self.store.get_range(&self.uri, range.clone()).await?;
        self.fetched.bytes.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.fetched.gets.fetch_add(1, Ordering::Relaxed);
        if range.end == self.size {
            let mut tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
            if tail.as_ref().is_none_or(|(start, _)| range.start < *start) {
                *tail = Some((range.start, bytes.clone()));
            }
        }
        Ok(bytes)
    }
}

impl AsyncFileReader for Ranged {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        self.range(range).boxed()
    }

    /// The ranges, those less than [`COALESCE_GAP`] apart fetched by one GET (the key pages a
    /// selection keeps are often neighbours: a request saved for a few kilobytes more).
    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        let this = &*self;
        let merged = coalesce(&ranges);
        async move {
            let fetched = futures::future::try_join_all(merged.iter().map(|r| this.range(r.clone()))).await?;
            Ok(ranges
                .iter()
                .map(|r| {
                    let at = merged.partition_point(|m| m.end < r.end);
                    let (m, bytes) = (&merged[at], &fetched[at]);
                    bytes.slice((r.start - m.start) as usize..(r.end - m.start) as usize)
                })
                .collect())
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            let size = self.size;
            let (columns, offsets) = options.map_or((PageIndexPolicy::Skip, PageIndexPolicy::Skip), |o| {
                (o.column_index_policy(), o.offset_index_policy())
            });
            let reader = ParquetMetaDataReader::new()
                .with_prefetch_hint(Some(FOOTER_HINT))
                .with_column_index_policy(columns)
                .with_offset_index_policy(offsets);
            Ok(Arc::new(reader.load_and_finish(self, size).await?))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_ranges_are_fetched_together_and_each_lies_within_one() {
        let g = COALESCE_GAP;
        let ranges = vec![3 * g..3 * g + 10, 0..100, 150..300, g + 400..g + 410, 2 * g + 200..2 * g + 300];
        let merged = coalesce(&ranges);
        // 300 -> g + 400 is more than the gap apart; g + 410 -> 2g + 200 and 2g + 300 -> 3g are not
        assert_eq!(merged, vec![0..300, g + 400..3 * g + 10]);
        for r in &ranges {
            assert!(merged.iter().any(|m| m.start <= r.start && r.end <= m.end), "{r:?}");
        }
        assert!(coalesce(&[]).is_empty());
    }
}
