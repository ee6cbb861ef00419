//! The tools. Each module defines one [`ToolDef`]; [`TOOLS`] lists them.
//!
//! Adding a tool: a module with its `ARGS`, schema, description and `run`,
//! and one line in [`TOOLS`]. The shared pieces are here: [`Call`] (the
//! arguments and the repositories) and the schema of a `path` argument.

mod ask;
mod callers;
mod gather;
mod grep;
mod map;
mod outline;
mod search;
mod show;

use serde_json::{Value, json};

use crate::args::{Args, JsonObject};
use crate::{Answer, Repos, ToolError};

/// One MCP tool.
pub struct ToolDef {
    pub name: &'static str,
    /// What it returns and when to use it, and its size cap (`{cap}` is
    /// replaced by the cap in characters).
    pub description: &'static str,
    /// The names of its arguments (the schema's properties).
    pub args: &'static [&'static str],
    /// The JSON Schema of its arguments.
    pub schema: fn(&Repos) -> Value,
    /// Answers a call; runs on a blocking thread.
    pub run: fn(Call) -> Result<Answer, ToolError>,
}

/// Every tool, in the order `tools/list` shows them.
pub const TOOLS: &[ToolDef] = &[
    search::TOOL,
    grep::TOOL,
    outline::TOOL,
    callers::TOOL,
    show::TOOL,
    gather::TOOL,
    ask::TOOL,
    map::TOOL,
];

/// One call: its arguments and what a tool may use.
pub struct Call<'a> {
    pub tool: &'static ToolDef,
    pub arguments: JsonObject,
    pub repos: &'a Repos,
    pub max_chars: usize,
}

impl Call<'_> {
    /// The arguments, refusing any the tool does not take.
    pub fn args(&self) -> Result<Args, ToolError> {
        Args::new(self.tool.name, self.arguments.clone(), self.tool.args)
    }
}

impl ToolDef {
    /// The description with the cap filled in.
    pub fn description(&self, max_chars: usize) -> String {
        self.description.replace("{cap}", &thousands(max_chars))
    }
}

/// The `path` argument. With one root, relative paths start there (absolute
/// ones inside it work too) and the schema need not say so; with several, it
/// names the first, where relative paths start.
fn path_property(repos: &Repos, what: &str) -> Value {
    let roots: Vec<String> = repos.roots().map(|r| r.display().to_string()).collect();
    let description = if roots.len() == 1 {
        what.to_string()
    } else {
        format!(
            "{what}: relative to {}, or absolute inside one of {}",
            roots[0],
            roots.join(", ")
        )
    };
    json!({"type": "string", "description": description})
}

fn overlay_property() -> Value {
    crate::overlay::property()
}

/// The notes a search leaves for the answer: the index's (a dense side that
/// ran lexical-only, a partial index) and, when none of the query's words is
/// in the index, that no match is strong.
fn search_notes(index: &lode_index::Index, results: &lode_search::SearchResults) -> Vec<String> {
    let mut notes = index.take_notes();
    if results.no_strong_match {
        notes.push(lode_search::NO_STRONG_MATCH.to_string());
    }
    notes
}

/// The `mode` argument: which ranking (`task`: the files an issue's text
/// touches; `auto`, the default, decides by the text's shape).
fn mode_property() -> Value {
    json!({"type": "string", "enum": ["auto", "task", "query"]})
}

/// The `group` argument: chunks, or files with their best spans.
fn group_property() -> Value {
    json!({"type": "string", "enum": ["chunk", "file"]})
}

/// `mode` and `group` read: the mode to force (`None`: by the text) and
/// whether files were asked for.
fn mode_and_group(a: &crate::args::Args) -> Result<(Option<lode_search::Mode>, bool), ToolError> {
    let mode = match a.string("mode")?.as_deref() {
        None | Some("auto") => None,
        Some("task") => Some(lode_search::Mode::Task),
        Some("query") => Some(lode_search::Mode::Query),
        Some(other) => {
            return Err(ToolError::bad_argument(format!(
                "mode must be auto, task or query, not {other:?}"
            )));
        }
    };
    let files = match a.string("group")?.as_deref() {
        None | Some("chunk") => false,
        Some("file") => true,
        Some(other) => {
            return Err(ToolError::bad_argument(format!(
                "group must be chunk or file, not {other:?}"
            )));
        }
    };
    Ok((mode, files))
}

fn lang_property() -> Value {
    json!({"type": "string", "description": "Only this language (python, rust, …)"})
}

/// `12000` → `12,000`.
fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_schema_lists_exactly_the_arguments_the_tool_takes() {
        let dir = tempfile::tempdir().unwrap();
        let repos = Repos::new(&crate::Options::new(vec![dir.path().to_path_buf()])).unwrap();
        for t in TOOLS {
            let schema = (t.schema)(&repos);
            let props: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let mut args = t.args.to_vec();
            args.sort();
            let mut props_sorted = props.clone();
            props_sorted.sort();
            assert_eq!(props_sorted, args, "{}", t.name);
            assert_eq!(schema["additionalProperties"], false, "{}", t.name);
            // A tool whose arguments are all optional lists none as required.
            for r in schema["required"].as_array().into_iter().flatten() {
                assert!(t.args.contains(&r.as_str().unwrap()), "{}", t.name);
            }
            assert!(
                t.description(12_000).contains("12,000 characters"),
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(12_000), "12,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
