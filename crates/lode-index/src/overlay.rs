//! Overlays: files a session holds that are not on disk (new, edited or
//! deleted), answered over as if they were.
//!
//! - [`Overlay`] is the validated request: root-relative `/`-separated paths
//!   to new content, or `None` for a deletion. [`Overlay::from_json`] reads
//!   `{"path": "content" | null}` and refuses anything else with
//!   [`Error::BadOverlay`](lode_core::Error::BadOverlay) (`lode.bad_overlay`):
//!   not an object, a value that is not a string or null, an absolute path,
//!   a `..` that leaves the root, more than [`MAX_FILES`] entries, a file over
//!   [`MAX_FILE_BYTES`] or all of them over [`MAX_TOTAL_BYTES`].
//! - [`OverlayLayer`] is an overlay parsed exactly as the indexer parses a
//!   file (same path policy, language detection, extraction, chunking,
//!   tokens and embedding model), held in memory with ids of its own
//!   (negative, in source order, so they never meet an index row id).
//!   [`prepare`] builds one, or takes it from a small process-wide cache
//!   keyed by blake3 of the overlay's canonical form and the index
//!   fingerprint: two queries over the same overlay parse it once.
//! - [`Index::overlay`] puts a layer over an open index until the returned
//!   [`OverlayGuard`] drops: every read of the index ([`Index::lexical`],
//!   [`Index::dense`], [`Index::chunks`], symbols, calls, imports, paths,
//!   [`Index::file_text`]) then hides the overlay's paths on disk and adds
//!   what the layer holds. The database is never written.
//!
//! A query without an overlay does no overlay work: [`builds`] and [`reads`]
//! count layer builds and reads that consulted a layer, process-wide.
//!
//! ```no_run
//! # fn run(index: &lode_index::Index) -> lode_core::Result<()> {
//! use lode_index::overlay::{Overlay, prepare};
//! let overlay = Overlay::from_json(&serde_json::json!({
//!     "src/new.py": "def fresh():\n    return 1\n",
//!     "src/old.py": null,
//! }))?;
//! let staged = prepare(&overlay, &lode_core::Config::default())?;
//! let _over = index.overlay(staged.layer.clone())?;
//! assert!(index.symbols_named("fresh")?.iter().any(|s| s.path == "src/new.py"));
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use lode_core::{Config, Language, Result, SymbolKind};
use rayon::prelude::*;
use serde::Serialize;

use crate::build::{Embed, Prepared, prepare_content, selected_languages};
use crate::lexical::{CollectionStats, Posting};
use crate::reader::{ChunkRow, FileRow, Filter, Index, SymbolRow};
use crate::relations::{CallRow, ImportRow};

mod request;

pub use request::{Overlay, normalize_path};

/// Most entries an overlay may have.
pub const MAX_FILES: usize = 1_000;
/// Largest content of one overlay file, in bytes.
pub const MAX_FILE_BYTES: usize = 4 << 20;
/// Largest content of all overlay files together, in bytes.
pub const MAX_TOTAL_BYTES: usize = 16 << 20;
/// Layers kept by [`prepare`], most recently used last.
const CACHE_ENTRIES: usize = 4;
/// Content bytes the kept layers may hold together (the newest is always kept).
const CACHE_BYTES: usize = 32 << 20;
/// Overlay ids count up from here: below every row id, in source order.
const ID_BASE: i64 = -(1 << 62);

static BUILDS: AtomicU64 = AtomicU64::new(0);
static READS: AtomicU64 = AtomicU64::new(0);

/// Overlay layers built by this process (cache misses).
pub fn builds() -> u64 {
    BUILDS.load(Ordering::Relaxed)
}

/// Index reads that consulted an overlay layer, in this process.
pub fn reads() -> u64 {
    READS.load(Ordering::Relaxed)
}

/// One overlay path as the layer holds it.
enum Entry {
    Deleted,
    /// Content the indexer skips (the row says why) or indexes.
    File {
        row: FileRow,
        text: Arc<str>,
        /// Its symbols: a range of [`OverlayLayer::symbols`].
        symbols: std::ops::Range<usize>,
        imports: Vec<ImportRow>,
    },
}

/// An overlay parsed as the indexer would, in memory.
pub struct OverlayLayer {
    key: String,
    entries: BTreeMap<String, Entry>,
    symbols: Vec<SymbolRow>,
    calls: Vec<CallRow>,
    chunks: Vec<ChunkRow>,
    postings: HashMap<String, Vec<Posting>>,
    /// One stored vector per chunk, in chunk order; empty when the model failed.
    vectors: Vec<u8>,
    content_bytes: usize,
}

