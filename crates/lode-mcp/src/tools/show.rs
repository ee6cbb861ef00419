//! `show`: a symbol's body with line numbers, and optionally its direct callers and callees.

use lode_graph::{Resolver, Shown, find_symbol, render};
use serde_json::{Value, json};

use super::{Call, ToolDef, overlay_property, path_property};
use crate::answer::{Items, capped};
use crate::overlay::{self, WithOverlay};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "show",
    description: "A symbol's full body with line numbers, signature and doc; with \
                  callgraph, its direct callers and callees too. Use instead of reading a \
                  whole file. At most {cap} characters.",
    args: &["symbol", "path", "callgraph", "overlay"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {
            "symbol": {"type": "string", "description": "name, Type::name, pkg.Func or path:LINE"},
            "path": path_property(repos, "Only symbols defined under this path"),
            "callgraph": {"type": "boolean", "description": "Also list direct callers and callees"},
            "overlay": overlay_property(),
        },
        "required": ["symbol"],
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let symbol = a.required_string("symbol")?;
    let callgraph = a.bool("callgraph")?.unwrap_or(false);
    let ov = overlay::argument(&call)?;
    let target = overlay::resolve(call.repos, a.string("path")?.as_deref(), ov.as_ref())?;
    let staged = overlay::stage(call.repos, target.repo, ov)?;
    let (shown, notes) = call.repos.query(target.repo, |index| {
        let _over = overlay::over(index, staged.as_ref())?;
        let sym = find_symbol(index, &symbol, target.rel.as_deref())?;
        Resolver::new(index)?.show(&sym, callgraph)
    })?;
    Ok(capped(
        &WithOverlay {
            items: Body { shown },
            staged: staged.as_ref(),
        },
        &overlay::notes(staged.as_ref(), notes),
        call.max_chars,
    ))
}

/// Items are the body's lines.
struct Body {
    shown: Shown,
}

impl Items for Body {
    const COMMAND: &'static str = "show";
    const UNIT: &'static str = "lines";

    fn len(&self) -> usize {
        self.shown.lines.len()
    }

    fn keep(&self, n: usize) -> Body {
        let mut shown = self.shown.clone();
        shown.omitted_lines += shown.lines.len().saturating_sub(n);
        shown.lines.truncate(n);
        Body { shown }
    }

    fn omitted(&self) -> usize {
        self.shown.omitted_lines
    }

    fn text(&self) -> String {
        render::shown_text(&self.shown)
    }

    fn body(&self) -> Value {
        serde_json::to_value(&self.shown).unwrap_or(Value::Null)
    }
}
