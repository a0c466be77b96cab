//! The dedup keys of a compaction run's references: which of a task's input keys older files
//! hold, so the task drops its inputs' later copies.
//!
//! A task's memory is bounded by its own inputs, not by its references: it holds the set of its
//! inputs' keys and streams each reference's key columns past it, keeping only the keys found.
//! A reference is read with ranged GETs of its footer and its key columns only (a file smaller
//! than the footer read comes whole with it). A reference that several of the run's tasks name
//! (the tasks of a hot partition's chain all reference the partition's compacted files, and each
//! the inputs of the tasks before it) is read once and its keys kept for the others, while the
//! keys kept stay under the run's budget; past it, each task streams it again. (The budget is
//! checked before a file is read: the keys kept may pass it by one file per task running.) A file's keys
//! stay until the last task that references it has taken them. A task probes several
//! references at once, but reads one whole key column that other tasks want at a time: its
//! memory for them stays that of one column, plus the narrow probes' pages and the whole columns
//! no other task wants (a late task's window), each at most a column, 8 at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arrow_array::{Array, BooleanArray, RecordBatch};
use arrow_row::{RowConverter, SortField};
use arrow_schema::SchemaRef;
use futures::{StreamExt as _, TryStreamExt};
use hashbrown::HashSet;
use iceberg::spec::PrimitiveLiteral;
use parquet::arrow::arrow_reader::{ArrowReaderBuilder, ArrowReaderMetadata, ArrowReaderOptions, RowSelection};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::PageIndexPolicy;
use tokio::sync::OnceCell;
use tracing::debug;

use super::deletes::Loaded;
use super::prune::{KeyBounds, Probe};
use super::{LiveFile, Task};
use crate::convert::conform;
use crate::pipeline::cluster::column_by_path;
use crate::pipeline::ranged::{Ranged, Traffic};
use crate::ports::ObjectStore;
use crate::table::WriterTable;
use crate::{Error, Result};

/// The row encodings of one file's non-null keys, kept for the run's tasks; what they cost
/// counts in the run's kept bytes while they live.
struct FileKeys {
    keys: Vec<Box<[u8]>>,
    bytes: usize,
    kept: Arc<AtomicUsize>,
}

impl FileKeys {
    fn new(keys: Vec<Box<[u8]>>, kept: Arc<AtomicUsize>) -> Self {
        let bytes = keys.iter().map(|k| k.len() + KEY_OVERHEAD).sum();
        kept.fetch_add(bytes, Ordering::Relaxed);
        FileKeys { keys, bytes, kept }
    }
}

