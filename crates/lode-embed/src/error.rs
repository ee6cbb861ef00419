//! Errors of this crate: one line each, naming the file at fault.

use std::fmt;
use std::path::{Path, PathBuf};

/// A failure to load a model or to embed.
///
/// Its `Display` is one line that names the file at fault (or `<built-in>/…` for the
/// model compiled into the binary), e.g.
/// `/models/m/model.safetensors: embeddings have 128 columns but config.json says hidden_dim 256`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A model file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory that could not be read.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A model file was read but is not what a model2vec model needs.
    #[error("{}: {reason}", path.display())]
    Invalid {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it, in a few words.
        reason: String,
    },
    /// An embedding server failed to answer, or answered something unusable.
    /// The reason names a status, a cause or a parse position, never the
    /// reply's text (which may quote the request).
    #[error("{url}: {reason}")]
    Remote {
        /// The URL requested.
        url: String,
        /// What went wrong, in a few words.
        reason: String,
    },
}

impl Error {
    pub(crate) fn invalid(path: &Path, reason: impl fmt::Display) -> Self {
        Error::Invalid {
            path: path.to_path_buf(),
            reason: reason.to_string(),
        }
    }

    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// The file (or directory, or for a server the URL) this error is about.
    pub fn path(&self) -> &Path {
        match self {
            Error::Io { path, .. } | Error::Invalid { path, .. } => path,
            Error::Remote { url, .. } => Path::new(url.as_str()),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
