//! `lode bench index`: indexing throughput, peak memory, warm query latency
//! and chunk sizes, measured in one process on a fresh temporary cache.

use std::path::Path;
use std::time::Instant;

use lode_core::{Config, Error, Result, SymbolKind};
use lode_index::{BuildOptions, Index, IndexLocation};
use lode_search::{GrepOptions, SearchOptions};
use serde::Serialize;

use crate::cli::Common;

/// Natural-language queries of the kind agents ask, independent of any repository.
const SENTENCES: &[&str] = &[
    "parse configuration file",
    "error handling when the request fails",
    "retry with exponential backoff",
    "read a file from disk",
    "http client request",
    "cache invalidation",
    "command line arguments",
    "serialize to json",
    "authentication token",
    "database connection pool",
    "logging setup",
    "walk the directory tree",
    "convert string to integer",
    "thread pool worker",
    "unit test helpers",
    "format error message",
    "schedule a timer",
    "hash map lookup",
    "validate user input",
    "diff two trees",
];

const PATTERNS: &[&str] = &[
    r"fn \w+_config",
    r"TODO|FIXME",
    r"func \(\w+ \*\w+\) \w+",
    r"impl\b.*\bfor\b",
    r"return nil, err",
    r"\berror\b",
];

#[derive(Serialize)]
struct Percentiles {
    p50_ms: f64,
    p95_ms: f64,
    mean_ms: f64,
    n: usize,
}

fn percentiles(mut v: Vec<f64>) -> Percentiles {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| {
        v.get(((v.len() as f64 - 1.0) * q).round() as usize)
            .copied()
            .unwrap_or(0.0)
    };
    Percentiles {
        p50_ms: at(0.5),
        p95_ms: at(0.95),
        mean_ms: v.iter().sum::<f64>() / v.len().max(1) as f64,
        n: v.len(),
    }
}

#[derive(Serialize)]
struct ChunkSizes {
    count: u64,
    mean_bytes: f64,
    p50_bytes: u64,
    p90_bytes: u64,
    p99_bytes: u64,
    max_bytes: u64,
    mean_lines: f64,
    over_hard_cap: u64,
}

#[derive(Serialize)]
struct BenchReport {
    root: String,
    files: u64,
    bytes: u64,
    lines: u64,
    chunks: u64,
    symbols: u64,
    index_s: f64,
    files_per_s: f64,
    mb_per_s: f64,
    peak_rss_mb: f64,
    index_disk_mb: f64,
    search_symbol: Percentiles,
    search_sentence: Percentiles,
    /// Task texts in task mode: the first pass over them, then again.
    search_task_first: Percentiles,
    search_task_warm: Percentiles,
    lexical_symbol: Percentiles,
    lexical_sentence: Percentiles,
    grep: Percentiles,
    /// `callers` of the same symbols: first with a fresh resolver, then again (warm caches).
    callers_first: Percentiles,
    callers_warm: Percentiles,
    /// Resolving every call site of the index (what `map` does first).
    graph_build_ms: f64,
    graph_edges: usize,
    chunk_sizes: ChunkSizes,
}

/// Issue-shaped texts for the task-mode timing when no `--tasks` file is
/// given: prose, a trace, code, as agents pass them.
const TASKS: &[&str] = &[
    "Config file values are ignored when an environment variable is set\n\nI set the \
     timeout in the config file but the value from the environment always wins, even when \
     it is empty. I expected an empty variable to be treated as unset.\n\n```\n\
     export APP_TIMEOUT=\nrun --config app.toml\n```",
    "Crash when parsing an empty input\n\nTraceback (most recent call last):\n  \
     File \"/usr/src/app/main.py\", line 12, in <module>\n    parse(read_input())\n  \
     File \"/usr/src/app/parser.py\", line 88, in parse\n    return tokens[0]\n\
     IndexError: list index out of range",
    "Retries do not back off\n\nWhen the server answers 503 the client retries at once, \
     again and again, instead of waiting longer each time. The retry policy's delay seems \
     to be reset on every attempt. This floods the server during an outage.",
    "thread 'main' panicked at src/cache/store.rs:214:9:\ncalled `Option::unwrap()` on a \
     `None` value\n\nThe cache evicts an entry that a reader still holds; `Store::get` \
     should return a miss instead of panicking.",
];

