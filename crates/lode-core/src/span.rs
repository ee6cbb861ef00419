use serde::{Deserialize, Serialize};

/// A region of a file: 1-based inclusive lines and a half-open byte range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Span {
    pub start_line: u32,
    pub end_line: u32,
    pub start_byte: u32,
    pub end_byte: u32,
}

impl Span {
    pub fn new(start_line: u32, end_line: u32, start_byte: u32, end_byte: u32) -> Span {
        debug_assert!(start_line >= 1 && end_line >= start_line);
        Span {
            start_line,
            end_line,
            start_byte,
            end_byte,
        }
    }

    pub fn line_count(&self) -> u32 {
        self.end_line - self.start_line + 1
    }

    pub fn byte_len(&self) -> u32 {
        self.end_byte - self.start_byte
    }

    pub fn contains_line(&self, line: u32) -> bool {
        self.start_line <= line && line <= self.end_line
    }
}
