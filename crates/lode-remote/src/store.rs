//! The JetStream side: a catalog of manifests and a bucket of claims (both
//! Key-Value), and the shards' parts (Object Store).
//!
//! A shard is stored as parts of at most [`PART_BYTES`] (large single puts
//! are where replicated object stores misbehave), each checked against its
//! BLAKE3 in the manifest as it is read; the manifest is written last, with
//! `create`, so a reader never sees a manifest whose parts are missing and
//! two publishers of one key cannot overwrite each other.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_nats::jetstream::{self, kv, object_store};
use lode_core::RemoteConfig;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;

use crate::key::CacheKey;

/// Replicas of what lode creates: three on a cluster, one on a single server.
pub(crate) const REPLICAS: [usize; 2] = [3, 1];
/// The largest part a shard is cut into.
pub const PART_BYTES: usize = 8 << 20;
/// The object store's chunk (one message each): half of the default
/// `max_payload`, where the store's own default is 128 KiB.
const CHUNK_BYTES: usize = 512 << 10;
/// The manifest's own format.
const MANIFEST_FORMAT: u32 = 1;
/// Bucket names: the catalog (key → manifest), the claims, the parts.
pub(crate) const CATALOG: &str = "lode-cache";
pub(crate) const CLAIMS: &str = "lode-claims";
pub(crate) const SHARDS: &str = "lode-shards";
/// A claim lapses this long after its holder last renewed it, so a runner
/// that died mid-build blocks no one for longer; the holder renews it every
/// [`CLAIM_RENEW`] while it builds.
const CLAIM_TTL: Duration = Duration::from_secs(20);
const CLAIM_RENEW: Duration = Duration::from_secs(5);
/// The most a connection attempt, or one request, may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Reconnects a command that runs once tries before it gives up.
const SHORT_LIVED_RECONNECTS: usize = 3;
/// The most one part's transfer may take.
const PART_TIMEOUT: Duration = Duration::from_secs(120);

/// What the catalog holds for a key: the shard and how to read it back.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// The index format version.
    pub format: u32,
    /// The key it is stored under.
    pub key: String,
    /// The git tree it was built from.
    pub tree: String,
    /// The build fingerprint (lode version, extraction, config, model).
    pub fingerprint: String,
    /// The lode version that built it.
    pub lode_version: String,
    /// BLAKE3 of the whole shard: its name.
    pub shard: String,
    /// The shard's size.
    pub bytes: u64,
    /// BLAKE3 of each part, in order.
    pub parts: Vec<String>,
}

/// Why a remote step failed; the caller builds locally and says this once.
#[derive(Debug)]
pub struct RemoteError {
    /// What failed, in one line.
    pub message: String,
    /// The stored shard is wrong (a part's hash, its length, its content),
    /// not merely out of reach: its manifest should go.
    pub damaged: bool,
}

impl RemoteError {
    pub(crate) fn new(message: impl Into<String>) -> RemoteError {
        RemoteError {
            message: message.into(),
            damaged: false,
        }
    }

    pub(crate) fn damaged(message: impl Into<String>) -> RemoteError {
        RemoteError {
            message: message.into(),
            damaged: true,
        }
    }
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for RemoteError {}

pub(crate) type Result<T> = std::result::Result<T, RemoteError>;

pub(crate) fn fail<E: std::fmt::Display>(what: &str) -> impl Fn(E) -> RemoteError + '_ {
    move |e| RemoteError::new(format!("{what}: {e}"))
}

/// A connection to the shared cache, with a private runtime so callers stay
/// blocking (one worker thread: it keeps a job's heartbeat going while the
/// caller builds).
pub struct Remote {
    pub(crate) rt: tokio::runtime::Runtime,
    pub(crate) js: jetstream::Context,
    pub(crate) client: async_nats::Client,
    catalog: kv::Store,
    claims: kv::Store,
    shards: object_store::ObjectStore,
    /// This process, as it names itself in a claim.
    me: String,
    /// The identity its queries are asked under (`access`).
    pub(crate) identity: String,
    /// The claims this process holds, each renewed by a task of its own.
    renewing: std::sync::Mutex<std::collections::HashMap<String, tokio::task::JoinHandle<()>>>,
}

