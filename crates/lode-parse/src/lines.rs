//! Byte offset ↔ line number arithmetic for one file.

use lode_core::Span;

/// The byte offset of the start of every line of a source text.
pub struct LineIndex {
    starts: Vec<u32>,
    len: u32,
}

impl LineIndex {
    /// The line starts of `text`.
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0u32];
        starts.extend(memchr_newlines(text.as_bytes()).map(|i| i as u32 + 1));
        let len = text.len() as u32;
        // A trailing newline does not open a line of its own.
        if starts.len() > 1 && *starts.last().unwrap() == len {
            starts.pop();
        }
        LineIndex { starts, len }
    }

    /// Number of lines (at least 1, even for an empty text).
    pub fn line_count(&self) -> u32 {
        self.starts.len() as u32
    }

    /// 0-based line of a byte offset.
    pub fn line0(&self, byte: u32) -> u32 {
        match self.starts.binary_search(&byte) {
            Ok(i) => i as u32,
            Err(i) => i as u32 - 1,
        }
    }

    /// Byte offset where 0-based line `line` starts.
    pub fn start(&self, line: u32) -> u32 {
        self.starts[line as usize]
    }

    /// Byte offset just past 0-based line `line`, newline included.
    pub fn end(&self, line: u32) -> u32 {
        self.starts
            .get(line as usize + 1)
            .copied()
            .unwrap_or(self.len)
    }

    /// The span of a byte range: lines 1-based inclusive, a range ending at the
    /// start of a line ends on the line before.
    pub fn span(&self, start: u32, end: u32) -> Span {
        let first = self.line0(start);
        let last = if end > start {
            self.line0(end - 1)
        } else {
            first
        };
        Span::new(first + 1, last + 1, start, end)
    }

    /// The span covering whole 0-based lines `first..=last`.
    pub fn lines_span(&self, first: u32, last: u32) -> Span {
        Span::new(first + 1, last + 1, self.start(first), self.end(last))
    }
}

fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_one_based_and_inclusive() {
        let idx = LineIndex::new("a\nbb\nccc\n");
        assert_eq!(idx.line_count(), 3);
        let s = idx.span(2, 5); // "bb\n"
        assert_eq!((s.start_line, s.end_line), (2, 2));
        let s = idx.span(0, 9);
        assert_eq!((s.start_line, s.end_line), (1, 3));
        assert_eq!(idx.lines_span(1, 2), Span::new(2, 3, 2, 9));
        assert_eq!(LineIndex::new("").line_count(), 1);
        assert_eq!(LineIndex::new("x").end(0), 1);
    }
}
