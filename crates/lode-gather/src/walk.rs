//! The walk: seeds from the search, one hop of callers and callees per
//! round, a decision model choosing what to keep and expand, and the
//! fallbacks that keep a failing model from failing the search.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use lode_core::Config;
use lode_graph::{Resolution, Resolver};
use lode_index::{Index, SymbolRow};
use lode_search::{SearchHit, SearchResults};

use crate::cache::DecisionCache;
use crate::decide::{
    Decision, DecisionModel, Deterministic, EdgeInfo, FrontierNode, ModelError, Request,
};
use crate::endpoint::Endpoint;
use crate::gathered::{Gathered, RoundLog, keep};
use crate::graph::{GraphCache, StateKey, enclosing_symbol};
use crate::shape::QueryShape;
use crate::text::{cap_trace, clip};

/// Seeds: the symbols of this many top code hits.
pub const SEEDS: usize = 5;
/// Neighbours one node contributes to a frontier at most (callees first).
const PER_PARENT: usize = 24;
/// Nodes a model sees in one round at most.
const MAX_FRONTIER: usize = 40;

/// The walk's limits (`[gather]` in the user config).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Rounds at most, each one hop from the nodes expanded last.
    pub max_rounds: usize,
    /// Nodes kept at most, all rounds together.
    pub max_nodes: usize,
    /// For the whole walk, model calls included.
    pub deadline: Duration,
    /// Budget of the bodies shown, in estimated tokens (characters / 4).
    pub max_tokens: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::from_config(&Config::default())
    }
}

impl Limits {
    /// The limits of `c`'s `[gather]`, defaults for what it leaves unset.
    pub fn from_config(c: &Config) -> Limits {
        Limits {
            max_rounds: c.gather.max_rounds(),
            max_nodes: c.gather.max_nodes(),
            deadline: Duration::from_millis(c.gather.deadline_ms()),
            max_tokens: c.gather.max_tokens(),
        }
    }
}

/// Whether the graph can be walked. The CLI refreshes the index first, so
/// its graph is ready; a server answering while an index is built is not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GraphState {
    /// The graph matches the index: the walk may run.
    Ready,
    /// Not ready: the index state, said in one line.
    NotReady(String),
}

/// One gather call.
#[derive(Clone, Debug)]
pub struct GatherInput<'a> {
    /// The search query; its [`QueryShape`] decides whether the walk runs.
    pub query: &'a str,
    /// The text that led to the search (an agent's recent turns); capped.
    pub trace: Option<&'a str>,
    /// Overrides [`Limits::max_tokens`].
    pub max_tokens: Option<usize>,
    /// Whether the graph can be walked; when not, the gather is skipped and says why.
    pub graph: GraphState,
}

impl<'a> GatherInput<'a> {
    /// A call for `query` with no trace, the limits' token budget and a ready graph.
    pub fn new(query: &'a str) -> GatherInput<'a> {
        GatherInput {
            query,
            trace: None,
            max_tokens: None,
            graph: GraphState::Ready,
        }
    }
}

/// A node the walk knows: its symbol, distance and seed.
#[derive(Clone)]
struct Entry {
    sym: SymbolRow,
    hop: usize,
    seed: usize,
}

/// Gathers related code. Holds the decision model, the limits and the
/// caches; `Send + Sync`, so a server keeps one for all calls.
pub struct Gatherer {
    model: Arc<dyn DecisionModel>,
    limits: Limits,
    decisions: DecisionCache,
    graphs: Arc<GraphCache>,
}

impl Gatherer {
    /// A gatherer with empty caches of its own.
    pub fn new(model: Arc<dyn DecisionModel>, limits: Limits) -> Gatherer {
        Gatherer {
            model,
            limits,
            decisions: DecisionCache::default(),
            graphs: Arc::new(GraphCache::new()),
        }
    }

    /// The model and limits of `config`'s `[gather]`; a configuration that
    /// cannot be used falls back to the deterministic model with a note.
    pub fn from_config(config: &Config) -> (Gatherer, Option<String>) {
        let limits = Limits::from_config(config);
        let g = &config.gather;
        if !g.uses_endpoint() {
            return (Gatherer::new(Arc::new(Deterministic), limits), None);
        }
        let built = match &g.endpoint {
            None => Err("gather.decision = \"endpoint\" needs gather.endpoint".to_string()),
            // A private or metadata address is refused unless the user allows it.
            Some(url) => {
                lode_core::endpoint::check_endpoint(url, g.allow_private_endpoints.unwrap_or(false))
                    .and_then(|()| Endpoint::new(url, g.model.as_deref(), g.api_key_env.as_deref()))
            }
        };
        match built {
            Ok(e) => (Gatherer::new(Arc::new(e), limits), None),
            Err(why) => (
                Gatherer::new(Arc::new(Deterministic), limits),
                Some(format!("{why}; gathering with the deterministic model")),
            ),
        }
    }

