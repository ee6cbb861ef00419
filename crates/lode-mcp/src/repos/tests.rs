use super::*;

/// Options for `roots` with their indexes under `cache`.
fn options(roots: &[&Path], cache: &Path) -> Options {
    let mut o = Options::new(roots.iter().map(|r| r.to_path_buf()).collect());
    o.cache_dir = Some(cache.to_path_buf());
    o
}

fn repos(roots: &[&Path], cache: &Path) -> Repos {
    let mut o = options(roots, cache);
    o.max_open = 1;
    Repos::new(&o).unwrap()
}

/// Without a watcher: every call runs the stat pass.
fn unwatched(root: &Path, cache: &Path) -> Repos {
    let mut o = options(&[root], cache);
    o.watch = false;
    Repos::new(&o).unwrap()
}

#[test]
fn paths_resolve_inside_the_roots_only() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(a.path().join("src/x")).unwrap();
    std::fs::write(a.path().join("src/x/f.rs"), "fn f() {}").unwrap();
    std::fs::write(b.path().join("g.py"), "def g(): pass").unwrap();
    let r = repos(&[a.path(), b.path()], cache.path());

    let t = r.resolve(Some("src/./x/../x/f.rs")).unwrap();
    assert_eq!(
        (t.repo, t.rel.as_deref(), t.is_dir),
        (0, Some("src/x/f.rs"), false)
    );
    let g = b.path().join("g.py");
    let t = r.resolve(g.to_str()).unwrap();
    assert_eq!((t.repo, t.rel.as_deref()), (1, Some("g.py")));
    let t = r.resolve(Some("")).unwrap();
    assert_eq!((t.repo, t.rel, t.is_dir), (0, None, true));

    for outside in ["../", "/etc/passwd", "../../nope/at/all", "/nonexistent/x"] {
        let e = r.resolve(Some(outside)).unwrap_err();
        assert_eq!(e.code, "lode.bad_path", "{outside}");
        assert!(e.message.contains("outside"), "{outside}: {}", e.message);
    }
    let e = r.resolve(Some("src/missing.rs")).unwrap_err();
    assert_eq!(e.code, "lode.bad_path");
    assert!(e.message.contains("no such file"), "{}", e.message);
}

#[cfg(unix)]
#[test]
fn a_symlink_out_of_the_root_is_outside() {
    let a = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), a.path().join("link")).unwrap();
    let r = repos(&[a.path()], cache.path());
    assert_eq!(r.resolve(Some("link")).unwrap_err().code, "lode.bad_path");
}

#[test]
fn the_innermost_root_wins_and_duplicates_collapse() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let inner = a.path().join("sub");
    std::fs::create_dir_all(&inner).unwrap();
    std::fs::write(inner.join("m.go"), "package m").unwrap();
    let r = repos(&[a.path(), &inner, a.path()], cache.path());
    assert_eq!(r.roots().count(), 2);
    let t = r.resolve(inner.join("m.go").to_str()).unwrap();
    assert_eq!((t.repo, t.rel.as_deref()), (1, Some("m.go")));
}

