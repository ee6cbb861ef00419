//! A fake OpenAI-compatible decision endpoint (the model `lode gather` asks
//! what to keep), on `lode_http::test_server`: each request is answered with
//! what a closure says. Used by lode-gather's and lode-cli's tests.

use std::time::Duration;

use lode_http::test_server::{Response, TestServer};

/// What the fake does with one request.
pub enum Reply {
    /// 200 with a chat completion whose message content is this text.
    Content(String),
    /// This status and raw body.
    Raw(u16, String),
    /// Read the request, then say nothing for this long.
    Hang(Duration),
}

/// A running fake endpoint.
pub struct Fake {
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    server: TestServer,
}

impl Fake {
    /// Serves until the test process ends.
    pub fn start(handler: impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static) -> Fake {
        let server = TestServer::start(move |r| {
            let request = serde_json::from_slice(&r.body).unwrap_or_default();
            match handler(&request) {
                Reply::Hang(d) => Response::Hang(d),
                Reply::Raw(status, text) => Response::json(status, text),
                Reply::Content(content) => Response::json(
                    200,
                    serde_json::json!({
                        "id": "fake",
                        "object": "chat.completion",
                        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                    })
                    .to_string(),
                ),
            }
        });
        Fake {
            url: server.url.clone(),
            server,
        }
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.server.requests()
    }

    /// The header lines of each request received so far.
    pub fn headers(&self) -> Vec<Vec<String>> {
        self.server.seen().into_iter().map(|r| r.headers).collect()
    }

    /// The request bodies received so far.
    pub fn bodies(&self) -> Vec<String> {
        self.server
            .seen()
            .iter()
            .map(|r| String::from_utf8_lossy(&r.body).into_owned())
            .collect()
    }
}

/// The user message of a chat request.
pub fn user_message(request: &serde_json::Value) -> String {
    request["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "user"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or("")
        .to_string()
}

/// The frontier of a prompt as (id, name) from its `[id] name  kind …` lines.
pub fn frontier(request: &serde_json::Value) -> Vec<(u32, String)> {
    user_message(request)
        .lines()
        .filter_map(|l| {
            let (id, rest) = l.strip_prefix('[')?.split_once("] ")?;
            let name = rest.split_whitespace().next()?;
            Some((id.parse().ok()?, name.to_string()))
        })
        .collect()
}

/// A model for the `chain` fixture of lode-gather's tests: it keeps what lies
/// on the retry chain (`backoff_delay`, `jitter`, `sync_folder`), expands
/// it, and stops once the end of the chain (`jitter`) was offered.
pub fn chain_model(request: &serde_json::Value) -> Reply {
    let frontier = frontier(request);
    let on_chain = |n: &str| matches!(n, "backoff_delay" | "jitter" | "sync_folder");
    let keep: Vec<u32> = frontier
        .iter()
        .filter(|(_, n)| on_chain(n))
        .map(|(i, _)| *i)
        .collect();
    let stop = frontier.iter().any(|(_, n)| n == "jitter");
    Reply::Content(serde_json::json!({"keep": keep, "expand": keep, "stop": stop}).to_string())
}
