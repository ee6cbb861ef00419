//! `outline`: a file's symbols as a tree, or a directory's files compactly.

use lode_search::{DirOutline, Outline, OutlineNode, render};
use serde_json::Value;

use super::{Arg, Call, Kind, OVERLAY, Scope, ToolDef};
use crate::answer::Items;
use crate::{Answer, ToolError};

const PATH: Arg = Arg::new("path", Kind::Path("A file or directory")).required();

pub const TOOL: ToolDef = ToolDef {
    name: "outline",
    description: "A file's symbols as a tree (kind, signature, line span), or a directory's, \
                  compactly. Use to see structure before reading. At most {cap} characters.",
    args: &[PATH, OVERLAY],
    run,
};

/// The most symbols a directory's outline reads before the cap cuts it.
const DIR_SYMBOLS: usize = 400;

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let path = a.required_string(&PATH)?;
    let scope = Scope::of(&call, Some(&path))?;
    let rel = scope.rel().unwrap_or_default();
    if scope.target.is_dir {
        let (outline, notes) = scope.query(&call, |index| {
            lode_search::outline_dir(index, &rel, DIR_SYMBOLS)
        })?;
        return Ok(scope.answer(&call, Files(outline), notes));
    }
    if scope.target.rel.is_none() {
        return Err(lode_core::Error::NotAFile(path.into()).into());
    }
    let (outline, notes) = scope.query(&call, |index| lode_search::outline(index, &rel))?;
    Ok(scope.answer(&call, Symbols(outline), notes))
}

/// Items are symbols in pre-order (a parent before its children).
#[derive(Clone)]
struct Symbols(Outline);

fn count(nodes: &[OutlineNode]) -> usize {
    nodes.iter().map(|n| 1 + count(&n.children)).sum()
}

/// The first `budget` nodes in pre-order.
fn take(nodes: &[OutlineNode], budget: &mut usize) -> Vec<OutlineNode> {
    let mut out = Vec::new();
    for n in nodes {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let children = take(&n.children, budget);
        out.push(OutlineNode {
            children,
            ..n.clone()
        });
    }
    out
}

impl Items for Symbols {
    const UNIT: &'static str = "symbols";

    fn len(&self) -> usize {
        count(&self.0.symbols)
    }

    fn truncate(&mut self, n: usize) {
        let mut budget = n;
        self.0.symbols = take(&self.0.symbols, &mut budget);
    }

    fn text(&self, _omitted: usize) -> String {
        render::outline_text(&self.0)
    }

    fn body(&self, omitted: usize) -> Value {
        let mut body = serde_json::to_value(&self.0).unwrap_or(Value::Null);
        body["omitted_symbols"] = omitted.into();
        body
    }
}

/// Items are files, each with its symbols; a file cut counts its symbols
/// as omitted too.
#[derive(Clone)]
struct Files(DirOutline);

impl Files {
    fn with_omitted(&self, omitted: usize) -> DirOutline {
        DirOutline {
            omitted_files: omitted,
            ..self.0.clone()
        }
    }
}

impl Items for Files {
    const UNIT: &'static str = "files (outline a subdirectory)";

    fn len(&self) -> usize {
        self.0.files.len()
    }

    fn truncate(&mut self, n: usize) {
        let cut = self.0.files.split_off(n.min(self.0.files.len()));
        self.0.omitted_symbols += cut.iter().map(|f| f.symbols.len()).sum::<usize>();
    }

    fn left_out(&self) -> usize {
        self.0.omitted_files
    }

    fn text(&self, omitted: usize) -> String {
        render::dir_outline_text(&self.with_omitted(omitted))
    }

    fn body(&self, omitted: usize) -> Value {
        serde_json::to_value(self.with_omitted(omitted)).unwrap_or(Value::Null)
    }
}
