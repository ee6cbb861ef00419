//! The walk a build starts from: proven from the index's snapshot when it
//! can be ([`WalkBasis`]), else a full walk.

use super::*;

/// The walk of an index's tree: proven from its snapshot by `stat` alone when
/// nothing but file contents changed (see [`lode_walk::snapshot`]), else a full walk.
pub(crate) fn walk_for(
    root: &std::path::Path,
    store: &Store,
    manifest: &Manifest,
    config: &Config,
) -> Result<WalkReport> {
    let basis = WalkBasis::load(store)?;
    walk_with(root, basis.as_ref(), manifest, config)
}

/// `store`'s file list and the walk [`walk_for`] makes, overlapped: the
/// stat pass over the directories needs no file list, so it runs on another
/// thread while the list is read.
/// `beside` runs on this thread once the list
/// is read, while the indexed files are `stat`ed (a query that may stand if
/// nothing changed).
pub(crate) fn manifest_and_walk<T>(
    root: &std::path::Path,
    store: &Store,
    config: &Config,
    beside: impl FnOnce() -> T,
) -> Result<(Manifest, WalkReport, T)> {
    let Some(basis) = WalkBasis::load(store)? else {
        let manifest = store.manifest()?;
        let walked = std::thread::scope(|s| {
            let walk = s.spawn(|| walk::walk(root, &config.files));
            let answer = beside();
            (join(walk), answer)
        });
        return Ok((manifest, walked.0?, walked.1));
    };
    // `None` in the cell: the list could not be read (the walk gives up).
    let listed: std::sync::OnceLock<Option<Manifest>> = std::sync::OnceLock::new();
    let (walked, manifest, answer) = std::thread::scope(|s| {
        let walk = s.spawn(|| {
            if !lode_walk::snapshot::same_tree(root, &basis.snapshot) {
                return walk::walk(root, &config.files).map(Some);
            }
            let Some(manifest) = listed.wait() else {
                return Ok(None);
            };
            let max = config.files.max_file_size;
            match lode_walk::snapshot::stat_indexed(root, manifest, max, basis.skipped.clone()) {
                Some(report) => Ok(Some(report)),
                None => walk::walk(root, &config.files).map(Some),
            }
        });
        let (manifest, failed) = match store.manifest() {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        };
        let _ = listed.set(manifest);
        let answer = failed.is_none().then(beside);
        (join(walk), failed, answer)
    });
    if let Some(e) = manifest {
        return Err(e);
    }
    let manifest = listed
        .into_inner()
        .flatten()
        .expect("the file list was read");
    let walked = walked?.expect("the file list was read");
    Ok((manifest, walked, answer.expect("the file list was read")))
}

pub(super) fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// The walk of an index's tree, with its snapshot already read (a
/// long-lived reader keeps it): proven by `stat` alone when the snapshot
/// allows, else a full walk.
pub fn walk_with(
    root: &std::path::Path,
    basis: Option<&WalkBasis>,
    manifest: &Manifest,
    config: &Config,
) -> Result<WalkReport> {
    if let Some(basis) = basis
        && let Some(report) = lode_walk::snapshot::quick_walk(
            root,
            &basis.snapshot,
            manifest,
            config.files.max_file_size,
            basis.skipped.clone(),
        )
    {
        return Ok(report);
    }
    walk::walk(root, &config.files)
}

/// As [`walk_with`], when a file watcher knows that nothing but the files at
/// `changed` (root-relative) was written since `manifest`, and only in place:
/// no `stat` of any other file. `None` when a walk must decide (see
/// [`lode_walk::snapshot::changed_walk`]).
pub fn walk_changed(
    root: &std::path::Path,
    basis: &WalkBasis,
    manifest: &Manifest,
    changed: &[String],
    config: &Config,
) -> Option<WalkReport> {
    lode_walk::snapshot::changed_walk(
        root,
        &basis.snapshot,
        manifest,
        changed,
        config.files.max_file_size,
        basis.skipped.clone(),
    )
}

/// What the last full walk recorded, when a quick walk may rely on it.
#[derive(Clone, Debug)]
pub struct WalkBasis {
    snapshot: lode_walk::snapshot::Snapshot,
    skipped: BTreeMap<SkipReason, u64>,
}

impl WalkBasis {
    /// The directories the last full walk entered, root-relative (`""`: the root).
    pub fn dirs(&self) -> impl Iterator<Item = &str> {
        self.snapshot.dirs.iter().map(|(d, _)| d.as_str())
    }

    /// The store's snapshot, or `None` when there is none or a full walk is
    /// needed anyway: entries the walk or the build could not read are not
    /// in the manifest, and a stat of what is cannot see them come back (a
    /// link's target appearing in a directory the walk never entered).
    pub fn load(store: &Store) -> Result<Option<WalkBasis>> {
        if !matches!(store.meta(Meta::Unreadable)?.as_deref(), None | Some("0")) {
            return Ok(None);
        }
        let snapshot = store
            .meta(Meta::WalkSnapshot)?
            .and_then(|t| lode_walk::snapshot::Snapshot::from_json(&t));
        let skipped: Option<BTreeMap<SkipReason, u64>> = store
            .meta(Meta::WalkSkipped)?
            .and_then(|t| serde_json::from_str(&t).ok());
        let skipped = skipped.filter(|s| s.get(&SkipReason::Unreadable).is_none_or(|&n| n == 0));
        Ok(snapshot
            .zip(skipped)
            .map(|(snapshot, skipped)| WalkBasis { snapshot, skipped }))
    }
}
