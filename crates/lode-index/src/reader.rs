//! Reading an index: chunks, symbols, files and statistics here; lexical
//! candidates in `postings`, dense ones in `dense`.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use lode_core::{ChunkKind, Error, Language, Result, SymbolKind};
use rusqlite::OptionalExtension;
use serde::Serialize;

use crate::lexical::ScoreBoard;
use crate::location::IndexLocation;
use crate::meta::{self, Meta};
use crate::overlay::Active;
use crate::rows::{self, RowCache};
use crate::store::{Manifest, Store, sql_err};

mod dense;
mod postings;

use dense::StoredVectors;
use postings::{LexicalStats, PostingsCache};

/// An index opened for reading. Every read sees one committed state.
pub struct Index {
    store: Store,
    /// The repository root this index is of, and its cache directory.
    pub location: IndexLocation,
    stats_cache: OnceLock<LexicalStats>,
    vectors_cache: OnceLock<StoredVectors>,
    /// Which file each chunk is in, and each file's length, for whole-file scoring.
    file_table: OnceLock<Arc<crate::whole_file::FileTable>>,
    postings_cache: Mutex<PostingsCache>,
    /// The lexical scores of the query under way, kept to spare each query
    /// an array the size of the index.
    score_board: Mutex<ScoreBoard>,
    /// Chunk rows read so far (see [`Index::chunks`]).
    chunk_rows: Mutex<RowCache>,
    /// An overlay over this index for the current query (`Index::overlay`).
    overlay: RefCell<Option<Arc<Active>>>,
    /// One-line notes of dense queries that ran lexical-only, for the caller.
    notes: Mutex<Vec<String>>,
    /// The build generation committed when this was opened, or last brought
    /// up to date by [`Index::after_build`].
    generation: u64,
}

/// The build generation and the count of chunks without vectors, as committed.
fn generation_and_pending(conn: &rusqlite::Connection) -> rusqlite::Result<(u64, u64)> {
    let number = |key: Meta| -> rusqlite::Result<u64> {
        Ok(meta::get(conn, key)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0))
    };
    Ok((number(Meta::Generation)?, number(Meta::VectorsPending)?))
}

/// A symbol as stored.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SymbolRow {
    /// Its `symbols` row id (negative for an overlay's symbol); valid only
    /// within the committed state it was read from.
    #[serde(skip)]
    pub id: i64,
    /// The id of the symbol it is nested in, if any.
    #[serde(skip)]
    pub parent: Option<i64>,
    /// The file it is defined in, relative to the root and `/`-separated.
    pub path: String,
    /// The name as written, without its container.
    pub name: String,
    /// What the definition is.
    pub kind: SymbolKind,
    /// The qualified parent as written (`impl Config`, `class Router`).
    pub container: Option<String>,
    /// First line of the definition (without the doc comments above it), 1-based.
    pub start_line: u32,
    /// Last line of the definition, 1-based and inclusive.
    pub end_line: u32,
    /// The declaration up to its body, whitespace collapsed, capped.
    pub signature: String,
    /// The doc comment or docstring, comment markers stripped.
    pub doc: Option<String>,
}

/// A chunk as stored, with the file it is in and the symbol it belongs to.
#[derive(Clone, Debug)]
pub struct ChunkRow {
    /// Its `chunks` row id, the id postings and vectors name (negative for
    /// an overlay's chunk). An update keeps the id of an unchanged chunk.
    pub id: i64,
    /// The file it is in, relative to the root and `/`-separated.
    pub path: String,
    /// The file's language.
    pub lang: Language,
    /// Why the chunk exists (a symbol, a file header, a text window, …).
    pub kind: ChunkKind,
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based and inclusive.
    pub end_line: u32,
    /// Offset of its first byte in the file (bytes, not characters).
    pub start_byte: u32,
    /// Offset one past its last byte (exclusive).
    pub end_byte: u32,
    /// The symbol the chunk belongs to; `None` for a header, code between
    /// definitions or a text window.
    pub symbol: Option<SymbolRow>,
    /// The type whose definition begins in the chunk, when that is not the
    /// chunk's symbol: a split class's header (`class Grid:`) joins the chunk
    /// of its first member. An impl's or extension's header is left out: it
    /// names a type defined elsewhere.
    pub opens: Option<String>,
}

