//! A fake OpenAI-compatible decision endpoint: a local HTTP server on
//! 127.0.0.1:0, one thread per connection, answering each request with
//! what a closure says. Shared by lode-gather's and lode-cli's tests.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the fake does with one request.
pub enum Reply {
    /// 200 with a chat completion whose message content is this text.
    Content(String),
    /// This status and raw body.
    Raw(u16, String),
    /// Read the request, then say nothing for this long.
    Hang(Duration),
}

pub struct Fake {
    pub url: String,
    requests: Arc<AtomicUsize>,
    bodies: Arc<Mutex<Vec<String>>>,
    headers: Arc<Mutex<Vec<Vec<String>>>>,
}

impl Fake {
    /// Serves until the test process ends.
    pub fn start(handler: impl Fn(&serde_json::Value) -> Reply + Send + Sync + 'static) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let headers = Arc::new(Mutex::new(Vec::new()));
        let handler = Arc::new(handler);
        let (r, b, h) = (requests.clone(), bodies.clone(), headers.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, r, b, h) = (handler.clone(), r.clone(), b.clone(), h.clone());
                std::thread::spawn(move || serve(stream, &*handler, &r, &b, &h));
            }
        });
        Fake {
            url,
            requests,
            bodies,
            headers,
        }
    }

    /// Requests received so far.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }

    /// The header lines of each request received so far.
    pub fn headers(&self) -> Vec<Vec<String>> {
        self.headers.lock().unwrap().clone()
    }

    /// The request bodies received so far.
    pub fn bodies(&self) -> Vec<String> {
        self.bodies.lock().unwrap().clone()
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

fn serve(
    stream: TcpStream,
    handler: &(dyn Fn(&serde_json::Value) -> Reply + Send + Sync),
    requests: &AtomicUsize,
    bodies: &Mutex<Vec<String>>,
    headers: &Mutex<Vec<Vec<String>>>,
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
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let body = String::from_utf8_lossy(&body).into_owned();
    headers.lock().unwrap().push(lines);
    requests.fetch_add(1, Ordering::SeqCst);
    bodies.lock().unwrap().push(body.clone());
    let request: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
    let (status, text) = match handler(&request) {
        Reply::Hang(d) => {
            std::thread::sleep(d);
            return;
        }
        Reply::Raw(status, text) => (status, text),
        Reply::Content(content) => (
            200,
            serde_json::json!({
                "id": "fake",
                "object": "chat.completion",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            })
            .to_string(),
        ),
    };
    let mut stream = stream;
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
        text.len()
    );
    let _ = stream.flush();
}
