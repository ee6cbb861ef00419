//! Retrieval evaluation for lode: benchmark cases, the Semble code-search
//! metric, a runner that scores any search function, reports, and the
//! published results of other tools to compare against.
//!
//! This crate knows nothing about lode's index or search: the runner takes a
//! closure from a [`Case`] to ranked [`ResultChunk`]s and a latency.
//!
//! # Principal types
//!
//! - [`Case`]: a query with its [`Target`]s (`relevant` and `secondary`
//!   files or line spans), category, language and repository. Loaders:
//!   [`load_jsonl`] (lode's JSON Lines), [`load_semble_annotations`] (a
//!   Semble `annotations/<name>.json` array), [`load_cases`] (either, by
//!   content), [`SembleBenchmark::load`] (`repos.json` + annotations +
//!   `revisions.tsv`, giving [`SembleRepo`]s) and [`load_swebench`]
//!   (SWE-bench Lite `cases.jsonl`, with gold symbols as [`SymbolTarget`]s).
//!   Bad input gives an [`Error`] naming the file and line.
//! - [`ResultChunk`]: one ranked result, `(path, start_line, end_line)` with
//!   optional text (for token counts) and symbol (for SWE-bench symbol hits).
//! - [`run`] / [`run_with`]: call the search for every case and score it into
//!   a [`QueryResult`] ([`evaluate_query`]), then aggregate into a
//!   [`Report`]: [`Metrics`] overall, per category and per language.
//! - [`SuiteReport`]: per-repository [`RepoRun`]s aggregated the Semble way
//!   (headline = mean over repositories of each repository's mean), with the
//!   repositories that ran at their pinned revision and the skipped ones.
//! - [`FileBm25`]: the whole-file Okapi BM25 baseline that task-retrieval
//!   reports set lode beside (its own tokenizer, [`bm25_tokens`]).
//! - [`learn`]: weights of a ranking fitted by coordinate ascent over
//!   labelled candidate lists, for rankings whose features a caller computes.
//! - [`UpstreamRun`]: published per-repository results
//!   ([`load_upstream_dir`]); [`compare`] sets a [`SuiteReport`] beside them
//!   as a [`Comparison`].
//!
//! Reports render as compact text tables (`render_text`) and as JSON
//! (`to_json`, or serde directly).
//!
//! # The metric
//!
//! As `../shared/eval/README.md` defines it and Semble's
//! `benchmarks/metrics.py` computes it:
//!
//! - **Match**: a result matches a target when the paths are equal or one
//!   ends with `/` + the other ([`path_matches`]) and, if the target has a
//!   line span, the inclusive ranges overlap ([`spans_overlap`]; touching
//!   ranges overlap).
//! - **Target rank**: for each target, relevant and secondary together, the
//!   1-based rank of the first matching result ([`target_ranks`]).
//! - **NDCG@k** ([`ndcg_at_k`]): binary gains; DCG = Σ 1/log2(rank + 1) over
//!   the *distinct* ranks ≤ k (a result matching two targets counts once);
//!   ideal = min(k, number of targets) hits at ranks 1, 2, …. Semble's code
//!   uses as "number of targets" those some indexed chunk can match;
//!   [`SearchOutcome::ideal_targets`] and [`count_indexable_targets`]
//!   reproduce that when wanted.
//! - **Recall@k**: the fraction of targets with rank ≤ k. The headline
//!   `recall1/5/10` counts *all* targets (relevant + secondary), the only
//!   recall Semble defines (its token-efficiency benchmark divides covered
//!   targets by `len(all_relevant)`; its result files publish no recall).
//!   `relevant_recall*` counts relevant targets only.
//! - **MRR@10**: 1/rank of the first result matching any target (0 beyond
//!   10); `relevant_mrr10` uses relevant targets only.
//! - **File level** (SWE-bench): results collapse to distinct files in
//!   first-appearance order; file recall@k and MRR@10 score the distinct
//!   target paths against that list.
//! - **Symbol hit rate@10** (SWE-bench): the fraction of gold symbols (the
//!   `imports` pseudo-symbol excluded) for which a top-10 result in the same
//!   file carries a matching symbol name ([`symbol_name_matches`]).
//! - **Token efficiency**: walking the results top-down, the tokens read up
//!   to and including the first result matching any target
//!   ([`tokens_to_first_hit`]); a query with no hit costs
//!   [`DEFAULT_TOKEN_CAP`] (32,000, as Semble). The count per result is
//!   pluggable ([`TokenCounter`]); the default [`EstimatedTokens`] is
//!   characters / 4 of the result's text, or lines × 10 without text.
//! - **Aggregation**: a [`Report`] averages its queries; latency p50/p95 are
//!   percentiles over queries; mean result size is the mean line count of
//!   the top-10 results. A [`SuiteReport`] averages its repositories' means
//!   (per language: over that language's repositories; per category: over
//!   the repositories having it), exactly how Semble's published
//!   `summary.ndcg10` and `summary.by_category` are computed.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use lode_eval::{Case, ResultChunk, Target, run};
//!
//! let cases = vec![
//!     Case::new("parse config", vec![Target::file("src/config.rs"), Target::span("src/lib.rs", 10, 20)]),
//!     Case::new("Router", vec![Target::file("src/router.rs")]),
//! ];
//! let report = run(&cases, |case| {
//!     let results = match case.query.as_str() {
//!         // both targets found, at ranks 1 and 3
//!         "parse config" => vec![
//!             ResultChunk::new("/repo/src/config.rs", 1, 40),
//!             ResultChunk::new("src/other.rs", 1, 10),
//!             ResultChunk::new("src/lib.rs", 20, 30),
//!         ],
//!         _ => vec![],
//!     };
//!     (results, Duration::from_millis(2))
//! });
//! // (1 + 1/2) / (1 + 1/log2 3) = 0.9197 for the first query, 0 for the second
//! assert!((report.queries[0].ndcg10 - 0.9197).abs() < 1e-4);
//! assert!((report.summary.ndcg10 - 0.9197 / 2.0).abs() < 1e-4);
//! assert_eq!(report.summary.recall10, 0.5);
//! assert_eq!(report.summary.mrr10, 0.5);
//! println!("{}", report.render_text());
//! ```

