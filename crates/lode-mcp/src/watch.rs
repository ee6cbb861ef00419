//! Watching a served repository, so that a call need not check the tree.
//!
//! A [`Watch`] puts a non-recursive `notify` watch on every directory the
//! last full walk entered (the walk snapshot's list: ignored trees such as
//! `target/` or `node_modules/` are never watched) and counts the events in
//! a generation number. A call whose index was checked at the current
//! generation skips the stat pass: nothing happened in the tree since. Any
//! event sends the next call through the stat pass, and a debounce thread
//! runs that check itself once the tree has been quiet for [`QUIET`], so that
//! the next call usually finds the index already up to date.
//!
//! Events arrive on the watcher's thread a moment after the write, so a call
//! right after an edit could read the generation before the edit's event is
//! counted. A call therefore first passes a *barrier*: it creates (and
//! removes) a file named by a sequence number in a directory of the index's
//! cache, which the same watcher watches, and waits until the thread has seen
//! that name. The kernel queues events in order, so every event of a write
//! that finished before the call is counted by then (a warm `search` round
//! trip on tokio: 3.24 ms with the barrier, 2.82 ms with `--no-refresh`; past
//! [`BARRIER_WAIT`] the call checks the tree instead). The number is read from
//! the event's file name, not from a file's content, which a later barrier
//! could already have changed.
//!
//! The watch only ever *adds* checks: a failed watcher (an error, or the
//! kernel's watch limit) marks itself failed and every call checks the tree
//! as if there were no watcher; a queue overflow is an event like any other.
//! What it does not see — a change to an ignore file above the root or to the
//! global git excludes — the stat pass of a call after any other event does.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

use notify::{RecommendedWatcher, RecursiveMode, Watcher};

/// The tree must be quiet this long before the debounce thread checks it.
pub const QUIET: Duration = Duration::from_millis(30);
/// ...but a steady stream of events is checked at least this often.
pub const MAX_DELAY: Duration = Duration::from_millis(200);
/// A call waits at most this long for the watcher to catch up.
pub const BARRIER_WAIT: Duration = Duration::from_millis(100);

/// How many events the change log keeps; a call checked further back walks.
const LOG_LEN: usize = 1024;

/// What calls read: how many events there were, and whether to trust them.
#[derive(Default)]
pub(crate) struct WatchState {
    generation: AtomicU64,
    failed: AtomicBool,
    /// What each generation's event was, as far as it is known.
    log: Mutex<ChangeLog>,
    /// The highest barrier number the thread has seen in the marker file.
    barrier_seen: Mutex<u64>,
    barrier_moved: Condvar,
    /// Tests: the thread ignores barriers, as if its events lagged.
    #[cfg(test)]
    deaf: AtomicBool,
}

impl WatchState {
    /// The current generation, or `None` when the watcher cannot be trusted.
    /// (Without a barrier: for the debounce thread, which counts the events.)
    pub fn generation(&self) -> Option<u64> {
        (!self.failed.load(Ordering::SeqCst)).then(|| self.generation.load(Ordering::SeqCst))
    }

    fn saw_barrier(&self, n: u64) {
        #[cfg(test)]
        if self.deaf.load(Ordering::SeqCst) {
            return;
        }
        let mut seen = self.barrier_seen.lock().unwrap_or_else(|p| p.into_inner());
        if n > *seen {
            *seen = n;
            self.barrier_moved.notify_all();
        }
    }

    /// Counts an event; `written`: the file it wrote in place, when that is
    /// all it did (`None`: anything else, which only a walk can judge).
    fn bump(&self, written: Option<PathBuf>) {
        let mut log = self.log.lock().unwrap_or_else(|p| p.into_inner());
        let generation = self.generation.fetch_add(1, Ordering::SeqCst) + 1;
        log.push(generation, written);
    }

    /// The files written in place after generation `from` up to `to`, when
    /// the events of those generations were such writes and nothing else.
    pub fn written_between(&self, from: u64, to: u64) -> Option<Vec<PathBuf>> {
        self.log
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .written_between(from, to)
    }

