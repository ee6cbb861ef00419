//! A long-lived reader keeps what it decoded through an update: the vectors
//! and postings it keeps and the file list, patched for the files and terms
//! the build touched, must equal what a fresh open reads.

use std::fs;
use std::path::{Path, PathBuf};

use lode_core::Config;
use lode_index::lexical::Bm25Params;
use lode_index::{BuildOptions, BuildReport, Filter, Index, IndexLocation, build};

/// A function long enough to be a chunk of its own.
fn function(name: &str, body: &str) -> String {
    let mut text = format!("def {name}():\n    \"\"\"{body}\"\"\"\n");
    for i in 0..12 {
        text.push_str(&format!("    step_{i} = prepare_{i}({i})\n"));
    }
    text.push_str("    return 1\n\n");
    text
}

fn write_files(root: &Path) {
    for (i, topic) in [
        "parse the config",
        "open a socket",
        "sort the list",
        "hash a password",
        "render a page",
    ]
    .iter()
    .enumerate()
    {
        let text =
            function(&format!("f{i}_a"), topic) + &function(&format!("f{i}_b"), "retry later");
        fs::write(root.join(format!("m{i}.py")), text).unwrap();
    }
}

/// Opens the index and reads its vectors (a dense query does).
fn opened_with_vectors(loc: &IndexLocation) -> Index {
    let index = Index::open(loc).unwrap();
    index.dense("config", &Filter::default(), 5).unwrap();
    assert!(index.decoded_vectors().is_some());
    index
}

/// BM25 candidates of `query`, as the search's lexical side asks for them.
fn lexical(index: &Index, query: &str) -> Vec<(i64, f64)> {
    let terms = lode_index::tokens::query_terms(query);
    index
        .lexical(&terms, &Bm25Params::default(), &Filter::default(), 10)
        .unwrap()
}

/// The five files of [`write_files`], indexed; the directory holds the
/// repository and its cache.
fn built() -> (tempfile::TempDir, PathBuf, IndexLocation, Config) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    write_files(&root);
    let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
    let config = Config::default();
    quiet_build(&loc, &config);
    (tmp, root, loc, config)
}

fn quiet_build(loc: &IndexLocation, config: &Config) -> BuildReport {
    build(loc, &BuildOptions::quiet(config)).unwrap()
}

#[test]
fn vectors_and_files_carried_through_an_update_equal_a_fresh_read() {
    let (_tmp, root, loc, config) = built();

    let mut index = opened_with_vectors(&loc);
    let manifest = index.store().manifest().unwrap();
    // Postings decoded before the edit, of terms it changes and of others,
    // and every chunk's row.
    lexical(&index, "sort list retry merge");
    index.chunks(&every_chunk(&index)).unwrap();

    // A file in the middle edited (one chunk more), one removed, one added:
    // runs of vectors shrink, grow, vanish and appear.
    let edited = function("f2_a", "sort the list")
        + &function("f2_c", "merge two lists")
        + &function("f2_b", "retry later");
    fs::write(root.join("m2.py"), edited).unwrap();
    fs::remove_file(root.join("m1.py")).unwrap();
    fs::write(root.join("m9.py"), function("f9", "compress a stream")).unwrap();
    let report = quiet_build(&loc, &config);
    assert_eq!((report.parsed, report.deleted), (2, 1));

    assert!(index.after_build(&report, &manifest).unwrap(), "one build");
    assert!(index.decoded_vectors().is_some(), "kept");
    let mut patched = manifest.clone();
    index
        .store()
        .patch_manifest(&mut patched, &report.touched)
        .unwrap();

    let fresh = opened_with_vectors(&loc);
    assert_eq!(index.decoded_vectors(), fresh.decoded_vectors());
    assert_eq!(patched, fresh.store().manifest().unwrap());
    assert_eq!(
        index.dense("merge lists", &Filter::default(), 3).unwrap(),
        fresh.dense("merge lists", &Filter::default(), 3).unwrap()
    );
    for q in ["sort list retry merge", "merge", "config socket", "retry"] {
        assert_eq!(lexical(&index, q), lexical(&fresh, q), "{q}");
    }
    // The rows of the edited file moved (a function was inserted above one).
    let ids = every_chunk(&fresh);
    let rows = |index: &Index| format!("{:?}", index.chunks(&ids).unwrap());
    assert_eq!(rows(&index), rows(&fresh));
}

