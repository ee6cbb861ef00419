//! `lode bench swebench`: the SWE-bench Lite subset — issue text → the files
//! the fix touched. Each case is searched at its own base commit, checked out
//! from a bare mirror with `git archive`, by every ranking side by side:
//! whole-file Okapi BM25 (the baseline), plain chunk BM25F, lode's query
//! mode and lode's task mode.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use lode_core::{Config, Error, Result};
use lode_eval::{Case, FileBm25, ResultChunk, SymbolTarget, Target};
use lode_index::{BuildOptions, Filter, Index, IndexLocation};
use lode_search::{Mode, SearchHit, SearchOptions, TaskOptions};
use serde::Serialize;

use crate::cli::Common;

/// Scores of one ranking over some cases.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FileScores {
    pub cases: usize,
    pub recall_at_1: f64,
    pub recall_at_5: f64,
    pub recall_at_10: f64,
    /// Cases with every gold file in the first five (SWE-bench's file Acc@5).
    pub hit_at_5: f64,
    pub mrr_at_10: f64,
    /// Cases with a gold function (not the `imports` pseudo-symbol) among
    /// the first 5 / 10 chunks, over the cases that have one; for a case with
    /// no gold symbols but changed lines (a mined pair), a chunk of a symbol
    /// that holds a changed line.
    pub function_cases: usize,
    pub function_hit_at_5: f64,
    pub function_hit_at_10: f64,
    /// Mean milliseconds per query.
    pub mean_ms: f64,
}

impl FileScores {
    fn add(&mut self, ranked: &Ranking, truth: &Gold) {
        let gold = truth.files;
        let files = &ranked.files;
        let found_within = |k: usize| {
            gold.iter()
                .filter(|g| files.iter().take(k).any(|r| r == *g))
                .count()
        };
        let n = gold.len().max(1) as f64;
        self.cases += 1;
        self.recall_at_1 += found_within(1) as f64 / n;
        self.recall_at_5 += found_within(5) as f64 / n;
        self.recall_at_10 += found_within(10) as f64 / n;
        if found_within(5) == gold.len() {
            self.hit_at_5 += 1.0;
        }
        if let Some(i) = files.iter().take(10).position(|r| gold.contains(r)) {
            self.mrr_at_10 += 1.0 / (i + 1) as f64;
        }
        self.mean_ms += ranked.ms;
        let ranks = if truth.symbols.is_empty() && !truth.changed.is_empty() {
            vec![lode_eval::changed_rank(&ranked.chunks, truth.changed)]
        } else {
            lode_eval::symbol_ranks(&ranked.chunks, truth.symbols)
        };
        if !ranks.is_empty() && !ranked.chunks.is_empty() {
            self.function_cases += 1;
            let within = |k: usize| ranks.iter().any(|r| r.is_some_and(|r| r <= k));
            self.function_hit_at_5 += f64::from(u8::from(within(5)));
            self.function_hit_at_10 += f64::from(u8::from(within(10)));
        }
    }

    fn mean(mut self) -> FileScores {
        let n = self.cases.max(1) as f64;
        self.recall_at_1 /= n;
        self.recall_at_5 /= n;
        self.recall_at_10 /= n;
        self.hit_at_5 /= n;
        self.mrr_at_10 /= n;
        self.mean_ms /= n;
        let f = self.function_cases.max(1) as f64;
        self.function_hit_at_5 /= f;
        self.function_hit_at_10 /= f;
        self
    }
}

/// What one case should find.
#[derive(Clone, Copy, Default)]
struct Gold<'a> {
    files: &'a [String],
    symbols: &'a [SymbolTarget],
    /// The lines a mined commit changed.
    changed: &'a [Target],
}

/// One ranking's answer to one case.
#[derive(Default)]
struct Ranking {
    /// Distinct files, best first.
    files: Vec<String>,
    /// Ranked chunks with their symbols (empty for a file-only ranking).
    chunks: Vec<ResultChunk>,
    ms: f64,
}

/// The rankings compared, in report order.
const RANKINGS: [&str; 5] = ["bm25-files", "bm25f", "lode-query", "lode-task", "lode-ask"];

