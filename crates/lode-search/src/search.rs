//! Ranked search over chunks.

use std::collections::HashMap;

use lode_core::Result;
use lode_index::lexical::Bm25Params;
use lode_index::{ChunkRow, Filter, Index, tokens};
use serde::Serialize;

use crate::source::{chunk_lines, clip};

/// How a search runs.
#[derive(Clone, Debug)]
pub struct SearchOptions {
    pub top_k: usize,
    pub filter: Filter,
    /// Lines of each hit shown as its snippet.
    pub snippet_lines: usize,
    /// Apply the code-aware rerank; off gives plain BM25F order (a baseline).
    pub rerank: bool,
    /// Fuse the dense (embedding) ranking with the lexical one.
    pub semantic: bool,
}

impl Default for SearchOptions {
    fn default() -> SearchOptions {
        SearchOptions {
            top_k: 10,
            filter: Filter::default(),
            snippet_lines: 4,
            rerank: true,
            semantic: true,
        }
    }
}

/// One ranked chunk.
#[derive(Clone, Debug, Serialize)]
pub struct SearchHit {
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub score: f64,
    /// The symbol the chunk belongs to, if any.
    pub symbol: Option<String>,
    /// The symbol's kind (`function`, `class`, …), or the chunk's kind when it has no symbol.
    pub kind: String,
    pub container: Option<String>,
    pub language: String,
    /// The first lines of the chunk, as in the file.
    pub snippet: String,
}

/// The answer to a search.
#[derive(Clone, Debug, Serialize)]
pub struct SearchResults {
    pub query: String,
    pub hits: Vec<SearchHit>,
    /// Candidates considered before the cut to `top_k`.
    pub candidates: usize,
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

/// Candidates fetched per requested hit: reranking needs a deeper pool.
const POOL_FACTOR: usize = 10;
const MIN_POOL: usize = 100;

pub fn search(index: &Index, query: &str, opts: &SearchOptions) -> Result<SearchResults> {
    let terms = tokens::query_terms(query);
    let pool = (opts.top_k * POOL_FACTOR).max(MIN_POOL);
    let q = QueryShape::new(query);
    let lexical = index.lexical(&terms, &Bm25Params::default(), &opts.filter, pool)?;
    let scores: HashMap<i64, f64> = if opts.semantic {
        let dense = index.dense(query, &opts.filter, pool)?;
        fuse(&lexical, &dense, q.semantic_weight())
    } else {
        lexical.iter().copied().collect()
    };
    let mut ids: Vec<i64> = scores.keys().copied().collect();
    ids.sort_unstable();
    let chunks = index.chunks(&ids)?;

    let mut scored: Vec<(f64, ChunkRow)> = chunks
        .into_iter()
        .map(|c| {
            let base = scores.get(&c.id).copied().unwrap_or(0.0);
            let boost = if opts.rerank { q.boost(&c) } else { 1.0 };
            (base * boost, c)
        })
        .collect();
    sort(&mut scored);
    if opts.rerank {
        lift_files_with_several_strong_chunks(&mut scored);
        // After a file's first hit, each further hit from it counts half as much.
        let mut seen: HashMap<String, i32> = HashMap::new();
        for (score, c) in scored.iter_mut() {
            let n = seen.entry(c.path.clone()).or_default();
            *score *= 0.5f64.powi(*n);
            *n += 1;
        }
        sort(&mut scored);
    }

    let total = scored.len();
    let hits = scored
        .into_iter()
        .take(opts.top_k)
        .map(|(score, c)| to_hit(index, c, score, opts.snippet_lines))
        .collect();
    Ok(SearchResults {
        query: query.to_string(),
        hits,
        candidates: total,
        partial: opts
            .semantic
            .then(|| index.embedded_chunks())
            .flatten()
            .map(|(embedded, chunks)| Partial { embedded, chunks }),
    })
}

/// A file whose several chunks score well is likely the answer as a whole:
/// its best chunk is lifted by 20 % (scored is sorted best first).
fn lift_files_with_several_strong_chunks(scored: &mut [(f64, ChunkRow)]) {
    let Some(top) = scored.first().map(|s| s.0) else {
        return;
    };
    let mut strong: HashMap<&str, usize> = HashMap::new();
    for (score, c) in scored.iter() {
        if *score >= 0.5 * top {
            *strong.entry(c.path.as_str()).or_default() += 1;
        }
    }
    let lifted: std::collections::HashSet<String> = strong
        .into_iter()
        .filter(|(_, n)| *n >= 2)
        .map(|(p, _)| p.to_string())
        .collect();
    let mut done = std::collections::HashSet::new();
    for (score, c) in scored.iter_mut() {
        if lifted.contains(&c.path) && done.insert(c.path.clone()) {
            *score *= 1.2;
        }
    }
}

/// Reciprocal-rank fusion constant: ranks far down a list still count a little.
const RRF_K: f64 = 60.0;

/// Weighted reciprocal-rank fusion of the lexical and dense rankings (scaled
/// by 100 for readable scores).
fn fuse(lexical: &[(i64, f64)], dense: &[(i64, f64)], semantic_weight: f64) -> HashMap<i64, f64> {
    let mut out: HashMap<i64, f64> = HashMap::new();
    for (list, weight) in [(lexical, 1.0 - semantic_weight), (dense, semantic_weight)] {
        for (rank, (id, _)) in list.iter().enumerate() {
            *out.entry(*id).or_default() += 100.0 * weight / (RRF_K + rank as f64 + 1.0);
        }
    }
    out
}

fn sort(scored: &mut [(f64, ChunkRow)]) {
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.path.cmp(&b.1.path))
            .then(a.1.start_line.cmp(&b.1.start_line))
    });
}

