//! The tools. Each module defines one [`ToolDef`]; [`TOOLS`] lists them.
//!
//! Adding a tool: a module with its [`ToolDef`] (name, description, [`Arg`]s
//! and `run`) and one line in [`TOOLS`]. The schema is made from the `Arg`s,
//! and a tool reads each argument by its `Arg`. The shared pieces are here:
//! the arguments several tools take, [`Call`] (the arguments and the
//! repositories), `Scope` (the repository, path and overlay of a call) and
//! the search options.

mod ask;
pub(crate) mod callers;
mod gather;
mod grep;
mod map;
mod outline;
mod search;
mod show;

use lode_index::Index;
use lode_index::overlay::Staged;
use lode_search::{FileHit, Mode, SearchOptions};
use serde_json::{Map, Value, json};

use crate::answer::{Items, capped};
use crate::args::{Args, JsonObject};
use crate::overlay::{self, WithOverlay};
use crate::repos::Target;
use crate::{Answer, Repos, ToolError};

/// One MCP tool.
pub struct ToolDef {
    /// The name clients call it by.
    pub name: &'static str,
    /// What it returns and when to use it, and its size cap (`{cap}` is
    /// replaced by the cap in characters).
    pub description: &'static str,
    /// Its arguments: the schema's properties, and what a call may pass.
    pub args: &'static [Arg],
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

/// One argument of a tool: its name, its type with what the schema says of
/// it, and whether a call must give it. A tool reads it by the same value,
/// so the schema and the checks cannot drift apart.
pub struct Arg {
    /// The property's name.
    pub name: &'static str,
    /// What it holds.
    pub kind: Kind,
    /// Whether a call must give it.
    pub required: bool,
}

/// What an argument holds; the `&str`s are the schema's descriptions.
pub enum Kind {
    /// A string.
    Text(Option<&'static str>),
    /// `true` or `false`.
    Bool(Option<&'static str>),
    /// An integer in `min..=max`.
    Int {
        /// The least allowed.
        min: u64,
        /// The most allowed.
        max: u64,
        /// What it counts, and its default.
        description: &'static str,
    },
    /// One of these strings.
    OneOf(&'static [&'static str], Option<&'static str>),
    /// A path inside a served repository (see [`path_property`]).
    Path(&'static str),
    /// Unsaved files (see [`crate::overlay`]).
    Overlay,
}

impl Arg {
    /// An optional argument.
    pub const fn new(name: &'static str, kind: Kind) -> Arg {
        Arg {
            name,
            kind,
            required: false,
        }
    }

    /// The same argument, required.
    pub const fn required(self) -> Arg {
        Arg {
            required: true,
            ..self
        }
    }

    fn schema(&self, repos: Option<&Repos>) -> Value {
        let described = |mut v: Value, d: Option<&str>| {
            if let Some(d) = d {
                v["description"] = d.into();
            }
            v
        };
        match &self.kind {
            Kind::Text(d) => described(json!({"type": "string"}), *d),
            Kind::Bool(d) => described(json!({"type": "boolean"}), *d),
            Kind::Int {
                min,
                max,
                description,
            } => {
                json!({"type": "integer", "minimum": min, "maximum": max, "description": description})
            }
            Kind::OneOf(values, d) => described(json!({"type": "string", "enum": values}), *d),
            Kind::Path(what) => path_property(repos, what),
            Kind::Overlay => overlay::property(),
        }
    }
}

/// The search text of `search`, `ask` and `gather`.
pub(crate) const QUERY: Arg = Arg::new("query", Kind::Text(None)).required();
const LANG: Arg = Arg::new(
    "lang",
    Kind::Text(Some("Only this language (python, rust, …)")),
);
pub(crate) const TOP_K: Arg = Arg::new(
    "top_k",
    Kind::Int {
        min: 1,
        max: 50,
        description: "Hits (default 10)",
    },
);
/// Which ranking: `task` (the files an issue's text touches), `query`, or
/// `auto`, the default, which decides by the text's shape.
const MODE: Arg = Arg::new("mode", Kind::OneOf(&["auto", "task", "query"], None));
/// Chunks, or files with their best spans.
const GROUP: Arg = Arg::new("group", Kind::OneOf(&["chunk", "file"], None));
const OVERLAY: Arg = Arg::new(overlay::KEY, Kind::Overlay);
/// The symbol of `callers` and `show`.
pub(crate) const SYMBOL: Arg = Arg::new(
    "symbol",
    Kind::Text(Some("name, Type::name, pkg.Func or path:LINE")),
)
.required();
/// `path` as a filter of where symbols are defined.
const SYMBOL_PATH: Arg = Arg::new("path", Kind::Path("Only symbols defined under this path"));
/// `path` as a filter of where hits are.
const UNDER: Arg = Arg::new("path", Kind::Path("Only under this path"));

/// One call: its arguments and what a tool may use.
pub struct Call<'a> {
    /// The tool called.
    pub tool: &'static ToolDef,
    /// Its arguments, as sent (checked by [`Call::args`]).
    pub arguments: JsonObject,
    /// The served repositories.
    pub repos: &'a Repos,
    /// The cap on the answer, text and JSON each.
    pub max_chars: usize,
}

impl Call<'_> {
    /// The arguments, refusing any the tool does not take.
    pub fn args(&self) -> Result<Args, ToolError> {
        Args::new(self.tool.name, self.arguments.clone(), self.tool.args)
    }

    /// The answer as `items`, cut to the cap, with the notes.
    fn answer<T: Items>(&self, items: &T, notes: &[String]) -> Answer {
        capped(self.tool.name, items, notes, self.max_chars)
    }
}

impl ToolDef {
    /// The description with the cap filled in.
    pub fn description(&self, max_chars: usize) -> String {
        self.description.replace("{cap}", &thousands(max_chars))
    }