/// A file as stored.
#[derive(Clone, Debug, Serialize)]
pub struct FileRow {
    /// Its `files` row id (negative for an overlay's file).
    #[serde(skip)]
    pub id: i64,
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// As detected from the path and the first bytes, skipped files included.
    pub lang: Language,
    /// Size in bytes when it was indexed.
    pub size: u64,
    /// Line count; 0 for a skipped file.
    pub lines: u32,
    /// Why its content is not indexed (`binary`, `minified`,
    /// `language_not_selected`, …): the row has no chunks or symbols, and
    /// keeps the next build from reading the file again while its size and
    /// mtime stay. `None` for an indexed file.
    pub skip_reason: Option<String>,
}

/// Counts for one language.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LanguageCount {
    /// Indexed files of the language (skipped ones not counted).
    pub files: u64,
    /// Chunks of those files.
    pub chunks: u64,
    /// Symbols of those files.
    pub symbols: u64,
}

/// What an index holds.
#[derive(Clone, Debug, Default, Serialize)]
pub struct IndexStats {
    /// Indexed files (not those kept as rows with a skip reason).
    pub files: u64,
    /// Chunks of every indexed file.
    pub chunks: u64,
    /// Symbols of every indexed file.
    pub symbols: u64,
    /// Call sites stored.
    pub calls: u64,
    /// Imports stored, one per statement and source.
    pub imports: u64,
    /// Counts per language name (as [`Language::as_str`]), indexed files only.
    pub by_language: BTreeMap<String, LanguageCount>,
    /// Files not indexed, by reason: those kept as rows with a skip reason,
    /// the last full walk's skips, and the files the last build could not
    /// read (`unreadable`).
    pub skipped: BTreeMap<String, u64>,
    /// Files indexed with invalid UTF-8 replaced.
    pub lossy_utf8: u64,
    /// Files with syntax errors (what could be read was kept).
    pub parse_errors: u64,
    /// Files the grammar could not parse at all, indexed as text.
    pub parse_failed: u64,
    /// The last committed build's generation (0: none).
    pub generation: u64,
    /// When the last build committed, seconds since the Unix epoch (0: unknown).
    pub built_at: u64,
    /// How long the last build's lexical phase took, in milliseconds (the
    /// embedding phase is apart).
    pub build_ms: f64,
    /// The fingerprint the index was built with (see [`crate::fingerprint`]).
    pub fingerprint: String,
    /// The lode version that last built it.
    pub lode_version: String,
    /// Chunks without a vector yet (the embedding phase has not reached them).
    pub vectors_pending: u64,
}

/// Restricts what a query reads: lexical and dense candidates, grep's files,
/// outlines and the graph's rows.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    /// Only files under this path (relative to the root, `/`-separated).
    pub path_prefix: Option<String>,
    /// Only files of these languages.
    pub languages: Vec<Language>,
}

impl Filter {
    /// Whether a file at `path` in language `lang` passes the filter.
    pub fn admits(&self, path: &str, lang: Language) -> bool {
        let prefix = self
            .path_prefix
            .as_deref()
            .map(|p| p.trim_end_matches('/'))
            .filter(|p| !p.is_empty());
        let under = prefix.is_none_or(|p| {
            path == p
                || path
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        under && (self.languages.is_empty() || self.languages.contains(&lang))
    }
}

pub(crate) const SYMBOL_COLUMNS: &str = "s.id, s.parent, f.path, s.name, s.kind, s.container, s.start_line, s.end_line, s.signature, s.doc";

/// A column holding a stored name (a language, a kind), read back: a name
/// this version does not know is a row that cannot be decoded.
pub(crate) fn named<T>(
    r: &rusqlite::Row,
    at: usize,
    parse: fn(&str) -> Option<T>,
) -> rusqlite::Result<T> {
    let name: String = r.get(at)?;
    parse(&name).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            at,
            rusqlite::types::Type::Text,
            format!("unknown name {name:?}").into(),
        )
    })
}

pub(crate) fn symbol_row(r: &rusqlite::Row, at: usize) -> rusqlite::Result<SymbolRow> {
    Ok(SymbolRow {
        id: r.get(at)?,
        parent: r.get(at + 1)?,
        path: r.get(at + 2)?,
        name: r.get(at + 3)?,
        kind: named(r, at + 4, SymbolKind::from_name)?,
        container: r.get(at + 5)?,
        start_line: r.get(at + 6)?,
        end_line: r.get(at + 7)?,
        signature: r.get(at + 8)?,
        doc: r.get(at + 9)?,
    })
}

