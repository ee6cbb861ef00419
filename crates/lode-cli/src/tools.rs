//! `lode tools search|eval`: tool search over a catalog file (lode-tools).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::{Subcommand, ValueEnum};
use lode_core::{Error, Result};
use lode_search::render;
use lode_tools::eval::{self, Case, EvalReport};
use lode_tools::{
    Catalog, DefinitionSize, Embedder, Fusion, IndexOptions, Limits, SEMANTIC_FLOOR, StaticModel,
    Toolbox,
};
use serde::Serialize;

use crate::cli::Common;

#[derive(Subcommand, Debug, Clone)]
pub enum ToolsCommand {
    /// Rank the tools of a catalog for QUERY: the ones a `tool_search` call would activate.
    Search {
        /// The task or the words to find tools for; any text, a leading `-` too.
        #[arg(allow_hyphen_values = true)]
        query: String,
        /// The catalog: a JSON list of tools, an MCP tools/list result, a map of
        /// server to tools/list result, the LiveMCPBench list, or {name: description}.
        #[arg(long, value_name = "FILE")]
        catalog: PathBuf,
        /// Number of tools.
        #[arg(long, short = 'k', default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
        limit: u32,
        /// The most schema bytes the matches may add; those that do not fit are marked.
        #[arg(long, value_name = "BYTES", default_value_t = Limits::default().schema_budget_bytes)]
        schema_budget: usize,
        /// BM25 only (no embeddings).
        #[arg(long)]
        lexical: bool,
        /// The least cosine similarity that ranks a tool sharing no word with the query
        /// (0: every tool the embedder finds).
        #[arg(long, value_name = "COS", default_value_t = SEMANTIC_FLOOR)]
        semantic_floor: f32,
        #[command(flatten)]
        common: Common,
    },
    /// Retrieval quality on (query, expected tools) cases: recall@1/3/5/10, MRR@10,
    /// search latency, and the context a search setup saves over binding every tool.
    Eval {
        /// The catalog (as for `lode tools search`).
        #[arg(long, value_name = "FILE")]
        catalog: PathBuf,
        /// Cases: CSV `Query,Tool`, JSON lines {query, expected}, or a JSON list. Without
        /// it, one query per tool is derived from its description, name words removed.
        #[arg(long, value_name = "FILE")]
        cases: Option<PathBuf>,
        /// BM25 only (no embeddings).
        #[arg(long)]
        lexical: bool,
        /// How BM25 and embeddings are combined.
        #[arg(long, value_enum, default_value_t = FusionKind::Score)]
        fusion: FusionKind,
        /// Weight of the embedding signal in the fusion (default: 0.7 for score, 0.5 for rrf).
        #[arg(long, value_name = "W")]
        semantic_weight: Option<f32>,
        /// The least cosine similarity that ranks a tool sharing no word with the query
        /// (0: every tool the embedder finds).
        #[arg(long, value_name = "COS", default_value_t = SEMANTIC_FLOOR)]
        semantic_floor: f32,
        /// Print every query with no expected tool at rank 1.
        #[arg(long)]
        misses: bool,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum FusionKind {
    /// Weighted sum of max-normalised BM25 and cosine similarity.
    Score,
    /// Weighted reciprocal-rank fusion (k = 60).
    Rrf,
}

impl ToolsCommand {
    pub fn common(&self) -> &Common {
        match self {
            ToolsCommand::Search { common, .. } | ToolsCommand::Eval { common, .. } => common,
        }
    }
}

pub fn run(cmd: ToolsCommand) -> Result<u8> {
    match cmd {
        ToolsCommand::Search {
            query,
            catalog,
            limit,
            schema_budget,
            lexical,
            semantic_floor,
            common,
        } => search(
            &common,
            &query,
            &catalog,
            limit as usize,
            schema_budget,
            Ranking {
                lexical,
                fusion: Fusion::default(),
                semantic_floor,
            },
        ),
        ToolsCommand::Eval {
            catalog,
            cases,
            lexical,
            fusion,
            semantic_weight,
            semantic_floor,
            misses,
            common,
        } => {
            let fusion = match fusion {
                FusionKind::Rrf => Fusion::Rrf {
                    k: 60.0,
                    semantic_weight: semantic_weight.unwrap_or(0.5),
                },
                FusionKind::Score => Fusion::Score {
                    semantic_weight: semantic_weight.unwrap_or(0.7),
                },
            };
            let ranking = Ranking {
                lexical,
                fusion,
                semantic_floor,
            };
            evaluate(&common, &catalog, cases.as_deref(), ranking, misses)
        }
    }
}

/// Notes: to stderr in text mode, into the JSON envelope otherwise.
struct Notes {
    json: bool,
    notes: Vec<String>,
}

impl Notes {
    fn new(common: &Common) -> Notes {
        Notes {
            json: common.json,
            notes: Vec::new(),
        }
    }

    fn note(&mut self, msg: impl Into<String>) {
        let msg = msg.into();
        if self.json {
            self.notes.push(msg);
        } else {
            eprintln!("lode: {msg}");
        }
    }

    fn emit<T: Serialize>(self, command: &str, body: &T, text: impl FnOnce() -> String) {
        let out = if self.json {
            format!("{}\n", render::json(command, body, self.notes))
        } else {
            text()
        };
        use std::io::Write;
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(out.as_bytes());
        let _ = stdout.flush();
    }
}

fn read(path: &Path) -> Result<String> {
    if !path.exists() {
        return Err(Error::NoSuchPath(path.to_path_buf()));
    }
    if !path.is_file() {
        return Err(Error::NotAFile(path.to_path_buf()));
    }
    std::fs::read_to_string(path).map_err(|e| Error::io(path, e))
}

fn load_catalog(path: &Path) -> Result<Catalog> {
    let catalog = Catalog::from_json(&read(path)?)
        .map_err(|e| Error::BadQuery(format!("{}: {e}", path.display())))?;
    if catalog.is_empty() {
        return Err(Error::BadQuery(format!(
            "{}: bad catalog: no tools",
            path.display()
        )));
    }
    Ok(catalog)
}

/// The embedder for hybrid ranking: `--model DIR` if usable, else the built-in model.
fn embedder(common: &Common, notes: &mut Notes) -> Arc<dyn Embedder> {
    if let Some(dir) = &common.model {
        match StaticModel::from_dir(dir) {
            Ok(m) => return Arc::new(m),
            Err(e) => notes.note(format!("model not used ({e}); using the built-in model")),
        }
    }
    Arc::new(StaticModel::builtin())
}

/// How a command's searches rank, from its options.
#[derive(Clone, Copy)]
struct Ranking {
    lexical: bool,
    fusion: Fusion,
    semantic_floor: f32,
}

fn toolbox(
    common: &Common,
    catalog: Catalog,
    limits: Limits,
    ranking: Ranking,
    notes: &mut Notes,
) -> Result<Toolbox> {
    let embedder = (!ranking.lexical).then(|| embedder(common, notes));
    let toolbox = Toolbox::builder(catalog)
        .limits(limits)
        .index_options(IndexOptions {
            embedder,
            fusion: ranking.fusion,
            semantic_floor: ranking.semantic_floor,
            ..IndexOptions::default()
        })
        .build()
        .map_err(|e| Error::BadQuery(e.to_string()))?;
    if let Some(n) = toolbox.index().note() {
        notes.note(n);
    }
    Ok(toolbox)
}

#[derive(Serialize)]
struct CatalogStats {
    tools: usize,
    groups: usize,
}

fn catalog_stats(catalog: &Catalog) -> CatalogStats {
    let mut groups: Vec<&str> = catalog
        .tools()
        .iter()
        .filter_map(|t| t.group.as_deref())
        .collect();
    groups.sort_unstable();
    groups.dedup();
    CatalogStats {
        tools: catalog.len(),
        groups: groups.len(),
    }
}

#[derive(Serialize)]
struct SearchHit<'a> {
    name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    group: Option<&'a str>,
    score: f32,
    exact: bool,
    schema_bytes: usize,
    activated: bool,
    description: &'a str,
}

#[derive(Serialize)]
struct SearchBody<'a> {
    query: &'a str,
    mode: &'static str,
    catalog: CatalogStats,
    hits: Vec<SearchHit<'a>>,
    activated: Vec<&'a str>,
}

