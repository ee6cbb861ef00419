//! Running a language's queries over a parse tree: the three query files are
//! one query, run in one walk of the tree; each match goes to symbols, calls or
//! imports by its pattern index, after its `#has-parent?` and `#kind?` predicates pass.
//!
//! Query capture conventions (see `queries/README.md`):
//! - symbols: `@definition.<kind>` on the whole definition, `@name` on its name,
//!   optionally `@body` (the signature ends where the body starts), `@doc`
//!   (a docstring node inside the definition) and `@container` (the type a
//!   member defined outside it belongs to); a pattern without `@name` takes
//!   the definition's `name` field, and its `body` field unless it captures
//!   `@body` (patterns that spell out typed children compile slowly);
//! - calls: `@call` on the call, `@callee` on the called name, optionally
//!   `@receiver`; calls inside an `@ignore` node are dropped;
//! - imports: `@import` on the statement, `@source` on the module path (several
//!   captures span from the first to the last), `@name` per imported name.

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;
use std::time::Instant;

use lode_core::{CallSite, FileExtract, Import, Language, Symbol, SymbolKind};
use tree_sitter::{
    Node, Parser, QueryCursor, QueryCursorOptions, QueryCursorState, StreamingIterator, Tree,
};

use crate::attribute_macros;
use crate::bound::{self, Budget};
use crate::chunk::{self, SymbolRange};
use crate::doc::{clean_doc, leading_comments};
use crate::lines::LineIndex;
use crate::macro_items::{self, MacroBody};
use crate::parents::Parents;
use crate::registry::{self, LangQueries, PatternSet, Role};

mod imports;
#[cfg(test)]
mod tests;

use imports::{RawImport, import_match};

const SIGNATURE_CAP: usize = 240;
const RECEIVER_CAP: usize = 80;

thread_local! {
    static PARSERS: RefCell<HashMap<Language, Parser>> = RefCell::new(HashMap::new());
}

/// Extracts symbols, calls, imports and chunks from a code file.
/// Returns `None` when the language has no grammar, or parsing or the
/// extraction ran past its bounds (`bound`).
pub(crate) fn extract_code(lang: Language, source: &str, lines: &LineIndex) -> Option<FileExtract> {
    extract_code_probed(lang, source, lines, &mut ())
}

