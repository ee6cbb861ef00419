//! The quick stat pass: proving the set of files unchanged without walking.
//!
//! A full walk lists every directory and matches every entry against the
//! ignore rules; on a large tree that is most of a refresh (about what
//! `rg --files` takes; docs/benchmarks.md). But a directory's
//! mtime changes whenever an entry is added to it, removed or renamed, and
//! the rules only change when an ignore file does. So a full walk records a
//! [`Snapshot`] — every directory it entered with its mtime, and the files
//! whose change could change the walk's answer (ignore files inside and above
//! the root, the git excludes and config, files skipped only for their size)
//! — and [`quick_walk`] later `stat`s those plus the indexed files. If every
//! directory and watched file is as recorded, the walk would list the same
//! files: the indexed files with their current size and mtime are the walk.
//! Anything else (a directory changed, a watched file changed, an indexed
//! file vanished or outgrew the size cap, files that were unreadable) falls
//! back to the full walk, which records a new snapshot.
//!
//! Timestamps are coarse (a kernel tick): an entry added in the same tick as
//! a directory's recorded mtime would leave it unchanged. As git does with
//! "racily clean" entries, a directory or watched file modified within
//! [`RACY_NS`] of the walk is recorded as unknown, so the next refresh walks.

use std::collections::BTreeMap;
use std::hash::BuildHasher;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::walk::{SkipReason, WalkReport, WalkedFile};

/// What an index recorded of a file, which the stat pass compares with the
/// file now.
pub trait Recorded {
    /// Bytes, as `stat` gave them when the file was indexed.
    fn size(&self) -> u64;
    /// The modification time, nanoseconds since the Unix epoch.
    fn mtime_ns(&self) -> i64;
}

/// Every indexed file by root-relative path, as the index recorded it.
pub type Manifest<R, S> = std::collections::HashMap<String, R, S>;

/// Modified this close to the walk (or after it), a timestamp proves nothing.
pub const RACY_NS: i64 = 1_000_000_000;

/// A recorded timestamp that never matches (see [`RACY_NS`]).
const UNKNOWN: i64 = i64::MIN;

/// What a full walk saw that decides whether the next one would differ.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Every directory the walk entered, root-relative (`""` is the root), with its mtime.
    pub dirs: Vec<(String, i64)>,
    /// Files outside the indexed set whose change could change the walk:
    /// absolute path and `(size, mtime)`, `None` when absent.
    pub watched: Vec<(PathBuf, Option<(u64, i64)>)>,
}

impl Snapshot {
    /// Marks timestamps too close to `walk_started_ns` as unknown.
    pub fn settle(&mut self, walk_started_ns: i64) {
        let racy = |t: &mut i64| {
            if *t >= walk_started_ns - RACY_NS {
                *t = UNKNOWN;
            }
        };
        for (_, t) in &mut self.dirs {
            racy(t);
        }
        for (_, state) in &mut self.watched {
            if let Some((_, t)) = state {
                racy(t);
            }
        }
        self.dirs.sort();
        self.watched.sort();
    }

    /// The snapshot as the index keeps it (a `meta` value).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A kept snapshot; `None` for text that is not one (an older format:
    /// the next refresh walks).
    pub fn from_json(text: &str) -> Option<Snapshot> {
        serde_json::from_str(text).ok()
    }
}

/// The tree's root, open, to `stat` paths below it: the kernel then resolves
/// only the components under the root instead of the root's own again for
/// every file (measured in docs/benchmarks.md, "Freshness costs").
pub struct RootDir {
    #[cfg(unix)]
    dir: std::fs::File,
    #[cfg(not(unix))]
    root: PathBuf,
}

impl RootDir {
    /// Opens `root`; `None` when it cannot be opened (the caller walks).
    pub fn open(root: &Path) -> Option<RootDir> {
        Some(RootDir {
            #[cfg(unix)]
            dir: std::fs::File::open(root).ok()?,
            #[cfg(not(unix))]
            root: root.to_path_buf(),
        })
    }

    /// Size and mtime of `rel` (root-relative; `""` is the root), following
    /// symbolic links as [`stat`] does.
    pub fn stat(&self, rel: &str) -> Option<(u64, i64)> {
        #[cfg(unix)]
        {
            use rustix::fs::{AtFlags, statat};
            let (path, flags) = if rel.is_empty() {
                ("", AtFlags::EMPTY_PATH)
            } else {
                (rel, AtFlags::empty())
            };
            let st = statat(&self.dir, path, flags).ok()?;
            let mtime = if st.st_mtime < 0 {
                0
            } else {
                st.st_mtime as i64 * 1_000_000_000 + st.st_mtime_nsec as i64
            };
            Some((st.st_size as u64, mtime))
        }
        #[cfg(not(unix))]
        stat(&self.root.join(rel))
    }
}

/// `(size, mtime_ns)` of `path`, following symlinks; `None` if it is not there.
pub fn stat(path: &Path) -> Option<(u64, i64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), mtime_ns(&meta)))
}

/// The modification time in nanoseconds since the Unix epoch; 0 when the
/// platform gives none.
pub fn mtime_ns(meta: &std::fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Files outside the tree that shape every walk: the ignore files of the
/// root's ancestors, the repository's `info/exclude`, and the global git
/// excludes and config (which may name another excludes file).
pub fn global_watch_list(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for dir in root.ancestors().skip(1) {
        out.push(dir.join(".gitignore"));
        out.push(dir.join(".ignore"));
    }
    out.push(root.join(".git/info/exclude"));
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let xdg = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".config")));
    if let Some(x) = xdg {
        out.push(x.join("git/ignore"));
        out.push(x.join("git/config"));
    }
    if let Some(h) = home {
        out.push(h.join(".gitconfig"));
    }
    out
}

