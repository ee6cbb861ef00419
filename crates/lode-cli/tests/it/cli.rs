//! The `lode` binary end to end: indexing, search, grep, outline, status.

use crate::common::Repo;
use serde_json::Value;

#[test]
fn search_finds_definitions_and_reports_spans() {
    let repo = Repo::fixture("shop");
    let hits = repo.search_hits("apply_discount");
    assert_eq!(
        hits[0],
        (
            "src/shop/pricing.py".to_string(),
            Some("apply_discount".to_string())
        )
    );

    let v = repo.json(&["search", "payment gateway receipt", "-k", "3"]);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["command"], "search");
    let top = &v["hits"][0];
    assert_eq!(top["path"], "web/checkout.ts");
    assert_eq!(top["symbol"], "submitOrder");
    assert_eq!(top["kind"], "function");
    assert_eq!(top["start_line"], 3, "the chunk starts at the doc comment");
    assert_eq!(top["end_line"], 11);
    assert!(top["score"].as_f64().unwrap() > 0.0);
    assert!(v["hits"].as_array().unwrap().len() <= 3);
}

#[test]
fn tests_rank_below_the_code_they_test() {
    let repo = Repo::fixture("shop");
    let hits = repo.search_hits("cart add item subtotal");
    assert_eq!(hits[0].0, "src/shop/cart.py", "{hits:?}");
    let test_pos = hits.iter().position(|h| h.0 == "tests/test_cart.py");
    assert!(test_pos.is_none_or(|p| p > 0));
    // Asking for tests brings them back up.
    let hits = repo.search_hits("test add item");
    assert_eq!(hits[0].0, "tests/test_cart.py", "{hits:?}");
}

