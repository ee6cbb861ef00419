//! The diagnostics log: one JSON line per query, in `<cache>/diagnostics.jsonl`,
//! when the user config switches it on (`[diagnostics] enabled = true`).
//!
//! - A [`Record`] is what one CLI command or MCP call did: when, which
//!   command, which repository (its root id — the hash in the index
//!   directory's name, not the path), how long, how many results, files
//!   refreshed, whether a kept index answered, fallbacks and the error code.
//!   Query text only with `log_queries = true`; never a trace, file content
//!   or a key.
//! - A [`Tally`] collects a call's figures while it runs, per thread:
//!   [`begin`] starts one, the code that knows a figure notes it
//!   ([`note_refreshed`] in `lode_index::refresh`, [`note_hits`] where results
//!   are counted, …), [`finish`] takes it. Noting with no tally begun does
//!   nothing, so library code notes without knowing who listens.
//! - [`DiagnosticsLog`] appends records: one `write` on an `O_APPEND` file
//!   per record, so processes appending at once do not interleave lines;
//!   past `max_bytes` the file is rotated (`.1` … `.keep`) by whichever
//!   process takes `diagnostics.lock` first. A record that cannot be written
//!   is dropped: the log never fails a query.
//! - [`read`] and [`summarize`] turn the kept files into per-command
//!   metrics for `lode doctor`.
//!
//! ```
//! use lode_diagnostics::{self as diagnostics, DiagnosticsLog, Record};
//! let cache = tempfile::tempdir()?;
//! let mut config = lode_core::DiagnosticsConfig::default();
//! assert!(DiagnosticsLog::open(&config, Some(cache.path())).is_none(), "off by default");
//! config.enabled = Some(true);
//! let log = DiagnosticsLog::open(&config, Some(cache.path())).unwrap();
//! diagnostics::begin();
//! diagnostics::note_hits(3);
//! let record = Record::new("cli", "search", 1_250, diagnostics::finish());
//! assert!(log.append(&record));
//! let metrics = diagnostics::summarize(&diagnostics::read(log.path(), config.keep()));
//! assert_eq!((metrics[0].command.as_str(), metrics[0].count), ("search", 1));
//! # Ok::<(), std::io::Error>(())
//! ```

#![deny(missing_docs)]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use lode_core::DiagnosticsConfig;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The log's file name in the cache directory.
pub const FILE_NAME: &str = "diagnostics.jsonl";

/// One query, as the log keeps it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Record {
    /// Unix time in milliseconds when the record was written.
    pub ts_ms: u64,
    /// `cli` or `mcp`.
    pub source: String,
    /// The command or tool: `search`, `grep`, `callers`, …
    pub command: String,
    /// The repository's id (`IndexLocation::id`), not its path.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root: Option<String>,
    /// Wall time of the whole command or call, in microseconds.
    pub us: u64,
    /// Results the engine returned (before any cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Files re-indexed (parsed or removed) by the refresh before the query.
    pub refreshed: u64,
    /// The index kept open from an earlier call answered (MCP).
    pub cache_hit: bool,
    /// What fell back: `refresh_skipped_locked`, `gather:<cause>`, `model`, …
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fallbacks: Vec<String>,
    /// The stable error code of a failed command.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The query arguments, only with `log_queries = true`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query: Option<Value>,
}

impl Record {
    /// A record stamped now, with what `tally` noted.
    pub fn new(source: &str, command: &str, us: u64, tally: Tally) -> Record {
        let ts_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        Record {
            ts_ms,
            source: source.to_string(),
            command: command.to_string(),
            root: tally.root,
            us,
            hits: tally.hits,
            refreshed: tally.refreshed,
            cache_hit: tally.cache_hit,
            fallbacks: tally.fallbacks,
            error: None,
            query: None,
        }
    }
}

