//! Regex search over the indexed files, hits grouped by enclosing symbol.

use std::collections::HashMap;

use grep_regex::RegexMatcherBuilder;
use grep_searcher::{BinaryDetection, SearcherBuilder, sinks::Lossy};
use lode_core::{Error, Result, SymbolKind};
use lode_index::{Filter, Index, SymbolRow};
use serde::Serialize;

use crate::source::clip;

/// How a grep runs.
#[derive(Clone, Debug)]
pub struct GrepOptions {
    /// Match letters regardless of case (default: case-sensitive).
    pub case_insensitive: bool,
    /// Which indexed files are searched (path prefix, languages).
    pub filter: Filter,
    /// At most this many matching lines are returned in all.
    pub max_lines: usize,
}

impl Default for GrepOptions {
    fn default() -> GrepOptions {
        GrepOptions {
            case_insensitive: false,
            filter: Filter::default(),
            max_lines: 200,
        }
    }
}

/// One matching line.
#[derive(Clone, Debug, Serialize)]
pub struct GrepLine {
    /// 1-based line number.
    pub line: u32,
    /// The line without its line ending, invalid UTF-8 replaced, clipped to
    /// 240 bytes (at a character boundary, then `…`).
    pub text: String,
}

/// The matching lines inside one symbol (or at a file's top level).
#[derive(Clone, Debug, Serialize)]
pub struct GrepGroup {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// The enclosing symbol; `None` for lines outside every symbol.
    pub symbol: Option<String>,
    /// The symbol's kind; `None` when `symbol` is.
    pub kind: Option<SymbolKind>,
    /// The symbol's container as written (`class Cart`, `impl Config`); `None`
    /// outside every symbol or for a top-level one.
    pub container: Option<String>,
    /// The symbol's span, or the span of the lines for top-level matches.
    pub start_line: u32,
    /// Last line of that span; lines are 1-based and inclusive.
    pub end_line: u32,
    /// Matching lines in the group, counted before the `max_lines` cut.
    pub hits: usize,
    /// The matching lines in file order, as many as `max_lines` left room for.
    pub lines: Vec<GrepLine>,
}

/// The answer to a grep ([`grep()`]).
#[derive(Clone, Debug, Serialize)]
pub struct GrepResults {
    /// The regex as given.
    pub pattern: String,
    /// Most hits first, then by path and start line; the last one kept may
    /// have lost lines to the cap.
    pub groups: Vec<GrepGroup>,
    /// Matching lines in all, including those cut by `max_lines`.
    pub total_lines: usize,
    /// Indexed files under the filter, matching or not.
    pub files_searched: usize,
    /// Lines left out by the cap.
    pub omitted_lines: usize,
}

/// Checks a pattern, describing the first error with its column.
pub fn validate_regex(pattern: &str) -> Result<()> {
    if pattern.is_empty() {
        return Err(Error::BadRegex(
            "empty regex: it would match every line; give a pattern".into(),
        ));
    }
    if let Err(e) = regex_syntax::ast::parse::Parser::new().parse(pattern) {
        let col = pattern[..e.span().start.offset].chars().count() + 1;
        return Err(Error::BadRegex(format!(
            "bad regex {pattern:?}: {} at column {col}",
            e.kind()
        )));
    }
    Ok(())
}

