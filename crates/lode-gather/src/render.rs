//! Compact text of a gather section and of `ask` results.

use std::fmt::Write;

use lode_core::shown;
use lode_search::render::symbol_label;

use crate::ask::AskResults;
use crate::gathered::Gathered;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The section printed after the search results: the kept nodes with their
/// bodies, then the one-line footer; or one line saying why there is none.
pub fn gathered_text(g: &Gathered) -> String {
    if let Some(why) = &g.skipped {
        return format!("gather: not run — {why}\n");
    }
    let mut out = format!(
        "Related code (gathered for this search, {}, {} of {} kept):\n",
        plural(g.rounds, "round", "rounds"),
        g.nodes.len(),
        plural(g.considered, "node", "nodes")
    );
    for n in &g.nodes {
        let _ = writeln!(
            out,
            "{}:{}-{} {} · {}",
            shown::field(&n.path),
            n.start_line,
            n.end_line,
            symbol_label(n.kind.as_str(), &n.name, n.container.as_deref()),
            n.edge
        );
        match n.body_state {
            "in_results" => out.push_str("  (in the results above)\n"),
            "changed" => {
                out.push_str("  (not shown: the file changed since the index was built)\n")
            }
            "no_budget" => out.push_str("  (not shown: token budget spent)\n"),
            _ => {
                for line in n.body.lines() {
                    let _ = writeln!(out, "  {line}");
                }
                if n.omitted_lines > 0 {
                    let _ = writeln!(out, "  …[{} more lines]", n.omitted_lines);
                }
            }
        }
    }
    out.push_str(&footer(g));
    out
}

/// `gather: model=deterministic rounds=2 considered=31 kept=7 fallback=none stop=max_rounds 2.4ms`
pub fn footer(g: &Gathered) -> String {
    let mut reasons: Vec<&str> = Vec::new();
    for r in &g.fallback {
        if !reasons.contains(r) {
            reasons.push(r);
        }
    }
    let fallback = if reasons.is_empty() {
        "none".to_string()
    } else {
        reasons.join(",")
    };
    format!(
        "gather: model={} rounds={} considered={} kept={} fallback={fallback} stop={} {:.1}ms\n",
        g.model,
        g.rounds,
        g.considered,
        g.nodes.len(),
        g.stopped,
        g.elapsed_ms
    )
}

/// `ask`'s files view: the search's ranked files with their best chunks.
pub fn ask_files_text(r: &AskResults) -> String {
    lode_search::render::file_list_text(r.mode, &r.files)
}

/// `ask` results: one line per result (`+ called by X` marks a symbol the
/// graph added), its snippet indented, then a summary line.
pub fn ask_text(r: &AskResults) -> String {
    let mut out = String::new();
    for h in &r.hits {
        let label = match &h.symbol {
            Some(name) => symbol_label(&h.kind, name, h.container.as_deref()),
            None => h.kind.clone(),
        };
        let edge = h
            .edge
            .as_deref()
            .map(|e| format!("  + {e}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{}:{}-{}  {label}  {:.2}{edge}",
            shown::field(&h.path),
            h.start_line,
            h.end_line,
            h.score
        );
        for line in h.snippet.lines() {
            let _ = writeln!(out, "    {line}");
        }
    }
    let g = &r.graph;
    match &g.skipped {
        Some(why) => {
            let _ = writeln!(out, "ask: graph not used — {why}");
        }
        None if g.ran => {
            let _ = writeln!(
                out,
                "ask: seeds={} graph={} nodes/{} edges added={} {:.1}ms",
                g.seeds, g.nodes, g.edges, g.added, g.elapsed_ms
            );
        }
        None => {}
    }
    out
}
