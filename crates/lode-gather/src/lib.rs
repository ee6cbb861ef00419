//! Related code for a search: what a lexical or semantic hit calls and is
//! called by, which pure text search misses.
//!
//! Two entry points, both taking the [`SearchResults`](lode_search::SearchResults)
//! of [`lode_search::search`] and never failing because of the graph:
//!
//! - [`Gatherer::gather`] (`lode gather`) walks the call graph from the
//!   symbols of the top code hits (the seeds), one hop of callers and
//!   callees per round. Each round a [`DecisionModel`] sees a [`Request`] —
//!   the trace that led to the search (≤ 6,000 characters, newest kept), the
//!   query and the frontier ([`FrontierNode`]s with an id, kind, `path:line`,
//!   signature, doc lines and the edge that reached them) — and answers a
//!   [`Decision`]: which ids to keep, which to expand, whether to stop. The
//!   answer is a [`Gathered`]: the kept nodes with bodies cut to a token
//!   budget, and counts for the footer. Backends: [`Deterministic`] (seed
//!   order, hop distance, search score, centrality) and [`Endpoint`] (an
//!   OpenAI-compatible chat server, reached with `lode_http::JsonClient`). A model that times out, fails, answers
//!   other than JSON or names unknown ids costs one round its say: that
//!   round uses the deterministic order and the footer names the fallback.
//! - [`ask()`] (`lode ask`) re-ranks the hits by a blend of their search score
//!   and personalised PageRank over the whole call graph
//!   ([`lode_graph::SymbolGraph`]) seeded by the hits, and adds the
//!   best-ranked neighbours of hits that the search missed ([`AskResults`]).
//!
//! A [`Gatherer`] holds the model, the [`Limits`] and two caches: decisions
//! (ten minutes, keyed by a hash of trace, query and frontier —
//! [`DecisionCache`]) and the graph ([`GraphCache`]: neighbour lists and whole
//! graphs keyed by index database and generation). It is `Send + Sync`, so a
//! long-lived server keeps one and every call benefits; the CLI makes one
//! per process. Whether a query walks at all is [`QueryShape`]'s call:
//! identifiers and regexes do not.
//!
//! Privacy: the trace and the model requests are never logged; the
//! per-round [`RoundLog`] holds counts, timings and fallback reasons only.
//!
//! ```no_run
//! use std::sync::Arc;
//! use lode_core::Config;
//! use lode_gather::{Deterministic, GatherInput, Gatherer, Limits, render};
//! use lode_index::{IndexLocation, RefreshOptions, refresh};
//! use lode_search::{SearchOptions, search};
//!
//! let loc = IndexLocation::resolve(std::path::Path::new("."), None)?;
//! let (index, _) = refresh(&loc, &RefreshOptions::new(&Config::default()))?;
//! let query = "where are retry delays computed";
//! let results = search(&index, query, &SearchOptions::default())?;
//!
//! let gatherer = Gatherer::new(Arc::new(Deterministic), Limits::default());
//! let mut input = GatherInput::new(query);
//! input.trace = Some("the agent's recent turns…");
//! let gathered = gatherer.gather(&index, &results, &input);
//! print!("{}", render::gathered_text(&gathered));
//! # Ok::<(), lode_core::Error>(())
//! ```

#![deny(missing_docs)]

mod ask;
mod cache;
mod decide;
mod endpoint;
mod gathered;
mod graph;
pub mod render;
mod shape;
mod text;
mod walk;

pub use ask::{AskGraph, AskHit, AskOptions, AskResults, ask};
pub use cache::{DECISION_TTL, DecisionCache};
pub use decide::{
    Decision, DecisionModel, Deterministic, EdgeInfo, FrontierNode, ModelError, Request,
};
pub use endpoint::{
    Endpoint, MAX_REPLY_BYTES, completions_url, parse_decision, parse_reply, prompt,
};
pub use gathered::{Gathered, KeptNode, RoundLog};
pub use graph::{GraphCache, Neighbour, Relation, StateKey, enclosing_symbol, neighbours};
pub use shape::QueryShape;
pub use text::{TRACE_CHARS, cap_trace, estimate_tokens};
pub use walk::{GatherInput, Gatherer, GraphState, Limits, SEEDS};

#[cfg(test)]
mod tests {
    /// A server shares one gatherer and one graph cache across threads.
    #[test]
    fn the_long_lived_parts_are_send_and_sync() {
        fn shared<T: Send + Sync>() {}
        shared::<crate::Gatherer>();
        shared::<crate::GraphCache>();
        shared::<crate::DecisionCache>();
        shared::<crate::Endpoint>();
    }
}
