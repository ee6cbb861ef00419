//! One downstream MCP server: a child process behind an rmcp client, and
//! whether it still answers. A server that fails is down until the hub
//! restarts it; each start is an *epoch*, so news about an old process (its
//! watcher ending, a call that failed on it) cannot mark the new one down.

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
    state: Mutex<State>,
}

struct State {
    /// `None` when it never started.
    peer: Option<Peer<RoleClient>>,
    /// Stops its client (and so the child) when it is marked down.
    stop: Option<RunningServiceCancellationToken>,
    /// `Some(why)` while it is unavailable.
    down: Option<String>,
    /// Which start the peer belongs to: 0 for the first, +1 per restart.
    epoch: u64,
}

impl State {
    /// Marks the process of `epoch` down: `None` when it already is, or is
    /// not the current process; else the token that stops its client.
    fn take_down(
        &mut self,
        epoch: u64,
        why: String,
    ) -> Option<Option<RunningServiceCancellationToken>> {
        if self.epoch != epoch || self.down.is_some() {
            return None;
        }
        self.down = Some(why);
        Some(self.stop.take())
    }
}

/// What became of a forwarded call.
pub(crate) enum Outcome {
    /// The server answered with a tool result (which may itself be an error).
    Answered(CallToolResult),
    /// The server answered, but not with something to pass on; it stays up.
    Refused(String),
    /// The server (of this epoch) crashed, hung or answered garbage.
    Failed { epoch: u64, why: String },
}

impl Downstream {
    pub fn up(name: &str, running: &RunningService<RoleClient, ()>) -> Downstream {
        Downstream {
            name: name.to_string(),
            state: Mutex::new(State {
                peer: Some(running.peer().clone()),
                stop: Some(running.cancellation_token()),
                down: None,
                epoch: 0,
            }),
        }
    }

    pub fn failed(name: &str, why: String) -> Downstream {
        Downstream {
            name: name.to_string(),
            state: Mutex::new(State {
                peer: None,
                stop: None,
                down: Some(why),
                epoch: 0,
            }),
        }
    }

    /// Why it is unavailable, if it is.
    pub fn down_reason(&self) -> Option<String> {
        self.state.lock().unwrap().down.clone()
    }

    pub fn is_up(&self) -> bool {
        self.state.lock().unwrap().down.is_none()
    }

    /// Marks the process of `epoch` unavailable and stops its client; `false`
    /// if it already was, or if a newer process has replaced it.
    pub fn mark_down(&self, epoch: u64, why: String) -> bool {
        let taken = self.state.lock().unwrap().take_down(epoch, why);
        match taken {
            None => false,
            Some(stop) => {
                if let Some(token) = stop {
                    token.cancel();
                }
                true
            }
        }
    }

    /// Puts a restarted process in service; returns its epoch.
    pub fn revive(&self, running: &RunningService<RoleClient, ()>) -> u64 {
        let mut s = self.state.lock().unwrap();
        s.epoch += 1;
        s.peer = Some(running.peer().clone());
        s.stop = Some(running.cancellation_token());
        s.down = None;
        s.epoch
    }

    /// Stops the client: its stdin closes, then the child is terminated.
    pub fn stop(&self) {
        let stop = self.state.lock().unwrap().stop.take();
        if let Some(token) = stop {
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
        let (peer, epoch) = {
            let s = self.state.lock().unwrap();
            match (&s.peer, &s.down) {
                (Some(peer), None) => (peer.clone(), s.epoch),
                _ => return Outcome::Refused(self.unavailable_with(s.down.as_deref())),
            }
        };
        let failed = |why: String| Outcome::Failed { epoch, why };
        let mut params = CallToolRequestParams::new(original.to_string());
        params.arguments = arguments;
        // Dropping the request on timeout sends notifications/cancelled.
        match tokio::time::timeout(timeout, peer.call_tool_once(params)).await {
            Err(_) => failed(format!("no answer within {} ms", timeout.as_millis())),
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
                failed("answered with something that is not a tool result".into())
            }
            Ok(Err(e)) => failed(short(&format!("connection lost ({e})"))),
        }
    }

    /// The message a call of one of its tools gets while it is down.
    pub fn unavailable(&self) -> String {
        self.unavailable_with(self.down_reason().as_deref())
    }

    fn unavailable_with(&self, why: Option<&str>) -> String {
        format!(
            "server {:?} is unavailable ({}); its tools cannot be called",
            self.name,
            why.unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn news_of_an_older_process_does_not_take_the_current_one_down() {
        let mut s = State {
            peer: None,
            stop: None,
            down: None,
            epoch: 1,
        };
        assert!(s.take_down(0, "old process exited".into()).is_none());
        assert_eq!(s.down, None);
        assert!(s.take_down(1, "crashed".into()).is_some());
        assert_eq!(s.down.as_deref(), Some("crashed"));
        assert!(s.take_down(1, "again".into()).is_none(), "down only once");
        assert_eq!(s.down.as_deref(), Some("crashed"));
    }
}