/// What a query's answer says about its overlay (`"overlay"` in JSON).
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct OverlayInfo {
    /// The first 16 hex digits of the layer's cache key: the overlay's
    /// [`Overlay::hash`] with the index fingerprint of the config.
    pub key: String,
    /// Files with content.
    pub files: usize,
    /// Files deleted.
    pub deleted: usize,
    /// Files with content the index would not hold either, with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedFile>,
    /// Parsed for this query (`false`: taken from the cache).
    pub built: bool,
}

/// An overlay file with content that the indexer would skip on disk too.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct SkippedFile {
    /// Its overlay path, normalized ([`normalize_path`]).
    pub path: String,
    /// The skip reason as `index` reports it (`binary`, `minified`,
    /// `too_large`, `language_not_selected`, …).
    pub reason: String,
}

/// A layer ready to put over an index, and how it was obtained.
#[derive(Clone)]
pub struct Staged {
    /// The parsed overlay, shared with the cache: give it to [`Index::overlay`].
    pub layer: Arc<OverlayLayer>,
    /// What the answer reports about the overlay (`built`: parsed by this call).
    pub info: OverlayInfo,
}

static CACHE: Mutex<Vec<Arc<OverlayLayer>>> = Mutex::new(Vec::new());

/// The layer of `overlay` under `config` (the repository's, which decides
/// the file policy and languages): from the cache, or parsed now.
pub fn prepare(overlay: &Overlay, config: &Config) -> Result<Staged> {
    let mut h = blake3::Hasher::new();
    h.update(overlay.hash().as_bytes());
    h.update(crate::build::fingerprint(config).as_bytes());
    let key = h.finalize().to_hex()[..32].to_string();
    let cached = {
        let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
        let at = cache.iter().position(|l| l.key == key);
        at.map(|i| {
            let layer = cache.remove(i);
            cache.push(layer.clone());
            layer
        })
    };
    let (layer, built) = match cached {
        Some(layer) => (layer, false),
        None => {
            let layer = Arc::new(OverlayLayer::build(overlay, config, key)?);
            BUILDS.fetch_add(1, Ordering::Relaxed);
            let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
            cache.push(layer.clone());
            while cache.len() > 1
                && (cache.len() > CACHE_ENTRIES
                    || cache.iter().map(|l| l.content_bytes).sum::<usize>() > CACHE_BYTES)
            {
                cache.remove(0);
            }
            (layer, true)
        }
    };
    let info = layer.info(overlay, built);
    Ok(Staged { layer, info })
}

/// What the indexer would make of `text` at `path`: skipped by the path
/// policy, or whatever `prepare_content` makes of it.
fn prepare_text(
    path: &str,
    text: &str,
    config: &Config,
    selected: &Option<Vec<lode_core::Language>>,
    vectors: &crate::vectors::Vectors,
) -> Result<Prepared> {
    let policy = &config.files;
    Ok(
        match lode_walk::path_reason(path, text.len() as u64, policy)? {
            Some(reason) => Prepared::Skip {
                hash: [0; 32],
                reason,
                lang: lode_parse::detect(std::path::Path::new(path), text.as_bytes()),
            },
            None => {
                let hash = *blake3::hash(text.as_bytes()).as_bytes();
                let bytes = text.as_bytes().to_vec();
                prepare_content(
                    path,
                    bytes,
                    hash,
                    selected,
                    policy.vendored,
                    Embed::Now(vectors),
                )
            }
        },
    )
}

