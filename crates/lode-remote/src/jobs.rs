//! Build jobs and the repository catalog.
//!
//! Jobs are messages on a JetStream work-queue stream, deduplicated by
//! `repo@commit` (the message id) and taken by builders through one durable
//! pull consumer: a job is acknowledged only after its shard is stored and
//! the catalog updated, so a builder killed mid-job loses nothing — the job
//! is delivered again once its acknowledgement is overdue. The repository
//! catalog (KV) holds each repository's newest built commit, updated by
//! compare-and-swap on the entry's revision.

use std::time::Duration;

use async_nats::jetstream::{self, AckKind, consumer, kv, message::PublishMessage, stream};
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::store::{Remote, RemoteError, Result, bounded, fail, open_kv, with_replicas};

pub(crate) const STREAM: &str = "LODE_JOBS";
const SUBJECT: &str = "lode.jobs";
const CONSUMER: &str = "lode-builders";
pub(crate) const REPOS: &str = "lode-repos";
/// A job not acknowledged (nor reported in progress) for this long is
/// delivered again.
const ACK_WAIT: Duration = Duration::from_secs(15);
/// How often a builder says it is still at a job.
const HEARTBEAT: Duration = Duration::from_secs(4);
/// Deliveries of one job at most.
pub(crate) const MAX_DELIVER: i64 = 10;
/// Enqueueing the same `repo@commit` within this window is one job.
const DEDUP_WINDOW: Duration = Duration::from_secs(3600);

/// One repository at one commit, to be built.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Job {
    /// A git URL or a path the builders can clone.
    pub repo: String,
    /// A commit id or a ref (resolved by the builder).
    pub commit: String,
}

impl Job {
    /// The job's identity: what deduplicates it.
    pub fn id(&self) -> String {
        format!("{}@{}", self.repo, self.commit)
    }

    /// A job for `repo` at `rev`, a ref resolved to its commit id where the
    /// repository answers (`git ls-remote`): a moving ref (`HEAD`, `main`)
    /// must not deduplicate tomorrow's commit against today's.
    pub fn resolved(repo: String, rev: String) -> Job {
        let commit = if is_commit_id(&rev) {
            rev
        } else {
            ls_remote(&repo, &rev).unwrap_or(rev)
        };
        Job { repo, commit }
    }

    /// Whether the commit is an id (only then is the job deduplicated).
    pub fn pinned(&self) -> bool {
        is_commit_id(&self.commit)
    }
}

/// A repository as the queue and the catalog name it: a local directory by
/// its absolute path (builders and shard nodes run elsewhere), anything
/// else (a URL) as given.
pub fn repo_name(given: &str) -> String {
    match std::fs::canonicalize(given) {
        Ok(path) if path.is_dir() => path.to_string_lossy().into_owned(),
        _ => given.to_string(),
    }
}

fn is_commit_id(rev: &str) -> bool {
    rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit())
}

fn ls_remote(repo: &str, rev: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["ls-remote", "--", repo, rev])
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let id = text.split_whitespace().next()?;
    is_commit_id(id).then(|| id.to_string())
}

/// What enqueueing did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Enqueued {
    /// The stream's sequence number of the job.
    pub sequence: u64,
    /// The same job was already queued (within the deduplication window).
    pub duplicate: bool,
}

/// A job handed to this builder; acknowledge it, or it comes back.
pub struct Delivery {
    message: jetstream::Message,
    /// The job, or why its message could not be read.
    pub job: std::result::Result<Job, String>,
    /// How many times it has been delivered, this one included.
    pub delivered: i64,
    heartbeat: tokio::task::JoinHandle<()>,
}

/// A repository's entry in the catalog: its newest built commit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepoEntry {
    /// The repository, as its jobs name it.
    pub repo: String,
    /// The commit id built.
    pub commit: String,
    /// The repository's tree at that commit.
    pub tree: String,
    /// The cache key of its index.
    pub key: String,
    /// The shard's hash and size.
    pub shard: String,
    /// The shard's size.
    pub bytes: u64,
}

/// What recording a built commit did to the catalog.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recorded {
    /// The repository's first entry.
    New,
    /// A newer commit replaced the entry.
    Replaced,
    /// The entry was this commit already.
    Same,
    /// The entry holds a newer commit: left as it is.
    Older,
}

