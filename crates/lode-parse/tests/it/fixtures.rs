//! Extraction fixtures: every file under `tests/fixtures/<lang>/` is extracted and
//! rendered as text, and the rendering must equal `<file>.expected` beside it.
//! Run with `UPDATE_EXPECT=1` to rewrite the expectations, then review the diff.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use lode_core::FileExtract;

fn render(file: &FileExtract, source: &str) -> String {
    let mut out = String::new();
    let name_of =
        |i: Option<u32>| i.map_or("-".to_string(), |i| file.symbols[i as usize].name.clone());
    writeln!(
        out,
        "language: {:?} parse_errors={} parse_failed={}",
        file.language, file.had_parse_errors, file.parse_failed
    )
    .unwrap();
    writeln!(out, "# symbols").unwrap();
    for s in &file.symbols {
        writeln!(
            out,
            "L{}-{} {} {} container={} parent={} sig={:?}",
            s.span.start_line,
            s.span.end_line,
            s.kind,
            s.name,
            s.container.as_deref().unwrap_or("-"),
            name_of(s.parent),
            s.signature
        )
        .unwrap();
        if let Some(doc) = &s.doc {
            writeln!(out, "    doc={doc:?}").unwrap();
        }
    }
    writeln!(out, "# calls").unwrap();
    for c in &file.calls {
        writeln!(
            out,
            "L{} {} receiver={} caller={}",
            c.span.start_line,
            c.callee,
            c.receiver.as_deref().unwrap_or("-"),
            name_of(c.caller)
        )
        .unwrap();
    }
    writeln!(out, "# imports").unwrap();
    for i in &file.imports {
        writeln!(
            out,
            "L{} {} names={:?}",
            i.span.start_line, i.source, i.names
        )
        .unwrap();
    }
    writeln!(out, "# chunks").unwrap();
    for c in &file.chunks {
        let defines: Vec<String> = c
            .defines
            .iter()
            .map(|&d| file.symbols[d as usize].name.clone())
            .collect();
        writeln!(
            out,
            "L{}-{} {} symbol={} defines={:?} bytes={}",
            c.span.start_line,
            c.span.end_line,
            c.kind.as_str(),
            name_of(c.symbol),
            defines,
            c.span.byte_len()
        )
        .unwrap();
        // Every chunk must be a real region of the file.
        assert!(c.span.end_byte as usize <= source.len());
    }
    out
}

fn fixture_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut files = Vec::new();
    for lang_dir in std::fs::read_dir(&root).unwrap() {
        let lang_dir = lang_dir.unwrap().path();
        if !lang_dir.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&lang_dir).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "expected") {
                continue;
            }
            files.push(p);
        }
    }
    files.sort();
    files
}

#[test]
fn extraction_matches_expected() {
    let files = fixture_files();
    assert!(!files.is_empty());
    lode_test_support::expect::check(files.iter().map(|path| {
        let source = std::fs::read_to_string(path).unwrap();
        let lang = lode_parse::detect(path, source.as_bytes());
        let extract = lode_parse::extract(lang, &source);
        let expected = PathBuf::from(format!("{}.expected", path.display()));
        (expected, render(&extract, &source))
    }));
}

#[test]
fn every_code_language_has_a_fixture() {
    let files = fixture_files();
    for lang in lode_core::Language::ALL.into_iter().filter(|l| l.is_code()) {
        let found = files.iter().any(|p| {
            let src = std::fs::read(p).unwrap();
            lode_parse::detect(p, &src) == lang
        });
        assert!(found, "no fixture for {lang}");
    }
}
