//! The gateway's turn log: a line per ended turn with no query text, and a
//! log that cannot be opened or written leaves the gateway serving.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lode_gateway::Hub;
use lode_test_support::mcp::text;
use serde_json::{Value, json};

use crate::gateway::{Conn, config, connect, echo, fake, is_error};

#[tokio::test]
async fn the_turn_log_has_a_line_per_ended_turn_and_no_query_text() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("turns.jsonl");
    let mut config = config(vec![fake("issues", "issues", &[])], &[]);
    config.telemetry_file = Some(path.clone());
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let query = json!({"query": "open a brand new ticket please", "limit": 2});
    let r = c.call_in(Some("t1"), "tool_search", query).await;
    let activated: Value = serde_json::from_str(&text(&r)).unwrap();
    c.list_in(Some("t1")).await;
    let args = json!({"owner": "secret-owner", "repo": "r", "title": "x"});
    assert!(!is_error(
        &c.call_in(Some("t1"), "issues__create_issue", args).await
    ));
    // Only lists in t2: an idle turn, not logged. t3 searches.
    c.list_in(Some("t2")).await;
    c.call_in(Some("t3"), "tool_search", json!({"query": "list issues"}))
        .await;
    // t3 ends with the session: the client leaves and the session is dropped.
    let Conn {
        client, gateway, ..
    } = c;
    client.cancel().await.unwrap();
    drop(gateway);
    let lines = until_lines(&path, 2).await;
    assert_eq!(lines.len(), 2, "{lines:?}");
    let first: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(first["schema_version"], lode_gateway::TURN_LOG_VERSION);
    assert_eq!(first["turn_id"], "t1");
    assert_eq!(first["turn"]["end"], "completed");
    assert_eq!(first["turn"]["calls"]["succeeded"], 1);
    assert_eq!(
        first["turn"]["searches"][0]["activated"],
        activated["activated"]
    );
    assert_eq!(
        first["turn"]["called_tools"][0]["name"],
        "issues__create_issue"
    );
    let second: Value = serde_json::from_str(&lines[1]).unwrap();
    assert_eq!(second["turn_id"], "t3");
    assert_eq!(second["session"], first["session"]);
    let all = lines.join("\n");
    for secret in ["brand new ticket", "secret-owner", "list issues"] {
        assert!(!all.contains(secret), "{secret:?} in the log: {all}");
    }
    hub.shutdown(Duration::from_secs(3)).await;
}

/// The lines of `path` once it has `n` of them (waits at most 5 s).
async fn until_lines(path: &std::path::Path, n: usize) -> Vec<String> {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<String> = text.lines().map(String::from).collect();
        if lines.len() >= n || start.elapsed() > Duration::from_secs(5) {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_turn_log_that_cannot_be_opened_leaves_the_gateway_serving() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/turns.jsonl");
    let mut config = config(vec![fake("issues", "issues", &[])], &[]);
    config.telemetry_file = Some(path.clone());
    let hub = Hub::start(&config).await.unwrap();
    let c = connect(&hub).await;
    let r = c
        .call_in(
            Some("t1"),
            "tool_search",
            json!({"query": "create an issue", "limit": 1}),
        )
        .await;
    assert_eq!(text(&r), r#"{"activated":["issues__create_issue"]}"#);
    // Ending the turn writes nowhere and fails nothing.
    c.list_in(Some("t2")).await;
    assert!(!path.exists());
    hub.shutdown(Duration::from_secs(3)).await;
}

#[tokio::test]
async fn a_turn_log_that_cannot_be_written_leaves_the_gateway_serving() {
    // /dev/full opens for appending, and every write fails with ENOSPC.
    let mut config = config(vec![fake("issues", "issues", &[])], &[]);
    config.telemetry_file = Some("/dev/full".into());
    let hub = Hub::start(&config).await.unwrap();
    // A panic in a request handler would leave its request unanswered.
    let served = tokio::time::timeout(Duration::from_secs(20), turns_with_a_full_turn_log(&hub));
    assert!(served.await.is_ok(), "the gateway stopped answering");
    assert!(hub.servers()[0].unavailable.is_none());
    hub.shutdown(Duration::from_secs(3)).await;
}

async fn turns_with_a_full_turn_log(hub: &Arc<Hub>) {
    let c = connect(hub).await;
    let args = json!({"owner": "o", "repo": "r", "title": "x"});
    // Each new turn id ends a turn that searched and called: a failed write each.
    for turn in ["t1", "t2", "t3"] {
        let r = c
            .call_in(
                Some(turn),
                "tool_search",
                json!({"query": "create an issue", "limit": 1}),
            )
            .await;
        assert_eq!(text(&r), r#"{"activated":["issues__create_issue"]}"#);
        c.list_in(Some(turn)).await;
        let r = c
            .call_in(Some(turn), "issues__create_issue", args.clone())
            .await;
        assert_eq!(
            echo(&r),
            json!({"server": "issues", "tool": "create_issue", "arguments": args})
        );
    }
    // The session's end writes its last turn: it fails as quietly.
    let Conn {
        client, gateway, ..
    } = c;
    client.cancel().await.unwrap();
    drop(gateway);
    let c = connect(hub).await;
    let r = c.call("tool_search", json!({"query": "list issues", "limit": 1}));
    assert!(!is_error(&r.await));
}