/// The catalog key of a repository (KV keys are restricted to a few characters).
pub fn repo_key(repo: &str) -> String {
    blake3::hash(repo.as_bytes()).to_hex()[..32].to_string()
}

impl Remote {
    pub(crate) async fn jobs_stream(&self) -> Result<stream::Stream> {
        if let Ok(Ok(s)) = tokio::time::timeout(ACK_WAIT, self.js.get_stream(STREAM)).await {
            return Ok(s);
        }
        with_replicas(&format!("stream {STREAM}"), |replicas| {
            self.js.get_or_create_stream(stream::Config {
                name: STREAM.to_string(),
                subjects: vec![SUBJECT.to_string()],
                retention: stream::RetentionPolicy::WorkQueue,
                duplicate_window: DEDUP_WINDOW,
                num_replicas: replicas,
                ..Default::default()
            })
        })
        .await
    }

    /// Queues `job`; the same pinned job queued again within an hour is one job.
    pub fn enqueue(&self, job: &Job) -> Result<Enqueued> {
        self.rt.block_on(async {
            self.jobs_stream().await?;
            let payload: bytes::Bytes = serde_json::to_vec(job).map_err(fail("job"))?.into();
            // A stream just created has no leader for a moment: try again briefly.
            let mut tries = 0;
            let ack = loop {
                let mut publish = PublishMessage::build().payload(payload.clone());
                if job.pinned() {
                    publish = publish.message_id(job.id());
                }
                let sent = match bounded(self.js.send_publish(SUBJECT, publish)).await? {
                    Ok(ack) => bounded(ack.into_future()).await?.map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                };
                match sent {
                    Ok(ack) => break ack,
                    Err(e) if tries >= 40 => return Err(RemoteError::new(format!("enqueue: {e}"))),
                    Err(_) => {
                        tries += 1;
                        tokio::time::sleep(Duration::from_millis(250)).await;
                    }
                }
            };
            Ok(Enqueued {
                sequence: ack.sequence,
                duplicate: ack.duplicate,
            })
        })
    }

    /// The next job, waiting at most `wait`; `None` when none came.
    pub fn next_job(&self, wait: Duration) -> Result<Option<Delivery>> {
        self.rt.block_on(async {
            let stream = self.jobs_stream().await?;
            let config = consumer::pull::Config {
                durable_name: Some(CONSUMER.to_string()),
                ack_policy: consumer::AckPolicy::Explicit,
                ack_wait: ACK_WAIT,
                max_deliver: MAX_DELIVER,
                ..Default::default()
            };
            let consumer: consumer::PullConsumer =
                bounded(stream.get_or_create_consumer(CONSUMER, config))
                    .await?
                    .map_err(fail("consumer"))?;
            let mut batch = consumer
                .fetch()
                .max_messages(1)
                .expires(wait)
                .messages()
                .await
                .map_err(fail("fetch"))?;
            let Some(message) = tokio::time::timeout(wait + ACK_WAIT, batch.next())
                .await
                .ok()
                .flatten()
            else {
                return Ok(None);
            };
            let message = message.map_err(fail("fetch"))?;
            let delivered = message.info().map(|i| i.delivered).unwrap_or(1);
            let job = serde_json::from_slice::<Job>(&message.payload)
                .map_err(|e| format!("an unreadable job: {e}"));
            let beating = message.clone();
            let heartbeat = tokio::spawn(async move {
                loop {
                    tokio::time::sleep(HEARTBEAT).await;
                    let _ = beating.ack_with(AckKind::Progress).await;
                }
            });
            Ok(Some(Delivery {
                message,
                job,
                delivered,
                heartbeat,
            }))
        })
    }

    /// Settles a delivery: `Ack` when done, `Term` when it can never be
    /// done, `Nak` to have it delivered again.
    pub fn settle(&self, delivery: Delivery, how: AckKind) -> Result<()> {
        delivery.heartbeat.abort();
        self.rt.block_on(async {
            bounded(delivery.message.double_ack_with(how))
                .await?
                .map_err(fail("acknowledge"))
        })
    }

    /// The catalog entry of `repo`, if any.
    pub fn repo_entry(&self, repo: &str) -> Result<Option<RepoEntry>> {
        self.rt.block_on(async {
            let repos = open_kv(&self.js, REPOS, Duration::ZERO).await?;
            let got = bounded(repos.get(repo_key(repo)))
                .await?
                .map_err(fail("catalog read"))?;
            got.map(|b| serde_json::from_slice(&b).map_err(fail("catalog entry")))
                .transpose()
        })
    }

