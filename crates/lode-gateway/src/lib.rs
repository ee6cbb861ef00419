//! An MCP tool gateway: one stdio MCP server in front of many, showing the
//! model a few direct tools plus `tool_search` instead of every schema of
//! every server, and activating what a search finds (crate `lode-tools`).
//!
//! The principal types and how they fit:
//!
//! - [`Config`]: the TOML file — `[[server]]` tables (name, command, args,
//!   env), `direct` tools by canonical name `server__tool`, `[search]`
//!   limits, `call_timeout_ms` and `start_timeout_ms`.
//! - [`Hub`]: what the sessions share. [`Hub::start`] starts every server as
//!   a child process, concurrently, each within the start timeout; the tools
//!   they list become the bound catalog (a `lode_tools::Toolbox`, names
//!   `server__tool`), and each catalog tool keeps a route back to its server
//!   and its definition as listed. A server that does not start, later
//!   exits, hangs past the call timeout or answers garbage is reported on
//!   stderr and marked unavailable: its tools leave `tools/list` (clients are
//!   sent `notifications/tools/list_changed`), their calls get an error
//!   result, and the gateway serves on. It is then started again (at most
//!   `max_restarts` times, with a doubling backoff); the catalog stays as
//!   bound, so a tool the new process lists differently is *retired* —
//!   unavailable for the rest of the run — and a tool it adds is left out.
//! - The turn log (`telemetry_file`): each ended turn's
//!   `lode_tools::TurnReport` as one JSON line.
//! - [`Gateway`]: the rmcp [`ServerHandler`](rmcp::ServerHandler) of one
//!   client session, holding that session's activation (a
//!   `lode_tools::TurnScope`). `tools/list` returns the direct tools, then the
//!   active ones, with the schemas their servers gave; `tool_search` returns
//!   `{"activated": [...]}` — names, never schemas — and sends
//!   `list_changed`; `tools/call` of a visible tool is forwarded to its
//!   server under its own name, and of any other tool refused with a message
//!   naming `tool_search`.
//! - [`serve_stdio`]: start the hub, serve one client on stdin/stdout, stop
//!   the servers when it leaves.
//!
//! # Turns, steps and where the inventory goes
//!
//! MCP has no turn and no step (see the `session` module):
//!
//! - Activation is scoped to the **client session** (one per process on
//!   stdio). A host that knows its turns puts `_meta.turn_id` on its
//!   requests: a new id ends the turn and starts one with nothing active.
//!   There is no reset tool: every listed tool is offered to the model, which
//!   should not drop its own tools, and a host able to call a tool can as
//!   well set `_meta` (or reconnect).
//! - Each **`tools/list` starts a step**. A tool found by a search is callable
//!   once the client has re-listed after the `list_changed` notice; a call
//!   before that is refused by the step guard, as lode-tools does within a
//!   provider step.
//! - The **inventory** of deferred tools (server and canonical names only)
//!   ends the `tool_search` description, not the server `instructions`:
//!   every client shows tool descriptions to the model, while instructions
//!   are optional for a client to use; and the description is re-sent with
//!   the list when a server goes down, so the inventory stays true.
//!
//! Visibility is not permission: a listed tool's server still decides what a
//! call may do, and a host still applies its own checks.
//!
//! # Example
//!
//! ```no_run
//! let config = lode_gateway::Config::from_toml(r#"
//!     direct = ["fs__read_file"]
//!     [[server]]
//!     name = "fs"
//!     command = "npx"
//!     args = ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]
//!     [[server]]
//!     name = "gh"
//!     command = "github-mcp-server"
//!     args = ["stdio"]
//!     env = { GITHUB_TOOLSETS = "issues" }
//! "#, "gateway.toml")?;
//! lode_gateway::serve_stdio(&config)?;
//! # Ok::<(), lode_gateway::Error>(())
//! ```
//!
//! In process, a [`Gateway`] serves any rmcp transport:
//!
//! ```no_run
//! # async fn f(config: lode_gateway::Config, transport: tokio::io::DuplexStream)
//! # -> Result<(), Box<dyn std::error::Error>> {
//! use rmcp::ServiceExt;
//! let hub = lode_gateway::Hub::start(&config).await?;
//! let running = lode_gateway::Gateway::new(hub.clone()).serve(transport).await?;
//! running.waiting().await?;
//! hub.shutdown(std::time::Duration::from_secs(3)).await;
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod config;
mod downstream;
mod hub;
mod server;
mod session;
mod turn_log;

pub use config::{
    Config, DEFAULT_CALL_TIMEOUT_MS, DEFAULT_MAX_RESTARTS, DEFAULT_START_TIMEOUT_MS, SearchConfig,
    ServerConfig,
};
pub use hub::{Hub, ServerStatus};
pub use server::{Gateway, serve_stdio};
pub use session::TURN_ID_META;
pub use turn_log::TURN_LOG_VERSION;

/// A failure of the gateway itself (a downstream server's failure is not one).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The config cannot be used: unreadable, malformed, or naming a direct
    /// tool no server has. One line, starting with the file.
    #[error("{0}")]
    Config(String),
    /// The host's connection failed.
    #[error("stdin/stdout: {0}")]
    Io(#[from] std::io::Error),
}

/// A line in the gateway's log: stderr, which MCP clients keep as the server's log.
fn log(message: &str) {
    eprintln!("lode gateway: {message}");
}
