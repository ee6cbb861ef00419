use serde::{Deserialize, Serialize};

/// A language lode knows. Code languages have a tree-sitter grammar; the
/// others are indexed as text (Markdown by heading, data files and plain
/// text by line windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// Shell scripts (`.sh`, `.bash`, `.zsh`, `.bats`, `.bashrc`…): one grammar for all shells.
    Bash,
    /// C (`.c`); a `.h` header is C unless its head uses C++ syntax.
    C,
    /// C++ (`.cc`, `.cpp`, `.hpp`…), CUDA `.cu` included; named `cpp`.
    Cpp,
    /// C# (`.cs`); named `csharp`.
    CSharp,
    /// Elixir (`.ex`, `.exs`).
    Elixir,
    /// Go (`.go`).
    Go,
    /// Haskell (`.hs`); Haddock comments count as docs.
    Haskell,
    /// Java (`.java`).
    Java,
    /// JavaScript (`.js`, `.mjs`, `.cjs`) and JSX, which shares its grammar.
    JavaScript,
    /// Kotlin (`.kt`, scripts `.kts`).
    Kotlin,
    /// Lua (`.lua`).
    Lua,
    /// PHP (`.php`, `.phtml`).
    Php,
    /// Python (`.py`, stubs `.pyi`).
    Python,
    /// Ruby (`.rb`, `.rake`, `.gemspec`, `Rakefile`, `Gemfile`…).
    Ruby,
    /// Rust (`.rs`); item-holding macro bodies are parsed as Rust too.
    Rust,
    /// Scala (`.scala`, `.sc`).
    Scala,
    /// Swift (`.swift`).
    Swift,
    /// TypeScript with JSX (`.tsx`): its own grammar, but in the TypeScript
    /// [`family`](Self::family).
    Tsx,
    /// TypeScript without JSX (`.ts`, `.mts`, `.cts`).
    TypeScript,
    /// Zig (`.zig`).
    Zig,
    /// Markdown (`.md`, `.mdx`): no grammar, cut into sections by ATX heading.
    Markdown,
    /// JSON (also JSONC, JSON5): data, indexed in line windows.
    Json,
    /// YAML: data, indexed in line windows.
    Yaml,
    /// TOML: data, indexed in line windows.
    Toml,
    /// Plain text, and every file known neither by name nor by shebang: line windows.
    Text,
}

impl Language {
    /// Every language, code ones first; the order is that of the enum.
    pub const ALL: [Language; 25] = [
        Language::Bash,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Elixir,
        Language::Go,
        Language::Haskell,
        Language::Java,
        Language::JavaScript,
        Language::Kotlin,
        Language::Lua,
        Language::Php,
        Language::Python,
        Language::Ruby,
        Language::Rust,
        Language::Scala,
        Language::Swift,
        Language::Tsx,
        Language::TypeScript,
        Language::Zig,
        Language::Markdown,
        Language::Json,
        Language::Yaml,
        Language::Toml,
        Language::Text,
    ];

    /// The stable lower-case name used in output, config and `--lang`.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Bash => "bash",
            Language::C => "c",
            Language::Cpp => "cpp",
            Language::CSharp => "csharp",
            Language::Elixir => "elixir",
            Language::Go => "go",
            Language::Haskell => "haskell",
            Language::Java => "java",
            Language::JavaScript => "javascript",
            Language::Kotlin => "kotlin",
            Language::Lua => "lua",
            Language::Php => "php",
            Language::Python => "python",
            Language::Ruby => "ruby",
            Language::Rust => "rust",
            Language::Scala => "scala",
            Language::Swift => "swift",
            Language::Tsx => "tsx",
            Language::TypeScript => "typescript",
            Language::Zig => "zig",
            Language::Markdown => "markdown",
            Language::Json => "json",
            Language::Yaml => "yaml",
            Language::Toml => "toml",
            Language::Text => "text",
        }
    }

    /// Parses a language name, accepting common aliases (`js`, `ts`, `c++`, `c#`, `sh`…).
    pub fn from_name(name: &str) -> Option<Language> {
        // The stable names first: every row an index reads back holds one.
        if let Some(&lang) = Language::ALL.iter().find(|l| l.as_str() == name) {
            return Some(lang);
        }
        let lower = name.trim().to_ascii_lowercase();
        let lang = match lower.as_str() {
            "bash" | "sh" | "shell" | "zsh" => Language::Bash,
            "c" => Language::C,
            "cpp" | "c++" | "cxx" => Language::Cpp,
            "csharp" | "c#" | "cs" => Language::CSharp,
            "elixir" | "ex" => Language::Elixir,
            "go" | "golang" => Language::Go,
            "haskell" | "hs" => Language::Haskell,
            "java" => Language::Java,
            "javascript" | "js" | "jsx" => Language::JavaScript,
            "kotlin" | "kt" => Language::Kotlin,
            "lua" => Language::Lua,
            "php" => Language::Php,
            "python" | "py" => Language::Python,
            "ruby" | "rb" => Language::Ruby,
            "rust" | "rs" => Language::Rust,
            "scala" => Language::Scala,
            "swift" => Language::Swift,
            "tsx" => Language::Tsx,
            "typescript" | "ts" => Language::TypeScript,
            "zig" => Language::Zig,
            "markdown" | "md" => Language::Markdown,
            "json" => Language::Json,
            "yaml" | "yml" => Language::Yaml,
            "toml" => Language::Toml,
            "text" | "txt" => Language::Text,
            _ => return None,
        };
        Some(lang)
    }

    /// True for languages with a tree-sitter grammar (symbols, calls, imports).
    pub fn is_code(self) -> bool {
        !matches!(
            self,
            Language::Markdown | Language::Json | Language::Yaml | Language::Toml | Language::Text
        )
    }

    /// Prose: Markdown and plain text.
    pub fn is_prose(self) -> bool {
        matches!(self, Language::Markdown | Language::Text)
    }

    /// Data: JSON, YAML and TOML.
    pub fn is_data(self) -> bool {
        matches!(self, Language::Json | Language::Yaml | Language::Toml)
    }

    /// The family a language belongs to for filtering: `--lang typescript` also
    /// selects TSX files, `--lang javascript` JSX (JSX shares the JavaScript grammar).
    pub fn family(self) -> Language {
        match self {
            Language::Tsx => Language::TypeScript,
            other => other,
        }
    }
}

impl std::fmt::Display for Language {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for lang in Language::ALL {
            assert_eq!(Language::from_name(lang.as_str()), Some(lang));
        }
        assert_eq!(Language::from_name("C++"), Some(Language::Cpp));
        assert_eq!(Language::from_name("cobol"), None);
    }

    #[test]
    fn every_language_is_code_prose_or_data() {
        for lang in Language::ALL {
            let sorts = [lang.is_code(), lang.is_prose(), lang.is_data()];
            assert_eq!(sorts.iter().filter(|s| **s).count(), 1, "{lang}");
        }
    }
}