fn to_hit(index: &Index, c: ChunkRow, score: f64, snippet_lines: usize) -> SearchHit {
    let snippet = chunk_lines(index, &c.path, c.start_byte, c.end_byte, snippet_lines)
        .iter()
        .map(|l| clip(l, 200))
        .collect::<Vec<_>>()
        .join("\n");
    let (symbol, kind, container) = match c.symbol {
        Some(s) => (Some(s.name), s.kind, s.container),
        None => (None, c.kind, None),
    };
    SearchHit {
        path: c.path,
        start_line: c.start_line,
        end_line: c.end_line,
        score: (score * 10_000.0).round() / 10_000.0,
        symbol,
        kind,
        container,
        language: c.lang,
        snippet,
    }
}

/// What the query asks for, as far as reranking cares.
struct QueryShape {
    /// The query's words normalized for identifier comparison (`parse_config` → `parseconfig`).
    identifiers: Vec<String>,
    /// All words joined: `parse config` also names `parseConfig`.
    joined: String,
    wants_tests: bool,
    wants_examples: bool,
    wants_docs: bool,
    /// Three or more plain words: natural language rather than code.
    sentence: bool,
    /// Words and adjacent word pairs (`thread pool` → `threadpool`) a file stem may equal.
    stems: Vec<String>,
}

