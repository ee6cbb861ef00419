//! `lode tools search|eval` end to end, on catalogs written by the tests and,
//! when `../shared/eval/toolsearch` is present, on the public benchmarks.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

fn lode(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lode"))
        .args(args)
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("lode-tools-test-config"),
        )
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> Value {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).unwrap();
    path
}

/// Two servers as a map of tools/list results.
fn servers() -> Value {
    json!({
        "github": {"tools": [
            {"name": "search_repositories", "description": "Search GitHub repositories by keyword.",
             "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}}},
            {"name": "create_issue", "description": "Open a new issue in a repository.",
             "inputSchema": {"type": "object", "properties": {
                "title": {"type": "string"}, "labels": {"type": "array", "items": {"type": "string",
                "description": "Triage label such as bug or enhancement"}}}}}]},
        "weather": {"tools": [
            {"name": "forecast", "description": "Weather forecast for a city.",
             "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]}
    })
}

#[test]
fn search_ranks_the_catalog_and_reports_what_it_activates() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write(dir.path(), "servers.json", &servers());
    let catalog = catalog.to_str().unwrap();

    let out = lode(&[
        "tools",
        "search",
        "--catalog",
        catalog,
        "open an issue",
        "--json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v = json_of(&out);
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["command"], "tools search");
    assert_eq!(v["mode"], "hybrid");
    assert_eq!(v["catalog"], json!({"tools": 3, "groups": 2}));
    let top = &v["hits"][0];
    assert_eq!(top["name"], "github__create_issue");
    assert_eq!(top["group"], "github");
    assert_eq!(top["activated"], true);
    assert!(top["schema_bytes"].as_u64().unwrap() > 50);
    assert_eq!(v["activated"][0], "github__create_issue");

    // A word found only in a nested parameter description, BM25 only.
    let v = json_of(&lode(&[
        "tools",
        "search",
        "--catalog",
        catalog,
        "triage enhancement",
        "--lexical",
        "--json",
    ]));
    assert_eq!(v["mode"], "lexical");
    assert_eq!(v["hits"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["hits"][0]["name"], "github__create_issue");

    // Text: one line per tool, then its description.
    let out = lode(&[
        "tools",
        "search",
        "--catalog",
        catalog,
        "weather in Oslo",
        "-k",
        "1",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert!(
        lines.next().unwrap().starts_with("weather__forecast  "),
        "{text}"
    );
    assert_eq!(lines.next().unwrap().trim(), "Weather forecast for a city.");
    assert!(lines.next().is_none(), "-k 1 prints one tool: {text}");
}

#[test]
fn search_marks_matches_over_the_schema_budget_and_exits_1_on_no_match() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write(dir.path(), "servers.json", &servers());
    let catalog = catalog.to_str().unwrap();
    let v = json_of(&lode(&[
        "tools",
        "search",
        "--catalog",
        catalog,
        "issue",
        "--schema-budget",
        "10",
        "--json",
    ]));
    assert_eq!(v["hits"][0]["activated"], false);
    assert_eq!(v["activated"], json!([]));

    let out = lode(&[
        "tools",
        "search",
        "--catalog",
        catalog,
        "zebra quasar",
        "--lexical",
    ]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_bad_catalog_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    for (content, what) in [
        ("{\"not\": \"tools\"", "not JSON"),
        ("[{\"description\": \"nameless\"}]", "missing \"name\""),
        (
            "[{\"name\": \"a\"}, {\"name\": \"a\"}]",
            "two tools are named \"a\"",
        ),
        ("[]", "no tools"),
    ] {
        let path = dir.path().join("bad.json");
        std::fs::write(&path, content).unwrap();
        let path = path.to_str().unwrap();
        let out = lode(&["tools", "search", "--catalog", path, "q"]);
        assert_eq!(out.status.code(), Some(2), "{content}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.starts_with("lode: ") && stderr.contains(what),
            "{stderr}"
        );
        assert!(stderr.contains("bad.json"), "names the file: {stderr}");

        let v = json_of(&lode(&[
            "tools",
            "search",
            "--catalog",
            path,
            "q",
            "--json",
        ]));
        assert_eq!(v["error"]["code"], "lode.bad_query");
    }
    let out = lode(&[
        "tools",
        "search",
        "--catalog",
        "/no/such/catalog.json",
        "q",
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(json_of(&out)["error"]["code"], "lode.bad_path");
}

#[test]
fn eval_scores_cases_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = write(dir.path(), "servers.json", &servers());
    let cases = dir.path().join("cases.jsonl");
    std::fs::write(
        &cases,
        [
            json!({"query": "new issue with a bug label", "expected": ["github__create_issue"]}),
            json!({"query": "find repositories about parsers", "expected": ["github__search_repositories"]}),
            json!({"query": "zebra quasar", "expected": ["weather__forecast"]}),
        ]
        .map(|c| c.to_string())
        .join("\n"),
    )
    .unwrap();
    let args = [
        "tools",
        "eval",
        "--catalog",
        catalog.to_str().unwrap(),
        "--cases",
        cases.to_str().unwrap(),
        "--lexical",
        "--json",
    ];
    let v = json_of(&lode(&args));
    assert_eq!(v["command"], "tools eval");
    assert_eq!(v["cases"], 3);
    assert_eq!(v["cases_from"], "file");
    // Two of three found first; the third matches nothing lexically.
    let recall = |k: u64| {
        v["recall"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p[0] == k)
            .unwrap()[1]
            .as_f64()
            .unwrap()
    };
    assert!((recall(1) - 2.0 / 3.0).abs() < 1e-9, "{v}");
    assert!((recall(10) - 2.0 / 3.0).abs() < 1e-9, "{v}");
    assert!((v["mrr_at_10"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    let context = &v["context"];
    assert!(context["all_tools"]["chars"].as_u64().unwrap() > 0);
    assert!(context["inventory_chars"].as_u64().unwrap() > 0);

    // Cases naming a tool the catalog lacks are refused.
    std::fs::write(
        &cases,
        json!({"query": "q", "expected": ["nope"]}).to_string(),
    )
    .unwrap();
    let out = lode(&args);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("\"nope\""));
}

/// The shared benchmark data, if this checkout has it beside it.
fn toolsearch_data() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval/toolsearch");
    dir.join("livemcpbench/tools.json").is_file().then_some(dir)
}

#[test]
fn livemcpbench_catalog_loads_searches_and_saves_context() {
    let Some(data) = toolsearch_data() else {
        eprintln!("skipped: ../shared/eval/toolsearch is absent");
        return;
    };
    let catalog = data.join("livemcpbench/tools.json");
    let catalog = catalog.to_str().unwrap();
    let v = json_of(&lode(&[
        "tools",
        "search",
        "--catalog",
        catalog,
        "read a file from disk",
        "--lexical",
        "--json",
    ]));
    assert_eq!(v["catalog"]["tools"], 527);
    assert_eq!(v["catalog"]["groups"], 70);
    assert!(
        v["hits"][0]["name"].as_str().unwrap().contains("read"),
        "{v}"
    );

    let v = json_of(&lode(&[
        "tools",
        "eval",
        "--catalog",
        catalog,
        "--lexical",
        "--json",
    ]));
    assert_eq!(v["cases_from"], "derived");
    assert!(v["cases"].as_u64().unwrap() > 300);
    assert!(
        v["context"]["saved"].as_f64().unwrap() > 0.8,
        "{}",
        v["context"]
    );
    assert!(v["mrr_at_10"].as_f64().unwrap() > 0.5, "{v}");
}
