//! Runs cases through a search closure and scores every query.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::case::Case;
use crate::metrics::{
    EstimatedTokens, TokenCounter, file_ranks, first_rank, ndcg_at_k, recall_at_k, reciprocal_rank,
    symbol_ranks, target_files, target_ranks, tokens_to_first_hit,
};
use crate::report::Report;
use crate::target::ResultChunk;

/// The rank cut-off for the "top results" statistics (mean result size).
pub const TOP_K: usize = 10;

/// Tokens charged to a query whose results never reach a target, as in
/// Semble's token-efficiency benchmark.
pub const DEFAULT_TOKEN_CAP: u64 = 32_000;

/// What one search returned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchOutcome {
    /// Ranked results, best first. Return at least 10 (NDCG@10); more only
    /// affects the token walk.
    pub results: Vec<ResultChunk>,
    /// Time the search took.
    pub latency: Duration,
    /// The NDCG ideal count, if it should differ from the number of targets.
    /// Semble's published code passes the number of targets that some
    /// indexed chunk matches ([`crate::count_indexable_targets`]); `None`
    /// uses all targets, as the benchmark README states.
    pub ideal_targets: Option<usize>,
}

impl From<(Vec<ResultChunk>, Duration)> for SearchOutcome {
    fn from((results, latency): (Vec<ResultChunk>, Duration)) -> Self {
        Self {
            results,
            latency,
            ideal_targets: None,
        }
    }
}

impl From<Vec<ResultChunk>> for SearchOutcome {
    fn from(results: Vec<ResultChunk>) -> Self {
        Self {
            results,
            ..Self::default()
        }
    }
}

/// How a run counts tokens.
pub struct RunOptions {
    /// Tokens per result; [`EstimatedTokens`] by default.
    pub token_counter: Box<dyn TokenCounter>,
    /// Tokens charged to a query with no hit ([`DEFAULT_TOKEN_CAP`]).
    pub token_cap: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self {
            token_counter: Box::new(EstimatedTokens::default()),
            token_cap: DEFAULT_TOKEN_CAP,
        }
    }
}

impl fmt::Debug for RunOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunOptions")
            .field("token_cap", &self.token_cap)
            .finish_non_exhaustive()
    }
}

/// The scored outcome of one query. Ranks are 1-based; `None` means not
/// found among the returned results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QueryResult {
    /// The query text.
    pub query: String,
    /// Case id, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Case category, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Case language, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Case repository, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// Rank of the first result matching each target: the case's relevant
    /// targets first, then its secondary ones.
    pub target_ranks: Vec<Option<usize>>,
    /// How many of `target_ranks` belong to relevant (not secondary)
    /// targets.
    pub relevant_count: usize,
    /// The NDCG ideal count used.
    pub ideal_targets: usize,
    /// NDCG@5.
    pub ndcg5: f64,
    /// NDCG@10.
    pub ndcg10: f64,
    /// Rank of each distinct target file in the distinct-file result list.
    pub file_ranks: Vec<Option<usize>>,
    /// Rank of each gold symbol (SWE-bench), `imports` excluded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbol_ranks: Vec<Option<usize>>,
    /// Search latency in milliseconds.
    pub latency_ms: f64,
    /// Number of results returned.
    pub result_count: usize,
    /// Sum of line counts of the top [`TOP_K`] results.
    pub top_lines: u64,
    /// Number of results in the top [`TOP_K`] (≤ 10).
    pub top_count: usize,
    /// Tokens read through the first result matching any target, or `None`.
    pub tokens_to_first_hit: Option<u64>,
}

impl QueryResult {
    /// Rank of the first result matching any target (relevant or
    /// secondary).
    pub fn first_hit(&self) -> Option<usize> {
        first_rank(&self.target_ranks)
    }

    /// Rank of the first result matching a relevant (not secondary) target.
    pub fn first_relevant_hit(&self) -> Option<usize> {
        first_rank(self.relevant_ranks())
    }

