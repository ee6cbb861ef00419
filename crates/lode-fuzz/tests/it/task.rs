//! `TaskText::parse`, the reading of an issue's text for its signals, over
//! hostile text: traces of every format lode reads, fences, paths, prose,
//! odd characters, and texts past [`MAX_TASK_BYTES`].
//!
//! What it finds must come from the text's first [`MAX_TASK_BYTES`] (cut at
//! a line boundary): identifiers, names, errors, messages, titles, module
//! segments and code lines are pieces of it, paths are pieces of it once
//! backslashes read as `/`; lists are distinct and capped; the output grows
//! at most linearly with the text read; and what follows the bound changes
//! nothing. Its terms have finite, positive weights, one per term, sorted.

use lode_search::Mode;
use lode_search::task::{MAX_TASK_BYTES, TaskText, TermWeights};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;

use crate::common::{ODD, any_text, config};

/// Identifiers (and names) kept at most.
const MAX_IDENTIFIERS: usize = 200;
/// Titles are cut to this many characters.
const MAX_TITLE: usize = 300;

/// The part of `text` that is read, as the docs say: its first
/// [`MAX_TASK_BYTES`], cut back to a character and then a line boundary.
fn read_part(text: &str) -> &str {
    if text.len() <= MAX_TASK_BYTES {
        return text;
    }
    let mut end = MAX_TASK_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    cut.rfind('\n').map_or(cut, |i| &cut[..i])
}

fn distinct(what: &str, items: &[String]) -> Result<(), TestCaseError> {
    let mut seen = std::collections::HashSet::new();
    for i in items {
        prop_assert!(seen.insert(i), "{what}: {i:?} twice");
    }
    Ok(())
}

fn within(what: &str, items: &[String], read: &str) -> Result<(), TestCaseError> {
    for i in items {
        prop_assert!(read.contains(i.as_str()), "{what} {i:?} is not in the text");
    }
    Ok(())
}

/// Every property of the parse of `text`.
fn check(text: &str) -> Result<(), TestCaseError> {
    let t = TaskText::parse(text);
    let read = read_part(text);
    let slashed = read.replace('\\', "/");
    within("identifier", &t.identifiers, read)?;
    within("named", &t.named, read)?;
    within("error", &t.errors, read)?;
    within("message", &t.messages, read)?;
    distinct("identifiers", &t.identifiers)?;
    distinct("named", &t.named)?;
    distinct("errors", &t.errors)?;
    distinct("messages", &t.messages)?;
    distinct("modules", &t.modules)?;
    prop_assert!(t.identifiers.len() <= MAX_IDENTIFIERS && t.named.len() <= MAX_IDENTIFIERS);
    for m in &t.modules {
        let segments: Vec<&str> = m.split('/').collect();
        prop_assert!(segments.len() >= 2, "module {m:?}");
        for s in segments {
            prop_assert!(!s.is_empty() && read.contains(s), "module {m:?}");
        }
    }
    let mut paths = std::collections::HashSet::new();
    for p in &t.paths {
        prop_assert!(paths.insert(&p.path), "path {:?} twice", p.path);
        prop_assert!(slashed.contains(p.path.as_str()), "path {:?}", p.path);
        prop_assert!(
            p.path.len() >= 4 && !p.path.starts_with('.'),
            "path {:?}",
            p.path
        );
        if let Some(n) = p.line {
            prop_assert!(
                read.contains(&n.to_string()) || in_a_hunk(read, n),
                "line {n} of {:?}",
                p.path
            );
        }
    }
    for f in &t.frames {
        if let Some(p) = &f.path {
            // A JVM frame's path is its package's directories and the file
            // the frame names; every other frame's path is the text's.
            let file = p.rsplit('/').next().unwrap_or(p);
            prop_assert!(slashed.contains(file), "frame path {p:?}");
        }
        if let Some(func) = &f.function {
            prop_assert!(read.contains(func.as_str()), "frame function {func:?}");
        }
        if let Some(n) = f.line {
            prop_assert!(read.contains(&n.to_string()), "frame line {n}");
        }
    }
    prop_assert!(
        t.title.chars().count() <= MAX_TITLE && !t.title.contains('\n'),
        "title {:?}",
        t.title
    );
    prop_assert!(read.contains(t.title.as_str()), "title {:?}", t.title);
    for block in &t.code {
        prop_assert!(!block.trim().is_empty(), "a blank code block");
        for line in block.split('\n') {
            prop_assert!(read.contains(line), "code line {line:?}");
        }
    }
    for line in t.prose.lines() {
        prop_assert!(read.contains(line), "prose line {line:?}");
    }
    prop_assert!(t.prose.len() <= read.len() + 1);
    // Bounded output: linear in the text read.
    let strings = t
        .identifiers
        .iter()
        .chain(&t.named)
        .chain(&t.errors)
        .chain(&t.messages)
        .chain(&t.modules)
        .chain(&t.code)
        .chain(t.paths.iter().map(|p| &p.path))
        .chain(
            t.frames
                .iter()
                .flat_map(|f| f.path.iter().chain(&f.function)),
        )
        .map(String::len)
        .sum::<usize>()
        + t.prose.len()
        + t.title.len();
    prop_assert!(
        strings <= 8 * read.len() + 64,
        "{strings} bytes of output from {} read",
        read.len()
    );

    let terms = t.terms(&TermWeights::default());
    for w in terms.windows(2) {
        prop_assert!(
            w[0].0 < w[1].0,
            "terms out of order: {:?} {:?}",
            w[0].0,
            w[1].0
        );
    }
    for (term, weight) in &terms {
        prop_assert!(
            weight.is_finite() && *weight > 0.0,
            "term {term:?} weighs {weight}"
        );
    }
    let _ = Mode::detect(text);
    let _ = TaskText::is_task_shaped(text);
    if text.len() > MAX_TASK_BYTES {
        prop_assert!(
            t == TaskText::parse(read),
            "the text past the bound changed the parse"
        );
    }
    Ok(())
}

