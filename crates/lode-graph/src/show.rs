//! `lode show`: one symbol's full body with line numbers, its signature and
//! doc, and optionally its direct callers and callees.

use lode_core::Result;
use lode_index::SymbolRow;
use serde::Serialize;

use crate::calls::{Crowded, Edge, call_name};
use crate::resolve::{Resolution, Resolver};

/// The most body lines `show` prints; the rest is counted.
pub const MAX_BODY_LINES: usize = 400;

/// A neighbour of the shown symbol, with the call site that links them.
#[derive(Clone, Debug, Serialize)]
pub struct Neighbour {
    /// Its name.
    pub name: String,
    /// The symbol's kind, or `file` for a call at the top level.
    pub kind: String,
    /// What it is defined in (`impl Cart`), if anything.
    pub container: Option<String>,
    /// The neighbour's location.
    pub path: String,
    /// Its first line.
    pub start_line: u32,
    /// Its last line.
    pub end_line: u32,
    /// The call site, `path:line`.
    pub site: String,
    /// How the call was bound.
    pub resolution: Resolution,
}

/// A symbol and its body.
#[derive(Clone, Debug, Serialize)]
pub struct Shown {
    /// The symbol (or, for a line no symbol encloses, the lines around it).
    pub symbol: SymbolRow,
    /// The body's lines, from `symbol.start_line`.
    pub lines: Vec<String>,
    /// Body lines left out at [`MAX_BODY_LINES`].
    pub omitted_lines: usize,
    /// Its direct callers, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callers: Option<Vec<Neighbour>>,
    /// Its direct callees, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub callees: Option<Vec<Neighbour>>,
    /// Calls out that bind to nothing in the repository (libraries, built-ins).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external: Option<Vec<String>>,
    /// Call sites, in and out, whose name alone matched too many definitions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crowded_callers: Vec<Crowded>,
    /// The same, for calls out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crowded_callees: Vec<Crowded>,
}

fn neighbour(s: &SymbolRow, e: &Edge) -> Neighbour {
    Neighbour {
        name: s.name.clone(),
        kind: s.kind.as_str().into(),
        container: s.container.clone(),
        path: s.path.clone(),
        start_line: s.start_line,
        end_line: s.end_line,
        site: format!("{}:{}", e.site.path, e.site.line),
        resolution: e.resolution,
    }
}

impl Resolver<'_> {
    /// The body of `sym` read from the tree (or the overlay over the index),
    /// and with `graph` its direct callers and callees.
    pub fn show(&self, sym: &SymbolRow, graph: bool) -> Result<Shown> {
        let text = self.index().file_text(&sym.path).unwrap_or_default();
        let all: Vec<&str> = text
            .lines()
            .skip(sym.start_line.saturating_sub(1) as usize)
            .take((sym.end_line + 1).saturating_sub(sym.start_line) as usize)
            .collect();
        let omitted_lines = all.len().saturating_sub(MAX_BODY_LINES);
        let lines = all
            .iter()
            .take(MAX_BODY_LINES)
            .map(|l| l.to_string())
            .collect();
        let (mut callers, mut callees, mut external) = (None, None, None);
        let (mut crowded_callers, mut crowded_callees) = (Vec::new(), Vec::new());
        if graph {
            let mut ins = Vec::new();
            let calls_in = self.callers(sym)?;
            crowded_callers = calls_in.crowded;
            for e in calls_in.edges {
                match e
                    .site
                    .caller
                    .map(|id| self.symbol(id))
                    .transpose()?
                    .flatten()
                {
                    Some(c) => ins.push(neighbour(&c, &e)),
                    None => ins.push(Neighbour {
                        name: "(top level)".into(),
                        kind: "file".into(),
                        container: None,
                        path: e.site.path.clone(),
                        start_line: e.site.line,
                        end_line: e.site.line,
                        site: format!("{}:{}", e.site.path, e.site.line),
                        resolution: e.resolution,
                    }),
                }
            }
            let outs = self.callees(sym)?;
            callers = Some(ins);
            callees = Some(outs.edges.iter().map(|e| neighbour(&e.target, e)).collect());
            crowded_callees = outs.crowded;
            let mut names: Vec<String> = outs.unbound.into_iter().map(call_name).collect();
            names.sort();
            names.dedup();
            external = Some(names);
        }
        Ok(Shown {
            symbol: sym.clone(),
            lines,
            omitted_lines,
            callers,
            callees,
            external,
            crowded_callers,
            crowded_callees,
        })
    }
}
