//! `lode mcp --remote`: the tools answered by the shared index service.
//!
//! The server is then the service's coordinator: `search`, `grep`,
//! `outline`, `callers` and `show` take a `repo` (one repository, as the
//! catalog names it) or none (every repository), go to the shard nodes of
//! that repository's partition or of all partitions ([`Service::scatter`]),
//! and come back merged, with the commit each repository was served at and
//! `partial` with the partitions that did not answer by the deadline. The
//! answer is cut to the cap like a local one; no index is opened here.

use std::time::Duration;

use lode_remote::answers::{answer_text, hit_text};
use lode_remote::serve::{Command, Gathered, Query, RepoAnswer};
use serde_json::{Value, json};

use crate::answer::{Items, capped};
use crate::args::{Args, JsonObject};
use crate::tools::callers::{DEPTH, DIRECTION};
use crate::tools::{Arg, Kind, QUERY, SYMBOL, TOP_K};
use crate::{Answer, ToolError};

/// How `lode mcp --remote` runs.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// The user's config (its diagnostics log).
    pub config: lode_core::Config,
    /// Base directory of the diagnostics log (`None`: lode's default cache).
    pub cache_dir: Option<std::path::PathBuf>,
    /// Cap on each result, in characters (at least 200).
    pub max_chars: usize,
    /// How long the shard nodes have to answer a call.
    pub deadline: Duration,
}

/// The shared index service as the tools reach it.
pub trait Service: Send + Sync {
    /// `query` sent to its partitions, merged within `deadline`; `Err` when
    /// it could not be sent at all.
    fn scatter(&self, query: &Query, deadline: Duration) -> Result<Gathered, String>;
}

impl Service for lode_remote::Remote {
    fn scatter(&self, query: &Query, deadline: Duration) -> Result<Gathered, String> {
        lode_remote::Remote::scatter(self, query, deadline).map_err(|e| e.message)
    }
}

/// One tool of the remote face: its name, description and arguments, and
/// the query a call makes.
pub struct RemoteTool {
    /// The name clients call it by (the local tool's).
    pub name: &'static str,
    /// What it returns (`{cap}` is replaced by the cap).
    pub description: &'static str,
    /// Its arguments.
    pub args: &'static [Arg],
    /// What a call's arguments ask.
    query: fn(&Args) -> Result<Asked, ToolError>,
}

/// A call's query, but for its repository: the command, its text and how
/// many results (or levels) it wants.
struct Asked(Command, String, usize);

const REPO: Arg = Arg::new(
    "repo",
    Kind::Text(Some(
        "One repository, as the catalog names it (URL or absolute path); absent: every repository",
    )),
);
const PATTERN: Arg = Arg::new("pattern", Kind::Text(Some("A regex"))).required();
const PATH: Arg = Arg::new(
    "path",
    Kind::Text(Some("A file or directory, relative to the repository root")),
)
.required();
/// Symbols an outline of a directory lists, per repository.
const OUTLINE_SYMBOLS: usize = 500;

/// Every tool of the remote face, in the order `tools/list` shows them.
pub const TOOLS: &[RemoteTool] = &[
    RemoteTool {
        name: "search",
        description: "Ranked code search over the shared index: hits as repo path:start-end \
                      with a few lines, best first across the repositories asked. At most \
                      {cap} characters.",
        args: &[QUERY, REPO, TOP_K],
        query: |a| {
            let text = a.non_blank(&QUERY)?;
            Ok(Asked(Command::Search, text, top_k(a, &TOP_K, 10)?))
        },
    },
    RemoteTool {
        name: "grep",
        description: "Regex matches over the shared index, grouped by enclosing symbol, per \
                      repository. At most {cap} characters.",
        args: &[PATTERN, REPO],
        query: |a| Ok(Asked(Command::Grep, a.non_blank(&PATTERN)?, 0)),
    },
    RemoteTool {
        name: "outline",
        description: "The symbols of a file or directory in each repository asked. At most \
                      {cap} characters.",
        args: &[PATH, REPO],
        query: |a| {
            Ok(Asked(
                Command::Outline,
                a.required_string(&PATH)?,
                OUTLINE_SYMBOLS,
            ))
        },
    },
    RemoteTool {
        name: "callers",
        description: "Who calls a symbol (direction in) or what it calls (out), as a tree \
                      with every call site, in each repository asked. At most {cap} \
                      characters.",
        args: &[SYMBOL, DIRECTION, DEPTH, REPO],
        query: |a| {
            let command = match a.choice(&DIRECTION)? {
                Some("out") => Command::Callees,
                _ => Command::Callers,
            };
            let symbol = a.non_blank(&SYMBOL)?;
            Ok(Asked(command, symbol, top_k(a, &DEPTH, 1)?))
        },
    },
    RemoteTool {
        name: "show",
        description: "A symbol's body with path:start-end, in each repository asked. At most \
                      {cap} characters.",
        args: &[SYMBOL, REPO],
        query: |a| Ok(Asked(Command::Show, a.non_blank(&SYMBOL)?, 1)),
    },
];

