//! `lode map`: an orientation for someone new to a repository, fitted to a
//! token budget — the top directories and what they hold, the entry
//! points, and the most central symbols of the call graph (most call sites
//! resolved to them, PageRank breaking ties; tests and fixtures left out).
//!
//! Tokens are estimated as characters / 4 (the usual rule for English and
//! code with BPE tokenizers); the estimate is reported with the map.

use std::collections::BTreeMap;

use lode_core::{Result, SymbolKind};
use lode_index::{Filter, Index, SymbolRow};
use serde::Serialize;

use crate::names::container_type;
use crate::rank::SymbolGraph;
use crate::resolve::Resolver;

/// What a map may hold.
#[derive(Clone, Debug)]
pub struct MapOptions {
    /// The budget, in estimated tokens.
    pub max_tokens: usize,
}

impl Default for MapOptions {
    fn default() -> Self {
        MapOptions { max_tokens: 1000 }
    }
}

/// One directory of the map.
#[derive(Clone, Debug, Serialize)]
pub struct DirSummary {
    /// Relative to the root.
    pub path: String,
    /// Indexed files under it.
    pub files: usize,
    /// Languages by file count, most first.
    pub languages: Vec<String>,
    /// Its most central symbols.
    pub key_symbols: Vec<String>,
}

/// A place execution starts.
#[derive(Clone, Debug, Serialize)]
pub struct EntryPoint {
    /// The file.
    pub path: String,
    /// Where it starts (1 for a file that is itself an entry point).
    pub line: u32,
    /// `main` (`Main`), or empty for a file that is itself one.
    pub name: String,
}

/// A central symbol.
#[derive(Clone, Debug, Serialize)]
pub struct Central {
    /// The symbol.
    pub symbol: SymbolRow,
    /// Its PageRank over the resolved call graph.
    pub score: f64,
    /// Resolved call sites that land on it.
    pub callers: usize,
}

/// The map, already cut to the budget.
#[derive(Clone, Debug, Serialize)]
pub struct RepoMap {
    /// Indexed files in all.
    pub files: usize,
    /// The top directories, largest first.
    pub dirs: Vec<DirSummary>,
    /// Where execution starts.
    pub entry_points: Vec<EntryPoint>,
    /// The most called symbols.
    pub central: Vec<Central>,
    /// The text rendering, within the budget.
    pub text: String,
    /// The text's size in tokens, by [`estimate_tokens`].
    pub estimated_tokens: usize,
    /// The budget it was fitted to.
    pub max_tokens: usize,
    /// Items left out to fit the budget.
    pub omitted: usize,
}

/// Tokens a text costs a model, estimated as characters / 4.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}

fn dir_key(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').collect();
    match parts.len() {
        0 | 1 => ".".to_string(),
        2 => parts[0].to_string(),
        _ => format!("{}/{}", parts[0], parts[1]),
    }
}

/// Tests, fixtures and benchmarks: not where a newcomer starts.
fn is_test_or_fixture(path: &str) -> bool {
    path.split('/').any(|d| {
        matches!(
            d,
            "test" | "tests" | "testdata" | "fixtures" | "__tests__" | "spec" | "benches"
        )
    }) || path.contains("_test.")
        || path.contains(".test.")
        || path
            .rsplit('/')
            .next()
            .is_some_and(|f| f.starts_with("test_"))
}

fn is_entry_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    let stem = name.split('.').next().unwrap_or(name);
    matches!(
        stem,
        "main" | "__main__" | "cli" | "app" | "server" | "manage"
    ) || (path.split('/').count() <= 2 && matches!(stem, "index" | "lib"))
}

/// Builds the map of `index`.
pub fn map(index: &Index, opts: &MapOptions) -> Result<RepoMap> {
    map_within(index, opts, |_| true)
}

/// The smallest budget [`map_within`] tries, in estimated tokens.
const MIN_FIT_TOKENS: usize = 50;

