//! The per-query metric functions, exactly as the Semble benchmark defines
//! them (see the crate documentation for the definitions).

use std::collections::BTreeSet;

use crate::case::SymbolTarget;
use crate::target::{ResultChunk, Target, path_matches};

/// For each target, the 1-based rank of the first result that matches it
/// (`None` if no result does). Every returned result is considered, not just
/// the top `k`.
pub fn target_ranks<'a>(
    results: &[ResultChunk],
    targets: impl IntoIterator<Item = &'a Target>,
) -> Vec<Option<usize>> {
    targets
        .into_iter()
        .map(|t| results.iter().position(|r| t.matches(r)).map(|i| i + 1))
        .collect()
}

/// `Σ 1/log2(i + 1)` for `i` in `1..=n`: the DCG of `n` hits at ranks
/// `1..=n`.
pub fn ideal_dcg(n: usize) -> f64 {
    (1..=n).map(discount).sum()
}

fn discount(rank: usize) -> f64 {
    1.0 / ((rank + 1) as f64).log2()
}

/// NDCG@k with binary gains.
///
/// DCG is `Σ 1/log2(rank + 1)` over the **distinct** ranks `≤ k` in
/// `ranks` (two targets matched by the same result count once); the ideal
/// is `min(k, ideal_targets)` hits at ranks `1, 2, …`. Returns `0.0` when
/// `ideal_targets` or `k` is 0.
///
/// `ideal_targets` is normally the number of targets; Semble's published
/// code uses the number of targets that at least one indexed chunk can match
/// (see [`count_indexable_targets`]).
///
/// ```
/// use lode_eval::ndcg_at_k;
/// // two targets, found at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2(3))
/// let ndcg = ndcg_at_k(&[Some(1), Some(3)], 2, 10);
/// assert!((ndcg - 0.9197).abs() < 1e-4);
/// ```
pub fn ndcg_at_k(ranks: &[Option<usize>], ideal_targets: usize, k: usize) -> f64 {
    let ideal = ideal_dcg(k.min(ideal_targets));
    if ideal == 0.0 {
        return 0.0;
    }
    let distinct: BTreeSet<usize> = ranks
        .iter()
        .flatten()
        .copied()
        .filter(|&r| r >= 1 && r <= k)
        .collect();
    distinct.into_iter().map(discount).sum::<f64>() / ideal
}

/// Fraction of targets whose rank is `≤ k`; `None` when there are no
/// targets.
pub fn recall_at_k(ranks: &[Option<usize>], k: usize) -> Option<f64> {
    if ranks.is_empty() {
        return None;
    }
    let found = ranks.iter().flatten().filter(|&&r| r <= k).count();
    Some(found as f64 / ranks.len() as f64)
}

/// The best (smallest) rank, i.e. the rank of the first result that matches
/// any target.
pub fn first_rank(ranks: &[Option<usize>]) -> Option<usize> {
    ranks.iter().flatten().copied().min()
}

/// `1/rank` when `rank ≤ k`, else `0`.
pub fn reciprocal_rank(rank: Option<usize>, k: usize) -> f64 {
    match rank {
        Some(r) if r >= 1 && r <= k => 1.0 / r as f64,
        _ => 0.0,
    }
}

/// Result paths with duplicates removed, in first-appearance order: the
/// ranked file list used by the file-level metrics.
pub fn distinct_files(results: &[ResultChunk]) -> Vec<&str> {
    let mut seen = BTreeSet::new();
    results
        .iter()
        .map(|r| r.path.as_str())
        .filter(|p| seen.insert(*p))
        .collect()
}

/// For each path, its 1-based rank in [`distinct_files`] (by
/// [`path_matches`]), or `None`.
pub fn file_ranks(results: &[ResultChunk], paths: &[&str]) -> Vec<Option<usize>> {
    let files = distinct_files(results);
    paths
        .iter()
        .map(|p| files.iter().position(|f| path_matches(f, p)).map(|i| i + 1))
        .collect()
}

