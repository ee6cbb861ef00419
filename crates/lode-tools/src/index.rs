//! The search index derived once from a catalog: BM25F over name,
//! description and parameter text, an exact-name tier, and, when an
//! embedder is given, cosine similarity fused with BM25.

use std::collections::HashMap;
use std::sync::Arc;

use lode_embed::Embedder;
use serde::Serialize;

use crate::bm25::{Bm25, Bm25Params};
use crate::catalog::{Catalog, qualified_name};
use crate::fields::{self, Field};
use crate::text;

/// How BM25 and the embedding similarity are combined.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Fusion {
    /// Weighted reciprocal-rank fusion: `(1 − w)/(k + lexical rank) + w/(k + dense rank)`.
    Rrf {
        /// The rank offset: a larger `k` flattens the gap between ranks (the CLI uses 60).
        k: f32,
        /// `w`, the share of the dense rank, from 0 (BM25 alone) to 1; not clamped.
        semantic_weight: f32,
    },
    /// Weighted sum of the BM25 score divided by the best BM25 score of the
    /// query and the cosine similarity: `(1 − w)·bm25/max + w·cos`.
    Score {
        /// `w`, the weight of the cosine, from 0 (BM25 alone) to 1; not clamped.
        semantic_weight: f32,
    },
}

impl Default for Fusion {
    /// Measured on MetaTool and LiveMCPBench (docs/benchmarks.md, "Tool search"):
    /// score fusion beat reciprocal-rank fusion on both at every weight tried.
    fn default() -> Self {
        Fusion::Score {
            semantic_weight: 0.7,
        }
    }
}

/// The cosine similarity a tool needs when no word of the query is in it.
///
/// Set on a hand-made catalog, not on an evaluation set: with the built-in
/// model the tests' off-topic and nonsense queries stay below 0.20 there
/// (`zzqqxx_nomatch`, `asdf qwer`), paraphrases of a tool reach 0.23 and
/// more (`show me the bugs reported on my project` → the issues tool); the
/// floor sits between. Its cost on MetaTool and LiveMCPBench is in
/// docs/benchmarks.md ("Tool search").
pub const SEMANTIC_FLOOR: f32 = 0.22;

/// How a [`ToolIndex`] is built.
#[derive(Clone)]
pub struct IndexOptions {
    /// Embeds tool texts and queries; `None` ranks by BM25 alone.
    pub embedder: Option<Arc<dyn Embedder>>,
    /// BM25F field weights, saturation and length normalisation.
    pub bm25: Bm25Params,
    /// How BM25 and cosine similarity are combined; unused without an embedder.
    pub fusion: Fusion,
    /// The least cosine similarity that ranks a tool sharing no word with the
    /// query (and not named by it); 0 ranks every tool the embedder finds.
    pub semantic_floor: f32,
}

impl Default for IndexOptions {
    fn default() -> Self {
        IndexOptions {
            embedder: None,
            bm25: Bm25Params::default(),
            fusion: Fusion::default(),
            semantic_floor: SEMANTIC_FLOOR,
        }
    }
}

/// One ranked tool: its index in the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Ranked {
    /// Index of the tool in the [`Catalog`](crate::Catalog) the index was built from
    /// (for a [`Toolbox`](crate::Toolbox), the same index in its catalog).
    pub tool: usize,
    /// Higher is better; comparable within one ranking only.
    pub score: f32,
    /// The query names this tool exactly (it ranks above every other match).
    pub exact: bool,
}

/// Tools ranked for a query.
#[derive(Clone, Debug, Default)]
pub struct Ranking {
    /// Best first (exact matches, then by score, ties by catalog order), at
    /// most the depth asked for.
    pub hits: Vec<Ranked>,
    /// Set when the embedder failed for this query and BM25 ranked alone.
    pub note: Option<String>,
}

struct Dense {
    embedder: Arc<dyn Embedder>,
    dim: usize,
    /// One L2-normalised row per tool.
    vectors: Vec<f32>,
}

/// The search index of one catalog. Built once; read-only afterwards and
/// shareable across threads.
pub struct ToolIndex {
    bm25: Bm25,
    dense: Option<Dense>,
    /// Identifier key of a canonical or unqualified name → tools so named.
    names: HashMap<String, Vec<usize>>,
    fusion: Fusion,
    semantic_floor: f32,
    note: Option<String>,
}

impl std::fmt::Debug for ToolIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolIndex")
            .field("tools", &self.bm25.len())
            .field("hybrid", &self.is_hybrid())
            .field("fusion", &self.fusion)
            .finish()
    }
}

