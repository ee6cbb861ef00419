//! The repository index: walking, building, updating and reading it.
//!
//! The principal types and how they fit:
//!
//! - [`IndexLocation`] says where a repository's index lives in the cache
//!   (never inside the repository) and which database file is current.
//! - [`walk()`] (from `lode-walk`, re-exported) lists the files the
//!   [`lode_core::FilePolicy`] admits, counting the others by [`SkipReason`].
//! - [`build()`] brings the index up to date: it compares the walk with the
//!   index by size and mtime, hashes (blake3) the files that differ, parses
//!   the changed ones in parallel with `lode-parse`, and writes files, chunks,
//!   symbols and postings in one SQLite transaction; a changed file keeps
//!   the ids (and postings) of its unchanged chunks. A change of lode version,
//!   schema, extraction rules or config writes a new database and switches
//!   `CURRENT` to it only when it is complete. [`WriterLock`] keeps writers
//!   to one at a time.
//! - [`embed()`] is the second phase: the committed chunks without vectors
//!   get them, newest files first, in batches across files, each batch its
//!   own transaction; a newer build stops it, the next phase resumes it.
//!   [`BuildOptions::embed`] says how much of it a build runs ([`EmbedPhase`]:
//!   all, for a while, or none, left to the caller); readers meanwhile see a
//!   partial index ([`Index::embedded_chunks`]).
//! - [`Index`] reads one committed state: BM25F candidates over code-aware
//!   [`tokens`] ([`lexical`]), chunks, symbols and statistics, and the
//!   call sites and imports the call graph (`lode-graph`) resolves.
//! - [`Index::file_lexical`] scores whole files (a task's evidence is
//!   spread over a file) from the same postings: [`FileBm25Params`],
//!   [`FileScore`].
//! - [`refresh()`] is what every query of a one-shot process calls first: a
//!   stat pass, and an incremental build when something changed;
//!   [`refresh_and()`] runs the query itself beside the stat pass, keeping
//!   its answer when nothing changed. A long-lived reader keeps a
//!   [`LiveIndex`]: [`live::query`] runs each query on it beside the stat
//!   pass (or `stat`s only what a watcher saw written), and keeps it open
//!   through a build it ran ([`Index::after_build`] re-reads only what that
//!   build touched). [`state()`] says where an index stands without changing
//!   it. These five — [`build()`], [`refresh()`], [`refresh_and()`],
//!   [`live::query`], [`state()`] — are the freshness entry points;
//!   [`incremental`] holds the steps they are made of.
//! - [`overlay`] puts files a session holds but has not written (new,
//!   edited, deleted) over an open [`Index`] for one query, parsed as the
//!   indexer would and cached by their hash; the database is never written.
//! - Refreshes note what they did (files refreshed, fallbacks) in the
//!   opt-in query log of `lode-diagnostics`.
//!
//! ```no_run
//! use lode_core::Config;
//! use lode_index::{Freshness, IndexLocation, RefreshOptions, refresh};
//! let loc = IndexLocation::resolve(std::path::Path::new("."), None)?;
//! let config = Config::default();
//! let (index, freshness) = refresh(&loc, &RefreshOptions::new(&config))?;
//! let terms = lode_index::tokens::query_terms("parse config");
//! let hits = index.lexical(&terms, &Default::default(), &Default::default(), 10)?;
//! if let Freshness::Stale { reason, .. } = &freshness {
//!     eprintln!("answering from the last complete index: {reason}");
//! }
//! # let _ = hits;
//! # Ok::<(), lode_core::Error>(())
//! ```

#![deny(missing_docs)]

mod build;
mod checksum;
mod counts;
pub mod embed;
pub mod lexical;
pub mod live;
mod location;
mod meta;
pub mod overlay;
mod pagecheck;
mod reader;
mod refresh;
mod relations;
mod rows;
pub mod shard;
mod store;
pub mod tokens;
mod top;
pub mod vectors;
mod whole_file;

pub use build::{BuildOptions, BuildReport, build, fingerprint};
pub use embed::{EmbedOptions, EmbedPhase, EmbedReport, Stopped, embed};
pub use live::LiveIndex;
pub use location::{EmbedLock, IndexLocation, WriterLock, mark_damaged};
pub use lode_walk::{SkipReason, WalkReport, WalkedFile, content_reason, snapshot, walk};
pub use meta::Meta;
pub use reader::{ChunkRow, FileRow, Filter, Index, IndexStats, LanguageCount, SymbolRow};
pub use refresh::{Freshness, IndexState, RefreshOptions, refresh, refresh_and, state};

/// The steps the freshness entry points are made of, for a caller that
/// holds its own walk (a test of one step, the stat-pass benchmark): walk
/// against the index's snapshot ([`walk_with`](incremental::walk_with),
/// [`walk_changed`](incremental::walk_changed) for paths a watcher saw),
/// compare ([`stat_diff`](incremental::stat_diff)), and build or update
/// from that walk ([`build_with_walk`](incremental::build_with_walk),
/// [`update_walked`](incremental::update_walked)).
pub mod incremental {
    pub use crate::build::{
        StatDiff, WalkBasis, build_with_walk, stat_diff, walk_changed, walk_with,
    };
    pub use crate::refresh::update_walked;
}
pub use relations::{CallRow, ImportRow};
pub use store::{Manifest, ManifestEntry, SCHEMA_VERSION, Store, WAL_LIMIT_BYTES, open_database};
pub use whole_file::{DenseFiles, FileBm25Params, FileScore};
