//! A shard node: the partitions it holds, the repositories it loads, the
//! answers it gives (see the parent module for the scheme).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lode_core::Config;
use lode_index::{Index, IndexLocation, RefreshOptions};

use super::{
    Command, HEARTBEAT, NODE_TTL, NODES, PartitionAnswer, Query, RESYNC, RepoAnswer, hedge_subject,
    held_by, partition, subject, subject_partition,
};
use crate::access::Access;
use crate::jobs::{Job, RepoEntry, repo_key};
use crate::key::CacheKey;
use crate::store::{Remote, RemoteError, Result, bounded, open_kv};

/// How a shard node runs.
pub struct NodeOptions<'a> {
    /// The NATS servers (no credentials in it).
    pub url: &'a str,
    /// The `[remote]` settings: credentials, buckets, time limits.
    pub settings: &'a lode_core::RemoteConfig,
    /// The config the node builds its indexes with.
    pub config: &'a Config,
    /// This node's name among the members (unique).
    pub name: &'a str,
    /// Checkouts and indexes.
    pub work_dir: &'a Path,
    /// Called with what went wrong (the server away, a shard that fails to
    /// verify), from any of the node's threads.
    pub note: &'a (dyn Fn(&str) + Sync),
}

/// One repository as the node serves it.
struct Loaded {
    commit: String,
    index: Index,
    /// The checkout of `commit` it reads snippets from, and its index's location.
    location: IndexLocation,
}

impl Loaded {
    /// Removes the checkout and the index, once nothing serves them.
    fn discard(self, work_dir: &Path) {
        let Loaded {
            index, location, ..
        } = self;
        drop(index);
        let _ = std::fs::remove_dir_all(&location.root);
        if location.dir.starts_with(work_dir) {
            let _ = std::fs::remove_dir_all(&location.dir);
        }
    }
}

/// Runs a shard node until the process ends.
///
/// Three threads: one reads the members, the catalog and the allow-lists
/// every [`RESYNC`], one loads repositories (checkout, shard, refresh), and
/// this one answers. A JetStream stall (a server lost, a stream leader being
/// elected) or a long load never keeps a query waiting on what the node
/// already holds.
pub fn serve_node(opts: &NodeOptions) -> Result<()> {
    let remote = Remote::connect_serving(opts.url, opts.settings)?;
    start_heartbeat(&remote, opts.name)?;
    let (synced_tx, synced) = mpsc::channel::<Synced>();
    let (to_load_tx, to_load) = mpsc::channel::<RepoEntry>();
    let (loads_done, done) = mpsc::channel::<LoadDone>();
    std::thread::scope(|scope| {
        let remote = &remote;
        scope.spawn(move || sync_loop(remote, opts, &synced_tx));
        scope.spawn(move || {
            for entry in to_load {
                let result = load(remote, &entry, opts);
                if loads_done.send((entry, result)).is_err() {
                    return;
                }
            }
        });
        answer_loop(remote, opts, &synced, &to_load_tx, &done)
    })
}

/// What one read of JetStream found; `None` where that read failed.
struct Synced {
    live: Option<BTreeSet<String>>,
    catalog: Option<Vec<RepoEntry>>,
    access: Option<Access>,
}

/// A load's entry and what came of it.
type LoadDone = (RepoEntry, Result<(Index, IndexLocation)>);

/// How long after a failed load the same commit is tried again.
const LOAD_RETRY: Duration = Duration::from_secs(10);
/// How long the answering thread waits for queries before it looks at what
/// the other two sent.
const TICK: Duration = Duration::from_millis(100);

fn sync_loop(remote: &Remote, opts: &NodeOptions, synced: &mpsc::Sender<Synced>) {
    let noted = |what: &'static str| move |e: RemoteError| (opts.note)(&format!("{what}: {e}"));
    loop {
        let read = Synced {
            live: remote.live_nodes().map_err(noted("members")).ok(),
            catalog: remote.repo_entries().map_err(noted("catalog")).ok(),
            access: remote.access().map_err(noted("allow-lists")).ok(),
        };
        if synced.send(read).is_err() {
            return;
        }
        std::thread::sleep(RESYNC);
    }
}

