//! Hostile shapes: one file must not stall indexing. Each shape is generated
//! nested `DEEP` (and `SHALLOW`) levels deep and extracted on a thread with
//! the stack of the indexer's worker threads; extraction must end within
//! `LIMIT`, and give either a whole extraction or the line windows of a file
//! that could not be extracted (`parse_failed`), never a silently partial one.

use std::sync::{Mutex, mpsc};
use std::time::{Duration, Instant};

use lode_core::{FileExtract, Language};

const DEEP: usize = 100_000;
const SHALLOW: usize = 10_000;
/// Generous for a debug build: a bounded extraction of these files takes a
/// fraction of it.
const LIMIT: Duration = Duration::from_secs(5);
/// Rayon's worker threads, which index files, get the default stack of a
/// spawned thread.
const STACK: usize = 2 * 1024 * 1024;

/// `open` repeated `n` times, `leaf`, then `close` repeated `n` times; a
/// line break every 64 levels, so that the file does not look minified.
fn nested(head: &str, open: &str, leaf: &str, close: &str, n: usize) -> String {
    let mut src = String::from(head);
    for i in 0..n {
        src.push_str(open);
        if i % 64 == 63 {
            src.push('\n');
        }
    }
    src.push_str(leaf);
    for i in 0..n {
        src.push_str(close);
        if i % 64 == 63 {
            src.push('\n');
        }
    }
    src.push('\n');
    src
}

/// One extraction at a time, so that tests running in parallel do not
/// slow each other past the limit.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Extracts `src` on a thread of its own, failing the test past `LIMIT`.
fn extract_bounded(lang: Language, src: String) -> FileExtract {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (tx, rx) = mpsc::channel();
    let len = src.len();
    let started = Instant::now();
    std::thread::Builder::new()
        .stack_size(STACK)
        .spawn(move || {
            let _ = tx.send(lode_parse::extract(lang, &src));
        })
        .unwrap();
    let file = rx
        .recv_timeout(LIMIT)
        .unwrap_or_else(|_| panic!("{lang} still extracting after {LIMIT:?}"));
    eprintln!(
        "{lang}, {} bytes: {:?}, parse_failed={}",
        len,
        started.elapsed(),
        file.parse_failed
    );
    file
}

/// Either the whole extraction (`whole` says whether it is) or the fallback,
/// which covers every line of the file.
fn check(file: &FileExtract, src: &str, whole: impl Fn(&FileExtract) -> bool) {
    if file.parse_failed {
        assert!(file.symbols.is_empty() && file.calls.is_empty());
        let last = file.chunks.last().expect("line windows");
        assert!(last.span.end_byte as usize >= src.trim_end().len());
    } else {
        assert!(whole(file), "a partial extraction");
    }
}

fn calls(n: usize) -> impl Fn(&FileExtract) -> bool {
    move |f| f.calls.len() == n
}

fn any(_: &FileExtract) -> bool {
    true
}

fn js_calls(n: usize) -> String {
    nested("", "f(", "1", ")", n)
}

fn object_literal(n: usize) -> String {
    nested("const x = ", "{a:", "1", "}", n)
}

fn py_calls(n: usize) -> String {
    nested("x = ", "f(", "1", ")", n)
}

fn py_lists(n: usize) -> String {
    nested("x = ", "[", "1", "]", n)
}

fn rust_blocks(n: usize) -> String {
    nested("fn main() ", "{", "1", "}", n)
}

fn rust_fns(n: usize) -> String {
    nested("", "fn a() {", "", "}", n)
}

fn rust_mods(n: usize) -> String {
    nested("", "mod a {", "", "}", n)
}

fn js_fns(n: usize) -> String {
    nested("", "function a() {", "", "}", n)
}

/// `x.f().f()…`: each call's receiver is the whole chain before it.
fn js_chain(n: usize) -> String {
    let mut src = String::from("x");
    for i in 0..n {
        src.push_str(if i % 64 == 63 { "\n.f()" } else { ".f()" });
    }
    src.push_str(";\n");
    src
}

fn js_imports(n: usize) -> String {
    (0..n)
        .map(|i| format!("import a{i} from 'm{i}';\n"))
        .collect()
}

