//! `lode serve builder`: take jobs, build each repository at its commit in
//! a clone of the builder's own, publish the shard, record the commit.
//!
//! Stateless but for its work directory (clones and indexes kept between
//! jobs, so the next commit of a repository is an update): any number of
//! builders can share one queue.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use async_nats::jetstream::AckKind;
use lode_core::{Config, RemoteConfig};
use lode_index::{BuildOptions, IndexLocation};
use serde::Serialize;

use crate::cache::{Outcome, SharedCache};
use crate::jobs::{Job, Recorded, RepoEntry, repo_key};
use crate::key::CacheKey;
use crate::store::{Remote, RemoteError};

/// How long one wait for a job lasts before the builder checks its limits.
const POLL: Duration = Duration::from_secs(2);

/// How long a failed job waits before it is delivered again: doubling from
/// 2 s up to 30 s, so that a job's `MAX_DELIVER` deliveries outlast a few
/// minutes of a NATS node's outage, not twenty seconds of it (a job past its
/// last delivery is never built).
fn retry_delay(delivered: i64) -> Duration {
    let doublings = delivered.clamp(1, 5) - 1;
    Duration::from_secs((2u64 << doublings).min(30))
}

/// How a builder runs.
pub struct BuilderOptions<'a> {
    /// The NATS servers (no credentials in it).
    pub url: &'a str,
    /// The `[remote]` settings: credentials, buckets, time limits.
    pub settings: &'a RemoteConfig,
    /// The builder's user config (each repository's `.lode.toml` narrows it).
    pub config: &'a Config,
    /// Clones and indexes, kept between jobs.
    pub work_dir: &'a Path,
    /// Stop after this many jobs.
    pub max_jobs: Option<usize>,
    /// Stop after this long without a job.
    pub idle_exit: Option<Duration>,
    /// Called with every job's record, as it ends or starts.
    pub log: &'a dyn Fn(&JobLog),
    /// Called with what went wrong between jobs (the server away, say); the
    /// builder waits and goes on.
    pub note: &'a dyn Fn(&str),
}

/// One line of the builder's log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobLog {
    /// `start`, `done`, `failed` (to be delivered again) or `dropped` (never
    /// buildable: an unreadable job, a commit that does not exist).
    pub event: &'static str,
    /// The repository, as the job names it (a URL or a path).
    pub repo: String,
    /// The commit asked for, as the job names it.
    pub commit: String,
    /// Deliveries of this job so far, this one included.
    pub delivered: i64,
    /// The commit id the job's commit resolved to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved: Option<String>,
    /// How the index was had (see [`Outcome`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
    /// What became of the repository's catalog entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recorded: Option<Recorded>,
    /// Why the job failed or was dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Milliseconds the job took so far.
    pub ms: u64,
}

/// Why a job did not end in the catalog.
pub(crate) enum JobError {
    /// It may work next time (the server, the disk): deliver it again.
    Retry(String),
    /// It never will (no such repository or commit).
    Drop(String),
}

impl JobError {
    pub(crate) fn message(self) -> String {
        match self {
            JobError::Retry(m) | JobError::Drop(m) => m,
        }
    }
}

/// Runs a builder until a limit is reached; returns the jobs it finished.
pub fn serve(opts: &BuilderOptions) -> Result<usize, RemoteError> {
    let remote = Remote::connect_serving(opts.url, opts.settings)?;
    let mut done = 0;
    let mut idle_since = Instant::now();
    while opts.max_jobs.is_none_or(|m| done < m) {
        let next = match remote.next_job(POLL) {
            Ok(next) => next,
            Err(e) => {
                (opts.note)(&format!("waiting for jobs: {e}"));
                std::thread::sleep(POLL);
                None
            }
        };
        let Some(delivery) = next else {
            if opts.idle_exit.is_some_and(|d| idle_since.elapsed() >= d) {
                break;
            }
            continue;
        };
        let start = Instant::now();
        let mut log = JobLog {
            event: "start",
            repo: String::new(),
            commit: String::new(),
            delivered: delivery.delivered,
            resolved: None,
            outcome: None,
            recorded: None,
            error: None,
            ms: 0,
        };
        let result = match &delivery.job {
            Ok(job) => {
                log.repo.clone_from(&job.repo);
                log.commit.clone_from(&job.commit);
                (opts.log)(&log);
                build_job(&remote, job, opts, &mut log)
            }
            Err(why) => Err(JobError::Drop(why.clone())),
        };
        log.ms = start.elapsed().as_millis() as u64;
        let how = match result {
            Ok(()) => {
                log.event = "done";
                done += 1;
                AckKind::Ack
            }
            Err(JobError::Retry(e)) => {
                log.event = "failed";
                log.error = Some(e);
                AckKind::Nak(Some(retry_delay(delivery.delivered)))
            }
            Err(JobError::Drop(e)) => {
                log.event = "dropped";
                log.error = Some(e);
                AckKind::Term
            }
        };
        if let Err(e) = remote.settle(delivery, how) {
            // Unacknowledged, the job comes back: nothing is lost.
            (opts.note)(&format!("could not acknowledge the job: {e}"));
        }
        (opts.log)(&log);
        idle_since = Instant::now();
    }
    Ok(done)
}

