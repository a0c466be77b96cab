//! Row-level deletes that other engines wrote (a `DELETE` or `UPDATE` in Spark, Trino, Athena,
//! Snowflake, ...), as compaction applies them: which delete files apply to which data file,
//! reading them, and dropping the deleted rows from a file's rows as the file is read.
//!
//! Which delete file applies to which data file follows the spec (and Iceberg Java's
//! `DeleteFileIndex`): a position delete file applies to data files of its partition (or to the
//! one file it names, by `referenced_data_file` or equal `file_path` bounds) whose data sequence
//! number is at most its own; an equality delete file to data files of its partition (of every
//! partition if its spec is unpartitioned) whose data sequence number is lower than its own.
//! A position matches a row by the file's path and the row's ordinal in the file; an equality
//! delete a row whose values in its columns all equal one of its rows' (a null equals a null).
//!
//! A task drops the deleted rows of its inputs (its output files hold no deleted row), and reads
//! its references' keys without them: a deleted row's key is not a committed copy (an engine's
//! `UPDATE` deletes a row and writes it again; the new copy is the one that lives). A delete file
//! that applies to no live file but the task's inputs is *dangling* once the task commits: the
//! task asks its commit to remove it, as Java's rewrite removes the delete files it made dangling.
//! Why a rewrite cannot bring a deleted row back when a `DELETE` races it: the committer's checks
//! (`pipeline::commit::rewrite`).
//!
//! Applied: Parquet position and equality delete files of a v2 table (equality deletes on
//! top-level columns). Refused by name, the table left uncompacted: deletion vectors (v3), delete
//! files in other formats, equality deletes on nested or dropped columns.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, BooleanArray, Int64Array, RecordBatch, StringArray};
use arrow_row::{RowConverter, SortField};
use arrow_schema::{DataType, SchemaRef};
use bytes::Bytes;
use iceberg::spec::{DataContentType, DataFileFormat, Datum, ManifestEntry, PrimitiveLiteral, Struct, TableMetadata};
use parquet::arrow::ProjectionMask;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

use super::{LiveFile, Task};
use crate::convert::conform;
use crate::ports::ObjectStore;
use crate::table::{DeleteRef, WriterTable};
use crate::{Error, Result};

/// The field id of a position delete file's `file_path` column (reserved by the spec).
pub(super) const FILE_PATH_ID: i32 = 2147483546;
/// The field id of a position delete file's `pos` column.
pub(super) const POS_ID: i32 = 2147483545;

/// A live delete file as planning sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveDelete {
    /// Path.
    pub path: String,
    /// Bytes.
    pub size: u64,
    /// Deletes it holds.
    pub rows: u64,
    /// Data sequence number.
    pub seq: i64,
    /// Partition spec id.
    pub spec_id: i32,
    /// Partition tuple.
    pub partition: Struct,
    /// Whether it applies to every partition (an equality delete of an unpartitioned spec).
    pub global: bool,
    /// Position or equality.
    pub kind: DeleteKind,
}

/// What a delete file matches rows by.
#[derive(Debug, Clone, PartialEq)]
pub enum DeleteKind {
    /// File path and position.
    Position {
        /// The one data file it names, if it says (`referenced_data_file`, or equal bounds).
        file: Option<String>,
    },
    /// A deletion vector (format v3): a bitmap of positions in a blob of a Puffin file.
    Vector {
        /// The data file it applies to.
        file: String,
        /// Where its blob is in the Puffin file: offset and length.
        offset: i64,
        /// The blob's length.
        length: i64,
    },
    /// Column values.
    Equality {
        /// The columns' field ids.
        ids: Vec<i32>,
    },
}

