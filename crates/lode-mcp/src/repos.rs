//! The served repositories: which one a path belongs to, and each one's open
//! index, kept across calls so that its caches (decoded postings, vectors)
//! stay warm.

use std::cell::RefCell;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use lode_core::Config;
use lode_index::{Index, IndexLocation, RefreshOptions};

use crate::embedding::Background;
use crate::watch::{Watch, WatchState};
use crate::{Options, ToolError};
use lode_index::live::{self, LiveIndex};

/// The repositories one server answers for.
pub struct Repos {
    repos: Vec<Repo>,
    config: Config,
    no_refresh: bool,
    watch: bool,
    max_open: usize,
    /// Repositories with an open index, least recently used first.
    recent: Mutex<Vec<usize>>,
}

/// One served repository.
///
/// Its open index sits behind a mutex: calls take it in turn (an [`Index`]
/// holds a SQLite connection, `Send` but not `Sync`), and the watcher's
/// debounce thread takes the same lock to bring the index up to date.
pub struct Repo {
    /// Its root and where its index lives.
    pub location: IndexLocation,
    open: Arc<Mutex<Option<LiveIndex>>>,
    /// Started with the index, stopped when it is closed.
    watch: Mutex<Option<Arc<Watch>>>,
    /// How many times an index was opened for this repository (by a call or
    /// by the watcher's thread).
    opens: Arc<AtomicU64>,
    /// How many calls checked the tree (the stat pass) before answering.
    checks: AtomicU64,
    /// How many of those only `stat`ed the files the watcher saw written.
    checks_by_writes: AtomicU64,
    /// The embedding phase running on its own thread, if any: a call never
    /// waits for it, and answers from the chunks embedded so far.
    embedding: Arc<Background>,
    /// The project config's warnings already said: each is said once per
    /// connection (this process serves one client), not in every answer.
    said: Mutex<std::collections::HashSet<String>>,
}

/// Where a call points: a repository and a path inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// Index into [`Repos`], in the order of the roots.
    pub repo: usize,
    /// Relative to the root, `/`-separated; `None` for the root itself.
    pub rel: Option<String>,
    /// It names a directory (or the root), not a file.
    pub is_dir: bool,
}

impl Repos {
    /// Resolves every root (it must be a directory). Indexes open on first use.
    pub fn new(options: &Options) -> lode_core::Result<Repos> {
        let mut repos: Vec<Repo> = Vec::new();
        for root in &options.roots {
            let location = IndexLocation::resolve(root, options.cache_dir.as_deref())?;
            if repos.iter().all(|r| r.location.root != location.root) {
                repos.push(Repo {
                    location,
                    open: Arc::new(Mutex::new(None)),
                    watch: Mutex::new(None),
                    opens: Arc::new(AtomicU64::new(0)),
                    checks: AtomicU64::new(0),
                    checks_by_writes: AtomicU64::new(0),
                    embedding: Arc::new(Background::default()),
                    said: Mutex::default(),
                });
            }
        }
        if repos.is_empty() {
            return Err(lode_core::Error::BadQuery("no repository to serve".into()));
        }
        Ok(Repos {
            repos,
            config: options.config.clone(),
            no_refresh: options.no_refresh,
            watch: options.watch && !options.no_refresh,
            max_open: options.max_open.max(1),
            recent: Mutex::new(Vec::new()),
        })
    }

    /// The canonical roots, the first being where relative paths start.
    /// The user configuration the server started with.
    /// The user's config (each root narrows it with its own).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The served roots, the first first.
    pub fn roots(&self) -> impl Iterator<Item = &Path> {
        self.repos.iter().map(|r| r.location.root.as_path())
    }

    /// Repository `i`, in the order of the roots.
    pub fn repo(&self, i: usize) -> &Repo {
        &self.repos[i]
    }

    /// How many indexes are open now.
    pub fn open_count(&self) -> usize {
        self.repos.iter().filter(|r| r.lock().is_some()).count()
    }

