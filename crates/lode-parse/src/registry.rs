//! Language detection and the grammar and queries of each language.

use std::path::Path;
use std::sync::OnceLock;

use lode_core::{Language, SymbolKind};
use tree_sitter::{Query, QueryCapture, QueryPredicateArg};

use crate::parents::Parents;

/// How much of a file's start [`detect`] reads: a C++ header is told from a
/// C one by its code, which a license comment may push a few KiB down.
const DETECT_BYTES: usize = 8 * 1024;

/// Decides the language of a file from its name and, failing that, its first line.
///
/// `head` is the start of the file, or all of it (the first [`DETECT_BYTES`]
/// are read). Files that are neither known by name nor by shebang are
/// [`Language::Text`].
pub fn detect(path: &Path, head: &[u8]) -> Language {
    let head = &head[..head.len().min(DETECT_BYTES)];
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    if let Some(lang) = by_file_name(name) {
        return lang;
    }
    if let Some(ext) = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()) {
        if ext == "h" {
            return if looks_like_cpp(head) {
                Language::Cpp
            } else {
                Language::C
            };
        }
        if let Some(lang) = by_extension(&ext) {
            return lang;
        }
    }
    by_shebang(head).unwrap_or(Language::Text)
}

fn by_file_name(name: &str) -> Option<Language> {
    Some(match name {
        "Rakefile" | "Gemfile" | "Guardfile" | "Podfile" | "Vagrantfile" | "Brewfile" => {
            Language::Ruby
        }
        ".bashrc" | ".bash_profile" | ".zshrc" | ".profile" | "PKGBUILD" => Language::Bash,
        "CMakeLists.txt" => Language::Text,
        _ => return None,
    })
}

fn by_extension(ext: &str) -> Option<Language> {
    Some(match ext {
        "py" | "pyi" | "pyw" => Language::Python,
        "js" | "mjs" | "cjs" | "jsx" => Language::JavaScript,
        "ts" | "mts" | "cts" => Language::TypeScript,
        "tsx" => Language::Tsx,
        "go" => Language::Go,
        "rs" => Language::Rust,
        "java" => Language::Java,
        "kt" | "kts" => Language::Kotlin,
        "scala" | "sc" => Language::Scala,
        "swift" => Language::Swift,
        "c" => Language::C,
        "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "h++" | "ipp" | "tpp" | "inl"
        | "cu" => Language::Cpp,
        "cs" => Language::CSharp,
        "php" | "phtml" => Language::Php,
        "rb" | "rake" | "gemspec" | "ru" => Language::Ruby,
        "ex" | "exs" => Language::Elixir,
        "hs" => Language::Haskell,
        "lua" => Language::Lua,
        "zig" => Language::Zig,
        "sh" | "bash" | "zsh" | "ksh" | "bats" => Language::Bash,
        "md" | "markdown" | "mdx" => Language::Markdown,
        "json" | "jsonc" | "json5" => Language::Json,
        "yaml" | "yml" => Language::Yaml,
        "toml" => Language::Toml,
        _ => return None,
    })
}

fn by_shebang(head: &[u8]) -> Option<Language> {
    let line = head.strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let mut prog = words.next()?.rsplit('/').next()?;
    if prog == "env" {
        prog = words.find(|w| !w.starts_with('-'))?;
    }
    let prog = prog.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    Some(match prog {
        "python" | "pypy" => Language::Python,
        "node" | "nodejs" | "bun" => Language::JavaScript,
        "deno" | "ts-node" | "tsx" => Language::TypeScript,
        "bash" | "sh" | "zsh" | "ksh" | "dash" | "bats" => Language::Bash,
        "ruby" => Language::Ruby,
        "php" => Language::Php,
        "lua" | "luajit" => Language::Lua,
        "elixir" => Language::Elixir,
        "runghc" | "runhaskell" | "stack" => Language::Haskell,
        "swift" => Language::Swift,
        "scala" => Language::Scala,
        "kotlin" => Language::Kotlin,
        _ => return None,
    })
}

/// A `.h` file is C++ when its head uses syntax C does not have.
fn looks_like_cpp(head: &[u8]) -> bool {
    let code = without_comments(&String::from_utf8_lossy(head));
    [
        "namespace ",
        "class ",
        "template<",
        "template <",
        "public:",
        "private:",
        "std::",
        "#include <string>",
        "#include <vector>",
    ]
    .iter()
    .any(|needle| code.contains(needle))
}

/// `text` less its `//` and `/* */` comments, each left as a space: a
/// license or a comment's prose says nothing of the language.
fn without_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('/') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        rest = if let Some(line) = after.strip_prefix('/') {
            out.push(' ');
            line.find('\n').map_or("", |end| &line[end..])
        } else if let Some(block) = after.strip_prefix('*') {
            out.push(' ');
            block.find("*/").map_or("", |end| &block[end + 2..])
        } else {
            out.push('/');
            after
        };
    }
    out.push_str(rest);
    out
}

