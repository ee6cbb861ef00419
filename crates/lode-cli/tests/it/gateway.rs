//! `lode gateway` end to end: the real binary, driven by the rmcp client over
//! stdio, in front of real stdio MCP servers — this test binary, started as
//! the fake server of `crates/lode-gateway/tests/it/fake_server.rs`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lode_test_support::mcp::{Listener, activated, call, names, text};
use rmcp::model::Tool;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::fake_server;

/// A `[[server]]` table starting this binary as a fake server.
fn server(name: &str, kit: &str, flags: &[&str]) -> String {
    let exe = std::env::current_exe().unwrap();
    let mut args = vec![fake_server::ARG, "--kit", kit, "--name", name];
    args.extend(flags);
    // JSON strings are TOML basic strings.
    format!(
        "[[server]]\nname = {}\ncommand = {}\nargs = {}\n",
        json!(name),
        json!(exe.display().to_string()),
        json!(args)
    )
}

fn write_config(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("gateway.toml");
    std::fs::write(&path, text).unwrap();
    path
}

type Client = RunningService<RoleClient, Listener>;

async fn gateway(config: &Path) -> (Client, Arc<AtomicUsize>) {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_lode"));
    cmd.arg("gateway").arg("--config").arg(config);
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let listener = Listener::default();
    let changed = Arc::clone(&listener.changed);
    (
        listener.serve(transport).await.expect("initialize"),
        changed,
    )
}

/// What a `tools/list` puts in a client's context: the tools array as JSON.
fn chars(tools: &[Tool]) -> usize {
    serde_json::to_string(tools).unwrap().chars().count()
}

