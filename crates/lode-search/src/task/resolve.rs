//! Paths and module names a task mentions, matched to the repository's files.
//!
//! A mention rarely equals a repository path: a traceback gives an absolute
//! path on someone's machine (`/home/u/proj/src/app.py`), prose gives a file
//! name (`sessions.py`) or a module (`sympy.core.basic`), a JVM frame a
//! package. A mention matches the files whose path ends with its trailing
//! segments, the more segments the stronger.

use std::collections::HashMap;

/// The repository's paths, searchable by file name.
pub struct PathIndex<'a> {
    by_name: HashMap<&'a str, Vec<&'a str>>,
    /// Paths without their extension, by their last segment (for modules:
    /// `sympy/core/basic` names `sympy/core/basic.py`).
    by_stem: HashMap<&'a str, Vec<&'a str>>,
    /// `__init__`/`mod`/`index` files, by their directory's last segment: a
    /// repository of one package per function has thousands of `index` files.
    packages: HashMap<&'a str, Vec<&'a str>>,
}

/// The file names that stand for their directory, extension dropped.
const PACKAGE_STEMS: [&str; 3] = ["__init__", "mod", "index"];

/// How strongly a mention names a file: 1 when two or more trailing
/// segments match (or the whole mention), less for a file name alone,
/// shared among the files that have it.
pub type Strength = f64;

/// A file name alone names a file this strongly (before sharing).
const NAME_ONLY: f64 = 0.5;

/// A file name alone names nothing when more files than this have it.
const MAX_NAME_SHARERS: usize = 4;