impl LiveDelete {
    /// The live delete file of entry `e` (of a manifest of spec `spec_id`), or what about it Floe
    /// cannot apply yet.
    pub fn from_entry(meta: &TableMetadata, spec_id: i32, e: &ManifestEntry) -> std::result::Result<Self, String> {
        let f = e.data_file();
        let path = f.file_path().to_string();
        let vector = f.content_offset().is_some() || f.file_format() == DataFileFormat::Puffin;
        let kind = match (vector, f.referenced_data_file(), f.content_offset(), f.content_size_in_bytes()) {
            (true, Some(file), Some(offset), Some(length)) if f.content_type() == DataContentType::PositionDeletes => {
                Some(DeleteKind::Vector { file, offset, length })
            }
            (true, ..) => return Err(format!("a deletion vector without its data file, offset or length ({path})")),
            (false, ..) => None,
        };
        if kind.is_none() && f.file_format() != DataFileFormat::Parquet {
            return Err(format!("delete files in {:?} format ({path}); Floe applies Parquet ones", f.file_format()));
        }
        let kind = match f.content_type() {
            _ if kind.is_some() => kind.expect("a vector"),
            DataContentType::PositionDeletes => {
                let bound = |b: &HashMap<i32, Datum>| match b.get(&FILE_PATH_ID).map(Datum::literal) {
                    Some(PrimitiveLiteral::String(s)) => Some(s.clone()),
                    _ => None,
                };
                let same = bound(f.lower_bounds()).filter(|l| Some(l) == bound(f.upper_bounds()).as_ref());
                DeleteKind::Position { file: f.referenced_data_file().or(same) }
            }
            DataContentType::EqualityDeletes => {
                let ids = f.equality_ids().unwrap_or_default();
                let schema = meta.current_schema();
                let top: HashSet<i32> = schema.as_struct().fields().iter().map(|f| f.id).collect();
                if ids.is_empty() {
                    return Err(format!("an equality delete file without equality ids ({path})"));
                }
                if let Some(id) = ids.iter().find(|id| !top.contains(id)) {
                    let name =
                        schema.name_by_field_id(*id).map_or_else(|| format!("field {id}, dropped"), str::to_string);
                    return Err(format!("equality deletes on a nested or dropped column ({name}; {path})"));
                }
                DeleteKind::Equality { ids }
            }
            DataContentType::Data => return Err(format!("a data file in a delete manifest ({path})")),
        };
        let spec = meta
            .partition_spec_by_id(spec_id)
            .ok_or_else(|| format!("a delete file of partition spec {spec_id}, which the table lacks ({path})"))?;
        let unpartitioned = spec.is_unpartitioned();
        Ok(LiveDelete {
            path,
            size: f.file_size_in_bytes(),
            rows: f.record_count(),
            seq: e.sequence_number().unwrap_or(0),
            spec_id,
            partition: crate::table::widened(f.partition()),
            global: unpartitioned && matches!(kind, DeleteKind::Equality { .. }),
            kind,
        })
    }

    /// Its manifest entry's identity.
    pub fn entry(&self) -> DeleteRef {
        let offset = match &self.kind {
            DeleteKind::Vector { offset, .. } => Some(*offset),
            _ => None,
        };
        DeleteRef { path: self.path.clone(), offset }
    }

    /// Whether it applies to data file `f`.
    pub fn applies(&self, f: &LiveFile) -> bool {
        let scoped =
            self.global || (self.spec_id == f.spec_id && self.partition == crate::table::widened(&f.partition));
        match &self.kind {
            DeleteKind::Position { file: Some(p) } | DeleteKind::Vector { file: p, .. } => {
                *p == f.path && self.seq >= f.seq
            }
            DeleteKind::Position { file: None } => scoped && self.seq >= f.seq,
            DeleteKind::Equality { .. } => scoped && self.seq > f.seq,
        }
    }
}

/// The delete files one task applies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskDeletes {
    /// Each delete file that applies to an input or a reference.
    pub files: Vec<LiveDelete>,
    /// The input or reference files they apply to: indexes into `files`.
    pub of: BTreeMap<String, Vec<usize>>,
    /// Those that apply to no live file but the task's inputs: its commit removes them.
    pub dangling: Vec<DeleteRef>,
}

impl TaskDeletes {
    /// Whether the task applies none.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }
}

