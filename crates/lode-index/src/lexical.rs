//! Lexical retrieval: BM25F over code-aware tokens in three fields (symbol
//! names, path, body), stored as postings blobs per term and block of chunk ids.
//!
//! Why not SQLite FTS5: its `bm25()` queries were slower (docs/benchmarks.md,
//! "Storage"), and FTS5's IDF drops to zero for terms in more than half the
//! chunks. A few blobs per term decode in microseconds, let lode
//! own the scoring (BM25F with Lucene's always-positive IDF), and stay
//! inside the same SQLite transaction as every other record.
//!
//! Why blocks: with one blob per term, an edit rewrote the whole postings list
//! of every term the changed file contains — for `err` or `return` that is
//! most of the repository. A term's
//! postings are split by chunk id into blocks of [`BLOCK_CHUNKS`] ids, so an
//! edit rewrites only the blocks that held the file's old chunks and the
//! block its new chunks land in (new chunk ids are the highest).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use crate::tokens;

/// Chunk ids per postings block (a power of two).
pub const BLOCK_CHUNKS: i64 = 1 << BLOCK_SHIFT;
const BLOCK_SHIFT: u32 = 10;

/// The postings block a chunk id belongs to.
pub fn block_of(chunk: i64) -> i64 {
    chunk >> BLOCK_SHIFT
}

/// Above this many blocks to touch for one term, one range read of all the
/// term's blocks beats a point read per block.
const RANGE_READ_BLOCKS: usize = 8;

/// Term frequencies of one term in one chunk, per field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldCounts {
    /// In the names the chunk defines (its symbol's and those starting in it).
    pub name: u32,
    /// In the file's path.
    pub path: u32,
    /// In the chunk's text.
    pub body: u32,
}

/// One chunk in a term's postings: its frequencies and its field lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    /// The chunk's id (its `chunks` row; negative for an overlay's chunk).
    pub chunk: i64,
    /// How often the term occurs in each field of the chunk.
    pub tf: FieldCounts,
    /// The chunk's field lengths in tokens, the same in all its postings:
    /// scoring reads no chunk row.
    pub len: FieldCounts,
}

/// The terms of one chunk, ready to be posted.
#[derive(Clone, Debug, Default)]
pub struct ChunkTerms {
    /// The field lengths in tokens, repeats counted.
    pub len: FieldCounts,
    /// Each distinct term with its frequency per field, sorted by term.
    pub terms: Vec<(String, FieldCounts)>,
}

impl ChunkTerms {
    /// Counts the tokens of the three fields (each a space-separated token string).
    pub fn new(name_tokens: &str, path_tokens: &str, body_tokens: &str) -> ChunkTerms {
        let mut map: HashMap<&str, FieldCounts> = HashMap::new();
        let mut len = FieldCounts::default();
        for t in name_tokens.split_whitespace() {
            map.entry(t).or_default().name += 1;
            len.name += 1;
        }
        for t in path_tokens.split_whitespace() {
            map.entry(t).or_default().path += 1;
            len.path += 1;
        }
        for t in body_tokens.split_whitespace() {
            map.entry(t).or_default().body += 1;
            len.body += 1;
        }
        let mut terms: Vec<(String, FieldCounts)> =
            map.into_iter().map(|(t, c)| (t.to_string(), c)).collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        ChunkTerms { len, terms }
    }

