//! `lode enqueue`, `lode serve builder`, `lode catalog`: the shared index
//! service's commands (no repository root; the user config names the server).

use std::path::PathBuf;
use std::time::Duration;

use clap::Subcommand;
use lode_core::{Config, Error, Result};
use lode_remote::serve::Command;

use crate::cli::Common;
use crate::context::user_config_path;

/// `lode serve …`.
#[derive(Subcommand, Debug, Clone)]
pub enum ServeCommand {
    /// Take build jobs from the queue: clone, build, publish the shard, record the commit;
    /// logs one line per job start and end.
    Builder {
        /// The NATS servers (default: `[remote] url` in the user config).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        /// Clones and indexes kept between jobs (default: `<cache>/builder`).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
        /// Stop after this many jobs.
        #[arg(long, value_name = "N")]
        max_jobs: Option<usize>,
        /// Stop after this many seconds without a job.
        #[arg(long, value_name = "SECS")]
        idle_exit: Option<u64>,
        #[command(flatten)]
        common: Common,
    },
    /// Hold partitions of the built repositories and answer `search` and `grep` with
    /// `--repo`/`--all-repos` for them; runs until stopped.
    Shard {
        /// The NATS servers (default: `[remote] url` in the user config).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        /// This node's name, unique among the shard nodes (default: host name and pid).
        #[arg(long)]
        name: Option<String>,
        /// Checkouts and indexes (default: `<cache>/shard-<name>`).
        #[arg(long, value_name = "DIR")]
        work_dir: Option<PathBuf>,
        #[command(flatten)]
        common: Common,
    },
}

impl ServeCommand {
    pub fn common(&self) -> &Common {
        match self {
            ServeCommand::Builder { common, .. } | ServeCommand::Shard { common, .. } => common,
        }
    }
}

/// `lode cluster …`.
#[derive(Subcommand, Debug, Clone)]
pub enum ClusterCommand {
    /// Create every bucket and stream lode keeps (three replicas on a cluster, one on a
    /// single server) and list them; run once, with an account that may create them.
    Init {
        /// The NATS servers (default: `[remote] url` in the user config).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        #[command(flatten)]
        common: Common,
    },
}

impl ClusterCommand {
    pub fn common(&self) -> &Common {
        match self {
            ClusterCommand::Init { common, .. } => common,
        }
    }
}

/// `lode cluster init`: what lode keeps in JetStream, made and listed.
pub fn cluster(what: ClusterCommand) -> Result<u8> {
    let ClusterCommand::Init { remote, common } = what;
    let server = connect(&common, remote)?;
    let held = server.init().map_err(remote_err)?;
    if common.json {
        print_json(&serde_json::json!({"command": "cluster init", "held": held}));
    } else {
        for h in &held {
            println!(
                "{:<12} {:<12} {} replica{}  {} messages  {} KiB",
                h.name,
                h.kind,
                h.replicas,
                if h.replicas == 1 { "" } else { "s" },
                h.messages,
                h.bytes / 1024
            );
        }
    }
    Ok(0)
}

/// The user config and the server URL (`--remote`, else `[remote] url`).
fn connect_args(common: &Common, remote: Option<String>) -> Result<(Config, String)> {
    let config = Config::load(&user_config_path(common))?;
    let url = remote
        .or_else(|| config.remote.url.clone())
        .ok_or_else(|| {
            Error::BadQuery("no server: give --remote URL or set [remote] url".into())
        })?;
    if lode_core::has_credentials(&url) {
        return Err(Error::BadQuery(
            "--remote carries credentials (user:password@); name them in [remote] of the \
             user config (user, password_env, creds_file)"
                .into(),
        ));
    }
    Ok((config, url))
}

/// The service `--remote` (or `[remote] url`) names, connected to.
fn connect(common: &Common, remote: Option<String>) -> Result<lode_remote::Remote> {
    let (config, url) = connect_args(common, remote)?;
    lode_remote::Remote::connect(&url, &config.remote).map_err(remote_err)
}

fn remote_err(e: lode_remote::RemoteError) -> Error {
    Error::BadQuery(format!("remote: {e}"))
}

fn print_json(value: &serde_json::Value) {
    println!("{value}");
}

/// `lode enqueue REPO [--commit REV]`.
pub fn enqueue(
    repo: String,
    commit: String,
    remote: Option<String>,
    common: &Common,
) -> Result<u8> {
    let (config, url) = connect_args(common, remote)?;
    // A local path is queued as an absolute one: builders run elsewhere.
    let repo = match std::fs::canonicalize(&repo) {
        Ok(path) if path.is_dir() => path.to_string_lossy().into_owned(),
        _ => repo,
    };
    let job = lode_remote::Job::resolved(repo, commit);
    let server = lode_remote::Remote::connect(&url, &config.remote).map_err(remote_err)?;
    let queued = server.enqueue(&job).map_err(remote_err)?;
    if common.json {
        print_json(&serde_json::json!({
            "command": "enqueue", "repo": job.repo, "commit": job.commit,
            "sequence": queued.sequence, "duplicate": queued.duplicate,
        }));
    } else {
        let dup = if queued.duplicate {
            " (already queued)"
        } else {
            ""
        };
        println!(
            "queued {} as job {}{dup}",
            lode_core::shown::field(&job.id()),
            queued.sequence
        );
    }
    Ok(0)
}