/// Gives each of `tasks` the delete files of `deletes` that apply to its inputs and references,
/// all of them live files of `files`. `whole`: `files` are all the table's live files (not a
/// share's), so that a global delete file can be known to be dangling. A task's id then covers
/// its delete files: the same inputs with other deletes are another task.
pub(super) fn attach(tasks: &mut [Task], deletes: &[LiveDelete], files: &[LiveFile], whole: bool) {
    if deletes.is_empty() {
        return;
    }
    let by_path: HashMap<&str, &LiveFile> = files.iter().map(|f| (f.path.as_str(), f)).collect();
    let mut by_partition: HashMap<(i32, Struct), Vec<&LiveFile>> = HashMap::new();
    for f in files {
        by_partition.entry((f.spec_id, crate::table::widened(&f.partition))).or_default().push(f);
    }
    // How many live files each delete file applies to.
    let reach: Vec<usize> = deletes
        .iter()
        .map(|d| match &d.kind {
            DeleteKind::Position { file: Some(p) } | DeleteKind::Vector { file: p, .. } => {
                by_path.get(p.as_str()).filter(|f| d.applies(f)).map_or(0, |_| 1)
            }
            _ if d.global => files.iter().filter(|f| d.applies(f)).count(),
            _ => {
                let key = (d.spec_id, d.partition.clone());
                by_partition.get(&key).map_or(0, |fs| fs.iter().filter(|f| d.applies(f)).count())
            }
        })
        .collect();
    for task in tasks.iter_mut() {
        let mut out = TaskDeletes::default();
        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut on_inputs = vec![0usize; deletes.len()];
        let inputs = task.inputs.iter().map(|f| (f, true));
        let references = task.references.iter().filter_map(|p| by_path.get(p.as_str()).map(|f| (*f, false)));
        for (f, input) in inputs.chain(references) {
            for (i, d) in deletes.iter().enumerate().filter(|(_, d)| d.applies(f)) {
                let at = *index.entry(i).or_insert_with(|| {
                    out.files.push(d.clone());
                    out.files.len() - 1
                });
                out.of.entry(f.path.clone()).or_default().push(at);
                on_inputs[i] += usize::from(input);
            }
        }
        let mut attached: Vec<(usize, usize)> = index.into_iter().collect();
        attached.sort_unstable_by_key(|(_, at)| *at);
        out.dangling = attached
            .iter()
            .filter(|(i, _)| on_inputs[*i] == reach[*i] && (whole || !deletes[*i].global))
            .map(|(i, _)| deletes[*i].entry())
            .collect();
        if !out.is_empty() {
            task.id = super::plan::with_deletes(&task.id, &out);
            task.deletes = out;
        }
    }
}

/// A task's delete files, read: what it drops from each file it reads.
#[derive(Default)]
pub(super) struct Loaded {
    /// Deleted positions of each data file, sorted.
    positions: HashMap<String, Vec<u64>>,
    /// Each equality delete file's rows.
    equality: Vec<EqualitySet>,
    /// The equality sets that apply to each data file.
    equality_of: HashMap<String, Vec<usize>>,
}

/// One equality delete file's rows, encoded in the table's types of its columns.
struct EqualitySet {
    ids: Vec<i32>,
    converter: RowConverter,
    rows: hashbrown::HashSet<Box<[u8]>>,
}

impl Loaded {
    /// Reads `deletes`' files (each once) for `table`.
    pub(super) async fn read(
        store: &dyn ObjectStore,
        table: &WriterTable,
        deletes: &TaskDeletes,
    ) -> Result<(Self, u64)> {
        let mut out = Loaded::default();
        let mut bytes = 0u64;
        let mut equality_at: HashMap<usize, usize> = HashMap::new();
        for (i, d) in deletes.files.iter().enumerate() {
            let body = match &d.kind {
                DeleteKind::Vector { offset, length, .. } => {
                    let range = u64::try_from(*offset).ok().zip(u64::try_from(offset + length).ok());
                    let range = range
                        .ok_or_else(|| Error::data(format!("deletion vector in {} at {offset}+{length}", d.path)))?;
                    store.get_range(&d.path, range.0..range.1).await?
                }
                _ => store.get(&d.path).await?,
            };
            bytes += body.len() as u64;
            match &d.kind {
                DeleteKind::Vector { file, .. } => {
                    let positions = out.positions.entry(file.clone()).or_default();
                    positions.extend(read_vector(&d.path, &body)?);
                }
                DeleteKind::Position { .. } => {
                    let wanted: HashSet<&str> =
                        deletes.of.iter().filter(|(_, ds)| ds.contains(&i)).map(|(p, _)| p.as_str()).collect();
                    read_positions(&d.path, body, &wanted, &mut out.positions)?;
                }
                DeleteKind::Equality { ids } => {
                    equality_at.insert(i, out.equality.len());
                    out.equality.push(read_equality(table, &d.path, body, ids)?);
                }
            }
        }
        for positions in out.positions.values_mut() {
            positions.sort_unstable();
            positions.dedup();
        }
        for (path, ds) in &deletes.of {
            let sets: Vec<usize> = ds.iter().filter_map(|i| equality_at.get(i).copied()).collect();
            if !sets.is_empty() {
                out.equality_of.insert(path.clone(), sets);
            }
        }
        Ok((out, bytes))
    }