    /// Shares a graph cache (with [`crate::ask()`], or between gatherers).
    pub fn with_graph_cache(mut self, graphs: Arc<GraphCache>) -> Gatherer {
        self.graphs = graphs;
        self
    }

    /// The graph cache, to share with [`crate::ask()`].
    pub fn graph_cache(&self) -> &Arc<GraphCache> {
        &self.graphs
    }

    /// The limits every walk runs under.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The decision model's name, as the footer shows it.
    pub fn model_name(&self) -> &str {
        self.model.name()
    }

    /// Related code for `results`, the answer to `input.query`. Never
    /// fails: an index error ends the walk and is named in `stopped`.
    pub fn gather(&self, index: &Index, results: &SearchResults, input: &GatherInput) -> Gathered {
        let start = Instant::now();
        let trace = cap_trace(input.trace.unwrap_or(""));
        let mut g = Gathered {
            ran: false,
            skipped: None,
            model: self.model.name().to_string(),
            rounds: 0,
            considered: 0,
            nodes: Vec::new(),
            fallback: Vec::new(),
            stopped: String::new(),
            seeds: Vec::new(),
            tokens: 0,
            max_tokens: input.max_tokens.unwrap_or(self.limits.max_tokens),
            trace_chars: trace.chars().count(),
            elapsed_ms: 0.0,
            log: Vec::new(),
        };
        let shape = QueryShape::of(input.query);
        if !shape.walks() {
            g.skipped = Some(format!(
                "{} query: related code is gathered for natural-language queries",
                shape.as_str()
            ));
        } else if let GraphState::NotReady(state) = &input.graph {
            g.skipped = Some(format!("graph not ready: {state}"));
        } else {
            g.ran = true;
            if let Err(e) = self.walk(index, results, input.query, trace, start, &mut g) {
                g.stopped = format!("index error: {e}");
            }
        }
        g.elapsed_ms = start.elapsed().as_secs_f64() * 1000.0;
        g
    }

    fn walk(
        &self,
        index: &Index,
        results: &SearchResults,
        query: &str,
        trace: &str,
        start: Instant,
        g: &mut Gathered,
    ) -> lode_core::Result<()> {
        let deadline = start + self.limits.deadline;
        let key = StateKey::of(index)?;
        let resolver = Resolver::new(index)?;
        let root = index.location.root.clone();

        let mut seen: HashSet<i64> = HashSet::new();
        let seeds = seed_entries(index, results, &mut seen, g)?;
        if seeds.is_empty() {
            g.stopped = "no_seeds".into();
            return Ok(());
        }

        let max_rounds = self.limits.max_rounds;
        let max_nodes = self.limits.max_nodes;
        let mut budget_left = g.max_tokens;
        let mut expand = seeds;
        let mut next_id: u32 = 1;
        for round in 1..=max_rounds {
            let room = max_nodes.saturating_sub(g.nodes.len());
            if let Some(why) = spent(deadline, room) {
                g.stopped = why.into();
                break;
            }
            let round_start = Instant::now();
            let (frontier, entries) = self.frontier(
                index,
                &key,
                &resolver,
                &expand,
                &results.hits,
                &mut seen,
                &mut next_id,
            )?;
            if frontier.is_empty() {
                g.stopped = "no_neighbours".into();
                break;
            }
            g.rounds = round;
            g.considered += frontier.len();
            let request = Arc::new(Request {
                trace: trace.to_string(),
                query: query.to_string(),
                round,
                max_rounds,
                quota: room.div_ceil(max_rounds - round + 1),
                frontier,
            });
            let (decision, source, failure) = self.decide(&request, deadline);
            let fallback = failure.as_ref().map(ModelError::kind);
            if let Some(kind) = fallback {
                g.fallback.push(kind);
            }

            let kept = keep_decided(&decision, &request, &root, max_nodes, &mut budget_left, g);
            let expanded: Vec<Entry> = dedup(&decision.expand)
                .into_iter()
                .filter_map(|id| entries.get(&id).cloned())
                .collect();
            g.log.push(RoundLog {
                round,
                frontier: request.frontier.len(),
                kept,
                expanded: expanded.len(),
                source,
                fallback,
                detail: failure.as_ref().map(|f| clip(&f.detail(), 160)),
                ms: round_start.elapsed().as_secs_f64() * 1000.0,
            });
            let stop = stop_reason(
                &decision,
                failure.as_ref(),
                g,
                max_nodes,
                budget_left,
                &expanded,
            );
            if !stop.is_empty() {
                g.stopped = stop.into();
                break;
            }
            expand = expanded;
        }
        if g.stopped.is_empty() {
            g.stopped = "max_rounds".into();
        }
        Ok(())
    }

