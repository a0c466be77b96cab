//! A table's layout as typed values: its partition and sort terms and its Parquet compression,
//! with their defaults. `config` parses them from the user's text; the table module reads them
//! back from a table's metadata; the writer and the Parquet encoder take them as they are.

use crate::{Error, Result};

/// Default Parquet compression: zstd at level 3 (a good ratio at a cost well below decoding).
pub const DEFAULT_COMPRESSION: &str = "zstd(3)";
/// Default target size of one data file, in bytes, before rolling over to the next.
pub const DEFAULT_TARGET_FILE_SIZE: u64 = 256 * 1024 * 1024;

/// Parses a Parquet compression name, case-insensitively: `zstd` / `zstd(N)` (N in 1..=22),
/// `snappy`, or `uncompressed` (the codecs this build of Parquet carries).
pub fn parse_compression(c: &str) -> Result<parquet::basic::Compression> {
    use parquet::basic::{Compression, ZstdLevel};
    let bad = |why: &str| {
        Error::Config(format!("compression `{c}`: {why} (use zstd, zstd(N) with N in 1..=22, snappy or uncompressed)"))
    };
    let norm = c.trim().to_ascii_lowercase();
    match norm.as_str() {
        "uncompressed" | "none" => return Ok(Compression::UNCOMPRESSED),
        "snappy" => return Ok(Compression::SNAPPY),
        "zstd" => return Ok(Compression::ZSTD(ZstdLevel::try_new(3).map_err(|e| bad(&e.to_string()))?)),
        _ => {}
    }
    let level = norm
        .strip_prefix("zstd(")
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| bad("unknown codec"))?
        .trim()
        .parse::<i32>()
        .map_err(|_| bad("the level must be an integer"))?;
    if !(1..=22).contains(&level) {
        return Err(bad("the level must be between 1 and 22"));
    }
    Ok(Compression::ZSTD(ZstdLevel::try_new(level).map_err(|e| bad(&e.to_string()))?))
}

/// One term of a partition spec: a transform of a source column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionTerm {
    /// Iceberg transform in its canonical text form (`day`, `bucket[16]`, `identity`...).
    pub transform: String,
    /// Source column (dotted path for nested fields).
    pub column: String,
}

/// One term of a sort order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SortTerm {
    /// Column (dotted path for nested fields).
    pub column: String,
    /// Descending instead of ascending.
    pub descending: bool,
    /// Nulls sort first (the default for ascending, as in Iceberg).
    pub nulls_first: bool,
}

impl std::fmt::Display for PartitionTerm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.transform.split_once('[') {
            Some((name, n)) => write!(f, "{name}({}, {})", n.trim_end_matches(']'), self.column),
            None => write!(f, "{}({})", self.transform, self.column),
        }
    }
}

impl std::fmt::Display for SortTerm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.descending, self.nulls_first) {
            (false, true) => write!(f, "{}", self.column),
            (true, false) => write!(f, "{} desc", self.column),
            (false, false) => write!(f, "{} asc nulls last", self.column),
            (true, true) => write!(f, "{} desc nulls first", self.column),
        }
    }
}