/// The map of `index` at the largest budget up to `opts.max_tokens` whose
/// result `fits` (say, a cap on its text and its JSON): fewer directories
/// and symbols, never an empty map. The graph is built once; only the
/// fitting is redone, each time at four fifths of the last budget.
pub fn map_within(
    index: &Index,
    opts: &MapOptions,
    fits: impl Fn(&RepoMap) -> bool,
) -> Result<RepoMap> {
    let parts = parts(index)?;
    let mut budget = opts.max_tokens;
    loop {
        let m = parts.fit(budget);
        if budget <= MIN_FIT_TOKENS || fits(&m) {
            return Ok(m);
        }
        budget = (budget * 4 / 5).max(MIN_FIT_TOKENS);
    }
}

/// What a map is fitted from.
struct Parts {
    files: usize,
    dirs: Vec<DirSummary>,
    entries: Vec<EntryPoint>,
    central: Vec<Central>,
}

impl Parts {
    fn fit(&self, max_tokens: usize) -> RepoMap {
        fit(
            self.files,
            self.dirs.clone(),
            self.entries.clone(),
            self.central.iter().take(MAX_CENTRAL).cloned().collect(),
            max_tokens,
        )
    }
}

/// The most central symbols a map considers.
const MAX_CENTRAL: usize = 200;

fn parts(index: &Index) -> Result<Parts> {
    let paths = index.indexed_paths(&Filter::default())?;
    let symbols = index.all_symbols()?;
    let graph = SymbolGraph::stored_or_build(index, || {
        SymbolGraph::build(&Resolver::preloaded_with(index, &symbols)?)
    })?;
    let ranks = graph.pagerank(None);

    let mut central: Vec<Central> = symbols
        .iter()
        .filter(|s| {
            matches!(
                s.kind.as_str(),
                "function" | "method" | "class" | "struct" | "interface" | "trait"
            )
        })
        .filter_map(|s| {
            ranks.get(&s.id).map(|&score| Central {
                symbol: s.clone(),
                score,
                callers: graph.in_degree(s.id),
            })
        })
        .filter(|c| c.callers > 0)
        .collect();
    // Most called first (name-only matches not counted); PageRank breaks ties.
    central.retain(|c| {
        !is_test_or_fixture(&c.symbol.path)
            && c.symbol.container.as_deref().map(container_type) != Some("tests")
    });
    central.sort_by(|a, b| {
        b.callers
            .cmp(&a.callers)
            .then(b.score.total_cmp(&a.score))
            .then(a.symbol.id.cmp(&b.symbol.id))
    });

    let mut dirs: BTreeMap<String, (usize, BTreeMap<String, usize>)> = BTreeMap::new();
    for p in &paths {
        let e = dirs.entry(dir_key(p)).or_default();
        e.0 += 1;
        let ext = p.rsplit_once('.').map(|(_, e)| e).unwrap_or("other");
        *e.1.entry(ext.to_string()).or_default() += 1;
    }
    let mut dir_list: Vec<DirSummary> = dirs
        .into_iter()
        .map(|(path, (files, exts))| {
            let mut exts: Vec<(String, usize)> = exts.into_iter().collect();
            exts.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            let key_symbols = central
                .iter()
                .filter(|c| dir_key(&c.symbol.path) == path)
                .take(3)
                .map(|c| qualified(&c.symbol))
                .collect();
            DirSummary {
                path,
                files,
                languages: exts.into_iter().take(3).map(|(e, _)| e).collect(),
                key_symbols,
            }
        })
        .collect();
    dir_list.sort_by(|a, b| b.files.cmp(&a.files).then(a.path.cmp(&b.path)));

    let mut entry_points: Vec<EntryPoint> = symbols
        .iter()
        .filter(|s| s.kind == SymbolKind::Function && matches!(s.name.as_str(), "main" | "Main"))
        .filter(|s| !is_test_or_fixture(&s.path))
        .map(|s| EntryPoint {
            path: s.path.clone(),
            line: s.start_line,
            name: s.name.clone(),
        })
        .collect();
    for p in paths
        .iter()
        .filter(|p| is_entry_file(p) && !is_test_or_fixture(p))
    {
        if !entry_points.iter().any(|e| &e.path == p) {
            entry_points.push(EntryPoint {
                path: p.clone(),
                line: 1,
                name: String::new(),
            });
        }
    }
    entry_points.sort_by(|a, b| {
        (a.path.split('/').count(), &a.path).cmp(&(b.path.split('/').count(), &b.path))
    });

    Ok(Parts {
        files: paths.len(),
        dirs: dir_list,
        entries: entry_points,
        central,
    })
}

