//! The SWE-bench Lite subset: issue text → the files (and symbols) the fix
//! touched.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::case::{Case, SymbolTarget, read_file};
use crate::error::{Error, Result};
use crate::target::Target;

#[derive(Deserialize)]
struct RawInstance {
    instance_id: String,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    repo: Option<String>,
    #[serde(default)]
    base_commit: Option<String>,
    query: String,
    #[serde(default)]
    gold_files: Vec<String>,
    #[serde(default)]
    gold_code_files: Vec<String>,
    #[serde(default)]
    gold_symbols: BTreeMap<String, Vec<String>>,
    /// Path → inclusive `[start, end]` line spans (`scripts/mine-commits.py`).
    #[serde(default)]
    gold_lines: BTreeMap<String, Vec<(u32, u32)>>,
}

/// Parses SWE-bench `cases.jsonl`: one instance per line,
/// `{instance_id, language, repo, base_commit, query, gold_files,
/// gold_code_files, gold_symbols}`, and optionally `gold_lines`.
///
/// Each instance becomes a [`Case`] with `query` = the issue text,
/// `relevant` = whole-file targets for `gold_code_files` (falling back to
/// `gold_files` when there are none), `symbols` = `gold_symbols` flattened
/// (file order, then listed order), `id` = `instance_id`, `repo` = the
/// GitHub `owner/name`, `revision` = `base_commit`, `changed` = `gold_lines`
/// as line-span targets.
pub fn parse_swebench(text: &str, source: &Path) -> Result<Vec<Case>> {
    let mut cases = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let raw: RawInstance =
            serde_json::from_str(line).map_err(|e| Error::json_line(source, line_no, &e))?;
        let files = if raw.gold_code_files.is_empty() {
            raw.gold_files
        } else {
            raw.gold_code_files
        };
        let case = Case {
            query: raw.query,
            relevant: files.into_iter().map(Target::file).collect(),
            secondary: Vec::new(),
            category: None,
            language: raw.language,
            repo: raw.repo,
            id: Some(raw.instance_id),
            revision: raw.base_commit,
            symbols: raw
                .gold_symbols
                .into_iter()
                .flat_map(|(path, names)| {
                    names.into_iter().map(move |name| SymbolTarget {
                        path: path.clone(),
                        name,
                    })
                })
                .collect(),
            changed: raw
                .gold_lines
                .into_iter()
                .flat_map(|(path, spans)| {
                    spans
                        .into_iter()
                        .map(move |(start, end)| Target::span(path.clone(), start, end))
                })
                .collect(),
        };
        case.validate()
            .map_err(|m| Error::at(source, Some(line_no), m))?;
        cases.push(case);
    }
    Ok(cases)
}

/// Reads SWE-bench `cases.jsonl` (see [`parse_swebench`]).
pub fn load_swebench(path: impl AsRef<Path>) -> Result<Vec<Case>> {
    let path = path.as_ref();
    parse_swebench(&read_file(path)?, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_instance() {
        let line = r#"{"instance_id": "psf__requests-2317", "language": "python", "repo": "psf/requests", "base_commit": "abc", "query": "method = builtin_str(method) problem", "gold_files": ["requests/sessions.py", "tests/t.py"], "gold_code_files": ["requests/sessions.py"], "gold_symbols": {"requests/sessions.py": ["imports", "Session.request"]}}"#;
        let cases = parse_swebench(line, Path::new("cases.jsonl")).unwrap();
        let case = &cases[0];
        assert_eq!(case.id.as_deref(), Some("psf__requests-2317"));
        assert_eq!(case.repo.as_deref(), Some("psf/requests"));
        assert_eq!(case.revision.as_deref(), Some("abc"));
        assert_eq!(case.relevant, vec![Target::file("requests/sessions.py")]);
        assert_eq!(case.symbols.len(), 2);
        assert_eq!(case.symbols[1].name, "Session.request");
        assert!(case.changed.is_empty());
    }

    #[test]
    fn a_mined_pairs_changed_lines_are_span_targets() {
        let line = r#"{"instance_id": "o__r-1", "query": "fix the parser", "gold_code_files": ["a.py", "b.py"], "gold_lines": {"a.py": [[3, 5], [9, 9]], "b.py": [[7, 8]]}}"#;
        let case = &parse_swebench(line, Path::new("pairs.jsonl")).unwrap()[0];
        assert_eq!(
            case.changed,
            [
                Target::span("a.py", 3, 5),
                Target::span("a.py", 9, 9),
                Target::span("b.py", 7, 8)
            ]
        );
        assert!(case.changed[0].matches_location("a.py", 5, 12));
        assert!(!case.changed[0].matches_location("a.py", 6, 8));
    }

    #[test]
    fn bad_line_is_reported() {
        let text = "{\"instance_id\":\"a\",\"query\":\"q\",\"gold_code_files\":[\"x.py\"]}\n{\"instance_id\":\"b\"}\n";
        let err = parse_swebench(text, Path::new("cases.jsonl")).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.message.contains("query"), "{err}");
        let err = parse_swebench(
            "{\"instance_id\":\"a\",\"query\":\"q\"}",
            Path::new("cases.jsonl"),
        )
        .unwrap_err();
        assert!(err.message.contains("no relevant"), "{err}");
    }
}
