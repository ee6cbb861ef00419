//! Expected output, as files: what each command prints and what each MCP
//! tool answers on the `shop` fixture, one case a file under
//! `tests/expect/`, so a change to rendered output shows as a diff.
//!
//! - `tests/expect/cli/NAME.txt` starts with `$ lode ARGS` (arguments split
//!   at spaces, `"…"` quoting one with spaces, `\"` a quote); the rest is
//!   the exit status, stdout and stderr.
//! - `tests/expect/mcp/NAME.txt` starts with `> TOOL {JSON arguments}`; the
//!   rest is the result's text and its structured content.
//!
//! Every case runs against one copy of the fixture, indexed first; what
//! varies between runs (the temporary paths, durations, dates, sizes on
//! disk) is replaced by a placeholder. `UPDATE_EXPECT=1` rewrites the files
//! from what the binary does: review the diff.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::Repo;
use crate::common::raw::Raw;

fn cases(kind: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/expect");
    lode_test_support::expect::inputs(&dir.join(kind), "txt")
}

/// Compares every case's rendering with its file (or rewrites the file).
fn check_all(kind: &str, render: impl Fn(&str) -> String) {
    lode_test_support::expect::check(cases(kind).into_iter().map(|path| {
        let expected = std::fs::read_to_string(&path).unwrap();
        let first = expected.lines().next().unwrap_or_default().to_string();
        let actual = format!("{first}\n{}", render(&first));
        (path, actual)
    }));
}

/// Arguments split at spaces; `"…"` keeps spaces, `\"` is a quote.
fn split_args(line: &str) -> Vec<String> {
    let (mut args, mut cur, mut quoted, mut any) = (Vec::new(), String::new(), false, false);
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => cur.extend(chars.next()),
            '"' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any || !cur.is_empty() {
                    args.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            c => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        args.push(cur);
    }
    args
}

/// What varies between runs, replaced: the repository and cache paths, then
/// durations (`80 ms`, `1.2 s`), dates and sizes on disk.
fn scrub(text: &str, repo: &Repo) -> String {
    let text = text
        .replace(&repo.cache.path().display().to_string(), "<cache>")
        .replace(&repo.root().display().to_string(), "<root>");
    text.lines().map(scrub_line).map(|l| l + "\n").collect()
}

fn scrub_line(line: &str) -> String {
    // A duration in JSON: `"elapsed_ms": 1.5,`, `"ms": 0.2`.
    if let Some((key, value)) = line.trim_start().split_once("\": ")
        && matches!(key.trim_start_matches('"'), k if k == "ms" || k.ends_with("_ms"))
        && value.trim_end_matches(',').parse::<f64>().is_ok()
    {
        let comma = if value.ends_with(',') { "," } else { "" };
        let indent = &line[..line.len() - line.trim_start().len()];
        return format!("{indent}{key}\": <n>{comma}");
    }
    let words: Vec<&str> = line.split(' ').collect();
    let mut out: Vec<String> = Vec::with_capacity(words.len());
    for (i, w) in words.iter().enumerate() {
        let next = words.get(i + 1).copied().unwrap_or_default();
        let number = !w.is_empty() && w.chars().all(|c| c.is_ascii_digit() || c == '.');
        let glued_ms = w
            .strip_suffix("ms")
            .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit() || c == '.'));
        let out_word = if number && matches!(next, "ms" | "s" | "MiB" | "KiB") {
            "<n>".to_string()
        } else if glued_ms {
            "<n>ms".to_string()
        } else if is_date(w) || is_clock(w) {
            "<time>".to_string()
        } else if w.starts_with("<cache>/") {
            // The index directory is named after the root's (temporary) path.
            "<cache>/<index>".to_string()
        } else {
            w.to_string()
        };
        out.push(out_word);
    }
    out.join(" ")
}

fn is_date(w: &str) -> bool {
    digits_apart(w, "dddd-dd-dd")
}

fn is_clock(w: &str) -> bool {
    digits_apart(w, "dd:dd:dd")
}

/// Whether `w` has the shape of `pattern`: a digit at each `d`, the same
/// character elsewhere.
fn digits_apart(w: &str, pattern: &str) -> bool {
    w.len() == pattern.len()
        && w.bytes().zip(pattern.bytes()).all(|(c, p)| match p {
            b'd' => c.is_ascii_digit(),
            p => c == p,
        })
}

fn indexed_shop() -> Repo {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    repo
}

#[test]
fn commands_print_what_their_files_expect() {
    let repo = indexed_shop();
    check_all("cli", |first| {
        let line = first
            .strip_prefix("$ lode ")
            .expect("a case starts with `$ lode `");
        let args = split_args(line);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = repo.run(&refs);
        let code = out.status.code().map_or("signal".into(), |c| c.to_string());
        let stdout = scrub(&String::from_utf8_lossy(&out.stdout), &repo);
        let stderr = scrub(&String::from_utf8_lossy(&out.stderr), &repo);
        format!("--- exit {code}\n--- stdout\n{stdout}--- stderr\n{stderr}")
    });
}

#[test]
fn mcp_tools_answer_what_their_files_expect() {
    let repo = indexed_shop();
    let raw = std::cell::RefCell::new(Raw::start(&repo));
    check_all("mcp", |first| {
        let line = first.strip_prefix("> ").expect("a case starts with `> `");
        let (tool, args) = line.split_once(' ').unwrap_or((line, "{}"));
        let args: Value = serde_json::from_str(args).expect("arguments are JSON");
        let result = raw.borrow_mut().call(tool, args, None);
        let text: String = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["text"].as_str())
            .collect();
        let structured = serde_json::to_string_pretty(&result["structuredContent"]).unwrap();
        let error = result["isError"].as_bool().unwrap_or(false);
        format!(
            "--- error {error}\n--- text\n{}--- structured\n{}",
            scrub(&text, &repo),
            scrub(&structured, &repo)
        )
    });
}

#[test]
fn the_scrubber_keeps_what_does_not_vary() {
    assert_eq!(
        scrub_line("5 files, 14 chunks in 80 ms (5 parsed)"),
        "5 files, 14 chunks in <n> ms (5 parsed)"
    );
    assert_eq!(
        scrub_line("built 2026-12-02 05:56:03 UTC in 73 ms"),
        "built <time> <time> UTC in <n> ms"
    );
    assert_eq!(
        scrub_line("src/a.py:1-5  class A  4.75"),
        "src/a.py:1-5  class A  4.75"
    );
    assert_eq!(
        scrub_line("index:  <cache>/shop-fd2f93b3"),
        "index:  <cache>/<index>"
    );
    assert_eq!(scrub_line("ask: seeds=5 1.8ms"), "ask: seeds=5 <n>ms");
    assert_eq!(
        scrub_line(r#"    "elapsed_ms": 1.52,"#),
        r#"    "elapsed_ms": <n>,"#
    );
    assert_eq!(scrub_line(r#"  "items": 3,"#), r#"  "items": 3,"#);
    assert_eq!(
        split_args(r#"search "a b" -i "" x\"y"#),
        ["search", "a b", "-i", "", "x\"y"]
    );
}
