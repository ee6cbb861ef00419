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
mod tests;
