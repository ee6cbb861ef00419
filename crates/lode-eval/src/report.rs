//! Aggregated results: [`Metrics`], a [`Report`] over a set of queries and a
//! [`SuiteReport`] over repositories, rendered as text tables or JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::runner::{DEFAULT_TOKEN_CAP, QueryResult};
use crate::table::{Table, f3, ms, opt_ms, opt3};

/// Aggregate metrics over a group of queries. Each quality metric is the
/// mean of the per-query values (`Option` ones over the queries where they
/// are defined; `None` when none is).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Number of queries.
    pub queries: usize,
    /// NDCG@5.
    pub ndcg5: f64,
    /// NDCG@10 (the headline metric).
    pub ndcg10: f64,
    /// Recall@1 over all targets (relevant + secondary).
    pub recall1: f64,
    /// Recall@5 over all targets.
    pub recall5: f64,
    /// Recall@10 over all targets.
    pub recall10: f64,
    /// MRR@10: 1/rank of the first result matching any target.
    pub mrr10: f64,
    /// Recall@1 over relevant targets only.
    pub relevant_recall1: Option<f64>,
    /// Recall@5 over relevant targets only.
    pub relevant_recall5: Option<f64>,
    /// Recall@10 over relevant targets only.
    pub relevant_recall10: Option<f64>,
    /// MRR@10 over relevant targets only.
    pub relevant_mrr10: Option<f64>,
    /// File-level recall@1 (distinct target files among distinct result
    /// files).
    pub file_recall1: f64,
    /// File-level recall@5.
    pub file_recall5: f64,
    /// File-level recall@10.
    pub file_recall10: f64,
    /// File-level MRR@10.
    pub file_mrr10: f64,
    /// Fraction of gold symbols found in the top 10 (SWE-bench only).
    pub symbol_hit10: Option<f64>,
    /// Median query latency (ms), linear interpolation between ranks.
    pub p50_ms: f64,
    /// 95th-percentile query latency (ms).
    pub p95_ms: f64,
    /// Mean size in lines of the top-10 results, pooled over queries.
    pub mean_result_lines: f64,
    /// Mean tokens read through the first hit, the cap counted for misses.
    pub expected_tokens: f64,
}

fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The `p`-th percentile (0 ≤ p ≤ 1) of `values` by linear interpolation
/// between closest ranks (numpy's default); 0 for no values.
pub fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let pos = p.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

impl Metrics {
    /// Aggregates per-query results; `token_cap` is charged to misses.
    pub fn from_queries(queries: &[&QueryResult], token_cap: u64) -> Self {
        let m = |f: &dyn Fn(&QueryResult) -> f64| mean(queries.iter().map(|q| f(q)));
        let o = |f: &dyn Fn(&QueryResult) -> Option<f64>| mean(queries.iter().filter_map(|q| f(q)));
        let latencies: Vec<f64> = queries.iter().map(|q| q.latency_ms).collect();
        let lines: u64 = queries.iter().map(|q| q.top_lines).sum();
        let count: usize = queries.iter().map(|q| q.top_count).sum();
        Self {
            queries: queries.len(),
            ndcg5: m(&|q| q.ndcg5).unwrap_or(0.0),
            ndcg10: m(&|q| q.ndcg10).unwrap_or(0.0),
            recall1: o(&|q| q.recall(1)).unwrap_or(0.0),
            recall5: o(&|q| q.recall(5)).unwrap_or(0.0),
            recall10: o(&|q| q.recall(10)).unwrap_or(0.0),
            mrr10: m(&|q| q.mrr(10)).unwrap_or(0.0),
            relevant_recall1: o(&|q| q.relevant_recall(1)),
            relevant_recall5: o(&|q| q.relevant_recall(5)),
            relevant_recall10: o(&|q| q.relevant_recall(10)),
            relevant_mrr10: o(&|q| q.relevant_mrr(10)),
            file_recall1: o(&|q| q.file_recall(1)).unwrap_or(0.0),
            file_recall5: o(&|q| q.file_recall(5)).unwrap_or(0.0),
            file_recall10: o(&|q| q.file_recall(10)).unwrap_or(0.0),
            file_mrr10: o(&|q| q.file_mrr(10)).unwrap_or(0.0),
            symbol_hit10: o(&|q| q.symbol_hit_rate(10)),
            p50_ms: percentile(&latencies, 0.50),
            p95_ms: percentile(&latencies, 0.95),
            mean_result_lines: if count == 0 {
                0.0
            } else {
                lines as f64 / count as f64
            },
            expected_tokens: m(&|q| q.expected_tokens(token_cap) as f64).unwrap_or(0.0),
        }
    }