/// Whether `n` lies in the old lines of a hunk `text` writes (`@@ -240,7`
/// covers 240 to 247): a hunk points at the middle of what it replaces.
fn in_a_hunk(text: &str, n: u32) -> bool {
    let number = |s: &str| -> Option<(u64, usize)> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        Some((s[..digits].parse().ok()?, digits))
    };
    text.match_indices("@@ -").any(|(at, _)| {
        let rest = &text[at + 4..];
        let Some((start, digits)) = number(rest) else {
            return false;
        };
        let len = rest[digits..]
            .strip_prefix(',')
            .and_then(number)
            .map_or(1, |(l, _)| l);
        (start..=start.saturating_add(len)).contains(&u64::from(n))
    })
}

fn ident() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_][a-z0-9_]{0,10}",
        "[A-Z][a-zA-Z0-9]{0,10}",
        "[a-z]{1,6}[A-Z][a-z]{1,6}",
        select(&["<module>", "<lambda>", "__init__", "$", "_", "main", "self"][..])
            .prop_map(str::to_string),
    ]
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (0u32..2000).prop_map(|n| n.to_string()),
        any::<u64>().prop_map(|n| n.to_string()),
        Just("99999999999999999999999".to_string()),
        Just("007".to_string()),
    ]
}

const EXTS: &[&str] = &[
    "py", "rs", "go", "java", "js", "ts", "tsx", "c", "h", "cpp", "rb", "php", "md", "json",
    "toml", "yml", "txt", "", "p", "rs.bak", "kt", "cu", "inl",
];

fn path() -> impl Strategy<Value = String> {
    (
        select(
            &[
                "",
                "./",
                "/",
                "../",
                "C:\\",
                "file:///",
                "http://localhost:3000/",
                "~/",
            ][..],
        ),
        vec(ident(), 1..5),
        select(&["/", "\\", "//", "/./"][..]),
        select(EXTS),
    )
        .prop_map(|(prefix, parts, sep, ext)| format!("{prefix}{}.{ext}", parts.join(sep)))
}

fn qualified() -> impl Strategy<Value = String> {
    (vec(ident(), 2..5), select(&[".", "::", "/", "$"][..]))
        .prop_map(|(parts, sep)| parts.join(sep))
}

fn words() -> impl Strategy<Value = String> {
    vec(
        prop_oneof![
            4 => "[a-z]{1,8}",
            1 => ident(),
            1 => qualified(),
            1 => path(),
            1 => ident().prop_map(|w| format!("`{w}`")),
            1 => ident().prop_map(|w| format!("{w}()")),
            1 => "[a-z ]{12,40}".prop_map(|m| format!("\"{m}\"")),
            1 => select(ODD).prop_map(str::to_string),
        ],
        0..16,
    )
    .prop_map(|w| w.join(" "))
}

