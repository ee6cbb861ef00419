//! The SQLite database behind an index: schema, metadata, and row access.
//!
//! One database file holds everything of one generation lineage: files,
//! symbols, chunks, call sites, imports, and the lexical postings (one blob
//! per term, see `lexical`). It runs in WAL mode, so readers see the last committed
//! state while a writer works, and a killed writer leaves nothing half-done.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::meta::Meta;
use lode_core::{Error, Result};
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

/// Bump when the schema changes; an index of another version is rebuilt.
pub const SCHEMA_VERSION: u32 = 8;

const SCHEMA: &str = r#"
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    lang TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash BLOB NOT NULL,
    lines INTEGER NOT NULL,
    lossy INTEGER NOT NULL,
    parse_errors INTEGER NOT NULL,
    parse_failed INTEGER NOT NULL,
    skip_reason TEXT
);
-- Covers the counts a build reports (indexed, lossy, parse errors): a scan
-- of this index reads a tenth of the pages of `files`.
CREATE INDEX files_flags ON files(skip_reason, lossy, parse_errors, parse_failed);
-- A chunk's distinct terms, `\n`-separated: which postings its removal
-- touches (apart from `chunks`, which queries page through).
CREATE TABLE chunk_terms (chunk_id INTEGER PRIMARY KEY, terms BLOB NOT NULL);
CREATE TABLE symbols (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    parent INTEGER,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    container TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    signature TEXT NOT NULL,
    doc TEXT
);
CREATE INDEX symbols_file ON symbols(file_id);
CREATE INDEX symbols_name ON symbols(name);
CREATE TABLE calls (
    file_id INTEGER NOT NULL,
    caller INTEGER,
    callee TEXT NOT NULL,
    receiver TEXT,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL
);
CREATE INDEX calls_file ON calls(file_id);
CREATE INDEX calls_callee ON calls(callee);
CREATE TABLE imports (
    file_id INTEGER NOT NULL,
    source TEXT NOT NULL,
    names TEXT NOT NULL,
    start_line INTEGER NOT NULL
);
CREATE INDEX imports_file ON imports(file_id);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    symbol INTEGER,
    start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL,
    start_byte INTEGER NOT NULL,
    end_byte INTEGER NOT NULL,
    len_name INTEGER NOT NULL,
    len_path INTEGER NOT NULL,
    len_body INTEGER NOT NULL,
    -- What the chunk's postings and vector are made of (its names and body),
    -- hashed: an update keeps the id of a chunk whose key is unchanged.
    key INTEGER NOT NULL
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE TABLE postings (term TEXT NOT NULL, block INTEGER NOT NULL, df INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (term, block)) WITHOUT ROWID;
CREATE TABLE vectors (file_id INTEGER PRIMARY KEY, ids BLOB NOT NULL, data BLOB NOT NULL);
"#;

/// A write-ahead log larger than this after a commit is checkpointed and
/// truncated (see `Store::settle_wal`): it bounds what every new process's
/// first connection reads to rebuild the log's index. A lower limit costs
/// more `fsync`s per update (each checkpoint syncs the log and the database);
/// the trade is measured in docs/benchmarks.md ("No checkpoint on close").
pub const WAL_LIMIT_BYTES: u64 = 4 << 20;

/// How long a connection waits for another's lock before `SQLITE_BUSY`.
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Every indexed file by path. Hashed with foldhash: building and probing
/// it (a lookup per file of the tree on every refresh) spent half its time
/// in the standard library's SipHash; lode's paths come from the tree it
/// indexes, not from an adversary.
pub type Manifest = HashMap<String, ManifestEntry, foldhash::fast::RandomState>;

/// A file as the index last saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ManifestEntry {
    /// Its `files` row id.
    pub id: i64,
    /// Size in bytes, as the build that last wrote the row found it.
    pub size: u64,
    /// Modification time in nanoseconds since the Unix epoch, found with `size`.
    pub mtime_ns: i64,
    /// blake3 of the content last read (all zeros when the stored one is
    /// not 32 bytes).
    pub hash: [u8; 32],
}

impl lode_walk::snapshot::Recorded for ManifestEntry {
    fn size(&self) -> u64 {
        self.size
    }

    fn mtime_ns(&self) -> i64 {
        self.mtime_ns
    }
}

/// A `files` row as `(path, entry)`: columns id, path, size, mtime_ns, hash.
fn manifest_row(r: &rusqlite::Row) -> rusqlite::Result<(String, ManifestEntry)> {
    let mut hash = [0u8; 32];
    if let Ok(stored) = r.get_ref(4)?.as_blob()
        && stored.len() == 32
    {
        hash.copy_from_slice(stored);
    }
    Ok((
        r.get::<_, String>(1)?,
        ManifestEntry {
            id: r.get(0)?,
            size: r.get::<_, i64>(2)? as u64,
            mtime_ns: r.get(3)?,
            hash,
        },
    ))
}

