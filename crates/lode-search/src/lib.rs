//! Query engines over a lode [`Index`](lode_index::Index), and the renderers
//! of their answers.
//!
//! - [`search()`] ranks chunks for a query: BM25 candidates over names, path
//!   and body fused with dense ones, then a code-aware rerank (files many
//!   candidates come from and files named for the query up, a chunk that
//!   defines a queried identifier first, test and example code lower, one file
//!   not flooding the top). Returns [`SearchResults`].
//! - [`grep()`] runs a regex over the indexed files and groups the matching
//!   lines under their enclosing symbol: [`GrepResults`].
//! - [`outline()`] returns a file's symbols as a tree: [`Outline`];
//!   [`outline_dir()`] a directory's files, compactly and capped: [`DirOutline`].
//! - [`render`] turns each answer into compact text or versioned JSON.
//! - [`filter()`] builds the path and language restriction from user words.
//!
//! Every hit carries `path:start-end` with the path relative to the root.
//! An overlay put over the index (`Index::overlay`: files a session has not
//! written) is answered over like the disk: the index's reads include it, and
//! snippets and grep read its content instead of the file's.
//!
//! ```no_run
//! use lode_core::Config;
//! use lode_index::{IndexLocation, RefreshOptions, refresh};
//! use lode_search::{SearchOptions, search};
//! let loc = IndexLocation::resolve(std::path::Path::new("."), None)?;
//! let (index, _) = refresh(&loc, &RefreshOptions::new(&Config::default()))?;
//! let results = search(&index, "where are retries configured", &SearchOptions::default())?;
//! for hit in &results.hits {
//!     println!("{}:{}-{}", hit.path, hit.start_line, hit.end_line);
//! }
//! # Ok::<(), lode_core::Error>(())
//! ```

#![deny(missing_docs)]

mod filter;
mod grep;
mod outline;
mod rank;
pub mod render;
mod search;
mod source;
pub mod task;
#[cfg(test)]
mod test_support;

pub use filter::filter;
pub use grep::{GrepGroup, GrepLine, GrepOptions, GrepResults, grep, validate_regex};
pub use outline::{
    CompactSymbol, DirOutline, FileOutline, Outline, OutlineNode, outline, outline_dir,
};
pub use search::{Partial, SearchHit, SearchOptions, SearchResults, search};
pub use source::clip;
pub use task::{
    FileHit, Mode, TaskOptions, TaskResults, task_candidates, task_chunk_candidates, task_search,
};

/// The note of a search none of whose words the index holds
/// ([`SearchResults::no_strong_match`]).
pub const NO_STRONG_MATCH: &str = "no strong match: no word of the query is in the index; the hits are only the nearest by meaning";

/// Version of the JSON output schema (`docs/json.md`).
pub const JSON_SCHEMA_VERSION: u32 = 1;
