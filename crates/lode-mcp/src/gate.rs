//! A JSON-RPC gate in front of rmcp: each line the client sends is checked
//! before the protocol sees it, so that malformed input gets the error reply
//! JSON-RPC owes it (-32700, -32600, -32602) instead of silence, and a
//! request before `initialize` gets a clear error instead of ending the
//! session. A request rmcp cannot read (an id that is not an `i64` or a
//! string, a `result` beside a `method`), which rmcp would answer without
//! its id, is answered here, with it; an `initialize` rmcp cannot read, or a
//! response before `initialize`, would end rmcp's session and is refused. A
//! request whose id another request still running holds is refused too: rmcp
//! keys running requests by id and would drop one of the two answers.
//!
//! [`Gate::check`] decides one line ([`Verdict`]); [`serve_gated`] runs the
//! gate between a reader and a writer and rmcp between the two, merging
//! rmcp's lines and the gate's replies into whole lines on the writer.

use std::collections::HashSet;
use std::io;
use std::sync::{Arc, Mutex};

use rmcp::model::RequestId;
use serde_json::{Value, json};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line read; the rest of a longer one is skipped and refused.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// JSON-RPC error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// What to do with one line.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Well formed: rmcp gets it.
    Forward,
    /// An error reply to send back.
    Reply(Value),
    /// A notification (or a response) that is refused: no reply is owed, so
    /// say why on stderr.
    Log(String),
    /// A blank line: nothing at all.
    Skip,
}

/// The gate's state: whether `initialize` has been seen, and the ids of the
/// requests rmcp has and has not answered yet.
#[derive(Debug, Default)]
pub struct Gate {
    initialized: bool,
    running: Running,
}

/// The ids of the requests forwarded to rmcp and not yet answered, shared
/// with the relay that sees rmcp's answers.
#[derive(Clone, Debug, Default)]
struct Running(Arc<Mutex<HashSet<RequestId>>>);

impl Running {
    /// Claims `id` for a request; `false` when another running request holds it.
    fn claim(&self, id: RequestId) -> bool {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).insert(id)
    }

    fn release(&self, id: &RequestId) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(id);
    }

    /// Releases the id an answer of rmcp's (a line it wrote) carries.
    fn answered(&self, line: &[u8]) {
        #[derive(serde::Deserialize)]
        struct Answer {
            id: Option<RequestId>,
            method: Option<serde::de::IgnoredAny>,
        }
        if let Ok(Answer {
            id: Some(id),
            method: None,
        }) = serde_json::from_slice(line)
        {
            self.release(&id);
        }
    }
}

fn error(code: i64, message: &str, id: Value) -> Verdict {
    Verdict::Reply(json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": {"code": code, "message": message},
    }))
}

impl Gate {
    /// Decides what becomes of `line` (without its newline).
    pub fn check(&mut self, line: &[u8]) -> Verdict {
        match self.admit(line) {
            Ok(v) | Err(v) => v,
        }
    }