/// Polls `done` for up to 10 s (a loaded CI machine is slow to debounce).
fn eventually(mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_secs(10) {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    false
}

#[test]
fn a_watched_repository_skips_the_stat_pass_until_something_changes() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(a.path().join("src")).unwrap();
    std::fs::write(a.path().join("src/a.py"), "def alpha(): pass\n").unwrap();
    let r = repos(&[a.path()], cache.path());
    let has = |r: &Repos, name: &str| {
        let name = name.to_string();
        r.query(0, move |i| Ok(!i.symbols_named(&name)?.is_empty()))
            .unwrap()
            .0
    };
    assert!(has(&r, "alpha"));
    assert!(r.repo(0).is_watched());
    // The watch starts after the first call: the second checks once more.
    assert!(has(&r, "alpha"));
    let checks = r.repo(0).checks();
    for _ in 0..3 {
        assert!(has(&r, "alpha"));
    }
    assert_eq!(r.repo(0).checks(), checks, "no event: no stat pass");

    // An edit is seen by the very next call (the barrier), whether the
    // call or the debounce thread brings the index up to date.
    std::fs::write(a.path().join("src/a.py"), "def beta(): pass\n").unwrap();
    assert!(has(&r, "beta") && !has(&r, "alpha"));
    // Once the debounce thread has caught up, calls skip the check again.
    assert!(eventually(|| {
        let before = r.repo(0).checks();
        has(&r, "beta") && r.repo(0).checks() == before
    }));

    // A new directory: its files are seen, and so are later edits in it.
    std::fs::create_dir_all(a.path().join("src/new")).unwrap();
    std::fs::write(a.path().join("src/new/g.py"), "def gamma(): pass\n").unwrap();
    assert!(has(&r, "gamma"));
    assert!(eventually(|| {
        let before = r.repo(0).checks();
        has(&r, "gamma") && r.repo(0).checks() == before
    }));
    std::fs::write(a.path().join("src/new/g.py"), "def delta(): pass\n").unwrap();
    assert!(has(&r, "delta") && !has(&r, "gamma"));

    // A rename across directories (what a branch switch does many times).
    std::fs::rename(a.path().join("src/new/g.py"), a.path().join("src/h.py")).unwrap();
    let paths = |r: &Repos, name: &'static str| {
        r.query(0, move |i| {
            Ok(i.symbols_named(name)?
                .into_iter()
                .map(|s| s.path)
                .collect::<Vec<_>>())
        })
        .unwrap()
        .0
    };
    assert_eq!(paths(&r, "delta"), vec!["src/h.py".to_string()]);

    // A deletion.
    std::fs::remove_file(a.path().join("src/h.py")).unwrap();
    assert!(!has(&r, "delta"));
}

fn watch_of(r: &Repos) -> Arc<Watch> {
    let watch = r.repos[0].watch.lock().unwrap().clone();
    watch.expect("a watch")
}

/// A watched repository with `a.py` defining `alpha`, past its first
/// calls: the next ones skip the stat pass.
fn settled(a: &Path, cache: &Path) -> Repos {
    std::fs::write(a.join("a.py"), "def alpha(): pass\n").unwrap();
    let r = repos(&[a], cache);
    r.query(0, |_| Ok(())).unwrap();
    assert!(eventually(|| {
        let before = r.repo(0).checks();
        r.query(0, |_| Ok(())).unwrap();
        r.repo(0).checks() == before
    }));
    r
}

fn defines(r: &Repos, name: &'static str) -> bool {
    r.query(0, move |i| Ok(!i.symbols_named(name)?.is_empty()))
        .unwrap()
        .0
}

#[test]
fn an_edit_in_place_is_checked_by_a_stat_of_that_file_alone() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let r = settled(a.path(), cache.path());
    // The call right after a write usually checks before the debounce
    // thread does; on a slow machine the thread may win, so try a few.
    let mut by_writes = false;
    for n in 0..10 {
        let name: &'static str = Box::leak(format!("fresh{n}").into_boxed_str());
        std::fs::write(a.path().join("a.py"), format!("def {name}(): pass\n")).unwrap();
        assert!(defines(&r, name) && !defines(&r, "alpha"));
        if r.repo(0).checks_by_writes() > 0 {
            by_writes = true;
            break;
        }
    }
    assert!(by_writes, "no call checked by the written files alone");
    // A new file is a directory change: a walk finds it.
    let before = r.repo(0).checks_by_writes();
    std::fs::write(a.path().join("b.py"), "def beta(): pass\n").unwrap();
    assert!(defines(&r, "beta"));
    assert_eq!(r.repo(0).checks_by_writes(), before);
}

/// An edit costs a served index its edited file's vectors, not all of
/// them: those it decoded before are carried over, and equal what a
/// fresh read of the updated index holds.
#[test]
fn an_edit_keeps_the_vectors_decoded_before_it() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("b.py"), "def beta():\n    return 2\n").unwrap();
    let r = settled(a.path(), cache.path());
    let filter = lode_index::Filter::default();
    r.query(0, |i| i.dense("alpha", &filter, 3).map(drop))
        .unwrap();
    std::fs::write(
        a.path().join("a.py"),
        "def fresh():\n    pass\n\ndef other():\n    pass\n",
    )
    .unwrap();
    let ((seen, carried), _) = r
        .query(0, |i| {
            Ok((!i.symbols_named("fresh")?.is_empty(), i.decoded_vectors()))
        })
        .unwrap();
    assert!(seen, "the edit was indexed");
    let fresh = Index::open(&r.repos[0].location).unwrap();
    fresh.dense("alpha", &filter, 3).unwrap();
    let carried = carried.expect("the vectors were carried over");
    assert_eq!(Some(carried), fresh.decoded_vectors());
}

