//! The quick stat pass must give the answer a full walk would: every change a
//! walk can see either shows up through `stat` or sends the refresh back to a
//! full walk.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use crate::common::Fixture;
use lode_index::{BuildOptions, BuildReport, build};

/// Sets the mtime of every file and directory under `root` (and `root`) an hour
/// back, so the snapshot's timestamps are not "racy".
fn age(root: &Path) {
    let old = SystemTime::now() - Duration::from_secs(3600);
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_symlink() {
            continue;
        }
        if p.is_dir() {
            for e in fs::read_dir(&p).unwrap() {
                stack.push(e.unwrap().path());
            }
        }
        fs::File::open(&p).unwrap().set_modified(old).unwrap();
    }
}

/// Rewrites a file in place (the directory's mtime does not change).
fn rewrite(path: &Path, text: &str) {
    use std::io::Write;
    let mut f = fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

impl Fixture {
    /// `src/a.py`, `src/deep/b.py`, and `build/gen.py` that `.gitignore`
    /// leaves out; `files.max_file_size` is 200.
    fn tree() -> Fixture {
        let mut f = Fixture::empty();
        let root = &f.root;
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::write(root.join("src/a.py"), "def alpha():\n    return 1\n").unwrap();
        fs::write(root.join("src/deep/b.py"), "def beta():\n    return 2\n").unwrap();
        fs::write(root.join(".gitignore"), "build/\n").unwrap();
        fs::create_dir_all(root.join("build")).unwrap();
        fs::write(root.join("build/gen.py"), "def generated():\n    pass\n").unwrap();
        f.config.files.max_file_size = 200;
        f
    }

    fn build(&self) -> BuildReport {
        build(&self.loc, &BuildOptions::quiet(&self.config)).unwrap()
    }

    fn indexed(&self) -> Vec<String> {
        let index = lode_index::Index::open(&self.loc).unwrap();
        let mut paths: Vec<String> = index.store().manifest().unwrap().into_keys().collect();
        paths.sort();
        paths
    }

    /// Builds with aged timestamps; the manifest and walk basis a reader keeps.
    fn built_basis(&self) -> (lode_index::Manifest, lode_index::incremental::WalkBasis) {
        age(&self.root);
        self.build();
        let index = lode_index::Index::open(&self.loc).unwrap();
        let manifest = index.store().manifest().unwrap();
        let basis = lode_index::incremental::WalkBasis::load(index.store())
            .unwrap()
            .unwrap();
        (manifest, basis)
    }

    fn has_symbol(&self, name: &str) -> bool {
        let index = lode_index::Index::open(&self.loc).unwrap();
        !index.symbols_named(name).unwrap().is_empty()
    }
}

#[test]
fn an_edit_in_place_is_seen_without_a_walk() {
    let f = Fixture::tree();
    age(&f.root);
    assert!(!f.build().quick_walk, "the first build walks");
    rewrite(
        &f.root.join("src/deep/b.py"),
        "def gamma():\n    return 3\n",
    );
    let report = f.build();
    assert!(report.quick_walk, "only a file's content changed");
    assert_eq!((report.parsed, report.deleted), (1, 0));
    assert!(f.has_symbol("gamma") && !f.has_symbol("beta"));
    // The quick walk lists the changed file alone: the others stay.
    assert!(f.has_symbol("alpha"));
    // Nothing changed: still no walk, nothing parsed.
    let report = f.build();
    assert!(report.quick_walk);
    assert_eq!(report.parsed, 0);
}

#[test]
fn a_new_or_deleted_file_sends_the_refresh_to_a_full_walk() {
    let f = Fixture::tree();
    age(&f.root);
    f.build();
    fs::write(f.root.join("src/deep/c.py"), "def delta():\n    pass\n").unwrap();
    let report = f.build();
    assert!(!report.quick_walk, "src/deep changed");
    assert!(f.has_symbol("delta"));
    age(&f.root);
    f.build();
    fs::remove_file(f.root.join("src/a.py")).unwrap();
    let report = f.build();
    assert!(!report.quick_walk);
    assert!(!f.indexed().contains(&"src/a.py".to_string()));
}

#[test]
fn an_ignore_file_edited_in_place_sends_the_refresh_to_a_full_walk() {
    let f = Fixture::tree();
    age(&f.root);
    f.build();
    assert!(!f.indexed().iter().any(|p| p.starts_with("build/")));
    assert!(f.indexed().contains(&"src/deep/b.py".to_string()));
    // Stop ignoring build/, ignore src/deep/ instead; the root's mtime stays.
    rewrite(&f.root.join(".gitignore"), "src/deep/\n");
    let report = f.build();
    assert!(!report.quick_walk);
    let indexed = f.indexed();
    assert!(indexed.contains(&"build/gen.py".to_string()), "{indexed:?}");
    assert!(
        !indexed.contains(&"src/deep/b.py".to_string()),
        "{indexed:?}"
    );
}

#[test]
fn a_file_skipped_for_size_that_shrinks_is_found() {
    let f = Fixture::tree();
    let big = f.root.join("src/big.py");
    fs::write(
        &big,
        format!("def huge():\n    pass\n{}", "#\n".repeat(200)),
    )
    .unwrap();
    age(&f.root);
    f.build();
    assert!(!f.has_symbol("huge"));
    rewrite(&big, "def huge():\n    pass\n");
    let report = f.build();
    assert!(!report.quick_walk, "a watched file changed");
    assert!(f.has_symbol("huge"));
    // An indexed file that outgrows the cap leaves the index.
    age(&f.root);
    f.build();
    rewrite(
        &big,
        &format!("def huge():\n    pass\n{}", "#\n".repeat(200)),
    );
    let report = f.build();
    assert!(!report.quick_walk);
    assert!(!f.has_symbol("huge"));
}

#[test]
fn directories_changed_just_before_the_walk_are_not_trusted() {
    let f = Fixture::tree();
    // No aging: every directory was modified within the racy window.
    f.build();
    let report = f.build();
    assert!(!report.quick_walk, "racy timestamps force a walk");
    age(&f.root);
    f.build();
    assert!(f.build().quick_walk);
}

#[test]
fn rescan_walks_even_when_nothing_changed() {
    let f = Fixture::tree();
    age(&f.root);
    f.build();
    let mut opts = BuildOptions::quiet(&f.config);
    opts.rescan = true;
    assert!(!build(&f.loc, &opts).unwrap().quick_walk);
}

#[cfg(unix)]
#[test]
fn an_entry_the_walk_could_not_read_sends_every_refresh_to_a_full_walk() {
    let f = Fixture::tree();
    // A link whose target does not exist yet, in a hidden directory the walk
    // never enters (so no recorded directory changes when it appears).
    fs::create_dir_all(f.root.join(".store")).unwrap();
    std::os::unix::fs::symlink("../.store/real.py", f.root.join("src/link.py")).unwrap();
    age(&f.root);
    f.build();
    assert!(!f.indexed().contains(&"src/link.py".to_string()));
    fs::write(f.root.join(".store/real.py"), "def epsilon():\n    pass\n").unwrap();
    let report = f.build();
    assert!(
        !report.quick_walk,
        "the unreadable entry may have come back"
    );
    assert!(f.indexed().contains(&"src/link.py".to_string()));
    assert!(f.has_symbol("epsilon"));
}

/// What a file watcher that saw only in-place writes may skip: the stat of
/// every other file — but not the checks a walk would make of what it wrote.
#[test]
fn a_walk_from_known_writes_restats_only_those_files() {
    let f = Fixture::tree();
    let (manifest, basis) = f.built_basis();
    let known = |paths: &[&str]| {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        lode_index::incremental::walk_changed(&f.root, &basis, &manifest, &paths, &f.config)
    };

    rewrite(&f.root.join("src/a.py"), "def alpha2():\n    return 11\n");
    let walk = known(&["src/a.py"]).expect("an indexed file written in place");
    let diff = lode_index::incremental::stat_diff(&walk, &manifest);
    let changed: Vec<&str> = diff.changed.iter().map(|w| w.path.as_str()).collect();
    assert_eq!(changed, ["src/a.py"]);
    assert!(diff.deleted.is_empty());
    assert!(walk.snapshot.is_none(), "the stored snapshot stays");
    // It lists the written file alone; an update from it keeps the others.
    assert_eq!(walk.files.len(), 1);
    let report = lode_index::incremental::build_with_walk(
        &f.loc,
        &BuildOptions::quiet(&f.config),
        Some(walk.clone()),
    )
    .unwrap();
    assert_eq!((report.parsed, report.deleted), (1, 0));
    assert_eq!(f.indexed(), ["src/a.py", "src/deep/b.py"]);
    // The other file is taken as recorded, not stat-ed: an unreported
    // change to it goes unseen (the watcher would have reported it).
    rewrite(
        &f.root.join("src/deep/b.py"),
        "def beta2():\n    return 22\n",
    );
    let walk = known(&["src/a.py"]).unwrap();
    assert_eq!(
        lode_index::incremental::stat_diff(&walk, &manifest)
            .changed
            .len(),
        1
    );

    // What a walk must decide: a file not indexed, one gone, one grown past the cap.
    assert!(known(&["build/gen.py"]).is_none());
    fs::remove_file(f.root.join("src/a.py")).unwrap();
    assert!(known(&["src/a.py"]).is_none());
    rewrite(&f.root.join("src/deep/b.py"), &"#\n".repeat(200));
    assert!(known(&["src/deep/b.py"]).is_none());
}

#[test]
fn a_walk_from_known_writes_still_checks_the_ignore_files_it_watches() {
    let f = Fixture::tree();
    let (manifest, basis) = f.built_basis();
    let paths = vec!["src/a.py".to_string()];
    assert!(
        lode_index::incremental::walk_changed(&f.root, &basis, &manifest, &paths, &f.config)
            .is_some()
    );
    // The root's ignore file (watched by the snapshot) changes in place.
    rewrite(&f.root.join(".gitignore"), "src/\n");
    assert!(
        lode_index::incremental::walk_changed(&f.root, &basis, &manifest, &paths, &f.config)
            .is_none()
    );
}

/// `refresh_and` answers from the index as it is while the stat pass runs:
/// with nothing changed that answer stands and the query runs once.
#[test]
fn a_query_beside_the_stat_pass_stands_when_nothing_changed() {
    let f = Fixture::tree();
    age(&f.root);
    f.build();
    let runs = std::cell::Cell::new(0);
    let opts = lode_index::RefreshOptions::new(&f.config);
    let (_, found, freshness) = lode_index::refresh_and(&f.loc, &opts, |index| {
        runs.set(runs.get() + 1);
        Ok(index.symbols_named("beta")?.len())
    })
    .unwrap();
    assert_eq!((found, runs.get()), (1, 1));
    assert!(matches!(freshness, lode_index::Freshness::Fresh));
}

/// ...and with a file changed in place, the answer comes from the updated
/// index: the query runs again after the update.
#[test]
fn a_query_beside_the_stat_pass_runs_again_when_the_tree_changed() {
    let f = Fixture::tree();
    age(&f.root);
    f.build();
    rewrite(
        &f.root.join("src/deep/b.py"),
        "def gamma():\n    return 3\n",
    );
    let runs = std::cell::Cell::new(0);
    let opts = lode_index::RefreshOptions::new(&f.config);
    let (index, found, freshness) = lode_index::refresh_and(&f.loc, &opts, |index| {
        runs.set(runs.get() + 1);
        Ok(index.symbols_named("gamma")?.len())
    })
    .unwrap();
    assert_eq!(
        (found, runs.get()),
        (1, 2),
        "answered from the updated index"
    );
    match freshness {
        lode_index::Freshness::Refreshed(report) => {
            assert!(report.quick_walk, "the speculative walk was reused");
            assert_eq!(report.parsed, 1);
        }
        other => panic!("expected a refresh, got {other:?}"),
    }
    assert!(index.symbols_named("beta").unwrap().is_empty());
}

/// A build that finds the tree as indexed (proven by the snapshot) writes
/// nothing: the generation stays, no reader sees a commit, and its report's
/// counts are the stored ones.
#[test]
fn a_build_that_finds_nothing_changed_commits_nothing() {
    let f = Fixture::tree();
    age(&f.root);
    let first = f.build();
    let index = lode_index::Index::open(&f.loc).unwrap();
    let data_version = |i: &lode_index::Index| -> i64 {
        i.store()
            .connection()
            .query_row("PRAGMA data_version", [], |r| r.get(0))
            .unwrap()
    };
    let before = data_version(&index);
    let again = f.build();
    assert!(again.quick_walk);
    assert_eq!(again.generation, first.generation);
    assert_eq!(data_version(&index), before, "no commit");
    let counted = index.stats().unwrap();
    assert_eq!(
        (
            again.files,
            again.chunks,
            again.symbols,
            again.skipped.clone()
        ),
        (
            counted.files,
            counted.chunks,
            counted.symbols,
            counted.skipped
        )
    );
    // An edit still commits.
    rewrite(&f.root.join("src/a.py"), "def alpha3():\n    return 333\n");
    assert_eq!(f.build().generation, first.generation + 1);
    assert_ne!(data_version(&index), before);
}

/// Breaks the index's file list (a column gone) while its header, schema
/// and fingerprint stay readable.
fn break_file_list(f: &Fixture) {
    let current = fs::read_to_string(f.loc.dir.join("CURRENT")).unwrap();
    let conn = lode_index::open_database(&f.loc.dir.join(current.trim())).unwrap();
    conn.execute_batch("ALTER TABLE files RENAME COLUMN hash TO hash_gone;")
        .unwrap();
}

/// The file list unreadable while the stat pass waits for it: the build
/// says so and builds the index again, rather than failing, hanging the
/// walk or panicking.
#[test]
fn an_index_unreadable_past_its_open_is_built_again() {
    let f = Fixture::tree();
    age(&f.root);
    f.build();
    break_file_list(&f);
    let notes = std::sync::Mutex::new(Vec::new());
    let note = |n: &str| notes.lock().unwrap().push(n.to_string());
    let opts = BuildOptions {
        note: &note,
        ..BuildOptions::quiet(&f.config)
    };
    let report = build(&f.loc, &opts).unwrap();
    let rebuilt = report.rebuilt.expect("a rebuild");
    assert!(
        rebuilt.contains("unreadable") && rebuilt.contains("hash"),
        "{rebuilt}"
    );
    assert!(
        notes
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.contains("rebuilding the index"))
    );
    assert_eq!(f.indexed(), ["src/a.py", "src/deep/b.py"]);
    assert!(f.has_symbol("beta"));

    // A query's refresh meets the same and answers from the rebuilt index.
    age(&f.root);
    f.build();
    break_file_list(&f);
    let (_, found, freshness) = lode_index::refresh_and(
        &f.loc,
        &lode_index::RefreshOptions::new(&f.config),
        |index| Ok(index.symbols_named("alpha")?.len()),
    )
    .unwrap();
    assert_eq!(found, 1);
    assert!(matches!(freshness, lode_index::Freshness::Refreshed(_)));
}