/// The tree-sitter grammar of a code language.
pub fn grammar(lang: Language) -> Option<tree_sitter::Language> {
    Some(match lang {
        Language::Bash => tree_sitter_bash::LANGUAGE.into(),
        Language::C => tree_sitter_c::LANGUAGE.into(),
        Language::Cpp => tree_sitter_cpp::LANGUAGE.into(),
        Language::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Language::Elixir => tree_sitter_elixir::LANGUAGE.into(),
        Language::Go => tree_sitter_go::LANGUAGE.into(),
        Language::Haskell => tree_sitter_haskell::LANGUAGE.into(),
        Language::Java => tree_sitter_java::LANGUAGE.into(),
        Language::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Language::Kotlin => tree_sitter_kotlin_ng::LANGUAGE.into(),
        Language::Lua => tree_sitter_lua::LANGUAGE.into(),
        Language::Php => tree_sitter_php::LANGUAGE_PHP.into(),
        Language::Python => tree_sitter_python::LANGUAGE.into(),
        Language::Ruby => tree_sitter_ruby::LANGUAGE.into(),
        Language::Rust => tree_sitter_rust::LANGUAGE.into(),
        Language::Scala => tree_sitter_scala::LANGUAGE.into(),
        Language::Swift => tree_sitter_swift::LANGUAGE.into(),
        Language::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
        Language::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        Language::Zig => tree_sitter_zig::LANGUAGE.into(),
        Language::Markdown | Language::Json | Language::Yaml | Language::Toml | Language::Text => {
            return None;
        }
    })
}

/// The query sources of a language: symbols, calls, imports.
pub(crate) fn query_sources(lang: Language) -> Option<[&'static str; 3]> {
    macro_rules! q {
        ($dir:literal) => {
            [
                include_str!(concat!("../queries/", $dir, "/symbols.scm")),
                include_str!(concat!("../queries/", $dir, "/calls.scm")),
                include_str!(concat!("../queries/", $dir, "/imports.scm")),
            ]
        };
    }
    Some(match lang {
        Language::Bash => q!("bash"),
        Language::C => q!("c"),
        Language::Cpp => q!("cpp"),
        Language::CSharp => q!("csharp"),
        Language::Elixir => q!("elixir"),
        Language::Go => q!("go"),
        Language::Haskell => q!("haskell"),
        Language::Java => q!("java"),
        Language::JavaScript => q!("javascript"),
        Language::Kotlin => q!("kotlin"),
        Language::Lua => q!("lua"),
        Language::Php => q!("php"),
        Language::Python => q!("python"),
        Language::Ruby => q!("ruby"),
        Language::Rust => q!("rust"),
        Language::Scala => q!("scala"),
        Language::Swift => q!("swift"),
        Language::Tsx | Language::TypeScript => q!("typescript"),
        Language::Zig => q!("zig"),
        _ => return None,
    })
}

/// What a capture is for, by its name (see `queries/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// `@definition.<kind>`; `None` for a kind lode does not know.
    Definition(Option<SymbolKind>),
    /// `@name`: a symbol's name, or a name an import brings in.
    Name,
    Body,
    Doc,
    Container,
    Call,
    Callee,
    Receiver,
    Ignore,
    Import,
    Source,
    /// `@alias`: the name an import is bound to in scope (`as np`, `* as util`).
    Alias,
    /// Anything else, e.g. `@_q` for a predicate.
    Other,
}

impl Role {
    fn of(name: &str) -> Role {
        if let Some(kind) = name.strip_prefix("definition.") {
            return Role::Definition(SymbolKind::from_name(kind));
        }
        match name {
            "name" => Role::Name,
            "body" => Role::Body,
            "doc" => Role::Doc,
            "container" => Role::Container,
            "call" => Role::Call,
            "callee" => Role::Callee,
            "receiver" => Role::Receiver,
            "ignore" => Role::Ignore,
            "import" => Role::Import,
            "source" => Role::Source,
            "alias" => Role::Alias,
            _ => Role::Other,
        }
    }
}

/// Which file of a language's queries a pattern comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatternSet {
    Symbols,
    Calls,
    Imports,
}