impl Index {
    /// Opens the current index of `loc`; [`Error::NoIndex`] when none was ever built.
    pub fn open(loc: &IndexLocation) -> Result<Index> {
        let path = loc
            .current_db()
            .ok_or_else(|| Error::NoIndex(loc.root.clone()))?;
        if let Some(reason) = loc.damaged() {
            return Err(Error::IndexCorrupt {
                path,
                reason: format!("damaged: {reason}; the next build makes it again"),
            });
        }
        let store = Store::open(&path)?;
        let (generation, _) =
            generation_and_pending(store.connection()).map_err(|e| sql_err(&path, e))?;
        Ok(Index {
            store,
            location: loc.clone(),
            stats_cache: OnceLock::new(),
            vectors_cache: OnceLock::new(),
            file_table: OnceLock::new(),
            postings_cache: Mutex::new(PostingsCache::default()),
            score_board: Mutex::new(ScoreBoard::default()),
            chunk_rows: Mutex::new(RowCache::default()),
            overlay: RefCell::new(None),
            notes: Mutex::new(Vec::new()),
            generation,
        })
    }

    /// What an integrity check finds wrong: SQLite's `quick_check`, then
    /// every symbol, call and file row decoded as queries decode them.
    /// Empty when all is well. Reads the whole index: for `lode doctor`.
    pub fn integrity_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let conn = self.store.connection();
        match conn.prepare("PRAGMA quick_check").and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<String>>>()
        }) {
            Ok(rows) => problems.extend(rows.into_iter().filter(|r| r != "ok")),
            Err(e) => problems.push(format!("quick_check: {e}")),
        }
        let checks: [(&str, &dyn Fn() -> Result<usize>); 3] = [
            ("symbols", &|| self.all_symbols().map(|v| v.len())),
            ("calls", &|| self.all_calls().map(|v| v.len())),
            ("files", &|| {
                self.indexed_paths(&Filter::default()).map(|v| v.len())
            }),
        ];
        for (what, check) in checks {
            if let Err(e) = check() {
                problems.push(format!("{what}: {e}"));
            }
        }
        problems
    }

    /// The build generation this open index reads (see [`Index::after_build`]).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Brings what this open index decoded up to date after the build of
    /// `report` committed, when that build was the only commit since it was
    /// opened (a long-lived reader keeps its connection through an update):
    /// the vectors and postings of the files and terms the build touched are
    /// read again on demand, the rest stay. Otherwise — another build or an
    /// embedding phase in between, vectors pending — everything is dropped
    /// and read afresh on first use. A rebuild writes a new database, which
    /// this connection does not follow: then it returns `false` and the
    /// caller opens the current one.
    /// `old`: the file list as it was before the build. Returns whether the
    /// build was the only commit (a caller's own copy of the file list then
    /// only needs the touched paths read again: `Store::patch_manifest`).
    pub fn after_build(&mut self, report: &crate::BuildReport, old: &Manifest) -> Result<bool> {
        self.stats_cache.take();
        self.file_table.take();
        let tx = self
            .store
            .connection()
            .unchecked_transaction()
            .map_err(|e| self.err(e))?;
        let (generation, pending) = generation_and_pending(&tx).map_err(|e| self.err(e))?;
        let one_build = self.generation + 1 == report.generation
            && generation == report.generation
            && self.location.current_db().as_deref() == Some(self.store.path());
        let postings = self
            .postings_cache
            .get_mut()
            .unwrap_or_else(|p| p.into_inner());
        match (&report.touched_terms, one_build) {
            (Some(terms), true) => postings.forget(terms),
            _ => *postings = PostingsCache::default(),
        }
        let rows = self.chunk_rows.get_mut().unwrap_or_else(|p| p.into_inner());
        if one_build {
            rows.forget_files(&report.touched.iter().map(String::as_str).collect());
        } else {
            *rows = RowCache::default();
        }
        if let Some(v) = self.vectors_cache.take()
            && one_build
            && v.pending == 0
            && pending == 0
        {
            let v = self.patch_vectors(&tx, v, old, &report.touched)?;
            let _ = self.vectors_cache.set(v);
        }
        self.generation = generation;
        Ok(one_build)
    }

    pub(crate) fn file_table_slot(&self) -> &OnceLock<Arc<crate::whole_file::FileTable>> {
        &self.file_table
    }

    pub(crate) fn overlay_slot(&self) -> &RefCell<Option<Arc<Active>>> {
        &self.overlay
    }

    /// The database this index reads, for its meta values and raw queries.
    pub fn store(&self) -> &Store {
        &self.store
    }

    pub(crate) fn err(&self, e: rusqlite::Error) -> Error {
        sql_err(self.store.path(), e)
    }

    /// The chunks a filter admits, or `None` when it admits all.
    fn allowed_chunks(&self, filter: &Filter) -> Result<Option<HashSet<i64>>> {
        if filter.path_prefix.is_none() && filter.languages.is_empty() {
            return Ok(None);
        }
        let paths: HashSet<String> = self.indexed_paths(filter)?.into_iter().collect();
        let mut stmt = self
            .store
            .connection()
            .prepare_cached("SELECT c.id, f.path FROM chunks c JOIN files f ON f.id = c.file_id")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.err(e))?;
        let mut out = HashSet::new();
        for row in rows {
            let (id, path) = row.map_err(|e| self.err(e))?;
            if paths.contains(&path) {
                out.insert(id);
            }
        }
        Ok(Some(out))
    }

    /// Chunks by id, in the order given; ids that no longer exist are left out.
    pub fn chunks(&self, ids: &[i64]) -> Result<Vec<ChunkRow>> {
        Ok(self
            .shared_chunks(ids)?
            .into_iter()
            .map(Arc::unwrap_or_clone)
            .collect())
    }

    /// [`chunks`](Self::chunks), shared with this open index: it keeps the
    /// rows it has read (it sees one committed state), and a search that
    /// only ranks most of them need not copy them.
    pub fn shared_chunks(&self, ids: &[i64]) -> Result<Vec<Arc<ChunkRow>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let over = if ids.iter().any(|&id| id < 0) {
            self.active_overlay()
        } else {
            None
        };
        let mut cache = self.chunk_rows.lock().unwrap_or_else(|p| p.into_inner());
        // Overlay chunks (negative ids) are not in the database.
        let disk: Vec<i64> = ids.iter().copied().filter(|&id| id >= 0).collect();
        let mut by_id: HashMap<i64, Arc<ChunkRow>, foldhash::fast::RandomState> =
            HashMap::with_capacity_and_hasher(ids.len(), Default::default());
        for row in
            rows::fetch(self.store.connection(), &cache.missing(&disk)).map_err(|e| self.err(e))?
        {
            let row = Arc::new(row);
            cache.keep(&row);
            by_id.insert(row.id, row);
        }
        for &id in &disk {
            if let Some(row) = cache.get(id).filter(|_| !by_id.contains_key(&id)) {
                by_id.insert(id, row.clone());
            }
        }
        if let Some(o) = &over {
            for &id in ids.iter().filter(|&&id| id < 0) {
                if let Some(c) = o.chunk(id) {
                    by_id.insert(id, Arc::new(c.clone()));
                }
            }
        }
        Ok(ids.iter().filter_map(|id| by_id.remove(id)).collect())
    }

    /// A file's row, if the index has it.
    pub fn file(&self, path: &str) -> Result<Option<FileRow>> {
        if let Some(row) = self.active_overlay().and_then(|o| o.file(path)) {
            return Ok(row);
        }
        self.store
            .connection()
            .prepare_cached(
                "SELECT id, path, lang, size, lines, skip_reason FROM files WHERE path = ?1",
            )
            .and_then(|mut s| {
                s.query_row([path], |r| {
                    Ok(FileRow {
                        id: r.get(0)?,
                        path: r.get(1)?,
                        lang: named(r, 2, Language::from_name)?,
                        size: r.get::<_, i64>(3)? as u64,
                        lines: r.get(4)?,
                        skip_reason: r.get(5)?,
                    })
                })
                .optional()
            })
            .map_err(|e| self.err(e))
    }

    /// The symbols of one file, in source order (outer before inner).
    pub fn file_symbols(&self, path: &str) -> Result<Vec<SymbolRow>> {
        if let Some(rows) = self.active_overlay().and_then(|o| o.file_symbols(path)) {
            return Ok(rows);
        }
        let mut stmt = self
            .store
            .connection()
            .prepare_cached(&format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE f.path = ?1 ORDER BY s.id"
            ))
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([path], |r| symbol_row(r, 0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Paths of the indexed files under the filter, sorted.
    pub fn indexed_paths(&self, filter: &Filter) -> Result<Vec<String>> {
        Ok(self
            .indexed_files(filter)?
            .into_iter()
            .map(|f| f.0)
            .collect())
    }

    /// The same files with their languages, in path order (one read, for a
    /// caller that wants both the files and which of them are code).
    pub fn indexed_files(&self, filter: &Filter) -> Result<Vec<(String, Language)>> {
        let mut stmt = self
            .store
            .connection()
            .prepare_cached("SELECT path, lang FROM files WHERE skip_reason IS NULL ORDER BY path")
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((r.get::<_, String>(0)?, named(r, 1, Language::from_name)?))
            })
            .map_err(|e| self.err(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (path, lang) = row.map_err(|e| self.err(e))?;
            if filter.admits(&path, lang) {
                out.push((path, lang));
            }
        }
        let own = |o: &Active| {
            (o.indexed_files(filter))
                .map(|(p, l)| (p.clone(), l))
                .collect()
        };
        let mut out = self.layered(out, |f| f.0.as_str(), own);
        out.sort();
        Ok(out)
    }

    /// What the index holds, every row counted (for `lode status`; a build
    /// reports its own kept counts instead).
    pub fn stats(&self) -> Result<IndexStats> {
        stats(&self.store)
    }

    /// Size on disk of the database and its log, in bytes.
    pub fn disk_bytes(&self) -> u64 {
        let p = self.store.path();
        [
            p.to_path_buf(),
            p.with_extension("db-wal"),
            p.with_extension("db-shm"),
        ]
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum()
    }
}

