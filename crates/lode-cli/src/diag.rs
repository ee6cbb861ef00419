//! The diagnostics record of one `lode` query command
//! (`lode_diagnostics`): the tally begins before the command runs,
//! the command and the refresh note what they know, and one record is
//! appended when it ends — if the user config switched the log on.

use std::time::Instant;

use lode_core::Config;
use lode_diagnostics::{self as diagnostics, DiagnosticsLog, Record};
use serde_json::Value;

use crate::cli::{Command, Common};

/// A query command being timed.
pub struct Timed {
    command: &'static str,
    /// What was asked; kept only when the user config sets `log_queries`.
    query: Value,
    common: Common,
    started: Instant,
}

impl Timed {
    /// Starts timing `cmd` when it is a query command (others are not logged).
    pub fn start(cmd: &Command) -> Option<Timed> {
        let (command, query, common) = match cmd {
            Command::Search { query, common, .. } => ("search", query.as_str(), common),
            Command::Ask { task, common, .. } => ("ask", task.as_str(), common),
            Command::Gather { query, common, .. } => ("gather", query.as_str(), common),
            Command::Grep { regex, common, .. } => ("grep", regex.as_str(), common),
            Command::Callers { symbol, common, .. } => ("callers", symbol.as_str(), common),
            Command::Show { symbol, common, .. } => ("show", symbol.as_str(), common),
            Command::Outline { file, common, .. } => {
                ("outline", file.to_str().unwrap_or(""), common)
            }
            Command::Map { common, .. } => ("map", "", common),
            _ => return None,
        };
        diagnostics::begin();
        Some(Timed {
            command,
            query: Value::from(query),
            common: common.clone(),
            started: Instant::now(),
        })
    }

    /// Appends the record (the outcome's error code, if it failed). Quiet:
    /// a log that cannot be written loses the record, nothing else.
    pub fn finish(self, error: Option<&str>) {
        let us = self.started.elapsed().as_micros() as u64;
        let tally = diagnostics::finish();
        let path = crate::context::user_config_path(&self.common);
        let Ok(config) = Config::load(&path) else {
            return;
        };
        let Some(log) = DiagnosticsLog::open(&config.diagnostics, self.common.cache_dir.as_deref())
        else {
            return;
        };
        let mut record = Record::new("cli", self.command, us, tally);
        record.error = error.map(str::to_string);
        if log.log_queries() {
            record.query = Some(self.query);
        }
        log.append(&record);
    }
}
