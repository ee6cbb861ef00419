//! What every session shares: the downstream servers, the bound catalog built
//! from their tools, and the routes from canonical names back to them.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lode_tools::{Catalog, IndexOptions, StaticModel, Toolbox, qualified_name};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use rmcp::service::{Peer, RoleClient, RoleServer, RunningService};
use serde_json::Value;

use crate::config::Config;
use crate::downstream::{self, Downstream, Outcome};
use crate::{Error, log};

/// Where a catalog tool lives.
struct Route {
    server: usize,
    /// The server's own name for it.
    original: String,
    /// Its definition as the server listed it, under the canonical name.
    listed: Tool,
}

/// One downstream server's state, for reports and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerStatus {
    pub name: String,
    /// Tools it put in the catalog.
    pub tools: usize,
    /// Why it is unavailable, if it is.
    pub unavailable: Option<String>,
}

/// The servers and the catalog of a gateway run, shared by its sessions.
pub struct Hub {
    toolbox: Arc<Toolbox>,
    servers: Vec<Downstream>,
    /// By catalog index; the search tool, last in the catalog, has none.
    routes: Vec<Route>,
    call_timeout: Duration,
    /// Connected clients, told when a server goes down.
    peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Watchers of the running clients, awaited on shutdown.
    watchers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    closing: AtomicBool,
}

impl Hub {
    /// Starts every configured server (concurrently, each within the start
    /// timeout) and binds the tools of those that listed them. A server that
    /// does not start is reported and left out; only a config that
    /// contradicts the tools found (a direct tool no running server has) fails.
    pub async fn start(config: &Config) -> Result<Arc<Hub>, Error> {
        let mut starting = tokio::task::JoinSet::new();
        for (i, server) in config.servers.iter().enumerate() {
            let (server, timeout) = (server.clone(), config.start_timeout());
            starting.spawn(async move { (i, downstream::start(&server, timeout).await) });
        }
        let mut started: Vec<Option<Result<downstream::Started, String>>> =
            (0..config.servers.len()).map(|_| None).collect();
        while let Some(joined) = starting.join_next().await {
            let (i, outcome) = joined.map_err(|e| Error::Io(std::io::Error::other(e)))?;
            started[i] = Some(outcome);
        }

        let mut servers = Vec::new();
        let mut running = Vec::new();
        let mut tools = Vec::new();
        let mut routes = Vec::new();
        let mut taken = HashSet::new();
        for (i, (config, outcome)) in config.servers.iter().zip(started).enumerate() {
            let name = &config.name;
            match outcome.expect("every server was started") {
                Err(why) => {
                    log(&format!("server {name:?} is unavailable: {why}"));
                    servers.push(Downstream::failed(name, why));
                }
                Ok(s) => {
                    for t in &s.tools {
                        let canonical = qualified_name(name, &t.name);
                        if !taken.insert(canonical.clone()) {
                            log(&format!(
                                "server {name:?}: tool {:?} left out: its name {canonical:?} is taken",
                                t.name
                            ));
                            continue;
                        }
                        let schema = Value::Object(t.input_schema.as_ref().clone());
                        let description = t.description.as_deref().unwrap_or_default();
                        tools.push(
                            lode_tools::Tool::new(&canonical, description, schema).with_group(name),
                        );
                        let mut listed = t.clone();
                        listed.name = canonical.into();
                        routes.push(Route {
                            server: i,
                            original: t.name.to_string(),
                            listed,
                        });
                    }
                    servers.push(Downstream::up(name, &s.running));
                    running.push((i, s.running));
                }
            }
        }

        let catalog = Catalog::new(tools).map_err(|e| Error::Config(e.to_string()))?;
        let direct: Vec<&String> = config
            .direct
            .iter()
            .filter(|d| {
                // Checked by Config: every direct tool names a configured server.
                let server = d.split_once("__").map(|(s, _)| s).unwrap_or_default();
                let up = servers.iter().any(|s| s.name == server && s.is_up());
                if !up {
                    log(&format!(
                        "direct tool {d:?} left out: its server is unavailable"
                    ));
                }
                up
            })
            .collect();
        let embedder = (!config.search.lexical)
            .then(|| Arc::new(StaticModel::builtin()) as Arc<dyn lode_tools::Embedder>);
        let toolbox = match Toolbox::builder(catalog)
            .direct(direct)
            .limits(config.limits())
            .index_options(IndexOptions {
                embedder,
                ..IndexOptions::default()
            })
            .build()
        {
            Ok(toolbox) => toolbox,
            Err(e) => {
                // Let the servers exit as they would at the end of a session.
                let stopping = running.into_iter().map(|(_, r)| r.cancel());
                let stopped = async {
                    for s in stopping {
                        let _ = s.await;
                    }
                };
                let _ = tokio::time::timeout(Duration::from_secs(3), stopped).await;
                return Err(Error::Config(format!("gateway config: {}", e.message())));
            }
        };
        if let Some(note) = toolbox.index().note() {
            log(note);
        }

        let hub = Arc::new(Hub {
            toolbox: Arc::new(toolbox),
            servers,
            routes,
            call_timeout: config.call_timeout(),
            peers: Mutex::new(Vec::new()),
            watchers: Mutex::new(Vec::new()),
            closing: AtomicBool::new(false),
        });
        let watchers = running
            .into_iter()
            .map(|(i, r)| tokio::spawn(watch(Arc::clone(&hub), i, r)))
            .collect();
        *hub.watchers.lock().unwrap() = watchers;
        Ok(hub)
    }

