//! C and C++ attribute and export macros: `class ABSL_LOCKABLE Mutex {`,
//! `class LLVM_ABI Value : public User {`, `bool TryLock()
//! ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true) {`. The grammar cannot know that
//! they expand to attributes or to nothing, and reads such a class as an
//! error (the class and its members are lost) and such a method as a
//! function named after the macro; a macro alone on its line
//! (`FMT_BEGIN_NAMESPACE`) is read with the declaration after it, which may
//! hide a namespace; one alone in a class body (`Q_OBJECT`,
//! `Q_PROPERTY(…)`) became a method or hid the next member. [`blanked`]
//! writes them as spaces before the file is parsed: every byte stays where
//! it was, so spans, lines and the chunks' text (read from the file itself)
//! are the file's.

use std::borrow::Cow;
use std::sync::LazyLock;

use lode_core::Language;
use regex::Regex;

/// One macro: a capitalised name of two or more characters, perhaps with
/// arguments (`ACME_API`, `ABSL_EXCLUSIVE_TRYLOCK_FUNCTION(true)`).
macro_rules! attribute_macro {
    () => {
        r"[A-Z][A-Z0-9_]+(?:\([^()\n]*\))?"
    };
}

/// A class head with macros between its keyword and its name. A name must
/// follow and then a base list, a body or the line's end: `class FOO bar;`
/// declares a variable.
static CLASS_HEAD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)(?-u:\b)(?:class|struct|union)[ \t]+(?P<macros>(?:",
        attribute_macro!(),
        r"[ \t]+)+)[A-Za-z_][A-Za-z0-9_]*(?:[ \t]*<[^;{}\n]*>)?[ \t]*(?:final(?-u:\b)[ \t]*)?(?:[:{]|$)"
    ))
    .unwrap()
});

/// A declaration's parameter list followed by macros, then its body or its
/// end: `void Lock() ABSL_ACQUIRE();`, `int size() const PURE {`. Only on a
/// line that starts the declaration, so that a statement (`if (x) TRACE(x);`)
/// keeps its call.
static TRAILING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?m)^[ \t]*(?P<first>[A-Za-z_~][A-Za-z0-9_:]*)[^;{}()\n]*\([^;{}\n]*\)",
        r"(?:[ \t]*(?:(?:const|noexcept|override|final)(?-u:\b)|&&?))*",
        r"(?P<macros>(?:[ \t]+",
        attribute_macro!(),
        r")+)[ \t]*(?:const|override|final|noexcept)?[ \t]*(?:[;{]|=[ \t]*(?:0|default|delete)[ \t]*;)"
    ))
    .unwrap()
});

/// A macro alone on its line at the file's level, which opens or closes a
/// namespace or a block of declarations (`ABSL_NAMESPACE_BEGIN`,
/// `FMT_BEGIN_NAMESPACE`, `G_BEGIN_DECLS`): read with the declaration after
/// it, it hid a namespace or a class. Written with an underscore and no
/// arguments, from the line's first column, and not the continuation of a
/// `#define`.
static LONE_MACRO: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?m)^_*[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[ \t]*$").unwrap());

/// A macro alone on its line inside a body, perhaps with arguments and no
/// `;` after them: `Q_OBJECT`, `Q_PROPERTY(int size READ size)`,
/// `Q_DISABLE_COPY(Panel)`, `Py_BEGIN_ALLOW_THREADS`. They expand to
/// declarations or statements with their own `;`; read as they are, the
/// class's next member is lost or becomes a method named after the macro.
/// Blanked only where a declaration or statement may begin (see
/// [`starts_declaration`]).
static INDENTED_MACRO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?m)^[ \t]+_*[A-Z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+(?:\([^()\n]*\))?[ \t]*$").unwrap()
});

/// Words a statement, not a declaration, begins with.
const STATEMENT_WORDS: &[&str] = &[
    "if",
    "else",
    "while",
    "for",
    "switch",
    "return",
    "do",
    "case",
    "throw",
    "co_return",
    "goto",
];