fn search(
    common: &Common,
    query: &str,
    catalog: &Path,
    limit: usize,
    schema_budget: usize,
    ranking: Ranking,
) -> Result<u8> {
    if query.trim().is_empty() {
        return Err(Error::BadQuery("empty query".into()));
    }
    let mut notes = Notes::new(common);
    let catalog = load_catalog(catalog)?;
    let stats = catalog_stats(&catalog);
    let limits = Limits {
        default_results: limit,
        max_results: limit,
        schema_budget_bytes: schema_budget.max(1),
    };
    let toolbox = toolbox(common, catalog, limits, ranking, &mut notes)?;
    let outcome = toolbox.search(query, None);
    if let Some(n) = &outcome.note {
        notes.note(n.clone());
    }
    let tools = toolbox.catalog().tools();
    let hits: Vec<SearchHit> = outcome
        .ranked
        .iter()
        .take(limit)
        .map(|r| (r.tool, r))
        .map(|(i, r)| SearchHit {
            name: &tools[i].name,
            group: tools[i].group.as_deref(),
            score: r.score,
            exact: r.exact,
            schema_bytes: toolbox.catalog().size(i).bytes,
            activated: outcome.activated.contains(&i),
            description: &tools[i].description,
        })
        .collect();
    let body = SearchBody {
        query,
        mode: if toolbox.index().is_hybrid() {
            "hybrid"
        } else {
            "lexical"
        },
        catalog: stats,
        activated: toolbox.names(&outcome.activated).collect(),
        hits,
    };
    let status = if body.hits.is_empty() { 1 } else { 0 };
    notes.emit("tools search", &body, || search_text(&body));
    Ok(status)
}

