//! Freshness for a long-lived reader: one repository's index kept open
//! across queries ([`LiveIndex`]), and the check that decides whether it may
//! answer ([`query`]); [`crate::refresh`] is the same for a
//! process that answers once.
//!
//! Keeping it open keeps its caches (decoded postings, vectors) warm. The
//! check is the test [`crate::refresh`] makes — same fingerprint, and every
//! file the walk admits has the size and mtime the index recorded — run
//! against the fingerprint, file list and walk snapshot read once when the
//! index was opened (the walk is usually the quick, stat-only one; see
//! [`crate::snapshot`]). The walk runs on a second thread while the query
//! runs on the kept index; the answer stands when the walk finds nothing
//! changed, otherwise the index is updated and the query runs again. So a
//! warm call costs the longer of the two, not their sum.

use lode_core::{Config, Result};

use crate::incremental::WalkBasis;
use crate::{Index, IndexLocation, RefreshOptions, WalkReport};

/// An index kept open across queries, with what its freshness check needs.
pub struct LiveIndex {
    index: Index,
    /// `PRAGMA data_version` when opened: a commit by any other connection
    /// (another lode process, or a refresh of ours) changes it.
    data_version: i64,
    fingerprint: Option<String>,
    manifest: crate::Manifest,
    walk_basis: Option<WalkBasis>,
    /// The caller's mark of when the tree was last found to match this index
    /// (a file watcher's generation); `None`: not known to match.
    pub checked: Option<u64>,
    /// A walk basis was read since the watch last took the directories.
    dirs_changed: bool,
}

impl LiveIndex {
    fn new(index: Index) -> Result<LiveIndex> {
        Ok(LiveIndex {
            data_version: data_version(&index)?,
            fingerprint: index.store().meta(crate::Meta::Fingerprint)?,
            manifest: index.store().manifest()?,
            walk_basis: WalkBasis::load(index.store())?,
            checked: None,
            dirs_changed: true,
            index,
        })
    }

    /// This index after the build of `report` committed, its connection
    /// kept open through it: when that build was the only commit since, the
    /// file list and the decoded vectors and postings are read again only for
    /// the files and terms the build touched (an edit then costs its own
    /// rows, not a read of every file row and every vector). Otherwise
    /// everything is read afresh.
    fn after_build(
        mut self,
        loc: &IndexLocation,
        report: &crate::BuildReport,
    ) -> Result<LiveIndex> {
        if loc.current_db().as_deref() != Some(self.index.store().path()) {
            return LiveIndex::new(Index::open(loc)?); // rebuilt into a new database
        }
        // Before the build's own check: a commit after this read shows as a
        // changed `data_version` on the next call.
        let data_version = data_version(&self.index)?;
        if self.index.after_build(report, &self.manifest)? {
            self.index
                .store()
                .patch_manifest(&mut self.manifest, &report.touched)?;
        } else {
            self.manifest = self.index.store().manifest()?;
        }
        // A build from a quick walk leaves the walk's snapshot as it was,
        // unless it met a file it could not read (then there is no basis).
        let same_basis = report.quick_walk
            && matches!(
                self.index.store().meta(crate::Meta::Unreadable)?.as_deref(),
                None | Some("0")
            );
        let (walk_basis, dirs_changed) = if same_basis {
            (self.walk_basis, self.dirs_changed)
        } else {
            (WalkBasis::load(self.index.store())?, true)
        };
        Ok(LiveIndex {
            data_version,
            fingerprint: self.index.store().meta(crate::Meta::Fingerprint)?,
            manifest: self.manifest,
            walk_basis,
            checked: None,
            dirs_changed,
            index: self.index,
        })
    }

    /// Whether the directories to watch may have changed since the last
    /// call of this (a walk basis was read); `watch_dirs` is costly enough
    /// (thousands of paths hashed) not to run on every call.
    pub fn take_dirs_changed(&mut self) -> bool {
        std::mem::take(&mut self.dirs_changed)
    }

    /// The open index.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Still the current database, with no commit since it was opened.
    fn is_current(&self, loc: &IndexLocation) -> bool {
        loc.current_db().as_deref() == Some(self.index.store().path())
            && data_version(&self.index).ok() == Some(self.data_version)
    }

    /// The directories a watcher should watch (absolute), when the last walk recorded them.
    pub fn watch_dirs(&self, root: &std::path::Path) -> Option<Vec<std::path::PathBuf>> {
        let basis = self.walk_basis.as_ref()?;
        Some(basis.dirs().map(|d| root.join(d)).collect())
    }

    /// Whether this index was built with what `config` asks for (its fingerprint).
    pub fn same_config(&self, config: &Config) -> bool {
        self.fingerprint.as_deref() == Some(crate::fingerprint(config).as_str())
    }

