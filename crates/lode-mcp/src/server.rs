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
use crate::remote::{self, RemoteOptions, Service};
use crate::tools::{Arg, Call, TOOLS, schema, thousands};
use crate::{Answer, Options, Repos, ToolError};

/// The lode MCP server. Cheap to clone (shared state behind an `Arc`).
#[derive(Clone)]
pub struct Server {
    inner: Arc<Inner>,
}

struct Inner {
    face: Face,
    /// The diagnostics log, when the user config switched it on.
    log: Option<DiagnosticsLog>,
    max_chars: usize,
    /// The `tools/list` answer, built once: descriptions name the cap and
    /// the roots, which do not change while the server runs.
    tools: Vec<Tool>,
}

/// What answers the calls.
enum Face {
    /// The served roots' own indexes.
    Local(Box<Repos>),
    /// The shared index service (`lode mcp --remote`).
    Remote {
        service: Box<dyn Service>,
        deadline: Duration,
    },
}

impl Server {
    /// Resolves the roots (each must be a directory); opens no index yet.
    pub fn new(options: Options) -> lode_core::Result<Server> {
        let repos = Repos::new(&options)?;
        let max_chars = options.max_chars.max(200);
        let tools = TOOLS
            .iter()
            .map(|t| listed(t.name, &t.description(max_chars), t.schema(Some(&repos))))
            .collect();
        let log = DiagnosticsLog::open(&options.config.diagnostics, options.cache_dir.as_deref());
        Ok(Server::with(
            Face::Local(Box::new(repos)),
            log,
            max_chars,
            tools,
        ))
    }

    /// The coordinator of the shared index service: the tools of
    /// [`remote::TOOLS`], answered by `service`'s shard nodes.
    pub fn remote(service: Box<dyn Service>, options: RemoteOptions) -> Server {
        let max_chars = options.max_chars.max(200);
        let tools = remote::TOOLS
            .iter()
            .map(|t| {
                let description = t.description.replace("{cap}", &thousands(max_chars));
                listed(t.name, &description, schema(t.args, None))
            })
            .collect();
        let log = DiagnosticsLog::open(&options.config.diagnostics, options.cache_dir.as_deref());
        let face = Face::Remote {
            service,
            deadline: options.deadline,
        };
        Server::with(face, log, max_chars, tools)
    }

    fn with(face: Face, log: Option<DiagnosticsLog>, max_chars: usize, tools: Vec<Tool>) -> Server {
        Server {
            inner: Arc::new(Inner {
                face,
                log,
                max_chars,
                tools,
            }),
        }
    }

    /// The repositories it serves; `None` for the shared index service.
    pub fn repos(&self) -> Option<&Repos> {
        match &self.inner.face {
            Face::Local(repos) => Some(repos),
            Face::Remote { .. } => None,
        }
    }

    /// What `tools/list` returns.
    pub fn tools(&self) -> &[Tool] {
        &self.inner.tools
    }

    /// The arguments of the tool `name`; `None` when it has no such tool.
    fn args_of(&self, name: &str) -> Option<&'static [Arg]> {
        match &self.inner.face {
            Face::Local(_) => TOOLS.iter().find(|t| t.name == name).map(|t| t.args),
            Face::Remote { .. } => (remote::TOOLS.iter().find(|t| t.name == name)).map(|t| t.args),
        }
    }

    /// Answers one call, blocking (index work is synchronous). `None` when no
    /// tool has this name. A failure is a result with `isError`, never a panic
    /// reaching the caller: a panicking tool is reported as `lode.internal`.
    pub fn call(&self, name: &str, arguments: JsonObject) -> Option<CallToolResult> {
        let max_chars = self.inner.max_chars;
        type Run<'a> = Box<dyn FnOnce(JsonObject) -> Result<Answer, ToolError> + 'a>;
        let run: Run = match &self.inner.face {
            Face::Local(repos) => {
                let tool = TOOLS.iter().find(|t| t.name == name)?;
                Box::new(move |arguments| {
                    (tool.run)(Call {
                        tool,
                        arguments,
                        repos,
                        max_chars,
                    })
                })
            }
            Face::Remote { service, deadline } => {
                let tool = remote::TOOLS.iter().find(|t| t.name == name)?;
                let service = service.as_ref();
                Box::new(move |arguments| {
                    remote::run(tool, service, arguments, max_chars, *deadline)
                })
            }
        };
        let started = Instant::now();
        diagnostics::begin();
        // Kept only for a log that may record queries (never the trace).
        let query = self
            .inner
            .log
            .as_ref()
            .filter(|l| l.log_queries())
            .map(|_| loggable(&arguments));
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(arguments)));
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

/// A tool as `tools/list` shows it: read-only, every one.
fn listed(name: &'static str, description: &str, schema: serde_json::Value) -> Tool {
    let schema = match schema {
        serde_json::Value::Object(o) => o,
        _ => JsonObject::new(),
    };
    Tool::new(name, description.to_string(), schema)
        .with_annotations(ToolAnnotations::new().read_only(true))
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
        let Some(args) = self.args_of(&name) else {
            // The protocol's answer to an unknown tool (not a tool result).
            let names: Vec<&str> = self.inner.tools.iter().map(|t| t.name.as_ref()).collect();
            return Err(ErrorData::invalid_params(
                format!(
                    "unknown tool {:?}; lode has {}",
                    name.chars().take(60).collect::<String>(),
                    names.join(", ")
                ),
                None,
            ));
        };
        let server = self.clone();
        let mut arguments = request.arguments.unwrap_or_default();
        // `_meta.overlay`: the host's out-of-band form of the `overlay` argument.
        let meta = request
            .meta
            .as_ref()
            .and_then(|m| m.get(crate::overlay::KEY));
        let meta = meta.or_else(|| context.meta.get(crate::overlay::KEY));
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
