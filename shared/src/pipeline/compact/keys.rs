//! The dedup keys of a compaction run's references: which keys older files hold, so a task drops
//! its inputs' later copies.
//!
//! A reference is read with ranged GETs of its footer and its key columns only (a file smaller
//! than the footer read comes whole with it), and once per run however many of the run's tasks
//! reference it (the tasks of a hot partition's
//! chain all reference the partition's compacted files, and each the inputs of the tasks before
//! it). A file's keys stay in the run's index until the last task that references it has taken
//! them, so the index holds the keys of the partitions in progress, not of the whole table.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, TryStreamExt};
use hashbrown::HashSet;
use parquet::arrow::arrow_reader::{ArrowReaderBuilder, ArrowReaderOptions};
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use tokio::sync::OnceCell;
use tracing::debug;

use super::Task;
use crate::convert::conform;
use crate::pipeline::cluster::column_by_path;
use crate::ports::ObjectStore;
use crate::table::WriterTable;
use crate::{Error, Result};

/// The row encodings of one file's non-null keys.
pub(super) type FileKeys = Vec<Box<[u8]>>;

/// What reading reference keys cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct KeyReads {
    /// Reference files read (those another task of the run had read already are not counted).
    pub files: usize,
    /// Their sizes: what whole reads would have cost.
    pub file_bytes: u64,
    /// Bytes read: their footers and key column chunks.
    pub read: u64,
}

/// A run's reference keys, read on first use and shared by the run's tasks.
pub(super) struct KeyIndex {
    table: Arc<WriterTable>,
    store: Arc<dyn ObjectStore>,
    converter: Arc<RowConverter>,
    /// Sizes of the live files (a ranged read of the footer starts from the end).
    sizes: HashMap<String, u64>,
    files: Mutex<HashMap<String, Entry>>,
}

struct Entry {
    keys: Arc<OnceCell<Arc<FileKeys>>>,
    /// Tasks of the run that have yet to take this file's keys.
    users: usize,
}

impl KeyIndex {
    /// The index for running `tasks` of `table`, whose live files have `sizes`.
    pub(super) fn new(
        table: Arc<WriterTable>,
        store: Arc<dyn ObjectStore>,
        sizes: HashMap<String, u64>,
        tasks: &[Task],
    ) -> Result<Self> {
        let converter = Arc::new(key_converter(&table)?);
        let mut files: HashMap<String, Entry> = HashMap::new();
        if !table.dedup_key.is_empty() {
            for path in tasks.iter().flat_map(|t| &t.references) {
                let e = files.entry(path.clone()).or_insert_with(|| Entry { keys: Arc::default(), users: 0 });
                e.users += 1;
            }
        }
        Ok(KeyIndex { table, store, converter, sizes, files: Mutex::new(files) })
    }

    /// The keys of `task`'s references (none if the table has no dedup key), and what reading
    /// them cost this call. Call it once per task.
    pub(super) async fn taken(&self, task: &Task) -> Result<(Taken, KeyReads)> {
        let mut taken = Taken { converter: self.converter.clone(), files: vec![] };
        let mut cost = KeyReads::default();
        if self.table.dedup_key.is_empty() {
            return Ok((taken, cost));
        }
        for path in &task.references {
            let cell = self.checkout(path);
            let keys = cell
                .get_or_try_init(|| async {
                    let (keys, read) = self.read(path).await?;
                    cost.read += read.read;
                    cost.file_bytes += read.file_bytes;
                    cost.files += 1;
                    Ok::<_, Error>(Arc::new(keys))
                })
                .await?;
            taken.files.push(keys.clone());
        }
        Ok((taken, cost))
    }

    /// The cell of `path`'s keys; the index forgets it once its last user has it.
    fn checkout(&self, path: &str) -> Arc<OnceCell<Arc<FileKeys>>> {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let Some(e) = files.get_mut(path) else {
            // Not counted (a task outside the plan the index was made for): read for this one.
            return Arc::default();
        };
        e.users -= 1;
        let cell = e.keys.clone();
        if e.users == 0 {
            files.remove(path);
        }
        cell
    }

    /// Reads one file's keys: its footer and key column chunks, by ranged reads.
    async fn read(&self, path: &str) -> Result<(FileKeys, KeyReads)> {
        let size = match self.sizes.get(path) {
            Some(s) => *s,
            None => self.store.head(path).await?.size,
        };
        let fetched = Arc::new(AtomicU64::new(0));
        let reader = Ranged {
            store: self.store.clone(),
            uri: path.to_string(),
            size,
            fetched: fetched.clone(),
            tail: Mutex::default(),
        };
        let builder = ParquetRecordBatchStreamBuilder::new(reader).await.map_err(port_error)?;
        let cols = key_columns(&self.table);
        let expected = Arc::new(self.table.arrow_schema.project(&cols)?);
        let mut stream = project(builder, &expected).with_batch_size(8192).build()?;
        let mut keys = vec![];
        while let Some(b) = stream.try_next().await.map_err(port_error)? {
            let b = conform::conform_batch_with(&b, &expected, conform::Match::Id)
                .map_err(|e| Error::Config(format!("data file {path} does not fit the table's schema: {e}")))?;
            let (rows, keyless) = key_rows(&self.table, &self.converter, &b)?;
            keys.extend((0..b.num_rows()).filter(|i| !keyless(*i)).map(|i| Box::from(rows.row(i).data())));
        }
        let bytes = fetched.load(Ordering::Relaxed);
        debug!(file = path, size, bytes, keys = keys.len(), "reference keys read");
        Ok((keys, KeyReads { files: 1, file_bytes: size, read: bytes }))
    }
}

