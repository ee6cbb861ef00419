//! Cutting a file into chunks: one per symbol, large symbols split at child
//! boundaries, small neighbours merged, a header chunk for what precedes the
//! first definition, and line windows where nothing better is known.

use lode_core::{Chunk, ChunkKind, Symbol};

use crate::lines::LineIndex;

/// Chunks aim at this many bytes…
pub const TARGET_BYTES: u32 = 1500;
/// …and never exceed this many.
pub const HARD_CAP_BYTES: u32 = 4000;
/// Symbols smaller than this may share a chunk with their small neighbours.
const MERGE_BELOW_BYTES: u32 = 200;

/// Where a symbol's chunk starts when comments or attributes lead it, and
/// where it ends when a wrapper's closing follows it.
#[derive(Clone, Copy, Debug)]
pub struct SymbolRange {
    pub leading_start: u32,
    pub trailing_end: u32,
}

struct Node {
    sym: u32,
    first: u32,
    last: u32,
    children: Vec<Node>,
}

enum Piece<'a> {
    Gap(u32, u32),
    Sym(&'a Node),
}

impl Piece<'_> {
    fn lines(&self) -> (u32, u32) {
        match self {
            Piece::Gap(a, b) => (*a, *b),
            Piece::Sym(n) => (n.first, n.last),
        }
    }
}

struct Chunker<'a> {
    source: &'a str,
    lines: &'a LineIndex,
    /// The file's symbols, when chunked by them.
    symbols: &'a [Symbol],
    out: Vec<Chunk>,
}

/// Chunks a file whose symbols are known (sorted outer-first, with parents).
pub fn chunk_symbols(
    source: &str,
    lines: &LineIndex,
    symbols: &[Symbol],
    ranges: &[SymbolRange],
) -> Vec<Chunk> {
    let roots = build_tree(lines, symbols, ranges);
    let mut c = Chunker {
        source,
        lines,
        symbols,
        out: Vec::new(),
    };
    if !source.trim().is_empty() {
        c.region(0, lines.line_count() - 1, &roots, None, true);
    }
    let mut chunks = c.out;
    assign_defines(&mut chunks, symbols);
    chunks
}

/// Chunks a file with no symbols into windows of lines.
pub fn chunk_lines(source: &str, lines: &LineIndex, kind: ChunkKind) -> Vec<Chunk> {
    let mut c = Chunker {
        source,
        lines,
        symbols: &[],
        out: Vec::new(),
    };
    if !source.trim().is_empty() {
        c.windows(0, lines.line_count() - 1, kind, None);
    }
    c.out
}

/// Chunks given regions of 0-based lines `(first, last, kind, symbol)`,
/// each on its own: trimmed, and split into windows when large.
pub fn chunk_regions(
    source: &str,
    lines: &LineIndex,
    regions: &[(u32, u32, ChunkKind, Option<u32>)],
    symbols: &[Symbol],
) -> Vec<Chunk> {
    let mut c = Chunker {
        source,
        lines,
        symbols,
        out: Vec::new(),
    };
    for &(first, last, kind, symbol) in regions {
        if let Some((a, b)) = c.trim(first, last) {
            if c.bytes(a, b) > TARGET_BYTES {
                c.windows(a, b, kind, symbol);
            } else {
                c.push(a, b, kind, symbol);
            }
        }
    }
    let mut chunks = c.out;
    assign_defines(&mut chunks, symbols);
    chunks
}

fn build_tree(lines: &LineIndex, symbols: &[Symbol], ranges: &[SymbolRange]) -> Vec<Node> {
    let mut roots = Vec::new();
    for (i, s) in symbols.iter().enumerate() {
        let first = lines.line0(ranges[i].leading_start.min(s.span.start_byte));
        let trailing = lines.span(s.span.start_byte, ranges[i].trailing_end);
        let node = Node {
            sym: i as u32,
            first,
            last: s.span.end_line.max(trailing.end_line) - 1,
            children: Vec::new(),
        };
        insert(&mut roots, node, symbols);
    }
    clamp_children(&mut roots);
    roots
}

