//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "lode",
    version,
    about = "Code search and code intelligence for agents, from a local index."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command takes.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Print JSON (schema in docs/json.md) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Base directory for indexes (default: $LODE_CACHE_DIR, $XDG_CACHE_HOME/lode, ~/.cache/lode).
    #[arg(long, global = true, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// User config file (default: $XDG_CONFIG_HOME/lode/config.toml).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Answer from the index as it is, without checking the tree for changes.
    #[arg(long, global = true)]
    pub no_refresh: bool,
    /// A local model2vec model directory to embed with instead of the built-in model
    /// (overrides `[embed]` in the user config).
    #[arg(long, global = true, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// Repository root (default: the enclosing git repository, or the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

/// `--overlay`: files a session holds that are not on disk.
#[derive(Args, Debug, Clone, Default)]
pub struct OverlayArg {
    /// Answer as if these changes were on disk: a JSON object {"path": "content" | null}
    /// (paths relative to the root; null: deleted); `-` reads it from stdin.
    #[arg(long, value_name = "FILE.json")]
    pub overlay: Option<PathBuf>,
}

/// `--repo`/`--all-repos`: ask the shared index service's shard nodes instead of a local index.
#[derive(Args, Debug, Clone, Default)]
pub struct ServiceArg {
    /// Ask the shard nodes serving this repository (its URL or path as enqueued).
    #[arg(long, value_name = "REPO", conflicts_with = "all_repos")]
    pub repo: Option<String>,
    /// Ask every repository the shard nodes serve, merged.
    #[arg(long)]
    pub all_repos: bool,
    /// The NATS servers (default: `[remote] url` in the user config).
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
}

impl ServiceArg {
    /// Whether the service, not a local index, is asked.
    pub fn asked(&self) -> bool {
        self.all_repos || self.repo.is_some()
    }
}