/// What one call noted while it ran (see [`begin`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    /// The repository's id ([`note_root`]); the last one noted wins.
    pub root: Option<String>,
    /// Results the engine returned ([`note_hits`]); the last count noted wins.
    pub hits: Option<u64>,
    /// Files re-indexed, summed over every refresh the call ran ([`note_refreshed`]).
    pub refreshed: u64,
    /// A kept index answered ([`note_cache_hit`]).
    pub cache_hit: bool,
    /// Fallback labels in the order first noted, each once ([`note_fallback`]).
    pub fallbacks: Vec<String>,
}

thread_local! {
    static TALLY: RefCell<Option<Tally>> = const { RefCell::new(None) };
}

/// Starts a tally for the call this thread is about to run (a previous one is dropped).
pub fn begin() {
    TALLY.with(|t| *t.borrow_mut() = Some(Tally::default()));
}

/// Ends this thread's tally and returns it (empty when none was begun).
pub fn finish() -> Tally {
    TALLY.with(|t| t.borrow_mut().take()).unwrap_or_default()
}

fn note(f: impl FnOnce(&mut Tally)) {
    TALLY.with(|t| {
        if let Some(tally) = t.borrow_mut().as_mut() {
            f(tally)
        }
    });
}

/// The repository the call queried.
pub fn note_root(id: &str) {
    note(|t| t.root = Some(id.to_string()));
}

/// An index kept open from an earlier call answered, without reopening.
pub fn note_cache_hit() {
    note(|t| t.cache_hit = true);
}

/// Files the refresh re-indexed before the query.
pub fn note_refreshed(files: u64) {
    note(|t| t.refreshed += files);
}

/// Results the engine returned.
pub fn note_hits(n: usize) {
    note(|t| t.hits = Some(n as u64));
}

/// Something that fell back to a lesser way (a short, fixed label; never user text).
pub fn note_fallback(what: &str) {
    note(|t| {
        if !t.fallbacks.iter().any(|f| f == what) {
            t.fallbacks.push(what.to_string());
        }
    });
}

/// The diagnostics log of one cache directory, open for appending.
#[derive(Clone, Debug)]
pub struct DiagnosticsLog {
    path: PathBuf,
    max_bytes: u64,
    keep: u32,
    log_queries: bool,
}

impl DiagnosticsLog {
    /// The log as configured, or `None` when it is off (or no cache
    /// directory can be named). `cache_base` is `--cache-dir`, if given
    /// ([`lode_core::cache_base`]).
    pub fn open(config: &DiagnosticsConfig, cache_base: Option<&Path>) -> Option<DiagnosticsLog> {
        if !config.enabled() {
            return None;
        }
        Some(DiagnosticsLog {
            path: log_path(cache_base)?,
            max_bytes: config.max_bytes(),
            keep: config.keep(),
            log_queries: config.log_queries(),
        })
    }

    /// The current log file, `<cache>/diagnostics.jsonl` (rotated ones add `.1`, `.2`, …).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether records may carry the query (`log_queries = true`).
    pub fn log_queries(&self) -> bool {
        self.log_queries
    }

