//! `lode bench learn`: fits task mode's weights on mined pairs (a commit's
//! message → the code files it changed; `scripts/mine-commits.py`) and
//! reports them on repositories held out of the fit. With `--chunks` it
//! fits the chunk choice instead: within each changed file, the chunks the
//! commit's changed lines fall in against the file's other chunks.
//!
//! Only pairs mined from the training repositories may be given: they are
//! disjoint from every evaluation set. The learned weights are printed, to
//! be written into `lode_search::task::Weights::default` (or
//! `ChunkWeights::default`) by hand with the run's table in
//! `docs/benchmarks.md`.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use lode_core::{Error, Result};
use lode_eval::Case;
use lode_eval::learn::{Ascent, Objective, Query, coordinate_ascent, evaluate};
use lode_index::{Filter, Index};
use lode_search::task::{ChunkFeatures, ChunkWeights, FEATURES, Feature, FileFeatures, Weights};
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
    /// Fit the chunk choice rather than the file ranking.
    pub chunks: bool,
}

/// A pair as `--dump` writes it.
#[derive(Serialize)]
struct Dumped<'a> {
    id: &'a str,
    repo: &'a str,
    language: &'a str,
    gold: Vec<&'a str>,
    features: &'a [&'static str],
    candidates: &'a [(String, Vec<f64>, bool)],
}

#[derive(Serialize)]
struct LearnReport {
    train_repos: Vec<String>,
    held_out_repos: Vec<String>,
    defaults: Vec<f64>,
    learned: Vec<f64>,
    names: &'static [&'static str],
    /// Weights kept at their defaults: their evidence is too rare in the pairs to fit.
    held: Vec<&'static str>,
    /// Split (`train`, `held-out`) → weights (`defaults`, `learned`) → measures.
    scores: BTreeMap<String, BTreeMap<String, Objective>>,
}

/// What is fitted: the file ranking's [`Weights`] or the chunk choice's
/// [`ChunkWeights`], each with its own steps and objective.
struct Model {
    names: &'static [&'static str],
    defaults: Vec<f64>,
    steps: fn(usize, f64) -> Vec<f64>,
    score: fn(&[f64], &[f64]) -> f64,
    value: fn(&Objective) -> f64,
}

impl Model {
    fn files() -> Model {
        Model {
            names: &FILE_FEATURE_NAMES,
            defaults: Weights::default().0.to_vec(),
            steps,
            score: |w, f| Weights(array(w)).score(&FileFeatures(array(f))),
            value: Objective::value,
        }
    }

    fn chunks() -> Model {
        Model {
            names: &ChunkFeatures::NAMES,
            defaults: ChunkWeights::default().0.to_vec(),
            steps: chunk_steps,
            score: |w, f| ChunkWeights(array(w)).score(&ChunkFeatures(array(f))),
            value: Objective::value_at_top,
        }
    }
}

const FILE_FEATURE_NAMES: [&str; FEATURES] = {
    let mut names = [""; FEATURES];
    let mut i = 0;
    while i < FEATURES {
        names[i] = Feature::ALL[i].name();
        i += 1;
    }
    names
};

pub fn learn(common: Common, args: LearnArgs) -> Result<u8> {
    let cases = lode_eval::load_swebench(args.cases).map_err(|e| Error::BadQuery(e.to_string()))?;
    let model = if args.chunks {
        Model::chunks()
    } else {
        Model::files()
    };
    let (queries, languages) = labelled(&common, &args, &model, &cases)?;
    let held_out: BTreeSet<String> = if args.held_out.is_empty() {
        languages
            .values()
            .flat_map(|repos| repos.iter().skip(1).step_by(2).cloned())
            .collect()
    } else {
        args.held_out.iter().cloned().collect()
    };
    let (test, train): (Vec<&Query>, Vec<&Query>) =
        queries.iter().partition(|q| held_out.contains(&q.group));
    let taught = taught(&train, model.defaults.len());
    let ascent = Ascent {
        candidates: |d: usize, v: f64| {
            if taught[d] {
                (model.steps)(d, v)
            } else {
                Vec::new()
            }
        },
        score: model.score,
        value: model.value,
        rounds: args.rounds,
    };
    let learned = coordinate_ascent(&train, &model.defaults, &ascent);
    let mut scores: BTreeMap<String, BTreeMap<String, Objective>> = BTreeMap::new();
    for (split, qs) in [("train", &train), ("held-out", &test)] {
        for (name, w) in [("defaults", &model.defaults), ("learned", &learned)] {
            scores
                .entry(split.to_string())
                .or_default()
                .insert(name.to_string(), evaluate(qs, w, &model.score));
        }
    }
    let report = LearnReport {
        train_repos: group_names(&train),
        held_out_repos: group_names(&test),
        defaults: model.defaults,
        learned,
        names: model.names,
        held: (0..taught.len())
            .filter(|&d| !taught[d])
            .map(|d| model.names[d])
            .collect(),
        scores,
    };
    if common.json {
        println!(
            "{}",
            lode_search::render::json("bench", &report, Vec::new())
        );
    } else {
        print_report(&report, train.len(), test.len(), args.chunks);
    }
    Ok(0)
}

