/// A failure that reaches the user as one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A catalog that cannot be read as tools: the message names the tool or server.
    #[error("bad catalog: {0}")]
    BadCatalog(String),
    /// A toolbox configuration that contradicts its catalog (a direct tool that
    /// is not bound, a limit of zero).
    #[error("bad tool configuration: {0}")]
    BadConfig(String),
    /// Eval cases that cannot be read: the message names the line.
    #[error("bad eval cases: {0}")]
    BadCases(String),
}

impl Error {
    /// The message without its kind prefix.
    pub fn message(&self) -> &str {
        match self {
            Error::BadCatalog(m) | Error::BadConfig(m) | Error::BadCases(m) => m,
        }
    }
}

/// A result whose error is this crate's [`Error`] unless given.
pub type Result<T, E = Error> = std::result::Result<T, E>;