/// Told when each phase of [`extract_code_probed`] ends; `()` ignores it, and
/// compiles to nothing.
pub(crate) trait Probe {
    fn phase_done(&mut self, _phase: &'static str) {}
}

impl Probe for () {}

pub(crate) fn extract_code_probed<P: Probe>(
    lang: Language,
    source: &str,
    lines: &LineIndex,
    probe: &mut P,
) -> Option<FileExtract> {
    let queries = registry::queries(lang)?;
    // Every position in the blanked text is the file's (see the module).
    let blanked = attribute_macros::blanked(lang, source);
    let source: &str = &blanked;
    if lang == Language::Bash && bash_scanner_hazard(source) {
        return None;
    }
    if lang == Language::Scala
        && (has_line_longer_than(source, SCALA_MAX_LINE_BYTES)
            || brace_depth(source) > SCALA_MAX_BRACE_DEPTH)
    {
        return None;
    }
    if lang == Language::Ruby && has_long_heredoc_word(source) {
        return None;
    }
    if lang == Language::Python && stars_after_division(source) > PYTHON_MAX_STARS_AFTER_DIVISION {
        return None;
    }
    let budget = Budget::start();
    let tree = parse(lang, queries, source, &[], budget.deadline())?;
    let root = tree.root_node();
    if bound::deeper_than(root, bound::MAX_TREE_DEPTH) {
        return None;
    }
    probe.phase_done("parse");
    let (macro_trees, mut macro_bodies) = match lang {
        Language::Rust => parse_macro_items(queries, source, lines, root, budget)?,
        _ => (Vec::new(), Vec::new()),
    };
    probe.phase_done("macros");

    let roots: Vec<Node> = std::iter::once(root)
        .chain(macro_trees.iter().map(Tree::root_node))
        .collect();
    let mut found = Found::default();
    for (tree, &root) in roots.iter().enumerate() {
        run_queries(queries, root, tree, source, budget, &mut found)?;
    }
    probe.phase_done("query");
    let (symbols, mut ranges) = symbols(found.symbols, &roots, source, lines, budget)?;
    attach_macro_edges(&symbols, &mut ranges, &mut macro_bodies, source.as_bytes());
    probe.phase_done("symbols");
    budget.left()?;
    let calls = calls(found.calls, &found.ignored, source, lines, &symbols);
    probe.phase_done("calls");
    budget.left()?;
    let imports = imports::joined(found.imports, source, lines);
    probe.phase_done("imports");
    budget.left()?;
    let chunks = chunk::chunk_symbols(source, lines, &symbols, &ranges);
    probe.phase_done("chunk");
    Some(FileExtract {
        language: Some(lang),
        symbols,
        calls,
        imports,
        chunks,
        had_parse_errors: root.has_error(),
        parse_failed: false,
    })
}

/// Whether tree-sitter-bash's scanner would hand C's `isdigit` a character
/// past U+00FF, whose table it then reads out of bounds: a crash on Linux for
/// characters of the supplementary planes (upstream tree-sitter-bash#337).
/// It does so looking for a range `{1..9}`: with the character after a `{`
/// and its digits, and after `{1..` and its digits. Such a file is not parsed.
fn bash_scanner_hazard(source: &str) -> bool {
    fn after_digits(s: &str) -> &str {
        s.trim_start_matches(|c: char| c.is_ascii_digit())
    }
    let wide = |rest: &str| rest.chars().next().is_some_and(|c| u32::from(c) > 0xFF);
    source.match_indices('{').any(|(i, _)| {
        let rest = after_digits(&source[i + 1..]);
        wide(rest)
            || rest
                .strip_prefix("..")
                .is_some_and(|r| wide(after_digits(r)))
    })
}

/// The longest heredoc word tree-sitter-ruby's scanner stores: it writes
/// the length in one byte and asserts, aborting the process, when its state
/// reads back otherwise.
const RUBY_MAX_HEREDOC_WORD: usize = 255;

/// Whether a heredoc's word (`<<~SQL`, `<<-"END OF TEXT"`) may be longer than
/// [`RUBY_MAX_HEREDOC_WORD`]; counted generously (to the quote or the end of
/// the word), since such a file is only line windows.
fn has_long_heredoc_word(source: &str) -> bool {
    source.match_indices("<<").any(|(i, _)| {
        let rest = source[i + 2..].trim_start_matches(['-', '~']);
        let word = match rest.chars().next() {
            Some(q @ ('"' | '\'' | '`')) => {
                let inner = &rest[1..];
                &inner[..inner.find([q, '\n']).unwrap_or(inner.len())]
            }
            _ => {
                let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'));
                &rest[..end.unwrap_or(rest.len())]
            }
        };
        word.len() > RUBY_MAX_HEREDOC_WORD
    })
}

/// How many stars right after a division or modulo sign (`/*`, `% *`, `/`
/// and `*` on the next line) a Python file may have and be parsed.
/// tree-sitter-python's error recovery over lines of them that run to the
/// end of the file takes memory quadratic in their number when it accepts,
/// after its last progress callback, where the deadline cannot stop it:
/// 100 MB for 512 of them, 10 GB for 5,760. Valid Python never writes a star
/// there; strings may (`"src/*.py"`), and a few hundred globs are rare.
const PYTHON_MAX_STARS_AFTER_DIVISION: usize = 256;

fn stars_after_division(source: &str) -> usize {
    let bytes = source.as_bytes();
    let before = |i: usize| {
        bytes[..i]
            .iter()
            .rev()
            .find(|b| !(b.is_ascii_whitespace() || **b == b'\\'))
    };
    bytes
        .iter()
        .enumerate()
        .filter(|&(i, &b)| b == b'*' && matches!(before(i), Some(b'/' | b'%')))
        .count()
}

/// The longest line a Scala file may have and be parsed. tree-sitter-scala
/// lexes some long runs on one line (CJK letters, backticks, `a+a+…`) in
/// time quadratic in their length, within one parser step where the
/// deadline cannot stop it: 1.7 s for 16 KB of `a+` in a debug build. Code
/// lines are far shorter; a file with a longer one is line windows.
const SCALA_MAX_LINE_BYTES: usize = 4 << 10;

/// The deepest nesting of braces a Scala file may have and be parsed.
/// tree-sitter-scala's parse stack merges its versions in time exponential
/// in the depth of some nested braces (`{a:b {a:b …`, a few to a line),
/// within one parser step where the deadline cannot stop it: 1 s at 36
/// deep, 20 s at 40, 5 ms at 24. Real code nests far less (12 at most in
/// the benchmark's Scala repositories).
const SCALA_MAX_BRACE_DEPTH: usize = 24;

/// The deepest nesting of `{` in `source`, counted on the raw text
/// (braces in strings and comments too: a bound, not a parse).
fn brace_depth(source: &str) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    for b in source.bytes() {
        match b {
            b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

fn has_line_longer_than(source: &str, max: usize) -> bool {
    source.split('\n').any(|line| line.len() > max)
}

/// Parses `source`, or only its `ranges` when there are some (positions stay
/// the file's), giving up at `deadline`.
fn parse(
    lang: Language,
    queries: &LangQueries,
    source: &str,
    ranges: &[tree_sitter::Range],
    deadline: Instant,
) -> Option<Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = match parsers.entry(lang) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut p = Parser::new();
                p.set_language(&queries.grammar).ok()?;
                v.insert(p)
            }
        };
        // No ranges is the whole text; the parser is shared, so they are always set.
        parser.set_included_ranges(ranges).ok()?;
        let mut progress = |_: &tree_sitter::ParseState| Instant::now() > deadline;
        let options = tree_sitter::ParseOptions::new().progress_callback(&mut progress);
        let bytes = source.as_bytes();
        let tree = parser.parse_with_options(
            &mut |i, _| if i < bytes.len() { &bytes[i..] } else { &[] },
            None,
            Some(options),
        );
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// Nested item macros are parsed this many levels deep, so the text parsed
/// again is at most this many times the file.
pub(crate) const MACRO_DEPTH: u32 = 4;

/// Trees of the Rust items inside macro blocks (see `macro_items`), nested
/// blocks included, parsed where they lie in the file, and the bodies they
/// hold; `None` past the deadline or for a tree too deep, as for the file's.
fn parse_macro_items(
    queries: &LangQueries,
    source: &str,
    lines: &LineIndex,
    root: Node,
    budget: Budget,
) -> Option<(Vec<Tree>, Vec<MacroBody>)> {
    let bytes = source.as_bytes();
    let mut pending: Vec<(MacroBody, u32)> = macro_items::item_bodies(root, bytes)
        .into_iter()
        .map(|b| (b, 1))
        .collect();
    let (mut trees, mut bodies) = (Vec::new(), Vec::new());
    while let Some((body, depth)) = pending.pop() {
        let range = ts_range(lines, body.body.clone());
        let tree = parse(Language::Rust, queries, source, &[range], budget.deadline())?;
        if bound::deeper_than(tree.root_node(), bound::MAX_TREE_DEPTH) {
            return None;
        }
        if depth < MACRO_DEPTH {
            let nested = macro_items::item_bodies(tree.root_node(), bytes);
            pending.extend(nested.into_iter().map(|b| (b, depth + 1)));
        }
        trees.push(tree);
        bodies.push(body);
    }
    Some((trees, bodies))
}

/// The first item of a macro body takes the body's opening (`cfg_rt! {`)
/// into its chunk and the last item its closing `}`, as a wrapper joins its
/// definition's chunk, rather than leave them chunks of their own.
fn attach_macro_edges(
    symbols: &[Symbol],
    ranges: &mut [SymbolRange],
    bodies: &mut [MacroBody],
    bytes: &[u8],
) {
    let blank = |r: Range<usize>| {
        bytes
            .get(r)
            .is_some_and(|gap| gap.iter().all(u8::is_ascii_whitespace))
    };
    // Inner bodies first, so that a nested opening or closing passes outwards.
    bodies.sort_by_key(|b| std::cmp::Reverse(b.body.start));
    for b in bodies.iter() {
        let inside = |s: &Symbol| {
            b.body.start <= s.span.start_byte as usize && s.span.end_byte as usize <= b.body.end
        };
        let from = symbols.partition_point(|s| (s.span.start_byte as usize) < b.body.start);
        let to = from + symbols[from..].iter().take_while(|s| inside(s)).count();
        if from == to {
            continue;
        }
        if blank(b.body.start..ranges[from].leading_start as usize) {
            ranges[from].leading_start = b.head as u32;
        }
        // The outermost of the items that end last.
        let last = (from..to)
            .max_by_key(|&i| (symbols[i].span.end_byte, std::cmp::Reverse(i)))
            .unwrap_or(from);
        if blank(ranges[last].trailing_end as usize..b.body.end) {
            ranges[last].trailing_end = b.body.end as u32 + 1;
        }
    }
}

fn ts_range(lines: &LineIndex, bytes: Range<usize>) -> tree_sitter::Range {
    let point = |b: usize| {
        let row = lines.line0(b as u32);
        tree_sitter::Point::new(row as usize, b - lines.start(row) as usize)
    };
    tree_sitter::Range {
        start_byte: bytes.start,
        end_byte: bytes.end,
        start_point: point(bytes.start),
        end_point: point(bytes.end),
    }
}

/// A node's text; "" where it does not fall on character boundaries.
fn text_of<'a>(node: Node, src: &'a str) -> &'a str {
    src.get(node.byte_range()).unwrap_or("")
}

