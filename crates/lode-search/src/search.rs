//! Ranked search over chunks.

use std::collections::HashMap;
use std::sync::Arc;

use lode_core::{Language, Result};
use lode_index::lexical::Bm25Params;
use lode_index::{ChunkRow, Filter, Index, tokens};
use serde::Serialize;

use crate::rank::{self, QueryShape};
use crate::source::{chunk_lines, clip};
use crate::task::{FileHit, Mode, TaskOptions, task_search};

/// How a search runs.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    /// Hits returned at most (default 10); in task mode, files too.
    pub top_k: usize,
    /// Which indexed files are searched: path prefix and languages
    /// ([`filter()`](crate::filter())).
    pub filter: Filter,
    /// Lines of each hit shown as its snippet.
    pub snippet_lines: usize,
    /// Apply the code-aware rerank; off gives plain BM25F order (a baseline).
    pub rerank: bool,
    /// Fuse the dense (embedding) ranking with the lexical one.
    pub semantic: bool,
    /// Which ranking: `None` decides by the text's shape ([`Mode::detect`]).
    pub mode: Option<Mode>,
    /// Answer with ranked files (each with its best chunks) as well as chunks.
    pub files: bool,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions {
            top_k: 10,
            filter: Filter::default(),
            snippet_lines: 4,
            rerank: true,
            semantic: true,
            mode: None,
            files: false,
        }
    }
}

/// One ranked chunk.
#[derive(Clone, Debug, Serialize)]
pub struct SearchHit {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// First line of the chunk (1-based).
    pub start_line: u32,
    /// Last line of the chunk (inclusive).
    pub end_line: u32,
    /// The ranking score, rounded to 4 decimals: higher is better, comparable
    /// within one answer only. In task mode, the score of the chunk's file.
    pub score: f64,
    /// The symbol the chunk belongs to, if any.
    pub symbol: Option<String>,
    /// The symbol's kind (`function`, `class`, …), or the chunk's kind when it has no symbol.
    pub kind: String,
    /// The symbol's container as written (`class Cart`, `impl Config`); `None`
    /// without a symbol or for a top-level one.
    pub container: Option<String>,
    /// The file's language.
    pub language: Language,
    /// The first lines of the chunk, as in the file.
    pub snippet: String,
}

/// The answer to a search.
#[derive(Clone, Debug, Serialize)]
pub struct SearchResults {
    /// The text searched, its first 200 bytes (a longer one is cut at a
    /// character boundary and ends in `…`).
    pub query: String,
    /// Best first, at most `top_k`; in task mode, the ranked files' chunks, file by file.
    pub hits: Vec<SearchHit>,
    /// Which ranking ran: `query` (ranked chunks) or `task` (ranked files,
    /// their chunks in file order).
    pub mode: Mode,
    /// The ranked files, each with its best chunks: in task mode, and when
    /// asked for (`SearchOptions::files`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileHit>,
    /// Candidates considered before the cut to `top_k` (files in task mode).
    pub candidates: usize,
    /// No word of the query is in the index: the hits are only the nearest
    /// by meaning (the embeddings), which for a name the repository lacks
    /// means nothing. The CLI exits 1 then.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub no_strong_match: bool,
    /// Present when the dense side covered only the chunks embedded so far
    /// (the index's embedding phase is under way or was stopped).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

/// How much of the index the dense side of a search covered.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Partial {
    /// Chunks with a vector.
    pub embedded: u64,
    /// Chunks in the index.
    pub chunks: u64,
}

/// Candidates' scores by chunk id (foldhash: a few hundred integer keys per
/// query, and nothing depends on their order).
pub(crate) type Scores = HashMap<i64, f64, foldhash::fast::RandomState>;

/// Candidates fetched per requested hit: reranking needs a deeper pool.
const POOL_FACTOR: usize = 10;
const MIN_POOL: usize = 100;

/// Ranks chunks for `query` (query mode), or the files a task's text
/// touches (task mode, see [`crate::task`]), as `opts.mode` says or the
/// text's shape suggests.
pub fn search(index: &Index, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
    let mode = opts.mode.unwrap_or_else(|| Mode::detect(query));
    if mode == Mode::Task {
        return task_mode(index, query, opts);
    }
    let mut results = query_mode(index, query, opts)?;
    if opts.files {
        results.files = group_by_file(&results.hits);
    }
    Ok(results)
}

/// Bytes of the query an answer repeats as its `query`: the caller has the
/// text, and a long echo would crowd a capped answer's hits out.
const ECHO_BYTES: usize = 200;

/// A task's text: its files, their chunks as the hits.
fn task_mode(index: &Index, text: &str, opts: &SearchOptions) -> Result<SearchResults> {
    let task = TaskOptions {
        files: opts.top_k,
        filter: opts.filter.clone(),
        semantic: opts.semantic,
        snippet_lines: opts.snippet_lines,
        ..TaskOptions::default()
    };
    let found = task_search(index, text, &task)?;
    Ok(SearchResults {
        query: crate::source::clip(text, ECHO_BYTES),
        hits: found.hits(opts.top_k),
        mode: Mode::Task,
        no_strong_match: false,
        candidates: found.candidates,
        partial: found.partial,
        files: found.files,
    })
}

