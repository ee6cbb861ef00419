//! Finding the one symbol a user means: `name`, `Type::name`, `Type.name`,
//! `pkg.Func`, or `path:LINE`, optionally under a path.

use lode_core::{Error, Result, SymbolKind};
use lode_index::{Index, SymbolRow};

use crate::names::{container_type, segments};

/// A symbol's location as `path:start-end`.
pub fn location(s: &SymbolRow) -> String {
    format!("{}:{}-{}", s.path, s.start_line, s.end_line)
}

fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_end_matches('/');
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|r| r.starts_with('/'))
}

/// The definitions `query` names (under `path`, when given), best first;
/// empty when none. A class and its own constructors count as the class.
pub fn candidates(index: &Index, query: &str, path: Option<&str>) -> Result<Vec<SymbolRow>> {
    let query = query.trim();
    if query.is_empty() {
        return Err(Error::BadQuery("empty symbol name".into()));
    }
    // `path:LINE`: the innermost symbol there.
    if let Some((file, line)) = query.rsplit_once(':')
        && let Ok(line) = line.parse::<u32>()
        && !file.ends_with(':')
    {
        let at = match index.symbol_at(file, line)? {
            Some(sym) => Some(sym),
            None => lines_around(index, file, line)?,
        };
        return Ok(at.into_iter().collect());
    }
    let parts = segments(query);
    let Some((&name, qualifier)) = parts.split_last() else {
        return Err(Error::BadQuery(format!("not a symbol name: {query}")));
    };
    let mut found: Vec<SymbolRow> = index
        .symbols_named(name)?
        .into_iter()
        .filter(|s| path.is_none_or(|p| under(&s.path, p)))
        .filter(|s| match qualifier.last() {
            None => true,
            Some(q) => {
                s.container.as_deref().map(container_type) == Some(*q)
                    // `pkg.Func`: the package's directory, or the file's stem.
                    || s.path.split('/').rev().nth(1) == Some(*q)
                    || s.path.rsplit('/').next().and_then(|f| f.split('.').next()) == Some(*q)
            }
        })
        .collect();
    // `impl Config` blocks are not what `Config` means when the struct is there;
    // a constructor is its class.
    let has_type = found.iter().any(|s| {
        matches!(
            s.kind.as_str(),
            "struct" | "class" | "enum" | "trait" | "interface"
        )
    });
    if has_type {
        found.retain(|s| s.kind != SymbolKind::Impl);
    }
    let classes: Vec<SymbolRow> = found
        .iter()
        .filter(|s| matches!(s.kind, SymbolKind::Class | SymbolKind::Struct))
        .cloned()
        .collect();
    found.retain(|s| {
        !(s.kind == SymbolKind::Method
            && classes.iter().any(|c| {
                s.parent == Some(c.id)
                    || (s.path == c.path
                        && s.container.as_deref().map(container_type) == Some(c.name.as_str()))
            }))
    });
    // Declarations without bodies (a trait's or interface's method, a
    // prototype) rank after definitions.
    found.sort_by_key(|s| {
        (
            s.end_line == s.start_line && s.kind == SymbolKind::Method,
            s.id,
        )
    });
    Ok(found)
}

/// Lines shown either side of a `path:LINE` that no symbol encloses.
pub const LINES_AROUND: u32 = 10;

/// Where no symbol encloses `path:LINE` of an indexed file (top-level code,
/// a macro body), the lines around it, as a row of kind `lines`.
fn lines_around(index: &Index, path: &str, line: u32) -> Result<Option<SymbolRow>> {
    if index.file(path)?.is_none() {
        return Ok(None);
    }
    let count = index
        .file_text(path)
        .map_or(0, |t| t.lines().count() as u32);
    if line == 0 || line > count {
        return Ok(None);
    }
    Ok(Some(SymbolRow {
        id: 0,
        parent: None,
        path: path.to_string(),
        name: format!("{path}:{line}"),
        kind: SymbolKind::Lines,
        container: None,
        start_line: line.saturating_sub(LINES_AROUND).max(1),
        end_line: (line + LINES_AROUND).min(count),
        signature: String::new(),
        doc: None,
    }))
}

/// The one symbol `query` names, or an error listing the candidates.
pub fn find_symbol(index: &Index, query: &str, path: Option<&str>) -> Result<SymbolRow> {
    let mut found = candidates(index, query, path)?;
    match found.len() {
        0 => Err(Error::NotFound(match path {
            Some(p) => format!("no symbol {query} under {p}"),
            None => format!("no symbol {query} in the index"),
        })),
        1 => Ok(found.remove(0)),
        n => {
            let list: Vec<String> = found
                .iter()
                .take(10)
                .map(|s| {
                    let owner = s
                        .container
                        .as_deref()
                        .map(|c| format!("{}::", container_type(c)))
                        .unwrap_or_default();
                    format!("{} {owner}{} {}", s.kind, s.name, location(s))
                })
                .collect();
            let more = if n > 10 {
                format!("; and {} more", n - 10)
            } else {
                String::new()
            };
            Err(Error::Ambiguous(format!(
                "{n} symbols are named {query}: {}{more} (narrow it with a path, or a qualified name such as Type::name)",
                list.join("; ")
            )))
        }
    }
}
