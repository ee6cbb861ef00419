//! `lode mcp` spoken to in raw JSON-RPC lines over its pipes, where a client
//! library would not send what a test needs (malformed input, a client that
//! goes away, `_meta` the way a host sends it).

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Repo;

/// The server with its pipes; stdout is read by a thread into a channel.
/// Killed when dropped, if still running.
pub struct Raw {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    /// Replies read while waiting for another id: replies come in any order.
    held: Vec<Value>,
    next_id: u64,
}

impl Raw {
    /// `lode mcp` on `repo` with all three pipes ([`Raw::finish`] reads
    /// stderr), initialized.
    pub fn start(repo: &Repo) -> Raw {
        Raw::spawn(repo.command(&["mcp"]).stderr(Stdio::piped()))
    }

    /// The server `cmd` starts, its stdin and stdout piped (stderr as `cmd`
    /// says), initialized.
    pub fn spawn(cmd: &mut Command) -> Raw {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut raw = Raw {
            stdin: child.stdin.take(),
            child,
            lines,
            held: Vec::new(),
            next_id: 1,
        };
        raw.send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#);
        raw.reply(0);
        raw.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        raw
    }

    /// Writes one line.
    pub fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// The reply with this id (others are held for later), within 60 s.
    pub fn reply(&mut self, id: u64) -> Value {
        if let Some(i) = self.held.iter().position(|v| v["id"] == id) {
            return self.held.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).expect("a reply in time");
            let v: Value = serde_json::from_str(&line).expect("stdout carries JSON-RPC only");
            if v["id"] == id {
                return v;
            }
            self.held.push(v);
        }
    }

    /// A `tools/call` with these arguments and, when given, `_meta`; the
    /// result.
    pub fn call(&mut self, tool: &str, arguments: Value, meta: Option<Value>) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let mut params = json!({"name": tool, "arguments": arguments});
        if let Some(meta) = meta {
            params["_meta"] = meta;
        }
        let line = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        self.send(&line.to_string());
        let reply = self.reply(id);
        reply["result"].clone()
    }

    /// Waits up to `limit` for the server to exit (stdin as it is); past it
    /// the test fails and the drop kills the server.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Closes stdin and waits for the exit; returns the exit status and stderr.
    pub fn finish(mut self) -> (ExitStatus, String) {
        drop(self.stdin.take());
        let status = self.wait_exit(Duration::from_secs(20));
        let mut err = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let _ = stderr.read_to_string(&mut err);
        }
        (status, err)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `lode mcp` on `repo` with all three pipes, not initialized.
pub fn spawn_piped(repo: &Repo) -> Child {
    repo.command(&["mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}
