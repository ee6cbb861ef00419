//! A fake embedding server for tests: a local HTTP server on 127.0.0.1:0,
//! one thread per connection, answering each request with what a closure
//! says. Shared by lode-embed's, lode-index's and lode-cli's tests
//! (`#[path]`-included), so it depends on `serde_json` only.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
    pub n: usize,
    pub path: String,
    pub body: Value,
}

impl Request {
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

pub struct Fake {
    pub url: String,
    requests: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Fake {
    /// Serves until the test process ends.
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler = Arc::new(handler);
        let (r, s) = (requests.clone(), seen.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, r, s) = (handler.clone(), r.clone(), s.clone());
                std::thread::spawn(move || serve(stream, &*handler, &r, &s));
            }
        });
        Fake {
            url,
            requests,
            seen,
        }
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// (path, body, header lines) of each request received so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

/// A loopback URL nothing listens on.
pub fn refused_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
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

fn serve(
    stream: TcpStream,
    handler: &(dyn Fn(&Request) -> Reply + Send + Sync),
    requests: &AtomicUsize,
    seen: &Mutex<Vec<Seen>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    let mut lines = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        lines.push(line.to_string());
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let path = lines
        .first()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let n = requests.fetch_add(1, Ordering::SeqCst);
    seen.lock()
        .unwrap()
        .push((path.clone(), body.clone(), lines));
    let request = Request { n, path, body };
    let mut stream = stream;
    let (status, text) = match handler(&request) {
        Reply::Hang(d) => {
            std::thread::sleep(d);
            return;
        }
        Reply::Bytes(bytes) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = stream.write_all(&bytes);
            let _ = stream.flush();
            return;
        }
        Reply::Truncated(bytes) => {
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                bytes.len()
            );
            let _ = stream.write_all(&bytes[..bytes.len() / 2]);
            let _ = stream.flush();
            return;
        }
        Reply::Raw(status, text) => (status, text),
        Reply::Embed(dim) => {
            let vectors: Vec<Vec<f32>> = request.inputs().iter().map(|t| vector(t, dim)).collect();
            let text = if request.path.ends_with("/api/embed") {
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
            };
            (200, text.to_string())
        }
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
}
