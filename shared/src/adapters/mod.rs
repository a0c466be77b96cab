//! Adapters: implementations of the ports. `local` (files and SQLite) and `rest` (an Iceberg
//! REST catalog as the table pointer) are always built; `aws` (S3, SQS, DynamoDB, Glue, S3
//! Tables) is behind the `aws` feature.

#[cfg(feature = "aws")]
pub mod aws;
pub mod local;
pub mod rest;