/// Query mode's hits as files, in the order of each file's best hit.
fn group_by_file(hits: &[SearchHit]) -> Vec<FileHit> {
    let mut files: Vec<FileHit> = Vec::new();
    for h in hits {
        match files.iter_mut().find(|f| f.path == h.path) {
            Some(f) => f.chunks.push(h.clone()),
            None => files.push(FileHit {
                path: h.path.clone(),
                language: h.language,
                score: h.score,
                evidence: Vec::new(),
                chunks: vec![h.clone()],
                features: Default::default(),
            }),
        }
    }
    files
}

fn query_mode(index: &Index, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
    let terms = rank::expand_terms(tokens::query_terms(query));
    let pool = (opts.top_k * POOL_FACTOR).max(MIN_POOL);
    let lexical = index.lexical(&terms, &Bm25Params::default(), &opts.filter, pool)?;
    let scores: Scores = if opts.semantic {
        let dense = index.dense(query, &opts.filter, pool)?;
        fuse(&lexical, &dense, rank::SEMANTIC_WEIGHT)
    } else {
        lexical.iter().copied().collect()
    };
    let mut ids: Vec<i64> = scores.keys().copied().collect();
    ids.sort_unstable();
    let chunks = index.shared_chunks(&ids)?;

    let mut scored: Vec<rank::Scored> = chunks
        .into_iter()
        .map(|c| (scores.get(&c.id).copied().unwrap_or(0.0), c))
        .collect();
    if opts.rerank {
        rank::rerank(&QueryShape::new(query), &mut scored, index.chunk_count()?);
    } else {
        rank::sort(&mut scored);
    }

    let total = scored.len();
    let hits: Vec<SearchHit> = scored
        .into_iter()
        .take(opts.top_k)
        .map(|(score, c)| to_hit(index, c, score, opts.snippet_lines))
        .collect();
    Ok(SearchResults {
        query: crate::source::clip(query, ECHO_BYTES),
        no_strong_match: lexical.is_empty() && !hits.is_empty(),
        hits,
        mode: Mode::Query,
        files: Vec::new(),
        candidates: total,
        partial: opts
            .semantic
            .then(|| index.embedded_chunks())
            .flatten()
            .map(|(embedded, chunks)| Partial { embedded, chunks }),
    })
}

/// Reciprocal-rank fusion constant: ranks far down a list still count a little.
const RRF_K: f64 = 60.0;

/// Weighted reciprocal-rank fusion of the lexical and dense rankings (scaled
/// by 100 for readable scores). Equal scores share the rank of the first of
/// them: the order among ties follows chunk ids, which an updated index and a
/// fresh build of one tree number differently.
pub(crate) fn fuse(lexical: &[(i64, f64)], dense: &[(i64, f64)], semantic_weight: f64) -> Scores {
    let mut out = Scores::default();
    for (list, weight) in [(lexical, 1.0 - semantic_weight), (dense, semantic_weight)] {
        let mut rank = 0;
        for (i, (id, score)) in list.iter().enumerate() {
            if i == 0 || list[i - 1].1.total_cmp(score).is_ne() {
                rank = i;
            }
            *out.entry(*id).or_default() += 100.0 * weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    out
}

pub(crate) fn to_hit(
    index: &Index,
    c: Arc<ChunkRow>,
    score: f64,
    snippet_lines: usize,
) -> SearchHit {
    let c = Arc::unwrap_or_clone(c);
    let snippet = chunk_lines(index, &c.path, c.start_byte, c.end_byte, snippet_lines)
        .iter()
        .map(|l| clip(l, 200))
        .collect::<Vec<_>>()
        .join("\n");
    let (symbol, kind, container) = match c.symbol {
        Some(s) => (Some(s.name), s.kind.as_str(), s.container),
        None => (None, c.kind.as_str(), None),
    };
    SearchHit {
        path: c.path,
        start_line: c.start_line,
        end_line: c.end_line,
        score: (score * 10_000.0).round() / 10_000.0,
        symbol,
        kind: kind.to_string(),
        container,
        language: c.lang,
        snippet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fusion_rewards_agreement_and_rank() {
        let lexical = [(1, 9.0), (2, 5.0), (3, 1.0)];
        let dense = [(3, 0.9), (2, 0.8), (4, 0.7)];
        let fused = fuse(&lexical, &dense, 0.4);
        // Found by both, near the top of each: first.
        assert!(fused[&2] > fused[&1] && fused[&2] > fused[&3]);
        // Top lexical beats top dense when the lexical side weighs more.
        assert!(fused[&1] > fused[&4]);
        assert_eq!(fused.len(), 4);
    }

    #[test]
    fn tied_scores_fuse_alike_whatever_their_order() {
        let lexical = [(1, 9.0), (2, 5.0), (3, 5.0)];
        let dense = [(3, 0.9), (4, 0.5), (5, 0.5), (2, 0.1)];
        let fused = fuse(&lexical, &dense, 0.4);
        let swapped = fuse(&[(1, 9.0), (3, 5.0), (2, 5.0)], &dense, 0.4);
        assert_eq!(fused[&2].to_bits(), swapped[&2].to_bits());
        assert_eq!(fused[&4].to_bits(), fused[&5].to_bits());
        // A tie takes the first rank of its run, and the next score its own.
        assert!(fused[&2] > 100.0 * 0.4 / (RRF_K + 4.0) + 100.0 * 0.6 / (RRF_K + 3.0));
    }
}
