//! `lode index --remote`: the local build, with the shared cache before and
//! after it.
//!
//! With no local index: the shard of the tree at `HEAD` is fetched when the
//! catalog has it, whatever the working files are (the refresh after it
//! reads every file, so a modified one is parsed as in any update);
//! otherwise, in a clean checkout, one runner claims the build and the others
//! wait for its shard (a bounded time, then build themselves); a builder
//! starts from the nearest ancestor commit's shard when there is one. After
//! the build, a clean tree's index is published when the catalog lacks it.
//! Every remote failure is one note and a local build: the cache can make an
//! index sooner, never wrong and never absent.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use lode_core::{Config, RemoteConfig};
use lode_index::{BuildReport, Index, IndexLocation};
use serde::Serialize;

use crate::git::{self, Checkout};
use crate::key::CacheKey;
use crate::store::{Manifest, Remote, RemoteError};

/// How often a waiting runner looks for the shard it waits on.
const POLL: Duration = Duration::from_millis(250);

/// How the index came to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// This tree's index was in the cache: fetched, installed, checked against the files.
    Hit,
    /// Another runner was building this tree; its index was fetched once published.
    Waited,
    /// An ancestor commit's index was fetched and brought up to date here.
    Ancestor,
    /// Built here from nothing.
    Built,
    /// The index already here was brought up to date.
    Updated,
    /// The cache could not be used (see the notes); built or updated here.
    Local,
}

/// A shard moved to or from the cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Transfer {
    /// The shard's hash.
    pub shard: String,
    /// The shard's size.
    pub bytes: u64,
    /// Milliseconds, the install included.
    pub ms: u64,
    /// Commits between the tree and the one the shard was built at (fetches only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits_back: Option<usize>,
}

/// What `lode index --remote` did with the cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RemoteReport {
    /// How the index was had.
    pub outcome: Outcome,
    /// The cache key of the tree at `HEAD` (`published` says whether this run
    /// stored an index under it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The git tree of the root at `HEAD`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<String>,
    /// The shard fetched, if one was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched: Option<Transfer>,
    /// The shard this run stored, if it stored one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub published: Option<Transfer>,
    /// Milliseconds spent waiting for another runner's build.
    pub waited_ms: u64,
}

impl RemoteReport {
    fn local() -> RemoteReport {
        RemoteReport {
            outcome: Outcome::Local,
            key: None,
            tree: None,
            fetched: None,
            published: None,
            waited_ms: 0,
        }
    }
}

/// Where the cache is and what it builds for.
pub struct SharedCache<'a> {
    /// The NATS servers (no credentials in it).
    pub url: &'a str,
    /// The `[remote]` settings: credentials, buckets, time limits.
    pub settings: &'a RemoteConfig,
    /// The repository and its local index.
    pub location: &'a IndexLocation,
    /// The config the index is built with (part of the cache key).
    pub config: &'a Config,
    /// Called with each one-line note (the cache away, a wait, a fallback).
    pub note: &'a dyn Fn(&str),
}

/// Runs `build` (the local build or update) with the shared cache around it.
/// Errors are the build's own; the cache's are notes.
pub fn index(
    cache: &SharedCache,
    build: &mut dyn FnMut() -> lode_core::Result<BuildReport>,
) -> lode_core::Result<(BuildReport, RemoteReport)> {
    let mut report = RemoteReport::local();
    let Some(checkout) = read_checkout(cache, &mut report) else {
        return Ok((build()?, report));
    };
    let remote = match Remote::connect(cache.url, cache.settings) {
        Ok(r) => r,
        Err(e) => {
            (cache.note)(&format!(
                "remote cache at {} not used: {e}; building here",
                cache.url
            ));
            return Ok((build()?, report));
        }
    };
    index_at(&remote, &checkout, cache, build, report)
}

/// As [`index`], over a connection already open (a builder's).
pub(crate) fn index_with(
    remote: &Remote,
    cache: &SharedCache,
    build: &mut dyn FnMut() -> lode_core::Result<BuildReport>,
) -> lode_core::Result<(BuildReport, RemoteReport)> {
    let mut report = RemoteReport::local();
    let Some(checkout) = read_checkout(cache, &mut report) else {
        return Ok((build()?, report));
    };
    index_at(remote, &checkout, cache, build, report)
}

