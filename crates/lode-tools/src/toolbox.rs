//! The per-run part of tool search: the bound catalog with the search tool,
//! the direct baseline, the inventory of deferred tools, and stateless search.

use serde::Serialize;
use serde_json::{Value, json};

use crate::catalog::{Catalog, DefinitionSize, Tool};
use crate::index::{IndexOptions, Ranked, ToolIndex};
use crate::{Error, Result};

/// The search tool's default name.
pub const SEARCH_TOOL: &str = "tool_search";

/// Bounds on one search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// Results when the model gives no `limit`.
    pub default_results: usize,
    /// The most a model may ask for; a larger `limit` is clamped.
    pub max_results: usize,
    /// The most schema bytes one search may activate: matches whose definition
    /// does not fit in what is left are skipped (and reported), smaller ones
    /// further down still fit.
    pub schema_budget_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            default_results: 5,
            max_results: 10,
            // Five tools of the 90th-percentile LiveMCPBench size (1.4 KB) fit twice over.
            schema_budget_bytes: 16 * 1024,
        }
    }
}

/// Builds a [`Toolbox`].
pub struct ToolboxBuilder {
    catalog: Catalog,
    direct: Vec<String>,
    limits: Limits,
    index: IndexOptions,
    search_tool_name: String,
}

impl ToolboxBuilder {
    /// Tools always visible with their full schemas (besides the search tool).
    pub fn direct<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.direct = names.into_iter().map(Into::into).collect();
        self
    }

    /// Bounds on one search (default [`Limits::default`]: 5 results, at most 10,
    /// 16 KiB of schemas); [`build`](ToolboxBuilder::build) checks them.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// How the search index is built (embedder, BM25 weights, fusion).
    pub fn index_options(mut self, options: IndexOptions) -> Self {
        self.index = options;
        self
    }

    /// Names the search tool (default [`SEARCH_TOOL`]), when the catalog already has a tool so named.
    pub fn search_tool_name(mut self, name: impl Into<String>) -> Self {
        self.search_tool_name = name.into();
        self
    }

    /// Fails when a direct tool is not in the catalog, a limit is zero, or the
    /// search tool's name is taken.
    pub fn build(self) -> Result<Toolbox> {
        let l = self.limits;
        if l.default_results == 0 || l.max_results < l.default_results || l.schema_budget_bytes == 0
        {
            return Err(Error::BadConfig(format!(
                "limits must satisfy 0 < default_results ≤ max_results and schema_budget_bytes > 0 (got {l:?})"
            )));
        }
        let index = ToolIndex::build(&self.catalog, self.index);
        let search_tool = self.catalog.len();
        let search = search_tool_definition(&self.search_tool_name, &l);
        if self.catalog.get(&search.name).is_some() {
            return Err(Error::BadConfig(format!(
                "the catalog has a tool named {:?}, the search tool's name: choose another search tool name",
                search.name
            )));
        }
        let catalog = self.catalog.with_tool(search)?;
        let mut direct = vec![search_tool];
        for name in &self.direct {
            let i = catalog.position(name).ok_or_else(|| {
                Error::BadConfig(format!("direct tool {name:?} is not in the catalog"))
            })?;
            if !direct.contains(&i) {
                direct.push(i);
            }
        }
        let mut is_direct = vec![false; catalog.len()];
        direct.iter().for_each(|&i| is_direct[i] = true);
        Ok(Toolbox {
            catalog,
            index,
            direct,
            is_direct,
            search_tool,
            limits: l,
        })
    }
}

/// Everything about tool search that is fixed for a run: the bound catalog
/// (the host's tools plus the search tool), the direct baseline, the search
/// index and the limits. Share it (`Arc`) across turns and sessions.
#[derive(Debug)]
pub struct Toolbox {
    catalog: Catalog,
    index: ToolIndex,
    /// Direct tools in the order shown: the search tool, then the host's.
    direct: Vec<usize>,
    is_direct: Vec<bool>,
    search_tool: usize,
    limits: Limits,
}

