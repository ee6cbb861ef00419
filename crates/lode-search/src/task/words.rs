//! How a task names files: its words against file and directory names
//! ([`TaskWords`]), with the names that say nothing left out — a
//! directory holding much of the code, a header beside its source, a
//! vendored library's files the task does not name.

use std::collections::{HashMap, HashSet};

use super::features::Candidate;
use super::text::TaskText;
use super::weights::Feature;
use crate::rank;

/// The task's words as file names go: a file named for a word of the title
/// or a name written as code (1), or for a prose word (0.5) — a word, two
/// adjacent words joined (`commit graph` → `commit_graph.c`), a compound
/// name whose parts are all words, plurals equal (as query mode's
/// [`QueryShape::names_file`](crate::rank::QueryShape)).
pub(super) struct TaskWords {
    strong: rank::QueryShape,
    prose: rank::QueryShape,
    /// Directories that hold too much of the repository to name anything.
    crowded: HashSet<String>,
}

/// A directory holding this share of the code files (tests aside) or more
/// names none of them: it is the project's own package (`src/_pytest`,
/// `src/main/java/org/apache`), which its every task writes.
const CROWDED_DIRECTORY_SHARE: f64 = 0.5;

impl TaskWords {
    pub(super) fn new(task: &TaskText) -> TaskWords {
        let mut strong = task.title.clone();
        for i in &task.identifiers {
            strong.push(' ');
            strong.push_str(i);
        }
        let prose: String = task.prose.chars().take(4000).collect();
        TaskWords {
            strong: rank::QueryShape::new(&strong),
            prose: rank::QueryShape::new(&prose),
            crowded: HashSet::new(),
        }
    }

    /// Leaves out the directories of `paths` (the indexed code files, tests
    /// aside) that hold [`CROWDED_DIRECTORY_SHARE`] of them or more.
    pub(super) fn with_crowded_directories(mut self, paths: &[&str]) -> TaskWords {
        let mut counts: HashMap<&str, usize> = HashMap::new();
        for path in paths {
            let mut dir = *path;
            while let Some((parent, _)) = dir.rsplit_once('/') {
                *counts.entry(parent).or_default() += 1;
                dir = parent;
            }
        }
        let least = (paths.len() as f64 * CROWDED_DIRECTORY_SHARE).max(1.0);
        self.crowded = (counts.into_iter())
            .filter(|&(_, n)| n as f64 >= least)
            .map(|(d, _)| d.to_string())
            .collect();
        self
    }

    /// How well the task names the file at `path`: 1 for its name in the
    /// title or written as code, 0.5 in the prose; half that for its
    /// directory's name; 0 for none. Names every package has say nothing. A
    /// file that is its package (`__init__.py`, `index.ts`, `mod.rs`) is
    /// named by its directory (`autodoc/__init__.py`,
    /// `eachDayOfInterval/index.ts`). A top-level directory, or one that
    /// holds much of the repository, is left out: it is mostly the
    /// project's own name, which its every task writes.
    pub(super) fn names_file(&self, path: &str) -> f64 {
        // The file's directories, nearest first, as paths from the root.
        let dirs: Vec<&str> = std::iter::successors(path.rsplit_once('/').map(|d| d.0), |d| {
            d.rsplit_once('/').map(|p| p.0)
        })
        .collect();
        let names_a_dir = |i: usize| {
            dirs.get(i)
                .filter(|d| i + 1 < dirs.len() && !self.crowded.contains(**d))
                .map(|d| d.rsplit('/').next().unwrap_or(d))
        };
        let own = path.rsplit('/').next().unwrap_or(path);
        let (file, dir) = if is_package_file(own) {
            match names_a_dir(0) {
                Some(name) => (name, names_a_dir(1)),
                None => return 0.0,
            }
        } else {
            (own, names_a_dir(0))
        };
        let stem = file.split('.').next().unwrap_or(file).to_ascii_lowercase();
        let generic = stem.len() < 3
            || is_package_file(file)
            || matches!(stem.trim_matches('_'), "main" | "lib" | "setup" | "src");
        let named = |name: &str| {
            if self.strong.names_file(name) {
                1.0
            } else if self.prose.names_file(name) {
                0.5
            } else {
                0.0
            }
        };
        let by_file: f64 = if generic { 0.0 } else { named(file) };
        let by_dir = dir.filter(|d| d.len() >= 4).map_or(0.0, |d| named(d) / 2.0);
        by_file.max(by_dir)
    }

