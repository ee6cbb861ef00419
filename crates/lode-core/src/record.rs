use serde::{Deserialize, Serialize};

use crate::{Language, Span};

/// What a symbol is. The names are the stable strings of the JSON output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolKind {
    Function,
    Method,
    Class,
    Struct,
    Enum,
    Interface,
    Trait,
    Impl,
    Module,
    Constant,
    Variable,
    Field,
    Type,
    Macro,
    /// A Markdown section (a heading and what follows it).
    Section,
    /// Never extracted: the lines around a line that no symbol encloses,
    /// which `show FILE:LINE` shows in a symbol's place.
    Lines,
}

impl SymbolKind {
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
    pub name: String,
    pub kind: SymbolKind,
    /// The qualified parent as written, e.g. `impl Config`, `class Router`.
    pub container: Option<String>,
    /// Index of the parent symbol in the same [`FileExtract::symbols`].
    pub parent: Option<u32>,
    pub span: Span,
    /// The declaration up to its body, whitespace collapsed, capped.
    pub signature: String,
    /// The doc comment or docstring, comment markers stripped.
    pub doc: Option<String>,
}

impl Symbol {
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
    pub callee: String,
    /// The receiver text when the call is `receiver.callee(…)` (capped).
    pub receiver: Option<String>,
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
    pub fn as_str(self) -> &'static str {
        match self {
            ChunkKind::Symbol => "symbol",
            ChunkKind::Header => "header",
            ChunkKind::Code => "code",
            ChunkKind::Section => "section",
            ChunkKind::Text => "text",
        }
    }

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
    pub span: Span,
    pub kind: ChunkKind,
    /// Index of the symbol this chunk belongs to, if any.
    pub symbol: Option<u32>,
    /// Indices of the symbols defined (starting) inside this chunk.
    pub defines: Vec<u32>,
}

/// Everything extraction finds in one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileExtract {
    pub language: Option<Language>,
    pub symbols: Vec<Symbol>,
    pub calls: Vec<CallSite>,
    pub imports: Vec<Import>,
    pub chunks: Vec<Chunk>,
    /// The grammar reported syntax errors; what could be read was kept.
    pub had_parse_errors: bool,
    /// Extraction failed entirely; the file was chunked as text.
    pub parse_failed: bool,
}
