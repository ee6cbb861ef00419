//! `grep`: regex matches grouped by enclosing symbol.

use lode_search::{GrepOptions, GrepResults, render};
use serde_json::{Value, json};

use super::{Call, ToolDef, lang_property, overlay_property, path_property};
use crate::answer::{Items, capped};
use crate::overlay::{self, WithOverlay};
use crate::{Answer, Repos, ToolError};

/// Matching lines collected before the size cap cuts (the cap keeps fewer).
const MAX_LINES: usize = 1_000;

pub const TOOL: ToolDef = ToolDef {
    name: "grep",
    description: "Regex search (Rust regex syntax) over the indexed files: matching lines \
                  grouped by enclosing symbol, each group as path:start-end with its lines. \
                  Use for exact names, strings or patterns. At most {cap} characters.",
    args: &["pattern", "path", "lang", "ignore_case", "overlay"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string"},
            "path": path_property(repos, "Only under this path"),
            "lang": lang_property(),
            "ignore_case": {"type": "boolean"},
            "overlay": overlay_property(),
        },
        "required": ["pattern"],
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let pattern = a.required_string("pattern")?;
    // Bad input fails before any indexing work.
    lode_search::validate_regex(&pattern)?;
    let langs: Vec<String> = a.string("lang")?.into_iter().collect();
    let case_insensitive = a.bool("ignore_case")?.unwrap_or(false);
    let ov = overlay::argument(&call)?;
    let target = overlay::resolve(call.repos, a.string("path")?.as_deref(), ov.as_ref())?;
    let staged = overlay::stage(call.repos, target.repo, ov)?;
    let opts = GrepOptions {
        case_insensitive,
        filter: lode_search::filter(target.rel, &langs)?,
        max_lines: MAX_LINES,
    };
    let (results, notes) = call.repos.query(target.repo, |index| {
        let _over = overlay::over(index, staged.as_ref())?;
        lode_search::grep(index, &pattern, &opts)
    })?;
    Ok(capped(
        &WithOverlay {
            items: Lines(results),
            staged: staged.as_ref(),
        },
        &overlay::notes(staged.as_ref(), notes),
        call.max_chars,
    ))
}

/// Items are matching lines, across groups in order.
struct Lines(GrepResults);

impl Items for Lines {
    const COMMAND: &'static str = "grep";
    const UNIT: &'static str = "lines";

    fn len(&self) -> usize {
        self.0.groups.iter().map(|g| g.lines.len()).sum()
    }

    fn keep(&self, n: usize) -> Lines {
        let mut r = self.0.clone();
        let mut budget = n;
        r.groups.retain_mut(|g| {
            g.lines.truncate(budget);
            budget -= g.lines.len();
            !g.lines.is_empty()
        });
        r.omitted_lines += self.len() - n.min(self.len());
        Lines(r)
    }

    fn omitted(&self) -> usize {
        self.0.omitted_lines
    }

    fn text(&self) -> String {
        // The tail is the MCP one (added by `capped`), not the CLI's.
        let mut shown = self.0.clone();
        shown.omitted_lines = 0;
        render::grep_text(&shown)
    }

    fn empty_text(&self) -> String {
        "no matching lines\n".into()
    }

    fn body(&self) -> Value {
        serde_json::to_value(&self.0).unwrap_or(Value::Null)
    }
}
