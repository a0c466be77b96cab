//! Fixtures: a temporary warehouse, generated inputs, and a reader of what a table holds.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use arrow_array::{Array, FixedSizeBinaryArray, RecordBatch};
use floe::TableIdent;
use floe::adapters::local;
use floe::config::{EngineConfig, TableConfig};
use floe::ports::{ObjectMeta, Ports};
use floe::sample::{self, EventsSpec};
use floe::table::load_table;
use iceberg::spec::{Manifest, ManifestList};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

pub struct Harness {
    pub dir: tempfile::TempDir,
    pub ports: Ports,
    pub warehouse: String,
    pub engine: EngineConfig,
}

impl Harness {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let ports = local::ports(&dir.path().join("wh")).expect("ports");
        let warehouse = local::warehouse_uri(&dir.path().join("wh")).expect("uri");
        Harness { dir, ports, warehouse, engine: EngineConfig::default() }
    }

    pub fn input_dir(&self, name: &str) -> PathBuf {
        let p = self.dir.path().join(name);
        std::fs::create_dir_all(&p).expect("mkdir");
        p
    }

    /// Writes `files` event files into folder `name`; returns their object metadata.
    pub async fn events(&self, name: &str, files: u64, per_file: usize, seed: u64, dup_rate: f64) -> Vec<ObjectMeta> {
        let dir = self.input_dir(name);
        let spec = EventsSpec { events_per_file: per_file, dup_rate, ..Default::default() };
        let mut out = vec![];
        for i in 0..files {
            let p = dir.join(format!("part-{i:05}.avro"));
            std::fs::write(&p, sample::events_file(&spec, seed, i).expect("gen").0).expect("write");
            out.push(self.meta(&p).await);
        }
        out
    }

    pub async fn put_file(&self, name: &str, file: &str, bytes: &[u8]) -> ObjectMeta {
        let p = self.input_dir(name).join(file);
        std::fs::write(&p, bytes).expect("write");
        self.meta(&p).await
    }

    pub async fn meta(&self, p: &std::path::Path) -> ObjectMeta {
        self.ports.store.head(&local::path_to_uri(p)).await.expect("head")
    }
}

pub fn events_table(name: &str) -> TableConfig {
    TableConfig::new(name.parse().expect("table name"))
        .with_partition_by("day(event_time), identity(tenant_id)")
        .expect("spec")
        .with_sort_by("tenant_id, event_time")
        .expect("sort")
        .with_dedup_key("event_id")
        .expect("dedup")
}

/// Event ids of the given Avro files as apache-avro reads them (all occurrences).
pub fn source_event_ids(files: &[ObjectMeta]) -> Vec<String> {
    files
        .iter()
        .flat_map(|f| event_ids_of(&std::fs::read(local::uri_to_path(&f.uri).expect("path")).expect("read")))
        .collect()
}

/// Event ids of one Avro file as apache-avro reads it (all occurrences).
pub fn event_ids_of(bytes: &[u8]) -> Vec<String> {
    let mut out = vec![];
    for v in apache_avro::Reader::new(bytes).expect("reader") {
        if let apache_avro::types::Value::Record(fields) = v.expect("record") {
            for (k, v) in fields {
                if k == "event_id" {
                    match v {
                        apache_avro::types::Value::Uuid(u) => out.push(u.to_string()),
                        apache_avro::types::Value::String(s) => out.push(s),
                        other => panic!("event_id is {other:?}"),
                    }
                }
            }
        }
    }
    out
}

/// What the table's current snapshot holds: each live data file (path, partition) and its rows
/// (deleted rows too), and the live delete files.
pub struct TableContents {
    pub files: Vec<(String, iceberg::spec::Struct, RecordBatch)>,
    /// Each live data file's data sequence number.
    pub seqs: HashMap<String, i64>,
    /// The live delete files, with their data sequence numbers.
    pub deletes: Vec<(iceberg::spec::DataFile, i64)>,
    pub snapshots: usize,
}

impl TableContents {
    pub fn rows(&self) -> usize {
        self.files.iter().map(|(_, _, b)| b.num_rows()).sum()
    }

    pub fn event_ids(&self) -> Vec<String> {
        let mut out = vec![];
        for (_, _, b) in &self.files {
            let col = b.column_by_name("event_id").expect("event_id");
            let ids = col.as_any().downcast_ref::<FixedSizeBinaryArray>().expect("uuid as fixed(16)");
            for i in 0..ids.len() {
                out.push(uuid::Uuid::from_slice(ids.value(i)).expect("16 bytes").to_string());
            }
        }
        out
    }
}

