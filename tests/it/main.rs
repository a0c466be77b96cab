//! Integration tests: the pipeline end to end on local adapters in a temporary warehouse
//! (embedded mode is the harness). One test binary, as delta-kernel-rs does, to cut link time.

mod aws;
mod aws_crash;
mod commit;
mod common;
mod compact;
mod crash;
mod deletes;
mod evolve;
mod fan_out;
mod format;
mod immutable;
mod ingest;
mod key_index;
mod late;
mod maintain;
mod quarantine;
mod rest;
mod soak;
mod trust;
