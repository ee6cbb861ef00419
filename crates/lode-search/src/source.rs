//! Reading the lines of indexed files for snippets and grep.

use std::path::Path;

use lode_index::Index;

/// The first `max_lines` lines of a chunk's bytes as the query sees the
/// file: an overlay's content when one gives it, else the file on disk.
pub fn chunk_lines(
    index: &Index,
    path: &str,
    start_byte: u32,
    end_byte: u32,
    max_lines: usize,
) -> Vec<String> {
    let Some(text) = index.overlay_text(path) else {
        return read_range_lines(&index.location.root, path, start_byte, end_byte, max_lines);
    };
    let bytes = text.as_bytes();
    let end = (end_byte as usize).min(bytes.len());
    let start = (start_byte as usize).min(end);
    String::from_utf8_lossy(&bytes[start..end])
        .lines()
        .take(max_lines)
        .map(str::to_string)
        .collect()
}

/// The first `max_lines` lines of a byte range of a file, read without
/// loading the whole file; empty when unreadable.
pub fn read_range_lines(
    root: &Path,
    path: &str,
    start_byte: u32,
    end_byte: u32,
    max_lines: usize,
) -> Vec<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = lode_core::inside::open(root, path) else {
        return Vec::new();
    };
    // Snippet lines are clipped to 200 bytes, so a bounded read suffices.
    let want = (end_byte.saturating_sub(start_byte) as usize).min(max_lines * 1024);
    let mut buf = vec![0u8; want];
    if f.seek(SeekFrom::Start(u64::from(start_byte))).is_err() {
        return Vec::new();
    }
    let mut filled = 0;
    while filled < want {
        match f.read(&mut buf[filled..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => filled += n,
        }
    }
    buf.truncate(filled);
    String::from_utf8_lossy(&buf)
        .lines()
        .take(max_lines)
        .map(str::to_string)
        .collect()
}

/// Shortens a line for display to at most `max` bytes (bytes, not characters),
/// cut at a character boundary, with `…` after a cut.
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
