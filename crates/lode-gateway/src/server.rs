//! The MCP face: one [`Gateway`] per client session, speaking rmcp's
//! [`ServerHandler`].

use std::borrow::Cow;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, RequestMetaObject,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use crate::hub::Hub;
use crate::session::{Call, Session, TURN_ID_META};
use crate::{Error, log};

/// Sent in `initialize`: how the tool list behaves. The inventory itself is
/// in the search tool's description, which every client shows the model.
const INSTRUCTIONS: &str = "More tools than those listed are available: the search tool's \
description lists them by server, and a search makes the ones it finds callable. The tool \
list changes after a search (notifications/tools/list_changed).";

/// The gateway for one client session: the shared [`Hub`] and this
/// session's activation. Clones share the session.
#[derive(Clone)]
pub struct Gateway {
    hub: Arc<Hub>,
    session: Arc<Mutex<Session>>,
}

impl Gateway {
    /// A new session: nothing active, the direct tools listed.
    pub fn new(hub: Arc<Hub>) -> Gateway {
        let (turn_log, number) = hub.new_session();
        let session = Session::logged(Arc::clone(hub.toolbox()), turn_log, number);
        Gateway {
            hub,
            session: Arc::new(Mutex::new(session)),
        }
    }

    /// The downstream servers it routes to.
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// The tools this session's current turn has activated, in order.
    pub fn active(&self) -> Vec<String> {
        self.session.lock().unwrap().active()
    }

    /// Applies the request's turn id; true when the client's list went stale.
    fn observe_turn(&self, meta: &RequestMetaObject) -> bool {
        let id = turn_id(meta);
        let ended = self.session.lock().unwrap().observe_turn(id.as_deref());
        ended.is_some_and(|(_, had_active)| had_active)
    }
}

/// `_meta.turn_id`, a string or a number.
fn turn_id(meta: &RequestMetaObject) -> Option<String> {
    match meta.get(TURN_ID_META)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn text_result(text: String, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

impl ServerHandler for Gateway {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new(
                "lode-gateway",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions(INSTRUCTIONS)
    }

    /// Only revisions with `initialize`: a session is a connection, and
    /// `list_changed` is a plain notification. From 2026-07-28 on, it takes a
    /// `subscriptions/listen` stream, which the gateway does not offer yet.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(
            &ProtocolVersion::LATEST_WITH_INITIALIZE,
        ))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.hub.register(context.peer);
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The client is listing: a stale list is being replaced, no notice needed.
        self.observe_turn(&context.meta);
        let visible = self.session.lock().unwrap().list();
        let tools = visible
            .into_iter()
            .filter(|&i| self.hub.is_available(i))
            .map(|i| self.hub.listed(i))
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let stale = self.observe_turn(&context.meta);
        let name = request.name.to_string();
        let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
        let call = self
            .session
            .lock()
            .unwrap()
            .call(&name, &arguments, |i| self.hub.is_available(i));
        let (result, list_changed) = match call {
            Call::Refused(message) => (text_result(message, true), stale),
            // The thin result: names only, never schemas.
            Call::Search {
                result,
                list_changed,
            } => (
                text_result(result.to_string(), false),
                stale || list_changed,
            ),
            Call::Run {
                tool,
                step,
                generation,
            } => {
                if stale {
                    let _ = context.peer.notify_tool_list_changed().await;
                }
                // A tool whose server is down gets the hub's error result.
                let result = tokio::select! {
                    r = self.hub.call(tool, request.arguments) => r,
                    // The client gave up: dropping the call cancels it downstream.
                    _ = context.ct.cancelled() => {
                        return Err(ErrorData::internal_error("cancelled by the client", None));
                    }
                };
                let ok = result.is_error != Some(true);
                self.session
                    .lock()
                    .unwrap()
                    .record(generation, &step, &name, ok);
                (result, false)
            }
        };
        // Before the result, so a client re-lists before the model's next request.
        if list_changed {
            let _ = context.peer.notify_tool_list_changed().await;
        }
        Ok(result.into())
    }
}

/// Serves one client on stdin/stdout until it disconnects, with the servers
/// of `config`; then stops them.
pub fn serve_stdio(config: &crate::Config) -> Result<(), Error> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let outcome = rt.block_on(async {
        let hub = Hub::start(config).await?;
        let up = hub
            .servers()
            .iter()
            .filter(|s| s.unavailable.is_none())
            .count();
        log(&format!(
            "{} of {} servers up, {} tools bound ({} direct)",
            up,
            config.servers.len(),
            hub.toolbox().catalog().len() - 1,
            hub.toolbox().direct_indexes().len() - 1,
        ));
        let served = match Gateway::new(Arc::clone(&hub))
            .serve(rmcp::transport::stdio_pipes())
            .await
        {
            Ok(running) => running
                .waiting()
                .await
                .map(|_| ())
                .map_err(|e| Error::Io(std::io::Error::other(e))),
            // A client that leaves before `initialize` completes is not an error.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(Error::Io(std::io::Error::other(e.to_string()))),
        };
        hub.shutdown(Duration::from_secs(3)).await;
        served
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    outcome
}
