//! Benchmark cases and the loaders for lode's JSONL and Semble's annotation
//! files.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::target::Target;

/// One evaluation query with what it should find.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// The query text given to the search.
    pub query: String,
    /// The targets the query is about.
    #[serde(default)]
    pub relevant: Vec<Target>,
    /// Further targets that also count as hits (Semble scores relevant and
    /// secondary targets together).
    #[serde(default)]
    pub secondary: Vec<Target>,
    /// Query category (Semble: `symbol`, `semantic`, `architecture`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Language of the repository the query runs against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Repository the query runs against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// A stable identifier (SWE-bench `instance_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// Revision to check out before searching (SWE-bench `base_commit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revision: Option<String>,
    /// Symbols the answer touches (SWE-bench `gold_symbols`), for the symbol
    /// hit rate.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub symbols: Vec<SymbolTarget>,
    /// Lines the answer changed, as the revision numbers them (mined pairs'
    /// `gold_lines`), to learn which chunks of a file a task is about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<Target>,
}

/// A symbol expected in a file, e.g. `Session.request` in
/// `requests/sessions.py`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SymbolTarget {
    /// File the symbol lives in.
    pub path: String,
    /// Name, possibly qualified with `.` (`Class.method`).
    pub name: String,
}

impl Case {
    /// A case with the given query and relevant targets.
    pub fn new(query: impl Into<String>, relevant: Vec<Target>) -> Self {
        Self {
            query: query.into(),
            relevant,
            ..Self::default()
        }
    }

    /// Relevant then secondary targets, the order used for
    /// [`crate::QueryResult::target_ranks`].
    pub fn targets(&self) -> impl Iterator<Item = &Target> + Clone {
        self.relevant.iter().chain(&self.secondary)
    }

    /// Number of relevant plus secondary targets.
    pub fn target_count(&self) -> usize {
        self.relevant.len() + self.secondary.len()
    }

    /// Checks a loaded case: a non-empty query and at least one target.
    pub(crate) fn validate(&self) -> std::result::Result<(), String> {
        if self.query.trim().is_empty() {
            return Err("empty query".into());
        }
        if self.target_count() == 0 {
            return Err(format!(
                "query {:?} has no relevant or secondary targets",
                self.query
            ));
        }
        Ok(())
    }
}

/// Semble's fallback category for an annotation without one: a query
/// without a space is `symbol`, one starting with "how " is
/// `architecture`, anything else `semantic`.
pub fn infer_category(query: &str) -> &'static str {
    if !query.trim().contains(' ') {
        return "symbol";
    }
    if query.to_lowercase().starts_with("how ") {
        return "architecture";
    }
    "semantic"
}

pub(crate) fn read_file(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))
}

/// Parses lode's JSON Lines cases: one JSON object per line,
/// `{query, relevant: [...], secondary: [...], category, language?, repo?, id?}`.
/// Blank lines and lines starting with `#` are skipped. `source` names the
/// input in errors.
pub fn parse_jsonl(text: &str, source: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let case: Case =
            serde_json::from_str(trimmed).map_err(|e| Error::json_line(source, line_no, &e))?;
        case.validate()
            .map_err(|m| Error::at(source, Some(line_no), m))?;
        cases.push(case);
    }
    Ok(cases)
}

/// Reads a JSON Lines case file (see [`parse_jsonl`]).
pub fn load_jsonl(path: impl AsRef<Path>) -> Result<Vec<Case>> {
    let path = path.as_ref();
    parse_jsonl(&read_file(path)?, path)
}

/// Parses one Semble annotation file: a JSON array of
/// `{query, relevant, secondary, category}`. A case without `repo` gets the
/// file stem (`annotations/axum.json` → `axum`), one without `category` gets
/// [`infer_category`], both as Semble does.
pub fn parse_semble_annotations(text: &str, source: &Path) -> Result<Vec<Case>> {
    let mut cases: Vec<Case> = serde_json::from_str(text).map_err(|e| Error::json(source, &e))?;
    let stem = source.file_stem().map(|s| s.to_string_lossy().into_owned());
    for (index, case) in cases.iter_mut().enumerate() {
        case.validate()
            .map_err(|m| Error::at(source, None, format!("entry {}: {m}", index + 1)))?;
        if case.repo.is_none() {
            case.repo.clone_from(&stem);
        }
        if case.category.is_none() {
            case.category = Some(infer_category(&case.query).to_string());
        }
    }
    Ok(cases)
}

/// Reads a Semble annotation file (see [`parse_semble_annotations`]).
pub fn load_semble_annotations(path: impl AsRef<Path>) -> Result<Vec<Case>> {
    let path = path.as_ref();
    parse_semble_annotations(&read_file(path)?, path)
}

/// Reads a case file in either format: a file whose first non-blank
/// character is `[` is a Semble annotation array, anything else is lode's
/// JSON Lines.
pub fn load_cases(path: impl AsRef<Path>) -> Result<Vec<Case>> {
    let path = path.as_ref();
    let text = read_file(path)?;
    if text.trim_start().starts_with('[') {
        parse_semble_annotations(&text, path)
    } else {
        parse_jsonl(&text, path)
    }
}

