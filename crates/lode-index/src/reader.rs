//! Reading an index: lexical candidates, chunks, symbols and statistics.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, OnceLock};

use lode_core::{ChunkKind, Error, Language, Result, SymbolKind};
use rusqlite::OptionalExtension;
use serde::Serialize;

use crate::lexical::{
    self, Bm25Params, CollectionStats, LengthSums, Posting, ScoreBoard, ScoringKey,
};
use crate::location::IndexLocation;
use crate::meta::{self, Meta};
use crate::overlay::{self, Active};
use crate::rows::{self, RowCache};
use crate::store::{Manifest, Store, sql_err};
use crate::top::best;

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

/// Every stored chunk vector, read at once, and the chunks of the index at
/// that moment (the embedding phase may not have reached them all).
struct StoredVectors {
    ids: Vec<i64>,
    data: Vec<u8>,
    chunks: u64,
    /// Each file's run of `ids` as `(file_id, first, count)`, by file id:
    /// what [`Index::after_build`] replaces after an update.
    files: Vec<(i64, usize, usize)>,
    stride: usize,
    /// Chunks without vectors in the committed state these were read from.
    pending: u64,
}

/// What BM25 needs of the whole collection, per open index.
#[derive(Clone, Copy)]
struct LexicalStats {
    collection: CollectionStats,
    max_chunk_id: i64,
}

impl StoredVectors {
    /// Adds file `file`'s vectors after every file read so far.
    fn append(&mut self, file: i64, ids: &[u8], data: &[u8]) {
        if data.len() != ids.len() / 8 * self.stride {
            return; // written by another model; the fingerprint rebuilds it
        }
        let n = ids.len() / 8;
        self.files.push((file, self.ids.len(), n));
        self.ids.extend(crate::embed::vector_ids(ids));
        self.data.extend_from_slice(data);
    }

    /// Removes file `file`'s vectors, if it has any.
    fn remove(&mut self, file: i64) {
        let Ok(at) = self.files.binary_search_by_key(&file, |f| f.0) else {
            return;
        };
        let (_, first, n) = self.files.remove(at);
        self.ids.drain(first..first + n);
        self.data
            .drain(first * self.stride..(first + n) * self.stride);
        for f in &mut self.files[at..] {
            f.1 -= n;
        }
        self.chunks -= n as u64;
    }

    /// Puts file `file`'s vectors where a fresh read (by file id) would.
    fn insert(&mut self, file: i64, ids: &[u8], data: &[u8]) {
        if data.len() != ids.len() / 8 * self.stride {
            return;
        }
        let n = ids.len() / 8;
        let at = self.files.partition_point(|f| f.0 < file);
        let first = self.files.get(at).map_or(self.ids.len(), |f| f.1);
        self.ids.splice(first..first, crate::embed::vector_ids(ids));
        let byte = first * self.stride;
        self.data.splice(byte..byte, data.iter().copied());
        for f in &mut self.files[at..] {
            f.1 += n;
        }
        self.files.insert(at, (file, first, n));
        self.chunks += n as u64;
    }
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

/// Decoded postings by term (see [`Index::postings`]).
#[derive(Default)]
struct PostingsCache {
    map: HashMap<String, Arc<TermPostings>>,
    entries: usize,
}

impl PostingsCache {
    /// Drops the postings of `terms` (a build rewrote them) and, since the
    /// collection's lengths moved, lets every other term's pseudo-frequencies
    /// be worked out again on demand.
    fn forget(&mut self, terms: &[String]) {
        for term in terms {
            if let Some(postings) = self.map.remove(term) {
                self.entries -= postings.list.len();
            }
        }
        let mut shared = 0;
        self.map.retain(|_, postings| match Arc::get_mut(postings) {
            Some(p) => {
                p.pseudo = OnceLock::new();
                true
            }
            // Held by a query under way elsewhere: dropped rather than reset.
            None => {
                shared += postings.list.len();
                false
            }
        });
        self.entries -= shared;
    }
}

/// One term's postings, and their pseudo-frequencies once a query has
/// computed them (see [`TermPostings::pseudo_frequencies`]).
pub(crate) struct TermPostings {
    pub(crate) list: Vec<Posting>,
    pseudo: OnceLock<(ScoringKey, Vec<f64>)>,
}

impl TermPostings {
    /// The BM25F pseudo-frequency of each posting, in order: most of a
    /// posting's score, and all its divisions but one. Kept when `keep` (a
    /// query over the index alone; an overlay's statistics differ) for the
    /// first parameters asked for (the defaults, in practice), computed
    /// afresh otherwise.
    fn pseudo_frequencies(
        &self,
        params: &Bm25Params,
        collection: &CollectionStats,
        keep: bool,
    ) -> Cow<'_, [f64]> {
        let key = params.scoring_key(collection);
        let compute = || -> Vec<f64> {
            self.list
                .iter()
                .map(|p| params.pseudo_frequency(collection, p))
                .collect()
        };
        let kept = match self.pseudo.get() {
            None if keep => Some(self.pseudo.get_or_init(|| (key, compute()))),
            kept => kept,
        };
        match kept {
            Some((kept_key, kept)) if *kept_key == key => Cow::Borrowed(kept),
            _ => Cow::Owned(compute()),
        }
    }
}