/// One line of an issue: a frame of one of the trace formats, an error
/// line, a fence, code, a REPL line, prose, or anything.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        (path(), number(), ident())
            .prop_map(|(p, n, f)| format!("  File \"{p}\", line {n}, in {f}")),
        (path(), number(), ident()).prop_map(|(p, n, f)| format!("{p}:{n}: in {f}")),
        (qualified(), ident(), number()).prop_map(|(q, f, n)| format!("\tat {q}({f}.java:{n})")),
        (ident(), path(), number()).prop_map(|(f, p, n)| format!("    at {f} ({p}:{n}:7)")),
        (ident(), path(), number()).prop_map(|(f, p, n)| format!("{f}@{p}:{n}:1")),
        (number(), qualified()).prop_map(|(n, q)| format!("  {n}: {q}::h0123456789abcdef")),
        (path(), number()).prop_map(|(p, n)| format!("             at {p}:{n}:5")),
        (words(), path(), number())
            .prop_map(|(w, p, n)| format!("thread 'main' panicked at '{w}', {p}:{n}:9")),
        (qualified(), ident()).prop_map(|(q, f)| format!("{q}.(*T).{f}(0x1, 0x2)")),
        (path(), number()).prop_map(|(p, n)| format!("\t{p}:{n} +0x1d")),
        (number(), ident(), path(), number())
            .prop_map(|(i, f, p, n)| format!("#{i} 0x00007f in {f} (x=1) at {p}:{n}")),
        (ident(), words()).prop_map(|(e, w)| format!("{e}Error: {w}")),
        // A diff's headers and lines, a source link, gcc's function line, a
        // vitest frame, a line the prose gives.
        (
            select(&["--- a/", "+++ b/", "--- ", "diff --git a/x b/"][..]),
            path()
        )
            .prop_map(|(h, p)| format!("{h}{p}")),
        (number(), number(), number(), words())
            .prop_map(|(s, l, n, w)| format!("@@ -{s},{l} +{s},{n} @@ {w}")),
        (select(&["+", "-", " ", "\\"][..]), words()).prop_map(|(m, w)| format!("{m}{w}")),
        (path(), number())
            .prop_map(|(p, n)| format!("see https://github.com/o/r/blob/main/{p}#L{n}")),
        (path(), ident()).prop_map(|(p, f)| format!("{p}: In function '{f}':")),
        (ident(), path(), number()).prop_map(|(f, p, n)| format!(" ❯ {f} {p}:{n}:3")),
        (number(), path()).prop_map(|(n, p)| format!("change line {n} of {p}, or {p} (line {n})")),
        // A lint report's path alone and a problem under it; kotlinc's line.
        path(),
        (number(), words()).prop_map(|(n, w)| format!("  {n}:5  error  {w}")),
        (path(), number(), words()).prop_map(|(p, n, w)| format!("e: {p}: ({n}, 3): {w}")),
        words().prop_map(|w| format!("error[E0308]: {w}")),
        select(
            &[
                "```",
                "```rust",
                "~~~",
                "  ```",
                "Traceback (most recent call last):",
                ""
            ][..]
        )
        .prop_map(str::to_string),
        words().prop_map(|w| format!("    {w} = f({w})")),
        words().prop_map(|w| format!(">>> {w}")),
        (ident(), ident()).prop_map(|(a, b)| format!("{a} = {b}(x)")),
        words(),
        any_text(80).prop_map(|t| t.replace('\n', " ")),
    ]
}

/// An issue: lines, joined by `\n` or `\r\n`.
fn issue() -> impl Strategy<Value = String> {
    (vec(line(), 0..40), any::<bool>())
        .prop_map(|(lines, crlf)| lines.join(if crlf { "\r\n" } else { "\n" }))
}

/// A text past the bound: an issue repeated until it is, then a tail. The
/// repetition sometimes has no line break at all.
fn huge() -> impl Strategy<Value = (String, String)> {
    (issue(), any_text(64), any_text(64), any::<bool>()).prop_map(|(unit, a, b, flat)| {
        let unit = if flat { unit.replace('\n', " ") } else { unit };
        let unit = if unit.is_empty() {
            "word\n".to_string()
        } else {
            unit + "\n"
        };
        let body = unit.repeat(MAX_TASK_BYTES / unit.len() + 1);
        (format!("{body}{a}"), format!("{body}{b}"))
    })
}

proptest! {
    #![proptest_config(config(64))]

    #[test]
    fn any_text_parses_to_pieces_of_itself(text in any_text(4000)) {
        check(&text)?;
    }

    #[test]
    fn issues_and_traces_parse_to_pieces_of_themselves(text in issue()) {
        check(&text)?;
    }
}

proptest! {
    #![proptest_config(config(8))]

    #[test]
    fn what_follows_the_bound_changes_nothing((a, b) in huge()) {
        check(&a)?;
        prop_assert!(TaskText::parse(&a) == TaskText::parse(&b));
    }
}