impl Toolbox {
    /// Starts a toolbox over `catalog`: no direct tool but the search tool,
    /// default limits, a BM25-only index, the search tool named [`SEARCH_TOOL`].
    pub fn builder(catalog: Catalog) -> ToolboxBuilder {
        ToolboxBuilder {
            catalog,
            direct: Vec::new(),
            limits: Limits::default(),
            index: IndexOptions::default(),
            search_tool_name: SEARCH_TOOL.to_string(),
        }
    }

    /// The bound catalog: the host's tools, then the search tool.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The search index of the host's tools (the search tool is not in it).
    pub fn index(&self) -> &ToolIndex {
        &self.index
    }

    /// The bounds every search of this toolbox applies.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The search tool's definition, as the model sees it.
    pub fn search_tool(&self) -> &Tool {
        &self.catalog.tools()[self.search_tool]
    }

    /// The search tool's index in [`catalog`](Toolbox::catalog): the last.
    pub fn search_tool_index(&self) -> usize {
        self.search_tool
    }

    /// Whether `name` is the search tool's name (not always [`SEARCH_TOOL`]).
    pub fn is_search_tool(&self, name: &str) -> bool {
        self.search_tool().name == name
    }

    /// Catalog indexes of the direct tools, search tool first.
    pub fn direct_indexes(&self) -> &[usize] {
        &self.direct
    }

    /// Whether the tool at catalog `index` is always visible (a direct tool or the
    /// search tool). Panics when `index` is out of range.
    pub fn is_direct(&self, index: usize) -> bool {
        self.is_direct[index]
    }

    /// The tools that only a search makes visible.
    pub fn deferred(&self) -> impl Iterator<Item = &Tool> {
        self.catalog
            .tools()
            .iter()
            .enumerate()
            .filter(|(i, _)| !self.is_direct[*i])
            .map(|(_, t)| t)
    }

    /// Group and canonical names of the deferred tools: what the model gets
    /// before any search, instead of their schemas.
    pub fn inventory(&self) -> Inventory {
        let mut groups: Vec<InventoryGroup> = Vec::new();
        for t in self.deferred() {
            match groups.iter_mut().find(|g| g.group == t.group) {
                Some(g) => g.tools.push(t.name.clone()),
                None => groups.push(InventoryGroup {
                    group: t.group.clone(),
                    tools: vec![t.name.clone()],
                }),
            }
        }
        Inventory { groups }
    }

    /// Ranks the deferred tools for `query` and picks the ones a search
    /// activates: at most `limit` (default and clamp from [`Limits`]) within the
    /// schema budget. Stateless: the same query always gives the same outcome.
    pub fn search(&self, query: &str, limit: Option<usize>) -> SearchOutcome {
        let limit = limit
            .unwrap_or(self.limits.default_results)
            .clamp(1, self.limits.max_results);
        // Ranked deeper than the limit so telemetry can tell how far off a miss was.
        let depth = limit.max(10);
        let ranking = self.index.rank(query, |i| !self.is_direct[i], depth);
        let mut budget = self.limits.schema_budget_bytes;
        let mut activated = Vec::new();
        let mut over_budget = Vec::new();
        for hit in ranking.hits.iter().take(limit) {
            let name = &self.catalog.tools()[hit.tool].name;
            let bytes = self.catalog.size(hit.tool).bytes;
            if bytes <= budget {
                budget -= bytes;
                activated.push(hit.tool);
            } else {
                over_budget.push(name.clone());
            }
        }
        SearchOutcome {
            ranked: ranking.hits,
            activated,
            over_budget,
            limit,
            note: ranking.note,
        }
    }

