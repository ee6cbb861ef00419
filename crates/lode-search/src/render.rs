//! Compact text for people and agents, JSON for programs.
//!
//! Text puts one line per hit (`path:start-end  kind name  score`) with an
//! indented snippet; JSON wraps each answer in an envelope with the schema
//! version and the command (`docs/json.md`).

use std::fmt::Write;

use lode_core::{SymbolKind, shown};
use serde::Serialize;

use crate::{
    DirOutline, FileHit, GrepResults, Mode, Outline, OutlineNode, SearchHit, SearchResults,
};

/// `method Config.load` from a kind, a name and a container like `class Config`.
pub fn symbol_label(kind: &str, name: &str, container: Option<&str>) -> String {
    let label = match container.and_then(|c| c.rsplit(' ').next()) {
        Some(owner) => format!("{kind} {owner}.{name}"),
        None => format!("{kind} {name}"),
    };
    shown::field(&label).into_owned()
}

/// One line per hit, its snippet indented below; in task mode a first line
/// says so (the hits are then the ranked files' chunks, file by file).
pub fn search_text(r: &SearchResults) -> String {
    let mut out = String::new();
    if r.mode == Mode::Task {
        out.push_str("[task mode: the files the text points at, best first]\n");
    }
    for h in &r.hits {
        hit_line(&mut out, h, "");
    }
    out
}

/// The files view: one line per file with what pointed at it, then its
/// best chunks indented.
pub fn files_text(r: &SearchResults) -> String {
    file_list_text(r.mode, &r.files)
}

/// [`files_text`] of a mode and its files (what `ask` shows of its search).
pub fn file_list_text(mode: Mode, files: &[FileHit]) -> String {
    let mut out = String::new();
    if mode == Mode::Task {
        out.push_str("[task mode: the files the text points at, best first]\n");
    }
    for f in files {
        let _ = write!(out, "{}  {:.2}", shown::field(&f.path), f.score);
        if !f.evidence.is_empty() {
            let _ = write!(out, "  ({})", shown::field(&f.evidence.join("; ")));
        }
        out.push('\n');
        for h in &f.chunks {
            hit_line(&mut out, h, "  ");
        }
    }
    out
}

fn hit_line(out: &mut String, h: &SearchHit, indent: &str) {
    let label = match &h.symbol {
        Some(name) => symbol_label(&h.kind, name, h.container.as_deref()),
        None => h.kind.clone(),
    };
    let _ = writeln!(
        out,
        "{indent}{}:{}-{}  {}  {:.2}",
        shown::field(&h.path),
        h.start_line,
        h.end_line,
        label,
        h.score
    );
    for line in h.snippet.lines() {
        let _ = writeln!(out, "{indent}    {line}");
    }
}

/// Per group a line `label  path:start-end  (hits)` (`(top level)` as the
/// label outside every symbol), then its lines as `  L<n>: text`; a last
/// line counts the lines the cap left out.
pub fn grep_text(r: &GrepResults) -> String {
    let mut out = String::new();
    for g in &r.groups {
        let label = match &g.symbol {
            Some(name) => symbol_label(
                g.kind.map_or("symbol", SymbolKind::as_str),
                name,
                g.container.as_deref(),
            ),
            None => "(top level)".to_string(),
        };
        let _ = writeln!(
            out,
            "{label}  {}:{}-{}  ({})",
            shown::field(&g.path),
            g.start_line,
            g.end_line,
            g.hits
        );
        for l in &g.lines {
            let _ = writeln!(out, "  L{}: {}", l.line, l.text);
        }
    }
    if r.omitted_lines > 0 {
        let _ = writeln!(
            out,
            "…[{} more lines — narrow the pattern or the path]",
            r.omitted_lines
        );
    }
    out
}

/// A file's outline: `path  language  N lines`, then a line per symbol,
/// `L<start>-<end>  kind  signature` (the name when there is no signature),
/// indented by depth.
pub fn outline_text(o: &Outline) -> String {
    fn node(out: &mut String, n: &OutlineNode, depth: usize) {
        let sig = if n.signature.is_empty() {
            &n.name
        } else {
            &n.signature
        };
        let _ = writeln!(
            out,
            "{}L{}-{}  {}  {}",
            "  ".repeat(depth + 1),
            n.start_line,
            n.end_line,
            n.kind,
            shown::field(sig)
        );
        for c in &n.children {
            node(out, c, depth + 1);
        }
    }
    let mut out = format!(
        "{}  {}  {} lines\n",
        shown::field(&o.path),
        o.language,
        o.lines
    );
    for n in &o.symbols {
        node(&mut out, n, 0);
    }
    out
}

/// The JSON envelope of every answer.
#[derive(Serialize)]
pub struct Envelope<'a, T: Serialize> {
    /// [`JSON_SCHEMA_VERSION`](crate::JSON_SCHEMA_VERSION): it changes only when a
    /// field changes meaning or goes away.
    pub schema_version: u32,
    /// The command answered: `search`, `grep`, `outline`, ….
    pub command: &'a str,
    /// One-line remarks that text mode prints to stderr; omitted when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The answer, its fields flattened into the envelope's.
    #[serde(flatten)]
    pub body: &'a T,
}

/// `body`, the answer of `command`, in its [`Envelope`] as one line of JSON;
/// `{"error": …}` when it cannot be serialised.
pub fn json<T: Serialize>(command: &str, body: &T, notes: Vec<String>) -> String {
    let env = Envelope {
        schema_version: crate::JSON_SCHEMA_VERSION,
        command,
        notes,
        body,
    };
    serde_json::to_string(&env).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"))
}

/// A directory outline: each file, then its symbols as `kind name Lline`, indented by nesting.
pub fn dir_outline_text(o: &DirOutline) -> String {
    let mut out = String::new();
    for f in &o.files {
        let _ = writeln!(out, "{}", shown::field(&f.path));
        for s in &f.symbols {
            let _ = writeln!(
                out,
                "{}{} {} L{}",
                "  ".repeat(s.depth as usize + 1),
                s.kind,
                shown::field(&s.name),
                s.line
            );
        }
    }
    if o.files.is_empty() {
        let _ = writeln!(out, "(no indexed files under {})", shown::field(&o.path));
    }
    if o.omitted_symbols > 0 {
        let _ = writeln!(
            out,
            "…[{} more symbols in {} more files — outline a subdirectory]",
            o.omitted_symbols, o.omitted_files
        );
    }
    out
}
