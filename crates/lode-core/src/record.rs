use serde::{Deserialize, Serialize};

use crate::{Language, Span};

/// What a symbol is. The names are the stable strings of the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    /// A function not inside a type-like container (a module does not count);
    /// one inside is a [`Method`](Self::Method).
    Function,
    /// A function inside a class, struct, enum, interface, trait or impl, or
    /// defined outside its type with a receiver or qualifier (Go, C++ `Config::`).
    Method,
    /// A `class` declaration (Python, Java, C++, C#, Ruby, Kotlin, Swift, JS/TS…).
    Class,
    /// A struct or record type; also a Haskell `data` with one constructor or a `newtype`.
    Struct,
    /// An enumeration; also a Haskell `data` with several constructors.
    Enum,
    /// An interface or protocol: Go and Java interfaces, Swift protocols,
    /// Haskell type classes, Elixir protocols.
    Interface,
    /// A trait (Rust, PHP, Scala).
    Trait,
    /// Members added to a type defined elsewhere: a Rust `impl` (named by its
    /// self type), a Swift `extension`, a Haskell `instance`, an Elixir `defimpl`.
    Impl,
    /// A module, namespace or singleton object: Rust `mod`, C++ and PHP
    /// namespaces, Ruby and Elixir modules, Kotlin and Scala `object`s. Functions
    /// inside one stay functions.
    Module,
    /// A named constant: `const`, a `#define` with a value, or a top-level
    /// upper-case assignment where the language has no `const` (Python, Bash, Lua).
    Constant,
    /// A top-level mutable binding: a Rust `static`, a Go `var`, an exported JS `let`.
    Variable,
    /// A field of a type. No query emits it yet; call resolution treats it like
    /// a variable.
    Field,
    /// A type alias or other named type: Rust `type`, C `typedef`, Go `type`
    /// that is not a struct or interface, C++ concepts.
    Type,
    /// A macro: Rust `macro_rules!`, a function-like C `#define`, Elixir `defmacro`.
    Macro,
    /// A Markdown section (a heading and what follows it).
    Section,
    /// Never extracted: the lines around a line that no symbol encloses,
    /// which `show FILE:LINE` shows in a symbol's place.
    Lines,
}

impl SymbolKind {
    /// The stable lower-case name, as in the JSON output and the index.
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Interface => "interface",
            SymbolKind::Trait => "trait",
            SymbolKind::Impl => "impl",
            SymbolKind::Module => "module",
            SymbolKind::Constant => "constant",
            SymbolKind::Variable => "variable",
            SymbolKind::Field => "field",
            SymbolKind::Type => "type",
            SymbolKind::Macro => "macro",
            SymbolKind::Section => "section",
            SymbolKind::Lines => "lines",
        }
    }

    /// The kind whose [`as_str`](Self::as_str) is `name`, exactly; no aliases.
    pub fn from_name(name: &str) -> Option<SymbolKind> {
        Some(match name {
            "function" => SymbolKind::Function,
            "method" => SymbolKind::Method,
            "class" => SymbolKind::Class,
            "struct" => SymbolKind::Struct,
            "enum" => SymbolKind::Enum,
            "interface" => SymbolKind::Interface,
            "trait" => SymbolKind::Trait,
            "impl" => SymbolKind::Impl,
            "module" => SymbolKind::Module,
            "constant" => SymbolKind::Constant,
            "variable" => SymbolKind::Variable,
            "field" => SymbolKind::Field,
            "type" => SymbolKind::Type,
            "macro" => SymbolKind::Macro,
            "section" => SymbolKind::Section,
            "lines" => SymbolKind::Lines,
            _ => return None,
        })
    }

    /// Kinds that hold other symbols: a function inside one of these is a method.
    pub fn is_container(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Interface
                | SymbolKind::Trait
                | SymbolKind::Impl
                | SymbolKind::Module
        )
    }
}

