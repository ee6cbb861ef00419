//! lode's vocabulary, shared by every other crate.
//!
//! The principal types:
//!
//! - [`Language`]: what a file is written in, decided by `lode-parse`.
//! - [`Span`]: where something is, as 1-based inclusive lines plus a byte range.
//! - [`Symbol`], [`CallSite`], [`Import`] and [`Chunk`]: what extraction finds in
//!   one file, gathered in a [`FileExtract`]. Symbols point at their parent by
//!   index, chunks at the symbol they belong to, so a `FileExtract` is a small
//!   self-contained tree.
//! - [`Config`] and [`FilePolicy`]: the configuration model (which files are
//!   indexed, how large they may be).
//! - [`Error`] and [`ErrorCode`]: failures with a stable code and exit status.
//! - [`shown`]: repository text escaped for printing (names, paths, snippets).
//!
//! ```
//! use lode_core::{Span, Symbol, SymbolKind};
//! let span = Span::new(3, 7, 40, 180);
//! let sym = Symbol::new("parse_config", SymbolKind::Function, span);
//! assert_eq!(sym.span.line_count(), 5);
//! assert_eq!(sym.kind.as_str(), "function");
//! ```

#![deny(missing_docs)]

mod cache;
mod config;
pub mod endpoint;
mod error;
pub mod ident;
pub mod inside;
mod language;
mod record;
pub mod shown;
mod span;

pub use cache::{cache_base, default_cache_base};
pub use config::{
    Config, DiagnosticsConfig, EmbedBackend, EmbedConfig, EmbedEncoding, FilePolicy, IndexConfig,
    McpConfig, RemoteConfig, has_credentials,
};
pub use error::{Error, ErrorCode, Result};
pub use language::Language;
pub use record::{CallSite, Chunk, ChunkKind, FileExtract, Import, Symbol, SymbolKind};
pub use span::Span;

/// The version of lode, part of every index fingerprint.
pub const LODE_VERSION: &str = env!("CARGO_PKG_VERSION");