impl<'a> PathIndex<'a> {
    pub fn new(paths: &'a [String]) -> PathIndex<'a> {
        let mut by_name: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut by_stem: HashMap<&str, Vec<&str>> = HashMap::new();
        let mut packages: HashMap<&str, Vec<&str>> = HashMap::new();
        for p in paths {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
            by_name.entry(name).or_default().push(p);
            let stem = name.split('.').next().unwrap_or(name);
            by_stem.entry(stem).or_default().push(p);
            if PACKAGE_STEMS.contains(&stem) {
                let last = dir.rsplit('/').next().unwrap_or(dir);
                packages.entry(last).or_default().push(p);
            }
        }
        PathIndex {
            by_name,
            by_stem,
            packages,
        }
    }

    /// The files a path mention names, with their strength. `strict`: a
    /// file name alone is not enough (a trace frame's `__init__.py` or
    /// `main.go` could be any package's).
    pub fn resolve_path(&self, mention: &str, strict: bool) -> Vec<(&'a str, Strength)> {
        let segments: Vec<&str> = mention
            .split('/')
            .filter(|s| !s.is_empty() && *s != ".")
            .collect();
        let Some(name) = segments.last() else {
            return Vec::new();
        };
        let Some(files) = self.by_name.get(name) else {
            return Vec::new();
        };
        let scored: Vec<(&str, usize)> = files
            .iter()
            .map(|f| (*f, common_suffix(f, &segments)))
            .collect();
        let best = scored.iter().map(|s| s.1).max().unwrap_or(0);
        if best >= 2 || (best == segments.len() && segments.len() >= 2) {
            let hits: Vec<&str> = scored.iter().filter(|s| s.1 == best).map(|s| s.0).collect();
            let share = 1.0 / hits.len() as f64;
            return hits.into_iter().map(|f| (f, share.max(0.5))).collect();
        }
        // A name many files share (`__init__.py`, `conf.py`) names none of them.
        if (strict && segments.len() > 1) || files.len() > MAX_NAME_SHARERS {
            return Vec::new();
        }
        let share = NAME_ONLY / files.len() as f64;
        files.iter().map(|f| (*f, share)).collect()
    }

    /// The files a module path (`sympy/core/basic`, `tokio/net/tcp`) names:
    /// a file whose path without its extension ends with the module's
    /// segments (two at least), or with them less the last (which may be a
    /// class or function: `sympy/core/basic/Basic`). A package's
    /// `__init__`/`mod`/`index` file stands for its directory.
    pub fn resolve_module(&self, module: &str) -> Vec<(&'a str, Strength)> {
        let segments: Vec<&str> = module.split('/').filter(|s| !s.is_empty()).collect();
        for take in [segments.len(), segments.len().saturating_sub(1)] {
            if take < 2 {
                break;
            }
            let want = &segments[..take];
            let last = want[take - 1];
            let mut hits: Vec<&str> = Vec::new();
            for f in self.by_stem.get(last).into_iter().flatten() {
                if stem_segments_end_with(f, want) {
                    hits.push(f);
                }
            }
            for f in self.packages.get(last).into_iter().flatten() {
                let dir = f.rsplit_once('/').map_or("", |d| d.0);
                if segments_end_with(dir, want) {
                    hits.push(f);
                }
            }
            if !hits.is_empty() {
                hits.sort_unstable();
                hits.dedup();
                let share = (1.0 / hits.len() as f64).max(0.5);
                return hits.into_iter().map(|f| (f, share)).collect();
            }
        }
        Vec::new()
    }
}

/// How many trailing segments `path` shares with `segments`.
fn common_suffix(path: &str, segments: &[&str]) -> usize {
    path.rsplit('/')
        .zip(segments.iter().rev())
        .take_while(|(a, b)| a == *b)
        .count()
}

/// Whether `path`'s segments, its extension dropped, end with `want`.
fn stem_segments_end_with(path: &str, want: &[&str]) -> bool {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    let stem = name.split('.').next().unwrap_or(name);
    let Some((last, rest)) = want.split_last() else {
        return false;
    };
    stem == *last && segments_end_with(dir, rest)
}

fn segments_end_with(dir: &str, want: &[&str]) -> bool {
    let have: Vec<&str> = dir.split('/').filter(|s| !s.is_empty()).collect();
    have.len() >= want.len() && have[have.len() - want.len()..] == *want
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths() -> Vec<String> {
        [
            "sympy/core/basic.py",
            "sympy/core/__init__.py",
            "sympy/polys/polyerrors.py",
            "sympy/matrices/expressions/matexpr.py",
            "requests/sessions.py",
            "tests/test_sessions.py",
            "src/main/java/com/acme/ser/StdSerializer.java",
            "a/util.py",
            "b/util.py",
            "src/addDays/index.ts",
            "src/lib/addDays/index.ts",
            "crates/core/src/walk/mod.rs",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn a_path_matches_by_its_trailing_segments() {
        let p = paths();
        let idx = PathIndex::new(&p);
        assert_eq!(
            idx.resolve_path("/home/u/sympy/sympy/core/basic.py", true),
            [("sympy/core/basic.py", 1.0)]
        );
        assert_eq!(
            idx.resolve_path("com/acme/ser/StdSerializer.java", true),
            [("src/main/java/com/acme/ser/StdSerializer.java", 1.0)]
        );
        assert_eq!(
            idx.resolve_path("sessions.py", false),
            [("requests/sessions.py", 0.5)]
        );
        // A file name two files share: each gets half of a name's strength.
        assert_eq!(
            idx.resolve_path("util.py", false),
            [("a/util.py", 0.25), ("b/util.py", 0.25)]
        );
        // Strict (a trace frame): another package's file of the same name is not this one.
        assert!(
            idx.resolve_path("/usr/lib/python3/site-packages/other/util.py", true)
                .is_empty()
        );
        assert!(idx.resolve_path("nowhere.py", false).is_empty());
    }

    #[test]
    fn a_module_names_its_file_or_its_package() {
        let p = paths();
        let idx = PathIndex::new(&p);
        assert_eq!(
            idx.resolve_module("sympy/polys/polyerrors/PolynomialError"),
            [("sympy/polys/polyerrors.py", 1.0)]
        );
        assert_eq!(
            idx.resolve_module("matrices/expressions/matexpr"),
            [("sympy/matrices/expressions/matexpr.py", 1.0)]
        );
        assert_eq!(
            idx.resolve_module("sympy/core"),
            [("sympy/core/__init__.py", 1.0)]
        );
        // One package per function: the directory's trailing segments pick it.
        assert_eq!(
            idx.resolve_module("lib/addDays"),
            [("src/lib/addDays/index.ts", 1.0)]
        );
        assert_eq!(
            idx.resolve_module("src/addDays"),
            [("src/addDays/index.ts", 1.0)]
        );
        assert_eq!(
            idx.resolve_module("src/walk"),
            [("crates/core/src/walk/mod.rs", 1.0)]
        );
        assert!(idx.resolve_module("np/array").is_empty());
        assert!(idx.resolve_module("basic").is_empty());
    }
}
