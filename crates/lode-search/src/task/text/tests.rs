use super::*;

/// Fixtures: `tests/task/*.txt`, each beside the `.expected` JSON of its
/// parse. `UPDATE_EXPECT=1` rewrites the expectations; review the diff.
#[test]
fn task_texts_parse_as_expected() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/task");
    let inputs = lode_test_support::expect::inputs(&dir, "txt");
    assert!(inputs.len() >= 8, "fixtures in {}", dir.display());
    lode_test_support::expect::check(inputs.iter().map(|input| {
        let text = std::fs::read_to_string(input).unwrap();
        let mut parsed = TaskText::parse(&text);
        parsed.prose.clear(); // the prose is the input less the rest
        let mut actual = serde_json::to_string_pretty(&parsed).unwrap();
        actual.push('\n');
        (input.with_extension("expected"), actual)
    }));
}

#[test]
fn short_queries_are_not_tasks_and_issues_are() {
    for q in [
        "how are HTTP redirects followed",
        "Session.request",
        "how DSL protocols define layout anchor properties like left, top, edges, and center for views and guides",
    ] {
        assert!(!TaskText::is_task_shaped(q), "{q}");
    }
    for q in [
        "Sum of the elements of an identity matrix is zero.\nI think this is a bug.\n\nI created a matrix by M.T * M.",
        "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>",
        "The parser drops the last token. It happens for every input that ends in a comment, which breaks the formatter.",
    ] {
        assert!(TaskText::is_task_shaped(q), "{q}");
    }
}

#[test]
fn code_words_weigh_more_than_prose_and_repetition_saturates() {
    let t = TaskText::parse(
        "Crash on apply\nThe method fails when builtin_str is applied.\n\
         method method method method method",
    );
    let terms: HashMap<String, f64> = t.terms(&TermWeights::default()).into_iter().collect();
    assert!(terms["builtin_str"] > terms["method"], "{terms:?}");
    // Six occurrences count 1 + ln 6 ≈ 2.8 times one, not six times.
    let w = TermWeights::default();
    assert!((terms["method"] - w.prose * (1.0 + 6f64.ln())).abs() < 1e-9);
    assert!(terms["builtin"] > 0.0 && terms["str"] > 0.0);
}

#[test]
fn a_pasted_line_of_code_is_code_and_a_sentence_is_not() {
    for code in [
        "method = builtin_str(method)",
        "x.subs({1: 1.0})",
        "assert parse(\"a\") == [1, 2]",
    ] {
        assert!(looks_like_statement(code), "{code}");
    }
    for prose in [
        "I am using python3.4 and neutronclient (2.3.9) with requests (2.4.3).",
        "It fails when the list (of items) is empty",
        "See the docs",
    ] {
        assert!(!looks_like_statement(prose), "{prose}");
    }
    let t = TaskText::parse(
        "A problem\nIn sessions.py is a command:\n\nmethod = builtin_str(method)\nConverts method.",
    );
    assert_eq!(t.code, ["method = builtin_str(method)"]);
}

#[test]
fn a_long_text_is_read_up_to_the_bound() {
    let long = "word ".repeat(MAX_TASK_BYTES);
    let t = TaskText::parse(&format!("{long}\nsrc/late.py"));
    assert!(t.paths.is_empty());
    assert!(t.prose.len() <= MAX_TASK_BYTES + 1);
}

#[test]
fn a_title_stands_out_against_a_body_and_a_lone_title_keeps_its_names_above() {
    let w = TermWeights::default();
    let weight = |text: &str, term: &str| {
        let terms: HashMap<String, f64> = TaskText::parse(text).terms(&w).into_iter().collect();
        terms[term]
    };
    let issue = "Cookies dropped after redirect\n\nThe session loses them on a 302 response.";
    assert_eq!(weight(issue, "cookies"), w.title);
    assert_eq!(weight(issue, "session"), w.prose);
    // A subject alone: its identifier outweighs its plain words.
    let subject = "Fix cookies dropped in resolve_redirects";
    assert_eq!(weight(subject, "cookies"), w.lone_title);
    assert!(weight(subject, "resolve_redirects") > weight(subject, "cookies"));
}