/// Runs `pattern` ([`validate_regex`] first) over the indexed files under
/// `opts.filter`, an overlay's content standing for the file it gives, and
/// puts each matching line under its innermost enclosing symbol. The search
/// of a file stops where it turns out binary (a NUL byte); a file that cannot
/// be read, or whose path now leads out of the root, is passed over.
pub fn grep(index: &Index, pattern: &str, opts: &GrepOptions) -> Result<GrepResults> {
    validate_regex(pattern)?;
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(opts.case_insensitive)
        .build(pattern)
        .map_err(|e| {
            Error::BadRegex(format!(
                "bad regex {pattern:?}: {}",
                e.to_string()
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ")
            ))
        })?;
    let mut searcher = SearcherBuilder::new()
        .binary_detection(BinaryDetection::quit(0))
        .line_number(true)
        .build();

    let paths = index.indexed_paths(&opts.filter)?;
    let root = &index.location.root;
    let mut groups: Vec<GrepGroup> = Vec::new();
    let mut total = 0usize;
    for path in &paths {
        let mut lines: Vec<GrepLine> = Vec::new();
        let sink = Lossy(|n, text| {
            lines.push(GrepLine {
                line: n as u32,
                text: clip(text.trim_end_matches(['\n', '\r']), 240),
            });
            Ok(true)
        });
        // An overlay's content stands for the file on disk.
        let result = match index.overlay_text(path) {
            Some(text) => searcher.search_slice(&matcher, text.as_bytes(), sink),
            // A file since swapped for a link out of the root is not read.
            None => match lode_core::inside::path(root, path) {
                Ok(real) => searcher.search_path(&matcher, real, sink),
                Err(_) => continue,
            },
        };
        if result.is_err() || lines.is_empty() {
            continue;
        }
        total += lines.len();
        let symbols = index.file_symbols(path)?;
        group_file(path, &symbols, lines, &mut groups);
    }
    groups.sort_by(|a, b| {
        b.hits
            .cmp(&a.hits)
            .then_with(|| a.path.cmp(&b.path))
            .then(a.start_line.cmp(&b.start_line))
    });

    // Keep whole groups while they fit, then cut inside the last one.
    let mut budget = opts.max_lines;
    let mut kept = Vec::new();
    for mut g in groups {
        if budget == 0 {
            break;
        }
        if g.lines.len() > budget {
            g.lines.truncate(budget);
        }
        budget -= g.lines.len();
        kept.push(g);
    }
    let shown: usize = kept.iter().map(|g| g.lines.len()).sum();
    Ok(GrepResults {
        pattern: pattern.to_string(),
        groups: kept,
        total_lines: total,
        files_searched: paths.len(),
        omitted_lines: total - shown,
    })
}

/// Puts each matching line of a file under its innermost enclosing symbol.
fn group_file(path: &str, symbols: &[SymbolRow], lines: Vec<GrepLine>, out: &mut Vec<GrepGroup>) {
    let mut by_symbol: HashMap<Option<usize>, Vec<GrepLine>> = HashMap::new();
    let mut order: Vec<Option<usize>> = Vec::new();
    for l in lines {
        // Symbols are stored outer-first, so the last one containing the line is the innermost.
        let sym = symbols
            .iter()
            .rposition(|s| s.start_line <= l.line && l.line <= s.end_line);
        if !by_symbol.contains_key(&sym) {
            order.push(sym);
        }
        by_symbol.entry(sym).or_default().push(l);
    }
    for key in order {
        let lines = by_symbol.remove(&key).unwrap_or_default();
        let group = match key {
            Some(i) => {
                let s = &symbols[i];
                GrepGroup {
                    path: path.to_string(),
                    symbol: Some(s.name.clone()),
                    kind: Some(s.kind),
                    container: s.container.clone(),
                    start_line: s.start_line,
                    end_line: s.end_line,
                    hits: lines.len(),
                    lines,
                }
            }
            None => GrepGroup {
                path: path.to_string(),
                symbol: None,
                kind: None,
                container: None,
                start_line: lines.first().map_or(1, |l| l.line),
                end_line: lines.last().map_or(1, |l| l.line),
                hits: lines.len(),
                lines,
            },
        };
        out.push(group);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_regex_names_the_column() {
        let e = validate_regex("foo(bar").unwrap_err().to_string();
        assert!(e.contains("column 4"), "{e}");
        assert!(!e.contains('\n'));
        let e = validate_regex("a{2,1}").unwrap_err().to_string();
        assert!(e.contains("bad regex"), "{e}");
        assert!(validate_regex(r"fn\s+\w+").is_ok());
    }
}