    /// `f` on this index, run while the tree is walked; the walk, and how
    /// many files differ from this index.
    fn speculate<T>(
        &self,
        loc: &IndexLocation,
        config: &Config,
        f: &impl Fn(&Index) -> Result<T>,
    ) -> Result<(Result<T>, WalkReport, usize)> {
        let (root, basis, manifest) = (&loc.root, self.walk_basis.as_ref(), &self.manifest);
        std::thread::scope(|s| {
            let walk =
                s.spawn(move || crate::incremental::walk_with(root, basis, manifest, config));
            let answer = f(&self.index);
            let walked = walk
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            let changed = self.changed(&walked);
            Ok((answer, walked, changed))
        })
    }

    /// The walk when the watcher saw nothing but in-place writes to `paths`
    /// (root-relative): no stat pass. `None` when a walk must decide.
    fn known_walk(
        &self,
        loc: &IndexLocation,
        config: &Config,
        paths: &[String],
    ) -> Option<WalkReport> {
        let basis = self.walk_basis.as_ref()?;
        crate::incremental::walk_changed(&loc.root, basis, &self.manifest, paths, config)
    }

    /// How many files of `walked` differ from this index (changed or deleted).
    fn changed(&self, walked: &WalkReport) -> usize {
        let diff = crate::incremental::stat_diff(walked, &self.manifest);
        diff.changed.len() + diff.deleted.len()
    }
}

/// Runs `f` on an index of `loc` that is up to date (with `no_refresh`: on
/// the index as committed), reusing `kept` when it may answer and replacing
/// it otherwise. `known`: the files (root-relative) a watcher saw written in
/// place since `kept` was last checked, and nothing else — then only those
/// are `stat`ed. Returns `f`'s answer and how the tree was checked.
pub fn query<T>(
    kept: &mut Option<LiveIndex>,
    loc: &IndexLocation,
    opts: &RefreshOptions,
    known: Option<&[String]>,
    f: impl Fn(&Index) -> Result<T>,
) -> Result<(T, Checked)> {
    let mut walked = None;
    let mut checked = Checked::default();
    if let Some(open) = kept.as_ref().filter(|o| o.is_current(loc)) {
        if opts.no_refresh {
            return Ok((f(&open.index)?, checked));
        }
        if open.same_config(opts.config) {
            let known = known.and_then(|paths| open.known_walk(loc, opts.config, paths));
            checked.by_writes = known.is_some();
            walked = Some(match known {
                Some(walk) => {
                    let changed = open.changed(&walk);
                    if changed == 0 {
                        return Ok((f(&open.index)?, checked));
                    }
                    (walk, changed)
                }
                None => {
                    let (answer, walk, changed) = open.speculate(loc, opts.config, &f)?;
                    if changed == 0 {
                        return Ok((answer?, checked));
                    }
                    (walk, changed)
                }
            });
        }
    }
    let (open, freshness) = match (kept.take(), walked) {
        // The kept index stays open through an update of the files the walk
        // found changed; what it decoded is kept where the update allows.
        (Some(open), Some((walk, changed))) => {
            let kept = Some((&open.manifest, open.index.generation()));
            let freshness = crate::incremental::update_walked(loc, opts, walk, changed, kept)?;
            let open = match &freshness {
                crate::Freshness::Refreshed(report) => open.after_build(loc, report)?,
                // Another process is writing: answer from what it last committed.
                _ => {
                    drop(open);
                    LiveIndex::new(Index::open(loc)?)?
                }
            };
            (open, freshness)
        }
        (stale, walked) => {
            // Release the kept connection first: a rebuild replaces its database.
            drop(stale);
            let (index, freshness) = match walked {
                // The walk just made decides: no second stat pass.
                Some((walk, changed)) => crate::refresh::refresh_walked(loc, opts, walk, changed)?,
                None => crate::refresh(loc, opts)?,
            };
            (LiveIndex::new(index)?, freshness)
        }
    };
    // (`Stale`: the last complete index answers; the next call checks again.)
    if let Some(note) = freshness.note() {
        (opts.note)(&note);
    }
    let open = kept.insert(open);
    checked.reopened = true;
    Ok((f(&open.index)?, checked))
}

/// How [`query`] made sure of the tree.
#[derive(Clone, Copy, Debug, Default)]
pub struct Checked {
    /// An index was (re)opened: the first use, or the tree had changed.
    pub reopened: bool,
    /// Only the files the watcher saw written were `stat`ed (no stat pass).
    pub by_writes: bool,
}

fn data_version(index: &Index) -> Result<i64> {
    index
        .store()
        .connection()
        .query_row("PRAGMA data_version", [], |r| r.get(0))
        .map_err(|e| lode_core::Error::IndexCorrupt {
            path: index.store().path().to_path_buf(),
            reason: e.to_string(),
        })
}
