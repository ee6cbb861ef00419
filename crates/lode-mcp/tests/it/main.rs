//! The integration tests of lode-mcp: the server in process, with the
//! embedding phase on its own thread, and the cost of overlays.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-mcp -- overlay_work::` runs one.
//! `common` holds what several modules share.

mod background_embedding;
mod common;
mod overlay_work;
