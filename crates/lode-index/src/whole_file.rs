//! Whole-file lexical scoring: BM25 with each file one document, from the
//! chunk postings the index already keeps.
//!
//! A task's evidence is spread over a file — a name in one function, an
//! error message in another, an import at the top — and a file that holds
//! most of it is the likely place of the change even when no single chunk
//! stands out. Chunks never overlap, so a file's term frequency is the sum
//! of its chunks' (names and body); its path counts once, not once per
//! chunk.

use std::collections::HashMap;
use std::sync::Arc;

use lode_core::{Language, Result};

use crate::reader::{Filter, Index, named};

/// Parameters of whole-file BM25.
#[derive(Clone, Copy, Debug)]
pub struct FileBm25Params {
    /// Saturation of a file's pseudo-frequency (default 1.2).
    pub k1: f64,
    /// Length normalisation of the names and body by the file's length in
    /// tokens (default 0.75); path tokens are not normalised.
    pub b: f64,
    /// How much a path token counts against one in a name or the body.
    pub path_weight: f64,
    /// How much a defined name's token counts against one in the body.
    pub name_weight: f64,
}

impl Default for FileBm25Params {
    fn default() -> FileBm25Params {
        FileBm25Params {
            k1: 1.2,
            b: 0.75,
            path_weight: 2.0,
            name_weight: 2.0,
        }
    }
}

/// A file's whole-file score.
#[derive(Clone, Debug, PartialEq)]
pub struct FileScore {
    /// Relative to the root, `/`-separated.
    pub path: String,
    /// The file's language.
    pub lang: Language,
    /// BM25 summed over the query's weighted terms: above 0, comparable only
    /// within one query.
    pub score: f64,
}

/// Which file each chunk is in and how long each file is, read once per
/// open index.
pub(crate) struct FileTable {
    /// By chunk id: the file's slot in `files`, or `u32::MAX`.
    chunk_file: Vec<u32>,
    files: Vec<FileEntry>,
    by_path: HashMap<String, u32>,
    average_len: f64,
    longest: u32,
}

/// The dense side of a task: the nearest chunks, and how near each file's
/// chunks come.
#[derive(Clone, Debug, Default)]
pub struct DenseFiles {
    /// The nearest chunks, best first (as [`Index::dense`]).
    pub chunks: Vec<(i64, f64)>,
    /// Per file: its best chunk's similarity and the mean of its best three.
    pub files: HashMap<String, (f64, f64)>,
    /// Every chunk's similarity, in no order.
    pub all: Vec<(i64, f64)>,
}

struct FileEntry {
    path: String,
    lang: Language,
    /// Name and body tokens of all its chunks.
    len: u32,
}

/// One file's frequencies of the term being scored.
#[derive(Clone, Copy, Debug, Default)]
struct Frequencies {
    text: f64,
    path: u32,
}

