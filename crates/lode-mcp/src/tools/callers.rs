//! `callers`: who calls a symbol, or what it calls, as a tree with every call site.

use lode_graph::{CallTree, Direction, Resolver, find_symbol, render};
use serde_json::{Value, json};

use super::{Call, ToolDef, overlay_property, path_property};
use crate::answer::{Items, capped};
use crate::overlay::{self, WithOverlay};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "callers",
    description: "Who calls a symbol (direction in) or what it calls (out), as a tree with \
                  every call site path:line; `~` marks a name-only match. An ambiguous name \
                  lists its definitions (lode.ambiguous): give path or Type::name. At most \
                  {cap} characters.",
    args: &["symbol", "direction", "depth", "path", "overlay"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {
            "symbol": {"type": "string", "description": "name, Type::name, pkg.Func or path:LINE"},
            "direction": {"type": "string", "enum": ["in", "out"], "description": "in (default): callers; out: callees"},
            "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "Levels (default 1)"},
            "path": path_property(repos, "Only symbols defined under this path"),
            "overlay": overlay_property(),
        },
        "required": ["symbol"],
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let symbol = a.required_string("symbol")?;
    let direction = match a.string("direction")?.as_deref() {
        None | Some("in") => Direction::In,
        Some("out") => Direction::Out,
        Some(other) => {
            return Err(lode_core::Error::BadQuery(format!(
                "direction must be \"in\" or \"out\", not {other:?}"
            ))
            .into());
        }
    };
    let depth = a.int("depth", 1, 5)?.unwrap_or(1) as usize;
    let ov = overlay::argument(&call)?;
    let target = overlay::resolve(call.repos, a.string("path")?.as_deref(), ov.as_ref())?;
    let staged = overlay::stage(call.repos, target.repo, ov)?;
    let (tree, notes) = call.repos.query(target.repo, |index| {
        let _over = overlay::over(index, staged.as_ref())?;
        let sym = find_symbol(index, &symbol, target.rel.as_deref())?;
        Resolver::new(index)?.tree(&sym, direction, depth)
    })?;
    Ok(capped(
        &WithOverlay {
            items: Tree { tree, omitted: 0 },
            staged: staged.as_ref(),
        },
        &overlay::notes(staged.as_ref(), notes),
        call.max_chars,
    ))
}

/// Items are the first level of the tree (each with its subtree).
struct Tree {
    tree: CallTree,
    omitted: usize,
}

impl Items for Tree {
    const COMMAND: &'static str = "callers";
    const UNIT: &'static str = "callers or callees";

    fn len(&self) -> usize {
        self.tree.children.len()
    }

    fn keep(&self, n: usize) -> Tree {
        let mut tree = self.tree.clone();
        tree.children.truncate(n);
        Tree {
            omitted: self.omitted + self.len() - tree.children.len(),
            tree,
        }
    }

    fn omitted(&self) -> usize {
        self.omitted
    }

    fn text(&self) -> String {
        render::tree_text(&self.tree)
    }

    fn body(&self) -> Value {
        let mut body = serde_json::to_value(&self.tree).unwrap_or(Value::Null);
        body["omitted_nodes"] = self.omitted.into();
        body
    }
}
