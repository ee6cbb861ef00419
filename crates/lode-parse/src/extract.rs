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
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::time::Instant;

use lode_core::{CallSite, FileExtract, Import, Language, Symbol, SymbolKind};
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator, Tree};

use crate::chunk::{self, SymbolRange};
use crate::doc::{clean_doc, leading_comments};
use crate::lines::LineIndex;
use crate::macro_items::{self, MacroBody};
use crate::registry::{self, LangQueries, PatternSet, Role};

const SIGNATURE_CAP: usize = 240;
const RECEIVER_CAP: usize = 80;
/// Parsing stops after this long; the file is then indexed as text.
const PARSE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

thread_local! {
    static PARSERS: RefCell<HashMap<Language, Parser>> = RefCell::new(HashMap::new());
}

/// Extracts symbols, calls, imports and chunks from a code file.
/// Returns `None` when the language has no grammar or parsing failed.
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
    let deadline = Instant::now() + PARSE_DEADLINE;
    let tree = parse(lang, queries, source, &[], deadline)?;
    probe.phase_done("parse");
    let root = tree.root_node();
    let bytes = source.as_bytes();
    let (macro_trees, mut macro_bodies) = match lang {
        Language::Rust => parse_macro_items(queries, source, lines, root, deadline),
        _ => (Vec::new(), Vec::new()),
    };
    probe.phase_done("macros");

    let mut found = run_queries(queries, root, bytes);
    for t in &macro_trees {
        found.extend(run_queries(queries, t.root_node(), bytes));
    }
    probe.phase_done("query");
    let (symbols, mut ranges) = symbols(found.symbols, bytes, lines);
    attach_macro_edges(&symbols, &mut ranges, &mut macro_bodies, bytes);
    probe.phase_done("symbols");
    let calls = calls(found.calls, &found.ignored, bytes, lines, &symbols);
    probe.phase_done("calls");
    let imports = imports(found.imports, bytes, lines);
    probe.phase_done("imports");
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
/// hold; what the deadline cuts off stays unparsed.
fn parse_macro_items(
    queries: &LangQueries,
    source: &str,
    lines: &LineIndex,
    root: Node,
    deadline: Instant,
) -> (Vec<Tree>, Vec<MacroBody>) {
    let bytes = source.as_bytes();
    let mut pending: Vec<(MacroBody, u32)> = macro_items::item_bodies(root, bytes)
        .into_iter()
        .map(|b| (b, 1))
        .collect();
    let (mut trees, mut bodies) = (Vec::new(), Vec::new());
    while let Some((body, depth)) = pending.pop() {
        let range = ts_range(lines, body.body.clone());
        let Some(tree) = parse(Language::Rust, queries, source, &[range], deadline) else {
            break;
        };
        if depth < MACRO_DEPTH {
            let nested = macro_items::item_bodies(tree.root_node(), bytes);
            pending.extend(nested.into_iter().map(|b| (b, depth + 1)));
        }
        trees.push(tree);
        bodies.push(body);
    }
    (trees, bodies)
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

fn text_of<'a>(node: Node, bytes: &'a [u8]) -> &'a str {
    std::str::from_utf8(&bytes[node.byte_range()]).unwrap_or("")
}

fn collapse_ws(text: &str, cap: usize) -> String {
    let mut out = String::with_capacity(text.len().min(cap + 4));
    for word in text.split_whitespace() {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
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

/// An imports match: the statement, its `@source` captures and its names.
struct RawImport<'t> {
    stmt: Node<'t>,
    sources: Vec<Node<'t>>,
    names: Vec<String>,
}

#[derive(Default)]
struct Found<'t> {
    symbols: Vec<RawSymbol<'t>>,
    calls: Vec<RawCall<'t>>,
    /// `@ignore` captures: calls inside them are dropped.
    ignored: Vec<Range<usize>>,
    imports: Vec<RawImport<'t>>,
}

impl<'t> Found<'t> {
    /// Adds the matches of another tree of the same file.
    fn extend(&mut self, other: Found<'t>) {
        self.symbols.extend(other.symbols);
        self.calls.extend(other.calls);
        self.ignored.extend(other.ignored);
        self.imports.extend(other.imports);
    }
}

/// Whether `collapse_ws` would give an empty string for a node's text.
fn is_blank(node: Node, bytes: &[u8]) -> bool {
    text_of(node, bytes).split_whitespace().next().is_none()
}

