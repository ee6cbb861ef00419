//! `outline`: a file's symbols as a tree, or a directory's files compactly.

use lode_search::{DirOutline, Outline, OutlineNode, render};
use serde_json::{Value, json};

use super::{Call, ToolDef, overlay_property, path_property};
use crate::answer::{Items, capped};
use crate::overlay::{self, WithOverlay};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "outline",
    description: "A file's symbols as a tree (kind, signature, line span), or a directory's, \
                  compactly. Use to see structure before reading. At most {cap} characters.",
    args: &["path", "overlay"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {"path": path_property(repos, "A file or directory"), "overlay": overlay_property()},
        "required": ["path"],
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let path = a.required_string("path")?;
    let ov = overlay::argument(&call)?;
    let target = overlay::resolve(call.repos, Some(&path), ov.as_ref())?;
    if target.is_dir {
        return outline_dir(&call, target.repo, target.rel.unwrap_or_default());
    }
    let Some(rel) = target.rel else {
        return Err(lode_core::Error::NotAFile(path.into()).into());
    };
    let staged = overlay::stage(call.repos, target.repo, ov)?;
    let (outline, notes) = call.repos.query(target.repo, |index| {
        let _over = overlay::over(index, staged.as_ref())?;
        lode_search::outline(index, &rel)
    })?;
    let items = Symbols {
        outline,
        omitted: 0,
    };
    Ok(capped(
        &WithOverlay {
            items,
            staged: staged.as_ref(),
        },
        &overlay::notes(staged.as_ref(), notes),
        call.max_chars,
    ))
}

/// Items are symbols in pre-order (a parent before its children).
struct Symbols {
    outline: Outline,
    omitted: usize,
}

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
    const COMMAND: &'static str = "outline";
    const UNIT: &'static str = "symbols";

    fn len(&self) -> usize {
        count(&self.outline.symbols)
    }

    fn keep(&self, n: usize) -> Symbols {
        let mut budget = n;
        let symbols = take(&self.outline.symbols, &mut budget);
        let outline = Outline {
            symbols,
            ..self.outline.clone()
        };
        Symbols {
            omitted: self.omitted + self.len() - count(&outline.symbols),
            outline,
        }
    }

    fn omitted(&self) -> usize {
        self.omitted
    }

    fn text(&self) -> String {
        render::outline_text(&self.outline)
    }

    fn body(&self) -> Value {
        let mut body = serde_json::to_value(&self.outline).unwrap_or(Value::Null);
        body["omitted_symbols"] = self.omitted.into();
        body
    }
}

/// The most symbols a directory's outline reads before the cap cuts it.
const DIR_SYMBOLS: usize = 400;

/// A directory: its indexed files with their symbols, as `lode outline DIR`.
fn outline_dir(call: &Call, repo: usize, rel: String) -> Result<Answer, ToolError> {
    let (outline, notes) = call.repos.query(repo, |index| {
        lode_search::outline_dir(index, &rel, DIR_SYMBOLS)
    })?;
    Ok(capped(&Files { outline }, &notes, call.max_chars))
}

/// Items are files, each with its symbols.
struct Files {
    outline: DirOutline,
}

impl Items for Files {
    const COMMAND: &'static str = "outline";
    const UNIT: &'static str = "files (outline a subdirectory)";

    fn len(&self) -> usize {
        self.outline.files.len()
    }

    fn keep(&self, n: usize) -> Files {
        let mut outline = self.outline.clone();
        let cut = outline.files.split_off(n.min(outline.files.len()));
        outline.omitted_files += cut.len();
        outline.omitted_symbols += cut.iter().map(|f| f.symbols.len()).sum::<usize>();
        Files { outline }
    }

    fn omitted(&self) -> usize {
        self.outline.omitted_files
    }

    fn text(&self) -> String {
        render::dir_outline_text(&self.outline)
    }

    fn body(&self) -> Value {
        serde_json::to_value(&self.outline).unwrap_or(Value::Null)
    }
}