    fn fail(&self) {
        self.failed.store(true, Ordering::SeqCst);
    }
}

/// The last [`LOG_LEN`] events by generation.
#[derive(Default)]
struct ChangeLog {
    events: std::collections::VecDeque<(u64, Option<PathBuf>)>,
    /// The newest generation no longer in `events`.
    forgotten: u64,
}

impl ChangeLog {
    fn push(&mut self, generation: u64, written: Option<PathBuf>) {
        if self.events.len() == LOG_LEN
            && let Some((old, _)) = self.events.pop_front()
        {
            self.forgotten = old;
        }
        self.events.push_back((generation, written));
    }

    fn written_between(&self, from: u64, to: u64) -> Option<Vec<PathBuf>> {
        if from < self.forgotten {
            return None;
        }
        let mut paths: Vec<PathBuf> = Vec::new();
        for (generation, written) in &self.events {
            if *generation > from && *generation <= to {
                paths.push(written.clone()?);
            }
        }
        paths.sort();
        paths.dedup();
        Some(paths)
    }
}

/// The one file an event wrote in place, if that is all it did: data or
/// metadata modified, or a file opened for writing closed. Creations,
/// removals and renames change a directory, which only a walk can judge.
fn written_in_place(event: &notify::Event) -> Option<PathBuf> {
    use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
    let in_place = matches!(
        event.kind,
        EventKind::Modify(ModifyKind::Data(_) | ModifyKind::Metadata(_) | ModifyKind::Any)
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    );
    match event.paths.as_slice() {
        [path] if in_place && !event.need_rescan() => Some(path.clone()),
        _ => None,
    }
}

/// A repository's watcher; dropping it stops the watcher and its thread.
pub(crate) struct Watch {
    state: Arc<WatchState>,
    watcher: Arc<Mutex<Inner>>,
    /// Where barrier files come and go.
    barriers: PathBuf,
    barrier_next: AtomicU64,
    /// Tests: a way into the event stream, to inject what the kernel would send.
    #[cfg(test)]
    events: std::sync::mpsc::Sender<notify::Result<notify::Event>>,
}

struct Inner {
    watcher: RecommendedWatcher,
    watched: HashSet<PathBuf>,
}

impl Watch {
    /// Starts watching `dirs` (absolute) under `root`. `check` runs on the
    /// debounce thread after a burst of events, given the generation read
    /// before it starts (`None`: the watch failed) and a function that points
    /// the watch at the directories of the index it brought up to date.
    pub fn start(
        root: &Path,
        barriers: PathBuf,
        dirs: Vec<PathBuf>,
        check: impl Fn(Option<u64>, &WatchState, &dyn Fn(Vec<PathBuf>)) + Send + 'static,
    ) -> Option<Watch> {
        let (sender, events) = channel::<notify::Result<notify::Event>>();
        #[cfg(test)]
        let injected = sender.clone();
        let mut watcher = notify::recommended_watcher(sender).ok()?;
        std::fs::create_dir_all(&barriers).ok()?;
        watcher.watch(&barriers, RecursiveMode::NonRecursive).ok()?;
        let state = Arc::new(WatchState::default());
        let inner = Arc::new(Mutex::new(Inner {
            watcher,
            watched: HashSet::new(),
        }));
        let watch = Watch {
            state: state.clone(),
            watcher: inner.clone(),
            barriers: barriers.clone(),
            barrier_next: AtomicU64::new(0),
            #[cfg(test)]
            events: injected,
        };
        watch.sync(dirs);
        let paths = Paths {
            git_dir: root.join(".git"),
            barriers,
        };
        let weak = Arc::downgrade(&inner);
        std::thread::Builder::new()
            .name("lode-watch".into())
            .spawn(move || debounce(events, &state, &paths, &weak, check))
            .ok()?;
        Some(watch)
    }

