//! The MCP request path: `lode_mcp::gate`, alone and in front of a real
//! `Server` speaking MCP through rmcp.
//!
//! `Gate::check` over any line (random bytes, random JSON, JSON-RPC shapes
//! with every kind of id, deep nesting, batches, huge ids): a blank line is
//! skipped; a line with a readable id (a string or a number) is forwarded or
//! answered with that id, never only logged; a line without one is never
//! answered with an id; every reply is a JSON-RPC 2.0 error of a code the
//! gate documents; what is forwarded is a well-formed message, and before
//! `initialize` only an `initialize` request is.
//!
//! A session (`serve_gated` over the server) of such lines: every output
//! line is a JSON-RPC message; every line owed a reply (one with a readable
//! id that is not a response) gets exactly one reply with its id, and no
//! reply carries an id no line had.

use std::time::Duration;

use lode_mcp::gate::{Gate, Verdict, serve_gated};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::test_runner::Config;
use rmcp::ServiceExt;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::common::{any_text, config, json_value, nested_json};
use crate::tools::FIXTURE;

const CODES: &[i64] = &[-32700, -32600, -32602];
/// How long a session may take to answer what it owes.
const ANSWER_WITHIN: Duration = Duration::from_secs(5);

/// The id a client can read back: a string or a number.
fn readable_id(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    v.get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
}

/// The id a line is owed a reply under: a readable one, unless the line is
/// a response (no method, a result or an error), which is owed nothing.
fn owed_id(line: &[u8]) -> Option<Value> {
    let v: Value = serde_json::from_slice(line).ok()?;
    let obj = v.as_object()?;
    if !obj.contains_key("method") && (obj.contains_key("result") || obj.contains_key("error")) {
        return None;
    }
    readable_id(line)
}

/// Ids are equal as JSON-RPC reads them: strings as strings, integers
/// exactly, other numbers by value (`3.0` may come back as `3`), to within
/// what serde_json's float parsing keeps (it is not correctly rounded:
/// `999…9`, 42 digits, reads as `9.999999999999999e41` and that text back as
/// `1e42`).
fn same_id(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => {
            if let (Some(x), Some(y)) = (x.as_u64(), y.as_u64()) {
                x == y
            } else if let (Some(x), Some(y)) = (x.as_i64(), y.as_i64()) {
                x == y
            } else {
                let (x, y) = (
                    x.as_f64().unwrap_or(f64::NAN),
                    y.as_f64().unwrap_or(f64::NAN),
                );
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
            }
        }
        _ => false,
    }
}

/// The checks of one verdict, given whether the gate had seen `initialize`.
fn check_verdict(line: &[u8], ready: bool, verdict: &Verdict) -> Result<(), TestCaseError> {
    let blank = line.iter().all(u8::is_ascii_whitespace);
    prop_assert_eq!(blank, *verdict == Verdict::Skip);
    let parsed: Option<Value> = serde_json::from_slice(line).ok();
    let obj = parsed.as_ref().and_then(Value::as_object);
    let id = readable_id(line);
    match verdict {
        Verdict::Skip => {}
        Verdict::Reply(r) => {
            prop_assert_eq!(&r["jsonrpc"], "2.0");
            prop_assert!(r.get("result").is_none());
            let code = r["error"]["code"].as_i64().unwrap_or(0);
            prop_assert!(CODES.contains(&code), "code {code}");
            prop_assert!(
                r["error"]["message"]
                    .as_str()
                    .is_some_and(|m| !m.is_empty())
            );
            match &id {
                Some(id) if obj.is_some() => {
                    prop_assert!(same_id(&r["id"], id), "replied {} to id {id}", r["id"])
                }
                _ => prop_assert!(r["id"].is_null(), "replied with id {}", r["id"]),
            }
        }
        Verdict::Log(why) => {
            prop_assert!(!why.is_empty());
            let response = obj.is_some_and(|o| !o.contains_key("method"));
            prop_assert!(
                obj.is_some_and(|o| !o.contains_key("id")) || (response && !ready),
                "only a notification, or a response before initialize, is refused without a reply"
            );
        }
        Verdict::Forward => {
            let Some(obj) = obj else {
                return Err(TestCaseError::fail(
                    "forwarded a line that is not an object",
                ));
            };
            prop_assert_eq!(obj.get("jsonrpc").and_then(Value::as_str), Some("2.0"));
            prop_assert!(obj.get("id").is_none_or(|i| i.is_string() || i.is_number()));
            match obj.get("method") {
                Some(Value::String(m)) => {
                    prop_assert!(obj.get("params").is_none_or(Value::is_object));
                    if m == "tools/call"
                        && let Some(a) = obj.get("params").and_then(|p| p.get("arguments"))
                    {
                        prop_assert!(a.is_object(), "forwarded non-object arguments");
                    }
                    prop_assert!(
                        ready || (m == "initialize" && id.is_some()),
                        "forwarded {m:?} before initialize"
                    );
                    // What rmcp must be able to read, or it answers without
                    // the id, or ends the session.
                    if let Some(id) = &id {
                        prop_assert!(
                            serde_json::from_value::<rmcp::model::RequestId>(id.clone()).is_ok(),
                            "forwarded id {id}, which rmcp cannot hold"
                        );
                    }
                    if !ready {
                        let params = obj.get("params").cloned().unwrap_or(Value::Null);
                        prop_assert!(
                            serde_json::from_value::<rmcp::model::InitializeRequestParams>(params)
                                .is_ok(),
                            "opened the session with an initialize rmcp cannot read"
                        );
                    }
                }
                Some(_) => prop_assert!(false, "forwarded a method that is not a string"),
                None => {
                    prop_assert!(
                        id.is_some() && (obj.contains_key("result") || obj.contains_key("error"))
                    );
                    prop_assert!(ready, "forwarded a response before initialize");
                }
            }
        }
    }
    Ok(())
}