thread_local! {
    static CURSOR: RefCell<QueryCursor> = RefCell::new(QueryCursor::new());
}

/// Runs the language's one query (symbols, calls and imports) over the tree,
/// in one walk, and sorts the matches out by the file their pattern is from.
fn run_queries<'t>(q: &LangQueries, root: Node<'t>, bytes: &[u8]) -> Found<'t> {
    let mut found = Found::default();
    let mut seen_calls: HashSet<usize> = HashSet::new();
    CURSOR.with(|cell| {
        let mut cursor = cell.borrow_mut();
        let mut matches = cursor.matches(&q.query, root, bytes);
        while let Some(m) = matches.next() {
            if !q.checks_ok(m.pattern_index, m.captures) {
                continue;
            }
            match q.set(m.pattern_index) {
                PatternSet::Symbols => {
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
                        continue;
                    };
                    if is_blank(name, bytes) {
                        continue;
                    }
                    found.symbols.push(RawSymbol {
                        pattern: m.pattern_index,
                        def,
                        kind,
                        name,
                        body,
                        doc,
                        container,
                    });
                }
                PatternSet::Calls => {
                    let (mut call, mut callee, mut receiver) = (None, None, None);
                    for cap in m.captures {
                        match q.role(cap.index) {
                            Role::Call => call = Some(cap.node),
                            Role::Callee => callee = Some(cap.node),
                            Role::Receiver => receiver = Some(cap.node),
                            Role::Ignore => found.ignored.push(cap.node.byte_range()),
                            _ => {}
                        }
                    }
                    let (Some(call), Some(callee)) = (call, callee) else {
                        continue;
                    };
                    // A call node counts once: its first match with a name.
                    if seen_calls.contains(&call.id())
                        || is_blank(callee, bytes)
                        || !seen_calls.insert(call.id())
                    {
                        continue;
                    }
                    found.calls.push(RawCall {
                        call,
                        callee,
                        receiver,
                    });
                }
                PatternSet::Imports => {
                    let (mut stmt, mut sources, mut names) = (None, Vec::new(), Vec::new());
                    let mut alias = None;
                    for cap in m.captures {
                        match q.role(cap.index) {
                            Role::Import => stmt = Some(cap.node),
                            Role::Source => sources.push(cap.node),
                            Role::Name => names.push(collapse_ws(text_of(cap.node, bytes), 120)),
                            Role::Alias => alias = Some(collapse_ws(text_of(cap.node, bytes), 120)),
                            _ => {}
                        }
                    }
                    // An alias renames the match's one name, or binds the module itself (`*`).
                    if let Some(alias) = alias {
                        match names.pop() {
                            Some(name) => names.push(format!("{name} as {alias}")),
                            None => names.push(format!("* as {alias}")),
                        }
                    }
                    if let Some(stmt) = stmt {
                        found.imports.push(RawImport {
                            stmt,
                            sources,
                            names,
                        });
                    }
                }
            }
        }
    });
    found
}