#[test]
fn search_filters_by_path_and_language() {
    let repo = Repo::fixture("shop");
    for (args, want) in [
        (vec!["search", "cart", "--path", "web"], "web/"),
        (vec!["search", "cart", "--lang", "ts"], "web/"),
        (
            vec!["search", "cart", "--lang", "python", "--path", "src"],
            "src/",
        ),
    ] {
        let v = repo.json(&args);
        let hits = v["hits"].as_array().unwrap();
        assert!(!hits.is_empty(), "{args:?}: {v}");
        for h in hits {
            assert!(
                h["path"].as_str().unwrap().starts_with(want),
                "{args:?}: {h}"
            );
        }
    }
    let out = repo.run(&["search", "cart", "--lang", "cobol"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn text_output_is_one_line_per_hit_then_snippet() {
    let repo = Repo::fixture("shop");
    let out = repo.ok(&["search", "retry_policy", "-k", "1"]);
    let first = out.lines().next().unwrap();
    assert!(first.starts_with("src/shop/pricing.py:16-"), "{out}");
    assert!(first.contains("function retry_policy"), "{out}");
    assert!(
        out.lines()
            .nth(1)
            .unwrap()
            .starts_with("    def retry_policy"),
        "{out}"
    );
}

#[test]
fn markdown_is_split_by_heading() {
    let repo = Repo::fixture("shop");
    let v = repo.json(&["search", "refunds support"]);
    let top = &v["hits"][0];
    assert_eq!(top["path"], "docs/guide.md");
    assert_eq!(top["symbol"], "Refunds");
    assert_eq!(top["kind"], "section");
}

#[test]
fn outline_shows_the_symbol_tree() {
    let repo = Repo::fixture("shop");
    let v = repo.json(&["outline", &repo.path("src/shop/cart.py").to_string_lossy()]);
    assert_eq!(v["path"], "src/shop/cart.py");
    assert_eq!(v["language"], "python");
    let cart = &v["symbols"][0];
    assert_eq!(cart["name"], "Cart");
    assert_eq!(cart["kind"], "class");
    let methods: Vec<&str> = cart["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(methods, ["__init__", "add_item", "subtotal", "total"]);
    assert_eq!(cart["children"][1]["kind"], "method");
    assert_eq!(
        cart["children"][1]["signature"],
        "def add_item(self, sku, quantity, unit_price)"
    );
    assert_eq!(cart["children"][1]["start_line"], 15);

    let text = repo.ok(&["outline", "src/shop/pricing.py"]);
    assert!(
        text.contains("L8-13  function  def apply_discount(amount, coupon)"),
        "{text}"
    );

    let out = repo.run(&["outline", "src/shop/missing.py"]);
    assert_eq!(out.status.code(), Some(2));

    // A directory: each file's symbols, compactly.
    let v = repo.json(&["outline", "src/shop"]);
    assert_eq!(v["files"].as_array().unwrap().len(), 2, "{v}");
    // Skipped for its content: the index knows why.
    repo.write("blob.dat2", [0u8, 1, 2, 0]);
    let v = repo.json(&["outline", "blob.dat2"]);
    assert_eq!(v["error"]["code"], "lode.not_found", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not indexed (binary)"),
        "{v}"
    );
    // Skipped by name: the walk never records it.
    repo.write("logo.png", [0u8, 1, 2, 0]);
    let v = repo.json(&["outline", "logo.png"]);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("skipped by the file policy"),
        "{v}"
    );
}

#[test]
fn grep_groups_hits_by_enclosing_symbol() {
    let repo = Repo::fixture("shop");
    let v = repo.json(&["grep", r"self\.items"]);
    let groups = v["groups"].as_array().unwrap();
    // __init__, add_item and subtotal each use self.items once; ordering by hits then path, line.
    let names: Vec<&str> = groups
        .iter()
        .map(|g| g["symbol"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["__init__", "add_item", "subtotal"]);
    assert_eq!(groups[1]["start_line"], 15);
    assert_eq!(groups[1]["lines"][0]["line"], 19);

    let text = repo.ok(&["grep", "-i", "DECIMAL\\(", "--path", "src/shop/pricing.py"]);
    let first = text.lines().next().unwrap();
    assert!(
        first.starts_with("function apply_discount  src/shop/pricing.py:8-13  (2)"),
        "{text}"
    );

    let out = repo.run(&["grep", "zzz_not_there"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn grep_caps_output_with_a_tail() {
    let repo = Repo::fixture("shop");
    let v = repo.json(&["grep", "a", "--max-lines", "3"]);
    let shown: usize = v["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["lines"].as_array().unwrap().len())
        .sum();
    assert_eq!(shown, 3);
    assert!(v["omitted_lines"].as_u64().unwrap() > 0);
    let text = repo.ok(&["grep", "a", "--max-lines", "3"]);
    assert!(text.contains("more lines — narrow the pattern"), "{text}");
}

#[test]
fn bad_regex_is_one_line_with_the_column() {
    let repo = Repo::fixture("shop");
    let out = repo.run(&["grep", "fn (foo"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("lode: bad regex") && err.contains("column 4"),
        "{err}"
    );
    let v = repo.json(&["grep", "fn (foo"]);
    assert_eq!(v["error"]["code"], "lode.bad_regex");
    // An empty pattern would match every line: refused the same way.
    let out = repo.run(&["grep", ""]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("lode: empty regex"), "{err}");
}

#[test]
fn bad_paths_are_reported_not_panicked() {
    let repo = Repo::fixture("shop");
    let missing = repo.path("nope");
    let out = repo.run(&["index", &missing.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no such file or directory") && err.lines().count() == 1,
        "{err}"
    );

    let file = repo.path("src/shop/cart.py");
    let out = repo.run(&["index", &file.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8(out.stderr)
            .unwrap()
            .contains("not a directory")
    );

    let out = repo.run(&["search", "x", "--path", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));

    let out = repo.run(&["search", "   "]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn status_reports_state_counts_and_skips() {
    let repo = Repo::fixture("shop");
    assert_eq!(repo.json(&["status"])["state"], "absent");
    repo.write("build/out.py", "def generated_build_output(): pass\n");
    repo.write(".hidden/secret.py", "def hidden_thing(): pass\n");
    repo.write("node_modules/lib/index.js", "function vendored() {}\n");
    repo.write("app.min.js", "var a=1;");
    repo.write("logo.png", [0x89, b'P', b'N', b'G', 0, 0]);
    repo.write("blob.dat2", [1u8, 0, 2, 0, 3]);
    repo.write("big.py", "x = 1\n".repeat(300_000));
    repo.write("yarn.lock", "# lock\n");
    repo.write(
        "gen.go",
        "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage gen\n",
    );
    repo.ok(&["index"]);
    let v = repo.json(&["status"]);
    assert_eq!(v["state"], "ready", "{v}");
    let s = &v["stats"];
    assert_eq!(s["files"], 5, "{v}");
    assert_eq!(s["by_language"]["python"]["files"], 3);
    let skipped = &s["skipped"];
    for (reason, n) in [
        ("hidden", 2),
        ("vendored", 1),
        ("minified", 1),
        ("binary", 2),
        ("too_large", 1),
        ("generated", 2),
    ] {
        assert_eq!(skipped[reason], n, "{reason}: {skipped}");
    }
    assert!(skipped.get("build").is_none());
    assert!(
        repo.search_hits("generated_build_output")
            .iter()
            .all(|h| !h.0.starts_with("build/"))
    );
    assert!(s["chunks"].as_u64().unwrap() >= 8);

    repo.write("src/shop/new.py", "def fresh(): pass\n");
    let v = repo.json(&["status"]);
    assert_eq!(v["state"], "stale");
    assert_eq!(v["changed_files"], 1);
}

#[test]
fn config_excludes_and_size_cap_apply() {
    let repo = Repo::fixture("shop");
    repo.write(".lode.toml", "[files]\nexclude = [\"docs\"]\n");
    let v = repo.json(&["index"]);
    assert_eq!(v["files"], 4, "{v}");
    assert_eq!(v["skipped"]["excluded"], 1);
    assert!(
        repo.search_hits("refunds support")
            .iter()
            .all(|h| !h.0.starts_with("docs/"))
    );

    repo.write(".lode.toml", "[files]\nmax_file_size = 400\n");
    let v = repo.json(&["index"]);
    assert!(v["skipped"]["too_large"].as_u64().unwrap() >= 2, "{v}");

    repo.write(".lode.toml", "[files]\nmax_fil_size = 400\n");
    let out = repo.run(&["index"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("max_fil_size") && err.contains(".lode.toml"),
        "{err}"
    );
}

#[test]
fn invalid_utf8_is_indexed_lossily_and_counted() {
    let repo = Repo::fixture("shop");
    let mut bytes = b"def latin_name():\n    return '".to_vec();
    bytes.extend([0xe9, 0xe8]);
    bytes.extend(b"'\n");
    repo.write("src/shop/latin.py", bytes);
    let v = repo.json(&["index"]);
    assert_eq!(v["lossy_utf8"], 1, "{v}");
    assert_eq!(repo.search_hits("latin_name")[0].0, "src/shop/latin.py");
}

#[test]
fn syntax_errors_keep_what_parses() {
    let repo = Repo::fixture("shop");
    repo.write(
        "src/shop/broken.py",
        "def good_one():\n    return 1\n\ndef broken(:\n    pass\n",
    );
    let v = repo.json(&["index"]);
    assert_eq!(v["parse_errors"], 1, "{v}");
    assert_eq!(
        repo.search_hits("good_one")[0],
        ("src/shop/broken.py".into(), Some("good_one".into()))
    );
}

#[cfg(unix)]
#[test]
fn symlinks_are_followed_only_inside_the_root() {
    let repo = Repo::fixture("shop");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("leak.py"),
        "def leaked_secret(): pass\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("leak.py"), repo.path("leak.py")).unwrap();
    std::os::unix::fs::symlink(outside.path(), repo.path("outside_dir")).unwrap();
    // Links to files the walk indexes anyway are duplicates…
    std::os::unix::fs::symlink(repo.path("src/shop/pricing.py"), repo.path("alias.py")).unwrap();
    std::os::unix::fs::symlink(repo.path("src/shop"), repo.path("shop_link")).unwrap();
    // …but a link into an ignored directory is how that file gets indexed.
    repo.write("build/generated_rules.py", "def generated_rule(): pass\n");
    std::os::unix::fs::symlink(repo.path("build/generated_rules.py"), repo.path("rules.py"))
        .unwrap();
    let v = repo.json(&["index"]);
    assert_eq!(v["skipped"]["symlink_outside_root"], 2, "{v}");
    assert_eq!(
        v["skipped"]["symlink_duplicate"], 3,
        "alias.py and the two files under shop_link: {v}"
    );
    assert_eq!(v["files"], 6, "{v}");
    assert!(
        repo.search_hits("leaked_secret")
            .iter()
            .all(|h| !h.0.contains("leak"))
    );
    let hits = repo.search_hits("apply_discount");
    assert_eq!(hits[0].0, "src/shop/pricing.py");
    assert!(
        hits.iter()
            .all(|h| h.0 != "alias.py" && !h.0.starts_with("shop_link/")),
        "{hits:?}"
    );
    assert_eq!(repo.search_hits("generated_rule")[0].0, "rules.py");
}

#[test]
fn index_prints_counts_and_json_totals() {
    let repo = Repo::fixture("shop");
    let text = repo.ok(&["index"]);
    assert!(text.starts_with("5 files, "), "{text}");
    let v: Value = repo.json(&["index"]);
    assert_eq!(v["files"], 5);
    assert_eq!(v["parsed"], 0, "nothing changed: {v}");
    assert!(v["symbols"].as_u64().unwrap() >= 10);
}

#[test]
fn eval_scores_cases_against_the_index() {
    let repo = Repo::fixture("shop");
    let cases = repo.path("cases.jsonl");
    std::fs::write(
        &cases,
        concat!(
            r#"{"query": "apply_discount", "relevant": [{"path": "src/shop/pricing.py", "start_line": 8, "end_line": 13}], "category": "symbol"}"#,
            "\n",
            r#"{"query": "payment gateway receipt", "relevant": ["web/checkout.ts"], "category": "semantic"}"#,
            "\n",
            r#"{"query": "zebra unicorn", "relevant": ["nowhere.py"], "category": "semantic"}"#,
            "\n"
        ),
    )
    .unwrap();
    let out = repo.ok(&["eval", &cases.to_string_lossy(), "--json"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    let s = &v["summary"];
    assert_eq!(s["queries"], 3);
    // Two of three queries find their target at rank 1; the third finds nothing.
    assert!(
        (s["ndcg10"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{v}"
    );
    assert!(
        (s["recall1"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9,
        "{v}"
    );

    std::fs::write(&cases, "{not json\n").unwrap();
    let out = repo.run(&["eval", &cases.to_string_lossy()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cases.jsonl:1"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn hybrid_search_finds_meaning_where_no_word_matches() {
    let repo = Repo::fixture("shop");
    // No token of this query occurs in the repository: only the embeddings can answer.
    let query = "monetary reductions";
    let out = repo.run(&["search", query, "--lexical"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "lexical search has nothing to match"
    );
    let hits = repo.search_hits(query);
    assert!(!hits.is_empty());
    assert!(
        hits.iter().take(3).any(|h| h.0 == "src/shop/pricing.py"),
        "{hits:?}"
    );
}

/// An issue as an agent would pass it: prose, a traceback, a Markdown list.
const ISSUE: &str = "- adding an item with quantity 0 raises instead of a clear error\n\
    - the message \"quantity must be positive\" is not shown\n\n\
    Traceback (most recent call last):\n  File \"/srv/shop/src/shop/cart.py\", line 18, in add_item\n\
    ValueError: quantity must be positive\n";

#[test]
fn a_task_text_runs_task_mode_and_any_text_is_a_query() {
    let repo = Repo::fixture("shop");
    // A leading `-` is the text's, not an option: never exit 2.
    for args in [
        vec!["search", ISSUE],
        vec!["ask", ISSUE],
        vec!["gather", ISSUE],
        vec!["search", "--mode", "query", "-x"],
        vec!["grep", "-quantity"],
    ] {
        let out = repo.run(&args);
        assert_ne!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v = repo.json(&["search", ISSUE]);
    assert_eq!(v["mode"], "task", "{v}");
    assert_eq!(v["files"][0]["path"], "src/shop/cart.py", "{v}");
    assert_eq!(v["hits"][0]["path"], "src/shop/cart.py");
    assert!(
        v["files"][0]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == "trace frame")
    );
    let text = repo.ok(&["search", ISSUE]);
    assert!(text.starts_with("[task mode"), "{text}");
    // Forced, the same text ranks chunks; a short query is query mode by itself.
    assert_eq!(
        repo.json(&["search", "--mode", "query", ISSUE])["mode"],
        "query"
    );
    let v = repo.json(&["search", "cart subtotal"]);
    assert_eq!(v["mode"], "query");
    assert!(v.get("files").is_none(), "{v}");
}

#[test]
fn the_files_view_lists_files_with_their_best_spans() {
    let repo = Repo::fixture("shop");
    let text = repo.ok(&["search", "--files", ISSUE]);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("[task mode"), "{text}");
    let file = lines.next().unwrap();
    assert!(file.starts_with("src/shop/cart.py  "), "{text}");
    assert!(file.contains("trace frame"), "{text}");
    let span = lines.next().unwrap();
    assert!(span.starts_with("  src/shop/cart.py:"), "{text}");
    // Query mode groups its chunks by file.
    let v = repo.json(&["search", "--files", "cart"]);
    let files = v["files"].as_array().unwrap();
    let hits = v["hits"].as_array().unwrap();
    let chunks: usize = files
        .iter()
        .map(|f| f["chunks"].as_array().unwrap().len())
        .sum();
    assert_eq!(chunks, hits.len(), "{v}");
    let out = repo.ok(&["ask", "--files", ISSUE]);
    assert!(out.contains("\nsrc/shop/cart.py  "), "{out}");
}

/// Runs `lode ARGS --json` with `stdin` on its standard input.
fn with_stdin(repo: &Repo, args: &[&str], stdin: &[u8]) -> std::process::Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = repo
        .command(args)
        .arg("--json")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // The reader may stop early (it reads a bounded prefix): a closed pipe is fine.
    let _ = pipe.write_all(stdin);
    drop(pipe);
    child.wait_with_output().unwrap()
}

/// A task's text can be longer than an argument may be (128 KiB on Linux,
/// 32 KiB for a whole Windows command line) and full of quotes: `-` reads it
/// from stdin.
#[test]
fn a_text_of_a_lone_hyphen_is_read_from_stdin() {
    let repo = Repo::fixture("shop");
    for command in ["search", "ask", "gather"] {
        let out = with_stdin(&repo, &[command, "-"], ISSUE.as_bytes());
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["hits"][0]["path"], "src/shop/cart.py", "{command}: {v}");
    }
    let v: Value =
        serde_json::from_slice(&with_stdin(&repo, &["search", "-"], ISSUE.as_bytes()).stdout)
            .unwrap();
    assert_eq!(v["mode"], "task", "{v}");
    // Longer than any argument, with a log pasted above the trace, not UTF-8
    // in places: read (its first MiB), never refused.
    let mut long = b"quantity 0 is refused with a traceback\n\n".to_vec();
    while long.len() < 3 << 20 {
        long.extend_from_slice(b"INFO worker processed item \xff in 12 ms status=ok\n");
    }
    let out = with_stdin(&repo, &["search", "--files", "-"], &long);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Empty, it is an empty query; stdin cannot carry two inputs at once.
    let out = with_stdin(&repo, &["search", "-"], b" \n");
    assert_eq!(out.status.code(), Some(2));
    for args in [
        ["gather", "-", "--context-file", "-"],
        ["search", "-", "--overlay", "-"],
    ] {
        let out = with_stdin(&repo, &args, ISSUE.as_bytes());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["error"]["message"].as_str().unwrap().contains("stdin"),
            "{v}"
        );
    }
}

/// Text that cannot be read (stdin or a context file that is a directory)
/// is one line naming it and the I/O exit status, not a search for nothing.
#[test]
fn an_unreadable_text_or_context_is_one_line_and_exit_4() {
    let repo = Repo::fixture("shop");
    let dir = repo.path("src");
    let stdin = std::fs::File::open(&dir).unwrap();
    let out = repo
        .command(&["search", "-"])
        .stdin(stdin)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(
        err.starts_with("lode: <stdin>:") && err.lines().count() == 1,
        "{err}"
    );
    let out = repo.run(&["gather", "cart", "--context-file", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert!(err.contains("src") && err.lines().count() == 1, "{err}");
}

#[test]
fn a_query_no_indexed_word_matches_says_there_is_no_strong_match() {
    let repo = Repo::fixture("shop");
    let out = repo.run(&["search", "zzqqxx_nomatch"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("no strong match"), "{err}");
    let v = repo.json(&["search", "zzqqxx_nomatch"]);
    assert_eq!(v["no_strong_match"], true, "{v}");
    assert!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("no strong match"))
    );
    // A word the index holds: a match, no flag, exit 0.
    let v = repo.json(&["search", "subtotal"]);
    assert!(v.get("no_strong_match").is_none(), "{v}");
    assert_eq!(repo.run(&["search", "subtotal"]).status.code(), Some(0));
    assert_eq!(repo.run(&["ask", "zzqqxx_nomatch"]).status.code(), Some(1));
}

/// A reproduction's entry call (`render(...)` in a code block) is not where
/// the fault is: the chunk the prose points at comes first in its file.
/// (The entry's own words are evidence as any chunk's: a `render` whose
/// docstring says the prose's words outranks the method, as the chunk
/// weights fitted on commits have it.)
#[test]
fn a_name_only_the_reproduction_calls_does_not_pick_the_chunk() {
    let repo = Repo::empty();
    // A class over the chunk target, so that each method is a chunk.
    let mut printer = String::from(
        "def render(expr, style=None):\n    \"\"\"Render an expression.\"\"\"\n    return Printer(style).doprint(expr)\n\n\nclass Printer:\n    def doprint(self, expr):\n        return getattr(self, '_print_' + type(expr).__name__)(expr)\n\n    def _print_MatrixElement(self, expr):\n        \"\"\"The parent's name, then the row and the column.\"\"\"\n        parent = self.doprint(expr.parent)\n        row, column = str(expr.i), str(expr.j)\n        return parent + '_' + row + column\n",
    );
    for kind in [
        "Symbol", "Integer", "Rational", "Float", "Add", "Mul", "Pow", "Function",
    ] {
        printer.push_str(&format!(
            "\n    def _print_{kind}(self, expr):\n        \"\"\"The {kind} as text, its arguments printed in turn.\"\"\"\n        args = [self.doprint(a) for a in expr.args]\n        return '{kind}(' + ', '.join(args) + ')'\n"
        ));
    }
    repo.write("pkg/printer.py", printer);
    repo.write(
        "pkg/matrix.py",
        "class MatrixElement:\n    def __init__(self, parent, i, j):\n        self.parent, self.i, self.j = parent, i, j\n",
    );
    let task = "Text of a MatrixElement loses the separator between its indices\n\n\
        The indices of an element of a matrix are printed run together, so the text\n\
        cannot be read back and two different elements print the same.\n\n\
        ```python\n>>> render(m[1, 12])\n'm_112'\n>>> render(m[11, 2])\n'm_112'\n```\n";
    let v = repo.json(&["search", task]);
    assert_eq!(v["mode"], "task", "{v}");
    let in_printer: Vec<&str> = v["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["path"] == "pkg/printer.py")
        .map(|h| h["symbol"].as_str().unwrap_or("-"))
        .collect();
    assert_eq!(in_printer.first(), Some(&"_print_MatrixElement"), "{v}");
}

/// `lode setup HOST --write` adds the entry to the host's user config under
/// HOME, once, and the entry starts this binary's MCP server.
#[test]
fn setup_writes_the_hosts_config_once() {
    let home = tempfile::tempdir().unwrap();
    let setup = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_lode"))
            .arg("setup")
            .args(args)
            .env("HOME", home.path())
            .output()
            .unwrap()
    };
    let printed = setup(&["cursor"]);
    assert!(printed.status.success());
    let entry: Value = serde_json::from_slice(&printed.stdout).unwrap();
    assert_eq!(entry["mcpServers"]["lode"]["args"][0], "mcp", "{entry}");
    assert!(
        !home.path().join(".cursor").exists(),
        "printing writes nothing"
    );
    for _ in 0..2 {
        assert!(setup(&["cursor", "--write"]).status.success());
    }
    let written: Value = serde_json::from_str(
        &std::fs::read_to_string(home.path().join(".cursor/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(written, entry);
    let command = written["mcpServers"]["lode"]["command"].as_str().unwrap();
    let version = std::process::Command::new(command)
        .arg("--version")
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("lode "));
    let codex = setup(&["codex", "--write", "--json"]);
    let v: Value = serde_json::from_slice(&codex.stdout).unwrap();
    assert_eq!(v["written"], "added", "{v}");
}

/// Rows a query cannot decode mark the index damaged: it is rebuilt and the
/// command answers as from a fresh index, instead of failing every time.
#[test]
fn a_damaged_index_is_rebuilt_not_reported_forever() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let fresh_map = repo.ok(&["map"]);
    let db = repo.database();
    let conn = lode_index::open_database(&db).unwrap();
    conn.execute("UPDATE symbols SET start_line = 'not a number'", [])
        .unwrap();
    drop(conn);
    // With --no-refresh nothing is rebuilt: the damage is reported.
    let out = repo.run(&["map", "--no-refresh"]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // doctor checks every row, says what it found, and leaves it for a rebuild.
    let v = repo.json(&["doctor"]);
    assert_eq!(v["state"], "damaged", "{v}");
    assert!(v["reason"].as_str().unwrap().contains("symbols"), "{v}");
    assert!(v["suggestions"].to_string().contains("damaged"), "{v}");
    assert_eq!(repo.json(&["status"])["state"], "damaged");
    let out = repo.run(&["map"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("damaged"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), fresh_map);
    // And it stays well: the next command needs no rebuild.
    let out = repo.run(&["map"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("damaged"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), fresh_map);
}

/// Another program's read-write connection (no page checks) copies lode's
/// write-ahead log into the file as it closes: the README's warning. The
/// next command finds pages it cannot verify and answers from a rebuild; a
/// read-only connection leaves the index as it was.
#[test]
fn a_foreign_read_write_connection_costs_a_rebuild_not_an_answer() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let fresh_map = repo.ok(&["map"]);
    let db = repo.database();
    let look = |flags| {
        let conn = rusqlite::Connection::open_with_flags(&db, flags).unwrap();
        let n: i64 = (conn.query_row("SELECT count(*) FROM files", [], |r| r.get(0))).unwrap();
        assert!(n > 0);
    };
    look(rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY);
    let out = repo.run(&["map"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("unreadable"));
    assert_eq!(String::from_utf8_lossy(&out.stdout), fresh_map);
    assert!(wal_of(&db).exists(), "a log to copy");
    look(rusqlite::OpenFlags::default());
    let out = repo.run(&["map"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("a page failed its check"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), fresh_map);
}

fn wal_of(db: &std::path::Path) -> std::path::PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-wal");
    name.into()
}

/// A build counts every file it did not need to read as unchanged.
#[test]
fn a_no_op_build_counts_every_file_unchanged() {
    let repo = Repo::fixture("shop");
    let first = repo.json(&["index"]);
    let files = first["files"].as_u64().unwrap();
    assert_eq!(first["parsed"].as_u64(), Some(files), "{first}");
    let again = repo.json(&["index"]);
    assert_eq!(again["parsed"], 0, "{again}");
    assert_eq!(again["unchanged"].as_u64(), Some(files), "{again}");
    repo.write("src/shop/extra.py", "def extra():\n    return 1\n");
    let edit = repo.json(&["index"]);
    assert_eq!(edit["parsed"], 1, "{edit}");
    assert_eq!(edit["unchanged"].as_u64(), Some(files), "{edit}");
    assert_eq!(edit["files"].as_u64(), Some(files + 1), "{edit}");
}

/// Each command lists only the options that apply to it.
#[test]
fn help_lists_only_the_options_that_apply() {
    let help = |cmd: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_lode"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let gateway = help("gateway");
    for hidden in ["--json", "--cache-dir", "--no-refresh", "--model", "--root"] {
        assert!(
            !gateway.contains(hidden),
            "gateway lists {hidden}:\n{gateway}"
        );
    }
    assert!(gateway.contains("--config"));
    let mcp = help("mcp");
    assert!(!mcp.contains("--json"), "{mcp}");
    assert!(
        mcp.contains("--root") && mcp.contains("--max-chars"),
        "{mcp}"
    );
    assert!(help("search").contains("--json"));
}

#[test]
fn a_remote_url_with_credentials_is_refused_and_not_shown() {
    let repo = Repo::fixture("shop");
    let url = "nats://runner:hunter2pw@127.0.0.1:1";
    for args in [
        vec!["index", "--remote", url],
        vec!["enqueue", "https://example.invalid/r.git", "--remote", url],
        vec!["search", "cart", "--all-repos", "--remote", url],
        vec!["catalog", "--remote", url],
        // Flags after the patterns are flags, not patterns.
        vec![
            "cluster",
            "allow",
            "team-a",
            "https://git.example/*",
            "--remote",
            url,
        ],
        vec!["mcp", "--remote", url],
    ] {
        let out = repo.run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(
            err.contains("credentials") && !err.contains("hunter2pw"),
            "{err}"
        );
    }
}

#[test]
fn an_unreachable_shared_cache_is_a_note_and_a_local_build() {
    let repo = Repo::fixture("shop");
    // Outside git the cache is not used (one note); in a clean checkout it is
    // tried: port 1 on loopback refuses at once (one note).
    let v = repo.json(&["index", "--remote", "nats://127.0.0.1:1"]);
    assert_eq!(v["remote"]["outcome"], "local", "{v}");
    assert!(v["notes"].to_string().contains("not a git checkout"), "{v}");
    let root = repo.path("");
    for args in [
        &["init", "-q"][..],
        &["add", "-A"],
        &[
            "-c",
            "user.email=t@t",
            "-c",
            "user.name=t",
            "commit",
            "-qm",
            "shop",
        ],
    ] {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&root)
            .args(args)
            .status()
            .unwrap()
            .success();
        assert!(ok, "git {args:?}");
    }
    let v = repo.json(&["index", "--remote", "nats://127.0.0.1:1"]);
    assert!(v["remote"]["tree"].is_string(), "{v}");
    assert!(v["notes"].to_string().contains("cannot connect"), "{v}");
    assert!(v["files"].as_u64().unwrap() > 0, "{v}");
    assert_eq!(v["remote"]["outcome"], "local", "{v}");
    let notes = v["notes"].as_array().unwrap();
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.as_str().unwrap().contains("remote cache"))
            .count(),
        1,
        "{notes:?}"
    );
    // Asking the service itself, unreachable, is a clear error.
    let out = repo.run(&[
        "search",
        "cart",
        "--all-repos",
        "--remote",
        "nats://127.0.0.1:1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("lode: remote: cannot connect"), "{err}");
}