impl Drop for FileKeys {
    fn drop(&mut self) {
        self.kept.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// A set of key row encodings.
pub(super) type KeySet = HashSet<Box<[u8]>>;

/// What reading reference keys cost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct KeyReads {
    /// Reference files read (those read already for another task of the run and kept are not
    /// counted).
    pub files: usize,
    /// Their sizes: what whole reads would have cost.
    pub file_bytes: u64,
    /// Bytes read: their footers (with the key pages' index) and key column pages.
    pub read: u64,
    /// The GETs that read them.
    pub requests: u64,
    /// References not read: their key bounds hold none of the task's keys.
    pub skipped: usize,
}

impl KeyReads {
    fn add(&mut self, other: KeyReads) {
        self.files += other.files;
        self.file_bytes += other.file_bytes;
        self.read += other.read;
        self.requests += other.requests;
        self.skipped += other.skipped;
    }
}

/// A task's level-0 keys: the set looked for, and the probes of the key index.
pub(super) struct Mine {
    keys: KeySet,
    /// The probe of the rows that are not late, for the references before the chain's; `None`
    /// when every row is late (those references are not read for it).
    probe: Option<Probe>,
    /// The probe of every row, late ones too, for the chain's references (when some are late).
    chain: Option<Probe>,
}

impl Mine {
    /// The probe for a reference of the task's chain (`chain`) or an older file.
    fn probe_for(&self, chain: bool) -> Option<&Probe> {
        match chain {
            true => self.chain.as_ref().or(self.probe.as_ref()),
            false => self.probe.as_ref(),
        }
    }
}

/// What the index knows of a reference before reading it.
struct Reference {
    size: u64,
    bounds: KeyBounds,
}

/// A run's reference keys: read on a task's demand, kept for the run's other tasks within a
/// budget.
pub(super) struct KeyIndex {
    table: Arc<WriterTable>,
    store: Arc<dyn ObjectStore>,
    converter: Arc<RowConverter>,
    /// Sizes (a ranged read of the footer starts from the end) and key bounds of the references.
    refs: HashMap<String, Reference>,
    files: Mutex<HashMap<String, Entry>>,
    /// Bytes of keys kept for other tasks at most, and kept now.
    budget: usize,
    kept: Arc<AtomicUsize>,
}

struct Entry {
    keys: Arc<OnceCell<Arc<FileKeys>>>,
    /// Tasks of the run that have yet to take this file's keys.
    users: usize,
    /// Whether a task has taken to read and keep them for the others.
    shared: bool,
}

/// A task's claim on one reference: its keys if kept (or to be kept) for other tasks.
enum Claim {
    /// Read (or take the kept keys) and keep them for the tasks still to come.
    Shared(Arc<OnceCell<Arc<FileKeys>>>),
    /// Stream it past the task's keys, keeping nothing.
    Stream,
}

impl KeyIndex {
    /// The index for running `tasks` of `table`, whose live files are `live` (those not there
    /// are looked up when read), keeping at most `budget` bytes of keys for references that
    /// several tasks name.
    pub(super) fn new(
        table: Arc<WriterTable>,
        store: Arc<dyn ObjectStore>,
        live: &[LiveFile],
        tasks: &[Task],
        budget: usize,
    ) -> Result<Self> {
        let converter = Arc::new(key_converter(&table)?);
        let mut files: HashMap<String, Entry> = HashMap::new();
        if !table.dedup_key.is_empty() {
            for path in tasks.iter().flat_map(|t| &t.references) {
                let e = files.entry(path.clone()).or_insert_with(|| Entry {
                    keys: Arc::default(),
                    users: 0,
                    shared: false,
                });
                e.users += 1;
            }
        }
        let refs = live
            .iter()
            .filter(|f| files.contains_key(&f.path))
            .map(|f| (f.path.clone(), Reference { size: f.size, bounds: f.key_bounds.clone() }))
            .collect();
        let kept = Arc::new(AtomicUsize::new(0));
        Ok(KeyIndex { table, store, converter, refs, files: Mutex::new(files), budget, kept })
    }

    /// The keys of `young` and `late`, `task`'s decoded level-0 rows (rows without a key left
    /// out); none if the task has no references or the table no dedup key. Late rows are
    /// probed only against the chain's references; all are looked for wherever a read finds
    /// them (an older file's copy of a late key is as much an older copy).
    pub(super) fn keys_of(&self, task: &Task, young: &[RecordBatch], late: &[RecordBatch]) -> Result<Mine> {
        let mut keys = KeySet::new();
        if self.table.dedup_key.is_empty() || task.references.is_empty() {
            return Ok(Mine { keys, probe: Some(Probe::new(&self.table, &[])?), chain: None });
        }
        for b in young.iter().chain(late) {
            let (rows, keyless) = key_rows(&self.table, &self.converter, b)?;
            keys.extend((0..b.num_rows()).filter(|i| !keyless(*i)).map(|i| Box::from(rows.row(i).data())));
        }
        if late.is_empty() {
            return Ok(Mine { keys, probe: Some(Probe::new(&self.table, young)?), chain: None });
        }
        let on_time = young.iter().any(|b| b.num_rows() > 0);
        let probe = if on_time { Some(Probe::new(&self.table, young)?) } else { None };
        let chain = Some(Probe::new(&self.table, &[young, late].concat())?);
        Ok(Mine { keys, probe, chain })
    }

