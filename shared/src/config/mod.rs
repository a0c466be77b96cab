//! Configuration: per-table settings (`floe.toml`) and engine limits.
//!
//! [`TableConfig`] is what a user declares about a table (partitioning, clustering, dedup key,
//! compression, routing prefixes); [`FloeToml`] is the file that holds several of them plus
//! defaults. [`EngineConfig`] holds the engine's operating limits. Nothing here reads the
//! environment: binaries do that and pass plain values in.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

mod routing;

pub use crate::table::terms::{
    DEFAULT_COMPRESSION, DEFAULT_TARGET_FILE_SIZE, PartitionTerm, SortTerm, parse_compression,
};
pub use routing::{RoutingSection, RowRoute};

use crate::{Error, Result, TableIdent};

/// The smallest target data file size a table may be given (1 MiB).
pub const MIN_TARGET_FILE_SIZE: u64 = 1024 * 1024;
/// Default limit on one source object's size (larger objects are quarantined, not read).
pub const DEFAULT_MAX_OBJECT_BYTES: u64 = 1024 * 1024 * 1024;
/// Default limit on the decoded (in-memory Arrow) size of one source object.
pub const DEFAULT_MAX_DECODED_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Default largest single string or bytes value (16 MiB, as Snowflake's classic VARCHAR).
pub const DEFAULT_MAX_VALUE_BYTES: u64 = 16 * 1024 * 1024;
/// Default largest decompressed Avro block (64 MiB: writers' blocks are 16 KiB to a few MiB).
pub const DEFAULT_MAX_BLOCK_BYTES: u64 = 64 * 1024 * 1024;
/// Default Parquet row group size, in rows.
pub const DEFAULT_ROW_GROUP_ROWS: usize = 1024 * 1024;

/// One table's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct TableConfig {
    /// The table.
    pub table: TableIdent,
    /// Source key prefixes routed to this table (AWS routing; unused by `floe ingest`).
    pub prefixes: Vec<String>,
    /// Partition spec, e.g. `day(event_time), identity(tenant_id)`; empty = unpartitioned.
    pub partition_by: Vec<PartitionTerm>,
    /// Cluster key: rows of each data file are sorted by these columns.
    pub sort_by: Vec<SortTerm>,
    /// Columns whose value identifies a row; duplicates within a writer batch are dropped.
    pub dedup_key: Vec<String>,
    /// Parquet compression: `zstd(N)` (N in 1..=22), `snappy` or `uncompressed`.
    pub compression: String,
    /// Target size of one data file, in bytes.
    pub target_file_size: u64,
    /// Table properties set at creation.
    pub properties: BTreeMap<String, String>,
    /// The rows of each object this table takes, when its prefix's tables split them by value.
    pub route: Option<RowRoute>,
}

impl TableConfig {
    /// Settings with defaults for `table`: unpartitioned, unsorted, no dedup, zstd.
    pub fn new(table: TableIdent) -> Self {
        TableConfig {
            table,
            prefixes: vec![],
            partition_by: vec![],
            sort_by: vec![],
            dedup_key: vec![],
            compression: DEFAULT_COMPRESSION.to_string(),
            target_file_size: DEFAULT_TARGET_FILE_SIZE,
            properties: BTreeMap::new(),
            route: None,
        }
    }

    /// Sets the partition spec from its text form.
    pub fn with_partition_by(mut self, spec: &str) -> Result<Self> {
        self.partition_by = parse_partition_spec(spec)?;
        Ok(self)
    }

    /// Sets the cluster key from its text form (`tenant_id, event_time desc`).
    pub fn with_sort_by(mut self, spec: &str) -> Result<Self> {
        self.sort_by = parse_sort_order(spec)?;
        Ok(self)
    }

    /// Sets the dedup key from a comma-separated column list.
    pub fn with_dedup_key(mut self, cols: &str) -> Result<Self> {
        self.dedup_key = split_list(cols).map(str::to_string).collect();
        Ok(self)
    }

    /// Sets the Parquet compression, checking that it is one Parquet knows.
    pub fn with_compression(mut self, c: &str) -> Result<Self> {
        parse_compression(c)?;
        self.compression = c.to_string();
        Ok(self)
    }

