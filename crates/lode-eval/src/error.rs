//! Errors from loading benchmark files.

use std::fmt;
use std::path::{Path, PathBuf};

/// A failure to read or understand an input file, naming the file and, where
/// known, the 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The file that could not be read or parsed.
    pub path: Option<PathBuf>,
    /// The 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

/// `Result` with this crate's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// An error about `path` (and `line`, if known).
    pub fn at(path: &Path, line: Option<usize>, message: impl Into<String>) -> Self {
        Self {
            path: Some(path.to_path_buf()),
            line,
            message: message.into(),
        }
    }

    pub(crate) fn io(path: &Path, err: &std::io::Error) -> Self {
        Self::at(path, None, format!("cannot read: {err}"))
    }

    /// Wraps a `serde_json` error for a whole-file parse: the line is the
    /// line inside the file.
    pub(crate) fn json(path: &Path, err: &serde_json::Error) -> Self {
        let line = (err.line() > 0).then_some(err.line());
        Self::at(path, line, json_message(err))
    }

    /// Wraps a `serde_json` error for one line of a JSON Lines file.
    pub(crate) fn json_line(path: &Path, line: usize, err: &serde_json::Error) -> Self {
        Self::at(path, Some(line), json_message(err))
    }
}

/// serde_json's message without its trailing "at line L column C" (the
/// caller reports the line itself), keeping the column.
fn json_message(err: &serde_json::Error) -> String {
    let text = err.to_string();
    let base = match text.rfind(" at line ") {
        Some(pos) if err.line() > 0 => &text[..pos],
        _ => text.as_str(),
    };
    if err.column() > 0 {
        format!("invalid JSON: {base} (column {})", err.column())
    } else {
        format!("invalid JSON: {base}")
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(path), Some(line)) => write!(f, "{}:{line}: {}", path.display(), self.message),
            (Some(path), None) => write!(f, "{}: {}", path.display(), self.message),
            (None, Some(line)) => write!(f, "line {line}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}
