//! `map`: an orientation in a repository, fitted to a token budget.

use lode_graph::{MapOptions, RepoMap};
use serde_json::Value;

use super::{Arg, Call, Kind, Scope, ToolDef};
use crate::answer::Items;
use crate::{Answer, ToolError};

const MAX_TOKENS: Arg = Arg::new(
    "max_tokens",
    Kind::Int {
        min: 100,
        max: 2500,
        description: "Budget, estimated as characters / 4 (default 1,000)",
    },
);
const PATH: Arg = Arg::new("path", Kind::Path("Which repository (any path inside it)"));

pub const TOOL: ToolDef = ToolDef {
    name: "map",
    description: "A repository's top directories with languages and key symbols, entry \
                  points and most-called symbols, fitted to a token budget. Use first in an \
                  unfamiliar repository. At most {cap} characters.",
    args: &[MAX_TOKENS, PATH],
    run,
};

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    // ≤ 2,500 tokens ≈ 10,000 characters: the map fits the default cap whole.
    let max_tokens = a.int(&MAX_TOKENS)?.unwrap_or(1000) as usize;
    let scope = Scope::of(&call, a.string(&PATH)?.as_deref())?;
    // Trimmed inside to the cap, text and JSON each, leaving room for the
    // envelope, notes and a tail: fewer directories and symbols, never none.
    let room = call.max_chars.saturating_sub(RESERVED_CHARS);
    let fits = |m: &RepoMap| {
        m.text.chars().count() <= room
            && serde_json::to_string(m).map_or(0, |j| j.chars().count()) <= room
    };
    let (map, notes) = scope.query(&call, |index| {
        lode_graph::map_within(index, &MapOptions { max_tokens }, fits)
    })?;
    Ok(scope.answer(&call, Whole(Some(map)), notes))
}

/// What the envelope, the notes and a tail may take beside the map.
const RESERVED_CHARS: usize = 600;

/// The map is already fitted to its budget: one item, whole or not at all.
#[derive(Clone)]
struct Whole(Option<RepoMap>);

impl Items for Whole {
    const UNIT: &'static str = "maps (lower max_tokens)";

    fn len(&self) -> usize {
        usize::from(self.0.is_some())
    }

    fn truncate(&mut self, n: usize) {
        if n == 0 {
            self.0 = None;
        }
    }

    fn text(&self, _omitted: usize) -> String {
        self.0.as_ref().map(|m| m.text.clone()).unwrap_or_default()
    }

    fn body(&self, _omitted: usize) -> Value {
        serde_json::to_value(&self.0).unwrap_or(Value::Null)
    }
}