    /// [`Gate::check`], with every refusal as the error.
    fn admit(&mut self, line: &[u8]) -> Result<Verdict, Verdict> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(Verdict::Skip);
        }
        let msg = parse_object(line)?;
        let obj = msg.as_object().expect("parse_object gives an object");
        let id = message_id(obj)?;
        let refuse = |code: i64, why: &str| match &id {
            Some(id) => error(code, why, id.clone()),
            None => Verdict::Log(format!("notification refused: {why}")),
        };
        if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(refuse(INVALID_REQUEST, "jsonrpc must be \"2.0\""));
        }
        let method = match obj.get("method") {
            Some(Value::String(m)) => m.as_str(),
            Some(_) => return Err(refuse(INVALID_REQUEST, "method must be a string")),
            // A response to a request of the server's (a ping). Before
            // `initialize` there was none, and rmcp would end the session.
            None if id.is_some() && (obj.contains_key("result") || obj.contains_key("error")) => {
                return Ok(if self.initialized {
                    Verdict::Forward
                } else {
                    Verdict::Log("a response before initialize: dropped".into())
                });
            }
            None => return Err(refuse(INVALID_REQUEST, "no method")),
        };
        check_params(obj, method).map_err(|why| refuse(INVALID_PARAMS, why))?;
        let request_id = match &id {
            Some(id) => {
                Some(readable_request(id, obj, line).map_err(|why| refuse(INVALID_REQUEST, &why))?)
            }
            None => None,
        };
        if !self.initialized {
            return self.open(method, obj, request_id, &refuse);
        }
        if method == "notifications/cancelled"
            && let Some(id) = obj
                .get("params")
                .and_then(|p| p.get("requestId"))
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok())
        {
            // A cancelled request gets no answer: its id is free again.
            self.running.release(&id);
        }
        Ok(self.forward(request_id, &refuse))
    }

    /// Before `initialize`: only an `initialize` request rmcp can read opens
    /// the session; rmcp reads one without its fields as another request and
    /// would still wait for one.
    fn open(
        &mut self,
        method: &str,
        obj: &serde_json::Map<String, Value>,
        request_id: Option<RequestId>,
        refuse: &dyn Fn(i64, &str) -> Verdict,
    ) -> Result<Verdict, Verdict> {
        if method != "initialize" || request_id.is_none() {
            return Err(refuse(
                INVALID_REQUEST,
                "the session is not initialized: send initialize first",
            ));
        }
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        if let Err(e) = serde_json::from_value::<rmcp::model::InitializeRequestParams>(params) {
            let why = format!("initialize: {}", clip(&e.to_string()));
            return Err(refuse(INVALID_PARAMS, &why));
        }
        self.initialized = true;
        Ok(self.forward(request_id, refuse))
    }

    /// Forwards a request (or a notification) unless its id is in use.
    fn forward(&self, id: Option<RequestId>, refuse: &dyn Fn(i64, &str) -> Verdict) -> Verdict {
        match id {
            Some(id) if !self.running.claim(id.clone()) => refuse(
                INVALID_REQUEST,
                "this id is held by a request still running: give each request its own id",
            ),
            _ => Verdict::Forward,
        }
    }
}

/// The line as a JSON object, or the reply owed to one that is not.
fn parse_object(line: &[u8]) -> Result<Value, Verdict> {
    // serde_json refuses nesting past 128 levels: deep input is an error, not a stack overflow.
    let msg: Value = serde_json::from_slice(line)
        .map_err(|e| error(PARSE_ERROR, &format!("parse error: {e}"), Value::Null))?;
    if msg.is_object() {
        return Ok(msg);
    }
    let why = if msg.is_array() {
        "batches are not supported: send one message per line"
    } else {
        "a message must be a JSON object"
    };
    Err(error(INVALID_REQUEST, why, Value::Null))
}

/// The message's id: none (a notification), a string or a number.
fn message_id(obj: &serde_json::Map<String, Value>) -> Result<Option<Value>, Verdict> {
    match obj.get("id") {
        None => Ok(None),
        Some(id @ (Value::String(_) | Value::Number(_))) => Ok(Some(id.clone())),
        Some(_) => Err(error(
            INVALID_REQUEST,
            "id must be a string or a number",
            Value::Null,
        )),
    }
}

/// Why the message's `params` (or a tool call's `arguments`) are refused.
fn check_params(obj: &serde_json::Map<String, Value>, method: &str) -> Result<(), &'static str> {
    let params = obj.get("params");
    if params.is_some_and(|p| !p.is_object()) {
        return Err("params must be an object");
    }
    if method == "tools/call"
        && let Some(args) = params.and_then(|p| p.get("arguments"))
        && !args.is_object()
    {
        return Err("arguments must be an object");
    }
    Ok(())
}

/// The id of a request rmcp can read, or why it cannot. rmcp answers a
/// request it cannot read without the id, which the client cannot match to
/// its request: the gate answers it, with it.
fn readable_request(
    id: &Value,
    obj: &serde_json::Map<String, Value>,
    line: &[u8],
) -> Result<RequestId, String> {
    let id = serde_json::from_value::<RequestId>(id.clone())
        .map_err(|_| "id must be a string or an integer".to_string())?;
    if obj.contains_key("result") || obj.contains_key("error") {
        return Err("a request has no result or error".into());
    }
    if let Err(e) = serde_json::from_slice::<rmcp::model::ClientJsonRpcMessage>(line) {
        return Err(format!(
            "not a request the server reads: {}",
            clip(&e.to_string())
        ));
    }
    Ok(id)
}

