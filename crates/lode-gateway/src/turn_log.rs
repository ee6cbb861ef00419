//! The turn log (`telemetry_file`): one JSON line per ended turn, with the
//! turn's `lode_tools::TurnReport` — counts, sizes and tool names, never a
//! call's arguments nor a query's text. The file is opened for appending
//! and each line is one `write`, so lines of concurrent sessions (or of two
//! gateways sharing a file) do not interleave. A failed write is logged
//! once and never fails the gateway.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use lode_tools::TurnReport;
use serde::Serialize;

use crate::log;

/// Version of the line format (`docs/json.md`, "Gateway turn log").
pub const TURN_LOG_VERSION: u32 = 1;

pub(crate) struct TurnLog {
    path: PathBuf,
    file: Mutex<File>,
    /// Whether a write failed already: only the first failure is reported.
    failed: AtomicBool,
}

#[derive(Serialize)]
struct Line<'a> {
    schema_version: u32,
    /// Milliseconds since the Unix epoch when the turn ended.
    unix_ms: u128,
    /// Gateway process id and session number: together they name a client session.
    pid: u32,
    session: u64,
    /// The host's `_meta.turn_id`, when it sent one.
    turn_id: Option<&'a str>,
    turn: &'a TurnReport,
}

impl TurnLog {
    pub fn open(path: &Path) -> Result<TurnLog, String> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TurnLog {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            failed: AtomicBool::new(false),
        })
    }

    /// Appends the line of an ended turn; a failure is logged the first time.
    pub fn write(&self, session: u64, turn_id: Option<&str>, turn: &TurnReport) {
        if let Some(report) = self.append(session, turn_id, turn) {
            log(&report);
        }
    }

    /// Appends the line; returns the line to log when this is the first
    /// write that failed. Later writes are tried all the same (the disk may
    /// have room again), but their failures are not reported: a full disk
    /// would otherwise add a log line per turn.
    fn append(&self, session: u64, turn_id: Option<&str>, turn: &TurnReport) -> Option<String> {
        let line = Line {
            schema_version: TURN_LOG_VERSION,
            unix_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_millis()),
            pid: std::process::id(),
            session,
            turn_id,
            turn,
        };
        let mut text = serde_json::to_string(&line).expect("a report serialises");
        text.push('\n');
        let written = self.file.lock().unwrap().write_all(text.as_bytes());
        match written {
            Err(e) if !self.failed.swap(true, Ordering::Relaxed) => Some(format!(
                "telemetry: cannot write the turn log {}: {e} (turns are not logged while writes fail; \
                 later failures are not reported)",
                self.path.display()
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lode_tools::{Catalog, TurnEnd, TurnScope};
    use std::sync::Arc;

    fn report() -> TurnReport {
        let catalog = Catalog::from_mcp_servers([(
            "fs",
            serde_json::json!({"tools": [{"name": "read_file", "description": "Read a file",
                "inputSchema": {"type": "object"}}]}),
        )])
        .unwrap();
        let toolbox = lode_tools::Toolbox::builder(catalog).build().unwrap();
        TurnScope::new(Arc::new(toolbox)).finish(TurnEnd::Completed)
    }

    #[test]
    fn a_line_per_turn_and_nothing_to_report() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("turns.jsonl");
        let log = TurnLog::open(&path).unwrap();
        assert_eq!(log.append(1, Some("t1"), &report()), None);
        assert_eq!(log.append(1, None, &report()), None);
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert_eq!(lines[0]["turn_id"], "t1");
        assert_eq!(lines[1]["turn_id"], serde_json::Value::Null);
    }

    /// The file opened, then its writes fail (ENOSPC on /dev/full, as on a
    /// full disk): the first failure is one line naming the file and the
    /// cause, the next ones are silent, and nothing panics.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_write_that_fails_after_the_open_is_reported_once() {
        let log = TurnLog::open(Path::new("/dev/full")).unwrap();
        let first = log.append(1, Some("t1"), &report()).expect("reported");
        assert!(first.contains("/dev/full"), "{first}");
        assert!(first.contains("No space left on device"), "{first}");
        assert!(!first.contains('\n'), "{first}");
        for turn in ["t2", "t3"] {
            assert_eq!(log.append(1, Some(turn), &report()), None);
        }
        // The logging entry point takes the same path without panicking.
        log.write(2, None, &report());
    }
}