impl Index {
    /// The best files for weighted `terms` by whole-file BM25, best first
    /// (ties by path), at most `limit`. An overlay over the index is scored
    /// with it: its files replace the disk's.
    pub fn file_lexical(
        &self,
        terms: &[(&str, f64)],
        params: &FileBm25Params,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<FileScore>> {
        if terms.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let slots = Slots::new(self, self.file_table()?, filter)?;
        let files = slots.admitted.iter().filter(|a| **a).count() as f64;
        let mut stmt = self
            .store()
            .connection()
            .prepare_cached("SELECT data FROM postings WHERE term = ?1 ORDER BY block")
            .map_err(|e| self.err(e))?;
        // By slot: the summed score, and the term being scored's frequencies
        // (with the slots it touched, to clear them for the next term).
        let mut scores: Vec<f64> = vec![0.0; slots.len()];
        let mut per_file = Board {
            freq: vec![Frequencies::default(); slots.len()],
            touched: Vec::new(),
        };
        let average_len = slots.table.average_len.max(1.0);
        for &(term, weight) in terms {
            per_file.clear();
            self.count_term(&mut stmt, term, &slots, params, &mut per_file)?;
            if per_file.touched.is_empty() {
                continue;
            }
            let df = per_file.touched.len() as f64;
            let idf = weight * (1.0 + (files - df + 0.5) / (df + 0.5)).ln();
            for &slot in &per_file.touched {
                let f = per_file.freq[slot as usize];
                let len = f64::from(slots.entry(slot).len);
                let norm = 1.0 - params.b + params.b * len / average_len;
                let pseudo = f.text / norm + params.path_weight * f64::from(f.path);
                scores[slot as usize] += idf * pseudo * (params.k1 + 1.0) / (params.k1 + pseudo);
            }
        }
        Ok(slots.best(scores, limit))
    }

    /// Adds every admitted chunk's frequencies of `term`, the disk's and
    /// the overlay's, to its file's on `per_file`.
    fn count_term(
        &self,
        stmt: &mut rusqlite::CachedStatement,
        term: &str,
        slots: &Slots,
        params: &FileBm25Params,
        per_file: &mut Board,
    ) -> Result<()> {
        let over = slots.over.as_deref();
        let disk = self.postings(stmt, term)?;
        for p in disk.iter().flat_map(|d| d.list.iter()) {
            if over.is_some_and(|o| o.masks_chunk(p.chunk)) {
                continue;
            }
            let Some(&slot) = slots.table.chunk_file.get(p.chunk as usize) else {
                continue;
            };
            if slot != u32::MAX && slots.admitted[slot as usize] {
                count(per_file, slot, p, params);
            }
        }
        if let Some(o) = over {
            for p in o.postings(term) {
                let slot = o.chunk(p.chunk).and_then(|c| slots.extra_slot.get(&c.path));
                if let Some(&slot) = slot
                    && slots.admitted[slot as usize]
                {
                    count(per_file, slot, p, params);
                }
            }
        }
        Ok(())
    }

    /// The chunk-to-file table, read once per open index.
    fn file_table(&self) -> Result<Arc<FileTable>> {
        if let Some(t) = self.file_table_slot().get() {
            return Ok(t.clone());
        }
        // One committed state for both reads.
        let tx = self
            .store()
            .connection()
            .unchecked_transaction()
            .map_err(|e| self.err(e))?;
        let mut slot_of: HashMap<i64, u32> = HashMap::new();
        let mut files: Vec<FileEntry> = Vec::new();
        {
            let mut stmt = tx
                .prepare_cached(
                    "SELECT id, path, lang FROM files WHERE skip_reason IS NULL ORDER BY id",
                )
                .map_err(|e| self.err(e))?;
            let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
            while let Some(r) = rows.next().map_err(|e| self.err(e))? {
                slot_of.insert(r.get(0).map_err(|e| self.err(e))?, files.len() as u32);
                files.push(FileEntry {
                    path: r.get(1).map_err(|e| self.err(e))?,
                    lang: named(r, 2, Language::from_name).map_err(|e| self.err(e))?,
                    len: 0,
                });
            }
        }
        let mut chunk_file: Vec<u32> = Vec::new();
        {
            let mut stmt = tx
                .prepare_cached("SELECT id, file_id, len_name + len_body FROM chunks")
                .map_err(|e| self.err(e))?;
            let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
            while let Some(r) = rows.next().map_err(|e| self.err(e))? {
                let id: i64 = r.get(0).map_err(|e| self.err(e))?;
                let file: i64 = r.get(1).map_err(|e| self.err(e))?;
                let len: i64 = r.get(2).map_err(|e| self.err(e))?;
                let (Ok(id), Some(&slot)) = (usize::try_from(id), slot_of.get(&file)) else {
                    continue;
                };
                if chunk_file.len() <= id {
                    chunk_file.resize(id + 1, u32::MAX);
                }
                chunk_file[id] = slot;
                let f = &mut files[slot as usize];
                f.len = f
                    .len
                    .saturating_add(u32::try_from(len.max(0)).unwrap_or(u32::MAX));
            }
        }
        drop(tx);
        let by_path = files
            .iter()
            .enumerate()
            .map(|(slot, f)| (f.path.clone(), slot as u32))
            .collect();
        let longest = files.iter().map(|f| f.len).max().unwrap_or(0);
        let with_text: Vec<f64> = files.iter().map(|f| f64::from(f.len)).collect();
        let average_len = if with_text.is_empty() {
            0.0
        } else {
            with_text.iter().sum::<f64>() / with_text.len() as f64
        };
        let table = Arc::new(FileTable {
            chunk_file,
            files,
            by_path,
            average_len,
            longest,
        });
        let _ = self.file_table_slot().set(table.clone());
        Ok(table)
    }
}

/// The files a whole-file query scores, by slot: the disk's (the
/// [`FileTable`]'s order), then an overlay's, for this query only; and
/// which of them the filter admits. A disk file the overlay replaces or
/// deletes is out; its overlay version (a slot after the disk's) is in.
struct Slots {
    table: Arc<FileTable>,
    over: Option<Arc<crate::overlay::Active>>,
    extra: Vec<FileEntry>,
    extra_slot: HashMap<String, u32>,
    admitted: Vec<bool>,
}

impl Slots {
    fn new(index: &Index, table: Arc<FileTable>, filter: &Filter) -> Result<Slots> {
        let over = index.active_overlay();
        let mut extra: Vec<FileEntry> = Vec::new();
        let mut extra_slot: HashMap<String, u32> = HashMap::new();
        if let Some(o) = &over {
            for (path, len) in o.file_lengths() {
                let lang = index.file(path)?.map_or(Language::Text, |f| f.lang);
                extra_slot.insert(path.to_string(), (table.files.len() + extra.len()) as u32);
                extra.push(FileEntry {
                    path: path.to_string(),
                    lang,
                    len,
                });
            }
        }
        let mut slots = Slots {
            table,
            over,
            extra,
            extra_slot,
            admitted: Vec::new(),
        };
        let disk_files = slots.table.files.len();
        slots.admitted = (0..slots.len())
            .map(|slot| {
                let e = slots.entry(slot as u32);
                filter.admits(&e.path, e.lang)
                    && (slot >= disk_files || slots.over.as_ref().is_none_or(|o| !o.masks(&e.path)))
            })
            .collect();
        Ok(slots)
    }