#[test]
fn a_title_prefix_or_a_commit_scope_names_areas_and_a_change_kind_names_none() {
    for (title, areas) in [
        ("tpl/tplimpl: Fix panic on edit", vec!["tpl/tplimpl"]),
        (
            "refs, reftable: drop the lock early",
            vec!["refs", "reftable"],
        ),
        ("Builtin/Commit: honour -c", vec!["builtin/commit"]),
        ("fix: handle empty input", vec![]),
        ("feat(parser): accept tabs", vec!["parser"]),
        (
            "fix(runtime-core, compiler-sfc)!: keep slots",
            vec!["runtime-core", "compiler-sfc"],
        ),
        ("chore(deps): bump regex", vec![]),
        ("Bug: the server hangs", vec![]),
        ("ValueError: could not convert", vec!["valueerror"]),
        ("See https://example.com/a: it fails", vec![]),
        ("v1.2: release notes", vec![]),
        ("The parser drops the last token", vec![]),
    ] {
        assert_eq!(TaskText::parse(title).areas, areas, "{title}");
    }
}

#[test]
fn quoted_messages_and_backticked_code_keep_their_length_bounds() {
    let long_code = format!("`{}`", "plainword ".repeat(21));
    let long_quote = format!("\"{}\"", "a word ".repeat(44));
    let text = format!(
        "Title line\n\nIt says \"no table x\" and \"the table users is gone\"; \
         `parse_config` is called. {long_code} {long_quote}"
    );
    let t = TaskText::parse(&text);
    assert_eq!(t.messages, ["the table users is gone"]);
    assert!(t.named.contains(&"parse_config".to_string()), "{t:?}");
    assert!(!t.identifiers.contains(&"plainword".to_string()), "{t:?}");
}

#[test]
fn a_links_host_is_blanked_and_its_path_kept() {
    let blank = |n: usize| " ".repeat(n);
    for (line, want) in [
        (
            "see https://github.com/a/b.py",
            format!("see {}/a/b.py", blank(18)),
        ),
        (
            "→https://x.org/a.py (ok)",
            format!("→{}/a.py (ok)", blank(13)),
        ),
        ("(http://ü.de), then", format!("({}), then", blank(12))),
        ("://x and ftp://", format!("{} and {}", blank(4), blank(6))),
        ("no link here", "no link here".to_string()),
    ] {
        assert_eq!(without_url_hosts(line), want, "{line}");
    }
    assert_eq!(
        in_repository("gitlab.com/g/sub/p/-/blob/v1.2/src/a.rs"),
        "src/a.rs"
    );
    // A repository's own `blob` directory, or a link without a path after
    // its ref, stays as written.
    for p in ["storage/blob/v2/client.go", "github.com/o/r/blob/main"] {
        assert_eq!(in_repository(p), p);
    }
}

#[test]
fn a_diffs_prefix_goes_once_and_odd_hunks_read_safely() {
    let t = TaskText::parse("fix\n\n--- a/a/x.py\n+++ b/a/x.py\n@@ -99999999999,2 +1 @@\n-é\n+ü\n");
    assert_eq!(t.paths[0].path, "a/x.py", "{:?}", t.paths);
    // A start past u32 points nowhere; the marks of non-ASCII lines come off.
    assert_eq!(t.paths[0].line, None, "{:?}", t.paths);
    assert_eq!(t.code, ["é\nü"]);
}

#[test]
fn gccs_function_line_names_the_function() {
    for (line, want) in [
        (
            "src/net/socket.c: In function 'sock_connect':",
            Some("sock_connect"),
        ),
        (
            "a.cc: In member function ‘int* ns::T::get() const’:",
            Some("ns::T::get"),
        ),
        ("a.cc: In constructor ‘ns::T::T(int)’:", Some("ns::T::T")),
        ("a.cc: In lambda function:", None),
        ("In function 'x' of the docs", None),
    ] {
        assert_eq!(gcc_context_function(line), want, "{line}");
    }
}
