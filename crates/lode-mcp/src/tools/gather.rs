//! `gather`: the search results, then related code along the call graph.

use std::sync::OnceLock;

use lode_gather::{GatherInput, Gathered, Gatherer, GraphState};
use lode_search::{SearchOptions, SearchResults, render};
use serde_json::{Value, json};

use super::{Call, ToolDef, lang_property, path_property};
use crate::answer::{Items, capped};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "gather",
    description: "Search, then the callers and callees of the best hits along the call \
                  graph, bodies cut to a token budget. Use when the hits alone are not \
                  enough; context is the text that led to the search. At most {cap} \
                  characters.",
    args: &["query", "context", "max_tokens", "path", "lang", "top_k"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "context": {"type": "string", "description": "The text that led to the search (its last 6,000 characters are used)"},
            "max_tokens": {"type": "integer", "minimum": 100, "maximum": 8000, "description": "Budget for the related code (default 2,000)"},
            "path": path_property(repos, "Only results under this path"),
            "lang": lang_property(),
            "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Hits (default 10)"},
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

/// One per process, so that its decision and graph caches serve every call.
static GATHERER: OnceLock<(Gatherer, Option<String>)> = OnceLock::new();

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let query = a.required_string("query")?;
    if query.trim().is_empty() {
        return Err(lode_core::Error::BadQuery("empty query".into()).into());
    }
    // The trace may be long; only its tail is used (a longer argument is refused by Args).
    let context = a.string("context")?;
    let max_tokens = a.int("max_tokens", 100, 8000)?.map(|n| n as usize);
    let top_k = a.int("top_k", 1, 50)?.unwrap_or(10) as usize;
    let langs: Vec<String> = a.string("lang")?.into_iter().collect();
    let target = call.repos.resolve(a.string("path")?.as_deref())?;
    let opts = SearchOptions {
        top_k,
        filter: lode_search::filter(target.rel, &langs)?,
        ..SearchOptions::default()
    };
    let (gatherer, config_note) =
        GATHERER.get_or_init(|| Gatherer::from_config(call.repos.config()));
    let (((results, gathered), dense_notes), mut notes) =
        call.repos.query(target.repo, |index| {
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
        lode_index::diagnostics::note_fallback("gather_config");
    }
    for cause in &gathered.fallback {
        lode_index::diagnostics::note_fallback(&format!("gather:{cause}"));
    }
    Ok(capped(
        &Pack {
            results,
            gathered,
            omitted: 0,
        },
        &notes,
        call.max_chars,
    ))
}

/// Items are the hits, then the related nodes; the related nodes are cut first.
struct Pack {
    results: SearchResults,
    gathered: Gathered,
    omitted: usize,
}

impl Items for Pack {
    const COMMAND: &'static str = "gather";
    const UNIT: &'static str = "hits or related symbols";

    fn len(&self) -> usize {
        self.results.hits.len() + self.gathered.nodes.len()
    }

    fn keep(&self, n: usize) -> Pack {
        let mut results = self.results.clone();
        let mut gathered = self.gathered.clone();
        let hits = n.min(results.hits.len());
        results.hits.truncate(hits);
        gathered.nodes.truncate(n - hits);
        let kept = results.hits.len() + gathered.nodes.len();
        Pack {
            results,
            gathered,
            omitted: self.omitted + self.len() - kept,
        }
    }

    fn omitted(&self) -> usize {
        self.omitted
    }

    fn text(&self) -> String {
        let mut text = render::search_text(&self.results);
        text.push('\n');
        text.push_str(&lode_gather::render::gathered_text(&self.gathered));
        text
    }

    fn body(&self) -> Value {
        let mut body = serde_json::to_value(&self.results).unwrap_or(Value::Null);
        body["gather"] = serde_json::to_value(&self.gathered).unwrap_or(Value::Null);
        body["omitted_items"] = self.omitted.into();
        body
    }
}
