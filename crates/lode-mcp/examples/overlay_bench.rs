//! What an overlay adds to a call, in process (`Server::call`, no protocol):
//! a benchmark, not a test.
//!
//! ```sh
//! cargo run --release -p lode-mcp --example overlay_bench -- /path/to/repo [ROUNDS]
//! ```
//!
//! Indexes the repository into a temporary cache, then serves it with
//! `no_refresh` (so the stat pass, which an overlay does not change, does not
//! blur the difference) and times ROUNDS (default 20) passes of each call
//! three ways: plain; with a small overlay (one file edited, one deleted, one
//! new) that is already cached; and with an overlay that differs each time
//! (parsed and embedded on every call). Prints p50/p95/mean in milliseconds.

use std::path::PathBuf;
use std::time::Instant;

use lode_core::Config;
use lode_index::{BuildOptions, IndexLocation};
use lode_mcp::{Options, Server};
use serde_json::{Value, json};

mod common;

use common::{PATTERNS, QUERIES};

fn stats(name: &str, mut ms: Vec<f64>) {
    ms.sort_by(f64::total_cmp);
    let p = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    let mean = ms.iter().sum::<f64>() / ms.len() as f64;
    println!(
        "{name:<44} p50 {:>7.2} ms  p95 {:>7.2} ms  mean {:>7.2} ms  (n={})",
        p(0.5),
        p(0.95),
        mean,
        ms.len()
    );
}

fn timed(server: &Server, tool: &str, args: &Value) -> f64 {
    let t = Instant::now();
    let r = server
        .call(tool, args.as_object().unwrap().clone())
        .expect("a tool");
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    assert_ne!(r.is_error, Some(true), "{tool} {args}: {r:?}");
    ms
}

fn main() {
    let mut args = std::env::args().skip(1);
    let root = PathBuf::from(args.next().expect("usage: overlay_bench REPO [ROUNDS]"));
    let rounds: usize = args.next().map_or(20, |r| r.parse().expect("ROUNDS"));
    let cache = tempfile::tempdir().unwrap();
    let config = Config::default();
    let loc = IndexLocation::resolve(&root, Some(cache.path())).unwrap();
    let t = Instant::now();
    let report = lode_index::build(&loc, &BuildOptions::quiet(&config)).unwrap();
    println!(
        "indexed {} files, {} chunks in {:.1} s",
        report.files,
        report.chunks,
        t.elapsed().as_secs_f64()
    );

    // The overlay: the first two mid-sized Rust files, one edited and one
    // deleted, and one new file.
    let walk = lode_index::walk(&loc.root, &config.files).unwrap();
    let picked: Vec<&lode_index::WalkedFile> = walk
        .files
        .iter()
        .filter(|f| f.path.ends_with(".rs") && (2_000..20_000).contains(&f.size))
        .take(2)
        .collect();
    let edited = &picked[0].path;
    let deleted = &picked[1].path;
    let text = std::fs::read_to_string(loc.root.join(&picked[0].path)).unwrap();
    let overlay = |salt: usize| {
        json!({
            edited.clone(): format!("{text}\n/// Probe {salt}.\npub fn overlay_probe_{salt}() -> usize {{ {salt} }}\n"),
            deleted.clone(): null,
            "src/overlay_probe.rs": format!("//! A new module.\n\n/// Spawns nothing.\npub fn probe_spawn(n: usize) -> usize {{\n    n + {salt}\n}}\n"),
        })
    };
    let bytes = overlay(0).to_string().len();
    println!("overlay: {edited} edited, {deleted} deleted, one new file ({bytes} bytes of JSON)");

    let mut options = Options::new(vec![root.clone()]);
    options.cache_dir = Some(cache.path().to_path_buf());
    options.no_refresh = true;
    let server = Server::new(options).unwrap();

    let with = |mut a: Value, ov: Value| {
        a["overlay"] = ov;
        a
    };
    let calls: Vec<(&str, Value)> = QUERIES
        .iter()
        .map(|q| ("search", json!({"query": q})))
        .chain(PATTERNS.iter().map(|p| ("grep", json!({"pattern": p}))))
        .chain([("outline", json!({"path": edited}))])
        .collect();
    // Warm-up: caches, model, the overlay layer of salt 0.
    for (tool, a) in &calls {
        timed(&server, tool, a);
        timed(&server, tool, &with(a.clone(), overlay(0)));
    }
    for tool in ["search", "grep", "outline"] {
        let (mut plain, mut cached, mut fresh) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..rounds {
            for (i, (t, a)) in calls.iter().enumerate().filter(|(_, c)| c.0 == tool) {
                plain.push(timed(&server, t, a));
                cached.push(timed(&server, t, &with(a.clone(), overlay(0))));
                let salt = 1 + round * calls.len() + i;
                fresh.push(timed(&server, t, &with(a.clone(), overlay(salt))));
            }
        }
        stats(&format!("{tool}: plain"), plain);
        stats(&format!("{tool}: overlay, cached layer"), cached);
        stats(&format!("{tool}: overlay, parsed this call"), fresh);
    }
}