#[derive(Serialize)]
struct SweReport {
    /// The embedding model the indexes were built with.
    model: String,
    cases: usize,
    skipped: Vec<String>,
    /// Ranking → repository (`""` = all) → scores.
    scores: Tally,
    /// Ranking → the cases' language → scores (cases that name one).
    by_language: Tally,
}

/// Ranking → group → scores: sums while the cases come, then [`means`].
type Tally = BTreeMap<String, BTreeMap<String, FileScores>>;

fn means(tally: Tally) -> Tally {
    tally
        .into_iter()
        .map(|(k, v)| (k, v.into_iter().map(|(g, s)| (g, s.mean())).collect()))
        .collect()
}

/// What `--explain` writes per case.
#[derive(Serialize)]
struct Explained<'a> {
    id: &'a str,
    repo: &'a str,
    gold: &'a [String],
    top: BTreeMap<&'static str, Vec<String>>,
    /// The first ten chunks of each chunk ranking, `path:start-end symbol`.
    chunks: BTreeMap<&'static str, Vec<String>>,
}

/// Where the cases' trees and indexes live: a temporary directory removed
/// after each case, or `--work DIR`, kept so that later runs rank again
/// without checking out or indexing anything.
pub(crate) struct Workspace {
    root: PathBuf,
    keep: bool,
}

impl Workspace {
    /// `--work DIR` kept, or a temporary directory.
    pub(crate) fn new(work: Option<&Path>) -> Workspace {
        match work {
            Some(dir) => Workspace {
                root: dir.to_path_buf(),
                keep: true,
            },
            None => Workspace {
                root: std::env::temp_dir().join(format!("lode-bench-{}", std::process::id())),
                keep: false,
            },
        }
    }

    /// The index of `repo` at `rev`: checked out and built unless kept.
    pub(crate) fn index(&self, mirrors: &Path, repo: &str, rev: &str) -> Result<(PathBuf, Index)> {
        let mirror: PathBuf = mirrors.join(repo.replace('/', "+")).join("repo");
        let dir = self.checkout(&mirror, repo, rev)?;
        let loc = IndexLocation::resolve(&dir, Some(&self.cache()))?;
        lode_index::build(&loc, &BuildOptions::quiet(&Config::default()))?;
        Ok((dir, Index::open(&loc)?))
    }

    /// Done with a case: a temporary tree and index go.
    pub(crate) fn finish_case(&self, dir: &Path) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(dir);
            let _ = std::fs::remove_dir_all(self.cache());
        }
    }

    /// Done with the run.
    pub(crate) fn finish(&self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.root);
        }
    }

    fn tree(&self, repo: &str, rev: &str) -> PathBuf {
        if self.keep {
            self.root
                .join("trees")
                .join(format!("{}@{rev}", repo.replace('/', "+")))
        } else {
            self.root.join("tree")
        }
    }

    fn cache(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// The case's tree, checked out unless a kept one is there.
    fn checkout(&self, mirror: &Path, repo: &str, rev: &str) -> Result<PathBuf> {
        let dir = self.tree(repo, rev);
        // Beside the tree, not in it: the tree is what gets indexed.
        let done = dir.with_extension("done");
        if self.keep && done.exists() {
            return Ok(dir);
        }
        let _ = std::fs::remove_dir_all(&dir);
        checkout(mirror, rev, &dir)?;
        if self.keep {
            std::fs::write(&done, b"").map_err(|e| Error::io(&done, e))?;
        }
        Ok(dir)
    }
}

/// `git --git-dir MIRROR archive REV | tar -x -C DIR`; when the archive
/// fails because the mirror lacks some blobs (a snapshot without its largest
/// files), the tree is written blob by blob, the missing ones left out.
fn checkout(mirror: &Path, rev: &str, dir: &Path) -> Result<()> {
    if archive(mirror, rev, dir).is_ok() {
        return Ok(());
    }
    let _ = std::fs::remove_dir_all(dir);
    by_blobs(mirror, rev, dir).map_err(|e| {
        Error::BadQuery(format!(
            "cannot check out {rev} from {}: {e}",
            mirror.display()
        ))
    })
}