/// A commit the watcher cannot see — the embedding phase's, or another
/// process's build of the same tree — reopens the index, and the calls
/// after it still trust the watch: nothing in the tree changed.
#[test]
fn a_commit_to_an_unchanged_tree_does_not_send_calls_to_the_stat_pass() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let r = settled(a.path(), cache.path());
    let (config, _) = r.config.for_root(a.path()).unwrap();
    // A build that walks the whole tree commits even when nothing changed.
    let opts = lode_index::BuildOptions {
        rescan: true,
        ..lode_index::BuildOptions::quiet(&config)
    };
    lode_index::build(&r.repos[0].location, &opts).unwrap();
    let (opens, checks) = (r.repo(0).opens(), r.repo(0).checks());
    assert!(defines(&r, "alpha"));
    assert_eq!(r.repo(0).opens(), opens + 1, "reopened after the commit");
    for _ in 0..3 {
        assert!(defines(&r, "alpha"));
    }
    assert_eq!(r.repo(0).checks(), checks, "no call checked the tree");
    // An edit is still seen.
    std::fs::write(a.path().join("a.py"), "def beta(): pass\n").unwrap();
    assert!(defines(&r, "beta"));
}

#[test]
fn after_a_watcher_error_every_call_checks_the_tree() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let r = settled(a.path(), cache.path());
    watch_of(&r).inject_error();
    assert!(eventually(|| !r.repo(0).is_watched()));
    let before = r.repo(0).checks();
    for _ in 0..3 {
        assert!(defines(&r, "alpha"));
    }
    assert_eq!(r.repo(0).checks(), before + 3);
    // Unwatched, an edit is still seen by the next call.
    std::fs::write(a.path().join("a.py"), "def beta(): pass\n").unwrap();
    assert!(defines(&r, "beta") && !defines(&r, "alpha"));
}

#[test]
fn a_barrier_not_seen_in_time_sends_the_call_through_the_stat_pass() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let r = settled(a.path(), cache.path());
    let watch = watch_of(&r);
    watch.set_deaf(true);
    let before = r.repo(0).checks();
    let start = std::time::Instant::now();
    assert!(defines(&r, "alpha"));
    assert!(start.elapsed() >= crate::watch::BARRIER_WAIT);
    assert_eq!(r.repo(0).checks(), before + 1, "waited out, then checked");
    std::fs::write(a.path().join("a.py"), "def beta(): pass\n").unwrap();
    assert!(defines(&r, "beta"));
    // Barriers seen again: calls trust the watch once more.
    watch.set_deaf(false);
    assert!(eventually(|| {
        let before = r.repo(0).checks();
        defines(&r, "beta") && r.repo(0).checks() == before
    }));
}

#[cfg(unix)]
#[test]
fn a_repository_whose_walk_met_unreadable_entries_is_not_watched() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "def alpha(): pass\n").unwrap();
    // A symlink to itself cannot be read, even by root.
    std::os::unix::fs::symlink("loop", a.path().join("loop")).unwrap();
    let r = repos(&[a.path()], cache.path());
    for _ in 0..3 {
        assert!(defines(&r, "alpha"));
    }
    assert!(!r.repo(0).is_watched());
    assert_eq!(r.repo(0).checks(), 3);
    std::fs::write(a.path().join("a.py"), "def beta(): pass\n").unwrap();
    assert!(defines(&r, "beta"));
}

#[test]
fn with_the_built_in_model_a_call_embeds_an_edit_before_answering() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "def alpha(): pass\n").unwrap();
    let r = unwatched(a.path(), cache.path());
    let pending = |r: &Repos| r.query(0, |i| i.vectors_pending()).unwrap();
    assert_eq!(pending(&r).0, 0, "a small repository is embedded inline");
    std::fs::write(a.path().join("b.py"), "def beta(): pass\n").unwrap();
    let (n, notes) = pending(&r);
    assert_eq!(n, 0, "{notes:?}");
    assert!(!r.repo(0).is_embedding());
}