    /// The Semble aggregation: every field is the mean over `groups` of the
    /// groups' values (an unweighted mean of per-repository means; latency
    /// percentiles are averaged too). `queries` is the total.
    pub fn mean_over(groups: &[&Metrics]) -> Self {
        let m = |f: &dyn Fn(&Metrics) -> f64| mean(groups.iter().map(|g| f(g))).unwrap_or(0.0);
        let o = |f: &dyn Fn(&Metrics) -> Option<f64>| mean(groups.iter().filter_map(|g| f(g)));
        Self {
            queries: groups.iter().map(|g| g.queries).sum(),
            ndcg5: m(&|g| g.ndcg5),
            ndcg10: m(&|g| g.ndcg10),
            recall1: m(&|g| g.recall1),
            recall5: m(&|g| g.recall5),
            recall10: m(&|g| g.recall10),
            mrr10: m(&|g| g.mrr10),
            relevant_recall1: o(&|g| g.relevant_recall1),
            relevant_recall5: o(&|g| g.relevant_recall5),
            relevant_recall10: o(&|g| g.relevant_recall10),
            relevant_mrr10: o(&|g| g.relevant_mrr10),
            file_recall1: m(&|g| g.file_recall1),
            file_recall5: m(&|g| g.file_recall5),
            file_recall10: m(&|g| g.file_recall10),
            file_mrr10: m(&|g| g.file_mrr10),
            symbol_hit10: o(&|g| g.symbol_hit10),
            p50_ms: m(&|g| g.p50_ms),
            p95_ms: m(&|g| g.p95_ms),
            mean_result_lines: m(&|g| g.mean_result_lines),
            expected_tokens: m(&|g| g.expected_tokens),
        }
    }
}

/// The results of running one set of cases.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    /// Over all queries.
    pub summary: Metrics,
    /// Per case category (cases without one are left out).
    pub by_category: BTreeMap<String, Metrics>,
    /// Per case language (cases without one are left out).
    pub by_language: BTreeMap<String, Metrics>,
    /// Index build time, when the caller measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_ms: Option<f64>,
    /// Tokens charged to a query with no hit.
    pub token_cap: u64,
    /// Every query's result.
    #[serde(default)]
    pub queries: Vec<QueryResult>,
}

impl Default for Report {
    fn default() -> Self {
        Self::from_queries(Vec::new(), DEFAULT_TOKEN_CAP)
    }
}

fn grouped(
    queries: &[QueryResult],
    key: impl Fn(&QueryResult) -> Option<&String>,
) -> BTreeMap<String, Vec<&QueryResult>> {
    let mut groups: BTreeMap<String, Vec<&QueryResult>> = BTreeMap::new();
    for q in queries {
        if let Some(k) = key(q) {
            groups.entry(k.clone()).or_default().push(q);
        }
    }
    groups
}

impl Report {
    /// Aggregates per-query results.
    pub fn from_queries(queries: Vec<QueryResult>, token_cap: u64) -> Self {
        let all: Vec<&QueryResult> = queries.iter().collect();
        let summary = Metrics::from_queries(&all, token_cap);
        let aggregate = |groups: BTreeMap<String, Vec<&QueryResult>>| {
            groups
                .into_iter()
                .map(|(k, qs)| (k, Metrics::from_queries(&qs, token_cap)))
                .collect()
        };
        let by_category = aggregate(grouped(&queries, |q| q.category.as_ref()));
        let by_language = aggregate(grouped(&queries, |q| q.language.as_ref()));
        Self {
            summary,
            by_category,
            by_language,
            index_ms: None,
            token_cap,
            queries,
        }
    }

    /// Pools the queries of several reports into one (each query weighs the
    /// same; for the Semble per-repository mean use [`SuiteReport`]). Index
    /// times add up; the first report's token cap is kept.
    pub fn merge(reports: impl IntoIterator<Item = Report>) -> Report {
        let mut cap = None;
        let mut index_ms: Option<f64> = None;
        let mut queries = Vec::new();
        for r in reports {
            cap.get_or_insert(r.token_cap);
            if let Some(t) = r.index_ms {
                *index_ms.get_or_insert(0.0) += t;
            }
            queries.extend(r.queries);
        }
        let mut merged = Report::from_queries(queries, cap.unwrap_or(DEFAULT_TOKEN_CAP));
        merged.index_ms = index_ms;
        merged
    }