/// Runs `lines` through one gate, checking each verdict.
fn check_gate(lines: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let mut gate = Gate::default();
    let mut ready = false;
    for line in lines {
        let verdict = gate.check(line);
        check_verdict(line, ready, &verdict).map_err(|e| {
            TestCaseError::fail(format!("{e}\nline: {}", String::from_utf8_lossy(line)))
        })?;
        let is_init =
            serde_json::from_slice::<Value>(line).is_ok_and(|v| v["method"] == "initialize");
        if verdict == Verdict::Forward && is_init {
            ready = true;
        }
    }
    Ok(())
}

const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/progress",
    "notifications/roots/list_changed",
    "notifications/message",
    "no/such/method",
    "",
    // Not `notifications/cancelled`: a cancelled request is rightly never answered.
];

/// How a message's id is written; made unique by the line's index.
#[derive(Clone, Copy, Debug)]
enum IdForm {
    Absent,
    Int,
    Negative,
    NearMax,
    OverI64,
    Fraction,
    IntegralFloat,
    Exponent,
    Str,
    LongStr,
    Null,
    Bool,
    Object,
    Array,
}

const ID_FORMS: &[IdForm] = &[
    IdForm::Absent,
    IdForm::Int,
    IdForm::Int,
    IdForm::Int,
    IdForm::Negative,
    IdForm::NearMax,
    IdForm::OverI64,
    IdForm::Fraction,
    IdForm::IntegralFloat,
    IdForm::Exponent,
    IdForm::Str,
    IdForm::Str,
    IdForm::LongStr,
    IdForm::Null,
    IdForm::Bool,
    IdForm::Object,
    IdForm::Array,
];

fn id_value(form: IdForm, i: usize) -> Option<Value> {
    let n = i as i64;
    Some(match form {
        IdForm::Absent => return None,
        IdForm::Int => json!(n),
        IdForm::Negative => json!(-n - 1),
        IdForm::NearMax => json!(i64::MAX - n),
        IdForm::OverI64 => json!(u64::MAX - i as u64),
        IdForm::Fraction => json!(n as f64 + 0.5),
        IdForm::IntegralFloat => json!(n as f64),
        IdForm::Exponent => json!(1e20 * (n + 1) as f64),
        IdForm::Str => json!(format!("s{i}")),
        IdForm::LongStr => json!(format!("{}{i}", "x".repeat(5000))),
        IdForm::Null => Value::Null,
        IdForm::Bool => json!(true),
        IdForm::Object => json!({"n": i}),
        IdForm::Array => json!([i]),
    })
}