    /// Which of `mine` (a task's input keys) `task`'s references hold (their rows that `deletes`
    /// delete left out), and what reading them cost this call. Call it once per task.
    ///
    /// The key index (compact/prune.rs) rules out first the references whose key bounds hold
    /// none of `mine`, then, of the others, the pages whose range holds none: those are read
    /// for this task alone. A reference it cannot narrow is read whole (its key columns) and,
    /// if other tasks name it, kept for them within the budget.
    pub(super) async fn found(
        &self,
        task: &Task,
        mine: &Mine,
        deletes: &Loaded,
        identity: &[(i32, PrimitiveLiteral)],
    ) -> Result<(Found, KeyReads)> {
        let mut found = Found { converter: self.converter.clone(), keys: KeySet::new() };
        let mut cost = KeyReads::default();
        if self.table.dedup_key.is_empty() {
            return Ok((found, cost));
        }
        // References probed REFERENCES_IN_FLIGHT at once (one at a time, a task whose late keys
        // reach a window of files waited a first byte per footer and per page range in turn),
        // but whole key columns one at a time (below).
        let wide = tokio::sync::Semaphore::new(1);
        let probes: Vec<_> = task
            .references
            .iter()
            .enumerate()
            .map(|(i, path)| {
                self.probe(path, mine.probe_for(i >= task.chain_from), &mine.keys, deletes, identity, &wide)
            })
            .collect();
        let mut each = futures::stream::iter(probes).buffer_unordered(REFERENCES_IN_FLIGHT);
        while let Some((keys, read)) = each.try_next().await? {
            found.keys.extend(keys);
            cost.add(read);
        }
        Ok((found, cost))
    }

    /// The keys of `keys` that the reference at `path` holds, as far as `probe` looks (`None`:
    /// not at all), and what finding them cost.
    async fn probe(
        &self,
        path: &str,
        probe: Option<&Probe>,
        keys: &KeySet,
        deletes: &Loaded,
        identity: &[(i32, PrimitiveLiteral)],
        wide: &tokio::sync::Semaphore,
    ) -> Result<(Vec<Box<[u8]>>, KeyReads)> {
        let mut cost = KeyReads::default();
        let of = |kept: &FileKeys| kept.keys.iter().filter(|k| keys.contains(&k[..])).cloned().collect::<Vec<_>>();
        let Some(probe) = probe else {
            // Only late keys, which are not looked for in this reference.
            self.checkout(path);
            cost.skipped += 1;
            return Ok((vec![], cost));
        };
        if let Some(r) = self.refs.get(path)
            && !probe.may_hold(&r.bounds)
        {
            self.checkout(path);
            cost.skipped += 1;
            return Ok((vec![], cost));
        }
        if let Some(kept) = self.kept_for(path) {
            self.checkout(path);
            return Ok((of(&kept), cost));
        }
        // Pages are worth pruning when the probe can rule some out and rows are not deleted by
        // position (their ordinals would need every row). The footer is then read first, for
        // this task; else it is read with the keys, by whichever task reads them.
        let pages = probe.active() && !deletes.positional(path);
        let mut opened = None;
        let mut selection = None;
        if pages {
            let (file, read) = self.open(path, true).await?;
            cost.add(read);
            selection = probe.selection(&file.meta, file.how);
            opened = Some(file);
        }
        let rows = opened.as_ref().map_or(0, |f| f.meta.metadata().file_metadata().num_rows().max(0) as usize);
        let narrow = selection.as_ref().is_some_and(|s| s.row_count() * 2 < rows);
        // A whole key column that other tasks want too is read by one probe of the task at a
        // time, and whether its keys are kept is decided only then: the budget check sees what
        // the task's last one kept, so the keys kept pass the budget by one file per task at
        // most, as with probes in turn. (One no other task wants, as a late task's window, is
        // streamed side by side.)
        let _one = match narrow || !self.wanted_by_others(path) {
            true => None,
            false => Some(wide.acquire().await.map_err(|e| Error::internal(format!("key reads: {e}")))?),
        };
        let mut out = vec![];
        match self.checkout(path) {
            Claim::Shared(cell) if cell.get().is_some() || !narrow => {
                let kept = cell
                    .get_or_try_init(|| async {
                        let f = self.opened(path, opened, &mut cost).await?;
                        let mut kept = vec![];
                        cost.add(self.stream(f, None, deletes, identity, |k| kept.push(Box::from(k))).await?);
                        Ok::<_, Error>(Arc::new(FileKeys::new(kept, self.kept.clone())))
                    })
                    .await?;
                out = of(kept);
            }
            _ => {
                let f = self.opened(path, opened, &mut cost).await?;
                let read = self.stream(f, selection, deletes, identity, |k| {
                    if keys.contains(k) {
                        out.push(Box::from(k));
                    }
                });
                cost.add(read.await?);
            }
        }
        Ok((out, cost))
    }

