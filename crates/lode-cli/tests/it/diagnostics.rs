//! The diagnostics log (`<cache>/diagnostics.jsonl`): off by default, on in
//! the user config only, written by the CLI's query commands and by `lode
//! mcp`, and never holding what was asked unless `log_queries = true`.

use std::process::Stdio;

use crate::common::Repo;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

const SECRET: &str = "zebra_quasar_token";

fn user_config(repo: &Repo, text: &str) {
    let dir = repo.cache.path().join("config/lode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn log_text(repo: &Repo) -> Option<String> {
    std::fs::read_to_string(repo.cache.path().join("diagnostics.jsonl")).ok()
}

fn records(repo: &Repo) -> Vec<Value> {
    log_text(repo)
        .expect("a diagnostics log")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The repository id the log uses: the hash in the index directory's name.
fn root_id(repo: &Repo) -> String {
    let dir = repo.index_dir();
    let name = dir.file_name().unwrap().to_string_lossy().into_owned();
    name.rsplit_once('-').unwrap().1.to_string()
}

#[test]
fn off_by_default() {
    let repo = Repo::fixture("shop");
    repo.ok(&["search", "Cart"]);
    assert!(log_text(&repo).is_none());
    // A project file cannot switch it on.
    repo.write(
        ".lode.toml",
        "[diagnostics]\nenabled = true\nlog_queries = true\n",
    );
    let out = repo.run(&["search", "Cart"]);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ignored [diagnostics] in .lode.toml"), "{err}");
    assert!(log_text(&repo).is_none());
}

#[test]
fn cli_records_counts_and_codes_but_not_the_query() {
    let repo = Repo::fixture("shop");
    user_config(&repo, "[diagnostics]\nenabled = true\n");
    repo.write(
        "src/shop/secret.py",
        format!("def {SECRET}():\n    return 1\n"),
    );
    repo.ok(&["search", SECRET]);
    repo.ok(&["grep", SECRET]);
    let bad = repo.run(&["grep", "fn ("]);
    assert_eq!(bad.status.code(), Some(2));
    repo.ok(&["index"]); // not a query: not logged

    let text = log_text(&repo).unwrap();
    assert!(!text.contains(SECRET), "the query leaked: {text}");
    assert!(!text.contains("return 1"), "file content leaked: {text}");
    assert!(
        !text.contains(&*repo.root().to_string_lossy()),
        "the root path: {text}"
    );
    let r = records(&repo);
    let commands: Vec<&str> = r.iter().map(|r| r["command"].as_str().unwrap()).collect();
    assert_eq!(commands, ["search", "grep", "grep"], "{text}");
    assert!(r.iter().all(|r| r["source"] == "cli"), "{text}");
    assert_eq!(r[0]["root"], root_id(&repo), "{text}");
    assert!(r[0]["hits"].as_u64().unwrap() >= 1, "{text}");
    assert!(
        r[0]["refreshed"].as_u64().unwrap() >= 5,
        "the first build: {text}"
    );
    assert!(r[0]["us"].as_u64().unwrap() > 0);
    assert_eq!(r[1]["refreshed"], 0, "{text}");
    assert_eq!(r[1]["hits"], 1, "{text}");
    assert_eq!(r[2]["error"], "lode.bad_regex", "{text}");
    assert!(r.iter().all(|r| r.get("query").is_none()), "{text}");
}

#[test]
fn log_queries_records_what_was_asked() {
    let repo = Repo::fixture("shop");
    user_config(&repo, "[diagnostics]\nenabled = true\nlog_queries = true\n");
    repo.ok(&["search", "Cart"]);
    let r = records(&repo);
    assert_eq!(r[0]["query"], "Cart");
}

#[test]
fn a_refresh_skipped_for_another_writer_is_a_fallback() {
    let repo = Repo::fixture("shop");
    user_config(&repo, "[diagnostics]\nenabled = true\n");
    repo.ok(&["index"]);
    let _lock = repo.hold_lock();
    repo.write("src/shop/new.py", "def added(): pass\n");
    repo.ok(&["search", "Cart"]);
    let r = records(&repo);
    assert_eq!(
        r[0]["fallbacks"],
        json!(["refresh_skipped_locked"]),
        "{r:?}"
    );
}

#[test]
fn doctor_reports_query_metrics_from_the_log() {
    let repo = Repo::fixture("shop");
    let v = repo.json(&["doctor"]);
    assert_eq!(v["query_metrics"]["enabled"], false, "{v}");
    let text = repo.ok(&["doctor"]);
    assert!(
        text.contains("[diagnostics] enabled = true"),
        "says how to switch it on: {text}"
    );

    user_config(&repo, "[diagnostics]\nenabled = true\n");
    for q in ["Cart", "apply_discount", "total"] {
        repo.ok(&["search", q]);
    }
    repo.run(&["grep", "fn ("]);
    let v = repo.json(&["doctor"]);
    let m = &v["query_metrics"];
    assert_eq!(m["enabled"], true, "{v}");
    assert_eq!(m["records"], 4, "{v}");
    let search = m["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == "search")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(search["count"], 3, "{v}");
    assert_eq!(search["cache_hits"], 0, "{v}");
    let (p50, p95) = (
        search["p50_ms"].as_f64().unwrap(),
        search["p95_ms"].as_f64().unwrap(),
    );
    assert!(p50 > 0.0 && p95 >= p50, "{v}");
    let grep = m["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == "grep")
        .unwrap();
    assert_eq!(grep["errors"], 1, "{v}");
    let text = repo.ok(&["doctor"]);
    assert!(text.contains("search  3 calls"), "{text}");
}

type Client = RunningService<RoleClient, ()>;

async fn connect(repo: &Repo) -> Client {
    let mut cmd = repo.command(&["mcp"]);
    cmd.stderr(Stdio::null());
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    ().serve(transport).await.expect("initialize")
}

async fn call(client: &Client, tool: &str, args: Value) {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().unwrap().clone());
    client.call_tool(params).await.expect("a tool result");
}

#[tokio::test]
async fn the_mcp_server_writes_a_record_per_call() {
    let repo = Repo::fixture("shop");
    user_config(&repo, "[diagnostics]\nenabled = true\n");
    let client = connect(&repo).await;
    call(&client, "search", json!({"query": SECRET})).await;
    call(&client, "search", json!({"query": SECRET})).await;
    call(
        &client,
        "gather",
        json!({"query": "how is the cart total computed", "context": "TRACE_TEXT_MARKER"}),
    )
    .await;
    call(&client, "grep", json!({"pattern": "fn ("})).await;
    client.cancel().await.unwrap();

    let text = log_text(&repo).unwrap();
    assert!(!text.contains(SECRET), "{text}");
    assert!(!text.contains("TRACE_TEXT_MARKER"), "{text}");
    let r = records(&repo);
    assert_eq!(r.len(), 4, "{text}");
    assert!(r.iter().all(|r| r["source"] == "mcp"), "{text}");
    assert_eq!(r[0]["cache_hit"], false, "the first call indexes: {text}");
    assert_eq!(r[1]["cache_hit"], true, "the kept index answers: {text}");
    assert_eq!(r[1]["root"], root_id(&repo), "{text}");
    assert!(r[1]["hits"].as_u64().unwrap() >= 1, "{text}");
    assert_eq!(r[2]["command"], "gather", "{text}");
    assert_eq!(r[3]["error"], "lode.bad_regex", "{text}");
}

#[tokio::test]
async fn the_mcp_server_logs_queries_only_when_asked_and_never_the_trace() {
    let repo = Repo::fixture("shop");
    user_config(&repo, "[diagnostics]\nenabled = true\nlog_queries = true\n");
    let client = connect(&repo).await;
    call(
        &client,
        "gather",
        json!({"query": SECRET, "context": "TRACE_TEXT_MARKER"}),
    )
    .await;
    client.cancel().await.unwrap();
    let r = records(&repo);
    assert_eq!(r[0]["query"], json!({"query": SECRET}), "{r:?}");
    assert!(!log_text(&repo).unwrap().contains("TRACE_TEXT_MARKER"));
}