    /// The repository and relative path of a `path` argument: relative to
    /// the first root, or absolute inside one of the roots (the innermost when
    /// roots nest). Outside every root, or missing: `lode.bad_path`.
    pub fn resolve(&self, path: Option<&str>) -> Result<Target, ToolError> {
        let Some(p) = path.filter(|p| !p.is_empty()) else {
            return Ok(Target {
                repo: 0,
                rel: None,
                is_dir: true,
            });
        };
        let given = Path::new(p);
        let abs = if given.is_absolute() {
            given.to_path_buf()
        } else {
            self.repos[0].location.root.join(given)
        };
        let canonical = match abs.canonicalize() {
            Ok(c) => c,
            // Missing: say "outside" when it would be, without probing further.
            Err(_) => {
                return Err(match self.root_of(&lexical_normal(&abs)) {
                    Some(_) => ToolError::bad_path(format!("{p}: no such file or directory")),
                    None => self.outside(p),
                });
            }
        };
        let repo = self.root_of(&canonical).ok_or_else(|| self.outside(p))?;
        let rel: Vec<String> = canonical
            .strip_prefix(&self.repos[repo].location.root)
            .unwrap_or(Path::new(""))
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Ok(Target {
            repo,
            rel: (!rel.is_empty()).then(|| rel.join("/")),
            is_dir: canonical.is_dir(),
        })
    }

    fn root_of(&self, path: &Path) -> Option<usize> {
        self.repos
            .iter()
            .enumerate()
            .filter(|(_, r)| path.starts_with(&r.location.root))
            .max_by_key(|(_, r)| r.location.root.as_os_str().len())
            .map(|(i, _)| i)
    }

    fn outside(&self, p: &str) -> ToolError {
        let roots: Vec<String> = self.roots().map(|r| r.display().to_string()).collect();
        ToolError::bad_path(format!(
            "{p} is outside the served repositories ({})",
            roots.join(", ")
        ))
    }

    /// Runs `f` on repository `i`'s index as the tree is now (unless
    /// `no_refresh`). Returns `f`'s answer and the notes of the refresh. `f`
    /// may run twice: once on the kept index while the stat pass runs, and
    /// again after a refresh if the tree changed. A watched repository with
    /// no event since its index was last checked skips the stat pass.
    pub fn query<T>(
        &self,
        i: usize,
        f: impl Fn(&Index) -> lode_core::Result<T>,
    ) -> Result<(T, Vec<String>), ToolError> {
        let repo = &self.repos[i];
        let mut open = repo.lock();
        // Read under the lock that guards `checked`, and before the check: an
        // event during the check leaves the next call unsure.
        let generation = repo.watch_generation();
        let attempt = |open: &mut Option<LiveIndex>| -> lode_core::Result<(T, Vec<String>)> {
            let (config, mut warnings) = self.config.for_root(&repo.location.root)?;
            let mut said = repo.said.lock().unwrap_or_else(|e| e.into_inner());
            warnings.retain(|w| said.insert(w.clone()));
            drop(said);
            // What the embedding thread had to say since the last call.
            warnings.extend(repo.embedding.take_notes());
            // With several roots, which one answered (a call without `path` takes the first).
            if self.repos.len() > 1 {
                warnings.insert(0, format!("answered from {}", repo.location.root.display()));
            }
            let notes = RefCell::new(warnings);
            let note = |m: &str| notes.borrow_mut().push(m.to_string());
            let unchanged =
                generation.is_some() && open.as_ref().is_some_and(|o| o.checked == generation);
            // (Only when the tree changed: a warm call does not read the log.)
            let known = open
                .as_ref()
                .filter(|_| !unchanged)
                .and_then(|o| repo.written_since(o.checked, generation));
            let opts = RefreshOptions {
                config: &config,
                no_refresh: self.no_refresh || unchanged,
                progress: None,
                note: &note,
                embed: crate::embedding::inline_phase(&config),
            };
            if !opts.no_refresh {
                repo.checks.fetch_add(1, Ordering::Relaxed);
            }
            let (answer, checked) = live::query(open, &repo.location, &opts, known.as_deref(), &f)?;
            if checked.by_writes {
                repo.checks_by_writes.fetch_add(1, Ordering::Relaxed);
            }
            if checked.reopened {
                repo.opens.fetch_add(1, Ordering::Relaxed);
            } else {
                lode_diagnostics::note_root(&repo.location.id());
                lode_diagnostics::note_cache_hit();
            }
            // Checked now; or reopened after a commit the watcher cannot see
            // (the embedding phase, another process's build) while the tree
            // stayed as checked: it still matches, so later calls trust the
            // watch. (Not an index of another config: the next call rebuilds.)
            if let Some(o) = open.as_mut().filter(|o| {
                !opts.no_refresh || (unchanged && !self.no_refresh && o.same_config(&config))
            }) {
                o.checked = generation;
            }
            if !self.no_refresh
                && let Some(o) = open.as_ref()
            {
                repo.embedding
                    .ensure(o.index(), &repo.location, &self.config);
            }
            Ok((answer, notes.into_inner()))
        };
        // Data a query cannot decode marks the index damaged; closed, it is
        // rebuilt by the next refresh, and the call runs once more.
        let answer = match attempt(&mut open) {
            Err(lode_core::Error::IndexCorrupt { path, reason }) if !self.no_refresh => {
                lode_index::mark_damaged(&path, &reason);
                *open = None;
                attempt(&mut open).map(|(answer, mut notes)| {
                    notes.insert(0, format!("the index was damaged ({reason}): rebuilt"));
                    (answer, notes)
                })
            }
            other => other,
        }
        .map_err(ToolError::from);
        // Still under the lock: a call must not see `checked` before the
        // watch covers the directories this refresh found.
        if self.watch
            && let Some(o) = open.as_mut()
            && (o.take_dirs_changed() || !repo.has_watch())
        {
            let dirs = o.watch_dirs(&repo.location.root);
            self.ensure_watch(i, dirs);
        }
        // Counted for the LRU whether the call succeeded or not.
        let is_open = open.is_some();
        drop(open);
        if is_open {
            self.touch(i);
        }
        answer
    }

