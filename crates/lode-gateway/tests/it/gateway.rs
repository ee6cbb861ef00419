//! The gateway in process, over an in-memory duplex, driven by the rmcp
//! client; its downstream servers are real child processes (this binary,
//! started as the fake server of `fake_server.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lode_gateway::{Config, Error, Gateway, Hub, SearchConfig, ServerConfig};
use lode_test_support::mcp::{Listener, activated, text};
use rmcp::model::{
    CallToolRequestParams, CallToolResult, PaginatedRequestParams, RequestMetaObject, Tool,
};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::fake_server;

pub(crate) fn fake(name: &str, kit: &str, flags: &[&str]) -> ServerConfig {
    let mut args = vec![fake_server::ARG, "--kit", kit, "--name", name];
    args.extend(flags);
    ServerConfig {
        name: name.into(),
        command: std::env::current_exe().unwrap().display().to_string(),
        args: args.into_iter().map(String::from).collect(),
        env: Default::default(),
    }
}

pub(crate) fn config(servers: Vec<ServerConfig>, direct: &[&str]) -> Config {
    Config {
        direct: direct.iter().map(|d| d.to_string()).collect(),
        call_timeout_ms: 10_000,
        start_timeout_ms: 10_000,
        // The failure tests check what happens without a restart; the
        // restart tests set their own.
        max_restarts: 0,
        telemetry_file: None,
        search: SearchConfig::default(),
        servers,
    }
}

