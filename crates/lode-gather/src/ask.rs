//! `ask`: search results re-ranked and extended by personalised PageRank
//! over the call graph, seeded by the hits, so that code one call away
//! from a hit can surface.

use std::collections::HashMap;
use std::time::Instant;

use lode_core::Language;
use lode_graph::Resolver;
use lode_index::{Index, SymbolRow};
use lode_search::{FileHit, Mode, SearchHit, SearchResults};
use serde::Serialize;

use crate::graph::{GraphCache, Relation, StateKey, enclosing_symbol};
use crate::text::{clip, read_lines};
use crate::walk::GraphState;

/// lode-graph's PageRank damping (private there): the share of a seed's
/// rank that is its own teleport, not received through edges, is `1 − DAMPING`.
const DAMPING: f64 = 0.85;

/// How `ask` blends.
#[derive(Clone, Debug)]
pub struct AskOptions {
    /// Graph-only symbols added at most.
    pub extra: usize,
    /// Weight of the search score in the blend (the rest is PageRank).
    pub search_weight: f64,
    /// Hits whose neighbours may be added (the best ones).
    pub expand_hits: usize,
    /// Lines of each added symbol shown as its snippet.
    pub snippet_lines: usize,
}

impl Default for AskOptions {
    fn default() -> AskOptions {
        AskOptions {
            extra: 5,
            search_weight: 0.6,
            expand_hits: 10,
            snippet_lines: 4,
        }
    }
}

/// One result of `ask`: a search hit, or a symbol the graph added.
#[derive(Clone, Debug, Serialize)]
pub struct AskHit {
    /// The file, relative to the repository root.
    pub path: String,
    /// First line of the hit's chunk or the added symbol, 1-based.
    pub start_line: u32,
    /// Last line, 1-based and inclusive.
    pub end_line: u32,
    /// For a phrase, the blend `search_weight × search score / best search
    /// score + (1 − search_weight) × PageRank / best PageRank`; in task mode,
    /// the search's own score (the order is the search's).
    pub score: f64,
    /// The search score (`None` for a symbol the graph added).
    pub search_score: Option<f64>,
    /// PageRank relative to the best of these results (0–1).
    pub graph_score: f64,
    /// The symbol the chunk belongs to, or the added symbol; `None` for a
    /// chunk outside any symbol.
    pub symbol: Option<String>,
    /// The symbol's kind (`function`, …), or the chunk's kind when there is no symbol.
    pub kind: String,
    /// The symbol's container as extracted (`impl Config`, `class Router`).
    pub container: Option<String>,
    /// The file's language.
    pub language: Language,
    /// A hit's snippet as the search gave it; for an added symbol its first
    /// [`AskOptions::snippet_lines`] lines, each clipped to 200 characters.
    pub snippet: String,
    /// `search` or `graph`.
    pub source: &'static str,
    /// For a graph-added symbol, its call edge to a hit: `called by upload_file`.
    pub edge: Option<String>,
}

/// What the graph step did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct AskGraph {
    /// The graph re-ranked the hits (false when skipped, on an index error,
    /// or with no hits).
    pub ran: bool,
    /// Why the results are the plain search results (graph not ready, an error).
    pub skipped: Option<String>,
    /// Symbols in the whole call graph.
    pub nodes: usize,
    /// Distinct caller–callee pairs in it.
    pub edges: usize,
    /// Distinct hit symbols that seeded PageRank.
    pub seeds: usize,
    /// Symbols the graph added to the hits.
    pub added: usize,
    /// Wall time of the whole `ask`, in milliseconds.
    pub elapsed_ms: f64,
}

/// The answer of [`ask()`]: the search's hits re-ranked, the symbols the graph
/// added, and what the graph step did.
#[derive(Clone, Debug, Serialize)]
pub struct AskResults {
    /// The search's query.
    pub query: String,
    /// The search's ranking: `query` or `task` (see `lode_search::Mode`).
    pub mode: Mode,
    /// Best first by `score`; in task mode the search's hits in its order,
    /// then the added symbols.
    pub hits: Vec<AskHit>,
    /// The search's ranked files, in task mode or when asked for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<FileHit>,
    /// The search's candidates before its cut to `top_k` (files in task mode).
    pub candidates: usize,
    /// What the graph step did.
    pub graph: AskGraph,
}

