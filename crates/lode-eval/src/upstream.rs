//! Published results of other tools on the Semble benchmark
//! (`upstream-results/*.json`), and a side-by-side comparison with a lode
//! [`SuiteReport`].

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::case::read_file;
use crate::error::{Error, Result};
use crate::report::SuiteReport;
use crate::table::{Table, opt3};

/// One repository's published numbers. Every field but `repo` is optional:
/// the files differ in what they publish.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpstreamRepo {
    /// Repository name (as in `repos.json`).
    pub repo: String,
    /// Language label.
    pub language: Option<String>,
    /// NDCG@5.
    pub ndcg5: Option<f64>,
    /// NDCG@10.
    pub ndcg10: Option<f64>,
    /// Median query latency.
    pub p50_ms: Option<f64>,
    /// 90th-percentile latency.
    pub p90_ms: Option<f64>,
    /// 95th-percentile latency.
    pub p95_ms: Option<f64>,
    /// 99th-percentile latency.
    pub p99_ms: Option<f64>,
    /// Index time.
    pub index_ms: Option<f64>,
    /// Number of indexed chunks.
    pub chunks: Option<u64>,
    /// NDCG@10 per query category.
    #[serde(default)]
    pub by_category: BTreeMap<String, f64>,
}

/// The published results of one tool in one mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UpstreamRun {
    /// Tool name: the file's `tool` field, else the file name without its
    /// `-<commit>` suffix (`semble-hybrid`).
    pub tool: String,
    /// Mode within the file (`hybrid`, `semantic`, `bm25`, `speed`, …).
    pub mode: Option<String>,
    /// Model, if the file names one.
    pub model: Option<String>,
    /// The file it came from.
    pub source: PathBuf,
    /// The headline NDCG@10 the file itself states, if any.
    pub published_ndcg10: Option<f64>,
    /// Per-repository numbers, in file order.
    pub repos: Vec<UpstreamRepo>,
}

impl UpstreamRun {
    /// `tool` or `tool/mode`.
    pub fn label(&self) -> String {
        match &self.mode {
            Some(mode) => format!("{}/{mode}", self.tool),
            None => self.tool.clone(),
        }
    }

    /// The numbers for repository `name`.
    pub fn repo(&self, name: &str) -> Option<&UpstreamRepo> {
        self.repos.iter().find(|r| r.repo == name)
    }

    /// Mean NDCG@10 over the repositories that have one.
    pub fn mean_ndcg10(&self) -> Option<f64> {
        mean(self.repos.iter().filter_map(|r| r.ndcg10))
    }

    /// Mean NDCG@10 over the named repositories that have one, with how
    /// many did.
    pub fn mean_ndcg10_over<'a>(
        &self,
        names: impl IntoIterator<Item = &'a str>,
    ) -> Option<(f64, usize)> {
        let values: Vec<f64> = names
            .into_iter()
            .filter_map(|n| self.repo(n).and_then(|r| r.ndcg10))
            .collect();
        mean(values.iter().copied()).map(|m| (m, values.len()))
    }
}

fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// `semble-hybrid-0332378809c5` → `semble-hybrid`: drops a trailing
/// `-<hex>` of 7 to 40 digits.
pub fn tool_name_from_stem(stem: &str) -> &str {
    match stem.rsplit_once('-') {
        Some((name, hash))
            if (7..=40).contains(&hash.len()) && hash.bytes().all(|b| b.is_ascii_hexdigit()) =>
        {
            name
        }
        _ => stem,
    }
}

fn f(v: &Value, key: &str) -> Option<f64> {
    v.get(key).and_then(Value::as_f64)
}

