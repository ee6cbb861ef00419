//! The integration tests of lode-graph: call resolution against
//! hand-labelled edges.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-graph -- edges::` runs one.

mod edges;
