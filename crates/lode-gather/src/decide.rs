//! The decision model: what it sees each round ([`Request`]), what it
//! answers ([`Decision`]), and the deterministic backend.

use std::cmp::Reverse;
use std::collections::HashSet;
use std::time::Duration;

use lode_core::SymbolKind;
use lode_graph::Resolution;
use serde::{Deserialize, Deserializer, Serialize};

use crate::graph::Relation;

/// How a frontier node is linked to the walk: `called by seed parse_config`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EdgeInfo {
    /// `Callee`: `from` calls the node; `Caller`: the node calls `from`.
    pub relation: Relation,
    /// The name of the node it was found from.
    pub from: String,
    /// `from` is a seed (hop 0), which the text says as `seed`.
    pub from_seed: bool,
    /// How surely the call was bound; `Name` is a guess, `(name match)` in the text.
    pub resolution: Resolution,
}

impl EdgeInfo {
    /// `called by seed resolve_rerank`, `calls load_config (name match)`.
    pub fn text(&self) -> String {
        let verb = match self.relation {
            Relation::Callee => "called by",
            Relation::Caller => "calls",
        };
        let seed = if self.from_seed { "seed " } else { "" };
        let guess = if self.resolution == Resolution::Name {
            " (name match)"
        } else {
            ""
        };
        format!("{verb} {seed}{}{guess}", self.from)
    }
}

/// One candidate a decision model sees.
#[derive(Clone, Debug, Serialize)]
pub struct FrontierNode {
    /// Unique within one walk.
    pub id: u32,
    /// The symbol's name, without its container.
    pub name: String,
    /// What the symbol is.
    pub kind: SymbolKind,
    /// Its container as extracted (`impl Config`, `class Router`).
    pub container: Option<String>,
    /// Its file, relative to the repository root.
    pub path: String,
    /// Its first line, 1-based.
    pub line: u32,
    /// Its last line, 1-based and inclusive.
    pub end_line: u32,
    /// First line of the signature.
    pub signature: String,
    /// Up to 3 lines of the doc comment.
    pub doc: Vec<String>,
    /// How the walk reached it.
    pub edge: EdgeInfo,
    /// Calls from the nearest seed (1 = a direct neighbour).
    pub hop: usize,
    /// Rank of the seed it descends from (0 = the best hit's symbol).
    pub seed: usize,
    /// The best search score of a hit inside it (0 when none).
    pub score: f64,
    /// Call sites that name it (centrality without resolution).
    pub refs: usize,
    /// It is one of the search results already shown.
    pub in_results: bool,
}

/// What a decision model decides on, one round of the walk.
#[derive(Clone, Debug, Serialize)]
pub struct Request {
    /// The text that led to the search (≤ 6,000 characters, newest kept).
    pub trace: String,
    /// The search query.
    pub query: String,
    /// 1-based.
    pub round: usize,
    /// Rounds the walk may take in all.
    pub max_rounds: usize,
    /// Keep at most this many this round.
    pub quota: usize,
    /// The candidates (at most 40), ids unique within the walk.
    pub frontier: Vec<FrontierNode>,
}

/// A model's answer for one round.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Ids to show, best first.
    #[serde(deserialize_with = "ids")]
    pub keep: Vec<u32>,
    /// Ids whose callers and callees form the next frontier.
    #[serde(default, deserialize_with = "ids")]
    pub expand: Vec<u32>,
    /// Nothing more is needed.
    #[serde(default)]
    pub stop: bool,
}

/// Ids as numbers or numeric strings (`3`, `"3"`, `"n3"`): models vary.
fn ids<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u32>, D::Error> {
    use serde::de::Error;
    let raw: Vec<serde_json::Value> = Vec::deserialize(d)?;
    raw.into_iter()
        .map(|v| match &v {
            serde_json::Value::Number(n) => n.as_u64().and_then(|n| u32::try_from(n).ok()),
            serde_json::Value::String(s) => s.trim().trim_start_matches(['n', '#']).parse().ok(),
            _ => None,
        })
        .map(|id| id.ok_or_else(|| D::Error::custom("an id is not a number")))
        .collect()
}

impl Decision {
    /// Ids that are not in the frontier, if any.
    pub fn unknown_ids(&self, frontier: &[FrontierNode]) -> Vec<u32> {
        let known: HashSet<u32> = frontier.iter().map(|n| n.id).collect();
        let mut bad: Vec<u32> = self
            .keep
            .iter()
            .chain(&self.expand)
            .copied()
            .filter(|id| !known.contains(id))
            .collect();
        bad.sort_unstable();
        bad.dedup();
        bad
    }
}

/// Why a model gave no usable decision; the round then uses the
/// deterministic order, and the footer names the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelError {
    /// No answer before the deadline.
    Timeout,
    /// The call failed (connection, HTTP status, configuration).
    Failed(String),
    /// An answer that is not the JSON asked for.
    InvalidJson(String),
    /// An answer naming ids the frontier does not have.
    UnknownIds(Vec<u32>),
}

impl ModelError {
    /// The short name the footer shows (`fallback=timeout`).
    pub fn kind(&self) -> &'static str {
        match self {
            ModelError::Timeout => "timeout",
            ModelError::Failed(_) => "error",
            ModelError::InvalidJson(_) => "invalid_json",
            ModelError::UnknownIds(_) => "unknown_ids",
        }
    }

    /// A one-line cause: a status, a parse position, ids — never text the
    /// model was sent or answered.
    pub fn detail(&self) -> String {
        match self {
            ModelError::Timeout => "no answer before the deadline".into(),
            ModelError::Failed(s) | ModelError::InvalidJson(s) => s.clone(),
            ModelError::UnknownIds(ids) => format!("ids not in the frontier: {ids:?}"),
        }
    }
}

