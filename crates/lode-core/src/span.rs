use serde::{Deserialize, Serialize};

/// A region of a file: 1-based inclusive lines and a half-open byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    /// First line, 1-based.
    pub start_line: u32,
    /// Last line, 1-based and inclusive: a one-line span has `end_line == start_line`.
    pub end_line: u32,
    /// Byte offset of the first byte from the start of the file (bytes, not characters).
    pub start_byte: u32,
    /// Byte offset one past the last byte (exclusive).
    pub end_byte: u32,
}

impl Span {
    /// A span from its lines and bytes; lines must be 1-based with `end_line >= start_line`
    /// (checked in debug builds only).
    pub fn new(start_line: u32, end_line: u32, start_byte: u32, end_byte: u32) -> Span {
        debug_assert!(start_line >= 1 && end_line >= start_line);
        Span {
            start_line,
            end_line,
            start_byte,
            end_byte,
        }
    }

    /// Lines covered, both ends counted: at least 1.
    pub fn line_count(&self) -> u32 {
        self.end_line - self.start_line + 1
    }

    /// Length in bytes (`end_byte - start_byte`).
    pub fn byte_len(&self) -> u32 {
        self.end_byte - self.start_byte
    }

    /// Whether the 1-based `line` lies within the span, ends included.
    pub fn contains_line(&self, line: u32) -> bool {
        self.start_line <= line && line <= self.end_line
    }
}