/// The root's checkout, its tree noted in `report`; `None` (and a note)
/// outside git.
fn read_checkout(cache: &SharedCache, report: &mut RemoteReport) -> Option<Checkout> {
    match git::checkout(&cache.location.root) {
        Ok(checkout) => {
            report.tree = Some(checkout.head.0.clone());
            Some(checkout)
        }
        Err(e) => {
            (cache.note)(&format!("remote cache not used: {e}; building here"));
            None
        }
    }
}

fn index_at(
    remote: &Remote,
    checkout: &Checkout,
    cache: &SharedCache,
    build: &mut dyn FnMut() -> lode_core::Result<BuildReport>,
    mut report: RemoteReport,
) -> lode_core::Result<(BuildReport, RemoteReport)> {
    let fingerprint = lode_index::fingerprint(cache.config);
    let head = CacheKey::new(&checkout.head, &fingerprint);
    let run = Run {
        cache,
        remote,
        checkout,
        fingerprint: &fingerprint,
    };
    report.key = Some(head.as_str().to_string());
    let had_local = cache.location.current_db().is_some() && cache.location.damaged().is_none();
    if !had_local && let Some(t) = run.try_install(&head, 0) {
        report.outcome = Outcome::Hit;
        report.fetched = Some(t);
        return Ok((build()?, report));
    }
    let publishing = cache.settings.publish();
    let mut claimed = false;
    if !had_local {
        // git is asked only where a claim can follow: `git status` re-hashes
        // the files git's own index cannot vouch for, each time.
        let claimable = publishing && run.is_clean();
        claimed = run.fetch_before_build(claimable.then_some(&head), &mut report);
    }
    let built = build()?;
    if report.outcome == Outcome::Local && report.fetched.is_none() {
        report.outcome = if had_local {
            Outcome::Updated
        } else {
            Outcome::Built
        };
    }
    if publishing {
        report.published = run.publish_after_build(&head, claimed, &built);
        if claimed {
            remote.release(&head);
        }
    }
    Ok((built, report))
}

struct Run<'a> {
    cache: &'a SharedCache<'a>,
    remote: &'a Remote,
    checkout: &'a Checkout,
    fingerprint: &'a str,
}

