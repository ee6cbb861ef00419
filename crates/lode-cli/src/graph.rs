//! The graph commands: `callers`, `show`, `map`.

use std::path::Path;

use lode_core::Result;
use lode_diagnostics::note_hits;
use lode_graph::{Direction, MapOptions, Resolver, find_symbol, render};

use crate::cli::GraphDirection;
use crate::commands::{emit, filter};
use crate::context::Context;

/// A `--path` as a root-relative prefix (it must exist), as `search` reads it.
fn path_prefix(ctx: &Context, path: Option<&Path>) -> Result<Option<String>> {
    Ok(filter(ctx, path, &[])?.path_prefix)
}

pub fn callers(
    ctx: Context,
    symbol: &str,
    direction: GraphDirection,
    depth: usize,
    path: Option<&Path>,
) -> Result<u8> {
    let prefix = path_prefix(&ctx, path)?;
    let index = ctx.open_fresh()?;
    let _over = ctx.overlay_over(&index)?;
    let sym = find_symbol(&index, symbol, prefix.as_deref())?;
    let resolver = Resolver::new(&index)?;
    let direction = match direction {
        GraphDirection::In => Direction::In,
        GraphDirection::Out => Direction::Out,
    };
    let tree = resolver.tree(&sym, direction, depth)?;
    note_hits(tree.children.len());
    emit(&ctx, "callers", &tree, || render::tree_text(&tree));
    Ok(if tree.children.is_empty() { 1 } else { 0 })
}

pub fn show(ctx: Context, symbol: &str, path: Option<&Path>, callgraph: bool) -> Result<u8> {
    let prefix = path_prefix(&ctx, path)?;
    let index = ctx.open_fresh()?;
    let _over = ctx.overlay_over(&index)?;
    // `FILE:LINE` names a file the user typed: make it root-relative.
    let query = match symbol.rsplit_once(':') {
        Some((file, line)) if line.parse::<u32>().is_ok() && !file.ends_with(':') => {
            format!("{}:{line}", ctx.relative_to_root(Path::new(file))?)
        }
        _ => symbol.to_string(),
    };
    let sym = find_symbol(&index, &query, prefix.as_deref())?;
    let resolver = Resolver::new(&index)?;
    let shown = resolver.show(&sym, callgraph)?;
    note_hits(shown.lines.len());
    emit(&ctx, "show", &shown, || render::shown_text(&shown));
    Ok(0)
}

pub fn map(ctx: Context, max_tokens: usize) -> Result<u8> {
    let index = ctx.open_fresh()?;
    let m = lode_graph::map(&index, &MapOptions { max_tokens })?;
    note_hits(1);
    emit(&ctx, "map", &m, || m.text.clone());
    Ok(0)
}