/// Peak resident set size of this process, from /proc (Linux); 0 elsewhere.
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<f64>().ok())
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

pub fn index(common: Common, path: &Path, queries: usize, tasks: Option<&Path>) -> Result<u8> {
    let tasks = match tasks {
        Some(p) => read_tasks(p)?,
        None => TASKS.iter().map(|t| t.to_string()).collect(),
    };
    let tmp = std::env::temp_dir().join(format!("lode-bench-{}", std::process::id()));
    let result = run(&common, path, queries, &tasks, &tmp);
    let _ = std::fs::remove_dir_all(&tmp);
    let report = result?;
    if common.json {
        println!(
            "{}",
            lode_search::render::json("bench", &report, Vec::new())
        );
    } else {
        let c = &report.chunk_sizes;
        println!(
            "{}\n{} files, {:.1} MB, {} lines → {} chunks, {} symbols\nindex: {:.2} s ({:.0} files/s, {:.1} MB/s), peak RSS {:.0} MB, index {:.1} MB on disk\n\
             search (identifier): p50 {:.2} ms  p95 {:.2} ms  (n={})\nsearch (sentence):   p50 {:.2} ms  p95 {:.2} ms  (n={})\n\
             task (first pass):   p50 {:.2} ms  p95 {:.2} ms  (n={})\ntask (warm):         p50 {:.2} ms  p95 {:.2} ms\n\
             lexical (identifier): p50 {:.2} ms  p95 {:.2} ms\nlexical (sentence):   p50 {:.2} ms  p95 {:.2} ms\n\
             grep:                p50 {:.2} ms  p95 {:.2} ms  (n={})\n\
             callers (first):     p50 {:.2} ms  p95 {:.2} ms  (n={})\ncallers (warm):      p50 {:.2} ms  p95 {:.2} ms\n\
             whole call graph:    {:.0} ms, {} edges\nchunks: mean {:.0} B, p50 {} B, p90 {} B, p99 {} B, max {} B, mean {:.1} lines, {} over the hard cap",
            report.root,
            report.files,
            report.bytes as f64 / 1e6,
            report.lines,
            report.chunks,
            report.symbols,
            report.index_s,
            report.files_per_s,
            report.mb_per_s,
            report.peak_rss_mb,
            report.index_disk_mb,
            report.search_symbol.p50_ms,
            report.search_symbol.p95_ms,
            report.search_symbol.n,
            report.search_sentence.p50_ms,
            report.search_sentence.p95_ms,
            report.search_sentence.n,
            report.search_task_first.p50_ms,
            report.search_task_first.p95_ms,
            report.search_task_first.n,
            report.search_task_warm.p50_ms,
            report.search_task_warm.p95_ms,
            report.lexical_symbol.p50_ms,
            report.lexical_symbol.p95_ms,
            report.lexical_sentence.p50_ms,
            report.lexical_sentence.p95_ms,
            report.grep.p50_ms,
            report.grep.p95_ms,
            report.grep.n,
            report.callers_first.p50_ms,
            report.callers_first.p95_ms,
            report.callers_first.n,
            report.callers_warm.p50_ms,
            report.callers_warm.p95_ms,
            report.graph_build_ms,
            report.graph_edges,
            c.mean_bytes,
            c.p50_bytes,
            c.p90_bytes,
            c.p99_bytes,
            c.max_bytes,
            c.mean_lines,
            c.over_hard_cap
        );
    }
    Ok(0)
}