fn normalize(word: &str) -> String {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

impl QueryShape {
    fn new(query: &str) -> QueryShape {
        let words: Vec<&str> = query
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == ':' || c == '.'))
            .filter(|w| !w.is_empty())
            .collect();
        let mut identifiers: Vec<String> = Vec::new();
        for w in &words {
            // `Config::load` and `cfg.get` name their last segment.
            let last = w.rsplit([':', '.']).find(|s| !s.is_empty()).unwrap_or(w);
            identifiers.push(normalize(last));
        }
        let lower = query.to_lowercase();
        let plain = |w: &str| {
            w.chars().all(char::is_alphabetic) && !w.chars().skip(1).any(char::is_uppercase)
        };
        let sentence =
            words.len() >= 3 && words.iter().filter(|w| plain(w)).count() * 2 > words.len();
        const STOP: &[&str] = &[
            "the", "and", "for", "with", "from", "into", "how", "what", "where", "when", "which",
            "that", "this", "are", "does", "its",
        ];
        let mut stems: Vec<String> = identifiers
            .iter()
            .filter(|w| w.len() >= 3 && !STOP.contains(&w.as_str()))
            .cloned()
            .collect();
        stems.extend(identifiers.windows(2).map(|p| format!("{}{}", p[0], p[1])));
        QueryShape {
            stems,
            sentence,
            joined: normalize(&words.join("")),
            identifiers,
            wants_tests: lower.contains("test") || lower.contains("spec"),
            wants_examples: lower.contains("example")
                || lower.contains("demo")
                || lower.contains("sample"),
            wants_docs: [
                "doc",
                "readme",
                "changelog",
                "guide",
                "tutorial",
                "faq",
                "release note",
            ]
            .iter()
            .any(|w| lower.contains(w)),
        }
    }

    /// How much the dense ranking counts: more for sentences, less for
    /// identifiers, where exact tokens say more than meaning.
    fn semantic_weight(&self) -> f64 {
        if self.sentence { 0.4 } else { 0.3 }
    }

    fn boost(&self, c: &ChunkRow) -> f64 {
        let mut b = 1.0;
        if let Some(s) = &c.symbol {
            let name = normalize(&s.name);
            if !name.is_empty() && (self.identifiers.contains(&name) || name == self.joined) {
                b *= 2.0;
            }
        }
        let path = c.path.to_ascii_lowercase();
        // A file named for what the query asks about (`timer` → `timer.c`).
        let file = path.rsplit('/').next().unwrap_or(&path);
        let stem = normalize(file.split('.').next().unwrap_or(file));
        if !stem.is_empty() && self.stems.contains(&stem) {
            b *= 1.5;
        }
        if !self.wants_tests && is_test_path(&c.path) {
            b *= 0.3;
        }
        if path
            .split('/')
            .any(|seg| matches!(seg, "compat" | "legacy" | "deprecated"))
        {
            b *= 0.5;
        }
        if !self.wants_examples && is_example_path(&path) {
            b *= 0.6;
        }
        if path.ends_with(".d.ts") {
            b *= 0.7;
        }
        // Prose (Markdown, text) answers "where is it done" less well than code.
        if !self.wants_docs && is_prose(&c.lang) {
            b *= 0.5;
        }
        b
    }
}

pub(crate) fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let lstem = stem.to_ascii_lowercase();
    let lfile = file.to_ascii_lowercase();
    lower.split('/').any(|seg| {
        matches!(
            seg,
            "test" | "tests" | "__tests__" | "spec" | "specs" | "testing" | "testdata"
        )
    }) || lstem.starts_with("test_")
        || ["_test", "_tests", "_spec"]
            .iter()
            .any(|s| lstem.ends_with(s))
        || ["Test", "Tests", "Spec"].iter().any(|s| stem.ends_with(s))
        || lfile.contains(".test.")
        || lfile.contains(".spec.")
}

fn is_prose(lang: &str) -> bool {
    matches!(lang, "markdown" | "text")
}

fn is_example_path(path: &str) -> bool {
    path.split('/').any(|seg| {
        matches!(
            seg,
            "example" | "examples" | "demo" | "demos" | "sample" | "samples"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_test_paths() {
        for p in [
            "tests/a.py",
            "src/foo_test.go",
            "pkg/test_x.py",
            "a/b.test.ts",
            "src/FooTest.java",
            "spec/x_spec.rb",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/contest.py", "src/attestation.rs", "lib/latest.js"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn file_stems_come_from_words_and_word_pairs() {
        let q = QueryShape::new("thread pool and the work queue");
        for stem in ["thread", "pool", "threadpool", "work", "queue", "workqueue"] {
            assert!(q.stems.contains(&stem.to_string()), "{stem}: {:?}", q.stems);
        }
        assert!(!q.stems.contains(&"and".to_string()) && !q.stems.contains(&"the".to_string()));
        assert!(q.sentence);
        assert!(!QueryShape::new("parseConfig").sentence);
        assert!(
            QueryShape::new("parse config file").semantic_weight()
                > QueryShape::new("parse_config").semantic_weight()
        );
    }

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
    fn query_shape_names_identifiers() {
        let q = QueryShape::new("where is Config::load_file called");
        assert!(q.identifiers.contains(&"loadfile".to_string()));
        assert!(!q.wants_tests);
        assert_eq!(QueryShape::new("parse config").joined, "parseconfig");
    }
}
