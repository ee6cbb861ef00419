//! The client's side of an MCP test (feature `mcp`, on rmcp): call a tool
//! and read its result (the `activated` tools of a gateway's `tool_search`
//! too), and a client that counts the server's
//! `notifications/tools/list_changed`. Used by lode-cli's tests (`lode mcp`,
//! `lode gateway`) and lode-gateway's.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use rmcp::ClientHandler;
use rmcp::model::{CallToolRequestParams, CallToolResult, Tool};
use rmcp::service::{NotificationContext, Peer, RoleClient};
use serde_json::Value;

/// Calls `tool` with `args` (a JSON object); panics when no result comes
/// back (a tool error is a result, `isError`).
pub async fn call(peer: &Peer<RoleClient>, tool: &str, args: Value) -> CallToolResult {
    let params = CallToolRequestParams::new(tool.to_string())
        .with_arguments(args.as_object().expect("arguments are an object").clone());
    peer.call_tool(params).await.expect("a tool result")
}

/// The text of a result: its text blocks, joined.
pub fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect()
}

/// A result's `structuredContent`; panics without one.
pub fn structured(r: &CallToolResult) -> &Value {
    r.structured_content.as_ref().expect("structuredContent")
}

/// The names of listed tools, in order.
pub fn names(tools: &[Tool]) -> Vec<&str> {
    tools.iter().map(|t| t.name.as_ref()).collect()
}

/// The tools a gateway's `tool_search` result (its text, parsed) names as
/// activated, in order.
pub fn activated(result: &Value) -> Vec<&str> {
    result["activated"]
        .as_array()
        .expect("an activated list")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

/// A client handler that counts `notifications/tools/list_changed`; a clone
/// of [`Listener::changed`] kept before `serve` reads the count.
#[derive(Clone, Default)]
pub struct Listener {
    /// The notifications received so far.
    pub changed: Arc<AtomicUsize>,
}

impl ClientHandler for Listener {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.changed.fetch_add(1, Ordering::SeqCst);
    }
}
