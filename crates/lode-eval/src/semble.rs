//! The Semble benchmark layout: `repos.json`, `annotations/<name>.json` and
//! `revisions.tsv`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::case::{Case, load_semble_annotations, read_file};
use crate::error::{Error, Result};

/// One benchmark repository with its queries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SembleRepo {
    /// Short name, also the annotation file stem (`axum`).
    pub name: String,
    /// Language label (`rust`).
    pub language: String,
    /// Clone URL.
    pub url: String,
    /// The pinned commit the annotations were made at.
    pub revision: String,
    /// Directory inside the checkout to index; target paths are relative to
    /// it. `None` means the checkout root.
    pub benchmark_root: Option<String>,
    /// From `revisions.tsv`: whether the pinned revision is reachable in the
    /// public history (`None` when the file or the row is absent).
    pub pinned_revision_available: Option<bool>,
    /// The queries, with `repo` and `language` filled in.
    pub cases: Vec<Case>,
}

impl SembleRepo {
    /// Where this repository is checked out under `repos_dir`
    /// (`repos_dir/<name>`).
    pub fn checkout_dir(&self, repos_dir: &Path) -> PathBuf {
        repos_dir.join(&self.name)
    }

    /// The directory to index: the checkout joined with `benchmark_root`.
    pub fn benchmark_dir(&self, repos_dir: &Path) -> PathBuf {
        let checkout = self.checkout_dir(repos_dir);
        match &self.benchmark_root {
            Some(root) if !root.is_empty() && root != "." => checkout.join(root),
            _ => checkout,
        }
    }
}

/// The whole Semble benchmark as loaded from its directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SembleBenchmark {
    /// The benchmark directory (holding `repos.json`).
    pub dir: PathBuf,
    /// Repositories in `repos.json` order.
    pub repos: Vec<SembleRepo>,
}

#[derive(Deserialize)]
struct RepoSpec {
    name: String,
    language: String,
    url: String,
    revision: String,
    #[serde(default)]
    benchmark_root: Option<String>,
}

impl SembleBenchmark {
    /// Loads `dir/repos.json`, `dir/annotations/<name>.json` for every
    /// repository (a missing annotation file is an error) and, when present,
    /// `dir/revisions.tsv`.
    pub fn load(dir: impl AsRef<Path>) -> Result<Self> {
        let dir = dir.as_ref();
        let repos_path = dir.join("repos.json");
        let specs: Vec<RepoSpec> = serde_json::from_str(&read_file(&repos_path)?)
            .map_err(|e| Error::json(&repos_path, &e))?;
        let revisions_path = dir.join("revisions.tsv");
        let pinned = if revisions_path.exists() {
            parse_revisions_tsv(&read_file(&revisions_path)?, &revisions_path)?
        } else {
            BTreeMap::new()
        };
        let mut seen = BTreeSet::new();
        let mut repos = Vec::with_capacity(specs.len());
        for spec in specs {
            if !seen.insert(spec.name.clone()) {
                return Err(Error::at(
                    &repos_path,
                    None,
                    format!("repository {:?} is listed twice", spec.name),
                ));
            }
            let annotations = dir.join("annotations").join(format!("{}.json", spec.name));
            let mut cases = load_semble_annotations(&annotations)?;
            for case in &mut cases {
                case.repo = Some(spec.name.clone());
                case.language = Some(spec.language.clone());
            }
            repos.push(SembleRepo {
                pinned_revision_available: pinned.get(&spec.name).copied(),
                name: spec.name,
                language: spec.language,
                url: spec.url,
                revision: spec.revision,
                benchmark_root: spec.benchmark_root,
                cases,
            });
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            repos,
        })
    }

    /// The repository called `name`.
    pub fn repo(&self, name: &str) -> Option<&SembleRepo> {
        self.repos.iter().find(|r| r.name == name)
    }

    /// Total number of queries over all repositories.
    pub fn query_count(&self) -> usize {
        self.repos.iter().map(|r| r.cases.len()).sum()
    }

    /// The distinct languages, sorted.
    pub fn languages(&self) -> BTreeSet<&str> {
        self.repos.iter().map(|r| r.language.as_str()).collect()
    }
}

/// Parses `revisions.tsv`: a header naming at least `name` and
/// `pinned_revision_available`, then one row per repository with `yes`/`no`
/// (or `true`/`false`).
pub fn parse_revisions_tsv(text: &str, source: &Path) -> Result<BTreeMap<String, bool>> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let Some((_, header)) = lines.next() else {
        return Ok(BTreeMap::new());
    };
    let columns: Vec<&str> = header.split('\t').map(str::trim).collect();
    let column = |name: &str| {
        columns
            .iter()
            .position(|c| *c == name)
            .ok_or_else(|| Error::at(source, Some(1), format!("header has no {name:?} column")))
    };
    let name_col = column("name")?;
    let pinned_col = column("pinned_revision_available")?;
    let mut out = BTreeMap::new();
    for (index, line) in lines {
        let fields: Vec<&str> = line.split('\t').map(str::trim).collect();
        let line_no = index + 1;
        let (Some(name), Some(flag)) = (fields.get(name_col), fields.get(pinned_col)) else {
            return Err(Error::at(source, Some(line_no), "too few columns"));
        };
        let flag = match flag.to_ascii_lowercase().as_str() {
            "yes" | "true" | "1" => true,
            "no" | "false" | "0" => false,
            other => {
                return Err(Error::at(
                    source,
                    Some(line_no),
                    format!("pinned_revision_available must be yes or no, not {other:?}"),
                ));
            }
        };
        out.insert((*name).to_string(), flag);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_tsv_parses_and_reports_bad_rows() {
        let src = Path::new("revisions.tsv");
        let ok = parse_revisions_tsv(
            "name\tlanguage\tqueries\tpinned_revision_available\naxum\trust\t20\tyes\nzig\tzig\t20\tno\n",
            src,
        )
        .unwrap();
        assert_eq!(ok.get("axum"), Some(&true));
        assert_eq!(ok.get("zig"), Some(&false));

        let err = parse_revisions_tsv(
            "name\tpinned_revision_available\naxum\tyes\nzig\tmaybe\n",
            src,
        )
        .unwrap_err();
        assert_eq!(err.line, Some(3));
        let err = parse_revisions_tsv("name\tqueries\n", src).unwrap_err();
        assert_eq!(err.line, Some(1));
        let err = parse_revisions_tsv("name\tpinned_revision_available\naxum\n", src).unwrap_err();
        assert_eq!(err.line, Some(2));
    }

    #[test]
    fn benchmark_dir_joins_root() {
        let repo = SembleRepo {
            name: "flask".into(),
            language: "python".into(),
            url: String::new(),
            revision: String::new(),
            benchmark_root: Some("src/flask".into()),
            pinned_revision_available: None,
            cases: vec![],
        };
        assert_eq!(
            repo.benchmark_dir(Path::new("/r")),
            PathBuf::from("/r/flask/src/flask")
        );
    }

    #[test]
    fn load_reports_missing_files() {
        let err = SembleBenchmark::load("/nonexistent/semble").unwrap_err();
        assert!(err.to_string().contains("repos.json"), "{err}");
    }
}
