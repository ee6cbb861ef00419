//! The bound catalog: every tool of a run, with its canonical name, group,
//! description and input schema. Immutable once built.

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::{Error, Result};

/// Longest canonical name lode builds: the limit model providers put on
/// tool names.
pub const MAX_NAME_LEN: usize = 64;

/// One tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Tool {
    /// Canonical name, unique in the catalog: what the model calls.
    pub name: String,
    /// The source server or namespace, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// What the tool does, as given (may be empty): indexed for search and sent
    /// with the schema.
    pub description: String,
    /// A JSON schema of the arguments (an object schema for MCP tools).
    pub input_schema: Value,
}

impl Tool {
    /// A tool with no group; an empty object schema when `input_schema` is null.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Tool {
        let input_schema = if input_schema.is_null() {
            serde_json::json!({"type": "object", "properties": {}})
        } else {
            input_schema
        };
        Tool {
            name: name.into(),
            group: None,
            description: description.into(),
            input_schema,
        }
    }

    /// This tool in `group`. The name is kept as it is, not qualified.
    pub fn with_group(mut self, group: impl Into<String>) -> Tool {
        self.group = Some(group.into());
        self
    }

    /// The definition a model request carries: `{name, description, input_schema}`.
    pub fn definition(&self) -> Value {
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        })
    }
}

/// What a tool's definition costs in a request: its compact JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DefinitionSize {
    /// Bytes of the compact JSON (UTF-8): what
    /// [`Limits::schema_budget_bytes`](crate::Limits::schema_budget_bytes) counts.
    pub bytes: usize,
    /// Characters (Unicode scalar values) of the same JSON; equal to `bytes` when it is ASCII.
    pub chars: usize,
}

impl DefinitionSize {
    /// Measured by serialising [`Tool::definition`] into a counter: no copy of the schema.
    fn of(tool: &Tool) -> DefinitionSize {
        #[derive(Serialize)]
        struct Definition<'a> {
            name: &'a str,
            description: &'a str,
            input_schema: &'a Value,
        }
        let mut counter = Counter::default();
        let def = Definition {
            name: &tool.name,
            description: &tool.description,
            input_schema: &tool.input_schema,
        };
        serde_json::to_writer(&mut counter, &def).expect("a counter does not fail");
        counter.0
    }
}

