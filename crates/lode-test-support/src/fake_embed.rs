//! A fake embedding server (OpenAI's `/v1/embeddings` or Ollama's
//! `/api/embed`), on `lode_http::test_server`: each request is answered with
//! what a closure says. Used by lode-embed's, lode-mcp's and lode-cli's tests.

use std::time::Duration;

use lode_http::test_server::{self, Response, TestServer};
use serde_json::{Value, json};

/// What the fake does with one request.
pub enum Reply {
    /// 200 with embeddings of this many dimensions for the request's inputs,
    /// in the shape of the request's path (`/api/embed`: Ollama, else OpenAI).
    Embed(usize),
    /// This status and raw body.
    Raw(u16, String),
    /// Read the request, then say nothing for this long.
    Hang(Duration),
    /// 200 with these bytes (a file).
    Bytes(Vec<u8>),
    /// 200 announcing these bytes' length, but only half of them sent.
    Truncated(Vec<u8>),
}

/// A request as the handler sees it: its number (from 0), path and JSON body.
pub struct Request {
    /// Its number, from 0, in the order the requests were read.
    pub n: usize,
    /// The request path (`/v1/embeddings`, `/api/embed`, …).
    pub path: String,
    /// The JSON body (`null` where it is not JSON).
    pub body: Value,
}

impl Request {
    fn of(r: &test_server::Request) -> Request {
        Request {
            n: r.n,
            path: r.path.clone(),
            body: serde_json::from_slice(&r.body).unwrap_or_default(),
        }
    }

    /// The texts to embed.
    pub fn inputs(&self) -> Vec<String> {
        match &self.body["input"] {
            Value::Array(a) => a
                .iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect(),
            Value::String(s) => vec![s.clone()],
            _ => Vec::new(),
        }
    }
}

/// A request as recorded: its path, JSON body and header lines.
pub type Seen = (String, Value, Vec<String>);

/// A running fake server.
pub struct Fake {
    /// Its base URL (`http://127.0.0.1:PORT`).
    pub url: String,
    server: TestServer,
}

impl Fake {
    /// Serves until the test process ends.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Fake {
        let server = TestServer::start(move |r| {
            let request = Request::of(r);
            match handler(&request) {
                Reply::Embed(dim) => Response::json(200, embeddings(&request, dim).to_string()),
                Reply::Raw(status, text) => Response::json(status, text),
                Reply::Hang(d) => Response::Hang(d),
                Reply::Bytes(bytes) => Response::bytes(bytes),
                Reply::Truncated(bytes) => Response::Truncated(bytes),
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

    /// (path, body, header lines) of each request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.server
            .seen()
            .iter()
            .map(|r| (r.path.clone(), Request::of(r).body, r.headers.clone()))
            .collect()
    }
}

/// A deterministic vector for a text: its bytes spread over `dim` slots.
/// Texts that share words share components, so searches have some sense.
pub fn vector(text: &str, dim: usize) -> Vec<f32> {
    let mut v = vec![0f32; dim];
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let mut h: u64 = 0xcbf29ce484222325;
        for b in word.to_lowercase().bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100000001b3);
        }
        v[(h % dim as u64) as usize] += 1.0;
    }
    v[0] += 0.01;
    v
}

/// The reply to an embedding request, in the shape of its path.
fn embeddings(request: &Request, dim: usize) -> Value {
    let vectors: Vec<Vec<f32>> = request.inputs().iter().map(|t| vector(t, dim)).collect();
    if request.path.ends_with("/api/embed") {
        json!({ "model": request.body["model"], "embeddings": vectors })
    } else {
        // Reversed with explicit indexes: the client must order by `index`.
        let data: Vec<Value> = vectors
            .iter()
            .enumerate()
            .rev()
            .map(|(i, v)| json!({"object": "embedding", "index": i, "embedding": v}))
            .collect();
        json!({ "object": "list", "data": data, "model": request.body["model"] })
    }
}