impl OverlayLayer {
    fn build(overlay: &Overlay, config: &Config, key: String) -> Result<OverlayLayer> {
        let selected = selected_languages(config)?;
        // Embedded as a build under this config would (the index's own model
        // when the index was built under it, which the cache key's fingerprint
        // says).
        let embedder = crate::vectors::for_build(config);
        // Parse in parallel, as the indexer does; assemble in path order.
        let prepared: Vec<Option<Result<Prepared>>> = overlay
            .files()
            .par_iter()
            .map(|(path, content)| {
                let text = content.as_ref()?;
                Some(prepare_text(path, text, config, &selected, &embedder))
            })
            .collect();
        let mut layer = OverlayLayer {
            key,
            entries: BTreeMap::new(),
            symbols: Vec::new(),
            calls: Vec::new(),
            chunks: Vec::new(),
            postings: HashMap::new(),
            vectors: Vec::new(),
            content_bytes: overlay.content_bytes(),
        };
        let mut vectors_ok = true;
        let files = overlay.files().iter().zip(prepared);
        for (file_no, ((path, content), prepared)) in files.enumerate() {
            let (Some(text), Some(prepared)) = (content, prepared) else {
                layer.entries.insert(path.clone(), Entry::Deleted);
                continue;
            };
            let mut row = FileRow {
                id: ID_BASE + file_no as i64,
                path: path.clone(),
                // Set below, once the file is prepared.
                lang: Language::Text,
                size: text.len() as u64,
                lines: 0,
                skip_reason: None,
            };
            let first_symbol = layer.symbols.len();
            let mut imports = Vec::new();
            match prepared? {
                Prepared::Skip { reason, lang, .. } => {
                    row.lang = lang;
                    row.skip_reason = Some(reason.as_str().to_string());
                }
                Prepared::Index(pf) => {
                    row.lang = pf.lang;
                    row.lines = pf.lines;
                    imports = layer.add_file(path, row.lang, &pf);
                    vectors_ok &= !pf.vectors.is_empty() || pf.extract.chunks.is_empty();
                }
                // `prepare_content` neither reads nor compares.
                Prepared::Unchanged | Prepared::Unreadable => {}
            }
            layer.entries.insert(
                path.clone(),
                Entry::File {
                    row,
                    text: Arc::from(text.as_str()),
                    symbols: first_symbol..layer.symbols.len(),
                    imports,
                },
            );
        }
        if !vectors_ok {
            layer.vectors.clear(); // the dense side then leaves the overlay out
        }
        Ok(layer)
    }

    /// Adds one parsed file's rows; returns its imports.
    fn add_file(
        &mut self,
        path: &str,
        lang: Language,
        pf: &crate::build::PreparedFile,
    ) -> Vec<ImportRow> {
        let ex = &pf.extract;
        let first = self.symbols.len();
        let id_of = |i: u32| ID_BASE + (first + i as usize) as i64;
        for (i, s) in ex.symbols.iter().enumerate() {
            self.symbols.push(SymbolRow {
                id: id_of(i as u32),
                parent: s.parent.map(id_of),
                path: path.to_string(),
                name: s.name.clone(),
                kind: s.kind,
                container: s.container.clone(),
                start_line: s.span.start_line,
                end_line: s.span.end_line,
                signature: s.signature.clone(),
                doc: s.doc.clone(),
            });
        }
        for c in &ex.calls {
            self.calls.push(CallRow {
                path: path.to_string(),
                lang,
                caller: c.caller.map(id_of),
                callee: c.callee.clone(),
                receiver: c.receiver.clone(),
                line: c.span.start_line,
            });
        }
        for (c, terms) in ex.chunks.iter().zip(&pf.chunk_terms) {
            let id = ID_BASE + self.chunks.len() as i64;
            self.chunks.push(ChunkRow {
                id,
                path: path.to_string(),
                lang,
                kind: c.kind,
                start_line: c.span.start_line,
                end_line: c.span.end_line,
                start_byte: c.span.start_byte,
                end_byte: c.span.end_byte,
                symbol: c.symbol.map(|i| self.symbols[first + i as usize].clone()),
                opens: c
                    .symbol
                    .and_then(|i| ex.symbols[i as usize].parent)
                    .map(|p| &ex.symbols[p as usize])
                    .filter(|p| p.kind != SymbolKind::Impl)
                    .filter(|p| c.span.contains_line(p.span.start_line))
                    .map(|p| p.name.clone()),
            });
            for (term, tf) in &terms.terms {
                self.postings
                    .entry(term.clone())
                    .or_default()
                    .push(Posting {
                        chunk: id,
                        tf: *tf,
                        len: terms.len,
                    });
            }
        }
        self.vectors.extend_from_slice(&pf.vectors);
        ex.imports
            .iter()
            .map(|i| ImportRow {
                source: i.source.clone(),
                names: i.names.clone(),
                line: i.span.start_line,
            })
            .collect()
    }

    fn info(&self, overlay: &Overlay, built: bool) -> OverlayInfo {
        let deleted = overlay.files().values().filter(|c| c.is_none()).count();
        let skipped = self
            .entries
            .iter()
            .filter_map(|(path, e)| match e {
                Entry::File { row, .. } => row.skip_reason.as_ref().map(|r| SkippedFile {
                    path: path.clone(),
                    reason: r.clone(),
                }),
                Entry::Deleted => None,
            })
            .collect();
        OverlayInfo {
            key: self.key[..16].to_string(),
            files: overlay.files().len() - deleted,
            deleted,
            skipped,
            built,
        }
    }

