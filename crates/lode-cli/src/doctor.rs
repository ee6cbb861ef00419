//! `lode doctor`: what lode is configured to do, the state of the index, whether
//! each backend answers, and what to do about what is off.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Instant;

use lode_core::{Config, Result};
use lode_diagnostics::{self as diagnostics, CommandMetrics};
use lode_index::IndexState;
use serde::Serialize;
use serde_json::Value;

use crate::commands::emit;
use crate::context::{Context, user_config_path};

/// One configured value and the file that set it.
#[derive(Serialize)]
struct Setting {
    key: String,
    value: Value,
    /// `default`, `user` or `project`.
    source: &'static str,
}

#[derive(Serialize)]
struct Backend {
    name: &'static str,
    /// `ok`, `fallback` (a configured backend is not used; the built-in one answers) or `off`.
    status: &'static str,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ms: Option<f64>,
}

#[derive(Serialize)]
struct Doctor {
    user_config: String,
    user_config_exists: bool,
    project_config: String,
    project_config_exists: bool,
    settings: Vec<Setting>,
    config_warnings: Vec<String>,
    /// Config files that could not be read, with why.
    config_errors: Vec<String>,
    root: String,
    index_dir: String,
    #[serde(flatten)]
    state: IndexState,
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    generation: Option<u64>,
    disk_bytes: u64,
    backends: Vec<Backend>,
    query_metrics: QueryMetrics,
    suggestions: Vec<String>,
}

/// Recent queries, from the diagnostics log.
#[derive(Serialize)]
struct QueryMetrics {
    enabled: bool,
    log: String,
    /// Records read (the log and its rotated files).
    records: usize,
    commands: Vec<CommandMetrics>,
    #[serde(skip_serializing_if = "Option::is_none")]
    hint: Option<String>,
}

fn query_metrics(ctx: &Context, user: &Config, user_path: &std::path::Path) -> QueryMetrics {
    let d = &user.diagnostics;
    let log = diagnostics::log_path(ctx.common.cache_dir.as_deref());
    // Records left from when it was on still count.
    let records = log
        .as_deref()
        .map(|p| diagnostics::read(p, d.keep()))
        .unwrap_or_default();
    QueryMetrics {
        enabled: d.enabled(),
        log: log.map(|p| p.display().to_string()).unwrap_or_default(),
        records: records.len(),
        commands: diagnostics::summarize(&records),
        hint: (!d.enabled()).then(|| {
            format!(
                "the diagnostics log is off; set [diagnostics] enabled = true in {} to record query metrics",
                user_path.display()
            )
        }),
    }
}