/// What the answering thread holds.
#[derive(Default)]
struct Node {
    held: BTreeSet<u32>,
    subscriptions: BTreeMap<u32, tokio::task::JoinHandle<()>>,
    loaded: BTreeMap<String, Loaded>,
    /// `None` until first read: until then no partition is ready.
    catalog: Option<Vec<RepoEntry>>,
    access: Option<Access>,
    /// Loads that failed and when, each tried again [`LOAD_RETRY`] later (a
    /// shard fetch fails while a server is lost, and the catalog may name
    /// that commit for long).
    failed: BTreeMap<(String, String), Instant>,
    /// The load under way, as (repository, commit).
    loading: Option<(String, String)>,
}

impl Node {
    fn apply(&mut self, read: Synced, opts: &NodeOptions) {
        if let Some(mut live) = read.live {
            // A node knows it is alive: its own heartbeat missing from a read
            // (a put that failed while a server was lost) must not make it
            // drop, and then load again, every repository it serves.
            live.insert(opts.name.to_string());
            self.held = held_by(opts.name, &live);
        }
        if read.catalog.is_some() {
            self.catalog = read.catalog;
        }
        if read.access.is_some() {
            self.access = read.access;
        }
        let held = &self.held;
        let mine: BTreeSet<&String> = (self.catalog.iter().flatten())
            .filter(|e| held.contains(&partition(&e.repo)))
            .map(|e| &e.repo)
            .collect();
        let dropped: Vec<String> = (self.loaded.keys())
            .filter(|repo| !mine.contains(repo))
            .cloned()
            .collect();
        for repo in dropped {
            if let Some(old) = self.loaded.remove(&repo) {
                old.discard(opts.work_dir);
            }
        }
    }

    fn finish_load(&mut self, (entry, result): LoadDone, opts: &NodeOptions) {
        self.loading = None;
        match result {
            Ok((index, location)) => {
                let new = Loaded {
                    commit: entry.commit.clone(),
                    index,
                    location,
                };
                // The switch: requests after it see the new commit only.
                if let Some(old) = self.loaded.insert(entry.repo.clone(), new) {
                    old.discard(opts.work_dir);
                }
            }
            Err(e) => {
                (opts.note)(&format!("{}: {e}", entry.repo));
                self.failed
                    .insert((entry.repo, entry.commit), Instant::now());
            }
        }
    }

    /// The next repository of a held partition whose catalog commit is not
    /// loaded, unless a load is under way.
    fn next_load(&self) -> Option<&RepoEntry> {
        if self.loading.is_some() {
            return None;
        }
        (self.catalog.iter().flatten()).find(|e| {
            self.held.contains(&partition(&e.repo))
                && self
                    .loaded
                    .get(&e.repo)
                    .is_none_or(|l| l.commit != e.commit)
                && (self.failed.get(&(e.repo.clone(), e.commit.clone())))
                    .is_none_or(|at| at.elapsed() >= LOAD_RETRY)
        })
    }
}

fn answer_loop(
    remote: &Remote,
    opts: &NodeOptions,
    synced: &mpsc::Receiver<Synced>,
    load: &mpsc::Sender<RepoEntry>,
    done: &mpsc::Receiver<LoadDone>,
) -> Result<()> {
    let (tx, rx) = mpsc::channel::<async_nats::Message>();
    let mut node = Node::default();
    loop {
        for read in synced.try_iter() {
            node.apply(read, opts);
        }
        for finished in done.try_iter() {
            node.finish_load(finished, opts);
        }
        let ready = Ready {
            catalog: node.catalog.as_deref(),
            loaded: &node.loaded,
            failed: &node.failed,
        };
        if resubscribe(remote, &node.held, &ready, &mut node.subscriptions, &tx) {
            let serving: Vec<&u32> = node.subscriptions.keys().collect();
            (opts.note)(&format!("serving partitions {serving:?}"));
        }
        if let Some(entry) = node.next_load().cloned() {
            node.loading = Some((entry.repo.clone(), entry.commit.clone()));
            let _ = load.send(entry);
        }
        let until = Instant::now() + TICK;
        while let Ok(message) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
            let held = Holdings {
                node: opts.name,
                loaded: &node.loaded,
                catalog: node.catalog.as_deref().unwrap_or_default(),
                access: node.access.as_ref(),
                max_bytes: remote.client.max_payload(),
            };
            let reply = answer(&message, &held);
            if let Some(to) = message.reply {
                let body: bytes::Bytes = serde_json::to_vec(&reply).unwrap_or_default().into();
                let _ = remote.rt.block_on(bounded(remote.client.publish(to, body)));
            }
            if Instant::now() >= until {
                break;
            }
        }
    }
}

