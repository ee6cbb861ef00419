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
    /// (overrides `embed.model` in the user config).
    #[arg(long, global = true, value_name = "DIR")]
    pub model: Option<PathBuf>,
    /// Repository root (default: the enclosing git repository, or the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build or update the index of a repository.
    Index {
        /// The repository root (default: as --root).
        path: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
    /// Ranked code search: the chunks that best answer QUERY.
    Search {
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
        common: Common,
    },
    /// Regex search over the indexed files, hits grouped by enclosing symbol.
    Grep {
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
        common: Common,
    },
    /// The symbols of a file as a tree, with signatures and line spans.
    Outline {
        file: PathBuf,
        #[command(flatten)]
        common: Common,
    },
    /// Evaluate search quality on a set of cases (lode JSONL or a Semble annotation file).
    Eval {
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
    /// Measure indexing and query speed on a repository (writes only to a temporary cache).
    Bench {
        #[command(subcommand)]
        what: BenchCommand,
    },
    /// Where the index is, its state, and what it holds.
    Status {
        /// The repository root (default: as --root).
        path: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Full index into a fresh temporary cache, then warm queries: throughput,
    /// peak memory, query p50/p95, chunk size distribution.
    Index {
        path: PathBuf,
        /// Warm queries to time.
        #[arg(long, default_value_t = 200)]
        queries: usize,
        #[command(flatten)]
        common: Common,
    },
    /// The Semble code-search benchmark: every repository found under --repos,
    /// lode and plain BM25 side by side, compared with the published results.
    Semble {
        /// Checkouts, one directory per repository (scripts/checkout-semble.sh).
        #[arg(long, value_name = "DIR")]
        repos: PathBuf,
        /// The shared eval data (default: ../shared/eval from the current directory or above).
        #[arg(long, value_name = "DIR")]
        data: Option<PathBuf>,
        /// Only these repositories (comma-separated names).
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        #[command(flatten)]
        common: Common,
    },
}