/// The walk's answer proven from `snapshot` by `stat` alone, or `None` when
/// something changed that only a full walk can judge. `skipped` is the last
/// full walk's count of skipped files, which an unchanged tree keeps.
pub fn quick_walk<R: Recorded + Sync, S: BuildHasher + Sync>(
    root: &Path,
    snapshot: &Snapshot,
    manifest: &Manifest<R, S>,
    max_file_size: u64,
    skipped: BTreeMap<SkipReason, u64>,
) -> Option<WalkReport> {
    if !same_tree(root, snapshot) {
        return None;
    }
    stat_indexed(root, manifest, max_file_size, skipped)
}

/// The first half of [`quick_walk`], which needs no file list: every
/// directory the snapshot recorded, and every file it watches, is as it was
/// (no entry added, removed or renamed; no ignore rule changed).
pub fn same_tree(root: &Path, snapshot: &Snapshot) -> bool {
    let Some(dir) = root.canonicalize().ok().and_then(|r| RootDir::open(&r)) else {
        return false;
    };
    let dirs_same = snapshot.dirs.par_iter().all(|(rel, recorded)| {
        *recorded != UNKNOWN && dir.stat(rel).is_some_and(|(_, t)| t == *recorded)
    });
    dirs_same && watched_same(snapshot)
}

/// The second half of [`quick_walk`], once [`same_tree`] holds: the indexed
/// files whose size or mtime is not what the index recorded, with their
/// size and mtime now (`only_changed`: the others are as recorded); `None`
/// when one is gone or outgrew the size cap. Listing only those spares
/// cloning and sorting every path for a diff that finds one.
pub fn stat_indexed<R: Recorded + Sync, S: BuildHasher + Sync>(
    root: &Path,
    manifest: &Manifest<R, S>,
    max_file_size: u64,
    skipped: BTreeMap<SkipReason, u64>,
) -> Option<WalkReport> {
    let root = root.canonicalize().ok()?;
    let dir = RootDir::open(&root)?;
    let stated = manifest
        .par_iter()
        .map(|(path, recorded)| {
            let (size, mtime_ns) = dir.stat(path)?;
            if size > max_file_size {
                return None;
            }
            let same = (size, mtime_ns) == (recorded.size(), recorded.mtime_ns());
            Some((!same).then(|| WalkedFile {
                path: path.clone(),
                size,
                mtime_ns,
            }))
        })
        .collect::<Option<Vec<Option<WalkedFile>>>>()?;
    let mut files: Vec<WalkedFile> = stated.into_iter().flatten().collect();
    files.sort_by(|a, b| a.path.cmp(&b.path));
    Some(WalkReport {
        files,
        skipped,
        snapshot: None,
        only_changed: true,
    })
}

/// Whether every file the snapshot watches is as recorded.
fn watched_same(snapshot: &Snapshot) -> bool {
    snapshot.watched.par_iter().all(|(path, recorded)| {
        recorded.is_none_or(|(_, t)| t != UNKNOWN) && stat(path) == *recorded
    })
}

/// The walk when only the files at `changed` (root-relative) may differ
/// from `manifest`, as a file watcher that saw nothing but in-place writes
/// in the tree knows: the other files as recorded, these `stat`ed again.
/// The snapshot's watched files are checked too (ignore files above the
/// root and the global excludes are outside every watched directory).
/// `None` when that cannot be the walk's answer — a watched file changed, a
/// changed path is not indexed, is gone, or outgrew the size cap — and a
/// walk must decide.
pub fn changed_walk<R: Recorded, S: BuildHasher>(
    root: &Path,
    snapshot: &Snapshot,
    manifest: &Manifest<R, S>,
    changed: &[String],
    max_file_size: u64,
    skipped: BTreeMap<SkipReason, u64>,
) -> Option<WalkReport> {
    if !watched_same(snapshot) {
        return None;
    }
    let mut files = Vec::with_capacity(changed.len());
    for path in changed {
        manifest.get(path)?;
        let (size, mtime_ns) = stat(&root.join(path))?;
        if size > max_file_size {
            return None;
        }
        files.push(WalkedFile {
            path: path.clone(),
            size,
            mtime_ns,
        });
    }
    files.sort_by(|a, b| a.path.cmp(&b.path));
    files.dedup_by(|a, b| a.path == b.path);
    // Only the written files: listing every indexed file again (and diffing
    // them) would cost more than the stat itself.
    Some(WalkReport {
        files,
        skipped,
        snapshot: None,
        only_changed: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn racy_timestamps_are_recorded_as_unknown() {
        let mut s = Snapshot {
            dirs: vec![("old".into(), 1_000), ("new".into(), 5_000_000_000)],
            watched: vec![
                (PathBuf::from("/x"), Some((3, 5_000_000_000))),
                (PathBuf::from("/y"), None),
            ],
        };
        s.settle(5_500_000_000);
        assert_eq!(s.dirs, vec![("new".into(), UNKNOWN), ("old".into(), 1_000)]);
        assert_eq!(s.watched[0].1, Some((3, UNKNOWN)));
        assert_eq!(s.watched[1].1, None);
        assert_eq!(Snapshot::from_json(&s.to_json()), Some(s));
    }
}
