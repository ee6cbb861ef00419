//! The chain fixture, indexed in a temporary cache, and searches over it.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use lode_core::Config;
use lode_index::{Index, IndexLocation, RefreshOptions};
use lode_search::{SearchOptions, SearchResults};
use lode_test_support::copy_dir;

pub struct Fixture {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
    pub loc: IndexLocation,
}

pub fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/chain")
}

impl Fixture {
    /// A copy of `tests/fixtures/chain`, indexed.
    pub fn chain() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(&fixture_dir(), dir.path());
        let cache = tempfile::tempdir().unwrap();
        let loc = IndexLocation::resolve(dir.path(), Some(cache.path())).unwrap();
        let f = Fixture { dir, cache, loc };
        drop(f.index());
        f
    }

    /// The index, refreshed.
    pub fn index(&self) -> Index {
        let config = Config::default();
        lode_index::refresh(&self.loc, &RefreshOptions::new(&config))
            .unwrap()
            .0
    }

    /// The index as last built, without looking at the tree.
    pub fn committed(&self) -> Index {
        Index::open(&self.loc).unwrap()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }
}

/// A lexical search (deterministic and quick) with `k` hits.
pub fn search(index: &Index, query: &str, k: usize) -> SearchResults {
    let opts = SearchOptions {
        top_k: k,
        semantic: false,
        ..SearchOptions::default()
    };
    lode_search::search(index, query, &opts).unwrap()
}