/// Polls `hub` (at most 10 s) until `done` holds for its server statuses.
pub(crate) async fn until(hub: &Hub, done: impl Fn(&[lode_gateway::ServerStatus]) -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if done(&hub.servers()) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

pub(crate) struct Conn {
    pub(crate) client: RunningService<RoleClient, Listener>,
    pub(crate) changed: Arc<AtomicUsize>,
    pub(crate) gateway: Gateway,
}

pub(crate) async fn connect(hub: &Arc<Hub>) -> Conn {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let gateway = Gateway::new(Arc::clone(hub));
    let serving = gateway.clone();
    tokio::spawn(async move {
        if let Ok(running) = serving.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let listener = Listener::default();
    let changed = Arc::clone(&listener.changed);
    let client = listener.serve(client_end).await.expect("initialize");
    Conn {
        client,
        changed,
        gateway,
    }
}

pub(crate) fn meta(turn: Option<&str>) -> Option<RequestMetaObject> {
    let t = turn?;
    let Value::Object(o) = json!({ lode_gateway::TURN_ID_META: t }) else {
        unreachable!()
    };
    Some(RequestMetaObject::from(o))
}

impl Conn {
    pub(crate) async fn list_in(&self, turn: Option<&str>) -> Vec<Tool> {
        let mut params = PaginatedRequestParams::default();
        params.meta = meta(turn);
        self.client.list_tools(Some(params)).await.unwrap().tools
    }

    pub(crate) async fn list(&self) -> Vec<Tool> {
        self.list_in(None).await
    }

    pub(crate) async fn names(&self) -> Vec<String> {
        self.list()
            .await
            .iter()
            .map(|t| t.name.to_string())
            .collect()
    }

    pub(crate) async fn call_in(
        &self,
        turn: Option<&str>,
        tool: &str,
        args: Value,
    ) -> CallToolResult {
        let mut params = CallToolRequestParams::new(tool.to_string())
            .with_arguments(args.as_object().unwrap().clone());
        params.meta = meta(turn);
        self.client.call_tool(params).await.expect("a tool result")
    }

    pub(crate) async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        self.call_in(None, tool, args).await
    }

    /// Waits (at most 5 s) for more list_changed notices than `seen`.
    pub(crate) async fn changed_since(&self, seen: usize) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if self.changed.load(Ordering::SeqCst) > seen {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    }

    pub(crate) fn seen(&self) -> usize {
        self.changed.load(Ordering::SeqCst)
    }
}

/// The weather server (started with `--crash-after 1`) answers a first
/// call; the second finds it gone.
pub(crate) async fn answers_once_then_crashes(c: &Conn, args: &Value) {
    assert!(!is_error(
        &c.call("weather__get_alerts", args.clone()).await
    ));
    let r = c.call("weather__get_alerts", args.clone()).await;
    assert!(text(&r).contains("unavailable"), "{}", text(&r));
}

pub(crate) fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

/// The fake server's echo of a forwarded call.
pub(crate) fn echo(r: &CallToolResult) -> Value {
    assert!(!is_error(r), "{}", text(r));
    serde_json::from_str(&text(r)).unwrap()
}

pub(crate) fn search_description(tools: &[Tool]) -> String {
    let t = tools
        .iter()
        .find(|t| t.name == "tool_search")
        .expect("tool_search listed");
    t.description.as_deref().unwrap().to_string()
}

#[tokio::test]
async fn a_search_activates_tools_that_become_callable_after_the_client_re_lists() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &[]),
        fake("issues", "issues", &[]),
    ];
    let hub = Hub::start(&config(servers, &["files__read_file"]))
        .await
        .unwrap();
    let c = connect(&hub).await;

    let before = c.list().await;
    let names: Vec<&str> = before.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["tool_search", "files__read_file"]);
    // The inventory: every deferred tool by canonical name, grouped, no schema.
    let d = search_description(&before);
    assert!(
        d.contains("\nweather: weather__get_forecast, weather__get_alerts, "),
        "{d}"
    );
    assert!(d.contains("\nfiles: files__write_file, "), "{d}");
    assert!(
        !d.contains("files__read_file"),
        "direct tools are not in it: {d}"
    );
    assert!(!d.contains("latitude"), "{d}");

    // A direct tool is forwarded under its own name, arguments intact.
    let r = c
        .call("files__read_file", json!({"path": "/etc/hosts", "head": 2}))
        .await;
    assert_eq!(
        echo(&r),
        json!({"server": "files", "tool": "read_file", "arguments": {"path": "/etc/hosts", "head": 2}})
    );
    // A deferred tool is refused, naming the search tool.
    let args = json!({"latitude": 48.85, "longitude": 2.35});
    let r = c.call("weather__get_forecast", args.clone()).await;
    assert!(
        is_error(&r) && text(&r).contains("tool_search"),
        "{}",
        text(&r)
    );

    let seen = c.seen();
    let r = c
        .call(
            "tool_search",
            json!({"query": "weather forecast for the coming days", "limit": 2}),
        )
        .await;
    assert!(!is_error(&r));
    let result: Value = serde_json::from_str(&text(&r)).unwrap();
    let activated = activated(&result);
    assert_eq!(activated.len(), 2, "{result}");
    assert_eq!(activated[0], "weather__get_forecast", "{result}");
    // Thin: the names and nothing else.
    assert_eq!(result.as_object().unwrap().len(), 1, "{result}");
    assert!(
        c.changed_since(seen).await,
        "no list_changed after the search"
    );
    assert_eq!(c.gateway.active(), activated);

    // Before the client re-lists, the step guard holds.
    let r = c.call("weather__get_forecast", args.clone()).await;
    assert!(
        is_error(&r) && text(&r).contains("next request"),
        "{}",
        text(&r)
    );

    let after = c.list().await;
    let names: Vec<&str> = after.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names[..2], ["tool_search", "files__read_file"]);
    assert_eq!(names[2..], activated[..]);
    // With the schema its server gave.
    let original = fake_server::kit("weather")
        .into_iter()
        .find(|t| t.name == "get_forecast")
        .unwrap();
    let listed = after
        .iter()
        .find(|t| t.name == "weather__get_forecast")
        .unwrap();
    assert_eq!(listed.input_schema, original.input_schema);
    assert_eq!(listed.description, original.description);

    let r = c.call("weather__get_forecast", args.clone()).await;
    assert_eq!(
        echo(&r),
        json!({"server": "weather", "tool": "get_forecast", "arguments": args})
    );
    // A downstream protocol error is the call's error; the server stays up.
    let r = c.call("files__read_file", json!({"fail": true})).await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(
        text(&r).contains(r#"server "files" refused the call: asked to fail"#),
        "{}",
        text(&r)
    );
    assert!(hub.servers().iter().all(|s| s.unavailable.is_none()));
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_new_turn_id_drops_activation() {
    let servers = vec![
        fake("weather", "weather", &[]),
        fake("issues", "issues", &[]),
    ];
    let hub = Hub::start(&config(servers, &[])).await.unwrap();
    let c = connect(&hub).await;
    let query = json!({"query": "create a new issue", "limit": 1});
    let r = c.call_in(Some("t1"), "tool_search", query.clone()).await;
    assert_eq!(text(&r), r#"{"activated":["issues__create_issue"]}"#);
    let listed = c.list_in(Some("t1")).await;
    assert_eq!(listed.len(), 2);
    let args = json!({"owner": "o", "repo": "r", "title": "x"});
    assert!(!is_error(
        &c.call_in(Some("t1"), "issues__create_issue", args.clone())
            .await
    ));
    // No id: the same turn.
    assert!(!is_error(
        &c.call("issues__create_issue", args.clone()).await
    ));

    // A new id: a new turn, and the client is told its list is stale.
    let seen = c.seen();
    let r = c
        .call_in(Some("t2"), "issues__create_issue", args.clone())
        .await;
    assert!(
        is_error(&r) && text(&r).contains("tool_search"),
        "{}",
        text(&r)
    );
    assert!(c.changed_since(seen).await);
    assert!(c.gateway.active().is_empty());
    let names: Vec<String> = c
        .list_in(Some("t2"))
        .await
        .into_iter()
        .map(|t| t.name.into())
        .collect();
    assert_eq!(names, ["tool_search"]);
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn sessions_do_not_share_activation() {
    let hub = Hub::start(&config(vec![fake("weather", "weather", &[])], &[]))
        .await
        .unwrap();
    let a = connect(&hub).await;
    let b = connect(&hub).await;
    let r = a
        .call(
            "tool_search",
            json!({"query": "severe weather alerts", "limit": 1}),
        )
        .await;
    assert_eq!(text(&r), r#"{"activated":["weather__get_alerts"]}"#);
    assert_eq!(a.names().await, ["tool_search", "weather__get_alerts"]);
    assert_eq!(b.names().await, ["tool_search"]);
    let r = b.call("weather__get_alerts", json!({"state": "CA"})).await;
    assert!(is_error(&r) && text(&r).contains("tool_search"));
    assert!(!is_error(
        &a.call("weather__get_alerts", json!({"state": "CA"})).await
    ));
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_server_that_crashes_is_marked_unavailable_and_the_gateway_serves_on() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &["--crash-after", "1"]),
    ];
    let direct = ["files__read_file", "weather__get_alerts"];
    let hub = Hub::start(&config(servers, &direct)).await.unwrap();
    let c = connect(&hub).await;
    assert_eq!(c.list().await.len(), 3);
    assert!(!is_error(
        &c.call("weather__get_alerts", json!({"state": "CA"})).await
    ));

    let seen = c.seen();
    let r = c.call("weather__get_alerts", json!({"state": "NY"})).await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(
        text(&r).contains(r#"server "weather" is unavailable"#),
        "{}",
        text(&r)
    );
    assert!(c.changed_since(seen).await);
    let after = c.list().await;
    let names: Vec<&str> = after.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["tool_search", "files__read_file"]);
    let d = search_description(&after);
    assert!(d.ends_with("Unavailable servers: weather."), "{d}");
    assert!(!d.contains("weather__"), "{d}");
    // Its tools are still found, and reported apart.
    let r = c
        .call("tool_search", json!({"query": "air quality", "limit": 1}))
        .await;
    assert_eq!(
        text(&r),
        r#"{"activated":[],"unavailable":["weather__get_air_quality"]}"#
    );
    // Calls keep failing fast; the other server serves on.
    let r = c.call("weather__get_alerts", json!({"state": "NY"})).await;
    assert!(is_error(&r) && text(&r).contains("unavailable"));
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));
    let status = hub.servers();
    assert!(status[0].unavailable.is_none());
    assert!(status[1].unavailable.is_some(), "{status:?}");
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_server_that_hangs_is_cut_off_at_the_call_timeout() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &["--hang"]),
    ];
    let mut config = config(servers, &["files__read_file", "weather__get_alerts"]);
    config.call_timeout_ms = 700;
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let start = Instant::now();
    let r = c.call("weather__get_alerts", json!({"state": "CA"})).await;
    let took = start.elapsed();
    assert!(is_error(&r), "{}", text(&r));
    assert!(text(&r).contains("no answer within 700 ms"), "{}", text(&r));
    assert!(
        took >= Duration::from_millis(700) && took < Duration::from_secs(5),
        "{took:?}"
    );
    assert_eq!(c.names().await, ["tool_search", "files__read_file"]);
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_server_that_answers_garbage_is_marked_unavailable() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &["--garbage"]),
    ];
    let mut config = config(servers, &["files__read_file", "weather__get_alerts"]);
    config.call_timeout_ms = 2_000;
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let start = Instant::now();
    let r = c.call("weather__get_alerts", json!({"state": "CA"})).await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(
        text(&r).contains(r#"server "weather" is unavailable"#),
        "{}",
        text(&r)
    );
    eprintln!("garbage detected after {:?}: {}", start.elapsed(), text(&r));
    assert_eq!(c.names().await, ["tool_search", "files__read_file"]);
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_server_that_exits_unasked_is_noticed_without_a_call() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &["--exit-after-ms", "2500"]),
    ];
    let hub = Hub::start(&config(servers, &["weather__get_alerts"]))
        .await
        .unwrap();
    assert!(hub.servers()[1].unavailable.is_none());
    let c = connect(&hub).await;
    assert_eq!(c.names().await, ["tool_search", "weather__get_alerts"]);
    assert!(
        c.changed_since(0).await,
        "no list_changed when the server exited"
    );
    assert_eq!(c.names().await, ["tool_search"]);
    let why = hub.servers()[1].unavailable.clone().unwrap();
    assert!(why.contains("exited"), "{why}");
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn servers_that_do_not_start_are_reported_and_left_out() {
    let mut missing = fake("missing", "files", &[]);
    missing.command = "/nonexistent/mcp-server".into();
    let servers = vec![
        missing,
        fake("silent", "files", &["--hang-start"]),
        fake("weather", "weather", &[]),
    ];
    let mut config = config(servers, &["silent__read_file", "weather__get_alerts"]);
    config.start_timeout_ms = 2_500;
    let start = Instant::now();
    let hub = Hub::start(&config).await.unwrap();
    assert!(
        start.elapsed() < Duration::from_secs(8),
        "{:?}",
        start.elapsed()
    );
    let status = hub.servers();
    let why = |i: usize| status[i].unavailable.clone().unwrap_or_default();
    assert!(why(0).contains("cannot run"), "{status:?}");
    assert!(why(1).contains("within 2500 ms"), "{status:?}");
    assert_eq!((status[2].tools, status[2].unavailable.clone()), (4, None));
    let c = connect(&hub).await;
    let tools = c.list().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["tool_search", "weather__get_alerts"]);
    let d = search_description(&tools);
    assert!(d.ends_with("Unavailable servers: missing, silent."), "{d}");
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_direct_tool_no_server_has_is_a_config_error() {
    let servers = vec![fake("weather", "weather", &[])];
    let e = match Hub::start(&config(servers, &["weather__get_tides"])).await {
        Err(e) => e,
        Ok(_) => panic!("started with a direct tool no server has"),
    };
    assert!(matches!(e, Error::Config(_)));
    assert!(e.to_string().contains("weather__get_tides"), "{e}");
}