fn start_heartbeat(remote: &Remote, name: &str) -> Result<()> {
    let nodes = remote.rt.block_on(open_kv(&remote.js, NODES, NODE_TTL))?;
    let name = name.to_string();
    remote.rt.spawn(async move {
        loop {
            let _ = nodes.put(&name, bytes::Bytes::from_static(b"up")).await;
            tokio::time::sleep(HEARTBEAT).await;
        }
    });
    Ok(())
}

/// Whether a partition newly held may be answered: the catalog has been
/// read and each of its repositories is loaded (or failed to load). Until
/// then its other replica answers it whole, where this node could only say
/// `loading`; a partition no node holds yet is answered by none, and so
/// reported missing rather than empty.
struct Ready<'a> {
    catalog: Option<&'a [RepoEntry]>,
    loaded: &'a BTreeMap<String, Loaded>,
    failed: &'a BTreeMap<(String, String), Instant>,
}

impl Ready<'_> {
    fn partition(&self, p: u32) -> bool {
        let Some(catalog) = self.catalog else {
            return false;
        };
        (catalog.iter().filter(|e| partition(&e.repo) == p)).all(|e| {
            self.loaded.contains_key(&e.repo) || self.failed.keys().any(|(r, _)| r == &e.repo)
        })
    }
}

/// Subscribes to the partitions held once they are [`Ready`], and drops
/// those no longer held (a partition subscribed stays so while held, even
/// as new repositories arrive in it); whether the set changed.
fn resubscribe(
    remote: &Remote,
    held: &BTreeSet<u32>,
    ready: &Ready,
    subscriptions: &mut BTreeMap<u32, tokio::task::JoinHandle<()>>,
    tx: &mpsc::Sender<async_nats::Message>,
) -> bool {
    let before = subscriptions.len();
    subscriptions.retain(|p, task| {
        let keep = held.contains(p);
        if !keep {
            task.abort();
        }
        keep
    });
    let mut changed = subscriptions.len() != before;
    for &p in held {
        if subscriptions.contains_key(&p) || !ready.partition(p) {
            continue;
        }
        let client = remote.client.clone();
        let tx = tx.clone();
        let task = remote.rt.spawn(async move {
            let (Ok(first), Ok(resent)) = (
                client
                    .queue_subscribe(subject(p, "*"), format!("lode-p{p}"))
                    .await,
                client.subscribe(hedge_subject(p, "*")).await,
            ) else {
                return;
            };
            let mut sub = futures_util::stream::select(first, resent);
            while let Some(m) = sub.next().await {
                if tx.send(m).is_err() {
                    break;
                }
            }
        });
        subscriptions.insert(p, task);
        changed = true;
    }
    changed
}

/// Checks out the entry's commit, installs its shard and opens it.
/// Each commit gets a checkout of its own (cloned from one local clone), so the one served is never
/// changed under it while the next is prepared.
fn load(remote: &Remote, entry: &RepoEntry, opts: &NodeOptions) -> Result<(Index, IndexLocation)> {
    let repo_dir = opts.work_dir.join("repos").join(repo_key(&entry.repo));
    let clone = repo_dir.join("clone");
    let job = Job {
        repo: entry.repo.clone(),
        commit: entry.commit.clone(),
    };
    let commit =
        crate::builder::check_out(&clone, &job).map_err(|e| RemoteError::new(e.message()))?;
    let dir = repo_dir.join(format!("at-{}", &commit[..commit.len().min(16)]));
    if !dir.join(".git").exists() {
        // A local clone hard-links the objects: cheap, and independent of
        // what later fetches do to the first clone.
        let _ = std::fs::remove_dir_all(&dir);
        let (source, target) = (clone.to_string_lossy(), dir.to_string_lossy());
        let git = crate::builder::git;
        git(
            &repo_dir,
            &["clone", "--quiet", "--no-checkout", "--", &source, &target],
        )
        .and_then(|_| git(&dir, &["checkout", "--quiet", "--detach", &commit]))
        .map_err(RemoteError::new)?;
    }
    let cache = opts.work_dir.join("cache");
    let location = IndexLocation::resolve(&dir, Some(&cache)).map_err(lode_err)?;
    let (config, _) = opts.config.for_root(&dir).map_err(lode_err)?;
    let key = CacheKey::from_hex(&entry.key);
    let manifest = remote
        .lookup(&key)?
        .ok_or_else(|| RemoteError::new("its shard is not in the cache"))?;
    let scratch = opts
        .work_dir
        .join(format!("fetch-{}.tmp", std::process::id()));
    let fetched = remote.fetch(&manifest, &scratch);
    let installed = fetched.and_then(|path| {
        lode_index::shard::install_moving(&location, &path, &config).map_err(lode_err)
    });
    let _ = std::fs::remove_dir_all(&scratch);
    installed?;
    // The checkout's mtimes are new: one refresh re-hashes, parsing nothing.
    let (index, _) =
        lode_index::refresh(&location, &RefreshOptions::new(&config)).map_err(lode_err)?;
    Ok((index, location))
}

