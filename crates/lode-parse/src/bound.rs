//! What one file's extraction may spend. A file past the deadline or past
//! any cap is indexed as line windows and counted `parse_failed`, as a file
//! whose parse runs out of time is: one hostile file (calls nested 100,000
//! deep) must not stall indexing, and a partial extraction would look whole.
//!
//! The caps are far above real code. Over 36,631 files of 35 repositories
//! (Python, JavaScript, TypeScript, Go, Rust, Java, C, C++; up to 960 KB) the
//! most seen were: a tree 570 deep, 14,791 query matches in a file, 1,374
//! symbols, symbols nested 6 deep, 128 matches in progress at once, and
//! 0.44 s for a file's extraction in a release build.

use std::time::{Duration, Instant};

use tree_sitter::Node;

/// Parsing and every phase after it end this long after the parse starts.
const DEADLINE: Duration = Duration::from_secs(2);

/// Trees deeper than this are not read: tree-sitter's query cursor keeps
/// depths in 16 bits (past 65,535 it loses matches and slows down
/// quadratically), and a node's parent or sibling costs its depth to find.
pub(crate) const MAX_TREE_DEPTH: usize = 4096;

/// Matches tree-sitter may hold in progress at once. Each costs time at
/// every node the cursor visits; past the limit it drops some, so the file
/// falls back. A chain of calls holds about two a call: a builder chain of
/// 500 calls still fits.
pub(crate) const MATCH_LIMIT: u32 = 1024;

/// Query matches per file: symbols, calls and imports together.
pub(crate) const MAX_MATCHES: usize = 200_000;

/// Symbols per file, the matches that cost most.
pub(crate) const MAX_SYMBOLS: usize = 50_000;

/// How deep symbols may nest: chunking recurses once per level.
pub(crate) const MAX_SYMBOL_DEPTH: usize = 64;

/// A node's text is read to this many bytes at most for what is shown of it
/// (a name, a signature, a receiver), which is capped far below.
pub(crate) const TEXT_WINDOW: usize = 4096;

/// Loops look at the clock once per this many steps.
const STEPS_PER_CHECK: usize = 64;

/// The deadline of one file's extraction.
#[derive(Clone, Copy)]
pub(crate) struct Budget {
    deadline: Instant,
}

impl Budget {
    pub(crate) fn start() -> Budget {
        Budget {
            deadline: Instant::now() + DEADLINE,
        }
    }

    pub(crate) fn deadline(self) -> Instant {
        self.deadline
    }

    pub(crate) fn spent(self) -> bool {
        Instant::now() > self.deadline
    }

    /// `None` once the deadline has passed, looked at every so many steps of
    /// a loop; `?` ends the extraction.
    pub(crate) fn check(self, step: usize) -> Option<()> {
        if step.is_multiple_of(STEPS_PER_CHECK) && self.spent() {
            None
        } else {
            Some(())
        }
    }

    /// `None` once the deadline has passed; between phases.
    pub(crate) fn left(self) -> Option<()> {
        (!self.spent()).then_some(())
    }
}

/// Whether a node of the tree lies more than `max` levels below `root`.
/// A subtree of n nodes is at most n - 1 deep, so only the subtrees larger
/// than the depth left are entered: a real tree is mostly skipped whole.
pub(crate) fn deeper_than(root: Node, max: usize) -> bool {
    let mut cursor = root.walk();
    let mut depth = 0;
    loop {
        let could = depth + cursor.node().descendant_count() > max + 1;
        if could && cursor.goto_first_child() {
            depth += 1;
            if depth > max {
                return true;
            }
            continue;
        }
        while !cursor.goto_next_sibling() {
            if depth == 0 || !cursor.goto_parent() {
                return false;
            }
            depth -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use lode_core::Language;

    use super::*;

    fn depth_of(src: &str) -> usize {
        let mut parser = tree_sitter::Parser::new();
        parser
            .set_language(&crate::grammar(Language::Python).unwrap())
            .unwrap();
        let tree = parser.parse(src, None).unwrap();
        (0..100)
            .find(|&d| !deeper_than(tree.root_node(), d))
            .unwrap()
    }

    #[test]
    fn depth_is_found_whatever_the_width() {
        // module > expression_statement > list > ... > integer
        let nested = |n: usize| format!("{}1{}\n", "[".repeat(n), "]".repeat(n));
        let wide = format!("{}{}", "x = 1\n".repeat(500), nested(5));
        assert_eq!(depth_of(&nested(5)), depth_of(&wide));
        // A list in a list is one level deeper.
        assert_eq!(depth_of(&nested(6)), depth_of(&nested(5)) + 1);
        assert_eq!(depth_of(""), 0);
    }
}
