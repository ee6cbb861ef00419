//! End-to-end runner, report and suite aggregation on hand-made cases whose
//! numbers are worked out by hand in the comments.

use std::time::Duration;

use lode_eval::{
    Case, Comparison, RepoRun, Report, ResultChunk, RunOptions, SearchOutcome, SkippedRepo,
    SuiteReport, Target, UpstreamRepo, UpstreamRun, compare, percentile, run, run_with,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-6
}

fn lg(x: f64) -> f64 {
    x.log2()
}

/// A: targets a.rs:10-20 (relevant) and b.rs (secondary), found at ranks 2
///    and 3. NDCG = (1/log2 3 + 1/2) / (1 + 1/log2 3) = 0.693426.
/// B: target c.rs, no results.
/// C: target d.go, found at rank 1.
fn cases() -> Vec<Case> {
    let mut a = Case::new("alpha", vec![Target::span("a.rs", 10, 20)]);
    a.secondary = vec![Target::file("b.rs")];
    a.category = Some("symbol".into());
    a.language = Some("rust".into());
    a.repo = Some("r1".into());
    let mut b = Case::new("beta", vec![Target::file("c.rs")]);
    b.category = Some("semantic".into());
    b.language = Some("rust".into());
    b.repo = Some("r1".into());
    let mut c = Case::new("gamma", vec![Target::file("d.go")]);
    c.category = Some("semantic".into());
    c.language = Some("go".into());
    c.repo = Some("r2".into());
    vec![a, b, c]
}

fn search(case: &Case) -> (Vec<ResultChunk>, Duration) {
    match case.query.as_str() {
        "alpha" => (
            vec![
                ResultChunk::new("x.rs", 1, 10),
                ResultChunk::new("src/a.rs", 15, 30),
                ResultChunk::new("b.rs", 1, 5),
            ],
            Duration::from_millis(1),
        ),
        "beta" => (vec![], Duration::from_millis(3)),
        _ => (
            vec![ResultChunk::new("d.go", 1, 4).with_text("abcdefgh")],
            Duration::from_millis(2),
        ),
    }
}

const NDCG_A: f64 = 0.693_426_403_617_271;

#[test]
fn per_query_numbers() {
    assert!(close(NDCG_A, (1.0 / lg(3.0) + 0.5) / (1.0 + 1.0 / lg(3.0))));
    let report = run(&cases(), search);
    let a = &report.queries[0];
    assert_eq!(a.target_ranks, vec![Some(2), Some(3)]);
    assert_eq!(a.relevant_count, 1);
    assert!(close(a.ndcg10, NDCG_A));
    assert!(close(a.ndcg5, NDCG_A));
    assert_eq!(a.recall(1), Some(0.0));
    assert_eq!(a.recall(2), Some(0.5));
    assert_eq!(a.recall(5), Some(1.0));
    assert_eq!(a.relevant_recall(2), Some(1.0));
    assert!(close(a.mrr(10), 0.5));
    assert_eq!(a.relevant_mrr(10), Some(0.5));
    assert_eq!(a.file_ranks, vec![Some(2), Some(3)]);
    // 10 lines × 10 + 16 lines × 10, through the hit at rank 2
    assert_eq!(a.tokens_to_first_hit, Some(260));
    assert_eq!((a.top_lines, a.top_count), (31, 3));

    let b = &report.queries[1];
    assert_eq!(b.first_hit(), None);
    assert_eq!(b.tokens_to_first_hit, None);
    assert_eq!(b.expected_tokens(report.token_cap), 32_000);

    let c = &report.queries[2];
    assert!(close(c.ndcg10, 1.0));
    // 8 characters of text / 4
    assert_eq!(c.tokens_to_first_hit, Some(2));
    assert_eq!(report.misses().count(), 1);
}

#[test]
fn aggregates() {
    let report = run(&cases(), search);
    let s = &report.summary;
    assert_eq!(s.queries, 3);
    assert!(close(s.ndcg10, (NDCG_A + 0.0 + 1.0) / 3.0));
    assert!(close(s.recall1, 1.0 / 3.0));
    assert!(close(s.recall10, 2.0 / 3.0));
    assert!(close(s.mrr10, 0.5));
    assert_eq!(s.relevant_recall10, Some(2.0 / 3.0));
    assert!(close(s.file_recall10, 2.0 / 3.0));
    assert_eq!(s.symbol_hit10, None);
    // latencies 1, 3, 2 ms: p50 = 2, p95 = 2 + 0.9 × (3 − 2)
    assert!(close(s.p50_ms, 2.0));
    assert!(close(s.p95_ms, 2.9));
    // top-10 lines pooled: (10 + 16 + 5 + 4) / 4 results
    assert!(close(s.mean_result_lines, 8.75));
    assert!(close(s.expected_tokens, (260.0 + 32_000.0 + 2.0) / 3.0));

    assert!(close(report.by_category["symbol"].ndcg10, NDCG_A));
    assert!(close(report.by_category["semantic"].ndcg10, 0.5));
    assert_eq!(report.by_category["semantic"].queries, 2);
    assert!(close(report.by_language["rust"].ndcg10, NDCG_A / 2.0));
    assert!(close(report.by_language["go"].ndcg10, 1.0));

    let text = report.render_text();
    assert!(text.contains("category symbol"), "{text}");
    assert!(text.contains("language go"), "{text}");
    assert!(text.lines().nth(2).unwrap().starts_with("all "), "{text}");
}

#[test]
fn json_round_trip() {
    let report = run(&cases(), search).with_index_time(Duration::from_millis(250));
    assert_eq!(report.index_ms, Some(250.0));
    let json = report.to_json();
    let back: Report = serde_json::from_str(&json).unwrap();
    assert_eq!(back, report);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(value["summary"]["ndcg10"].is_f64());
    assert!(value["by_category"]["semantic"]["recall10"].is_f64());
}

