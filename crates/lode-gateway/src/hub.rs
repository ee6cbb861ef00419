//! What every session shares: the downstream servers, the bound catalog built
//! from their tools, and the routes from canonical names back to them.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use lode_tools::{Catalog, IndexOptions, StaticModel, Toolbox, qualified_name};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject, Tool, ToolAnnotations};
use rmcp::service::{Peer, RoleClient, RoleServer, RunningService};
use serde_json::Value;

use crate::config::{Config, ServerConfig};
use crate::downstream::{self, Downstream, Outcome};
use crate::turn_log::TurnLog;
use crate::{Error, log};

/// Wait before the first restart of a failed server; each further restart
/// waits twice as long, so a server that fails at once does not spin.
const RESTART_BACKOFF: Duration = Duration::from_millis(500);

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
    /// Its `name` in the config.
    pub name: String,
    /// Tools it put in the catalog.
    pub tools: usize,
    /// Why it is unavailable, if it is.
    pub unavailable: Option<String>,
    /// Restart attempts after it failed, successful or not.
    pub restarts: u32,
    /// Its tools that a restarted process no longer lists as they were
    /// bound; they stay unavailable for the rest of the run.
    pub retired: Vec<String>,
}

/// The servers and the catalog of a gateway run, shared by its sessions.
pub struct Hub {
    me: Weak<Hub>,
    toolbox: Arc<Toolbox>,
    servers: Vec<Downstream>,
    /// How to start each server again, in config order.
    configs: Vec<ServerConfig>,
    /// By catalog index; the search tool, last in the catalog, has none.
    routes: Vec<Route>,
    /// Catalog indexes of retired tools (see [`ServerStatus::retired`]).
    retired: Mutex<HashSet<usize>>,
    /// Restarts done, by server.
    restarts: Vec<AtomicU64>,
    max_restarts: u32,
    start_timeout: Duration,
    call_timeout: Duration,
    /// Where ended turns are written, if configured.
    turn_log: Option<Arc<TurnLog>>,
    sessions: AtomicU64,
    /// Restarts under way, aborted on shutdown.
    restarting: Mutex<Vec<tokio::task::JoinHandle<()>>>,
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
        let started = start_servers(config).await?;
        let Listing {
            servers,
            running,
            tools,
            routes,
        } = Listing::of(config, started);
        let catalog = Catalog::new(tools).map_err(|e| Error::Config(e.to_string()))?;
        let direct = direct_tools_up(config, &servers);
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
                stop_servers(running).await;
                return Err(Error::Config(format!("gateway config: {}", e.message())));
            }
        };
        if let Some(note) = toolbox.index().note() {
            log(note);
        }

        let turn_log = config.telemetry_file.as_ref().and_then(|path| {
            TurnLog::open(path)
                .map_err(|e| log(&format!("telemetry off: {e}")))
                .ok()
                .map(Arc::new)
        });
        let hub = Arc::new_cyclic(|me| Hub {
            me: me.clone(),
            toolbox: Arc::new(toolbox),
            restarts: servers.iter().map(|_| AtomicU64::new(0)).collect(),
            servers,
            configs: config.servers.clone(),
            routes,
            retired: Mutex::new(HashSet::new()),
            max_restarts: config.max_restarts,
            start_timeout: config.start_timeout(),
            call_timeout: config.call_timeout(),
            turn_log,
            sessions: AtomicU64::new(0),
            restarting: Mutex::new(Vec::new()),
            peers: Mutex::new(Vec::new()),
            watchers: Mutex::new(Vec::new()),
            closing: AtomicBool::new(false),
        });
        let watchers = running
            .into_iter()
            .map(|(i, r)| tokio::spawn(watch(Arc::clone(&hub), i, 0, r)))
            .collect();
        *hub.watchers.lock().unwrap() = watchers;
        Ok(hub)
    }

    /// The tool catalog of every server, searchable.
    pub fn toolbox(&self) -> &Arc<Toolbox> {
        &self.toolbox
    }

    /// Every configured server, in config order.
    pub fn servers(&self) -> Vec<ServerStatus> {
        self.servers
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let retired = self.retired.lock().unwrap();
                ServerStatus {
                    name: s.name.clone(),
                    tools: self.routes.iter().filter(|r| r.server == i).count(),
                    unavailable: s.down_reason(),
                    restarts: self.restarts[i].load(Ordering::Relaxed) as u32,
                    retired: self
                        .routes
                        .iter()
                        .enumerate()
                        .filter(|(t, r)| r.server == i && retired.contains(t))
                        .map(|(_, r)| r.listed.name.to_string())
                        .collect(),
                }
            })
            .collect()
    }

    /// Whether catalog tool `index` can be called (the search tool always can).
    pub(crate) fn is_available(&self, index: usize) -> bool {
        self.routes.get(index).is_none_or(|r| {
            self.servers[r.server].is_up() && !self.retired.lock().unwrap().contains(&index)
        })
    }

    /// The turn log and a new session number, for a session that starts.
    pub(crate) fn new_session(&self) -> (Option<Arc<TurnLog>>, u64) {
        let n = self.sessions.fetch_add(1, Ordering::Relaxed) + 1;
        (self.turn_log.clone(), n)
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
        let catalog = self.toolbox.catalog();
        for g in &self.toolbox.inventory().groups {
            let server = g.group.as_deref().unwrap_or_default();
            let callable: Vec<&str> = g
                .tools
                .iter()
                .filter(|t| catalog.position(t).is_some_and(|i| self.is_available(i)))
                .map(String::as_str)
                .collect();
            if !callable.is_empty() {
                inventory.push_str(&format!("{server}: {}\n", callable.join(", ")));
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
        if self.retired.lock().unwrap().contains(&index) {
            return error_result(format!(
                "tool {:?} is unavailable: server {:?} no longer lists it as it did when the gateway started",
                route.listed.name, server.name
            ));
        }
        match server
            .call(&route.original, arguments, self.call_timeout)
            .await
        {
            Outcome::Answered(result) => result,
            Outcome::Refused(message) => error_result(message),
            Outcome::Failed { epoch, why } => {
                self.mark_down(route.server, epoch, why);
                error_result(server.unavailable())
            }
        }
    }

    /// Marks the process of `epoch` of `server` down, tells the clients, and
    /// schedules a restart while the server has restarts left.
    fn mark_down(&self, server: usize, epoch: u64, why: String) {
        if self.closing.load(Ordering::Relaxed) {
            return;
        }
        let s = &self.servers[server];
        if !s.mark_down(epoch, why) {
            return;
        }
        log(&s.unavailable());
        self.tools_changed();
        let done = self.restarts[server].load(Ordering::Relaxed);
        if done < u64::from(self.max_restarts)
            && let Some(hub) = self.me.upgrade()
        {
            let task = tokio::spawn(restart(hub, server, done));
            let mut restarting = self.restarting.lock().unwrap();
            restarting.retain(|t| !t.is_finished());
            restarting.push(task);
        }
    }

    /// Puts a restarted server back in service. Its tools are bound as they
    /// were listed at start, and a client may have read their schemas: a tool
    /// the new process lists differently (or not at all) is retired, and a
    /// tool it adds is left out.
    fn revive(self: &Arc<Self>, server: usize, started: downstream::Started) {
        let s = &self.servers[server];
        let mut retired_now = Vec::new();
        {
            let mut retired = self.retired.lock().unwrap();
            for (index, route) in self.routes.iter().enumerate() {
                if route.server != server || retired.contains(&index) {
                    continue;
                }
                let same = started
                    .tools
                    .iter()
                    .find(|t| t.name.as_ref() == route.original.as_str())
                    .is_some_and(|t| {
                        let mut t = t.clone();
                        t.name = route.listed.name.clone();
                        t == route.listed
                    });
                if !same {
                    retired.insert(index);
                    retired_now.push(route.listed.name.to_string());
                }
            }
        }
        let known = |name: &str| {
            self.routes
                .iter()
                .any(|r| r.server == server && r.original == name)
        };
        let added = started.tools.iter().filter(|t| !known(&t.name)).count();
        let n = self.restarts[server].fetch_add(1, Ordering::Relaxed) + 1;
        let epoch = s.revive(&started.running);
        let mut message = format!(
            "server {:?} restarted ({n} of {})",
            s.name, self.max_restarts
        );
        if !retired_now.is_empty() {
            message.push_str(&format!(
                "; unavailable now, listed differently: {}",
                retired_now.join(", ")
            ));
        }
        if added > 0 {
            message.push_str(&format!(
                "; {added} new tool(s) left out until the gateway restarts"
            ));
        }
        log(&message);
        let watcher = tokio::spawn(watch(Arc::clone(self), server, epoch, started.running));
        self.watchers.lock().unwrap().push(watcher);
        self.tools_changed();
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
        let restarting = std::mem::take(&mut *self.restarting.lock().unwrap());
        for task in restarting {
            task.abort();
            let _ = task.await;
        }
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

/// Starts every configured server at once; the outcome of each, in the
/// configuration's order.
async fn start_servers(config: &Config) -> Result<Vec<Result<downstream::Started, String>>, Error> {
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
    Ok(started
        .into_iter()
        .map(|s| s.expect("every server was started"))
        .collect())
}

/// Lets the servers exit as they would at the end of a session, waiting
/// a few seconds at most.
async fn stop_servers(running: Vec<(usize, RunningService<RoleClient, ()>)>) {
    let stopping = running.into_iter().map(|(_, r)| r.cancel());
    let stopped = async {
        for s in stopping {
            let _ = s.await;
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(3), stopped).await;
}

/// What the started servers offer: each server's state, the running ones,
/// their tools under qualified names (the first of a name kept) and the
/// route of each back to its server.
struct Listing {
    servers: Vec<Downstream>,
    running: Vec<(usize, RunningService<RoleClient, ()>)>,
    tools: Vec<lode_tools::Tool>,
    routes: Vec<Route>,
}

impl Listing {
    fn of(config: &Config, started: Vec<Result<downstream::Started, String>>) -> Listing {
        let mut listing = Listing {
            servers: Vec::new(),
            running: Vec::new(),
            tools: Vec::new(),
            routes: Vec::new(),
        };
        let mut taken = HashSet::new();
        for (i, (config, outcome)) in config.servers.iter().zip(started).enumerate() {
            let name = &config.name;
            match outcome {
                Err(why) => {
                    log(&format!("server {name:?} is unavailable: {why}"));
                    listing.servers.push(Downstream::failed(name, why));
                }
                Ok(s) => {
                    for t in &s.tools {
                        listing.add_tool(i, name, t, &mut taken);
                    }
                    listing.servers.push(Downstream::up(name, &s.running));
                    listing.running.push((i, s.running));
                }
            }
        }
        listing
    }

    /// Lists server `i`'s tool `t` under its qualified name, unless that is taken.
    fn add_tool(&mut self, i: usize, name: &str, t: &Tool, taken: &mut HashSet<String>) {
        let canonical = qualified_name(name, &t.name);
        if !taken.insert(canonical.clone()) {
            log(&format!(
                "server {name:?}: tool {:?} left out: its name {canonical:?} is taken",
                t.name
            ));
            return;
        }
        let schema = Value::Object(t.input_schema.as_ref().clone());
        let description = t.description.as_deref().unwrap_or_default();
        self.tools
            .push(lode_tools::Tool::new(&canonical, description, schema).with_group(name));
        let mut listed = t.clone();
        listed.name = canonical.into();
        self.routes.push(Route {
            server: i,
            original: t.name.to_string(),
            listed,
        });
    }
}

/// The configured direct tools whose server is up.
fn direct_tools_up<'a>(config: &'a Config, servers: &[Downstream]) -> Vec<&'a String> {
    config
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
        .collect()
}

/// Waits for a server's client to end; if the gateway did not end it, the
/// server crashed or closed its side: it is marked down.
async fn watch(hub: Arc<Hub>, server: usize, epoch: u64, running: RunningService<RoleClient, ()>) {
    let why = match running.waiting().await {
        Ok(rmcp::service::QuitReason::Cancelled) => "stopped".to_string(),
        Ok(_) => "it exited or closed its connection".to_string(),
        Err(e) => format!("its connection task failed: {e}"),
    };
    hub.mark_down(server, epoch, why);
}

/// Starts `server` again after a backoff, trying until its restarts run out.
/// `done` restarts happened before this failure.
async fn restart(hub: Arc<Hub>, server: usize, done: u64) {
    let name = hub.servers[server].name.clone();
    let mut attempt = done;
    while attempt < u64::from(hub.max_restarts) {
        tokio::time::sleep(RESTART_BACKOFF * 2u32.pow(attempt.min(6) as u32)).await;
        if hub.closing.load(Ordering::Relaxed) {
            return;
        }
        match downstream::start(&hub.configs[server], hub.start_timeout).await {
            Ok(started) if hub.closing.load(Ordering::Relaxed) => {
                let _ = started.running.cancel().await;
                return;
            }
            Ok(started) => {
                hub.revive(server, started);
                return;
            }
            Err(why) => {
                // A failed attempt uses up a restart too.
                hub.restarts[server].fetch_add(1, Ordering::Relaxed);
                attempt += 1;
                log(&format!(
                    "server {name:?} did not restart ({attempt} of {}): {why}",
                    hub.max_restarts
                ));
            }
        }
    }
}

fn error_result(message: String) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message)])
}
