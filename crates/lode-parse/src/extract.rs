//! Running a language's queries over a parse tree.
//!
//! Query capture conventions (see `queries/README.md`):
//! - symbols: `@definition.<kind>` on the whole definition, `@name` on its name,
//!   optionally `@body` (the signature ends where the body starts) and `@doc`
//!   (a docstring node inside the definition);
//! - calls: `@call` on the call, `@callee` on the called name, optionally `@receiver`;
//! - imports: `@import` on the statement, `@source` on the module path, `@name` per imported name.

use std::cell::RefCell;
use std::collections::HashMap;

use lode_core::{CallSite, FileExtract, Import, Language, Symbol, SymbolKind};
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator, Tree};

use crate::chunk::{self, SymbolRange};
use crate::lines::LineIndex;
use crate::registry::{self, LangQueries};

const SIGNATURE_CAP: usize = 240;
const DOC_CAP: usize = 600;
const RECEIVER_CAP: usize = 80;
/// Parsing stops after this long; the file is then indexed as text.
const PARSE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(2);

thread_local! {
    static PARSERS: RefCell<HashMap<Language, Parser>> = RefCell::new(HashMap::new());
}

/// Extracts symbols, calls, imports and chunks from a code file.
/// Returns `None` when the language has no grammar or parsing failed.
pub(crate) fn extract_code(lang: Language, source: &str, lines: &LineIndex) -> Option<FileExtract> {
    let queries = registry::queries(lang)?;
    let tree = parse(lang, queries, source)?;
    let root = tree.root_node();
    let bytes = source.as_bytes();

    let (symbols, ranges) = symbols(queries, root, bytes, lines);
    let calls = calls(queries, root, bytes, lines, &symbols);
    let imports = imports(queries, root, bytes, lines);
    let chunks = chunk::chunk_symbols(source, lines, &symbols, &ranges);
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

fn parse(lang: Language, queries: &LangQueries, source: &str) -> Option<Tree> {
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
        let started = std::time::Instant::now();
        let mut progress = |_: &tree_sitter::ParseState| started.elapsed() > PARSE_DEADLINE;
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

struct RawSymbol {
    pattern: usize,
    node_id: usize,
    start: u32,
    end: u32,
    leading_start: u32,
    name: String,
    kind: SymbolKind,
    signature: String,
    doc: Option<String>,
}

fn symbols(
    q: &LangQueries,
    root: Node,
    bytes: &[u8],
    lines: &LineIndex,
) -> (Vec<Symbol>, Vec<SymbolRange>) {
    let names = q.symbols.capture_names();
    let mut raw: Vec<RawSymbol> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&q.symbols, root, bytes);
    while let Some(m) = matches.next() {
        let mut def = None;
        let mut kind = None;
        let mut name = None;
        let mut body = None;
        let mut doc = None;
        for cap in m.captures {
            let cname = names[cap.index as usize];
            if let Some(k) = cname.strip_prefix("definition.") {
                def = Some(cap.node);
                kind = SymbolKind::from_name(k);
            } else if cname == "name" {
                name.get_or_insert(cap.node);
            } else if cname == "body" {
                body.get_or_insert(cap.node);
            } else if cname == "doc" {
                doc.get_or_insert(cap.node);
            }
        }
        let (Some(def), Some(kind), Some(name)) = (def, kind, name) else {
            continue;
        };
        let name = collapse_ws(text_of(name, bytes), 120);
        if name.is_empty() {
            continue;
        }
        let sig_end = body
            .map(|b| b.start_byte())
            .filter(|&s| s > def.start_byte());
        let signature = match sig_end {
            Some(end) => collapse_ws(
                std::str::from_utf8(&bytes[def.start_byte()..end]).unwrap_or(""),
                SIGNATURE_CAP,
            ),
            None => {
                let line = lines.line0(def.start_byte() as u32);
                let end = (lines.end(line) as usize).min(def.end_byte());
                collapse_ws(
                    std::str::from_utf8(&bytes[def.start_byte()..end]).unwrap_or(""),
                    SIGNATURE_CAP,
                )
            }
        };
        let (leading_start, comment_doc) = leading_comments(def, bytes, lines);
        let doc = doc
            .map(|d| clean_doc(text_of(d, bytes)))
            .or(comment_doc)
            .filter(|d| !d.is_empty());
        raw.push(RawSymbol {
            pattern: m.pattern_index,
            node_id: def.id(),
            start: def.start_byte() as u32,
            end: def.end_byte() as u32,
            leading_start,
            name,
            kind,
            signature: signature
                .trim_end_matches([':', '{', '=', ' '])
                .trim_end()
                .to_string(),
            doc,
        });
    }
    // One symbol per definition node: the first pattern that matched wins.
    raw.sort_by_key(|r| (r.node_id, r.pattern));
    raw.dedup_by_key(|r| r.node_id);
    // Outer definitions before inner ones.
    raw.sort_by(|a, b| {
        a.start
            .cmp(&b.start)
            .then(b.end.cmp(&a.end))
            .then(a.pattern.cmp(&b.pattern))
    });

    let mut symbols: Vec<Symbol> = Vec::with_capacity(raw.len());
    let mut ranges = Vec::with_capacity(raw.len());
    let mut stack: Vec<usize> = Vec::new();
    for r in raw {
        while let Some(&top) = stack.last() {
            if symbols[top].span.end_byte >= r.end && symbols[top].span.start_byte <= r.start {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().copied();
        let mut kind = r.kind;
        if kind == SymbolKind::Function
            && parent.is_some_and(|p| {
                symbols[p].kind.is_container() && symbols[p].kind != SymbolKind::Module
            })
        {
            kind = SymbolKind::Method;
        }
        let container = stack
            .iter()
            .rev()
            .map(|&i| &symbols[i])
            .find(|s| s.kind.is_container())
            .map(|s| format!("{} {}", s.kind.as_str(), s.name));
        let span = lines.span(r.start, r.end);
        symbols.push(Symbol {
            name: r.name,
            kind,
            container,
            parent: parent.map(|p| p as u32),
            span,
            signature: r.signature,
            doc: r.doc,
        });
        ranges.push(SymbolRange {
            leading_start: r.leading_start.min(r.start),
        });
        stack.push(symbols.len() - 1);
    }
    (symbols, ranges)
}

/// Contiguous comments (and attributes/decorators) right above a definition:
/// where the definition's chunk should start, and the doc text of the comments.
fn leading_comments(def: Node, bytes: &[u8], lines: &LineIndex) -> (u32, Option<String>) {
    let mut start = def.start_byte() as u32;
    let mut docs: Vec<&str> = Vec::new();
    let mut next_line = lines.line0(start);
    let mut prev = def.prev_sibling();
    while let Some(node) = prev {
        let kind = node.kind();
        let is_comment = kind.contains("comment");
        let is_attr =
            kind.contains("attribute") || kind.contains("decorator") || kind.contains("annotation");
        if !(is_comment || is_attr) {
            break;
        }
        let end_line = lines.line0(
            (node.end_byte() as u32)
                .saturating_sub(1)
                .max(node.start_byte() as u32),
        );
        if end_line + 1 < next_line {
            break; // a blank line separates it from the definition
        }
        if is_comment {
            docs.push(text_of(node, bytes));
        }
        start = node.start_byte() as u32;
        next_line = lines.line0(start);
        prev = node.prev_sibling();
    }
    if docs.is_empty() {
        return (start, None);
    }
    docs.reverse();
    (start, Some(clean_doc(&docs.join("\n"))))
}

/// Strips comment markers and string quotes from a doc comment or docstring.
pub(crate) fn clean_doc(raw: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let trimmed = raw.trim();
    let body = trimmed
        .trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B'])
        .trim_start_matches("\"\"\"")
        .trim_start_matches("'''")
        .trim_end_matches("\"\"\"")
        .trim_end_matches("'''");
    for line in body.lines() {
        let l = line.trim();
        let l = l
            .trim_start_matches("/**")
            .trim_start_matches("/*!")
            .trim_start_matches("/*")
            .trim_end_matches("*/")
            .trim_start_matches("///")
            .trim_start_matches("//!")
            .trim_start_matches("//")
            .trim_start_matches("--")
            .trim_start_matches(";;")
            .trim_start_matches('#')
            .trim_start_matches('*')
            .trim_start_matches("@doc")
            .trim_start_matches("@moduledoc");
        let l = l.trim().trim_matches('"').trim();
        if l.is_empty() && out.last().is_none_or(|p| p.is_empty()) {
            continue;
        }
        out.push(l);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let text = out.join("\n");
    if text.len() > DOC_CAP {
        let mut cut = DOC_CAP;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &text[..cut])
    } else {
        text
    }
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
    q: &LangQueries,
    root: Node,
    bytes: &[u8],
    lines: &LineIndex,
    symbols: &[Symbol],
) -> Vec<CallSite> {
    let names = q.calls.capture_names();
    let mut out: Vec<(usize, CallSite)> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&q.calls, root, bytes);
    while let Some(m) = matches.next() {
        let (mut call, mut callee, mut receiver) = (None, None, None);
        for cap in m.captures {
            match names[cap.index as usize] {
                "call" => call = Some(cap.node),
                "callee" => callee = Some(cap.node),
                "receiver" => receiver = Some(cap.node),
                _ => {}
            }
        }
        let (Some(call), Some(callee)) = (call, callee) else {
            continue;
        };
        let name = collapse_ws(text_of(callee, bytes), 120);
        if name.is_empty() {
            continue;
        }
        let span = lines.span(call.start_byte() as u32, call.end_byte() as u32);
        out.push((
            call.id(),
            CallSite {
                callee: name,
                receiver: receiver.map(|r| collapse_ws(text_of(r, bytes), RECEIVER_CAP)),
                caller: enclosing(symbols, span.start_byte, span.end_byte),
                span,
            },
        ));
    }
    out.sort_by(|a, b| {
        a.1.span
            .start_byte
            .cmp(&b.1.span.start_byte)
            .then(a.0.cmp(&b.0))
    });
    out.dedup_by_key(|c| c.0);
    out.into_iter().map(|(_, c)| c).collect()
}

fn imports(q: &LangQueries, root: Node, bytes: &[u8], lines: &LineIndex) -> Vec<Import> {
    let names = q.imports.capture_names();
    let mut by_node: Vec<(usize, Import)> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&q.imports, root, bytes);
    while let Some(m) = matches.next() {
        let (mut stmt, mut source, mut imported) = (None, None, Vec::new());
        for cap in m.captures {
            match names[cap.index as usize] {
                "import" => stmt = Some(cap.node),
                "source" => source = Some(cap.node),
                "name" => imported.push(collapse_ws(text_of(cap.node, bytes), 120)),
                _ => {}
            }
        }
        let Some(stmt) = stmt else { continue };
        let source = source
            .map(|s| {
                text_of(s, bytes)
                    .trim_matches(['"', '\'', '`', '<', '>'])
                    .to_string()
            })
            .unwrap_or_default();
        let id = stmt.id();
        if let Some((_, existing)) = by_node.iter_mut().find(|(n, _)| *n == id) {
            if existing.source.is_empty() {
                existing.source = source;
            }
            for n in imported {
                if !existing.names.contains(&n) {
                    existing.names.push(n);
                }
            }
            continue;
        }
        by_node.push((
            id,
            Import {
                source,
                names: imported,
                span: lines.span(stmt.start_byte() as u32, stmt.end_byte() as u32),
            },
        ));
    }
    by_node.sort_by_key(|(_, i)| i.span.start_byte);
    by_node.into_iter().map(|(_, i)| i).collect()
}
