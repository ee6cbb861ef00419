//! The integration tests of lode-gather: the walk and `ask` on a fixture
//! with a known call chain (`common::Fixture`).
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-gather -- walk::` runs one.
//! `common` holds what several modules share.

mod ask;
mod common;
mod walk;
