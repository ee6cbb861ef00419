//! `lode mcp` spoken to in hand-written JSON-RPC lines over its pipes: input a
//! client library would not send (malformed lines), and a client that goes away.

use std::io::{BufRead, BufReader, Write};
use std::time::{Duration, Instant};

use crate::common::Repo;
use crate::common::raw::{Raw, spawn_piped};
use serde_json::{Value, json};

pub fn search_line(id: u64, query: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "search", "arguments": {"query": query}}})
    .to_string()
}

#[test]
fn survives_malformed_json_rpc() {
    let repo = Repo::fixture("shop");
    let mut raw = Raw::start(&repo);
    for junk in [
        "this is not json",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":",
        "[1, 2, 3]",
        "{\"foo\": 1}",
        "\u{0}\u{1}\u{2}",
    ] {
        raw.send(junk);
    }
    // Well-formed JSON-RPC with the wrong shapes: an error reply each.
    raw.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"oops"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":3,"method":"no/such/method"}"#);
    raw.send(r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"search","arguments":"not an object"}}"#);
    for id in [2, 3, 4] {
        let r = raw.reply(id);
        assert!(r["error"]["code"].as_i64().unwrap() < 0, "{r}");
    }
    raw.send(&search_line(5, "Cart"));
    let r = raw.reply(5);
    assert_eq!(
        r["result"]["structuredContent"]["hits"][0]["symbol"], "Cart",
        "{r}"
    );
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// Every malformed line whose id can be read gets its JSON-RPC error, and
/// those whose id cannot get one with a null id; the session goes on.
#[test]
fn malformed_json_rpc_gets_an_error_reply() {
    let repo = Repo::fixture("shop");
    let mut child = spawn_piped(&repo);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut exchange = |line: &str| -> Value {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let mut reply = String::new();
        stdout.read_line(&mut reply).unwrap();
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
    };
    // Before initialize: a clear error, and the session still starts after.
    let r = exchange(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#);
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize"),
        "{r}"
    );
    let r = exchange(
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#,
    );
    assert_eq!(r["id"], 0, "{r}");
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    for (line, code, id) in [
        ("this is not json", -32700, Value::Null),
        (deep.as_str(), -32700, Value::Null),
        (
            "[{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]",
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#,
            -32600,
            json!(3),
        ),
        (r#"{"jsonrpc":"2.0","id":4}"#, -32600, json!(4)),
        (
            r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[]}"#,
            -32602,
            json!(5),
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"search","arguments":"q"}}"#,
            -32602,
            json!(6),
        ),
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#,
            -32601,
            json!(7),
        ),
    ] {
        let r = exchange(line);
        assert_eq!(r["error"]["code"], code, "{line:.60}: {r}");
        assert_eq!(r["id"], id, "{line:.60}: {r}");
    }
    // A notification gets no reply: the next line is the search's.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let r = exchange(&format!("{note}\n{}", search_line(8, "Cart")));
    assert_eq!(
        r["result"]["structuredContent"]["hits"][0]["symbol"], "Cart",
        "{r}"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_client_that_disconnects_mid_call_leaves_a_clean_exit() {
    let repo = Repo::fixture("shop");
    // Gone while the first call still indexes: stdin closed, stdout unread.
    let mut raw = Raw::start(&repo);
    raw.send(&search_line(1, "Cart"));
    raw.send(&search_line(2, "payment gateway"));
    let (status, stderr) = raw.finish();
    assert!(status.success(), "{status:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");

    // Gone hard: both pipes closed mid-call, so writing the answer fails;
    // the process must still end, without a panic.
    let mut child = spawn_piped(&repo);
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"raw","version":"0"}}}}}}"#).unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("\"id\":0"), "{line}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(stdin, "{}", search_line(1, "Cart")).unwrap();
    stdin.flush().unwrap();
    drop(stdout);
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "still running");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut err = String::new();
    use std::io::Read;
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    assert!(!err.contains("panicked"), "{err}");

    // And a new server on the same cache answers: the index is intact.
    let mut raw = Raw::start(&repo);
    raw.send(&search_line(7, "apply_discount"));
    let r = raw.reply(7);
    assert_eq!(
        r["result"]["structuredContent"]["hits"][0]["symbol"],
        "apply_discount"
    );
    raw.finish();
}