#[derive(Default)]
struct Counter(DefinitionSize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.bytes += buf.len();
        // UTF-8: every character has exactly one byte that is not a continuation byte.
        self.0.chars += buf.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl std::ops::Add for DefinitionSize {
    type Output = DefinitionSize;
    fn add(self, o: DefinitionSize) -> DefinitionSize {
        DefinitionSize {
            bytes: self.bytes + o.bytes,
            chars: self.chars + o.chars,
        }
    }
}

impl std::iter::Sum for DefinitionSize {
    fn sum<I: Iterator<Item = DefinitionSize>>(iter: I) -> DefinitionSize {
        iter.fold(DefinitionSize::default(), |a, b| a + b)
    }
}

/// The tools bound to a run: the capability ceiling. Names are unique;
/// the order is the order given (sources in file order, servers in the
/// order given).
#[derive(Clone, Debug)]
pub struct Catalog {
    tools: Vec<Tool>,
    sizes: Vec<DefinitionSize>,
    by_name: HashMap<String, usize>,
}

impl Catalog {
    /// A catalog of `tools`, whose names are taken as canonical. Fails on an
    /// empty or repeated name.
    pub fn new(tools: Vec<Tool>) -> Result<Catalog> {
        let mut by_name = HashMap::with_capacity(tools.len());
        for (i, t) in tools.iter().enumerate() {
            if t.name.trim().is_empty() {
                return Err(Error::BadCatalog(format!("tool {}: empty name", i + 1)));
            }
            if by_name.insert(t.name.clone(), i).is_some() {
                return Err(Error::BadCatalog(format!(
                    "two tools are named {:?}{}",
                    t.name,
                    if t.group.is_some() {
                        " (server and tool names qualified with __ collide)"
                    } else {
                        ""
                    }
                )));
            }
        }
        let sizes = tools.iter().map(DefinitionSize::of).collect();
        Ok(Catalog {
            tools,
            sizes,
            by_name,
        })
    }

    /// This catalog with `tool` appended; fails if its name is taken.
    pub fn with_tool(mut self, tool: Tool) -> Result<Catalog> {
        if self.by_name.contains_key(&tool.name) {
            return Err(Error::BadCatalog(format!(
                "two tools are named {:?}",
                tool.name
            )));
        }
        self.by_name.insert(tool.name.clone(), self.tools.len());
        self.sizes.push(DefinitionSize::of(&tool));
        self.tools.push(tool);
        Ok(self)
    }

    /// A catalog from MCP servers: `(server name, tools/list result)` pairs,
    /// each result `{"tools": [{name, description, inputSchema}, …]}`. Tools
    /// are named [`qualified_name`]`(server, tool)` and grouped by server.
    pub fn from_mcp_servers<S: Into<String>>(
        servers: impl IntoIterator<Item = (S, Value)>,
    ) -> Result<Catalog> {
        let mut tools = Vec::new();
        for (server, result) in servers {
            let server = server.into();
            let list = tools_array(&result).ok_or_else(|| {
                Error::BadCatalog(format!("server {server:?}: no \"tools\" list"))
            })?;
            push_grouped(&mut tools, &server, list)?;
        }
        Catalog::new(tools)
    }

    /// A catalog from JSON text in any of these shapes:
    ///
    /// - a list of tools `[{name, description, inputSchema | input_schema | parameters, group?}]`
    ///   (OpenAI's `{type: "function", function: {…}}` wrapping too);
    /// - an MCP `tools/list` result `{"tools": […]}` (or the JSON-RPC response holding it);
    /// - a map of server name → `tools/list` result (grouped, names qualified);
    /// - the LiveMCPBench list `[{name, tools: {server: {tools: […]}}}]` (grouped by server);
    /// - a map of tool name → description (MetaTool's `plugin_des.json`).
    pub fn from_json(text: &str) -> Result<Catalog> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| Error::BadCatalog(format!("not JSON: {e}")))?;
        Catalog::from_value(&value)
    }

    /// As [`Catalog::from_json`], from a parsed value.
    pub fn from_value(value: &Value) -> Result<Catalog> {
        const SHAPES: &str = "expected a list of tools, an MCP tools/list result, \
            a map of server to tools/list result, or a map of tool name to description";
        match value {
            Value::Array(items) if !items.is_empty() && items.iter().all(is_server_entry) => {
                let mut tools = Vec::new();
                for entry in items {
                    match &entry["tools"] {
                        Value::Object(servers) => {
                            for (server, result) in servers {
                                let list = tools_array(result).ok_or_else(|| {
                                    Error::BadCatalog(format!(
                                        "server {server:?}: no \"tools\" list"
                                    ))
                                })?;
                                push_grouped(&mut tools, server, list)?;
                            }
                        }
                        list => {
                            let server = entry["name"].as_str().unwrap_or_default();
                            push_grouped(&mut tools, server, list.as_array().unwrap())?;
                        }
                    }
                }
                Catalog::new(tools)
            }
            Value::Array(items) => {
                let tools = items
                    .iter()
                    .enumerate()
                    .map(|(i, t)| parse_tool(t, i))
                    .collect::<Result<Vec<_>>>()?;
                Catalog::new(tools)
            }
            Value::Object(map) => {
                if let Some(list) = tools_array(value) {
                    let tools = list
                        .iter()
                        .enumerate()
                        .map(|(i, t)| parse_tool(t, i))
                        .collect::<Result<Vec<_>>>()?;
                    return Catalog::new(tools);
                }
                if !map.is_empty() && map.values().all(Value::is_string) {
                    let tools = map
                        .iter()
                        .map(|(name, d)| {
                            Tool::new(name, d.as_str().unwrap_or_default(), Value::Null)
                        })
                        .collect();
                    return Catalog::new(tools);
                }
                if !map.is_empty() && map.values().all(|v| tools_array(v).is_some()) {
                    return Catalog::from_mcp_servers(
                        map.iter().map(|(k, v)| (k.clone(), v.clone())),
                    );
                }
                Err(Error::BadCatalog(format!("unrecognised shape: {SHAPES}")))
            }
            _ => Err(Error::BadCatalog(format!("unrecognised shape: {SHAPES}"))),
        }
    }

    /// How many tools are bound (in a [`Toolbox`](crate::Toolbox)'s catalog, the
    /// search tool included).
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// Whether no tool is bound.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every tool in catalog order: a tool's position here is the index that
    /// rankings, [`Catalog::size`] and [`Catalog::position`] use.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The tool whose canonical name is exactly `name` (case-sensitive).
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.position(name).map(|i| &self.tools[i])
    }

    /// The index of the tool named `name` in [`Catalog::tools`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// The size of the definition of the tool at `index`.
    pub fn size(&self, index: usize) -> DefinitionSize {
        self.sizes[index]
    }

    /// The size of all definitions together: what binding every tool costs each request.
    pub fn total_size(&self) -> DefinitionSize {
        self.sizes.iter().copied().sum()
    }
}