/// Writes `rev`'s tree under `dir` from `git cat-file --batch`, skipping
/// blobs the mirror does not have and symbolic links.
fn by_blobs(mirror: &Path, rev: &str, dir: &Path) -> std::io::Result<()> {
    use std::io::{BufRead, BufReader, Read};
    let list = Command::new("git")
        .arg("--git-dir")
        .arg(mirror)
        .args(["ls-tree", "-r", "-z", rev])
        .stderr(Stdio::null())
        .output()?;
    if !list.status.success() {
        return Err(std::io::Error::other("no such revision"));
    }
    // `MODE TYPE SHA\tPATH\0`; regular files only.
    let entries: Vec<(String, String)> = list
        .stdout
        .split(|&b| b == 0)
        .filter_map(|e| {
            let e = std::str::from_utf8(e).ok()?;
            let (head, path) = e.split_once('\t')?;
            let mut parts = head.split(' ');
            let (mode, kind, sha) = (parts.next()?, parts.next()?, parts.next()?);
            (kind == "blob" && mode.starts_with("100") && !path.contains(".."))
                .then(|| (sha.to_string(), path.to_string()))
        })
        .collect();
    let mut cat = Command::new("git")
        .arg("--git-dir")
        .arg(mirror)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    let mut stdin = cat.stdin.take().expect("piped");
    let shas: Vec<String> = entries.iter().map(|e| e.0.clone()).collect();
    let feeder = std::thread::spawn(move || -> std::io::Result<()> {
        for sha in shas {
            writeln!(stdin, "{sha}")?;
        }
        Ok(())
    });
    let mut out = BufReader::new(cat.stdout.take().expect("piped"));
    let mut header = String::new();
    for (_, path) in &entries {
        header.clear();
        out.read_line(&mut header)?;
        let size: Option<usize> = header
            .split_whitespace()
            .nth(2)
            .and_then(|n| n.parse().ok());
        let Some(size) = size else {
            continue; // `SHA missing`
        };
        let mut body = vec![0u8; size + 1];
        out.read_exact(&mut body)?;
        body.pop();
        let target = dir.join(path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(target, body)?;
    }
    feeder
        .join()
        .map_err(|_| std::io::Error::other("feeder panicked"))??;
    cat.wait()?;
    Ok(())
}

/// `git --git-dir MIRROR archive REV | tar -x -C DIR`.
fn archive(mirror: &Path, rev: &str, dir: &Path) -> Result<()> {
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
        .stderr(Stdio::null())
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

/// Options of `lode bench swebench`.
pub struct SweArgs<'a> {
    pub mirrors: &'a Path,
    pub cases: &'a Path,
    pub only: &'a [String],
    pub limit: Option<usize>,
    pub work: Option<&'a Path>,
    pub explain: Option<&'a Path>,
    /// Only these rankings (default: all of [`RANKINGS`]).
    pub rankings: &'a [String],
}

pub fn swebench(common: Common, args: SweArgs) -> Result<u8> {
    let cases: Vec<Case> = lode_eval::load_swebench(args.cases)
        .map_err(|e| Error::BadQuery(e.to_string()))?
        .into_iter()
        .filter(|c| args.only.is_empty() || c.repo.as_ref().is_some_and(|r| args.only.contains(r)))
        .take(args.limit.unwrap_or(usize::MAX))
        .collect();
    let work = Workspace::new(args.work);
    let mut explain = match args.explain {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).map_err(|e| Error::io(p, e))?,
        )),
        None => None,
    };
    let mut scores = Tally::new();
    let mut by_language = Tally::new();
    let mut skipped = Vec::new();
    let mut baseline = Baseline::default();
    for (i, case) in cases.iter().enumerate() {
        let id = case.id.clone().unwrap_or_default();
        let (Some(repo), Some(rev)) = (&case.repo, &case.revision) else {
            skipped.push(format!("{id}: no repo or base commit"));
            continue;
        };
        let (dir, index) = match work.index(args.mirrors, repo, rev) {
            Ok(opened) => opened,
            Err(e) => {
                skipped.push(format!("{repo}@{rev}: {e}"));
                continue;
            }
        };
        let gold: Vec<String> = case.relevant.iter().map(|t| t.path.clone()).collect();
        let truth = Gold {
            files: &gold,
            symbols: &case.symbols,
            changed: &case.changed,
        };
        let mut top = BTreeMap::new();
        let mut chunks = BTreeMap::new();
        for name in RANKINGS {
            if !args.rankings.is_empty() && !args.rankings.iter().any(|r| r == name) {
                continue;
            }
            let tree = format!("{repo}@{rev}");
            let ranked = rank(&index, name, &case.query, (&mut baseline, &tree))?;
            let by_repo = scores.entry(name.to_string()).or_default();
            for key in [String::new(), repo.clone()] {
                by_repo.entry(key).or_default().add(&ranked, &truth);
            }
            if let Some(language) = &case.language {
                (by_language.entry(name.to_string()).or_default())
                    .entry(language.clone())
                    .or_default()
                    .add(&ranked, &truth);
            }
            let listed: Vec<String> = ranked
                .chunks
                .iter()
                .take(10)
                .map(|c| {
                    let symbol = c.symbol.as_deref().unwrap_or("-");
                    format!("{}:{}-{} {symbol}", c.path, c.start_line, c.end_line)
                })
                .collect();
            if !listed.is_empty() {
                chunks.insert(name, listed);
            }
            top.insert(name, ranked.files.into_iter().take(10).collect());
        }
        if let Some(out) = explain.as_mut() {
            let line = serde_json::to_string(&Explained {
                id: &id,
                repo,
                gold: &gold,
                top,
                chunks,
            })
            .expect("serializable");
            writeln!(out, "{line}").map_err(|e| Error::io("explain", e))?;
        }
        drop(index);
        work.finish_case(&dir);
        if !common.json {
            eprintln!("[{}/{}] {id}", i + 1, cases.len());
        }
    }
    work.finish();
    let report = SweReport {
        model: lode_index::vectors::describe().1,
        cases: cases.len() - skipped.len(),
        skipped,
        scores: means(scores),
        by_language: means(by_language),
    };
    if common.json {
        println!(
            "{}",
            lode_search::render::json("bench", &report, Vec::new())
        );
        return Ok(0);
    }
    print_report(&report);
    Ok(0)
}