/// The text of `range`, cut to `TEXT_WINDOW` bytes: what is shown of it (a
/// name, a signature, a receiver) is capped far below, and reading all of it
/// is quadratic where nodes nest (each call of a chain `a.f().f()…` has the
/// chain before it for receiver).
fn text_window(src: &str, range: Range<usize>) -> &str {
    let text = src.get(range).unwrap_or("");
    let mut end = text.len().min(bound::TEXT_WINDOW);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// A node's text as shown: whitespace collapsed, capped at `cap` bytes.
fn shown(node: Node, src: &str, cap: usize) -> String {
    collapse_ws(text_window(src, node.byte_range()), cap)
}

/// Whitespace runs as one space, none at either end, cut at `cap` bytes with
/// `…`: read a character at a time, to stop at the cap rather than read a
/// long word to its end.
fn collapse_ws(text: &str, cap: usize) -> String {
    let mut out = String::with_capacity(text.len().min(cap + 4));
    let mut gap = false;
    for c in text.chars() {
        if c.is_whitespace() {
            gap = true;
            continue;
        }
        if gap && !out.is_empty() {
            out.push(' ');
        }
        gap = false;
        out.push(c);
        if out.len() > cap {
            let mut cut = cap;
            while !out.is_char_boundary(cut) {
                cut -= 1;
            }
            out.truncate(cut);
            out.push('…');
            break;
        }
    }
    out
}

/// A symbols match, its text not yet taken: most of the work waits until
/// duplicate matches of one definition are dropped.
struct RawSymbol<'t> {
    pattern: usize,
    /// Which of the file's trees it is in (the file's, or a macro body's).
    tree: usize,
    def: Node<'t>,
    kind: SymbolKind,
    name: Node<'t>,
    body: Option<Node<'t>>,
    doc: Option<Node<'t>>,
    /// A `@container` capture: the type of a member defined outside it.
    container: Option<Node<'t>>,
}