    /// Sets the target data file size, at least [`MIN_TARGET_FILE_SIZE`].
    pub fn with_target_file_size(mut self, bytes: u64) -> Result<Self> {
        if bytes < MIN_TARGET_FILE_SIZE {
            return Err(Error::Config(format!(
                "target file size {bytes} bytes is under the least Floe writes, {MIN_TARGET_FILE_SIZE} (1 MiB)"
            )));
        }
        self.target_file_size = bytes;
        Ok(self)
    }

    /// What the table's first metadata records of these settings.
    pub fn new_table(&self) -> crate::table::NewTable<'_> {
        crate::table::NewTable {
            partition_by: &self.partition_by,
            sort_by: &self.sort_by,
            dedup_key: &self.dedup_key,
            compression: &self.compression,
            target_file_size: self.target_file_size,
            properties: &self.properties,
        }
    }
}

/// Joins terms with `, ` (the form `floe status` prints and the flags accept).
pub fn join_terms<T: std::fmt::Display>(terms: &[T]) -> String {
    terms.iter().map(T::to_string).collect::<Vec<_>>().join(", ")
}

fn split_list(s: &str) -> impl Iterator<Item = &str> {
    s.split(',').map(str::trim).filter(|p| !p.is_empty())
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0i32, 0usize, vec![]);
    for (i, c) in s.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(s[start..].trim());
    out.into_iter().filter(|p| !p.is_empty()).collect()
}

/// Parses `day(event_time), identity(tenant_id), bucket(16, user_id), truncate(4, name)`.
/// Also takes Iceberg's `bucket[16](user_id)` and a bare column name (identity).
pub fn parse_partition_spec(spec: &str) -> Result<Vec<PartitionTerm>> {
    let bad = |term: &str, why: &str| {
        Error::Config(format!(
            "partition term `{term}`: {why}; expected e.g. `day(event_time)`, `identity(tenant_id)`, \
             `bucket(16, user_id)`, `truncate(4, name)`, `year|month|day|hour(col)`"
        ))
    };
    let mut out = vec![];
    for term in split_top_level(spec) {
        let Some(open) = term.find('(') else {
            if term.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.') {
                out.push(PartitionTerm { transform: "identity".into(), column: term.to_string() });
                continue;
            }
            return Err(bad(term, "not a transform call"));
        };
        if !term.ends_with(')') {
            return Err(bad(term, "missing `)`"));
        }
        let head = term[..open].trim().to_ascii_lowercase();
        let args: Vec<&str> = term[open + 1..term.len() - 1].split(',').map(str::trim).collect();
        let (name, param, column) = match (head.split_once('['), args.as_slice()) {
            (Some((n, p)), [col]) => (n.to_string(), Some(p.trim_end_matches(']').to_string()), *col),
            (None, [col]) => (head.clone(), None, *col),
            (None, [p, col]) => (head.clone(), Some(p.to_string()), *col),
            _ => return Err(bad(term, "wrong number of arguments")),
        };
        if column.is_empty() {
            return Err(bad(term, "no column"));
        }
        let transform = match (name.as_str(), param) {
            ("identity" | "year" | "month" | "day" | "hour" | "void", None) => name.clone(),
            ("years", None) => "year".into(),
            ("months", None) => "month".into(),
            ("days", None) => "day".into(),
            ("hours", None) => "hour".into(),
            ("bucket" | "truncate", Some(p)) => match p.parse::<u32>() {
                Ok(n) if n > 0 => format!("{name}[{n}]"),
                _ => return Err(bad(term, "the width must be a positive integer")),
            },
            ("bucket" | "truncate", None) => return Err(bad(term, "needs a width")),
            _ => return Err(bad(term, "unknown transform")),
        };
        out.push(PartitionTerm { transform, column: column.to_string() });
    }
    Ok(out)
}

