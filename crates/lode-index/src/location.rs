//! Where an index lives, which database file is current, and the writer lock.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use lode_core::{Error, Result};

/// The cache directory of one repository's index:
/// `<base>/<name>-<hash>/` where `<base>` is `--cache-dir`, `$LODE_CACHE_DIR`,
/// `$XDG_CACHE_HOME/lode` or `~/.cache/lode`, in that order.
///
/// Inside: `CURRENT` names the live database file (`index-N.db`), replaced
/// atomically; `lock` is held by the one process writing files, chunks and
/// postings, `embed.lock` by the one embedding phase (see `embed`).
#[derive(Clone, Debug)]
pub struct IndexLocation {
    /// The repository root, canonical.
    pub root: PathBuf,
    /// This repository's directory in the cache.
    pub dir: PathBuf,
}

impl IndexLocation {
    /// Resolves the index location of `root`. Fails when `root` is missing or not a directory.
    pub fn resolve(root: &Path, cache_dir: Option<&Path>) -> Result<IndexLocation> {
        let meta = std::fs::metadata(root).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => Error::NoSuchPath(root.to_path_buf()),
            _ => Error::io(root, e),
        })?;
        if !meta.is_dir() {
            return Err(Error::NotADirectory(root.to_path_buf()));
        }
        let root = root.canonicalize().map_err(|e| Error::io(root, e))?;
        let base = lode_core::cache_base(cache_dir)?;
        let name: String = root
            .file_name()
            .map(|n| {
                n.to_string_lossy()
                    .chars()
                    .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    .take(40)
                    .collect()
            })
            .filter(|n: &String| !n.is_empty())
            .unwrap_or_else(|| "root".to_string());
        let hash = blake3::hash(root.as_os_str().as_encoded_bytes()).to_hex();
        let dir = base.join(format!("{name}-{}", &hash[..16]));
        Ok(IndexLocation { root, dir })
    }

    /// This repository's id: the hash in its directory's name (a blake3 of
    /// the canonical root). Diagnostics name a repository by it, not by path.
    pub fn id(&self) -> String {
        self.dir
            .file_name()
            .map(|n| n.to_string_lossy())
            .and_then(|n| n.rsplit_once('-').map(|(_, h)| h.to_string()))
            .unwrap_or_default()
    }

    /// The current database file, if an index was ever completed.
    pub fn current_db(&self) -> Option<PathBuf> {
        let name = std::fs::read_to_string(self.dir.join("CURRENT")).ok()?;
        let name = name.trim();
        if name.is_empty() || name.contains('/') || name.contains("..") {
            return None;
        }
        let path = self.dir.join(name);
        path.exists().then_some(path)
    }

    /// Points `CURRENT` at `db` atomically (write, sync, rename).
    pub fn set_current(&self, db: &Path) -> Result<()> {
        let name = db
            .file_name()
            .and_then(|n| n.to_str())
            .expect("db file name");
        let tmp = self.dir.join("CURRENT.tmp");
        let mut f = File::create(&tmp).map_err(|e| self.cache_error(e))?;
        f.write_all(format!("{name}\n").as_bytes())
            .map_err(|e| self.cache_error(e))?;
        f.sync_all().map_err(|e| self.cache_error(e))?;
        std::fs::rename(&tmp, self.dir.join("CURRENT")).map_err(|e| self.cache_error(e))?;
        // A new current database is not the damaged one.
        let _ = std::fs::remove_file(self.dir.join(DAMAGED));
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }

    /// Creates the cache directory, reporting an unwritable cache clearly.
    pub fn ensure_dir(&self) -> Result<()> {
        std::fs::create_dir_all(&self.dir).map_err(|e| self.cache_error(e))?;
        let root = self.root.to_string_lossy();
        // A directory that already names its root was set up before: the writer
        // lock's open right after reports an unwritable one as clearly, and
        // every update would otherwise pay the probe's create and unlink and the
        // root file's rewrite (~1 ms of journalled metadata writes).
        if std::fs::read_to_string(self.dir.join("root")).is_ok_and(|r| r == root) {
            return Ok(());
        }
        let probe = self.dir.join(".probe");
        File::create(&probe).map_err(|e| self.cache_error(e))?;
        let _ = std::fs::remove_file(probe);
        let _ = std::fs::write(self.dir.join("root"), root.as_bytes());
        Ok(())
    }

    /// `e`, met writing in this index's cache directory, as
    /// [`Error::CacheUnwritable`] naming the directory.
    pub fn cache_error(&self, e: std::io::Error) -> Error {
        Error::CacheUnwritable {
            path: self.dir.clone(),
            reason: e.to_string(),
        }
    }

    /// A database file name not used yet in this directory.
    pub fn fresh_db_path(&self) -> PathBuf {
        let mut n = 1u64;
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if let Some(num) = name
                    .strip_prefix("index-")
                    .and_then(|s| s.split('.').next())
                    .and_then(|s| s.parse::<u64>().ok())
                {
                    n = n.max(num + 1);
                }
            }
        }
        self.dir.join(format!("index-{n}.db"))
    }

    /// Why the current database was marked damaged ([`mark_damaged`]), if it was.
    pub fn damaged(&self) -> Option<String> {
        let current = self.current_db()?;
        let text = std::fs::read_to_string(self.dir.join(DAMAGED)).ok()?;
        let (name, reason) = text.split_once('\n')?;
        (current.file_name()? == name).then(|| reason.trim().to_string())
    }

    /// Removes the database files a killed build left (all but the current
    /// one and its logs). Call it under the writer lock: only a build makes
    /// new ones.
    pub fn remove_stale_dbs(&self) {
        match self.current_db() {
            Some(current) => self.remove_other_dbs(&current),
            None => {
                let Ok(entries) = std::fs::read_dir(&self.dir) else {
                    return;
                };
                for e in entries.flatten() {
                    if e.file_name().to_string_lossy().starts_with("index-") {
                        let _ = std::fs::remove_file(e.path());
                    }
                }
            }
        }
    }

    /// Removes database files other than `keep` (left behind by rebuilds or crashes).
    pub fn remove_other_dbs(&self, keep: &Path) {
        let keep_name = keep
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        if let Ok(entries) = std::fs::read_dir(&self.dir) {
            for e in entries.flatten() {
                let name = e.file_name().to_string_lossy().to_string();
                if name.starts_with("index-") && !name.starts_with(&keep_name) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }
}

/// Names the database a query found damaged, and why.
const DAMAGED: &str = "DAMAGED";

/// Marks the database file `db` damaged: a query met data it cannot decode.
/// Opening it then fails as an unreadable index does, and the next build
/// makes a fresh one, as for an index unreadable when opened.
pub fn mark_damaged(db: &Path, reason: &str) {
    let (Some(dir), Some(name)) = (db.parent(), db.file_name()) else {
        return;
    };
    let text = format!(
        "{}\n{}\n",
        name.to_string_lossy(),
        reason.replace('\n', " ")
    );
    let _ = std::fs::write(dir.join(DAMAGED), text);
}

/// The lock held by the process that writes an index's files, chunks and
/// postings (a build's lexical phase). Dropping it releases it.
pub struct WriterLock {
    _file: File,
}

impl WriterLock {
    /// Takes the lock; when another process holds it, waits if `wait` (calling
    /// `on_wait` once with the holder's pid) or fails with [`Error::Locked`].
    pub fn acquire(loc: &IndexLocation, wait: bool, on_wait: &dyn Fn(&str)) -> Result<WriterLock> {
        loc.ensure_dir()?;
        match lock_file(loc, "lock", wait, on_wait)? {
            Ok(file) => Ok(WriterLock { _file: file }),
            Err(pid) => Err(Error::Locked {
                root: loc.root.clone(),
                pid,
            }),
        }
    }

    /// True when some process holds the writer lock of `loc` right now.
    pub fn is_held(loc: &IndexLocation) -> Option<String> {
        let mut file = File::open(loc.dir.join("lock")).ok()?;
        match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                None
            }
            Err(_) => Some(holder_pid(&mut file)),
        }
    }
}