/// Groups cases by `repo` (cases without one under `""`), keeping their
/// order within each group.
pub fn group_by_repo(cases: &[Case]) -> BTreeMap<String, Vec<Case>> {
    let mut groups: BTreeMap<String, Vec<Case>> = BTreeMap::new();
    for case in cases {
        groups
            .entry(case.repo.clone().unwrap_or_default())
            .or_default()
            .push(case.clone());
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    fn src() -> &'static Path {
        Path::new("cases.jsonl")
    }

    #[test]
    fn jsonl_parses_both_target_forms() {
        let text = r#"
{"query": "parse config", "relevant": ["src/config.rs", {"path": "src/lib.rs", "start_line": 3, "end_line": "9"}], "secondary": [], "category": "semantic"}
# a comment
{"query": "Router", "relevant": ["src/router.rs"], "language": "rust", "repo": "axum", "extra": 1}
"#;
        let cases = parse_jsonl(text, src()).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].relevant[0], Target::file("src/config.rs"));
        assert_eq!(cases[0].relevant[1], Target::span("src/lib.rs", 3, 9));
        assert_eq!(cases[0].category.as_deref(), Some("semantic"));
        assert_eq!(cases[1].category, None);
        assert_eq!(cases[1].language.as_deref(), Some("rust"));
        assert_eq!(cases[1].repo.as_deref(), Some("axum"));
    }

    #[test]
    fn span_needs_both_lines() {
        let cases = parse_jsonl(
            r#"{"query":"q","relevant":[{"path":"a.rs","start_line":4}]}"#,
            src(),
        )
        .unwrap();
        assert_eq!(cases[0].relevant[0], Target::file("a.rs"));
    }

    #[test]
    fn malformed_line_names_file_and_line() {
        let text = "{\"query\":\"ok\",\"relevant\":[\"a.rs\"]}\n\n{\"query\": \"broken\", \"relevant\": [\n";
        let err = parse_jsonl(text, src()).unwrap_err();
        assert_eq!(err.line, Some(3));
        assert_eq!(err.path.as_deref(), Some(src()));
        assert!(
            err.to_string().starts_with("cases.jsonl:3: invalid JSON"),
            "{err}"
        );
    }

    #[test]
    fn bad_cases_are_errors_with_lines() {
        let missing_query = parse_jsonl(r#"{"relevant":["a.rs"]}"#, src()).unwrap_err();
        assert_eq!(missing_query.line, Some(1));
        assert!(missing_query.message.contains("query"), "{missing_query}");

        let no_targets = parse_jsonl("\n{\"query\":\"q\"}", src()).unwrap_err();
        assert_eq!(no_targets.line, Some(2));
        assert!(no_targets.message.contains("no relevant"), "{no_targets}");

        let bad_target = parse_jsonl(r#"{"query":"q","relevant":[42]}"#, src()).unwrap_err();
        assert!(bad_target.message.contains("target"), "{bad_target}");

        let backwards = parse_jsonl(
            r#"{"query":"q","relevant":[{"path":"a","start_line":9,"end_line":2}]}"#,
            src(),
        )
        .unwrap_err();
        assert!(backwards.message.contains("after end_line"), "{backwards}");

        let bad_line = parse_jsonl(
            r#"{"query":"q","relevant":[{"path":"a","start_line":"x","end_line":2}]}"#,
            src(),
        )
        .unwrap_err();
        assert!(bad_line.message.contains("line number"), "{bad_line}");
    }

    #[test]
    fn missing_file_is_an_error() {
        let err = load_cases("/nonexistent/lode-eval/cases.jsonl").unwrap_err();
        assert!(
            err.to_string()
                .contains("/nonexistent/lode-eval/cases.jsonl")
        );
        assert!(err.message.contains("cannot read"));
    }

    #[test]
    fn semble_annotations_fill_repo_and_category() {
        let text = r#"[
  {"query": "how routing works", "relevant": ["axum/src/routing/mod.rs"], "secondary": []},
  {"query": "Router", "relevant": ["axum/src/routing/mod.rs"], "secondary": ["x.rs"], "category": "symbol", "seed": 1}
]"#;
        let cases = parse_semble_annotations(text, Path::new("annotations/axum.json")).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].repo.as_deref(), Some("axum"));
        assert_eq!(cases[0].category.as_deref(), Some("architecture"));
        assert_eq!(cases[1].secondary, vec![Target::file("x.rs")]);
    }

    #[test]
    fn semble_annotation_errors_have_lines() {
        let text = "[\n {\"query\": \"a\", \"relevant\": [\"x\"]},\n {\"query\": \"b\", \"relevant\": [\"x\",]}\n]";
        let err = parse_semble_annotations(text, Path::new("annotations/x.json")).unwrap_err();
        assert_eq!(err.line, Some(3));
        let err = parse_semble_annotations(
            r#"[{"query": "a", "relevant": []}]"#,
            Path::new("annotations/x.json"),
        )
        .unwrap_err();
        assert!(err.message.starts_with("entry 1:"), "{err}");
    }

    #[test]
    fn infer_category_follows_semble() {
        assert_eq!(infer_category("Router"), "symbol");
        assert_eq!(infer_category("How does routing work"), "architecture");
        assert_eq!(infer_category("json body extractor"), "semantic");
    }

    #[test]
    fn target_round_trips_through_json() {
        let case = Case::new("q", vec![Target::file("a.rs"), Target::span("b.rs", 1, 2)]);
        let json = serde_json::to_string(&case).unwrap();
        assert!(
            json.contains(r#""relevant":["a.rs",{"path":"b.rs","start_line":1,"end_line":2}]"#)
        );
        let back: Case = serde_json::from_str(&json).unwrap();
        assert_eq!(back, case);
    }
}
