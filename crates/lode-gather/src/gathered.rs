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
    pub path: String,
    pub start_line: u32,
    pub end_line: u32,
    pub kind: SymbolKind,
    pub name: String,
    pub container: Option<String>,
    /// `called by seed parse_config`.
    pub edge: String,
    pub relation: Relation,
    pub from: String,
    pub from_seed: bool,
    pub resolution: Resolution,
    pub hop: usize,
    pub round: usize,
    /// `shown`, `in_results` (the body is above), `changed` (the file no
    /// longer matches the index), `no_budget`.
    pub body_state: &'static str,
    pub body: String,
    /// Lines of the body left out for the budget.
    pub omitted_lines: usize,
    pub tokens: usize,
}

/// What one round did: counts and timings only (the trace and the requests
/// are never recorded).
#[derive(Clone, Debug, Serialize)]
pub struct RoundLog {
    pub round: usize,
    pub frontier: usize,
    pub kept: usize,
    pub expanded: usize,
    /// `model`, `cache`, `deterministic` (the model is), or `fallback`.
    pub source: &'static str,
    pub fallback: Option<&'static str>,
    pub detail: Option<String>,
    pub ms: f64,
}

/// The outcome of a gather: the related code, or why there is none.
#[derive(Clone, Debug, Serialize)]
pub struct Gathered {
    /// The walk ran (it may still have found nothing).
    pub ran: bool,
    /// Why it did not run: the query's shape, or the index state.
    pub skipped: Option<String>,
    pub model: String,
    pub rounds: usize,
    /// Frontier nodes shown to the model, all rounds.
    pub considered: usize,
    pub nodes: Vec<KeptNode>,
    /// One reason per round that fell back to the deterministic order.
    pub fallback: Vec<&'static str>,
    /// Why the walk ended: `model`, `max_rounds`, `max_nodes`, `budget`,
    /// `deadline`, `no_neighbours`, `nothing_to_expand`, `no_seeds`, or an index error.
    pub stopped: String,
    /// The seeds, as `name path:line`.
    pub seeds: Vec<String>,
    pub tokens: usize,
    pub max_tokens: usize,
    pub trace_chars: usize,
    pub elapsed_ms: f64,
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