    /// Whether `path` is third-party code kept in the repository
    /// (`deps/zlib/inflate.c`, `fmt/bundled/format.h`) that the task does
    /// not name: neither the file nor a directory below the vendored one.
    /// Fixes to a project rarely edit its vendored copies; a task that
    /// writes the library's name still finds them.
    pub(super) fn leaves_vendored(&self, path: &str) -> bool {
        let mut parts = path.split('/');
        parts.next_back();
        let vendored = |d: &str| {
            VENDORED_DIRECTORIES
                .iter()
                .any(|v| d.eq_ignore_ascii_case(v))
        };
        if !parts.any(vendored) {
            return false;
        }
        let named = |name: &str| self.strong.names_file(name) || self.prose.names_file(name);
        let own = path.rsplit('/').next().unwrap_or(path);
        !(named(own) || parts.any(named))
    }
}

/// Whether `path` lies in one of `areas` (see [`TaskText::areas`]): under a
/// directory the area names (`net/http` → `src/net/http/server.go`), or the
/// file the area names by its stem (`refs` → `refs.c`, `builtin/commit` →
/// `builtin/commit.c`).
pub(super) fn in_area(areas: &[String], path: &str) -> bool {
    if areas.is_empty() {
        return false;
    }
    let lower = path.to_ascii_lowercase();
    let (dir, name) = lower.rsplit_once('/').unwrap_or(("", &lower));
    let stem = name.split('.').next().unwrap_or(name);
    let dirs = format!("/{dir}/");
    areas.iter().any(|area| {
        dirs.contains(&format!("/{area}/"))
            || match area.rsplit_once('/') {
                Some((parent, last)) => stem == last && dirs.contains(&format!("/{parent}/")),
                None => stem == area,
            }
    })
}

/// Directories that hold copies of other projects' code. The walker leaves
/// out `vendor/` and `node_modules/` whole; these names are less certain
/// (`deps/` is a project's own code in some trees), so their files stay
/// indexed and searchable, and task mode only ranks them lower.
const VENDORED_DIRECTORIES: &[&str] = &[
    "third_party",
    "thirdparty",
    "third-party",
    "3rdparty",
    "deps",
    "external",
    "extern",
    "bundled",
    "vendored",
];

/// A file that stands for its directory's package: `__init__.py`,
/// `index.ts`, `mod.rs`.
fn is_package_file(name: &str) -> bool {
    let stem = name.split('.').next().unwrap_or(name).to_ascii_lowercase();
    matches!(stem.trim_matches('_'), "init" | "index" | "mod")
}

/// A header and its source file share a name (`blame.h`, `blame.c`): the
/// name a task writes points at the code, so a header whose source file is
/// a candidate too keeps its other evidence but not the name's.
pub(super) fn leave_headers_unnamed(files: &mut [Candidate]) {
    let sources: HashSet<String> = (files.iter())
        .filter_map(|c| split_source_name(&c.path))
        .filter(|(_, header)| !header)
        .map(|(stem, _)| stem)
        .collect();
    for c in files.iter_mut() {
        if let Some((stem, true)) = split_source_name(&c.path)
            && sources.contains(&stem)
        {
            c.features.set(Feature::Stem, 0.0);
        }
    }
}

/// A C-family file's stem, lower-cased, and whether it is a header
/// (`.h`, `.hpp`) rather than a source (`.c`, `.cc`, `.cpp`, `.m`).
fn split_source_name(path: &str) -> Option<(String, bool)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let (stem, ext) = name.rsplit_once('.')?;
    let header = match ext.to_ascii_lowercase().as_str() {
        "h" | "hh" | "hpp" | "hxx" => true,
        "c" | "cc" | "cpp" | "cxx" | "m" | "mm" => false,
        _ => return None,
    };
    Some((stem.to_ascii_lowercase(), header))
}

#[cfg(test)]
mod tests {
    use super::*;
    use lode_core::Language;

    #[test]
    fn a_file_named_by_a_word_of_the_task() {
        let task =
            TaskText::parse("Sessions drop cookies\n\nThe cookie jar is cleared on redirect.");
        let words = TaskWords::new(&task);
        assert_eq!(words.names_file("src/app/session.py"), 1.0);
        assert_eq!(words.names_file("src/app/redirect.py"), 0.5);
        assert_eq!(words.names_file("src/app/models.py"), 0.0);
        assert_eq!(words.names_file("src/app/__init__.py"), 0.0);
        // Two adjacent words name a compound file name.
        let task = TaskText::parse("Writing the commit graph fails on a shallow clone");
        assert_eq!(TaskWords::new(&task).names_file("src/commit_graph.c"), 1.0);
    }

