//! lode as an MCP server: `search`, `grep`, `outline`, `callers`, `show`,
//! `gather`, `ask` and `map` as tools over stdio,
//! for agents (Claude Code, Codex, OpenCode, Cursor, …).
//!
//! The principal types and how they fit:
//!
//! - [`Repos`] holds the served repositories. A call's `path` argument picks
//!   one ([`Repos::resolve`]): relative paths are taken from the first root,
//!   absolute ones must lie inside a root, anything else is refused with
//!   `lode.bad_path`. Each [`Repo`] keeps its open index behind a mutex,
//!   opened on first use and checked against the tree on every call (the
//!   stat pass of [`lode_index::refresh`], run beside the query; a change
//!   refreshes the index and runs the query again); at most
//!   [`Options::max_open`] indexes stay open, least recently used closed first.
//!   A build commits before its chunks are embedded; the embedding phase
//!   (`lode_index::embed`) then runs on a thread of the repository, and calls
//!   meanwhile answer from the chunks embedded so far, saying so.
//! - [`TOOLS`] lists the tools. A [`ToolDef`] is a name, a description, its
//!   [`Arg`]s (the input schema is made from them, and the tool reads each
//!   argument through its `Arg`, so bounds and choices are stated once) and
//!   a function from [`Call`] to [`Answer`]; adding a tool is one module and
//!   one line in that list.
//! - An [`Answer`] is the compact text the CLI prints plus the JSON of
//!   `--json` (`docs/json.md`) as `structuredContent`, both cut to
//!   [`Options::max_chars`] with an `…[N more — narrow the query]` tail: a
//!   tool says how to count, cut and render its answer (the `Items` trait)
//!   and one function keeps the longest prefix that fits. A failure is a tool
//!   result with `isError` and a stable code ([`ToolError`]).
//! - `search`, `grep`, `outline`, `callers` and `show` take an `overlay`
//!   (files not on disk, `{path: content | null}`) as an argument or as
//!   `_meta.overlay`; it is parsed once per distinct overlay and put over the
//!   open index for the call (`lode_index::overlay`), never written to it.
//! - [`Server`] is the rmcp [`ServerHandler`](rmcp::ServerHandler): it lists
//!   the tools and runs each call on a blocking thread; [`serve_stdio`] runs
//!   it until the client goes away, behind the JSON-RPC [`gate`] that
//!   answers malformed lines (parse errors, batches, bad ids, non-object
//!   params, requests before `initialize`) with their error.
//!
//! - [`Server::remote`] serves [`remote::TOOLS`] instead (`lode mcp
//!   --remote`): `search`, `grep`, `outline`, `callers` and `show` with a
//!   `repo` argument, answered by the shared index service's shard nodes
//!   through a [`remote::Service`], merged and cut to the same cap.
//!
//! Results are data: repository text is quoted (indented under its
//! `path:start-end` line), and nothing in a result or a description is
//! addressed to the model beyond what the tool does.
//!
//! ```no_run
//! use lode_mcp::{Options, Server};
//! let options = Options::new(vec![std::path::PathBuf::from(".")]);
//! let server = Server::new(options)?;
//! // In process: one call, as the MCP client would make it.
//! let args = serde_json::json!({"query": "retry policy"});
//! let result = server.call("search", args.as_object().unwrap().clone());
//! # let _ = result;
//! // Or speak MCP on stdin/stdout until the client disconnects.
//! lode_mcp::serve_stdio(server)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod answer;
mod args;
mod embedding;
mod error;
pub mod gate;
mod overlay;
pub mod remote;
mod repos;
mod server;
mod tools;
mod watch;

pub use answer::Answer;
pub use error::ToolError;
pub use remote::RemoteOptions;
pub use repos::{Repo, Repos, Target};
pub use server::{Server, serve_stdio};
pub use tools::{Arg, Call, Kind, TOOLS, ToolDef};

use std::path::PathBuf;

use lode_core::Config;

/// Default cap on a result, in characters (text and JSON each).
pub const DEFAULT_MAX_CHARS: usize = 12_000;
/// Default number of repositories whose index stays open.
pub const DEFAULT_MAX_OPEN: usize = 4;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct Options {
    /// The served repositories; the first is where relative paths start.
    pub roots: Vec<PathBuf>,
    /// The user's config; each root narrows it with its own `.lode.toml`.
    pub config: Config,
    /// Base directory for indexes (`None`: lode's default cache).
    pub cache_dir: Option<PathBuf>,
    /// Answer from the index as it is, without the stat pass.
    pub no_refresh: bool,
    /// Watch each open repository so that calls skip the stat pass while
    /// nothing changes (see `watch`).
    pub watch: bool,
    /// At most this many open indexes (at least 1).
    pub max_open: usize,
    /// Cap on each result, in characters (at least 200).
    pub max_chars: usize,
}

impl Options {
    /// Serves `roots` with the defaults: watched, the user's config empty,
    /// lode's cache, the default caps.
    pub fn new(roots: Vec<PathBuf>) -> Options {
        Options {
            roots,
            config: Config::default(),
            cache_dir: None,
            no_refresh: false,
            watch: true,
            max_open: DEFAULT_MAX_OPEN,
            max_chars: DEFAULT_MAX_CHARS,
        }
    }
}