/// `lode serve builder`.
pub fn serve(what: ServeCommand) -> Result<u8> {
    let (remote, work_dir, max_jobs, idle_exit, common) = match what {
        ServeCommand::Builder {
            remote,
            work_dir,
            max_jobs,
            idle_exit,
            common,
        } => (remote, work_dir, max_jobs, idle_exit, common),
        ServeCommand::Shard {
            remote,
            name,
            work_dir,
            common,
        } => {
            return serve_shard(remote, name, work_dir, &common);
        }
    };

    let (config, url) = connect_args(&common, remote)?;
    let work_dir = match work_dir {
        Some(dir) => dir,
        None => lode_remote::builder::default_work_dir(&lode_core::cache_base(
            common.cache_dir.as_deref(),
        )?),
    };
    let json = common.json;
    let log = |line: &lode_remote::builder::JobLog| {
        if json {
            print_json(&serde_json::to_value(line).unwrap_or_default());
        } else {
            let what = line
                .outcome
                .map(|o| format!(" {o:?}").to_lowercase())
                .unwrap_or_default();
            let err = line
                .error
                .as_deref()
                .map(|e| format!(": {e}"))
                .unwrap_or_default();
            println!(
                "{} {}@{}{what} ({} ms){}",
                line.event,
                lode_core::shown::field(&line.repo),
                lode_core::shown::field(&line.commit),
                line.ms,
                lode_core::shown::field(&err)
            );
        }
    };
    let opts = lode_remote::builder::BuilderOptions {
        url: &url,
        settings: &config.remote,
        config: &config,
        work_dir: &work_dir,
        max_jobs,
        idle_exit: idle_exit.map(Duration::from_secs),
        log: &log,
        note: &|m| eprintln!("lode: {}", lode_core::shown::field(m)),
    };
    let done = lode_remote::builder::serve(&opts).map_err(remote_err)?;
    if !json {
        eprintln!("lode: builder stopped after {done} jobs");
    }
    Ok(0)
}

/// `lode catalog`: every repository with its newest built commit.
pub fn catalog(remote: Option<String>, common: &Common) -> Result<u8> {
    let server = connect(common, remote)?;
    let entries = server.repo_entries().map_err(remote_err)?;
    if common.json {
        print_json(&serde_json::json!({"command": "catalog", "repositories": entries}));
    } else {
        for e in &entries {
            println!(
                "{}  {}  {} KiB",
                lode_core::shown::field(&e.repo),
                &e.commit[..e.commit.len().min(12)],
                e.bytes / 1024
            );
        }
    }
    Ok(0)
}

/// How long the shard nodes have to answer.
const QUERY_DEADLINE: Duration = Duration::from_secs(3);

/// `lode search|grep --repo R | --all-repos`: the shard nodes' answers, merged.
pub fn query(
    service: crate::cli::ServiceArg,
    command: Command,
    text: &str,
    top_k: usize,
    common: &Common,
) -> Result<u8> {
    if text.trim().is_empty() {
        return Err(Error::BadQuery("empty query".into()));
    }
    let server = connect(common, service.remote)?;
    let asked = lode_remote::serve::Query {
        command,
        text: text.to_string(),
        repo: service.repo.map(|r| match std::fs::canonicalize(&r) {
            Ok(path) if path.is_dir() => path.to_string_lossy().into_owned(),
            _ => r,
        }),
        top_k,
    };
    let gathered = server.scatter(&asked, QUERY_DEADLINE).map_err(remote_err)?;
    if !matches!(command, Command::Search | Command::Grep) {
        return Ok(print_answers(&gathered, command, common.json));
    }
    let hits = merged_hits(&gathered, command, top_k);
    if common.json {
        let served: Vec<serde_json::Value> = gathered
            .answers
            .iter()
            .map(|a| serde_json::json!({"repo": a.repo, "commit": a.commit}))
            .collect();
        print_json(&serde_json::json!({
            "command": command.as_str(),
            "hits": hits,
            "served": served,
            "partial": gathered.partial,
            "missing_partitions": gathered.missing_partitions,
            "loading": gathered.loading,
        }));
    } else {
        for h in &hits {
            println!(
                "{}  {}:{}-{}",
                lode_core::shown::field(h["repo"].as_str().unwrap_or("")),
                lode_core::shown::field(h["path"].as_str().unwrap_or("")),
                h["start_line"],
                h["end_line"]
            );
        }
        if gathered.partial {
            eprintln!(
                "lode: partial: partitions {:?} did not answer in time",
                gathered.missing_partitions
            );
        }
    }
    Ok(if hits.is_empty() { 1 } else { 0 })
}