impl std::fmt::Display for SymbolKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A named definition in a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// The name as written in the source, without its container; code names are
    /// capped at 120 bytes. A Markdown section's is its heading text.
    pub name: String,
    /// What the definition is; a function in a container is already a method.
    pub kind: SymbolKind,
    /// The qualified parent as written, e.g. `impl Config`, `class Router`.
    pub container: Option<String>,
    /// Index of the parent symbol in the same [`FileExtract::symbols`].
    pub parent: Option<u32>,
    /// The definition itself, without the doc comments above it (those are in
    /// its chunk).
    pub span: Span,
    /// The declaration up to its body, whitespace collapsed, capped.
    pub signature: String,
    /// The doc comment or docstring, comment markers stripped.
    pub doc: Option<String>,
}

impl Symbol {
    /// A symbol with no container, parent, signature or doc yet: extraction
    /// fills them in.
    pub fn new(name: impl Into<String>, kind: SymbolKind, span: Span) -> Symbol {
        Symbol {
            name: name.into(),
            kind,
            container: None,
            parent: None,
            span,
            signature: String::new(),
            doc: None,
        }
    }
}

/// A call of a named function or method.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallSite {
    /// The name called as written, without its receiver (`load` in `cfg.load()`).
    pub callee: String,
    /// The receiver text when the call is `receiver.callee(…)` (capped).
    pub receiver: Option<String>,
    /// The whole call expression, arguments included.
    pub span: Span,
    /// Index of the innermost enclosing symbol.
    pub caller: Option<u32>,
}

/// An import, `use`, `require` or `#include`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The module or path imported from, as written (quotes stripped).
    pub source: String,
    /// Names brought into scope, when the syntax lists them. A renamed one is
    /// `name as alias`; a module bound to a name is `* as alias`
    /// (`import numpy as np`, `import * as util from './util'`).
    pub names: Vec<String>,
    /// The whole statement; the imports of one statement (`import os, sys`) share it.
    pub span: Span,
}

/// Why a chunk exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChunkKind {
    /// A symbol, or a piece of one split at child boundaries.
    Symbol,
    /// The file header: imports and module docs before the first definition.
    Header,
    /// Top-level code between definitions.
    Code,
    /// A Markdown section.
    Section,
    /// A window of lines of a text or data file, or of a file that failed to parse.
    Text,
}

impl ChunkKind {
    /// The stable lower-case name, as in the JSON output and the index.
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Symbol => "symbol",
            ChunkKind::Header => "header",
            ChunkKind::Code => "code",
            ChunkKind::Section => "section",
            ChunkKind::Text => "text",
        }
    }

    /// The kind whose [`as_str`](Self::as_str) is `name`, exactly.
    pub fn from_name(name: &str) -> Option<ChunkKind> {
        Some(match name {
            "symbol" => ChunkKind::Symbol,
            "header" => ChunkKind::Header,
            "code" => ChunkKind::Code,
            "section" => ChunkKind::Section,
            "text" => ChunkKind::Text,
            _ => return None,
        })
    }
}

/// A unit of retrieval: a contiguous region of a file, never the whole of a large file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The region of the file, whole lines but for the pieces of a line too long
    /// for one chunk; its bytes are the chunk's text. A symbol's chunk starts at
    /// the comments and attributes above it.
    pub span: Span,
    /// Why the chunk exists.
    pub kind: ChunkKind,
    /// Index of the symbol this chunk belongs to, if any.
    pub symbol: Option<u32>,
    /// Indices of the symbols defined (starting) inside this chunk.
    pub defines: Vec<u32>,
}

/// Everything extraction finds in one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileExtract {
    /// The language the file was extracted as; `None` only in an empty default record.
    pub language: Option<Language>,
    /// The definitions, sorted by start with outer ones before inner; the
    /// indices in other records point into this list.
    pub symbols: Vec<Symbol>,
    /// Call sites in source order (calls starting together: innermost first).
    pub calls: Vec<CallSite>,
    /// Imports in source order; one per statement and source.
    pub imports: Vec<Import>,
    /// The chunks search returns, in file order, never overlapping.
    pub chunks: Vec<Chunk>,
    /// The grammar reported syntax errors; what could be read was kept.
    pub had_parse_errors: bool,
    /// Extraction failed entirely; the file was chunked as text.
    pub parse_failed: bool,
}
