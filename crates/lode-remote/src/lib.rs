//! The shared index cache: prebuilt indexes of git trees, kept on NATS
//! JetStream, so a fleet of runners builds each tree once.
//!
//! - [`CacheKey`]: what decides an index's content (the root's git tree,
//!   the schema, the build fingerprint), hashed; equal keys, equal indexes.
//! - [`Remote`]: the JetStream buckets — a catalog of [`Manifest`]s (Key-Value,
//!   written with `create`), claims on builds (Key-Value with a time to live)
//!   and the shards' parts (Object Store, each part hashed in the manifest).
//! - [`index`]: `lode index --remote` — fetch this tree's shard, or wait for
//!   the runner that claimed its build, or start from an ancestor's, then
//!   build locally and publish; any remote failure is a note and a local build.
//! - [`git::checkout`]: the tree, cleanliness and history of the root.
//! - [`Job`], [`Remote::enqueue`], [`builder::serve`]: build jobs on a
//!   JetStream work queue, deduplicated by `repo@commit`, acknowledged once
//!   the shard is stored and the repository catalog ([`RepoEntry`], updated
//!   by compare-and-swap, never to an older commit) names it.
//! - [`serve::serve_node`], [`Remote::scatter`]: shard nodes holding
//!   partitions of the repositories (rendezvous hashing over heartbeating
//!   members), and the scatter-gather that asks them under a deadline;
//!   [`answers`] merges and renders what it gathers, for the CLI and
//!   `lode mcp --remote` alike.
//! - [`access`]: the allow-list of each client identity, applied by the
//!   shard nodes to every answer.
//! - [`Remote::init`]: `lode cluster init`, every bucket and stream made up
//!   front and reported ([`Held`]).
//!
//! ```no_run
//! use lode_core::{Config, RemoteConfig};
//! use lode_index::{BuildOptions, IndexLocation};
//!
//! let config = Config::default();
//! let location = IndexLocation::resolve("repo".as_ref(), None)?;
//! let cache = lode_remote::SharedCache {
//!     url: "nats://127.0.0.1:4222",
//!     settings: &RemoteConfig::default(),
//!     location: &location,
//!     config: &config,
//!     note: &|m| eprintln!("{m}"),
//! };
//! let (_built, report) =
//!     lode_remote::index(&cache, &mut || lode_index::build(&location, &BuildOptions::quiet(&config)))?;
//! println!("{:?}", report.outcome);
//! # Ok::<(), lode_core::Error>(())
//! ```

#![deny(missing_docs)]

pub mod access;
pub mod answers;
pub mod builder;
mod cache;
mod cluster;
pub mod git;
mod jobs;
mod key;
mod reply;
pub mod serve;
mod store;

pub use cache::{Outcome, RemoteReport, SharedCache, Transfer, index};
pub use cluster::Held;
pub use jobs::{Delivery, Enqueued, Job, Recorded, RepoEntry, repo_key, repo_name};
pub use key::CacheKey;
pub use store::{Manifest, PART_BYTES, Remote, RemoteError};
