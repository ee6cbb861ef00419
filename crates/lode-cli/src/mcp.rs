//! `lode mcp`: the MCP server (crate `lode-mcp`) on stdin/stdout.
//!
//! Stdout carries the protocol only; notes go to stderr, which MCP clients
//! keep as the server's log.

use std::path::PathBuf;

use clap::CommandFactory;
use lode_core::{Config, Error, Result};

use crate::cli::Common;
use crate::context;

pub fn run(common: Common, max_chars: usize, max_open: u16, watch: bool) -> Result<u8> {
    let mut roots = roots();
    if roots.is_empty() {
        let found = context::discover_root(None)?;
        if let Some(note) = found.note {
            eprintln!("lode: {}", lode_core::shown::field(&note));
        }
        roots.push(found.root);
    }
    let config = Config::load(&context::user_config_path(&common))?;
    if let Some(note) = context::select_model(&common, &config)? {
        eprintln!("lode: {}", lode_core::shown::field(&note));
    }
    let server = lode_mcp::Server::new(lode_mcp::Options {
        roots,
        config,
        cache_dir: common.cache_dir,
        no_refresh: common.no_refresh,
        watch,
        max_open: max_open.into(),
        max_chars,
    })?;
    lode_mcp::serve_stdio(server).map_err(|e| Error::io("stdin/stdout", e))?;
    Ok(0)
}

/// `lode mcp --remote URL`: the tools answered by the shared index service's
/// shard nodes; no local root, no index.
pub fn run_remote(common: Common, max_chars: usize, url: String) -> Result<u8> {
    let (config, server) = crate::remote::connect_serving(&common, url)?;
    let server = lode_mcp::Server::remote(
        Box::new(server),
        lode_mcp::RemoteOptions {
            config,
            cache_dir: common.cache_dir,
            max_chars,
            deadline: lode_remote::serve::QUERY_DEADLINE,
        },
    );
    lode_mcp::serve_stdio(server).map_err(|e| Error::io("stdin/stdout", e))?;
    Ok(0)
}

/// Every `--root` of `lode mcp`, in order. The derived `Common` keeps one
/// value per flag, so the command line is read again for all of them.
fn roots() -> Vec<PathBuf> {
    let matches = crate::cli::Cli::command().try_get_matches_from(std::env::args_os());
    matches
        .ok()
        .as_ref()
        .and_then(|m| m.subcommand_matches("mcp"))
        .and_then(|m| m.get_many::<PathBuf>("root"))
        .map(|roots| roots.cloned().collect())
        .unwrap_or_default()
}