#![deny(missing_docs)]

mod baseline;
mod case;
mod error;
pub mod learn;
mod metrics;
mod report;
mod runner;
mod semble;
mod swebench;
mod table;
mod target;
mod upstream;

pub use baseline::{FileBm25, bm25_tokens};
pub use case::{
    Case, SymbolTarget, group_by_repo, infer_category, load_cases, load_jsonl,
    load_semble_annotations, parse_jsonl, parse_semble_annotations,
};
pub use error::{Error, Result};
pub use metrics::{
    EstimatedTokens, IMPORTS_PSEUDO_SYMBOL, TokenCounter, changed_rank, count_indexable_targets,
    distinct_files, file_ranks, first_rank, ideal_dcg, ndcg_at_k, recall_at_k, reciprocal_rank,
    symbol_name_matches, symbol_ranks, target_files, target_ranks, tokens_to_first_hit,
};
pub use report::{Metrics, RepoRun, Report, SkippedRepo, SuiteGroup, SuiteReport, percentile};
pub use runner::{
    DEFAULT_TOKEN_CAP, QueryResult, RunOptions, SearchOutcome, TOP_K, evaluate_query, run, run_with,
};
pub use semble::{SembleBenchmark, SembleRepo, parse_revisions_tsv};
pub use swebench::{load_swebench, parse_swebench};
pub use target::{ResultChunk, Target, path_matches, spans_overlap};
pub use upstream::{
    Comparison, ComparisonRow, DEFAULT_COMPARISON, UpstreamRepo, UpstreamRun, compare,
    load_upstream_dir, load_upstream_file, parse_upstream, select_runs, tool_name_from_stem,
};