/// A calls match that counts (the first with a name for its call node).
struct RawCall<'t> {
    call: Node<'t>,
    callee: Node<'t>,
    receiver: Option<Node<'t>>,
}

#[derive(Default)]
struct Found<'t> {
    symbols: Vec<RawSymbol<'t>>,
    calls: Vec<RawCall<'t>>,
    /// `@ignore` captures: calls inside them are dropped.
    ignored: Vec<Range<usize>>,
    imports: Vec<RawImport<'t>>,
    /// Matches seen, of every tree of the file.
    matches: usize,
}

/// Whether `collapse_ws` would give an empty string for a node's text.
fn is_blank(node: Node, src: &str) -> bool {
    text_window(src, node.byte_range())
        .split_whitespace()
        .next()
        .is_none()
}

thread_local! {
    static CURSOR: RefCell<QueryCursor> = RefCell::new({
        let mut cursor = QueryCursor::new();
        cursor.set_match_limit(bound::MATCH_LIMIT);
        cursor
    });
}

/// Runs the language's one query (symbols, calls and imports) over the tree,
/// in one walk, and sorts the matches out by the file their pattern is from.
/// `None` past the deadline or a cap: the file then falls back.
fn run_queries<'t>(
    q: &LangQueries,
    root: Node<'t>,
    tree: usize,
    src: &str,
    budget: Budget,
    found: &mut Found<'t>,
) -> Option<()> {
    let mut seen_calls: HashSet<usize> = HashSet::new();
    let mut parents = Parents::new(root);
    CURSOR.with(|cell| {
        let mut cursor = cell.borrow_mut();
        let deadline = budget.deadline();
        let mut past = |_: &QueryCursorState| Instant::now() > deadline;
        let options = QueryCursorOptions::new().progress_callback(&mut past);
        let mut matches = cursor.matches_with_options(&q.query, root, src.as_bytes(), options);
        while let Some(m) = matches.next() {
            found.matches += 1;
            if found.matches > bound::MAX_MATCHES {
                return None;
            }
            budget.check(found.matches)?;
            if !q.checks_ok(m.pattern_index, m.captures, &mut parents) {
                continue;
            }
            match q.set(m.pattern_index) {
                PatternSet::Symbols => found.symbols.extend(symbol_match(q, m, tree, src)),
                PatternSet::Calls => {
                    let call = call_match(q, m, src, &mut found.ignored);
                    // A call node counts once: its first match with a name.
                    found
                        .calls
                        .extend(call.filter(|c| seen_calls.insert(c.call.id())));
                }
                PatternSet::Imports => found.imports.extend(import_match(q, m, src)),
            }
        }
        drop(matches);
        // The deadline halts the cursor; past the limit it dropped matches.
        (!budget.spent() && !cursor.did_exceed_match_limit()).then_some(())
    })
}