impl Run<'_> {
    /// Whether the files are the tree at `HEAD`, as git says (a note and
    /// `false` when it cannot say).
    fn is_clean(&self) -> bool {
        git::is_clean(&self.cache.location.root).unwrap_or_else(|e| {
            (self.cache.note)(&format!("remote cache: {e}"));
            false
        })
    }

    /// Installs the best shard the cache has for a root with no index whose
    /// own tree's shard is not in the catalog: the one another runner is
    /// building (`key`, given for a clean checkout that publishes), or an
    /// ancestor's. Returns whether this process claimed the build of `key`.
    fn fetch_before_build(&self, key: Option<&CacheKey>, report: &mut RemoteReport) -> bool {
        let mut claimed = false;
        if let Some(key) = key {
            match self.remote.claim(key) {
                Ok(won) => claimed = won,
                Err(e) => self.note(&e),
            }
            if !claimed {
                let start = Instant::now();
                let got = self.wait_for(key);
                report.waited_ms = start.elapsed().as_millis() as u64;
                if let Some(t) = got {
                    report.outcome = Outcome::Waited;
                    report.fetched = Some(t);
                    return false;
                }
            }
        }
        // The head's own tree was looked for first.
        for (back, tree) in self.checkout.history.iter().enumerate().skip(1) {
            let older = CacheKey::new(tree, self.fingerprint);
            if let Some(t) = self.try_install(&older, back) {
                report.outcome = Outcome::Ancestor;
                report.fetched = Some(t);
                break;
            }
        }
        claimed
    }

    /// Waits for the shard of `key` while its build is claimed, at most
    /// `wait_secs`.
    fn wait_for(&self, key: &CacheKey) -> Option<Transfer> {
        let deadline = Instant::now() + Duration::from_secs(self.cache.settings.wait_secs());
        while Instant::now() < deadline {
            std::thread::sleep(POLL);
            if let Some(t) = self.try_install(key, 0) {
                return Some(t);
            }
            match self.remote.claimed(key) {
                Ok(true) => {}
                // The claim is gone and no shard came: its builder failed.
                Ok(false) => {
                    return self.try_install(key, 0);
                }
                Err(e) => {
                    self.note(&e);
                    return None;
                }
            }
        }
        (self.cache.note)(&format!(
            "another runner's index of this tree did not arrive in {} s; building here",
            self.cache.settings.wait_secs()
        ));
        None
    }

    /// Fetches and installs the shard under `key`, if the catalog has one
    /// that verifies.
    fn try_install(&self, key: &CacheKey, commits_back: usize) -> Option<Transfer> {
        let manifest = match self.remote.lookup(key) {
            Ok(Some(m)) => m,
            Ok(None) => return None,
            Err(e) => {
                self.note(&e);
                return None;
            }
        };
        let start = Instant::now();
        match self.install(&manifest) {
            Ok(()) => Some(Transfer {
                shard: manifest.shard,
                bytes: manifest.bytes,
                ms: start.elapsed().as_millis() as u64,
                commits_back: Some(commits_back),
            }),
            Err(e) => {
                self.note(&e);
                if e.damaged && self.cache.settings.publish() {
                    self.remote.forget(key);
                }
                None
            }
        }
    }

    fn install(&self, manifest: &Manifest) -> Result<(), RemoteError> {
        if manifest.fingerprint != self.fingerprint {
            return Err(RemoteError::new(format!(
                "shard {} was built with another lode, config or model",
                short(&manifest.shard)
            )));
        }
        let dir = self.scratch();
        let fetched = self.remote.fetch(manifest, &dir);
        let installed = fetched.and_then(|path| {
            lode_index::shard::install_moving(self.cache.location, &path, self.cache.config)
                .map_err(|e| RemoteError::damaged(e.to_string()))
        });
        let _ = std::fs::remove_dir_all(&dir);
        installed.map(|_| ())
    }

    /// Publishes the index just built when `HEAD` is where it was, the files
    /// are its tree, the index is complete and the catalog lacks it.
    fn publish_after_build(
        &self,
        key: &CacheKey,
        claimed: bool,
        built: &BuildReport,
    ) -> Option<Transfer> {
        if built.embedding.as_ref().is_some_and(|e| e.pending > 0) {
            (self.cache.note)("not published: the index is not completely embedded");
            return None;
        }
        // The catalog first: when it holds this tree, as it does for most
        // repeated runs, git is not asked (`git status` re-hashes every racy file).
        match self.remote.lookup(key) {
            Ok(None) => {}
            Ok(Some(_)) => return None,
            Err(e) => {
                self.note(&e);
                return None;
            }
        }
        match git::checkout(&self.cache.location.root) {
            Ok(now) if now.head == self.checkout.head => {}
            _ => {
                (self.cache.note)("not published: the files changed while indexing");
                return None;
            }
        }
        if !self.is_clean() {
            (self.cache.note)("not published: the files differ from HEAD");
            return None;
        }
        if !claimed {
            match self.remote.claim(key) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    self.note(&e);
                    return None;
                }
            }
        }
        let start = Instant::now();
        let published = self.export_and_publish(key);
        if !claimed {
            self.remote.release(key);
        }
        match published {
            Ok(Some(info)) => Some(Transfer {
                shard: info.hash,
                bytes: info.bytes,
                ms: start.elapsed().as_millis() as u64,
                commits_back: None,
            }),
            Ok(None) => None,
            Err(e) => {
                self.note(&e);
                None
            }
        }
    }

    fn export_and_publish(
        &self,
        key: &CacheKey,
    ) -> Result<Option<lode_index::shard::ShardInfo>, RemoteError> {
        let dir = self.scratch();
        let result = Index::open(self.cache.location)
            .and_then(|index| lode_index::shard::export(&index, &dir))
            .map_err(|e| RemoteError::new(e.to_string()))
            .and_then(|info| {
                let stored = self.remote.publish(key, &self.checkout.head.0, &info)?;
                Ok(stored.then_some(info))
            });
        let _ = std::fs::remove_dir_all(&dir);
        result
    }

    /// A directory of this process's own in the index's cache directory.
    fn scratch(&self) -> PathBuf {
        self.cache
            .location
            .dir
            .join(format!("remote-{}.tmp", std::process::id()))
    }

    fn note(&self, e: &RemoteError) {
        (self.cache.note)(&format!("remote cache: {e}"));
    }
}

fn short(hash: &str) -> &str {
    &hash[..hash.len().min(16)]
}