    fn slot(id: i64) -> Option<usize> {
        (id < 0).then(|| (id - ID_BASE) as usize)
    }
}

/// A layer put over one open index: what it hides there.
pub(crate) struct Active {
    layer: Arc<OverlayLayer>,
    /// The index's chunks in files the overlay replaces or deletes.
    masked_chunks: HashSet<i64>,
}

/// While alive, reads of the index answer over disk and the overlay.
pub struct OverlayGuard<'i> {
    index: &'i Index,
    previous: Option<Arc<Active>>,
}

impl Drop for OverlayGuard<'_> {
    fn drop(&mut self) {
        *self.index.overlay_slot().borrow_mut() = self.previous.take();
    }
}

impl Index {
    /// Answers over this index plus `layer` until the guard drops. Reads the
    /// index's chunk ids of the overlay's paths (to hide them); writes nothing.
    pub fn overlay(&self, layer: Arc<OverlayLayer>) -> Result<OverlayGuard<'_>> {
        let mut masked_chunks = HashSet::new();
        {
            let mut stmt = self
                .store()
                .connection()
                .prepare_cached(
                    "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1",
                )
                .map_err(|e| self.err(e))?;
            for path in layer.entries.keys() {
                let ids = stmt
                    .query_map([path], |r| r.get::<_, i64>(0))
                    .map_err(|e| self.err(e))?;
                for id in ids {
                    masked_chunks.insert(id.map_err(|e| self.err(e))?);
                }
            }
        }
        let active = Arc::new(Active {
            layer,
            masked_chunks,
        });
        let previous = self.overlay_slot().borrow_mut().replace(active);
        Ok(OverlayGuard {
            index: self,
            previous,
        })
    }

    /// The layer over this index, if any (counted in [`reads`]).
    pub(crate) fn active_overlay(&self) -> Option<Arc<Active>> {
        let active = self.overlay_slot().borrow().clone();
        if active.is_some() {
            READS.fetch_add(1, Ordering::Relaxed);
        }
        active
    }

    /// The overlay's content of `path`, when an overlay over this index
    /// gives it (the index skips it or not).
    pub fn overlay_text(&self, path: &str) -> Option<Arc<str>> {
        match self.active_overlay()?.layer.entries.get(path)? {
            Entry::File { text, .. } => Some(text.clone()),
            Entry::Deleted => None,
        }
    }

    /// Whether an overlay over this index deletes `path`.
    pub fn overlay_deletes(&self, path: &str) -> bool {
        self.active_overlay()
            .is_some_and(|a| matches!(a.layer.entries.get(path), Some(Entry::Deleted)))
    }

    /// A file's text as the query sees it: the overlay's, else the disk's
    /// (invalid UTF-8 replaced); `None` when deleted or unreadable.
    pub fn file_text(&self, path: &str) -> Option<String> {
        if let Some(a) = self.active_overlay()
            && let Some(entry) = a.layer.entries.get(path)
        {
            return match entry {
                Entry::File { text, .. } => Some(text.to_string()),
                Entry::Deleted => None,
            };
        }
        lode_core::inside::read(&self.location.root, path)
            .ok()
            // Valid UTF-8 (the usual case) is checked fast and kept as read.
            .map(|b| {
                String::from_utf8(b)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
            })
    }
}

/// What the readers ask of the layer over them.
impl Active {
    /// Whether the overlay replaces or deletes `path` on disk.
    pub(crate) fn masks(&self, path: &str) -> bool {
        self.layer.entries.contains_key(path)
    }

    pub(crate) fn masks_chunk(&self, id: i64) -> bool {
        self.masked_chunks.contains(&id)
    }

    /// The collection as BM25 sees it with the overlay: hidden chunks out,
    /// the overlay's in; mean field lengths stay the index's.
    pub(crate) fn collection(&self, disk: CollectionStats) -> CollectionStats {
        CollectionStats {
            chunks: (disk.chunks - self.masked_chunks.len() as f64).max(0.0)
                + self.layer.chunks.len() as f64,
            avg: disk.avg,
        }
    }

    pub(crate) fn postings(&self, term: &str) -> &[Posting] {
        self.layer.postings.get(term).map_or(&[], Vec::as_slice)
    }

