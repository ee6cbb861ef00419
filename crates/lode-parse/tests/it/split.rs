//! Symbols too large for one chunk are split at their members or into line
//! windows; the bare lines such a split leaves — a container's header
//! (`impl Grid {`, `class Grid:`), its closing brace, a function's last line
//! or two — go with the neighbouring part, never into a chunk of their own.

use lode_core::{FileExtract, Language};

/// Lines of about 50 bytes each: 40 of them are over the chunk target.
fn body(indent: &str, line: impl Fn(usize) -> String, n: usize) -> String {
    (0..n).map(|i| format!("{indent}{}\n", line(i))).collect()
}

fn rust_impl() -> String {
    let body = body(
        "        ",
        |i| format!("let step_{i} = {i} * self.width + 7;"),
        40,
    );
    format!(
        "pub struct Grid {{\n    width: usize,\n}}\n\nimpl Grid {{\n    \
         pub fn resize(&mut self) {{\n{body}    }}\n\n    \
         pub fn clear(&mut self) {{\n{body}    }}\n}}\n"
    )
}

fn python_class() -> String {
    let body = body(
        "        ",
        |i| format!("step_{i} = {i} * self.width + 7"),
        40,
    );
    format!("class Grid(Base):\n    def resize(self):\n{body}\n    def clear(self):\n{body}")
}

fn java_class() -> String {
    let body = body(
        "        ",
        |i| format!("int step{i} = {i} * this.width + 7;"),
        40,
    );
    format!(
        "public class Grid {{\n    public void resize() {{\n{body}    }}\n\n    \
         public void clear() {{\n{body}    }}\n}}\n"
    )
}

fn typescript_class() -> String {
    let body = body(
        "    ",
        |i| format!("const step{i} = {i} * this.width + 7;"),
        40,
    );
    format!(
        "export class Grid {{\n  resize(): void {{\n{body}  }}\n\n  \
         clear(): void {{\n{body}  }}\n}}\n"
    )
}

/// A function of 70 lines whose line windows would leave its last two over.
fn rust_long_function() -> String {
    let body = body(
        "    ",
        |i| format!("let step_{i:02} = {i} * width + 7 + 1000000;"),
        68,
    );
    format!("pub fn resize(width: usize) {{\n{body}}}\n")
}

fn cases() -> Vec<(Language, String)> {
    vec![
        (Language::Rust, rust_impl()),
        (Language::Python, python_class()),
        (Language::Java, java_class()),
        (Language::TypeScript, typescript_class()),
        (Language::Rust, rust_long_function()),
    ]
}

fn line(source: &str, n: u32) -> &str {
    source.lines().nth(n as usize - 1).unwrap_or("").trim()
}

/// The parts of symbols chunked in several pieces.
fn parts(file: &FileExtract) -> impl Iterator<Item = &lode_core::Chunk> {
    file.chunks.iter().filter(|c| {
        c.symbol.is_some_and(|s| {
            let span = &file.symbols[s as usize].span;
            span.start_line < c.span.start_line || c.span.end_line < span.end_line
        })
    })
}

#[test]
fn no_part_of_a_split_symbol_is_a_bare_line_or_two() {
    for (lang, source) in cases() {
        let file = lode_parse::extract(lang, &source);
        assert!(file.chunks.len() > 1, "{lang}: not split");
        for c in parts(&file) {
            let (a, b) = (c.span.start_line, c.span.end_line);
            assert!(
                b - a >= 2,
                "{lang}: lines {a}-{b} alone: {:?}",
                line(&source, a)
            );
        }
    }
}

#[test]
fn a_containers_header_and_closing_lines_join_its_members() {
    for (lang, source) in cases().into_iter().take(4) {
        let file = lode_parse::extract(lang, &source);
        let holding = |n: u32| {
            (file.chunks.iter())
                .find(|c| c.span.contains_line(n))
                .map(|c| (c.span.start_line, c.span.end_line))
        };
        let symbol_at = |n: u32| {
            (file.chunks.iter())
                .find(|c| c.span.contains_line(n))
                .and_then(|c| c.symbol)
                .map(|s| file.symbols[s as usize].name.as_str())
        };
        let header = (1..)
            .find(|&n| line(&source, n).contains("class Grid") || line(&source, n) == "impl Grid {")
            .unwrap();
        let first_member = (1..)
            .find(|&n| line(&source, n).contains("resize"))
            .unwrap();
        assert_eq!(holding(header), holding(first_member), "{lang}");
        let closing = source.lines().count() as u32;
        if line(&source, closing) == "}" {
            assert_eq!(symbol_at(closing), Some("clear"), "{lang}");
        }
    }
}

#[test]
fn a_split_functions_header_stays_a_chunk_of_the_function() {
    let body = body("        ", |i| format!("step_{i} = {i} * width + 7"), 40);
    let source = format!(
        "def convert(width, func):\n    \"\"\"Converts.\"\"\"\n    def as_list(width):\n{body}\n    \
         def as_single(width):\n{body}\n    return as_list(width)\n"
    );
    let file = lode_parse::extract(Language::Python, &source);
    let first = file
        .chunks
        .iter()
        .find(|c| c.span.contains_line(1))
        .unwrap();
    let name = first.symbol.map(|s| file.symbols[s as usize].name.as_str());
    assert_eq!(name, Some("convert"), "{:?}", first.span);
}