fn s(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn repo_entry(v: &Value, path: &Path, index: usize) -> Result<UpstreamRepo> {
    let repo = s(v, "repo").ok_or_else(|| {
        Error::at(
            path,
            None,
            format!("result entry {} has no \"repo\" name", index + 1),
        )
    })?;
    let by_category = v
        .get("by_category")
        .and_then(Value::as_object)
        .map(|o| {
            o.iter()
                .filter_map(|(k, v)| v.as_f64().map(|x| (k.clone(), x)))
                .collect()
        })
        .unwrap_or_default();
    Ok(UpstreamRepo {
        repo,
        language: s(v, "language"),
        ndcg5: f(v, "ndcg5"),
        ndcg10: f(v, "ndcg10"),
        p50_ms: f(v, "p50_ms"),
        p90_ms: f(v, "p90_ms"),
        p95_ms: f(v, "p95_ms"),
        p99_ms: f(v, "p99_ms"),
        index_ms: f(v, "index_ms"),
        chunks: v.get("chunks").and_then(Value::as_u64),
        by_category,
    })
}

/// Parses one upstream result file. Two shapes are understood:
///
/// - quality results: `{tool?, model?, repos: [{repo, language, mode?,
///   ndcg5?, ndcg10, p50_ms, …, by_category?}], avg_ndcg10? | summary.ndcg10?
///   | by_mode.<mode>.avg_ndcg10?}`: one run per distinct `mode`;
/// - the speed benchmark: `{repos: [names], results: [{repo, language, tool,
///   index_ms, p50_ms, …}]}`: one run per tool, mode `speed`, no NDCG.
pub fn parse_upstream(text: &str, path: &Path) -> Result<Vec<UpstreamRun>> {
    let root: Value = serde_json::from_str(text).map_err(|e| Error::json(path, &e))?;
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file_tool = s(&root, "tool").unwrap_or_else(|| tool_name_from_stem(&stem).to_string());
    let model = s(&root, "model");

    let quality = root
        .get("repos")
        .and_then(Value::as_array)
        .filter(|a| a.first().is_some_and(Value::is_object));
    let (entries, speed) = match (quality, root.get("results").and_then(Value::as_array)) {
        (Some(entries), _) => (entries, false),
        (None, Some(results)) => (results, true),
        (None, None) => {
            return Err(Error::at(
                path,
                None,
                "not an upstream result file: no \"repos\" objects or \"results\" list",
            ));
        }
    };

    // Group entries by run key, keeping first-appearance order.
    let mut runs: Vec<UpstreamRun> = Vec::new();
    for (index, entry) in entries.iter().enumerate() {
        let (tool, mode) = if speed {
            (
                s(entry, "tool").unwrap_or_else(|| file_tool.clone()),
                Some("speed".to_string()),
            )
        } else {
            (file_tool.clone(), s(entry, "mode"))
        };
        let repo = repo_entry(entry, path, index)?;
        match runs.iter_mut().find(|r| r.tool == tool && r.mode == mode) {
            Some(run) => run.repos.push(repo),
            None => runs.push(UpstreamRun {
                tool,
                mode,
                model: model.clone(),
                source: path.to_path_buf(),
                published_ndcg10: None,
                repos: vec![repo],
            }),
        }
    }
    for run in &mut runs {
        run.published_ndcg10 = match &run.mode {
            Some(mode) => root
                .get("by_mode")
                .and_then(|m| m.get(mode))
                .and_then(|m| f(m, "avg_ndcg10")),
            None => {
                f(&root, "avg_ndcg10").or_else(|| root.get("summary").and_then(|s| f(s, "ndcg10")))
            }
        };
    }
    Ok(runs)
}

/// Reads one upstream result file (see [`parse_upstream`]).
pub fn load_upstream_file(path: impl AsRef<Path>) -> Result<Vec<UpstreamRun>> {
    let path = path.as_ref();
    parse_upstream(&read_file(path)?, path)
}

/// Reads every `*.json` in `dir`, in file-name order.
pub fn load_upstream_dir(dir: impl AsRef<Path>) -> Result<Vec<UpstreamRun>> {
    let dir = dir.as_ref();
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, &e))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut runs = Vec::new();
    for file in files {
        runs.extend(load_upstream_file(&file)?);
    }
    Ok(runs)
}