type Match<'m, 't> = &'m tree_sitter::QueryMatch<'m, 't>;

fn symbol_match<'t>(
    q: &LangQueries,
    m: Match<'_, 't>,
    tree: usize,
    src: &str,
) -> Option<RawSymbol<'t>> {
    let (mut def, mut kind, mut name) = (None, None, None);
    let (mut body, mut doc, mut container) = (None, None, None);
    for cap in m.captures {
        match q.role(cap.index) {
            Role::Definition(k) => {
                def = Some(cap.node);
                kind = k;
            }
            Role::Name => {
                name.get_or_insert(cap.node);
            }
            Role::Body => {
                body.get_or_insert(cap.node);
            }
            Role::Doc => {
                doc.get_or_insert(cap.node);
            }
            Role::Container => {
                container.get_or_insert(cap.node);
            }
            _ => {}
        }
    }
    // A pattern without `@name` takes the definition's fields.
    if let Some(def) = def.filter(|_| q.names_by_fields(m.pattern_index)) {
        name = def.child_by_field_name("name");
        body = body.or_else(|| def.child_by_field_name("body"));
    }
    let (Some(def), Some(kind), Some(name)) = (def, kind, name) else {
        return None;
    };
    if is_blank(name, src) {
        return None;
    }
    Some(RawSymbol {
        pattern: m.pattern_index,
        tree,
        def,
        kind,
        name,
        body,
        doc,
        container,
    })
}

