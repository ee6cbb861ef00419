//! Which files of a repository lode indexes, and how a refresh proves that
//! set unchanged without walking again.
//!
//! The principal types and how they fit:
//!
//! - [`walk()`] lists the files the [`lode_core::FilePolicy`] admits
//!   ([`WalkedFile`]: root-relative path, size, mtime), counting the others
//!   by [`SkipReason`] (hidden, vendored, generated, minified, binary, too
//!   large, excluded, outside the root, …), in a [`WalkReport`]. It follows
//!   `.gitignore` and the other ignore files (the `ignore` crate, as ripgrep
//!   does) and never leaves the root.
//! - A full walk also records a [`snapshot::Snapshot`]: every directory it
//!   entered with its mtime, and the files whose change could change its
//!   answer. [`snapshot::quick_walk`] later proves the same answer by `stat`
//!   alone, against what the index recorded of each file
//!   ([`snapshot::Recorded`], by path in a [`snapshot::Manifest`]);
//!   [`snapshot::changed_walk`] does so for the paths a file watcher saw
//!   written.
//! - [`content_reason`] and [`path_reason`] are the walk's rules for one
//!   file's bytes or path, for what is not on disk (an overlay's files).
//!
//! `lode-index` owns the manifest (its `files` table) and decides when to
//! walk; this crate only answers what the tree holds.
//!
//! ```no_run
//! use lode_core::FilePolicy;
//! let report = lode_walk::walk(std::path::Path::new("."), &FilePolicy::default())?;
//! for (reason, n) in &report.skipped {
//!     eprintln!("{n} skipped: {}", reason.as_str());
//! }
//! println!("{} files to index", report.files.len());
//! # Ok::<(), lode_core::Error>(())
//! ```

#![deny(missing_docs)]

pub mod snapshot;
mod walk;

pub use walk::{SkipReason, WalkReport, WalkedFile, content_reason, path_reason, walk};
