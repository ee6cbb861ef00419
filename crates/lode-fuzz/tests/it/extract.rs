//! `lode_parse::extract` over hostile text, in every language.
//!
//! Each input is extracted as each language on a thread with the stack of an
//! indexer's worker, and each extraction must end within [`LIMIT`]. What comes
//! back must describe the file it came from: every span inside the file, its
//! lines and bytes naming the same region, on character boundaries; symbol,
//! caller and chunk indices that point into the file's own lists; chunks in
//! order, apart, non-blank, within [`HARD_CAP_BYTES`], and together holding
//! every non-blank line; and a file that could not be extracted is line
//! windows and nothing else.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use lode_core::{ChunkKind, FileExtract, Language, Span, SymbolKind};
use lode_parse::{HARD_CAP_BYTES, LineIndex};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use crate::common::{ODD, any_text, config};

/// Generous for a debug build: a bounded extraction of these inputs takes a
/// small fraction of it.
const LIMIT: Duration = Duration::from_secs(5);
/// Rayon's worker threads, which index files, get the default stack of a
/// spawned thread.
const STACK: usize = 2 * 1024 * 1024;
/// Signatures are capped at 240 bytes, then `…`.
const SIGNATURE_MAX: usize = 240 + '…'.len_utf8();
/// Receivers are capped at 80 bytes, then `…`.
const RECEIVER_MAX: usize = 80 + '…'.len_utf8();

/// Extracts `src` as each of `langs`, in turn, on a thread of its own; fails
/// when one runs past [`LIMIT`] or panics.
pub fn extract_each(src: &str, langs: &[Language]) -> Vec<(Language, FileExtract)> {
    let (tx, rx) = mpsc::channel();
    let (text, todo) = (src.to_string(), langs.to_vec());
    let worker = std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            for lang in todo {
                let file = lode_parse::extract(lang, &text);
                if tx.send((lang, file)).is_err() {
                    return;
                }
            }
        })
        .expect("a thread");
    let mut out = Vec::with_capacity(langs.len());
    for &lang in langs {
        let started = Instant::now();
        match rx.recv_timeout(LIMIT) {
            Ok(got) => out.push(got),
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "{lang}: still extracting {} bytes after {:?}",
                src.len(),
                started.elapsed()
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => match worker.join() {
                Err(panic) => std::panic::resume_unwind(panic),
                Ok(()) => panic!("{lang}: the extraction thread ended early"),
            },
        }
    }
    out
}

fn check_span(what: &str, s: &Span, src: &str, lines: &LineIndex) -> Result<(), TestCaseError> {
    let n = lines.line_count();
    prop_assert!(
        1 <= s.start_line && s.start_line <= s.end_line && s.end_line <= n,
        "{what}: lines {s:?} outside 1..={n}"
    );
    prop_assert!(
        s.start_byte <= s.end_byte && s.end_byte as usize <= src.len(),
        "{what}: bytes {s:?} outside 0..={}",
        src.len()
    );
    prop_assert!(
        src.is_char_boundary(s.start_byte as usize) && src.is_char_boundary(s.end_byte as usize),
        "{what}: bytes {s:?} inside a character"
    );
    // Lines 1-based inclusive, bytes half-open: the same region (a range that
    // ends at a line's start ends on the line before).
    let first = lines.line0(s.start_byte) + 1;
    let last = if s.end_byte > s.start_byte {
        lines.line0(s.end_byte - 1) + 1
    } else {
        first
    };
    prop_assert!(
        (s.start_line, s.end_line) == (first, last),
        "{what}: {s:?} says lines {}-{}, its bytes lie on {first}-{last}",
        s.start_line,
        s.end_line
    );
    Ok(())
}

