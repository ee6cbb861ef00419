//! Warm task-mode queries alone, on an index built beforehand: `cargo run
//! --release -p lode-search --example warm_task -- ROOT TASKS [ROUNDS]`
//! (`LODE_CACHE_DIR` as for `lode`; TASKS: JSON lines with a `query`
//! field, as the SWE-bench cases). A first round reads postings, rows and
//! vectors; each further round times every task again. Prints p50 / p95 /
//! mean per round, for profiling the task path without the rest of `lode
//! bench index`.

use std::time::Instant;

use lode_search::TaskOptions;

fn main() {
    let mut args = std::env::args().skip(1);
    let root = std::path::PathBuf::from(args.next().expect("ROOT"));
    let tasks = std::fs::read_to_string(args.next().expect("TASKS")).expect("readable TASKS");
    let rounds: usize = args.next().map_or(3, |r| r.parse().unwrap());
    let tasks: Vec<String> = tasks
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            v["query"].as_str().expect("a query string").to_string()
        })
        .collect();
    let loc = lode_index::IndexLocation::resolve(&root, None).unwrap();
    let index = lode_index::Index::open(&loc).unwrap();
    let opts = TaskOptions::default();
    for round in 0..rounds {
        let mut ms: Vec<f64> = tasks
            .iter()
            .map(|t| {
                let start = Instant::now();
                lode_search::task_search(&index, t, &opts).unwrap();
                start.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        ms.sort_by(f64::total_cmp);
        let at = |p: f64| ms[((ms.len() - 1) as f64 * p).round() as usize];
        println!(
            "round {round}: p50 {:.2} ms, p95 {:.2} ms, mean {:.2} ms (n={})",
            at(0.5),
            at(0.95),
            ms.iter().sum::<f64>() / ms.len() as f64,
            ms.len()
        );
    }
}