/// Parses `tenant_id, event_time desc nulls last`.
pub fn parse_sort_order(spec: &str) -> Result<Vec<SortTerm>> {
    split_list(spec)
        .map(|term| {
            let words: Vec<String> = term.split_whitespace().map(|w| w.to_ascii_lowercase()).collect();
            let column = term.split_whitespace().next().unwrap_or_default().to_string();
            let rest: Vec<&str> = words[1..].iter().map(String::as_str).collect();
            let (descending, nulls) = match rest.as_slice() {
                [] => (false, None),
                ["asc"] => (false, None),
                ["desc"] => (true, None),
                ["asc" | "desc", "nulls", n @ ("first" | "last")] => (rest[0] == "desc", Some(*n == "first")),
                ["nulls", n @ ("first" | "last")] => (false, Some(*n == "first")),
                _ => {
                    return Err(Error::Config(format!(
                        "sort term `{term}`: expected `COLUMN [asc|desc] [nulls first|last]`"
                    )));
                }
            };
            Ok(SortTerm { column, descending, nulls_first: nulls.unwrap_or(!descending) })
        })
        .collect()
}

/// Engine operating limits. Plain values with documented defaults; binaries fill them from
/// flags or the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct EngineConfig {
    /// Source objects larger than this are quarantined without being read.
    pub max_object_bytes: u64,
    /// Objects whose decoded Arrow data passes this are quarantined (decompression bombs).
    pub max_decoded_bytes: u64,
    /// A single string or bytes value larger than this refuses its object.
    pub max_value_bytes: u64,
    /// An Avro block that decompresses past this refuses its object, found while inflating (a
    /// decompression bomb costs at most this much memory).
    pub max_block_bytes: u64,
    /// Parquet row group size, in rows.
    pub row_group_rows: usize,
    /// Lease of the committer lock.
    pub lock_lease: std::time::Duration,
    /// How long a committer waits for a held lock before giving up (and retrying later).
    pub lock_wait: std::time::Duration,
    /// Compare-and-swap attempts before a commit gives up.
    pub commit_attempts: u32,
    /// Files written longer ago than this are not committed (`FLOE_MAX_COMMIT_AGE_HOURS`): an
    /// append's sources go back to the writers to be written afresh, a rewrite is rejected as
    /// stale. `None`: [`MANAGED_MAX_COMMIT_AGE`] where the catalog's service removes
    /// unreferenced files (S3 Tables), no limit elsewhere.
    pub max_commit_age: Option<std::time::Duration>,
    /// A writer invocation writes its batch in rounds of source objects of at most this many
    /// bytes together (their notified sizes; an object larger alone is a round of its own), each
    /// round its own Parquet files and file manifest: what a writer holds decoded is bounded by
    /// this, not by the batch size times the objects' size. `FLOE_WRITER_ROUND_BYTES`; sized
    /// from the function's memory on Lambda ([`EngineConfig::for_memory`]); unbounded embedded.
    pub writer_round_bytes: u64,
}

/// The commit age limit where the catalog's service removes unreferenced files itself: S3
/// Tables does so 3 days after a file was written (its default `unreferencedDays`); 2 days
/// leaves a day's margin for the commit itself and clock skew.
pub const MANAGED_MAX_COMMIT_AGE: std::time::Duration = std::time::Duration::from_secs(2 * 24 * 3600);

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_object_bytes: DEFAULT_MAX_OBJECT_BYTES,
            max_decoded_bytes: DEFAULT_MAX_DECODED_BYTES,
            max_value_bytes: DEFAULT_MAX_VALUE_BYTES,
            max_block_bytes: DEFAULT_MAX_BLOCK_BYTES,
            row_group_rows: DEFAULT_ROW_GROUP_ROWS,
            lock_lease: std::time::Duration::from_secs(60),
            lock_wait: std::time::Duration::from_secs(120),
            commit_attempts: 10,
            max_commit_age: None,
            writer_round_bytes: u64::MAX,
        }
    }
}

impl EngineConfig {
    /// The commit age limit that applies: [`max_commit_age`](Self::max_commit_age), or, where
    /// the catalog's service removes unreferenced files itself (`manages_files`: S3 Tables),
    /// [`MANAGED_MAX_COMMIT_AGE`]. Writers and compactors read it too: a file they find already
    /// written is reused only while well inside it.
    pub fn commit_age_limit(&self, manages_files: bool) -> Option<std::time::Duration> {
        self.max_commit_age.or_else(|| manages_files.then_some(MANAGED_MAX_COMMIT_AGE))
    }

