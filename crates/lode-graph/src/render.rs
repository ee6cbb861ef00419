//! Compact text for call trees and shown symbols (the JSON is the types'
//! own serialisation). Name-only edges end in `~`.

use std::fmt::Write;

use lode_core::shown;
use lode_index::SymbolRow;

use crate::calls::{CallNode, CallTree, Crowded, Direction};
use crate::names::container_type;
use crate::resolve::Resolution;
use crate::show::{Neighbour, Shown};

/// `method Cart::add`.
pub fn label(s: &SymbolRow) -> String {
    let label = match &s.container {
        Some(c) => format!("{} {}::{}", s.kind, container_type(c), s.name),
        None => format!("{} {}", s.kind, s.name),
    };
    shown::field(&label).into_owned()
}

fn mark(r: Resolution) -> &'static str {
    if r == Resolution::Name { " ~" } else { "" }
}

/// A call tree, one node per line, indented by depth, with every call site.
pub fn tree_text(t: &CallTree) -> String {
    let mut out = String::new();
    let what = match t.direction {
        Direction::In => "callers of",
        Direction::Out => "callees of",
    };
    let _ = writeln!(
        out,
        "{what} {}  {}:{}-{}",
        label(&t.root),
        shown::field(&t.root.path),
        t.root.start_line,
        t.root.end_line
    );
    if t.children.is_empty() {
        let _ = writeln!(out, "  (none found)");
    }
    for n in &t.children {
        node_text(&mut out, n, 1);
    }
    if !t.external.is_empty() {
        let external = shown::field(&t.external.join(", ")).into_owned();
        let _ = writeln!(out, "outside the repository: {external}");
    }
    crowded_text(&mut out, t.direction, &t.crowded);
    if t.truncated {
        let _ = writeln!(
            out,
            "…[tree cut at {} nodes — lower --depth]",
            crate::MAX_NODES
        );
    }
    out
}

fn node_text(out: &mut String, n: &CallNode, depth: usize) {
    let indent = "  ".repeat(depth);
    let who = match &n.symbol {
        Some(s) => format!(
            "{}  {}:{}-{}",
            label(s),
            shown::field(&s.path),
            s.start_line,
            s.end_line
        ),
        None => format!("(top level)  {}", shown::field(&n.path)),
    };
    let sites: Vec<String> = n
        .sites
        .iter()
        .map(|s| format!("{}:{}", shown::field(&s.path), s.line))
        .collect();
    let cycle = if n.cycle {
        "  (cycle: already shown above)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{indent}{who}  at {}{}{cycle}",
        sites.join(", "),
        mark(n.resolution)
    );
    for c in &n.children {
        node_text(out, c, depth + 1);
    }
}

/// The most call sites listed for one crowded name.
const CROWDED_SITES: usize = 3;

/// One line for the call sites that a crowded name left unbound:
/// `+290 name-only matches not followed: new at src/a.rs:10`.
fn crowded_text(out: &mut String, direction: Direction, crowded: &[Crowded]) {
    if crowded.is_empty() {
        return;
    }
    let parts: Vec<String> = crowded
        .iter()
        .map(|c| {
            let mut sites: Vec<String> = c
                .sites
                .iter()
                .take(CROWDED_SITES)
                .map(|s| format!("{}:{}", s.path, s.line))
                .collect();
            if c.sites.len() > CROWDED_SITES {
                sites.push(format!("+{} more", c.sites.len() - CROWDED_SITES));
            }
            format!(
                "{} ({} definitions) at {}",
                c.name,
                c.definitions,
                sites.join(", ")
            )
        })
        .collect();
    let line = match direction {
        Direction::Out => {
            let total: usize = crowded.iter().map(|c| c.definitions).sum();
            format!(
                "+{total} name-only matches not followed: {}",
                parts.join("; ")
            )
        }
        Direction::In => {
            let sites: usize = crowded.iter().map(|c| c.sites.len()).sum();
            format!(
                "+{sites} call sites that may call it by name, among others: {}",
                parts.join("; ")
            )
        }
    };
    let _ = writeln!(out, "{}", shown::field(&line));
}

fn neighbours_text(out: &mut String, title: &str, list: &[Neighbour]) {
    let _ = writeln!(out, "{title} ({}):", list.len());
    for n in list {
        let owner = n
            .container
            .as_deref()
            .map(|c| format!("{}::", container_type(c)))
            .unwrap_or_default();
        let name = shown::field(&format!("{owner}{}", n.name)).into_owned();
        let _ = writeln!(
            out,
            "  {} {name}  {}:{}-{}  at {}{}",
            n.kind,
            shown::field(&n.path),
            n.start_line,
            n.end_line,
            n.site,
            mark(n.resolution)
        );
    }
}

/// A shown symbol: header, doc, numbered body, then its neighbours.
pub fn shown_text(s: &Shown) -> String {
    let mut out = String::new();
    let sym = &s.symbol;
    let _ = writeln!(
        out,
        "{}  {}:{}-{}",
        label(sym),
        shown::field(&sym.path),
        sym.start_line,
        sym.end_line
    );
    // A doc the body already holds (a Python docstring) is not shown twice.
    let in_body = |doc: &str| {
        doc.lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .is_some_and(|first| s.lines.iter().any(|line| line.contains(first)))
    };
    if let Some(doc) = sym.doc.as_deref().filter(|d| !in_body(d)) {
        for l in doc.lines().take(8) {
            let _ = writeln!(out, "  /// {l}");
        }
    }
    let width = (sym.start_line as usize + s.lines.len()).to_string().len();
    for (i, line) in s.lines.iter().enumerate() {
        let _ = writeln!(out, "{:>width$}  {line}", sym.start_line as usize + i);
    }
    if s.omitted_lines > 0 {
        let _ = writeln!(
            out,
            "…[{} more lines — lode show {}:LINE for a part]",
            s.omitted_lines,
            shown::field(&sym.path)
        );
    }
    if let Some(c) = &s.callers {
        neighbours_text(&mut out, "callers", c);
        crowded_text(&mut out, Direction::In, &s.crowded_callers);
    }
    if let Some(c) = &s.callees {
        neighbours_text(&mut out, "callees", c);
        crowded_text(&mut out, Direction::Out, &s.crowded_callees);
    }
    if let Some(e) = &s.external
        && !e.is_empty()
    {
        let external = shown::field(&e.join(", ")).into_owned();
        let _ = writeln!(out, "outside the repository: {external}");
    }
    out
}
