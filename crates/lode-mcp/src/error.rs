//! A failed call as the client sees it: a stable code and one line.

use std::fmt;

/// A tool failure. `code` is one of lode's stable codes (`docs/json.md`):
/// those of [`lode_core::ErrorCode`], plus `lode.bad_argument` (an argument
/// missing, unknown, of the wrong type or too large), `lode.remote` (the
/// shared index service could not be asked) and `lode.internal` (a bug in
/// lode; the server goes on).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolError {
    /// Stable, `lode.`-prefixed: what a client may branch on.
    pub code: &'static str,
    /// One line for a person.
    pub message: String,
}

impl ToolError {
    /// An argument missing, unknown, of the wrong type or out of range.
    pub const BAD_ARGUMENT: &'static str = "lode.bad_argument";
    /// `lode mcp --remote`: the query could not be sent to the service.
    pub const REMOTE: &'static str = "lode.remote";
    /// A bug in lode (a panic caught); the server goes on.
    pub const INTERNAL: &'static str = "lode.internal";

    /// An error of `code`.
    pub fn new(code: &'static str, message: impl Into<String>) -> ToolError {
        ToolError {
            code,
            message: message.into(),
        }
    }

    /// [`ToolError::BAD_ARGUMENT`].
    pub fn bad_argument(message: impl Into<String>) -> ToolError {
        ToolError::new(ToolError::BAD_ARGUMENT, message)
    }

    /// A path outside the served repositories (`lode.bad_path`).
    pub fn bad_path(message: impl Into<String>) -> ToolError {
        ToolError::new(lode_core::ErrorCode::BadPath.as_str(), message)
    }
}

impl From<lode_core::Error> for ToolError {
    fn from(e: lode_core::Error) -> ToolError {
        ToolError::new(e.code().as_str(), e.to_string())
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for ToolError {}
