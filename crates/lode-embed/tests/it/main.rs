//! The integration tests of lode-embed: the built-in model against reference
//! embeddings, bad model directories, storage encodings, and the endpoint
//! embedders against a fake server.
//!
//! One test binary (each one links the crate and all its dependencies), a
//! module per subject: `cargo test -p lode-embed -- remote::` runs one.

mod encodings;
mod errors;
mod reference;
mod remote;
