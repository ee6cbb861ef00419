//! Reading a file of the tree only when it lies inside the root: a file the
//! index knows may since have been replaced by a link that leads out, and
//! nothing outside the root is ever read or shown.
//!
//! ```
//! let root = std::env::temp_dir().canonicalize().unwrap();
//! let err = lode_core::inside::path(&root, "../../etc/passwd").unwrap_err();
//! assert_eq!(err.kind(), std::io::ErrorKind::PermissionDenied);
//! ```

use std::io;
use std::path::{Path, PathBuf};

/// `root/rel` with every link resolved, if that lies inside `root` (which
/// must be canonical, as `IndexLocation` keeps it); else `PermissionDenied`.
pub fn path(root: &Path, rel: &str) -> io::Result<PathBuf> {
    let real = root.join(rel).canonicalize()?;
    if real.starts_with(root) {
        Ok(real)
    } else {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{rel} leads outside the repository"),
        ))
    }
}

/// Opens `root/rel` for reading if it lies inside `root`.
pub fn open(root: &Path, rel: &str) -> io::Result<std::fs::File> {
    std::fs::File::open(path(root, rel)?)
}

/// Reads `root/rel` if it lies inside `root`.
pub fn read(root: &Path, rel: &str) -> io::Result<Vec<u8>> {
    std::fs::read(path(root, rel)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_out_of_the_root_is_refused_and_one_inside_is_read() {
        let root = tempfile::tempdir().unwrap();
        let root_path = root.path().canonicalize().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "hunter2").unwrap();
        std::fs::write(root_path.join("real.txt"), "ok").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), root_path.join("a.txt")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root_path.join("dir")).unwrap();
        std::os::unix::fs::symlink(root_path.join("real.txt"), root_path.join("b.txt")).unwrap();
        for rel in ["a.txt", "dir/secret", "../secret"] {
            let err = read(&root_path, rel).unwrap_err();
            assert!(
                matches!(
                    err.kind(),
                    io::ErrorKind::PermissionDenied | io::ErrorKind::NotFound
                ),
                "{rel}: {err}"
            );
        }
        assert_eq!(read(&root_path, "b.txt").unwrap(), b"ok");
        assert_eq!(read(&root_path, "real.txt").unwrap(), b"ok");
    }
}
