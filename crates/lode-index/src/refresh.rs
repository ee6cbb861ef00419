//! Freshness: every query sees the tree as it is now.

use lode_core::{Config, Error, Result};
use serde::Serialize;

use crate::build::{
    BuildOptions, BuildReport, build_with_walk, fingerprint, manifest_and_walk, stat_diff,
};
use crate::embed::{EmbedOptions, EmbedPhase};
use crate::location::{IndexLocation, WriterLock};
use crate::meta::Meta;
use crate::reader::Index;
use lode_walk::walk;

/// How a query's refresh went.
// (One per query, moved a few times: its size does not matter.)
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Freshness {
    /// Nothing changed since the last build (or the caller opted out of checking).
    Fresh,
    /// Changed files were re-indexed first.
    Refreshed(BuildReport),
    /// Files changed, but another process holds the writer lock: the answer
    /// comes from the last committed index.
    Stale {
        /// Files the stat pass found changed or gone.
        changed: usize,
        /// Why the answer is from the last index, for the user (names the
        /// process that holds the lock).
        reason: String,
    },
}

impl Freshness {
    /// The one-line note a query shows for this refresh, if any: the first
    /// build, or an answer from a stale index. (Shared by the CLI and the MCP
    /// server so both say the same thing.)
    pub fn note(&self) -> Option<String> {
        match self {
            Freshness::Refreshed(r) if r.rebuilt.as_deref() == Some("first build") => {
                Some(format!(
                    "indexed {} files ({} chunks) in {:.0} ms",
                    r.files, r.chunks, r.elapsed_ms
                ))
            }
            Freshness::Stale { changed, reason } => {
                Some(format!("{changed} files changed; {reason}"))
            }
            _ => None,
        }
    }
}

/// What a refresh may do.
pub struct RefreshOptions<'a> {
    /// The repository's configuration; an index built under another
    /// (its fingerprint differs) is rebuilt.
    pub config: &'a Config,
    /// Skip the stat pass and answer from the index as it is.
    pub no_refresh: bool,
    /// Progress of a build the refresh runs: `(files done, files to parse)`.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// One-line notes for the user (why a rebuild happens, an embedding
    /// phase that stopped).
    pub note: &'a dyn Fn(&str),
    /// How much of the embedding phase runs before the query answers: after
    /// a build, or to go on with chunks an earlier one left without vectors.
    pub embed: EmbedPhase,
}