    /// Every repository in the catalog, in key order.
    pub fn repo_entries(&self) -> Result<Vec<RepoEntry>> {
        self.rt.block_on(async {
            let repos = open_kv(&self.js, REPOS, Duration::ZERO).await?;
            let mut keys: Vec<String> = match bounded(repos.keys()).await? {
                Ok(keys) => keys.filter_map(|k| async { k.ok() }).collect().await,
                Err(e) => return Err(fail("catalog keys")(e)),
            };
            keys.sort();
            let mut out = Vec::new();
            for key in keys {
                if let Some(b) = bounded(repos.get(&key))
                    .await?
                    .map_err(fail("catalog read"))?
                {
                    out.push(serde_json::from_slice(&b).map_err(fail("catalog entry"))?);
                }
            }
            Ok(out)
        })
    }

    /// Records `entry` as its repository's newest commit unless the catalog
    /// holds a newer one: `is_older(existing_commit)` says whether
    /// `entry.commit` is an ancestor of it. Compare-and-swap on the entry's
    /// revision, so two builders of one repository cannot interleave.
    pub fn record_repo(
        &self,
        entry: &RepoEntry,
        is_older: &dyn Fn(&str) -> bool,
    ) -> Result<Recorded> {
        let key = repo_key(&entry.repo);
        let value: bytes::Bytes = serde_json::to_vec(entry).map_err(fail("entry"))?.into();
        self.rt.block_on(async {
            let repos = open_kv(&self.js, REPOS, Duration::ZERO).await?;
            for _ in 0..8 {
                let current = bounded(repos.entry(&key))
                    .await?
                    .map_err(fail("catalog read"))?
                    .filter(|e| e.operation == kv::Operation::Put);
                let written = match &current {
                    None => bounded(repos.create(&key, value.clone()))
                        .await?
                        .map(|_| Recorded::New)
                        .map_err(|e| e.to_string()),
                    Some(e) => {
                        let existing: RepoEntry =
                            serde_json::from_slice(&e.value).map_err(fail("catalog entry"))?;
                        if existing.commit == entry.commit {
                            return Ok(Recorded::Same);
                        }
                        if is_older(&existing.commit) {
                            return Ok(Recorded::Older);
                        }
                        bounded(repos.update(&key, value.clone(), e.revision))
                            .await?
                            .map(|_| Recorded::Replaced)
                            .map_err(|e| e.to_string())
                    }
                };
                // A lost race (another builder wrote first): read again.
                if let Ok(recorded) = written {
                    return Ok(recorded);
                }
            }
            Err(RemoteError::new(format!(
                "the catalog entry of {} kept changing",
                entry.repo
            )))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moving_ref_is_pinned_to_its_commit_where_the_repository_answers() {
        let tmp = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let ok = std::process::Command::new("git")
                .arg("-C")
                .arg(tmp.path())
                .args(["-c", "user.email=t@t", "-c", "user.name=t"])
                .args(args)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{args:?}");
        };
        git(&["init", "-q"]);
        std::fs::write(tmp.path().join("a.py"), "x = 1\n").unwrap();
        git(&["add", "-A"]);
        git(&["commit", "-qm", "one"]);
        let repo = tmp.path().to_string_lossy().into_owned();
        let first = Job::resolved(repo.clone(), "HEAD".into());
        assert!(first.pinned(), "{first:?}");
        std::fs::write(tmp.path().join("a.py"), "x = 2\n").unwrap();
        git(&["commit", "-qam", "two"]);
        let second = Job::resolved(repo.clone(), "HEAD".into());
        assert_ne!(first.id(), second.id());
        // No such repository: the ref is kept, and the job is not deduplicated.
        let lost = Job::resolved(
            tmp.path().join("none").to_string_lossy().into(),
            "main".into(),
        );
        assert_eq!(lost.commit, "main");
        assert!(!lost.pinned());
    }

    #[test]
    fn a_job_is_identified_by_its_repository_and_commit() {
        let job = Job {
            repo: "https://example.invalid/a.git".into(),
            commit: "main".into(),
        };
        assert_eq!(job.id(), "https://example.invalid/a.git@main");
        let key = repo_key(&job.repo);
        assert_eq!(key.len(), 32);
        assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_ne!(key, repo_key("https://example.invalid/b.git"));
    }
}
