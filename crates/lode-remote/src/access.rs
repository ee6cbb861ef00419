//! Which repositories each client identity may be answered from.
//!
//! A front asks under an identity (`[remote] identity`, else `[remote]
//! user`, else [`ANONYMOUS`]), carried as the last token of the query's
//! subject, `lode.q.<partition>.<identity>`. NATS publish permissions pin
//! each account to its own token (README, "Access"), so the identity cannot
//! be forged; the shard nodes read it from the subject and answer only from
//! the repositories its allow-list names. The allow-lists live in the
//! Key-Value bucket [`ACCESS`] (identity → [`Allowed`]), written by
//! administrators only (`lode cluster allow`).
//!
//! With the bucket empty every identity is answered from every repository
//! (one team, no access control); once any entry exists, an identity without
//! one is answered from none. A repository not allowed is invisible: not in
//! the answer, not among those `loading`.

use std::collections::BTreeMap;
use std::time::Duration;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use crate::store::{Remote, RemoteError, Result, bounded, fail, open_kv};

/// The bucket of allow-lists.
pub(crate) const ACCESS: &str = "lode-access";
/// The identity of a client that names none and has no NATS user.
pub const ANONYMOUS: &str = "anonymous";

/// One identity's allow-list: repository names, or prefixes ending in `*`
/// (`https://github.com/org/*`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Allowed {
    /// The patterns.
    pub repos: Vec<String>,
}

impl Allowed {
    /// Whether `repo` matches one of the patterns.
    pub fn allows(&self, repo: &str) -> bool {
        self.repos.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => repo.starts_with(prefix),
            None => p == repo,
        })
    }
}

/// Every allow-list, as a shard node reads it on each resync.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Access {
    lists: BTreeMap<String, Allowed>,
}

impl Access {
    /// The allow-lists by identity.
    pub fn new(lists: BTreeMap<String, Allowed>) -> Access {
        Access { lists }
    }

    /// The allow-lists by identity.
    pub fn lists(&self) -> &BTreeMap<String, Allowed> {
        &self.lists
    }

    /// Whether `identity` may be answered from `repo`.
    pub fn allows(&self, identity: &str, repo: &str) -> bool {
        self.lists.is_empty() || self.lists.get(identity).is_some_and(|a| a.allows(repo))
    }
}

/// Whether `name` can be an identity: one NATS subject token of letters,
/// digits, `-` and `_`, at most 64 bytes.
pub fn valid_identity(name: &str) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    !name.is_empty() && name.len() <= 64 && name.bytes().all(ok)
}

/// The identity a client asks under, from its config.
pub fn identity_of(config: &lode_core::RemoteConfig) -> std::result::Result<String, String> {
    let name = (config.identity.clone())
        .or_else(|| config.user.clone())
        .unwrap_or_else(|| ANONYMOUS.to_string());
    if valid_identity(&name) {
        Ok(name)
    } else {
        Err(format!(
            "remote identity {:?}: letters, digits, - and _ only (at most 64)",
            name.chars().take(70).collect::<String>()
        ))
    }
}

impl Remote {
    /// Every allow-list in the bucket.
    pub fn access(&self) -> Result<Access> {
        self.rt.block_on(async {
            let bucket = open_kv(&self.js, ACCESS, Duration::ZERO).await?;
            let keys: Vec<String> = match bounded(bucket.keys()).await? {
                Ok(keys) => keys.filter_map(|k| async { k.ok() }).collect().await,
                Err(e) => return Err(fail("allow-lists")(e)),
            };
            let mut lists = BTreeMap::new();
            for key in keys {
                let value = bounded(bucket.get(&key))
                    .await?
                    .map_err(fail("allow-list"))?;
                if let Some(value) = value {
                    // An entry that does not parse allows nothing.
                    let allowed = serde_json::from_slice(&value).unwrap_or_default();
                    lists.insert(key, allowed);
                }
            }
            Ok(Access::new(lists))
        })
    }

    /// Sets `identity`'s allow-list; `None` removes it.
    pub fn allow(&self, identity: &str, allowed: Option<&Allowed>) -> Result<()> {
        if !valid_identity(identity) {
            return Err(RemoteError::new(format!(
                "identity {identity:?}: letters, digits, - and _ only (at most 64)"
            )));
        }
        self.rt.block_on(async {
            let bucket = open_kv(&self.js, ACCESS, Duration::ZERO).await?;
            match allowed {
                Some(a) => {
                    let body = serde_json::to_vec(a).map_err(fail("allow-list"))?;
                    bounded(bucket.put(identity, body.into()))
                        .await?
                        .map_err(fail("allow-list"))?;
                }
                None => {
                    bounded(bucket.purge(identity))
                        .await?
                        .map_err(fail("allow-list"))?;
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(patterns: &[&str]) -> Allowed {
        Allowed {
            repos: patterns.iter().map(|p| p.to_string()).collect(),
        }
    }

    #[test]
    fn patterns_are_names_or_prefixes() {
        let a = allowed(&["https://git.example/org/*", "/srv/repos/tools"]);
        assert!(a.allows("https://git.example/org/service.git"));
        assert!(!a.allows("https://git.example/other/service.git"));
        assert!(a.allows("/srv/repos/tools"));
        assert!(
            !a.allows("/srv/repos/tools-private"),
            "a name is not a prefix"
        );
        assert!(!allowed(&[]).allows("x"));
    }

    #[test]
    fn no_lists_allow_everything_and_any_list_closes_the_rest() {
        assert!(Access::default().allows("anyone", "any/repo"));
        let access = Access::new(BTreeMap::from([("team-a".to_string(), allowed(&["a/*"]))]));
        assert!(access.allows("team-a", "a/one"));
        assert!(!access.allows("team-a", "b/one"));
        assert!(
            !access.allows("team-b", "a/one"),
            "no entry, no repositories"
        );
        assert!(!access.allows(ANONYMOUS, "a/one"));
    }

    #[test]
    fn an_identity_is_one_subject_token() {
        let mut config = lode_core::RemoteConfig::default();
        assert_eq!(identity_of(&config).unwrap(), ANONYMOUS);
        config.user = Some("runner".into());
        assert_eq!(identity_of(&config).unwrap(), "runner");
        config.identity = Some("team-a".into());
        assert_eq!(identity_of(&config).unwrap(), "team-a");
        for bad in ["a.b", "a*", "a>", "", "a b"] {
            config.identity = Some(bad.into());
            assert!(identity_of(&config).is_err(), "{bad:?}");
        }
        assert!(!valid_identity(&"x".repeat(65)));
    }
}
