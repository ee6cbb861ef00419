//! `callers`: who calls a symbol, or what it calls, as a tree with every call site.

use lode_graph::{CallTree, Direction, Resolver, find_symbol, render};
use serde_json::Value;

use super::{Arg, Call, Kind, OVERLAY, SYMBOL, SYMBOL_PATH, Scope, ToolDef};
use crate::answer::Items;
use crate::{Answer, ToolError};

pub(crate) const DIRECTION: Arg = Arg::new(
    "direction",
    Kind::OneOf(&["in", "out"], Some("in (default): callers; out: callees")),
);
pub(crate) const DEPTH: Arg = Arg::new(
    "depth",
    Kind::Int {
        min: 1,
        max: 5,
        description: "Levels (default 1)",
    },
);

pub const TOOL: ToolDef = ToolDef {
    name: "callers",
    description: "Who calls a symbol (direction in) or what it calls (out), as a tree with \
                  every call site path:line; `~` marks a name-only match. An ambiguous name \
                  lists its definitions (lode.ambiguous): give path or Type::name. At most \
                  {cap} characters.",
    args: &[SYMBOL, DIRECTION, DEPTH, SYMBOL_PATH, OVERLAY],
    run,
};

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let symbol = a.required_string(&SYMBOL)?;
    let direction = match a.choice(&DIRECTION)? {
        Some("out") => Direction::Out,
        _ => Direction::In,
    };
    let depth = a.int(&DEPTH)?.unwrap_or(1) as usize;
    let scope = Scope::of(&call, a.string(&SYMBOL_PATH)?.as_deref())?;
    let (tree, notes) = scope.query(&call, |index| {
        let sym = find_symbol(index, &symbol, scope.rel().as_deref())?;
        Resolver::new(index)?.tree(&sym, direction, depth)
    })?;
    Ok(scope.answer(&call, Tree(tree), notes))
}

/// Items are the first level of the tree (each with its subtree).
#[derive(Clone)]
struct Tree(CallTree);

impl Items for Tree {
    const UNIT: &'static str = "callers or callees";

    fn len(&self) -> usize {
        self.0.children.len()
    }

    fn truncate(&mut self, n: usize) {
        self.0.children.truncate(n);
    }

    fn text(&self, _omitted: usize) -> String {
        render::tree_text(&self.0)
    }

    fn body(&self, omitted: usize) -> Value {
        let mut body = serde_json::to_value(&self.0).unwrap_or(Value::Null);
        body["omitted_nodes"] = omitted.into();
        body
    }
}
