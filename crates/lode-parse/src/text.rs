//! Files without a grammar: Markdown sections, data files and plain text.

use lode_core::{ChunkKind, FileExtract, Language, Symbol, SymbolKind};

use crate::chunk;
use crate::lines::LineIndex;

/// Markdown: each ATX heading opens a section that runs to the next heading
/// of the same or a higher level; sections nest by level.
pub(crate) fn extract_markdown(source: &str, lines: &LineIndex) -> FileExtract {
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut levels: Vec<usize> = Vec::new();
    let mut open: Vec<usize> = Vec::new(); // indices of sections still open
    let mut in_fence: Option<&str> = None;
    let line_count = lines.line_count();
    for line0 in 0..line_count {
        let (s, e) = (lines.start(line0) as usize, lines.end(line0) as usize);
        let text = source[s..e].trim_end();
        let trimmed = text.trim_start();
        if let Some(fence) = in_fence {
            if trimmed.starts_with(fence) {
                in_fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = Some(&trimmed[..3]);
            continue;
        }
        let level = text.bytes().take_while(|&b| b == b'#').count();
        if level == 0 || level > 6 || !(text.len() == level || text.as_bytes()[level] == b' ') {
            continue;
        }
        let title = text[level..].trim().trim_end_matches('#').trim();
        if title.is_empty() {
            continue;
        }
        // Close sections of this level or deeper at the line before.
        while let Some(&top) = open.last() {
            if levels[top] < level {
                break;
            }
            close(&mut symbols[top], lines, line0);
            open.pop();
        }
        let mut sym = Symbol::new(title, SymbolKind::Section, lines.lines_span(line0, line0));
        sym.parent = open.last().map(|&p| p as u32);
        sym.container = open.last().map(|&p| format!("section {}", symbols[p].name));
        sym.signature = text.to_string();
        symbols.push(sym);
        levels.push(level);
        open.push(symbols.len() - 1);
    }
    for &i in &open {
        close(&mut symbols[i], lines, line_count);
    }
    // Chunks are flat: every heading starts one, whatever its level.
    let mut regions = Vec::new();
    let first_heading = symbols
        .first()
        .map_or(line_count, |s| s.span.start_line - 1);
    if first_heading > 0 {
        regions.push((0, first_heading - 1, ChunkKind::Header, None));
    }
    for (i, s) in symbols.iter().enumerate() {
        let next = symbols
            .get(i + 1)
            .map_or(line_count, |n| n.span.start_line - 1);
        regions.push((
            s.span.start_line - 1,
            next - 1,
            ChunkKind::Section,
            Some(i as u32),
        ));
    }
    let chunks = chunk::chunk_regions(source, lines, &regions, &symbols);
    FileExtract {
        language: Some(Language::Markdown),
        symbols,
        chunks,
        ..FileExtract::default()
    }
}

/// Ends a section on the last non-blank line before 0-based line `next`.
fn close(sym: &mut Symbol, lines: &LineIndex, next: u32) {
    let first = sym.span.start_line - 1;
    let last = next.saturating_sub(1).max(first);
    sym.span = lines.lines_span(first, last);
}

/// Data files and plain text: windows of lines.
pub(crate) fn extract_text(lang: Language, source: &str, lines: &LineIndex) -> FileExtract {
    FileExtract {
        language: Some(lang),
        chunks: chunk::chunk_lines(source, lines, ChunkKind::Text),
        ..FileExtract::default()
    }
}
