//! Stack-trace frames in a task's text: Python, pytest, JVM, JavaScript
//! (Node, vitest), Firefox, Go, Rust and native (gdb, sanitizer, Valgrind)
//! formats, each line read to a [`Frame`].

use std::sync::LazyLock;

use regex::Regex;

use super::{Frame, clean_path, last_segment};

static PY_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^\s*File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>[\w<>.$]+))?"#)
        .unwrap()
});
static JVM_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*at (?P<qual>[\w$.<>/]+)\((?P<file>[\w$.\- ]+?)(?::(?P<line>\d+))?\)").unwrap()
});
static JS_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*at (?:(?:async |new )?(?P<func>[^\s(]+) \()?(?P<path>[^\s()]+?):(?P<line>\d+):\d+\)?\s*$",
    )
    .unwrap()
});
static FIREFOX_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*(?P<func>[\w$.<>/]*)@(?P<path>[^\s@]+?):(?P<line>\d+):\d+\s*$").unwrap()
});
static RUST_BT_FUNC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*\d+: (?P<func>[\w:<>$ ]+?)(?:::h[0-9a-f]{16})?\s*$").unwrap()
});
static AT_PATH: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*at (?P<path>[^\s:()]+):(?P<line>\d+)(?::\d+)?\s*$").unwrap());
/// pytest's own frames: `src/pkg/mod.py:123: in run` (or `: ValueError`).
static PYTEST_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<path>[^\s:]+\.py):(?P<line>\d+): (?:in (?P<func>[\w<>]+)|\w+)\s*$").unwrap()
});
static GO_FUNC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<func>[\w./\-]+(?:\.\(\*?[\w]+\))?\.[\w]+)\(.*\)\s*$").unwrap()
});
static GO_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s+(?P<path>\S+\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?\s*$").unwrap()
});
static NATIVE_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?P<func>[\w:~<>]+)\s*(?:\(.*?\))?\s+(?:at )?(?P<path>[^\s:]+):(?P<line>\d+)",
    )
    .unwrap()
});
/// Valgrind's: `==4321==    by 0x40061B: parse_header (header.c:87)`.
static VALGRIND_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^==[0-9]+==[ \t]+(?:at|by) 0x[0-9a-fA-F]+: (?P<func>[A-Za-z0-9_:~<>]+)(?:\(.*?\))? \((?P<path>[^ \t:()]+):(?P<line>[0-9]+)\)[ \t]*$",
    )
    .unwrap()
});
/// vitest's: ` ❯ processResult src/runner.ts:240:20`, ` ❯ src/a.test.ts:12:5`.
static VITEST_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*❯ (?:(?P<func>[\w$.<>\[\]]+) )?(?P<path>[^\s():]+):(?P<line>[0-9]+):[0-9]+\s*$",
    )
    .unwrap()
});
static PANIC_AT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"panicked at (?:'.*?', )?(?P<path>[^\s:']+\.rs):(?P<line>\d+)(?::\d+)?").unwrap()
});

/// A frame of any trace format lode reads, or `None`. `go_func` and
/// `rust_func` carry a function line to the location line that follows it.
pub(super) fn read(
    line: &str,
    go_func: &mut Option<String>,
    rust_func: &mut Option<String>,
) -> Option<Frame> {
    let at = |c: &regex::Captures, name| c.name(name).map(|m| m.as_str().to_string());
    let line_no = |c: &regex::Captures| c.name("line").and_then(|m| m.as_str().parse().ok());
    // A frame at the match's `path` and `line`, running `function`.
    let located = |c: &regex::Captures, function| Frame {
        path: at(c, "path").map(|p| clean_path(&p)),
        line: line_no(c),
        function,
    };
    if let Some(c) = PY_FRAME.captures(line) {
        return Some(located(&c, at(&c, "func").filter(|f| !f.starts_with('<'))));
    }
    if let Some(c) = PYTEST_FRAME.captures(line) {
        return Some(located(&c, at(&c, "func").filter(|f| !f.starts_with('<'))));
    }
    if let Some(c) = GO_PATH.captures(line) {
        return Some(located(
            &c,
            go_func.take().map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = AT_PATH.captures(line) {
        return Some(located(
            &c,
            rust_func.take().map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = JS_FRAME.captures(line) {
        return Some(located(
            &c,
            at(&c, "func").map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = JVM_FRAME.captures(line) {
        let qual = c["qual"].to_string();
        let file = c["file"].trim().to_string();
        let (class, method) = qual.rsplit_once('.').unwrap_or(("", &qual));
        let path = file.contains('.').then(|| {
            // The package's directories, then the file the frame names.
            let package = class.rsplit_once('.').map_or("", |(p, _)| p);
            if package.is_empty() {
                file.clone()
            } else {
                format!("{}/{file}", package.replace('.', "/"))
            }
        });
        return Some(Frame {
            path,
            line: line_no(&c),
            function: Some(method.to_string()).filter(|m| !m.starts_with('<')),
        });
    }
    if let Some(c) = NATIVE_FRAME.captures(line) {
        return Some(located(
            &c,
            at(&c, "func").map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = VALGRIND_FRAME.captures(line) {
        return Some(located(
            &c,
            at(&c, "func").map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = FIREFOX_FRAME.captures(line) {
        return Some(located(
            &c,
            at(&c, "func")
                .filter(|f| !f.is_empty())
                .map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = line
        .contains('❯')
        .then(|| VITEST_FRAME.captures(line))
        .flatten()
    {
        return Some(located(
            &c,
            at(&c, "func").map(|f| last_segment(&f).to_string()),
        ));
    }
    if let Some(c) = PANIC_AT.captures(line) {
        return Some(located(&c, None));
    }
    if let Some(c) = RUST_BT_FUNC.captures(line) {
        *rust_func = Some(c["func"].trim().to_string());
        return None;
    }
    if let Some(c) = GO_FUNC.captures(line) {
        *go_func = Some(c["func"].to_string());
    }
    None
}

/// A Python or JVM frame, the two most common in issues: one is enough to
/// call a text task-shaped.
pub(super) fn is_common_frame(line: &str) -> bool {
    PY_FRAME.is_match(line) || JVM_FRAME.is_match(line)
}