/// Every property an extraction of `src` as `lang` must have.
pub fn check(lang: Language, src: &str, file: &FileExtract) -> Result<(), TestCaseError> {
    let lines = LineIndex::new(src);
    let n_syms = file.symbols.len();
    prop_assert_eq!(file.language, Some(lang));
    if !lang.is_code() {
        prop_assert!(file.calls.is_empty() && file.imports.is_empty() && !file.parse_failed);
        prop_assert!(
            file.symbols
                .iter()
                .all(|s| lang == Language::Markdown && s.kind == SymbolKind::Section),
            "{lang}: symbols other than Markdown sections"
        );
    }
    if file.parse_failed {
        prop_assert!(
            file.symbols.is_empty() && file.calls.is_empty() && file.imports.is_empty(),
            "{lang}: parse_failed, yet records"
        );
        prop_assert!(file.chunks.iter().all(|c| c.kind == ChunkKind::Text));
    }

    for (i, s) in file.symbols.iter().enumerate() {
        check_span(&format!("symbol {i} {:?}", s.name), &s.span, src, &lines)?;
        if let Some(p) = s.parent {
            // Symbols come outer-first: a parent before its children.
            prop_assert!((p as usize) < i, "symbol {i}: parent {p}");
        }
        if lang.is_code() {
            prop_assert!(
                s.signature.len() <= SIGNATURE_MAX,
                "symbol {i}: a signature of {} bytes",
                s.signature.len()
            );
        }
    }
    for (i, c) in file.calls.iter().enumerate() {
        check_span(&format!("call {i} {:?}", c.callee), &c.span, src, &lines)?;
        prop_assert!(c.caller.is_none_or(|s| (s as usize) < n_syms), "call {i}");
        prop_assert!(
            c.receiver.as_ref().is_none_or(|r| r.len() <= RECEIVER_MAX),
            "call {i}: a receiver of {:?} bytes",
            c.receiver.as_ref().map(String::len)
        );
    }
    for (i, imp) in file.imports.iter().enumerate() {
        check_span(
            &format!("import {i} {:?}", imp.source),
            &imp.span,
            src,
            &lines,
        )?;
    }

    let mut defined = vec![false; n_syms];
    for (i, c) in file.chunks.iter().enumerate() {
        let what = format!("chunk {i} ({})", c.kind.as_str());
        check_span(&what, &c.span, src, &lines)?;
        let body = &src[c.span.start_byte as usize..c.span.end_byte as usize];
        prop_assert!(!body.trim().is_empty(), "{what}: blank");
        prop_assert!(
            c.span.byte_len() <= HARD_CAP_BYTES,
            "{what}: {} bytes, over the cap",
            c.span.byte_len()
        );
        prop_assert!(c.symbol.is_none_or(|s| (s as usize) < n_syms), "{what}");
        for &d in &c.defines {
            let d = d as usize;
            prop_assert!(d < n_syms, "{what}: defines {d} of {n_syms}");
            prop_assert!(!defined[d], "symbol {d} defined by two chunks");
            defined[d] = true;
            prop_assert!(
                c.span.contains_line(file.symbols[d].span.start_line),
                "{what} defines symbol {d}, which starts elsewhere"
            );
        }
    }
    for (i, w) in file.chunks.windows(2).enumerate() {
        let (a, b) = (&w[0].span, &w[1].span);
        prop_assert!(
            (a.start_line, a.end_line) <= (b.start_line, b.end_line) && a.end_byte <= b.start_byte,
            "chunks {i} and {} out of order or overlapping: {a:?} {b:?}",
            i + 1
        );
    }
    // Every non-blank line is in a chunk: nothing of the file is lost to search.
    let mut next = 0;
    for line0 in 0..lines.line_count() {
        let text = &src[lines.start(line0) as usize..lines.end(line0) as usize];
        if text.trim().is_empty() {
            continue;
        }
        let line = line0 + 1;
        while next < file.chunks.len() && file.chunks[next].span.end_line < line {
            next += 1;
        }
        prop_assert!(
            file.chunks
                .get(next)
                .is_some_and(|c| c.span.contains_line(line)),
            "line {line} ({:?}…) is in no chunk",
            text.chars().take(40).collect::<String>()
        );
    }
    Ok(())
}

/// Extracts `src` as every language and checks each.
fn check_all(src: &str) -> Result<(), TestCaseError> {
    for (lang, file) in extract_each(src, &Language::ALL) {
        check(lang, src, &file).map_err(|e| TestCaseError::fail(format!("{lang}: {e}")))?;
    }
    Ok(())
}