    pub fn toolbox(&self) -> &Arc<Toolbox> {
        &self.toolbox
    }

    /// Every configured server, in config order.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .enumerate()
            .map(|(i, s)| ServerStatus {
                name: s.name.clone(),
                tools: self.routes.iter().filter(|r| r.server == i).count(),
                unavailable: s.down_reason(),
            })
            .collect()
    }

    /// Whether catalog tool `index` can be called (the search tool always can).
    pub(crate) fn is_available(&self, index: usize) -> bool {
        self.routes
            .get(index)
            .is_none_or(|r| self.servers[r.server].is_up())
    }

    /// The `tools/list` entry of catalog tool `index`.
    pub(crate) fn listed(&self, index: usize) -> Tool {
        match self.routes.get(index) {
            Some(r) => r.listed.clone(),
            None => self.search_listing(),
        }
    }

    /// The search tool, its description ending with the inventory of the
    /// deferred tools that can be called now (group and canonical names only).
    fn search_listing(&self) -> Tool {
        let search = self.toolbox.search_tool();
        let mut description = search.description.clone();
        let mut inventory = String::new();
        for g in &self.toolbox.inventory().groups {
            let server = g.group.as_deref().unwrap_or_default();
            if self.servers.iter().any(|s| s.name == server && s.is_up()) {
                inventory.push_str(&format!("{server}: {}\n", g.tools.join(", ")));
            }
        }
        if !inventory.is_empty() {
            description.push_str("\n\nDeferred tools, by server:\n");
            description.push_str(inventory.trim_end());
        }
        let down: Vec<&str> = self
            .servers
            .iter()
            .filter(|s| !s.is_up())
            .map(|s| s.name.as_str())
            .collect();
        if !down.is_empty() {
            description.push_str(&format!("\n\nUnavailable servers: {}.", down.join(", ")));
        }
        let schema = match &search.input_schema {
            Value::Object(o) => o.clone(),
            _ => JsonObject::new(),
        };
        Tool::new(search.name.clone(), description, schema)
            .with_annotations(ToolAnnotations::new().read_only(true))
    }

    /// Forwards a call of catalog tool `index` to its server. Every failure is
    /// a tool result with `isError` that says what happened; a server that
    /// crashed, hung or answered garbage is marked unavailable.
    pub(crate) async fn call(&self, index: usize, arguments: Option<JsonObject>) -> CallToolResult {
        let route = &self.routes[index];
        let server = &self.servers[route.server];
        match server
            .call(&route.original, arguments, self.call_timeout)
            .await
        {
            Outcome::Answered(result) => result,
            Outcome::Refused(message) => error_result(message),
            Outcome::Failed(why) => {
                self.mark_down(route.server, why);
                error_result(server.unavailable())
            }
        }
    }

    fn mark_down(&self, server: usize, why: String) {
        if self.closing.load(Ordering::Relaxed) {
            return;
        }
        let s = &self.servers[server];
        if s.mark_down(why) {
            log(&s.unavailable());
            self.tools_changed();
        }
    }

    /// Tells every connected client that `tools/list` changed.
    fn tools_changed(&self) {
        let mut peers = self.peers.lock().unwrap();
        peers.retain(|p| !p.is_transport_closed());
        for peer in peers.iter() {
            let peer = peer.clone();
            tokio::spawn(async move {
                let _ = peer.notify_tool_list_changed().await;
            });
        }
    }

    pub(crate) fn register(&self, peer: Peer<RoleServer>) {
        self.peers.lock().unwrap().push(peer);
    }

    /// Stops every server (stdin closed, then terminated) and waits up to
    /// `grace` for them to exit.
    pub async fn shutdown(&self, grace: Duration) {
        self.closing.store(true, Ordering::Relaxed);
        self.servers.iter().for_each(Downstream::stop);
        let watchers = std::mem::take(&mut *self.watchers.lock().unwrap());
        let all = async {
            for w in watchers {
                let _ = w.await;
            }
        };
        let _ = tokio::time::timeout(grace, all).await;
    }
}

/// Waits for a server's client to end; if the gateway did not end it, the
/// server crashed or closed its side: it is marked down.
async fn watch(hub: Arc<Hub>, server: usize, running: RunningService<RoleClient, ()>) {
    let why = match running.waiting().await {
        Ok(rmcp::service::QuitReason::Cancelled) => "stopped".to_string(),
        Ok(_) => "it exited or closed its connection".to_string(),
        Err(e) => format!("its connection task failed: {e}"),
    };
    hub.mark_down(server, why);
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
