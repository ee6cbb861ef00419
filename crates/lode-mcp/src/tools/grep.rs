//! `grep`: regex matches grouped by enclosing symbol.

use lode_search::{GrepOptions, GrepResults, render};
use serde_json::Value;

use super::{Arg, Call, Kind, LANG, OVERLAY, Scope, ToolDef, UNDER};
use crate::answer::Items;
use crate::{Answer, ToolError};

/// Matching lines collected before the size cap cuts (the cap keeps fewer).
const MAX_LINES: usize = 1_000;

const PATTERN: Arg = Arg::new("pattern", Kind::Text(None)).required();
const IGNORE_CASE: Arg = Arg::new("ignore_case", Kind::Bool(None));

pub const TOOL: ToolDef = ToolDef {
    name: "grep",
    description: "Regex search (Rust regex syntax) over the indexed files: matching lines \
                  grouped by enclosing symbol, each group as path:start-end with its lines. \
                  Use for exact names, strings or patterns. At most {cap} characters.",
    args: &[PATTERN, UNDER, LANG, IGNORE_CASE, OVERLAY],
    run,
};

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let pattern = a.required_string(&PATTERN)?;
    // Bad input fails before any indexing work.
    lode_search::validate_regex(&pattern)?;
    let langs: Vec<String> = a.string(&LANG)?.into_iter().collect();
    let case_insensitive = a.bool(&IGNORE_CASE)?.unwrap_or(false);
    let scope = Scope::of(&call, a.string(&UNDER)?.as_deref())?;
    let opts = GrepOptions {
        case_insensitive,
        filter: lode_search::filter(scope.rel(), &langs)?,
        max_lines: MAX_LINES,
    };
    let (results, notes) = scope.query(&call, |index| lode_search::grep(index, &pattern, &opts))?;
    Ok(scope.answer(&call, Lines(results), notes))
}

/// Items are matching lines, across groups in order.
#[derive(Clone)]
struct Lines(GrepResults);

impl Items for Lines {
    const UNIT: &'static str = "lines";

    fn len(&self) -> usize {
        self.0.groups.iter().map(|g| g.lines.len()).sum()
    }

    fn truncate(&mut self, n: usize) {
        let mut budget = n;
        self.0.groups.retain_mut(|g| {
            g.lines.truncate(budget);
            budget -= g.lines.len();
            !g.lines.is_empty()
        });
    }

    fn left_out(&self) -> usize {
        self.0.omitted_lines
    }

    fn text(&self, _omitted: usize) -> String {
        // The tail is the MCP one (added by `capped`), not the CLI's.
        let shown = GrepResults {
            omitted_lines: 0,
            ..self.0.clone()
        };
        render::grep_text(&shown)
    }

    fn empty_text(&self) -> Option<&'static str> {
        Some("no matching lines\n")
    }

    fn body(&self, omitted: usize) -> Value {
        let body = GrepResults {
            omitted_lines: omitted,
            ..self.0.clone()
        };
        serde_json::to_value(&body).unwrap_or(Value::Null)
    }
}