    #[test]
    fn a_package_file_is_named_by_its_directory_and_a_file_by_its_directory_less() {
        let task = TaskText::parse(
            "autodoc skips members of eachDayOfInterval\n\nThe printing of a session is wrong.",
        );
        let words = TaskWords::new(&task);
        assert_eq!(words.names_file("sphinx/ext/autodoc/__init__.py"), 1.0);
        assert_eq!(words.names_file("src/eachDayOfInterval/index.ts"), 1.0);
        assert_eq!(words.names_file("src/session/mod.rs"), 0.5);
        // A file in a directory the task names, half as much as the name would.
        assert_eq!(words.names_file("sympy/printing/latex.py"), 0.25);
        assert_eq!(words.names_file("sphinx/ext/autodoc/directive.py"), 0.5);
        // A top-level directory is the project's own name: it names nothing.
        let task = TaskText::parse("autodoc fails on sphinx 5");
        let words = TaskWords::new(&task);
        assert_eq!(words.names_file("sphinx/__init__.py"), 0.0);
        assert_eq!(words.names_file("sphinx/util.py"), 0.0);
        // A file at the top is still named by its own name.
        assert_eq!(words.names_file("autodoc.py"), 1.0);
    }

    #[test]
    fn a_header_whose_source_is_a_candidate_leaves_the_name_to_it() {
        let candidate = |path: &str| {
            let mut c = Candidate::new(path, Language::C);
            c.features.set(Feature::Stem, 1.0);
            c
        };
        let mut files = [
            candidate("include/git2/blame.h"),
            candidate("src/libgit2/blame.h"),
            candidate("src/libgit2/blame.c"),
            candidate("src/util/pool.hpp"),
            candidate("src/libgit2/blame.txt"),
        ];
        leave_headers_unnamed(&mut files);
        let stems: Vec<f64> = files
            .iter()
            .map(|c| c.features.get(Feature::Stem))
            .collect();
        // The headers of blame.c lose the name; a header alone keeps it.
        assert_eq!(stems, [0.0, 0.0, 1.0, 1.0, 1.0]);
    }

    #[test]
    fn a_directory_holding_half_the_code_names_none_of_it() {
        let task = TaskText::parse("pytest crashes when logging a fixture");
        let paths = [
            "src/_pytest/fixtures.py",
            "src/_pytest/python.py",
            "src/_pytest/logging.py",
            "bench/run.py",
        ];
        let words = TaskWords::new(&task);
        assert_eq!(words.names_file("src/_pytest/python.py"), 0.5);
        let words = words.with_crowded_directories(&paths);
        assert_eq!(words.names_file("src/_pytest/python.py"), 0.0);
        // The file's own name still counts.
        assert_eq!(words.names_file("src/_pytest/fixtures.py"), 1.0);
        assert_eq!(words.names_file("src/_pytest/logging.py"), 1.0);
    }

    #[test]
    fn vendored_code_ranks_lower_unless_the_task_names_its_library() {
        let task =
            TaskText::parse("Branch rename drops the reflog\n\nThe inflate stream ends early.");
        let words = TaskWords::new(&task);
        assert!(words.leaves_vendored("deps/pcre/pcre_compile.c"));
        assert!(words.leaves_vendored("include/spdlog/fmt/bundled/format.h"));
        assert!(words.leaves_vendored("src/Third_Party/lib/x.c"));
        // The project's own code, and a vendored directory's name as a file.
        assert!(!words.leaves_vendored("src/libgit2/branch.c"));
        assert!(!words.leaves_vendored("src/deps.c"));
        // The task writes the file's name, or the library's.
        assert!(!words.leaves_vendored("deps/zlib/inflate.c"));
        let task = TaskText::parse("Update pcre to 8.45");
        assert!(!TaskWords::new(&task).leaves_vendored("deps/pcre/pcre_compile.c"));
    }

    #[test]
    fn an_area_holds_the_files_under_it_and_the_file_it_names() {
        let areas = |title: &str| TaskText::parse(title).areas;
        let http = areas("net/http, refs: close idle connections");
        assert!(in_area(&http, "src/net/http/server.go"));
        assert!(in_area(&http, "src/net/http/internal/chunked.go"));
        assert!(in_area(&http, "refs.c"));
        assert!(in_area(&http, "refs/files-backend.c"));
        assert!(!in_area(&http, "src/net/httptest/server.go"));
        assert!(!in_area(&http, "src/http/server.go"));
        assert!(!in_area(&http, "prefs.c"));
        let commit = areas("builtin/commit: honour -c");
        assert!(in_area(&commit, "builtin/commit.c"));
        assert!(!in_area(&commit, "commit.c"));
        assert!(!in_area(&areas("fix: refs are dropped"), "refs.c"));
    }
}
