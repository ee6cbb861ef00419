//! `lode mcp` under load: 8 concurrent clients of one server (8 tasks sharing
//! its stdio connection — a stdio server has one — each with calls in
//! flight at once) make mixed calls while a writer creates, edits and
//! deletes files in the repository. Asserted: no call fails, each answer is
//! the right one, no answer is stale (after each change a query sees exactly
//! the files on disk), and the server's resident memory stays flat.
//!
//! `load_ci` is 8 × 100 calls. The full 8 × 1,000 is `load_full`, ignored
//! by default: `cargo test -p lode-cli --test it -- mcp_load:: --ignored
//! --nocapture` (figures in docs/benchmarks.md). `LODE_LOAD_CALLS=N`
//! overrides the per-client count of either, `LODE_LOAD_CLIENTS=N` the
//! number of clients, and `LODE_LOAD_TREE=DIR` runs on a copy of another
//! tree: its calls are then made from what a first search finds there, and
//! checked for an answer rather than for the fixture's.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::Repo;
use lode_test_support::mcp::{call, structured};
use rmcp::ServiceExt;
use rmcp::service::{Peer, RoleClient};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const CLIENTS: usize = 8;
const TOOLS: [&str; 5] = ["search", "grep", "outline", "callers", "show"];

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// What a client's calls ask: the fixture's, with the answers they must
/// show, or what a first search of another tree found there.
#[derive(Clone)]
enum Calls {
    Shop,
    Found { file: String, symbol: String },
}

impl Calls {
    /// Call `i`: its tool, arguments, and what the answer must show.
    fn call(&self, i: usize) -> (&'static str, Value, fn(&Value) -> bool) {
        match self {
            Calls::Shop => mixed_call(i),
            Calls::Found { file, symbol } => {
                let answered: fn(&Value) -> bool = |s| s.is_object();
                let (tool, args) = match i % TOOLS.len() {
                    0 => (
                        "search",
                        json!({"query": "spawn a blocking task", "top_k": 5}),
                    ),
                    1 => ("grep", json!({"pattern": format!("fn {symbol}\\b")})),
                    2 => ("outline", json!({"path": file})),
                    3 => ("callers", json!({"symbol": symbol, "path": file})),
                    _ => ("show", json!({"symbol": symbol, "path": file})),
                };
                (tool, args, answered)
            }
        }
    }
}

/// Call `i` of a client on the fixture: its tool, arguments, and what the answer must show.
fn mixed_call(i: usize) -> (&'static str, Value, fn(&Value) -> bool) {
    match i % TOOLS.len() {
        0 => (
            "search",
            json!({"query": "apply_discount", "top_k": 5}),
            |s| s["hits"][0]["symbol"] == "apply_discount",
        ),
        1 => ("grep", json!({"pattern": "def apply_discount"}), |s| {
            s["groups"][0]["path"] == "src/shop/pricing.py"
        }),
        2 => ("outline", json!({"path": "src/shop/cart.py"}), |s| {
            s["symbols"][0]["name"] == "Cart"
        }),
        3 => ("callers", json!({"symbol": "apply_discount"}), |s| {
            s["children"].as_array().is_some_and(|c| !c.is_empty())
        }),
        _ => ("show", json!({"symbol": "Cart::total"}), |s| {
            s["symbol"]["name"] == "total"
        }),
    }
}

