//! `lode cluster init`: every bucket and stream lode keeps in JetStream,
//! created up front (as a first use would) and reported with its
//! replication, so that clients with read-only permissions never need to
//! create one.

use std::time::Duration;

use serde::Serialize;

use crate::access::ACCESS;
use crate::jobs::{REPOS, STREAM};
use crate::serve::{NODE_TTL, NODES};
use crate::store::{CATALOG, CLAIMS, Remote, Result, SHARDS, bounded, fail, open_kv};

/// One thing lode keeps in JetStream.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Held {
    /// Its name (`lode-cache`, `LODE_JOBS`, …).
    pub name: String,
    /// `kv`, `object store` or `stream`.
    pub kind: &'static str,
    /// The stream that holds it (a bucket is a stream: `KV_lode-cache`).
    pub stream: String,
    /// Copies the cluster keeps (1 on a single server).
    pub replicas: usize,
    /// Messages in it: entries, object chunks or jobs.
    pub messages: u64,
    /// Bytes stored.
    pub bytes: u64,
}

/// What lode keeps, each as (name, kind, its stream).
fn layout() -> [(&'static str, &'static str, String); 7] {
    [
        (CATALOG, "kv", format!("KV_{CATALOG}")),
        (CLAIMS, "kv", format!("KV_{CLAIMS}")),
        (SHARDS, "object store", format!("OBJ_{SHARDS}")),
        (REPOS, "kv", format!("KV_{REPOS}")),
        (NODES, "kv", format!("KV_{NODES}")),
        (ACCESS, "kv", format!("KV_{ACCESS}")),
        (STREAM, "stream", STREAM.to_string()),
    ]
}

impl Remote {
    /// Creates whatever of lode's buckets and streams is missing (the cache's
    /// own are made on connecting) and reports each one.
    pub fn init(&self) -> Result<Vec<Held>> {
        self.rt.block_on(async {
            open_kv(&self.js, REPOS, Duration::ZERO).await?;
            open_kv(&self.js, NODES, NODE_TTL).await?;
            open_kv(&self.js, ACCESS, Duration::ZERO).await?;
            self.jobs_stream().await?;
            let mut held = Vec::new();
            for (name, kind, stream) in layout() {
                let info = bounded(self.js.get_stream(&stream))
                    .await?
                    .map_err(fail(name))?
                    .get_info()
                    .await
                    .map_err(fail(name))?;
                held.push(Held {
                    name: name.to_string(),
                    kind,
                    stream,
                    replicas: info.config.num_replicas,
                    messages: info.state.messages,
                    bytes: info.state.bytes,
                });
            }
            Ok(held)
        })
    }
}
