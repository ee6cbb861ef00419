//! `lode bench swebench`: the SWE-bench Lite subset — issue text → the files
//! the fix touched. Each case is searched at its own base commit, checked out
//! from a bare mirror with `git archive` into a temporary directory.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use lode_core::{Config, Error, Result};
use lode_eval::Case;
use lode_index::{BuildOptions, Index, IndexLocation};
use lode_search::SearchOptions;
use serde::Serialize;

use crate::cli::Common;

/// File-level scores of one configuration over some cases.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileScores {
    pub cases: usize,
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    pub mrr_at_10: f64,
}

impl FileScores {
    fn add(&mut self, ranked: &[String], gold: &[String]) {
        let found_within = |k: usize| {
            gold.iter()
                .filter(|g| ranked.iter().take(k).any(|r| r == *g))
                .count() as f64
                / gold.len().max(1) as f64
        };
        self.cases += 1;
        self.recall_at_1 += found_within(1);
        self.recall_at_5 += found_within(5);
        self.recall_at_10 += found_within(10);
        if let Some(i) = ranked.iter().take(10).position(|r| gold.contains(r)) {
            self.mrr_at_10 += 1.0 / (i + 1) as f64;
        }
    }

    fn mean(mut self) -> FileScores {
        let n = self.cases.max(1) as f64;
        self.recall_at_1 /= n;
        self.recall_at_5 /= n;
        self.recall_at_10 /= n;
        self.mrr_at_10 /= n;
        self
    }
}

#[derive(Serialize)]
struct SweReport {
    cases: usize,
    skipped: Vec<String>,
    /// Configuration → repository (`""` = all) → scores.
    scores: BTreeMap<String, BTreeMap<String, FileScores>>,
}

/// Distinct files of the hits, in rank order.
fn ranked_files(index: &Index, query: &str, opts: &SearchOptions) -> Vec<String> {
    let hits = lode_search::search(index, query, opts)
        .map(|r| r.hits)
        .unwrap_or_default();
    let mut files: Vec<String> = Vec::new();
    for h in hits {
        if !files.contains(&h.path) {
            files.push(h.path);
        }
    }
    files
}

/// `git --git-dir MIRROR archive REV | tar -x -C DIR`.
fn checkout(mirror: &Path, rev: &str, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let mut git = Command::new("git")
        .arg("--git-dir")
        .arg(mirror)
        .args(["archive", rev])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| Error::io("git", e))?;
    let out = git.stdout.take().expect("piped");
    let tar = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dir)
        .stdin(out)
        .status()
        .map_err(|e| Error::io("tar", e))?;
    let git = git.wait().map_err(|e| Error::io("git", e))?;
    if !git.success() || !tar.success() {
        return Err(Error::BadQuery(format!(
            "cannot check out {rev} from {}",
            mirror.display()
        )));
    }
    Ok(())
}

pub fn swebench(
    common: Common,
    mirrors: &Path,
    cases_path: &Path,
    only: &[String],
    limit: Option<usize>,
) -> Result<u8> {
    let cases: Vec<Case> = lode_eval::load_swebench(cases_path)
        .map_err(|e| Error::BadQuery(e.to_string()))?
        .into_iter()
        .filter(|c| only.is_empty() || c.repo.as_ref().is_some_and(|r| only.contains(r)))
        .take(limit.unwrap_or(usize::MAX))
        .collect();
    let config = Config::default();
    let tmp = std::env::temp_dir().join(format!("lode-swebench-{}", std::process::id()));
    let configs: [(&str, SearchOptions); 2] = [
        (
            "lode",
            SearchOptions {
                top_k: 50,
                snippet_lines: 0,
                ..SearchOptions::default()
            },
        ),
        (
            "bm25",
            SearchOptions {
                top_k: 50,
                snippet_lines: 0,
                semantic: false,
                rerank: false,
                ..SearchOptions::default()
            },
        ),
    ];
    let mut scores: BTreeMap<String, BTreeMap<String, FileScores>> = BTreeMap::new();
    let mut skipped = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let (Some(repo), Some(rev)) = (&case.repo, &case.revision) else {
            skipped.push(format!(
                "{}: no repo or base commit",
                case.id.clone().unwrap_or_default()
            ));
            continue;
        };
        let mirror: PathBuf = mirrors.join(repo.replace('/', "+")).join("repo");
        let dir = tmp.join("tree");
        let _ = std::fs::remove_dir_all(&tmp);
        if let Err(e) = checkout(&mirror, rev, &dir) {
            skipped.push(format!("{repo}@{rev}: {e}"));
            continue;
        }
        let loc = IndexLocation::resolve(&dir, Some(&tmp.join("cache")))?;
        lode_index::build(&loc, &BuildOptions::quiet(&config))?;
        let index = Index::open(&loc)?;
        let gold: Vec<String> = case.relevant.iter().map(|t| t.path.clone()).collect();
        for (name, opts) in &configs {
            let ranked = ranked_files(&index, &case.query, opts);
            let by_repo = scores.entry(name.to_string()).or_default();
            by_repo
                .entry(String::new())
                .or_default()
                .add(&ranked, &gold);
            by_repo.entry(repo.clone()).or_default().add(&ranked, &gold);
        }
        if !common.json {
            eprintln!(
                "[{}/{}] {}",
                i + 1,
                cases.len(),
                case.id.as_deref().unwrap_or(repo)
            );
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let scores: BTreeMap<String, BTreeMap<String, FileScores>> = scores
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().map(|(r, s)| (r, s.mean())).collect()))
        .collect();
    let report = SweReport {
        cases: cases.len() - skipped.len(),
        skipped,
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
        "SWE-bench Lite: {} cases searched, {} skipped",
        report.cases,
        report.skipped.len()
    );
    println!("| config | repository | cases | file recall@1 | @5 | @10 | MRR@10 |");
    println!("|---|---|---:|---:|---:|---:|---:|");
    for (name, by_repo) in &report.scores {
        for (repo, s) in by_repo {
            let repo = if repo.is_empty() { "**all**" } else { repo };
            println!(
                "| {name} | {repo} | {} | {:.3} | {:.3} | {:.3} | {:.3} |",
                s.cases, s.recall_at_1, s.recall_at_5, s.recall_at_10, s.mrr_at_10
            );
        }
    }
    for s in &report.skipped {
        println!("skipped: {s}");
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revision_that_cannot_be_checked_out_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let e = checkout(
            &dir.path().join("no-mirror"),
            "deadbeef",
            &dir.path().join("tree"),
        )
        .expect_err("no mirror, no checkout");
        assert!(e.to_string().contains("cannot check out deadbeef"), "{e}");
    }

    #[test]
    fn file_scores_count_distinct_files_in_rank_order() {
        let ranked: Vec<String> = ["a.py", "b.py", "c.py"].map(String::from).to_vec();
        let mut s = FileScores::default();
        s.add(&ranked, &["b.py".into(), "z.py".into()]);
        s.add(&ranked, &["a.py".into()]);
        let s = s.mean();
        assert_eq!(s.cases, 2);
        assert!((s.recall_at_1 - 0.5).abs() < 1e-9, "{s:?}"); // 0 then 1
        assert!((s.recall_at_5 - 0.75).abs() < 1e-9, "{s:?}"); // 0.5 then 1
        assert!((s.mrr_at_10 - 0.75).abs() < 1e-9, "{s:?}"); // 1/2 then 1
    }
}