    /// Whether a task other than the caller has yet to take `path`'s keys (so they may be kept).
    fn wanted_by_others(&self, path: &str) -> bool {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files.get(path).is_some_and(|e| e.users > 1)
    }

    /// The keys of `path` kept for the run already, if they are.
    fn kept_for(&self, path: &str) -> Option<Arc<FileKeys>> {
        let files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        files.get(path).filter(|e| e.shared).and_then(|e| e.keys.get().cloned())
    }

    /// `opened`, or `path` opened now (its footer without the page index).
    async fn opened<'a>(&'a self, path: &str, opened: Option<Opened<'a>>, cost: &mut KeyReads) -> Result<Opened<'a>> {
        match opened {
            Some(f) => Ok(f),
            None => {
                let (f, read) = self.open(path, false).await?;
                cost.add(read);
                Ok(f)
            }
        }
    }

    /// How this task reads `path`; the index forgets a file once its last user has it (and
    /// its keys go when the last task holding them is done).
    fn checkout(&self, path: &str) -> Claim {
        let mut files = self.files.lock().unwrap_or_else(|e| e.into_inner());
        let Some(e) = files.get_mut(path) else {
            // Not counted (a task outside the plan the index was made for): read for this one.
            return Claim::Stream;
        };
        e.users -= 1;
        // Kept (or being read) for the others already, or wanted by another task still and the
        // budget allows.
        e.shared = e.shared || (e.users > 0 && self.kept.load(Ordering::Relaxed) < self.budget);
        let claim = if e.shared { Claim::Shared(e.keys.clone()) } else { Claim::Stream };
        if e.users == 0 {
            files.remove(path);
        }
        claim
    }

    /// Opens reference `path`: its footer (with its page index if `pages`), by a ranged read of
    /// its tail; what that cost.
    async fn open(&self, path: &str, pages: bool) -> Result<(Opened<'_>, KeyReads)> {
        let size = match self.refs.get(path) {
            Some(r) => r.size,
            None => self.store.head(path).await?.size,
        };
        let fetched = Arc::new(Traffic::default());
        let mut reader = Ranged::new(self.store.clone(), path, size, fetched.clone());
        let policy = if pages { PageIndexPolicy::Optional } else { PageIndexPolicy::Skip };
        let options = ArrowReaderOptions::new().with_page_index_policy(policy);
        let meta = ArrowReaderMetadata::load_async(&mut reader, options).await.map_err(port_error)?;
        let how = self.table.file_match(path, meta.schema().fields())?;
        let cost = KeyReads {
            read: fetched.bytes.swap(0, Ordering::Relaxed),
            requests: fetched.gets.swap(0, Ordering::Relaxed),
            ..Default::default()
        };
        Ok((Opened { path: path.to_string(), reader, fetched, meta, how }, cost))
    }

