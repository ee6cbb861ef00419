//! Tool search for agents: keep a large tool catalog out of the prompt, show
//! the model a small direct set plus `tool_search`, and let its searches
//! activate the tools it needs — from the next step on.
//!
//! The principal types, from the run down to the step:
//!
//! - [`Catalog`]: the **bound** tools of a run ([`Tool`]: canonical name,
//!   group, description, input schema). The capability ceiling: nothing
//!   outside it is ever shown or callable. Built from a list of tools, MCP
//!   `tools/list` results grouped by server ([`Catalog::from_mcp_servers`],
//!   names `server__tool`), or any file shape [`Catalog::from_json`] reads.
//! - [`Toolbox`]: what is fixed for the run: the catalog plus the search tool,
//!   the **direct** baseline (always visible, full schemas), the search
//!   [`ToolIndex`] derived once from the catalog, and the [`Limits`] of a
//!   search (results: default 5, clamped to a maximum; a schema-bytes
//!   budget). Its [`inventory`](Toolbox::inventory) lists the **deferred**
//!   tools by group — names only — for the model before any search. Share it
//!   in an `Arc` across turns and sessions.
//! - [`TurnScope`]: one turn's activation. A search adds its matches to the
//!   active set (repeats and parallel searches union; the set only grows);
//!   the turn's end — completed, failed or cancelled — drops it, and a new
//!   turn starts empty.
//! - [`Step`]: one provider request. [`TurnScope::begin_step`] freezes its
//!   visible set, `(direct ∪ active ∪ required) ∩ bound`; a search during step
//!   n shows its tools in step n + 1, and [`TurnScope::check_call`] rejects a
//!   call of a tool the step did not show, saying why. Visibility is not
//!   permission: the host's own checks still apply.
//! - [`TurnReport`]: the turn's telemetry — searches with ranked and
//!   activated names, repeats, schemas exposed but never called, the rank at
//!   which searches had found the tools finally called, time to the first
//!   successful call. Never call arguments, never query text.
//! - [`eval`]: retrieval evaluation — cases of (query, expected tools) from
//!   MetaTool's CSV or JSON lines, queries derived from a catalog's
//!   descriptions, recall@1/3/5/10 and MRR@10 (what `lode tools eval` runs).
//!
//! Ranking ([`ToolIndex`]): BM25F over the name split into words (weight 3),
//! the description (1) and parameter names, titles, descriptions and enum
//! values at any depth of the schema (0.5), with identifier splitting, a
//! light stemmer, English stop words and CJK bigrams; with an embedder
//! ([`IndexOptions::embedder`], e.g. `lode_embed::StaticModel::builtin()`),
//! the cosine similarity of the query's content words to each tool's text,
//! fused with BM25 by score ([`Fusion`]). A query that names a tool exactly
//! puts it first. A tool sharing no term with the query needs a cosine of at
//! least [`SEMANTIC_FLOOR`], so a query about nothing in the catalog activates
//! nothing (and says so) rather than the least unrelated tools. The model sees
//! only `{"activated": [...]}` (with a `note` when nothing matched).
//!
//! # A runtime loop
//!
//! ```
//! use std::sync::Arc;
//! use lode_tools::{Catalog, Toolbox, TurnEnd, TurnScope};
//! use serde_json::json;
//!
//! // Two MCP servers' tools/list results: the bound catalog of this run.
//! let catalog = Catalog::from_mcp_servers([
//!     ("fs", json!({"tools": [
//!         {"name": "read_file", "description": "Read a file from disk",
//!          "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}},
//!         {"name": "write_file", "description": "Write text to a file",
//!          "inputSchema": {"type": "object", "properties": {"path": {}, "content": {}}}}]})),
//!     ("weather", json!({"tools": [
//!         {"name": "forecast", "description": "Weather forecast for a city",
//!          "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}}]})),
//! ])?;
//! let toolbox = Arc::new(Toolbox::builder(catalog).direct(["fs__read_file"]).build()?);
//! // Before any search the model sees the inventory, not the schemas.
//! assert_eq!(toolbox.inventory().render(), "fs: fs__write_file\nweather: weather__forecast\n");
//!
//! let mut turn = TurnScope::new(toolbox.clone());
//! // Step 1: the direct tools (tool_search first).
//! let step = turn.begin_step();
//! let names: Vec<&str> = step.tools().map(|t| t.name.as_str()).collect();
//! assert_eq!(names, ["tool_search", "fs__read_file"]);
//! // The model searches…
//! let result = turn.search_call(&step, &json!({"query": "forecast for Paris tomorrow"}))?;
//! assert_eq!(result, json!({"activated": ["weather__forecast"]}));
//! // …and, in the same step, calls what it found: refused, the step did not show it.
//! let refused = turn.check_call(&step, "weather__forecast").unwrap_err();
//! assert!(refused.to_string().contains("next request"));
//!
//! // Step 2 shows the activated tool with its full schema.
//! let step = turn.begin_step();
//! assert!(step.is_visible("weather__forecast"));
//! let tool = turn.check_call(&step, "weather__forecast")?;
//! assert_eq!(tool.input_schema["properties"]["city"]["type"], "string");
//! // …the host runs it, with its own permission checks, and reports the outcome.
//! turn.record_result(&step, "weather__forecast", true);
//!
//! let report = turn.finish(TurnEnd::Completed);
//! assert_eq!(report.recall_at(1), Some(1.0));
//! // fs__read_file (direct) was sent in both steps and never called.
//! assert_eq!(report.exposed_never_called.tools, 1);
//! // A new turn starts with nothing active.
//! assert_eq!(TurnScope::new(toolbox).active().count(), 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Why the embedder is an option, not a feature
//!
//! [`IndexOptions::embedder`] is an `Option<Arc<dyn Embedder>>`: a runtime
//! without it ranks by BM25, and one binary can compare both (as `lode tools
//! eval` does). `lode-embed` is a light dependency (no native code; the
//! built-in model's 7.6 MB are linked only when `StaticModel::builtin` is
//! called), so a cargo feature would buy little and split the test matrix.

#![deny(missing_docs)]

mod bm25;
mod catalog;
mod error;
pub mod eval;
mod fields;
mod index;
mod telemetry;
mod text;
mod toolbox;
mod turn;

pub use bm25::Bm25Params;
pub use catalog::{Catalog, DefinitionSize, MAX_NAME_LEN, Tool, qualified_name};
pub use error::{Error, Result};
pub use index::{Fusion, IndexOptions, Ranked, Ranking, SEMANTIC_FLOOR, ToolIndex};
pub use lode_embed::{Embedder, StaticModel};
pub use telemetry::{
    CallCounts, CalledTool, Exposure, FirstCall, SearchRecord, TurnEnd, TurnReport,
};
pub use toolbox::{
    Inventory, InventoryGroup, Limits, NO_MATCH_NOTE, SEARCH_TOOL, SearchOutcome, Toolbox,
    ToolboxBuilder, model_result, parse_search_arguments,
};
pub use turn::{CallError, Step, TurnScope};