/// The canonical name of `tool` from `group`: `group__tool`, characters
/// outside `[A-Za-z0-9_-]` as `_`; a name over [`MAX_NAME_LEN`] is cut and
/// ends with a hash of the whole, so it stays unique.
pub fn qualified_name(group: &str, tool: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect()
    };
    let name = if group.is_empty() {
        clean(tool)
    } else {
        format!("{}__{}", clean(group), clean(tool))
    };
    if name.len() <= MAX_NAME_LEN {
        return name;
    }
    let hash = fnv1a(name.as_bytes());
    format!("{}_{:08x}", &name[..MAX_NAME_LEN - 9], hash as u32)
}

/// FNV-1a: a hash that is the same in every build (std's hasher may change).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// `{"tools": [...]}`, or a JSON-RPC response whose result is that.
fn tools_array(v: &Value) -> Option<&Vec<Value>> {
    v.get("tools")
        .and_then(Value::as_array)
        .or_else(|| v.get("result")?.get("tools")?.as_array())
}

/// A LiveMCPBench-style server entry: `tools` maps servers to `tools/list`
/// results, or is a list of tools beside the server's `name` and no `inputSchema`.
fn is_server_entry(v: &Value) -> bool {
    match v.get("tools") {
        Some(Value::Object(servers)) => servers.values().all(|s| tools_array(s).is_some()),
        Some(Value::Array(_)) => v.get("name").is_some_and(Value::is_string),
        _ => false,
    }
}

fn push_grouped(out: &mut Vec<Tool>, group: &str, list: &[Value]) -> Result<()> {
    for (i, t) in list.iter().enumerate() {
        let tool = parse_tool(t, i)
            .map_err(|e| Error::BadCatalog(format!("server {group:?}: {}", e.message())))?;
        let name = qualified_name(group, &tool.name);
        out.push(Tool {
            name,
            group: Some(group.to_string()),
            ..tool
        });
    }
    Ok(())
}

