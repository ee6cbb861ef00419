//! Callers and callees: resolved edges, and trees of them to a depth.

use std::collections::{BTreeMap, HashSet};

use lode_core::{Result, SymbolKind};
use lode_index::{CallRow, SymbolRow};
use serde::Serialize;

use crate::resolve::{Binding, Resolution, Resolver, family};

/// One call site bound to a definition.
#[derive(Clone, Debug, Serialize)]
pub struct Edge {
    /// Where the call is.
    pub site: CallRow,
    /// The definition it calls.
    pub target: SymbolRow,
    /// How the call was bound to it.
    pub resolution: Resolution,
}

/// Call sites left unbound because only their name matched, and too many
/// definitions share it ([`Binding::Crowded`]): said once, never walked.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Crowded {
    /// The called name.
    pub name: String,
    /// How many definitions share it.
    pub definitions: usize,
    /// The call sites, in order.
    pub sites: Vec<SiteRef>,
}

/// One symbol's calls in one direction.
#[derive(Clone, Debug, Default)]
pub struct Calls {
    /// The bound edges.
    pub edges: Vec<Edge>,
    /// Calls out that bind to nothing local (libraries, built-ins); out only.
    pub unbound: Vec<CallRow>,
    /// Name-only matches too crowded to bind, by name.
    pub crowded: Vec<Crowded>,
}

impl Calls {
    fn crowd(&mut self, call: &CallRow, definitions: usize) {
        let site = SiteRef {
            path: call.path.clone(),
            line: call.line,
        };
        match self.crowded.iter_mut().find(|c| c.name == call.callee) {
            Some(c) => c.sites.push(site),
            None => self.crowded.push(Crowded {
                name: call.callee.clone(),
                definitions,
                sites: vec![site],
            }),
        }
    }
}

/// Which way a tree grows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    /// Who calls the symbol.
    In,
    /// What the symbol calls.
    Out,
}

/// The deepest tree `callers` builds.
pub const MAX_DEPTH: usize = 5;
/// The most nodes a tree holds; beyond it the tree says it was cut.
pub const MAX_NODES: usize = 400;

/// A symbol in a call tree, with every call site that links it to its parent.
#[derive(Clone, Debug, Serialize)]
pub struct CallNode {
    /// The caller (direction in) or callee (direction out); `None` for
    /// code outside any symbol (a script's top level).
    pub symbol: Option<SymbolRow>,
    /// The file, when `symbol` is `None`.
    pub path: String,
    /// Every call site, `path:line`, in order.
    pub sites: Vec<SiteRef>,
    /// The weakest resolution among the sites.
    pub resolution: Resolution,
    /// The symbol is already on the path from the root: not expanded again.
    pub cycle: bool,
    /// Its own callers or callees, one level further.
    pub children: Vec<CallNode>,
}

/// A call site: the file and line of the call.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct SiteRef {
    /// The file, relative to the root.
    pub path: String,
    /// The call's line, from 1.
    pub line: u32,
}

/// A tree of callers or callees of one symbol.
#[derive(Clone, Debug, Serialize)]
pub struct CallTree {
    /// The symbol asked about.
    pub root: SymbolRow,
    /// Callers (in) or callees (out).
    pub direction: Direction,
    /// Levels followed.
    pub depth: usize,
    /// The first level, each with its subtree.
    pub children: Vec<CallNode>,
    /// Calls out of the root that bind to nothing in the repository
    /// (libraries, built-ins), by name; direction out only.
    pub external: Vec<String>,
    /// The root's call sites whose name alone matched too many definitions.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub crowded: Vec<Crowded>,
    /// Nodes were left out at [`MAX_NODES`].
    pub truncated: bool,
}

/// Edges grouped by the symbol at their other end: (path, line, id) →
/// (that symbol, its call sites, the weakest resolution).
type Groups = BTreeMap<(String, u32, i64), (Option<SymbolRow>, Vec<SiteRef>, Resolution)>;

/// `receiver.name` or `name`: how an unbound call is listed.
pub(crate) fn call_name(c: CallRow) -> String {
    match c.receiver {
        Some(r) => format!("{r}.{}", c.callee),
        None => c.callee,
    }
}

/// Whether an edge that landed on `target` is a call of `wanted` (a class
/// is called through its constructors).
fn lands_on(target: &SymbolRow, wanted: &SymbolRow) -> bool {
    target.id == wanted.id
        || (target.kind == SymbolKind::Method
            && target.parent == Some(wanted.id)
            && target.name == wanted.name)
}