/// A calls match with a name; its `@ignore` captures go to `ignored`.
fn call_match<'t>(
    q: &LangQueries,
    m: Match<'_, 't>,
    src: &str,
    ignored: &mut Vec<Range<usize>>,
) -> Option<RawCall<'t>> {
    let (mut call, mut callee, mut receiver) = (None, None, None);
    for cap in m.captures {
        match q.role(cap.index) {
            Role::Call => call = Some(cap.node),
            Role::Callee => callee = Some(cap.node),
            Role::Receiver => receiver = Some(cap.node),
            Role::Ignore => ignored.push(cap.node.byte_range()),
            _ => {}
        }
    }
    let (Some(call), Some(callee)) = (call, callee) else {
        return None;
    };
    (!is_blank(callee, src)).then_some(RawCall {
        call,
        callee,
        receiver,
    })
}

/// The symbols, outer before inner, and where their chunks may reach;
/// `None` past the deadline, or for too many or too deeply nested symbols.
fn symbols<'t>(
    mut raw: Vec<RawSymbol<'t>>,
    roots: &[Node<'t>],
    src: &str,
    lines: &LineIndex,
    budget: Budget,
) -> Option<(Vec<Symbol>, Vec<SymbolRange>)> {
    // One symbol per definition node: the first pattern that matched wins.
    raw.sort_by_key(|r| (r.def.id(), r.pattern));
    raw.dedup_by_key(|r| r.def.id());
    if raw.len() > bound::MAX_SYMBOLS {
        return None;
    }
    // Outer definitions before inner ones.
    raw.sort_by(|a, b| {
        a.def
            .start_byte()
            .cmp(&b.def.start_byte())
            .then(b.def.end_byte().cmp(&a.def.end_byte()))
            .then(a.pattern.cmp(&b.pattern))
    });

    let mut symbols: Vec<Symbol> = Vec::with_capacity(raw.len());
    let mut ranges = Vec::with_capacity(raw.len());
    let mut stack: Vec<usize> = Vec::new();
    let mut parents: Vec<Parents> = roots.iter().map(|&root| Parents::new(root)).collect();
    for (i, r) in raw.into_iter().enumerate() {
        budget.check(i)?;
        let def = r.def;
        let (start, end) = (def.start_byte() as u32, def.end_byte() as u32);
        while let Some(&top) = stack.last() {
            if symbols[top].span.end_byte >= end && symbols[top].span.start_byte <= start {
                break;
            }
            stack.pop();
        }
        if stack.len() >= bound::MAX_SYMBOL_DEPTH {
            return None;
        }
        let parent = stack.last().copied();
        // A captured container names the owner of a member defined outside it.
        let captured = r
            .container
            .map(|c| type_name(text_window(src, c.byte_range())))
            .filter(|c| !c.is_empty())
            .map(|c| format!("type {c}"));
        let mut kind = r.kind;
        if kind == SymbolKind::Function
            && (captured.is_some()
                || parent.is_some_and(|p| {
                    symbols[p].kind.is_container() && symbols[p].kind != SymbolKind::Module
                }))
        {
            kind = SymbolKind::Method;
        }
        let container = captured.or_else(|| {
            stack
                .iter()
                .rev()
                .map(|&i| &symbols[i])
                .find(|s| s.kind.is_container())
                .map(|s| format!("{} {}", s.kind.as_str(), s.name))
        });
        let sig_end = r
            .body
            .map(|b| b.start_byte())
            .filter(|&s| s > def.start_byte())
            .unwrap_or_else(|| {
                let line = lines.line0(start);
                (lines.end(line) as usize).min(def.end_byte())
            });
        let mut signature = collapse_ws(text_window(src, def.start_byte()..sig_end), SIGNATURE_CAP);
        let kept = signature.trim_end_matches([':', '{', '=', ';', ' ']).len();
        signature.truncate(kept);
        let (leading_start, comment_doc) =
            leading_comments(def, src.as_bytes(), lines, &mut parents[r.tree]);
        let doc = r
            .doc
            .map(|d| clean_doc(text_of(d, src)))
            .or(comment_doc)
            .filter(|d| !d.is_empty());
        symbols.push(Symbol {
            name: shown(r.name, src, 120),
            kind,
            container,
            parent: parent.map(|p| p as u32),
            span: lines.span(start, end),
            signature,
            doc,
        });
        ranges.push(SymbolRange {
            leading_start: leading_start.min(start),
            trailing_end: end,
        });
        stack.push(symbols.len() - 1);
    }
    Some((symbols, ranges))
}