/// The lock held by the one embedding phase of an index (`embed.lock`),
/// apart from the writer lock: the phase commits batch by batch between
/// builds, and a build must never wait for it.
pub struct EmbedLock {
    _file: File,
}

impl EmbedLock {
    /// Takes the lock, waiting for another holder if `wait` (calling
    /// `on_wait` once with its pid); `None` when another process or thread
    /// holds it and `wait` is false.
    pub fn acquire(
        loc: &IndexLocation,
        wait: bool,
        on_wait: &dyn Fn(&str),
    ) -> Result<Option<EmbedLock>> {
        // (No `ensure_dir`: a phase runs on an index, whose directory exists.)
        Ok(lock_file(loc, "embed.lock", wait, on_wait)?
            .ok()
            .map(|file| EmbedLock { _file: file }))
    }
}

/// Locks `<dir>/name` exclusively (and writes this pid into it), or says
/// which pid holds it when it is held and `wait` is false.
fn lock_file(
    loc: &IndexLocation,
    name: &str,
    wait: bool,
    on_wait: &dyn Fn(&str),
) -> Result<std::result::Result<File, String>> {
    let path = loc.dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| loc.cache_error(e))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let pid = holder_pid(&mut file);
            if !wait {
                return Ok(Err(pid));
            }
            on_wait(&pid);
            file.lock().map_err(|e| loc.cache_error(e))?;
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(loc.cache_error(e)),
    }
    file.set_len(0).map_err(|e| loc.cache_error(e))?;
    let _ = file.seek(SeekFrom::Start(0));
    // The pid only names the holder in a message: not worth an fsync.
    let _ = file.write_all(std::process::id().to_string().as_bytes());
    Ok(Ok(file))
}

fn holder_pid(file: &mut File) -> String {
    let mut s = String::new();
    let _ = file.read_to_string(&mut s);
    let s = s.trim();
    if s.is_empty() {
        "unknown".to_string()
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_up_cache_directory_is_not_written_again() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(&root).unwrap();
        let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
        loc.ensure_dir().unwrap();
        let root_file = loc.dir.join("root");
        assert_eq!(
            std::fs::read_to_string(&root_file).unwrap(),
            root.to_string_lossy()
        );
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        File::options()
            .write(true)
            .open(&root_file)
            .unwrap()
            .set_modified(old)
            .unwrap();
        loc.ensure_dir().unwrap();
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().modified().unwrap();
        assert_eq!(
            mtime(&root_file),
            old,
            "an unchanged root file is not rewritten"
        );
        // A root file naming something else (a hash collision, a hand edit) is set right.
        std::fs::write(&root_file, "/elsewhere").unwrap();
        loc.ensure_dir().unwrap();
        assert_eq!(
            std::fs::read_to_string(&root_file).unwrap(),
            root.to_string_lossy()
        );
    }
}
