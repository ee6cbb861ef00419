//! One repository's index, kept open across calls, and the freshness check
//! that decides whether it may answer.
//!
//! Keeping it open keeps its caches (decoded postings, vectors) warm. The
//! check is the test `lode_index::refresh` makes — same fingerprint, and
//! every file the walk admits has the size and mtime the index recorded —
//! run against the fingerprint, file list and walk snapshot read once when
//! the index was opened (the walk is usually the quick, stat-only one; see
//! `lode_index::snapshot`). The walk runs on a second thread while the query
//! runs on the kept index; the answer stands when the walk finds nothing
//! changed, otherwise `lode_index::refresh` updates the index and the query
//! runs again. So a warm call costs the longer of the two, not their sum.

use lode_core::{Config, Result};
use lode_index::{Index, IndexLocation, RefreshOptions, WalkBasis, WalkReport};

pub(crate) struct OpenIndex {
    index: Index,
    /// `PRAGMA data_version` when opened: a commit by any other connection
    /// (another lode process, or a refresh of ours) changes it.
    data_version: i64,
    fingerprint: Option<String>,
    manifest: lode_index::Manifest,
    walk_basis: Option<WalkBasis>,
    /// The build generation of the committed state this was opened at.
    generation: Option<u64>,
    /// The watch generation at which the tree was last found to match this
    /// index (see `crate::watch`); `None`: not known to match.
    pub(crate) checked: Option<u64>,
}

/// What an open index read and decoded, kept through an update that may
/// leave most of it valid (see [`OpenIndex::after_update`]).
struct Carried {
    manifest: lode_index::Manifest,
    vectors: Option<lode_index::KeptVectors>,
    generation: Option<u64>,
}

impl OpenIndex {
    fn new(index: Index) -> Result<OpenIndex> {
        Ok(OpenIndex {
            // Before the generation: a commit between the two reads then
            // shows as a changed `data_version` (the next call reopens).
            data_version: data_version(&index)?,
            generation: generation(&index)?,
            fingerprint: index.store().meta("fingerprint")?,
            manifest: index.store().manifest()?,
            walk_basis: WalkBasis::load(index.store())?,
            checked: None,
            index,
        })
    }

    /// Gives up the index (its connection) and keeps what it read.
    fn into_carried(mut self) -> Carried {
        Carried {
            vectors: self.index.take_vectors(),
            manifest: self.manifest,
            generation: self.generation,
        }
    }

    /// The index opened after the build of `report`, keeping what `carried`
    /// read before it when that build was the only commit in between: the
    /// file list and the vectors are re-read for the files the build touched
    /// only. (An edit then costs its own rows, not a read of every file row
    /// and every vector: about 20 ms on a 7,600-file tree.)
    fn after_update(
        index: Index,
        carried: Carried,
        report: &lode_index::BuildReport,
    ) -> Result<OpenIndex> {
        let data_version = data_version(&index)?;
        let now = generation(&index)?;
        let only_this_build = carried.generation.map(|g| g + 1) == Some(report.generation)
            && now == Some(report.generation)
            && report.rebuilt.is_none();
        if !only_this_build {
            return OpenIndex::new(index);
        }
        if let Some(vectors) = carried.vectors {
            index.adopt_vectors(vectors, &carried.manifest, &report.touched)?;
        }
        let mut manifest = carried.manifest;
        index
            .store()
            .patch_manifest(&mut manifest, &report.touched)?;
        Ok(OpenIndex {
            data_version,
            generation: now,
            fingerprint: index.store().meta("fingerprint")?,
            manifest,
            walk_basis: WalkBasis::load(index.store())?,
            checked: None,
            index,
        })
    }

    pub(crate) fn index(&self) -> &Index {
        &self.index
    }

    /// Still the current database, with no commit since it was opened.
    fn is_current(&self, loc: &IndexLocation) -> bool {
        loc.current_db().as_deref() == Some(self.index.store().path())
            && data_version(&self.index).ok() == Some(self.data_version)
    }

    /// The directories a watcher should watch (absolute), when the last walk recorded them.
    pub(crate) fn watch_dirs(&self, root: &std::path::Path) -> Option<Vec<std::path::PathBuf>> {
        let basis = self.walk_basis.as_ref()?;
        Some(basis.dirs().map(|d| root.join(d)).collect())
    }

    fn same_config(&self, config: &Config) -> bool {
        self.fingerprint.as_deref() == Some(lode_index::fingerprint(config).as_str())
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
            let walk = s.spawn(move || lode_index::walk_with(root, basis, manifest, config));
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
        lode_index::walk_changed(&loc.root, basis, &self.manifest, paths, config)
    }

    /// How many files of `walked` differ from this index (changed or deleted).
    fn changed(&self, walked: &WalkReport) -> usize {
        let diff = lode_index::stat_diff(walked, &self.manifest);
        diff.changed.len() + diff.deleted.len()
    }
}

/// Runs `f` on an index of `loc` that is up to date (with `no_refresh`: on
/// the index as committed), reusing `kept` when it may answer and replacing
/// it otherwise. `known`: the files (root-relative) a watcher saw written in
/// place since `kept` was last checked, and nothing else — then only those
/// are `stat`ed. Returns `f`'s answer and how the tree was checked.
pub(crate) fn query<T>(
    kept: &mut Option<OpenIndex>,
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
    // Release the kept connection first: a rebuild replaces its database.
    // What it read goes on to the next index if an update is all that follows.
    let carried = match (kept.take(), &walked) {
        (Some(open), Some(_)) => Some(open.into_carried()),
        _ => None,
    };
    let (index, freshness) = match walked {
        // The walk just made decides: no second stat pass.
        Some((walk, changed)) => lode_index::refresh_walked(loc, opts, walk, changed)?,
        None => lode_index::refresh(loc, opts)?,
    };
    // (`Stale`: the last complete index answers; the next call checks again.)
    if let Some(note) = freshness.note() {
        (opts.note)(&note);
    }
    let open = match (carried, &freshness) {
        (Some(carried), lode_index::Freshness::Refreshed(report)) => {
            OpenIndex::after_update(index, carried, report)?
        }
        _ => OpenIndex::new(index)?,
    };
    let open = kept.insert(open);
    checked.reopened = true;
    Ok((f(&open.index)?, checked))
}

/// How [`query`] made sure of the tree.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Checked {
    /// An index was (re)opened: the first use, or the tree had changed.
    pub reopened: bool,
    /// Only the files the watcher saw written were `stat`ed (no stat pass).
    pub by_writes: bool,
}

fn generation(index: &Index) -> Result<Option<u64>> {
    Ok(index
        .store()
        .meta("generation")?
        .and_then(|g| g.parse().ok()))
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