/// `source` with its attribute macros written as spaces, for C and C++;
/// `source` itself for any other language or where there are none.
pub(crate) fn blanked(lang: Language, source: &str) -> Cow<'_, str> {
    if !matches!(lang, Language::C | Language::Cpp) {
        return Cow::Borrowed(source);
    }
    let mut spans = Vec::new();
    for c in CLASS_HEAD.captures_iter(source) {
        spans.push(c.name("macros").expect("always captured").range());
    }
    for c in TRAILING.captures_iter(source) {
        if !STATEMENT_WORDS.contains(&&c["first"]) {
            spans.push(c.name("macros").expect("always captured").range());
        }
    }
    let mut last_blanked = None;
    for m in INDENTED_MACRO.find_iter(source) {
        let before = source[..m.start()].trim_end();
        let after = source[m.end()..].trim_start();
        let follows_macro =
            last_blanked.is_some_and(|end| source[end..m.start()].trim().is_empty());
        if (follows_macro || before.ends_with(['{', ';', ':']) || before.is_empty())
            && starts_declaration(after)
        {
            spans.push(m.range());
            last_blanked = Some(m.end());
        }
    }
    for m in LONE_MACRO.find_iter(source) {
        let before = source[..m.start()].trim_end_matches(['\n', '\r']);
        if !before.ends_with('\\') {
            spans.push(m.range());
        }
    }
    if spans.is_empty() {
        return Cow::Borrowed(source);
    }
    let mut bytes = source.as_bytes().to_vec();
    for span in spans {
        // A span holds whole characters (a macro's arguments may not be
        // ASCII): spaces for each of their bytes keep the text UTF-8.
        bytes[span].fill(b' ');
    }
    Cow::Owned(String::from_utf8(bytes).expect("whole characters replaced by spaces"))
}

/// Whether `rest` (the text after a line, its blank start trimmed) begins
/// a declaration, a statement, a comment or a directive, or is empty: not a
/// brace (`TEST_CASE(Name)` before its body, the one enumerator of an
/// enum) nor an expression's continuation (`.f()`, `+ 1`).
fn starts_declaration(rest: &str) -> bool {
    rest.is_empty()
        || rest.starts_with("//")
        || rest.starts_with("/*")
        || rest.starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '#' | '~'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpp(source: &str) -> String {
        blanked(Language::Cpp, source).into_owned()
    }

    #[test]
    fn class_heads_lose_their_macros_and_keep_their_length() {
        for (source, want) in [
            ("class ABSL_LOCKABLE Mutex {", "class               Mutex {"),
            (
                "class API Value : public User {",
                "class     Value : public User {",
            ),
            (
                "struct MUST_USE(x) S final {",
                "struct             S final {",
            ),
            ("class API Box\n{", "class     Box\n{"),
        ] {
            assert_eq!(cpp(source), want);
        }
    }

    #[test]
    fn declarations_lose_trailing_macros_and_statements_keep_theirs() {
        assert_eq!(
            cpp("  bool TryLock() TRY_ACQUIRE(true) { return 1; }"),
            "  bool TryLock()                   { return 1; }"
        );
        assert_eq!(cpp("  int size() const PURE;"), "  int size() const     ;");
        // Arguments of any text: each byte is a space, the length kept.
        let source = "  void f() NOTE(\"é\") {}";
        assert_eq!(cpp(source), format!("  void f(){} {{}}", " ".repeat(11)));
        for kept in [
            "  if (m) TRACE(m);",
            "class FOO bar;",
            "class Mutex {",
            "  Lock();",
            "  x = f(a) + B;",
        ] {
            assert_eq!(cpp(kept), kept);
        }
        // A macro alone on its line, at the file's level and outside a `#define`.
        assert_eq!(
            cpp("FMT_BEGIN_NAMESPACE\nnamespace detail {}\n"),
            "                   \nnamespace detail {}\n"
        );
        for kept in [
            "  MAX_VALUE\n};",
            "#define OPEN \\\nFMT_BEGIN_NAMESPACE\n",
            "TEST_F(Suite, Name)\n{\n}\n",
            "BOOL\nCreate(void)\n",
        ] {
            assert_eq!(cpp(kept), kept);
        }
        let python = "class API Value:\n    pass\n";
        assert_eq!(blanked(Language::Python, python), python);
    }

    #[test]
    fn macros_alone_in_a_body_are_blanked_where_a_member_may_begin() {
        assert_eq!(
            cpp("class P {\n  Q_OBJECT\n  Q_PROPERTY(int n READ n)\npublic:\n  int n();\n};"),
            format!(
                "class P {{\n{}\n{}\npublic:\n  int n();\n}};",
                " ".repeat(10),
                " ".repeat(26)
            )
        );
        assert_eq!(
            cpp("void f() {\n  Py_BEGIN_ALLOW_THREADS\n  g();\n}"),
            format!("void f() {{\n{}\n  g();\n}}", " ".repeat(24))
        );
        for kept in [
            // The last enumerator, the only one, a call continued, a body's head, the
            // last element of an initialiser.
            "enum E {\n  A,\n  LAST_ONE\n};",
            "enum E {\n  ONLY_ONE\n};",
            "void f() {\n  MAKE_IT(1)\n    .run();\n}",
            "void f() {\n  TEST_CASE(Name)\n  {\n  }\n}",
            "int a[] = {\n  1,\n  COUNT_OF(b)\n};",
        ] {
            assert_eq!(cpp(kept), kept);
        }
    }
}
