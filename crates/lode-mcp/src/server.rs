//! The MCP face: rmcp's [`ServerHandler`] over the tools, and the stdio loop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use lode_diagnostics::{self as diagnostics, DiagnosticsLog, Record};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use crate::args::JsonObject;
use crate::tools::{Call, TOOLS};
use crate::{Answer, Options, Repos, ToolError};

/// The lode MCP server. Cheap to clone (shared state behind an `Arc`).
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    repos: Repos,
    /// The diagnostics log, when the user config switched it on.
    log: Option<DiagnosticsLog>,
    max_chars: usize,
    /// The `tools/list` answer, built once: descriptions name the cap and
    /// the roots, which do not change while the server runs.
    tools: Vec<Tool>,
}

impl Server {
    /// Resolves the roots (each must be a directory); opens no index yet.
    pub fn new(options: Options) -> lode_core::Result<Server> {
        let repos = Repos::new(&options)?;
        let max_chars = options.max_chars.max(200);
        let tools = TOOLS
            .iter()
            .map(|t| {
                let schema = match t.schema(&repos) {
                    serde_json::Value::Object(o) => o,
                    _ => JsonObject::new(),
                };
                Tool::new(t.name, t.description(max_chars), schema)
                    .with_annotations(ToolAnnotations::new().read_only(true))
            })
            .collect();
        Ok(Server {
            inner: Arc::new(Inner {
                repos,
                log: DiagnosticsLog::open(
                    &options.config.diagnostics,
                    options.cache_dir.as_deref(),
                ),
                max_chars,
                tools,
            }),
        })
    }

    /// The repositories it serves.
    pub fn repos(&self) -> &Repos {
        &self.inner.repos
    }

    /// What `tools/list` returns.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// Answers one call, blocking (index work is synchronous). `None` when no
    /// tool has this name. A failure is a result with `isError`, never a panic
    /// reaching the caller: a panicking tool is reported as `lode.internal`.
    pub fn call(&self, name: &str, arguments: JsonObject) -> Option<CallToolResult> {
        let tool = TOOLS.iter().find(|t| t.name == name)?;
        let started = Instant::now();
        diagnostics::begin();
        // Kept only for a log that may record queries (never the trace).
        let query = self
            .inner
            .log
            .as_ref()
            .filter(|l| l.log_queries())
            .map(|_| loggable(&arguments));
        let call = Call {
            tool,
            arguments,
            repos: &self.inner.repos,
            max_chars: self.inner.max_chars,
        };
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (tool.run)(call)));
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(panic) => Err(ToolError::new(
                ToolError::INTERNAL,
                format!("{name} failed: {}", panic_message(&panic)),
            )),
        };
        let tally = diagnostics::finish();
        if let Some(log) = &self.inner.log {
            let us = started.elapsed().as_micros() as u64;
            let mut record = Record::new("mcp", name, us, tally);
            record.error = outcome.as_ref().err().map(|e| e.code.to_string());
            record.query = query;
            log.append(&record);
        }
        Some(match outcome {
            Ok(answer) => answer.into_result(),
            Err(e) => Answer::error(&e),
        })
    }
}

/// A call's arguments as the log may keep them: no `context` (a trace is
/// never logged), strings cut to 200 characters.
fn loggable(arguments: &JsonObject) -> serde_json::Value {
    let kept = arguments
        .iter()
        .filter(|(k, _)| k.as_str() != "context")
        .map(|(k, v)| {
            let v = match v {
                serde_json::Value::String(s) => s.chars().take(200).collect::<String>().into(),
                other => other.clone(),
            };
            (k.clone(), v)
        })
        .collect();
    serde_json::Value::Object(kept)
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into())
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("lode", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.inner.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        if !TOOLS.iter().any(|t| t.name == name) {
            // The protocol's answer to an unknown tool (not a tool result).
            let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; lode has {}",
                    name.chars().take(60).collect::<String>(),
                    names.join(", ")
                ),
                None,
            ));
        }
        let server = self.clone();
        let mut arguments = request.arguments.unwrap_or_default();
        // `_meta.overlay`: the host's out-of-band form of the `overlay` argument.
        let meta = request
            .meta
            .as_ref()
            .and_then(|m| m.get(crate::overlay::KEY));
        let meta = meta.or_else(|| context.meta.get(crate::overlay::KEY));
        let args = TOOLS
            .iter()
            .find(|t| t.name == name)
            .map_or(&[][..], |t| t.args);
        if let Err(e) = crate::overlay::from_meta(args, &mut arguments, meta) {
            return Ok(Answer::error(&e).into());
        }
        // Index work blocks (SQLite, file reads): off the async thread. A
        // call the client abandons runs to its end and its answer is dropped.
        let result = tokio::task::spawn_blocking(move || server.call(&name, arguments))
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(result.expect("the tool exists").into())
    }
}

/// Speaks MCP on stdin/stdout until the client closes the connection.
///
/// A single-threaded runtime carries the protocol; tool calls run on its
/// blocking pool. On the way out, work still running (a first index of a
/// large repository) is given a second and then abandoned: the index
/// survives a build killed midway.
pub fn serve_stdio(server: Server) -> std::io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // Every line passes the JSON-RPC gate first: malformed input is answered there.
    let outcome = rt.block_on(crate::gate::serve_gated(
        tokio::io::stdin(),
        tokio::io::stdout(),
        |input, output| async move {
            match server.serve((input, output)).await {
                Ok(running) => running
                    .waiting()
                    .await
                    .map(|_| ())
                    .map_err(std::io::Error::other),
                // A client that leaves before `initialize` completes is not an error.
                Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
                Err(e) => Err(std::io::Error::other(e.to_string())),
            }
        },
    ));
    rt.shutdown_timeout(Duration::from_secs(1));
    outcome
}