    /// Each overlay file's length in name and body tokens (what whole-file
    /// scoring normalises by), read off the postings: every chunk with a
    /// token has one.
    pub(crate) fn file_lengths(&self) -> HashMap<&str, u32> {
        let mut chunk_len: HashMap<i64, u32> = HashMap::new();
        for list in self.layer.postings.values() {
            for p in list {
                chunk_len.insert(p.chunk, p.len.name + p.len.body);
            }
        }
        let mut out: HashMap<&str, u32> = HashMap::new();
        for (id, len) in chunk_len {
            if let Some(c) = self.chunk(id) {
                *out.entry(c.path.as_str()).or_default() += len;
            }
        }
        out
    }

    /// The overlay's chunk ids of `path`, in line order.
    pub(crate) fn chunk_ids(&self, path: &str) -> Vec<i64> {
        let mut chunks: Vec<&ChunkRow> = self
            .layer
            .chunks
            .iter()
            .filter(|c| c.path == path)
            .collect();
        chunks.sort_by_key(|c| c.start_line);
        chunks.into_iter().map(|c| c.id).collect()
    }

    /// Whether `filter` admits overlay chunk `id`.
    pub(crate) fn admits_chunk(&self, filter: &Filter, id: i64) -> bool {
        self.chunk(id)
            .is_some_and(|c| filter.admits(&c.path, c.lang))
    }

    pub(crate) fn chunk(&self, id: i64) -> Option<&ChunkRow> {
        OverlayLayer::slot(id).and_then(|i| self.layer.chunks.get(i))
    }

    /// Every overlay chunk with its stored vector (none when the model failed).
    pub(crate) fn vectors(&self, stride: usize) -> impl Iterator<Item = (i64, &[u8])> {
        let ok = self.layer.vectors.len() == self.layer.chunks.len() * stride;
        self.layer
            .chunks
            .iter()
            .zip(self.layer.vectors.chunks_exact(stride.max(1)))
            .filter(move |_| ok)
            .map(|(c, v)| (c.id, v))
    }

    /// The overlay's file row of `path`: `Some(None)` when deleted.
    pub(crate) fn file(&self, path: &str) -> Option<Option<FileRow>> {
        self.layer.entries.get(path).map(|e| match e {
            Entry::File { row, .. } => Some(row.clone()),
            Entry::Deleted => None,
        })
    }

    /// The overlay's symbols of `path` (empty when deleted); `None` when not an overlay path.
    pub(crate) fn file_symbols(&self, path: &str) -> Option<Vec<SymbolRow>> {
        self.layer.entries.get(path).map(|e| match e {
            Entry::File { symbols, .. } => self.layer.symbols[symbols.clone()].to_vec(),
            Entry::Deleted => Vec::new(),
        })
    }

    pub(crate) fn file_imports(&self, path: &str) -> Option<Vec<ImportRow>> {
        self.layer.entries.get(path).map(|e| match e {
            Entry::File { imports, .. } => imports.clone(),
            Entry::Deleted => Vec::new(),
        })
    }

    /// The overlay files the index would hold, under `filter`, with their languages.
    pub(crate) fn indexed_files(
        &self,
        filter: &Filter,
    ) -> impl Iterator<Item = (&String, Language)> {
        self.layer.entries.iter().filter_map(move |(p, e)| match e {
            Entry::File { row, .. } if row.skip_reason.is_none() && filter.admits(p, row.lang) => {
                Some((p, row.lang))
            }
            _ => None,
        })
    }

    pub(crate) fn symbols(&self) -> &[SymbolRow] {
        &self.layer.symbols
    }

    pub(crate) fn symbol(&self, id: i64) -> Option<&SymbolRow> {
        OverlayLayer::slot(id).and_then(|i| self.layer.symbols.get(i))
    }

    pub(crate) fn calls(&self) -> &[CallRow] {
        &self.layer.calls
    }
}

impl Index {
    /// Rows read from the database, layered: with an overlay active, the rows
    /// of paths it hides are dropped and the rows `own` takes from the layer
    /// follow; without one, the rows as read.
    pub(crate) fn layered<T>(
        &self,
        rows: Vec<T>,
        path: impl Fn(&T) -> &str,
        own: impl FnOnce(&Active) -> Vec<T>,
    ) -> Vec<T> {
        let Some(active) = self.active_overlay() else {
            return rows;
        };
        let mut rows: Vec<T> = (rows.into_iter())
            .filter(|r| !active.masks(path(r)))
            .collect();
        rows.extend(own(&active));
        rows
    }
}

#[cfg(test)]
mod tests;