/// The runs a lode report is usually set against, in this order when
/// present: semble hybrid, CodeRankEmbed hybrid, ColGREP, ripgrep.
pub const DEFAULT_COMPARISON: [&str; 4] = [
    "semble-hybrid",
    "coderankembed/hybrid",
    "colgrep",
    "ripgrep-fixed-strings",
];

/// Picks the runs whose [`UpstreamRun::label`] is in `labels`, in `labels`
/// order.
pub fn select_runs<'a>(runs: &'a [UpstreamRun], labels: &[&str]) -> Vec<&'a UpstreamRun> {
    labels
        .iter()
        .filter_map(|l| runs.iter().find(|r| r.label() == *l))
        .collect()
}

/// One row of a [`Comparison`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ComparisonRow {
    /// Repository or language name, or `mean`.
    pub name: String,
    /// Language (repository rows).
    pub language: Option<String>,
    /// Number of lode repositories behind the row.
    pub repos: usize,
    /// lode's NDCG@10.
    pub lode: f64,
    /// Each upstream run's NDCG@10 over the same repositories (`None` where
    /// it published none), in [`Comparison::tools`] order.
    pub others: Vec<Option<f64>>,
    /// For aggregate rows: how many of the row's repositories each upstream
    /// value covers.
    pub coverage: Vec<usize>,
}

/// lode's NDCG@10 next to upstream runs, per repository, per language and
/// overall, always over the repositories lode ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// lode's label.
    pub lode_label: String,
    /// Upstream run labels, the column order.
    pub tools: Vec<String>,
    /// One row per lode repository.
    pub rows: Vec<ComparisonRow>,
    /// One row per language (mean over its repositories).
    pub by_language: Vec<ComparisonRow>,
    /// Mean over all lode repositories.
    pub mean: ComparisonRow,
}

/// Sets `suite` beside `upstream`.
pub fn compare(suite: &SuiteReport, upstream: &[&UpstreamRun]) -> Comparison {
    let tools = upstream.iter().map(|r| r.label()).collect();
    let rows: Vec<ComparisonRow> = suite
        .repos
        .iter()
        .map(|r| {
            let others: Vec<Option<f64>> = upstream
                .iter()
                .map(|u| u.repo(&r.name).and_then(|x| x.ndcg10))
                .collect();
            ComparisonRow {
                name: r.name.clone(),
                language: Some(r.language.clone()),
                repos: 1,
                lode: r.report.summary.ndcg10,
                coverage: others.iter().map(|o| usize::from(o.is_some())).collect(),
                others,
            }
        })
        .collect();
    let aggregate = |name: String, members: &[&ComparisonRow]| ComparisonRow {
        name,
        language: None,
        repos: members.len(),
        lode: mean(members.iter().map(|r| r.lode)).unwrap_or(0.0),
        others: (0..upstream.len())
            .map(|i| mean(members.iter().filter_map(|r| r.others[i])))
            .collect(),
        coverage: (0..upstream.len())
            .map(|i| members.iter().filter(|r| r.others[i].is_some()).count())
            .collect(),
    };
    let mut languages: BTreeMap<&str, Vec<&ComparisonRow>> = BTreeMap::new();
    for row in &rows {
        languages
            .entry(row.language.as_deref().unwrap_or(""))
            .or_default()
            .push(row);
    }
    let by_language = languages
        .iter()
        .map(|(lang, members)| aggregate((*lang).to_string(), members))
        .collect();
    let all: Vec<&ComparisonRow> = rows.iter().collect();
    let mean_row = aggregate("mean".to_string(), &all);
    Comparison {
        lode_label: suite.label.clone().unwrap_or_else(|| "lode".to_string()),
        tools,
        by_language,
        mean: mean_row,
        rows,
    }
}