fn symbols(
    mut raw: Vec<RawSymbol>,
    bytes: &[u8],
    lines: &LineIndex,
) -> (Vec<Symbol>, Vec<SymbolRange>) {
    // One symbol per definition node: the first pattern that matched wins.
    raw.sort_by_key(|r| (r.def.id(), r.pattern));
    raw.dedup_by_key(|r| r.def.id());
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
    for r in raw {
        let def = r.def;
        let (start, end) = (def.start_byte() as u32, def.end_byte() as u32);
        while let Some(&top) = stack.last() {
            if symbols[top].span.end_byte >= end && symbols[top].span.start_byte <= start {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().copied();
        // A captured container names the owner of a member defined outside it.
        let captured = r
            .container
            .map(|c| type_name(text_of(c, bytes)))
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
        let mut signature = collapse_ws(
            std::str::from_utf8(&bytes[def.start_byte()..sig_end]).unwrap_or(""),
            SIGNATURE_CAP,
        );
        let kept = signature.trim_end_matches([':', '{', '=', ';', ' ']).len();
        signature.truncate(kept);
        let (leading_start, comment_doc) = leading_comments(def, bytes, lines);
        let doc = r
            .doc
            .map(|d| clean_doc(text_of(d, bytes)))
            .or(comment_doc)
            .filter(|d| !d.is_empty());
        symbols.push(Symbol {
            name: collapse_ws(text_of(r.name, bytes), 120),
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
    (symbols, ranges)
}

/// The bare name of a type as written where a member is defined outside it:
/// `*Config` → `Config`, `Map<K, V>` → `Map`, `Config[T]` → `Config`, `String?` → `String`.
fn type_name(text: &str) -> String {
    let bare = text.trim_start_matches(|c: char| matches!(c, '*' | '&') || c.is_whitespace());
    let bare = bare.split(['<', '[', '(']).next().unwrap_or("");
    let bare = bare.trim_end_matches(|c: char| matches!(c, '*' | '&' | '?') || c.is_whitespace());
    collapse_ws(bare, 120)
}

/// The innermost symbol whose span contains `byte` (symbols are sorted outer-first).
fn enclosing(symbols: &[Symbol], start: u32, end: u32) -> Option<u32> {
    symbols
        .iter()
        .enumerate()
        .rev()
        .find(|(_, s)| s.span.start_byte <= start && end <= s.span.end_byte)
        .map(|(i, _)| i as u32)
}

fn calls(
    raw: Vec<RawCall>,
    ignored: &[Range<usize>],
    bytes: &[u8],
    lines: &LineIndex,
    symbols: &[Symbol],
) -> Vec<CallSite> {
    // (callee start, call)
    let mut found: Vec<(usize, CallSite)> = raw
        .into_iter()
        .filter(|r| !is_ignored(ignored, r.call.byte_range()))
        .map(|r| {
            let span = lines.span(r.call.start_byte() as u32, r.call.end_byte() as u32);
            let call = CallSite {
                callee: collapse_ws(text_of(r.callee, bytes), 120),
                receiver: r
                    .receiver
                    .map(|n| collapse_ws(text_of(n, bytes), RECEIVER_CAP)),
                caller: enclosing(symbols, span.start_byte, span.end_byte),
                span,
            };
            (r.callee.start_byte(), call)
        })
        .collect();
    // Source order; calls starting together (a chain `a().b()`) innermost first.
    found.sort_by_key(|(callee, c)| (c.span.start_byte, c.span.end_byte, *callee));
    found.into_iter().map(|(_, c)| c).collect()
}

fn is_ignored(ignored: &[Range<usize>], call: Range<usize>) -> bool {
    ignored
        .iter()
        .any(|r| r.start <= call.start && call.end <= r.end)
}

fn imports(raw: Vec<RawImport>, bytes: &[u8], lines: &LineIndex) -> Vec<Import> {
    let mut found: Vec<(usize, Import)> = Vec::new();
    for r in raw {
        let source = source_text(&r.sources, bytes);
        let id = r.stmt.id();
        // Matches of one statement merge per source: `from x import a, b` is one
        // import, `import os, sys` two. A match without a source joins any.
        let same = |(n, i): &&mut (usize, Import)| {
            *n == id && (i.source == source || i.source.is_empty() || source.is_empty())
        };
        if let Some((_, existing)) = found.iter_mut().find(same) {
            if existing.source.is_empty() {
                existing.source = source;
            }
            for n in r.names {
                if !existing.names.contains(&n) {
                    existing.names.push(n);
                }
            }
            continue;
        }
        found.push((
            id,
            Import {
                source,
                names: r.names,
                span: lines.span(r.stmt.start_byte() as u32, r.stmt.end_byte() as u32),
            },
        ));
    }
    found.sort_by_key(|(_, i)| i.span.start_byte);
    found.into_iter().map(|(_, i)| i).collect()
}

/// The text from the first `@source` capture to the last, without quotes.
fn source_text(sources: &[Node], bytes: &[u8]) -> String {
    let start = sources.iter().map(|n| n.start_byte()).min();
    let end = sources.iter().map(|n| n.end_byte()).max();
    let (Some(start), Some(end)) = (start, end) else {
        return String::new();
    };
    std::str::from_utf8(&bytes[start..end])
        .unwrap_or("")
        .trim_matches(['"', '\'', '`', '<', '>'])
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extract(lang: Language, src: &str) -> FileExtract {
        crate::extract(lang, src)
    }

    fn callees(file: &FileExtract) -> Vec<&str> {
        file.calls.iter().map(|c| c.callee.as_str()).collect()
    }

    fn symbol<'a>(file: &'a FileExtract, name: &str) -> &'a Symbol {
        file.symbols
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no symbol {name}"))
    }

    fn imports(file: &FileExtract) -> Vec<(&str, Vec<&str>)> {
        file.imports
            .iter()
            .map(|i| {
                (
                    i.source.as_str(),
                    i.names.iter().map(String::as_str).collect(),
                )
            })
            .collect()
    }

    /// The 1-based line where a symbol's chunk may start, and its doc.
    fn leading(lang: Language, src: &str, name: &str) -> (u32, Option<String>) {
        let q = registry::queries(lang).unwrap();
        let tree = parse(lang, q, src, &[], Instant::now() + PARSE_DEADLINE).unwrap();
        let lines = LineIndex::new(src);
        let found = run_queries(q, tree.root_node(), src.as_bytes());
        let (symbols, ranges) = symbols(found.symbols, src.as_bytes(), &lines);
        let i = symbols.iter().position(|s| s.name == name).unwrap();
        (
            lines.line0(ranges[i].leading_start) + 1,
            symbols[i].doc.clone(),
        )
    }

    #[test]
    fn chained_calls_come_innermost_first() {
        let file = extract(Language::Python, "def f():\n    a().b().c()\n    d(e())\n");
        assert_eq!(callees(&file), ["a", "b", "c", "d", "e"]);
        // `y.c()` starts after the chain that contains it.
        let file = extract(Language::JavaScript, "x.a().b(y.c()).d();\n");
        assert_eq!(callees(&file), ["a", "b", "d", "c"]);
    }

    #[test]
    fn calls_inside_ignore_captures_are_dropped() {
        let src = "defmodule A do\n  @spec get(integer()) :: User.t() | nil\n  @type t :: %{map() => list()}\n  def get(id), do: Repo.get(User, id)\nend\n";
        let file = extract(Language::Elixir, src);
        assert_eq!(callees(&file), ["get"]);
    }

    #[test]
    fn captured_containers_name_the_type() {
        let go = "package p\nfunc (c *Config[T]) Get() {}\nfunc (Config) Set() {}\n";
        let file = extract(Language::Go, go);
        for name in ["Get", "Set"] {
            let s = symbol(&file, name);
            assert_eq!(
                (s.kind, s.container.as_deref()),
                (SymbolKind::Method, Some("type Config"))
            );
        }

        let cpp = "void demo::Config::load() {}\ntemplate <typename T> T& Box<T>::get() { return v; }\nConfig::~Config() {}\nvoid free_fn() {}\n";
        let file = extract(Language::Cpp, cpp);
        let found = |name: &str| {
            let s = symbol(&file, name);
            (s.kind, s.container.clone())
        };
        assert_eq!(
            found("load"),
            (SymbolKind::Method, Some("type Config".into()))
        );
        assert_eq!(found("get"), (SymbolKind::Method, Some("type Box".into())));
        assert_eq!(
            found("~Config"),
            (SymbolKind::Method, Some("type Config".into()))
        );
        assert_eq!(found("free_fn"), (SymbolKind::Function, None));

        let kt = "fun String?.shout() = this\nfun <T> List<T>.second(): T = this[1]\nfun plain(): Int = 1\n";
        let file = extract(Language::Kotlin, kt);
        assert_eq!(
            symbol(&file, "shout").container.as_deref(),
            Some("type String")
        );
        assert_eq!(
            symbol(&file, "second").container.as_deref(),
            Some("type List")
        );
        assert_eq!(symbol(&file, "second").kind, SymbolKind::Method);
        assert_eq!(symbol(&file, "plain").kind, SymbolKind::Function);
    }

    #[test]
    fn several_source_captures_span_first_to_last() {
        let scala = "import java.io.File\nimport scala.collection.mutable.{Map, Set}\nimport Foo\n";
        assert_eq!(
            imports(&extract(Language::Scala, scala)),
            [
                ("java.io", vec!["File"]),
                ("scala.collection.mutable", vec!["Map", "Set"]),
                ("Foo", vec![]),
            ]
        );
        let cpp = "using a::b::c;\nusing a::b::c::d;\nusing std::string;\nusing namespace x::y;\n";
        assert_eq!(
            imports(&extract(Language::Cpp, cpp)),
            [
                ("a::b", vec!["c"]),
                ("a::b::c", vec!["d"]),
                ("std", vec!["string"]),
                ("x::y", vec![]),
            ]
        );
        let kt = "import java.io.File\nimport a.B as C\nimport kotlin.collections.*\n";
        assert_eq!(
            imports(&extract(Language::Kotlin, kt)),
            [
                ("java.io", vec!["File"]),
                ("a", vec!["B"]),
                ("kotlin.collections", vec![]),
            ]
        );
    }

    #[test]
    fn one_import_per_source() {
        let py = "import os, sys\nfrom x import a, b as c\n";
        assert_eq!(
            imports(&extract(Language::Python, py)),
            [("os", vec![]), ("sys", vec![]), ("x", vec!["a", "b as c"])]
        );
        let js = "import d, { e, f as g } from 'm';\n";
        assert_eq!(
            imports(&extract(Language::JavaScript, js)),
            [("m", vec!["d", "e", "f as g"])]
        );
    }

    #[test]
    fn aliases_name_what_is_in_scope() {
        let py = "import numpy as np\nfrom .util import fmt as f\n";
        assert_eq!(
            imports(&extract(Language::Python, py)),
            [("numpy", vec!["* as np"]), (".util", vec!["fmt as f"])]
        );
        let ts = "import * as util from './util';\nimport { a as b } from './x';\n";
        assert_eq!(
            imports(&extract(Language::TypeScript, ts)),
            [("./util", vec!["* as util"]), ("./x", vec!["a as b"])]
        );
        let go = "package m\nimport (\n\tf \"fmt\"\n\t\"os\"\n)\n";
        assert_eq!(
            imports(&extract(Language::Go, go)),
            [("fmt", vec!["* as f"]), ("os", vec![])]
        );
        let rs = "use a::b::C as D;\nuse x::{y as z, w};\nuse foo as bar;\n";
        assert_eq!(
            imports(&extract(Language::Rust, rs)),
            [
                ("a::b", vec!["C as D"]),
                ("x", vec!["y as z", "w"]),
                ("foo", vec!["* as bar"])
            ]
        );
    }

    #[test]
    fn docs_above_wrappers_and_parents_are_found() {
        let cpp = "int x;\n\n/// Parses.\ntemplate <typename T>\nT parse_as(const char* s);\n";
        assert_eq!(
            leading(Language::Cpp, cpp, "parse_as"),
            (3, Some("Parses.".into()))
        );
        let cpp = "int x;\n\ntemplate <typename T>\nclass Box {};\n";
        assert_eq!(leading(Language::Cpp, cpp, "Box"), (3, None));

        let ts = "/** Says hi. */\ndeclare function hi(): void;\n/** A box. */\n@sealed\nexport class Box {}\n";
        assert_eq!(
            leading(Language::TypeScript, ts, "hi"),
            (1, Some("Says hi.".into()))
        );
        assert_eq!(
            leading(Language::TypeScript, ts, "Box"),
            (3, Some("A box.".into()))
        );

        let rb = "class Cart\n  # Adds.\n  def add; end\nend\n";
        assert_eq!(
            leading(Language::Ruby, rb, "add"),
            (2, Some("Adds.".into()))
        );

        let py = "class A:\n    # Loads.\n    @classmethod\n    def load(cls): pass\n";
        assert_eq!(
            leading(Language::Python, py, "load"),
            (2, Some("Loads.".into()))
        );
        // The class's own comment is not its first method's.
        let py = "# An A.\nclass A:\n    def f(self): pass\n";
        assert_eq!(leading(Language::Python, py, "f"), (3, None));

        let hs = "module M where\n\n-- | Factorial.\nfact :: Int -> Int\nfact n = n\n";
        assert_eq!(
            symbol(&extract(Language::Haskell, hs), "fact")
                .doc
                .as_deref(),
            Some("Factorial.")
        );
        let hs = "module M where\n\n-- | Zero.\nzero = 0\n";
        assert_eq!(
            leading(Language::Haskell, hs, "zero"),
            (3, Some("Zero.".into()))
        );
    }

    #[test]
    fn a_pattern_without_name_takes_the_name_and_body_fields() {
        let swift = "struct P {\n  func load(path: String) -> Int {\n    return 1\n  }\n  static func == (a: P, b: P) -> Bool { true }\n}\n";
        let file = extract(Language::Swift, swift);
        assert_eq!(
            symbol(&file, "load").signature,
            "func load(path: String) -> Int"
        );
        // `#kind?` keeps operator functions out.
        assert!(file.symbols.iter().all(|s| s.name != "=="));
    }

    #[test]
    fn signatures_lose_a_trailing_semicolon() {
        let file = extract(Language::C, "int f(void);\nstatic const int N = 3;\n");
        assert_eq!(symbol(&file, "f").signature, "int f(void)");
        assert_eq!(symbol(&file, "N").signature, "static const int N = 3");
    }
}