    /// The generation once every event of a write finished before this call
    /// has been counted (the barrier), or `None` when the watcher cannot say.
    pub fn generation(&self) -> Option<u64> {
        self.state.generation()?;
        let n = self.barrier_next.fetch_add(1, Ordering::SeqCst) + 1;
        let file = self.barriers.join(format!("b{n}"));
        std::fs::write(&file, b"").ok()?;
        let _ = std::fs::remove_file(&file);
        let seen = self
            .state
            .barrier_seen
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let (seen, _) = self
            .state
            .barrier_moved
            .wait_timeout_while(seen, BARRIER_WAIT, |seen| *seen < n)
            .unwrap_or_else(|p| p.into_inner());
        if *seen < n {
            return None;
        }
        drop(seen);
        self.state.generation()
    }

    /// See [`WatchState::written_between`].
    pub fn written_between(&self, from: u64, to: u64) -> Option<Vec<PathBuf>> {
        self.state.written_between(from, to)
    }

    /// Watches exactly `dirs` from now on. A directory that cannot be watched
    /// (the kernel's limit) fails the watch: calls then check the tree.
    pub fn sync(&self, dirs: Vec<PathBuf>) {
        sync(&self.watcher, &self.state, dirs);
    }
}

/// Failure injection for the tests of the fallbacks.
#[cfg(test)]
impl Watch {
    /// Sends the watcher thread an error, as the kernel's backend would.
    pub fn inject_error(&self) {
        let _ = self.events.send(Err(notify::Error::generic("injected")));
    }

    /// Makes the thread ignore barriers (`true`), so calls wait them out.
    pub fn set_deaf(&self, deaf: bool) {
        self.state.deaf.store(deaf, Ordering::SeqCst);
    }
}

fn sync(inner: &Mutex<Inner>, state: &WatchState, dirs: Vec<PathBuf>) {
    let mut inner = inner.lock().unwrap_or_else(|p| p.into_inner());
    let wanted: HashSet<PathBuf> = dirs.into_iter().collect();
    let gone: Vec<PathBuf> = inner.watched.difference(&wanted).cloned().collect();
    for dir in gone {
        // A deleted directory's watch is already gone; the error is expected.
        let _ = inner.watcher.unwatch(&dir);
        inner.watched.remove(&dir);
    }
    let mut added = false;
    for dir in wanted {
        if inner.watched.contains(&dir) {
            continue;
        }
        match inner.watcher.watch(&dir, RecursiveMode::NonRecursive) {
            Ok(()) => {
                inner.watched.insert(dir);
                added = true;
            }
            // Gone since the walk: the event that removed it sends calls to
            // the stat pass. Anything else (the watch limit) we cannot cover.
            Err(e) if matches!(&e.kind, notify::ErrorKind::PathNotFound) => state.bump(None),
            Err(_) => state.fail(),
        }
    }
    // Files created in a new directory before its watch was placed made no
    // event: the next call checks the tree.
    if added {
        state.bump(None);
    }
}

/// Opening or reading a file (lode's own snippet reads among them) changes nothing.
fn is_read(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, EventKind};
    matches!(kind, EventKind::Access(a) if !matches!(a, AccessKind::Close(AccessMode::Write)))
}

/// Paths whose events are not the tree's.
struct Paths {
    git_dir: PathBuf,
    barriers: PathBuf,
}