fn from_hit(h: &SearchHit) -> AskHit {
    AskHit {
        path: h.path.clone(),
        start_line: h.start_line,
        end_line: h.end_line,
        score: h.score,
        search_score: Some(h.score),
        graph_score: 0.0,
        symbol: h.symbol.clone(),
        kind: h.kind.clone(),
        container: h.container.clone(),
        language: h.language,
        snippet: h.snippet.clone(),
        source: "search",
        edge: None,
    }
}

/// Re-ranks `results` by PageRank personalised to their symbols and adds up
/// to [`AskOptions::extra`] neighbours of hits. Never fails: without the
/// graph the plain results come back, and `graph.skipped` says why.
pub fn ask(
    index: &Index,
    results: &SearchResults,
    opts: &AskOptions,
    graphs: &GraphCache,
    state: &GraphState,
) -> AskResults {
    let start = Instant::now();
    let mut out = AskResults {
        query: results.query.clone(),
        mode: results.mode,
        files: results.files.clone(),
        hits: results.hits.iter().map(from_hit).collect(),
        candidates: results.candidates,
        graph: AskGraph::default(),
    };
    if let GraphState::NotReady(why) = state {
        out.graph.skipped = Some(format!("graph not ready: {why}"));
    } else if !results.hits.is_empty() {
        out.graph.ran = true;
        if let Err(e) = rerank(index, results, opts, graphs, &mut out) {
            out.hits = results.hits.iter().map(from_hit).collect();
            out.graph.ran = false;
            out.graph.skipped = Some(format!("index error: {e}"));
        }
    }
    out.graph.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
    out
}

fn rerank(
    index: &Index,
    results: &SearchResults,
    opts: &AskOptions,
    graphs: &GraphCache,
    out: &mut AskResults,
) -> lode_core::Result<()> {
    let key = StateKey::of(index)?;
    let graph = graphs.symbol_graph(&key, index)?;
    out.graph.nodes = graph.ids.len();
    out.graph.edges = graph.edges;
    let hit_symbols = results
        .hits
        .iter()
        .map(|h| enclosing_symbol(index, h))
        .collect::<lode_core::Result<Vec<_>>>()?;
    let ranks = GraphRanks::new(&graph, &hit_symbols);
    out.graph.seeds = ranks.seeds.len();
    let resolver = Resolver::new(index)?;
    let mut added: HashMap<i64, (SymbolRow, String)> = HashMap::new();
    for sym in hit_symbols.iter().take(opts.expand_hits).flatten() {
        for n in graphs.neighbours(&key, &resolver, sym)?.iter() {
            if ranks.seeds.contains_key(&n.symbol.id) || added.contains_key(&n.symbol.id) {
                continue;
            }
            let verb = match n.relation {
                Relation::Callee => "called by",
                Relation::Caller => "calls",
            };
            let edge = format!("{verb} {}", sym.name);
            added.insert(n.symbol.id, (n.symbol.clone(), edge));
        }
    }
    let extra = best_added(added, &ranks, opts.extra);
    let hit_ranks: Vec<f64> = hit_symbols
        .iter()
        .map(|s| s.as_ref().map_or(0.0, |s| ranks.of(s.id)))
        .collect();
    let best_rank = hit_ranks
        .iter()
        .copied()
        .chain(extra.iter().map(|e| e.0))
        .fold(0.0, f64::max);
    // A task's ranking is by file, from more evidence than the call graph
    // holds (blending PageRank in lowered file recall@5 on SWE-bench Lite,
    // docs/benchmarks.md): its hits keep their order and the graph only adds.
    let task = results.mode == Mode::Task;
    let blend = Blend {
        search_weight: opts.search_weight.clamp(0.0, 1.0),
        best_search: results.hits.iter().map(|h| h.score).fold(0.0, f64::max),
        best_rank,
        task,
    };
    for (hit, r) in out.hits.iter_mut().zip(&hit_ranks) {
        blend.hit(hit, *r);
    }
    let floor = out
        .hits
        .iter()
        .map(|h| h.score)
        .fold(f64::INFINITY, f64::min);
    for (r, s, edge) in extra {
        let graph_score = round4(norm(r, best_rank));
        out.hits.push(graph_hit(
            index,
            s,
            edge,
            blend.added(graph_score, floor),
            graph_score,
            opts,
        )?);
        out.graph.added += 1;
    }
    // A task's hits as ranked, then what the graph added, best first; a
    // phrase's all blended.
    let sorted_from = if task { results.hits.len() } else { 0 };
    out.hits[sorted_from..].sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
            .then(a.start_line.cmp(&b.start_line))
    });
    Ok(())
}