fn print_report(report: &SweReport) {
    println!(
        "SWE-bench Lite: {} cases searched, {} skipped, model {}",
        report.cases,
        report.skipped.len(),
        report.model
    );
    print_table("repository", &report.scores);
    if !report.by_language.is_empty() {
        println!();
        print_table("language", &report.by_language);
    }
    for s in &report.skipped {
        println!("skipped: {s}");
    }
}

/// One row per ranking and group (`""`: all cases, shown first in bold).
fn print_table(group: &str, tally: &Tally) {
    println!(
        "| ranking | {group} | cases | file R@1 | R@5 | R@10 | Hit@5 | MRR@10 | fn hit@5 | fn hit@10 | ms |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for name in RANKINGS {
        let Some(by_group) = tally.get(name) else {
            continue;
        };
        for (key, s) in by_group {
            let key = if key.is_empty() { "**all**" } else { key };
            let function = |v: f64| {
                if s.function_cases == 0 {
                    "—".to_string()
                } else {
                    format!("{v:.3}")
                }
            };
            println!(
                "| {name} | {key} | {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {:.1} |",
                s.cases,
                s.recall_at_1,
                s.recall_at_5,
                s.recall_at_10,
                s.hit_at_5,
                s.mrr_at_10,
                function(s.function_hit_at_5),
                function(s.function_hit_at_10),
                s.mean_ms
            );
        }
    }
}

