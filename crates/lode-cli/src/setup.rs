//! `lode setup HOST`: the MCP config entry that starts `lode mcp` in an agent
//! host, printed, or with `--write` merged into the host's user config file.
//! The repository is never touched: each host starts the server in the
//! project it opens, and `lode mcp` serves that directory's repository.

use std::path::{Path, PathBuf};

use lode_core::{Error, Result};
use serde_json::{Value, json};

/// The agent hosts lode knows the config of.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Host {
    /// Claude Code (`~/.claude.json`, `mcpServers`).
    Claude,
    /// OpenAI Codex CLI (`~/.codex/config.toml`, `[mcp_servers.lode]`).
    Codex,
    /// Cursor (`~/.cursor/mcp.json`, `mcpServers`).
    Cursor,
    /// OpenCode (`~/.config/opencode/opencode.json`, `mcp`).
    Opencode,
}

/// The server's name in every host's config.
const NAME: &str = "lode";

impl Host {
    /// The host's user config file, under `home`.
    fn config_file(self, home: &Path) -> PathBuf {
        match self {
            Host::Claude => home.join(".claude.json"),
            Host::Codex => home.join(".codex/config.toml"),
            Host::Cursor => home.join(".cursor/mcp.json"),
            Host::Opencode => home.join(".config/opencode/opencode.json"),
        }
    }

    /// The entry as the host's config writes it: (the key path, the value).
    fn json_entry(self, exe: &str) -> (&'static str, Value) {
        match self {
            Host::Opencode => (
                "mcp",
                json!({"type": "local", "command": [exe, "mcp"], "enabled": true}),
            ),
            _ => ("mcpServers", json!({"command": exe, "args": ["mcp"]})),
        }
    }

    fn toml_entry(exe: &str) -> String {
        let exe = toml::Value::String(exe.to_string()).to_string();
        format!("[mcp_servers.{NAME}]\ncommand = {exe}\nargs = [\"mcp\"]\n")
    }

    /// The entry as text, ready to paste into the config file.
    fn entry_text(self, exe: &str) -> String {
        match self {
            Host::Codex => Host::toml_entry(exe),
            _ => {
                let (key, value) = self.json_entry(exe);
                let doc = json!({ key: { NAME: value } });
                serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
            }
        }
    }
}

/// What `--write` did.
#[derive(Debug, PartialEq, Eq)]
enum Written {
    Added,
    AlreadyThere,
}

/// Runs `lode setup`: prints the entry, or writes it with `write`; with
/// `json`, one object says the host, the file, the entry and what was done.
pub fn run(host: Host, write: bool, json: bool) -> Result<u8> {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .map_err(|e| Error::io("the lode executable", e))?;
    let exe = exe.to_string_lossy().into_owned();
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Error::BadConfig("HOME is not set: cannot find the host's config".into()))?;
    let file = host.config_file(&home);
    let written = match (write, host) {
        (false, _) => None,
        (true, Host::Codex) => Some(write_toml(&file, &exe)?),
        (true, _) => Some(write_json(host, &file, &exe)?),
    };
    if json {
        let body = json!({
            "schema_version": lode_search::JSON_SCHEMA_VERSION,
            "command": "setup",
            "host": format!("{host:?}").to_lowercase(),
            "file": file,
            "entry": host.entry_text(&exe),
            "written": written.map(|w| match w {
                Written::Added => "added",
                Written::AlreadyThere => "already_there",
            }),
        });
        println!("{body}");
        return Ok(0);
    }
    match written {
        None => {
            print!("{}", host.entry_text(&exe));
            eprintln!(
                "lode: add this to {} (or run `lode setup {} --write`)",
                file.display(),
                format!("{host:?}").to_lowercase()
            );
        }
        Some(Written::Added) => println!("added the {NAME} MCP server to {}", file.display()),
        Some(Written::AlreadyThere) => println!(
            "{} already has an MCP server named {NAME}: left as it is",
            file.display()
        ),
    }
    Ok(0)
}

