//! Shards: an index as one self-contained, read-only file, to hand from the
//! machine that built it to one that would otherwise build it again (a CI
//! runner, an agent sandbox).
//!
//! A shard is the database written out whole (`VACUUM INTO`, through the
//! page-checking VFS, so every page keeps its check), named by the BLAKE3
//! hash of its bytes: `<hash>.lodeshard`. What it was built with (schema,
//! extraction rules, config and model fingerprint) is in its own `meta`
//! table, so it carries no second manifest. [`export`] writes one;
//! [`install`] checks one (its name against its bytes, its schema, its
//! fingerprint against this config) and makes it the index of a root, under
//! the writer lock. The next refresh `stat`s the tree: files whose size and
//! mtime differ (another machine's checkout) are hashed again and kept when
//! their content is the same, so nothing is parsed or embedded twice.

use std::path::{Path, PathBuf};

use lode_core::{Config, Error, Result};
use serde::Serialize;

use crate::meta::Meta;
use crate::{Index, IndexLocation, Store, WriterLock};

/// The file name's ending.
pub const EXTENSION: &str = "lodeshard";

/// What a shard holds, read from its own `meta` table.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ShardInfo {
    /// The shard's file.
    pub path: PathBuf,
    /// BLAKE3 of the file's bytes, hex: its name.
    pub hash: String,
    /// Size of the file in bytes.
    pub bytes: u64,
    /// What it was built with: lode version, extraction rules, config and
    /// model (the build's fingerprint).
    pub fingerprint: String,
    /// The lode version that built it.
    pub lode_version: String,
    /// The build generation it was written at.
    pub generation: u64,
}

/// Writes the committed state of `index` as a shard in `dir` (created if
/// need be); returns what it wrote. An existing shard of the same bytes is
/// kept as it is.
pub fn export(index: &Index, dir: &Path) -> Result<ShardInfo> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let tmp = dir.join(format!(".export-{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let store = index.store();
    store
        .connection()
        .execute("VACUUM INTO ?1", [tmp.to_string_lossy()])
        .map_err(|e| crate::store::sql_err(store.path(), e))?;
    // A copy larger than the cache gets page 1 last: check every page.
    crate::pagecheck::seal(&tmp).map_err(|e| Error::io(&tmp, e))?;
    let hash = hash_file(&tmp)?;
    let path = dir.join(format!("{hash}.{EXTENSION}"));
    std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))?;
    read_info(&path, hash)
}

/// Checks the shard at `shard` and makes it the index of `loc`, replacing
/// what was there; `config` must be what the shard was built with.
pub fn install(loc: &IndexLocation, shard: &Path, config: &Config) -> Result<ShardInfo> {
    install_as(loc, shard, config, false)
}

/// As [`install`], moving the file into the index instead of copying it: for
/// a download of the caller's own, on the index's file system (its cache
/// directory). The file is gone afterwards, installed or not.
pub fn install_moving(loc: &IndexLocation, shard: &Path, config: &Config) -> Result<ShardInfo> {
    let installed = install_as(loc, shard, config, true);
    let _ = std::fs::remove_file(shard);
    installed
}

fn install_as(
    loc: &IndexLocation,
    shard: &Path,
    config: &Config,
    moving: bool,
) -> Result<ShardInfo> {
    let bad = |why: String| Error::BadQuery(format!("{}: {why}", shard.display()));
    if !shard.is_file() {
        return Err(Error::NoSuchPath(shard.to_path_buf()));
    }
    let named = shard
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_suffix(&format!(".{EXTENSION}")))
        .ok_or_else(|| bad(format!("not a shard: its name is not <hash>.{EXTENSION}")))?;
    let hash = hash_file(shard)?;
    if hash != named {
        return Err(bad(format!(
            "damaged: its bytes hash to {hash}, not to its name"
        )));
    }
    let info = read_info(shard, hash).map_err(|e| bad(e.to_string()))?;
    let want = crate::fingerprint(config);
    if info.fingerprint != want {
        return Err(bad(
            "built with another lode version, config or model than this one".into(),
        ));
    }
    let _lock = WriterLock::acquire(loc, true, &|_| {})?;
    let db = loc.fresh_db_path();
    let placed = if moving {
        std::fs::rename(shard, &db).or_else(|_| std::fs::copy(shard, &db).map(|_| ()))
    } else {
        std::fs::copy(shard, &db).map(|_| ())
    };
    placed.map_err(|e| Error::io(&db, e))?;
    // The copy must open as an index before it becomes CURRENT.
    Store::open(&db)?;
    loc.set_current(&db)?;
    loc.remove_other_dbs(&db);
    Ok(info)
}

/// What the shard at `path` holds, read without writing to it.
fn read_info(path: &Path, hash: String) -> Result<ShardInfo> {
    let conn = crate::store::open_read_only(path)?;
    let meta = |key| {
        crate::meta::get(&conn, key)
            .map(Option::unwrap_or_default)
            .map_err(|e| crate::store::sql_err(path, e))
    };
    let schema = meta(Meta::SchemaVersion)?;
    if schema != crate::SCHEMA_VERSION.to_string() {
        return Err(Error::IndexCorrupt {
            path: path.to_path_buf(),
            reason: format!(
                "schema version {schema:?} (this lode uses {})",
                crate::SCHEMA_VERSION
            ),
        });
    }
    let bytes = std::fs::metadata(path)
        .map_err(|e| Error::io(path, e))?
        .len();
    Ok(ShardInfo {
        path: path.to_path_buf(),
        hash,
        bytes,
        fingerprint: meta(Meta::Fingerprint)?,
        lode_version: meta(Meta::LodeVersion)?,
        generation: meta(Meta::Generation)?.parse().unwrap_or(0),
    })
}