/// The keys a task's references hold.
pub(super) struct Taken {
    converter: Arc<RowConverter>,
    files: Vec<Arc<FileKeys>>,
}

impl Taken {
    /// `batches` without the rows whose key a reference holds.
    pub(super) fn drop_from(&self, table: &WriterTable, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
        let keys: HashSet<&[u8]> = self.files.iter().flat_map(|f| f.iter().map(|k| &k[..])).collect();
        if keys.is_empty() {
            return Ok(batches);
        }
        batches.into_iter().map(|b| self.drop_taken(table, b, &keys)).collect()
    }

    fn drop_taken(&self, table: &WriterTable, b: RecordBatch, keys: &HashSet<&[u8]>) -> Result<RecordBatch> {
        let keep: BooleanArray = {
            let (rows, keyless) = key_rows(table, &self.converter, &b)?;
            (0..b.num_rows()).map(|i| Some(keyless(i) || !keys.contains(rows.row(i).data()))).collect()
        };
        if keep.true_count() == b.num_rows() {
            return Ok(b);
        }
        debug!(dropped = b.num_rows() - keep.true_count(), "rows whose key an older file holds dropped");
        Ok(arrow_select::filter::filter_record_batch(&b, &keep)?)
    }
}

/// The top-level columns holding the table's dedup key.
fn key_columns(table: &WriterTable) -> Vec<usize> {
    let mut idx: Vec<usize> = table
        .dedup_key
        .iter()
        .filter_map(|k| table.arrow_schema.index_of(k.split('.').next().unwrap_or_default()).ok())
        .collect();
    idx.sort_unstable();
    idx.dedup();
    idx
}

fn key_converter(table: &WriterTable) -> Result<RowConverter> {
    let sample = RecordBatch::new_empty(Arc::new(table.arrow_schema.project(&key_columns(table))?));
    let fields = table
        .dedup_key
        .iter()
        .map(|k| Ok(SortField::new(column_by_path(&sample, k)?.data_type().clone())))
        .collect::<Result<Vec<_>>>()?;
    Ok(RowConverter::new(fields)?)
}

/// A batch's key rows and which rows have no key (a null in a key column).
fn key_rows(
    table: &WriterTable,
    converter: &RowConverter,
    b: &RecordBatch,
) -> Result<(arrow_row::Rows, impl Fn(usize) -> bool)> {
    let cols = table.dedup_key.iter().map(|k| column_by_path(b, k)).collect::<Result<Vec<_>>>()?;
    let rows = converter.convert_columns(&cols)?;
    let nulls = cols.iter().fold(None, |acc: Option<arrow_buffer::NullBuffer>, c| {
        arrow_buffer::NullBuffer::union(acc.as_ref(), c.logical_nulls().as_ref())
    });
    Ok((rows, move |i: usize| nulls.as_ref().is_some_and(|n| n.is_null(i))))
}

/// The store's error where the reader failed on one (so it stays retryable, or `NotFound`).
fn port_error(e: parquet::errors::ParquetError) -> Error {
    match e {
        parquet::errors::ParquetError::External(inner) => match inner.downcast::<crate::PortError>() {
            Ok(port) => Error::Port(*port),
            Err(other) => Error::Parquet(parquet::errors::ParquetError::External(other)),
        },
        e => Error::Parquet(e),
    }
}

/// Footer bytes read in one go: most footers fit, sparing a second read.
const FOOTER_HINT: usize = 64 << 10;

/// A Parquet file read through the object store port by byte ranges. The largest range read
/// so far from the file's end (the footer read) is kept: a small file's key columns are in it.
struct Ranged {
    store: Arc<dyn ObjectStore>,
    uri: String,
    size: u64,
    fetched: Arc<AtomicU64>,
    tail: Mutex<Option<(u64, Bytes)>>,
}

impl Ranged {
    async fn range(&self, range: Range<u64>) -> parquet::errors::Result<Bytes> {
        if let Some((start, tail)) = &*self.tail.lock().unwrap_or_else(|e| e.into_inner())
            && range.start >= *start
            && range.end <= self.size
        {
            return Ok(tail.slice((range.start - start) as usize..(range.end - start) as usize));
        }
        let bytes = self
            .store
            .get_range(&self.uri, range.clone())
            .await
            .map_err(|e| parquet::errors::ParquetError::External(Box::new(e)))?;
        self.fetched.fetch_add(bytes.len() as u64, Ordering::Relaxed);
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

    fn get_byte_ranges(&mut self, ranges: Vec<Range<u64>>) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        let this = &*self;
        futures::future::try_join_all(ranges.into_iter().map(move |r| this.range(r))).boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        async move {
            let size = self.size;
            let reader = ParquetMetaDataReader::new().with_prefetch_hint(Some(FOOTER_HINT));
            Ok(Arc::new(reader.load_and_finish(self, size).await?))
        }
        .boxed()
    }
}

/// `builder` reading only the file's columns that `expected`'s fields name, matched by field id.
fn project<T>(builder: ArrowReaderBuilder<T>, expected: &SchemaRef) -> ArrowReaderBuilder<T> {
    let file = builder.schema().clone();
    let roots = expected.fields().iter().filter_map(|e| {
        let id = conform::field_id(e)?;
        file.fields().iter().position(|f| conform::field_id(f) == Some(id))
    });
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.collect::<Vec<_>>());
    builder.with_projection(mask)
}
