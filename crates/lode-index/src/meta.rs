//! The `meta` table: one value per [`Meta`] key, written by the build and
//! the embedding phase, read by every open. Keys are a type so that a
//! misspelt one does not compile, and reads and writes go through
//! [`get`] and [`set`] inside a transaction, or [`crate::Store::meta`] and
//! [`crate::Store::set_meta`] outside one.

use rusqlite::{Connection, OptionalExtension, params};

/// A key of the `meta` table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Meta {
    /// The store's schema, [`crate::SCHEMA_VERSION`] when it was created.
    SchemaVersion,
    /// What the index was built with (lode version, extraction rules,
    /// config): another value means a rebuild.
    Fingerprint,
    /// The lode version that last built it.
    LodeVersion,
    /// The root it indexes, as a path.
    Root,
    /// Counts up with every committed build; caches of derived data (the
    /// call graph) are keyed by it.
    Generation,
    /// The vector encoding and model of the stored vectors.
    Vectors,
    /// Chunks still without a vector.
    VectorsPending,
    /// The prefix the model puts before a query.
    QueryPrefix,
    /// Per-field length sums of every chunk, for BM25F's averages.
    LexicalSums,
    /// Row counts by language and kind, for `status`.
    RowCounts,
    /// The last full walk's snapshot (directories and watched files).
    WalkSnapshot,
    /// The last full walk's skipped files by reason, as JSON.
    WalkSkipped,
    /// Files the last build could not read.
    Unreadable,
    /// When the last build committed, seconds since the Unix epoch.
    BuiltAt,
    /// How long the last build took, in milliseconds.
    BuildMs,
}

impl Meta {
    /// The key as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Meta::SchemaVersion => "schema_version",
            Meta::Fingerprint => "fingerprint",
            Meta::LodeVersion => "lode_version",
            Meta::Root => "root",
            Meta::Generation => "generation",
            Meta::Vectors => "vectors",
            Meta::VectorsPending => "vectors_pending",
            Meta::QueryPrefix => "query_prefix",
            Meta::LexicalSums => "lexical_sums",
            Meta::RowCounts => "row_counts",
            Meta::WalkSnapshot => "walk_snapshot",
            Meta::WalkSkipped => "walk_skipped",
            Meta::Unreadable => "unreadable",
            Meta::BuiltAt => "built_at",
            Meta::BuildMs => "build_ms",
        }
    }
}

/// The value of `key` on `conn` (a connection or a transaction).
pub(crate) fn get(conn: &Connection, key: Meta) -> rusqlite::Result<Option<String>> {
    conn.query_row(
        "SELECT value FROM meta WHERE key = ?1",
        [key.as_str()],
        |r| r.get(0),
    )
    .optional()
}

/// Sets `key` to `value` on `conn`.
pub(crate) fn set(conn: &Connection, key: Meta, value: &str) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
        params![key.as_str(), value],
    )
    .map(|_| ())
}