fn hash_file(path: &Path) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = blake3::Hasher::new();
    std::io::copy(&mut file, &mut hasher).map_err(|e| Error::io(path, e))?;
    Ok(hasher.finalize().to_hex().to_string())
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::{BuildOptions, Freshness, RefreshOptions, build, refresh};

    fn tree(dir: &Path) -> PathBuf {
        let root = dir.join("repo");
        fs::create_dir_all(root.join("src")).unwrap();
        fs::write(
            root.join("src/a.py"),
            "def parse_config(path):\n    return path\n",
        )
        .unwrap();
        fs::write(
            root.join("src/b.py"),
            "def load():\n    return parse_config(1)\n",
        )
        .unwrap();
        root
    }

    #[test]
    fn a_shard_installed_elsewhere_answers_without_parsing_again() {
        let tmp = tempfile::tempdir().unwrap();
        let config = Config::default();
        // Built on one machine...
        let root = tree(tmp.path());
        let built = IndexLocation::resolve(&root, Some(&tmp.path().join("cache-a"))).unwrap();
        build(&built, &BuildOptions::quiet(&config)).unwrap();
        let info = export(&Index::open(&built).unwrap(), &tmp.path().join("shards")).unwrap();
        assert_eq!(
            info.path.file_name().unwrap().to_str().unwrap(),
            format!("{}.{EXTENSION}", info.hash)
        );
        // Its pages keep their checks.
        let header = fs::read(&info.path).unwrap();
        assert_eq!(header[20], crate::pagecheck::RESERVE);
        // ...installed on another, the tree's copy with other mtimes.
        let other = tmp.path().join("elsewhere");
        fs::create_dir_all(&other).unwrap();
        let root2 = tree(&other);
        let loc = IndexLocation::resolve(&root2, Some(&tmp.path().join("cache-b"))).unwrap();
        assert_eq!(install(&loc, &info.path, &config).unwrap().hash, info.hash);
        let (index, freshness) = refresh(&loc, &RefreshOptions::new(&config)).unwrap();
        match freshness {
            Freshness::Refreshed(report) => assert_eq!(report.parsed, 0, "{report:?}"),
            Freshness::Fresh => {}
            other => panic!("{other:?}"),
        }
        assert_eq!(index.symbols_named("parse_config").unwrap().len(), 1);
        // A changed file is parsed as in any update.
        fs::write(root2.join("src/b.py"), "def load_all():\n    return 2\n").unwrap();
        let (index, _) = refresh(&loc, &RefreshOptions::new(&config)).unwrap();
        assert_eq!(index.symbols_named("load_all").unwrap().len(), 1);
    }

    #[test]
    fn a_shard_moved_in_is_installed_and_gone_from_where_it_was() {
        let tmp = tempfile::tempdir().unwrap();
        let config = Config::default();
        let root = tree(tmp.path());
        let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
        build(&loc, &BuildOptions::quiet(&config)).unwrap();
        let info = export(&Index::open(&loc).unwrap(), &tmp.path().join("shards")).unwrap();
        let other = IndexLocation::resolve(&root, Some(&tmp.path().join("cache-2"))).unwrap();
        assert_eq!(
            install_moving(&other, &info.path, &config).unwrap().hash,
            info.hash
        );
        assert!(!info.path.exists());
        let index = Index::open(&other).unwrap();
        assert_eq!(index.symbols_named("parse_config").unwrap().len(), 1);
        // A damaged one is refused, and removed too.
        let again = export(&Index::open(&loc).unwrap(), &tmp.path().join("shards")).unwrap();
        let mut bytes = fs::read(&again.path).unwrap();
        let n = bytes.len();
        bytes[n / 3] ^= 4;
        fs::write(&again.path, &bytes).unwrap();
        assert!(install_moving(&other, &again.path, &config).is_err());
        assert!(!again.path.exists());
        assert!(Index::open(&other).is_ok());
    }

    #[test]
    fn a_damaged_or_foreign_shard_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let config = Config::default();
        let root = tree(tmp.path());
        let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
        build(&loc, &BuildOptions::quiet(&config)).unwrap();
        let info = export(&Index::open(&loc).unwrap(), &tmp.path().join("shards")).unwrap();
        // A byte changed: the name no longer matches.
        let mut bytes = fs::read(&info.path).unwrap();
        let n = bytes.len();
        bytes[n / 2] ^= 1;
        let damaged = tmp.path().join(format!("{}.{EXTENSION}", info.hash));
        fs::write(&damaged, &bytes).unwrap();
        let err = install(&loc, &damaged, &config).unwrap_err().to_string();
        assert!(err.contains("damaged"), "{err}");
        // Another config: refused, the index left as it was.
        let mut narrow = Config::default();
        narrow.files.max_file_size = 123;
        let err = install(&loc, &info.path, &narrow).unwrap_err().to_string();
        assert!(err.contains("another"), "{err}");
        assert!(Index::open(&loc).is_ok());
        // Named by its bytes, but of another schema: refused, said why.
        let other = tmp.path().join("other.db");
        fs::copy(&info.path, &other).unwrap();
        crate::open_database(&other)
            .unwrap()
            .execute(
                "UPDATE meta SET value = '1' WHERE key = 'schema_version'",
                [],
            )
            .unwrap();
        let renamed = tmp
            .path()
            .join(format!("{}.{EXTENSION}", hash_file(&other).unwrap()));
        fs::rename(&other, &renamed).unwrap();
        let err = install(&loc, &renamed, &config).unwrap_err().to_string();
        assert!(err.contains("schema version"), "{err}");
        // Not named as a shard.
        let plain = tmp.path().join("index.db");
        fs::copy(&info.path, &plain).unwrap();
        assert!(install(&loc, &plain, &config).is_err());
    }
}