    fn relevant_ranks(&self) -> &[Option<usize>] {
        &self.target_ranks[..self.relevant_count.min(self.target_ranks.len())]
    }

    /// Fraction of all targets (relevant and secondary) found in the top
    /// `k`: Semble's recall definition.
    pub fn recall(&self, k: usize) -> Option<f64> {
        recall_at_k(&self.target_ranks, k)
    }

    /// Fraction of relevant targets found in the top `k`; `None` when the
    /// case has only secondary targets.
    pub fn relevant_recall(&self, k: usize) -> Option<f64> {
        recall_at_k(self.relevant_ranks(), k)
    }

    /// Reciprocal rank of the first result matching any target, 0 beyond
    /// `k`.
    pub fn mrr(&self, k: usize) -> f64 {
        reciprocal_rank(self.first_hit(), k)
    }

    /// Reciprocal rank of the first result matching a relevant target.
    pub fn relevant_mrr(&self, k: usize) -> Option<f64> {
        (self.relevant_count > 0).then(|| reciprocal_rank(self.first_relevant_hit(), k))
    }

    /// Fraction of target files in the top `k` distinct files.
    pub fn file_recall(&self, k: usize) -> Option<f64> {
        recall_at_k(&self.file_ranks, k)
    }

    /// Reciprocal rank of the first target file among distinct files.
    pub fn file_mrr(&self, k: usize) -> Option<f64> {
        (!self.file_ranks.is_empty()).then(|| reciprocal_rank(first_rank(&self.file_ranks), k))
    }

    /// Fraction of gold symbols found in the top `k`; `None` without gold
    /// symbols.
    pub fn symbol_hit_rate(&self, k: usize) -> Option<f64> {
        recall_at_k(&self.symbol_ranks, k)
    }

    /// Tokens to the first hit, or `cap` when there is none.
    pub fn expected_tokens(&self, cap: u64) -> u64 {
        self.tokens_to_first_hit.unwrap_or(cap)
    }
}

/// Scores one query against the results of one search.
pub fn evaluate_query(case: &Case, outcome: &SearchOutcome, options: &RunOptions) -> QueryResult {
    let results = &outcome.results;
    let ranks = target_ranks(results, case.targets());
    let ideal = outcome.ideal_targets.unwrap_or(ranks.len());
    let files = target_files(case.targets());
    let top = &results[..results.len().min(TOP_K)];
    QueryResult {
        query: case.query.clone(),
        id: case.id.clone(),
        category: case.category.clone(),
        language: case.language.clone(),
        repo: case.repo.clone(),
        ndcg5: ndcg_at_k(&ranks, ideal, 5),
        ndcg10: ndcg_at_k(&ranks, ideal, 10),
        target_ranks: ranks,
        relevant_count: case.relevant.len(),
        ideal_targets: ideal,
        file_ranks: file_ranks(results, &files),
        symbol_ranks: symbol_ranks(results, &case.symbols),
        latency_ms: outcome.latency.as_secs_f64() * 1000.0,
        result_count: results.len(),
        top_lines: top.iter().map(|r| u64::from(r.line_count())).sum(),
        top_count: top.len(),
        tokens_to_first_hit: tokens_to_first_hit(
            results,
            case.targets(),
            options.token_counter.as_ref(),
        ),
    }
}

/// Runs every case through `search` with the default [`RunOptions`].
///
/// `search` returns `(results, latency)` or a [`SearchOutcome`].
pub fn run<F, O>(cases: &[Case], search: F) -> Report
where
    F: FnMut(&Case) -> O,
    O: Into<SearchOutcome>,
{
    run_with(cases, &RunOptions::default(), search)
}

/// [`run`] with explicit options.
pub fn run_with<F, O>(cases: &[Case], options: &RunOptions, mut search: F) -> Report
where
    F: FnMut(&Case) -> O,
    O: Into<SearchOutcome>,
{
    let queries = cases
        .iter()
        .map(|case| evaluate_query(case, &search(case).into(), options))
        .collect();
    Report::from_queries(queries, options.token_cap)
}