    /// The next frontier: unseen neighbours of `expand`, at most
    /// [`PER_PARENT`] each and [`MAX_FRONTIER`] in all (deterministic order
    /// decides the cut; nodes cut stay unseen, reachable later).
    #[allow(clippy::too_many_arguments)]
    fn frontier(
        &self,
        index: &Index,
        key: &StateKey,
        resolver: &Resolver,
        expand: &[Entry],
        hits: &[SearchHit],
        seen: &mut HashSet<i64>,
        next_id: &mut u32,
    ) -> lode_core::Result<(Vec<FrontierNode>, HashMap<u32, Entry>)> {
        let mut nodes: Vec<FrontierNode> = Vec::new();
        let mut entries: HashMap<u32, Entry> = HashMap::new();
        for parent in expand {
            let list = self.graphs.neighbours(key, resolver, &parent.sym)?;
            // Callees, then callers; resolved edges before name matches.
            let mut picked: Vec<_> = list
                .iter()
                .filter(|n| !seen.contains(&n.symbol.id))
                .collect();
            picked.sort_by_key(|n| (n.relation, n.resolution == Resolution::Name));
            for n in picked.into_iter().take(PER_PARENT) {
                if !seen.insert(n.symbol.id) {
                    continue;
                }
                let s = &n.symbol;
                let id = *next_id;
                *next_id += 1;
                let (score, in_results) = hit_score(hits, s);
                nodes.push(FrontierNode {
                    id,
                    name: s.name.clone(),
                    kind: s.kind,
                    container: s.container.clone(),
                    path: s.path.clone(),
                    line: s.start_line,
                    end_line: s.end_line,
                    signature: clip(s.signature.lines().next().unwrap_or("").trim(), 200),
                    doc: s
                        .doc
                        .as_deref()
                        .unwrap_or("")
                        .lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty())
                        .take(3)
                        .map(|l| clip(l, 200))
                        .collect(),
                    edge: EdgeInfo {
                        relation: n.relation,
                        from: parent.sym.name.clone(),
                        from_seed: parent.hop == 0,
                        resolution: n.resolution,
                    },
                    hop: parent.hop + 1,
                    seed: parent.seed,
                    score,
                    refs: self.graphs.references(key, index, &s.name)?,
                    in_results,
                });
                entries.insert(
                    id,
                    Entry {
                        sym: s.clone(),
                        hop: parent.hop + 1,
                        seed: parent.seed,
                    },
                );
            }
        }
        if nodes.len() > MAX_FRONTIER {
            let order = Deterministic::order(&nodes);
            let mut keep = vec![false; nodes.len()];
            for &i in order.iter().take(MAX_FRONTIER) {
                keep[i] = true;
            }
            let mut i = 0;
            nodes.retain(|n| {
                let k = keep[i];
                i += 1;
                if !k && let Some(e) = entries.remove(&n.id) {
                    seen.remove(&e.sym.id);
                }
                k
            });
        }
        Ok((nodes, entries))
    }

    /// One round's decision: cached, from the model within the deadline,
    /// or — when the model times out, fails, or answers badly — the
    /// deterministic order. Returns the decision, its source and the failure.
    fn decide(
        &self,
        request: &Arc<Request>,
        deadline: Instant,
    ) -> (Decision, &'static str, Option<ModelError>) {
        if self.model.is_local() {
            return match self.model.decide(request, Duration::ZERO) {
                Ok(d) if d.unknown_ids(&request.frontier).is_empty() => (d, "deterministic", None),
                Ok(d) => (
                    Deterministic::decision(request),
                    "fallback",
                    Some(ModelError::UnknownIds(d.unknown_ids(&request.frontier))),
                ),
                Err(e) => (Deterministic::decision(request), "fallback", Some(e)),
            };
        }
        let key = DecisionCache::key(&self.model.cache_identity(), request);
        if let Some(d) = self.decisions.get(&key) {
            return (d, "cache", None);
        }
        let answer = self.call_model(request, deadline).and_then(|d| {
            let bad = d.unknown_ids(&request.frontier);
            if bad.is_empty() {
                Ok(d)
            } else {
                Err(ModelError::UnknownIds(bad))
            }
        });
        match answer {
            Ok(d) => {
                self.decisions.put(key, d.clone());
                (d, "model", None)
            }
            Err(e) => (Deterministic::decision(request), "fallback", Some(e)),
        }
    }