    /// The names of its arguments.
    pub fn arg_names(&self) -> impl Iterator<Item = &'static str> {
        self.args.iter().map(|a| a.name)
    }

    /// The JSON Schema of its arguments.
    pub fn schema(&self, repos: Option<&Repos>) -> Value {
        schema(self.args, repos)
    }
}

/// The JSON Schema of a tool's arguments; `repos` says where relative paths
/// start (`None`: no local repositories).
pub(crate) fn schema(args: &[Arg], repos: Option<&Repos>) -> Value {
    let properties: Map<String, Value> = args
        .iter()
        .map(|a| (a.name.to_string(), a.schema(repos)))
        .collect();
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    let required: Vec<&str> = args.iter().filter(|a| a.required).map(|a| a.name).collect();
    if !required.is_empty() {
        schema["required"] = json!(required);
    }
    schema
}

/// The `path` argument. With one root, relative paths start there (absolute
/// ones inside it work too) and the schema need not say so; with several, it
/// names the first, where relative paths start.
fn path_property(repos: Option<&Repos>, what: &str) -> Value {
    let roots: Vec<String> = (repos.into_iter().flat_map(|r| r.roots()))
        .map(|r| r.display().to_string())
        .collect();
    let description = if roots.len() <= 1 {
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

/// Where a call looks: the repository and path its `path` names, and the
/// overlay of unsaved files put over that repository's index (for a tool
/// that takes one: `Args` refuses an overlay the tool does not declare).
struct Scope {
    target: Target,
    staged: Option<Staged>,
}

impl Scope {
    /// `path` may name a file or directory only the overlay has.
    fn of(call: &Call, path: Option<&str>) -> Result<Scope, ToolError> {
        let overlay = overlay::argument(call)?;
        let target = overlay::resolve(call.repos, path, overlay.as_ref())?;
        let staged = overlay::stage(call.repos, target.repo, overlay)?;
        Ok(Scope { target, staged })
    }

    /// The path filter inside the repository (`None`: all of it).
    fn rel(&self) -> Option<String> {
        self.target.rel.clone()
    }

    /// Runs `f` on the repository's index, the overlay over it, and returns
    /// what it found with the notes of the index.
    fn query<T>(
        &self,
        call: &Call,
        f: impl Fn(&Index) -> lode_core::Result<T>,
    ) -> Result<(T, Vec<String>), ToolError> {
        call.repos.query(self.target.repo, |index| {
            let _over = overlay::over(index, self.staged.as_ref())?;
            f(index)
        })
    }

    /// [`Call::answer`], saying which overlay the answer saw and which of
    /// its files are not indexed.
    fn answer<T: Items>(&self, call: &Call, items: T, notes: Vec<String>) -> Answer {
        let staged = self.staged.as_ref();
        call.answer(
            &WithOverlay { items, staged },
            &overlay::notes(staged, notes),
        )
    }
}

/// The search's options from `top_k`, `lang`, `mode` and `group` (those the
/// tool takes), under `rel`.
fn search_options(a: &Args, rel: Option<String>) -> Result<SearchOptions, ToolError> {
    let langs: Vec<String> = a.string(&LANG)?.into_iter().collect();
    let mode = match a.choice(&MODE)? {
        Some("task") => Some(Mode::Task),
        Some("query") => Some(Mode::Query),
        _ => None,
    };
    Ok(SearchOptions {
        top_k: a.int(&TOP_K)?.unwrap_or(10) as usize,
        filter: lode_search::filter(rel, &langs)?,
        mode,
        files: a.choice(&GROUP)? == Some("file"),
        ..SearchOptions::default()
    })
}

/// The notes a search leaves for the answer: the index's (a dense side that
/// ran lexical-only, a partial index) and, when none of the query's words is
/// in the index, that no match is strong.
fn search_notes(index: &Index, results: &lode_search::SearchResults) -> Vec<String> {
    let mut notes = index.take_notes();
    if results.no_strong_match {
        notes.push(lode_search::NO_STRONG_MATCH.to_string());
    }
    notes
}

/// The answer of a search (`search`, `ask`): hits, and the ranked files.
trait Ranked: Clone + serde::Serialize {
    type Hit;
    fn parts(&self) -> (&[Self::Hit], &[FileHit]);
    fn parts_mut(&mut self) -> (&mut Vec<Self::Hit>, &mut Vec<FileHit>);
    fn hit_path(hit: &Self::Hit) -> &str;
    fn hits_text(&self) -> String;
    /// The files view (`group: "file"`).
    fn files_text(&self) -> String;
}

/// Items are hits, or files in the files view: the first `n` hits keep the
/// files they are in, the first `n` files their hits.
#[derive(Clone)]
struct RankedItems<R> {
    results: R,
    files_view: bool,
}

impl<R: Ranked> RankedItems<R> {
    fn new(results: R, files_view: bool) -> Self {
        RankedItems {
            results,
            files_view,
        }
    }
}

impl<R: Ranked> Items for RankedItems<R> {
    const UNIT: &'static str = "hits";

    fn len(&self) -> usize {
        let (hits, files) = self.results.parts();
        if self.files_view {
            files.len()
        } else {
            hits.len()
        }
    }

    fn truncate(&mut self, n: usize) {
        let (hits, files) = self.results.parts_mut();
        if self.files_view {
            files.truncate(n);
            hits.retain(|h| files.iter().any(|f| f.path == R::hit_path(h)));
        } else {
            hits.truncate(n);
            files.retain(|f| hits.iter().any(|h| R::hit_path(h) == f.path));
        }
    }

    fn text(&self, _omitted: usize) -> String {
        if self.files_view {
            self.results.files_text()
        } else {
            self.results.hits_text()
        }
    }

    fn empty_text(&self) -> Option<&'static str> {
        Some("no results\n")
    }

    fn body(&self, omitted: usize) -> Value {
        let mut body = serde_json::to_value(&self.results).unwrap_or(Value::Null);
        body["omitted_hits"] = omitted.into();
        body
    }
}

/// `12000` → `12,000`.
pub(crate) fn thousands(n: usize) -> String {
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
            let schema = t.schema(Some(&repos));
            let props: Vec<&str> = schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let mut args: Vec<&str> = t.arg_names().collect();
            args.sort();
            let mut props_sorted = props.clone();
            props_sorted.sort();
            assert_eq!(props_sorted, args, "{}", t.name);
            assert_eq!(schema["additionalProperties"], false, "{}", t.name);
            // A tool whose arguments are all optional lists none as required.
            for r in schema["required"].as_array().into_iter().flatten() {
                assert!(t.arg_names().any(|a| Some(a) == r.as_str()), "{}", t.name);
            }
            assert!(
                t.description(12_000).contains("12,000 characters"),
                "{}",
                t.name
            );
        }
    }