    /// Limits sized for a process of `memory_mib` MiB (a Lambda's memory setting): a writer
    /// holds one source object's bytes while it decodes it, every accepted object's decoded data
    /// until the batch is encoded, and a sorted copy of it while encoding; the defaults leave
    /// room for that. Never above the embedded defaults. A writer round is a third of the memory
    /// past 100 MiB (the inverse of `infra/locals.tf`'s writer sizing: 3 x a batch's Avro bytes +
    /// 100 MB), at least 16 MiB.
    pub fn for_memory(memory_mib: u64) -> Self {
        let bytes = memory_mib.saturating_mul(1024 * 1024);
        EngineConfig {
            writer_round_bytes: (memory_mib.saturating_sub(100) / 3).max(16) * 1024 * 1024,
            max_object_bytes: (bytes / 8).min(DEFAULT_MAX_OBJECT_BYTES),
            max_decoded_bytes: (bytes / 4).min(DEFAULT_MAX_DECODED_BYTES),
            max_block_bytes: (bytes / 16).min(DEFAULT_MAX_BLOCK_BYTES),
            max_value_bytes: (bytes / 16).min(DEFAULT_MAX_VALUE_BYTES),
            ..EngineConfig::default()
        }
    }

    /// The limits from settings looked up by name (binaries pass the environment):
    /// `AWS_LAMBDA_FUNCTION_MEMORY_SIZE` (MiB) sizes the defaults ([`EngineConfig::for_memory`]);
    /// `FLOE_MAX_OBJECT_BYTES`, `FLOE_MAX_DECODED_BYTES`, `FLOE_MAX_BLOCK_BYTES`,
    /// `FLOE_MAX_VALUE_BYTES` and `FLOE_WRITER_ROUND_BYTES` override each limit; `FLOE_MAX_COMMIT_AGE_HOURS` sets the commit
    /// age limit ([`EngineConfig::max_commit_age`]). A value that is not a positive whole number
    /// of bytes is an error, never silently replaced.
    pub fn from_lookup(var: impl Fn(&str) -> Option<String>) -> Result<Self> {
        let vars = crate::settings::Vars::new(&var);
        let number = |k: &str| vars.number(k, 1);
        let mut cfg = match number("AWS_LAMBDA_FUNCTION_MEMORY_SIZE")? {
            Some(mib) => EngineConfig::for_memory(mib),
            None => EngineConfig::default(),
        };
        let fields: [(&str, &mut u64); 5] = [
            ("FLOE_WRITER_ROUND_BYTES", &mut cfg.writer_round_bytes),
            ("FLOE_MAX_OBJECT_BYTES", &mut cfg.max_object_bytes),
            ("FLOE_MAX_DECODED_BYTES", &mut cfg.max_decoded_bytes),
            ("FLOE_MAX_BLOCK_BYTES", &mut cfg.max_block_bytes),
            ("FLOE_MAX_VALUE_BYTES", &mut cfg.max_value_bytes),
        ];
        for (k, field) in fields {
            if let Some(n) = number(k)? {
                *field = n;
            }
        }
        cfg.max_commit_age = vars.hours("FLOE_MAX_COMMIT_AGE_HOURS")?;
        Ok(cfg)
    }
}

/// The `floe.toml` file: defaults plus per-table sections.
///
/// ```toml
/// [defaults]
/// compression = "zstd(3)"
/// target_file_size_mb = 256
///
/// [[table]]
/// name = "analytics.events"
/// prefixes = ["events/"]
/// partition_by = "day(event_time), identity(tenant_id)"
/// sort_by = "tenant_id, event_time"
/// dedup_key = "event_id"
/// [table.properties]
/// "write.metadata.previous-versions-max" = "50"
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FloeToml {
    /// Defaults applied to every table.
    #[serde(default)]
    pub defaults: TableSection,
    /// Tables.
    #[serde(default, rename = "table")]
    pub tables: Vec<TableSection>,
    /// Where unrouted objects and rows go (see `route`).
    #[serde(default)]
    pub routing: RoutingSection,
}

