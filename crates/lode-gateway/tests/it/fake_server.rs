//! A small stdio MCP server for the gateway tests, built with rmcp: one of
//! three tool kits (`files`, `weather`, `issues`, with schemas shaped like
//! real servers'), each call answered with what it received, and flags to
//! misbehave. The test binary serves it, before libtest's `main`, when its
//! first argument is [`ARG`], so a test's gateway config can start it as
//! `[current_exe, "fake-mcp-server", "--kit", "weather", …]`.
//!
//! A call with `"fail": true` among its arguments gets a JSON-RPC error.
//!
//! Flags: `--name NAME` (default the kit), `--kit KIT`, `--crash-after N`
//! (exit on call N + 1), `--hang` (never answer a call), `--garbage` (answer
//! a call with a line that is not JSON and a result that is not a tool
//! result), `--hang-start` (never answer `initialize`), `--exit-after-ms N`
//! (exit N ms after listing its tools, unasked), `--pid-file PATH` (write its pid there),
//! `--changed-if-exists PATH` (list the kit's first tool with another
//! description when PATH exists; create PATH otherwise — so a restarted
//! server lists differently from its first start), `--starts-file PATH`
//! (append a line to PATH at each start), `--fail-restarts N` (with
//! `--starts-file`: the first N restarts, starts 2 to N + 1, exit with
//! status 5 before `initialize`).

#![allow(dead_code)]

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

pub const ARG: &str = "fake-mcp-server";

/// Runs [`serve_if_asked`] before `main`: the test binary's `main` is
/// libtest's, which would print its header on the server's stdout, the
/// protocol channel. An initializer (what C++ runs for a global's
/// constructor) runs before it.
#[used]
#[cfg_attr(
    any(
        target_os = "linux",
        target_os = "android",
        target_os = "freebsd",
        target_os = "netbsd",
        target_os = "openbsd",
        target_os = "illumos"
    ),
    unsafe(link_section = ".init_array")
)]
#[cfg_attr(
    target_vendor = "apple",
    unsafe(link_section = "__DATA,__mod_init_func")
)]
#[cfg_attr(windows, unsafe(link_section = ".CRT$XCU"))]
static SERVE_IF_ASKED: extern "C" fn() = serve_if_asked;

/// Serves the fake server and exits when the binary was started as one
/// ([`ARG`] as its first argument); returns at once otherwise.
extern "C" fn serve_if_asked() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) != Some(ARG) {
        return;
    }
    // As Rust's runtime does before `main`: a write to a closed pipe is an
    // error, not a signal that kills the process.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to ignored.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    // A panic may not unwind out of an initializer: it exits as a panicking
    // `main` would.
    let code = std::panic::catch_unwind(|| serve(&args[1..])).unwrap_or(101);
    std::process::exit(code)
}

/// The fake server, configured by `args` (the flags above); returns or
/// exits with the process's exit status.
fn serve(args: &[String]) -> i32 {
    let fake = Fake::from_args(args);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Some(path) = &fake.pid_file {
        std::fs::write(path, std::process::id().to_string()).unwrap();
    }
    if let Some(path) = &fake.starts_file {
        let before = std::fs::read_to_string(path).unwrap_or_default();
        let starts = before.lines().count();
        std::fs::write(path, format!("{before}start\n")).unwrap();
        if (1..=fake.fail_restarts).contains(&starts) {
            return 5;
        }
    }
    rt.block_on(async move {
        if fake.hang_start {
            std::future::pending::<()>().await;
        }
        let running = fake
            .serve(rmcp::transport::stdio())
            .await
            .expect("initialize");
        let _ = running.waiting().await;
    });
    // A hung call must not keep the process alive once stdin closed.
    std::process::exit(0)
}

/// The tools of a kit, as the server lists them.
pub fn kit(name: &str) -> Vec<Tool> {
    let specs = match name {
        "files" => files(),
        "weather" => weather(),
        "issues" => issues(),
        other => panic!("no kit {other:?}"),
    };
    specs
        .into_iter()
        .map(|(name, description, schema)| {
            let Value::Object(schema) = schema else {
                unreachable!()
            };
            Tool::new(name, description, schema)
        })
        .collect()
}

#[derive(Clone)]
struct Fake {
    name: String,
    tools: Arc<Vec<Tool>>,
    crash_after: Option<usize>,
    hang: bool,
    garbage: bool,
    hang_start: bool,
    exit_after_ms: Option<u64>,
    pid_file: Option<String>,
    starts_file: Option<String>,
    fail_restarts: usize,
    calls: Arc<AtomicUsize>,
}