    /// Whether rows of `path` are deleted by position (so reading some of its rows needs their
    /// ordinals).
    pub(super) fn positional(&self, path: &str) -> bool {
        self.positions.contains_key(path)
    }

    /// The field ids of the columns that applying the deletes to `path` reads.
    pub(super) fn columns_of(&self, path: &str) -> Vec<i32> {
        let sets = self.equality_of.get(path).into_iter().flatten();
        let mut ids: Vec<i32> = sets.flat_map(|s| self.equality[*s].ids.iter().copied()).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// Which rows of `b` to keep: `b` holds the rows of data file `path` from ordinal `first` on,
    /// in the table's schema (or a projection of it holding [`Loaded::columns_of`]). `None`: all.
    pub(super) fn keep(&self, path: &str, first: u64, b: &RecordBatch) -> Result<Option<BooleanArray>> {
        let positions = self.positions.get(path).map(Vec::as_slice).unwrap_or_default();
        let sets = self.equality_of.get(path).map(Vec::as_slice).unwrap_or_default();
        let n = b.num_rows() as u64;
        let start = positions.partition_point(|p| *p < first);
        let hit = &positions[start..positions.partition_point(|p| *p < first + n)];
        if hit.is_empty() && sets.is_empty() {
            return Ok(None);
        }
        let mut keep = vec![true; b.num_rows()];
        for p in hit {
            keep[(p - first) as usize] = false;
        }
        for set in sets.iter().map(|s| &self.equality[*s]) {
            let columns = set.ids.iter().map(|id| column_of(b, *id)).collect::<Result<Vec<_>>>()?;
            let rows = set.converter.convert_columns(&columns)?;
            for (i, k) in keep.iter_mut().enumerate() {
                *k = *k && !set.rows.contains(rows.row(i).data());
            }
        }
        Ok(Some(BooleanArray::from(keep)))
    }

    /// `b` (rows of `path` from ordinal `first` on) without its deleted rows, and how many
    /// those were.
    pub(super) fn apply(&self, path: &str, first: u64, b: RecordBatch) -> Result<(RecordBatch, u64)> {
        let Some(keep) = self.keep(path, first, &b)? else { return Ok((b, 0)) };
        let dropped = (b.num_rows() - keep.true_count()) as u64;
        if dropped == 0 {
            return Ok((b, 0));
        }
        Ok((arrow_select::filter::filter_record_batch(&b, &keep)?, dropped))
    }
}

/// The top-level column of `b` with field id `id`.
fn column_of(b: &RecordBatch, id: i32) -> Result<ArrayRef> {
    let at = b.schema().fields().iter().position(|f| conform::field_id(f) == Some(id));
    at.map(|i| b.column(i).clone())
        .ok_or_else(|| Error::internal(format!("column of field {id} not read for an equality delete")))
}

/// The positions of a deletion vector blob (`deletion-vector-v1`: its length, big-endian; a
/// magic number; the positions as a portable 64-bit Roaring bitmap; a CRC-32 of magic and bitmap,
/// big-endian) read from Puffin file `path`.
fn read_vector(path: &str, blob: &[u8]) -> Result<impl Iterator<Item = u64> + use<>> {
    const MAGIC: [u8; 4] = [0xD1, 0xD3, 0x39, 0x64];
    let bad = |why: &str| Error::data(format!("deletion vector in {path}: {why}"));
    let length = blob.get(..4).map(|b| u32::from_be_bytes(b.try_into().expect("4 bytes")) as usize);
    let length =
        length.filter(|l| *l >= 4 && blob.len() == l + 8).ok_or_else(|| bad("its length does not match its blob"))?;
    let (body, crc) = (&blob[4..4 + length], &blob[4 + length..]);
    if body[..4] != MAGIC {
        return Err(bad("no deletion-vector-v1 magic number"));
    }
    if crc32fast::hash(body).to_be_bytes() != crc {
        return Err(bad("its checksum does not match"));
    }
    let bitmap = roaring::RoaringTreemap::deserialize_from(&body[4..])
        .map_err(|e| Error::data_from(format!("deletion vector in {path}"), e))?;
    Ok(bitmap.into_iter())
}

/// Adds the positions that position delete file `path` holds for the data files `wanted` to
/// `out`.
fn read_positions(path: &str, body: Bytes, wanted: &HashSet<&str>, out: &mut HashMap<String, Vec<u64>>) -> Result<()> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(body)?;
    let find = |fields: &arrow_schema::Fields, id: i32, name: &str| {
        let by_id = fields.iter().position(|f| conform::field_id(f) == Some(id));
        by_id.or_else(|| fields.iter().position(|f| f.name() == name))
    };
    let fields = builder.schema().fields().clone();
    let (Some(file_at), Some(pos_at)) = (find(&fields, FILE_PATH_ID, "file_path"), find(&fields, POS_ID, "pos")) else {
        return Err(Error::data(format!("position delete file {path} lacks a file_path or pos column")));
    };
    let mask = ProjectionMask::roots(builder.parquet_schema(), [file_at, pos_at]);
    let reader = builder.with_projection(mask).with_batch_size(8192).build()?;
    for b in reader {
        let b = b?;
        let (file_at, pos_at) =
            (find(b.schema().fields(), FILE_PATH_ID, "file_path"), find(b.schema().fields(), POS_ID, "pos"));
        let (files, positions) = (b.column(file_at.unwrap_or(0)), b.column(pos_at.unwrap_or(1)));
        let files = arrow_cast::cast(files, &DataType::Utf8)?;
        let files = files.as_any().downcast_ref::<StringArray>().expect("cast to utf8");
        let positions = arrow_cast::cast(positions, &DataType::Int64)?;
        let positions = positions.as_any().downcast_ref::<Int64Array>().expect("cast to int64");
        if files.null_count() > 0 || positions.null_count() > 0 {
            return Err(Error::data(format!("position delete file {path} has a null file_path or pos")));
        }
        for (file, pos) in files.iter().zip(positions.iter()) {
            let (Some(file), Some(pos)) = (file, pos) else { continue };
            if wanted.contains(file) {
                let pos = u64::try_from(pos)
                    .map_err(|_| Error::data(format!("position delete file {path} holds position {pos}")))?;
                out.entry(file.to_string()).or_default().push(pos);
            }
        }
    }
    Ok(())
}

