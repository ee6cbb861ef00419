//! One downstream MCP server: a child process behind an rmcp client, and
//! whether it still answers. A server that fails once is down for good — the
//! gateway does not restart it (a restart could change its tools under an
//! agent that has already seen them).

use std::process::Stdio;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, Tool};
use rmcp::service::{Peer, RoleClient, RunningService, RunningServiceCancellationToken};
use rmcp::transport::TokioChildProcess;
use rmcp::{ServiceError, ServiceExt};

use crate::config::ServerConfig;

/// A started server: the running client (its owner watches it end) and the
/// tools it listed.
pub(crate) struct Started {
    pub running: RunningService<RoleClient, ()>,
    pub tools: Vec<Tool>,
}

/// Spawns the server and waits, at most `timeout`, for `initialize` and
/// `tools/list`. The error is one line for the log. On timeout the child is
/// dropped, which kills it.
pub(crate) async fn start(config: &ServerConfig, timeout: Duration) -> Result<Started, String> {
    let mut cmd = tokio::process::Command::new(&config.command);
    cmd.args(&config.args).envs(&config.env);
    // The server's log joins the gateway's (stderr is the MCP client's log).
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", config.command))?;
    let handshake = async {
        let running =
            ().serve(transport)
                .await
                .map_err(|e| short(&format!("no MCP initialize: {e}")))?;
        let tools = running
            .list_all_tools()
            .await
            .map_err(|e| short(&format!("tools/list failed: {e}")))?;
        Ok(Started { running, tools })
    };
    tokio::time::timeout(timeout, handshake)
        .await
        .unwrap_or_else(|_| {
            Err(format!(
                "no answer to initialize and tools/list within {} ms",
                timeout.as_millis()
            ))
        })
}

/// A configured server as the gateway sees it while serving.
pub(crate) struct Downstream {
    pub name: String,
    /// `None` when it never started.
    peer: Option<Peer<RoleClient>>,
    /// Stops its client (and so the child) when it is marked down.
    stop: Mutex<Option<RunningServiceCancellationToken>>,
    /// `Some(why)` once it is unavailable.
    down: Mutex<Option<String>>,
}

/// What became of a forwarded call.
pub(crate) enum Outcome {
    /// The server answered with a tool result (which may itself be an error).
    Answered(CallToolResult),
    /// The server answered, but not with something to pass on; it stays up.
    Refused(String),
    /// The server crashed, hung or answered garbage: it is down from now on.
    Failed(String),
}

impl Downstream {
    pub fn up(name: &str, running: &RunningService<RoleClient, ()>) -> Downstream {
        Downstream {
            name: name.to_string(),
            peer: Some(running.peer().clone()),
            stop: Mutex::new(Some(running.cancellation_token())),
            down: Mutex::new(None),
        }
    }

    pub fn failed(name: &str, why: String) -> Downstream {
        Downstream {
            name: name.to_string(),
            peer: None,
            stop: Mutex::new(None),
            down: Mutex::new(Some(why)),
        }
    }

    /// Why it is unavailable, if it is.
    pub fn down_reason(&self) -> Option<String> {
        self.down.lock().unwrap().clone()
    }

    pub fn is_up(&self) -> bool {
        self.down.lock().unwrap().is_none()
    }

    /// Marks it unavailable and stops its client; `false` if it already was.
    pub fn mark_down(&self, why: String) -> bool {
        {
            let mut down = self.down.lock().unwrap();
            if down.is_some() {
                return false;
            }
            *down = Some(why);
        }
        self.stop();
        true
    }

    /// Stops the client: its stdin closes, then the child is terminated.
    pub fn stop(&self) {
        if let Some(token) = self.stop.lock().unwrap().take() {
            token.cancel();
        }
    }

    /// Forwards one call under `original` (the server's own name for the tool).
    pub async fn call(
        &self,
        original: &str,
        arguments: Option<JsonObject>,
        timeout: Duration,
    ) -> Outcome {
        let (Some(peer), true) = (&self.peer, self.is_up()) else {
            return Outcome::Refused(self.unavailable());
        };
        let mut params = CallToolRequestParams::new(original.to_string());
        params.arguments = arguments;
        // Dropping the request on timeout sends notifications/cancelled.
        match tokio::time::timeout(timeout, peer.call_tool_once(params)).await {
            Err(_) => Outcome::Failed(format!("no answer within {} ms", timeout.as_millis())),
            Ok(Ok(CallToolResponse::Complete(result))) => Outcome::Answered(result),
            Ok(Ok(_)) => Outcome::Refused(format!(
                "server {:?} asked for input or started a task, which the gateway does not relay",
                self.name
            )),
            Ok(Err(ServiceError::McpError(e))) => Outcome::Refused(format!(
                "server {:?} refused the call: {}",
                self.name,
                short(&e.message)
            )),
            Ok(Err(ServiceError::UnexpectedResponse)) => {
                Outcome::Failed("answered with something that is not a tool result".into())
            }
            Ok(Err(e)) => Outcome::Failed(short(&format!("connection lost ({e})"))),
        }
    }

    /// The message a call of one of its tools gets while it is down.
    pub fn unavailable(&self) -> String {
        format!(
            "server {:?} is unavailable ({}); its tools cannot be called",
            self.name,
            self.down_reason().unwrap_or_default()
        )
    }
}

/// One line of at most 300 characters: SDK errors may quote whole messages.
pub(crate) fn short(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}