fn lode_err(e: lode_core::Error) -> RemoteError {
    RemoteError::new(e.to_string())
}

/// What a node knows when it answers: its name, what it has loaded, the
/// catalog and the allow-lists (`None` until first read: it then answers
/// no one).
struct Holdings<'a> {
    node: &'a str,
    loaded: &'a BTreeMap<String, Loaded>,
    catalog: &'a [RepoEntry],
    access: Option<&'a Access>,
    /// The largest message the server takes: the reply is cut to it.
    max_bytes: usize,
}

fn answer(message: &async_nats::Message, held: &Holdings) -> PartitionAnswer {
    // `lode.q.<partition>.<identity>`, or `lode.q.h<partition>.<identity>` resent
    let p = subject_partition(&message.subject).unwrap_or(u32::MAX);
    let identity = message.subject.split('.').nth(3).unwrap_or_default();
    let mut reply = PartitionAnswer {
        partition: p,
        node: held.node.to_string(),
        repos: Vec::new(),
        loading: Vec::new(),
        error: None,
    };
    let query: Query = match serde_json::from_slice(&message.payload) {
        Ok(q) => q,
        Err(e) => {
            reply.error = Some(format!("an unreadable query: {e}"));
            return reply;
        }
    };
    let Some(access) = held.access else {
        reply.error = Some("the allow-lists are not read yet".into());
        return reply;
    };
    let (loaded, catalog) = (held.loaded, held.catalog);
    let visible = |e: &&RepoEntry| partition(&e.repo) == p && access.allows(identity, &e.repo);
    for entry in catalog.iter().filter(visible) {
        if query.repo.as_ref().is_some_and(|r| r != &entry.repo) {
            continue;
        }
        match loaded.get(&entry.repo) {
            // A newer commit is served once loaded; until then, the one loaded.
            Some(l) => match run(&l.index, &query) {
                Ok(answer) => reply.repos.push(RepoAnswer {
                    repo: entry.repo.clone(),
                    commit: l.commit.clone(),
                    answer,
                }),
                Err(e) => reply.error = Some(e),
            },
            _ => reply.loading.push(entry.repo.clone()),
        }
    }
    crate::reply::fit(&mut reply, query.command, query.top_k, held.max_bytes);
    reply
}

fn run(index: &Index, query: &Query) -> std::result::Result<serde_json::Value, String> {
    let value = match query.command {
        Command::Search => {
            let opts = lode_search::SearchOptions {
                top_k: query.top_k.clamp(1, 200),
                ..Default::default()
            };
            serde_json::to_value(
                lode_search::search(index, &query.text, &opts).map_err(|e| e.to_string())?,
            )
        }
        Command::Grep => serde_json::to_value(
            lode_search::grep(index, &query.text, &lode_search::GrepOptions::default())
                .map_err(|e| e.to_string())?,
        ),
        Command::Outline => return outline(index, &query.text, query.top_k),
        Command::Callers | Command::Callees | Command::Show => {
            return symbol_answer(index, query);
        }
    };
    value.map_err(|e| e.to_string())
}

