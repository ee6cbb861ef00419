//! `lode bench learn`: fits task mode's weights on mined pairs (a commit's
//! message → the code files it changed; `scripts/mine-commits.py`) and
//! reports them on repositories held out of the fit.
//!
//! Only pairs mined from the training repositories may be given: they are
//! disjoint from every evaluation set. The learned weights are printed, to
//! be written into `lode_search::task::Weights::default` by hand with the
//! run's table in `docs/benchmarks.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use lode_core::{Error, Result};
use lode_eval::learn::{Objective, Query, coordinate_ascent, evaluate};
use lode_index::Filter;
use lode_search::task::{FEATURES, Feature, FileFeatures, Weights};
use serde::Serialize;

use crate::cli::Common;
use crate::swebench::Workspace;

/// Options of `lode bench learn`.
pub struct LearnArgs<'a> {
    pub mirrors: &'a Path,
    pub cases: &'a Path,
    pub work: Option<&'a Path>,
    /// Repositories scored but not fitted on; default: every second
    /// repository of each language, by name.
    pub held_out: &'a [String],
    pub rounds: usize,
    /// Also write every pair's candidates and their features as JSON lines here.
    pub dump: Option<&'a Path>,
}

/// A pair as `--dump` writes it.
#[derive(Serialize)]
struct Dumped<'a> {
    id: &'a str,
    repo: &'a str,
    language: &'a str,
    gold: Vec<&'a str>,
    features: Vec<&'static str>,
    candidates: Vec<(String, Vec<f64>, bool)>,
}

#[derive(Serialize)]
struct LearnReport {
    train_repos: Vec<String>,
    held_out_repos: Vec<String>,
    defaults: Vec<f64>,
    learned: Vec<f64>,
    names: Vec<&'static str>,
    /// Split (`train`, `held-out`) → weights (`defaults`, `learned`) → measures.
    scores: BTreeMap<String, BTreeMap<String, Objective>>,
}