/// A message, before its id is fixed by its place.
#[derive(Clone, Debug)]
enum Shape {
    /// A JSON-RPC object of these parts.
    Message {
        jsonrpc: Option<Value>,
        id: IdForm,
        method: Option<Value>,
        params: Option<Value>,
        answer: Option<(&'static str, Value)>,
    },
    /// A line as it is.
    Raw(Vec<u8>),
    /// Several messages in one array.
    Batch(Vec<Shape>),
    /// A message cut short.
    Cut(Box<Shape>, usize),
}

fn render(shape: &Shape, i: usize) -> Vec<u8> {
    match shape {
        Shape::Message {
            jsonrpc,
            id,
            method,
            params,
            answer,
        } => {
            let mut m = Map::new();
            if let Some(j) = jsonrpc {
                m.insert("jsonrpc".into(), j.clone());
            }
            if let Some(id) = id_value(*id, i) {
                m.insert("id".into(), id);
            }
            if let Some(method) = method {
                m.insert("method".into(), method.clone());
            }
            if let Some(p) = params {
                m.insert("params".into(), p.clone());
            }
            if let Some((k, v)) = answer {
                m.insert((*k).into(), v.clone());
            }
            serde_json::to_vec(&Value::Object(m)).unwrap()
        }
        Shape::Raw(bytes) => bytes.clone(),
        Shape::Batch(items) => {
            let items: Vec<Value> = items
                .iter()
                .filter_map(|s| serde_json::from_slice(&render(s, i)).ok())
                .collect();
            serde_json::to_vec(&items).unwrap()
        }
        Shape::Cut(inner, at) => {
            let mut b = render(inner, i);
            b.truncate(at % (b.len() + 1));
            b
        }
    }
}

fn initialize_params() -> impl Strategy<Value = Value> {
    prop_oneof![
        3 => select(&["2025-06-18", "2025-03-26", "2024-11-05", "1999-01-01", ""][..]).prop_map(|v| {
            json!({"protocolVersion": v, "capabilities": {}, "clientInfo": {"name": "fuzz", "version": "0"}})
        }),
        1 => Just(json!({})),
        1 => json_value(),
    ]
}

fn call_params() -> impl Strategy<Value = Value> {
    let names: Vec<Value> = lode_mcp::TOOLS
        .iter()
        .map(|t| Value::from(t.name))
        .chain([json!("nope"), json!(5), Value::Null])
        .collect();
    (select(names), prop::option::of(json_value())).prop_map(|(name, args)| {
        let mut p = json!({"name": name});
        if let Some(a) = args {
            p["arguments"] = a;
        }
        p
    })
}

fn params() -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        2 => Just(None),
        2 => Just(Some(json!({}))),
        2 => initialize_params().prop_map(Some),
        3 => call_params().prop_map(Some),
        2 => json_value().prop_map(Some),
    ]
}

fn message() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![
            12 => Just(Some(json!("2.0"))),
            1 => Just(None),
            1 => json_value().prop_map(Some),
        ],
        select(ID_FORMS),
        prop_oneof![
            8 => select(METHODS).prop_map(|m| Some(json!(m))),
            1 => Just(None),
            1 => json_value().prop_map(Some),
        ],
        params(),
        prop::option::weighted(0.15, (select(&["result", "error"][..]), json_value())),
    )
        .prop_map(|(jsonrpc, id, method, params, answer)| Shape::Message {
            jsonrpc,
            id,
            method,
            params,
            answer,
        })
}

/// A line of no shape: bytes (no line break), whitespace, deep nesting,
/// huge numbers.
fn raw() -> impl Strategy<Value = Shape> {
    prop_oneof![
        vec(any::<u8>().prop_filter("no line break", |b| *b != b'\n'), 0..200),
        select(&[" ", "\t", "\r", "", "null", "{}", "[]", "\"x\"", "1", "{\"jsonrpc\":\"2.0\"}"][..])
            .prop_map(|s| s.as_bytes().to_vec()),
        (1usize..3000, select(&[("[", "1", "]"), ("{\"a\":", "1", "}")][..]))
            .prop_map(|(d, (o, l, c))| nested_json(o, l, c, d).into_bytes()),
        (1usize..5000).prop_map(|n| {
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}", "9".repeat(n)).into_bytes()
        }),
        (1usize..3000).prop_map(|d| {
            let args = nested_json("{\"a\":", "1", "}", d);
            format!("{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{{\"name\":\"search\",\"arguments\":{args}}}}}").into_bytes()
        }),
        any_text(80).prop_map(|t| t.replace('\n', " ").into_bytes()),
    ]
    .prop_map(Shape::Raw)
}

/// A request a client would send: `ping`, `tools/list`, or a tool call
/// with arguments as the tools target makes them.
fn request() -> impl Strategy<Value = Shape> {
    let call = crate::tools::call()
        .prop_map(|(name, args, _)| Some(json!({"name": name, "arguments": args})));
    (
        select(&[IdForm::Int, IdForm::Str, IdForm::Negative, IdForm::NearMax][..]),
        prop_oneof![
            1 => Just(("ping", None)),
            1 => Just(("tools/list", Some(json!({})))),
            4 => call.prop_map(|p| ("tools/call", p)),
        ],
    )
        .prop_map(|(id, (method, params))| Shape::Message {
            jsonrpc: Some(json!("2.0")),
            id,
            method: Some(json!(method)),
            params,
            answer: None,
        })
}