    /// The distinct terms, `\n`-separated (what `chunk_terms` stores).
    pub fn joined(&self) -> String {
        let mut out = String::new();
        for (i, (t, _)) in self.terms.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(t);
        }
        out
    }

    /// The chunk's tokens for text: the names it defines, the file path, its body.
    pub fn from_text(names: &str, path_tokens: &str, body: &str) -> ChunkTerms {
        ChunkTerms::new(
            &tokens::index_text(names),
            path_tokens,
            &tokens::index_text(body),
        )
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Encodes postings sorted by chunk id: delta-coded ids, then the six
/// counts, all varints, then the blob's check (`checksum`).
pub fn encode(postings: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(postings.len() * 8);
    let mut prev = 0i64;
    for p in postings {
        put_varint(&mut out, (p.chunk - prev) as u64);
        prev = p.chunk;
        for v in [
            p.tf.name, p.tf.path, p.tf.body, p.len.name, p.len.path, p.len.body,
        ] {
            put_varint(&mut out, u64::from(v));
        }
    }
    crate::checksum::seal(&mut out, &[]);
    out
}

/// Decodes a blob written by [`encode`]; `None` when it is damaged: its
/// check fails (then `f` sees none of it), or it does not decode.
pub fn decode(blob: &[u8], mut f: impl FnMut(Posting)) -> Option<()> {
    let data = crate::checksum::open(blob, &[])?;
    let mut pos = 0;
    let mut chunk = 0i64;
    while pos < data.len() {
        chunk += get_varint(data, &mut pos)? as i64;
        let mut v = [0u32; 6];
        for slot in &mut v {
            *slot = u32::try_from(get_varint(data, &mut pos)?).ok()?;
        }
        f(Posting {
            chunk,
            tf: FieldCounts {
                name: v[0],
                path: v[1],
                body: v[2],
            },
            len: FieldCounts {
                name: v[3],
                path: v[4],
                body: v[5],
            },
        });
    }
    Some(())
}

/// Postings gathered during a build, written at its end.
#[derive(Default)]
pub struct PendingPostings {
    map: HashMap<String, Vec<Posting>>,
    /// Chunks and field lengths added minus removed: keeps [`LengthSums`]
    /// without a scan of every chunk.
    delta: LengthSums,
    /// Chunks removed by this build: their postings are dropped.
    removed_chunks: HashSet<i64>,
    /// Per term, the blocks holding removed chunks that contain it.
    removed_blocks: HashMap<String, BTreeSet<i64>>,
}

impl PendingPostings {
    /// Posts a new chunk's terms under id `chunk` and adds its lengths to
    /// the collection's.
    pub fn add_chunk(&mut self, chunk: i64, terms: &ChunkTerms) {
        self.delta.add(&terms.len, 1);
        for (t, tf) in &terms.terms {
            self.map.entry(t.clone()).or_default().push(Posting {
                chunk,
                tf: *tf,
                len: terms.len,
            });
        }
    }

    /// Records a chunk's removal: its id, field lengths and distinct terms
    /// (`\n`-separated, as `chunk_terms` stores them).
    pub fn remove_chunk(&mut self, id: i64, len: FieldCounts, terms: &str) {
        self.removed_chunks.insert(id);
        self.delta.add(&len, -1);
        for t in terms.split('\n').filter(|t| !t.is_empty()) {
            match self.removed_blocks.get_mut(t) {
                Some(blocks) => {
                    blocks.insert(block_of(id));
                }
                None => {
                    self.removed_blocks
                        .insert(t.to_string(), BTreeSet::from([block_of(id)]));
                }
            }
        }
    }

    /// What this build adds to the collection's chunk count and field lengths.
    pub fn length_delta(&self) -> LengthSums {
        self.delta
    }

    /// Rewrites the postings blocks this build touched: for each affected
    /// term, the blocks that held removed chunks and those receiving new ones.
    /// Returns the affected terms, sorted.
    pub fn write(self, tx: &Transaction) -> rusqlite::Result<Vec<String>> {
        let PendingPostings {
            mut map,
            removed_chunks,
            mut removed_blocks,
            delta: _,
        } = self;
        let mut affected: Vec<String> = map
            .keys()
            .cloned()
            .chain(removed_blocks.keys().cloned())
            .collect();
        affected.sort();
        affected.dedup();
        let mut read_one =
            tx.prepare_cached("SELECT data FROM postings WHERE term = ?1 AND block = ?2")?;
        let mut read_all = tx.prepare_cached("SELECT block, data FROM postings WHERE term = ?1")?;
        let mut upsert = tx.prepare_cached(
            "INSERT OR REPLACE INTO postings(term, block, df, data) VALUES (?1, ?2, ?3, ?4)",
        )?;
        let mut delete =
            tx.prepare_cached("DELETE FROM postings WHERE term = ?1 AND block = ?2")?;
        for term in &affected {
            let mut new_by_block: BTreeMap<i64, Vec<Posting>> = BTreeMap::new();
            for p in map.remove(term).unwrap_or_default() {
                new_by_block.entry(block_of(p.chunk)).or_default().push(p);
            }
            let mut blocks: BTreeSet<i64> = new_by_block.keys().copied().collect();
            blocks.extend(removed_blocks.remove(term).unwrap_or_default());
            let mut stored: HashMap<i64, Vec<u8>> = HashMap::new();
            if blocks.len() > RANGE_READ_BLOCKS {
                let rows = read_all.query_map([term], |r| Ok((r.get::<_, i64>(0)?, r.get(1)?)))?;
                for row in rows {
                    let (block, data) = row?;
                    if blocks.contains(&block) {
                        stored.insert(block, data);
                    }
                }
            } else {
                for &block in &blocks {
                    if let Some(data) = read_one
                        .query_row(params![term, block], |r| r.get::<_, Vec<u8>>(0))
                        .optional()?
                    {
                        stored.insert(block, data);
                    }
                }
            }
            for block in blocks {
                let old = stored.remove(&block);
                let mut list: Vec<Posting> = Vec::new();
                if let Some(blob) = &old {
                    // A damaged blob fails the build, which then starts afresh:
                    // kept, its postings would be lost from the index unsaid.
                    decode(blob, |p| {
                        if !removed_chunks.contains(&p.chunk) {
                            list.push(p);
                        }
                    })
                    .ok_or_else(|| {
                        rusqlite::Error::FromSqlConversionFailure(
                            3,
                            rusqlite::types::Type::Blob,
                            format!("damaged postings for {term:?}").into(),
                        )
                    })?;
                }
                if let Some(new) = new_by_block.remove(&block) {
                    list.extend(new);
                }
                if list.is_empty() {
                    if old.is_some() {
                        delete.execute(params![term, block])?;
                    }
                    continue;
                }
                list.sort_by_key(|p| p.chunk);
                upsert.execute(params![term, block, list.len() as i64, encode(&list)])?;
            }
        }
        Ok(affected)
    }
}

/// The chunk count and the summed field lengths of a collection, kept
/// exactly (integers) from build to build; [`CollectionStats`] derives from it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LengthSums {
    /// Chunks in the collection (negative only in a delta that removes more
    /// than it adds).
    pub chunks: i64,
    /// Summed field lengths in tokens: names, path, body.
    pub len: [i64; 3],
}

