//! Rust items written inside macro blocks: `cfg_rt! { pub fn … }`,
//! `cfg_if! { if #[cfg(unix)] { mod unix; } else { … } }`. tree-sitter leaves
//! a macro's body an opaque token tree, so crates such as tokio would have
//! whole APIs without a symbol; the bodies that read as items are found here,
//! to be parsed again as Rust where they lie in the file.

use std::ops::Range;

use tree_sitter::Node;

/// Tokens that open an item, once its attributes and comments are passed.
const ITEM_KEYWORDS: &[&str] = &[
    "pub", "fn", "struct", "enum", "union", "trait", "impl", "mod", "use", "const", "static",
    "type", "unsafe", "async",
];

/// A macro body that holds items.
pub(crate) struct MacroBody {
    /// Where the text that opens the body starts: `cfg_rt! {`, `} else {`.
    pub head: usize,
    /// The body, inside its delimiters.
    pub body: Range<usize>,
}

/// The macro bodies in `root`'s tree that hold items. Only invocations in
/// item position count: in the file, a module, an impl or a trait, never in a
/// function body, where `vec![…]` or `quote! { fn f() {} }` are expressions.
pub(crate) fn item_bodies(root: Node, bytes: &[u8]) -> Vec<MacroBody> {
    let mut out = Vec::new();
    // Items in file order, each module's before the next item: a stack, not
    // recursion, as modules may nest as deep as the tree goes.
    let mut pending = children_reversed(root);
    while let Some(item) = pending.pop() {
        // `name!(…);` is a statement round an invocation.
        let call = match item.kind() {
            "expression_statement" => item.named_child(0),
            _ => Some(item),
        };
        if let Some(call) = call.filter(|c| c.kind() == "macro_invocation") {
            invocation_bodies(call, bytes, &mut out);
        } else if let Some(body) = item.child_by_field_name("body")
            && body.kind() == "declaration_list"
        {
            pending.extend(children_reversed(body));
        }
    }
    out
}

fn children_reversed(list: Node) -> Vec<Node> {
    let mut cursor = list.walk();
    let mut items: Vec<Node> = list.named_children(&mut cursor).collect();
    items.reverse();
    items
}

fn invocation_bodies(call: Node, bytes: &[u8], out: &mut Vec<MacroBody>) {
    let Some(tree) = call
        .child(call.child_count().saturating_sub(1))
        .filter(|t| t.kind() == "token_tree")
    else {
        return;
    };
    // A definition that failed to parse as one: its rules are patterns.
    if call
        .child_by_field_name("macro")
        .is_some_and(|m| &bytes[m.byte_range()] == b"macro_rules")
    {
        return;
    }
    let tokens = inner_tokens(tree);
    if !is_cfg_if(&tokens) {
        let body = items_inside(tree, &tokens, bytes);
        out.extend(body.map(|body| MacroBody {
            head: call.start_byte(),
            body,
        }));
        return;
    }
    // `if #[cfg(..)] { items } else if … { items } else { items }`: a branch
    // opens at the macro's start, then at its `else`.
    let mut head = Some(call.start_byte());
    for t in &tokens {
        let opened = *head.get_or_insert(t.start_byte());
        if opens_with(*t, "{") {
            let body = items_inside(*t, &inner_tokens(*t), bytes);
            out.extend(body.map(|body| MacroBody { head: opened, body }));
            head = None;
        }
    }
}

/// The inside of a token tree whose first token starts an item.
fn items_inside(tree: Node, tokens: &[Node], bytes: &[u8]) -> Option<Range<usize>> {
    if !starts_with_item(tokens, bytes) {
        return None;
    }
    let open = tree.child(0)?;
    let close = tree.child(tree.child_count().checked_sub(1)?)?;
    let closes = matches!(
        (open.kind(), close.kind()),
        ("{", "}") | ("(", ")") | ("[", "]")
    );
    (closes && open.end_byte() < close.start_byte()).then(|| open.end_byte()..close.start_byte())
}