impl<'a> RefreshOptions<'a> {
    /// A full refresh: the stat pass, a build when something changed and
    /// the whole embedding phase; no progress, no notes.
    pub fn new(config: &'a Config) -> RefreshOptions<'a> {
        RefreshOptions {
            config,
            no_refresh: false,
            progress: None,
            note: &|_| {},
            embed: EmbedPhase::Complete,
        }
    }
}

/// Opens the index of `loc`, first bringing it up to date unless `no_refresh`.
///
/// A repository never indexed is indexed now (waiting for another writer if
/// there is one); an index that is merely out of date is updated, or, when
/// another process is writing it, answered from as it is with [`Freshness::Stale`].
pub fn refresh(loc: &IndexLocation, opts: &RefreshOptions) -> Result<(Index, Freshness)> {
    lode_diagnostics::note_root(&loc.id());
    let (index, freshness) = refresh_inner(loc, opts)?;
    note(&freshness);
    Ok((index, freshness))
}

/// As [`refresh`], and runs `f` on the index it returns. When the index's
/// config still matches, `f` first runs on the index as it is *while* the
/// stat pass checks the tree on another thread; the answer stands when the
/// tree turns out unchanged (the usual case), and otherwise the index is
/// updated and `f` runs again on the new one. A command that opens, checks
/// and answers thus costs about the longer of the check and the answer, not
/// their sum. `f` must not have effects beyond its answer: it may run twice.
pub fn refresh_and<T>(
    loc: &IndexLocation,
    opts: &RefreshOptions,
    f: impl Fn(&Index) -> Result<T>,
) -> Result<(Index, T, Freshness)> {
    lode_diagnostics::note_root(&loc.id());
    let (index, freshness) = match check(loc, opts, Some(&f))? {
        Checked::Fresh(index, Some(answer)) => return Ok((*index, answer?, Freshness::Fresh)),
        checked => finish(loc, opts, checked)?,
    };
    note(&freshness);
    let answer = f(&index)?;
    Ok((index, answer, freshness))
}

/// A query a check may run beside its stat pass.
type Query<'q, T> = dyn Fn(&Index) -> Result<T> + 'q;

/// What checking an index against the tree came to.
enum Checked<T> {
    /// No index yet, or one that cannot be read: build one.
    Missing,
    /// The tree is as indexed; with the query's answer when it ran beside
    /// the stat pass.
    Fresh(Box<Index>, Option<Result<T>>),
    /// The walk found this many files changed: update from it.
    Changed(lode_walk::WalkReport, usize),
    /// The index was built under another config: rebuild from this walk.
    Rebuild(lode_walk::WalkReport),
}

/// Opens `loc`'s index and checks it against the tree (unless
/// `no_refresh`), running `f` on it beside the stat pass when its answer
/// can stand: not while the embedding phase has vectors to add first.
fn check<T>(
    loc: &IndexLocation,
    opts: &RefreshOptions,
    f: Option<&Query<'_, T>>,
) -> Result<Checked<T>> {
    if opts.no_refresh {
        let index = Index::open(loc)?;
        let answer = f.map(|f| f(&index));
        return Ok(Checked::Fresh(Box::new(index), answer));
    }
    let index = match Index::open(loc) {
        Ok(index) => index,
        Err(Error::NoIndex(_)) | Err(Error::IndexCorrupt { .. }) => return Ok(Checked::Missing),
        Err(e) => return Err(e),
    };
    let store = index.store();
    if store.meta(Meta::Fingerprint)?.as_deref() != Some(fingerprint(opts.config).as_str()) {
        drop(index);
        return Ok(Checked::Rebuild(walk(&loc.root, &opts.config.files)?));
    }
    let resumes_embedding =
        !matches!(opts.embed, EmbedPhase::Later) && crate::embed::pending_chunks(store)? > 0;
    let f = f.filter(|_| !resumes_embedding);
    let (manifest, walked, answer) =
        match manifest_and_walk(&loc.root, store, opts.config, || f.map(|f| f(&index))) {
            // Unreadable past its open: the build makes it again.
            Err(Error::IndexCorrupt { .. }) => return Ok(Checked::Missing),
            checked => checked?,
        };
    let diff = stat_diff(&walked, &manifest);
    if diff.is_empty() {
        return Ok(Checked::Fresh(Box::new(index), answer));
    }
    let changed = diff.changed.len() + diff.deleted.len();
    drop(diff);
    Ok(Checked::Changed(walked, changed))
}

/// The index `checked` calls for: built, updated, or as it is once the
/// embedding phase has gone on (as far as `opts.embed` allows).
fn finish<T>(
    loc: &IndexLocation,
    opts: &RefreshOptions,
    checked: Checked<T>,
) -> Result<(Index, Freshness)> {
    match checked {
        Checked::Missing => {
            let report = build_with_walk(loc, &build_options(opts, true), None)?;
            Ok((Index::open(loc)?, Freshness::Refreshed(report)))
        }
        Checked::Fresh(index, _) => {
            if !opts.no_refresh {
                resume_embedding(loc, &index, opts)?;
            }
            Ok((*index, Freshness::Fresh))
        }
        // The walk just made decides: no second stat pass.
        Checked::Changed(walked, changed) => update(loc, opts, walked, changed, false),
        // A rebuild waits for the lock, so its count is never reported.
        Checked::Rebuild(walked) => update(loc, opts, walked, 0, true),
    }
}

/// Counts a refresh in the diagnostics log.
fn note(freshness: &Freshness) {
    match freshness {
        Freshness::Refreshed(r) => lode_diagnostics::note_refreshed(r.parsed + r.deleted),
        Freshness::Stale { .. } => lode_diagnostics::note_fallback("refresh_skipped_locked"),
        Freshness::Fresh => {}
    }
}

fn refresh_inner(loc: &IndexLocation, opts: &RefreshOptions) -> Result<(Index, Freshness)> {
    finish(loc, opts, check::<()>(loc, opts, None)?)
}

/// As [`refresh`], for a caller that already walked the tree (`walked`) and
/// found `changed` files that differ from the index, under the index's own
/// config: the index is updated without walking again.
pub(crate) fn refresh_walked(
    loc: &IndexLocation,
    opts: &RefreshOptions,
    walked: lode_walk::WalkReport,
    changed: usize,
) -> Result<(Index, Freshness)> {
    lode_diagnostics::note_root(&loc.id());
    let (index, freshness) = update(loc, opts, walked, changed, false)?;
    note(&freshness);
    Ok((index, freshness))
}

/// Builds from `walked`; another writer's lock makes the answer stale
/// (unless `wait`, for a rebuild no reader can do without).
fn update(
    loc: &IndexLocation,
    opts: &RefreshOptions,
    walked: lode_walk::WalkReport,
    changed: usize,
    wait: bool,
) -> Result<(Index, Freshness)> {
    let freshness = build_freshness(loc, &build_options(opts, wait), walked, changed)?;
    Ok((Index::open(loc)?, freshness))
}

/// Updates the index from a walk the caller made (`walked`, with `changed`
/// files that differ from the index), under the index's own config, for a
/// caller that keeps its index open through the update (see
/// `Index::after_build`): nothing is opened here, and the file list it
/// holds, `kept` with the generation it is of, spares the build reading
/// every file row.
pub fn update_walked(
    loc: &IndexLocation,
    opts: &RefreshOptions,
    walked: lode_walk::WalkReport,
    changed: usize,
    kept: Option<(&crate::store::Manifest, u64)>,
) -> Result<Freshness> {
    lode_diagnostics::note_root(&loc.id());
    let build = BuildOptions {
        manifest: kept,
        ..build_options(opts, false)
    };
    let freshness = build_freshness(loc, &build, walked, changed)?;
    note(&freshness);
    Ok(freshness)
}

fn build_freshness(
    loc: &IndexLocation,
    build: &BuildOptions,
    walked: lode_walk::WalkReport,
    changed: usize,
) -> Result<Freshness> {
    match build_with_walk(loc, build, Some(walked)) {
        Ok(report) => Ok(Freshness::Refreshed(report)),
        Err(Error::Locked { pid, .. }) => Ok(Freshness::Stale {
            changed,
            reason: format!(
                "lode process {pid} is indexing; answering from the last complete index"
            ),
        }),
        Err(e) => Err(e),
    }
}

/// The build a refresh runs.
fn build_options<'a>(opts: &RefreshOptions<'a>, wait_for_lock: bool) -> BuildOptions<'a> {
    BuildOptions {
        config: opts.config,
        wait_for_lock,
        progress: opts.progress,
        note: opts.note,
        rescan: false,
        embed: opts.embed,
        embed_progress: None,
        manifest: None,
    }
}