/// The bare name of a type as written where a member is defined outside it:
/// `*Config` → `Config`, `Map<K, V>` → `Map`, `Config[T]` → `Config`, `String?` → `String`.
fn type_name(text: &str) -> String {
    let bare = text.trim_start_matches(|c: char| matches!(c, '*' | '&') || c.is_whitespace());
    let bare = bare.split(['<', '[', '(']).next().unwrap_or("");
    let bare = bare.trim_end_matches(|c: char| matches!(c, '*' | '&' | '?') || c.is_whitespace());
    collapse_ws(bare, 120)
}

/// The innermost symbol holding each of a run of ranges, asked in order of
/// their start: one sweep over the symbols (sorted by start, outer first)
/// rather than a search of them all per call.
struct Enclosing<'s> {
    symbols: &'s [Symbol],
    /// The first symbol not yet seen.
    next: usize,
    /// Symbols seen that may still hold a range, their ends falling from the
    /// bottom up.
    open: Vec<u32>,
}

impl<'s> Enclosing<'s> {
    fn new(symbols: &'s [Symbol]) -> Self {
        Enclosing {
            symbols,
            next: 0,
            open: Vec::new(),
        }
    }

    /// The last symbol (in their order) with `start..end` inside it.
    fn of(&mut self, start: u32, end: u32) -> Option<u32> {
        let symbols = self.symbols;
        let end_of = |i: &u32| symbols[*i as usize].span.end_byte;
        while let Some(s) = symbols.get(self.next)
            && s.span.start_byte <= start
        {
            // A symbol that ends no later than one after it never holds more.
            while self
                .open
                .last()
                .is_some_and(|t| end_of(t) <= s.span.end_byte)
            {
                self.open.pop();
            }
            self.open.push(self.next as u32);
            self.next += 1;
        }
        // Nor does one that ended before this start: later ones start later.
        while self.open.last().is_some_and(|t| end_of(t) < start) {
            self.open.pop();
        }
        let holding = self.open.partition_point(|t| end_of(t) >= end);
        holding.checked_sub(1).map(|i| self.open[i])
    }
}

/// `@ignore` ranges sorted by start, with the furthest end reached so far.
struct Ignored {
    starts: Vec<usize>,
    reach: Vec<usize>,
}

impl Ignored {
    fn new(ranges: &[Range<usize>]) -> Self {
        let mut sorted = ranges.to_vec();
        sorted.sort_by_key(|r| r.start);
        let reach = sorted
            .iter()
            .scan(0, |far, r| {
                *far = r.end.max(*far);
                Some(*far)
            })
            .collect();
        Ignored {
            starts: sorted.iter().map(|r| r.start).collect(),
            reach,
        }
    }

    /// Whether one of the ranges holds `call`.
    fn holds(&self, call: Range<usize>) -> bool {
        let before = self.starts.partition_point(|&s| s <= call.start);
        before > 0 && self.reach[before - 1] >= call.end
    }
}

fn calls(
    raw: Vec<RawCall>,
    ignored: &[Range<usize>],
    src: &str,
    lines: &LineIndex,
    symbols: &[Symbol],
) -> Vec<CallSite> {
    let ignored = Ignored::new(ignored);
    let mut raw: Vec<RawCall> = raw
        .into_iter()
        .filter(|r| !ignored.holds(r.call.byte_range()))
        .collect();
    // Source order; calls starting together (a chain `a().b()`) innermost first.
    raw.sort_by_key(|r| {
        (
            r.call.start_byte(),
            r.call.end_byte(),
            r.callee.start_byte(),
        )
    });
    let mut callers = Enclosing::new(symbols);
    raw.into_iter()
        .map(|r| {
            let span = lines.span(r.call.start_byte() as u32, r.call.end_byte() as u32);
            CallSite {
                callee: shown(r.callee, src, 120),
                receiver: r.receiver.map(|n| shown(n, src, RECEIVER_CAP)),
                caller: callers.of(span.start_byte, span.end_byte),
                span,
            }
        })
        .collect()
}