fn qualified(s: &SymbolRow) -> String {
    match &s.container {
        Some(c) => format!("{}::{}", container_type(c), s.name),
        None => s.name.clone(),
    }
}

/// Text that grows line by line while the token budget allows.
struct Budget {
    text: String,
    used: usize,
    max: usize,
    omitted: usize,
}

impl Budget {
    /// Adds `line`, its repository names escaped, if it fits under `cap` (≤ the
    /// budget); counts it as omitted if not.
    fn push(&mut self, line: String, cap: usize) -> bool {
        let line = lode_core::shown::field(&line);
        let cost = estimate_tokens(&line) + 1;
        if self.used + cost > cap.min(self.max) {
            self.omitted += 1;
            return false;
        }
        self.used += cost;
        self.text.push_str(&line);
        self.text.push('\n');
        true
    }
}

/// Renders the sections in turn: directories may use the first third of the
/// budget, entry points up to two thirds, central symbols what is left.
fn fit(
    files: usize,
    dirs: Vec<DirSummary>,
    entries: Vec<EntryPoint>,
    central: Vec<Central>,
    max_tokens: usize,
) -> RepoMap {
    let head = format!("{files} files\n");
    let mut b = Budget {
        used: estimate_tokens(&head),
        text: head,
        max: max_tokens,
        omitted: 0,
    };
    let third = max_tokens / 3;
    let (mut kept_dirs, mut kept_entries, mut kept_central) = (Vec::new(), Vec::new(), Vec::new());
    b.push("Directories (files, languages, key symbols):".into(), third);
    for d in dirs {
        let symbols = if d.key_symbols.is_empty() {
            String::new()
        } else {
            format!("  {}", d.key_symbols.join(", "))
        };
        let line = format!(
            "  {}/  {} files  {}{symbols}",
            d.path,
            d.files,
            d.languages.join(",")
        );
        if b.push(line, third) {
            kept_dirs.push(d);
        }
    }
    if !entries.is_empty() {
        b.push("Entry points:".into(), 2 * third);
    }
    for e in entries {
        let line = if e.name.is_empty() {
            format!("  {}", e.path)
        } else {
            format!("  {}:{}  {}", e.path, e.line, e.name)
        };
        if b.push(line, 2 * third) {
            kept_entries.push(e);
        }
    }
    if !central.is_empty() {
        b.push("Central symbols (resolved callers):".into(), max_tokens);
    }
    for c in central.into_iter().take(MAX_CENTRAL) {
        let line = format!(
            "  {}:{}  {} {}  ({})",
            c.symbol.path,
            c.symbol.start_line,
            c.symbol.kind,
            qualified(&c.symbol),
            c.callers
        );
        if !b.push(line, max_tokens) {
            break;
        }
        kept_central.push(c);
    }
    RepoMap {
        files,
        estimated_tokens: estimate_tokens(&b.text),
        text: b.text,
        dirs: kept_dirs,
        entry_points: kept_entries,
        central: kept_central,
        max_tokens,
        omitted: b.omitted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_map_fits_its_budget() {
        let dirs = (0..50)
            .map(|i| DirSummary {
                path: format!("dir{i}"),
                files: 100 - i,
                languages: vec!["rs".into()],
                key_symbols: vec![format!("Thing{i}::run")],
            })
            .collect();
        let m = fit(5000, dirs, Vec::new(), Vec::new(), 120);
        assert!(m.estimated_tokens <= 120, "{} > 120", m.estimated_tokens);
        assert!(m.omitted > 0);
        assert!(m.text.contains("dir0/"));
    }
}
