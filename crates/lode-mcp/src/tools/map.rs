//! `map`: an orientation in a repository, fitted to a token budget.

use lode_graph::{MapOptions, RepoMap};
use serde_json::{Value, json};

use super::{Call, ToolDef, path_property};
use crate::answer::{Items, capped};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "map",
    description: "A repository's top directories with languages and key symbols, entry \
                  points and most-called symbols, fitted to a token budget. Use first in an \
                  unfamiliar repository. At most {cap} characters.",
    args: &["max_tokens", "path"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {
            "max_tokens": {"type": "integer", "minimum": 100, "maximum": 2500, "description": "Budget, estimated as characters / 4 (default 1,000)"},
            "path": path_property(repos, "Which repository (any path inside it)"),
        },
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    // ≤ 2,500 tokens ≈ 10,000 characters: the map fits the default cap whole.
    let max_tokens = a.int("max_tokens", 100, 2500)?.unwrap_or(1000) as usize;
    let target = call.repos.resolve(a.string("path")?.as_deref())?;
    // Trimmed inside to the cap, text and JSON each, leaving room for the
    // envelope, notes and a tail: fewer directories and symbols, never none.
    let room = call.max_chars.saturating_sub(RESERVED_CHARS);
    let fits = |m: &RepoMap| {
        m.text.chars().count() <= room
            && serde_json::to_string(m).map_or(0, |j| j.chars().count()) <= room
    };
    let (map, notes) = call.repos.query(target.repo, |index| {
        lode_graph::map_within(index, &MapOptions { max_tokens }, fits)
    })?;
    Ok(capped(&Whole { map: Some(map) }, &notes, call.max_chars))
}

/// What the envelope, the notes and a tail may take beside the map.
const RESERVED_CHARS: usize = 600;

/// The map is already fitted to its budget: one item, whole or not at all.
struct Whole {
    map: Option<RepoMap>,
}

impl Items for Whole {
    const COMMAND: &'static str = "map";
    const UNIT: &'static str = "maps (lower max_tokens)";

    fn len(&self) -> usize {
        usize::from(self.map.is_some())
    }

    fn keep(&self, n: usize) -> Whole {
        Whole {
            map: self.map.clone().filter(|_| n > 0),
        }
    }

    fn omitted(&self) -> usize {
        usize::from(self.map.is_none())
    }

    fn text(&self) -> String {
        self.map
            .as_ref()
            .map(|m| m.text.clone())
            .unwrap_or_default()
    }

    fn body(&self) -> Value {
        serde_json::to_value(&self.map).unwrap_or(Value::Null)
    }
}