/// One ranking's answer to `query`.
fn rank(
    index: &Index,
    name: &str,
    query: &str,
    baseline: (&mut Baseline, &str),
) -> Result<Ranking> {
    let start = Instant::now();
    let mut ranked = match name {
        "bm25-files" => {
            let baseline = baseline.0.of(index, baseline.1);
            let start = Instant::now();
            let files = baseline
                .rank(query, 50)
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            return Ok(Ranking {
                files,
                chunks: Vec::new(),
                ms: start.elapsed().as_secs_f64() * 1000.0,
            });
        }
        "bm25f" | "lode-query" => {
            let opts = SearchOptions {
                top_k: 50,
                snippet_lines: 0,
                semantic: name != "bm25f",
                rerank: name != "bm25f",
                mode: Some(Mode::Query),
                ..SearchOptions::default()
            };
            let hits = lode_search::search(index, query, &opts)?.hits;
            from_hits(&hits)
        }
        "lode-task" => {
            let opts = TaskOptions {
                files: 20,
                snippet_lines: 0,
                ..TaskOptions::default()
            };
            let results = lode_search::task_search(index, query, &opts)?;
            let mut r = from_hits(&results.hits(50));
            r.files = results.files.iter().map(|f| f.path.clone()).collect();
            r
        }
        _ => {
            // `lode ask`: the search (task mode for an issue), then the call graph.
            let opts = SearchOptions {
                top_k: 20,
                snippet_lines: 0,
                ..SearchOptions::default()
            };
            let results = lode_search::search(index, query, &opts)?;
            let answer = lode_gather::ask(
                index,
                &results,
                &lode_gather::AskOptions::default(),
                &lode_gather::GraphCache::new(),
                &lode_gather::GraphState::Ready,
            );
            let hits: Vec<SearchHit> = answer
                .hits
                .iter()
                .map(|h| SearchHit {
                    path: h.path.clone(),
                    start_line: h.start_line,
                    end_line: h.end_line,
                    score: h.score,
                    symbol: h.symbol.clone(),
                    kind: h.kind.clone(),
                    container: h.container.clone(),
                    language: h.language,
                    snippet: String::new(),
                })
                .collect();
            from_hits(&hits)
        }
    };
    ranked.ms = start.elapsed().as_secs_f64() * 1000.0;
    Ok(ranked)
}

fn from_hits(hits: &[SearchHit]) -> Ranking {
    let mut files: Vec<String> = Vec::new();
    for h in hits {
        if !files.contains(&h.path) {
            files.push(h.path.clone());
        }
    }
    let chunks = hits
        .iter()
        .map(|h| {
            let mut c = ResultChunk::new(h.path.clone(), h.start_line, h.end_line);
            // A container reads `class Session`: its name is the last word.
            let owner = h.container.as_deref().and_then(|c| c.rsplit(' ').next());
            c.symbol = h.symbol.as_ref().map(|s| match owner {
                Some(owner) => format!("{owner}.{s}"),
                None => s.clone(),
            });
            c
        })
        .collect();
    Ranking {
        files,
        chunks,
        ms: 0.0,
    }
}

/// The baseline of the tree last asked about, by `repo@commit`: cases in a
/// row at one commit (mined pairs share their snapshot) index it once.
#[derive(Default)]
struct Baseline {
    tree: String,
    index: Option<FileBm25>,
}

impl Baseline {
    fn of(&mut self, index: &Index, tree: &str) -> &FileBm25 {
        if self.index.is_none() || self.tree != tree {
            self.tree = tree.to_string();
            self.index = Some(code_files_bm25(index));
        }
        self.index.as_ref().expect("just built")
    }
}