    fn len(&self) -> usize {
        self.table.files.len() + self.extra.len()
    }

    fn entry(&self, slot: u32) -> &FileEntry {
        let slot = slot as usize;
        self.table
            .files
            .get(slot)
            .unwrap_or_else(|| &self.extra[slot - self.table.files.len()])
    }

    /// The `limit` best of the files scored above 0, best first, ties by path.
    fn best(&self, scores: Vec<f64>, limit: usize) -> Vec<FileScore> {
        let mut ranked: Vec<(u32, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .map(|(slot, s)| (slot as u32, s))
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.entry(a.0).path.cmp(&self.entry(b.0).path))
        });
        ranked
            .into_iter()
            .take(limit)
            .map(|(slot, score)| {
                let e = self.entry(slot);
                FileScore {
                    path: e.path.clone(),
                    lang: e.lang,
                    score,
                }
            })
            .collect()
    }
}

/// The frequencies of the term being scored, by file slot.
struct Board {
    freq: Vec<Frequencies>,
    touched: Vec<u32>,
}

impl Board {
    fn clear(&mut self) {
        for &slot in &self.touched {
            self.freq[slot as usize] = Frequencies::default();
        }
        self.touched.clear();
    }
}

/// Adds one chunk's frequencies of a term to its file's.
fn count(per_file: &mut Board, slot: u32, p: &crate::lexical::Posting, params: &FileBm25Params) {
    let f = &mut per_file.freq[slot as usize];
    if f.text == 0.0 && f.path == 0 {
        per_file.touched.push(slot);
    }
    f.text += f64::from(p.tf.body) + params.name_weight * f64::from(p.tf.name);
    // Every chunk of a file carries the same path.
    f.path = f.path.max(p.tf.path);
}

impl Index {
    /// How many chunks hold each term (0 for a term the index lacks), read
    /// from the postings' block counts without decoding them; an overlay's
    /// chunks are not counted.
    pub fn chunk_frequencies(&self, terms: &[&str]) -> Result<Vec<u64>> {
        let mut stmt = self
            .store()
            .connection()
            .prepare_cached("SELECT COALESCE(SUM(df), 0) FROM postings WHERE term = ?1")
            .map_err(|e| self.err(e))?;
        terms
            .iter()
            .map(|t| {
                stmt.query_row([t], |r| r.get::<_, i64>(0))
                    .map(|n| n.max(0) as u64)
                    .map_err(|e| self.err(e))
            })
            .collect()
    }