    /// Starts repository `i`'s watcher if it has none, or points it at `dirs`
    /// (a refresh may have walked new directories).
    fn ensure_watch(&self, i: usize, dirs: Option<Vec<std::path::PathBuf>>) {
        let repo = &self.repos[i];
        let mut watch = repo.watch.lock().unwrap_or_else(|p| p.into_inner());
        let Some(dirs) = dirs else {
            // No snapshot (e.g. the last walk met unreadable files): calls check the tree.
            *watch = None;
            return;
        };
        if let Some(w) = watch.as_ref() {
            w.sync(dirs);
            return;
        }
        let (open, loc, user_config, opens, embedding) = (
            repo.open.clone(),
            repo.location.clone(),
            self.config.clone(),
            repo.opens.clone(),
            repo.embedding.clone(),
        );
        let root = repo.location.root.clone();
        let check = move |generation: Option<u64>,
                          state: &WatchState,
                          watch_dirs: &dyn Fn(Vec<PathBuf>)| {
            // A call holding the index checks the tree itself if it must;
            // waiting here would stall the events its barrier waits for.
            let mut open = match open.try_lock() {
                Ok(guard) => guard,
                Err(_) => return,
            };
            // Closed since (evicted): nothing to keep fresh.
            if open.is_none() {
                return;
            }
            let Ok((config, _)) = user_config.for_root(&loc.root) else {
                return;
            };
            let opts = RefreshOptions {
                embed: crate::embedding::inline_phase(&config),
                ..RefreshOptions::new(&config)
            };
            let known = open.as_ref().and_then(|o| {
                let written = state.written_between(o.checked?, generation?)?;
                relative(&root, written)
            });
            match live::query(&mut open, &loc, &opts, known.as_deref(), |_| Ok(())) {
                Ok((_, checked)) => {
                    if checked.reopened {
                        opens.fetch_add(1, Ordering::Relaxed);
                    }
                }
                Err(_) => return,
            }
            if let Some(o) = open.as_mut() {
                if o.take_dirs_changed()
                    && let Some(dirs) = o.watch_dirs(&loc.root)
                {
                    watch_dirs(dirs);
                }
                o.checked = generation;
                embedding.ensure(o.index(), &loc, &user_config);
            }
        };
        let barriers = repo.location.dir.join("watch");
        *watch = Watch::start(&repo.location.root, barriers, dirs, check).map(Arc::new);
    }

