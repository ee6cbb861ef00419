//! Decisions cached for ten minutes, keyed by a hash of the trace, the
//! query and the frontier, so the same search does not call the model
//! twice. Only the hash is kept, never the text.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::decide::{Decision, Request};

/// How long a decision is reused.
pub const DECISION_TTL: Duration = Duration::from_secs(600);
/// Entries kept at most (expired ones go first, then the oldest).
const MAX_DECISIONS: usize = 1_024;

/// Model decisions by [`DecisionCache::key`], each reused for the TTL.
/// `Send + Sync`: a long-lived server keeps one for all calls.
pub struct DecisionCache {
    ttl: Duration,
    map: Mutex<HashMap<[u8; 32], (Instant, Decision)>>,
}

impl Default for DecisionCache {
    fn default() -> DecisionCache {
        DecisionCache::with_ttl(DECISION_TTL)
    }
}

impl DecisionCache {
    /// An empty cache whose entries are reused for `ttl` after they are stored.
    pub fn with_ttl(ttl: Duration) -> DecisionCache {
        DecisionCache {
            ttl,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// The key of a request to a model: everything the model sees that
    /// varies — trace, query, round and quota, and each frontier node's id
    /// with the symbol it stands for (ids are per walk, so an id alone could
    /// name another symbol after the code changed).
    pub fn key(model: &str, r: &Request) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(model.as_bytes());
        field(r.trace.as_bytes());
        field(r.query.as_bytes());
        field(format!("{} {} {}", r.round, r.max_rounds, r.quota).as_bytes());
        for n in &r.frontier {
            field(
                format!(
                    "{} {}:{}-{} {} {}",
                    n.id,
                    n.path,
                    n.line,
                    n.end_line,
                    n.name,
                    n.edge.text()
                )
                .as_bytes(),
            );
        }
        *h.finalize().as_bytes()
    }

    /// The decision stored under `key`, unless it is older than the TTL.
    pub fn get(&self, key: &[u8; 32]) -> Option<Decision> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(key)
            .filter(|(at, _)| at.elapsed() < self.ttl)
            .map(|(_, d)| d.clone())
    }

    /// Stores a decision; when full (1,024 entries), expired ones go first,
    /// then the oldest.
    pub fn put(&self, key: [u8; 32], decision: Decision) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= MAX_DECISIONS {
            map.retain(|_, (at, _)| at.elapsed() < self.ttl);
        }
        if map.len() >= MAX_DECISIONS
            && let Some(oldest) = map.iter().min_by_key(|(_, (at, _))| *at).map(|(k, _)| *k)
        {
            map.remove(&oldest);
        }
        map.insert(key, (Instant::now(), decision));
    }

    /// Entries held, expired ones not yet dropped included.
    pub fn len(&self) -> usize {
        self.map.lock().map(|m| m.len()).unwrap_or(0)
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(trace: &str) -> Request {
        Request {
            trace: trace.into(),
            query: "q".into(),
            round: 1,
            max_rounds: 3,
            quota: 4,
            frontier: Vec::new(),
        }
    }

    #[test]
    fn decisions_expire_and_keys_follow_the_trace() {
        let d = Decision {
            keep: vec![1],
            expand: vec![],
            stop: true,
        };
        let cache = DecisionCache::default();
        let k = DecisionCache::key("m", &request("a"));
        assert_ne!(k, DecisionCache::key("m", &request("b")));
        assert_ne!(k, DecisionCache::key("other", &request("a")));
        cache.put(k, d.clone());
        assert_eq!(cache.get(&k), Some(d.clone()));

        let short = DecisionCache::with_ttl(Duration::from_millis(20));
        short.put(k, d);
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(short.get(&k), None);
    }
}