fn parse_tool(v: &Value, i: usize) -> Result<Tool> {
    let at = |msg: &str| Error::BadCatalog(format!("tool {}: {msg}", i + 1));
    let obj: &Map<String, Value> = v.as_object().ok_or_else(|| at("not an object"))?;
    // OpenAI's function-calling shape wraps the tool.
    if let Some(f) = obj.get("function").filter(|f| f.is_object()) {
        return parse_tool(f, i);
    }
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| at("missing \"name\""))?;
    let description = match obj.get("description") {
        None | Some(Value::Null) => "",
        Some(Value::String(s)) => s,
        Some(_) => return Err(at("\"description\" is not a string")),
    };
    let schema = ["inputSchema", "input_schema", "parameters"]
        .iter()
        .find_map(|k| obj.get(*k))
        .cloned()
        .unwrap_or(Value::Null);
    if !(schema.is_object() || schema.is_null()) {
        return Err(at("the input schema is not an object"));
    }
    let mut tool = Tool::new(name, description, schema);
    tool.group = obj.get("group").and_then(Value::as_str).map(str::to_string);
    Ok(tool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_every_supported_shape() {
        let tool = json!({"name": "read_file", "description": "Read a file",
                          "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}});
        let shapes = [
            (json!([tool]), "read_file"),
            (json!({"tools": [tool]}), "read_file"),
            (
                json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
                "read_file",
            ),
            (json!({"fs": {"tools": [tool]}}), "fs__read_file"),
            (
                json!([{"name": "Filesystem", "category": "x", "tools": {"fs": {"tools": [tool]}}}]),
                "fs__read_file",
            ),
            (json!([{"type": "function", "function": tool}]), "read_file"),
            (json!({"read_file": "Read a file"}), "read_file"),
        ];
        for (value, name) in shapes {
            let c = Catalog::from_value(&value).unwrap_or_else(|e| panic!("{value}: {e}"));
            assert_eq!(c.len(), 1, "{value}");
            let t = &c.tools()[0];
            assert_eq!(t.name, name, "{value}");
            assert_eq!(t.description, "Read a file");
            assert!(t.input_schema.is_object());
            assert_eq!(t.group.is_some(), name.contains("__"));
        }
    }

    #[test]
    fn rejects_what_is_not_a_catalog_in_one_line() {
        for text in [
            "not json",
            "42",
            r#"{"a": 1}"#,
            r#"[{"description": "no name"}]"#,
            r#"[{"name": "a"}, {"name": "a"}]"#,
            r#"[{"name": "a", "inputSchema": 3}]"#,
        ] {
            let e = Catalog::from_json(text).unwrap_err().to_string();
            assert!(!e.contains('\n') && !e.is_empty(), "{text}: {e}");
        }
        let e = Catalog::from_json(r#"[{"name": "a"}, {"name": "a"}]"#).unwrap_err();
        assert!(e.to_string().contains("\"a\""), "{e}");
    }

    #[test]
    fn qualified_names_are_provider_safe_and_unique() {
        assert_eq!(
            qualified_name("bing-cn", "web.search"),
            "bing-cn__web_search"
        );
        let long = "x".repeat(80);
        let a = qualified_name(&long, "one");
        let b = qualified_name(&long, "two");
        assert!(a.len() <= MAX_NAME_LEN && b.len() <= MAX_NAME_LEN);
        assert_ne!(a, b);
    }

    #[test]
    fn sizes_count_the_compact_definition() {
        let c = Catalog::new(vec![Tool::new("é", "", Value::Null)]).unwrap();
        let def = c.tools()[0].definition().to_string();
        assert_eq!(c.size(0).bytes, def.len());
        assert_eq!(c.size(0).chars, def.len() - 1, "é is two bytes, one char");
        assert_eq!(c.total_size(), c.size(0));
        let schema = json!({"type": "object", "properties": {"q": {"description": "检索 \"x\""}}});
        let c = c.with_tool(Tool::new("b", "two", schema)).unwrap();
        let def = c.tools()[1].definition().to_string();
        assert_eq!(c.size(1).bytes, def.len());
        assert_eq!(c.size(1).chars, def.chars().count());
        assert_eq!(c.position("b"), Some(1));
        assert!(c.with_tool(Tool::new("b", "again", Value::Null)).is_err());
    }
}
