//! Shard nodes and the scatter-gather in front of them.
//!
//! Repositories hash into [`PARTITIONS`] partitions. Each node heartbeats in
//! a KV bucket whose entries live a few seconds; every node computes from
//! the live members which partitions it holds (the [`REPLICAS`] nodes that
//! rank highest for a partition by rendezvous hashing), so a dead node's
//! partitions move to the next nodes as soon as its heartbeat lapses, with no
//! coordinator. A node keeps a checkout and the installed shard of each
//! repository of its partitions at the catalog's commit, switching to a new
//! commit only once it is ready, and answers on `lode.q.<partition>.*` (the
//! last token the asker's identity, see [`crate::access`]) in a queue group,
//! so one replica answers each request, and on `lode.q.h<partition>.*`, where
//! the resends of an unanswered request reach every replica. The node itself
//! is [`node`]: one thread answers while others read JetStream and load
//! repositories.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::store::{Remote, Result, bounded, fail, open_kv};

pub mod node;

pub use node::{NodeOptions, serve_node};

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
        .zip(assignment(live))
        .filter(|(_, owners)| owners.iter().any(|n| *n == node))
        .map(|(p, _)| p)
        .collect()
}

/// The nodes holding each partition, in partition order: the [`REPLICAS`]
/// that rank highest for it by rendezvous hashing, then the shares evened
/// out. Rendezvous hashing alone leaves the shares to chance (8 partitions
/// over three nodes came out 7, 7 and 2), and with nodes on machines of
/// their own an org-wide query waits for the busiest; the price is that a
/// node leaving can move a survivor's partition too. Every node computes
/// the same from the same members.
fn assignment(live: &BTreeSet<String>) -> Vec<Vec<&String>> {
    let mut owners: Vec<Vec<&String>> = (0..PARTITIONS)
        .map(|partition| {
            let mut ranked: Vec<(blake3::Hash, &String)> = live
                .iter()
                .map(|n| (blake3::hash(format!("{partition}\0{n}").as_bytes()), n))
                .collect();
            ranked.sort_by(|a, b| b.0.as_bytes().cmp(a.0.as_bytes()));
            ranked.into_iter().take(REPLICAS).map(|(_, n)| n).collect()
        })
        .collect();
    even_out(&mut owners, live);
    owners
}

/// Moves partitions from the busiest node to the idlest until no two shares
/// differ by more than one. The busiest always holds a partition the idlest
/// lacks (else the idlest would hold as many); the first such moves.
fn even_out<'a>(owners: &mut [Vec<&'a String>], live: &'a BTreeSet<String>) {
    let mut held: BTreeMap<&String, usize> = live.iter().map(|n| (n, 0)).collect();
    for n in owners.iter().flatten() {
        *held.entry(n).or_default() += 1;
    }
    loop {
        let busiest = (held.iter()).max_by_key(|(n, h)| (**h, std::cmp::Reverse(**n)));
        let idlest = held.iter().min_by_key(|(n, h)| (**h, **n));
        let (Some((&busy, &most)), Some((&idle, &least))) = (busiest, idlest) else {
            return;
        };
        if most <= least + 1 {
            return;
        }
        let Some(slot) = (owners.iter_mut()).find(|o| o.contains(&busy) && !o.contains(&idle))
        else {
            return;
        };
        let at = slot.iter().position(|n| *n == busy).expect("held");
        slot[at] = idle;
        *held.entry(busy).or_default() -= 1;
        *held.entry(idle).or_default() += 1;
    }
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

/// The subject a resent request goes to, `lode.q.h<partition>.<identity>`:
/// every replica of the partition hears it (no queue group), so a resend
/// cannot reach only the member that left the first request unanswered.
/// Within `lode.q.*.<identity>`, so the same publish permission covers it.
fn hedge_subject(partition: u32, identity: &str) -> String {
    format!("lode.q.h{partition}.{identity}")
}

/// The partition a query's subject names, first or resent; `None` for any
/// other subject.
fn subject_partition(subject: &str) -> Option<u32> {
    let token = subject.split('.').nth(2)?;
    token.strip_prefix('h').unwrap_or(token).parse().ok()
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
    /// node a request reached may have died with it, or hang). The first
    /// goes to the partition's queue group, one replica answering; the
    /// resends to every replica ([`hedge_subject`]). With no node
    /// subscribed, the partition is asked again shortly.
    async fn ask_partition(
        &self,
        partition: u32,
        payload: bytes::Bytes,
        deadline: Duration,
    ) -> Option<PartitionAnswer> {
        let started = Instant::now();
        let (first, resent) = (
            subject(partition, &self.identity),
            hedge_subject(partition, &self.identity),
        );
        let mut hedges = [deadline / 6, deadline / 2].into_iter();
        let mut in_flight = futures_util::stream::FuturesUnordered::new();
        let mut next_send = Duration::ZERO;
        let mut sent = 0usize;
        loop {
            let elapsed = started.elapsed();
            if elapsed >= deadline {
                return None;
            }
            if elapsed >= next_send {
                let to = if sent == 0 { &first } else { &resent };
                in_flight.push(self.client.request(to.clone(), payload.clone()));
                sent += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    fn members(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn partitions_are_shared_evenly_and_each_has_its_replicas() {
        let sets = [
            // Rendezvous hashing alone gave these three 7, 7 and 2.
            members(&["node-0", "node-1", "node-2"]),
            members(&["a", "b"]),
            members(&["alpha", "beta", "gamma", "delta"]),
            members(&["h1", "h2", "h3", "h4", "h5"]),
            members(&["only"]),
        ];
        for live in &sets {
            let owners = assignment(live);
            assert_eq!(owners.len(), PARTITIONS as usize);
            for o in &owners {
                let distinct: BTreeSet<_> = o.iter().collect();
                assert_eq!(distinct.len(), REPLICAS.min(live.len()), "{live:?}");
            }
            // The shares differ by one at most.
            let shares: Vec<usize> = live.iter().map(|n| held_by(n, live).len()).collect();
            let total = PARTITIONS as usize * REPLICAS.min(live.len());
            assert_eq!(shares.iter().sum::<usize>(), total, "{live:?}");
            let (most, least) = (shares.iter().max().unwrap(), shares.iter().min().unwrap());
            assert!(most - least <= 1, "{shares:?} over {live:?}");
        }
    }

    #[test]
    fn a_resend_names_its_partition_and_identity_where_the_first_does() {
        let (first, resent) = (subject(3, "team-a"), hedge_subject(3, "team-a"));
        assert_eq!(first, "lode.q.3.team-a");
        // Four tokens, the identity last: `lode.q.*.team-a` permits both.
        assert_eq!(resent, "lode.q.h3.team-a");
        assert_eq!(subject_partition(&first), Some(3));
        assert_eq!(subject_partition(&resent), Some(3));
        for other in ["lode.q.x3.team-a", "lode.q", "lode.q.h.team-a"] {
            assert_eq!(subject_partition(other), None, "{other}");
        }
    }

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
