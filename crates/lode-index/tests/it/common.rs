//! What several modules share: a repository in a temporary directory with
//! its index cache beside it.

use std::path::PathBuf;

use lode_core::Config;
use lode_index::{Index, IndexLocation};

/// A temporary directory holding the repository `repo/` and the index cache
/// `cache/`, and the config the index is built with. The modules add their
/// own setups and steps (`impl Fixture` in each).
pub struct Fixture {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub loc: IndexLocation,
    pub config: Config,
}

impl Fixture {
    /// An empty `repo/`, the default config.
    pub fn empty() -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
        Fixture {
            _tmp: tmp,
            root,
            loc,
            config: Config::default(),
        }
    }

    /// The index as last built.
    pub fn index(&self) -> Index {
        Index::open(&self.loc).unwrap()
    }
}
