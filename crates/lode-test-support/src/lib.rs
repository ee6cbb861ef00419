//! What the integration tests of several lode crates share, so that none
//! keeps a copy of another's helpers. A dev-dependency only.
//!
//! - [`copy_dir`]: a fixture tree copied into a test's temporary directory,
//!   where the test may change it (lode-cli's and lode-gather's tests).
//! - [`refused_url`]: a loopback URL nothing listens on, for an endpoint
//!   that refuses connections.
//! - [`fake_embed`]: a fake embedding server, OpenAI- or Ollama-shaped, each
//!   request answered as a closure says: vectors, an error status, a hang,
//!   a file, a reply cut short (lode-embed's, lode-mcp's and lode-cli's tests).
//! - [`fake_decision`]: a fake decision endpoint for `lode gather` (a chat
//!   completion whose content a closure writes), with
//!   [`fake_decision::frontier`] to read the prompt and
//!   [`fake_decision::chain_model`], the model of the tests on lode-gather's
//!   `chain` fixture (lode-gather's and lode-cli's tests).
//! - [`mcp`] (feature `mcp`): the client's side of an MCP test: [`mcp::call`]
//!   a tool, read a result's [`mcp::text`] or [`mcp::structured`] content,
//!   list tool [`mcp::names`] and a gateway search's [`mcp::activated`]
//!   tools, and [`mcp::Listener`], a client counting
//!   `notifications/tools/list_changed` (lode-cli's and lode-gateway's tests).
//!
//! - [`expect`]: expected-output files beside the inputs, compared or,
//!   with `UPDATE_EXPECT=1`, rewritten (lode-parse's, lode-search's and
//!   lode-cli's tests).
//!
//! Both fakes wrap `lode_http::test_server`. What the tests of one crate
//! alone use stays in that crate's `common` test module.
//!
//! ```
//! use std::path::Path;
//! use lode_test_support::copy_dir;
//! use lode_test_support::fake_embed::{Fake, Reply};
//!
//! let to = std::env::temp_dir().join(format!("lode-test-support-{}", std::process::id()));
//! copy_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &to);
//! assert!(to.join("lib.rs").is_file());
//! std::fs::remove_dir_all(&to).unwrap();
//!
//! // 8-dimensional vectors for the first request, 503 for the others.
//! let fake = Fake::start(|r| if r.n == 0 { Reply::Embed(8) } else { Reply::Raw(503, String::new()) });
//! assert!(fake.url.starts_with("http://127.0.0.1:"));
//! assert_eq!(fake.requests(), 0);
//! ```

#![deny(missing_docs)]

pub mod expect;
pub mod fake_decision;
pub mod fake_embed;
#[cfg(feature = "mcp")]
pub mod mcp;

use std::path::Path;

/// Copies the tree at `from` into `to` (created if missing): directories
/// and files, contents only. Panics on any I/O error.
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// A loopback URL nothing listens on: an endpoint that refuses connections.
pub fn refused_url() -> String {
    lode_http::test_server::refused_url()
}