/// An open index database.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Creates a new, empty database at `path` (which must not exist).
    pub fn create(path: &Path) -> Result<Store> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = connect(path, flags)?;
        // Before the first write: every page then ends in its check.
        if crate::pagecheck::vfs_name().is_some() {
            crate::pagecheck::reserve_on_create(&conn).map_err(|e| sql_err(path, e))?;
        }
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.pragmas()?;
        store
            .conn
            .execute_batch(SCHEMA)
            .map_err(|e| sql_err(path, e))?;
        store.set_meta(Meta::SchemaVersion, &SCHEMA_VERSION.to_string())?;
        Ok(store)
    }

    /// Opens an existing database, for reading or writing; one of another
    /// schema version is refused.
    pub fn open(path: &Path) -> Result<Store> {
        let store = Store::open_any_schema(path)?;
        match store.schema_version()? {
            Some(v) if v == SCHEMA_VERSION.to_string() => Ok(store),
            version => Err(Error::IndexCorrupt {
                path: path.to_path_buf(),
                reason: format!(
                    "schema version {} (this lode uses {SCHEMA_VERSION})",
                    version.unwrap_or_else(|| "none".into())
                ),
            }),
        }
    }

    /// Opens an existing database whatever its schema version (a build
    /// reads it to say why it rebuilds).
    pub(crate) fn open_any_schema(path: &Path) -> Result<Store> {
        // Readers open read-write too: WAL readers need the shared-memory file.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = connect(path, flags)?;
        let store = Store {
            conn,
            path: path.to_path_buf(),
        };
        store.pragmas()?;
        Ok(store)
    }

    /// The schema version the database was written with.
    pub(crate) fn schema_version(&self) -> Result<Option<String>> {
        self.meta(Meta::SchemaVersion)
    }

    fn pragmas(&self) -> Result<()> {
        self.conn
            .execute_batch(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; \
                 PRAGMA temp_store=MEMORY; PRAGMA cache_size=-32000; PRAGMA mmap_size=1073741824; \
                 PRAGMA wal_autocheckpoint=0;",
            )
            .map_err(|e| sql_err(&self.path, e))?;
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_err(&self.path, e))?;
        // Reads through a memory map of the database (up to 1 GiB), not a
        // `pread` into SQLite's cache per page: a cold hybrid query reads
        // every vector page (docs/benchmarks.md).
        // The last connection to close would otherwise checkpoint the WAL
        // (copy it into the database and fsync it: a cost for every process
        // that wrote). Instead a writer checkpoints and truncates the log once
        // it passes WAL_LIMIT_BYTES (`settle_wal`), which bounds what the
        // first connection of every new process reads to recover the log's
        // index; SQLite's
        // automatic checkpoint is off, as it cannot do that across processes.
        self.conn
            .set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
            .map(|_| ())
            .map_err(|e| sql_err(&self.path, e))
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The SQLite connection, for reads outside the store's own queries.
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    /// The value of `key` in the `meta` table; `None` when it was never set.
    pub fn meta(&self, key: Meta) -> Result<Option<String>> {
        crate::meta::get(&self.conn, key).map_err(|e| sql_err(&self.path, e))
    }

    /// Sets `key` to `value` in the `meta` table, outside any transaction.
    pub fn set_meta(&self, key: Meta, value: &str) -> Result<()> {
        crate::meta::set(&self.conn, key, value).map_err(|e| sql_err(&self.path, e))
    }

    /// Every indexed file by path.
    pub fn manifest(&self) -> Result<Manifest> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, path, size, mtime_ns, hash FROM files")
            .map_err(|e| sql_err(&self.path, e))?;
        let rows = stmt
            .query_map([], manifest_row)
            .map_err(|e| sql_err(&self.path, e))?;
        rows.collect::<rusqlite::Result<Manifest>>()
            .map_err(|e| sql_err(&self.path, e))
    }

    /// Brings `manifest` (read earlier) up to date for `paths`, the files one
    /// build since touched: each is read again, or removed when the index no
    /// longer has it. The caller knows that build was the only change.
    pub fn patch_manifest(&self, manifest: &mut Manifest, paths: &[String]) -> Result<()> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT id, path, size, mtime_ns, hash FROM files WHERE path = ?1")
            .map_err(|e| sql_err(&self.path, e))?;
        for path in paths {
            match stmt
                .query_row([path], manifest_row)
                .optional()
                .map_err(|e| sql_err(&self.path, e))?
            {
                Some((path, entry)) => manifest.insert(path, entry),
                None => manifest.remove(path),
            };
        }
        Ok(())
    }

    /// Runs `f` inside one write transaction, committed only if `f` succeeds.
    ///
    /// The transaction takes SQLite's write lock when it begins (`IMMEDIATE`),
    /// waiting up to the busy timeout: a build and the embedding phase commit
    /// to the same database, and a deferred transaction that read before the
    /// other's commit could not upgrade to a write (`SQLITE_BUSY_SNAPSHOT`,
    /// which no busy timeout waits out).
    pub fn write<T>(
        &mut self,
        f: impl FnOnce(&rusqlite::Transaction) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql_err(&path, e))?;
        let out = f(&tx).map_err(|e| sql_err(&path, e))?;
        tx.commit().map_err(|e| sql_err(&path, e))?;
        self.settle_wal();
        Ok(out)
    }

    /// Folds a write-ahead log grown past [`WAL_LIMIT_BYTES`] into the
    /// database and truncates it, unless a reader or writer is in the way
    /// (then a later commit does it; nobody waits for it).
    ///
    /// SQLite's own automatic checkpoint is not enough across processes: the
    /// first connection of a new process rebuilds the log's index from the
    /// file and no longer knows which frames were copied back, so it appends
    /// instead of starting the log over, and every later commit copied the
    /// whole ever-growing log again (measured in docs/benchmarks.md).
    fn settle_wal(&self) {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
        if size <= WAL_LIMIT_BYTES {
            return;
        }
        // No waiting for a reader or writer in the way; the connection's own
        // timeout is restored whatever the checkpoint did.
        let _ = self.conn.busy_timeout(std::time::Duration::ZERO);
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
        let _ = self.conn.busy_timeout(BUSY_TIMEOUT);
    }

    /// Folds the write-ahead log into the database file.
    pub fn checkpoint(&self) {
        let _ = self.conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
    }
}