/// A config as dotted keys → values (unset values left out).
fn flatten(config: &Config) -> BTreeMap<String, Value> {
    fn walk(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
        match v {
            Value::Object(map) => {
                for (k, v) in map {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    walk(&key, v, out);
                }
            }
            Value::Null => {}
            other => {
                out.insert(prefix.to_string(), other.clone());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(
        "",
        &serde_json::to_value(config).unwrap_or(Value::Null),
        &mut out,
    );
    out
}

/// Which file set each value: the project narrows the user config, which overrides the defaults.
fn settings(user: &Config, effective: &Config) -> Vec<Setting> {
    let defaults = flatten(&Config::default());
    let user = flatten(user);
    flatten(effective)
        .into_iter()
        .map(|(key, value)| {
            let source = if user.get(&key) != Some(&value) {
                "project"
            } else if defaults.get(&key) != Some(&value) {
                "user"
            } else {
                "default"
            };
            Setting { key, value, source }
        })
        .collect()
}

/// The embedding backend in use and whether it embeds a query now (for a
/// server: one real request, after the connection's probe).
fn embedding_backend(ctx: &Context) -> Backend {
    let embed = &ctx.config.embed;
    let wanted = match (&ctx.common.model, embed.backend()) {
        (Some(_), _) => "local",
        (None, lode_core::EmbedBackend::Builtin) if embed.model.is_some() => "local",
        (None, b) => b.name(),
    };
    let started = Instant::now();
    let (backend, model, answer) = lode_index::vectors::describe();
    let ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    if backend != wanted {
        let what = match (&ctx.common.model, &embed.model, wanted) {
            (Some(dir), _, _) => dir.display().to_string(),
            (None, Some(m), "local") => m.clone(),
            _ => format!("the {wanted} backend"),
        };
        return Backend {
            name: "embedding",
            status: "fallback",
            detail: format!("{what} could not be used; the built-in model answers"),
            ms,
        };
    }
    match answer {
        Ok(()) => Backend {
            name: "embedding",
            status: "ok",
            detail: format!("{backend} {model} embeds a query"),
            ms,
        },
        Err(e) => Backend {
            name: "embedding",
            status: "fallback",
            detail: format!(
                "{backend} {model} does not answer ({e}); builds use the built-in model, \
                 queries on an index of its vectors run lexical-only"
            ),
            ms,
        },
    }
}

fn gather_backend(config: &Config) -> Backend {
    let g = &config.gather;
    if !g.uses_endpoint() {
        return Backend {
            name: "gather decision model",
            status: "ok",
            detail: "deterministic (no endpoint configured)".into(),
            ms: None,
        };
    }
    let Some(url) = g.endpoint.as_deref() else {
        return Backend {
            name: "gather decision model",
            status: "fallback",
            detail: "gather.decision = \"endpoint\" without gather.endpoint: deterministic".into(),
            ms: None,
        };
    };
    // Whether the server accepts a connection; no request is sent (it would cost tokens).
    let started = Instant::now();
    let checked =
        lode_core::endpoint::check_endpoint(url, g.allow_private_endpoints.unwrap_or(false))
            .and_then(|()| reachable(url));
    let ms = Some(started.elapsed().as_secs_f64() * 1000.0);
    match checked {
        Ok(()) => Backend {
            name: "gather decision model",
            status: "ok",
            detail: format!("{url} accepts connections"),
            ms,
        },
        Err(e) => Backend {
            name: "gather decision model",
            status: "fallback",
            detail: format!("{e}; gather uses the deterministic model"),
            ms,
        },
    }
}

/// A TCP connection to the URL's host and port within 2 seconds.
fn reachable(url: &str) -> std::result::Result<(), String> {
    use std::net::{TcpStream, ToSocketAddrs};
    let (host, port) = lode_core::endpoint::host_port(url)?;
    let addr = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| format!("{url}: {e}"))?
        .next()
        .ok_or_else(|| format!("{url}: no address"))?;
    TcpStream::connect_timeout(&addr, std::time::Duration::from_secs(2))
        .map(|_| ())
        .map_err(|e| format!("{url} does not answer: {e}"))
}

pub fn doctor(ctx: Context) -> Result<u8> {
    let user_path = user_config_path(&ctx.common);
    let user = Config::load(&user_path).unwrap_or_default();
    let project_path = ctx.location.root.join(".lode.toml");
    let config_warnings = user
        .for_root(&ctx.location.root)
        .map(|(_, w)| w)
        .unwrap_or_default();
    let (mut state, index) = lode_index::state(&ctx.location, &ctx.config)?;
    // What the queries would meet: checked row by row, and marked for a rebuild.
    let problems = index
        .as_ref()
        .map(|i| i.integrity_problems())
        .unwrap_or_default();
    if let (Some(i), false) = (&index, problems.is_empty()) {
        let reason = problems.join("; ");
        lode_index::mark_damaged(i.store().path(), &reason);
        state = IndexState::Damaged { reason };
    }
    let index = index.filter(|_| problems.is_empty());
    let stats = index.as_ref().map(|i| i.stats()).transpose()?;
    let backends = vec![embedding_backend(&ctx), gather_backend(&ctx.config)];

    // A config file that cannot be read stops every other command: said first.
    let mut suggestions: Vec<String> = ctx
        .config_errors
        .iter()
        .map(|e| format!("fix this, or every other command refuses to run: {e}"))
        .collect();
    match &state {
        IndexState::Absent => {
            suggestions.push("no index yet: run 'lode index' (or any query builds it)".into())
        }
        IndexState::Building { pid } => suggestions.push(format!(
            "lode process {pid} is indexing; queries answer from the last complete index"
        )),
        IndexState::Stale { changed_files } => suggestions.push(format!(
            "the index is stale: {changed_files} files changed — it refreshes on the next query"
        )),
        IndexState::Damaged { reason } => suggestions.push(format!(
            "the index is damaged ({reason}): the next query or 'lode index' builds it again"
        )),
        IndexState::Ready => {}
    }
    for b in backends.iter().filter(|b| b.status == "fallback") {
        suggestions.push(format!("{}: {}", b.name, b.detail));
    }
    suggestions.extend(config_warnings.iter().cloned());

    let doctor = Doctor {
        user_config_exists: user_path.is_file(),
        user_config: user_path.display().to_string(),
        project_config_exists: project_path.is_file(),
        project_config: project_path.display().to_string(),
        settings: settings(&user, &ctx.config),
        config_warnings,
        config_errors: ctx.config_errors.clone(),
        root: ctx.location.root.display().to_string(),
        index_dir: ctx.location.dir.display().to_string(),
        state,
        files: stats.as_ref().map(|s| s.files),
        generation: stats.as_ref().map(|s| s.generation),
        disk_bytes: index.as_ref().map_or(0, |i| i.disk_bytes()),
        backends,
        query_metrics: query_metrics(&ctx, &user, &user_path),
        suggestions,
    };
    emit(&ctx, "doctor", &doctor, || doctor_text(&doctor));
    Ok(0)
}

fn doctor_text(d: &Doctor) -> String {
    let mut out = String::new();
    let exists = |e: bool| if e { "" } else { " (absent)" };
    let _ = writeln!(out, "config");
    let _ = writeln!(
        out,
        "  user:    {}{}",
        d.user_config,
        exists(d.user_config_exists)
    );
    let _ = writeln!(
        out,
        "  project: {}{}",
        d.project_config,
        exists(d.project_config_exists)
    );
    for s in d.settings.iter().filter(|s| s.source != "default") {
        let _ = writeln!(out, "  {} = {}  ({})", s.key, s.value, s.source);
    }
    let _ = writeln!(out, "index");
    let _ = writeln!(out, "  root:  {}", d.root);
    let _ = writeln!(out, "  dir:   {}", d.index_dir);
    let state = match &d.state {
        IndexState::Absent => "absent".to_string(),
        IndexState::Building { pid } => format!("building (lode process {pid})"),
        IndexState::Ready => "ready".to_string(),
        IndexState::Damaged { reason } => format!("damaged ({reason})"),
        IndexState::Stale { changed_files } => format!("stale ({changed_files} files changed)"),
    };
    let _ = writeln!(out, "  state: {state}");
    if let (Some(files), Some(generation)) = (d.files, d.generation) {
        let _ = writeln!(
            out,
            "  {files} files, generation {generation}, {:.1} MiB on disk",
            d.disk_bytes as f64 / 1048576.0
        );
    }
    let _ = writeln!(out, "backends");
    for b in &d.backends {
        let ms = b.ms.map(|m| format!(" ({m:.0} ms)")).unwrap_or_default();
        let _ = writeln!(out, "  {}: {} — {}{ms}", b.name, b.status, b.detail);
    }
    let q = &d.query_metrics;
    if q.records == 0 {
        let why = q.hint.as_deref().unwrap_or("nothing recorded yet");
        let _ = writeln!(out, "queries: {why}");
    } else {
        let _ = writeln!(out, "queries (last {} in {})", q.records, q.log);
        for c in &q.commands {
            let _ = writeln!(
                out,
                "  {}  {} calls, {} cache hits, {} errors, {} fallbacks, p50 {:.1} ms, p95 {:.1} ms",
                c.command, c.count, c.cache_hits, c.errors, c.fallbacks, c.p50_ms, c.p95_ms
            );
        }
        if let Some(hint) = &q.hint {
            let _ = writeln!(out, "  ({hint})");
        }
    }
    if d.suggestions.is_empty() {
        let _ = writeln!(out, "nothing to do");
    } else {
        let _ = writeln!(out, "suggestions");
        for s in &d.suggestions {
            let _ = writeln!(out, "  - {s}");
        }
    }
    out
}
