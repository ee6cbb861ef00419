//! `ask`: search re-ranked by the call graph, plus code one call from a hit.

use std::sync::OnceLock;

use lode_gather::{AskOptions, AskResults, GraphCache, GraphState};
use lode_search::SearchOptions;
use serde_json::{Value, json};

use super::{
    Call, ToolDef, group_property, lang_property, mode_and_group, mode_property, path_property,
};
use crate::answer::{Items, capped};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "ask",
    description: "Search re-ranked by the call graph (PageRank seeded by the hits), plus up \
                  to 5 symbols one call from a hit, each with its edge. Use for a task in \
                  words or its whole text. At most {cap} characters.",
    args: &["query", "path", "lang", "top_k", "mode", "group"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "path": path_property(repos, "Only under this path"),
            "lang": lang_property(),
            "top_k": {"type": "integer", "minimum": 1, "maximum": 50, "description": "Hits (default 10)"},
            "mode": mode_property(),
            "group": group_property(),
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

/// One per process: the whole-repository graph is cached by index state.
static GRAPHS: OnceLock<GraphCache> = OnceLock::new();

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let query = a.required_string("query")?;
    if query.trim().is_empty() {
        return Err(lode_core::Error::BadQuery("empty query".into()).into());
    }
    let top_k = a.int("top_k", 1, 50)?.unwrap_or(10) as usize;
    let langs: Vec<String> = a.string("lang")?.into_iter().collect();
    let (mode, files) = mode_and_group(&a)?;
    let target = call.repos.resolve(a.string("path")?.as_deref())?;
    let opts = SearchOptions {
        top_k,
        filter: lode_search::filter(target.rel, &langs)?,
        mode,
        files,
        ..SearchOptions::default()
    };
    let graphs = GRAPHS.get_or_init(GraphCache::new);
    let ((results, dense_notes), mut notes) = call.repos.query(target.repo, |index| {
        let results = lode_search::search(index, &query, &opts)?;
        // The query runs on the state the freshness check just settled: its graph is ready.
        let ranked = lode_gather::ask(
            index,
            &results,
            &AskOptions::default(),
            graphs,
            &GraphState::Ready,
        );
        // A partial or lexical-only dense side, as `search` says it.
        Ok((ranked, super::search_notes(index, &results)))
    })?;
    notes.extend(dense_notes);
    Ok(capped(
        &Ranked {
            results,
            files,
            omitted: 0,
        },
        &notes,
        call.max_chars,
    ))
}

struct Ranked {
    results: AskResults,
    /// Answer with the search's files view (`group: "file"`): the cap cuts files.
    files: bool,
    omitted: usize,
}

impl Items for Ranked {
    const COMMAND: &'static str = "ask";
    const UNIT: &'static str = "hits";

    fn len(&self) -> usize {
        if self.files {
            self.results.files.len()
        } else {
            self.results.hits.len()
        }
    }

    fn keep(&self, n: usize) -> Ranked {
        let mut results = self.results.clone();
        if self.files {
            results.files.truncate(n);
        } else {
            results.hits.truncate(n);
            results
                .files
                .retain(|f| results.hits.iter().any(|h| h.path == f.path));
        }
        Ranked {
            omitted: self.omitted + self.len() - n.min(self.len()),
            files: self.files,
            results,
        }
    }

    fn omitted(&self) -> usize {
        self.omitted
    }

    fn text(&self) -> String {
        if self.files {
            lode_gather::render::ask_files_text(&self.results)
        } else {
            lode_gather::render::ask_text(&self.results)
        }
    }

    fn empty_text(&self) -> String {
        "no results\n".into()
    }

    fn body(&self) -> Value {
        let mut body = serde_json::to_value(&self.results).unwrap_or(Value::Null);
        body["omitted_hits"] = self.omitted.into();
        body
    }
}
