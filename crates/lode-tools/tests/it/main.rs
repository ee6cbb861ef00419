//! The integration tests of lode-tools: property tests of the turn-scope
//! invariants, and ranking on a hand-made catalog.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-tools -- ranking::` runs one.

mod invariants;
mod ranking;