impl Comparison {
    /// Text tables: per repository, per language, then the mean row. An
    /// aggregate value covering fewer repositories than the row is marked
    /// `*`.
    pub fn render_text(&self) -> String {
        let mut header = vec![
            "repo".to_string(),
            "language".to_string(),
            self.lode_label.clone(),
        ];
        header.extend(self.tools.iter().cloned());
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let cells = |row: &ComparisonRow| -> Vec<String> {
            let mut cells = vec![
                row.name.clone(),
                row.language
                    .clone()
                    .unwrap_or_else(|| format!("{} repos", row.repos)),
                format!("{:.3}", row.lode),
            ];
            for (value, covered) in row.others.iter().zip(&row.coverage) {
                let mark = if *covered < row.repos && value.is_some() {
                    "*"
                } else {
                    ""
                };
                cells.push(format!("{}{mark}", opt3(*value)));
            }
            cells
        };
        let mut t = Table::new(&header_refs);
        for row in &self.rows {
            t.row(cells(row));
        }
        t.row(cells(&self.mean));
        let mut out = t.render();
        out.push('\n');
        let mut header = vec![
            "language".to_string(),
            "repos".to_string(),
            self.lode_label.clone(),
        ];
        header.extend(self.tools.iter().cloned());
        let header_refs: Vec<&str> = header.iter().map(String::as_str).collect();
        let mut t = Table::new(&header_refs);
        for row in &self.by_language {
            let mut c = cells(row);
            c[1] = row.repos.to_string();
            t.row(c);
        }
        out.push_str(&t.render());
        let _ = writeln!(
            out,
            "NDCG@10; every column averages the same {} repositories lode ran (* = fewer published)",
            self.mean.repos
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert_eq!(
            tool_name_from_stem("semble-hybrid-0332378809c5"),
            "semble-hybrid"
        );
        assert_eq!(
            tool_name_from_stem("ripgrep-fixed-strings-0332378809c5"),
            "ripgrep-fixed-strings"
        );
        assert_eq!(tool_name_from_stem("semble-hybrid"), "semble-hybrid");
    }

    #[test]
    fn parses_modes_and_speed() {
        let quality = r#"{"tool":"x","by_mode":{"a":{"avg_ndcg10":0.5}},"repos":[
            {"repo":"r1","language":"go","mode":"a","ndcg10":0.4,"by_category":{"symbol":1.0}},
            {"repo":"r1","language":"go","mode":"b","ndcg10":0.6},
            {"repo":"r2","language":"go","mode":"a","ndcg10":0.6}]}"#;
        let runs = parse_upstream(quality, Path::new("x-abcdef1.json")).unwrap();
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0].label(), "x/a");
        assert_eq!(runs[0].published_ndcg10, Some(0.5));
        assert_eq!(runs[0].mean_ndcg10(), Some(0.5));
        assert_eq!(runs[0].repo("r1").unwrap().by_category["symbol"], 1.0);
        assert_eq!(runs[1].repos.len(), 1);

        let speed = r#"{"repos":["r1"],"results":[{"repo":"r1","language":"go","tool":"semble","p50_ms":1.0},{"repo":"r1","language":"go","tool":"bm25","p50_ms":0.1}]}"#;
        let runs = parse_upstream(speed, Path::new("speed-abcdef1.json")).unwrap();
        assert_eq!(
            runs.iter().map(UpstreamRun::label).collect::<Vec<_>>(),
            ["semble/speed", "bm25/speed"]
        );
        assert_eq!(runs[0].repos[0].ndcg10, None);

        let err = parse_upstream("{\"foo\": 1}", Path::new("bad.json")).unwrap_err();
        assert!(err.to_string().contains("bad.json"));
        let err =
            parse_upstream("{\"repos\": [{\"ndcg10\": 1}]}", Path::new("bad.json")).unwrap_err();
        assert!(err.message.contains("repo"));
    }
}
