//! `Server::call` for every tool of `TOOLS`, with argument objects made
//! from each tool's declared `Arg`s: right names with values of the right
//! type, the wrong type, out of range, too long, hostile paths and overlays,
//! and unknown keys.
//!
//! A call never panics and always answers. A failure is `isError` with a
//! stable `lode.` code in its text and JSON, never `lode.internal` (a panic
//! the server caught); a call whose arguments break a declared rule (unknown,
//! missing, wrong type, out of range, over the length cap) fails. A success
//! has text, within the size cap in text and JSON, with no control character
//! but newline and tab.

use std::sync::LazyLock;

use lode_mcp::{Arg, Kind, Options, Server, TOOLS, ToolDef};
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value, json};

use crate::common::{ODD, any_text, config, json_value};

/// The size cap of the fuzzed server: small, so that answers get cut.
pub const MAX_CHARS: usize = 2_000;
/// Longest string argument the tools accept.
const MAX_STRING: usize = 2_000;

/// A server over a small repository of several languages, indexed once for
/// the whole binary (the directories live as long as the process).
pub struct Fixture {
    pub server: Server,
    _dirs: [tempfile::TempDir; 2],
}

pub static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let cache = tempfile::tempdir().expect("a temporary directory");
    let files = [
        (
            "util.py",
            "def helper(x):\n    \"\"\"Doubles x.\"\"\"\n    return x * 2\n\n\nclass Config:\n    def load(self, path):\n        return helper(len(path))\n",
        ),
        (
            "app.py",
            "from util import helper, Config\n\n\ndef run():\n    return helper(Config().load('a'))\n",
        ),
        (
            "src/lib.rs",
            "/// Parses.\npub fn parse(s: &str) -> usize {\n    count(s)\n}\n\nfn count(s: &str) -> usize {\n    s.len()\n}\n",
        ),
        (
            "web/index.js",
            "import { run } from './run.js';\nexport function start() { return run(1); }\n",
        ),
        (
            "README.md",
            "# Demo\n\nA repository to fuzz.\n\n## Use\n\nRun it.\n",
        ),
        ("config.toml", "[server]\nport = 8080\n"),
    ];
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let mut options = Options::new(vec![dir.path().to_path_buf()]);
    options.cache_dir = Some(cache.path().to_path_buf());
    options.max_chars = MAX_CHARS;
    let server = Server::new(options).expect("a server");
    // Index now, so that no case pays for it.
    let warm = server.call(
        "search",
        Map::from_iter([("query".into(), json!("helper"))]),
    );
    assert_ne!(
        warm.and_then(|r| r.is_error),
        Some(true),
        "the first search fails"
    );
    Fixture {
        server,
        _dirs: [dir, cache],
    }
});

/// One argument's value, and whether it keeps the argument's declared rule.
#[derive(Clone, Debug)]
struct Given {
    value: Value,
    valid: bool,
}

const TEXTS: &[&str] = &[
    "helper",
    "Config::load",
    "util.helper",
    "app.py:4",
    "parse",
    "run",
    "(((",
    "[",
    "\\",
    "*",
    ".*",
    "a{99999}",
    "(?P<x",
    "^$",
    "util.py",
    "src",
    "src/lib.rs",
    ".",
    "..",
    "../..",
    "/",
    "/etc/passwd",
    "~",
    "web/",
    "nope.py",
    "python",
    "rust",
    "js",
    "md",
    "c++",
    "",
    " ",
    "\0",
    "x\ny",
];