/// A token tree's tokens between its delimiters, comments left out.
fn inner_tokens(tree: Node) -> Vec<Node> {
    let mut cursor = tree.walk();
    let count = tree.child_count();
    tree.children(&mut cursor)
        .enumerate()
        .filter(|&(i, t)| i > 0 && i + 1 < count && !t.is_extra())
        .map(|(_, t)| t)
        .collect()
}

fn opens_with(tree: Node, delimiter: &str) -> bool {
    tree.kind() == "token_tree" && tree.child(0).is_some_and(|d| d.kind() == delimiter)
}

fn is_cfg_if(tokens: &[Node]) -> bool {
    matches!(tokens, [first, hash, ..] if first.kind() == "if" && hash.kind() == "#")
}

/// Whether the tokens open an item, after any attributes: an item keyword,
/// or another macro invocation (`cfg_net! { … }` nested in `cfg_rt! { … }`).
fn starts_with_item(tokens: &[Node], bytes: &[u8]) -> bool {
    let mut rest = tokens;
    // `#[attr]` and `#![attr]`
    while let [hash, tail @ ..] = rest
        && hash.kind() == "#"
    {
        rest = match tail {
            [bang, attr, tail @ ..] if bang.kind() == "!" && opens_with(*attr, "[") => tail,
            [attr, tail @ ..] if opens_with(*attr, "[") => tail,
            _ => return false,
        };
    }
    let Some(first) = rest.first() else {
        return false;
    };
    let text = |t: &Node| &bytes[t.byte_range()];
    if ITEM_KEYWORDS.contains(&first.kind()) {
        return true;
    }
    // A token tree has no `extern` keyword, only the identifier.
    if first.kind() == "identifier" && text(first) == b"extern" {
        return true;
    }
    // A macro path: `name!`, `a::b!`, `crate::name!`.
    let path = rest
        .iter()
        .take_while(|t| matches!(t.kind(), "identifier" | "::" | "crate" | "self" | "super"))
        .count();
    path > 0 && rest.get(path).is_some_and(|t| t.kind() == "!")
}

#[cfg(test)]
mod tests {
    use lode_core::{FileExtract, Language, Span};

    fn extract(src: &str) -> FileExtract {
        crate::extract(Language::Rust, src)
    }

    fn names(file: &FileExtract) -> Vec<&str> {
        file.symbols.iter().map(|s| s.name.as_str()).collect()
    }

    fn shifted(span: Span, lines: u32, bytes: u32) -> Span {
        Span::new(
            span.start_line + lines,
            span.end_line + lines,
            span.start_byte + bytes,
            span.end_byte + bytes,
        )
    }

    const ITEMS: &str = "/// A listener.
pub struct Listener { io: Io }

impl Listener {
    /// Binds.
    #[track_caller]
    pub fn bind<A>(addr: A) -> io::Result<Listener>
    where
        A: ToSocketAddrs,
    {
        let io = Io::bind(addr)?;
        Ok(Listener { io })
    }
}

pub trait Accept { fn accept(&self); }
use crate::net::{Io, ToSocketAddrs};
";

    #[test]
    fn items_read_as_if_unwrapped() {
        let plain = extract(ITEMS);
        let head = "cfg_net! {\n";
        let wrapped = extract(&format!("{head}{ITEMS}}}\n"));
        let at = head.len() as u32;
        assert_eq!(wrapped.symbols.len(), plain.symbols.len());
        for (w, p) in wrapped.symbols.iter().zip(&plain.symbols) {
            let p_moved = lode_core::Symbol {
                span: shifted(p.span, 1, at),
                ..p.clone()
            };
            assert_eq!(w, &p_moved);
        }
        let calls = |f: &FileExtract| -> Vec<_> {
            f.calls
                .iter()
                .map(|c| (c.callee.clone(), c.caller, c.span.start_line))
                .collect()
        };
        let moved: Vec<_> = calls(&plain)
            .into_iter()
            .map(|(c, caller, line)| (c, caller, line + 1))
            .collect();
        assert_eq!(calls(&wrapped), moved);
        assert_eq!(wrapped.imports.len(), 1);
        assert_eq!(wrapped.imports[0].names, plain.imports[0].names);
        assert_eq!(
            wrapped.imports[0].span,
            shifted(plain.imports[0].span, 1, at)
        );
        // The opening line joins the first item's chunk.
        assert_eq!(wrapped.chunks[0].span.start_line, 1);
        assert_eq!(wrapped.chunks[0].symbol, Some(0));
    }