/// One `[[table]]` section (or `[defaults]`); every key is optional.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSection {
    /// `NAMESPACE.NAME` (tables only).
    pub name: Option<String>,
    /// Routing prefixes.
    pub prefixes: Option<Vec<String>>,
    /// Route rows by this top-level field's value (tables sharing a prefix split its rows).
    pub route_by: Option<String>,
    /// The `route_by` values whose rows this table takes (compared as text).
    pub route_values: Option<Vec<String>>,
    /// Partition spec text.
    pub partition_by: Option<String>,
    /// Sort order text.
    pub sort_by: Option<String>,
    /// Dedup key columns, comma-separated.
    pub dedup_key: Option<String>,
    /// Parquet compression.
    pub compression: Option<String>,
    /// Target data file size in MiB.
    pub target_file_size_mb: Option<u64>,
    /// Table properties.
    pub properties: Option<BTreeMap<String, String>>,
}

impl FloeToml {
    /// Reads and validates a `floe.toml`.
    pub fn load(path: &Path) -> Result<Self> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::Config(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(&text).map_err(|e| Error::Config(format!("{}: {e}", path.display())))
    }

    /// Parses and validates `floe.toml` text.
    pub fn parse(text: &str) -> Result<Self> {
        let parsed: FloeToml = toml::from_str(text).map_err(|e| Error::Config(e.to_string()))?;
        if parsed.defaults.name.is_some() {
            return Err(Error::Config("[defaults] cannot have a `name`".into()));
        }
        parsed.defaults.apply(TableConfig::new(TableIdent::new("defaults", "defaults")))?;
        let mut seen = std::collections::BTreeSet::new();
        for t in &parsed.tables {
            let name = t.name.as_deref().ok_or_else(|| Error::Config("a [[table]] has no `name`".into()))?;
            if !seen.insert(name.to_string()) {
                return Err(Error::Config(format!("table `{name}` is declared twice")));
            }
            parsed.table_config(&name.parse()?)?;
        }
        if parsed.defaults.route_by.is_some() || parsed.defaults.route_values.is_some() {
            return Err(Error::Config("[defaults] cannot route by value: set `route_by` per table".into()));
        }
        routing::validate(&parsed)?;
        Ok(parsed)
    }

    /// The effective settings for `table`: defaults, overlaid by its section if any.
    pub fn table_config(&self, table: &TableIdent) -> Result<TableConfig> {
        let mut cfg = TableConfig::new(table.clone());
        let section = self.tables.iter().find(|t| t.name.as_deref() == Some(&table.to_string()));
        for s in std::iter::once(&self.defaults).chain(section) {
            cfg = s.apply(cfg)?;
        }
        Ok(cfg)
    }
}

