//! What a gather returns: the kept nodes with their bodies, the per-round
//! log, and the counts the footer shows.

use lode_core::SymbolKind;
use lode_graph::Resolution;
use serde::Serialize;

use crate::decide::FrontierNode;
use crate::graph::Relation;
use crate::text::{cut_to_budget, read_lines};

/// A symbol the walk kept, with its body cut to the budget.
#[derive(Clone, Debug, Serialize)]
pub struct KeptNode {
    /// The symbol's file, relative to the repository root.
    pub path: String,
    /// The symbol's first line as indexed, 1-based.
    pub start_line: u32,
    /// Its last line, 1-based and inclusive.
    pub end_line: u32,
    /// What the symbol is.
    pub kind: SymbolKind,
    /// The symbol's name, without its container.
    pub name: String,
    /// Its container as extracted (`impl Config`, `class Router`).
    pub container: Option<String>,
    /// `called by seed parse_config`.
    pub edge: String,
    /// `callee`: `from` calls this node; `caller`: this node calls `from`.
    pub relation: Relation,
    /// The name of the node it was reached from.
    pub from: String,
    /// `from` is a seed (a top hit's symbol).
    pub from_seed: bool,
    /// How surely the linking call was bound; `name` may be wrong.
    pub resolution: Resolution,
    /// Calls from the nearest seed (1 = a direct neighbour).
    pub hop: usize,
    /// The round that kept it, 1-based.
    pub round: usize,
    /// `shown`, `in_results` (the body is above), `changed` (the file no
    /// longer matches the index), `no_budget`.
    pub body_state: &'static str,
    /// The lines shown, each ending in a newline; empty unless `body_state`
    /// is `shown`.
    pub body: String,
    /// Lines of the body left out for the budget.
    pub omitted_lines: usize,
    /// Estimated tokens of `body` (characters / 4, plus one per line).
    pub tokens: usize,
}

/// What one round did: counts and timings only (the trace and the requests
/// are never recorded).
#[derive(Clone, Debug, Serialize)]
pub struct RoundLog {
    /// Which round, 1-based.
    pub round: usize,
    /// Nodes the model was shown.
    pub frontier: usize,
    /// Nodes kept this round (fewer than asked once `max_nodes` is reached).
    pub kept: usize,
    /// Nodes whose callers and callees make the next frontier.
    pub expanded: usize,
    /// `model`, `cache`, `deterministic` (the model is), or `fallback`.
    pub source: &'static str,
    /// Why the model's answer was not used ([`ModelError::kind`](crate::ModelError::kind)).
    pub fallback: Option<&'static str>,
    /// The failure's one-line cause (≤ 160 characters): a status, a parse
    /// position, ids; never the request or the reply.
    pub detail: Option<String>,
    /// Wall time of the round, in milliseconds.
    pub ms: f64,
}

/// The outcome of a gather: the related code, or why there is none.
#[derive(Clone, Debug, Serialize)]
pub struct Gathered {
    /// The walk ran (it may still have found nothing).
    pub ran: bool,
    /// Why it did not run: the query's shape, or the index state.
    pub skipped: Option<String>,
    /// The decision model's name (`deterministic`, `endpoint`).
    pub model: String,
    /// Rounds that had a frontier to decide on.
    pub rounds: usize,
    /// Frontier nodes shown to the model, all rounds.
    pub considered: usize,
    /// The kept nodes, in the order kept.
    pub nodes: Vec<KeptNode>,
    /// One reason per round that fell back to the deterministic order.
    pub fallback: Vec<&'static str>,
    /// Why the walk ended: `model`, `max_rounds`, `max_nodes`, `budget`,
    /// `deadline`, `no_neighbours`, `nothing_to_expand`, `no_seeds`, or an index error.
    pub stopped: String,
    /// The seeds, as `name path:line`.
    pub seeds: Vec<String>,
    /// Estimated tokens of all bodies shown; never over `max_tokens`.
    pub tokens: usize,
    /// The token budget this gather had (the input's, else the limits').
    pub max_tokens: usize,
    /// Characters of the trace the model saw, after the cap.
    pub trace_chars: usize,
    /// Wall time of the whole gather, in milliseconds.
    pub elapsed_ms: f64,
    /// One entry per round.
    pub log: Vec<RoundLog>,
}

/// A kept node with its body read from disk and cut to the budget left (a
/// single body takes at most half the whole budget, so one large symbol
/// does not crowd out the rest).
pub(crate) fn keep(
    n: &FrontierNode,
    round: usize,
    root: &std::path::Path,
    budget_left: usize,
    max_tokens: usize,
) -> KeptNode {
    let mut k = KeptNode {
        path: n.path.clone(),
        start_line: n.line,
        end_line: n.end_line,
        kind: n.kind,
        name: n.name.clone(),
        container: n.container.clone(),
        edge: n.edge.text(),
        relation: n.edge.relation,
        from: n.edge.from.clone(),
        from_seed: n.edge.from_seed,
        resolution: n.edge.resolution,
        hop: n.hop,
        round,
        body_state: "shown",
        body: String::new(),
        omitted_lines: 0,
        tokens: 0,
    };
    if n.in_results {
        k.body_state = "in_results";
        return k;
    }
    // The index sees one committed state; the file may have changed since.
    let lines = read_lines(root, &n.path, n.line, n.end_line)
        .filter(|lines| lines.iter().any(|l| l.contains(n.name.as_str())));
    let Some(lines) = lines else {
        k.body_state = "changed";
        return k;
    };
    let cap = budget_left.min(max_tokens.div_ceil(2));
    let (body, omitted, tokens) = cut_to_budget(&lines, cap);
    k.body = body;
    k.omitted_lines = omitted;
    k.tokens = tokens;
    k
}