impl Remote {
    /// Connects to `url` with the credentials `config` names and opens (or
    /// creates) the buckets.
    pub fn connect(url: &str, config: &RemoteConfig) -> Result<Remote> {
        Remote::connect_with(url, config, Some(SHORT_LIVED_RECONNECTS))
    }

    /// [`Remote::connect`] for a process that serves until stopped (a
    /// builder, a shard node, `lode mcp --remote`): it never stops trying to
    /// reconnect, so a cluster restarted as a whole is rejoined.
    pub fn connect_serving(url: &str, config: &RemoteConfig) -> Result<Remote> {
        Remote::connect_with(url, config, None)
    }

    fn connect_with(url: &str, config: &RemoteConfig, reconnects: Option<usize>) -> Result<Remote> {
        let identity = crate::access::identity_of(config).map_err(RemoteError::new)?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .map_err(fail("no runtime"))?;
        let (client, js, catalog, claims, shards) = rt.block_on(async {
            let options = options(config).await?.max_reconnects(reconnects);
            let servers = url
                .split(',')
                .map(|s| s.trim().parse::<async_nats::ServerAddr>())
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(fail("bad server URL"))?;
            let client = tokio::time::timeout(CONNECT_TIMEOUT * 2, options.connect(servers))
                .await
                .map_err(|_| RemoteError::new("connecting timed out"))?
                .map_err(fail("cannot connect"))?;
            let js = jetstream::new(client.clone());
            let catalog = open_kv(&js, CATALOG, Duration::ZERO).await?;
            let claims = open_kv(&js, CLAIMS, CLAIM_TTL).await?;
            let shards = open_objects(&js).await?;
            Ok::<_, RemoteError>((client, js, catalog, claims, shards))
        })?;
        let me = format!(
            "{}:{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "host".into()),
            std::process::id()
        );
        Ok(Remote {
            renewing: Default::default(),
            rt,
            js,
            client,
            catalog,
            claims,
            shards,
            me,
            identity,
        })
    }

    /// The manifest stored under `key`, if any.
    pub fn lookup(&self, key: &CacheKey) -> Result<Option<Manifest>> {
        let got = self.rt.block_on(bounded(self.catalog.get(key.as_str())))?;
        let Some(bytes) = got.map_err(fail("catalog read"))? else {
            return Ok(None);
        };
        let manifest: Manifest =
            serde_json::from_slice(&bytes).map_err(fail("unreadable manifest"))?;
        if manifest.format != MANIFEST_FORMAT || manifest.key != key.as_str() {
            return Err(RemoteError::new(format!(
                "the manifest under {key} is not one this lode reads"
            )));
        }
        Ok(Some(manifest))
    }

    /// Downloads the shard of `manifest` into `dir` as `<hash>.lodeshard`,
    /// every part checked as it arrives.
    pub fn fetch(&self, manifest: &Manifest, dir: &Path) -> Result<PathBuf> {
        std::fs::create_dir_all(dir).map_err(fail("cannot write the download"))?;
        let path = dir.join(format!(
            "{}.{}",
            manifest.shard,
            lode_index::shard::EXTENSION
        ));
        let mut file = std::fs::File::create(&path).map_err(fail("cannot write the download"))?;
        let mut written = 0u64;
        for (i, want) in manifest.parts.iter().enumerate() {
            let name = part_name(&manifest.shard, i);
            let bytes = self.rt.block_on(self.read_part(&name))?;
            if blake3::hash(&bytes).to_hex().as_str() != want {
                return Err(RemoteError::damaged(format!(
                    "{name}: damaged (its hash differs)"
                )));
            }
            written += bytes.len() as u64;
            file.write_all(&bytes)
                .map_err(fail("cannot write the download"))?;
        }
        file.sync_all().map_err(fail("cannot write the download"))?;
        if written != manifest.bytes {
            return Err(RemoteError::damaged(format!(
                "{}: damaged ({written} bytes, the manifest says {})",
                manifest.shard, manifest.bytes
            )));
        }
        Ok(path)
    }

