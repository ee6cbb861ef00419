//! `search`: ranked chunks for a query.

use lode_search::{SearchOptions, SearchResults, render};
use serde_json::{Value, json};

use super::{
    Call, ToolDef, group_property, lang_property, mode_and_group, mode_property, overlay_property,
    path_property,
};
use crate::answer::{Items, capped};
use crate::overlay::{self, WithOverlay};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "search",
    description: "Ranked code search: the chunks best matching an identifier, phrase or \
                  question, each as path:start-end, symbol, score and a 4-line snippet. Use \
                  to find where something is defined or handled; given an issue's text, \
                  its files (group file: files with spans). At most {cap} characters.",
    args: &["query", "path", "lang", "top_k", "mode", "group", "overlay"],
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
            "overlay": overlay_property(),
        },
        "required": ["query"],
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let query = a.required_string("query")?;
    if query.trim().is_empty() {
        return Err(lode_core::Error::BadQuery("empty query".into()).into());
    }
    let top_k = a.int("top_k", 1, 50)?.unwrap_or(10) as usize;
    let langs: Vec<String> = a.string("lang")?.into_iter().collect();
    let (mode, files) = mode_and_group(&a)?;
    let ov = overlay::argument(&call)?;
    let target = overlay::resolve(call.repos, a.string("path")?.as_deref(), ov.as_ref())?;
    let staged = overlay::stage(call.repos, target.repo, ov)?;
    let opts = SearchOptions {
        top_k,
        filter: lode_search::filter(target.rel, &langs)?,
        mode,
        files,
        ..SearchOptions::default()
    };
    let ((results, dense_notes), mut notes) = call.repos.query(target.repo, |index| {
        let _over = overlay::over(index, staged.as_ref())?;
        let results = lode_search::search(index, &query, &opts)?;
        // Why the query ran lexical-only, if it did (an embedding server down).
        let notes = super::search_notes(index, &results);
        Ok((results, notes))
    })?;
    notes.extend(dense_notes);
    let items = Hits {
        results,
        files,
        omitted: 0,
    };
    Ok(capped(
        &WithOverlay {
            items,
            staged: staged.as_ref(),
        },
        &overlay::notes(staged.as_ref(), notes),
        call.max_chars,
    ))
}

struct Hits {
    results: SearchResults,
    /// Answer with the files view (`group: "file"`): the cap cuts files.
    files: bool,
    omitted: usize,
}

impl Items for Hits {
    const COMMAND: &'static str = "search";
    const UNIT: &'static str = "hits";

    fn len(&self) -> usize {
        if self.files {
            self.results.files.len()
        } else {
            self.results.hits.len()
        }
    }

    fn keep(&self, n: usize) -> Hits {
        let mut results = self.results.clone();
        if self.files {
            results.files.truncate(n);
            results
                .hits
                .retain(|h| results.files.iter().any(|f| f.path == h.path));
        } else {
            results.hits.truncate(n);
            results
                .files
                .retain(|f| results.hits.iter().any(|h| h.path == f.path));
        }
        Hits {
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
            render::files_text(&self.results)
        } else {
            render::search_text(&self.results)
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
