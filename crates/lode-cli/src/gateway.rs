//! `lode gateway --config FILE`: the MCP tool gateway (crate `lode-gateway`)
//! on stdin/stdout.
//!
//! `--config` names the gateway's own TOML file here, not the user config.
//! A config that cannot be used is one line on stderr and exit status 2,
//! before any server is started; servers that fail later are the gateway's
//! log (stderr), not its exit status.

use lode_core::{Error, Result};

use crate::cli::Common;

pub fn run(common: &Common) -> Result<u8> {
    let Some(path) = &common.config else {
        return Err(Error::BadConfig(
            "gateway needs --config FILE: the gateway config (TOML, see README \"Tool gateway\")"
                .into(),
        ));
    };
    let config = lode_gateway::Config::load(path).map_err(|e| Error::BadConfig(e.to_string()))?;
    lode_gateway::serve_stdio(&config).map_err(|e| match e {
        lode_gateway::Error::Config(m) => Error::BadConfig(m),
        lode_gateway::Error::Io(e) => Error::io("stdin/stdout", e),
    })?;
    Ok(0)
}