impl LengthSums {
    fn add(&mut self, len: &FieldCounts, sign: i64) {
        self.chunks += sign;
        for (sum, l) in self.len.iter_mut().zip([len.name, len.path, len.body]) {
            *sum += sign * i64::from(l);
        }
    }

    /// Both sums added, field by field (the stored sums moved by a build's delta).
    pub fn plus(self, other: LengthSums) -> LengthSums {
        LengthSums {
            chunks: self.chunks + other.chunks,
            len: [0, 1, 2].map(|i| self.len[i] + other.len[i]),
        }
    }

    /// The form stored in `meta` ([`crate::Meta::LexicalSums`]): four
    /// space-separated integers, chunks then the three field sums.
    pub fn to_meta(&self) -> String {
        format!(
            "{} {} {} {}",
            self.chunks, self.len[0], self.len[1], self.len[2]
        )
    }

    /// Reads [`to_meta`](Self::to_meta)'s form; `None` unless it is exactly
    /// four integers.
    pub fn from_meta(s: &str) -> Option<LengthSums> {
        let v: Vec<i64> = s
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        match v[..] {
            [chunks, a, b, c] => Some(LengthSums {
                chunks,
                len: [a, b, c],
            }),
            _ => None,
        }
    }

    /// The statistics BM25F scores with: the chunk count and mean field
    /// lengths (0 for an empty collection; a negative count counts as 0).
    pub fn collection(&self) -> CollectionStats {
        let n = self.chunks.max(0) as f64;
        let mean = |sum: i64| if n > 0.0 { sum as f64 / n } else { 0.0 };
        CollectionStats {
            chunks: n,
            avg: self.len.map(mean),
        }
    }
}

/// Collection statistics for BM25: chunk count and mean field lengths.
#[derive(Clone, Copy, Debug, Default)]
pub struct CollectionStats {
    /// Chunks in the collection, the `N` of IDF.
    pub chunks: f64,
    /// Mean field lengths in tokens per chunk: names, path, body.
    pub avg: [f64; 3],
}