impl ToolIndex {
    /// Indexes every tool of `catalog`. An embedder that fails leaves a
    /// BM25-only index and a [`note`](ToolIndex::note) saying why.
    pub fn build(catalog: &Catalog, options: IndexOptions) -> ToolIndex {
        let docs: Vec<[Vec<String>; Field::COUNT]> =
            catalog.tools().iter().map(fields::field_terms).collect();
        let bm25 = Bm25::new(&docs, options.bm25);
        let mut names: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, t) in catalog.tools().iter().enumerate() {
            let mut keys = vec![text::identifier_key(&t.name)];
            if let Some(g) = &t.group
                && let Some(local) = t.name.strip_prefix(&qualified_name(g, ""))
            {
                keys.push(text::identifier_key(local));
            }
            keys.dedup();
            for k in keys {
                names.entry(k).or_default().push(i);
            }
        }
        let mut note = None;
        let dense = options.embedder.and_then(|embedder| {
            let texts: Vec<String> = catalog.tools().iter().map(fields::embedding_text).collect();
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            match embedder.embed(&refs) {
                Ok(mut vectors) => {
                    let dim = embedder.dim();
                    vectors.chunks_mut(dim).for_each(normalize);
                    Some(Dense {
                        embedder,
                        dim,
                        vectors,
                    })
                }
                Err(e) => {
                    note = Some(format!(
                        "embedding the catalog failed ({e}); ranking by BM25 only"
                    ));
                    None
                }
            }
        });
        ToolIndex {
            bm25,
            dense,
            names,
            fusion: options.fusion,
            semantic_floor: options.semantic_floor,
            note,
        }
    }

    /// Whether rankings use the embedding similarity.
    pub fn is_hybrid(&self) -> bool {
        self.dense.is_some()
    }

    /// Why the index is BM25-only although an embedder was given.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The best `depth` tools for `query` among those `eligible` accepts,
    /// best first: tools the query names exactly, then by fused score; ties
    /// by catalog order. A tool neither signal finds is not returned, nor one
    /// that shares no word with the query and is less similar than the floor.
    pub fn rank(&self, query: &str, eligible: impl Fn(usize) -> bool, depth: usize) -> Ranking {
        let n = self.bm25.len();
        let mut lexical = vec![0f32; n];
        self.bm25
            .score_into(&text::distinct_terms(query), &mut lexical);
        let mut note = None;
        let content = text::content_words(query);
        let dense_query = if content.is_empty() { query } else { &content };
        let cosine = self
            .dense
            .as_ref()
            .and_then(|d| match d.embedder.embed(&[dense_query]) {
                Ok(mut q) => {
                    normalize(&mut q);
                    Some(
                        d.vectors
                            .chunks(d.dim)
                            .map(|row| lode_embed::vectors::dot(row, &q))
                            .collect::<Vec<f32>>(),
                    )
                }
                Err(e) => {
                    note = Some(format!(
                        "embedding the query failed ({e}); ranked by BM25 only"
                    ));
                    None
                }
            });
        let exact = self.exact_matches(query);
        let candidates: Vec<usize> = (0..n)
            .filter(|&i| eligible(i))
            .filter(|&i| {
                lexical[i] > 0.0
                    || exact.contains(&i)
                    || cosine
                        .as_ref()
                        .is_some_and(|c| c[i] > 0.0 && c[i] >= self.semantic_floor)
            })
            .collect();
        let scores = match &cosine {
            None => candidates.iter().map(|&i| lexical[i]).collect(),
            Some(cos) => fuse(self.fusion, &candidates, &lexical, cos),
        };
        let mut hits: Vec<Ranked> = candidates
            .iter()
            .zip(scores)
            .map(|(&tool, score)| Ranked {
                tool,
                score,
                exact: exact.contains(&tool),
            })
            .collect();
        hits.sort_by(|a, b| {
            b.exact
                .cmp(&a.exact)
                .then(b.score.total_cmp(&a.score))
                .then(a.tool.cmp(&b.tool))
        });
        hits.truncate(depth);
        Ranking { hits, note }
    }

    /// Tools the query names: the whole query is a tool's name, or one of its
    /// words is an identifier of several parts (`read_file`, `getWeather`)
    /// that is. A single plain word (`search`) is not taken for a name
    /// unless it is the whole query.
    fn exact_matches(&self, query: &str) -> Vec<usize> {
        let mut keys = vec![text::identifier_key(query)];
        for word in query.split_whitespace() {
            let word = word.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
            if text::split_identifier(word).len() > 1 {
                keys.push(text::identifier_key(word));
            }
        }
        let mut out: Vec<usize> = keys
            .iter()
            .filter_map(|k| self.names.get(k))
            .flatten()
            .copied()
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

/// Fused scores of `candidates`, in their order.
fn fuse(fusion: Fusion, candidates: &[usize], lexical: &[f32], cosine: &[f32]) -> Vec<f32> {
    match fusion {
        Fusion::Rrf { k, semantic_weight } => {
            let lex_rank = ranks(candidates, |i| lexical[i], |i| lexical[i] > 0.0);
            let dense_rank = ranks(candidates, |i| cosine[i], |_| true);
            candidates
                .iter()
                .map(|i| {
                    let part = |r: Option<&usize>| r.map_or(0.0, |&r| 1.0 / (k + r as f32));
                    (1.0 - semantic_weight) * part(lex_rank.get(i))
                        + semantic_weight * part(dense_rank.get(i))
                })
                .collect()
        }
        Fusion::Score { semantic_weight } => {
            let max = candidates.iter().map(|&i| lexical[i]).fold(0f32, f32::max);
            candidates
                .iter()
                .map(|&i| {
                    let lex = if max > 0.0 { lexical[i] / max } else { 0.0 };
                    (1.0 - semantic_weight) * lex + semantic_weight * cosine[i]
                })
                .collect()
        }
    }
}

/// 1-based ranks by `score` (descending, ties by index) of the candidates `keep` accepts.
fn ranks(
    candidates: &[usize],
    score: impl Fn(usize) -> f32,
    keep: impl Fn(usize) -> bool,
) -> HashMap<usize, usize> {
    let mut order: Vec<usize> = candidates.iter().copied().filter(|&i| keep(i)).collect();
    order.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
    order
        .into_iter()
        .enumerate()
        .map(|(r, i)| (i, r + 1))
        .collect()
}