/// Words and punctuation of the grammars, for token soups.
const TOKENS: &[&str] = &[
    "fn",
    "def",
    "class",
    "struct",
    "impl",
    "trait",
    "enum",
    "union",
    "mod",
    "pub",
    "use",
    "import",
    "from",
    "export",
    "function",
    "func",
    "fun",
    "let",
    "const",
    "var",
    "val",
    "return",
    "if",
    "else",
    "for",
    "while",
    "match",
    "case",
    "switch",
    "do",
    "end",
    "begin",
    "module",
    "package",
    "namespace",
    "interface",
    "object",
    "template",
    "typename",
    "where",
    "async",
    "await",
    "yield",
    "lambda",
    "macro_rules!",
    "#define",
    "#include",
    "#if",
    "#endif",
    "defmodule",
    "defp",
    "local",
    "then",
    "elif",
    "fi",
    "esac",
    "in",
    "of",
    "new",
    "this",
    "self",
    "Self",
    "super",
    "extends",
    "implements",
    "override",
    "static",
    "void",
    "int",
    "@",
    "@interface",
    "$",
    "${",
    "$(",
    "::",
    ":",
    ";",
    ",",
    ".",
    "..",
    "...",
    "->",
    "=>",
    "<-",
    "|>",
    "=",
    "==",
    "!",
    "?",
    "&",
    "&&",
    "|",
    "||",
    "*",
    "**",
    "+",
    "-",
    "/",
    "%",
    "^",
    "~",
    "<",
    ">",
    "<<",
    ">>",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<%",
    "%>",
    "<?php",
    "?>",
    "<div>",
    "</div>",
    "\"",
    "'",
    "`",
    "'''",
    "\"\"\"",
    "r#\"",
    "\"#",
    "//",
    "///",
    "//!",
    "/*",
    "*/",
    "/**",
    "#",
    "--",
    "--[[",
    "]]",
    "{-",
    "-}",
    "%%",
    "\n",
    "\n\n",
    "\r\n",
    " ",
    "  ",
    "\t",
    "\\",
    "\\\n",
    "x",
    "foo",
    "Bar",
    "_",
    "0",
    "1.5e3",
    "0x",
    "'a",
    "&'a",
    "#[derive(Debug)]",
    "#![",
    "@Override",
    "<T>",
    "<>",
    "---",
    "```",
    "~~~",
    "## ",
    "# ",
    "- ",
    "* ",
    "> ",
    "|",
    "key:",
    "[table]",
    "[[array]]",
    "= \"v\"",
    "\"k\": ",
    "null",
    "true",
];

/// Brackets that open and close.
const PAIRS: &[(&str, &str)] = &[
    ("(", ")"),
    ("[", "]"),
    ("{", "}"),
    ("<", ">"),
    ("f(", ")"),
    ("{a:", "}"),
    ("fn a() {", "}"),
    ("mod a {", "}"),
    ("class A:\n", "\n"),
    ("function a() {", "}"),
    ("if x then ", " end"),
    ("begin ", " end"),
    ("\"${", "}\""),
    ("/*", "*/"),
    ("<div>", "</div>"),
    ("#if X\n", "\n#endif\n"),
    ("```\n", "\n```\n"),
    ("- ", "\n"),
    ("# ", "\n"),
];