impl Resolver<'_> {
    /// Every call site that calls `target`, and those named like it that a
    /// crowded name leaves unbound.
    pub fn callers(&self, target: &SymbolRow) -> Result<Calls> {
        let mut out = Calls::default();
        for call in self.index().calls_named(&target.name)? {
            match self.resolve(&call)? {
                Binding::Targets(found, how) => {
                    if let Some(t) = found.iter().find(|t| lands_on(t, target)) {
                        out.edges.push(Edge {
                            site: call,
                            target: t.clone(),
                            resolution: how,
                        });
                    }
                }
                // A crowded name could mean the target only within its language family.
                Binding::Crowded(n) if family(&call.path) == family(&target.path) => {
                    out.crowd(&call, n)
                }
                _ => {}
            }
        }
        Ok(out)
    }

    /// Every call `caller` makes: the bound edges, the names that bound to
    /// nothing local, and the crowded name matches.
    pub fn callees(&self, caller: &SymbolRow) -> Result<Calls> {
        let mut out = Calls::default();
        for call in self.index().calls_from(caller.id)? {
            match self.resolve(&call)? {
                Binding::Targets(found, how) => {
                    for t in found {
                        out.edges.push(Edge {
                            site: call.clone(),
                            target: t,
                            resolution: how,
                        });
                    }
                }
                Binding::Crowded(n) => out.crowd(&call, n),
                Binding::External | Binding::Unknown => out.unbound.push(call),
            }
        }
        Ok(out)
    }

    /// The tree of callers (`In`) or callees (`Out`) of `root`, to `depth` (≤ [`MAX_DEPTH`]).
    pub fn tree(&self, root: &SymbolRow, direction: Direction, depth: usize) -> Result<CallTree> {
        let depth = depth.clamp(1, MAX_DEPTH);
        let mut budget = MAX_NODES;
        let mut on_path = HashSet::from([root.id]);
        let mut top = Calls::default();
        let children = self.grow(
            root,
            direction,
            depth,
            &mut on_path,
            &mut budget,
            Some(&mut top),
        )?;
        let mut external: Vec<String> = top.unbound.into_iter().map(call_name).collect();
        external.sort();
        external.dedup();
        Ok(CallTree {
            root: root.clone(),
            direction,
            depth,
            children,
            external,
            crowded: top.crowded,
            truncated: budget == 0,
        })
    }

    fn grow(
        &self,
        at: &SymbolRow,
        direction: Direction,
        depth: usize,
        on_path: &mut HashSet<i64>,
        budget: &mut usize,
        top: Option<&mut Calls>,
    ) -> Result<Vec<CallNode>> {
        // Group the edges by the symbol at the other end.
        let mut groups: Groups = BTreeMap::new();
        let mut calls = match direction {
            Direction::In => self.callers(at)?,
            Direction::Out => self.callees(at)?,
        };
        let edges = std::mem::take(&mut calls.edges);
        if let Some(top) = top {
            *top = calls;
        }
        for e in edges {
            let other = match direction {
                Direction::In => match e.site.caller {
                    Some(id) => self.symbol(id)?,
                    None => None,
                },
                Direction::Out => Some(e.target.clone()),
            };
            let key = match &other {
                Some(s) => (s.path.clone(), s.start_line, s.id),
                None => (e.site.path.clone(), 0, -1),
            };
            let entry = groups
                .entry(key)
                .or_insert_with(|| (other, Vec::new(), e.resolution));
            entry.1.push(SiteRef {
                path: e.site.path.clone(),
                line: e.site.line,
            });
            entry.2 = entry.2.max(e.resolution);
        }
        let mut nodes = Vec::new();
        for ((path, _, _), (symbol, mut sites, resolution)) in groups {
            if *budget == 0 {
                break;
            }
            *budget -= 1;
            sites.sort();
            sites.dedup();
            let cycle = symbol.as_ref().is_some_and(|s| on_path.contains(&s.id));
            let mut children = Vec::new();
            if let (Some(s), false, true) = (&symbol, cycle, depth > 1) {
                on_path.insert(s.id);
                children = self.grow(s, direction, depth - 1, on_path, budget, None)?;
                on_path.remove(&s.id);
            }
            nodes.push(CallNode {
                path: symbol.as_ref().map(|s| s.path.clone()).unwrap_or(path),
                symbol,
                sites,
                resolution,
                cycle,
                children,
            });
        }
        Ok(nodes)
    }
}
