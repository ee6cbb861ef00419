//! Precision and recall of call resolution against hand-labelled edges
//! (`tests/fixtures/edges/<lang>/edges.json`, described in its README).
//!
//! Run with `--nocapture` to see the per-language table that
//! `docs/benchmarks.md` quotes.

use std::collections::HashMap;
use std::path::Path;

use lode_core::Config;
use lode_graph::{Binding, Resolution, Resolver};
use lode_index::{BuildOptions, Index, IndexLocation};
use serde_json::Value;

const LANGUAGES: [&str; 6] = ["python", "typescript", "go", "rust", "java", "cpp"];

#[derive(Default, Debug, Clone, Copy)]
struct Score {
    /// Labelled calls to a local definition.
    local: usize,
    /// …of which the resolver bound to the right definition (any tier).
    found: usize,
    /// …of which by a tier other than a bare name match.
    found_certain: usize,
    /// Edges the resolver produced by a certain tier (one per target).
    certain_edges: usize,
    /// …that were right.
    certain_right: usize,
    /// Name-only edges produced, and right.
    name_edges: usize,
    name_right: usize,
    /// Calls labelled external/built-in that were bound by a certain tier.
    external_bound: usize,
}

impl Score {
    fn add(&mut self, o: Score) {
        self.local += o.local;
        self.found += o.found;
        self.found_certain += o.found_certain;
        self.certain_edges += o.certain_edges;
        self.certain_right += o.certain_right;
        self.name_edges += o.name_edges;
        self.name_right += o.name_right;
        self.external_bound += o.external_bound;
    }
    fn precision(&self) -> f64 {
        self.certain_right as f64 / self.certain_edges.max(1) as f64
    }
    fn recall(&self) -> f64 {
        self.found as f64 / self.local.max(1) as f64
    }
}

fn parse_loc(s: &str) -> (String, u32) {
    let (p, l) = s.rsplit_once(':').expect("path:line");
    (p.to_string(), l.parse().expect("line"))
}

fn score_language(lang: &str, misses: &mut Vec<String>) -> Score {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/edges")
        .join(lang);
    let labels: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("edges.json")).unwrap()).unwrap();
    // (path, line, callee) → accepted target lines (definition, declaration).
    let mut expected: HashMap<(String, u32, String), Vec<(String, u32)>> = HashMap::new();
    for e in labels["edges"].as_array().unwrap() {
        let (path, line) = parse_loc(e["site"].as_str().unwrap());
        let callee = e["callee"].as_str().unwrap().to_string();
        let mut targets = Vec::new();
        for key in ["target", "declaration"] {
            if let Some(t) = e[key].as_str() {
                targets.push(parse_loc(t));
            }
        }
        expected.insert((path, line, callee), targets);
    }

    let cache = tempfile::tempdir().unwrap();
    let loc = IndexLocation::resolve(&dir, Some(cache.path())).unwrap();
    let config = Config::default();
    lode_index::build(&loc, &BuildOptions::quiet(&config)).unwrap();
    let index = Index::open(&loc).unwrap();
    let resolver = Resolver::new(&index).unwrap();

    let mut s = Score::default();
    let mut seen = std::collections::HashSet::new();
    for call in index.all_calls().unwrap() {
        let key = (call.path.clone(), call.line, call.callee.clone());
        let Some(want) = expected.get(&key) else {
            continue;
        };
        seen.insert(key.clone());
        let hits = |t: &lode_index::SymbolRow| {
            want.iter()
                .any(|(p, l)| *p == t.path && t.start_line <= *l && *l <= t.end_line)
        };
        let binding = resolver.resolve(&call).unwrap();
        if !want.is_empty() {
            s.local += 1;
        }
        match &binding {
            Binding::Targets(ts, how) => {
                let right = ts.iter().filter(|t| hits(t)).count();
                if *how == Resolution::Name {
                    s.name_edges += ts.len();
                    s.name_right += right;
                } else {
                    s.certain_edges += ts.len();
                    s.certain_right += right;
                    if want.is_empty() {
                        s.external_bound += 1;
                    }
                    if right > 0 {
                        s.found_certain += 1;
                    }
                }
                if right > 0 && !want.is_empty() {
                    s.found += 1;
                }
                let wrong: Vec<String> = ts
                    .iter()
                    .filter(|t| !hits(t))
                    .map(|t| format!("{}:{}", t.path, t.start_line))
                    .collect();
                if (*how != Resolution::Name && !wrong.is_empty())
                    || (right == 0 && !want.is_empty())
                {
                    misses.push(format!(
                        "{lang} {}:{} {} recv={:?} -> {:?} {:?} want {:?}",
                        call.path, call.line, call.callee, call.receiver, how, wrong, want
                    ));
                }
            }
            _ => {
                if !want.is_empty() {
                    misses.push(format!(
                        "{lang} {}:{} {} recv={:?} -> {:?} want {:?}",
                        call.path, call.line, call.callee, call.receiver, binding, want
                    ));
                }
            }
        }
    }
    for (key, want) in &expected {
        if !want.is_empty() && !seen.contains(key) {
            s.local += 1;
            misses.push(format!(
                "{lang} {}:{} {} not extracted",
                key.0, key.1, key.2
            ));
        }
    }
    s
}

#[test]
fn resolution_meets_the_precision_and_recall_targets() {
    let mut total = Score::default();
    let mut misses = Vec::new();
    println!(
        "| language | labelled local edges | recall | recall (certain tiers) | precision (certain tiers) | name-only edges (right) | external calls bound |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut per_lang = Vec::new();
    for lang in LANGUAGES {
        let s = score_language(lang, &mut misses);
        println!(
            "| {lang} | {} | {:.3} | {:.3} | {:.3} | {} ({}) | {} |",
            s.local,
            s.recall(),
            s.found_certain as f64 / s.local.max(1) as f64,
            s.precision(),
            s.name_edges,
            s.name_right,
            s.external_bound
        );
        total.add(s);
        per_lang.push((lang, s));
    }
    println!(
        "| **all** | {} | {:.3} | {:.3} | {:.3} | {} ({}) | {} |",
        total.local,
        total.recall(),
        total.found_certain as f64 / total.local.max(1) as f64,
        total.precision(),
        total.name_edges,
        total.name_right,
        total.external_bound
    );
    for m in &misses {
        println!("miss: {m}");
    }
    // The targets: precision ≥ 0.95 for edges not marked `~`, recall ≥ 0.85.
    assert!(
        total.precision() >= 0.95,
        "precision {:.3}",
        total.precision()
    );
    assert!(total.recall() >= 0.85, "recall {:.3}", total.recall());
    for (lang, s) in per_lang {
        assert!(
            s.precision() >= 0.90,
            "{lang}: precision {:.3}",
            s.precision()
        );
        assert!(s.recall() >= 0.75, "{lang}: recall {:.3}", s.recall());
    }
}