/// Personalised PageRank seeded by the hits' symbols, each weighted by its
/// hit's rank.
struct GraphRanks {
    seeds: HashMap<i64, f64>,
    ppr: HashMap<i64, f64>,
    total: f64,
}

impl GraphRanks {
    fn new(graph: &lode_graph::SymbolGraph, hit_symbols: &[Option<SymbolRow>]) -> GraphRanks {
        let mut seeds: HashMap<i64, f64> = HashMap::new();
        for (rank, sym) in hit_symbols.iter().enumerate() {
            if let Some(s) = sym {
                *seeds.entry(s.id).or_default() += 1.0 / (rank + 1) as f64;
            }
        }
        let ppr = graph.pagerank(Some(&seeds));
        let total: f64 = seeds.values().sum::<f64>().max(f64::MIN_POSITIVE);
        GraphRanks { seeds, ppr, total }
    }

    /// What a symbol receives through the graph: its PageRank less its own
    /// teleport share. Without this the seeds' shares (their search ranks
    /// again) dominate, and a neighbour could never outrank a hit.
    fn of(&self, id: i64) -> f64 {
        let own = self
            .seeds
            .get(&id)
            .map_or(0.0, |w| (1.0 - DAMPING) * w / self.total);
        self.ppr.get(&id).map_or(0.0, |p| (p - own).max(0.0))
    }
}

/// The `most` best-ranked of the neighbours `added` (symbol id → symbol
/// and the edge that found it), those the graph gives any rank.
fn best_added(
    added: HashMap<i64, (SymbolRow, String)>,
    ranks: &GraphRanks,
    most: usize,
) -> Vec<(f64, SymbolRow, String)> {
    let mut extra: Vec<(f64, SymbolRow, String)> = added
        .into_values()
        .map(|(s, edge)| (ranks.of(s.id), s, edge))
        .filter(|(r, _, _)| *r > 0.0)
        .collect();
    extra.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.path.cmp(&b.1.path))
            .then(a.1.start_line.cmp(&b.1.start_line))
    });
    extra.truncate(most);
    extra
}

/// How search scores and graph ranks combine.
struct Blend {
    search_weight: f64,
    best_search: f64,
    best_rank: f64,
    /// A task keeps the search's scores and order.
    task: bool,
}

impl Blend {
    /// Scores a search hit whose symbol has graph rank `rank`.
    fn hit(&self, hit: &mut AskHit, rank: f64) {
        hit.graph_score = round4(norm(rank, self.best_rank));
        if !self.task {
            let w = self.search_weight;
            hit.score = round4(
                w * norm(hit.search_score.unwrap_or(0.0), self.best_search)
                    + (1.0 - w) * hit.graph_score,
            );
        }
    }

    /// The score of a symbol the graph added: after every hit of a task
    /// (`floor`: the lowest hit score), blended with them otherwise.
    fn added(&self, graph_score: f64, floor: f64) -> f64 {
        let graph_part = (1.0 - self.search_weight) * graph_score;
        if self.task {
            round4(floor.min(1.0) * graph_part)
        } else {
            round4(graph_part)
        }
    }
}

/// A symbol the graph added, as a hit found through `edge`.
fn graph_hit(
    index: &Index,
    s: SymbolRow,
    edge: String,
    score: f64,
    graph_score: f64,
    opts: &AskOptions,
) -> lode_core::Result<AskHit> {
    let snippet = read_lines(&index.location.root, &s.path, s.start_line, s.end_line)
        .unwrap_or_default()
        .iter()
        .take(opts.snippet_lines)
        .map(|l| clip(l, 200))
        .collect::<Vec<_>>()
        .join("\n");
    Ok(AskHit {
        language: index.file(&s.path)?.map_or(Language::Text, |f| f.lang),
        start_line: s.start_line,
        end_line: s.end_line,
        score,
        search_score: None,
        graph_score,
        kind: s.kind.as_str().into(),
        container: s.container,
        symbol: Some(s.name),
        path: s.path,
        snippet,
        source: "graph",
        edge: Some(edge),
    })
}

fn norm(x: f64, best: f64) -> f64 {
    if best > 0.0 { x / best } else { 0.0 }
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}
