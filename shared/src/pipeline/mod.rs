//! The roles as library functions over [`Ports`](crate::ports::Ports): one entry point each.
//!
//! - [`write::write`]: the writer role (source objects → data files + a file manifest message);
//! - [`commit::Committer`]: the committer role (messages → one snapshot per table, pointer swap);
//! - [`compact::compact`]: the compactor role (live files → merged files + a rewrite request);
//! - [`create::ensure_table`]: conditional creation of a table from a source object's schema;
//! - [`ingest::ingest`]: embedded mode, running writers and the committer in one process;
//! - [`quarantine`]: what is still refused, and replaying it (`floe quarantine list|replay`).
//!
//! The Lambda handlers and the `floe` command call these and nothing below them.

pub(crate) mod cluster;
pub mod commit;
pub mod compact;
pub mod create;
pub(crate) mod encode;
pub(crate) mod gather;
pub mod ingest;
pub(crate) mod map_keys;
pub mod quarantine;
pub(crate) mod ranged;
pub(crate) mod ranges;
pub mod write;