/// The index's statistics, every row counted (`lode status`; a build keeps
/// its own counts instead).
fn stats(store: &Store) -> Result<IndexStats> {
    let conn = store.connection();
    let err = |e| sql_err(store.path(), e);
    let count = |sql: &str| {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(err)
    };
    // The counts a build reports, as it keeps them (`counts::RowCounts`).
    let rows = crate::counts::RowCounts::of_all(conn).map_err(err)?;
    let as_count = |n: i64| n.max(0) as u64;
    let mut s = IndexStats {
        files: as_count(rows.files),
        chunks: as_count(rows.chunks),
        symbols: as_count(rows.symbols),
        lossy_utf8: as_count(rows.lossy_utf8),
        parse_errors: as_count(rows.parse_errors),
        parse_failed: as_count(rows.parse_failed),
        skipped: (rows.skipped.iter())
            .map(|(reason, &n)| (reason.clone(), as_count(n)))
            .collect(),
        calls: count("SELECT COUNT(*) FROM calls")?,
        imports: count("SELECT COUNT(*) FROM imports")?,
        ..IndexStats::default()
    };
    let mut stmt = conn
        .prepare(
            // One pass over each table's file index, not a scan per language.
            "SELECT f.lang, COUNT(*), COALESCE(SUM(cc.n), 0), COALESCE(SUM(sc.n), 0) FROM files f \
             LEFT JOIN (SELECT file_id, COUNT(*) AS n FROM chunks GROUP BY file_id) cc ON cc.file_id = f.id \
             LEFT JOIN (SELECT file_id, COUNT(*) AS n FROM symbols GROUP BY file_id) sc ON sc.file_id = f.id \
             WHERE f.skip_reason IS NULL GROUP BY f.lang",
        )
        .map_err(err)?;
    let by_language = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                LanguageCount {
                    files: r.get::<_, i64>(1)? as u64,
                    chunks: r.get::<_, i64>(2)? as u64,
                    symbols: r.get::<_, i64>(3)? as u64,
                },
            ))
        })
        .map_err(err)?;
    for row in by_language {
        let (lang, c) = row.map_err(err)?;
        s.by_language.insert(lang, c);
    }
    if let Some(json) = store.meta(Meta::WalkSkipped)? {
        let walk: BTreeMap<String, u64> = serde_json::from_str(&json).unwrap_or_default();
        for (reason, n) in walk {
            *s.skipped.entry(reason).or_default() += n;
        }
    }
    if let Some(n) = store
        .meta(Meta::Unreadable)?
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|&n| n > 0)
    {
        *s.skipped.entry("unreadable".into()).or_default() += n;
    }
    s.generation = store
        .meta(Meta::Generation)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    s.built_at = store
        .meta(Meta::BuiltAt)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    s.build_ms = store
        .meta(Meta::BuildMs)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    s.fingerprint = store.meta(Meta::Fingerprint)?.unwrap_or_default();
    s.lode_version = store.meta(Meta::LodeVersion)?.unwrap_or_default();
    s.vectors_pending = crate::embed::pending_chunks(store)?;
    Ok(s)
}
