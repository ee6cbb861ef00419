use std::path::PathBuf;

/// A stable error code: the `code` of a JSON error and the process exit status.
///
/// Exit statuses (documented in `docs/json.md`): 0 success, 1 no results,
/// 2 usage or bad input, 3 index problem, 4 I/O problem, 5 lock held,
/// 6 a model to download could not be fetched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    BadPath,
    BadRegex,
    BadQuery,
    BadConfig,
    NoIndex,
    IndexCorrupt,
    Io,
    CacheUnwritable,
    Locked,
    NotFound,
    Ambiguous,
    BadOverlay,
    ModelUnavailable,
}

impl ErrorCode {
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
    #[error("{}: no such file or directory", .0.display())]
    NoSuchPath(PathBuf),
    #[error("{}: not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{}: not a file", .0.display())]
    NotAFile(PathBuf),
    /// A path that resolves outside the root: nothing there is read or shown.
    #[error("{} is outside the repository {}", .path.display(), .root.display())]
    OutsideRoot { path: PathBuf, root: PathBuf },
    /// No git repository was found and the directory is `/` or the home
    /// directory: indexing all of it is refused unless `--root` names it.
    #[error(
        "no git repository at or above {}; indexing all of it is refused: run lode inside a repository or name the directory with --root",
        .0.display()
    )]
    BroadRoot(PathBuf),
    #[error("{0}")]
    BadRegex(String),
    #[error("{0}")]
    BadQuery(String),
    #[error("{0}")]
    BadConfig(String),
    #[error("no index for {} (run 'lode index' or drop --no-refresh)", .0.display())]
    NoIndex(PathBuf),
    #[error("index at {} is unreadable: {reason}", .path.display())]
    IndexCorrupt { path: PathBuf, reason: String },
    #[error("cache directory {} is not writable: {reason}", .path.display())]
    CacheUnwritable { path: PathBuf, reason: String },
    #[error("another lode process (pid {pid}) is indexing {}; try again when it finishes", .root.display())]
    Locked { root: PathBuf, pid: String },
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
    #[error("{}: {source}", .path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

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

pub type Result<T, E = Error> = std::result::Result<T, E>;
