//! Centrality over the resolved call graph: PageRank, and PageRank
//! personalised by seeds (the symbols a search found).

use std::collections::HashMap;

use lode_core::Result;

use crate::resolve::{Binding, Resolution, Resolver};

/// Each node's weighted edges: (other node, weight).
pub(crate) type Adjacency = Vec<Vec<(usize, f64)>>;

/// The whole call graph of an index, symbols as dense node numbers.
pub struct SymbolGraph {
    /// Symbol id of each node.
    pub ids: Vec<i64>,
    node_of: HashMap<i64, usize>,
    /// Weighted out-edges (caller → callee).
    out: Vec<Vec<(usize, f64)>>,
    /// Weighted in-edges (callee ← caller), for walking to callers.
    inc: Vec<Vec<(usize, f64)>>,
    /// Call sites bound to each node by a tier other than a name match.
    certain_in: Vec<usize>,
    /// Distinct caller–callee pairs.
    pub edges: usize,
}

/// A name-only edge counts this much of a resolved one.
const NAME_EDGE_WEIGHT: f64 = 0.3;
const DAMPING: f64 = 0.85;
const ITERATIONS: usize = 30;

impl SymbolGraph {
    /// Resolves every call site of the index (use a [`Resolver::preloaded`]).
    pub fn build(resolver: &Resolver) -> Result<SymbolGraph> {
        let mut g = SymbolGraph {
            ids: Vec::new(),
            node_of: HashMap::new(),
            out: Vec::new(),
            inc: Vec::new(),
            certain_in: Vec::new(),
            edges: 0,
        };
        for call in resolver.index().all_calls()? {
            let Some(caller) = call.caller else { continue };
            let Binding::Targets(targets, how) = resolver.resolve(&call)? else {
                continue;
            };
            let base = if how == Resolution::Name {
                NAME_EDGE_WEIGHT
            } else {
                1.0
            };
            let w = base / targets.len() as f64;
            let from = g.node(caller);
            for t in targets {
                if t.id == caller {
                    continue;
                }
                let to = g.node(t.id);
                g.out[from].push((to, w));
                if how != Resolution::Name {
                    g.certain_in[to] += 1;
                }
                g.edges += 1;
            }
        }
        g.inc = incoming(&g.out);
        Ok(g)
    }

    /// Ids, certain in-degrees and out-edges: what [`SymbolGraph::from_parts`] takes.
    pub(crate) fn parts(&self) -> (&[i64], &[usize], &Adjacency) {
        (&self.ids, &self.certain_in, &self.out)
    }

    /// A graph from its parts (as stored); the in-edges are derived in the
    /// order [`SymbolGraph::build`] derives them, so both rank alike.
    pub(crate) fn from_parts(
        ids: Vec<i64>,
        certain_in: Vec<usize>,
        out: Adjacency,
        edges: usize,
    ) -> SymbolGraph {
        let node_of = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        SymbolGraph {
            inc: incoming(&out),
            ids,
            node_of,
            out,
            certain_in,
            edges,
        }
    }

    fn node(&mut self, id: i64) -> usize {
        if let Some(&n) = self.node_of.get(&id) {
            return n;
        }
        let n = self.ids.len();
        self.ids.push(id);
        self.node_of.insert(id, n);
        self.out.push(Vec::new());
        self.certain_in.push(0);
        n
    }

    /// The node of symbol `id`, if the graph holds it.
    pub fn node_of(&self, id: i64) -> Option<usize> {
        self.node_of.get(&id).copied()
    }

    /// PageRank with edges followed both ways (being called and calling both
    /// make a symbol central to an orientation), teleporting to `seeds`
    /// (symbol id → weight) or uniformly. Returns symbol id → score.
    pub fn pagerank(&self, seeds: Option<&HashMap<i64, f64>>) -> HashMap<i64, f64> {
        let n = self.ids.len();
        if n == 0 {
            return HashMap::new();
        }
        let mut teleport = vec![0.0; n];
        match seeds {
            Some(seeds) if !seeds.is_empty() => {
                let total: f64 = seeds.values().sum();
                for (id, w) in seeds {
                    if let Some(i) = self.node_of(*id) {
                        teleport[i] += w / total.max(f64::MIN_POSITIVE);
                    }
                }
            }
            _ => teleport.iter_mut().for_each(|t| *t = 1.0 / n as f64),
        }
        // Callee-ward edges count fully, caller-ward ones half.
        let weight_out: Vec<f64> = (0..n)
            .map(|i| {
                self.out[i].iter().map(|e| e.1).sum::<f64>()
                    + 0.5 * self.inc[i].iter().map(|e| e.1).sum::<f64>()
            })
            .collect();
        let mut rank = teleport.clone();
        let mut next = vec![0.0; n];
        for _ in 0..ITERATIONS {
            next.iter_mut().for_each(|x| *x = 0.0);
            let mut dangling = 0.0;
            for i in 0..n {
                if weight_out[i] == 0.0 {
                    dangling += rank[i];
                    continue;
                }
                let share = rank[i] / weight_out[i];
                for &(j, w) in &self.out[i] {
                    next[j] += DAMPING * share * w;
                }
                for &(j, w) in &self.inc[i] {
                    next[j] += DAMPING * share * 0.5 * w;
                }
            }
            for i in 0..n {
                next[i] += (1.0 - DAMPING + DAMPING * dangling) * teleport[i];
            }
            std::mem::swap(&mut rank, &mut next);
        }
        self.ids.iter().copied().zip(rank).collect()
    }

    /// How many call sites land on a symbol, not counting name-only matches.
    pub fn in_degree(&self, id: i64) -> usize {
        self.node_of(id).map(|i| self.certain_in[i]).unwrap_or(0)
    }
}

/// The in-edges of `out`, each list in caller order.
fn incoming(out: &Adjacency) -> Adjacency {
    let mut inc = vec![Vec::new(); out.len()];
    for (from, edges) in out.iter().enumerate() {
        for &(to, w) in edges {
            inc[to].push((from, w));
        }
    }
    inc
}