    #[test]
    fn the_wrapper_joins_its_first_and_last_items_chunks() {
        let a = "        x();\n".repeat(25);
        let b = "    y();\n".repeat(25);
        let src = format!("cfg_rt! {{\n    pub fn a() {{\n{a}    }}\n}}\n\npub fn b() {{\n{b}}}\n");
        let file = extract(&src);
        let chunks: Vec<_> = file
            .chunks
            .iter()
            .map(|c| (c.span.start_line, c.span.end_line, c.symbol))
            .collect();
        assert_eq!(chunks, [(1, 29, Some(0)), (31, 57, Some(1))]);
    }

    #[test]
    fn one_line_bodies_keep_their_offsets() {
        let src = "const A: u8 = 1;\ncfg_rt! { pub fn f() -> u8 { g() } }\n";
        let file = extract(src);
        let f = &file.symbols[1];
        assert_eq!((f.name.as_str(), f.span.start_line), ("f", 2));
        assert_eq!(f.span.start_byte as usize, src.find("pub fn").unwrap());
        assert_eq!(f.span.end_byte as usize, src.find(" }\n").unwrap());
        assert_eq!(f.signature, "pub fn f() -> u8");
        assert_eq!(file.calls[0].caller, Some(1));
    }

    #[test]
    fn only_item_position_macros_are_read() {
        let src = "macro_rules! make {
    ($n:ident) => { fn $n() {} };
}
html! { <div>{ fn_name }</div> }
fn body() {
    let q = quote! { fn not_an_item() {} };
    vec![struct_like { a: 1 }];
    cfg_rt! { fn inner_block() {} }
}
";
        assert_eq!(names(&extract(src)), ["make", "body"]);
    }

    #[test]
    fn macro_bodies_in_impls_hold_methods() {
        let src = "impl Runtime {\n    cfg_rt! {\n        pub fn spawn(&self) {}\n    }\n}\n";
        let file = extract(src);
        let spawn = &file.symbols[1];
        assert_eq!(spawn.kind, lode_core::SymbolKind::Method);
        assert_eq!(spawn.parent, Some(0));
        assert_eq!(spawn.container.as_deref(), Some("impl Runtime"));
    }

    #[test]
    fn cfg_if_branches_hold_items() {
        let src = "cfg_if::cfg_if! {
    if #[cfg(unix)] {
        fn unix() {}
    } else if #[cfg(windows)] {
        fn windows() {}
    } else {
        fn other() {}
    }
}
";
        let file = extract(src);
        assert_eq!(names(&file), ["unix", "windows", "other"]);
        let starts: Vec<u32> = file.symbols.iter().map(|s| s.span.start_line).collect();
        assert_eq!(starts, [3, 5, 7]);
    }

    #[test]
    fn any_delimiter_and_attributes_first() {
        let src = "thread_local!(static A: u8 = 0);\nfeature! {\n    #![any(unix)]\n    #[doc = \"b\"]\n    pub struct B;\n}\n";
        assert_eq!(names(&extract(src)), ["A", "B"]);
    }

    #[test]
    fn nesting_is_bounded() {
        let depth = crate::extract::MACRO_DEPTH as usize;
        let nest = |levels: usize| {
            let mut src = String::from("fn deep() {}");
            for i in 0..levels {
                src = format!("cfg_{i}! {{ {src} }}");
            }
            src
        };
        assert_eq!(names(&extract(&nest(depth))), ["deep"]);
        assert!(names(&extract(&nest(depth + 1))).is_empty());
    }
}
