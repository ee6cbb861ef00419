//! The integration tests of lode-gateway: the gateway in process, in front
//! of downstream servers that are this binary, started as the fake server
//! of `fake_server.rs`.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-gateway -- gateway::` runs them.

mod fake_server;
mod gateway;
mod turn_log;
