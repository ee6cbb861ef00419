//! `gather`: the search results, then related code along the call graph.

use std::sync::OnceLock;

use lode_gather::{GatherInput, Gathered, Gatherer, GraphState};
use lode_search::{SearchResults, render};
use serde_json::Value;

use super::{Arg, Call, Kind, LANG, QUERY, Scope, TOP_K, ToolDef};
use crate::answer::Items;
use crate::{Answer, ToolError};

const CONTEXT: Arg = Arg::new(
    "context",
    Kind::Text(Some(
        "The text that led to the search (its last 6,000 characters are used)",
    )),
);
const MAX_TOKENS: Arg = Arg::new(
    "max_tokens",
    Kind::Int {
        min: 100,
        max: 8000,
        description: "Budget for the related code (default 2,000)",
    },
);
const PATH: Arg = Arg::new("path", Kind::Path("Only results under this path"));

pub const TOOL: ToolDef = ToolDef {
    name: "gather",
    description: "Search, then the callers and callees of the best hits along the call \
                  graph, bodies cut to a token budget. Use when the hits alone are not \
                  enough; context is the text that led to the search. At most {cap} \
                  characters.",
    args: &[QUERY, CONTEXT, MAX_TOKENS, PATH, LANG, TOP_K],
    run,
};

/// One per process, so that its decision and graph caches serve every call.
static GATHERER: OnceLock<(Gatherer, Option<String>)> = OnceLock::new();

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let query = a.non_blank(&super::QUERY)?;
    // The trace may be long; only its tail is used (a longer argument is refused by Args).
    let context = a.string(&CONTEXT)?;
    let max_tokens = a.int(&MAX_TOKENS)?.map(|n| n as usize);
    let scope = Scope::of(&call, a.string(&PATH)?.as_deref())?;
    let opts = super::search_options(&a, scope.rel())?;
    let (gatherer, config_note) =
        GATHERER.get_or_init(|| Gatherer::from_config(call.repos.config()));
    let (((results, gathered), dense_notes), mut notes) = scope.query(&call, |index| {
        let results = lode_search::search(index, &query, &opts)?;
        // The query runs on the state the freshness check just settled: its graph is ready.
        let input = GatherInput {
            query: &query,
            trace: context.as_deref(),
            max_tokens,
            graph: GraphState::Ready,
        };
        let gathered = gatherer.gather(index, &results, &input);
        let notes = super::search_notes(index, &results);
        Ok(((results, gathered), notes))
    })?;
    // A partial or lexical-only dense side, as `search` says it.
    notes.extend(dense_notes);
    notes.extend(config_note.iter().cloned());
    if config_note.is_some() {
        lode_diagnostics::note_fallback("gather_config");
    }
    for cause in &gathered.fallback {
        lode_diagnostics::note_fallback(&format!("gather:{cause}"));
    }
    Ok(scope.answer(&call, Pack { results, gathered }, notes))
}

/// Items are the hits, then the related nodes; the related nodes are cut first.
#[derive(Clone)]
struct Pack {
    results: SearchResults,
    gathered: Gathered,
}

impl Items for Pack {
    const UNIT: &'static str = "hits or related symbols";

    fn len(&self) -> usize {
        self.results.hits.len() + self.gathered.nodes.len()
    }

    fn truncate(&mut self, n: usize) {
        let hits = n.min(self.results.hits.len());
        self.results.hits.truncate(hits);
        self.gathered.nodes.truncate(n - hits);
    }

    fn text(&self, _omitted: usize) -> String {
        let mut text = render::search_text(&self.results);
        text.push('\n');
        text.push_str(&lode_gather::render::gathered_text(&self.gathered));
        text
    }

    fn body(&self, omitted: usize) -> Value {
        let mut body = serde_json::to_value(&self.results).unwrap_or(Value::Null);
        body["gather"] = serde_json::to_value(&self.gathered).unwrap_or(Value::Null);
        body["omitted_items"] = omitted.into();
        body
    }
}