/// `lode outline|callers|show … --repo R | --all-repos`: each repository's
/// answer; 1 when none has the path or symbol.
fn print_answers(gathered: &lode_remote::serve::Gathered, command: Command, json: bool) -> u8 {
    let missed = |a: &serde_json::Value| a.get("not_found").or(a.get("ambiguous")).cloned();
    let found = (gathered.answers.iter()).any(|a| missed(&a.answer).is_none());
    if json {
        print_json(&serde_json::json!({
            "command": command.as_str(),
            "answers": gathered.answers,
            "partial": gathered.partial,
            "missing_partitions": gathered.missing_partitions,
            "loading": gathered.loading,
        }));
    } else {
        for a in &gathered.answers {
            println!(
                "{}  {}",
                lode_core::shown::field(&a.repo),
                short_commit(&a.commit)
            );
            if let Some(why) = missed(&a.answer) {
                println!("  {}", shown_str(&why));
                continue;
            }
            if let Some(text) = a.answer.get("text") {
                print!("{}", text.as_str().unwrap_or(""));
                continue;
            }
            let files = match a.answer.get("files") {
                Some(files) => files.as_array().cloned().unwrap_or_default(),
                None => vec![a.answer.clone()],
            };
            for file in files.iter().filter(|f| f.get("path").is_some()) {
                println!("  {}", shown_str(&file["path"]));
                print_symbols(&file["symbols"], 2);
            }
        }
        if gathered.partial {
            eprintln!(
                "lode: partial: partitions {:?} did not answer in time",
                gathered.missing_partitions
            );
        }
    }
    u8::from(!found)
}

/// An outline's symbols as `kind name start-end`, children indented.
fn print_symbols(symbols: &serde_json::Value, depth: usize) {
    for s in symbols.as_array().into_iter().flatten() {
        let text = |k: &str| shown_str(&s[k]);
        // A file's outline spans lines; a directory's gives each symbol's first.
        let start = s.get("start_line").or(s.get("line"));
        let end = s.get("end_line").map_or(String::new(), |e| format!("-{e}"));
        println!(
            "{:indent$}{} {} {}{end}",
            "",
            text("kind"),
            text("name"),
            start.unwrap_or(&serde_json::Value::Null),
            indent = (depth + s["depth"].as_u64().unwrap_or(0) as usize) * 2
        );
        if let Some(children) = s.get("children") {
            print_symbols(children, depth + 1);
        }
    }
}

/// A JSON string of an answer, as the terminal may show it.
fn shown_str(v: &serde_json::Value) -> String {
    lode_core::shown::field(v.as_str().unwrap_or("")).into_owned()
}

fn short_commit(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Every repository's hits with its name: search's best first, cut to
/// `top_k`; grep's groups by repository.
fn merged_hits(
    gathered: &lode_remote::serve::Gathered,
    command: Command,
    top_k: usize,
) -> Vec<serde_json::Value> {
    let field = if command == Command::Grep {
        "groups"
    } else {
        "hits"
    };
    let mut hits: Vec<serde_json::Value> = Vec::new();
    for a in &gathered.answers {
        for hit in a.answer[field].as_array().into_iter().flatten() {
            let mut hit = hit.clone();
            hit["repo"] = serde_json::Value::String(a.repo.clone());
            hit["commit"] = serde_json::Value::String(a.commit.clone());
            hits.push(hit);
        }
    }
    if command == Command::Search {
        hits.sort_by(|a, b| {
            let score = |h: &serde_json::Value| h["score"].as_f64().unwrap_or(0.0);
            score(b)
                .total_cmp(&score(a))
                .then_with(|| a["repo"].as_str().cmp(&b["repo"].as_str()))
                .then_with(|| a["path"].as_str().cmp(&b["path"].as_str()))
        });
        hits.truncate(top_k);
    }
    hits
}

/// `lode serve shard`.
fn serve_shard(
    remote: Option<String>,
    name: Option<String>,
    work_dir: Option<PathBuf>,
    common: &Common,
) -> Result<u8> {
    let (config, url) = connect_args(common, remote)?;
    let name = name.unwrap_or_else(|| {
        format!(
            "{}-{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "node".into()),
            std::process::id()
        )
    });
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
    if name.is_empty() || !name.bytes().all(valid) {
        return Err(Error::BadQuery(format!(
            "--name {}: letters, digits, - and _ only",
            lode_core::shown::field(&name)
        )));
    }
    let work_dir = match work_dir {
        Some(dir) => dir,
        None => lode_core::cache_base(common.cache_dir.as_deref())?.join(format!("shard-{name}")),
    };
    let opts = lode_remote::serve::NodeOptions {
        url: &url,
        settings: &config.remote,
        config: &config,
        name: &name,
        work_dir: &work_dir,
        note: &|m| eprintln!("lode: {}", lode_core::shown::field(m)),
    };
    lode_remote::serve::serve_node(&opts).map_err(remote_err)?;
    Ok(0)
}
