//! `lode gather` and `lode ask` end to end, on lode-gather's chain fixture
//! (`sync_folder → upload_with_retries → backoff_delay → jitter`), with the
//! deterministic model and with a fake decision endpoint set in the user config.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::Repo;
use lode_test_support::copy_dir;
use lode_test_support::fake_decision::{Fake, Reply, chain_model};
use serde_json::Value;

const QUERY: &str = "retry failed uploads after a delay";

fn chain() -> Repo {
    let repo = Repo::empty();
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../lode-gather/tests/fixtures/chain"),
        repo.root(),
    );
    repo
}

/// Writes the user config (`$XDG_CONFIG_HOME/lode/config.toml`).
fn user_config(repo: &Repo, text: &str) {
    let dir = repo.cache.path().join("config/lode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn endpoint_config(url: &str, deadline_ms: u64) -> String {
    format!(
        "[gather]\ndecision = \"endpoint\"\nendpoint = \"{url}\"\nmodel = \"fake\"\ndeadline_ms = {deadline_ms}\n"
    )
}

fn footer(out: &str) -> &str {
    out.lines().last().unwrap_or("")
}

#[test]
fn gather_prints_the_search_unchanged_then_related_code() {
    let repo = chain();
    let search = repo.ok(&["search", QUERY, "-k", "1"]);
    let out = repo.ok(&["gather", QUERY, "-k", "1"]);
    let (head, section) = out.split_once("\n\n").unwrap();
    assert_eq!(format!("{head}\n"), search);
    assert!(
        section.starts_with("Related code (gathered for this search, "),
        "{out}"
    );
    assert!(
        section.contains("sync/noise.py:4-6 function jitter · called by backoff_delay\n"),
        "{out}"
    );
    assert!(
        section.contains(
            "sync/folder.py:6-12 function sync_folder · calls seed upload_with_retries\n"
        ),
        "{out}"
    );
    assert!(
        footer(&out).starts_with("gather: model=deterministic rounds="),
        "{out}"
    );
    assert!(footer(&out).contains(" fallback=none "), "{out}");

    // JSON: the search's fields as `search` gives them, and `gather`.
    let s = repo.json(&["search", QUERY, "-k", "1"]);
    let v = repo.json(&["gather", QUERY, "-k", "1"]);
    assert_eq!(v["command"], "gather");
    assert_eq!(v["hits"], s["hits"]);
    assert_eq!(v["query"], s["query"]);
    let g = &v["gather"];
    assert_eq!(g["ran"], true);
    assert_eq!(g["model"], "deterministic");
    let nodes = g["nodes"].as_array().unwrap();
    let jitter = nodes
        .iter()
        .find(|n| n["name"] == "jitter")
        .expect("jitter kept");
    assert_eq!(jitter["edge"], "called by backoff_delay");
    assert_eq!(jitter["relation"], "callee");
    assert_eq!(jitter["hop"], 2);
    assert!(jitter["body"].as_str().unwrap().contains("random.uniform"));
    assert!(g["considered"].as_u64().unwrap() >= nodes.len() as u64);
}

#[test]
fn an_endpoint_in_the_user_config_steers_the_walk_and_never_sees_the_log() {
    let repo = chain();
    let fake = Fake::start(chain_model);
    user_config(&repo, &endpoint_config(&fake.url, 5_000));
    let trace = repo.cache.path().join("trace.txt");
    std::fs::write(
        &trace,
        "SECRET-TRACE: the user asked why uploads hammer the server",
    )
    .unwrap();
    let out = repo.run(&[
        "gather",
        QUERY,
        "-k",
        "1",
        "--context-file",
        trace.to_str().unwrap(),
    ]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(0), "{stdout}{stderr}");
    let f = footer(&stdout);
    assert!(
        f.starts_with("gather: model=endpoint rounds=2 ")
            && f.contains(" kept=3 fallback=none stop=model "),
        "{stdout}"
    );
    for name in ["backoff_delay", "jitter", "sync_folder"] {
        assert!(
            stdout.contains(&format!("function {name} · ")),
            "{name}: {stdout}"
        );
    }
    assert!(!stdout.contains("function send_bytes · "), "{stdout}");
    // The model got the trace; nothing lode printed repeats it.
    assert!(fake.bodies().iter().all(|b| b.contains("SECRET-TRACE")));
    assert!(
        !stdout.contains("SECRET") && !stderr.contains("SECRET"),
        "{stderr}"
    );
}

#[test]
fn the_trace_can_come_from_stdin() {
    use std::io::Write;
    let repo = chain();
    let fake = Fake::start(chain_model);
    user_config(&repo, &endpoint_config(&fake.url, 5_000));
    let mut child = repo
        .command(&["gather", QUERY, "-k", "1", "--context-file", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"STDIN-TRACE about upload retries")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(fake.bodies().iter().any(|b| b.contains("STDIN-TRACE")));
    assert!(!String::from_utf8_lossy(&out.stdout).contains("STDIN-TRACE"));
    // A trace file that does not exist is bad input, before any search.
    let out = repo.run(&["gather", QUERY, "--context-file", "/nonexistent/trace"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_hanging_endpoint_costs_the_deadline_and_no_more() {
    let repo = chain();
    let fake = Fake::start(|_| Reply::Hang(Duration::from_secs(30)));
    user_config(&repo, &endpoint_config(&fake.url, 300));
    repo.ok(&["index"]);
    let t = Instant::now();
    let out = repo.ok(&["gather", QUERY, "-k", "1"]);
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "took {:?}",
        t.elapsed()
    );
    let f = footer(&out);
    assert!(f.contains(" fallback=timeout stop=deadline "), "{out}");
    // The round still kept what the deterministic order keeps.
    assert!(
        out.contains(" · called by seed upload_with_retries\n"),
        "{out}"
    );
    assert!(
        out.starts_with("sync/uploader.py:7-13  function upload_with_retries"),
        "{out}"
    );
}

#[test]
fn garbage_and_unknown_ids_fall_back() {
    for (reply, kind) in [
        ("I think 2 and 3 look useful.", "invalid_json"),
        (
            r#"{"keep": [777], "expand": [], "stop": false}"#,
            "unknown_ids",
        ),
    ] {
        let repo = chain();
        let fake = Fake::start(move |_| Reply::Content(reply.to_string()));
        user_config(&repo, &endpoint_config(&fake.url, 5_000));
        let out = repo.ok(&["gather", QUERY, "-k", "1"]);
        assert!(
            footer(&out).contains(&format!(" fallback={kind} ")),
            "{out}"
        );
        assert!(fake.requests() >= 1);
        assert!(
            out.contains("function sync_folder · calls seed upload_with_retries"),
            "{out}"
        );
    }
}

#[test]
fn a_project_cannot_choose_the_endpoint() {
    let repo = chain();
    let fake = Fake::start(chain_model);
    repo.write(
        ".lode.toml",
        format!("[gather]\ndecision = \"endpoint\"\nendpoint = \"{}\"\nmodel = \"m\"\napi_key_env = \"HOME\"\n", fake.url),
    );
    let out = repo.run(&["gather", QUERY, "-k", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    for key in ["decision", "endpoint", "model", "api_key_env"] {
        assert!(
            stderr.contains(&format!("ignored gather.{key} in .lode.toml")),
            "{key}: {stderr}"
        );
    }
    assert!(
        footer(&stdout).starts_with("gather: model=deterministic "),
        "{stdout}"
    );
    assert_eq!(fake.requests(), 0);
}

#[test]
fn an_unusable_endpoint_is_a_note_not_a_failure() {
    let repo = chain();
    user_config(
        &repo,
        "[gather]\ndecision = \"endpoint\"\nendpoint = \"file:///etc/passwd\"\n",
    );
    let v = repo.json(&["gather", QUERY, "-k", "1"]);
    let notes = v["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().contains("http or https")),
        "{v}"
    );
    assert_eq!(v["gather"]["model"], "deterministic");
    assert!(!v["gather"]["nodes"].as_array().unwrap().is_empty());
}

#[test]
fn identifier_queries_do_not_walk_and_the_budget_holds() {
    let repo = chain();
    let out = repo.ok(&["gather", "upload_with_retries", "-k", "1"]);
    assert!(out.ends_with("\ngather: not run — identifier query: related code is gathered for natural-language queries\n"), "{out}");
    let v = repo.json(&["gather", QUERY, "-k", "1", "--max-tokens", "40"]);
    let g = &v["gather"];
    assert_eq!(g["max_tokens"], 40);
    let used: u64 = g["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["tokens"].as_u64().unwrap())
        .sum();
    assert!(used <= 40 && used == g["tokens"].as_u64().unwrap(), "{g}");
}

#[test]
fn a_file_deleted_since_the_build_does_not_break_gather() {
    let repo = chain();
    repo.ok(&["index"]);
    std::fs::remove_file(repo.path("sync/noise.py")).unwrap();
    let out = repo.ok(&["gather", QUERY, "-k", "1", "--no-refresh"]);
    assert!(
        out.contains("function jitter · called by backoff_delay\n  (not shown: the file changed since the index was built)\n"),
        "{out}"
    );
    // Refreshed, jitter is gone from the graph.
    let out = repo.ok(&["gather", QUERY, "-k", "1"]);
    assert!(!out.contains("function jitter"), "{out}");
}

#[test]
fn ask_reranks_hits_and_adds_code_one_call_away() {
    let repo = chain();
    let s = repo.json(&["search", QUERY, "-k", "2"]);
    let v = repo.json(&["ask", QUERY, "-k", "2"]);
    assert_eq!(v["command"], "ask");
    let hits = v["hits"].as_array().unwrap();
    let from_search: Vec<&Value> = hits.iter().filter(|h| h["source"] == "search").collect();
    assert_eq!(from_search.len(), s["hits"].as_array().unwrap().len());
    let hit_names: Vec<&str> = s["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|h| h["symbol"].as_str())
        .collect();
    let added: Vec<&Value> = hits.iter().filter(|h| h["source"] == "graph").collect();
    assert!(!added.is_empty() && added.len() <= 5, "{v}");
    for a in &added {
        let edge = a["edge"].as_str().unwrap();
        assert!(
            hit_names.contains(&edge.rsplit(' ').next().unwrap()),
            "{edge}"
        );
        assert!(a["search_score"].is_null());
    }
    assert!(v["graph"]["ran"] == true && v["graph"]["added"] == added.len() as u64);
    let out = repo.ok(&["ask", QUERY, "-k", "2", "--extra", "1"]);
    assert_eq!(out.matches("  + ").count(), 1, "{out}");
    assert!(footer(&out).starts_with("ask: seeds="), "{out}");
}
