//! Shard nodes and the scatter-gather in front of them.
//!
//! Repositories hash into [`PARTITIONS`] partitions. Each node heartbeats in
//! a KV bucket whose entries live a few seconds; every node computes from
//! the live members which partitions it holds (the [`REPLICAS`] nodes that
//! rank highest for a partition by rendezvous hashing), so a dead node's
//! partitions move to the next nodes as soon as its heartbeat lapses, with no
//! coordinator. A node keeps a checkout and the installed shard of each
//! repository of its partitions at the catalog's commit, switching to a new
//! commit only once it is ready, and answers on `lode.q.<partition>` in a
//! queue group, so one replica answers each request.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use lode_core::Config;
use lode_index::{Index, IndexLocation, RefreshOptions};
use serde::{Deserialize, Serialize};

use crate::access::Access;
use crate::jobs::{Job, RepoEntry, repo_key};
use crate::key::CacheKey;
use crate::store::{Remote, RemoteError, Result, bounded, fail, open_kv};

/// Partitions repositories are hashed into.
pub const PARTITIONS: u32 = 8;
/// Nodes holding each partition.
pub const REPLICAS: usize = 2;
pub(crate) const NODES: &str = "lode-nodes";
/// A node whose heartbeat is older than this is gone.
pub(crate) const NODE_TTL: Duration = Duration::from_secs(6);
const HEARTBEAT: Duration = Duration::from_secs(2);
/// How long a front (the CLI, `lode mcp --remote`) waits for the shard nodes.
pub const QUERY_DEADLINE: Duration = Duration::from_secs(3);
/// The least a partition's request waits before it is sent again.
const RETRY_AFTER: Duration = Duration::from_millis(100);
/// How often a node reads the catalog and the members.
const RESYNC: Duration = Duration::from_secs(2);

/// The partition of a repository.
pub fn partition(repo: &str) -> u32 {
    let hash = blake3::hash(repo.as_bytes());
    u32::from_le_bytes(hash.as_bytes()[..4].try_into().unwrap_or([0; 4])) % PARTITIONS
}

/// The partitions `node` holds among `live` nodes.
pub fn held_by(node: &str, live: &BTreeSet<String>) -> BTreeSet<u32> {
    (0..PARTITIONS)
        .filter(|&p| owners(p, live).iter().any(|n| n == node))
        .collect()
}

fn owners(partition: u32, live: &BTreeSet<String>) -> Vec<String> {
    let mut ranked: Vec<(blake3::Hash, &String)> = live
        .iter()
        .map(|n| (blake3::hash(format!("{partition}\0{n}").as_bytes()), n))
        .collect();
    ranked.sort_by(|a, b| b.0.as_bytes().cmp(a.0.as_bytes()));
    ranked
        .into_iter()
        .take(REPLICAS)
        .map(|(_, n)| n.clone())
        .collect()
}

/// The commands a shard node answers, named on the wire in lower case
/// (`"search"`): a query naming another is unreadable.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Command {
    /// Ranked hits for a query.
    Search,
    /// Regex matches grouped by enclosing symbol.
    Grep,
    /// The symbols of a file or a directory's files.
    Outline,
    /// Who calls a symbol, as a tree.
    Callers,
    /// What a symbol calls, as a tree.
    Callees,
    /// A symbol's body.
    Show,
}

impl Command {
    /// The command's name, as the wire and the CLI write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Command::Search => "search",
            Command::Grep => "grep",
            Command::Outline => "outline",
            Command::Callers => "callers",
            Command::Callees => "callees",
            Command::Show => "show",
        }
    }
}

/// What a node is asked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Query {
    /// What is asked.
    pub command: Command,
    /// The query text, the regex, the file or directory to outline
    /// (relative to the repository's root), or the symbol.
    pub text: String,
    /// One repository, or every repository of the partition.
    pub repo: Option<String>,
    /// Results wanted per repository.
    pub top_k: usize,
}

/// One repository's answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RepoAnswer {
    /// The repository.
    pub repo: String,
    /// The commit it was served at.
    pub commit: String,
    /// The command's JSON answer.
    pub answer: serde_json::Value,
}

/// A node's reply for one partition.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PartitionAnswer {
    /// The partition answered for.
    pub partition: u32,
    /// The node that answered.
    pub node: String,
    /// Each loaded repository's answer.
    pub repos: Vec<RepoAnswer>,
    /// Repositories of the partition in the catalog that this node has not
    /// loaded yet.
    pub loading: Vec<String>,
    /// Why the node could not answer (the partition then counts as missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The merged answer of a scatter-gather.