/// The start of a message that may quote the client's input.
fn clip(s: &str) -> String {
    match s.char_indices().nth(200) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// One line read with a bound: its bytes, or how long it ran when over.
enum Line {
    Text(Vec<u8>),
    TooLong(usize),
}

/// The next line of `r`, at most [`MAX_LINE_BYTES`]; `None` at the end.
async fn next_line(r: &mut (impl AsyncBufRead + Unpin)) -> io::Result<Option<Line>> {
    let (mut buf, mut seen) = (Vec::new(), 0usize);
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok((seen > 0).then(|| finish(buf, seen)));
        }
        let (take, end) = match avail.iter().position(|&b| b == b'\n') {
            Some(i) => (i, true),
            None => (avail.len(), false),
        };
        if seen + take <= MAX_LINE_BYTES {
            buf.extend_from_slice(&avail[..take]);
        }
        seen += take;
        r.consume(take + usize::from(end));
        if end {
            return Ok(Some(finish(buf, seen)));
        }
    }
}

fn finish(buf: Vec<u8>, seen: usize) -> Line {
    if seen > MAX_LINE_BYTES {
        Line::TooLong(seen)
    } else {
        Line::Text(buf)
    }
}

/// Runs `serve` (rmcp over the given reader and writer) behind the gate:
/// the client's lines come from `input`, every reply goes to `output` as
/// whole lines. Returns what `serve` returns once the client has gone.
pub async fn serve_gated<I, O, F, Fut, T>(input: I, output: O, serve: F) -> T
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(tokio::io::DuplexStream, tokio::io::DuplexStream) -> Fut,
    Fut: std::future::Future<Output = T>,
{
    const PIPE: usize = 1 << 16;
    let (to_rmcp, rmcp_in) = tokio::io::duplex(PIPE);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(PIPE);
    let (lines, mut queue) = mpsc::unbounded_channel::<Vec<u8>>();

    let replies = lines.clone();
    let gate = Gate::default();
    let running = gate.running.clone();
    let reader = tokio::spawn(read_client(input, gate, to_rmcp, replies));
    let relay = tokio::spawn(async move {
        let mut from_rmcp = BufReader::new(from_rmcp);
        let mut line = Vec::new();
        while from_rmcp.read_until(b'\n', &mut line).await.unwrap_or(0) > 0 {
            running.answered(&line);
            if lines.send(std::mem::take(&mut line)).is_err() {
                break;
            }
        }
    });
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(mut line) = queue.recv().await {
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            if output.write_all(&line).await.is_err() || output.flush().await.is_err() {
                break;
            }
        }
    });
    let outcome = serve(rmcp_in, rmcp_out).await;
    reader.abort();
    let _ = relay.await;
    let _ = writer.await;
    outcome
}

