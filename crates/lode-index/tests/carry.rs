//! A long-lived reader keeps what it decoded through an update: the vectors
//! and the file list it carries over, patched for the files the build
//! touched, must equal what a fresh open reads.

use std::fs;
use std::path::Path;

use lode_core::Config;
use lode_index::{BuildOptions, BuildReport, Filter, Index, IndexLocation, build};

fn function(name: &str, body: &str) -> String {
    format!("def {name}():\n    \"\"\"{body}\"\"\"\n    return 1\n\n")
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

fn quiet_build(loc: &IndexLocation, config: &Config) -> BuildReport {
    build(loc, &BuildOptions::quiet(config)).unwrap()
}

#[test]
fn vectors_and_files_carried_through_an_update_equal_a_fresh_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    write_files(&root);
    let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
    let config = Config::default();
    quiet_build(&loc, &config);

    let mut before = opened_with_vectors(&loc);
    let manifest = before.store().manifest().unwrap();
    let kept = before.take_vectors().expect("read above");
    drop(before);

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

    let after = Index::open(&loc).unwrap();
    assert!(
        after
            .adopt_vectors(kept, &manifest, &report.touched)
            .unwrap()
    );
    let mut patched = manifest.clone();
    after
        .store()
        .patch_manifest(&mut patched, &report.touched)
        .unwrap();

    let fresh = opened_with_vectors(&loc);
    assert_eq!(after.decoded_vectors(), fresh.decoded_vectors());
    assert_eq!(patched, fresh.store().manifest().unwrap());
    assert_eq!(
        after.dense("merge lists", &Filter::default(), 3).unwrap(),
        fresh.dense("merge lists", &Filter::default(), 3).unwrap()
    );
}

#[test]
fn vectors_are_not_carried_over_more_than_one_build() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    write_files(&root);
    let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
    let config = Config::default();
    quiet_build(&loc, &config);

    let mut before = opened_with_vectors(&loc);
    let manifest = before.store().manifest().unwrap();
    let kept = before.take_vectors().unwrap();
    drop(before);

    fs::write(root.join("m3.py"), function("g3", "a first change")).unwrap();
    quiet_build(&loc, &config);
    // A build this reader did not see: its touched list is not enough.
    fs::write(
        root.join("m4.py"),
        function("g4", "a second change, longer"),
    )
    .unwrap();
    let report = quiet_build(&loc, &config);

    let after = Index::open(&loc).unwrap();
    assert!(
        !after
            .adopt_vectors(kept, &manifest, &report.touched)
            .unwrap()
    );
    assert!(
        after.decoded_vectors().is_none(),
        "read afresh on first use"
    );
}