pub fn learn(common: Common, args: LearnArgs) -> Result<u8> {
    let cases = lode_eval::load_swebench(args.cases).map_err(|e| Error::BadQuery(e.to_string()))?;
    let work = Workspace::new(args.work);
    let mut dump = match args.dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| Error::io(p, e))?,
        )),
        None => None,
    };
    let mut queries: Vec<Query> = Vec::new();
    let mut languages: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut by_tree: BTreeMap<(String, String), Vec<&lode_eval::Case>> = BTreeMap::new();
    for case in &cases {
        if let (Some(repo), Some(rev)) = (&case.repo, &case.revision) {
            by_tree
                .entry((repo.clone(), rev.clone()))
                .or_default()
                .push(case);
            languages
                .entry(case.language.clone().unwrap_or_default())
                .or_default()
                .insert(repo.clone());
        }
    }
    for (n, ((repo, rev), cases)) in by_tree.iter().enumerate() {
        let (dir, index) = match work.index(args.mirrors, repo, rev) {
            Ok(opened) => opened,
            Err(e) => {
                eprintln!("{repo}@{rev}: skipped ({e})");
                continue;
            }
        };
        for case in cases {
            let gold: Vec<&str> = case.relevant.iter().map(|t| t.path.as_str()).collect();
            let found =
                lode_search::task_candidates(&index, &case.query, &Filter::default(), true)?;
            let candidates: Vec<(String, Vec<f64>, bool)> = found
                .into_iter()
                .map(|(path, f)| {
                    let is_gold = gold.contains(&path.as_str());
                    (path, f.0.to_vec(), is_gold)
                })
                .collect();
            if let Some(out) = dump.as_mut() {
                let line = serde_json::to_string(&Dumped {
                    id: case.id.as_deref().unwrap_or(""),
                    repo,
                    language: case.language.as_deref().unwrap_or(""),
                    gold: gold.clone(),
                    features: Feature::ALL.iter().map(|f| f.name()).collect(),
                    candidates: candidates.clone(),
                })
                .expect("serializable");
                writeln!(out, "{line}").map_err(|e| Error::io("dump", e))?;
            }
            queries.push(Query {
                group: repo.clone(),
                candidates: candidates.into_iter().map(|(_, f, g)| (f, g)).collect(),
                gold: gold.len(),
            });
        }
        drop(index);
        work.finish_case(&dir);
        if !common.json {
            eprintln!(
                "[{}/{}] {repo}: {} pairs",
                n + 1,
                by_tree.len(),
                cases.len()
            );
        }
    }
    work.finish();
    if let Some(mut out) = dump {
        out.flush().map_err(|e| Error::io("dump", e))?;
    }

    let held_out: BTreeSet<String> = if args.held_out.is_empty() {
        languages
            .values()
            .flat_map(|repos| repos.iter().skip(1).step_by(2).cloned())
            .collect()
    } else {
        args.held_out.iter().cloned().collect()
    };
    let train: Vec<&Query> = queries
        .iter()
        .filter(|q| !held_out.contains(&q.group))
        .collect();
    let test: Vec<&Query> = queries
        .iter()
        .filter(|q| held_out.contains(&q.group))
        .collect();
    let score = |w: &[f64], f: &[f64]| weights(w).score(&FileFeatures(array(f)));
    let defaults = Weights::default().0.to_vec();
    let learned = coordinate_ascent(&train, &defaults, steps, &score, args.rounds);
    let mut scores: BTreeMap<String, BTreeMap<String, Objective>> = BTreeMap::new();
    for (split, qs) in [("train", &train), ("held-out", &test)] {
        for (name, w) in [("defaults", &defaults), ("learned", &learned)] {
            scores
                .entry(split.to_string())
                .or_default()
                .insert(name.to_string(), evaluate(qs, w, &score));
        }
    }
    let report = LearnReport {
        train_repos: group_names(&train),
        held_out_repos: group_names(&test),
        defaults,
        learned,
        names: Feature::ALL.iter().map(|f| f.name()).collect(),
        scores,
    };
    if common.json {
        println!(
            "{}",
            lode_search::render::json("bench", &report, Vec::new())
        );
        return Ok(0);
    }
    println!(
        "pairs: {} to fit ({} repositories), {} held out ({})",
        train.len(),
        report.train_repos.len(),
        test.len(),
        report.held_out_repos.join(", ")
    );
    println!("| split | weights | pairs | file R@1 | R@5 | R@10 | MRR@10 |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (split, by_weights) in &report.scores {
        for (name, o) in by_weights {
            println!(
                "| {split} | {name} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
                o.queries, o.recall_at_1, o.recall_at_5, o.recall_at_10, o.mrr_at_10
            );
        }
    }
    println!("| weight | default | learned |");
    println!("|---|---:|---:|");
    for (i, name) in report.names.iter().enumerate() {
        println!(
            "| {name} | {} | {} |",
            report.defaults[i], report.learned[i]
        );
    }
    Ok(0)
}

/// The values the ascent tries for weight `d` now at `v`: the whole-file
/// score stays 1 (the scale of the others), an added weight moves by
/// factors (or from zero), a factor over a grid of (0, 1].
fn steps(d: usize, v: f64) -> Vec<f64> {
    if d == 0 {
        return Vec::new();
    }
    if d >= Feature::FACTORS {
        return vec![0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0];
    }
    if v == 0.0 {
        return vec![0.05, 0.1, 0.25, 0.5, 1.0];
    }
    [0.0, 0.25, 0.5, 0.7, 0.85, 1.2, 1.5, 2.0, 4.0]
        .iter()
        .map(|f| round3(v * f))
        .collect()
}

fn array(v: &[f64]) -> [f64; FEATURES] {
    let mut a = [0.0; FEATURES];
    for (slot, x) in a.iter_mut().zip(v) {
        *slot = *x;
    }
    a
}

fn weights(v: &[f64]) -> Weights {
    Weights(array(v))
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn group_names(queries: &[&Query]) -> Vec<String> {
    let set: BTreeSet<&str> = queries.iter().map(|q| q.group.as_str()).collect();
    set.into_iter().map(str::to_string).collect()
}