/// BM25F parameters: field weights and length normalisation per field.
#[derive(Clone, Copy, Debug)]
pub struct Bm25Params {
    /// Saturation of the pseudo-frequency, shared by the fields (default
    /// 1.2): the larger, the more each repeat of a term adds.
    pub k1: f64,
    /// Weights of names, path, body.
    pub weight: [f64; 3],
    /// Length normalisation of names, path, body.
    pub b: [f64; 3],
}

impl Default for Bm25Params {
    fn default() -> Bm25Params {
        Bm25Params {
            k1: 1.2,
            weight: [3.0, 1.5, 1.0],
            b: [0.5, 0.5, 0.75],
        }
    }
}

impl Bm25Params {
    /// Lucene's IDF, which stays positive for very common terms.
    pub fn idf(&self, stats: &CollectionStats, df: f64) -> f64 {
        (1.0 + (stats.chunks - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25F: field frequencies normalised per field, weighted, then saturated once.
    pub fn score(&self, stats: &CollectionStats, idf: f64, p: &Posting) -> f64 {
        self.saturate(idf, self.pseudo_frequency(stats, p))
    }

    /// BM25F's pseudo-frequency of a posting: its field frequencies
    /// normalised by length and weighted. It does not depend on the term's
    /// IDF, so an open index can keep it per posting across queries.
    pub fn pseudo_frequency(&self, stats: &CollectionStats, p: &Posting) -> f64 {
        let tf = [p.tf.name, p.tf.path, p.tf.body];
        let len = [p.len.name, p.len.path, p.len.body];
        let mut pseudo = 0.0;
        for f in 0..3 {
            if tf[f] == 0 {
                continue;
            }
            let avg = stats.avg[f].max(1e-9);
            let norm = 1.0 - self.b[f] + self.b[f] * f64::from(len[f]) / avg;
            pseudo += self.weight[f] * f64::from(tf[f]) / norm;
        }
        pseudo
    }

    /// The score of a pseudo-frequency for a term of this IDF (BM25's saturation).
    pub fn saturate(&self, idf: f64, pseudo: f64) -> f64 {
        idf * pseudo * (self.k1 + 1.0) / (self.k1 + pseudo)
    }

    /// What [`pseudo_frequency`](Self::pseudo_frequency) depends on besides
    /// the posting, bit for bit: pseudo-frequencies kept under one key are
    /// valid for exactly these parameters and statistics.
    pub fn scoring_key(&self, stats: &CollectionStats) -> ScoringKey {
        let mut key = [0u64; 9];
        for (k, v) in key
            .iter_mut()
            .zip([self.weight, self.b, stats.avg].concat())
        {
            *k = v.to_bits();
        }
        ScoringKey(key)
    }
}

/// The parameters and collection statistics a pseudo-frequency was computed
/// under (see [`Bm25Params::scoring_key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScoringKey([u64; 9]);

/// Scores summed per chunk over a query's terms, in an array indexed by
/// chunk id (ids are dense row ids). It is kept by an open index from query
/// to query: only the slots a query touched are cleared for the next.
#[derive(Default)]
pub struct ScoreBoard {
    scores: Vec<f64>,
    touched: Vec<i64>,
}

impl ScoreBoard {
    /// Clears the last query's scores and makes room for chunk ids up to `max_id`.
    pub fn reset(&mut self, max_id: i64) {
        for &id in &self.touched {
            self.scores[id as usize] = 0.0;
        }
        self.touched.clear();
        let len = max_id.max(-1) as usize + 1;
        if self.scores.len() < len {
            self.scores.resize(len, 0.0);
        }
        self.scores.truncate(len);
    }

    /// Whether `chunk` has a slot (ids above the last reset's `max_id` do not).
    pub fn holds(&self, chunk: i64) -> bool {
        usize::try_from(chunk).is_ok_and(|slot| slot < self.scores.len())
    }

    /// Adds to a chunk's score; the chunk must be [`holds`](Self::holds).
    pub fn add(&mut self, chunk: i64, score: f64) {
        let slot = &mut self.scores[chunk as usize];
        if *slot == 0.0 {
            self.touched.push(chunk);
        }
        *slot += score;
    }

    /// The chunks scored since the last reset and their scores, in the order first scored.
    pub fn scored(&self) -> impl Iterator<Item = (i64, f64)> + '_ {
        self.touched
            .iter()
            .map(|&id| (id, self.scores[id as usize]))
    }
}

#[cfg(test)]
mod tests;