    /// The names of the ranked tools, best first.
    pub fn ranked_names<'a>(
        &'a self,
        outcome: &'a SearchOutcome,
    ) -> impl Iterator<Item = &'a str> + 'a {
        outcome
            .ranked
            .iter()
            .map(|r| self.catalog.tools()[r.tool].name.as_str())
    }

    /// The names of catalog indexes.
    pub fn names<'a>(&'a self, indexes: &'a [usize]) -> impl Iterator<Item = &'a str> + 'a {
        indexes
            .iter()
            .map(|&i| self.catalog.tools()[i].name.as_str())
    }

    /// Total definition size of catalog indexes.
    pub fn size_of(&self, indexes: &[usize]) -> DefinitionSize {
        indexes.iter().map(|&i| self.catalog.size(i)).sum()
    }
}

/// What one search found and activated, by catalog index.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchOutcome {
    /// The ranking, best first, to depth `max(limit, 10)`.
    pub ranked: Vec<Ranked>,
    /// The tools this search activates: the top of `ranked` within the limit and budget.
    pub activated: Vec<usize>,
    /// Names within the limit left out because their schemas did not fit the budget.
    pub over_budget: Vec<String>,
    /// The limit applied: the one asked for or [`Limits::default_results`],
    /// clamped to `1..=max_results`.
    pub limit: usize,
    /// Set when the embedder failed and BM25 ranked alone.
    pub note: Option<String>,
}

/// What the model reads when a search matched no tool.
pub const NO_MATCH_NOTE: &str = "no tool matches this query; search again with other words";

/// The model-facing result of a search: the names activated, never schemas.
/// `{"activated": ["a", "b"]}`, plus `"over_budget": [...]` when matches were left
/// out, or `"note"` ([`NO_MATCH_NOTE`]) when nothing matched.
pub fn model_result(toolbox: &Toolbox, outcome: &SearchOutcome) -> Value {
    let activated: Vec<&str> = toolbox.names(&outcome.activated).collect();
    let mut v = json!({ "activated": activated });
    if !outcome.over_budget.is_empty() {
        v["over_budget"] = json!(outcome.over_budget);
    } else if outcome.ranked.is_empty() {
        v["note"] = json!(NO_MATCH_NOTE);
    }
    v
}

/// Deferred tools by group, in catalog order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Inventory {
    /// One entry per group, in the order of its first tool; tools without a
    /// group share one entry.
    pub groups: Vec<InventoryGroup>,
}

/// The deferred tools of one group, in catalog order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct InventoryGroup {
    /// `None` for tools without a group.
    pub group: Option<String>,
    /// Canonical names.
    pub tools: Vec<String>,
}

impl Inventory {
    /// One line per group: `group: name, name`; ungrouped tools on a line of their own.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for g in &self.groups {
            if let Some(name) = &g.group {
                out.push_str(name);
                out.push_str(": ");
            }
            out.push_str(&g.tools.join(", "));
            out.push('\n');
        }
        out
    }

    /// Deferred tools listed, over all groups.
    pub fn tool_count(&self) -> usize {
        self.groups.iter().map(|g| g.tools.len()).sum()
    }
}

/// The search tool's definition.
fn search_tool_definition(name: &str, limits: &Limits) -> Tool {
    Tool::new(
        name,
        "Find tools by what they do (or by name) among the deferred tools listed in the \
         inventory. The matches become callable from the next step, with full schemas; \
         the result lists their names.",
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "What the tool should do, or its name."},
                "limit": {"type": "integer", "minimum": 1, "maximum": limits.max_results,
                          "description": format!("How many tools to activate (default {}).", limits.default_results)}
            },
            "required": ["query"]
        }),
    )
}

/// Reads the arguments of a search-tool call: `query` (non-empty string) and
/// optional `limit` (positive integer).
pub fn parse_search_arguments(
    args: &Value,
) -> std::result::Result<(String, Option<usize>), String> {
    let query = args
        .get("query")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or("\"query\" must be a non-empty string")?;
    let limit = match args.get("limit") {
        None | Some(Value::Null) => None,
        Some(v) => Some(
            v.as_u64()
                .filter(|&n| n >= 1)
                .ok_or("\"limit\" must be a positive integer")? as usize,
        ),
    };
    Ok((query.to_string(), limit))
}