fn search_text(body: &SearchBody) -> String {
    let mut out = String::new();
    for h in &body.hits {
        out.push_str(&format!("{}  {:.4}  {} B", h.name, h.score, h.schema_bytes));
        if !h.activated {
            out.push_str("  (over the schema budget: not activated)");
        }
        out.push('\n');
        let first = h
            .description
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        out.push_str(&format!("    {}\n", clip(first.trim(), 160)));
    }
    if body.hits.is_empty() {
        out.push_str("no tool matches\n");
    }
    out
}

fn clip(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[derive(Serialize)]
struct Context {
    /// Every tool's definition, as when all are bound and sent.
    all_tools: DefinitionSize,
    /// The direct baseline: the search tool only (a host adds its own).
    direct: DefinitionSize,
    /// Characters of the rendered inventory.
    inventory_chars: usize,
    /// Mean size of what one search activates at the default limit.
    mean_activated: DefinitionSize,
    /// `direct + inventory + mean activated`, in characters.
    with_search_chars: usize,
    /// `1 − with_search / all_tools`, in characters.
    saved: f64,
}

#[derive(Serialize)]
struct EvalBody<'a> {
    catalog: CatalogStats,
    /// "file" or "derived" (queries from descriptions).
    cases_from: &'static str,
    mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    fusion: Option<Fusion>,
    #[serde(skip_serializing_if = "Option::is_none")]
    semantic_floor: Option<f32>,
    #[serde(flatten)]
    report: &'a EvalReport,
    context: Context,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    misses: Vec<&'a eval::CaseResult>,
}