impl Fake {
    fn from_args(args: &[String]) -> Fake {
        let value = |flag: &str| {
            args.iter()
                .position(|a| a == flag)
                .map(|i| args[i + 1].clone())
        };
        let has = |flag: &str| args.iter().any(|a| a == flag);
        let kit_name = value("--kit").expect("--kit");
        let mut tools = kit(&kit_name);
        if let Some(marker) = value("--changed-if-exists") {
            if std::path::Path::new(&marker).exists() {
                tools[0].description = Some("Changed since the first start.".into());
            } else {
                std::fs::write(&marker, "").unwrap();
            }
        }
        Fake {
            name: value("--name").unwrap_or_else(|| kit_name.clone()),
            tools: Arc::new(tools),
            crash_after: value("--crash-after").map(|n| n.parse().unwrap()),
            hang: has("--hang"),
            garbage: has("--garbage"),
            hang_start: has("--hang-start"),
            exit_after_ms: value("--exit-after-ms").map(|n| n.parse().unwrap()),
            pid_file: value("--pid-file"),
            starts_file: value("--starts-file"),
            fail_restarts: value("--fail-restarts").map_or(0, |n| n.parse().unwrap()),
            calls: Arc::new(AtomicUsize::new(0)),
        }
    }
}

impl ServerHandler for Fake {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(self.name.clone(), "0.0.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        if let Some(ms) = self.exit_after_ms {
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(ms));
                std::process::exit(4);
            });
        }
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if self.crash_after.is_some_and(|max| n >= max) {
            std::process::exit(3);
        }
        if self.hang {
            std::future::pending::<()>().await;
        }
        if self.garbage {
            let id = serde_json::to_string(&context.id).unwrap();
            {
                let mut out = std::io::stdout().lock();
                writeln!(out, "this is not JSON-RPC").unwrap();
                writeln!(
                    out,
                    r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":"not a list","isError":"maybe"}}}}"#
                )
                .unwrap();
                out.flush().unwrap();
            }
            std::future::pending::<()>().await;
        }
        let args = request.arguments.clone().unwrap_or_default();
        if args.get("fail") == Some(&Value::Bool(true)) {
            return Err(ErrorData::invalid_params("asked to fail", None));
        }
        if !self.tools.iter().any(|t| t.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool {}", request.name),
                None,
            ));
        }
        let echo = json!({
            "server": self.name,
            "tool": request.name,
            "arguments": request.arguments.unwrap_or_default(),
        });
        Ok(CallToolResult::success(vec![ContentBlock::text(echo.to_string())]).into())
    }
}

type Spec = (&'static str, &'static str, Value);

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn files() -> Vec<Spec> {
    let path = string("Path of the file, absolute or relative to an allowed directory.");
    vec![
        (
            "read_file",
            "Read the complete contents of a file from the file system. Handles various text encodings and gives a detailed error if the file cannot be read. Only works within allowed directories.",
            json!({"type": "object", "properties": {
             "path": path,
             "head": {"type": "integer", "description": "If given, return only the first N lines of the file."},
             "tail": {"type": "integer", "description": "If given, return only the last N lines of the file."}},
             "required": ["path"]}),
        ),
        (
            "write_file",
            "Create a new file or completely overwrite an existing file with new content. Overwrites without warning. Only works within allowed directories.",
            json!({"type": "object", "properties": {"path": path, "content": string("The full text to write.")},
                "required": ["path", "content"]}),
        ),
        (
            "edit_file",
            "Make line-based edits to a text file. Each edit replaces an exact sequence of lines with new content. Returns a git-style diff of the changes.",
            json!({"type": "object", "properties": {
             "path": path,
             "edits": {"type": "array", "items": {"type": "object", "properties": {
                 "oldText": string("Text to search for; must match exactly."),
                 "newText": string("Text to replace it with.")}, "required": ["oldText", "newText"]}},
             "dryRun": {"type": "boolean", "default": false, "description": "Preview the changes as a diff without writing."}},
             "required": ["path", "edits"]}),
        ),
        (
            "list_directory",
            "Get a detailed listing of all files and directories in a path. Entries are marked [FILE] or [DIR].",
            json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
        ),
        (
            "move_file",
            "Move or rename files and directories, across directories in one operation. Fails if the destination exists.",
            json!({"type": "object", "properties": {"source": string("The path to move."), "destination": string("The new path.")},
                "required": ["source", "destination"]}),
        ),
        (
            "search_files",
            "Recursively search for files and directories whose names match a pattern, from a starting path through all subdirectories.",
            json!({"type": "object", "properties": {
             "path": path, "pattern": string("Case-insensitive substring of the names to find."),
             "excludePatterns": {"type": "array", "items": {"type": "string"}, "description": "Glob patterns to skip."}},
             "required": ["path", "pattern"]}),
        ),
        (
            "get_file_info",
            "Retrieve metadata about a file or directory: size, creation time, last modified time, permissions and type.",
            json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
        ),
    ]
}