/// The distinct target paths of `targets`, in order: what the file-level
/// metrics score.
pub fn target_files<'a>(targets: impl IntoIterator<Item = &'a Target>) -> Vec<&'a str> {
    let mut seen = BTreeSet::new();
    targets
        .into_iter()
        .map(|t| t.path.as_str())
        .filter(|p| seen.insert(*p))
        .collect()
}

/// Whether a result's symbol name matches a gold symbol name: equal after
/// turning `::` and `#` into `.`, or one is the other's `.`-qualified
/// suffix (`request` ~ `Session.request`).
pub fn symbol_name_matches(result: &str, gold: &str) -> bool {
    let a = result.replace("::", ".").replace('#', ".");
    let b = gold.replace("::", ".").replace('#', ".");
    if a.is_empty() || b.is_empty() {
        return false;
    }
    a == b || a.ends_with(&format!(".{b}")) || b.ends_with(&format!(".{a}"))
}

/// The pseudo-symbol SWE-bench uses for a file's import block; it names no
/// definition, so the symbol hit rate skips it.
pub const IMPORTS_PSEUDO_SYMBOL: &str = "imports";

/// For each gold symbol except [`IMPORTS_PSEUDO_SYMBOL`], the rank of the
/// first result whose path matches the symbol's file and whose `symbol`
/// matches its name ([`symbol_name_matches`]).
pub fn symbol_ranks(results: &[ResultChunk], symbols: &[SymbolTarget]) -> Vec<Option<usize>> {
    symbols
        .iter()
        .filter(|s| s.name != IMPORTS_PSEUDO_SYMBOL)
        .map(|s| {
            results
                .iter()
                .position(|r| {
                    path_matches(&r.path, &s.path)
                        && r.symbol
                            .as_deref()
                            .is_some_and(|name| symbol_name_matches(name, &s.name))
                })
                .map(|i| i + 1)
        })
        .collect()
}

/// The rank of the first result that holds a symbol and overlaps one of
/// `changed` (the lines a mined commit changed): the function-level hit of a
/// case with no gold symbols. A chunk of no symbol (a file's header, its
/// imports) is skipped, as [`symbol_ranks`] skips the `imports` pseudo-symbol.
pub fn changed_rank(results: &[ResultChunk], changed: &[Target]) -> Option<usize> {
    results
        .iter()
        .position(|r| {
            r.symbol.is_some()
                && changed
                    .iter()
                    .any(|t| t.matches_location(&r.path, r.start_line, r.end_line))
        })
        .map(|i| i + 1)
}

/// How many of `targets` at least one of `chunks` (`(path, start, end)`)
/// matches: Semble's ideal count for NDCG (targets absent from the index are
/// not held against the ranking).
pub fn count_indexable_targets<'a, 'c>(
    chunks: impl IntoIterator<Item = (&'c str, u32, u32)> + Clone,
    targets: impl IntoIterator<Item = &'a Target>,
) -> usize {
    targets
        .into_iter()
        .filter(|t| {
            chunks
                .clone()
                .into_iter()
                .any(|(p, s, e)| t.matches_location(p, s, e))
        })
        .count()
}

/// Counts the tokens an agent reads for one result.
///
/// Implemented for any `Fn(&ResultChunk) -> u64`, so a real tokenizer plugs
/// in as a closure.
pub trait TokenCounter {
    /// Tokens in `chunk`.
    fn count(&self, chunk: &ResultChunk) -> u64;
}

impl<F: Fn(&ResultChunk) -> u64> TokenCounter for F {
    fn count(&self, chunk: &ResultChunk) -> u64 {
        self(chunk)
    }
}

/// The default token estimate: `ceil(chars / chars_per_token)` of the
/// result's text when it has one, else `ceil(lines × tokens_per_line)`.
///
/// Defaults: 4 characters per token (the usual rule of thumb for English and
/// code under BPE tokenizers such as `cl100k_base`) and 10 tokens per line
/// (source lines average roughly 40 characters with indentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EstimatedTokens {
    /// Characters per token when text is available.
    pub chars_per_token: f64,
    /// Tokens per line when only the span is known.
    pub tokens_per_line: f64,
}

