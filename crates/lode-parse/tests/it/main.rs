//! The integration tests of lode-parse: the extraction fixtures, and
//! hostile shapes that must not stall extraction.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-parse -- bounds::` runs one.

mod bounds;
mod fixtures;
mod split;