#[test]
fn options_and_ideal_targets() {
    // Count one token per result and charge 100 for a miss.
    let options = RunOptions {
        token_counter: Box::new(|_: &ResultChunk| 1u64),
        token_cap: 100,
    };
    let report = run_with(&cases(), &options, search);
    assert_eq!(report.queries[0].tokens_to_first_hit, Some(2));
    assert!(close(
        report.summary.expected_tokens,
        (2.0 + 100.0 + 1.0) / 3.0
    ));

    // Semble's ideal count: only one of two targets is indexed, so a hit at
    // rank 1 is perfect.
    let case = Case::new("q", vec![Target::file("here.rs"), Target::file("gone.rs")]);
    let outcome = |ideal| SearchOutcome {
        results: vec![ResultChunk::new("here.rs", 1, 9)],
        latency: Duration::ZERO,
        ideal_targets: ideal,
    };
    let with_all = run(std::slice::from_ref(&case), |_| outcome(None));
    assert!(close(with_all.summary.ndcg10, 1.0 / (1.0 + 1.0 / lg(3.0))));
    let indexed = run(std::slice::from_ref(&case), |_| outcome(Some(1)));
    assert!(close(indexed.summary.ndcg10, 1.0));
}

fn suite() -> SuiteReport {
    let all = cases();
    let r1 = run(&all[..2], search).with_index_time(Duration::from_millis(100));
    let r2 = run(&all[2..], search).with_index_time(Duration::from_millis(300));
    SuiteReport::new(
        Some("lode".into()),
        vec![
            RepoRun {
                name: "r1".into(),
                language: "rust".into(),
                pinned_revision: Some(true),
                revision: None,
                chunks: Some(10),
                report: r1,
            },
            RepoRun {
                name: "r2".into(),
                language: "go".into(),
                pinned_revision: Some(false),
                revision: Some("HEAD".into()),
                chunks: None,
                report: r2,
            },
        ],
        vec![SkippedRepo {
            name: "zig".into(),
            reason: "not checked out".into(),
        }],
    )
}

#[test]
fn suite_is_mean_over_repositories() {
    let suite = suite();
    // r1 mean = NDCG_A / 2, r2 mean = 1: headline = their mean, not the
    // query-weighted (NDCG_A + 1) / 3.
    assert!(close(suite.summary.ndcg10, (NDCG_A / 2.0 + 1.0) / 2.0));
    assert!(close(suite.pooled().summary.ndcg10, (NDCG_A + 1.0) / 3.0));
    assert_eq!(suite.summary.queries, 3);
    assert_eq!(suite.index_ms, Some(200.0));
    assert_eq!(suite.pinned_count(), 1);
    // symbol appears in r1 only; semantic: r1 0.0, r2 1.0
    assert_eq!(suite.by_category["symbol"].repos, 1);
    assert!(close(suite.by_category["symbol"].metrics.ndcg10, NDCG_A));
    assert_eq!(suite.by_category["semantic"].repos, 2);
    assert!(close(suite.by_category["semantic"].metrics.ndcg10, 0.5));
    assert!(close(suite.by_language["go"].metrics.ndcg10, 1.0));
    // latency: mean of per-repository p50s (r1: 2 ms, r2: 2 ms)
    assert!(close(suite.summary.p50_ms, 2.0));

    let text = suite.render_text();
    assert!(
        text.contains("mean over 2 repositories (1 at the pinned revision, 3 queries)"),
        "{text}"
    );
    assert!(text.contains("zig: not checked out"), "{text}");
    let back: SuiteReport = serde_json::from_str(&suite.to_json()).unwrap();
    assert_eq!(back, suite);
}

#[test]
fn merge_pools_queries() {
    let all = cases();
    let merged = Report::merge([run(&all[..1], search), run(&all[1..], search)]);
    assert_eq!(merged, run(&all, search));
}

#[test]
fn comparison_against_upstream() {
    let suite = suite();
    let upstream = UpstreamRun {
        tool: "semble-hybrid".into(),
        repos: vec![
            UpstreamRepo {
                repo: "r1".into(),
                ndcg10: Some(0.8),
                ..UpstreamRepo::default()
            },
            UpstreamRepo {
                repo: "elsewhere".into(),
                ndcg10: Some(0.1),
                ..UpstreamRepo::default()
            },
        ],
        ..UpstreamRun::default()
    };
    let cmp: Comparison = compare(&suite, &[&upstream]);
    assert_eq!(cmp.tools, vec!["semble-hybrid".to_string()]);
    assert_eq!(cmp.rows.len(), 2);
    assert_eq!(cmp.rows[0].others, vec![Some(0.8)]);
    assert_eq!(cmp.rows[1].others, vec![None]);
    // means over the repositories lode ran only: "elsewhere" is ignored
    assert!(close(cmp.mean.lode, suite.summary.ndcg10));
    assert_eq!(cmp.mean.others, vec![Some(0.8)]);
    assert_eq!(cmp.mean.coverage, vec![1]);
    let text = cmp.render_text();
    assert!(text.contains("0.800*"), "{text}");
    assert!(text.contains("semble-hybrid"), "{text}");
}

#[test]
fn percentile_interpolates() {
    assert!(close(percentile(&[], 0.5), 0.0));
    assert!(close(percentile(&[5.0], 0.95), 5.0));
    assert!(close(percentile(&[4.0, 1.0, 3.0, 2.0], 0.5), 2.5));
    assert!(close(
        percentile(&(1..=101).map(f64::from).collect::<Vec<_>>(), 0.95),
        96.0
    ));
}