/// `import {a0, a1, …} from 'm'`: one statement, one match per name.
fn js_import_names(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    format!("import {{{}}} from 'm';\n", names.join(",\n"))
}

/// `import a0, a1, …`: one statement, one import per module.
fn py_import_names(n: usize) -> String {
    let names: Vec<String> = (0..n).map(|i| format!("a{i}")).collect();
    format!("import {}\n", names.join(", "))
}

/// Functions one after another, each calling another: a real file's shape.
fn py_functions(n: usize) -> String {
    (0..n).map(|i| format!("def f{i}():\n    g()\n")).collect()
}

fn run(lang: Language, src: String, whole: impl Fn(&FileExtract) -> bool) {
    let file = extract_bounded(lang, src.clone());
    check(&file, &src, whole);
}

#[test]
fn js_nested_calls() {
    run(Language::JavaScript, js_calls(SHALLOW), calls(SHALLOW));
    run(Language::JavaScript, js_calls(DEEP), calls(DEEP));
}

#[test]
fn ts_nested_object_literal() {
    run(Language::TypeScript, object_literal(SHALLOW), any);
    run(Language::TypeScript, object_literal(DEEP), any);
}

#[test]
fn js_nested_object_literal() {
    run(Language::JavaScript, object_literal(SHALLOW), any);
    run(Language::JavaScript, object_literal(DEEP), any);
}

#[test]
fn python_nested_calls() {
    run(Language::Python, py_calls(SHALLOW), calls(SHALLOW));
    run(Language::Python, py_calls(DEEP), calls(DEEP));
}

#[test]
fn python_nested_lists() {
    run(Language::Python, py_lists(SHALLOW), any);
    run(Language::Python, py_lists(DEEP), any);
}

#[test]
fn rust_nested_blocks() {
    run(Language::Rust, rust_blocks(SHALLOW), any);
    run(Language::Rust, rust_blocks(DEEP), any);
}

#[test]
fn rust_nested_functions() {
    let n = |n| move |f: &FileExtract| f.symbols.len() == n;
    run(Language::Rust, rust_fns(SHALLOW), n(SHALLOW));
    run(Language::Rust, rust_fns(DEEP), n(DEEP));
}

#[test]
fn rust_nested_modules() {
    let n = |n| move |f: &FileExtract| f.symbols.len() == n;
    run(Language::Rust, rust_mods(SHALLOW), n(SHALLOW));
    run(Language::Rust, rust_mods(DEEP), n(DEEP));
}

#[test]
fn js_nested_functions() {
    let n = |n| move |f: &FileExtract| f.symbols.len() == n;
    run(Language::JavaScript, js_fns(SHALLOW), n(SHALLOW));
    run(Language::JavaScript, js_fns(DEEP), n(DEEP));
}

#[test]
fn js_long_call_chain() {
    run(Language::JavaScript, js_chain(SHALLOW), calls(SHALLOW));
    run(Language::JavaScript, js_chain(DEEP), calls(DEEP));
}

#[test]
fn js_many_imports() {
    let n = |n| move |f: &FileExtract| f.imports.len() == n;
    run(Language::JavaScript, js_imports(SHALLOW), n(SHALLOW));
    run(Language::JavaScript, js_imports(DEEP), n(DEEP));
}

#[test]
fn js_many_names_in_one_import() {
    let names = |n| move |f: &FileExtract| f.imports.len() == 1 && f.imports[0].names.len() == n;
    run(
        Language::JavaScript,
        js_import_names(SHALLOW),
        names(SHALLOW),
    );
    run(Language::JavaScript, js_import_names(DEEP), names(DEEP));
}

#[test]
fn python_many_modules_in_one_import() {
    let n = |n| move |f: &FileExtract| f.imports.len() == n;
    run(Language::Python, py_import_names(SHALLOW), n(SHALLOW));
    run(Language::Python, py_import_names(DEEP), n(DEEP));
}

#[test]
fn python_many_functions() {
    let whole = |n| move |f: &FileExtract| f.symbols.len() == n && f.calls.len() == n;
    run(Language::Python, py_functions(SHALLOW), whole(SHALLOW));
    run(Language::Python, py_functions(DEEP), whole(DEEP));
}