/// The compiled queries of one language.
///
/// `symbols.scm`, `calls.scm` and `imports.scm` are compiled as one query, so
/// that a tree is walked once rather than three times; a match's pattern index
/// tells which file it comes from.
pub struct LangQueries {
    pub grammar: tree_sitter::Language,
    pub query: Query,
    /// Patterns `0..symbols_end` are symbols, `symbols_end..calls_end` calls,
    /// the rest imports.
    symbols_end: usize,
    calls_end: usize,
    /// The role of each capture, by capture index.
    roles: Vec<Role>,
    /// Per pattern, its `#has-parent?` and `#kind?` predicates.
    checks: Vec<Vec<NodeCheck>>,
    /// Per pattern, whether it captures no `@name`: a symbols pattern that does
    /// not takes the definition's `name` field, and `body` unless it captures
    /// `@body` (see `queries/README.md`).
    names_by_fields: Vec<bool>,
}

impl LangQueries {
    pub fn set(&self, pattern: usize) -> PatternSet {
        if pattern < self.symbols_end {
            PatternSet::Symbols
        } else if pattern < self.calls_end {
            PatternSet::Calls
        } else {
            PatternSet::Imports
        }
    }

    pub fn role(&self, capture: u32) -> Role {
        self.roles[capture as usize]
    }

    /// Whether a pattern captures no `@name`, so that a definition's name and
    /// body are its `name` and `body` fields.
    pub fn names_by_fields(&self, pattern: usize) -> bool {
        self.names_by_fields[pattern]
    }

    /// Whether a match passes its pattern's `#has-parent?` and `#kind?` predicates.
    pub(crate) fn checks_ok<'t>(
        &self,
        pattern: usize,
        captures: &[QueryCapture<'t>],
        parents: &mut Parents<'t>,
    ) -> bool {
        self.checks[pattern].iter().all(|check| {
            captures
                .iter()
                .filter(|c| c.index == check.capture)
                .all(|c| match check.of {
                    Of::Parent => parents
                        .of(c.node)
                        .is_some_and(|p| check.kinds.contains(&p.kind_id())),
                    Of::Node => check.kinds.contains(&c.node.kind_id()),
                })
        })
    }
}

/// `(#has-parent? @capture kind...)` or `(#kind? @capture kind...)`: the
/// kind ids that the parent of the capture's node, or the node itself, may have.
struct NodeCheck {
    capture: u32,
    of: Of,
    kinds: Vec<u16>,
}

#[derive(Clone, Copy)]
enum Of {
    Parent,
    Node,
}

/// Reads the predicates tree-sitter leaves to the caller:
/// - `#has-parent?`, which lets a pattern start at the definition rather than at
///   a parent that would keep it in progress over the parent's whole subtree;
/// - `#kind?`, which lets a pattern match a child as `_` (cheap to compile:
///   tree-sitter analyses every typed child step against the parse table) and
///   still require its kind.
fn node_checks(
    query: &Query,
    grammar: &tree_sitter::Language,
) -> Result<Vec<Vec<NodeCheck>>, String> {
    (0..query.pattern_count())
        .map(|p| {
            query
                .general_predicates(p)
                .iter()
                .map(|pred| {
                    let bad = || format!("pattern {p}: bad predicate #{}", pred.operator);
                    let of = match &*pred.operator {
                        "has-parent?" => Of::Parent,
                        "kind?" => Of::Node,
                        _ => return Err(bad()),
                    };
                    let Some(QueryPredicateArg::Capture(index)) = pred.args.first() else {
                        return Err(bad());
                    };
                    let kinds = pred.args[1..]
                        .iter()
                        .map(|a| match a {
                            QueryPredicateArg::String(kind) => {
                                match grammar.id_for_node_kind(kind, true) {
                                    0 => Err(format!("pattern {p}: unknown node kind {kind}")),
                                    id => Ok(id),
                                }
                            }
                            QueryPredicateArg::Capture(_) => Err(bad()),
                        })
                        .collect::<Result<Vec<u16>, String>>()?;
                    if kinds.is_empty() {
                        return Err(bad());
                    }
                    Ok(NodeCheck {
                        capture: *index,
                        of,
                        kinds,
                    })
                })
                .collect()
        })
        .collect()
}