impl TableSection {
    /// Overlays the keys set in this section onto `cfg`.
    pub fn apply(&self, mut cfg: TableConfig) -> Result<TableConfig> {
        if let Some(p) = &self.prefixes {
            cfg.prefixes = p.clone();
        }
        if let Some(p) = &self.partition_by {
            cfg = cfg.with_partition_by(p)?;
        }
        if let Some(s) = &self.sort_by {
            cfg = cfg.with_sort_by(s)?;
        }
        if let Some(d) = &self.dedup_key {
            cfg = cfg.with_dedup_key(d)?;
        }
        if let Some(c) = &self.compression {
            cfg = cfg.with_compression(c)?;
        }
        if let Some(mb) = self.target_file_size_mb {
            cfg = cfg.with_target_file_size(mb.saturating_mul(1024 * 1024))?;
        }
        if let Some(p) = &self.properties {
            cfg.properties.extend(p.clone());
        }
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn limits_follow_the_functions_memory_and_overrides() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let small = EngineConfig::from_lookup(env(&[("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "512")])).unwrap();
        assert_eq!(small.max_decoded_bytes, 128 << 20);
        assert_eq!(small.max_object_bytes, 64 << 20);
        assert_eq!(small.max_block_bytes, 32 << 20);
        assert_eq!(small.max_value_bytes, 16 << 20);
        assert_eq!(EngineConfig::from_lookup(env(&[])).unwrap(), EngineConfig::default());
        let set = EngineConfig::from_lookup(env(&[
            ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "10240"),
            ("FLOE_MAX_BLOCK_BYTES", "1000"),
        ]));
        assert_eq!(set.unwrap().max_block_bytes, 1000);
        let bad = EngineConfig::from_lookup(env(&[("FLOE_MAX_VALUE_BYTES", "16MB")])).unwrap_err().to_string();
        assert!(bad.contains("FLOE_MAX_VALUE_BYTES") && bad.contains("16MB"), "{bad}");
        assert!(EngineConfig::from_lookup(env(&[("FLOE_MAX_VALUE_BYTES", "0")])).is_err());
        let hours = EngineConfig::from_lookup(env(&[("FLOE_MAX_COMMIT_AGE_HOURS", "6")])).unwrap();
        assert_eq!(hours.max_commit_age, Some(std::time::Duration::from_secs(6 * 3600)));
    }

    #[test]
    fn a_target_file_size_under_a_mebibyte_is_refused_not_raised() {
        let t = || TableConfig::new("a.b".parse().unwrap());
        assert_eq!(t().with_target_file_size(MIN_TARGET_FILE_SIZE).unwrap().target_file_size, MIN_TARGET_FILE_SIZE);
        let e = t().with_target_file_size(4096).unwrap_err().to_string();
        assert!(e.contains("4096") && e.contains("1 MiB"), "{e}");
        let toml = "[[table]]\nname = \"a.b\"\nprefixes = [\"x/\"]\ntarget_file_size_mb = 0\n";
        assert!(FloeToml::parse(toml).unwrap_err().to_string().contains("under the least Floe writes"));
    }
    use super::*;

    #[test]
    fn partition_spec_forms() {
        let p =
            parse_partition_spec("day(event_time), identity(tenant_id),bucket(16, user_id), truncate[4](name), region")
                .unwrap();
        let got: Vec<_> = p.iter().map(|t| format!("{}:{}", t.transform, t.column)).collect();
        assert_eq!(
            got,
            ["day:event_time", "identity:tenant_id", "bucket[16]:user_id", "truncate[4]:name", "identity:region"]
        );
        assert!(parse_partition_spec("dya(x)").is_err());
        assert!(parse_partition_spec("bucket(x)").is_err());
        assert!(parse_partition_spec("bucket(0, x)").is_err());
        assert!(parse_partition_spec("day(a, b, c)").is_err());
        assert!(parse_partition_spec("").unwrap().is_empty());
    }

    #[test]
    fn sort_order_forms() {
        let s = parse_sort_order("tenant_id, event_time DESC, b asc nulls last").unwrap();
        assert_eq!(s[0], SortTerm { column: "tenant_id".into(), descending: false, nulls_first: true });
        assert_eq!(s[1], SortTerm { column: "event_time".into(), descending: true, nulls_first: false });
        assert_eq!(s[2], SortTerm { column: "b".into(), descending: false, nulls_first: false });
        assert!(parse_sort_order("a sideways").is_err());
    }

    #[test]
    fn toml_defaults_and_overrides() {
        let t = FloeToml::parse(
            r#"
            [defaults]
            compression = "snappy"
            [[table]]
            name = "a.b"
            sort_by = "x"
            compression = "zstd(5)"
            "#,
        )
        .unwrap();
        let ab = t.table_config(&"a.b".parse().unwrap()).unwrap();
        assert_eq!(ab.compression, "zstd(5)");
        assert_eq!(ab.sort_by.len(), 1);
        let other = t.table_config(&"a.c".parse().unwrap()).unwrap();
        assert_eq!(other.compression, "snappy");
        assert!(FloeToml::parse("[[table]]\nname = \"a.b\"\nsort = \"x\"").is_err(), "unknown key");
        assert!(FloeToml::parse("[[table]]\nname = \"nodot\"").is_err());
        assert!(FloeToml::parse("[defaults]\ncompression = \"brotli(9)\"").is_err());
        assert!(FloeToml::parse("[defaults]\ncompression = \"zstd(99)\"").is_err());
        assert!(parse_compression("ZSTD(7)").is_ok() && parse_compression("snappy").is_ok());
    }
}