/// Small real files, to mutate.
const SEEDS: &[&str] = &[
    "use std::fmt;\n\n/// A thing.\npub struct Config { path: String }\n\nimpl Config {\n    pub fn load(&self) -> fmt::Result {\n        helper(self.path.len());\n        Ok(())\n    }\n}\n\nmacro_rules! m { () => { fn inner() {} } }\nm!();\n",
    "import os\nfrom a.b import c as d\n\nclass Config:\n    \"\"\"Doc.\"\"\"\n    def load(self, path):\n        return open(path).read()\n\n\ndef main():\n    Config().load(os.getcwd())\n",
    "import x, { y as z } from './util';\n\nexport class A extends B {\n  m() { return this.f(1).g(); }\n}\n\nfunction h(a) { return a.map((b) => b * 2); }\nconst k = () => h([1, 2]);\n",
    "package main\n\nimport (\n\t\"fmt\"\n\tos \"os\"\n)\n\ntype T struct{ A int }\n\nfunc (t *T) M() error { return fmt.Errorf(\"x %d\", t.A) }\n\nfunc main() { os.Exit(0) }\n",
    "#include <stdio.h>\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n\nstatic int f(int x) { return MAX(x, 2); }\n\nint main(void) {\n    printf(\"%d\\n\", f(1));\n    return 0;\n}\n",
    "# Title\n\nIntro text.\n\n## Install\n\n```sh\n# not a heading\nmake\n```\n\n### Deep\n\n#### Deeper ####\n\nText.\n\n## Use\n",
    "{\n  \"name\": \"x\",\n  \"list\": [1, 2, {\"a\": null}],\n  \"nested\": {\"b\": true}\n}\n",
    "key: value\nlist:\n  - a\n  - b: c\nblock: |\n  text\n---\nother: 1\n",
    "[package]\nname = \"x\"\n\n[dependencies]\nserde = { version = \"1\", features = [\"derive\"] }\n\n[[bin]]\nname = \"y\"\n",
    "defmodule A do\n  def f(x), do: g(x)\n  defp g(x), do: x\nend\n",
    "module Main where\n\nimport Data.List (sort)\n\nmain :: IO ()\nmain = print (sort [3, 1, 2])\n",
    "<?php\nnamespace App;\nuse Foo\\Bar;\nclass C { public function m() { return strlen($this->x); } }\n",
    "namespace n {\nclass API_X MUST(\"é\") Mutex : public B {\n public:\n  bool TryLock() TRY(true) { return f(1); }\n  void Lock() const ACQ();\n};\n}\n",
];

fn token_soup() -> impl Strategy<Value = String> {
    vec(select(TOKENS), 0..400).prop_map(|t| t.concat())
}

/// Brackets nested up to a few thousand deep: balanced, only opened, only
/// closed, or closed by the wrong kind.
fn nesting() -> impl Strategy<Value = String> {
    (
        vec(select(PAIRS), 1..4),
        select(TOKENS),
        0usize..3000,
        0u8..4,
        any::<bool>(),
    )
        .prop_map(|(pairs, leaf, depth, shape, breaks)| {
            let mut src = String::new();
            let open = |i: usize| pairs[i % pairs.len()].0;
            let close = |i: usize| pairs[i % pairs.len()].1;
            for i in 0..depth {
                if shape != 2 {
                    src.push_str(open(i));
                }
                if breaks && i % 64 == 63 {
                    src.push('\n');
                }
            }
            src.push_str(leaf);
            for i in (0..depth).rev() {
                match shape {
                    1 => {}
                    3 => src.push_str(close(i + 1)),
                    _ => src.push_str(close(i)),
                }
                if breaks && i % 64 == 0 {
                    src.push('\n');
                }
            }
            src
        })
}

/// Longest line [`long_lines`] makes: twice the hard cap, and short enough
/// that Scala's quadratic lexing of some long lines (see
/// [`a_long_line_is_bounded_in_scala`]) stays within the limit.
const LONG_LINE: usize = 8 * 1024;

/// A few lines, each one unit repeated up to [`LONG_LINE`] bytes: long lines
/// of wide characters, NUL, quotes, comment openers.
fn long_lines() -> impl Strategy<Value = String> {
    let unit = prop_oneof![select(ODD), select(TOKENS)];
    vec((unit, 0..=LONG_LINE, select(TOKENS)), 1..4).prop_map(|lines| {
        let mut src = String::new();
        for (unit, bytes, head) in lines {
            src.push_str(head);
            src.push_str(&unit.repeat(bytes / unit.len()));
            src.push('\n');
        }
        src
    })
}

/// One edit of a text: at a position (taken modulo its length, moved back to
/// a character boundary), delete some bytes, insert a token, or both.
#[derive(Clone, Debug)]
struct Edit {
    at: usize,
    delete: usize,
    insert: &'static str,
}

