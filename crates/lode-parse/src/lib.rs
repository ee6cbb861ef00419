//! Bytes in, records out: language detection, tree-sitter extraction of
//! symbols, calls and imports, and chunking.
//!
//! - [`detect`] decides a file's [`Language`] from its name or shebang.
//! - [`extract`] turns a file's text into a [`FileExtract`]: symbols with kind,
//!   container, signature and doc; call sites; imports; and the chunks that
//!   search returns. Code languages run the queries in `queries/<lang>/`
//!   (`symbols.scm`, `calls.scm`, `imports.scm`); Markdown is cut into
//!   sections by heading; everything else into windows of lines. Rust
//!   macro blocks that hold items are parsed again as Rust, in place.
//!
//! This crate never touches the filesystem.
//!
//! ```
//! use lode_core::{Language, SymbolKind};
//! let src = "import os\n\nclass Config:\n    def load(self, path):\n        return open(path)\n";
//! let file = lode_parse::extract(Language::Python, src);
//! let load = file.symbols.iter().find(|s| s.name == "load").unwrap();
//! assert_eq!(load.kind, SymbolKind::Method);
//! assert_eq!(load.container.as_deref(), Some("class Config"));
//! assert!(file.calls.iter().any(|c| c.callee == "open"));
//! assert_eq!(file.imports[0].source, "os");
//! ```

#![deny(missing_docs)]

mod attribute_macros;
mod bound;
mod chunk;
mod doc;
mod extract;
mod lines;
mod macro_items;
mod parents;
mod registry;
mod text;

pub use chunk::{HARD_CAP_BYTES, TARGET_BYTES};
pub use lines::LineIndex;
pub use registry::{detect, grammar};

use lode_core::{ChunkKind, FileExtract, Language};

/// Version of the extraction and chunking rules; part of the index fingerprint.
/// Bump it whenever a query, the chunker or the text splitter changes output.
pub const EXTRACT_VERSION: u32 = 11;

/// Extracts symbols, calls, imports and chunks from a file's text.
///
/// Never fails: a file whose grammar cannot parse it in time, or whose
/// extraction would run past its deadline or caps (a tree too deep, too many
/// matches or symbols), is chunked as text and flagged `parse_failed`.
pub fn extract(lang: Language, source: &str) -> FileExtract {
    let lines = LineIndex::new(source);
    match lang {
        Language::Markdown => text::extract_markdown(source, &lines),
        Language::Json | Language::Yaml | Language::Toml | Language::Text => {
            text::extract_text(lang, source, &lines)
        }
        code => extract::extract_code(code, source, &lines).unwrap_or_else(|| FileExtract {
            language: Some(code),
            chunks: chunk::chunk_lines(source, &lines, ChunkKind::Text),
            parse_failed: true,
            ..FileExtract::default()
        }),
    }
}

/// Timing hooks and file lists for the examples (`extract_bench`, `extract_dump`);
/// not part of the API.
#[doc(hidden)]
pub mod bench {
    use std::time::Duration;

    use lode_core::{FileExtract, Language};

    use crate::extract::Probe;
    use crate::lines::LineIndex;

    struct Timer {
        clock: fn() -> Duration,
        last: Duration,
        phases: Vec<(&'static str, Duration)>,
    }

    impl Probe for Timer {
        fn phase_done(&mut self, phase: &'static str) {
            let now = (self.clock)();
            self.phases.push((phase, now.saturating_sub(self.last)));
            self.last = now;
        }
    }

    /// [`crate::extract`] for a code language, with the time of each phase
    /// (`lines`, `parse`, then the extraction phases in order) on `clock`.
    /// `None` when the language has no grammar, or parsing or the extraction
    /// ran past its bounds.
    pub fn extract_timed(
        lang: Language,
        source: &str,
        clock: fn() -> Duration,
    ) -> Option<(FileExtract, Vec<(&'static str, Duration)>)> {
        let start = clock();
        let lines = LineIndex::new(source);
        let mut timer = Timer {
            clock,
            last: start,
            phases: Vec::new(),
        };
        timer.phase_done("lines");
        let file = crate::extract::extract_code_probed(lang, source, &lines, &mut timer)?;
        Some((file, timer.phases))
    }

    /// The query sources of a language: symbols, calls, imports.
    pub fn query_sources(lang: Language) -> Option<[&'static str; 3]> {
        crate::registry::query_sources(lang)
    }

    /// The files under `dir` that the examples time and dump, in sorted path
    /// order: hidden folders, `node_modules` and `target` skipped, and files
    /// over 1 MiB (the indexer's default cap). Appended to `out`.
    pub fn example_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        const MAX_FILE: u64 = 1024 * 1024;
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut entries: Vec<_> = entries.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let name = e.file_name();
            let name = name.to_string_lossy();
            let Ok(ft) = e.file_type() else { continue };
            if ft.is_dir() {
                if !name.starts_with('.') && name != "node_modules" && name != "target" {
                    example_files(&e.path(), out);
                }
            } else if ft.is_file() && e.metadata().is_ok_and(|m| m.len() <= MAX_FILE) {
                out.push(e.path());
            }
        }
    }
}
