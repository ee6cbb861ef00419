//! The turn log (`telemetry_file`): one JSON line per ended turn, with the
//! turn's `lode_tools::TurnReport` — counts, sizes and tool names, never a
//! call's arguments nor a query's text. The file is opened for appending
//! and each line is one `write`, so lines of concurrent sessions (or of two
//! gateways sharing a file) do not interleave. A failed write is logged
//! once and never fails the gateway.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use lode_tools::TurnReport;
use serde::Serialize;

use crate::log;

/// Version of the line format (`docs/json.md`, "Gateway turn log").
pub const TURN_LOG_VERSION: u32 = 1;

pub(crate) struct TurnLog {
    file: Mutex<File>,
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
            file: Mutex::new(file),
            failed: AtomicBool::new(false),
        })
    }

    pub fn write(&self, session: u64, turn_id: Option<&str>, turn: &TurnReport) {
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
        if let Err(e) = written
            && !self.failed.swap(true, Ordering::Relaxed)
        {
            log(&format!("telemetry: cannot write the turn log: {e}"));
        }
    }
}
