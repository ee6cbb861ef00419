//! Expected output kept in files beside the inputs (the `lode-parse`
//! fixtures' style): each test renders what it produced, [`check`] compares
//! it with the file, and `UPDATE_EXPECT=1` rewrites the files instead, for
//! the diff to be reviewed.

use std::path::{Path, PathBuf};

/// The files of `dir` whose extension is `ext`, in path order; panics when
/// there are none (a test over no cases proves nothing).
pub fn inputs(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no .{ext} cases in {}", dir.display());
    files
}

/// Compares each `(file, actual)` pair: the file must hold exactly
/// `actual`. With `UPDATE_EXPECT` set, writes `actual` to each file
/// instead. Panics naming every file that differs, each with what was
/// produced.
pub fn check(outputs: impl IntoIterator<Item = (PathBuf, String)>) {
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for (path, actual) in outputs {
        if update {
            std::fs::write(&path, &actual).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            continue;
        }
        let expected = std::fs::read_to_string(&path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "--- {} differs (UPDATE_EXPECT=1 to rewrite); produced:\n{actual}",
                path.display()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