fn shape() -> impl Strategy<Value = Shape> {
    prop_oneof![
        6 => request(),
        8 => message(),
        2 => raw(),
        1 => vec(message(), 0..4).prop_map(Shape::Batch),
        1 => (message(), any::<usize>()).prop_map(|(m, at)| Shape::Cut(Box::new(m), at)),
    ]
}

/// Lines, shown as text when a case fails.
#[derive(Clone)]
struct Lines(Vec<Vec<u8>>);

impl std::fmt::Debug for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|l| String::from_utf8_lossy(l)))
            .finish()
    }
}

/// A client's lines; ids unique by place. A session begins with a good
/// `initialize` (and the notification that follows it) unless `cold`.
fn lines(n: std::ops::Range<usize>) -> impl Strategy<Value = Lines> {
    (vec(shape(), n), any::<bool>()).prop_map(|(shapes, cold)| {
        let mut out = Vec::new();
        if !cold {
            out.push(
                json!({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "fuzz", "version": "0"}}})
                .to_string()
                .into_bytes(),
            );
            out.push(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_vec());
        }
        out.extend(shapes.iter().enumerate().map(|(i, s)| render(s, i)));
        Lines(out)
    })
}

/// What a session answered: its output lines, and whether it ended when
/// the client closed.
struct Session {
    replies: Vec<Value>,
    ended: bool,
}

/// Serves `lines` with the fuzzed server behind the gate: writes them all,
/// waits for what is owed (or [`ANSWER_WITHIN`]), then closes the input.
fn session(lines: &[Vec<u8>]) -> Session {
    let server = FIXTURE.server.clone();
    let owed: Vec<Value> = lines.iter().filter_map(|l| owed_id(l)).collect();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let input: Vec<u8> = lines
        .iter()
        .flat_map(|l| l.iter().chain(b"\n"))
        .copied()
        .collect();
    rt.block_on(async move {
        let (mut client_w, server_r) = tokio::io::duplex(1 << 16);
        let (server_w, client_r) = tokio::io::duplex(1 << 16);
        let served = tokio::spawn(serve_gated(server_r, server_w, |i, o| async move {
            if let Ok(running) = server.serve((i, o)).await {
                let _ = running.waiting().await;
            }
        }));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
        let reader = tokio::spawn(async move {
            let mut r = BufReader::new(client_r);
            let mut line = Vec::new();
            while r.read_until(b'\n', &mut line).await.unwrap_or(0) > 0 {
                let v = serde_json::from_slice(&line).unwrap_or_else(
                    |_| json!({"unreadable": String::from_utf8_lossy(&line).into_owned()}),
                );
                if tx.send(v).is_err() {
                    break;
                }
                line.clear();
            }
        });
        // Holds the input open until aborted, written or not (a session
        // that stopped reading must not block the test).
        let writer = tokio::spawn(async move {
            let _ = client_w.write_all(&input).await;
            std::future::pending::<()>().await;
            drop(client_w);
        });
        let mut replies = Vec::new();
        let deadline = tokio::time::Instant::now() + ANSWER_WITHIN;
        let answered = |replies: &[Value]| {
            owed.iter()
                .all(|id| replies.iter().any(|r| same_id(&r["id"], id)))
        };
        while !answered(&replies) {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(v)) => replies.push(v),
                Ok(None) | Err(_) => break,
            }
        }
        // The client goes: the session must end, and say nothing more than it owed.
        writer.abort();
        let ended = tokio::time::timeout(Duration::from_secs(10), served)
            .await
            .is_ok();
        if ended {
            let _ = tokio::time::timeout(Duration::from_secs(5), reader).await;
        }
        while let Ok(v) = rx.try_recv() {
            replies.push(v);
        }
        Session { replies, ended }
    })
}