    /// Marks `i` as just used and closes the least recently used indexes
    /// beyond `max_open`, and beyond the memory ceiling
    /// (`[mcp] max_memory_mb`): while the process's resident memory is over
    /// it, down to the index just used.
    fn touch(&self, i: usize) {
        let over_ceiling = self
            .config
            .mcp
            .max_memory_mb
            // (Read only when a ceiling is set: this runs after every call.)
            .and_then(|ceiling| Some(resident_mb()? > ceiling))
            .unwrap_or(false);
        let evicted: Vec<usize> = {
            let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
            recent.retain(|&j| j != i);
            recent.push(i);
            let excess = if over_ceiling {
                recent.len() - 1
            } else {
                recent.len().saturating_sub(self.max_open)
            };
            recent.drain(..excess).collect()
        };
        // Outside the `recent` lock: a repository busy in another call is
        // closed when that call ends.
        for j in evicted {
            *self.repos[j].lock() = None;
            *self.repos[j]
                .watch
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = None;
        }
    }
}

impl Repo {
    /// How many times an index was opened (first use, a change, a reopen
    /// after eviction); calls that change nothing reuse the open one.
    pub fn opens(&self) -> u64 {
        self.opens.load(Ordering::Relaxed)
    }

    /// How many calls checked the tree before answering (the others were
    /// answered on the watcher's word that nothing changed).
    pub fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    /// How many of the calls that checked the tree only `stat`ed the files
    /// the watcher saw written in place.
    pub fn checks_by_writes(&self) -> u64 {
        self.checks_by_writes.load(Ordering::Relaxed)
    }

    /// Whether the embedding phase is running on its thread now.
    pub fn is_embedding(&self) -> bool {
        self.embedding.is_running()
    }

    /// Whether a watcher runs for this repository (and trusts its events).
    pub fn is_watched(&self) -> bool {
        self.watch_generation().is_some()
    }

    /// The files (root-relative) written in place since the tree was found
    /// to match at generation `checked`, up to `now`, when the watcher knows
    /// that was all that happened.
    fn written_since(&self, checked: Option<u64>, now: Option<u64>) -> Option<Vec<String>> {
        let watch = self
            .watch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let written = watch.written_between(checked?, now?)?;
        relative(&self.location.root, written)
    }

    /// Whether a watcher was started (trusted or not).
    fn has_watch(&self) -> bool {
        self.watch
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_some()
    }

    fn watch_generation(&self) -> Option<u64> {
        // Not under the `watch` lock: the barrier may wait a little.
        let watch = self.watch.lock().unwrap_or_else(|p| p.into_inner()).clone();
        watch.and_then(|w| w.generation())
    }

    fn lock(&self) -> MutexGuard<'_, Option<LiveIndex>> {
        lock_open(&self.open)
    }
}

/// `paths` relative to `root`, `/`-separated; `None` if one is outside it or not UTF-8.
fn relative(root: &Path, paths: Vec<PathBuf>) -> Option<Vec<String>> {
    paths
        .iter()
        .map(|p| {
            let rel = p.strip_prefix(root).ok()?.to_str()?;
            Some(rel.replace(std::path::MAIN_SEPARATOR, "/"))
        })
        .collect()
}

/// The open index. A call that panicked poisons the lock; the index it
/// left may be mid-way, so it is dropped and reopened.
fn lock_open(open: &Mutex<Option<LiveIndex>>) -> MutexGuard<'_, Option<LiveIndex>> {
    open.lock().unwrap_or_else(|poisoned| {
        open.clear_poison();
        let mut guard = poisoned.into_inner();
        *guard = None;
        guard
    })
}

/// The process's resident memory in MiB (Linux `/proc/self/statm`; `None` elsewhere).
fn resident_mb() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * 4096 / (1 << 20))
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn lexical_normal(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
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
}