/// The markers `grep` finds under `src/gen`, as `(path, marker)`.
async fn markers_seen(peer: &Peer<RoleClient>) -> BTreeSet<(String, String)> {
    let r = call(
        peer,
        "grep",
        json!({"pattern": "def marker_[0-9]+", "path": "src/gen"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let mut seen = BTreeSet::new();
    for g in structured(&r)["groups"].as_array().unwrap() {
        for l in g["lines"].as_array().unwrap() {
            let text = l["text"].as_str().unwrap();
            let marker = text.trim_start_matches("def ").split('(').next().unwrap();
            seen.insert((g["path"].as_str().unwrap().to_string(), marker.to_string()));
        }
    }
    seen
}

struct Figures {
    clients: usize,
    calls: usize,
    changes: usize,
    elapsed: Duration,
    latencies: BTreeMap<&'static str, Vec<Duration>>,
    rss_start_kib: u64,
    rss_end_kib: u64,
    rss_max_kib: u64,
    /// Samples taken by the writer after each change: (seconds, KiB).
    rss_samples: Vec<(f64, u64)>,
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

fn report(f: &mut Figures) {
    eprintln!(
        "{} calls by {} clients and {} file changes in {:.2} s ({:.0} calls/s)",
        f.calls,
        f.clients,
        f.changes,
        f.elapsed.as_secs_f64(),
        f.calls as f64 / f.elapsed.as_secs_f64()
    );
    for (tool, l) in f.latencies.iter_mut() {
        l.sort();
        eprintln!(
            "  {tool:<8} n={:<5} p50 {:>7.2} ms  p95 {:>7.2} ms  max {:>7.2} ms",
            l.len(),
            percentile(l, 50).as_secs_f64() * 1e3,
            percentile(l, 95).as_secs_f64() * 1e3,
            l.last().unwrap().as_secs_f64() * 1e3
        );
    }
    eprintln!(
        "  server RSS: {:.1} MiB after warm-up, {:.1} MiB at the end, {:.1} MiB at most",
        f.rss_start_kib as f64 / 1024.0,
        f.rss_end_kib as f64 / 1024.0,
        f.rss_max_kib as f64 / 1024.0
    );
    // Growth over time: the sample nearest each quarter of the run.
    let quarters: Vec<String> = (1..=4)
        .filter_map(|q| {
            let at = f.elapsed.as_secs_f64() * q as f64 / 4.0;
            f.rss_samples
                .iter()
                .min_by(|a, b| (a.0 - at).abs().total_cmp(&(b.0 - at).abs()))
                .map(|s| format!("{:.0} s {:.1} MiB", s.0, s.1 as f64 / 1024.0))
        })
        .collect();
    eprintln!("  server RSS by quarter: {}", quarters.join(", "));
}

async fn run_load(default_calls: usize) -> Figures {
    let calls_per_client = env_count("LODE_LOAD_CALLS", default_calls);
    let clients = env_count("LODE_LOAD_CLIENTS", CLIENTS);
    let tree = std::env::var_os("LODE_LOAD_TREE");
    let repo = match &tree {
        Some(dir) => {
            let repo = Repo::empty();
            lode_test_support::copy_dir(std::path::Path::new(dir), repo.root());
            repo
        }
        None => Repo::fixture("shop"),
    };
    repo.write("src/gen/keep.py", "def marker_0():\n    return 0\n");
    let mut cmd = repo.command(&["mcp"]);
    cmd.stderr(Stdio::null());
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let pid = transport.id().expect("the server's pid");
    let client = ().serve(transport).await.expect("initialize");
    let peer = client.peer().clone();

    let calls = match tree {
        None => Calls::Shop,
        Some(_) => {
            // The first call indexes; its best function hit gives the others.
            let r = call(
                &peer,
                "search",
                json!({"query": "spawn a blocking task", "top_k": 20}),
            )
            .await;
            let hit = structured(&r)["hits"]
                .as_array()
                .and_then(|h| {
                    h.iter()
                        .find(|h| h["kind"] == "function" || h["kind"] == "method")
                })
                .cloned()
                .expect("a function among the first hits");
            Calls::Found {
                file: hit["path"].as_str().unwrap().to_string(),
                symbol: hit["symbol"].as_str().unwrap().to_string(),
            }
        }
    };
    // Warm-up: the first call indexes, and each tool fills its caches once.
    for i in 0..TOOLS.len() {
        let (tool, args, _) = calls.call(i);
        let r = call(&peer, tool, args.clone()).await;
        assert_ne!(r.is_error, Some(true), "{tool} {args}: {r:?}");
    }
    let rss_start_kib = rss_kib(pid);
    let started = Instant::now();

    let workers: Vec<_> = (0..clients)
        .map(|c| {
            let peer = peer.clone();
            let calls = calls.clone();
            tokio::spawn(async move {
                let mut latencies: Vec<(&'static str, Duration)> = Vec::new();
                for i in 0..calls_per_client {
                    let (tool, args, expected) = calls.call(c + i);
                    let t = Instant::now();
                    let r = call(&peer, tool, args.clone()).await;
                    latencies.push((tool, t.elapsed()));
                    assert_ne!(
                        r.is_error,
                        Some(true),
                        "client {c} call {i} {tool} {args}: {r:?}"
                    );
                    let s = structured(&r);
                    assert!(expected(s), "client {c} call {i} {tool} {args}: {s}");
                }
                latencies
            })
        })
        .collect();
    let done = std::sync::atomic::AtomicBool::new(false);
    let writer = async {
        // What is on disk under src/gen: path → marker.
        let mut on_disk: BTreeMap<String, String> =
            [("src/gen/keep.py".to_string(), "marker_0".to_string())].into();
        let mut changes = 0usize;
        let mut samples: Vec<(f64, u64)> = Vec::new();
        let mut n = 0usize;
        while !done.load(std::sync::atomic::Ordering::Relaxed) {
            n += 1;
            let path = format!("src/gen/m{}.py", n % 4);
            if n.is_multiple_of(3) && on_disk.contains_key(&path) {
                std::fs::remove_file(repo.path(&path)).unwrap();
                on_disk.remove(&path);
            } else {
                // A create, or an edit of the file in that slot (a new marker;
                // the body's length changes with n, so does the size).
                let marker = format!("marker_{n}");
                repo.write(
                    &path,
                    format!("def {marker}():\n    return {}\n", "1".repeat(n % 7 + 1)),
                );
                on_disk.insert(path, marker);
            }
            changes += 1;
            // The change has landed: the next query must see exactly it.
            let expected: BTreeSet<(String, String)> = on_disk
                .iter()
                .map(|(p, m)| (p.clone(), m.clone()))
                .collect();
            assert_eq!(
                markers_seen(&peer).await,
                expected,
                "after change {changes}"
            );
            samples.push((started.elapsed().as_secs_f64(), rss_kib(pid)));
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        (changes, samples)
    };
    let all_workers = async {
        let mut out = Vec::new();
        for w in workers {
            // A worker's failed assertion is its panic: re-raised here.
            out.push(
                w.await
                    .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic())),
            );
        }
        done.store(true, std::sync::atomic::Ordering::Relaxed);
        out
    };
    let (results, (changes, rss_samples)) = tokio::join!(all_workers, writer);
    let elapsed = started.elapsed();
    let rss_end_kib = rss_kib(pid);
    client.cancel().await.unwrap();

    let mut latencies: BTreeMap<&'static str, Vec<Duration>> = BTreeMap::new();
    for (tool, d) in results.into_iter().flatten() {
        latencies.entry(tool).or_default().push(d);
    }
    Figures {
        clients,
        calls: clients * calls_per_client,
        changes,
        elapsed,
        latencies,
        rss_start_kib,
        rss_end_kib,
        rss_max_kib: rss_samples
            .iter()
            .map(|s| s.1)
            .max()
            .unwrap_or(0)
            .max(rss_end_kib),
        rss_samples,
    }
}

fn assert_flat_memory(f: &Figures) {
    assert!(f.rss_start_kib > 0, "no /proc/<pid>/status");
    // Bounded growth: caches are bounded and reset with each new index
    // state; what grows per call would show as tens of MiB here.
    let growth = f.rss_end_kib.saturating_sub(f.rss_start_kib);
    assert!(
        growth < 48 * 1024,
        "server RSS grew by {} KiB ({} → {})",
        growth,
        f.rss_start_kib,
        f.rss_end_kib
    );
}

#[tokio::test]
async fn load_ci() {
    let mut f = run_load(100).await;
    report(&mut f);
    assert!(f.changes > 0, "the writer changed nothing");
    assert_flat_memory(&f);
}

#[tokio::test]
#[ignore = "8 × 1,000 calls, about a minute: run with --ignored (docs/benchmarks.md)"]
async fn load_full() {
    let mut f = run_load(1_000).await;
    report(&mut f);
    assert!(f.changes > 0);
    assert_flat_memory(&f);
}