/// The outline of a file, or of a directory's files (at most `max_symbols`
/// symbols); a path the repository does not index answers `not_found`, as
/// one repository's answer, not the partition's error.
fn outline(
    index: &Index,
    path: &str,
    max_symbols: usize,
) -> std::result::Result<serde_json::Value, String> {
    let path = path.trim_start_matches("./").trim_matches('/');
    let value = match lode_search::outline(index, path) {
        Ok(file) => serde_json::to_value(file),
        Err(lode_core::Error::NotFound(why)) => {
            let dir = lode_search::outline_dir(index, path, max_symbols.clamp(1, 5_000))
                .map_err(|e| e.to_string())?;
            if dir.files.is_empty() {
                return Ok(serde_json::json!({ "not_found": why }));
            }
            serde_json::to_value(dir)
        }
        Err(e) => return Err(e.to_string()),
    };
    value.map_err(|e| e.to_string())
}

/// `callers` or `callees` of the symbol `query.text` (a tree `top_k` levels
/// deep, 1–5), or its body (`show`), with the text the CLI prints as `text`.
/// A name the repository lacks, or names ambiguously, is that repository's
/// answer (`not_found`, `ambiguous`), not the partition's error.
fn symbol_answer(index: &Index, query: &Query) -> std::result::Result<serde_json::Value, String> {
    let sym = match lode_graph::find_symbol(index, query.text.trim(), None) {
        Ok(sym) => sym,
        Err(lode_core::Error::NotFound(why)) => return Ok(serde_json::json!({ "not_found": why })),
        Err(lode_core::Error::Ambiguous(why)) => {
            return Ok(serde_json::json!({ "ambiguous": why }));
        }
        Err(e) => return Err(e.to_string()),
    };
    let resolver = lode_graph::Resolver::new(index).map_err(|e| e.to_string())?;
    let (value, text) = if query.command == Command::Show {
        let shown = resolver.show(&sym, false).map_err(|e| e.to_string())?;
        let text = lode_graph::render::shown_text(&shown);
        (serde_json::to_value(shown), text)
    } else {
        let direction = if query.command == Command::Callees {
            lode_graph::Direction::Out
        } else {
            lode_graph::Direction::In
        };
        let tree =
            (resolver.tree(&sym, direction, query.top_k.clamp(1, 5))).map_err(|e| e.to_string())?;
        let text = lode_graph::render::tree_text(&tree);
        (serde_json::to_value(tree), text)
    };
    let mut value = value.map_err(|e| e.to_string())?;
    value["text"] = serde_json::Value::String(text);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_missing_its_own_heartbeat_still_holds_its_partitions() {
        let (config, settings) = (Config::default(), lode_core::RemoteConfig::default());
        let dir = tempfile::tempdir().unwrap();
        let opts = NodeOptions {
            url: "nats://127.0.0.1:1",
            settings: &settings,
            config: &config,
            name: "a",
            work_dir: dir.path(),
            note: &|_| {},
        };
        let mut node = Node::default();
        let others: BTreeSet<String> = ["b".to_string(), "c".to_string()].into();
        let read = Synced {
            live: Some(others.clone()),
            catalog: None,
            access: None,
        };
        node.apply(read, &opts);
        let all: BTreeSet<String> = ["a", "b", "c"].map(String::from).into();
        assert_eq!(node.held, held_by("a", &all));
        assert!(!node.held.is_empty(), "a holds its share of three");
    }

    #[test]
    fn a_failed_load_is_tried_again_later_not_never() {
        let entry = RepoEntry {
            repo: "/srv/r".into(),
            commit: "c".repeat(40),
            tree: String::new(),
            key: String::new(),
            shard: String::new(),
            bytes: 0,
        };
        let mut node = Node {
            held: (0..super::super::PARTITIONS).collect(),
            catalog: Some(vec![entry.clone()]),
            ..Node::default()
        };
        let failed = (entry.repo.clone(), entry.commit.clone());
        node.failed.insert(failed.clone(), Instant::now());
        assert!(node.next_load().is_none(), "not at once");
        let then = Instant::now().checked_sub(LOAD_RETRY).unwrap();
        node.failed.insert(failed, then);
        assert_eq!(node.next_load().map(|e| &e.repo), Some(&entry.repo));
    }
}
