//! `show`: a symbol's body with line numbers, and optionally its direct callers and callees.

use lode_graph::{Resolver, Shown, find_symbol, render};
use serde_json::Value;

use super::{Arg, Call, Kind, OVERLAY, SYMBOL, SYMBOL_PATH, Scope, ToolDef};
use crate::answer::Items;
use crate::{Answer, ToolError};

const CALLGRAPH: Arg = Arg::new(
    "callgraph",
    Kind::Bool(Some("Also list direct callers and callees")),
);

pub const TOOL: ToolDef = ToolDef {
    name: "show",
    description: "A symbol's full body with line numbers, signature and doc; with \
                  callgraph, its direct callers and callees too. Use instead of reading a \
                  whole file. At most {cap} characters.",
    args: &[SYMBOL, SYMBOL_PATH, CALLGRAPH, OVERLAY],
    run,
};

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let symbol = a.required_string(&SYMBOL)?;
    let callgraph = a.bool(&CALLGRAPH)?.unwrap_or(false);
    let scope = Scope::of(&call, a.string(&SYMBOL_PATH)?.as_deref())?;
    let (shown, notes) = scope.query(&call, |index| {
        let sym = find_symbol(index, &symbol, scope.rel().as_deref())?;
        Resolver::new(index)?.show(&sym, callgraph)
    })?;
    Ok(scope.answer(&call, Body(shown), notes))
}

/// Items are the body's lines.
#[derive(Clone)]
struct Body(Shown);

impl Body {
    /// The body saying `omitted` lines are left out.
    fn with_omitted(&self, omitted: usize) -> Shown {
        Shown {
            omitted_lines: omitted,
            ..self.0.clone()
        }
    }
}

impl Items for Body {
    const UNIT: &'static str = "lines";

    fn len(&self) -> usize {
        self.0.lines.len()
    }

    fn truncate(&mut self, n: usize) {
        self.0.lines.truncate(n);
    }

    fn left_out(&self) -> usize {
        self.0.omitted_lines
    }

    fn text(&self, omitted: usize) -> String {
        render::shown_text(&self.with_omitted(omitted))
    }

    fn body(&self, omitted: usize) -> Value {
        serde_json::to_value(self.with_omitted(omitted)).unwrap_or(Value::Null)
    }
}