    /// Records the index build time.
    pub fn with_index_time(mut self, index_time: Duration) -> Self {
        self.index_ms = Some(index_time.as_secs_f64() * 1000.0);
        self
    }

    /// Queries whose results matched no target, in order.
    pub fn misses(&self) -> impl Iterator<Item = &QueryResult> {
        self.queries.iter().filter(|q| q.first_hit().is_none())
    }

    /// Pretty JSON (the per-query results included).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report always serializes")
    }

    /// Compact text tables: overall, per category and per language.
    pub fn render_text(&self) -> String {
        let mut t = Table::new(&[
            "group", "queries", "NDCG@5", "NDCG@10", "R@1", "R@5", "R@10", "MRR@10", "p50 ms",
            "p95 ms", "lines", "tokens",
        ]);
        let row = |name: String, m: &Metrics| {
            vec![
                name,
                m.queries.to_string(),
                f3(m.ndcg5),
                f3(m.ndcg10),
                f3(m.recall1),
                f3(m.recall5),
                f3(m.recall10),
                f3(m.mrr10),
                ms(m.p50_ms),
                ms(m.p95_ms),
                format!("{:.1}", m.mean_result_lines),
                format!("{:.0}", m.expected_tokens),
            ]
        };
        t.row(row("all".into(), &self.summary));
        for (k, m) in &self.by_category {
            t.row(row(format!("category {k}"), m));
        }
        for (k, m) in &self.by_language {
            t.row(row(format!("language {k}"), m));
        }
        let mut out = t.render();
        let s = &self.summary;
        let _ = writeln!(
            out,
            "relevant-only R@1/5/10 {}/{}/{} MRR@10 {} · file R@1/5/10 {}/{}/{} MRR@10 {}{}{}",
            opt3(s.relevant_recall1),
            opt3(s.relevant_recall5),
            opt3(s.relevant_recall10),
            opt3(s.relevant_mrr10),
            f3(s.file_recall1),
            f3(s.file_recall5),
            f3(s.file_recall10),
            f3(s.file_mrr10),
            s.symbol_hit10
                .map(|v| format!(" · symbol hit@10 {}", f3(v)))
                .unwrap_or_default(),
            self.index_ms
                .map(|v| format!(" · index {} ms", ms(v)))
                .unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "R@k: targets (relevant + secondary) in the top k; lines: mean lines of top-10 results; \
             tokens: mean tokens read through the first hit (miss = {})",
            self.token_cap
        );
        out
    }
}

/// One repository's run within a suite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RepoRun {
    /// Repository name.
    pub name: String,
    /// Repository language.
    pub language: String,
    /// Whether the run used the pinned revision (`None`: unknown).
    #[serde(default)]
    pub pinned_revision: Option<bool>,
    /// The revision actually searched, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Number of indexed chunks, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<u64>,
    /// The repository's report.
    pub report: Report,
}

/// A repository that did not run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedRepo {
    /// Repository name.
    pub name: String,
    /// Why it was skipped.
    pub reason: String,
}

/// Metrics of a group of repositories.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteGroup {
    /// Number of repositories in the group.
    pub repos: usize,
    /// Mean over those repositories.
    #[serde(flatten)]
    pub metrics: Metrics,
}

/// Per-repository reports aggregated the Semble way: the headline is the
/// mean over repositories of each repository's mean over its queries.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SuiteReport {
    /// A name for the configuration that ran (`lode`, `bm25`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    /// Mean over repositories of per-repository metrics.
    pub summary: Metrics,
    /// Mean index time over repositories that measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index_ms: Option<f64>,
    /// Per language: mean over that language's repositories.
    pub by_language: BTreeMap<String, SuiteGroup>,
    /// Per category: mean over the repositories that have the category of
    /// their per-category means.
    pub by_category: BTreeMap<String, SuiteGroup>,
    /// The repositories that ran.
    pub repos: Vec<RepoRun>,
    /// The repositories that did not.
    #[serde(default)]
    pub skipped: Vec<SkippedRepo>,
}