fn check_session(lines: &[Vec<u8>]) -> Result<(), TestCaseError> {
    let s = session(lines);
    let shown = |l: &[u8]| {
        String::from_utf8_lossy(l)
            .chars()
            .take(300)
            .collect::<String>()
    };
    prop_assert!(s.ended, "the session did not end when the client left");
    for r in &s.replies {
        prop_assert_eq!(&r["jsonrpc"], "2.0", "not a JSON-RPC message: {}", r);
        let id = &r["id"];
        if id.is_null() {
            continue;
        }
        let from: Vec<&Vec<u8>> = lines
            .iter()
            .filter(|l| readable_id(l).is_some_and(|i| same_id(&i, id)))
            .collect();
        prop_assert!(!from.is_empty(), "a reply with an id no line had: {}", r);
        // A client may reuse an id (`1.0` and `1` are one id by value): one
        // reply per request that carried it, never more.
        let n = s.replies.iter().filter(|o| same_id(&o["id"], id)).count();
        prop_assert!(
            n <= from.len(),
            "{n} replies with id {id} to {} request(s) such as {}",
            from.len(),
            shown(from[0])
        );
    }
    for line in lines {
        if let Some(id) = owed_id(line) {
            prop_assert!(
                s.replies.iter().any(|r| same_id(&r["id"], &id)),
                "no reply with id {id} to {}",
                shown(line)
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn the_gate_answers_every_id_it_refuses(lines in lines(1..12)) {
        check_gate(&lines.0)?;
    }
}

proptest! {
    // A failing session waits for what it is owed: shrink for a while only.
    #![proptest_config(Config { max_shrink_iters: 48, ..config(64) })]

    #[test]
    fn a_session_answers_every_request_once_with_its_id(lines in lines(1..10)) {
        check_session(&lines.0)?;
    }
}

// Regressions: what the targets above found, as the lines that showed it.

const INIT: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"0"}}}"#;

fn replies_to(lines: &[&str]) -> Vec<Value> {
    let lines: Vec<Vec<u8>> = lines.iter().map(|l| l.as_bytes().to_vec()).collect();
    session(&lines).replies
}

fn has_reply(replies: &[Value], id: Value) -> bool {
    replies.iter().any(|r| same_id(&r["id"], &id))
}

/// rmcp holds a numeric id only as an `i64`: it answered `u64::MAX` or
/// `1.5` without the id, and the client waited for an answer forever.
#[test]
fn an_id_rmcp_cannot_hold_is_answered_with_that_id() {
    let ids = [json!(u64::MAX), json!(1.5), json!(1e300)];
    let lines: Vec<String> = ids
        .iter()
        .map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string())
        .collect();
    let mut all = vec![INIT];
    all.extend(lines.iter().map(String::as_str));
    let replies = replies_to(&all);
    for id in ids {
        assert!(
            has_reply(&replies, id.clone()),
            "no reply to id {id}: {replies:?}"
        );
    }
}

/// A request with a `result` (or an `error`) beside its `method` was
/// answered without the id.
#[test]
fn a_request_with_a_result_is_answered_with_its_id() {
    let replies = replies_to(&[
        INIT,
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","result":null}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"ping","error":{}}"#,
    ]);
    assert!(has_reply(&replies, json!(0)), "{replies:?}");
    assert!(has_reply(&replies, json!(3)), "{replies:?}");
}

/// An `initialize` rmcp cannot read opened the gate, and rmcp, still
/// waiting for one, ended the session at the next notification.
#[test]
fn an_unreadable_initialize_does_not_open_the_session() {
    let replies = replies_to(&[
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        INIT,
        r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
    ]);
    for id in [json!(1), json!("init"), json!(2)] {
        assert!(
            has_reply(&replies, id.clone()),
            "no reply to id {id}: {replies:?}"
        );
    }
}

/// A response before `initialize` went to rmcp, which ended the session.
#[test]
fn a_response_before_initialize_does_not_end_the_session() {
    let replies = replies_to(&[
        r#"{"jsonrpc":"2.0","id":0,"result":null}"#,
        INIT,
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    ]);
    assert!(has_reply(&replies, json!("init")), "{replies:?}");
    assert!(has_reply(&replies, json!(1)), "{replies:?}");
}

/// Two requests with one id (`1` twice, or `1.0` and `1`, equal by value),
/// the second sent while the first runs: rmcp keys running requests by id,
/// so one answer was dropped and the client waited for it. The gate now
/// refuses the second, with that id; an id is free again once answered.
#[test]
fn a_request_reusing_a_running_id_is_refused_not_dropped() {
    for first in ["1", "1.0"] {
        let ping = |id: &str| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let (a, b) = (ping(first), ping("1"));
        let replies = replies_to(&[INIT, &a, &b]);
        let ones: Vec<&Value> = replies
            .iter()
            .filter(|r| same_id(&r["id"], &json!(1)))
            .collect();
        assert_eq!(ones.len(), 2, "{first}: {replies:?}");
    }
}
