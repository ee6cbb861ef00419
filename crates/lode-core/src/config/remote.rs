//! `[remote]`: the shared index cache on NATS JetStream.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where `lode index --remote` fetches and publishes prebuilt indexes. User
/// config only, all of it: a project must not choose where its code is sent,
/// whose indexes it trusts, or which secrets are read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteConfig {
    /// The NATS servers, `nats://host:port` (or `tls://`), comma-separated;
    /// no credentials in it (`user`, `password_env`, `creds_file`).
    pub url: Option<String>,
    /// The NATS user, with the password read from `password_env`.
    pub user: Option<String>,
    /// The environment variable holding the password of `user`.
    pub password_env: Option<String>,
    /// The identity queries are asked under, whose allow-list the shard
    /// nodes apply (default: `user`, else `anonymous`); NATS permissions pin
    /// each account to its own.
    pub identity: Option<String>,
    /// A NATS `.creds` file (a JWT and an nkey seed).
    pub creds_file: Option<PathBuf>,
    /// A PEM file of the certificate authorities to trust for TLS.
    pub tls_ca_file: Option<PathBuf>,
    /// Seconds to wait for another runner building the same tree before
    /// building here (default 60).
    pub wait_secs: Option<u64>,
    /// Publish what is built here (default true); false for runners that may
    /// only read the cache.
    pub publish: Option<bool>,
}

impl RemoteConfig {
    /// Seconds to wait for another runner's build; 60 when unset, at most an hour.
    pub fn wait_secs(&self) -> u64 {
        self.wait_secs.unwrap_or(60).min(3600)
    }
    /// Whether builds are published; true when unset.
    pub fn publish(&self) -> bool {
        self.publish.unwrap_or(true)
    }
}