/// The `query` of each JSON line of `path`.
fn read_tasks(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let mut out = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        let v: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| Error::BadQuery(format!("{}:{}: {e}", path.display(), i + 1)))?;
        match v["query"].as_str() {
            Some(q) => out.push(q.to_string()),
            None => {
                return Err(Error::BadQuery(format!(
                    "{}:{}: no \"query\" string",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(out)
}

fn run(
    common: &Common,
    path: &Path,
    queries: usize,
    tasks: &[String],
    tmp: &Path,
) -> Result<BenchReport> {
    let config = match &common.config {
        Some(p) => Config::load(p)?,
        None => Config::default(),
    };
    let loc = IndexLocation::resolve(path, Some(tmp))?;
    let started = Instant::now();
    let report = lode_index::build(&loc, &BuildOptions::quiet(&config))?;
    let index_s = started.elapsed().as_secs_f64();
    let peak = peak_rss_mb();
    let index = Index::open(&loc)?;
    let conn = index.store().connection();
    let q = |sql: &str| {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| Error::BadQuery(e.to_string()))
    };
    let bytes = q("SELECT COALESCE(SUM(size), 0) FROM files WHERE skip_reason IS NULL")?;
    let lines = q("SELECT COALESCE(SUM(lines), 0) FROM files WHERE skip_reason IS NULL")?;

    let names = identifier_queries(&index, queries)?;
    let hybrid = SearchOptions::default();
    let lexical = SearchOptions {
        semantic: false,
        ..SearchOptions::default()
    };
    // One untimed pass warms the page cache and SQLite's statement cache.
    for n in names.iter().take(5) {
        lode_search::search(&index, n, &hybrid)?;
    }
    let sentences: Vec<&str> = std::iter::repeat_n(SENTENCES, (queries / SENTENCES.len()).max(1))
        .flatten()
        .copied()
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let symbol_ms = time_searches(&index, &names, &hybrid)?;
    let sentence_ms = time_searches(&index, &sentences, &hybrid)?;
    let task = SearchOptions {
        mode: Some(lode_search::Mode::Task),
        ..SearchOptions::default()
    };
    let tasks: Vec<&str> = tasks.iter().map(String::as_str).collect();
    let task_first_ms = time_searches(&index, &tasks, &task)?;
    let task_warm_ms = time_searches(&index, &tasks, &task)?;
    let lexical_symbol_ms = time_searches(&index, &names, &lexical)?;
    let lexical_sentence_ms = time_searches(&index, &sentences, &lexical)?;
    let grep_ms = PATTERNS
        .iter()
        .map(|p| time_ms(&mut || lode_search::grep(&index, p, &GrepOptions::default()).map(|_| ())))
        .collect::<Result<Vec<f64>>>()?;

    let resolver = lode_graph::Resolver::new(&index)?;
    let targets = caller_targets(&index, &names)?;
    let callers_pass = || -> Result<Vec<f64>> {
        targets
            .iter()
            .map(|s| time_ms(&mut || resolver.callers(s).map(|_| ())))
            .collect()
    };
    let callers_first = callers_pass()?;
    let callers_warm = callers_pass()?;
    let started = Instant::now();
    let graph = lode_graph::SymbolGraph::build(&lode_graph::Resolver::preloaded(&index)?)?;
    let graph_build_ms = started.elapsed().as_secs_f64() * 1000.0;

    let chunk_sizes = chunk_sizes(&index)?;
    Ok(BenchReport {
        root: loc.root.display().to_string(),
        files: report.files,
        bytes,
        lines,
        chunks: report.chunks,
        symbols: report.symbols,
        index_s,
        files_per_s: report.files as f64 / index_s,
        mb_per_s: bytes as f64 / 1e6 / index_s,
        peak_rss_mb: peak,
        index_disk_mb: index.disk_bytes() as f64 / 1e6,
        search_symbol: percentiles(symbol_ms),
        search_sentence: percentiles(sentence_ms),
        search_task_first: percentiles(task_first_ms),
        search_task_warm: percentiles(task_warm_ms),
        lexical_symbol: percentiles(lexical_symbol_ms),
        lexical_sentence: percentiles(lexical_sentence_ms),
        grep: percentiles(grep_ms),
        callers_first: percentiles(callers_first),
        callers_warm: percentiles(callers_warm),
        graph_build_ms,
        graph_edges: graph.edges,
        chunk_sizes,
    })
}

/// Identifier queries: `queries` symbol names spread evenly over the index.
fn identifier_queries(index: &Index, queries: usize) -> Result<Vec<String>> {
    let mut stmt = index
        .store()
        .connection()
        .prepare("SELECT name FROM symbols WHERE length(name) > 3 ORDER BY id")
        .map_err(|e| Error::BadQuery(e.to_string()))?;
    let all: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(|e| Error::BadQuery(e.to_string()))?
        .filter_map(|r| r.ok())
        .collect();
    let step = (all.len() / queries.max(1)).max(1);
    Ok(all.into_iter().step_by(step).take(queries).collect())
}

/// The functions and methods `names` name (the first definition of each),
/// whose callers are timed.
fn caller_targets(index: &Index, names: &[&str]) -> Result<Vec<lode_index::SymbolRow>> {
    let callable = |k: SymbolKind| matches!(k, SymbolKind::Function | SymbolKind::Method);
    let mut targets = Vec::new();
    for n in names {
        if let Some(s) = index
            .symbols_named(n)?
            .into_iter()
            .find(|s| callable(s.kind))
        {
            targets.push(s);
        }
    }
    Ok(targets)
}

/// How long `f` takes, in milliseconds.
fn time_ms(f: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    let t = Instant::now();
    f()?;
    Ok(t.elapsed().as_secs_f64() * 1000.0)
}

/// The distribution of chunk sizes, in bytes and lines.
fn chunk_sizes(index: &Index) -> Result<ChunkSizes> {
    let conn = index.store().connection();
    let q = |sql: &str| {
        conn.query_row(sql, [], |r| r.get::<_, i64>(0))
            .map(|n| n as u64)
            .map_err(|e| Error::BadQuery(e.to_string()))
    };
    let mut sizes: Vec<u64> = {
        let mut stmt = conn
            .prepare("SELECT end_byte - start_byte FROM chunks")
            .map_err(|e| Error::BadQuery(e.to_string()))?;
        stmt.query_map([], |r| r.get::<_, i64>(0))
            .map_err(|e| Error::BadQuery(e.to_string()))?
            .filter_map(|r| r.ok())
            .map(|n| n as u64)
            .collect()
    };
    sizes.sort_unstable();
    let pct = |p: f64| {
        sizes
            .get(((sizes.len() as f64 - 1.0) * p).round() as usize)
            .copied()
            .unwrap_or(0)
    };
    let total_lines = q("SELECT COALESCE(SUM(end_line - start_line + 1), 0) FROM chunks")?;
    Ok(ChunkSizes {
        count: sizes.len() as u64,
        mean_bytes: sizes.iter().sum::<u64>() as f64 / sizes.len().max(1) as f64,
        p50_bytes: pct(0.5),
        p90_bytes: pct(0.9),
        p99_bytes: pct(0.99),
        max_bytes: sizes.last().copied().unwrap_or(0),
        mean_lines: total_lines as f64 / sizes.len().max(1) as f64,
        over_hard_cap: sizes.iter().filter(|&&s| s > lode_parse_hard_cap()).count() as u64,
    })
}

/// Milliseconds each search took, in order.
fn time_searches(index: &Index, queries: &[&str], opts: &SearchOptions) -> Result<Vec<f64>> {
    queries
        .iter()
        .map(|q| {
            let t = Instant::now();
            lode_search::search(index, q, opts)?;
            Ok(t.elapsed().as_secs_f64() * 1000.0)
        })
        .collect()
}

fn lode_parse_hard_cap() -> u64 {
    lode_parse::HARD_CAP_BYTES as u64
}
