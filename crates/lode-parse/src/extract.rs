//! Running a language's queries over a parse tree.
//!
//! Query capture conventions (see `queries/README.md`):
//! - symbols: `@definition.<kind>` on the whole definition, `@name` on its name,
//!   optionally `@body` (the signature ends where the body starts), `@doc`
//!   (a docstring node inside the definition) and `@container` (the type a
//!   member defined outside it belongs to);
//! - calls: `@call` on the call, `@callee` on the called name, optionally
//!   `@receiver`; calls inside an `@ignore` node are dropped;
//! - imports: `@import` on the statement, `@source` on the module path (several
//!   captures span from the first to the last), `@name` per imported name.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;

use lode_core::{CallSite, FileExtract, Import, Language, Symbol, SymbolKind};
use tree_sitter::{Node, Parser, QueryCursor, StreamingIterator, Tree};

use crate::chunk::{self, SymbolRange};
use crate::doc::{clean_doc, leading_comments};
use crate::lines::LineIndex;
use crate::registry::{self, LangQueries};

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
    /// From a `@container` capture: `type Config`.
    container: Option<String>,
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
        let mut container = None;
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
            } else if cname == "container" {
                container.get_or_insert(cap.node);
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
                .trim_end_matches([':', '{', '=', ';', ' '])
                .to_string(),
            doc,
            container: container
                .map(|c| type_name(text_of(c, bytes)))
                .filter(|c| !c.is_empty())
                .map(|c| format!("type {c}")),
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
            && (r.container.is_some()
                || parent.is_some_and(|p| {
                    symbols[p].kind.is_container() && symbols[p].kind != SymbolKind::Module
                }))
        {
            kind = SymbolKind::Method;
        }
        // A captured container names the owner of a member defined outside it.
        let container = r.container.or_else(|| {
            stack
                .iter()
                .rev()
                .map(|&i| &symbols[i])
                .find(|s| s.kind.is_container())
                .map(|s| format!("{} {}", s.kind.as_str(), s.name))
        });
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
    q: &LangQueries,
    root: Node,
    bytes: &[u8],
    lines: &LineIndex,
    symbols: &[Symbol],
) -> Vec<CallSite> {
    let names = q.calls.capture_names();
    // (callee start, call) per call node: the first match of a node wins.
    let mut found: Vec<(usize, CallSite)> = Vec::new();
    let mut seen: HashSet<usize> = HashSet::new();
    let mut ignored: Vec<Range<usize>> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&q.calls, root, bytes);
    while let Some(m) = matches.next() {
        let (mut call, mut callee, mut receiver) = (None, None, None);
        for cap in m.captures {
            match names[cap.index as usize] {
                "call" => call = Some(cap.node),
                "callee" => callee = Some(cap.node),
                "receiver" => receiver = Some(cap.node),
                "ignore" => ignored.push(cap.node.byte_range()),
                _ => {}
            }
        }
        let (Some(call), Some(callee)) = (call, callee) else {
            continue;
        };
        let name = collapse_ws(text_of(callee, bytes), 120);
        if name.is_empty() || !seen.insert(call.id()) {
            continue;
        }
        let span = lines.span(call.start_byte() as u32, call.end_byte() as u32);
        found.push((
            callee.start_byte(),
            CallSite {
                callee: name,
                receiver: receiver.map(|r| collapse_ws(text_of(r, bytes), RECEIVER_CAP)),
                caller: enclosing(symbols, span.start_byte, span.end_byte),
                span,
            },
        ));
    }
    found.retain(|(_, c)| !is_ignored(&ignored, c));
    // Source order; calls starting together (a chain `a().b()`) innermost first.
    found.sort_by_key(|(callee, c)| (c.span.start_byte, c.span.end_byte, *callee));
    found.into_iter().map(|(_, c)| c).collect()
}

fn is_ignored(ignored: &[Range<usize>], call: &CallSite) -> bool {
    let (start, end) = (call.span.start_byte as usize, call.span.end_byte as usize);
    ignored.iter().any(|r| r.start <= start && end <= r.end)
}

fn imports(q: &LangQueries, root: Node, bytes: &[u8], lines: &LineIndex) -> Vec<Import> {
    let names = q.imports.capture_names();
    let mut found: Vec<(usize, Import)> = Vec::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&q.imports, root, bytes);
    while let Some(m) = matches.next() {
        let (mut stmt, mut sources, mut imported) = (None, Vec::new(), Vec::new());
        for cap in m.captures {
            match names[cap.index as usize] {
                "import" => stmt = Some(cap.node),
                "source" => sources.push(cap.node),
                "name" => imported.push(collapse_ws(text_of(cap.node, bytes), 120)),
                _ => {}
            }
        }
        let Some(stmt) = stmt else { continue };
        let source = source_text(&sources, bytes);
        let id = stmt.id();
        // Matches of one statement merge per source: `from x import a, b` is one
        // import, `import os, sys` two. A match without a source joins any.
        let same = |(n, i): &&mut (usize, Import)| {
            *n == id && (i.source == source || i.source.is_empty() || source.is_empty())
        };
        if let Some((_, existing)) = found.iter_mut().find(same) {
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
        found.push((
            id,
            Import {
                source,
                names: imported,
                span: lines.span(stmt.start_byte() as u32, stmt.end_byte() as u32),
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
        let tree = parse(lang, q, src).unwrap();
        let lines = LineIndex::new(src);
        let (symbols, ranges) = symbols(q, tree.root_node(), src.as_bytes(), &lines);
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
            [("os", vec![]), ("sys", vec![]), ("x", vec!["a", "b"])]
        );
        let js = "import d, { e, f as g } from 'm';\n";
        assert_eq!(
            imports(&extract(Language::JavaScript, js)),
            [("m", vec!["d", "e", "f"])]
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
    fn signatures_lose_a_trailing_semicolon() {
        let file = extract(Language::C, "int f(void);\nstatic const int N = 3;\n");
        assert_eq!(symbol(&file, "f").signature, "int f(void)");
        assert_eq!(symbol(&file, "N").signature, "static const int N = 3");
    }
}