    /// A file's size as whole-file scoring sees it, relative to the largest
    /// file's, on a log scale (0–1): `ln(1 + tokens) / ln(1 + most tokens)`.
    /// An overlay's files and unknown paths are 0.
    pub fn file_size_share(&self, path: &str) -> Result<f64> {
        let table = self.file_table()?;
        let Some(&slot) = table.by_path.get(path) else {
            return Ok(0.0);
        };
        let len = f64::from(table.files[slot as usize].len);
        let longest = f64::from(table.longest);
        Ok(if longest > 0.0 {
            (1.0 + len).ln() / (1.0 + longest).ln()
        } else {
            0.0
        })
    }

    /// The chunks nearest to a query (at most `limit`) and, per file, how
    /// near its chunks come: what a task's ranking reads of the embeddings,
    /// in one pass over them. The query is one or more `views` of a text,
    /// each embedded, a chunk scoring the sum of its similarities to them.
    pub fn dense_files(&self, views: &[&str], filter: &Filter, limit: usize) -> Result<DenseFiles> {
        let scored = self.dense_scores(views, filter)?;
        if scored.is_empty() {
            return Ok(DenseFiles::default());
        }
        let table = self.file_table()?;
        let over = self.active_overlay();
        // Per file slot (and per overlay path): its best three similarities.
        let mut disk: Vec<[f64; 3]> = vec![[f64::NEG_INFINITY; 3]; table.files.len()];
        let mut overlay: HashMap<String, [f64; 3]> = HashMap::new();
        let keep = |top: &mut [f64; 3], cos: f64| {
            if cos > top[2] {
                top[2] = cos;
                top.sort_by(|a, b| b.total_cmp(a));
            }
        };
        for &(id, cos) in &scored {
            match usize::try_from(id) {
                Ok(id) => {
                    if let Some(&slot) = table.chunk_file.get(id).filter(|s| **s != u32::MAX) {
                        keep(&mut disk[slot as usize], cos);
                    }
                }
                Err(_) => {
                    if let Some(c) = over.as_ref().and_then(|o| o.chunk(id)) {
                        let top = overlay
                            .entry(c.path.clone())
                            .or_insert([f64::NEG_INFINITY; 3]);
                        keep(top, cos);
                    }
                }
            }
        }
        let summary = |top: [f64; 3]| -> Option<(f64, f64)> {
            let kept: Vec<f64> = top.into_iter().filter(|c| c.is_finite()).collect();
            let best = *kept.first()?;
            Some((best, kept.iter().sum::<f64>() / kept.len() as f64))
        };
        let mut files: HashMap<String, (f64, f64)> = HashMap::new();
        for (slot, top) in disk.into_iter().enumerate() {
            if let Some(s) = summary(top) {
                files.insert(table.files[slot].path.clone(), s);
            }
        }
        for (path, top) in overlay {
            if let Some(s) = summary(top) {
                files.insert(path, s);
            }
        }
        Ok(DenseFiles {
            chunks: crate::top::best(scored.iter().copied(), limit),
            files,
            all: scored,
        })
    }

    /// The ids of a file's chunks in line order (an overlay's version of the
    /// file when one is over the index); empty for a file the index lacks.
    pub fn file_chunk_ids(&self, path: &str) -> Result<Vec<i64>> {
        if let Some(o) = self.active_overlay()
            && o.masks(path)
        {
            return Ok(o.chunk_ids(path));
        }
        let mut stmt = self
            .store()
            .connection()
            .prepare_cached(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id \
                 WHERE f.path = ?1 ORDER BY c.start_line",
            )
            .map_err(|e| self.err(e))?;
        let rows = stmt
            .query_map([path], |r| r.get::<_, i64>(0))
            .map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<i64>>>()
            .map_err(|e| self.err(e))
    }
}
