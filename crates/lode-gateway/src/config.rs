//! The gateway config (TOML): the downstream servers, the direct tools, the
//! search limits and the timeouts. Unknown keys are errors, so a typo fails
//! loudly instead of being ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::Error;

/// Default wait for a server's `initialize` and `tools/list`.
pub const DEFAULT_START_TIMEOUT_MS: u64 = 10_000;
/// Default wait for a forwarded `tools/call`.
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 60_000;
/// Default number of times a failed server is started again.
pub const DEFAULT_MAX_RESTARTS: u32 = 3;

/// A parsed and checked gateway config.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// Tools always listed with their schemas, by canonical name `server__tool`.
    #[serde(default)]
    pub direct: Vec<String>,
    /// How long a forwarded call may take before its server is marked unavailable.
    #[serde(default = "default_call_timeout")]
    pub call_timeout_ms: u64,
    /// How long a server may take to start and list its tools.
    #[serde(default = "default_start_timeout")]
    pub start_timeout_ms: u64,
    /// How many times a server that crashed, hung or answered garbage is
    /// started again (with a doubling backoff from 0.5 s); 0: never.
    #[serde(default = "default_max_restarts")]
    pub max_restarts: u32,
    /// A JSON-lines file that gets one line per ended turn (telemetry:
    /// counts, sizes and tool names, never arguments or query text). A
    /// relative path is relative to the config file's directory.
    #[serde(default)]
    pub telemetry_file: Option<PathBuf>,
    /// How `tool_search` ranks the catalog (`[search]`).
    #[serde(default)]
    pub search: SearchConfig,
    /// The downstream servers, `[[server]]` tables, in order.
    #[serde(rename = "server", default)]
    pub servers: Vec<ServerConfig>,
}

/// One downstream MCP server, started as a child process speaking MCP on stdio.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Prefix of its tools' canonical names (`name__tool`): letters, digits, `-`, `_`.
    pub name: String,
    /// The program, found on `PATH` unless it is a path.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Added to the gateway's own environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

/// `[search]`: the bounds of one `tool_search` call.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct SearchConfig {
    /// Tools a search activates when the model gives no `limit`.
    pub limit: usize,
    /// The largest `limit` a model may ask for.
    pub max_limit: usize,
    /// The most schema bytes one search may activate.
    pub schema_budget_bytes: usize,
    /// Rank by BM25 alone, without the built-in embedding model.
    pub lexical: bool,
}

impl Default for SearchConfig {
    fn default() -> Self {
        let l = lode_tools::Limits::default();
        SearchConfig {
            limit: l.default_results,
            max_limit: l.max_results,
            schema_budget_bytes: l.schema_budget_bytes,
            lexical: false,
        }
    }
}

fn default_call_timeout() -> u64 {
    DEFAULT_CALL_TIMEOUT_MS
}

fn default_start_timeout() -> u64 {
    DEFAULT_START_TIMEOUT_MS
}

fn default_max_restarts() -> u32 {
    DEFAULT_MAX_RESTARTS
}

impl Config {
    /// Parses and checks a config; `origin` names it in errors (`origin:line: message`).
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, Error> {
        let config: Config = toml::from_str(text).map_err(|e| {
            let at = e
                .span()
                .map(|s| format!(":{}", text[..s.start].matches('\n').count() + 1))
                .unwrap_or_default();
            Error::Config(format!("{origin}{at}: {}", one_line(e.message())))
        })?;
        config
            .check()
            .map_err(|m| Error::Config(format!("{origin}: {m}")))?;
        Ok(config)
    }

    /// Reads and checks a config file.
    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config(format!("{}: {e}", path.display())))?;
        let mut config = Config::from_toml(&text, &path.display().to_string())?;
        if let (Some(file), Some(dir)) = (&mut config.telemetry_file, path.parent()) {
            *file = dir.join(&*file);
        }
        Ok(config)
    }

    /// How long a tool call may take (`call_timeout_ms`).
    pub fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.call_timeout_ms)
    }

    /// How long a server may take to start and list its tools (`start_timeout_ms`).
    pub fn start_timeout(&self) -> Duration {
        Duration::from_millis(self.start_timeout_ms)
    }

    /// The search limits as lode-tools takes them.
    pub fn limits(&self) -> lode_tools::Limits {
        lode_tools::Limits {
            default_results: self.search.limit,
            max_results: self.search.max_limit,
            schema_budget_bytes: self.search.schema_budget_bytes,
        }
    }

    /// What serde cannot say: names, references between keys, ranges.
    fn check(&self) -> Result<(), String> {
        if self.servers.is_empty() {
            return Err("no [[server]]: a gateway needs at least one downstream server".into());
        }
        for (i, s) in self.servers.iter().enumerate() {
            let ok_chars = s
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            // `__` separates server and tool in canonical names: inside a
            // server name it would make two servers' tools collide.
            if s.name.is_empty() || !ok_chars || s.name.contains("__") {
                return Err(format!(
                    "server {:?}: a name is letters, digits, '-' and single '_'",
                    s.name
                ));
            }
            if self.servers[..i].iter().any(|o| o.name == s.name) {
                return Err(format!("two servers are named {:?}", s.name));
            }
            if s.command.trim().is_empty() {
                return Err(format!("server {:?}: empty command", s.name));
            }
        }
        for d in &self.direct {
            let server = d.split_once("__").map(|(s, _)| s);
            if !server.is_some_and(|s| self.servers.iter().any(|o| o.name == s)) {
                return Err(format!(
                    "direct tool {d:?}: not server__tool for a configured server"
                ));
            }
        }
        let s = &self.search;
        if s.limit == 0 || s.max_limit < s.limit || s.schema_budget_bytes == 0 {
            return Err(format!(
                "[search] needs 0 < limit <= max_limit and schema_budget_bytes > 0 (limit {}, max_limit {})",
                s.limit, s.max_limit
            ));
        }
        if self.call_timeout_ms == 0 || self.start_timeout_ms == 0 {
            return Err("call_timeout_ms and start_timeout_ms must be positive".into());
        }
        Ok(())
    }
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
direct = ["fs__read_file"]
call_timeout_ms = 500