/// A value for `kind`: of its type and within its bounds, or not.
fn value_for(kind: &'static Kind) -> BoxedStrategy<Given> {
    let text = prop_oneof![
        4 => select(TEXTS).prop_map(str::to_string),
        2 => any_text(64),
        1 => select(ODD).prop_map(str::to_string),
        1 => (select(TEXTS), 1usize..200).prop_map(|(t, n)| t.repeat(n)),
    ]
    .prop_map(|s| {
        let valid = s.chars().count() <= MAX_STRING;
        Given {
            value: Value::String(s),
            valid,
        }
    });
    let too_long = (MAX_STRING + 1..MAX_STRING + 500).prop_map(|n| Given {
        value: Value::String("x".repeat(n)),
        valid: false,
    });
    fn wrong(ok: impl Fn(&Value) -> bool + 'static) -> impl Strategy<Value = Given> {
        json_value().prop_map(move |v| Given {
            valid: v.is_null() || ok(&v),
            value: v,
        })
    }
    let strings = prop_oneof![8 => text, 1 => too_long, 2 => wrong(Value::is_string)];
    match kind {
        Kind::Text(_) | Kind::Path(_) => strings.boxed(),
        Kind::Bool(_) => prop_oneof![
            3 => any::<bool>().prop_map(|b| Given { value: Value::Bool(b), valid: true }),
            1 => wrong(Value::is_boolean),
        ]
        .boxed(),
        Kind::Int { min, max, .. } => {
            let (min, max) = (*min, *max);
            let int = move |v: &Value| v.as_u64().is_some_and(|n| (min..=max).contains(&n));
            prop_oneof![
                3 => (min..=max).prop_map(|n| Given { value: n.into(), valid: true }),
                2 => prop_oneof![
                    Just(Value::from(0u64)),
                    Just(Value::from(max.saturating_add(1))),
                    Just(Value::from(u64::MAX)),
                    Just(Value::from(-1)),
                    Just(Value::from(min as f64 + 0.5)),
                    Just(Value::from(max as f64)),
                    Just(Value::from(max.to_string())),
                ]
                .prop_map(move |v| Given { valid: int(&v), value: v }),
                1 => wrong(int),
            ]
            .boxed()
        }
        Kind::OneOf(values, _) => {
            let values: &'static [&'static str] = values;
            prop_oneof![
                3 => select(values).prop_map(|v| Given { value: v.into(), valid: true }),
                1 => strings.prop_map(move |g| Given {
                    valid: g.value.is_null()
                        || g.value.as_str().is_some_and(|s| values.contains(&s)),
                    value: g.value,
                }),
            ]
            .boxed()
        }
        // Any overlay may be refused (`lode.bad_overlay`) or taken: not an
        // argument rule of the schema's, so either outcome is right.
        Kind::Overlay => prop_oneof![
            2 => crate::overlay::overlay_object().prop_map(|v| Given { value: v, valid: true }),
            1 => json_value().prop_map(|v| Given { value: v, valid: true }),
        ]
        .boxed(),
    }
}

/// Overlays a session would send.
const OVERLAYS: &[&str] = &[
    r#"{"new.py": "from util import helper\n\ndef fresh():\n    return helper(2)\n"}"#,
    r#"{"util.py": null}"#,
    r#"{"src/lib.rs": "pub fn parse() {}\n", "app.py": null}"#,
    r##"{"docs/a.md": "# A\n\ntext\n"}"##,
    "{}",
];

/// A value that keeps the argument's rules, of the sort a client sends.
fn good_for(arg: &'static Arg) -> BoxedStrategy<Value> {
    let words = |w: &'static [&'static str]| {
        prop_oneof![3 => select(w).prop_map(Value::from), 1 => "[a-z_]{1,12}".prop_map(Value::from)]
            .boxed()
    };
    match (&arg.kind, arg.name) {
        (Kind::Text(_), "lang") => {
            words(&["python", "rust", "js", "markdown", "toml", "c++", "cobol"])
        }
        (Kind::Text(_), "pattern") => words(&[
            "helper",
            "def \\w+",
            "^fn",
            "(?i)config",
            "x|y",
            "\\bparse\\b",
            "[",
            "a{2,}",
        ]),
        (Kind::Text(_), "symbol") => words(&[
            "helper",
            "Config::load",
            "Config.load",
            "util.helper",
            "app.py:4",
            "parse",
            "count",
            "run",
            "start",
            "src/lib.rs:2",
            "nope",
        ]),
        (Kind::Text(_), "context") => words(&[
            "Traceback (most recent call last):\n  File \"app.py\", line 5, in run\n    return helper(1)\nValueError: bad",
            "thread 'main' panicked at src/lib.rs:3:5",
        ]),
        (Kind::Text(_), _) => words(&[
            "helper",
            "where is the config loaded",
            "parse a string",
            "Config.load fails",
            "port",
            "Demo",
            "run start",
        ]),
        (Kind::Path(_), _) => words(&[
            "util.py",
            "src",
            "src/lib.rs",
            ".",
            "web/",
            "README.md",
            "new.py",
        ]),
        (Kind::Bool(_), _) => any::<bool>().prop_map(Value::Bool).boxed(),
        (Kind::Int { min, max, .. }, _) => (*min..=*max).prop_map(Value::from).boxed(),
        (Kind::OneOf(values, _), _) => select(*values).prop_map(Value::from).boxed(),
        (Kind::Overlay, _) => select(OVERLAYS)
            .prop_map(|o| serde_json::from_str(o).expect("an overlay"))
            .boxed(),
    }
}