fn evaluate(
    common: &Common,
    catalog_path: &Path,
    cases_path: Option<&Path>,
    ranking: Ranking,
    show_misses: bool,
) -> Result<u8> {
    let mut notes = Notes::new(common);
    let catalog = load_catalog(catalog_path)?;
    let stats = catalog_stats(&catalog);
    let cases: Vec<Case> = match cases_path {
        Some(p) => {
            let cases = eval::parse_cases(&read(p)?)
                .map_err(|e| Error::BadQuery(format!("{}: {e}", p.display())))?;
            eval::check_cases(&catalog, &cases)
                .map_err(|e| Error::BadQuery(format!("{}: {e}", p.display())))?;
            cases
        }
        None => {
            let (cases, skipped) = eval::derive_cases(&catalog);
            notes.note(format!(
                "{} queries derived from tool descriptions ({skipped} tools skipped: fewer than three words left)",
                cases.len()
            ));
            if cases.is_empty() {
                return Err(Error::BadQuery(format!(
                    "{}: no tool description to derive a query from; give --cases",
                    catalog_path.display()
                )));
            }
            cases
        }
    };
    let toolbox = toolbox(common, catalog, Limits::default(), ranking, &mut notes)?;
    let report = eval::run(&toolbox, &cases);
    let host_tools = toolbox.catalog().len() - 1;
    let all_tools: DefinitionSize = (0..host_tools).map(|i| toolbox.catalog().size(i)).sum();
    let direct = toolbox.size_of(toolbox.direct_indexes());
    let inventory_chars = toolbox.inventory().render().chars().count();
    let with_search_chars = direct.chars + inventory_chars + report.mean_activated.chars;
    let context = Context {
        all_tools,
        direct,
        inventory_chars,
        mean_activated: report.mean_activated,
        with_search_chars,
        saved: 1.0 - with_search_chars as f64 / all_tools.chars.max(1) as f64,
    };
    let hybrid = toolbox.index().is_hybrid();
    let body = EvalBody {
        catalog: stats,
        cases_from: if cases_path.is_some() {
            "file"
        } else {
            "derived"
        },
        mode: if hybrid { "hybrid" } else { "lexical" },
        fusion: hybrid.then_some(ranking.fusion),
        semantic_floor: hybrid.then_some(ranking.semantic_floor),
        report: &report,
        context,
        misses: if show_misses {
            report.misses().collect()
        } else {
            Vec::new()
        },
    };
    notes.emit("tools eval", &body, || eval_text(&body));
    Ok(0)
}

fn eval_text(b: &EvalBody) -> String {
    let r = b.report;
    let mut out = String::new();
    for m in &b.misses {
        let ranks: Vec<String> = m
            .ranks
            .iter()
            .map(|r| r.map_or("-".into(), |r| r.to_string()))
            .collect();
        out.push_str(&format!(
            "miss  {}\n      expected {} (rank {})  got {}\n",
            clip(&m.query, 120),
            m.expected.join(", "),
            ranks.join(", "),
            m.top.join(", ")
        ));
    }
    let fusion = match b.fusion {
        Some(Fusion::Rrf { k, semantic_weight }) => format!(" (rrf k={k} w={semantic_weight})"),
        Some(Fusion::Score { semantic_weight }) => format!(" (score w={semantic_weight})"),
        None => String::new(),
    };
    let fusion = match b.semantic_floor {
        Some(floor) => format!("{fusion}, floor {floor}"),
        None => fusion,
    };
    out.push_str(&format!(
        "{} tools in {} groups, {} cases ({}), {}{fusion}\n",
        b.catalog.tools, b.catalog.groups, r.cases, b.cases_from, b.mode
    ));
    let recall: Vec<String> = r
        .recall
        .iter()
        .map(|(k, v)| format!("R@{k} {v:.3}"))
        .collect();
    out.push_str(&format!(
        "{}  MRR@10 {:.3}\n",
        recall.join("  "),
        r.mrr_at_10
    ));
    out.push_str(&format!(
        "search latency p50 {:.1} µs, p95 {:.1} µs\n",
        r.latency_us_p50, r.latency_us_p95
    ));
    let c = &b.context;
    out.push_str(&format!(
        "context: all tools {} chars; search tool {} + inventory {} + mean activated {} = {} chars ({:.1}% saved)\n",
        c.all_tools.chars,
        c.direct.chars,
        c.inventory_chars,
        c.mean_activated.chars,
        c.with_search_chars,
        c.saved * 100.0
    ));
    out
}