fn top_k(a: &Args, arg: &Arg, default: u64) -> Result<usize, ToolError> {
    Ok(a.int(arg)?.unwrap_or(default) as usize)
}

/// Answers one call of `tool` through `service`.
pub fn run(
    tool: &RemoteTool,
    service: &dyn Service,
    arguments: JsonObject,
    max_chars: usize,
    deadline: Duration,
) -> Result<Answer, ToolError> {
    let a = Args::new(tool.name, arguments, tool.args)?;
    let Asked(command, text, top_k) = (tool.query)(&a)?;
    let repo = a.string(&REPO)?.map(|r| lode_remote::repo_name(&r));
    let query = Query {
        command,
        text,
        repo: repo.clone(),
        top_k,
    };
    let gathered = service
        .scatter(&query, deadline)
        .map_err(|e| ToolError::new(ToolError::REMOTE, format!("remote: {e}")))?;
    let mut notes = gathered.notes();
    if let Some(repo) = &repo
        && gathered.answers.is_empty()
        && gathered.loading.is_empty()
        && !gathered.partial
    {
        notes.push(format!("{repo} is not in the catalog"));
    }
    let coverage = Coverage::of(&gathered);
    Ok(match command {
        Command::Search | Command::Grep => {
            let hits = Hits {
                command,
                hits: gathered.hits(command, top_k),
                coverage,
            };
            capped(tool.name, &hits, &notes, max_chars)
        }
        _ => {
            let answers = Answers {
                answers: gathered.answers,
                coverage,
            };
            capped(tool.name, &answers, &notes, max_chars)
        }
    })
}

/// What every remote answer's JSON says of its coverage.
#[derive(Clone)]
struct Coverage(Value);

impl Coverage {
    fn of(g: &Gathered) -> Coverage {
        Coverage(json!({
            "served": g.served(),
            "partial": g.partial,
            "missing_partitions": g.missing_partitions,
            "loading": g.loading,
        }))
    }

    fn body(&self, mut body: Value) -> Value {
        for (k, v) in self.0.as_object().into_iter().flatten() {
            body[k] = v.clone();
        }
        body
    }
}

/// `search` and `grep`: the merged hits, each with its repository and commit.
#[derive(Clone)]
struct Hits {
    command: Command,
    hits: Vec<Value>,
    coverage: Coverage,
}

impl Items for Hits {
    const UNIT: &'static str = "hits";
    fn len(&self) -> usize {
        self.hits.len()
    }
    fn truncate(&mut self, n: usize) {
        self.hits.truncate(n);
    }
    fn text(&self, _omitted: usize) -> String {
        self.hits
            .iter()
            .map(|h| hit_text(self.command, h))
            .collect()
    }
    fn empty_text(&self) -> Option<&'static str> {
        Some("no results\n")
    }
    fn body(&self, omitted: usize) -> Value {
        self.coverage
            .body(json!({"hits": self.hits, "omitted_hits": omitted}))
    }
}

/// `outline`, `callers` and `show`: each repository's answer.
#[derive(Clone)]
struct Answers {
    answers: Vec<RepoAnswer>,
    coverage: Coverage,
}