/// Chooses, each round, which frontier nodes to keep and which to expand.
///
/// A model that does I/O is run on a helper thread that the walk stops
/// waiting for at the deadline, so an implementation cannot hold a search
/// past it; `timeout` is the time left, for the implementation's own
/// timeouts (so the helper thread ends soon after too).
pub trait DecisionModel: Send + Sync {
    /// The name the footer shows (`model=deterministic`).
    fn name(&self) -> &str;
    /// A pure computation, run on the calling thread without a deadline.
    fn is_local(&self) -> bool {
        false
    }
    /// Identifies the backend and its settings in decision-cache keys.
    fn cache_identity(&self) -> String {
        self.name().to_string()
    }
    /// One round's decision; `timeout` is the time left before the walk's
    /// deadline (zero for a local model, which is not timed).
    fn decide(&self, request: &Request, timeout: Duration) -> Result<Decision, ModelError>;
}

/// Seed order, then hop distance (a name-only edge after resolved ones at
/// the same distance: it may be wrong), then search score, then centrality;
/// keeps the first `quota` nodes and expands them.
pub struct Deterministic;

impl Deterministic {
    /// The frontier in deterministic order (indices into `frontier`).
    pub fn order(frontier: &[FrontierNode]) -> Vec<usize> {
        let mut order: Vec<usize> = (0..frontier.len()).collect();
        order.sort_by(|&a, &b| {
            let (x, y) = (&frontier[a], &frontier[b]);
            let key = |n: &FrontierNode| (n.seed, n.hop, n.edge.resolution == Resolution::Name);
            key(x)
                .cmp(&key(y))
                .then(y.score.total_cmp(&x.score))
                .then(Reverse(x.refs).cmp(&Reverse(y.refs)))
                .then_with(|| x.path.cmp(&y.path))
                .then(x.line.cmp(&y.line))
                .then(x.id.cmp(&y.id))
        });
        order
    }

    /// The first `quota` nodes in [`order`](Self::order), kept and expanded;
    /// it never asks to stop.
    pub fn decision(request: &Request) -> Decision {
        let keep: Vec<u32> = Deterministic::order(&request.frontier)
            .into_iter()
            .take(request.quota)
            .map(|i| request.frontier[i].id)
            .collect();
        Decision {
            expand: keep.clone(),
            keep,
            stop: false,
        }
    }
}

impl DecisionModel for Deterministic {
    fn name(&self) -> &str {
        "deterministic"
    }
    fn is_local(&self) -> bool {
        true
    }
    fn decide(&self, request: &Request, _timeout: Duration) -> Result<Decision, ModelError> {
        Ok(Deterministic::decision(request))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(
        id: u32,
        seed: usize,
        hop: usize,
        score: f64,
        refs: usize,
        res: Resolution,
    ) -> FrontierNode {
        FrontierNode {
            id,
            name: format!("f{id}"),
            kind: SymbolKind::Function,
            container: None,
            path: "a.py".into(),
            line: id,
            end_line: id,
            signature: String::new(),
            doc: Vec::new(),
            edge: EdgeInfo {
                relation: Relation::Callee,
                from: "s".into(),
                from_seed: true,
                resolution: res,
            },
            hop,
            seed,
            score,
            refs,
            in_results: false,
        }
    }

    #[test]
    fn deterministic_order_is_seed_hop_score_centrality() {
        let f = vec![
            node(1, 1, 1, 9.0, 9, Resolution::Import),
            node(2, 0, 2, 9.0, 9, Resolution::Import),
            node(3, 0, 1, 0.0, 1, Resolution::Import),
            node(4, 0, 1, 0.0, 5, Resolution::Import),
            node(5, 0, 1, 2.0, 0, Resolution::Import),
            node(6, 0, 1, 9.0, 9, Resolution::Name),
        ];
        let ids: Vec<u32> = Deterministic::order(&f).iter().map(|&i| f[i].id).collect();
        assert_eq!(ids, [5, 4, 3, 6, 2, 1]);
        let req = Request {
            trace: String::new(),
            query: "q".into(),
            round: 1,
            max_rounds: 3,
            quota: 2,
            frontier: f,
        };
        let d = Deterministic::decision(&req);
        assert_eq!(d.keep, [5, 4]);
        assert_eq!(d.expand, d.keep);
    }

    #[test]
    fn decisions_parse_leniently_and_ids_are_checked() {
        let d: Decision =
            serde_json::from_str(r#"{"keep": [1, "2", "n3"], "stop": true}"#).unwrap();
        assert_eq!(d.keep, [1, 2, 3]);
        assert!(d.expand.is_empty() && d.stop);
        assert!(serde_json::from_str::<Decision>(r#"{"expand": [1]}"#).is_err());
        assert!(serde_json::from_str::<Decision>(r#"{"keep": ["x"]}"#).is_err());
        let f = vec![node(1, 0, 1, 0.0, 0, Resolution::Import)];
        assert_eq!(d.unknown_ids(&f), [2, 3]);
    }

    #[test]
    fn edges_read_as_text() {
        let mut e = EdgeInfo {
            relation: Relation::Callee,
            from: "parse_config".into(),
            from_seed: true,
            resolution: Resolution::Import,
        };
        assert_eq!(e.text(), "called by seed parse_config");
        e.relation = Relation::Caller;
        e.from_seed = false;
        e.resolution = Resolution::Name;
        assert_eq!(e.text(), "calls parse_config (name match)");
    }
}