#[tokio::test]
async fn a_crashed_server_is_restarted_and_its_tools_come_back() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &["--crash-after", "1"]),
    ];
    let mut config = config(servers, &["weather__get_alerts"]);
    config.max_restarts = 2;
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let args = json!({"state": "CA"});
    answers_once_then_crashes(&c, &args).await;
    assert!(
        until(&hub, |s| s[1].unavailable.is_none() && s[1].restarts == 1).await,
        "{:?}",
        hub.servers()
    );
    // The old process's end (its watcher fires after the restart) does not
    // mark the new one down.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        hub.servers()[1].unavailable.is_none(),
        "{:?}",
        hub.servers()
    );
    let seen = c.seen();
    assert_eq!(c.names().await, ["tool_search", "weather__get_alerts"]);
    let r = c.call("weather__get_alerts", args.clone()).await;
    assert_eq!(
        echo(&r),
        json!({"server": "weather", "tool": "get_alerts", "arguments": args})
    );
    assert!(hub.servers()[1].retired.is_empty());
    let _ = seen;
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_restarted_server_that_lists_a_tool_differently_has_it_retired() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("started");
    let marker = marker.to_str().unwrap();
    let servers = vec![fake(
        "weather",
        "weather",
        &["--crash-after", "0", "--changed-if-exists", marker],
    )];
    let mut config = config(servers, &["weather__get_alerts"]);
    config.max_restarts = 1;
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let r = c.call("weather__get_alerts", json!({"state": "CA"})).await;
    assert!(is_error(&r), "{}", text(&r));
    assert!(
        until(&hub, |s| s[0].unavailable.is_none() && s[0].restarts == 1).await,
        "{:?}",
        hub.servers()
    );
    // The kit's first tool, get_forecast, is listed differently now.
    assert_eq!(hub.servers()[0].retired, ["weather__get_forecast"]);
    let r = c
        .call(
            "tool_search",
            json!({"query": "weather forecast", "limit": 1}),
        )
        .await;
    assert_eq!(
        text(&r),
        r#"{"activated":[],"unavailable":["weather__get_forecast"]}"#
    );
    let d = search_description(&c.list().await);
    assert!(!d.contains("weather__get_forecast"), "{d}");
    assert!(d.contains("weather__get_air_quality"), "{d}");
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn restarts_stop_after_max_restarts() {
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &["--crash-after", "0"]),
    ];
    let mut config = config(servers, &["files__read_file", "weather__get_alerts"]);
    config.max_restarts = 1;
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let args = json!({"state": "CA"});
    assert!(is_error(&c.call("weather__get_alerts", args.clone()).await));
    assert!(
        until(&hub, |s| s[1].unavailable.is_none() && s[1].restarts == 1).await,
        "{:?}",
        hub.servers()
    );
    assert!(is_error(&c.call("weather__get_alerts", args.clone()).await));
    // Past the backoff a second restart would have come: none does.
    tokio::time::sleep(Duration::from_millis(1_500)).await;
    let status = hub.servers();
    assert_eq!(status[1].restarts, 1, "{status:?}");
    assert!(status[1].unavailable.is_some(), "{status:?}");
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_restart_that_fails_is_tried_again_after_a_longer_backoff() {
    let dir = tempfile::tempdir().unwrap();
    let starts = dir.path().join("starts");
    let starts_file = starts.to_str().unwrap();
    // The first restart exits before `initialize`; the second comes up.
    let flags = [
        "--crash-after",
        "1",
        "--starts-file",
        starts_file,
        "--fail-restarts",
        "1",
    ];
    let servers = vec![
        fake("files", "files", &[]),
        fake("weather", "weather", &flags),
    ];
    let mut config = config(servers, &["files__read_file", "weather__get_alerts"]);
    config.max_restarts = 3;
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let args = json!({"state": "CA"});
    answers_once_then_crashes(&c, &args).await;
    let crashed = Instant::now();

    // The failed attempt counts, and the server stays down meanwhile.
    assert!(
        until(&hub, |s| s[1].restarts >= 1).await,
        "{:?}",
        hub.servers()
    );
    let status = hub.servers();
    assert_eq!(status[1].restarts, 1, "{status:?}");
    assert!(status[1].unavailable.is_some(), "{status:?}");
    let r = c.call("weather__get_alerts", args.clone()).await;
    assert!(
        is_error(&r) && text(&r).contains(r#"server "weather" is unavailable"#),
        "{}",
        text(&r)
    );
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));

    // The second attempt waits twice as long (0.5 s, then 1 s) and succeeds.
    assert!(
        until(&hub, |s| s[1].unavailable.is_none()).await,
        "{:?}",
        hub.servers()
    );
    let took = crashed.elapsed();
    assert!(took >= Duration::from_millis(1_500), "{took:?}");
    let status = hub.servers();
    assert_eq!(status[1].restarts, 2, "{status:?}");
    assert!(status[1].retired.is_empty(), "{status:?}");
    assert_eq!(std::fs::read_to_string(&starts).unwrap().lines().count(), 3);
    assert_eq!(
        c.names().await,
        ["tool_search", "files__read_file", "weather__get_alerts"]
    );
    let r = c.call("weather__get_alerts", args.clone()).await;
    assert_eq!(
        echo(&r),
        json!({"server": "weather", "tool": "get_alerts", "arguments": args})
    );
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_server_that_cannot_be_started_again_is_given_up_and_the_others_serve_on() {
    // The server's command is a link to this binary, removed once it runs:
    // every restart fails to spawn.
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("weather-server");
    std::os::unix::fs::symlink(std::env::current_exe().unwrap(), &link).unwrap();
    let mut weather = fake("weather", "weather", &["--crash-after", "0"]);
    weather.command = link.display().to_string();
    let servers = vec![fake("files", "files", &[]), weather];
    let mut config = config(servers, &["files__read_file", "weather__get_alerts"]);
    config.max_restarts = 2;
    let hub = Hub::start(&config).await.unwrap();
    std::fs::remove_file(&link).unwrap();
    let c = connect(&hub).await;
    let args = json!({"state": "CA"});
    let r = c.call("weather__get_alerts", args.clone()).await;
    assert!(text(&r).contains("unavailable"), "{}", text(&r));
    let crashed = Instant::now();

    // Two attempts, 0.5 s and then 1 s apart, both failing.
    assert!(
        until(&hub, |s| s[1].restarts >= 1).await,
        "{:?}",
        hub.servers()
    );
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "a"})).await
    ));
    assert!(
        until(&hub, |s| s[1].restarts >= 2).await,
        "{:?}",
        hub.servers()
    );
    let took = crashed.elapsed();
    assert!(took >= Duration::from_millis(1_500), "{took:?}");

    // Past the backoff a third attempt would have come (2 s): none does.
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    let status = hub.servers();
    assert_eq!(status[1].restarts, 2, "{status:?}");
    assert!(status[1].unavailable.is_some(), "{status:?}");
    assert_eq!(status[0].unavailable, None, "{status:?}");
    let r = c.call("weather__get_alerts", args.clone()).await;
    assert!(
        is_error(&r) && text(&r).contains(r#"server "weather" is unavailable"#),
        "{}",
        text(&r)
    );
    let tools = c.list().await;
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["tool_search", "files__read_file"]);
    let d = search_description(&tools);
    assert!(d.ends_with("Unavailable servers: weather."), "{d}");
    assert!(!d.contains("weather__"), "{d}");
    assert!(!is_error(
        &c.call("files__read_file", json!({"path": "b"})).await
    ));
    hub.shutdown(Duration::from_secs(3)).await;
}
