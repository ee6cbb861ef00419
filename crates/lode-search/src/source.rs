//! Reading the lines of indexed files for snippets and grep.

use std::path::Path;

/// Lines `start..=end` (1-based) of a file, lossily decoded; empty when unreadable.
pub fn read_lines(root: &Path, path: &str, start: u32, end: u32) -> Vec<(u32, String)> {
    let Ok(bytes) = std::fs::read(root.join(path)) else {
        return Vec::new();
    };
    let text = String::from_utf8_lossy(&bytes);
    text.lines()
        .enumerate()
        .skip(start.saturating_sub(1) as usize)
        .take((end + 1).saturating_sub(start) as usize)
        .map(|(i, l)| (i as u32 + 1, l.to_string()))
        .collect()
}

/// Shortens a line for display, at a character boundary.
pub fn clip(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let mut cut = max;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}…", &line[..cut])
}
