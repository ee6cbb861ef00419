use std::path::PathBuf;

/// A stable error code: the `code` of a JSON error and the process exit status.
///
/// Exit statuses (documented in `docs/json.md`): 0 success, 1 no results,
/// 2 usage or bad input, 3 index problem, 4 I/O problem, 5 lock held,
/// 6 a model to download could not be fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// A path that does not exist, is not the directory or file required, lies
    /// outside the repository, or is too broad a root.
    BadPath,
    /// A regex that does not parse.
    BadRegex,
    /// A query or argument that cannot be used: empty, an unknown language, not a symbol name.
    BadQuery,
    /// A config file that does not parse, has an unknown key or is refused.
    BadConfig,
    /// No index was ever built for the root and none may be built now.
    NoIndex,
    /// The index cannot be read (queries rebuild it where they can).
    IndexCorrupt,
    /// A file that could not be read or written.
    Io,
    /// The cache directory cannot be created or written.
    CacheUnwritable,
    /// Another process holds the index lock and the command may not wait.
    Locked,
    /// A file or symbol that is not in the index.
    NotFound,
    /// A symbol name several definitions share.
    Ambiguous,
    /// An overlay of unsaved changes that cannot be used.
    BadOverlay,
    /// A model to download could not be fetched.
    ModelUnavailable,
}

impl ErrorCode {
    /// The stable code of JSON errors and MCP tool errors, `lode.<snake_case>`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadPath => "lode.bad_path",
            ErrorCode::BadRegex => "lode.bad_regex",
            ErrorCode::BadQuery => "lode.bad_query",
            ErrorCode::BadConfig => "lode.bad_config",
            ErrorCode::NoIndex => "lode.no_index",
            ErrorCode::IndexCorrupt => "lode.index_corrupt",
            ErrorCode::Io => "lode.io",
            ErrorCode::CacheUnwritable => "lode.cache_unwritable",
            ErrorCode::Locked => "lode.locked",
            ErrorCode::NotFound => "lode.not_found",
            ErrorCode::Ambiguous => "lode.ambiguous",
            ErrorCode::BadOverlay => "lode.bad_overlay",
            ErrorCode::ModelUnavailable => "lode.model_unavailable",
        }
    }

    /// The process exit status for this code: 2 to 6, as listed above.
    pub fn exit_status(self) -> i32 {
        match self {
            ErrorCode::BadPath
            | ErrorCode::BadRegex
            | ErrorCode::BadQuery
            | ErrorCode::BadConfig
            | ErrorCode::NotFound
            | ErrorCode::Ambiguous
            | ErrorCode::BadOverlay => 2,
            ErrorCode::NoIndex | ErrorCode::IndexCorrupt => 3,
            ErrorCode::Io | ErrorCode::CacheUnwritable => 4,
            ErrorCode::Locked => 5,
            ErrorCode::ModelUnavailable => 6,
        }
    }
}

/// A failure that reaches the user as one line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path given that does not exist.
    #[error("{}: no such file or directory", .0.display())]
    NoSuchPath(PathBuf),
    /// A path that must be a directory (the root) and is not.
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    /// A path that must be a file and is not (an input file, an `outline`
    /// target that is neither a file nor a directory).
    #[error("{}: not a file", .0.display())]
    NotAFile(PathBuf),
    /// A path that resolves outside the root: nothing there is read or shown.
    #[error("{} is outside the repository {}", .path.display(), .root.display())]
    OutsideRoot {
        /// The path as resolved.
        path: PathBuf,
        /// The repository root it falls outside.
        root: PathBuf,
    },
    /// No git repository was found and the directory is `/` or the home
    /// directory: indexing all of it is refused unless `--root` names it.
    #[error(
        "no git repository at or above {}; indexing all of it is refused: run lode inside a repository or name the directory with --root",
        .0.display()
    )]
    BroadRoot(PathBuf),
    /// A regex that is empty or does not parse; the message names the column
    /// where it can.
    #[error("{0}")]
    BadRegex(String),
    /// A query or argument that cannot be used; the message says why.
    #[error("{0}")]
    BadQuery(String),
    /// A config that cannot be used: it does not parse, has an unknown key or
    /// language, a bad glob, or an endpoint with credentials in it.
    #[error("{0}")]
    BadConfig(String),
    /// No index has been built for this root (the path) and the command may
    /// not build one (`--no-refresh`).
    #[error("no index for {} (run 'lode index' or drop --no-refresh)", .0.display())]
    NoIndex(PathBuf),
    /// The index database cannot be read or is marked damaged.
    #[error("index at {} is unreadable: {reason}", .path.display())]
    IndexCorrupt {
        /// The index database file.
        path: PathBuf,
        /// What is wrong, for the message.
        reason: String,
    },
    /// The cache directory cannot be created or written (read-only, full, not
    /// a directory).
    #[error("cache directory {} is not writable: {reason}", .path.display())]
    CacheUnwritable {
        /// The cache directory.
        path: PathBuf,
        /// The underlying I/O error, as text.
        reason: String,
    },
    /// Another process holds the index's writer lock and the command may not wait.
    #[error("another lode process (pid {pid}) is indexing {}; try again when it finishes", .root.display())]
    Locked {
        /// The repository root being indexed.
        root: PathBuf,
        /// The holder's process id as written in the lock file, or `unknown`.
        pid: String,
    },
    /// A symbol or file that is not in the index, or a file that was skipped
    /// or deleted in the overlay; the message says which and why.
    #[error("{0}")]
    NotFound(String),
    /// A name that several definitions share; the message lists them.
    #[error("{0}")]
    Ambiguous(String),
    /// An overlay (changes not on disk) that cannot be used: not an object of
    /// root-relative paths to strings or null, or over a size cap.
    #[error("bad overlay: {0}")]
    BadOverlay(String),
    /// A model named `hf:ORG/NAME` could not be downloaded; the message
    /// names the cause and the manual way.
    #[error("{0}")]
    ModelUnavailable(String),
    /// A file or directory could not be read or written.
    #[error("{}: {source}", .path.display())]
    Io {
        /// The file or directory the operation was on.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// An [`Error::Io`] on `path`.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The stable code this error reports, and through it the exit status.
    pub fn code(&self) -> ErrorCode {
        match self {
            Error::NoSuchPath(_)
            | Error::NotADirectory(_)
            | Error::NotAFile(_)
            | Error::OutsideRoot { .. }
            | Error::BroadRoot(_) => ErrorCode::BadPath,
            Error::BadRegex(_) => ErrorCode::BadRegex,
            Error::BadQuery(_) => ErrorCode::BadQuery,
            Error::BadConfig(_) => ErrorCode::BadConfig,
            Error::NoIndex(_) => ErrorCode::NoIndex,
            Error::IndexCorrupt { .. } => ErrorCode::IndexCorrupt,
            Error::CacheUnwritable { .. } => ErrorCode::CacheUnwritable,
            Error::Locked { .. } => ErrorCode::Locked,
            Error::NotFound(_) => ErrorCode::NotFound,
            Error::Ambiguous(_) => ErrorCode::Ambiguous,
            Error::BadOverlay(_) => ErrorCode::BadOverlay,
            Error::ModelUnavailable(_) => ErrorCode::ModelUnavailable,
            Error::Io { .. } => ErrorCode::Io,
        }
    }
}

/// A result whose error is lode's [`Error`] unless another is named.
pub type Result<T, E = Error> = std::result::Result<T, E>;
