//! What git says about the root: the tree its checkout is at, the trees of
//! the commits before it, and whether the working files are that tree.
//!
//! git is only asked (`rev-parse`, `rev-list`, `status` with optional locks
//! off, so not even git's own index file is rewritten): the repository stays
//! read-only to lode.

use std::path::Path;
use std::process::Command;

/// How many commits back an index is looked for when this tree has none.
pub const ANCESTORS: usize = 16;

/// A git tree object id (hex), of the root's directory.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TreeId(pub String);

/// The root as git sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    /// The root's tree at `HEAD`.
    pub head: TreeId,
    /// The root's trees at `HEAD`, `HEAD~1`, … (at most [`ANCESTORS`] + 1,
    /// repeats removed: a commit that left the root alone has its parent's tree).
    pub history: Vec<TreeId>,
}

/// Why the root has no tree id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NoCheckout(pub String);

impl std::fmt::Display for NoCheckout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Reads the checkout at `root` (a repository's top or a directory in one).
pub fn checkout(root: &Path) -> Result<Checkout, NoCheckout> {
    let prefix = git(root, &["rev-parse", "--show-prefix"])?;
    let prefix = prefix.trim_end_matches('\n');
    let head = tree_at(root, "HEAD", prefix)?;
    let commits = git(
        root,
        &[
            "rev-list",
            &format!("--max-count={}", ANCESTORS + 1),
            "HEAD",
        ],
    )?;
    let mut history: Vec<TreeId> = Vec::new();
    for commit in commits.lines() {
        // A commit where the root did not exist yet ends the history.
        let Ok(tree) = tree_at(root, commit, prefix) else {
            break;
        };
        if history.last() != Some(&tree) {
            history.push(tree);
        }
    }
    Ok(Checkout { head, history })
}

/// Whether the working files under `root` are exactly its tree at `HEAD`
/// (nothing modified, staged, deleted or untracked). The costly question:
/// git compares every file whose stat data its own index cannot vouch for,
/// which in a fresh clone is nearly every file, each time (its index is never
/// rewritten from here).
pub fn is_clean(root: &Path) -> Result<bool, NoCheckout> {
    let status = git(
        root,
        &[
            "status",
            "--porcelain",
            "--untracked-files=normal",
            "--",
            ".",
        ],
    )?;
    Ok(status.trim().is_empty())
}

fn tree_at(root: &Path, commit: &str, prefix: &str) -> Result<TreeId, NoCheckout> {
    let spec = format!("{commit}^{{tree}}:{prefix}");
    let out = git(root, &["rev-parse", "--verify", "--quiet", &spec])?;
    let id = out.trim();
    if id.len() >= 40 && id.bytes().all(|b| b.is_ascii_hexdigit()) {
        Ok(TreeId(id.to_string()))
    } else {
        Err(NoCheckout(format!("git has no tree for {spec}")))
    }
}

fn git(root: &Path, args: &[&str]) -> Result<String, NoCheckout> {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .arg("--no-optional-locks")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| NoCheckout(format!("git could not be run: {e}")))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why.lines().next().unwrap_or("").trim();
        return Err(NoCheckout(format!("not a git checkout ({why})")));
    }
    String::from_utf8(out.stdout).map_err(|_| NoCheckout("git answered in invalid UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;

    fn run(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["-c", "user.email=t@t", "-c", "user.name=t"])
            .args(args)
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_subdirectory_has_its_own_tree_and_history_skips_commits_that_left_it_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path();
        run(repo, &["init", "-q"]);
        fs::create_dir_all(repo.join("app")).unwrap();
        fs::write(repo.join("app/a.py"), "x = 1\n").unwrap();
        run(repo, &["add", "-A"]);
        run(repo, &["commit", "-qm", "one"]);
        let first = checkout(&repo.join("app")).unwrap();
        assert!(is_clean(&repo.join("app")).unwrap());
        assert_eq!(first.history, std::slice::from_ref(&first.head));
        // A commit outside the subdirectory: the subdirectory's tree is the same.
        fs::write(repo.join("README"), "r\n").unwrap();
        run(repo, &["add", "-A"]);
        run(repo, &["commit", "-qm", "two"]);
        let second = checkout(&repo.join("app")).unwrap();
        assert_eq!(second.head, first.head);
        assert_eq!(second.history.len(), 1);
        assert_ne!(checkout(repo).unwrap().head, first.head);
        // A change inside it: a new tree, the old one next in its history.
        fs::write(repo.join("app/a.py"), "x = 2\n").unwrap();
        assert!(!is_clean(&repo.join("app")).unwrap());
        run(repo, &["commit", "-qam", "three"]);
        let third = checkout(&repo.join("app")).unwrap();
        assert!(is_clean(&repo.join("app")).unwrap());
        assert_eq!(third.history, [third.head.clone(), first.head]);
        // An untracked file is a change too.
        fs::write(repo.join("app/new.py"), "y = 1\n").unwrap();
        assert!(!is_clean(&repo.join("app")).unwrap());
    }

    #[test]
    fn a_directory_outside_git_has_no_tree() {
        let tmp = tempfile::tempdir().unwrap();
        let err = checkout(tmp.path()).unwrap_err();
        assert!(err.0.contains("git"), "{err}");
    }
}