/// Goes on with the embedding phase when chunks of an up-to-date index have
/// no vectors yet (an earlier query's phase ran out of time, or was stopped),
/// as far as `opts.embed` allows.
fn resume_embedding(loc: &IndexLocation, index: &Index, opts: &RefreshOptions) -> Result<()> {
    let deadline = match opts.embed {
        EmbedPhase::Later => return Ok(()),
        EmbedPhase::Complete => None,
        EmbedPhase::Within(budget) => Some(std::time::Instant::now() + budget),
    };
    if index.vectors_pending()? == 0 {
        return Ok(());
    }
    let embed = EmbedOptions {
        // A query does not wait for another phase: it answers from what is there.
        wait: deadline.is_none(),
        deadline,
        note: opts.note,
        ..EmbedOptions::new(opts.config)
    };
    match crate::embed::embed(loc, &embed, None) {
        Err(e) if deadline.is_some() => {
            // A query answers from what is committed even if the phase fails.
            (opts.note)(&format!("embedding stopped: {e}"));
            Ok(())
        }
        other => other.map(drop),
    }
}

/// The state of an index, for `lode status`.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase", tag = "state")]
pub enum IndexState {
    /// No index yet (and no build under way).
    Absent,
    /// A process holds the writer lock: building or updating the index.
    Building {
        /// The process id the lock file holds, or `unknown`.
        pid: String,
    },
    /// Up to date: built under this config, and no file differs by size or mtime.
    Ready,
    /// The next query updates or rebuilds the index.
    Stale {
        /// Files changed or gone since the last build; every indexed file
        /// when the config changed (the next build rebuilds them all).
        changed_files: usize,
    },
    /// Data in it cannot be read: the next build makes it again.
    Damaged {
        /// What could not be read, as the open reported it.
        reason: String,
    },
}

/// Looks at an index without changing it.
pub fn state(loc: &IndexLocation, config: &Config) -> Result<(IndexState, Option<Index>)> {
    let building = WriterLock::is_held(loc);
    let index = match Index::open(loc) {
        Ok(i) => i,
        Err(Error::NoIndex(_)) => {
            return Ok((
                building.map_or(IndexState::Absent, |pid| IndexState::Building { pid }),
                None,
            ));
        }
        Err(Error::IndexCorrupt { reason, .. }) => {
            return Ok((IndexState::Damaged { reason }, None));
        }
        Err(e) => return Err(e),
    };
    if let Some(pid) = building {
        return Ok((IndexState::Building { pid }, Some(index)));
    }
    if index.store().meta(Meta::Fingerprint)?.as_deref() != Some(fingerprint(config).as_str()) {
        let n = index.stats()?.files as usize;
        return Ok((IndexState::Stale { changed_files: n }, Some(index)));
    }
    let walked = walk(&loc.root, &config.files)?;
    let diff = stat_diff(&walked, &index.store().manifest()?);
    let state = if diff.is_empty() {
        IndexState::Ready
    } else {
        IndexState::Stale {
            changed_files: diff.changed.len() + diff.deleted.len(),
        }
    };
    Ok((state, Some(index)))
}
