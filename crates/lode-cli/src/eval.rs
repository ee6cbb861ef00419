//! `lode eval` and `lode bench semble`: search quality measured with
//! `lode-eval` over lode's own search.

use std::path::Path;
use std::time::{Duration, Instant};

use lode_core::{Config, Error, Result};
use lode_eval::{Case, RepoRun, Report, ResultChunk, SembleBenchmark, SkippedRepo, SuiteReport};
use lode_index::{BuildOptions, EmbedOptions, EmbedPhase, Index, IndexLocation};
use lode_search::SearchOptions;

use crate::cli::Common;
use crate::context::Context;

fn eval_err(e: lode_eval::Error) -> Error {
    Error::BadQuery(e.to_string())
}

/// Runs every case through `search` and scores it.
fn run_cases(index: &Index, cases: &[Case], opts: &SearchOptions) -> Report {
    run_cases_keeping(index, cases, opts, &mut Vec::new())
}

/// `run_cases`, also keeping each case's results (in case order) in `kept`.
fn run_cases_keeping(
    index: &Index,
    cases: &[Case],
    opts: &SearchOptions,
    kept: &mut Vec<Vec<ResultChunk>>,
) -> Report {
    lode_eval::run(cases, |case: &Case| {
        let started = Instant::now();
        let hits = lode_search::search(index, &case.query, opts)
            .map(|r| r.hits)
            .unwrap_or_default();
        let elapsed = started.elapsed();
        let results: Vec<ResultChunk> = hits
            .into_iter()
            .map(|h| {
                let r = ResultChunk::new(h.path, h.start_line, h.end_line);
                match h.symbol {
                    Some(s) => r.with_symbol(s),
                    None => r,
                }
            })
            .collect();
        kept.push(results.clone());
        (results, elapsed)
    })
}

