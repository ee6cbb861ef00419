//! Checks against the real benchmark data in `../shared/eval` (relative to
//! the repository root). Each test prints a note and passes when the data is
//! absent.

use std::path::PathBuf;

use lode_eval::{
    Case, DEFAULT_COMPARISON, RepoRun, ResultChunk, SembleBenchmark, SuiteReport, Target, compare,
    load_swebench, load_upstream_dir, load_upstream_file, run, select_runs,
};

fn shared_eval() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval");
    if dir.join("README.md").exists() {
        Some(dir)
    } else {
        eprintln!("note: {} not found; skipping", dir.display());
        None
    }
}

#[test]
fn semble_hybrid_upstream_mean_is_0_854() {
    let Some(dir) = shared_eval() else { return };
    let file = dir.join("semble/upstream-results/semble-hybrid-0332378809c5.json");
    let runs = load_upstream_file(&file).unwrap();
    assert_eq!(runs.len(), 1);
    let hybrid = &runs[0];
    assert_eq!(hybrid.label(), "semble-hybrid");
    assert_eq!(hybrid.repos.len(), 63);
    let mean = hybrid.mean_ndcg10().unwrap();
    assert!((mean - 0.854).abs() < 0.001, "mean NDCG@10 {mean}");
    assert_eq!(hybrid.published_ndcg10, Some(0.8544));
    let axum = hybrid.repo("axum").unwrap();
    assert_eq!(axum.language.as_deref(), Some("rust"));
    assert!(axum.ndcg10.unwrap() > 0.7);
    assert!(axum.by_category.contains_key("architecture"));
}

#[test]
fn all_upstream_files_load() {
    let Some(dir) = shared_eval() else { return };
    let runs = load_upstream_dir(dir.join("semble/upstream-results")).unwrap();
    let picked = select_runs(&runs, &DEFAULT_COMPARISON);
    assert_eq!(
        picked.len(),
        4,
        "{:?}",
        runs.iter().map(|r| r.label()).collect::<Vec<_>>()
    );
    let means: Vec<f64> = picked.iter().map(|r| r.mean_ndcg10().unwrap()).collect();
    // published: semble 0.8544, CodeRankEmbed hybrid 0.8617, ColGREP 0.6925, ripgrep 0.1257
    for (got, want) in means.iter().zip([0.8544, 0.8617, 0.6925, 0.1257]) {
        assert!((got - want).abs() < 0.0005, "{got} vs {want}");
    }
    assert!(runs.iter().any(|r| r.label() == "semble/speed"));
}

#[test]
fn semble_benchmark_loads() {
    let Some(dir) = shared_eval() else { return };
    let bench = SembleBenchmark::load(dir.join("semble")).unwrap();
    assert_eq!(bench.repos.len(), 63);
    assert_eq!(bench.query_count(), 1251);
    assert_eq!(bench.languages().len(), 19);
    let pinned = bench
        .repos
        .iter()
        .filter(|r| r.pinned_revision_available == Some(true))
        .count();
    assert_eq!(pinned, 49);
    let flask = bench.repo("flask").unwrap();
    assert_eq!(flask.benchmark_root.as_deref(), Some("src/flask"));
    assert!(
        flask
            .cases
            .iter()
            .all(|c| c.language.as_deref() == Some("python")
                && c.repo.as_deref() == Some("flask")
                && c.category.is_some())
    );
}

/// An oracle that returns each target as its own result scores (nearly) 1,
/// and the comparison lines up with the upstream files.
#[test]
fn oracle_run_over_the_benchmark() {
    let Some(dir) = shared_eval() else { return };
    let bench = SembleBenchmark::load(dir.join("semble")).unwrap();
    let oracle = |case: &Case| {
        let results = case
            .targets()
            .map(|t: &Target| {
                let (s, e) = t.lines.unwrap_or((1, 50));
                ResultChunk::new(t.path.clone(), s, e)
            })
            .collect::<Vec<_>>();
        (results, std::time::Duration::from_micros(100))
    };
    let repos = bench
        .repos
        .iter()
        .map(|r| RepoRun {
            name: r.name.clone(),
            language: r.language.clone(),
            pinned_revision: r.pinned_revision_available,
            revision: Some(r.revision.clone()),
            chunks: None,
            report: run(&r.cases, oracle),
        })
        .collect();
    let suite = SuiteReport::new(Some("oracle".into()), repos, vec![]);
    assert!(suite.summary.ndcg10 > 0.95, "{}", suite.summary.ndcg10);
    assert!(suite.summary.recall10 > 0.99);
    let upstream = load_upstream_dir(dir.join("semble/upstream-results")).unwrap();
    let cmp = compare(&suite, &select_runs(&upstream, &DEFAULT_COMPARISON));
    assert_eq!(cmp.rows.len(), 63);
    assert_eq!(cmp.mean.coverage, vec![63, 63, 63, 63]);
    assert!((cmp.mean.others[0].unwrap() - 0.8544).abs() < 0.0005);
    println!("{}", cmp.render_text());
}

#[test]
fn swebench_lite_loads() {
    let Some(dir) = shared_eval() else { return };
    let cases = load_swebench(dir.join("swebench-lite/cases.jsonl")).unwrap();
    assert_eq!(cases.len(), 140);
    assert!(
        cases
            .iter()
            .all(|c| !c.relevant.is_empty() && c.id.is_some() && c.revision.is_some())
    );
    assert!(
        cases
            .iter()
            .any(|c| c.symbols.iter().any(|s| s.name != "imports"))
    );
    // A search returning the gold file first scores file recall@1 = 1.
    let report = run(&cases, |c: &Case| {
        let results = c
            .relevant
            .iter()
            .map(|t| ResultChunk::new(t.path.clone(), 1, 40))
            .collect::<Vec<_>>();
        (results, std::time::Duration::ZERO)
    });
    assert_eq!(report.summary.file_recall1, 1.0);
    assert_eq!(report.summary.file_mrr10, 1.0);
    assert_eq!(report.summary.symbol_hit10, Some(0.0));
}
