//! Test support shared by the engine's own tests and the integration tests: the port contract
//! suites that every adapter (local and AWS) must pass, and ports that fail transiently on
//! purpose. Built for tests and with the `test-util` feature; never part of a production build.

pub mod contract;
pub mod deletes;
pub mod flaky;