/// One JSON line per query: what it should find, what it scored and what came back.
fn explain_lines(repo: &str, cases: &[Case], report: &Report, kept: &[Vec<ResultChunk>]) -> String {
    let span = |path: &str, lines: Option<(u32, u32)>| match lines {
        Some((a, b)) => format!("{path}:{a}-{b}"),
        None => path.to_string(),
    };
    let mut out = String::new();
    for ((case, q), results) in cases.iter().zip(&report.queries).zip(kept) {
        let line = serde_json::json!({
            "repo": repo,
            "query": case.query,
            "category": case.category,
            "language": case.language,
            "ndcg10": q.ndcg10,
            "target_ranks": q.target_ranks,
            "targets": case.targets().map(|t| span(&t.path, t.lines)).collect::<Vec<_>>(),
            "results": results.iter().take(10).map(|r| {
                let s = span(&r.path, Some((r.start_line, r.end_line)));
                match &r.symbol {
                    Some(sym) => format!("{s} {sym}"),
                    None => s,
                }
            }).collect::<Vec<_>>(),
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}

pub fn eval(ctx: Context, cases: &Path, top_k: usize, misses: bool) -> Result<u8> {
    let cases = lode_eval::load_cases(cases).map_err(eval_err)?;
    let index = ctx.open_fresh()?;
    let opts = SearchOptions {
        top_k,
        snippet_lines: 0,
        ..SearchOptions::default()
    };
    let report = run_cases(&index, &cases, &opts);
    if ctx.common.json {
        println!("{}", report.to_json());
    } else {
        print!("{}", report.render_text());
        if misses {
            for q in report.misses() {
                println!("miss: {}", q.query);
            }
        }
    }
    Ok(0)
}

/// A case reduced to file-level targets that exist under `root`; `None` when none does.
fn at_head(case: &Case, root: &Path) -> Option<Case> {
    let exists = |t: &lode_eval::Target| {
        // Targets may carry the benchmark root as a prefix: try each suffix.
        let parts: Vec<&str> = t.path.split('/').collect();
        (0..parts.len()).any(|i| root.join(parts[i..].join("/")).is_file())
    };
    let keep = |ts: &[lode_eval::Target]| -> Vec<lode_eval::Target> {
        ts.iter()
            .filter(|t| exists(t))
            .map(|t| lode_eval::Target::file(t.path.clone()))
            .collect()
    };
    let mut c = case.clone();
    c.relevant = keep(&case.relevant);
    c.secondary = keep(&case.secondary);
    (!c.relevant.is_empty() || !c.secondary.is_empty()).then_some(c)
}

/// `name → (revision, pinned)` from the checkout script's `checkouts.tsv`.
fn checkouts(repos: &Path) -> std::collections::HashMap<String, (String, bool)> {
    std::fs::read_to_string(repos.join("checkouts.tsv"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((
                f.next()?.to_string(),
                (f.next()?.to_string(), f.next()? == "yes"),
            ))
        })
        .collect()
}

pub fn semble(
    common: Common,
    repos: &Path,
    data: &Path,
    only: &[String],
    explain: Option<&Path>,
) -> Result<u8> {
    let bench = SembleBenchmark::load(data.join("semble")).map_err(eval_err)?;
    let checkouts = checkouts(repos);
    // With --cache-dir the indexes are kept there (and reused while fresh);
    // otherwise they live in a temporary directory removed at the end.
    let keep = common.cache_dir.clone();
    let tmp = keep.clone().unwrap_or_else(|| {
        std::env::temp_dir().join(format!("lode-semble-{}", std::process::id()))
    });
    let mut explained = String::new();
    let config = Config::default();
    let configs = semble_rankings();
    let mut runs: [Vec<RepoRun>; 2] = [Vec::new(), Vec::new()];
    let mut skipped = Vec::new();
    for repo in &bench.repos {
        if !only.is_empty() && !only.contains(&repo.name) {
            continue;
        }
        let dir = repo.benchmark_dir(repos);
        if !dir.is_dir() {
            skipped.push(SkippedRepo {
                name: repo.name.clone(),
                reason: format!("no checkout at {}", dir.display()),
            });
            continue;
        }
        let loc = IndexLocation::resolve(&dir, Some(&tmp))?;
        let times = build_timed(&loc, &config)?;
        let built = &times.built;
        let index = Index::open(&loc)?;
        let (revision, pinned, cases) = repo_cases(repo, &dir, &checkouts);
        if cases.is_empty() {
            skipped.push(SkippedRepo {
                name: repo.name.clone(),
                reason: "no target of any query exists in the checkout".into(),
            });
            continue;
        }
        for (i, (_, opts)) in configs.iter().enumerate() {
            let mut kept = Vec::new();
            let mut report = run_cases_keeping(&index, &cases, opts, &mut kept);
            // lode's index is both phases; a plain BM25 index is the lexical one.
            let index_time = match i {
                0 => times.full(),
                _ => times.lexical(),
            };
            if let Some(t) = index_time {
                report = report.with_index_time(t);
            }
            if i == 0 && explain.is_some() {
                explained.push_str(&explain_lines(&repo.name, &cases, &report, &kept));
            }
            runs[i].push(RepoRun {
                name: repo.name.clone(),
                language: repo.language.clone(),
                pinned_revision: pinned,
                revision: revision.clone(),
                chunks: Some(built.chunks),
                report,
            });
        }
        if !common.json {
            let last = |i: usize| runs[i].last().map_or(0.0, |r| r.report.summary.ndcg10);
            eprintln!(
                "{:<22} {:<11} ndcg@10 lode {:.3}  bm25 {:.3}  ({} chunks, {})",
                repo.name,
                repo.language,
                last(0),
                last(1),
                built.chunks,
                times.describe(),
            );
        }
        drop(index);
        if keep.is_none() {
            let _ = std::fs::remove_dir_all(&loc.dir);
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if let Some(path) = explain {
        std::fs::write(path, explained).map_err(|e| Error::io(path, e))?;
    }
    let [lode_runs, bm25_runs] = runs;
    let lode = SuiteReport::new(Some("lode".into()), lode_runs, skipped.clone());
    let bm25 = SuiteReport::new(Some("bm25".into()), bm25_runs, skipped);
    let upstream =
        lode_eval::load_upstream_dir(data.join("semble/upstream-results")).unwrap_or_default();
    let selected = lode_eval::select_runs(&upstream, &lode_eval::DEFAULT_COMPARISON);
    let comparison = lode_eval::compare(&lode, &selected);
    print_semble(common.json, &lode, &bm25, &comparison);
    Ok(0)
}

/// The revision a repository's checkout is at, whether it is the pinned
/// one, and the cases to run there: away from the pinned revision only
/// queries whose targets still exist, scored at file level (the
/// benchmark's rule).
fn repo_cases(
    repo: &lode_eval::SembleRepo,
    dir: &Path,
    checkouts: &std::collections::HashMap<String, (String, bool)>,
) -> (Option<String>, Option<bool>, Vec<Case>) {
    let (revision, pinned) = match checkouts.get(&repo.name) {
        Some((rev, pinned)) => (Some(rev.clone()), Some(*pinned)),
        None => (None, repo.pinned_revision_available),
    };
    let cases = if pinned == Some(true) {
        repo.cases.clone()
    } else {
        repo.cases.iter().filter_map(|c| at_head(c, dir)).collect()
    };
    (revision, pinned, cases)
}

/// The two rankings the Semble benchmark runs side by side: lode's, and
/// plain BM25 over the same index (no rerank, no embeddings).
fn semble_rankings() -> [(&'static str, SearchOptions); 2] {
    [
        (
            "lode",
            SearchOptions {
                snippet_lines: 0,
                ..SearchOptions::default()
            },
        ),
        (
            "bm25",
            SearchOptions {
                snippet_lines: 0,
                rerank: false,
                semantic: false,
                ..SearchOptions::default()
            },
        ),
    ]
}

fn print_semble(
    json: bool,
    lode: &SuiteReport,
    bm25: &SuiteReport,
    comparison: &lode_eval::Comparison,
) {
    if json {
        println!(
            "{{\"schema_version\":1,\"command\":\"bench semble\",\"lode\":{},\"bm25\":{}}}",
            lode.to_json(),
            bm25.to_json()
        );
        return;
    }
    println!("{}", lode.render_text());
    println!(
        "plain BM25 (same index, no rerank, no embeddings): ndcg@10 {:.4}   lode/bm25 p50 latency {:.2}/{:.2} ms",
        bm25.summary.ndcg10, lode.summary.p50_ms, bm25.summary.p50_ms
    );
    println!("{}", index_time_line(lode, bm25));
    println!(
        "{} of {} repositories ran at their pinned revision\n",
        lode.pinned_count(),
        lode.repos.len()
    );
    println!("{}", comparison.render_text());
}

/// A repository's index build in the benchmark, timed by phase.
struct BuildTimes {
    built: lode_index::BuildReport,
    /// The lexical phase (files, symbols, chunks, postings): what a plain
    /// BM25 index costs. `None` when the build reused an index that was
    /// already complete (nothing was indexed, so there is no index time).
    lexical: Option<Duration>,
    /// The embedding phase that followed, to completion.
    embedding: Option<Duration>,
}

impl BuildTimes {
    fn lexical(&self) -> Option<Duration> {
        self.lexical
    }

    /// Both phases: lode's index time.
    fn full(&self) -> Option<Duration> {
        Some(self.lexical? + self.embedding?)
    }
}

/// Builds `loc`'s index in two timed phases: the lexical one (the build
/// with embedding left for later), then the embedding phase to the end.
/// Times are kept only for an index built from scratch: a reused index (a
/// `--cache-dir` run whose index was fresh, or one updated incrementally)
/// did not pay an index build.
impl BuildTimes {
    /// How long the index took, by phase, for the progress line.
    fn describe(&self) -> String {
        match (self.lexical(), self.full()) {
            (Some(lexical), Some(full)) => format!(
                "{:.0} ms index: lexical {:.0} + embedding {:.0}",
                full.as_secs_f64() * 1000.0,
                lexical.as_secs_f64() * 1000.0,
                (full - lexical).as_secs_f64() * 1000.0
            ),
            _ => "index reused".to_string(),
        }
    }
}

fn build_timed(loc: &IndexLocation, config: &Config) -> Result<BuildTimes> {
    let started = Instant::now();
    let built = lode_index::build(
        loc,
        &BuildOptions {
            embed: EmbedPhase::Later,
            ..BuildOptions::quiet(config)
        },
    )?;
    let lexical = started.elapsed();
    let started = Instant::now();
    let embedded = lode_index::embed(loc, &EmbedOptions::new(config), None)?;
    let embedding = started.elapsed();
    if embedded.pending > 0 {
        return Err(Error::BadQuery(format!(
            "{}: the embedding phase stopped with {} of {} chunks left ({:?})",
            loc.root.display(),
            embedded.pending,
            embedded.chunks,
            embedded.stopped
        )));
    }
    let from_scratch = built.rebuilt.is_some();
    Ok(BuildTimes {
        built,
        lexical: from_scratch.then_some(lexical),
        embedding: from_scratch.then_some(embedding),
    })
}

/// The summary line comparing index times: lode (both phases) against plain
/// BM25 (the lexical phase), means over the repositories indexed in this run.
fn index_time_line(lode: &SuiteReport, bm25: &SuiteReport) -> String {
    match (lode.index_ms, bm25.index_ms) {
        (Some(l), Some(b)) if b > 0.0 => format!(
            "index time per repository (mean over the {} built in this run): lode {l:.0} ms \
             (lexical + embedding), plain BM25 {b:.0} ms (lexical phase), ratio {:.2}x",
            lode.repos
                .iter()
                .filter(|r| r.report.index_ms.is_some())
                .count(),
            l / b
        ),
        _ => "index time: none measured (every index was reused from --cache-dir)".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bm25_baseline_is_lexical_only() {
        let [(lode, with), (bm25, without)] = semble_rankings();
        assert_eq!((lode, bm25), ("lode", "bm25"));
        assert!(with.semantic && with.rerank);
        assert!(!without.semantic && !without.rerank);
    }

    #[test]
    fn index_time_is_split_by_phase_and_only_for_a_build_from_scratch() {
        let repo = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        std::fs::write(
            repo.path().join("lib.rs"),
            "pub fn parse_config() -> u32 { 1 }\n\npub fn load() -> u32 { 2 }\n",
        )
        .unwrap();
        let config = Config::default();
        let loc = IndexLocation::resolve(repo.path(), Some(cache.path())).unwrap();
        let first = build_timed(&loc, &config).unwrap();
        let (lexical, full) = (first.lexical().unwrap(), first.full().unwrap());
        assert!(full >= lexical);
        // The embedding phase ran to the end: every chunk has its vector.
        let index = Index::open(&loc).unwrap();
        assert_eq!(index.vectors_pending().unwrap(), 0);
        assert!(first.built.chunks > 0);
        drop(index);
        // A fresh index reused: nothing was indexed, so no index time.
        let again = build_timed(&loc, &config).unwrap();
        assert_eq!((again.lexical(), again.full()), (None, None));
        assert_eq!(again.built.chunks, first.built.chunks);
    }

    #[test]
    fn the_index_time_line_gives_the_ratio_or_says_none_was_measured() {
        let run = |ms: Option<f64>| {
            let mut report = lode_eval::run(&[] as &[Case], |_: &Case| Vec::<ResultChunk>::new());
            report.index_ms = ms;
            RepoRun {
                name: "demo".into(),
                language: "rust".into(),
                pinned_revision: Some(true),
                revision: None,
                chunks: Some(3),
                report,
            }
        };
        let suite = |ms| SuiteReport::new(None, vec![run(ms)], Vec::new());
        let line = index_time_line(&suite(Some(300.0)), &suite(Some(200.0)));
        assert!(line.contains("ratio 1.50x"), "{line}");
        assert!(line.contains("over the 1 built"), "{line}");
        let line = index_time_line(&suite(None), &suite(None));
        assert!(line.contains("none measured"), "{line}");
    }

    #[test]
    fn explain_lines_give_targets_and_results_per_query() {
        let cases = vec![Case::new(
            "how are routes matched",
            vec![lode_eval::Target::file("src/router.rs")],
        )];
        let kept = vec![vec![
            ResultChunk::new("src/app.rs", 1, 9),
            ResultChunk::new("src/router.rs", 10, 20).with_symbol("Router"),
        ]];
        let report = lode_eval::run(&cases, |_: &Case| kept[0].clone());
        let text = explain_lines("demo", &cases, &report, &kept);
        assert_eq!(text.lines().count(), 1);
        let v: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(v["repo"], "demo");
        assert_eq!(v["targets"][0], "src/router.rs");
        assert_eq!(v["results"][1], "src/router.rs:10-20 Router");
        assert_eq!(v["target_ranks"][0], 2);
        assert!(v["ndcg10"].as_f64().unwrap() < 1.0);
    }
}
