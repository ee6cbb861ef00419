//! Language detection and the grammar and queries of each language.

use std::path::Path;
use std::sync::OnceLock;

use lode_core::Language;
use tree_sitter::Query;

/// Decides the language of a file from its name and, failing that, its first line.
///
/// `head` is the start of the file (a few hundred bytes are enough). Files
/// that are neither known by name nor by shebang are [`Language::Text`].
pub fn detect(path: &Path, head: &[u8]) -> Language {
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
    let text = String::from_utf8_lossy(head);
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
    .any(|needle| text.contains(needle))
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
fn query_sources(lang: Language) -> Option<[&'static str; 3]> {
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

/// The compiled queries of one language.
pub struct LangQueries {
    pub grammar: tree_sitter::Language,
    pub symbols: Query,
    pub calls: Query,
    pub imports: Query,
}

/// Compiles a language's queries, reporting the file and the error.
pub fn compile(lang: Language) -> Result<LangQueries, String> {
    let grammar = grammar(lang).ok_or_else(|| format!("{lang}: no grammar"))?;
    let [s, c, i] = query_sources(lang).ok_or_else(|| format!("{lang}: no queries"))?;
    let build = |name: &str, src: &str| {
        Query::new(&grammar, src).map_err(|e| format!("queries/{lang}/{name}.scm: {e}"))
    };
    Ok(LangQueries {
        symbols: build("symbols", s)?,
        calls: build("calls", c)?,
        imports: build("imports", i)?,
        grammar: grammar.clone(),
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
}