/// A read-write connection to the index database at `path`, opened as lode
/// opens it: through the VFS that checks every page. A tool (or a test) that
/// writes an index database must write through this: pages written by
/// SQLite's own VFS (a plain `sqlite3` session, a checkpoint on its close)
/// lack their checks, and the index then counts as damaged and is rebuilt.
pub fn open_database(path: &Path) -> Result<Connection> {
    connect(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

/// A read-only connection to the database at `path`, with no pragma run
/// and nothing written (a shard's file stays byte for byte as it was).
pub(crate) fn open_read_only(path: &Path) -> Result<Connection> {
    connect(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

/// A connection to the database at `path` through the page-checking VFS
/// ([`crate::pagecheck`]), or SQLite's own where that is not available.
fn connect(path: &Path, flags: OpenFlags) -> Result<Connection> {
    match crate::pagecheck::vfs_name() {
        Some(vfs) => Connection::open_with_flags_and_vfs(path, flags, vfs),
        None => Connection::open_with_flags(path, flags),
    }
    .map_err(|e| sql_err(path, e))
}

/// Maps an SQLite failure to a lode error: a full or read-only disk is a
/// cache problem, anything else means the index cannot be trusted.
pub(crate) fn sql_err(path: &Path, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode as C;
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        match f.code {
            C::DiskFull | C::ReadOnly | C::CannotOpen | C::PermissionDenied => {
                return Error::CacheUnwritable {
                    path: path.to_path_buf(),
                    reason: e.to_string(),
                };
            }
            C::DatabaseBusy | C::DatabaseLocked => {
                return Error::Locked {
                    root: path.to_path_buf(),
                    pid: "unknown".into(),
                };
            }
            _ => {}
        }
    }
    let reason = match &e {
        rusqlite::Error::SqliteFailure(f, _)
            if f.extended_code == rusqlite::ffi::SQLITE_IOERR_DATA =>
        {
            "a page failed its check (damaged on disk, or written by a program without lode's \
             page checks)"
                .to_string()
        }
        _ => e.to_string(),
    };
    Error::IndexCorrupt {
        path: path.to_path_buf(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A commit that truncates the log leaves the connection waiting for
    /// locks as before (the checkpoint itself does not wait).
    #[test]
    fn settling_the_log_keeps_the_busy_timeout() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("index.db");
        let mut store = Store::create(&path).unwrap();
        store
            .connection()
            .execute_batch("CREATE TABLE probe (id INTEGER PRIMARY KEY, data BLOB)")
            .unwrap();
        let blob = vec![7u8; 4096];
        let mut wal = path.clone().into_os_string();
        wal.push("-wal");
        let mut truncated = false;
        for i in 0..400 {
            store
                .write(|tx| {
                    tx.execute(
                        "INSERT INTO probe(id, data) VALUES (?1, ?2)",
                        rusqlite::params![i, blob],
                    )
                    .map(|_| ())
                })
                .unwrap();
            let size = std::fs::metadata(&wal).map_or(0, |m| m.len());
            truncated |= i > 0 && size == 0;
        }
        assert!(truncated, "the log was never truncated");
        let timeout: i64 = store
            .connection()
            .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
            .unwrap();
        assert_eq!(timeout, BUSY_TIMEOUT.as_millis() as i64);
    }
}
