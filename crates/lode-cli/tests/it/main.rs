//! The integration tests of lode-cli: the real `lode` binary run on fixture
//! repositories, each with its own cache (`common::Repo`).
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-cli -- mcp::` runs one. `common`
//! holds what several modules share.

mod bench;
mod cli;
mod common;
mod containment;
mod diagnostics;
mod doctor;
mod embed;
mod expect;
mod gateway;
mod gather;
mod graph;
mod hf;
mod index;
mod languages;
mod mcp;
mod mcp_load;
mod mcp_overlay;
mod mcp_raw;
mod overlay;
mod tools;

/// The gateway tests' fake downstream MCP server: this binary, started with
/// `fake-mcp-server` as its first argument.
#[path = "../../../lode-gateway/tests/it/fake_server.rs"]
mod fake_server;
