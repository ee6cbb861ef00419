//! MCP round-trip latency of `lode mcp` on a repository: a benchmark, not a test.
//!
//! ```sh
//! cargo build --release -p lode-cli
//! cargo run --release -p lode-mcp --example bench -- target/release/lode /path/to/repo [ROUNDS]
//! ```
//!
//! Spawns the real server with the rmcp client over stdio (its own temporary
//! cache), makes the first call (which indexes), warms each query once, then
//! times ROUNDS (default 20) passes over the queries below: `search` round
//! trips with the stat pass (the default), the same against a second server
//! with `--no-refresh` (what a file watcher will allow), `grep`, and the same
//! `search` calls in process (`Server::call`, no protocol) to separate the
//! protocol's share. Prints p50/p95/mean in milliseconds.
//!
//! With EDIT_FILE (a path relative to the repository, which must be a copy:
//! the file is rewritten and restored), it also times a `search` sent right
//! after the file is rewritten in place with a new identifier, as an agent's
//! edit tool does, and checks that the answer finds the new identifier:
//!
//! ```sh
//! cargo run --release -p lode-mcp --example bench -- target/release/lode /path/to/copy 20 src/lib.rs
//! ```

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;

use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

mod common;

use common::{PATTERNS, QUERIES};

type Client = RunningService<RoleClient, ()>;

async fn connect(lode: &Path, root: &Path, cache: &Path, extra: &[&str]) -> Client {
    let mut cmd = tokio::process::Command::new(lode);
    cmd.arg("mcp")
        .arg("--root")
        .arg(root)
        .arg("--cache-dir")
        .arg(cache)
        .args(extra)
        .stderr(Stdio::null());
    ().serve(TokioChildProcess::new(cmd).expect("spawn lode mcp"))
        .await
        .expect("initialize")
}

async fn round_trip(client: &Client, tool: &str, args: Value) -> f64 {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().unwrap().clone());
    let started = Instant::now();
    let r = client.call_tool(params).await.expect("tool result");
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_ne!(r.is_error, Some(true), "{tool} failed: {:?}", r.content);
    ms
}

fn report(label: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    println!(
        "{label:<34} p50 {:>6.2} ms  p95 {:>6.2} ms  mean {:>6.2} ms  (n={})",
        at(0.5),
        at(0.95),
        mean,
        ms.len()
    );
}

/// Rewrites `file` in place `rounds` times, each time with a new identifier
/// on its last line, and times the search for it sent right after; restores
/// the file.
async fn after_edits(client: &Client, file: &Path, rounds: usize) -> Vec<f64> {
    let original = std::fs::read_to_string(file).expect("EDIT_FILE readable");
    let mut ms = Vec::new();
    for n in 0..rounds {
        let marker = format!("lodebenchedit{n}x{}", std::process::id());
        let text = format!("{original}\n// {marker}\n");
        // In place: truncate and write, as editors' save-in-place and agents' tools do.
        std::fs::write(file, text).unwrap();
        let params = CallToolRequestParams::new("search".to_string())
            .with_arguments(json!({ "query": marker }).as_object().unwrap().clone());
        let started = Instant::now();
        let r = client.call_tool(params).await.expect("tool result");
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        let found = serde_json::to_string(&r.content).unwrap();
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(found.contains(name), "the edit was not seen: {found}");
        // Let the watcher's own refresh settle, as between an agent's turns.
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    }
    std::fs::write(file, original).unwrap();
    ms
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(lode), Some(root)) = (args.next(), args.next()) else {
        eprintln!("usage: bench LODE_BINARY REPOSITORY [ROUNDS]");
        std::process::exit(2);
    };
    let rounds: usize = args.next().map_or(20, |r| r.parse().expect("ROUNDS"));
    let edit_file = args.next();
    let (lode, root) = (PathBuf::from(lode), PathBuf::from(root));
    let cache = tempfile::tempdir().unwrap();

    let client = connect(&lode, &root, cache.path(), &[]).await;
    let tools = client.list_tools(None).await.unwrap();
    println!(
        "tools/list result: {} characters",
        serde_json::to_string(&tools).unwrap().chars().count()
    );
    let first = round_trip(&client, "search", json!({"query": QUERIES[0]})).await;
    println!("first search (indexes the repository): {first:.0} ms");
    for q in QUERIES {
        round_trip(&client, "search", json!({ "query": q })).await;
    }

    let mut search = Vec::new();
    for _ in 0..rounds {
        for q in QUERIES {
            search.push(round_trip(&client, "search", json!({ "query": q })).await);
        }
    }
    report("search round trip (stat pass)", search);

    let mut grep = Vec::new();
    for _ in 0..rounds {
        for p in PATTERNS {
            grep.push(round_trip(&client, "grep", json!({ "pattern": p })).await);
        }
    }
    report("grep round trip (stat pass)", grep);
    if let Some(rel) = &edit_file {
        report(
            "search right after an in-place edit",
            after_edits(&client, &root.join(rel), rounds).await,
        );
    }
    client.cancel().await.unwrap();

    let quiet = connect(&lode, &root, cache.path(), &["--no-refresh"]).await;
    for q in QUERIES {
        round_trip(&quiet, "search", json!({ "query": q })).await;
    }
    let mut no_refresh = Vec::new();
    for _ in 0..rounds {
        for q in QUERIES {
            no_refresh.push(round_trip(&quiet, "search", json!({ "query": q })).await);
        }
    }
    report("search round trip (--no-refresh)", no_refresh);
    quiet.cancel().await.unwrap();

    in_process(&root, cache.path(), rounds);
    stat_pass_parts(&root, cache.path(), rounds);
}

/// The search tool called in process: the tool without the protocol.
fn in_process(root: &Path, cache: &Path, rounds: usize) {
    let mut options = lode_mcp::Options::new(vec![root.to_path_buf()]);
    options.cache_dir = Some(cache.to_path_buf());
    let server = lode_mcp::Server::new(options).unwrap();
    let call = |q: &str| {
        let args = json!({ "query": q }).as_object().unwrap().clone();
        let started = Instant::now();
        let r = server.call("search", args).unwrap();
        assert_ne!(r.is_error, Some(true));
        started.elapsed().as_secs_f64() * 1000.0
    };
    QUERIES.iter().for_each(|q| {
        call(q);
    });
    let mut in_process = Vec::new();
    for _ in 0..rounds {
        for q in QUERIES {
            in_process.push(call(q));
        }
    }
    report("search in process (stat pass)", in_process);
}

/// The parts of the stat pass that every call pays.
fn stat_pass_parts(root: &Path, cache: &Path, rounds: usize) {
    let config = lode_core::Config::default();
    let loc = lode_index::IndexLocation::resolve(root, Some(cache)).unwrap();
    let (mut open, mut walk, mut diff) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds * 5 {
        let t = Instant::now();
        let index = lode_index::Index::open(&loc).unwrap();
        let _ = index.store().meta(lode_index::Meta::Fingerprint).unwrap();
        open.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let walked = lode_index::walk(&loc.root, &config.files).unwrap();
        walk.push(t.elapsed().as_secs_f64() * 1000.0);
        let t = Instant::now();
        let manifest = index.store().manifest().unwrap();
        assert!(lode_index::incremental::stat_diff(&walked, &manifest).is_empty());
        diff.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    report("  stat pass: open index + meta", open);
    report("  stat pass: walk", walk);
    report("  stat pass: manifest + diff", diff);
}