fn weather() -> Vec<Spec> {
    let units = json!({"type": "string", "enum": ["metric", "imperial"], "default": "metric",
                       "description": "Units of temperature and wind speed."});
    vec![
        (
            "get_forecast",
            "Get the weather forecast for a location: temperature, precipitation and wind for each of the coming days.",
            json!({"type": "object", "properties": {
             "latitude": {"type": "number", "minimum": -90, "maximum": 90, "description": "Latitude of the location."},
             "longitude": {"type": "number", "minimum": -180, "maximum": 180, "description": "Longitude of the location."},
             "days": {"type": "integer", "minimum": 1, "maximum": 16, "default": 7, "description": "Number of days to forecast."},
             "units": units},
             "required": ["latitude", "longitude"]}),
        ),
        (
            "get_alerts",
            "Get active severe weather alerts (storms, floods, heat) for a US state.",
            json!({"type": "object", "properties": {"state": string("Two-letter US state code, e.g. CA.")}, "required": ["state"]}),
        ),
        (
            "get_current_conditions",
            "Current observed weather in a city: temperature, humidity, wind and visibility.",
            json!({"type": "object", "properties": {"city": string("City name, optionally with country."), "units": units},
                "required": ["city"]}),
        ),
        (
            "get_air_quality",
            "Air quality index and pollutant concentrations (PM2.5, PM10, ozone) for a city.",
            json!({"type": "object", "properties": {"city": string("City name, optionally with country.")}, "required": ["city"]}),
        ),
    ]
}

fn issues() -> Vec<Spec> {
    let owner = string("Repository owner (user or organisation).");
    let repo = string("Repository name.");
    let number = json!({"type": "integer", "description": "The issue number."});
    let labels =
        json!({"type": "array", "items": {"type": "string"}, "description": "Label names."});
    let assignees =
        json!({"type": "array", "items": {"type": "string"}, "description": "User logins."});
    let per_page = json!({"type": "integer", "minimum": 1, "maximum": 100, "default": 30, "description": "Results per page."});
    vec![
        (
            "create_issue",
            "Create a new issue in a GitHub repository.",
            json!({"type": "object", "properties": {"owner": owner, "repo": repo, "title": string("Issue title."),
                "body": string("Issue body, Markdown."), "labels": labels, "assignees": assignees},
                "required": ["owner", "repo", "title"]}),
        ),
        (
            "list_issues",
            "List issues in a GitHub repository, filtered by state, labels and assignee, newest first.",
            json!({"type": "object", "properties": {"owner": owner, "repo": repo,
                "state": {"type": "string", "enum": ["open", "closed", "all"], "default": "open"},
                "labels": labels, "assignee": string("Only issues assigned to this login."),
                "per_page": per_page, "page": {"type": "integer", "minimum": 1, "description": "Page number."}},
                "required": ["owner", "repo"]}),
        ),
        (
            "get_issue",
            "Get the details of one issue: title, body, state, labels, assignees and number of comments.",
            json!({"type": "object", "properties": {"owner": owner, "repo": repo, "issue_number": number},
                "required": ["owner", "repo", "issue_number"]}),
        ),
        (
            "add_issue_comment",
            "Add a comment to an existing issue or pull request.",
            json!({"type": "object", "properties": {"owner": owner, "repo": repo, "issue_number": number,
                "body": string("Comment text, Markdown.")}, "required": ["owner", "repo", "issue_number", "body"]}),
        ),
        (
            "update_issue",
            "Update an issue's title, body, state, labels or assignees.",
            json!({"type": "object", "properties": {"owner": owner, "repo": repo, "issue_number": number,
                "title": string("New title."), "body": string("New body."),
                "state": {"type": "string", "enum": ["open", "closed"]}, "labels": labels, "assignees": assignees},
                "required": ["owner", "repo", "issue_number"]}),
        ),
        (
            "search_issues",
            "Search issues and pull requests across GitHub repositories with the GitHub search syntax.",
            json!({"type": "object", "properties": {"q": string("Search query, e.g. 'is:open label:bug repo:o/r'."),
                "sort": {"type": "string", "enum": ["comments", "created", "updated"]},
                "order": {"type": "string", "enum": ["asc", "desc"], "default": "desc"}, "per_page": per_page},
                "required": ["q"]}),
        ),
    ]
}