#[derive(Subcommand, Debug, Clone)]
pub enum Command {
    /// Build or update the index of a repository.
    Index {
        /// The repository root (default: as --root).
        path: Option<PathBuf>,
        /// Walk the whole tree even when no directory changed since the last walk.
        #[arg(long)]
        rescan: bool,
        /// The shared index cache, `nats://host:port` (default: `[remote] url` in the user
        /// config): fetch this tree's index, or build it once for every runner.
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        /// Build here without the shared cache, even when the user config names one.
        #[arg(long, conflicts_with = "remote")]
        no_remote: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Ranked code search: the chunks that best answer QUERY.
    Search {
        /// What to look for: a phrase, a question, an identifier, or a task's whole text
        /// (an issue, a stack trace); any text, a leading `-` too; `-` alone reads it from
        /// stdin (its first MiB), for a text too long or too quoted for an argument.
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// Only results under this directory or file.
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
        /// Number of results.
        #[arg(long, short = 'k', default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=200))]
        top_k: u32,
        /// Only this language (repeatable): python, rust, typescript, …
        #[arg(long, value_name = "LANG")]
        lang: Vec<String>,
        /// Lexical ranking only (BM25F and the rerank, no embeddings).
        #[arg(long)]
        lexical: bool,
        #[command(flatten)]
        mode: ModeArgs,
        #[command(flatten)]
        service: ServiceArg,
        #[command(flatten)]
        overlay: OverlayArg,
        #[command(flatten)]
        common: Common,
    },
    /// Search re-ranked by the call graph: hits blended with personalised
    /// PageRank seeded by them, plus code one call from a hit.
    Ask {
        /// The task's text (an issue, a stack trace) or a question; any text, a leading `-` too;
        /// `-` alone reads it from stdin (its first MiB).
        #[arg(allow_hyphen_values = true)]
        task: String,
        #[command(flatten)]
        search: crate::gather::SearchArgs,
        /// Symbols the graph may add (not among the hits).
        #[arg(long, default_value_t = 5, value_name = "N")]
        extra: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Search, then related code: callers and callees of the top hits, walked
    /// in rounds and chosen by the decision model of `[gather]` in the user config.
    Gather {
        /// What to gather code for: a task's text or a query; any text, a leading `-` too;
        /// `-` alone reads it from stdin (its first MiB).
        #[arg(allow_hyphen_values = true)]
        query: String,
        #[command(flatten)]
        search: crate::gather::SearchArgs,
        /// The text that led to this search (an agent's recent turns), `-` for
        /// stdin; its newest 6,000 characters go to the decision model, never to a log
        /// (only its last 64 KiB are kept while reading).
        #[arg(long, value_name = "TRACE")]
        context_file: Option<PathBuf>,
        /// Token budget of the related code (default: gather.max_tokens, else 2000).
        #[arg(long, value_name = "N")]
        max_tokens: Option<usize>,
        #[command(flatten)]
        common: Common,
    },
    /// Regex search over the indexed files, hits grouped by enclosing symbol.
    Grep {
        /// A regular expression (Rust `regex` syntax); a leading `-` is part of it.
        #[arg(allow_hyphen_values = true)]
        regex: String,
        /// Only files under this directory or file.
        #[arg(long, value_name = "DIR")]
        path: Option<PathBuf>,
        /// Case-insensitive.
        #[arg(short = 'i', long)]
        ignore_case: bool,
        /// At most this many matching lines.
        #[arg(long, default_value_t = 200)]
        max_lines: usize,
        /// Only this language (repeatable).
        #[arg(long, value_name = "LANG")]
        lang: Vec<String>,
        #[command(flatten)]
        service: ServiceArg,
        #[command(flatten)]
        overlay: OverlayArg,
        #[command(flatten)]
        common: Common,
    },
    /// The symbols of a file as a tree, with signatures and line spans; of a
    /// directory, every file's symbols compactly (kind, name, line), capped.
    Outline {
        /// A file or a directory.
        file: PathBuf,
        /// For a directory: at most this many symbols in all.
        #[arg(long, default_value_t = 400)]
        max_symbols: usize,
        #[command(flatten)]
        service: ServiceArg,
        #[command(flatten)]
        overlay: OverlayArg,
        #[command(flatten)]
        common: Common,
    },
    /// Who calls a symbol (or, with --direction out, what it calls): a tree
    /// with every call site. Name-only matches are marked `~`.
    Callers {
        /// `name`, `Type::name`, `Type.name`, `pkg.Func`, or `path:LINE`.
        #[arg(allow_hyphen_values = true)]
        symbol: String,
        /// `in`: callers; `out`: callees.
        #[arg(long, value_enum, default_value_t = GraphDirection::In)]
        direction: GraphDirection,
        /// Levels of the tree (1-5).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=5))]
        depth: u8,
        /// Only a symbol defined under this file or directory.
        #[arg(long, value_name = "PATH")]
        path: Option<PathBuf>,
        #[command(flatten)]
        service: ServiceArg,
        #[command(flatten)]
        overlay: OverlayArg,
        #[command(flatten)]
        common: Common,
    },
    /// A symbol's full body with line numbers, signature and doc.
    Show {
        /// `name`, `Type::name`, `pkg.Func`, or `path:LINE`.
        #[arg(allow_hyphen_values = true)]
        symbol: String,
        /// Only a symbol defined under this file or directory.
        #[arg(long, value_name = "PATH")]
        path: Option<PathBuf>,
        /// Also list its direct callers and callees.
        #[arg(long)]
        callgraph: bool,
        #[command(flatten)]
        service: ServiceArg,
        #[command(flatten)]
        overlay: OverlayArg,
        #[command(flatten)]
        common: Common,
    },
    /// An orientation: top directories, entry points, the most central symbols,
    /// fitted to a token budget.
    Map {
        /// Budget in estimated tokens (characters / 4).
        #[arg(long, default_value_t = 1000)]
        max_tokens: usize,
        #[command(flatten)]
        common: Common,
    },
    /// Evaluate search quality on a set of cases (lode JSONL or a Semble annotation file).
    Eval {
        /// The cases: JSON lines (`query`, `relevant`, …; docs/json.md) or a Semble
        /// annotation file.
        cases: PathBuf,
        /// Results per query.
        #[arg(long, short = 'k', default_value_t = 10)]
        top_k: usize,
        /// Print every query that missed.
        #[arg(long)]
        misses: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Queue a build of REPO (a git URL or path) at a commit for the shared index service.
    Enqueue {
        /// A git URL or a path the builders can clone.
        repo: String,
        /// The commit or ref to build.
        #[arg(long, default_value = "HEAD")]
        commit: String,
        /// The NATS servers (default: `[remote] url` in the user config).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Run a part of the shared index service: `builder`.
    Serve {
        #[command(subcommand)]
        what: crate::remote::ServeCommand,
    },
    /// Set up the shared index service's buckets and streams on a NATS cluster.
    Cluster {
        #[command(subcommand)]
        what: crate::remote::ClusterCommand,
    },
    /// The repositories the shared index service has built, each at its newest commit.
    Catalog {
        /// The NATS servers (default: `[remote] url` in the user config).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// An index as one file to carry to another machine: write it, or install one.
    Shard {
        #[command(subcommand)]
        what: ShardCommand,
    },
    /// Tool search over a tool catalog file: rank tools for a task, measure retrieval.
    Tools {
        #[command(subcommand)]
        what: crate::tools::ToolsCommand,
    },
    /// Measure indexing and query speed on a repository (writes only to a temporary cache).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// What lode is configured to do (and which file said so), the index, whether
    /// each backend answers, and what to do about what is off.
    Doctor {
        /// The repository root (default: as --root).
        path: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Where the index is, its state, and what it holds.
    Status {
        /// The repository root (default: as --root).
        path: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Print the MCP config entry that starts `lode mcp` in an agent host; with
    /// --write, add it to the host's user config file (never the repository's).
    Setup {
        /// The host: claude, codex, cursor or opencode.
        #[arg(value_enum)]
        host: crate::setup::Host,
        /// Merge the entry into the host's user config file (kept as it is when an
        /// entry named lode is there).
        #[arg(long)]
        write: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Serve search, grep, outline, callers, show, gather, ask and map to agents over MCP (stdio).
    // `--root` may be given once per repository to serve (see `mcp::roots`).
    #[command(mut_arg("root", |a| a.action(clap::ArgAction::Append).help(
        "A repository to serve (repeatable; the first is where relative paths start; \
         default: the enclosing git repository, or the current directory)"
    )))]
    // Answers are JSON-RPC: --json does not apply, and is not listed.
    #[command(mut_arg("json", |a| a.hide(true)))]
    Mcp {
        /// Cap on each result, in characters (text and JSON each).
        #[arg(long, default_value_t = lode_mcp::DEFAULT_MAX_CHARS, value_name = "N")]
        max_chars: usize,
        /// At most this many repository indexes stay open (least recently used closed first).
        #[arg(long, default_value_t = lode_mcp::DEFAULT_MAX_OPEN as u16, value_name = "N",
              value_parser = clap::value_parser!(u16).range(1..))]
        max_open: u16,
        /// Do not watch the repositories: every call checks the tree with a stat pass.
        #[arg(long)]
        no_watch: bool,
        /// Answer from the shared index service at these NATS servers instead of local
        /// indexes: each tool takes `repo` (absent: every repository in the catalog).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Serve other MCP servers' tools behind tool search, over MCP (stdio).
    ///
    /// The direct tools and `tool_search` are listed, the others once a search activates
    /// them (README, "Tool gateway").
    #[command(mut_arg("config", |a| a.help(
        "The gateway config (TOML): [[server]] tables, direct tools, [search] limits, timeouts"
    )))]
    // Only --config applies: the rest of the common options are not listed.
    #[command(mut_arg("json", |a| a.hide(true)))]
    #[command(mut_arg("cache_dir", |a| a.hide(true)))]
    #[command(mut_arg("no_refresh", |a| a.hide(true)))]
    #[command(mut_arg("model", |a| a.hide(true)))]
    #[command(mut_arg("root", |a| a.hide(true)))]
    Gateway {
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Subcommand, Debug, Clone)]
pub enum BenchCommand {
    /// The SWE-bench Lite subset: issue text → the files the fix touched, each
    /// case searched at its base commit (checked out from bare mirrors with git).
    Swebench {
        /// Bare mirrors, one per repository: `DIR/<owner>+<name>/repo`.
        #[arg(long, value_name = "DIR")]
        mirrors: PathBuf,
        /// The cases, one JSON object a line (the SWE-bench Lite subset's
        /// `swebench-lite/cases.jsonl`, or pairs from scripts/mine-commits.py).
        #[arg(long, value_name = "FILE")]
        cases: PathBuf,
        /// Only these repositories (`owner/name`, comma-separated).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// At most this many cases.
        #[arg(long)]
        limit: Option<usize>,
        /// Keep each case's checkout and index under DIR, and reuse them on the next run
        /// (default: a temporary directory, emptied after each case).
        #[arg(long, value_name = "DIR")]
        work: Option<PathBuf>,
        /// Write each case's gold files and every ranking's first ten files as JSON lines to FILE.
        #[arg(long, value_name = "FILE")]
        explain: Option<PathBuf>,
        /// Only these rankings (comma-separated: bm25-files, bm25f, lode-query, lode-task,
        /// lode-ask; default all). `lode-ask` resolves each case's whole call graph: slow.
        #[arg(long, value_delimiter = ',')]
        rankings: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Fit task mode's weights on mined pairs (a commit's message → the code files it
    /// changed, `scripts/mine-commits.py`) and report them on held-out repositories.
    Learn {
        /// Bare mirrors, one per repository: `DIR/<owner>+<name>/repo`.
        #[arg(long, value_name = "DIR")]
        mirrors: PathBuf,
        /// The mined pairs, in the SWE-bench cases format.
        #[arg(long, value_name = "FILE")]
        cases: PathBuf,
        /// Keep checkouts and indexes under DIR and reuse them (as `bench swebench --work`).
        #[arg(long, value_name = "DIR")]
        work: Option<PathBuf>,
        /// Repositories scored but not fitted on (comma-separated `owner/name`; default:
        /// every second repository of each language).
        #[arg(long, value_delimiter = ',')]
        held_out: Vec<String>,
        /// Rounds of coordinate ascent at most.
        #[arg(long, default_value_t = 6)]
        rounds: usize,
        /// Also write every pair's candidate files and their features as JSON lines to FILE.
        #[arg(long, value_name = "FILE")]
        dump: Option<PathBuf>,
        /// Fit the chunk choice (which chunks of a file are shown) on the pairs'
        /// changed lines (`gold_lines`), not the file ranking.
        #[arg(long)]
        chunks: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Full index into a fresh temporary cache, then warm queries: throughput,
    /// peak memory, query p50/p95, chunk size distribution.
    Index {
        path: PathBuf,
        /// Warm queries to time.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        /// Task texts to time in task mode: JSON lines with a `query` field (the SWE-bench
        /// cases format); default: a few issue-shaped texts built in.
        #[arg(long, value_name = "FILE")]
        tasks: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// The Semble code-search benchmark: every repository found under --repos,
    /// lode and plain BM25 side by side, compared with the published results.
    Semble {
        /// Checkouts, one directory per repository (scripts/checkout-semble.sh).
        #[arg(long, value_name = "DIR")]
        repos: PathBuf,
        /// The eval data directory: the one holding `semble/` (its repos.json and
        /// annotations).
        #[arg(long, value_name = "DIR")]
        data: PathBuf,
        /// Only these repositories (comma-separated names).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Write every query of the lode run (targets, score, top results) as JSON lines
        /// to FILE, to study misses.
        #[arg(long, value_name = "FILE")]
        explain: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
}

/// `--mode` and `--files`: which ranking, and whether to answer with files.
#[derive(Args, Debug, Clone, Default)]
pub struct ModeArgs {
    /// `task`: rank the files a task's text (an issue, a trace) touches, each with its
    /// best chunks; `query`: rank chunks for a phrase or question; `auto` (default):
    /// by the text's shape (long, several lines or sentences, code or a trace: task).
    #[arg(long, value_enum, default_value_t = ModeArg::Auto)]
    pub mode: ModeArg,
    /// Answer with the ranked files, each with its best spans.
    #[arg(long)]
    pub files: bool,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ModeArg {
    #[default]
    Auto,
    Task,
    Query,
}

impl ModeArgs {
    /// The mode to force, `None` to detect.
    pub fn mode(&self) -> Option<lode_search::Mode> {
        match self.mode {
            ModeArg::Auto => None,
            ModeArg::Task => Some(lode_search::Mode::Task),
            ModeArg::Query => Some(lode_search::Mode::Query),
        }
    }
}

/// Which way `lode callers` walks.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphDirection {
    In,
    Out,
}

/// `lode shard …`.
#[derive(Subcommand, Debug, Clone)]
pub enum ShardCommand {
    /// Write the index of the root (brought up to date first) as `<hash>.lodeshard` in DIR.
    Export {
        /// Where the shard is written (created if need be).
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Make a shard the index of the root: its name must be the hash of its bytes, and
    /// it must have been built with this lode, config and model.
    Import {
        /// The `<hash>.lodeshard` file.
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        common: Common,
    },
}