pub async fn contents(ports: &Ports, table: &TableIdent) -> TableContents {
    let state =
        load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await.expect("load").expect("table exists");
    let m = &state.metadata;
    let (mut files, mut seqs, mut deletes) = (vec![], HashMap::new(), vec![]);
    if let Some(snap) = m.current_snapshot() {
        let list = ManifestList::parse_with_version(
            &ports.store.get(snap.manifest_list()).await.expect("list"),
            m.format_version(),
        )
        .expect("parse list");
        for mf in list.entries() {
            let manifest =
                Manifest::parse_avro(&ports.store.get(&mf.manifest_path).await.expect("manifest")).expect("parse");
            for e in manifest.entries().iter().filter(|e| e.is_alive()) {
                let f = e.data_file();
                let seq = e.sequence_number().unwrap_or(mf.sequence_number);
                if mf.content != iceberg::spec::ManifestContentType::Data {
                    deletes.push((f.clone(), seq));
                    continue;
                }
                seqs.insert(f.file_path().to_string(), seq);
                let bytes = ports.store.get(f.file_path()).await.expect("data file");
                let reader = ParquetRecordBatchReaderBuilder::try_new(bytes).expect("parquet").build().expect("reader");
                let batches: Vec<RecordBatch> = reader.map(|b| b.expect("batch")).collect();
                let batch = arrow_select::concat::concat_batches(&batches[0].schema(), &batches).expect("concat");
                assert_eq!(batch.num_rows() as u64, f.record_count(), "record_count matches the file");
                files.push((f.file_path().to_string(), f.partition().clone(), batch));
            }
        }
    }
    TableContents { files, seqs, deletes, snapshots: m.snapshots().len() }
}

pub fn counts(ids: &[String]) -> HashMap<&str, usize> {
    let mut m = HashMap::new();
    for id in ids {
        *m.entry(id.as_str()).or_default() += 1;
    }
    m
}

/// Rolls `table` back to `snapshot`, as Iceberg's `rollback_to_snapshot` does (another engine):
/// `main` points to it again, in a new metadata file the pointer swaps to.
pub async fn roll_back(ports: &Ports, table: &TableIdent, snapshot: i64) {
    let state = load_table(ports.pointer.as_ref(), ports.store.as_ref(), table).await.unwrap().unwrap();
    let meta = iceberg::spec::TableMetadataBuilder::new_from_metadata(
        state.metadata.as_ref().clone(),
        Some(state.pointer.metadata_location.clone()),
    )
    .set_ref(
        "main",
        iceberg::spec::SnapshotReference::new(snapshot, iceberg::spec::SnapshotRetention::branch(None, None, None)),
    )
    .unwrap()
    .build()
    .unwrap()
    .metadata;
    let location = format!("{}/metadata/{}-rollback.metadata.json", meta.location(), uuid::Uuid::new_v4());
    ports.store.put(&location, floe::table::metadata_json(&meta).unwrap()).await.unwrap();
    ports.pointer.swap(table, &state.pointer, &location).await.unwrap();
}

/// Checks that each distinct source key is in the table exactly once.
pub fn assert_each_key_once(c: &TableContents, sources: &[String]) {
    let want: HashSet<&str> = sources.iter().map(String::as_str).collect();
    let got = c.event_ids();
    let counts = counts(&got);
    let doubled: Vec<_> = counts.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "keys doubled: {doubled:?}");
    let have: HashSet<&str> = got.iter().map(String::as_str).collect();
    assert_eq!(have, want, "lost: {:?}", want.difference(&have).take(3).collect::<Vec<_>>());
}

/// Counts the object store's calls of one kind in flight, each held a little, and the most seen
/// at once.
pub struct InFlight {
    what: &'static str,
    now: std::sync::atomic::AtomicUsize,
    most: std::sync::atomic::AtomicUsize,
}

impl InFlight {
    pub fn new(what: &'static str) -> std::sync::Arc<Self> {
        std::sync::Arc::new(InFlight { what, now: Default::default(), most: Default::default() })
    }

    pub fn most(&self) -> usize {
        self.most.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl floe::ports::wrap::Around for InFlight {
    fn call<T, F, Fut>(&self, what: &'static str, mut op: F) -> impl Future<Output = Result<T, floe::PortError>> + Send
    where
        T: Send,
        F: FnMut() -> Fut + Send,
        Fut: Future<Output = Result<T, floe::PortError>> + Send,
    {
        use std::sync::atomic::Ordering::SeqCst;
        async move {
            if what != self.what {
                return op().await;
            }
            let n = self.now.fetch_add(1, SeqCst) + 1;
            self.most.fetch_max(n, SeqCst);
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            let r = op().await;
            self.now.fetch_sub(1, SeqCst);
            r
        }
    }
}