    /// Appends one record as one line; `false` when it was dropped (the
    /// cache is unwritable, or the file is over twice its cap because
    /// rotation keeps failing). Never panics, never blocks on another process.
    pub fn append(&self, record: &Record) -> bool {
        let Ok(mut line) = serde_json::to_string(record) else {
            return false;
        };
        line.push('\n');
        let len = line.len() as u64;
        if len > self.max_bytes {
            return false;
        }
        if file_len(&self.path) + len > self.max_bytes {
            self.rotate(len);
        }
        // Processes appending while another rotates may overshoot a little;
        // never by more than the cap again.
        if file_len(&self.path) + len > 2 * self.max_bytes {
            return false;
        }
        if let Some(dir) = self.path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let mut options = OpenOptions::new();
        options.create(true).append(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        // One `write` per line: O_APPEND places each whole at the end.
        match options.open(&self.path) {
            Ok(mut f) => matches!(f.write(line.as_bytes()), Ok(n) if n == line.len()),
            Err(_) => false,
        }
    }

    /// `diagnostics.jsonl` → `.1` → … → `.keep` (the oldest is overwritten),
    /// by one process at a time; one that finds the lock taken skips it.
    fn rotate(&self, incoming: u64) {
        let lock_path = self.path.with_extension("lock");
        let Ok(lock) = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
        else {
            return;
        };
        if lock.try_lock().is_err() {
            return;
        }
        // Another process may have rotated between our look and the lock.
        if file_len(&self.path) + incoming <= self.max_bytes {
            return;
        }
        if self.keep == 0 {
            let _ = std::fs::remove_file(&self.path);
            return;
        }
        for i in (1..self.keep).rev() {
            let _ = std::fs::rename(rotated(&self.path, i), rotated(&self.path, i + 1));
        }
        let _ = std::fs::rename(&self.path, rotated(&self.path, 1));
    }
}

/// Where the log of this cache lives (`None`: no cache directory can be named).
pub fn log_path(cache_base: Option<&Path>) -> Option<PathBuf> {
    lode_core::cache_base(cache_base)
        .ok()
        .map(|base| base.join(FILE_NAME))
}

fn rotated(path: &Path, i: u32) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{i}"));
    PathBuf::from(name)
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// The records kept at `path` and its `keep` rotated files, oldest first.
/// Lines that do not parse (a torn write, another version) are skipped.
pub fn read(path: &Path, keep: u32) -> Vec<Record> {
    let mut files: Vec<PathBuf> = (1..=keep).rev().map(|i| rotated(path, i)).collect();
    files.push(path.to_path_buf());
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|text| {
            text.lines()
                .filter_map(|l| serde_json::from_str::<Record>(l).ok())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// One command's figures over the records read.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CommandMetrics {
    /// The command or tool, as in [`Record::command`].
    pub command: String,
    /// Records of this command.
    pub count: usize,
    /// Records answered by a kept index ([`Record::cache_hit`]).
    pub cache_hits: usize,
    /// Records of failed calls (with an error code).
    pub errors: usize,
    /// Records with at least one fallback.
    pub fallbacks: usize,
    /// Median wall time in milliseconds, by nearest rank.
    pub p50_ms: f64,
    /// 95th-percentile wall time in milliseconds, by nearest rank.
    pub p95_ms: f64,
}

/// Per-command count, cache hits, errors, fallbacks and p50/p95 wall time,
/// in command order.
pub fn summarize(records: &[Record]) -> Vec<CommandMetrics> {
    let mut by_command: BTreeMap<&str, Vec<&Record>> = BTreeMap::new();
    for r in records {
        by_command.entry(&r.command).or_default().push(r);
    }
    by_command
        .into_iter()
        .map(|(command, rs)| {
            let mut us: Vec<u64> = rs.iter().map(|r| r.us).collect();
            us.sort_unstable();
            CommandMetrics {
                command: command.to_string(),
                count: rs.len(),
                cache_hits: rs.iter().filter(|r| r.cache_hit).count(),
                errors: rs.iter().filter(|r| r.error.is_some()).count(),
                fallbacks: rs.iter().filter(|r| !r.fallbacks.is_empty()).count(),
                p50_ms: percentile(&us, 50) as f64 / 1000.0,
                p95_ms: percentile(&us, 95) as f64 / 1000.0,
            }
        })
        .collect()
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[u64], p: usize) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = (p * sorted.len()).div_ceil(100).max(1);
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(max_bytes: u64, keep: u32) -> DiagnosticsConfig {
        DiagnosticsConfig {
            enabled: Some(true),
            max_bytes: Some(max_bytes),
            keep: Some(keep),
            log_queries: None,
        }
    }

    fn record(command: &str, us: u64) -> Record {
        Record {
            command: command.into(),
            source: "cli".into(),
            us,
            ..Record::default()
        }
    }

    #[test]
    fn rotates_by_size_and_keeps_at_most_keep_files() {
        let cache = tempfile::tempdir().unwrap();
        let c = config(4096, 2);
        let log = DiagnosticsLog::open(&c, Some(cache.path())).unwrap();
        for i in 0..2_000 {
            assert!(log.append(&record("search", i)));
        }
        let names: Vec<String> = std::fs::read_dir(cache.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("diagnostics.jsonl"))
            .collect();
        assert_eq!(names.len(), 3, "{names:?}");
        for n in &names {
            let len = std::fs::metadata(cache.path().join(n)).unwrap().len();
            assert!(len <= 4096, "{n}: {len}");
        }
        // What is kept is the newest, in order.
        let kept = read(log.path(), c.keep());
        assert!(kept.len() > 60 && kept.len() < 2_000, "{}", kept.len());
        assert_eq!(kept.last().unwrap().us, 1_999);
        assert!(kept.windows(2).all(|w| w[0].us + 1 == w[1].us));
    }

    #[test]
    fn keep_zero_truncates_and_an_unwritable_cache_drops_the_record() {
        let cache = tempfile::tempdir().unwrap();
        let log = DiagnosticsLog::open(&config(4096, 0), Some(cache.path())).unwrap();
        for i in 0..500 {
            log.append(&record("grep", i));
        }
        assert!(!rotated(log.path(), 1).exists());
        assert!(file_len(log.path()) <= 4096);

        // A cache "directory" that is a file: every write fails, quietly.
        let file = cache.path().join("not-a-dir");
        std::fs::write(&file, "x").unwrap();
        let log = DiagnosticsLog::open(&config(4096, 2), Some(&file)).unwrap();
        assert!(!log.append(&record("grep", 1)));
    }

    #[test]
    fn concurrent_appenders_write_whole_lines() {
        let cache = tempfile::tempdir().unwrap();
        let c = config(64 * 1024, 3);
        let log = DiagnosticsLog::open(&c, Some(cache.path())).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let log = log.clone();
                s.spawn(move || {
                    for i in 0..500 {
                        log.append(&record(&format!("cmd{t}"), i));
                    }
                });
            }
        });
        let mut lines = 0;
        for i in 0..=3 {
            let p = if i == 0 {
                log.path().to_path_buf()
            } else {
                rotated(log.path(), i)
            };
            for l in std::fs::read_to_string(p).unwrap_or_default().lines() {
                serde_json::from_str::<Record>(l).unwrap_or_else(|e| panic!("{e}: {l}"));
                lines += 1;
            }
        }
        assert!(lines > 500, "{lines}");
    }

    #[test]
    fn the_tally_is_per_thread_and_only_while_begun() {
        note_hits(5);
        assert_eq!(finish(), Tally::default(), "nothing noted before begin");
        begin();
        note_root("abc");
        note_hits(5);
        note_refreshed(2);
        note_refreshed(1);
        note_fallback("refresh_skipped_locked");
        note_fallback("refresh_skipped_locked");
        std::thread::spawn(|| note_hits(99)).join().unwrap();
        let t = finish();
        assert_eq!(t.root.as_deref(), Some("abc"));
        assert_eq!((t.hits, t.refreshed), (Some(5), 3));
        assert_eq!(t.fallbacks, ["refresh_skipped_locked"]);
        assert_eq!(finish(), Tally::default());
    }

    #[test]
    fn summaries_per_command_with_nearest_rank_percentiles() {
        let mut rs: Vec<Record> = (1..=100).map(|i| record("search", i * 1000)).collect();
        rs[0].cache_hit = true;
        rs[1].error = Some("lode.bad_query".into());
        rs[2].fallbacks = vec!["refresh_skipped_locked".into()];
        rs.push(record("grep", 7_000));
        let m = summarize(&rs);
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].command, "grep");
        assert_eq!((m[0].count, m[0].p50_ms, m[0].p95_ms), (1, 7.0, 7.0));
        let s = &m[1];
        assert_eq!(
            (s.count, s.cache_hits, s.errors, s.fallbacks),
            (100, 1, 1, 1)
        );
        assert_eq!((s.p50_ms, s.p95_ms), (50.0, 95.0));
        assert!(summarize(&[]).is_empty());
    }
}