[search]
limit = 3

[[server]]
name = "fs"
command = "fs-server"
args = ["--root", "/tmp"]
env = { LOG = "1" }

[[server]]
name = "weather-2"
command = "/opt/weather"
"#;

    #[test]
    fn reads_servers_direct_tools_limits_and_timeouts() {
        let c = Config::from_toml(GOOD, "g.toml").unwrap();
        assert_eq!(c.servers.len(), 2);
        assert_eq!(c.servers[0].args, ["--root", "/tmp"]);
        assert_eq!(c.servers[0].env["LOG"], "1");
        assert!(c.servers[1].args.is_empty() && c.servers[1].env.is_empty());
        assert_eq!(c.direct, ["fs__read_file"]);
        assert_eq!(c.call_timeout(), Duration::from_millis(500));
        assert_eq!(c.start_timeout_ms, DEFAULT_START_TIMEOUT_MS);
        let l = c.limits();
        assert_eq!((l.default_results, l.max_results), (3, 10));
        assert!(!c.search.lexical);
    }

    #[test]
    fn every_mistake_is_one_line_naming_the_file_and_what() {
        let server = "[[server]]\nname = \"fs\"\ncommand = \"x\"\n";
        let cases = [
            ("", "no [[server]]"),
            ("[[server]]\nname = \"fs\"\ncomand = \"x\"\n", "comand"),
            ("[[server]]\nname = \"fs\"\n", "command"),
            (&format!("{server}{server}"), "two servers"),
            ("[[server]]\nname = \"a__b\"\ncommand = \"x\"\n", "a__b"),
            ("[[server]]\nname = \"a b\"\ncommand = \"x\"\n", "a b"),
            (
                "[[server]]\nname = \"fs\"\ncommand = \" \"\n",
                "empty command",
            ),
            (&format!("direct = [\"read_file\"]\n{server}"), "read_file"),
            (&format!("direct = [\"gh__x\"]\n{server}"), "gh__x"),
            (&format!("[search]\nlimit = 0\n{server}"), "limit"),
            (&format!("[search]\nlimit = 20\n{server}"), "max_limit"),
            (&format!("call_timeout_ms = 0\n{server}"), "call_timeout_ms"),
            (
                &format!("start_timeout_ms = -1\n{server}"),
                "g.toml:1: invalid value",
            ),
            (
                "[[server]]\nname = \"fs\"\ncommand = \"x\"\nenv = { A = 1 }\n",
                "string",
            ),
            ("not toml at all", "g.toml:1"),
        ];
        for (text, needle) in cases {
            let e = Config::from_toml(text, "g.toml").unwrap_err().to_string();
            assert!(e.starts_with("g.toml"), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{text:?}: {e}");
            assert!(e.contains(needle), "{text:?}: {e} lacks {needle:?}");
        }
        // The line of a syntax or type error is given.
        let e = Config::from_toml(&format!("{server}args = 3\n"), "g.toml").unwrap_err();
        assert!(e.to_string().starts_with("g.toml:4: "), "{e}");
    }

    #[test]
    fn restarts_and_a_turn_log_relative_to_the_config_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.toml");
        let server = "[[server]]\nname = \"fs\"\ncommand = \"x\"\n";
        std::fs::write(&path, format!("telemetry_file = \"t.jsonl\"\n{server}")).unwrap();
        let c = Config::load(&path).unwrap();
        assert_eq!(c.telemetry_file, Some(dir.path().join("t.jsonl")));
        assert_eq!(c.max_restarts, DEFAULT_MAX_RESTARTS);
        let c = Config::from_toml(&format!("max_restarts = 0\n{server}"), "g.toml").unwrap();
        assert_eq!((c.max_restarts, c.telemetry_file), (0, None));
    }

    #[test]
    fn a_missing_file_is_a_config_error() {
        let e = Config::load(Path::new("/nonexistent/gateway.toml")).unwrap_err();
        assert!(matches!(e, Error::Config(_)));
        assert!(e.to_string().contains("/nonexistent/gateway.toml"), "{e}");
    }
}