fn build_job(
    remote: &Remote,
    job: &Job,
    opts: &BuilderOptions,
    log: &mut JobLog,
) -> Result<(), JobError> {
    let dir = opts.work_dir.join("repos").join(repo_key(&job.repo));
    let commit = check_out(&dir, job)?;
    log.resolved = Some(commit.clone());
    let retry = |e: lode_core::Error| JobError::Retry(e.to_string());
    let location =
        IndexLocation::resolve(&dir, Some(&opts.work_dir.join("cache"))).map_err(retry)?;
    let (config, _warnings) = opts.config.for_root(&dir).map_err(retry)?;
    // A builder always publishes: that is its job.
    let mut settings = opts.settings.clone();
    settings.publish = Some(true);
    let notes = std::cell::RefCell::new(Vec::new());
    let note = |m: &str| notes.borrow_mut().push(m.to_string());
    let cache = SharedCache {
        url: opts.url,
        settings: &settings,
        location: &location,
        config: &config,
        note: &note,
    };
    let (_, report) = crate::cache::index_with(remote, &cache, &mut || {
        lode_index::build(&location, &BuildOptions::quiet(&config))
    })
    .map_err(retry)?;
    log.outcome = Some(report.outcome);
    let (Some(key), Some(tree)) = (report.key, report.tree) else {
        return Err(JobError::Retry(format!(
            "the clone is not a git checkout: {}",
            notes.borrow().join("; ")
        )));
    };
    let key = CacheKey::from_hex(&key);
    let manifest = remote
        .lookup(&key)
        .map_err(|e| JobError::Retry(e.to_string()))?
        .ok_or_else(|| JobError::Retry(format!("not published: {}", notes.borrow().join("; "))))?;
    let entry = RepoEntry {
        repo: job.repo.clone(),
        commit: commit.clone(),
        tree,
        key: key.as_str().to_string(),
        shard: manifest.shard,
        bytes: manifest.bytes,
    };
    let is_older = |existing: &str| is_ancestor(&dir, &commit, existing);
    let recorded = remote
        .record_repo(&entry, &is_older)
        .map_err(|e| JobError::Retry(e.to_string()))?;
    log.recorded = Some(recorded);
    Ok(())
}

/// Brings the builder's clone of the job's repository to its commit; returns
/// the commit id.
pub(crate) fn check_out(dir: &Path, job: &Job) -> Result<String, JobError> {
    if !dir.join(".git").is_dir() {
        let _ = std::fs::remove_dir_all(dir);
        let parent = dir.parent().unwrap_or(dir);
        std::fs::create_dir_all(parent).map_err(|e| JobError::Retry(e.to_string()))?;
        let target = dir.to_string_lossy();
        let clone = [
            "clone",
            "--quiet",
            "--no-checkout",
            "--",
            &job.repo,
            &target,
        ];
        git(parent, &clone).map_err(JobError::Retry)?;
    } else {
        git(dir, &["fetch", "--quiet", "--tags", "origin"]).map_err(JobError::Retry)?;
    }
    let spec = format!("{}^{{commit}}", job.commit);
    let resolved = git(dir, &["rev-parse", "--verify", "--quiet", &spec])
        .or_else(|_| {
            git(
                dir,
                &[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("origin/{spec}"),
                ],
            )
        })
        .map_err(|_| JobError::Drop(format!("no commit {} in {}", job.commit, job.repo)))?;
    let resolved = resolved.trim().to_string();
    git(
        dir,
        &["checkout", "--quiet", "--force", "--detach", &resolved],
    )
    .map_err(JobError::Retry)?;
    git(dir, &["clean", "-fdxq"]).map_err(JobError::Retry)?;
    Ok(resolved)
}

/// Whether `commit` is an ancestor of `other` (so older than it).
fn is_ancestor(dir: &Path, commit: &str, other: &str) -> bool {
    git(dir, &["merge-base", "--is-ancestor", commit, other]).is_ok()
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "advice.detachedHead=false"])
        .args(args)
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("git could not be run: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let why = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "git {}: {}",
            args.first().unwrap_or(&""),
            why.lines().next().unwrap_or("").trim()
        ))
    }
}

/// Where a builder keeps its clones, by default.
pub fn default_work_dir(cache_base: &Path) -> PathBuf {
    cache_base.join("builder")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jobs::MAX_DELIVER;

    #[test]
    fn a_failed_job_waits_longer_each_time_up_to_half_a_minute() {
        let delays: Vec<u64> = (1..MAX_DELIVER).map(|d| retry_delay(d).as_secs()).collect();
        assert_eq!(delays[..6], [2, 4, 8, 16, 30, 30]);
        // The waits between a job's first and last delivery: three minutes at least.
        assert!(delays.iter().sum::<u64>() >= 180, "{delays:?}");
        assert_eq!(retry_delay(0).as_secs(), 2);
        assert_eq!(retry_delay(-1).as_secs(), 2);
    }
}