impl SuiteReport {
    /// Aggregates repository runs.
    pub fn new(label: Option<String>, repos: Vec<RepoRun>, skipped: Vec<SkippedRepo>) -> Self {
        let summaries: Vec<&Metrics> = repos.iter().map(|r| &r.report.summary).collect();
        let summary = Metrics::mean_over(&summaries);
        let index_ms = mean(repos.iter().filter_map(|r| r.report.index_ms));

        let mut languages: BTreeMap<String, Vec<&Metrics>> = BTreeMap::new();
        let mut categories: BTreeMap<String, Vec<&Metrics>> = BTreeMap::new();
        for r in &repos {
            languages
                .entry(r.language.clone())
                .or_default()
                .push(&r.report.summary);
            for (cat, m) in &r.report.by_category {
                categories.entry(cat.clone()).or_default().push(m);
            }
        }
        let group = |groups: BTreeMap<String, Vec<&Metrics>>| {
            groups
                .into_iter()
                .map(|(k, ms)| {
                    (
                        k,
                        SuiteGroup {
                            repos: ms.len(),
                            metrics: Metrics::mean_over(&ms),
                        },
                    )
                })
                .collect()
        };
        Self {
            label,
            summary,
            index_ms,
            by_language: group(languages),
            by_category: group(categories),
            repos,
            skipped,
        }
    }

    /// The repository run called `name`.
    pub fn repo(&self, name: &str) -> Option<&RepoRun> {
        self.repos.iter().find(|r| r.name == name)
    }

    /// How many repositories ran at their pinned revision.
    pub fn pinned_count(&self) -> usize {
        self.repos
            .iter()
            .filter(|r| r.pinned_revision == Some(true))
            .count()
    }

    /// All queries pooled into one report (query-weighted).
    pub fn pooled(&self) -> Report {
        Report::merge(self.repos.iter().map(|r| r.report.clone()))
    }

    /// Pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a suite report always serializes")
    }

    /// Compact text tables: per repository, per language, per category and
    /// the headline.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        let mut t = Table::new(&[
            "repo", "language", "pinned", "queries", "NDCG@10", "NDCG@5", "R@10", "MRR@10",
            "p50 ms", "lines", "tokens", "index ms",
        ]);
        for r in &self.repos {
            let m = &r.report.summary;
            t.row(vec![
                r.name.clone(),
                r.language.clone(),
                match r.pinned_revision {
                    Some(true) => "yes".into(),
                    Some(false) => "no".into(),
                    None => "?".into(),
                },
                m.queries.to_string(),
                f3(m.ndcg10),
                f3(m.ndcg5),
                f3(m.recall10),
                f3(m.mrr10),
                ms(m.p50_ms),
                format!("{:.1}", m.mean_result_lines),
                format!("{:.0}", m.expected_tokens),
                opt_ms(r.report.index_ms),
            ]);
        }
        out.push_str(&t.render());
        out.push('\n');

        let group_table = |title: &str, groups: &BTreeMap<String, SuiteGroup>| {
            let mut t = Table::new(&[
                title, "repos", "queries", "NDCG@10", "NDCG@5", "R@10", "MRR@10", "p50 ms",
            ]);
            for (k, g) in groups {
                let m = &g.metrics;
                t.row(vec![
                    k.clone(),
                    g.repos.to_string(),
                    m.queries.to_string(),
                    f3(m.ndcg10),
                    f3(m.ndcg5),
                    f3(m.recall10),
                    f3(m.mrr10),
                    ms(m.p50_ms),
                ]);
            }
            t.render()
        };
        out.push_str(&group_table("language", &self.by_language));
        out.push('\n');
        out.push_str(&group_table("category", &self.by_category));
        out.push('\n');

        let s = &self.summary;
        let _ = writeln!(
            out,
            "{}NDCG@10 {} · NDCG@5 {} · R@1/5/10 {}/{}/{} · MRR@10 {} · p50 {} ms · p95 {} ms · \
             lines {:.1} · tokens {:.0}{}",
            self.label
                .as_ref()
                .map(|l| format!("{l}: "))
                .unwrap_or_default(),
            f3(s.ndcg10),
            f3(s.ndcg5),
            f3(s.recall1),
            f3(s.recall5),
            f3(s.recall10),
            f3(s.mrr10),
            ms(s.p50_ms),
            ms(s.p95_ms),
            s.mean_result_lines,
            s.expected_tokens,
            self.index_ms
                .map(|v| format!(" · index {} ms", ms(v)))
                .unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "mean over {} repositories ({} at the pinned revision, {} queries)",
            self.repos.len(),
            self.pinned_count(),
            s.queries
        );
        if !self.skipped.is_empty() {
            let _ = writeln!(out, "skipped {}:", self.skipped.len());
            for s in &self.skipped {
                let _ = writeln!(out, "  {}: {}", s.name, s.reason);
            }
        }
        out
    }
}