/// The debounce thread: counts events, and after a burst runs `check` and
/// re-syncs the watched directories. Ends when the watcher is dropped.
fn debounce(
    events: Receiver<notify::Result<notify::Event>>,
    state: &WatchState,
    paths: &Paths,
    watcher: &Weak<Mutex<Inner>>,
    check: impl Fn(Option<u64>, &WatchState, &dyn Fn(Vec<PathBuf>)),
) {
    // Counts an event; says whether it concerns the tree.
    let count = |event: notify::Result<notify::Event>| -> bool {
        match event {
            Ok(e)
                if !e.need_rescan()
                    && e.paths.iter().all(|p| p.parent() == Some(&paths.barriers)) =>
            {
                for p in &e.paths {
                    let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                    if let Some(n) = name.strip_prefix('b').and_then(|n| n.parse().ok()) {
                        state.saw_barrier(n);
                    }
                }
                false
            }
            Ok(e)
                if !e.need_rescan()
                    && (is_read(&e.kind)
                        || e.paths.iter().all(|p| p.starts_with(&paths.git_dir))) =>
            {
                false
            }
            Ok(e) => {
                state.bump(written_in_place(&e));
                true
            }
            Err(_) => {
                state.fail();
                false
            }
        }
    };
    while let Ok(first) = events.recv() {
        let mut relevant = count(first);
        let started = Instant::now();
        loop {
            let left = MAX_DELAY.saturating_sub(started.elapsed());
            if left.is_zero() {
                break;
            }
            match events.recv_timeout(QUIET.min(left)) {
                Ok(e) => relevant |= count(e),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => return,
            }
        }
        if !relevant {
            continue;
        }
        let Some(inner) = watcher.upgrade() else {
            return;
        };
        check(state.generation(), state, &|dirs| sync(&inner, state, dirs));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use notify::event::{AccessKind, AccessMode, CreateKind, DataChange, EventKind, ModifyKind};

    fn event(kind: EventKind, paths: &[&str]) -> notify::Event {
        let mut e = notify::Event::new(kind);
        e.paths = paths.iter().map(PathBuf::from).collect();
        e
    }

    #[test]
    fn only_writes_in_place_to_one_file_are_known() {
        let data = EventKind::Modify(ModifyKind::Data(DataChange::Content));
        let closed = EventKind::Access(AccessKind::Close(AccessMode::Write));
        assert_eq!(
            written_in_place(&event(data, &["/r/a.rs"])),
            Some(PathBuf::from("/r/a.rs"))
        );
        assert!(written_in_place(&event(closed, &["/r/a.rs"])).is_some());
        let created = EventKind::Create(CreateKind::File);
        assert!(written_in_place(&event(created, &["/r/b.rs"])).is_none());
        let renamed = EventKind::Modify(ModifyKind::Name(notify::event::RenameMode::Both));
        assert!(written_in_place(&event(renamed, &["/r/a", "/r/b"])).is_none());
        assert!(written_in_place(&event(EventKind::Any, &["/r/a.rs"])).is_none());
        let overflow = event(data, &["/r/a.rs"]).set_flag(notify::event::Flag::Rescan);
        assert!(written_in_place(&overflow).is_none());
    }

    #[test]
    fn the_log_knows_the_writes_between_two_generations_or_says_it_cannot() {
        let state = WatchState::default();
        state.bump(Some("/r/a.rs".into()));
        state.bump(Some("/r/b.rs".into()));
        state.bump(Some("/r/a.rs".into()));
        let g = state.generation().unwrap();
        assert_eq!(g, 3);
        let paths = |v: &[&str]| v.iter().map(PathBuf::from).collect::<Vec<_>>();
        assert_eq!(
            state.written_between(0, 3),
            Some(paths(&["/r/a.rs", "/r/b.rs"]))
        );
        assert_eq!(state.written_between(1, 2), Some(paths(&["/r/b.rs"])));
        assert_eq!(state.written_between(3, 3), Some(vec![]));
        // An event that was not a write in place hides everything around it.
        state.bump(None);
        state.bump(Some("/r/c.rs".into()));
        assert_eq!(state.written_between(3, 5), None);
        assert_eq!(state.written_between(4, 5), Some(paths(&["/r/c.rs"])));
        // Generations the log forgot are unknown.
        for _ in 0..LOG_LEN {
            state.bump(Some("/r/d.rs".into()));
        }
        assert_eq!(state.written_between(4, 6), None);
        let now = state.generation().unwrap();
        assert_eq!(
            state.written_between(now - 1, now),
            Some(paths(&["/r/d.rs"]))
        );
    }
}