/// The least share of the training candidates a feature must be set on for
/// its weight to be fitted: evidence the pairs seldom hold (commit messages
/// quote few traces, messages or names) would be fitted to a few cases and
/// say nothing of the tasks that do hold it.
const MIN_COVERAGE: f64 = 0.01;

/// For each feature, whether it is set on [`MIN_COVERAGE`] of the training candidates.
fn taught(train: &[&Query], features: usize) -> Vec<bool> {
    let mut set = vec![0usize; features];
    let mut candidates = 0usize;
    for q in train {
        for (f, _) in &q.candidates {
            candidates += 1;
            for (count, x) in set.iter_mut().zip(f) {
                *count += usize::from(*x != 0.0);
            }
        }
    }
    set.iter()
        .map(|&n| candidates > 0 && n as f64 >= MIN_COVERAGE * candidates as f64)
        .collect()
}

/// Every case's labelled candidates (files, or each changed file's
/// chunks), indexing each repository once at its snapshot; and the
/// repositories of each language.
fn labelled(
    common: &Common,
    args: &LearnArgs,
    model: &Model,
    cases: &[Case],
) -> Result<(Vec<Query>, ReposByLanguage)> {
    let work = Workspace::new(args.work);
    let mut dump = match args.dump {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| Error::io(p, e))?,
        )),
        None => None,
    };
    let mut queries: Vec<Query> = Vec::new();
    let mut languages = ReposByLanguage::new();
    let mut by_tree: BTreeMap<(&str, &str), Vec<&Case>> = BTreeMap::new();
    for case in cases {
        if let (Some(repo), Some(rev)) = (&case.repo, &case.revision) {
            by_tree.entry((repo, rev)).or_default().push(case);
            languages
                .entry(case.language.clone().unwrap_or_default())
                .or_default()
                .insert(repo.clone());
        }
    }
    for (n, (&(repo, rev), cases)) in by_tree.iter().enumerate() {
        let (dir, index) = match work.index(args.mirrors, repo, rev) {
            Ok(opened) => opened,
            Err(e) => {
                eprintln!("{repo}@{rev}: skipped ({e})");
                continue;
            }
        };
        for case in cases {
            let lists = if args.chunks {
                chunk_lists(&index, case)?
            } else {
                vec![file_list(&index, case)?]
            };
            for (candidates, gold) in lists {
                if let Some(out) = dump.as_mut() {
                    let line = serde_json::to_string(&Dumped {
                        id: case.id.as_deref().unwrap_or(""),
                        repo,
                        language: case.language.as_deref().unwrap_or(""),
                        gold: case.relevant.iter().map(|t| t.path.as_str()).collect(),
                        features: model.names,
                        candidates: &candidates,
                    })
                    .expect("serializable");
                    writeln!(out, "{line}").map_err(|e| Error::io("dump", e))?;
                }
                queries.push(Query {
                    group: repo.to_string(),
                    candidates: candidates.into_iter().map(|(_, f, g)| (f, g)).collect(),
                    gold,
                });
            }
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
    Ok((queries, languages))
}

/// Language → the repositories of the pairs in it.
type ReposByLanguage = BTreeMap<String, BTreeSet<String>>;

/// Labelled candidates, `(label, features, gold)`, and how many gold answers there are.
type Labelled = (Vec<(String, Vec<f64>, bool)>, usize);

/// The case's candidate files, each labelled gold or not.
fn file_list(index: &Index, case: &Case) -> Result<Labelled> {
    let gold: Vec<&str> = case.relevant.iter().map(|t| t.path.as_str()).collect();
    let found = lode_search::task_candidates(index, &case.query, &Filter::default(), true)?;
    let candidates = found
        .into_iter()
        .map(|(path, f)| {
            let is_gold = gold.contains(&path.as_str());
            (path, f.0.to_vec(), is_gold)
        })
        .collect();
    Ok((candidates, gold.len()))
}

/// For each file the case changed lines in: the file's chunks, one per
/// symbol (the one the shipped weights rank first), gold when the symbol's
/// chunks hold a changed line. Chunks of no symbol are never gold (as
/// SWE-bench's `imports` is not scored); a file with no gold symbol, or a
/// single one to choose from, teaches nothing and is left out.
fn chunk_lists(index: &Index, case: &Case) -> Result<Vec<Labelled>> {
    let paths: BTreeSet<&str> = case.changed.iter().map(|t| t.path.as_str()).collect();
    let paths: Vec<&str> = paths.into_iter().collect();
    let shipped = ChunkWeights::default();
    let mut out = Vec::new();
    for (path, chunks) in lode_search::task_chunk_candidates(index, &case.query, &paths, true)? {
        let changed = |row: &lode_index::ChunkRow| {
            case.changed
                .iter()
                .any(|t| t.matches_location(&path, row.start_line, row.end_line))
        };
        // symbol id (or the chunk's own, negated, for no symbol) → (score, label, features, gold)
        let mut best: BTreeMap<i64, (f64, String, Vec<f64>, bool)> = BTreeMap::new();
        let mut gold_symbols: BTreeSet<i64> = BTreeSet::new();
        for (row, f) in &chunks {
            let key = row
                .symbol
                .as_ref()
                .map_or(-1 - row.id.abs(), |s| s.id.abs());
            if row.symbol.is_some() && changed(row) {
                gold_symbols.insert(key);
            }
            let score = shipped.score(f);
            let label = format!(
                "{}:{}-{} {}",
                row.path,
                row.start_line,
                row.end_line,
                row.symbol.as_ref().map_or("", |s| s.name.as_str())
            );
            if best.get(&key).is_none_or(|b| score > b.0) {
                best.insert(key, (score, label, f.0.to_vec(), false));
            }
        }
        if gold_symbols.is_empty() || best.len() < 2 {
            continue;
        }
        let candidates = best
            .into_iter()
            .map(|(key, (_, label, f, _))| (label, f, gold_symbols.contains(&key)))
            .collect();
        out.push((candidates, gold_symbols.len()));
    }
    Ok(out)
}

fn print_report(report: &LearnReport, train: usize, test: usize, chunks: bool) {
    let what = if chunks { "changed files" } else { "pairs" };
    println!(
        "{what}: {train} to fit ({} repositories), {test} held out ({})",
        report.train_repos.len(),
        report.held_out_repos.join(", ")
    );
    let measure = if chunks { "chunk" } else { "file" };
    println!("| split | weights | {what} | {measure} R@1 | R@5 | R@10 | MRR@10 |");
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
        let held = if report.held.contains(name) {
            " (held: too rare to fit)"
        } else {
            ""
        };
        println!(
            "| {name} | {} | {}{held} |",
            report.defaults[i], report.learned[i]
        );
    }
}

