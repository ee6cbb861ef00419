//! A file's symbols as a tree.

use lode_core::{Error, Language, Result, SymbolKind};
use lode_index::{Index, SymbolRow};
use serde::Serialize;

/// One symbol of a file's outline, with the symbols defined inside it.
#[derive(Clone, Debug, Serialize)]
pub struct OutlineNode {
    /// The name as written, without its container.
    pub name: String,
    /// What the definition is (`function`, `method`, `class`, …).
    pub kind: SymbolKind,
    /// First line of the definition (1-based; doc comments above it excluded).
    pub start_line: u32,
    /// Last line of the definition (inclusive).
    pub end_line: u32,
    /// The declaration up to its body, whitespace collapsed; may be empty.
    pub signature: String,
    /// The first line of its doc comment or docstring; `None` when it has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub doc: Option<String>,
    /// The symbols defined inside it, in source order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<OutlineNode>,
}

/// A file's symbols as a tree ([`outline()`]).
#[derive(Clone, Debug, Serialize)]
pub struct Outline {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// The file's language as indexed.
    pub language: Language,
    /// Lines in the file.
    pub lines: u32,
    /// The top-level symbols in source order, each with its children.
    pub symbols: Vec<OutlineNode>,
}

/// The outline of `path` (relative to the root).
pub fn outline(index: &Index, path: &str) -> Result<Outline> {
    if index.overlay_deletes(path) {
        return Err(Error::NotFound(format!("{path}: deleted in the overlay")));
    }
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
                kind: r.kind,
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

/// One symbol of a directory outline: kind, name, first line, nesting depth.
#[derive(Clone, Debug, Serialize)]
pub struct CompactSymbol {
    /// What the definition is (`function`, `class`, …).
    pub kind: SymbolKind,
    /// The name as written, without its container.
    pub name: String,
    /// First line of the definition (1-based).
    pub line: u32,
    /// Nesting: 0 at the top level, one more per enclosing symbol.
    pub depth: u32,
}

/// One file of a directory outline.
#[derive(Clone, Debug, Serialize)]
pub struct FileOutline {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// The file's language as indexed.
    pub language: Language,
    /// Its symbols in source order (a parent before its children), as many as
    /// the cap left room for.
    pub symbols: Vec<CompactSymbol>,
}

/// The outline of every indexed file under a directory, capped.
#[derive(Clone, Debug, Serialize)]
pub struct DirOutline {
    /// The directory as given, relative to the root (`""`: the whole repository).
    pub path: String,
    /// The files in path order, up to the one where the cap was reached.
    pub files: Vec<FileOutline>,
    /// Files left out at the cap.
    pub omitted_files: usize,
    /// Symbols left out at the cap: those of the omitted files and the rest of
    /// the last file listed.
    pub omitted_symbols: usize,
}

/// The outline of every indexed file under `dir` (relative to the root; `""`
/// for all), at most `max_symbols` symbols in all, files in path order.
pub fn outline_dir(index: &Index, dir: &str, max_symbols: usize) -> Result<DirOutline> {
    let filter = lode_index::Filter {
        path_prefix: (!dir.is_empty()).then(|| dir.to_string()),
        languages: Vec::new(),
    };
    let mut out = DirOutline {
        path: dir.to_string(),
        files: Vec::new(),
        omitted_files: 0,
        omitted_symbols: 0,
    };
    let mut room = max_symbols;
    for path in index.indexed_paths(&filter)? {
        let rows = index.file_symbols(&path)?;
        if room == 0 {
            out.omitted_files += 1;
            out.omitted_symbols += rows.len();
            continue;
        }
        let mut depth_of = std::collections::HashMap::new();
        let mut symbols = Vec::new();
        for r in &rows {
            let depth = r
                .parent
                .and_then(|p| depth_of.get(&p).copied())
                .map_or(0, |d: u32| d + 1);
            depth_of.insert(r.id, depth);
            if room == 0 {
                out.omitted_symbols += 1;
                continue;
            }
            room -= 1;
            symbols.push(CompactSymbol {
                kind: r.kind,
                name: r.name.clone(),
                line: r.start_line,
                depth,
            });
        }
        let language = index.file(&path)?.map_or(Language::Text, |f| f.lang);
        out.files.push(FileOutline {
            path,
            language,
            symbols,
        });
    }
    Ok(out)
}