    #[test]
    fn a_schema_is_made_from_the_tools_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let repos = Repos::new(&crate::Options::new(vec![dir.path().to_path_buf()])).unwrap();
        let callers = TOOLS.iter().find(|t| t.name == "callers").unwrap();
        let expected = json!({
            "type": "object",
            "properties": {
                "symbol": {"type": "string", "description": "name, Type::name, pkg.Func or path:LINE"},
                "direction": {"type": "string", "enum": ["in", "out"], "description": "in (default): callers; out: callees"},
                "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "Levels (default 1)"},
                "path": {"type": "string", "description": "Only symbols defined under this path"},
                "overlay": {"type": "object", "description": "Unsaved files: path → content, null = deleted"},
            },
            "required": ["symbol"],
            "additionalProperties": false,
        });
        assert_eq!(callers.schema(Some(&repos)), expected);
        // With every argument optional, none is listed as required.
        let map = TOOLS.iter().find(|t| t.name == "map").unwrap();
        assert!(map.schema(Some(&repos)).get("required").is_none());
    }

    /// A server over a repository of `files` Python files that all match
    /// "parse config", answering within `max_chars`.
    fn server(files: usize, max_chars: usize) -> (crate::Server, [tempfile::TempDir; 2]) {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        for i in 0..files {
            let body = format!(
                "def parse_config_{i}(path):\n    \"\"\"Parse the config file.\"\"\"\n    return open(path).read()\n"
            );
            std::fs::write(dir.path().join(format!("config_{i}.py")), body).unwrap();
        }
        let mut options = crate::Options::new(vec![dir.path().to_path_buf()]);
        options.cache_dir = Some(cache.path().to_path_buf());
        options.max_chars = max_chars;
        (crate::Server::new(options).unwrap(), [dir, cache])
    }

    fn call(server: &crate::Server, tool: &str, args: Value) -> (String, Value) {
        let r = server
            .call(tool, args.as_object().unwrap().clone())
            .unwrap();
        assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
        let text = r.content[0].as_text().unwrap().text.clone();
        (text, r.structured_content.unwrap())
    }

    #[test]
    fn a_files_view_under_a_small_cap_keeps_the_files_that_fit() {
        // The hits of the files cut go too: were they kept, the JSON would
        // outgrow the cap before the first file.
        let (server, _dirs) = server(12, 1_500);
        for tool in ["search", "ask"] {
            let args = json!({"query": "parse the config file", "group": "file", "top_k": 12});
            let (text, json) = call(&server, tool, args);
            let files = json["files"].as_array().unwrap();
            assert!(!files.is_empty(), "{tool}: {text}");
            let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
            for h in json["hits"].as_array().unwrap() {
                assert!(paths.contains(&h["path"].as_str().unwrap()), "{tool}: {h}");
            }
            assert!(text.contains("config_"), "{tool}: {text}");
            assert!(text.contains("more hits"), "{tool}: {text}");
        }
    }

    #[test]
    fn a_directory_outline_shows_the_files_only_the_overlay_has() {
        let (server, _dirs) = server(2, 12_000);
        let overlay = json!({"new_module.py": "def fresh():\n    pass\n"});
        let (text, json) = call(&server, "outline", json!({"path": ".", "overlay": overlay}));
        assert!(text.contains("new_module.py"), "{text}");
        assert!(text.contains("function fresh"), "{text}");
        assert_eq!(json["overlay"]["files"], 1);
    }

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(12_000), "12,000");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