/// Symbols arrive outer-first, so a node's parent is on the path of last
/// nodes: it goes down that path while the last node holds its lines and is
/// its symbol's ancestor.
fn insert(roots: &mut Vec<Node>, mut node: Node, symbols: &[Symbol]) {
    let levels = match symbols[node.sym as usize].parent {
        Some(_) => levels_down(roots, &node, symbols),
        None => 0,
    };
    let mut nodes = roots;
    for _ in 0..levels {
        nodes = &mut nodes.last_mut().expect("a level down").children;
    }
    if let Some(last) = nodes.last() {
        // Siblings never share a line: the later one starts after the earlier ends.
        if node.first <= last.last {
            node.first = last.last + 1;
            if node.first > node.last {
                return;
            }
        }
    }
    nodes.push(node);
}

/// How far down the path of last nodes `node` goes.
fn levels_down(roots: &[Node], node: &Node, symbols: &[Symbol]) -> usize {
    // Ancestors outermost first: their indices rise, as those down the path do,
    // so one pass over both tells which nodes of the path are ancestors.
    let mut ancestors = Vec::new();
    let mut up = symbols[node.sym as usize].parent;
    while let Some(p) = up {
        ancestors.push(p);
        up = symbols[p as usize].parent;
    }
    let mut ancestors = ancestors.into_iter().rev().peekable();
    let (mut levels, mut nodes) = (0, roots);
    while let Some(last) = nodes.last() {
        while ancestors.next_if(|&a| a < last.sym).is_some() {}
        let holds = last.first <= node.first && node.last <= last.last;
        if !(holds && ancestors.peek() == Some(&last.sym)) {
            break;
        }
        levels += 1;
        nodes = &last.children;
    }
    levels
}

fn clamp_children(nodes: &mut [Node]) {
    for n in nodes {
        let (first, last) = (n.first, n.last);
        n.children.retain_mut(|c| {
            c.first = c.first.max(first);
            c.last = c.last.min(last);
            c.first <= c.last
        });
        clamp_children(&mut n.children);
    }
}

