//! The graph as the walk sees it: seeds from search hits, one-hop
//! neighbours, and caches of both keyed by the index state.
//!
//! An [`Index`] sees one committed state, named here by its database file
//! and generation ([`StateKey`]). Everything cached is keyed by it, so a
//! long-lived process (the MCP server) reuses work across calls and never
//! mixes two states: a new generation simply misses.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use lode_core::Result;
use lode_graph::{Resolution, Resolver, SymbolGraph};
use lode_index::{Index, SymbolRow};
use lode_search::SearchHit;
use serde::Serialize;

/// One committed state of one index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StateKey {
    /// The index database file.
    pub database: PathBuf,
    /// The database's generation, one more per committed build (0 when unset).
    pub generation: u64,
}

impl StateKey {
    /// The state `index` sees.
    pub fn of(index: &Index) -> Result<StateKey> {
        Ok(StateKey {
            database: index.store().path().to_path_buf(),
            generation: index
                .store()
                .meta(lode_index::Meta::Generation)?
                .and_then(|g| g.parse().ok())
                .unwrap_or(0),
        })
    }
}

/// How a neighbour is linked to the symbol it was found from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Relation {
    /// The symbol calls the neighbour.
    Callee,
    /// The neighbour calls the symbol.
    Caller,
}

/// A symbol one call away.
#[derive(Clone, Debug)]
pub struct Neighbour {
    /// The symbol one call away.
    pub symbol: SymbolRow,
    /// Whether it is called by the symbol or calls it.
    pub relation: Relation,
    /// The most certain resolution among the call sites linking the two.
    pub resolution: Resolution,
}

/// Callers and callees of `sym`, each neighbour once per relation, in
/// (relation, path, line) order. Self-calls are left out (recursion adds
/// nothing to show); a caller whose row is gone (a stale call row) is skipped.
pub fn neighbours(resolver: &Resolver, sym: &SymbolRow) -> Result<Vec<Neighbour>> {
    let mut found: BTreeMap<(Relation, String, u32, i64), Neighbour> = BTreeMap::new();
    let mut add = |s: SymbolRow, relation: Relation, resolution: Resolution| {
        if s.id == sym.id {
            return;
        }
        let key = (relation, s.path.clone(), s.start_line, s.id);
        found
            .entry(key)
            .and_modify(|n| n.resolution = n.resolution.min(resolution))
            .or_insert(Neighbour {
                symbol: s,
                relation,
                resolution,
            });
    };
    // Crowded name matches are never walked: they would lead anywhere.
    for e in resolver.callees(sym)?.edges {
        add(e.target, Relation::Callee, e.resolution);
    }
    for e in resolver.callers(sym)?.edges {
        let Some(id) = e.site.caller else { continue };
        if let Some(caller) = resolver.symbol(id)? {
            add(caller, Relation::Caller, e.resolution);
        }
    }
    Ok(found.into_values().collect())
}

/// The symbol a search hit belongs to: the innermost symbol of the hit's
/// file with the hit's name and kind whose span overlaps the hit. `None`
/// for prose, headers, line windows, and hits whose row is gone.
pub fn enclosing_symbol(index: &Index, hit: &SearchHit) -> Result<Option<SymbolRow>> {
    // Prose and data have no symbols to walk from.
    if !hit.language.is_code() {
        return Ok(None);
    }
    let Some(name) = &hit.symbol else {
        return Ok(None);
    };
    Ok(index
        .file_symbols(&hit.path)?
        .into_iter()
        .filter(|s| &s.name == name && s.kind.as_str() == hit.kind)
        .filter(|s| s.start_line <= hit.end_line && hit.start_line <= s.end_line)
        .min_by_key(|s| (s.end_line - s.start_line, s.start_line)))
}

/// Index states kept (a server with several repositories keeps one each).
const MAX_STATES: usize = 4;
/// Cap on entries per state (a list is small; this bounds a long-lived server).
const MAX_ENTRIES: usize = 50_000;

/// What is cached for one index state.
#[derive(Default)]
struct PerState {
    lists: HashMap<i64, Arc<Vec<Neighbour>>>,
    refs: HashMap<String, usize>,
    graph: Option<Arc<SymbolGraph>>,
}

/// Neighbour lists, reference counts and whole graphs, by index state.
/// `Send + Sync`: one value serves every call of a process. Work is done
/// outside the lock; two calls racing on the same entry compute it twice.
#[derive(Default)]
pub struct GraphCache {
    states: Mutex<Vec<(StateKey, PerState)>>,
}

impl GraphCache {
    /// An empty cache.
    pub fn new() -> GraphCache {
        GraphCache::default()
    }

    /// Runs `f` on the entry of `key`: a newer generation of the same
    /// database replaces the older one, and the least recently used state
    /// goes beyond [`MAX_STATES`].
    fn with_state<T>(&self, key: &StateKey, f: impl FnOnce(&mut PerState) -> T) -> T {
        let mut states = self.states.lock().unwrap_or_else(|e| e.into_inner());
        let at = match states.iter().position(|(k, _)| k == key) {
            Some(i) => i,
            None => {
                states.retain(|(k, _)| k.database != key.database);
                if states.len() >= MAX_STATES {
                    states.remove(0);
                }
                states.push((key.clone(), PerState::default()));
                states.len() - 1
            }
        };
        let entry = states.remove(at);
        states.push(entry);
        let last = states.len() - 1;
        f(&mut states[last].1)
    }

    /// The neighbours of `sym` in the state `key`, computed once.
    pub fn neighbours(
        &self,
        key: &StateKey,
        resolver: &Resolver,
        sym: &SymbolRow,
    ) -> Result<Arc<Vec<Neighbour>>> {
        if let Some(hit) = self.with_state(key, |s| s.lists.get(&sym.id).cloned()) {
            return Ok(hit);
        }
        let list = Arc::new(neighbours(resolver, sym)?);
        self.with_state(key, |s| {
            if s.lists.len() >= MAX_ENTRIES {
                s.lists.clear();
            }
            s.lists.insert(sym.id, list.clone());
        });
        Ok(list)
    }

    /// How many call sites name `name`: a cheap stand-in for centrality
    /// that needs no resolution.
    pub fn references(&self, key: &StateKey, index: &Index, name: &str) -> Result<usize> {
        if let Some(n) = self.with_state(key, |s| s.refs.get(name).copied()) {
            return Ok(n);
        }
        let n = index.calls_named(name)?.len();
        self.with_state(key, |s| {
            if s.refs.len() >= MAX_ENTRIES {
                s.refs.clear();
            }
            s.refs.insert(name.to_string(), n);
        });
        Ok(n)
    }

    /// The whole resolved graph of the state `key`, built once (it resolves
    /// every call site of the index).
    pub fn symbol_graph(&self, key: &StateKey, index: &Index) -> Result<Arc<SymbolGraph>> {
        if let Some(g) = self.with_state(key, |s| s.graph.clone()) {
            return Ok(g);
        }
        let graph = Arc::new(SymbolGraph::stored_or_build(index, || {
            SymbolGraph::build(&Resolver::preloaded(index)?)
        })?);
        self.with_state(key, |s| s.graph = Some(graph.clone()));
        Ok(graph)
    }
}