/// Compiles a language's queries, reporting the file and the error.
pub fn compile(lang: Language) -> Result<LangQueries, String> {
    let grammar = grammar(lang).ok_or_else(|| format!("{lang}: no grammar"))?;
    let sources = query_sources(lang).ok_or_else(|| format!("{lang}: no queries"))?;
    let [s, c, i] = sources;
    let combined = format!("{s}\n{c}\n{i}");
    let query = match Query::new(&grammar, &combined) {
        Ok(q) => q,
        Err(e) => {
            // Name the file at fault.
            for (name, src) in ["symbols", "calls", "imports"].iter().zip(sources) {
                Query::new(&grammar, src).map_err(|e| format!("queries/{lang}/{name}.scm: {e}"))?;
            }
            return Err(format!("queries/{lang}: {e}"));
        }
    };
    // Patterns are numbered in source order; where each starts tells its file.
    let patterns_before = |offset: usize| {
        (0..query.pattern_count())
            .take_while(|&p| query.start_byte_for_pattern(p) < offset)
            .count()
    };
    let symbols_end = patterns_before(s.len() + 1);
    let calls_end = patterns_before(s.len() + 1 + c.len() + 1);
    let roles = query.capture_names().iter().map(|n| Role::of(n)).collect();
    let checks = node_checks(&query, &grammar).map_err(|e| format!("queries/{lang}: {e}"))?;
    let name = query.capture_index_for_name("name");
    let names_by_fields = (0..query.pattern_count())
        .map(|p| {
            name.is_none_or(|n| {
                query.capture_quantifiers(p)[n as usize] == tree_sitter::CaptureQuantifier::Zero
            })
        })
        .collect();
    Ok(LangQueries {
        grammar: grammar.clone(),
        query,
        symbols_end,
        calls_end,
        roles,
        checks,
        names_by_fields,
    })
}

/// The compiled queries of a language, built once per process.
pub fn queries(lang: Language) -> Option<&'static LangQueries> {
    static CELLS: [OnceLock<Option<LangQueries>>; Language::ALL.len()] =
        [const { OnceLock::new() }; Language::ALL.len()];
    let idx = Language::ALL.iter().position(|l| *l == lang)?;
    CELLS[idx].get_or_init(|| compile(lang).ok()).as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_language_has_compiling_queries() {
        for lang in Language::ALL.into_iter().filter(|l| l.is_code()) {
            if let Err(e) = compile(lang) {
                panic!("{e}");
            }
        }
    }

    #[test]
    fn has_parent_and_kind_are_read_and_other_predicates_refused() {
        let g = grammar(Language::Go).unwrap();
        let read = |src: &str| node_checks(&Query::new(&g, src).unwrap(), &g);
        let checks = read("((identifier) @x (#has-parent? @x source_file block))").unwrap();
        assert_eq!(checks[0].len(), 1);
        assert_eq!(checks[0][0].kinds.len(), 2);
        let checks = read("((_) @x (#kind? @x identifier))").unwrap();
        assert!(matches!(checks[0][0].of, Of::Node));
        assert!(read("((identifier) @x (#kind? @x))").is_err());
        assert!(read("((identifier) @x (#has-parent? @x no_such_kind))").is_err());
        assert!(read("((identifier) @x (#has-parnet? @x block))").is_err());
    }

    #[test]
    fn detects_by_extension_name_and_shebang() {
        let d = |p: &str, head: &str| detect(Path::new(p), head.as_bytes());
        assert_eq!(d("src/a.py", ""), Language::Python);
        assert_eq!(d("x/App.TSX", ""), Language::Tsx);
        assert_eq!(d("lib/types.d.ts", ""), Language::TypeScript);
        assert_eq!(d("Rakefile", ""), Language::Ruby);
        assert_eq!(
            d("bin/tool", "#!/usr/bin/env python3\nprint(1)\n"),
            Language::Python
        );
        assert_eq!(d("bin/run", "#!/bin/bash -e\n"), Language::Bash);
        assert_eq!(d("inc/a.h", "int f(void);\n"), Language::C);
        assert_eq!(d("inc/a.h", "namespace x { class Y; }\n"), Language::Cpp);
        assert_eq!(d("notes.txt", "hello"), Language::Text);
        assert_eq!(d("README", "#!not a shebang we know"), Language::Text);
    }

    #[test]
    fn a_cpp_header_is_known_past_its_license() {
        let license = "// Copyright 2017 The Authors.\n//\n// Licensed under the Apache License.\n"
            .repeat(12);
        let header =
            format!("{license}#include <cstddef>\n\nnamespace absl {{\nusing std::string_view;\n");
        assert!(
            header.find("namespace").unwrap() > 512,
            "past the first 512 bytes"
        );
        let d = |head: &str| detect(Path::new("absl/strings/string_view.h"), head.as_bytes());
        assert_eq!(d(&header), Language::Cpp);
        // A C header's comments may say "class" or "namespace"; its code does not.
        let c = "/* A class of allocators.\n * Each namespace of keys ... */\n\
                 // the std:: names are not used here\nint alloc(size_t n);\n";
        assert_eq!(d(c), Language::C);
        // A comment never closed hides the rest of the head.
        assert_eq!(d("int f(void);\n/* unclosed\nclass X {};\n"), Language::C);
        // What `detect` is given stays its callers' choice: a head it is
        // given whole is read no further than DETECT_BYTES.
        let far = format!(
            "{}\nclass Late {{}};\n",
            "int x;\n".repeat(DETECT_BYTES / 7)
        );
        assert_eq!(d(&far), Language::C);
    }
}
