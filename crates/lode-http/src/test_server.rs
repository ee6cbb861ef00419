//! A local HTTP/1.1 server for tests (feature `test-server`): it listens on
//! 127.0.0.1:0, serves each connection on its own thread, records each
//! request, and answers it as a closure says — a status and body, a hang,
//! or a reply cut short. One request per connection (`Connection: close`),
//! which is all the clients under test need.
//!
//! The tests of `lode-embed`, `lode-gather` and the crates above them wrap
//! it in a fake of their own server (embeddings, chat completions).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One request as received.
#[derive(Clone, Debug)]
pub struct Request {
    /// Its number, from 0, in the order the requests were read.
    pub n: usize,
    /// The request target (`/v1/embeddings`).
    pub path: String,
    /// The request line and the header lines, as sent.
    pub headers: Vec<String>,
    /// The body, as sent.
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (any case), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers[1.min(self.headers.len())..]
            .iter()
            .find_map(|h| {
                let (k, v) = h.split_once(':')?;
                k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
            })
    }
}

/// What the server does with one request.
pub enum Response {
    /// This status, content type and body.
    Body {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type` header.
        content_type: &'static str,
        /// The body.
        body: Vec<u8>,
    },
    /// A 200 announcing these bytes' length, but only half of them sent.
    Truncated(Vec<u8>),
    /// Nothing for this long, then the connection closes.
    Hang(Duration),
}

impl Response {
    /// `status` with a JSON (or any text) body.
    pub fn json(status: u16, text: impl Into<String>) -> Response {
        Response::Body {
            status,
            content_type: "application/json",
            body: text.into().into_bytes(),
        }
    }

    /// 200 with these bytes (a file).
    pub fn bytes(body: Vec<u8>) -> Response {
        Response::Body {
            status: 200,
            content_type: "application/octet-stream",
            body,
        }
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A running server; it serves until the test process ends.
pub struct TestServer {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    seen: Arc<Mutex<Vec<Request>>>,
}

impl TestServer {
    /// Listens on 127.0.0.1 at a free port and answers each request with
    /// what `handler` says, on its own thread.
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let recorded = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, recorded) = (Arc::clone(&handler), Arc::clone(&recorded));
                std::thread::spawn(move || serve(stream, &*handler, &recorded));
            }
        });
        TestServer { url, seen }
    }

    /// Requests received so far (those still being answered included).
    pub fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// The requests received so far, in order.
    pub fn seen(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

/// A loopback URL nothing listens on (a port just released).
pub fn refused_url() -> String {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    format!("http://127.0.0.1:{port}")
}

/// Reads one request, records it, answers it; a request cut short is dropped.
fn serve(stream: TcpStream, handler: &Handler, seen: &Mutex<Vec<Request>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut length = 0usize;
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        headers.push(line.to_string());
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let path = headers
        .first()
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("")
        .to_string();
    let mut body = vec![0u8; length];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let request = {
        let mut seen = seen.lock().unwrap();
        let request = Request {
            n: seen.len(),
            path,
            headers,
            body,
        };
        seen.push(request.clone());
        request
    };
    let mut stream = stream;
    let (status, content_type, body, sent) = match handler(&request) {
        Response::Hang(d) => {
            std::thread::sleep(d);
            return;
        }
        Response::Truncated(body) => {
            let half = body.len() / 2;
            (200, "application/octet-stream", body, half)
        }
        Response::Body {
            status,
            content_type,
            body,
        } => {
            let all = body.len();
            (status, content_type, body, all)
        }
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body[..sent]);
    let _ = stream.flush();
}
