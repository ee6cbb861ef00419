//! Shared helpers: a fixture repository in a temporary directory, and the
//! real `lode` binary run against it with its own cache ([`Repo`]); the
//! entry of a backend in `lode doctor`'s JSON ([`backend`]); `lode mcp`
//! spoken to in raw JSON-RPC lines ([`raw`]).

#![allow(dead_code)]

pub mod raw;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use lode_test_support::copy_dir;
use serde_json::Value;

pub struct Repo {
    pub dir: tempfile::TempDir,
    pub cache: tempfile::TempDir,
}

impl Repo {
    pub fn empty() -> Repo {
        Repo {
            dir: tempfile::tempdir().unwrap(),
            cache: tempfile::tempdir().unwrap(),
        }
    }

    /// A copy of `tests/fixtures/NAME`.
    pub fn fixture(name: &str) -> Repo {
        let repo = Repo::empty();
        copy_dir(
            &Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures")
                .join(name),
            repo.dir.path(),
        );
        repo
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let p = self.path(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lode"));
        cmd.args(args)
            .arg("--root")
            .arg(self.dir.path())
            .arg("--cache-dir")
            .arg(self.cache.path())
            .env("XDG_CONFIG_HOME", self.cache.path().join("config"))
            .env_remove("LODE_CACHE_DIR");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// Runs and expects success; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "lode {args:?} failed with {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Runs with `--json` and parses stdout, whatever the exit status.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.run(&a);
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "lode {a:?}: bad JSON ({e}): {}\nstderr: {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// The paths and symbols of a search's hits, in order.
    pub fn search_hits(&self, query: &str) -> Vec<(String, Option<String>)> {
        let v = self.json(&["search", query]);
        v["hits"]
            .as_array()
            .unwrap_or_else(|| panic!("no hits array: {v}"))
            .iter()
            .map(|h| {
                (
                    h["path"].as_str().unwrap().to_string(),
                    h["symbol"].as_str().map(str::to_string),
                )
            })
            .collect()
    }

    /// The index directory inside the cache (there is one per repository).
    /// Holds the writer lock the way another lode process (pid 4242) would.
    pub fn hold_lock(&self) -> std::fs::File {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(self.index_dir().join("lock"))
            .unwrap();
        f.lock().unwrap();
        f.set_len(0).unwrap();
        f.write_all(b"4242").unwrap();
        f
    }

    /// The index's current database file.
    pub fn database(&self) -> PathBuf {
        let dir = self.index_dir();
        let name = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
        dir.join(name.trim())
    }

    pub fn index_dir(&self) -> PathBuf {
        std::fs::read_dir(self.cache.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.is_dir() && p.file_name().unwrap() != "config")
            .expect("an index directory")
    }
}

/// The entry of backend `name` (`embedding`, `gather decision model`, …)
/// in the JSON of `lode doctor`.
pub fn backend<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["backends"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["name"] == name)
        .unwrap_or_else(|| panic!("no backend {name}: {v}"))
}

/// A copy of the built-in model's files: a valid local model2vec directory.
pub fn model_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lode-embed/model");
    for f in ["config.json", "model.safetensors", "tokenizer.json"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    dir
}