/// Argument objects for `tool`: each declared argument absent, well formed
/// or hostile (most often well formed, so that most calls do real work),
/// and perhaps a key it does not take.
fn arguments(tool: &'static ToolDef) -> impl Strategy<Value = (Map<String, Value>, bool)> {
    let per_arg: Vec<_> = tool
        .args
        .iter()
        .map(|a| {
            let required = a.required;
            prop_oneof![
                if required { 1 } else { 8 } => Just(None),
                16 => good_for(a).prop_map(|value| Some(Given { value, valid: true })),
                3 => value_for(&a.kind).prop_map(Some),
            ]
            .prop_map(move |g: Option<Given>| (a.name, required, g))
        })
        .collect();
    (
        per_arg,
        prop::option::weighted(0.05, ("[a-z_]{1,10}", json_value())),
    )
        .prop_map(move |(given, unknown)| {
            let mut map = Map::new();
            let mut valid = true;
            for (name, required, g) in given {
                match g {
                    Some(g) => {
                        // `null` counts as absent.
                        valid &= g.valid && !(required && g.value.is_null());
                        map.insert(name.to_string(), g.value);
                    }
                    None => valid &= !required,
                }
            }
            if let Some((key, v)) = unknown
                && !tool.args.iter().any(|a| a.name == key)
            {
                map.insert(key, v);
                valid = false;
            }
            (map, valid)
        })
}

/// Calls `tool` and checks the answer.
fn check(tool: &str, args: Map<String, Value>, valid: bool) -> Result<(), TestCaseError> {
    let shown = Value::Object(args.clone()).to_string();
    let shown: String = shown.chars().take(300).collect();
    let r = FIXTURE.server.call(tool, args);
    let r = r.ok_or_else(|| TestCaseError::fail(format!("{tool}: no answer")))?;
    let text = match r.content.first().and_then(|c| c.as_text()) {
        Some(t) => t.text.clone(),
        None => return Err(TestCaseError::fail(format!("{tool}: no text: {r:?}"))),
    };
    let json = r.structured_content.clone().unwrap_or(Value::Null);
    if r.is_error == Some(true) {
        let code = text.split(':').next().unwrap_or("");
        prop_assert!(
            code.starts_with("lode.") && code.len() > 5,
            "{tool} {shown}: an error without a code: {text:?}"
        );
        prop_assert!(code != "lode.internal", "{tool} {shown}: {text}");
        prop_assert_eq!(
            json["error"]["code"].as_str(),
            Some(code),
            "{} {}",
            tool,
            shown
        );
    } else {
        prop_assert!(
            valid,
            "{tool} {shown}: arguments that break a rule were taken: {text:.200}"
        );
        prop_assert!(!text.trim().is_empty(), "{tool} {shown}: empty text");
        // The JSON echoes the query whole, which the cap does not count
        // (see `a_long_query_keeps_the_json_within_the_cap`).
        let echo = json
            .get("query")
            .map_or(0, |q| q.to_string().chars().count());
        prop_assert!(
            text.chars().count() <= MAX_CHARS
                && json.to_string().chars().count() <= MAX_CHARS + echo,
            "{tool} {shown}: over the cap: {} characters of text, {} of JSON",
            text.chars().count(),
            json.to_string().chars().count()
        );
        prop_assert!(
            !text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{tool} {shown}: a control character in {text:?}"
        );
        prop_assert_eq!(
            json["schema_version"].as_u64(),
            Some(1),
            "{} {}",
            tool,
            shown
        );
    }
    Ok(())
}

/// `(tool, its arguments, whether they keep every rule)`.
pub fn call() -> impl Strategy<Value = (&'static str, Map<String, Value>, bool)> {
    (0..TOOLS.len()).prop_flat_map(|i| {
        let t = &TOOLS[i];
        arguments(t).prop_map(move |(a, valid)| (t.name, a, valid))
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn every_tool_answers_any_arguments_with_a_result((tool, args, valid) in call()) {
        check(tool, args, valid)?;
    }
}

#[test]
fn an_unknown_tool_is_no_answer() {
    for name in ["", "nope", "Search", "search ", "tools/list"] {
        assert!(FIXTURE.server.call(name, Map::new()).is_none(), "{name:?}");
    }
}

#[test]
fn every_tool_is_fuzzed() {
    // The generator draws from TOOLS: a new tool is covered without a line here.
    let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
    for expected in [
        "search", "grep", "outline", "callers", "show", "gather", "ask", "map",
    ] {
        assert!(names.contains(&expected), "{expected} is gone from TOOLS");
    }
}

/// `search`, `ask` and `gather` echoed the query whole in their JSON, outside
/// what the cap cuts: 2,512 characters under a cap of 2,000 for a `gather`
/// query of 1,991. The echo is now the query's first 200 bytes.
#[test]
fn a_long_query_keeps_the_json_within_the_cap() {
    let query: String = "/etc/passwd".repeat(181).chars().take(MAX_STRING).collect();
    for tool in ["search", "ask", "gather"] {
        let args = Map::from_iter([("query".to_string(), json!(query))]);
        let r = FIXTURE.server.call(tool, args).expect("an answer");
        let json = r.structured_content.expect("JSON").to_string();
        assert!(
            json.chars().count() <= MAX_CHARS,
            "{tool}: {} characters",
            json.chars().count()
        );
    }
}
