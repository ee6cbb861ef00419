//! Warm lexical queries alone, on an index built beforehand: `cargo run
//! --release -p lode-search --example warm_lexical -- ROOT [ROUNDS [DUMP]]`
//! (`LODE_CACHE_DIR` as for `lode`). The queries are those of `lode bench
//! index` (200 symbol names spread over the index); a first round reads
//! their postings and rows, then each round times every query again. Prints p50 / p95 / mean
//! and the CPU time per query.

use std::time::Instant;

use lode_search::SearchOptions;

fn main() {
    let mut args = std::env::args().skip(1);
    let root = std::path::PathBuf::from(args.next().expect("ROOT"));
    let rounds: usize = args.next().map_or(5, |r| r.parse().unwrap());
    // With a file: the hits of the first pass and of a last, untimed one are
    // written to it (to compare two builds' rankings).
    let dump = args.next();
    let loc = lode_index::IndexLocation::resolve(&root, None).unwrap();
    let index = lode_index::Index::open(&loc).unwrap();
    let all: Vec<String> = {
        let conn = index.store().connection();
        let mut stmt = conn
            .prepare("SELECT name FROM symbols WHERE length(name) > 3 ORDER BY id")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let queries = 200;
    let step = (all.len() / queries).max(1);
    let names: Vec<&String> = all.iter().step_by(step).take(queries).collect();
    let lexical = SearchOptions {
        semantic: false,
        ..SearchOptions::default()
    };
    // The first pass: each query's postings and rows read for the first
    // time (bar what earlier queries shared).
    let mut first_hits = Vec::new();
    let mut first: Vec<f64> = names
        .iter()
        .map(|n| {
            let t = Instant::now();
            let r = lode_search::search(&index, n, &lexical).unwrap();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            first_hits.push(format!(
                "{n}\t{:?}\n",
                r.hits
                    .iter()
                    .map(|h| (&h.path, h.start_line, h.score))
                    .collect::<Vec<_>>()
            ));
            ms
        })
        .collect();
    first.sort_by(f64::total_cmp);
    println!(
        "first pass: p50 {:.3} ms, mean {:.3} ms",
        first[first.len() / 2],
        first.iter().sum::<f64>() / first.len() as f64
    );
    let mut ms = Vec::new();
    let cpu_before = cpu_ns();
    for _ in 0..rounds {
        for n in &names {
            let t = Instant::now();
            lode_search::search(&index, n, &lexical).unwrap();
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    let cpu_ms = (cpu_ns() - cpu_before) as f64 / 1e6 / ms.len() as f64;
    if let Some(path) = dump {
        let mut out = String::new();
        for n in &names {
            let r = lode_search::search(&index, n, &lexical).unwrap();
            for h in &r.hits {
                out.push_str(&format!(
                    "{n}\t{}:{}-{}\t{}\t{}\n",
                    h.path, h.start_line, h.end_line, h.score, r.candidates
                ));
            }
        }
        std::fs::write(path, format!("{}{out}", first_hits.concat())).unwrap();
    }
    ms.sort_by(f64::total_cmp);
    let at = |q: f64| ms[((ms.len() - 1) as f64 * q).round() as usize];
    println!(
        "{} queries × {rounds}: p50 {:.3} ms, p95 {:.3} ms, mean {:.3} ms, CPU {cpu_ms:.3} ms per query",
        names.len(),
        at(0.5),
        at(0.95),
        ms.iter().sum::<f64>() / ms.len() as f64
    );
}

/// This process's CPU time so far, in nanoseconds (Linux; 0 elsewhere):
/// less disturbed than wall time by other work on the machine.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