    async fn read_part(&self, name: &str) -> Result<Vec<u8>> {
        let read = async {
            let mut object = self.shards.get(name).await.map_err(fail(name))?;
            let mut bytes = Vec::with_capacity(PART_BYTES);
            object.read_to_end(&mut bytes).await.map_err(fail(name))?;
            Ok::<_, RemoteError>(bytes)
        };
        tokio::time::timeout(PART_TIMEOUT, read)
            .await
            .map_err(|_| RemoteError::new(format!("{name}: timed out")))?
    }

    /// Claims the build of `key`: true when this process won it (no one else
    /// holds a live claim).
    pub fn claim(&self, key: &CacheKey) -> Result<bool> {
        let value = bytes::Bytes::from(self.me.clone());
        let created = self
            .rt
            .block_on(bounded(self.claims.create(key.as_str(), value)))?;
        match created {
            Ok(_) => {
                let claims = self.claims.clone();
                let (name, me) = (key.as_str().to_string(), self.me.clone());
                let renew = self.rt.spawn(async move {
                    loop {
                        tokio::time::sleep(CLAIM_RENEW).await;
                        let _ = claims.put(&name, bytes::Bytes::from(me.clone())).await;
                    }
                });
                if let Ok(mut held) = self.renewing.lock() {
                    held.insert(key.as_str().to_string(), renew);
                }
                Ok(true)
            }
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(fail("claim")(e)),
        }
    }

    /// Whether someone holds a live claim on `key`.
    pub fn claimed(&self, key: &CacheKey) -> Result<bool> {
        let got = self.rt.block_on(bounded(self.claims.get(key.as_str())))?;
        Ok(got.map_err(fail("claim read"))?.is_some())
    }

    /// Removes the manifest under `key` (its shard failed verification), so
    /// the next build publishes a good one.
    pub fn forget(&self, key: &CacheKey) {
        let _ = self.rt.block_on(bounded(self.catalog.delete(key.as_str())));
    }

    /// Gives up this process's claim on `key`.
    pub fn release(&self, key: &CacheKey) {
        if let Some(renew) = self
            .renewing
            .lock()
            .ok()
            .and_then(|mut h| h.remove(key.as_str()))
        {
            renew.abort();
        }
        let _ = self.rt.block_on(bounded(self.claims.delete(key.as_str())));
    }

    /// Uploads the shard at `shard` in parts, then its manifest under `key`.
    /// Returns false when another publisher's manifest was there first.
    pub fn publish(
        &self,
        key: &CacheKey,
        tree: &str,
        shard: &lode_index::shard::ShardInfo,
    ) -> Result<bool> {
        let bytes = std::fs::read(&shard.path).map_err(fail("cannot read the shard"))?;
        let mut parts = Vec::new();
        for (i, part) in bytes.chunks(PART_BYTES).enumerate() {
            let name = part_name(&shard.hash, i);
            let mut reader = part;
            self.rt.block_on(async {
                tokio::time::timeout(
                    PART_TIMEOUT,
                    self.shards.put(
                        object_store::ObjectMetadata {
                            name: name.clone(),
                            chunk_size: Some(CHUNK_BYTES),
                            ..Default::default()
                        },
                        &mut reader,
                    ),
                )
                .await
                .map_err(|_| RemoteError::new(format!("{name}: timed out")))?
                .map_err(fail(&name))
            })?;
            parts.push(blake3::hash(part).to_hex().to_string());
        }
        let manifest = Manifest {
            format: MANIFEST_FORMAT,
            key: key.as_str().to_string(),
            tree: tree.to_string(),
            fingerprint: shard.fingerprint.clone(),
            lode_version: shard.lode_version.clone(),
            shard: shard.hash.clone(),
            bytes: shard.bytes,
            parts,
        };
        let value = serde_json::to_vec(&manifest).map_err(fail("manifest"))?;
        let created = self
            .rt
            .block_on(bounded(self.catalog.create(key.as_str(), value.into())))?;
        match created {
            Ok(_) => Ok(true),
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => Ok(false),
            Err(e) => Err(fail("catalog write")(e)),
        }
    }
}