impl Items for Answers {
    const UNIT: &'static str = "repositories";
    fn len(&self) -> usize {
        self.answers.len()
    }
    fn truncate(&mut self, n: usize) {
        self.answers.truncate(n);
    }
    fn text(&self, _omitted: usize) -> String {
        self.answers.iter().map(answer_text).collect()
    }
    fn empty_text(&self) -> Option<&'static str> {
        Some("no repository answered\n")
    }
    fn body(&self, omitted: usize) -> Value {
        self.coverage
            .body(json!({"answers": self.answers, "omitted_repositories": omitted}))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::Server;

    /// A service that records each query and answers with `reply`.
    struct Fake {
        asked: Arc<Mutex<Vec<Query>>>,
        reply: fn(&Query) -> Result<Gathered, String>,
    }

    impl Service for Fake {
        fn scatter(&self, query: &Query, _deadline: Duration) -> Result<Gathered, String> {
            self.asked.lock().unwrap().push(query.clone());
            (self.reply)(query)
        }
    }

    fn server(
        reply: fn(&Query) -> Result<Gathered, String>,
        max_chars: usize,
    ) -> (Server, Arc<Mutex<Vec<Query>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let fake = Fake {
            asked: asked.clone(),
            reply,
        };
        let options = RemoteOptions {
            config: lode_core::Config::default(),
            cache_dir: None,
            max_chars,
            deadline: Duration::from_secs(1),
        };
        (Server::remote(Box::new(fake), options), asked)
    }

    fn answer(repo: &str, answer: Value) -> RepoAnswer {
        RepoAnswer {
            repo: repo.into(),
            commit: format!("{repo:0<40}"),
            answer,
        }
    }

    fn two_repos(query: &Query) -> Result<Gathered, String> {
        let hit = |path: &str, score: f64| {
            json!({"path": path, "start_line": 1, "end_line": 9, "score": score,
                   "symbol": "run", "snippet": "def run():\n    pass\n"})
        };
        let answers = vec![
            answer("git://a", json!({"hits": [hit("a.py", 1.0)]})),
            answer("git://b", json!({"hits": [hit("b.py", 2.0)]})),
        ];
        Ok(Gathered {
            answers: if query.repo.is_some() {
                Vec::new()
            } else {
                answers
            },
            partial: true,
            missing_partitions: vec![3],
            loading: Vec::new(),
        })
    }

    fn call(server: &Server, tool: &str, args: Value) -> Value {
        let args = args.as_object().unwrap().clone();
        serde_json::to_value(server.call(tool, args).expect("a tool")).unwrap()
    }

    #[test]
    fn lists_the_five_tools_with_a_repo_argument_and_no_overlay() {
        let (server, _) = server(two_repos, 12_000);
        let names: Vec<&str> = server.tools().iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(names, ["search", "grep", "outline", "callers", "show"]);
        for t in server.tools() {
            let props = &t.input_schema["properties"];
            assert!(props.get("repo").is_some(), "{}", t.name);
            assert!(props.get("overlay").is_none(), "{}", t.name);
        }
        assert!(server.repos().is_none());
        assert!(server.call("map", JsonObject::new()).is_none());
    }

    #[test]
    fn a_search_merges_every_repository_best_first_and_says_what_is_missing() {
        let (server, asked) = server(two_repos, 12_000);
        let r = call(&server, "search", json!({"query": "run it", "top_k": 5}));
        assert_eq!(r["isError"], false, "{r}");
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("git://b  b.py:1-9  run\n"), "{text}");
        assert!(text.contains("git://a  a.py:1-9"), "{text}");
        assert!(
            text.contains("note: partial: partitions [3] did not answer"),
            "{text}"
        );
        let json = &r["structuredContent"];
        assert_eq!(json["command"], "search");
        assert_eq!(json["hits"][0]["repo"], "git://b");
        assert_eq!(json["hits"][0]["commit"], format!("{:0<40}", "git://b"));
        assert_eq!(json["partial"], true);
        assert_eq!(json["missing_partitions"], json!([3]));
        assert_eq!(json["served"].as_array().unwrap().len(), 2);
        let q = asked.lock().unwrap()[0].clone();
        assert_eq!(
            (q.command, q.text.as_str(), q.repo, q.top_k),
            (Command::Search, "run it", None, 5)
        );
    }

    #[test]
    fn arguments_become_the_query_each_command_takes() {
        let (server, asked) = server(two_repos, 12_000);
        call(
            &server,
            "callers",
            json!({"symbol": "run", "direction": "out", "depth": 3, "repo": "git://a"}),
        );
        call(&server, "show", json!({"symbol": "Cart::add"}));
        call(&server, "outline", json!({"path": "src"}));
        call(&server, "grep", json!({"pattern": "fn \\w+"}));
        let asked: Vec<(Command, String, Option<String>, usize)> = (asked.lock().unwrap().iter())
            .map(|q| (q.command, q.text.clone(), q.repo.clone(), q.top_k))
            .collect();
        assert_eq!(
            asked,
            [
                (Command::Callees, "run".into(), Some("git://a".into()), 3),
                (Command::Show, "Cart::add".into(), None, 1),
                (Command::Outline, "src".into(), None, OUTLINE_SYMBOLS),
                (Command::Grep, "fn \\w+".into(), None, 0),
            ]
        );
    }

    #[test]
    fn a_repository_the_catalog_lacks_is_named_in_a_note() {
        fn nothing(_: &Query) -> Result<Gathered, String> {
            Ok(Gathered {
                answers: Vec::new(),
                partial: false,
                missing_partitions: Vec::new(),
                loading: Vec::new(),
            })
        }
        let (server, _) = server(nothing, 12_000);
        let r = call(
            &server,
            "show",
            json!({"symbol": "run", "repo": "git://nowhere"}),
        );
        let text = r["content"][0]["text"].as_str().unwrap();
        assert_eq!(
            text,
            "no repository answered\nnote: git://nowhere is not in the catalog\n"
        );
    }

    #[test]
    fn bad_arguments_and_an_unreachable_service_are_errors_with_their_code() {
        fn down(_: &Query) -> Result<Gathered, String> {
            Err("no servers available".into())
        }
        let (server, asked) = server(down, 12_000);
        let code = |r: &Value| r["structuredContent"]["error"]["code"].clone();
        let r = call(&server, "search", json!({"query": "x", "overlay": {}}));
        assert_eq!(code(&r), "lode.bad_argument", "{r}");
        let r = call(&server, "search", json!({"query": "  "}));
        assert_eq!(code(&r), "lode.bad_query", "{r}");
        let r = call(&server, "show", json!({"symbol": ""}));
        assert_eq!(
            r["content"][0]["text"], "lode.bad_query: empty symbol",
            "{r}"
        );
        let r = call(&server, "callers", json!({"symbol": "x", "depth": 9}));
        assert_eq!(code(&r), "lode.bad_argument", "{r}");
        assert!(asked.lock().unwrap().is_empty(), "nothing was sent");
        let r = call(&server, "search", json!({"query": "x"}));
        assert_eq!(code(&r), "lode.remote", "{r}");
        assert_eq!(r["isError"], true);
    }

    #[test]
    fn a_large_answer_is_cut_to_the_cap() {
        fn many(_: &Query) -> Result<Gathered, String> {
            let hits: Vec<Value> = (0..200)
                .map(|i| {
                    json!({"path": format!("m{i}.py"), "start_line": 1, "end_line": 2,
                                "score": 200 - i, "snippet": "x = 1\n"})
                })
                .collect();
            Ok(Gathered {
                answers: vec![answer("git://a", json!({ "hits": hits }))],
                partial: false,
                missing_partitions: Vec::new(),
                loading: Vec::new(),
            })
        }
        let (server, _) = server(many, 2_000);
        let r = call(&server, "search", json!({"query": "x", "top_k": 50}));
        let text = r["content"][0]["text"].as_str().unwrap();
        assert!(text.chars().count() <= 2_000);
        assert!(r["structuredContent"].to_string().chars().count() <= 2_000);
        let kept = r["structuredContent"]["hits"].as_array().unwrap().len();
        assert!(kept > 5 && kept < 50, "{kept}");
        assert!(
            text.ends_with(&format!("…[{} more hits — narrow the query]\n", 50 - kept)),
            "{text}"
        );
    }
}
