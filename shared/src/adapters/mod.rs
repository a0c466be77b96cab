//! Adapters: implementations of the ports. `local` (files and SQLite) is always built;
//! the AWS adapters live behind the `aws` feature.

pub mod local;