fn edit() -> impl Strategy<Value = Edit> {
    (
        any::<usize>(),
        0usize..16,
        prop_oneof![select(TOKENS), select(ODD)],
    )
        .prop_map(|(at, delete, insert)| Edit { at, delete, insert })
}

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut s = src.to_string();
    for e in edits {
        let mut at = if s.is_empty() { 0 } else { e.at % s.len() };
        while !s.is_char_boundary(at) {
            at -= 1;
        }
        let mut end = (at + e.delete).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        s.replace_range(at..end, e.insert);
    }
    s
}

/// Real files, repeated and edited.
fn mutated() -> impl Strategy<Value = String> {
    (select(SEEDS), 1usize..4, vec(edit(), 0..24))
        .prop_map(|(seed, times, edits)| apply(&seed.repeat(times), &edits))
}

proptest! {
    #![proptest_config(config(12))]

    #[test]
    fn any_text_extracts_within_its_file(src in any_text(3000)) {
        check_all(&src)?;
    }

    #[test]
    fn token_soups_extract_within_their_file(src in token_soup()) {
        check_all(&src)?;
    }

    #[test]
    fn edited_files_extract_within_their_file(src in mutated()) {
        check_all(&src)?;
    }
}

proptest! {
    #![proptest_config(config(6))]

    #[test]
    fn deep_nesting_extracts_in_bounded_time(src in nesting()) {
        check_all(&src)?;
    }

    #[test]
    fn long_lines_extract_in_bounded_time(src in long_lines()) {
        check_all(&src)?;
    }
}

/// Regression: a line over the hard cap that was mostly whitespace was cut
/// into pieces of whitespace only, each a chunk to index and embed.
#[test]
fn a_long_run_of_whitespace_makes_no_blank_chunk() {
    let cases = [
        (Language::Bash, format!("return{}\n", "\t".repeat(5000))),
        (Language::Text, format!("{}x\n", " ".repeat(9000))),
        (
            Language::Python,
            format!("x = 1\n{}\ny = 2\n", " ".repeat(6000)),
        ),
    ];
    for (lang, src) in cases {
        for (lang, file) in extract_each(&src, &[lang]) {
            check(lang, &src, &file).unwrap_or_else(|e| panic!("{lang}: {e}"));
        }
    }
}

/// Regression: tree-sitter-bash's scanner gave C's `isdigit` the character
/// after a `{`, reading its table out of bounds: `{` and a character of the
/// supplementary planes killed the process (SIGSEGV). Such a file is now
/// line windows.
#[test]
fn a_brace_before_a_wide_character_does_not_crash_bash() {
    for src in [
        "{\u{1099ff}",
        "{\u{f0000}}",
        "{12\u{10ffff}",
        "echo {1..\u{f0000}}\n",
        "{1..2\u{f0000}",
    ] {
        for (lang, file) in extract_each(src, &[Language::Bash]) {
            check(lang, src, &file).unwrap_or_else(|e| panic!("{src:?}: {e}"));
            assert!(file.parse_failed, "{src:?}");
        }
    }
    // What the scanner reads safely is still parsed.
    let src = "f() {\n  echo {1..9} {a,b} \"{é}\" \"x{ 日本}\"\n}\n";
    let (_, file) = extract_each(src, &[Language::Bash]).remove(0);
    assert!(!file.parse_failed && file.symbols.iter().any(|s| s.name == "f"));
}

/// Regression: tree-sitter-ruby's scanner stores a heredoc's word length in
/// one byte, and asserts on reading its state back: a word of 256 bytes or
/// more aborted the process (SIGABRT, in release builds too). Such a file is
/// now line windows.
#[test]
fn a_long_heredoc_word_does_not_abort_ruby() {
    let word = "A".repeat(300);
    for src in [
        format!("def f\n  x = <<{word}\n  hi\n{word}\nend\n"),
        format!("x = <<~\"{} {word}\"\n  hi\n{} {word}\n", "é", "é"),
        format!("y = <<-'{}'\nhi\n{}\n", "B".repeat(256), "B".repeat(256)),
    ] {
        let (_, file) = extract_each(&src, &[Language::Ruby]).remove(0);
        check(Language::Ruby, &src, &file).unwrap_or_else(|e| panic!("{e}"));
        assert!(file.parse_failed);
    }
    // A heredoc of a usual word is still parsed.
    let src = "def f\n  x = <<~SQL\n    select 1\n  SQL\nend\n";
    let (_, file) = extract_each(src, &[Language::Ruby]).remove(0);
    assert!(!file.parse_failed && file.symbols.iter().any(|s| s.name == "f"));
}

