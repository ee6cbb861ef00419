//! Unit tests of extraction.

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
    let budget = Budget::start();
    let tree = parse(lang, q, src, &[], budget.deadline()).unwrap();
    let lines = LineIndex::new(src);
    let mut found = Found::default();
    let root = tree.root_node();
    run_queries(q, root, 0, src, budget, &mut found).unwrap();
    let (symbols, ranges) = symbols(found.symbols, &[root], src, &lines, budget).unwrap();
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

    let kt =
        "fun String?.shout() = this\nfun <T> List<T>.second(): T = this[1]\nfun plain(): Int = 1\n";
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
fn collapsing_stops_at_the_cap_as_whole_words_did() {
    // What collapsing gave when it pushed whole words.
    fn by_words(text: &str, cap: usize) -> String {
        let mut out = String::new();
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
    let texts = [
        "",
        "   ",
        " a  b\tc\n",
        "abcdef",
        "ab cd",
        "ab  cd ef",
        "é é é",
        "aé\u{a0}bé",
        "fn  f(\n    a: u8,\n) ",
        "xxxxxxxxxx yyyyyyyyyy",
    ];
    for text in texts {
        for cap in 0..12 {
            assert_eq!(
                collapse_ws(text, cap),
                by_words(text, cap),
                "{text:?} {cap}"
            );
        }
    }
}

#[test]
fn signatures_lose_a_trailing_semicolon() {
    let file = extract(Language::C, "int f(void);\nstatic const int N = 3;\n");
    assert_eq!(symbol(&file, "f").signature, "int f(void)");
    assert_eq!(symbol(&file, "N").signature, "static const int N = 3");
}