/// Reads equality delete file `path` on the columns `ids`, in the table's types of them.
fn read_equality(table: &WriterTable, path: &str, body: Bytes, ids: &[i32]) -> Result<EqualitySet> {
    let expected: SchemaRef = Arc::new(project_ids(table, ids)?);
    let builder = ParquetRecordBatchReaderBuilder::try_new(body)?;
    let how = table.file_match(path, builder.schema().fields())?;
    let roots: Vec<usize> =
        expected.fields().iter().filter_map(|e| conform::position(builder.schema().fields(), e, "", how)).collect();
    // A column missing from the file would read as nulls and delete every row with a null there.
    if roots.len() != expected.fields().len() {
        return Err(Error::data(format!(
            "equality delete file {path} lacks one of its equality columns {ids:?} (the spec requires each)"
        )));
    }
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let reader = builder.with_projection(mask).with_batch_size(8192).build()?;
    let fields = ids
        .iter()
        .map(|id| Ok(SortField::new(expected.field(index_of_id(&expected, *id)?).data_type().clone())))
        .collect::<Result<Vec<_>>>()?;
    let converter = RowConverter::new(fields)?;
    let mut rows = hashbrown::HashSet::new();
    for b in reader {
        let b = conform::conform_batch_with(&b?, &expected, how)
            .map_err(|e| Error::data_from(format!("equality delete file {path} does not fit the table's schema"), e))?;
        let columns = ids.iter().map(|id| column_of(&b, *id)).collect::<Result<Vec<_>>>()?;
        let converted = converter.convert_columns(&columns)?;
        rows.extend(converted.iter().map(|r| Box::<[u8]>::from(r.data())));
    }
    Ok(EqualitySet { ids: ids.to_vec(), converter, rows })
}

