//! Writes every file's whole extraction, to prove that a change to the queries
//! or the extractor leaves output unchanged: dump before, dump after, `cmp`.
//!
//! ```text
//! cargo run --release -p lode-parse --example extract_dump -- OUT_DIR [--lang NAME] DIR...
//! ```
//!
//! Writes `OUT_DIR/<language>.dump`, one line per file in sorted path order:
//! `path<TAB>FileExtract as JSON`. Files are walked as `extract_bench` walks
//! them (hidden folders, `node_modules` and `target` skipped, files over 1 MiB
//! too) and their language is detected as the indexer detects it; only code
//! languages count. TypeScript files are dumped a second time as TSX
//! (`tsx.dump`), which shares their queries.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

use lode_core::Language;

fn main() {
    let mut args = std::env::args().skip(1);
    let out_dir = PathBuf::from(
        args.next()
            .expect("usage: extract_dump OUT_DIR [--lang NAME] DIR..."),
    );
    let (mut lang, mut dirs) = (None, Vec::new());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--lang" => lang = Some(args.next().expect("--lang NAME")),
            _ => dirs.push(PathBuf::from(arg)),
        }
    }
    assert!(
        !dirs.is_empty(),
        "usage: extract_dump OUT_DIR [--lang NAME] DIR..."
    );
    let mut paths = Vec::new();
    for d in &dirs {
        lode_parse::bench::example_files(d, &mut paths);
    }
    let mut dumps: BTreeMap<&'static str, (usize, String)> = BTreeMap::new();
    for p in paths {
        let Ok(bytes) = std::fs::read(&p) else {
            continue;
        };
        let detected = lode_parse::detect(&p, &bytes);
        if !detected.is_code() {
            continue;
        }
        // TSX shares TypeScript's queries under another grammar; TypeScript
        // files run through it too, for want of `.tsx` files.
        let mut runs = vec![detected];
        if detected == Language::TypeScript {
            runs.push(Language::Tsx);
        }
        let src = String::from_utf8_lossy(&bytes);
        for l in runs {
            if lang.as_ref().is_some_and(|name| name != l.as_str()) {
                continue;
            }
            let json = serde_json::to_string(&lode_parse::extract(l, &src)).unwrap();
            let (n, text) = dumps.entry(l.as_str()).or_default();
            *n += 1;
            writeln!(text, "{}\t{json}", p.display()).unwrap();
        }
    }
    std::fs::create_dir_all(&out_dir).unwrap();
    for (name, (n, text)) in &dumps {
        std::fs::write(out_dir.join(format!("{name}.dump")), text).unwrap();
        println!("{name:>12} {n:6} files");
    }
}