    /// Streams an opened file's non-null keys of rows `deletes` leave to `each` (of the rows
    /// `selection` picks, if any): its key column pages (and the columns of equality deletes
    /// that apply to it), by ranged reads. A column the file lacks that an identity partition
    /// gives reads as its `identity` value.
    async fn stream(
        &self,
        file: Opened<'_>,
        selection: Option<RowSelection>,
        deletes: &Loaded,
        identity: &[(i32, PrimitiveLiteral)],
        mut each: impl FnMut(&[u8]),
    ) -> Result<KeyReads> {
        let Opened { path, reader, fetched, meta, how } = file;
        let path = path.as_str();
        let size = reader.size;
        let mut cost = KeyReads { files: 1, file_bytes: size, ..Default::default() };
        if selection.as_ref().is_some_and(|s| !s.selects_any()) {
            debug!(file = path, size, "no page of the reference may hold a key of the task");
            return Ok(cost);
        }
        debug_assert!(selection.is_none() || !deletes.positional(path), "positions need every row");
        let builder = ParquetRecordBatchStreamBuilder::new_with_metadata(reader, meta);
        let mut cols = key_columns(&self.table);
        let schema = &self.table.arrow_schema;
        for id in deletes.columns_of(path) {
            cols.extend(schema.fields().iter().position(|f| conform::field_id(f) == Some(id)));
        }
        cols.sort_unstable();
        cols.dedup();
        let expected = Arc::new(schema.project(&cols)?);
        let fill = super::identity::constants(&expected, builder.schema().fields(), identity, how);
        let builder = project(builder, &expected, how).with_batch_size(8192);
        let builder = match selection {
            Some(s) => builder.with_row_selection(s),
            None => builder,
        };
        let mut stream = builder.build()?;
        let (mut n, mut at) = (0, 0u64);
        while let Some(b) = stream.try_next().await.map_err(port_error)? {
            let b = if fill.is_empty() { b } else { super::identity::with_constants(b, &fill, path)? };
            let b = conform::conform_batch_filling(&b, &expected, how, &self.table.defaults.0)
                .map_err(|e| Error::data_from(format!("data file {path} does not fit the table's schema"), e))?;
            let rows = b.num_rows() as u64;
            let (b, _) = deletes.apply(path, at, b)?;
            at += rows;
            let (rows, keyless) = key_rows(&self.table, &self.converter, &b)?;
            for i in (0..b.num_rows()).filter(|i| !keyless(*i)) {
                each(rows.row(i).data());
                n += 1;
            }
        }
        let bytes = fetched.bytes.load(Ordering::Relaxed);
        debug!(file = path, size, bytes, keys = n, "reference keys read");
        cost.read = bytes;
        cost.requests = fetched.gets.load(Ordering::Relaxed);
        Ok(cost)
    }
}

/// A reference whose footer is read.
struct Opened<'a> {
    path: String,
    reader: Ranged,
    /// What `reader` fetched since the footer.
    fetched: Arc<Traffic>,
    meta: ArrowReaderMetadata,
    how: conform::Match<'a>,
}

/// Memory a kept key costs beyond its bytes: its box (pointer and length) and allocation.
const KEY_OVERHEAD: usize = 32;

/// The keys of a task's inputs that its references hold.
pub(super) struct Found {
    converter: Arc<RowConverter>,
    keys: KeySet,
}

impl Found {
    /// `batches` without the rows whose key a reference holds.
    pub(super) fn drop_from(&self, table: &WriterTable, batches: Vec<RecordBatch>) -> Result<Vec<RecordBatch>> {
        if self.keys.is_empty() {
            return Ok(batches);
        }
        batches.into_iter().map(|b| self.drop_taken(table, b)).collect()
    }

    fn drop_taken(&self, table: &WriterTable, b: RecordBatch) -> Result<RecordBatch> {
        let keep: BooleanArray = {
            let (rows, keyless) = key_rows(table, &self.converter, &b)?;
            (0..b.num_rows()).map(|i| Some(keyless(i) || !self.keys.contains(rows.row(i).data()))).collect()
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

/// References a task probes at once.
const REFERENCES_IN_FLIGHT: usize = 8;

/// `builder` reading only the file's columns that `expected`'s fields name, matched as `how`
/// says.
fn project<T>(builder: ArrowReaderBuilder<T>, expected: &SchemaRef, how: conform::Match<'_>) -> ArrowReaderBuilder<T> {
    let file = builder.schema().clone();
    let roots = expected.fields().iter().filter_map(|e| conform::position(file.fields(), e, "", how));
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots.collect::<Vec<_>>());
    builder.with_projection(mask)
}