impl Default for EstimatedTokens {
    fn default() -> Self {
        Self {
            chars_per_token: 4.0,
            tokens_per_line: 10.0,
        }
    }
}

impl TokenCounter for EstimatedTokens {
    fn count(&self, chunk: &ResultChunk) -> u64 {
        match &chunk.text {
            Some(text) => (text.chars().count() as f64 / self.chars_per_token).ceil() as u64,
            None => (f64::from(chunk.line_count()) * self.tokens_per_line).ceil() as u64,
        }
    }
}

/// Tokens read walking `results` top-down up to **and including** the first
/// one that matches any target; `None` if none does. Like Semble's
/// `_tokens_to_first_hit` (the hit itself has to be read).
pub fn tokens_to_first_hit<'a>(
    results: &[ResultChunk],
    targets: impl IntoIterator<Item = &'a Target> + Clone,
    counter: &dyn TokenCounter,
) -> Option<u64> {
    let mut total = 0u64;
    for result in results {
        total += counter.count(result);
        if targets.clone().into_iter().any(|t| t.matches(result)) {
            return Some(total);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    fn r(path: &str, s: u32, e: u32) -> ResultChunk {
        ResultChunk::new(path, s, e)
    }

    #[test]
    fn two_targets_at_ranks_1_and_3() {
        // DCG = 1/log2(2) + 1/log2(4) = 1 + 0.5; IDCG = 1 + 1/log2(3)
        let idcg = 1.0 + 1.0 / 3f64.log2();
        assert!(close(idcg, 1.630_929_753_571_457_4));
        let ndcg = ndcg_at_k(&[Some(1), Some(3)], 2, 10);
        assert!(close(ndcg, 1.5 / idcg));
        assert!((ndcg - 0.9197).abs() < 5e-5);
    }

    #[test]
    fn single_target_positions() {
        assert!(close(ndcg_at_k(&[Some(1)], 1, 10), 1.0));
        // rank 2: 1/log2(3) = 0.6309...
        assert!(close(ndcg_at_k(&[Some(2)], 1, 10), 1.0 / 3f64.log2()));
        // rank 10 counts at k=10, not at k=5
        assert!(close(ndcg_at_k(&[Some(10)], 1, 10), 1.0 / 11f64.log2()));
        assert!(close(ndcg_at_k(&[Some(10)], 1, 5), 0.0));
        assert!(close(ndcg_at_k(&[Some(11)], 1, 10), 0.0));
        assert!(close(ndcg_at_k(&[None], 1, 10), 0.0));
    }

    #[test]
    fn path_suffix_matching_both_directions() {
        assert!(path_matches("src/lib.rs", "src/lib.rs"));
        assert!(path_matches("/abs/repo/src/lib.rs", "src/lib.rs"));
        assert!(path_matches("src/lib.rs", "/abs/repo/src/lib.rs"));
        assert!(path_matches("axum/src/json.rs", "src/json.rs"));
        assert!(path_matches("src\\json.rs", "repo/src/json.rs"));
        // suffix must start at a component boundary
        assert!(!path_matches("src/mylib.rs", "lib.rs"));
        assert!(!path_matches("lib.rs", "src/mylib.rs"));
        assert!(!path_matches("src/lib.rs", "src/lib.rs.bak"));
        assert!(!path_matches("", "src/lib.rs"));
        assert!(!path_matches("src/", ""));
    }

    #[test]
    fn line_overlap_edges() {
        let t = Target::span("a.rs", 10, 20);
        assert!(
            t.matches(&r("a.rs", 20, 30)),
            "touching at the end overlaps"
        );
        assert!(
            t.matches(&r("a.rs", 1, 10)),
            "touching at the start overlaps"
        );
        assert!(t.matches(&r("a.rs", 12, 15)), "inside");
        assert!(t.matches(&r("a.rs", 1, 100)), "containing");
        assert!(t.matches(&r("a.rs", 15, 15)), "one line inside");
        assert!(!t.matches(&r("a.rs", 21, 30)), "just after");
        assert!(!t.matches(&r("a.rs", 1, 9)), "just before");
        assert!(!t.matches(&r("b.rs", 10, 20)), "other file");
        assert!(
            Target::file("a.rs").matches(&r("x/a.rs", 500, 900)),
            "file target ignores lines"
        );
        assert!(spans_overlap_sym((10, 20), (20, 30)));
    }

    fn spans_overlap_sym(a: (u32, u32), b: (u32, u32)) -> bool {
        crate::spans_overlap(a, b) && crate::spans_overlap(b, a)
    }

    #[test]
    fn target_matched_by_several_results_counts_once() {
        let targets = [Target::file("a.rs")];
        let results = [r("a.rs", 1, 5), r("a.rs", 6, 9), r("a.rs", 10, 20)];
        let ranks = target_ranks(&results, &targets);
        assert_eq!(ranks, vec![Some(1)]);
        assert!(close(ndcg_at_k(&ranks, 1, 10), 1.0));
    }

    #[test]
    fn two_targets_matched_by_one_result_use_distinct_ranks() {
        // Both spans lie in the first result: one distinct rank, DCG = 1,
        // IDCG = 1 + 1/log2(3).
        let targets = [Target::span("a.rs", 1, 3), Target::span("a.rs", 8, 9)];
        let results = [r("a.rs", 1, 10), r("b.rs", 1, 10)];
        let ranks = target_ranks(&results, &targets);
        assert_eq!(ranks, vec![Some(1), Some(1)]);
        let ndcg = ndcg_at_k(&ranks, 2, 10);
        assert!(close(ndcg, 1.0 / (1.0 + 1.0 / 3f64.log2())));
        assert!((ndcg - 0.6131).abs() < 5e-5);
        // recall still counts both targets as found
        assert_eq!(recall_at_k(&ranks, 1), Some(1.0));
    }

    #[test]
    fn no_results() {
        let targets = [Target::file("a.rs"), Target::file("b.rs")];
        let ranks = target_ranks(&[], &targets);
        assert_eq!(ranks, vec![None, None]);
        assert!(close(ndcg_at_k(&ranks, 2, 10), 0.0));
        assert_eq!(recall_at_k(&ranks, 10), Some(0.0));
        assert_eq!(first_rank(&ranks), None);
        assert!(close(reciprocal_rank(None, 10), 0.0));
        assert_eq!(recall_at_k(&[], 10), None);
        assert!(close(ndcg_at_k(&[], 0, 10), 0.0));
    }

    #[test]
    fn more_targets_than_k() {
        // 7 targets, k = 5, found at ranks 1..=5 and 6, 7: the ideal is 5
        // hits, so a perfect top 5 scores 1.
        let ranks: Vec<Option<usize>> = (1..=7).map(Some).collect();
        assert!(close(ndcg_at_k(&ranks, 7, 5), 1.0));
        // at k = 10 the ideal is 7 hits and all 7 are at ranks 1..=7
        assert!(close(ndcg_at_k(&ranks, 7, 10), 1.0));
        // found at ranks 1 and 2 only: DCG = 1 + 1/log2(3), IDCG@5 = Σ_{i≤5}
        let ranks = [Some(1), Some(2), None, None, None, None, None];
        let expected = (1.0 + 1.0 / 3f64.log2()) / ideal_dcg(5);
        assert!(close(ndcg_at_k(&ranks, 7, 5), expected));
        // IDCG@5 = 1 + 0.63093 + 0.5 + 0.43068 + 0.38685 = 2.94846
        assert!((ideal_dcg(5) - 2.948_459_9).abs() < 1e-6);
        assert!((expected - 0.553_146).abs() < 1e-5);
        assert_eq!(recall_at_k(&ranks, 5), Some(2.0 / 7.0));
    }

    #[test]
    fn mrr_and_recall() {
        let ranks = [None, Some(4), Some(2)];
        assert_eq!(first_rank(&ranks), Some(2));
        assert!(close(reciprocal_rank(first_rank(&ranks), 10), 0.5));
        assert!(close(reciprocal_rank(Some(11), 10), 0.0));
        assert_eq!(recall_at_k(&ranks, 1), Some(0.0));
        assert_eq!(recall_at_k(&ranks, 2), Some(1.0 / 3.0));
        assert_eq!(recall_at_k(&ranks, 5), Some(2.0 / 3.0));
    }

    #[test]
    fn file_level_ranks_skip_duplicate_files() {
        let results = [
            r("x.py", 1, 9),
            r("x.py", 10, 20),
            r("pkg/y.py", 1, 5),
            r("z.py", 1, 5),
        ];
        assert_eq!(distinct_files(&results), vec!["x.py", "pkg/y.py", "z.py"]);
        assert_eq!(
            file_ranks(&results, &["y.py", "z.py", "w.py"]),
            vec![Some(2), Some(3), None]
        );
    }

    #[test]
    fn symbols() {
        assert!(symbol_name_matches("request", "Session.request"));
        assert!(symbol_name_matches("Session::request", "Session.request"));
        assert!(symbol_name_matches(
            "requests.sessions.Session.request",
            "Session.request"
        ));
        assert!(!symbol_name_matches("request_x", "Session.request"));
        let results = [
            r("requests/sessions.py", 1, 10).with_symbol("merge"),
            r("requests/sessions.py", 20, 80).with_symbol("Session.request"),
        ];
        let gold = [
            SymbolTarget {
                path: "requests/sessions.py".into(),
                name: "imports".into(),
            },
            SymbolTarget {
                path: "requests/sessions.py".into(),
                name: "Session.request".into(),
            },
            SymbolTarget {
                path: "requests/other.py".into(),
                name: "merge".into(),
            },
        ];
        assert_eq!(symbol_ranks(&results, &gold), vec![Some(2), None]);
    }

    #[test]
    fn a_changed_line_counts_in_a_chunk_of_a_symbol() {
        let results = [
            r("src/lib.rs", 1, 8),
            r("src/lib.rs", 10, 30).with_symbol("parse"),
            r("src/lib.rs", 40, 60).with_symbol("render"),
        ];
        let changed = [
            Target::span("src/lib.rs", 5, 5),
            Target::span("src/lib.rs", 45, 47),
        ];
        // The header holds line 5 but no symbol; `render` holds 45-47.
        assert_eq!(changed_rank(&results, &changed), Some(3));
        assert_eq!(
            changed_rank(&results, &[Target::span("src/other.rs", 12, 12)]),
            None
        );
    }

    #[test]
    fn token_counting() {
        let est = EstimatedTokens::default();
        assert_eq!(est.count(&r("a", 1, 10)), 100);
        assert_eq!(est.count(&r("a", 1, 10).with_text("abcdefghi")), 3);
        let targets = [Target::file("hit.rs")];
        let results = [
            r("a.rs", 1, 10),
            r("b.rs", 1, 5),
            r("hit.rs", 1, 2),
            r("c.rs", 1, 99),
        ];
        // 100 + 50 + 20, the hit included
        assert_eq!(tokens_to_first_hit(&results, &targets, &est), Some(170));
        let per_result = |_: &ResultChunk| 7u64;
        assert_eq!(
            tokens_to_first_hit(&results, &targets, &per_result),
            Some(21)
        );
        assert_eq!(tokens_to_first_hit(&results[..2], &targets, &est), None);
    }

    #[test]
    fn indexable_targets() {
        let chunks = [("src/a.rs", 1, 50), ("src/b.rs", 1, 10)];
        let targets = [
            Target::span("a.rs", 40, 60),
            Target::span("b.rs", 11, 20),
            Target::file("c.rs"),
        ];
        assert_eq!(count_indexable_targets(chunks.iter().copied(), &targets), 1);
    }
}