/// The table's arrow schema projected to the top-level columns with field ids `ids`.
pub(super) fn project_ids(table: &WriterTable, ids: &[i32]) -> Result<arrow_schema::Schema> {
    let mut at = ids.iter().map(|id| index_of_id(&table.arrow_schema, *id)).collect::<Result<Vec<_>>>()?;
    at.sort_unstable();
    at.dedup();
    Ok(table.arrow_schema.project(&at)?)
}

fn index_of_id(schema: &arrow_schema::Schema, id: i32) -> Result<usize> {
    schema
        .fields()
        .iter()
        .position(|f| conform::field_id(f) == Some(id))
        .ok_or_else(|| Error::data(format!("equality delete column {id} is not a top-level column of the table")))
}

#[cfg(test)]
mod tests {
    use iceberg::spec::Literal;

    use super::*;

    fn file(path: &str, seq: i64, part: &str) -> LiveFile {
        LiveFile {
            path: path.into(),
            size: 10,
            rows: 10,
            seq,
            spec_id: 1,
            partition: Struct::from_iter([Some(Literal::string(part))]),
            manifest: 0,
            first_row_id: None,
            key_bounds: vec![],
        }
    }

    fn delete(path: &str, seq: i64, part: &str, kind: DeleteKind) -> LiveDelete {
        LiveDelete {
            path: path.into(),
            size: 10,
            rows: 1,
            seq,
            spec_id: 1,
            partition: Struct::from_iter([Some(Literal::string(part))]),
            global: false,
            kind,
        }
    }

    #[test]
    fn delete_files_apply_by_the_specs_scope_and_sequence_rules() {
        let pos = delete("d1", 5, "a", DeleteKind::Position { file: None });
        assert!(pos.applies(&file("f", 5, "a")), "a position delete applies to files of its own sequence number");
        assert!(pos.applies(&file("f", 4, "a")));
        assert!(!pos.applies(&file("f", 6, "a")), "not to later files");
        assert!(!pos.applies(&file("f", 4, "b")), "nor to another partition");
        let named = delete("d2", 5, "a", DeleteKind::Position { file: Some("f".into()) });
        assert!(named.applies(&file("f", 3, "a")) && !named.applies(&file("g", 3, "a")));
        let eq = delete("d3", 5, "a", DeleteKind::Equality { ids: vec![1] });
        assert!(eq.applies(&file("f", 4, "a")));
        assert!(!eq.applies(&file("f", 5, "a")), "an equality delete applies only to older files");
        assert!(!eq.applies(&file("f", 4, "b")));
        let global = LiveDelete { global: true, spec_id: 0, partition: Struct::empty(), ..eq.clone() };
        assert!(global.applies(&file("f", 4, "b")), "an unpartitioned equality delete applies everywhere");
        let mut other_spec = file("f", 4, "a");
        other_spec.spec_id = 2;
        assert!(!eq.applies(&other_spec), "a partitioned delete applies within its own spec");
    }

    fn task(inputs: Vec<LiveFile>, references: Vec<&str>) -> Task {
        Task {
            id: "t".into(),
            level: 1,
            spec_id: 1,
            partition: inputs[0].partition.clone(),
            inputs,
            references: references.into_iter().map(str::to_string).collect(),
            chain_from: 0,
            late_before: None,
            deletes: TaskDeletes::default(),
        }
    }