#[derive(Clone, Debug, Serialize)]
pub struct Gathered {
    /// Every repository's answer, by repository.
    pub answers: Vec<RepoAnswer>,
    /// Whether some partition did not answer in time.
    pub partial: bool,
    /// The partitions that did not answer in time.
    pub missing_partitions: Vec<u32>,
    /// Repositories not loaded yet by the node that answered.
    pub loading: Vec<String>,
}

/// The subject a query for `partition` is asked on, under `identity`
/// (see [`crate::access`]).
fn subject(partition: u32, identity: &str) -> String {
    format!("lode.q.{partition}.{identity}")
}

impl Remote {
    /// Sends `query` to the partition of `query.repo`, or to every partition,
    /// and merges what comes back within `deadline`.
    pub fn scatter(&self, query: &Query, deadline: Duration) -> Result<Gathered> {
        let partitions: Vec<u32> = match &query.repo {
            Some(repo) => vec![partition(repo)],
            None => (0..PARTITIONS).collect(),
        };
        let payload: bytes::Bytes = serde_json::to_vec(query).map_err(fail("query"))?.into();
        let asked = partitions
            .iter()
            .map(|&p| self.ask_partition(p, payload.clone(), deadline));
        let replies = self.rt.block_on(futures_util::future::join_all(asked));
        let mut gathered = Gathered {
            answers: Vec::new(),
            partial: false,
            missing_partitions: Vec::new(),
            loading: Vec::new(),
        };
        for (p, reply) in partitions.iter().zip(replies) {
            match reply {
                Some(r) if r.error.is_none() => {
                    gathered.answers.extend(r.repos);
                    gathered.loading.extend(r.loading);
                }
                _ => {
                    gathered.partial = true;
                    gathered.missing_partitions.push(*p);
                }
            }
        }
        gathered.answers.sort_by(|a, b| a.repo.cmp(&b.repo));
        Ok(gathered)
    }

    /// One partition's answer within `deadline`, hedged: a request still
    /// unanswered after a sixth of the deadline is sent once more, and after
    /// half of it once again, each answer awaited until the first comes (the
    /// node a request reached may have died with it, or be slow, and a
    /// replica answers the next). With no node subscribed, the partition is
    /// asked again shortly.
    async fn ask_partition(
        &self,
        partition: u32,
        payload: bytes::Bytes,
        deadline: Duration,
    ) -> Option<PartitionAnswer> {
        let started = Instant::now();
        let subject = subject(partition, &self.identity);
        let mut hedges = [deadline / 6, deadline / 2].into_iter();
        let mut in_flight = futures_util::stream::FuturesUnordered::new();
        let mut next_send = Duration::ZERO;
        loop {
            let elapsed = started.elapsed();
            if elapsed >= deadline {
                return None;
            }
            if elapsed >= next_send {
                in_flight.push(self.client.request(subject.clone(), payload.clone()));
                next_send = hedges.next().unwrap_or(deadline).max(elapsed + RETRY_AFTER);
            }
            let wait = next_send.min(deadline).saturating_sub(started.elapsed());
            match tokio::time::timeout(wait, in_flight.next()).await {
                Ok(Some(Ok(m))) => return serde_json::from_slice(&m.payload).ok(),
                // No responders, or the connection is down: a moment, then again.
                Ok(Some(Err(_))) if in_flight.is_empty() => {
                    next_send = next_send.min(started.elapsed() + RETRY_AFTER);
                }
                Ok(Some(Err(_))) => {}
                Ok(None) => tokio::time::sleep(wait).await,
                Err(_) => {}
            }
        }
    }

