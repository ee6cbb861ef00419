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
    /// Set the repositories an identity's queries are answered from (names, or prefixes
    /// ending in `*`), replacing its list; once any list exists, an identity without one is
    /// answered from none. Run with an account that may write `lode-access`.
    Allow {
        /// The identity (`[remote] identity` of its clients, else their NATS user).
        identity: String,
        /// Repository names or prefixes ending in `*`; none: it sees no repository.
        patterns: Vec<String>,
        /// Remove the identity's list instead.
        #[arg(long, conflicts_with = "patterns")]
        remove: bool,
        /// The NATS servers (default: `[remote] url` in the user config).
        #[arg(long, value_name = "URL")]
        remote: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// List every identity's allow-list (none: every identity sees every repository).
    Access {
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
            ClusterCommand::Init { common, .. }
            | ClusterCommand::Allow { common, .. }
            | ClusterCommand::Access { common, .. } => common,
        }
    }
}

/// `lode cluster …`.
pub fn cluster(what: ClusterCommand) -> Result<u8> {
    match what {
        ClusterCommand::Init { remote, common } => cluster_init(remote, &common),
        ClusterCommand::Allow {
            identity,
            patterns,
            remove,
            remote,
            common,
        } => {
            let (_, server) = connect(&common, remote)?;
            let allowed = lode_remote::access::Allowed { repos: patterns };
            let list = (!remove).then_some(&allowed);
            server.allow(&identity, list).map_err(remote_err)?;
            cluster_access(server, &common)
        }
        ClusterCommand::Access { remote, common } => {
            let (_, server) = connect(&common, remote)?;
            cluster_access(server, &common)
        }
    }
}

/// `lode cluster access`: every allow-list, by identity.
fn cluster_access(server: lode_remote::Remote, common: &Common) -> Result<u8> {
    let access = server.access().map_err(remote_err)?;
    if common.json {
        print_json(&serde_json::json!({"command": "cluster access", "allowed": access.lists()}));
    } else if access.lists().is_empty() {
        println!("no allow-lists: every identity sees every repository");
    } else {
        for (identity, allowed) in access.lists() {
            let repos: Vec<_> = (allowed.repos.iter())
                .map(|r| lode_core::shown::field(r))
                .collect();
            println!("{identity}  {}", repos.join(" "));
        }
    }
    Ok(0)
}

/// `lode cluster init`: what lode keeps in JetStream, made and listed.
fn cluster_init(remote: Option<String>, common: &Common) -> Result<u8> {
    let (_, server) = connect(common, remote)?;
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

/// The service `--remote` (or `[remote] url`) names, connected to, with the
/// user config.
pub fn connect(common: &Common, remote: Option<String>) -> Result<(Config, lode_remote::Remote)> {
    connect_with(common, remote, lode_remote::Remote::connect)
}

/// [`connect`] for `lode mcp --remote`, which serves until stopped.
pub fn connect_serving(common: &Common, url: String) -> Result<(Config, lode_remote::Remote)> {
    connect_with(common, Some(url), lode_remote::Remote::connect_serving)
}

type Connector = fn(
    &str,
    &lode_core::RemoteConfig,
) -> std::result::Result<lode_remote::Remote, lode_remote::RemoteError>;

fn connect_with(
    common: &Common,
    remote: Option<String>,
    connector: Connector,
) -> Result<(Config, lode_remote::Remote)> {
    let (config, url) = connect_args(common, remote)?;
    let server = connector(&url, &config.remote).map_err(remote_err)?;
    Ok((config, server))
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
    let repo = lode_remote::repo_name(&repo);
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
    let (_, server) = connect(common, remote)?;
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
    let (_, server) = connect(common, service.remote)?;
    let asked = lode_remote::serve::Query {
        command,
        text: text.to_string(),
        repo: service.repo.as_deref().map(lode_remote::repo_name),
        top_k,
    };
    let gathered = server
        .scatter(&asked, lode_remote::serve::QUERY_DEADLINE)
        .map_err(remote_err)?;
    if !matches!(command, Command::Search | Command::Grep) {
        return Ok(print_answers(&gathered, command, common.json));
    }
    let hits = gathered.hits(command, top_k);
    if common.json {
        print_json(&serde_json::json!({
            "command": command.as_str(),
            "hits": hits,
            "served": gathered.served(),
            "partial": gathered.partial,
            "missing_partitions": gathered.missing_partitions,
            "loading": gathered.loading,
        }));
    } else {
        for h in &hits {
            let text = lode_remote::answers::hit_text(command, h);
            println!("{}", text.lines().next().unwrap_or(""));
        }
        print_notes(&gathered);
    }
    Ok(if hits.is_empty() { 1 } else { 0 })
}

/// `lode outline|callers|show … --repo R | --all-repos`: each repository's
/// answer; 1 when none has the path or symbol.
fn print_answers(gathered: &lode_remote::serve::Gathered, command: Command, json: bool) -> u8 {
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
            print!("{}", lode_remote::answers::answer_text(a));
        }
        print_notes(gathered);
    }
    u8::from(!gathered.found())
}

fn print_notes(gathered: &lode_remote::serve::Gathered) {
    for note in gathered.notes() {
        eprintln!("lode: {note}");
    }
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