impl Chunker<'_> {
    fn bytes(&self, first: u32, last: u32) -> u32 {
        self.lines.end(last) - self.lines.start(first)
    }

    fn is_blank(&self, line: u32) -> bool {
        let (s, e) = (
            self.lines.start(line) as usize,
            self.lines.end(line) as usize,
        );
        self.source[s..e].trim().is_empty()
    }

    /// Trims blank lines off both ends; None when nothing is left.
    fn trim(&self, mut first: u32, mut last: u32) -> Option<(u32, u32)> {
        while first <= last && self.is_blank(first) {
            first += 1;
        }
        while last > first && self.is_blank(last) {
            last -= 1;
        }
        (first <= last && !self.is_blank(first)).then_some((first, last))
    }

    fn push(&mut self, first: u32, last: u32, kind: ChunkKind, symbol: Option<u32>) {
        let span = self.lines.lines_span(first, last);
        self.out.push(Chunk {
            span,
            kind,
            symbol,
            defines: Vec::new(),
        });
    }

    fn region(&mut self, first: u32, last: u32, children: &[Node], owner: Option<u32>, top: bool) {
        let from = self.out.len();
        let mut pieces = Vec::new();
        let mut cursor = first;
        for ch in children {
            if ch.first > cursor
                && let Some((a, b)) = self.trim(cursor, ch.first - 1)
            {
                pieces.push(Piece::Gap(a, b));
            }
            pieces.push(Piece::Sym(ch));
            cursor = ch.last + 1;
        }
        if cursor <= last
            && let Some((a, b)) = self.trim(cursor, last)
        {
            pieces.push(Piece::Gap(a, b));
        }

        let gap_kind = |seen_symbol: bool| match (owner, top, seen_symbol) {
            (Some(_), _, _) => ChunkKind::Symbol,
            (None, true, false) => ChunkKind::Header,
            _ => ChunkKind::Code,
        };
        let mut buffer: Vec<&Piece> = Vec::new();
        let mut buffer_bytes = 0;
        let mut seen_symbol = false;
        for piece in &pieces {
            let (a, b) = piece.lines();
            let size = self.bytes(a, b);
            match piece {
                Piece::Sym(node) if size > TARGET_BYTES => {
                    self.flush(&mut buffer, owner, gap_kind(seen_symbol));
                    buffer_bytes = 0;
                    if node.children.is_empty() {
                        self.windows(a, b, ChunkKind::Symbol, Some(node.sym));
                    } else {
                        self.region(a, b, &node.children, Some(node.sym), false);
                    }
                    seen_symbol = true;
                }
                Piece::Gap(..) if size > TARGET_BYTES => {
                    self.flush(&mut buffer, owner, gap_kind(seen_symbol));
                    buffer_bytes = 0;
                    self.windows(a, b, gap_kind(seen_symbol), owner);
                }
                _ => {
                    let is_sym = matches!(piece, Piece::Sym(_));
                    // The file header stays on its own, and so does a symbol of real size.
                    let header_ends = top && owner.is_none() && !seen_symbol && is_sym;
                    let alone = is_sym && size >= MERGE_BELOW_BYTES;
                    if header_ends || alone || buffer_bytes + size > TARGET_BYTES {
                        self.flush(&mut buffer, owner, gap_kind(seen_symbol));
                        buffer_bytes = 0;
                    }
                    buffer.push(piece);
                    buffer_bytes += size;
                    if alone {
                        self.flush(&mut buffer, owner, gap_kind(seen_symbol));
                        buffer_bytes = 0;
                    }
                    seen_symbol |= is_sym;
                }
            }
        }
        self.flush(&mut buffer, owner, gap_kind(seen_symbol));
        if let Some(owner) = owner {
            self.attach_bare_lines(from, owner);
        }
    }

    /// The bare lines a split leaves say nothing alone: a container's header
    /// (`impl Grid {`), closing brace or short comment between members, and
    /// a function's closing punctuation, join the next chunk of the split (the
    /// previous one, at its end). A function's own header stays its chunk: it
    /// is the function's signature, and its nested functions are chunks of
    /// their own.
    fn attach_bare_lines(&mut self, from: usize, owner: u32) {
        let container = self.symbols[owner as usize].kind.is_container();
        let mut split = self.out.split_off(from);
        let mut kept = vec![true; split.len()];
        for i in 0..split.len() {
            let c = &split[i];
            let bare = c.symbol == Some(owner)
                && c.span.byte_len() < MERGE_BELOW_BYTES
                && (container || self.is_punctuation(c.span));
            if !bare {
                continue;
            }
            let into = (i + 1 < split.len())
                .then_some(i + 1)
                .or_else(|| (0..i).rev().find(|&j| kept[j]));
            if let Some(j) = into
                && let Some(span) = self.joined(split[i.min(j)].span, split[i.max(j)].span)
            {
                split[j].span = span;
                kept[i] = false;
            }
        }
        let kept = split
            .into_iter()
            .zip(kept)
            .filter_map(|(c, k)| k.then_some(c));
        self.out.extend(kept);
    }

    fn is_punctuation(&self, span: lode_core::Span) -> bool {
        let text = &self.source[span.start_byte as usize..span.end_byte as usize];
        !text.chars().any(char::is_alphanumeric)
    }

    /// The span of whole lines from `a` to `b`, unless either is a piece of
    /// a line or the whole would be over the hard cap.
    fn joined(&self, a: lode_core::Span, b: lode_core::Span) -> Option<lode_core::Span> {
        let whole =
            |s: lode_core::Span| s == self.lines.lines_span(s.start_line - 1, s.end_line - 1);
        let (first, last) = (a.start_line - 1, b.end_line - 1);
        (whole(a) && whole(b) && self.bytes(first, last) <= HARD_CAP_BYTES)
            .then(|| self.lines.lines_span(first, last))
    }

    fn flush(&mut self, buffer: &mut Vec<&Piece>, owner: Option<u32>, gap_kind: ChunkKind) {
        let (Some(first), Some(last)) = (buffer.first(), buffer.last()) else {
            return;
        };
        let (a, b) = (first.lines().0, last.lines().1);
        let syms: Vec<u32> = buffer
            .iter()
            .filter_map(|p| match p {
                Piece::Sym(n) => Some(n.sym),
                Piece::Gap(..) => None,
            })
            .collect();
        // A chunk of several small symbols is labelled by the largest.
        let largest = buffer
            .iter()
            .filter_map(|p| match p {
                Piece::Sym(n) => Some((
                    self.bytes(n.first, n.last),
                    std::cmp::Reverse(n.first),
                    n.sym,
                )),
                Piece::Gap(..) => None,
            })
            .max()
            .map(|(_, _, sym)| sym);
        let (kind, symbol) = match syms.as_slice() {
            [] => (gap_kind, owner),
            [one] => (ChunkKind::Symbol, Some(*one)),
            _ => (ChunkKind::Symbol, owner.or(largest)),
        };
        buffer.clear();
        if self.bytes(a, b) > HARD_CAP_BYTES {
            self.windows(a, b, kind, symbol);
        } else {
            self.push(a, b, kind, symbol);
        }
    }

    /// Splits lines `first..=last` into windows near the target size, cutting
    /// at blank lines where one is close, and inside a line only when that one
    /// line is over the hard cap.
    fn windows(&mut self, first: u32, last: u32, kind: ChunkKind, symbol: Option<u32>) {
        let mut start = first;
        while start <= last {
            let mut end = start;
            let mut last_blank = None;
            while end < last && self.bytes(start, end + 1) <= TARGET_BYTES {
                end += 1;
                if self.is_blank(end) && self.bytes(start, end) >= TARGET_BYTES / 2 {
                    last_blank = Some(end);
                }
            }
            if end < last
                && let Some(blank) = last_blank
            {
                end = blank;
            }
            // A tail of a line or two goes with the window before it.
            if end < last
                && self.bytes(end + 1, last) < MERGE_BELOW_BYTES
                && self.bytes(start, last) <= HARD_CAP_BYTES
            {
                end = last;
            }
            if start == end && self.bytes(start, end) > HARD_CAP_BYTES {
                self.split_long_line(start, kind, symbol);
            } else if let Some((a, b)) = self.trim(start, end) {
                self.push(a, b, kind, symbol);
            }
            start = end + 1;
        }
    }

    fn split_long_line(&mut self, line: u32, kind: ChunkKind, symbol: Option<u32>) {
        let (mut s, e) = (
            self.lines.start(line) as usize,
            self.lines.end(line) as usize,
        );
        while s < e {
            let mut cut = (s + TARGET_BYTES as usize).min(e);
            while !self.source.is_char_boundary(cut) {
                cut -= 1;
            }
            // A piece that is only whitespace holds nothing to find.
            if !self.source[s..cut].trim().is_empty() {
                let span = lode_core::Span::new(line + 1, line + 1, s as u32, cut as u32);
                self.out.push(Chunk {
                    span,
                    kind,
                    symbol,
                    defines: Vec::new(),
                });
            }
            s = cut;
        }
    }
}

/// Records, on each chunk, the symbols whose first line falls in it (the
/// first chunk holding the line, when a long line is split).
fn assign_defines(chunks: &mut [Chunk], symbols: &[Symbol]) {
    // Chunks come in order of their lines, without overlapping.
    debug_assert!(chunks.is_sorted_by_key(|c| (c.span.start_line, c.span.end_line)));
    for (i, s) in symbols.iter().enumerate() {
        let line = s.span.start_line;
        let at = chunks.partition_point(|c| c.span.end_line < line);
        if let Some(c) = chunks.get_mut(at).filter(|c| c.span.contains_line(line)) {
            c.defines.push(i as u32);
        }
    }
}
