//! The integration tests of lode-index: a long-lived reader across updates,
//! the embedding phase, overlays, the stat pass and the database's storage.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-index -- snapshot::` runs one.
//! `common` holds what several modules share.

mod carry;
mod common;
mod embedding;
mod overlay;
mod snapshot;
mod storage;
