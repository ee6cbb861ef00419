//! Text helpers: the trace cap, token estimates, and symbol bodies read from disk.

use std::path::Path;

/// Tokens estimated as characters / 4: the rule `lode map` uses too.
pub use lode_graph::estimate_tokens;

/// The trace a decision model sees, in characters.
pub const TRACE_CHARS: usize = 6_000;

/// The newest [`TRACE_CHARS`] characters of a trace (the end of a
/// conversation says most about what the agent is doing now).
pub fn cap_trace(trace: &str) -> &str {
    let n = trace.chars().count();
    if n <= TRACE_CHARS {
        return trace;
    }
    let skip = n - TRACE_CHARS;
    let (at, _) = trace.char_indices().nth(skip).unwrap_or((trace.len(), ' '));
    &trace[at..]
}

/// Lines `start..=end` (1-based) of a file under `root`; `None` when the
/// file cannot be read or is shorter than the range says (it changed since
/// the index was built).
pub fn read_lines(root: &Path, path: &str, start: u32, end: u32) -> Option<Vec<String>> {
    let bytes = lode_core::inside::read(root, path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<String> = text
        .lines()
        .skip(start.saturating_sub(1) as usize)
        .take((end.saturating_sub(start) + 1) as usize)
        .map(str::to_string)
        .collect();
    (lines.len() == (end.saturating_sub(start) + 1) as usize).then_some(lines)
}

/// A body cut to `budget` tokens at a line boundary: the text kept, the
/// number of lines left out, and the tokens used (a line costs its estimate
/// plus one for the line break, as in lode-graph's map).
pub fn cut_to_budget(lines: &[String], budget: usize) -> (String, usize, usize) {
    let mut out = String::new();
    let mut used = 0;
    for (i, line) in lines.iter().enumerate() {
        let cost = estimate_tokens(line) + 1;
        if used + cost > budget {
            return (out, lines.len() - i, used);
        }
        used += cost;
        out.push_str(line);
        out.push('\n');
    }
    (out, 0, used)
}

/// Shortens a line for display, at a character boundary (as search snippets do).
pub use lode_search::clip;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_keeps_its_newest_characters() {
        let old = "é".repeat(5_000);
        let new = "z".repeat(3_000);
        let t = format!("{old}{new}");
        let capped = cap_trace(&t);
        assert_eq!(capped.chars().count(), TRACE_CHARS);
        assert!(capped.ends_with(&new));
        assert_eq!(cap_trace("short"), "short");
    }

    #[test]
    fn bodies_are_cut_at_lines_within_budget() {
        let lines: Vec<String> = (0..10).map(|i| format!("line number {i:02}")).collect();
        let (text, omitted, used) = cut_to_budget(&lines, 20);
        assert!(estimate_tokens(&text) <= used && used <= 20, "{text}");
        assert_eq!(text.lines().count() + omitted, 10);
        assert!(omitted > 0);
        assert_eq!(cut_to_budget(&lines, 10_000).1, 0);
    }
}