/// Merges the entry into a JSON config, keeping everything else; a file that
/// is not a JSON object is refused, untouched.
fn write_json(host: Host, file: &Path, exe: &str) -> Result<Written> {
    let mut doc: Value = match std::fs::read_to_string(file) {
        Ok(text) if !text.trim().is_empty() => serde_json::from_str(&text).map_err(|e| {
            Error::BadConfig(format!(
                "{}: not JSON ({e}); add the entry of `lode setup` by hand",
                file.display()
            ))
        })?,
        Ok(_) => json!({}),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
        Err(e) => return Err(Error::io(file, e)),
    };
    let (key, value) = host.json_entry(exe);
    let Some(servers) = doc
        .as_object_mut()
        .map(|o| o.entry(key).or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    else {
        return Err(Error::BadConfig(format!(
            "{}: `{key}` is not an object; add the entry of `lode setup` by hand",
            file.display()
        )));
    };
    if servers.contains_key(NAME) {
        return Ok(Written::AlreadyThere);
    }
    servers.insert(NAME.to_string(), value);
    let text = serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n";
    replace(file, &text)?;
    Ok(Written::Added)
}

/// Appends the entry to a TOML config unless a table of that name is there;
/// a file that is not TOML is refused, untouched.
fn write_toml(file: &Path, exe: &str) -> Result<Written> {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(Error::io(file, e)),
    };
    let doc: toml::Table = text.parse().map_err(|e| {
        Error::BadConfig(format!(
            "{}: not TOML ({e}); add the entry of `lode setup` by hand",
            file.display()
        ))
    })?;
    let present = doc.get("mcp_servers").and_then(|s| s.get(NAME)).is_some();
    if present {
        return Ok(Written::AlreadyThere);
    }
    // Appended as text, so the file's comments and layout stay as they are.
    let mut out = text;
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(&Host::toml_entry(exe));
    replace(file, &out)?;
    Ok(Written::Added)
}

/// Writes `file` whole through a temporary file beside it, then renames.
fn replace(file: &Path, text: &str) -> Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let tmp = file.with_extension("lode-tmp");
    std::fs::write(&tmp, text).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, file).map_err(|e| Error::io(file, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_valid_in_their_formats() {
        for host in [Host::Claude, Host::Cursor, Host::Opencode] {
            let v: Value = serde_json::from_str(&host.entry_text("/bin/lode")).unwrap();
            assert!(v.to_string().contains("/bin/lode"), "{v}");
        }
        let t: toml::Table = Host::Codex.entry_text("/opt/a \"b\"/lode").parse().unwrap();
        assert_eq!(
            t["mcp_servers"]["lode"]["command"].as_str(),
            Some("/opt/a \"b\"/lode")
        );
    }

    #[test]
    fn writing_keeps_the_rest_and_never_twice() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(
            &file,
            r#"{"theme": "dark", "mcpServers": {"other": {"command": "x"}}}"#,
        )
        .unwrap();
        assert_eq!(
            write_json(Host::Cursor, &file, "/bin/lode").unwrap(),
            Written::Added
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(v["theme"], "dark");
        assert_eq!(v["mcpServers"]["other"]["command"], "x");
        assert_eq!(v["mcpServers"]["lode"]["args"][0], "mcp");
        let before = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            write_json(Host::Cursor, &file, "/bin/lode").unwrap(),
            Written::AlreadyThere
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), before);

        let toml_file = dir.path().join("codex/config.toml");
        std::fs::create_dir_all(toml_file.parent().unwrap()).unwrap();
        std::fs::write(&toml_file, "# mine\nmodel = \"o3\"\n").unwrap();
        assert_eq!(write_toml(&toml_file, "/bin/lode").unwrap(), Written::Added);
        assert_eq!(
            write_toml(&toml_file, "/bin/lode").unwrap(),
            Written::AlreadyThere
        );
        let text = std::fs::read_to_string(&toml_file).unwrap();
        assert!(
            text.starts_with("# mine\nmodel = \"o3\"\n\n[mcp_servers.lode]"),
            "{text}"
        );
    }

    #[test]
    fn a_file_lode_cannot_read_is_left_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("opencode.json");
        std::fs::write(&file, "{ // a comment\n}").unwrap();
        assert!(write_json(Host::Opencode, &file, "/bin/lode").is_err());
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ // a comment\n}");
        std::fs::write(&file, r#"{"mcp": []}"#).unwrap();
        assert!(write_json(Host::Opencode, &file, "/bin/lode").is_err());
        let toml_file = dir.path().join("config.toml");
        std::fs::write(&toml_file, "not = [toml").unwrap();
        assert!(write_toml(&toml_file, "/bin/lode").is_err());
        assert_eq!(std::fs::read_to_string(&toml_file).unwrap(), "not = [toml");
    }
}