/// The id of every chunk (each has a `return`).
fn every_chunk(index: &Index) -> Vec<i64> {
    let terms = lode_index::tokens::query_terms("return");
    let hits = index
        .lexical(&terms, &Bm25Params::default(), &Filter::default(), 1000)
        .unwrap();
    assert!(hits.len() >= 10, "{hits:?}");
    // Weighted with no limit: every match (in no order), scores scaled.
    let mut all = index
        .lexical_weighted(
            &[("return", 2.0)],
            &Bm25Params::default(),
            &Filter::default(),
            0,
        )
        .unwrap();
    all.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    assert_eq!(all.len(), hits.len());
    for (a, h) in all.iter().zip(&hits) {
        assert_eq!(a.0, h.0);
        assert!((a.1 - 2.0 * h.1).abs() < 1e-9, "{a:?} {h:?}");
    }
    hits.into_iter().map(|(id, _)| id).collect()
}

#[test]
fn nothing_decoded_is_kept_over_a_build_the_reader_did_not_see() {
    let (_tmp, root, loc, config) = built();

    let mut index = opened_with_vectors(&loc);
    let manifest = index.store().manifest().unwrap();
    lexical(&index, "change");

    fs::write(root.join("m3.py"), function("g3", "a first change")).unwrap();
    quiet_build(&loc, &config);
    // A build this reader did not see: its touched lists are not enough.
    fs::write(
        root.join("m4.py"),
        function("g4", "a second change, longer"),
    )
    .unwrap();
    let report = quiet_build(&loc, &config);

    assert!(!index.after_build(&report, &manifest).unwrap());
    assert!(
        index.decoded_vectors().is_none(),
        "read afresh on first use"
    );
    let fresh = opened_with_vectors(&loc);
    index.dense("change", &Filter::default(), 3).unwrap();
    assert_eq!(index.decoded_vectors(), fresh.decoded_vectors());
    assert_eq!(lexical(&index, "change"), lexical(&fresh, "change"));
}

/// An update handed the file list a reader holds uses it only when the index
/// is still at that list's generation: a stale list (a build since added a
/// file) would have the update insert that file a second time.
#[test]
fn an_update_ignores_a_file_list_of_an_older_generation() {
    let (_tmp, root, loc, config) = built();
    let index = Index::open(&loc).unwrap();
    let stale = (index.store().manifest().unwrap(), index.generation());
    drop(index);

    fs::write(root.join("m7.py"), function("added", "a new file")).unwrap();
    quiet_build(&loc, &config);
    fs::write(root.join("m0.py"), function("edited", "an edit after it")).unwrap();
    let walked = lode_index::walk(&root, &config.files).unwrap();
    let opts = lode_index::RefreshOptions::new(&config);
    let kept = Some((&stale.0, stale.1));
    let freshness = lode_index::incremental::update_walked(&loc, &opts, walked, 1, kept).unwrap();
    let lode_index::Freshness::Refreshed(report) = freshness else {
        panic!("expected an update, got {freshness:?}");
    };
    assert_eq!(report.parsed, 1, "only the edited file");

    let index = Index::open(&loc).unwrap();
    let mut paths: Vec<String> = index.store().manifest().unwrap().into_keys().collect();
    paths.sort();
    assert_eq!(
        paths,
        ["m0.py", "m1.py", "m2.py", "m3.py", "m4.py", "m7.py"]
    );
    assert_eq!(index.symbols_named("added").unwrap().len(), 1);
    assert_eq!(index.symbols_named("edited").unwrap().len(), 1);

    // With the list of the current generation, the same holds.
    let current = (index.store().manifest().unwrap(), index.generation());
    drop(index);
    fs::write(
        root.join("m3.py"),
        function("again", "a second edit, longer"),
    )
    .unwrap();
    let walked = lode_index::walk(&root, &config.files).unwrap();
    let kept = Some((&current.0, current.1));
    let freshness = lode_index::incremental::update_walked(&loc, &opts, walked, 1, kept).unwrap();
    assert!(matches!(freshness, lode_index::Freshness::Refreshed(r) if r.parsed == 1));
    let index = Index::open(&loc).unwrap();
    assert_eq!(index.symbols_named("again").unwrap().len(), 1);
    assert!(index.symbols_named("f3_a").unwrap().is_empty());
}

/// A rebuild (another config) writes a new database: the open index does not
/// follow it and says so.
#[test]
fn a_rebuild_is_not_followed() {
    let (_tmp, _root, loc, config) = built();
    let mut index = opened_with_vectors(&loc);
    let manifest = index.store().manifest().unwrap();
    let mut other = config.clone();
    other.files.max_file_size /= 2;
    let report = quiet_build(&loc, &other);
    assert!(report.rebuilt.is_some(), "{report:?}");
    assert!(!index.after_build(&report, &manifest).unwrap());
    assert!(index.decoded_vectors().is_none());
}