    fn live_nodes(&self) -> Result<BTreeSet<String>> {
        self.rt.block_on(async {
            let nodes = open_kv(&self.js, NODES, NODE_TTL).await?;
            match bounded(nodes.keys()).await? {
                Ok(keys) => Ok(keys.filter_map(|k| async { k.ok() }).collect().await),
                Err(e) => Err(fail("members")(e)),
            }
        })
    }
}

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
    /// Called with what went wrong (the server away, a shard that fails to verify).
    pub note: &'a dyn Fn(&str),
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
pub fn serve_node(opts: &NodeOptions) -> Result<()> {
    let remote = Remote::connect_serving(opts.url, opts.settings)?;
    let (tx, rx) = mpsc::channel::<async_nats::Message>();
    start_heartbeat(&remote, opts.name)?;
    let mut held: BTreeSet<u32> = BTreeSet::new();
    let mut subscriptions: BTreeMap<u32, tokio::task::JoinHandle<()>> = BTreeMap::new();
    let mut loaded: BTreeMap<String, Loaded> = BTreeMap::new();
    // `None` until first read: until then no partition is ready.
    let mut catalog: Option<Vec<RepoEntry>> = None;
    let mut access: Option<Access> = None;
    // Loads that failed, not tried again until the catalog names another commit.
    let mut failed: BTreeSet<(String, String)> = BTreeSet::new();
    let mut next_sync = Instant::now();
    loop {
        if Instant::now() >= next_sync {
            next_sync = Instant::now() + RESYNC;
            match remote.live_nodes() {
                Ok(live) => held = held_by(opts.name, &live),
                Err(e) => (opts.note)(&format!("members: {e}")),
            }
            match remote.repo_entries() {
                Ok(entries) => catalog = Some(entries),
                Err(e) => (opts.note)(&format!("catalog: {e}")),
            }
            match remote.access() {
                Ok(lists) => access = Some(lists),
                Err(e) => (opts.note)(&format!("allow-lists: {e}")),
            }
            let mine: Vec<String> = (catalog.iter().flatten())
                .filter(|e| held.contains(&partition(&e.repo)))
                .map(|e| e.repo.clone())
                .collect();
            let dropped: Vec<String> = loaded
                .keys()
                .filter(|repo| !mine.contains(repo))
                .cloned()
                .collect();
            for repo in dropped {
                if let Some(old) = loaded.remove(&repo) {
                    old.discard(opts.work_dir);
                }
            }
        }
        let ready = Ready {
            catalog: catalog.as_deref(),
            loaded: &loaded,
            failed: &failed,
        };
        if resubscribe(&remote, &held, &ready, &mut subscriptions, &tx) {
            let serving: Vec<&u32> = subscriptions.keys().collect();
            (opts.note)(&format!("serving partitions {serving:?}"));
        }
        let catalog = catalog.as_deref().unwrap_or_default();
        // One repository a pass, so requests keep being answered between loads.
        let pending = catalog.iter().find(|e| {
            held.contains(&partition(&e.repo))
                && loaded.get(&e.repo).is_none_or(|l| l.commit != e.commit)
                && !failed.contains(&(e.repo.clone(), e.commit.clone()))
        });
        if let Some(entry) = pending {
            match load(&remote, entry, opts) {
                Ok((index, location)) => {
                    let commit = entry.commit.clone();
                    let new = Loaded {
                        commit,
                        index,
                        location,
                    };
                    // The switch: requests after it see the new commit only.
                    if let Some(old) = loaded.insert(entry.repo.clone(), new) {
                        old.discard(opts.work_dir);
                    }
                }
                Err(e) => {
                    (opts.note)(&format!("{}: {e}", entry.repo));
                    failed.insert((entry.repo.clone(), entry.commit.clone()));
                }
            }
        }
        let wait = if pending.is_some() {
            Duration::ZERO
        } else {
            Duration::from_millis(200)
        };
        while let Ok(message) = rx.recv_timeout(wait) {
            let held = Holdings {
                node: opts.name,
                loaded: &loaded,
                catalog,
                access: access.as_ref(),
                max_bytes: remote.client.max_payload(),
            };
            let reply = answer(&message, &held);
            if let Some(to) = message.reply {
                let body: bytes::Bytes = serde_json::to_vec(&reply).unwrap_or_default().into();
                let _ = remote.rt.block_on(bounded(remote.client.publish(to, body)));
            }
            if Instant::now() >= next_sync {
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
    failed: &'a BTreeSet<(String, String)>,
}

impl Ready<'_> {
    fn partition(&self, p: u32) -> bool {
        let Some(catalog) = self.catalog else {
            return false;
        };
        (catalog.iter().filter(|e| partition(&e.repo) == p)).all(|e| {
            self.loaded.contains_key(&e.repo) || self.failed.iter().any(|(r, _)| r == &e.repo)
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
            let Ok(mut sub) = client
                .queue_subscribe(subject(p, "*"), format!("lode-p{p}"))
                .await
            else {
                return;
            };
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
    // `lode.q.<partition>.<identity>`
    let mut tokens = message.subject.split('.').skip(2);
    let p: u32 = (tokens.next().and_then(|s| s.parse().ok())).unwrap_or(u32::MAX);
    let identity = tokens.next().unwrap_or_default();
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
    fn a_query_names_its_command_in_lower_case_and_no_other() {
        let q = Query {
            command: Command::Callees,
            text: "parse_config".into(),
            repo: None,
            top_k: 2,
        };
        let wire = serde_json::to_value(&q).unwrap();
        assert_eq!(wire["command"], "callees");
        assert_eq!(serde_json::from_value::<Query>(wire).unwrap(), q);
        for c in [
            Command::Search,
            Command::Grep,
            Command::Outline,
            Command::Callers,
            Command::Show,
        ] {
            assert_eq!(serde_json::to_value(c).unwrap(), c.as_str());
        }
        let unknown = r#"{"command":"delete","text":"x","repo":null,"top_k":1}"#;
        let err = serde_json::from_str::<Query>(unknown).unwrap_err();
        assert!(
            err.to_string().contains("unknown variant `delete`"),
            "{err}"
        );
    }
}