    #[test]
    fn a_delete_file_is_dangling_only_when_every_file_it_applies_to_is_an_input() {
        let (f1, f2, f3, r) = (file("f1", 2, "a"), file("f2", 3, "a"), file("f3", 9, "a"), file("L1-r", 1, "a"));
        let files = vec![f1.clone(), f2.clone(), f3.clone(), r.clone()];
        let deletes = vec![
            delete("named", 5, "a", DeleteKind::Position { file: Some("f1".into()) }),
            delete("partition", 5, "a", DeleteKind::Position { file: None }),
            delete("eq", 3, "a", DeleteKind::Equality { ids: vec![1] }),
            delete("elsewhere", 5, "b", DeleteKind::Position { file: None }),
        ];
        // Inputs f1 and f2, reference r: `partition` applies to r too, `eq` to f1 and r.
        let mut tasks = vec![task(vec![f1.clone(), f2.clone()], vec!["L1-r"])];
        attach(&mut tasks, &deletes, &files, true);
        let d = &tasks[0].deletes;
        let names: Vec<&str> = d.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, ["named", "partition", "eq"]);
        let paths = |d: &TaskDeletes| d.dangling.iter().map(|r| r.path.clone()).collect::<Vec<_>>();
        assert_eq!(paths(d), ["named"]);
        assert_eq!(d.of["f2"], [1], "f2 is younger than the equality delete");
        assert_ne!(tasks[0].id, "t", "the id covers the deletes");
        // With the reference an input too, both partition-scoped deletes are dangling.
        let mut tasks = vec![task(vec![r.clone(), f1.clone(), f2.clone()], vec![])];
        attach(&mut tasks, &deletes, &files, true);
        assert_eq!(paths(&tasks[0].deletes), ["partition", "eq", "named"]);
        // A global delete is dangling only in a plan of the whole table.
        let global = vec![LiveDelete { global: true, ..deletes[2].clone() }];
        let mut tasks = vec![task(vec![r.clone(), f1.clone(), f2.clone()], vec![])];
        attach(&mut tasks, &global, &files, false);
        assert!(tasks[0].deletes.dangling.is_empty());
        let mut tasks = vec![task(vec![f3], vec![])];
        attach(&mut tasks, &deletes, &files, true);
        assert!(tasks[0].deletes.is_empty() && tasks[0].id == "t", "no delete applies to a younger file");
    }

    #[test]
    fn positions_count_from_the_files_first_row_across_batches() {
        let mut loaded = Loaded::default();
        loaded.positions.insert("f".into(), vec![3, 8191, 8192, 8200, 20000]);
        let batch = |n: usize| {
            let column: ArrayRef = Arc::new(Int64Array::from_iter_values(0..n as i64));
            RecordBatch::try_new(
                Arc::new(arrow_schema::Schema::new(vec![arrow_schema::Field::new("v", DataType::Int64, false)])),
                vec![column],
            )
            .unwrap()
        };
        // Rows 0..8192, then 8192..16384 of the file.
        let (first, dropped) = loaded.apply("f", 0, batch(8192)).unwrap();
        assert_eq!((first.num_rows(), dropped), (8190, 2));
        let (second, dropped) = loaded.apply("f", 8192, batch(8192)).unwrap();
        assert_eq!(dropped, 2);
        let kept = second.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
        assert!(kept.values().iter().all(|i| *i != 0 && *i != 8), "ordinals 8192 and 8200 are rows 0 and 8 here");
        assert!(loaded.keep("g", 0, &batch(10)).unwrap().is_none(), "another file: nothing applies");
    }

    #[test]
    fn a_deletion_vector_blob_reads_as_its_positions_and_a_damaged_one_is_refused() {
        let (puffin, offset, length) = crate::testing::deletes::deletion_vector("f", &[0, 7, 1 << 33]).unwrap();
        let blob = &puffin[offset as usize..(offset + length) as usize];
        assert_eq!(read_vector("p", blob).unwrap().collect::<Vec<_>>(), [0, 7, 1 << 33]);
        let mut damaged = blob.to_vec();
        damaged[12] ^= 1;
        let e = read_vector("p", &damaged).err().expect("refused").to_string();
        assert!(e.contains("checksum"), "{e}");
        assert!(read_vector("p", &blob[..blob.len() - 1]).is_err(), "a short blob");
    }
}
