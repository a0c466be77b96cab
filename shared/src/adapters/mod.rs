//! Adapters: implementations of the ports. `local` (files and SQLite) is always built;
//! `aws` (S3, SQS, DynamoDB) is behind the `aws` feature.

#[cfg(feature = "aws")]
pub mod aws;
pub mod local;