/// Reads the client's lines: well-formed ones go to rmcp, the rest get
/// their reply on `replies` or a line on stderr. Ends at the client's end,
/// which closes rmcp's input.
async fn read_client(
    input: impl tokio::io::AsyncRead + Unpin,
    mut gate: Gate,
    mut to_rmcp: tokio::io::DuplexStream,
    replies: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut input = BufReader::new(input);
    loop {
        let verdict = match next_line(&mut input).await {
            Ok(None) | Err(_) => break,
            Ok(Some(Line::TooLong(n))) => error(
                PARSE_ERROR,
                &format!("a line of {n} bytes is over the {MAX_LINE_BYTES}-byte limit"),
                Value::Null,
            ),
            Ok(Some(Line::Text(mut line))) => match gate.check(&line) {
                Verdict::Forward => {
                    line.push(b'\n');
                    if to_rmcp.write_all(&line).await.is_err() {
                        break;
                    }
                    continue;
                }
                other => other,
            },
        };
        match verdict {
            Verdict::Reply(v) => {
                let _ = replies.send(v.to_string().into_bytes());
            }
            Verdict::Log(why) => eprintln!("lode: {why}"),
            Verdict::Forward | Verdict::Skip => {}
        }
    }
    let _ = to_rmcp.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> (i64, Value) {
        match v {
            Verdict::Reply(r) => (r["error"]["code"].as_i64().unwrap(), r["id"].clone()),
            other => panic!("not a reply: {other:?}"),
        }
    }

    const INIT: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

    fn ready() -> Gate {
        let mut g = Gate::default();
        assert_eq!(g.check(INIT.as_bytes()), Verdict::Forward);
        g
    }

    #[test]
    fn each_malformed_shape_gets_its_error() {
        let mut g = ready();
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let deep_args = format!(
            r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":"search","arguments":{}}}}}"#,
            "{\"a\":".repeat(5000) + "1" + &"}".repeat(5000)
        );
        for (line, want) in [
            ("not json", (PARSE_ERROR, Value::Null)),
            (deep.as_str(), (PARSE_ERROR, Value::Null)),
            (deep_args.as_str(), (PARSE_ERROR, Value::Null)),
            ("[1, 2]", (INVALID_REQUEST, Value::Null)),
            ("[]", (INVALID_REQUEST, Value::Null)),
            ("42", (INVALID_REQUEST, Value::Null)),
            (
                r#"{"jsonrpc":"1.0","id":1,"method":"ping"}"#,
                (INVALID_REQUEST, json!(1)),
            ),
            (r#"{"id":2,"method":"ping"}"#, (INVALID_REQUEST, json!(2))),
            (r#"{"jsonrpc":"2.0","id":3}"#, (INVALID_REQUEST, json!(3))),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                (INVALID_REQUEST, Value::Null),
            ),
            (
                r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#,
                (INVALID_REQUEST, Value::Null),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"s","method":7}"#,
                (INVALID_REQUEST, json!("s")),
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                (INVALID_REQUEST, json!(1.5)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
                (INVALID_REQUEST, json!(u64::MAX)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":[1]}"#,
                (INVALID_PARAMS, json!(4)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":"q"}}"#,
                (INVALID_PARAMS, json!(5)),
            ),
            (
                r#"{"jsonrpc":"2.0","id":6,"method":"ping","result":{}}"#,
                (INVALID_REQUEST, json!(6)),
            ),
        ] {
            assert_eq!(code(&g.check(line.as_bytes())), want, "{line:.60}");
        }
    }

    #[test]
    fn well_formed_lines_pass_and_notifications_are_never_answered() {
        let mut g = ready();
        for line in [
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"no/such/method"}"#,
        ] {
            assert_eq!(g.check(line.as_bytes()), Verdict::Forward, "{line}");
        }
        let bad_note = br#"{"jsonrpc":"2.0","method":"notifications/x","params":[1]}"#;
        assert!(matches!(g.check(bad_note), Verdict::Log(_)));
        assert_eq!(g.check(b"   "), Verdict::Skip);
    }

    #[test]
    fn requests_before_initialize_are_refused_not_fatal() {
        let mut g = Gate::default();
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(code(&g.check(list)), (INVALID_REQUEST, json!(1)));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(g.check(note), Verdict::Log(_)));
        // Nor is a response, nor an `initialize` rmcp cannot read: both would end its session.
        assert!(matches!(
            g.check(br#"{"jsonrpc":"2.0","id":0,"result":{}}"#),
            Verdict::Log(_)
        ));
        let empty = br#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{}}"#;
        assert_eq!(code(&g.check(empty)), (INVALID_PARAMS, json!(2)));
        assert_eq!(code(&g.check(list)), (INVALID_REQUEST, json!(1)));
        assert_eq!(g.check(INIT.as_bytes()), Verdict::Forward);
        assert_eq!(g.check(list), Verdict::Forward);
    }

    #[test]
    fn an_id_is_held_from_its_request_to_its_answer() {
        let mut g = ready();
        let ping = br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#;
        assert_eq!(g.check(ping), Verdict::Forward);
        // Equal by value: rmcp reads 5.0 as 5.
        let again = br#"{"jsonrpc":"2.0","id":5.0,"method":"ping"}"#;
        assert_eq!(code(&g.check(again)), (INVALID_REQUEST, json!(5.0)));
        g.running
            .answered(br#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
        assert_eq!(g.check(ping), Verdict::Forward);
        // A server's request to the client (a method beside the id) frees nothing.
        g.running
            .answered(br#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
        assert_eq!(code(&g.check(ping)), (INVALID_REQUEST, json!(5)));
        // A cancelled request is never answered: the cancellation frees its id.
        let cancel =
            br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}"#;
        assert_eq!(g.check(cancel), Verdict::Forward);
        assert_eq!(g.check(ping), Verdict::Forward);
    }

    #[tokio::test]
    async fn an_overlong_line_is_refused_and_the_next_one_read() {
        let mut input = vec![b'x'; MAX_LINE_BYTES + 10];
        input.extend_from_slice(b"\nnext\n");
        let mut r = BufReader::new(&input[..]);
        assert!(
            matches!(next_line(&mut r).await.unwrap(), Some(Line::TooLong(n)) if n == MAX_LINE_BYTES + 10)
        );
        assert!(matches!(next_line(&mut r).await.unwrap(), Some(Line::Text(t)) if t == b"next"));
        assert!(next_line(&mut r).await.unwrap().is_none());
    }
}