    /// Runs the model on a helper thread and waits at most until `deadline`.
    fn call_model(
        &self,
        request: &Arc<Request>,
        deadline: Instant,
    ) -> Result<Decision, ModelError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ModelError::Timeout);
        }
        let (tx, rx) = mpsc::channel();
        let model = self.model.clone();
        let req = request.clone();
        std::thread::Builder::new()
            .name("lode-gather-model".into())
            .spawn(move || {
                let _ = tx.send(model.decide(&req, left));
            })
            .map_err(|e| ModelError::Failed(format!("cannot start the model thread: {e}")))?;
        match rx.recv_timeout(left) {
            Ok(answer) => answer,
            Err(mpsc::RecvTimeoutError::Timeout) => Err(ModelError::Timeout),
            Err(mpsc::RecvTimeoutError::Disconnected) => Err(ModelError::Failed(
                "the model thread ended without an answer".into(),
            )),
        }
    }
}

/// Ids once each, in order.
fn dedup(ids: &[u32]) -> Vec<u32> {
    let mut seen = HashSet::new();
    ids.iter().copied().filter(|id| seen.insert(*id)).collect()
}

/// The best score of a search hit inside `s`, and whether one is.
fn hit_score(hits: &[SearchHit], s: &SymbolRow) -> (f64, bool) {
    let inside = hits.iter().filter(|h| {
        h.path == s.path
            && h.start_line <= s.end_line
            && s.start_line <= h.end_line
            && h.symbol.as_deref() == Some(s.name.as_str())
    });
    inside.fold((0.0, false), |(best, _), h| (best.max(h.score), true))
}

/// The walk's seeds: the enclosing symbols of the first [`SEEDS`] code hits
/// with a symbol, each once (named in `g.seeds`).
fn seed_entries(
    index: &Index,
    results: &SearchResults,
    seen: &mut HashSet<i64>,
    g: &mut Gathered,
) -> lode_core::Result<Vec<Entry>> {
    let mut seeds: Vec<Entry> = Vec::new();
    let code_hits = results
        .hits
        .iter()
        .filter(|h| h.symbol.is_some() && h.language.is_code());
    for hit in code_hits.take(SEEDS) {
        if let Some(sym) = enclosing_symbol(index, hit)?
            && seen.insert(sym.id)
        {
            g.seeds
                .push(format!("{} {}:{}", sym.name, sym.path, sym.start_line));
            seeds.push(Entry {
                seed: seeds.len(),
                hop: 0,
                sym,
            });
        }
    }
    Ok(seeds)
}

/// Adds the nodes `decision` keeps from `request`'s frontier to `g`, while
/// there is room, each body within what is left of the budget. Returns how
/// many were kept.
fn keep_decided(
    decision: &Decision,
    request: &Request,
    root: &std::path::Path,
    max_nodes: usize,
    budget_left: &mut usize,
    g: &mut Gathered,
) -> usize {
    let by_id: HashMap<u32, &FrontierNode> = request.frontier.iter().map(|n| (n.id, n)).collect();
    let mut kept = 0;
    for id in dedup(&decision.keep) {
        if g.nodes.len() >= max_nodes {
            break;
        }
        let node = by_id[&id];
        let mut k = keep(node, request.round, root, *budget_left, g.max_tokens);
        *budget_left -= k.tokens.min(*budget_left);
        if k.body_state == "shown" && k.body.is_empty() {
            k.body_state = "no_budget";
        }
        g.tokens += k.tokens;
        g.nodes.push(k);
        kept += 1;
    }
    kept
}

/// Why the walk ends before a round: the deadline passed, or no room is left.
fn spent(deadline: Instant, room: usize) -> Option<&'static str> {
    if Instant::now() >= deadline {
        Some("deadline")
    } else if room == 0 {
        Some("max_nodes")
    } else {
        None
    }
}

/// Why the walk ends after this round, or `""` to go on.
fn stop_reason(
    decision: &Decision,
    failure: Option<&ModelError>,
    g: &Gathered,
    max_nodes: usize,
    budget_left: usize,
    expanded: &[Entry],
) -> &'static str {
    if decision.stop {
        "model"
    } else if failure == Some(&ModelError::Timeout) {
        // The deadline is spent: the round was answered, the walk ends.
        "deadline"
    } else if g.nodes.len() >= max_nodes {
        "max_nodes"
    } else if budget_left == 0 {
        "budget"
    } else if expanded.is_empty() {
        "nothing_to_expand"
    } else {
        ""
    }
}
