//! `outline`: a file's symbols as a tree.

use lode_search::{Outline, OutlineNode, render};
use serde_json::{Value, json};

use super::{Call, ToolDef, overlay_property, path_property};
use crate::answer::{Items, capped};
use crate::overlay::{self, WithOverlay};
use crate::{Answer, Repos, ToolError};

pub const TOOL: ToolDef = ToolDef {
    name: "outline",
    description: "A file's symbols as a tree: kind, signature and line span of each. Use to \
                  see a file's structure before reading it. At most {cap} characters.",
    args: &["path", "overlay"],
    schema,
    run,
};

fn schema(repos: &Repos) -> Value {
    json!({
        "type": "object",
        "properties": {"path": path_property(repos, "The file"), "overlay": overlay_property()},
        "required": ["path"],
        "additionalProperties": false,
    })
}

fn run(call: Call) -> Result<Answer, ToolError> {
    let a = call.args()?;
    let path = a.required_string("path")?;
    let ov = overlay::argument(&call)?;
    let target = overlay::resolve(call.repos, Some(&path), ov.as_ref())?;
    let rel = match target.rel {
        Some(rel) if !target.is_dir => rel,
        _ => return Err(lode_core::Error::NotAFile(path.into()).into()),
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