/// Regression: tree-sitter-python's error recovery over lines of `/*` (a
/// division or modulo sign, then a star) that run to the end of the file
/// takes memory quadratic in their number when it accepts, after the last
/// progress callback, where the deadline cannot stop it: 12 KB of them took
/// 10 GB and 40 s. Such a file is now line windows.
#[test]
fn stars_after_divisions_do_not_exhaust_python() {
    for src in [
        "/*\n".repeat(768),
        "x = 1\n".to_owned() + &"%*\n".repeat(768),
        "/\n*\n".repeat(768),
    ] {
        let (_, file) = extract_each(&src, &[Language::Python]).remove(0);
        check(Language::Python, &src, &file).unwrap_or_else(|e| panic!("{e}"));
        assert!(file.parse_failed);
    }
    // Globs in strings, a few, are still parsed.
    let src = "def f():\n    return glob(\"src/*.py\") + glob(\"a/*/b\")\n";
    let (_, file) = extract_each(src, &[Language::Python]).remove(0);
    assert!(!file.parse_failed && file.symbols.iter().any(|s| s.name == "f"));
}

/// Regression: tree-sitter-scala's parse stack merges its versions in time
/// exponential in the depth of some nested braces (`{a:b {a:b …`, `{a:if x
/// then …`, a few to a line), within one parser step where the deadline
/// cannot stop it: 40 deep, 20 s in a release build. A Scala file nested
/// deeper than 24 braces is now line windows.
#[test]
fn deeply_nested_braces_are_bounded_in_scala() {
    let nested = |open: &str, close: &str, depth: usize| {
        let line = |unit: &str, i: usize| format!("{unit}{}", if i % 8 == 7 { "\n" } else { "" });
        let opens: String = (0..depth).map(|i| line(open, i)).collect();
        let closes: String = (0..depth).map(|i| line(close, i)).collect();
        format!("{opens}<T>{closes}\n")
    };
    for src in [
        nested("{a:if x then ", "} end", 48),
        nested("{a:b ", "}", 48),
        nested("{a:while x do ", "}", 40),
    ] {
        let (_, file) = extract_each(&src, &[Language::Scala]).remove(0);
        assert!(file.parse_failed);
    }
    // Code nested as deep as real code is still parsed.
    let src = format!(
        "object A {{\n  def f() = {}1{}\n}}\n",
        "{ ".repeat(12),
        " }".repeat(12)
    );
    let (_, file) = extract_each(&src, &[Language::Scala]).remove(0);
    assert!(!file.parse_failed && file.symbols.iter().any(|s| s.name == "f"));
}

/// tree-sitter-scala lexes some long runs on one line in time quadratic in
/// their length, within one step of the parser, where the deadline cannot
/// stop it: in a debug build a line of CJK letters took 1.3 s at 36 KB, 6 s
/// at 72 KB and 77 s at 288 KB; a line of 12,000 backticks 2.4 s; `a+`
/// repeated, 1.7 s at 16 KB. A Scala file with a line over 4 KiB is now line
/// windows.
#[test]
fn a_long_line_is_bounded_in_scala() {
    for src in [
        format!("x\n{}\n", "日本".repeat(24_000)),
        format!("|{}\n", "`".repeat(48_000)),
        format!("x{}\n", "a+".repeat(24_000)),
    ] {
        let (_, file) = extract_each(&src, &[Language::Scala]).remove(0);
        assert!(file.parse_failed);
    }
    // A long line within the bound is still parsed.
    let src = format!(
        "object A {{\n  val s = \"{}\"\n  def f() = 1\n}}\n",
        "a".repeat(3_000)
    );
    let (_, file) = extract_each(&src, &[Language::Scala]).remove(0);
    assert!(!file.parse_failed && file.symbols.iter().any(|s| s.name == "f"));
}