#[test]
fn without_a_watch_every_call_checks_the_tree() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "def alpha(): pass\n").unwrap();
    let r = unwatched(a.path(), cache.path());
    for _ in 0..3 {
        r.query(0, |_| Ok(())).unwrap();
    }
    assert!(!r.repo(0).is_watched());
    assert_eq!(r.repo(0).checks(), 3);
}

#[test]
fn over_the_memory_ceiling_only_the_index_just_used_stays_open() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "def alpha(): pass\n").unwrap();
    std::fs::write(b.path().join("b.py"), "def beta(): pass\n").unwrap();
    let options = |ceiling: u64| {
        let mut o = options(&[a.path(), b.path()], cache.path());
        o.max_open = 4;
        o.config.mcp.max_memory_mb = Some(ceiling);
        o
    };
    // Any process is over 1 MiB: only the last used index stays.
    let r = Repos::new(&options(1)).unwrap();
    r.query(0, |_| Ok(())).unwrap();
    r.query(1, |_| Ok(())).unwrap();
    assert_eq!(r.open_count(), 1);
    assert!(r.repos[0].lock().is_none() && r.repos[1].lock().is_some());
    // Under the ceiling, max_open decides.
    let r = Repos::new(&options(1 << 40)).unwrap();
    r.query(0, |_| Ok(())).unwrap();
    r.query(1, |_| Ok(())).unwrap();
    assert_eq!(r.open_count(), 2);
}

#[test]
fn indexes_open_on_first_use_and_the_least_recent_closes() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "def alpha(): pass\n").unwrap();
    std::fs::write(b.path().join("b.py"), "def beta(): pass\n").unwrap();
    let r = repos(&[a.path(), b.path()], cache.path());
    assert_eq!(r.open_count(), 0);
    let (files, notes) = r.query(0, |i| Ok(i.stats()?.files)).unwrap();
    assert_eq!(files, 1);
    assert!(
        notes.iter().any(|n| n.starts_with("indexed 1 files")),
        "{notes:?}"
    );
    assert_eq!(r.open_count(), 1);
    r.query(1, |_| Ok(())).unwrap();
    // max_open is 1: only the last used stays open.
    assert_eq!(r.open_count(), 1);
    assert!(r.repos[0].lock().is_none() && r.repos[1].lock().is_some());
}

#[test]
fn the_open_index_is_kept_until_the_tree_changes() {
    let a = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(a.path().join("a.py"), "def alpha(): pass\n").unwrap();
    // The stat pass's own behaviour: no watcher thread refreshing between calls.
    let r = unwatched(a.path(), cache.path());
    let files = |r: &Repos| r.query(0, |i| Ok(i.stats()?.files)).unwrap().0;
    assert_eq!(files(&r), 1);
    assert_eq!(files(&r), 1);
    assert_eq!(r.repo(0).opens(), 1, "nothing changed: the same open index");

    std::fs::write(a.path().join("b.py"), "def beta(): pass\n").unwrap();
    assert_eq!(files(&r), 2, "the refresh saw the new file");
    assert_eq!(r.repo(0).opens(), 2);

    // Another writer brings the index up to date between two calls: the
    // stat pass then finds nothing to do, but the kept index is stale.
    std::fs::write(a.path().join("c.py"), "def gamma(): pass\n").unwrap();
    let config = Config::default();
    lode_index::build(
        &r.repo(0).location,
        &lode_index::BuildOptions::quiet(&config),
    )
    .unwrap();
    assert_eq!(files(&r), 3);
    assert_eq!(r.repo(0).opens(), 3);

    // A project config that narrows the index changes the fingerprint.
    std::fs::write(
        a.path().join(".lode.toml"),
        "[files]\nexclude = [\"b.py\"]\n",
    )
    .unwrap();
    assert_eq!(files(&r), 2);
    assert_eq!(files(&r), 2);
    assert_eq!(r.repo(0).opens(), 4);
}