fn part_name(shard: &str, i: usize) -> String {
    format!("{shard}.{i}")
}

/// One request, under [`REQUEST_TIMEOUT`].
pub(crate) async fn bounded<T>(f: impl std::future::Future<Output = T>) -> Result<T> {
    tokio::time::timeout(REQUEST_TIMEOUT, f)
        .await
        .map_err(|_| RemoteError::new("the server did not answer in time"))
}

async fn options(config: &RemoteConfig) -> Result<async_nats::ConnectOptions> {
    let mut options = async_nats::ConnectOptions::new()
        .name("lode")
        .connection_timeout(CONNECT_TIMEOUT)
        .request_timeout(Some(REQUEST_TIMEOUT));
    if let Some(user) = &config.user {
        let Some(var) = &config.password_env else {
            return Err(RemoteError::new(
                "remote.user is set without remote.password_env",
            ));
        };
        let password = std::env::var(var).map_err(|_| {
            RemoteError::new(format!("remote.password_env names {var}, which is not set"))
        })?;
        options = options.user_and_password(user.clone(), password);
    }
    if let Some(creds) = &config.creds_file {
        options = options
            .credentials_file(creds)
            .await
            .map_err(fail("remote.creds_file"))?;
    }
    if let Some(ca) = &config.tls_ca_file {
        options = options.add_root_certificates(ca.clone()).require_tls(true);
    }
    Ok(options)
}

/// Opens a KV bucket, creating it when it is missing (replicated three ways
/// on a cluster, once on a single server).
pub(crate) async fn open_kv(
    js: &jetstream::Context,
    bucket: &str,
    max_age: Duration,
) -> Result<kv::Store> {
    if let Ok(Ok(store)) = tokio::time::timeout(REQUEST_TIMEOUT, js.get_key_value(bucket)).await {
        return Ok(store);
    }
    with_replicas(&format!("bucket {bucket}"), |replicas| {
        js.create_key_value(kv::Config {
            bucket: bucket.to_string(),
            history: 1,
            max_age,
            num_replicas: replicas,
            ..Default::default()
        })
    })
    .await
}

/// Creates what `create` makes with three replicas, or with one where the
/// server is not a cluster.
pub(crate) async fn with_replicas<T, E, F>(what: &str, create: impl Fn(usize) -> F) -> Result<T>
where
    E: std::fmt::Display,
    F: std::future::Future<Output = std::result::Result<T, E>>,
{
    let mut last = String::new();
    for replicas in REPLICAS {
        match bounded(create(replicas)).await? {
            Ok(made) => return Ok(made),
            Err(e) => last = e.to_string(),
        }
    }
    Err(RemoteError::new(format!("cannot open {what}: {last}")))
}

async fn open_objects(js: &jetstream::Context) -> Result<object_store::ObjectStore> {
    if let Ok(Ok(store)) = tokio::time::timeout(REQUEST_TIMEOUT, js.get_object_store(SHARDS)).await
    {
        return Ok(store);
    }
    with_replicas(&format!("bucket {SHARDS}"), |replicas| {
        js.create_object_store(object_store::Config {
            bucket: SHARDS.to_string(),
            num_replicas: replicas,
            ..Default::default()
        })
    })
    .await
}