/// The values the ascent tries for file weight `d` now at `v` (see [`grid`]).
fn steps(d: usize, v: f64) -> Vec<f64> {
    let factors = [0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0];
    grid(
        d,
        v,
        Feature::FACTORS,
        &factors,
        &[0.05, 0.1, 0.25, 0.5, 1.0],
    )
}

/// The same for chunk weight `d`.
fn chunk_steps(d: usize, v: f64) -> Vec<f64> {
    let factors = [0.1, 0.2, 0.3, 0.5, 0.7, 0.85, 1.0];
    grid(
        d,
        v,
        ChunkFeatures::FACTORS,
        &factors,
        &[0.1, 0.25, 0.5, 1.0],
    )
}

/// The values the ascent tries for weight `d` now at `v`: the first weight
/// stays 1 (the scale of the others), a factor (from `first_factor` on)
/// takes each of `factors`, an added weight moves by factors of itself or,
/// from zero, to each of `from_zero`.
fn grid(d: usize, v: f64, first_factor: usize, factors: &[f64], from_zero: &[f64]) -> Vec<f64> {
    if d == 0 {
        return Vec::new();
    }
    if d >= first_factor {
        return factors.to_vec();
    }
    if v == 0.0 {
        return from_zero.to_vec();
    }
    [0.0, 0.25, 0.5, 0.7, 0.85, 1.2, 1.5, 2.0, 4.0]
        .iter()
        .map(|f| round3(v * f))
        .collect()
}

/// `v` as a fixed-size vector, missing values 0.
fn array<const N: usize>(v: &[f64]) -> [f64; N] {
    let mut a = [0.0; N];
    for (slot, x) in a.iter_mut().zip(v) {
        *slot = *x;
    }
    a
}

fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn group_names(queries: &[&Query]) -> Vec<String> {
    let set: BTreeSet<&str> = queries.iter().map(|q| q.group.as_str()).collect();
    set.into_iter().map(str::to_string).collect()
}
