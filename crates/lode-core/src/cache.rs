//! Where lode's cache lives: the one directory, outside every repository,
//! that holds the indexes and the diagnostics log.

use std::path::{Path, PathBuf};

use crate::{Error, Result};

/// The cache base: `explicit` (`--cache-dir`) when given, else
/// [`default_cache_base`].
pub fn cache_base(explicit: Option<&Path>) -> Result<PathBuf> {
    match explicit {
        Some(b) => Ok(b.to_path_buf()),
        None => default_cache_base(),
    }
}

/// The cache base when no `--cache-dir` is given: `$LODE_CACHE_DIR`,
/// `$XDG_CACHE_HOME/lode` or `~/.cache/lode`.
pub fn default_cache_base() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("LODE_CACHE_DIR").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir).join("lode"));
    }
    if let Some(home) = std::env::var_os("HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(home).join(".cache").join("lode"));
    }
    Err(Error::BadConfig(
        "no cache directory: set LODE_CACHE_DIR or pass --cache-dir".into(),
    ))
}