/// The baseline over the index's code files, read from the tree.
fn code_files_bm25(index: &Index) -> FileBm25 {
    let paths = index.indexed_paths(&Filter::default()).unwrap_or_default();
    let docs = paths.into_iter().filter_map(|p| {
        let lang = index.file(&p).ok()??.lang;
        if !lang.is_code() {
            return None;
        }
        let text = index.file_text(&p)?;
        Some((p, text))
    });
    FileBm25::new(docs)
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
    fn a_tree_with_a_missing_blob_is_checked_out_without_it() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .arg("-C")
                .arg(&repo)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .unwrap()
                .success();
            assert!(ok, "git {args:?}");
        };
        std::fs::create_dir_all(repo.join("src")).unwrap();
        std::fs::write(repo.join("src/kept.py"), "def kept(): pass\n").unwrap();
        std::fs::write(repo.join("big.json"), "{\"large\": true}\n").unwrap();
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-qm", "c"]);
        // Lose the blob of big.json, as a snapshot without its largest files does.
        let sha = Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(["rev-parse", "HEAD:big.json"])
            .output()
            .unwrap();
        let sha = String::from_utf8(sha.stdout).unwrap().trim().to_string();
        std::fs::remove_file(repo.join(".git/objects").join(&sha[..2]).join(&sha[2..])).unwrap();
        let tree = dir.path().join("tree");
        checkout(&repo.join(".git"), "HEAD", &tree).unwrap();
        assert_eq!(
            std::fs::read_to_string(tree.join("src/kept.py")).unwrap(),
            "def kept(): pass\n"
        );
        assert!(!tree.join("big.json").exists());
    }

    fn ranking(files: &[&str]) -> Ranking {
        Ranking {
            files: files.iter().map(|f| f.to_string()).collect(),
            chunks: files
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    let mut c = ResultChunk::new(*f, 1, 2);
                    c.symbol = Some(format!("f{i}"));
                    c
                })
                .collect(),
            ms: 1.0,
        }
    }

    fn files(paths: &[&str]) -> Vec<String> {
        paths.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn scores_count_distinct_files_in_rank_order() {
        let ranked = ranking(&["a.py", "b.py", "c.py"]);
        let mut s = FileScores::default();
        for gold in [files(&["b.py", "z.py"]), files(&["a.py"])] {
            let truth = Gold {
                files: &gold,
                ..Gold::default()
            };
            s.add(&ranked, &truth);
        }
        let s = s.mean();
        assert_eq!(s.cases, 2);
        assert!((s.recall_at_1 - 0.5).abs() < 1e-9, "{s:?}"); // 0 then 1
        assert!((s.recall_at_5 - 0.75).abs() < 1e-9, "{s:?}"); // 0.5 then 1
        assert!((s.hit_at_5 - 0.5).abs() < 1e-9, "{s:?}"); // z.py missing, then all
        assert!((s.mrr_at_10 - 0.75).abs() < 1e-9, "{s:?}"); // 1/2 then 1
        assert_eq!(s.function_cases, 0);
    }

    #[test]
    fn a_function_hit_needs_the_symbol_in_its_file_within_k() {
        let ranked = ranking(&["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]);
        let gold = |path: &str, name: &str| SymbolTarget {
            path: path.into(),
            name: name.into(),
        };
        let case = |file: &'static str, symbols: &[SymbolTarget]| {
            (vec![file.to_string()], symbols.to_vec())
        };
        let mut s = FileScores::default();
        for (files, symbols) in [
            case("f.py", &[gold("f.py", "f5")]), // 6th: a hit at 10 only
            case("a.py", &[gold("a.py", "f0"), gold("a.py", "imports")]),
            case("b.py", &[gold("b.py", "imports")]), // no function: not counted
        ] {
            let truth = Gold {
                files: &files,
                symbols: &symbols,
                changed: &[],
            };
            s.add(&ranked, &truth);
        }
        let s = s.mean();
        assert_eq!(s.function_cases, 2);
        assert!((s.function_hit_at_5 - 0.5).abs() < 1e-9, "{s:?}");
        assert!((s.function_hit_at_10 - 1.0).abs() < 1e-9, "{s:?}");
    }

    #[test]
    fn a_mined_pair_hits_with_a_chunk_that_holds_a_changed_line() {
        // Chunks span lines 1-2 of each file; the 6th holds the change.
        let ranked = ranking(&["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]);
        let files = vec!["f.py".to_string()];
        let mut s = FileScores::default();
        for changed in [Target::span("f.py", 2, 4), Target::span("a.py", 9, 9)] {
            let changed = [changed];
            let truth = Gold {
                files: &files,
                symbols: &[],
                changed: &changed,
            };
            s.add(&ranked, &truth);
        }
        let s = s.mean();
        assert_eq!(s.function_cases, 2);
        assert!((s.function_hit_at_5 - 0.0).abs() < 1e-9, "{s:?}");
        assert!((s.function_hit_at_10 - 0.5).abs() < 1e-9, "{s:?}");
    }
}