async fn wait_for(what: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if what() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn search_activates_tools_and_the_tool_list_stays_small() {
    let kits = ["files", "weather", "issues"];
    // The baseline: a host connected to every server binds every tool.
    let mut all_bound = 0;
    let mut tool_count = 0;
    for kit in kits {
        let mut cmd = tokio::process::Command::new(std::env::current_exe().unwrap());
        cmd.args([fake_server::ARG, "--kit", kit]);
        let direct = ().serve(TokioChildProcess::new(cmd).unwrap()).await.unwrap();
        let tools = direct.list_all_tools().await.unwrap();
        all_bound += chars(&tools);
        tool_count += tools.len();
        direct.cancel().await.unwrap();
    }

    let dir = tempfile::tempdir().unwrap();
    let servers: String = kits.iter().map(|k| server(k, k, &[])).collect();
    let config = write_config(
        dir.path(),
        &format!("direct = [\"files__read_file\"]\n\n{servers}"),
    );
    let (client, changed) = gateway(&config).await;

    let before = client.list_all_tools().await.unwrap();
    assert_eq!(names(&before), ["tool_search", "files__read_file"]);
    let inventory = before[0].description.as_deref().unwrap();
    assert!(
        inventory.contains("\nissues: issues__create_issue, "),
        "{inventory}"
    );
    let r = call(&client, "issues__create_issue", json!({"owner": "o"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(text(&r).contains("tool_search"), "{}", text(&r));

    // The model's search, at the default limit.
    let seen = changed.load(Ordering::SeqCst);
    let r = call(
        &client,
        "tool_search",
        json!({"query": "weather forecast for the coming days"}),
    )
    .await;
    let thin = text(&r).chars().count();
    let result: Value = serde_json::from_str(&text(&r)).unwrap();
    let activated = activated(&result);
    assert_eq!(result.as_object().unwrap().len(), 1, "thin: {result}");
    assert_eq!(
        activated.first(),
        Some(&"weather__get_forecast"),
        "{result}"
    );
    assert!(!text(&r).contains("Schema") && !text(&r).contains("latitude"));
    assert!(
        wait_for(|| changed.load(Ordering::SeqCst) > seen).await,
        "no notifications/tools/list_changed"
    );

    let after = client.list_all_tools().await.unwrap();
    assert_eq!(names(&after)[2..], activated[..]);
    let args = json!({"latitude": 48.85, "longitude": 2.35, "days": 2});
    let r = call(&client, "weather__get_forecast", args.clone()).await;
    let echo: Value = serde_json::from_str(&text(&r)).unwrap();
    assert_eq!(
        echo,
        json!({"server": "weather", "tool": "get_forecast", "arguments": args})
    );

    // docs/benchmarks.md, "Tool search", "Gateway".
    let search_tool = chars(&before[..1]);
    let (before, after) = (chars(&before), chars(&after));
    eprintln!(
        "gateway tools/list: all {tool_count} tools bound {all_bound} chars; \
         before any search {before} ({:.1} %, tool_search with the inventory {search_tool}); \
         after one search activating {activated:?} \
         {after} chars ({:.1} %); search result {thin} chars",
        100.0 * before as f64 / all_bound as f64,
        100.0 * after as f64 / all_bound as f64,
    );
    assert!(
        before < after && after < all_bound,
        "{before} {after} {all_bound}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_crashing_server_leaves_the_gateway_serving() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &format!(
            "direct = [\"files__read_file\", \"weather__get_alerts\"]\n\n{}{}",
            server("files", "files", &[]),
            server("weather", "weather", &["--crash-after", "0"])
        ),
    );
    let (client, changed) = gateway(&config).await;
    let r = call(&client, "weather__get_alerts", json!({"state": "CA"})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(
        text(&r).contains(r#"server "weather" is unavailable"#),
        "{}",
        text(&r)
    );
    assert!(wait_for(|| changed.load(Ordering::SeqCst) > 0).await);
    let tools = client.list_all_tools().await.unwrap();
    assert_eq!(names(&tools), ["tool_search", "files__read_file"]);
    let r = call(&client, "files__read_file", json!({"path": "a"})).await;
    assert_eq!(r.is_error, Some(false), "{}", text(&r));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_bad_config_is_one_line_and_exit_status_2() {
    let dir = tempfile::tempdir().unwrap();
    let weather = server("weather", "weather", &[]);
    let cases: [(Option<String>, &str); 4] = [
        (None, "needs --config FILE"),
        (
            Some("[[server]]\nname = \"x\"\ncomand = \"y\"\n".into()),
            "gateway.toml:3: unknown field `comand`",
        ),
        (Some(format!("direct = [\"gh__x\"]\n{weather}")), "gh__x"),
        // Known only once the servers have listed their tools.
        (
            Some(format!("direct = [\"weather__get_tides\"]\n{weather}")),
            "weather__get_tides",
        ),
    ];
    for (text, needle) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lode"));
        cmd.arg("gateway").stdin(Stdio::null());
        if let Some(text) = &text {
            cmd.arg("--config").arg(write_config(dir.path(), text));
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        let last = stderr.lines().last().unwrap_or_default();
        assert_eq!(out.status.code(), Some(2), "{text:?}: {stderr}");
        assert!(
            last.starts_with("lode: ") && last.contains(needle),
            "{text:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{text:?}");
    }
    let out = Command::new(env!("CARGO_BIN_EXE_lode"))
        .args(["gateway", "--config", "/nonexistent/gateway.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[tokio::test]
async fn the_gateway_stops_its_servers_when_the_client_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let flags = ["--pid-file", pid_file.to_str().unwrap()];
    let config = write_config(dir.path(), &server("files", "files", &flags));
    // A client that leaves at once: stdin is empty.
    let start = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_lode"))
        .arg("gateway")
        .arg("--config")
        .arg(&config)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    let pid = std::fs::read_to_string(&pid_file).expect("the server was started");
    assert!(
        wait_for(|| !running(&pid)).await,
        "server {pid} outlived the gateway"
    );
}

/// Whether process `pid` exists and is not a zombie (which a container's
/// init may leave unreaped).
fn running(pid: &str) -> bool {
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return false;
    };
    let state = stat
        .rsplit_once(')')
        .and_then(|(_, rest)| rest.trim_start().chars().next());
    state != Some('Z')
}
