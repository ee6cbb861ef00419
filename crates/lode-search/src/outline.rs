//! A file's symbols as a tree.

use lode_core::{Error, Result};
use lode_index::{Index, SymbolRow};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct OutlineNode {
    pub name: String,
    pub kind: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineNode>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Outline {
    pub path: String,
    pub language: String,
    pub lines: u32,
    pub symbols: Vec<OutlineNode>,
}

/// The outline of `path` (relative to the root).
pub fn outline(index: &Index, path: &str) -> Result<Outline> {
    let file = index.file(path)?.ok_or_else(|| {
        Error::NotFound(format!(
            "{path}: not in the index (skipped by the file policy; lode status counts why)"
        ))
    })?;
    if let Some(reason) = &file.skip_reason {
        return Err(Error::NotFound(format!("{path}: not indexed ({reason})")));
    }
    let rows = index.file_symbols(path)?;
    Ok(Outline {
        path: file.path,
        language: file.lang,
        lines: file.lines,
        symbols: tree(&rows),
    })
}

fn tree(rows: &[SymbolRow]) -> Vec<OutlineNode> {
    fn children(rows: &[SymbolRow], parent: Option<i64>) -> Vec<OutlineNode> {
        rows.iter()
            .filter(|r| r.parent == parent)
            .map(|r| OutlineNode {
                name: r.name.clone(),
                kind: r.kind.clone(),
                start_line: r.start_line,
                end_line: r.end_line,
                signature: r.signature.clone(),
                doc: r
                    .doc
                    .as_ref()
                    .map(|d| d.lines().next().unwrap_or("").to_string()),
                children: children(rows, Some(r.id)),
            })
            .collect()
    }
    children(rows, None)
}
