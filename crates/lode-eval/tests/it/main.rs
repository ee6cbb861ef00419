//! The integration tests of lode-eval: the runner and reports on hand-made
//! cases, and checks against the real benchmark data.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-eval -- report::` runs one.

mod report;
mod shared_data;