/// At most this many postings (32 bytes each, and 8 for a pseudo-frequency)
/// stay decoded per open index.
const POSTINGS_CACHE_ENTRIES: usize = 4_000_000;

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

    /// `v` with the vectors of the files at `touched` read again (the files
    /// of those paths before the build, `old`, and after it).
    fn patch_vectors(
        &self,
        tx: &rusqlite::Transaction,
        mut v: StoredVectors,
        old: &Manifest,
        touched: &[String],
    ) -> Result<StoredVectors> {
        let mut by_path = tx
            .prepare_cached("SELECT id FROM files WHERE path = ?1")
            .map_err(|e| self.err(e))?;
        let mut files: Vec<i64> = Vec::new();
        for path in touched {
            files.extend(old.get(path).map(|e| e.id));
            files.extend(
                by_path
                    .query_row([path], |r| r.get::<_, i64>(0))
                    .optional()
                    .map_err(|e| self.err(e))?,
            );
        }
        files.sort_unstable();
        files.dedup();
        for file in files {
            v.remove(file);
            if let Some((ids, data)) =
                crate::embed::file_vectors(tx, file).map_err(|e| self.err(e))?
            {
                v.insert(file, &ids, &data);
            }
        }
        Ok(v)
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

    /// A term's decoded postings, kept for the life of this open index (it
    /// sees one committed state) up to [`POSTINGS_CACHE_ENTRIES`] in all.
    pub(crate) fn postings(
        &self,
        stmt: &mut rusqlite::CachedStatement,
        term: &str,
    ) -> Result<Option<Arc<TermPostings>>> {
        if let Some(hit) = self.postings_cache.lock().unwrap().map.get(term) {
            return Ok(Some(hit.clone()));
        }
        // Blocks come in block order, and chunk ids ascend within and across them.
        let mut rows = stmt.query([term]).map_err(|e| self.err(e))?;
        let mut list = Vec::new();
        let mut found = false;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            found = true;
            let blob = row.get_ref(0).map_err(|e| self.err(e))?;
            let blob = blob.as_blob().map_err(|e| self.err(e.into()))?;
            if lexical::decode(blob, |p| list.push(p)).is_none() {
                return Err(Error::IndexCorrupt {
                    path: self.store.path().to_path_buf(),
                    reason: format!("damaged postings for {term:?}"),
                });
            }
        }
        if !found {
            return Ok(None);
        }
        let postings = Arc::new(TermPostings {
            list,
            pseudo: OnceLock::new(),
        });
        let mut cache = self.postings_cache.lock().unwrap();
        let n = postings.list.len();
        if cache.entries + n <= POSTINGS_CACHE_ENTRIES {
            cache.entries += n;
            cache.map.insert(term.to_string(), postings.clone());
        }
        Ok(Some(postings))
    }

    /// Collection statistics of the lexical index, read once per open index.
    /// (It also holds the highest chunk id, which sizes the score array.)
    fn lexical_stats(&self) -> Result<LexicalStats> {
        if let Some(s) = self.stats_cache.get() {
            return Ok(*s);
        }
        let sums = self.store.meta(Meta::LexicalSums)?.unwrap_or_default();
        let max_chunk_id: i64 = self
            .store
            .connection()
            .query_row("SELECT COALESCE(MAX(id), 0) FROM chunks", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let stats = LexicalStats {
            collection: LengthSums::from_meta(&sums)
                .unwrap_or_default()
                .collection(),
            max_chunk_id,
        };
        let _ = self.stats_cache.set(stats);
        Ok(stats)
    }

    /// How many chunks the lexical index holds (read once per open index).
    pub fn chunk_count(&self) -> Result<f64> {
        Ok(self.lexical_stats()?.collection.chunks)
    }

    /// The best chunks for `terms` by BM25F over names, path and body, best
    /// first (ties by chunk id), at most `limit`.
    pub fn lexical(
        &self,
        terms: &[String],
        params: &Bm25Params,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let weighted: Vec<(&str, f64)> = terms.iter().map(|t| (t.as_str(), 1.0)).collect();
        self.lexical_weighted(&weighted, params, filter, limit)
    }

    /// [`lexical`](Self::lexical) with a weight per term: each term's BM25F
    /// score counts its weight times (a task's code words above its prose).
    /// `limit` 0: every chunk a term matched, in no order (a caller that
    /// wants them all seldom wants them all sorted).
    pub fn lexical_weighted(
        &self,
        terms: &[(&str, f64)],
        params: &Bm25Params,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let stats = self.lexical_stats()?;
        let allowed = self.allowed_chunks(filter)?;
        let over = self.active_overlay();
        let collection = match &over {
            Some(o) => o.collection(stats.collection),
            None => stats.collection,
        };
        let mut stmt = self
            .store
            .connection()
            .prepare_cached("SELECT data FROM postings WHERE term = ?1 ORDER BY block")
            .map_err(|e| self.err(e))?;
        let mut board = self.score_board.lock().unwrap_or_else(|p| p.into_inner());
        board.reset(stats.max_chunk_id);
        // Overlay chunks (negative ids) are scored on the same scale, aside.
        let mut overlay_scores: BTreeMap<i64, f64> = BTreeMap::new();
        for &(term, weight) in terms {
            let disk = self.postings(&mut stmt, term)?;
            let (disk, pseudo) = match &disk {
                Some(d) => (
                    &d.list[..],
                    d.pseudo_frequencies(params, &collection, over.is_none()),
                ),
                None => (&[][..], Cow::Borrowed(&[][..])),
            };
            let extra = over.as_ref().map_or(&[][..], |o| o.postings(term));
            if disk.is_empty() && extra.is_empty() {
                continue;
            }
            let df = match &over {
                None => disk.len(),
                Some(o) => disk.iter().filter(|p| !o.masks_chunk(p.chunk)).count() + extra.len(),
            };
            let idf = weight * params.idf(&collection, df as f64);
            for (p, &pseudo) in disk.iter().zip(pseudo.iter()) {
                if board.holds(p.chunk)
                    && allowed.as_ref().is_none_or(|a| a.contains(&p.chunk))
                    && over.as_ref().is_none_or(|o| !o.masks_chunk(p.chunk))
                {
                    board.add(p.chunk, params.saturate(idf, pseudo));
                }
            }
            if let Some(o) = &over {
                for p in extra.iter().filter(|p| o.admits_chunk(filter, p.chunk)) {
                    *overlay_scores.entry(p.chunk).or_default() +=
                        params.score(&collection, idf, p);
                }
            }
        }
        let scored = board.scored().chain(overlay_scores);
        Ok(if limit == 0 {
            scored.collect()
        } else {
            best(scored, limit)
        })
    }

    /// The chunks nearest to `query` by the stored vectors, best first (ties
    /// by chunk id), at most `limit`. Empty when the query cannot be embedded
    /// by the model that made the index's vectors (a server that fails, a
    /// model this process does not use); [`take_notes`](Self::take_notes) then says why.
    pub fn dense(&self, query: &str, filter: &Filter, limit: usize) -> Result<Vec<(i64, f64)>> {
        Ok(best(self.dense_scores(query, filter)?, limit))
    }

    /// Every admitted chunk's similarity to `query`, in no order (empty when
    /// the query cannot be embedded; see [`dense`](Self::dense)).
    pub(crate) fn dense_scores(&self, query: &str, filter: &Filter) -> Result<Vec<(i64, f64)>> {
        let Some(spec) = self.vector_spec()? else {
            return Ok(Vec::new()); // an index of an older lode; its fingerprint rebuilds it
        };
        let q = match crate::vectors::for_index(&spec)
            .and_then(|v| Ok((v.query(query)?, v.stride())))
        {
            Ok(q) => q,
            Err(why) => {
                let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
                notes.push(format!("{why}; this query ran lexical-only"));
                return Ok(Vec::new());
            }
        };
        let (q, stride) = q;
        let allowed = self.allowed_chunks(filter)?;
        let stored = self.vectors(stride)?;
        let (ids, data) = (&stored.ids, &stored.data);
        if let Some((embedded, chunks)) = self.embedded_chunks() {
            let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
            notes.push(format!("partial: {embedded} of {chunks} chunks embedded"));
        }
        let over = self.active_overlay();
        let mut scored: Vec<(i64, f64)> = Vec::with_capacity(ids.len());
        for (id, v) in ids.iter().zip(data.chunks_exact(stride)) {
            if allowed.as_ref().is_none_or(|a| a.contains(id))
                && over.as_ref().is_none_or(|o| !o.masks_chunk(*id))
            {
                scored.push((*id, f64::from(q.score(v))));
            }
        }
        if let Some(o) = &over {
            for (id, v) in o.vectors(stride) {
                if o.admits_chunk(filter, id) {
                    scored.push((id, f64::from(q.score(v))));
                }
            }
        }
        Ok(scored)
    }

    /// What the index's vectors are (`None` for an index of an older lode).
    pub fn vector_spec(&self) -> Result<Option<crate::vectors::VectorSpec>> {
        Ok(self
            .store
            .meta(Meta::Vectors)?
            .as_deref()
            .and_then(crate::vectors::VectorSpec::parse))
    }

    /// Chunks without a vector yet (the embedding phase has not reached them).
    pub fn vectors_pending(&self) -> Result<u64> {
        crate::embed::pending_chunks(&self.store)
    }

    /// The query prefix in force when the index was last built.
    pub fn stored_query_prefix(&self) -> Result<String> {
        Ok(self.store.meta(Meta::QueryPrefix)?.unwrap_or_default())
    }

    /// `(chunks with a vector, chunks)` as the dense side of this open index
    /// scores them, when some chunks have no vector yet (the embedding phase
    /// is under way or was stopped); `None` when all have one, or before the
    /// first dense query.
    pub fn embedded_chunks(&self) -> Option<(u64, u64)> {
        let v = self.vectors_cache.get()?;
        let embedded = v.ids.len() as u64;
        (embedded < v.chunks).then_some((embedded, v.chunks))
    }

    /// The notes of queries since the last call (a dense query that ran
    /// lexical-only, and why), oldest first.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Every chunk's id and stored vector, read once per open index: a
    /// long-lived process scans memory, not the database, on each query.
    fn vectors(&self, stride: usize) -> Result<&StoredVectors> {
        if let Some(v) = self.vectors_cache.get() {
            return Ok(v);
        }
        // One committed state for the vectors and the chunk count: the
        // embedding phase commits while readers read.
        let tx = self
            .store
            .connection()
            .unchecked_transaction()
            .map_err(|e| self.err(e))?;
        let chunks: i64 = tx
            .query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let (_, pending) = generation_and_pending(&tx).map_err(|e| self.err(e))?;
        let mut v = StoredVectors {
            ids: Vec::new(),
            data: Vec::new(),
            chunks: chunks as u64,
            files: Vec::new(),
            stride,
            pending,
        };
        let mut stmt = tx
            .prepare_cached("SELECT file_id, ids, data FROM vectors ORDER BY file_id")
            .map_err(|e| self.err(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let file: i64 = row.get(0).map_err(|e| self.err(e))?;
            let (ids, data) = crate::embed::vector_columns(row).map_err(|e| self.err(e))?;
            v.append(file, ids, data);
        }
        drop(rows);
        drop(stmt);
        drop(tx);
        let _ = self.vectors_cache.set(v);
        Ok(self.vectors_cache.get().expect("just set"))
    }

    /// Tests: the decoded vectors as `(ids, data, chunks)`, once read.
    #[doc(hidden)]
    pub fn decoded_vectors(&self) -> Option<(Vec<i64>, Vec<u8>, u64)> {
        let v = self.vectors_cache.get()?;
        Some((v.ids.clone(), v.data.clone(), v.chunks))
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
                out.push(path);
            }
        }
        if let Some(o) = self.active_overlay() {
            out = overlay::unmasked(&o, out, String::as_str);
            out.extend(o.indexed_paths(filter).cloned());
            out.sort();
        }
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
