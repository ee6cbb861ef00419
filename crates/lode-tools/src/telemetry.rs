//! Per-turn telemetry of tool search: counts, sizes and names; never the
//! arguments of a call nor the text of a query.

use std::time::Instant;

use serde::Serialize;

use crate::catalog::DefinitionSize;
use crate::toolbox::{SearchOutcome, Toolbox};
use crate::turn::Step;

/// How a turn ended. Every ending drops the turn's activation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The turn ran to its end. The gateway reports a client that leaves as
    /// completed too: MCP cannot say otherwise.
    Completed,
    /// The turn stopped on an error.
    Failed,
    /// The user or host stopped the turn before its end.
    Cancelled,
}

/// What one turn did with tool search.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TurnReport {
    /// How the turn ended, as given to [`TurnScope::finish`](crate::TurnScope::finish).
    pub end: TurnEnd,
    /// Provider steps begun ([`TurnScope::begin_step`](crate::TurnScope::begin_step) calls).
    pub steps: u32,
    /// Every search of the turn, in the order run.
    pub searches: Vec<SearchRecord>,
    /// Searches whose query had the same terms as an earlier one in the turn.
    pub repeated_searches: usize,
    /// Calls checked against their step, and the outcomes reported.
    pub calls: CallCounts,
    /// Definitions sent, summed over every step of the turn.
    pub schemas_sent: DefinitionSize,
    /// Tools whose schemas were sent in some step but that were never called
    /// (the search tool aside), and what their definitions cost once each.
    pub exposed_never_called: Exposure,
    /// Each deferred tool called successfully, with its best rank in this
    /// turn's searches (`None`: no search ranked it, to depth `max(limit, 10)`).
    pub called_tools: Vec<CalledTool>,
    /// The first call of any tool reported successful; `None` when none was.
    pub first_successful_call: Option<FirstCall>,
}

impl TurnReport {
    /// Share of the successfully called deferred tools that some search of
    /// the turn ranked in its top `k`; `None` when none was called.
    pub fn recall_at(&self, k: usize) -> Option<f64> {
        if self.called_tools.is_empty() {
            return None;
        }
        let found = self
            .called_tools
            .iter()
            .filter(|c| c.best_rank.is_some_and(|r| r <= k))
            .count();
        Some(found as f64 / self.called_tools.len() as f64)
    }
}

/// One search of a turn, by tool names (never the query's text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct SearchRecord {
    /// The step (1-based) during which it ran; what it activated shows from the next.
    pub step: u32,
    /// Ranked names, best first.
    pub ranked: Vec<String>,
    /// Names the search returned as activated (already active ones included).
    pub activated: Vec<String>,
    /// Names this search made active for the first time.
    pub newly_activated: Vec<String>,
    /// Names within the limit left out because their schemas did not fit the budget.
    pub over_budget: Vec<String>,
    /// Its distinct terms are those of an earlier search of the turn.
    pub repeated: bool,
}

/// A turn's tool calls: as checked by [`TurnScope::check_call`](crate::TurnScope::check_call),
/// then as reported by [`TurnScope::record_result`](crate::TurnScope::record_result).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CallCounts {
    /// Calls the step guard let through.
    pub accepted: usize,
    /// Outcomes reported as successful.
    pub succeeded: usize,
    /// Outcomes reported as failed.
    pub failed: usize,
    /// Calls of tools not visible in their step, or not bound.
    pub rejected: usize,
}

/// A set of tools and what their definitions cost, each counted once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Exposure {
    /// Number of tools in the set.
    pub tools: usize,
    /// Characters of their compact-JSON definitions, summed.
    pub chars: usize,
}

/// A deferred tool called successfully, and how well the turn's searches had ranked it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CalledTool {
    /// Canonical name.
    pub name: String,
    /// Its best 1-based rank over the turn's searches; `None`: no search ranked it
    /// (each ranks to depth `max(limit, 10)`).
    pub best_rank: Option<usize>,
}

/// When a turn's first successful call came.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FirstCall {
    /// The step (1-based) of the call.
    pub step: u32,
    /// Milliseconds from the turn's start ([`TurnScope::new`](crate::TurnScope::new))
    /// to the outcome being recorded.
    pub elapsed_ms: f64,
}

struct SearchEntry {
    step: u32,
    ranked: Vec<usize>,
    activated: Vec<usize>,
    new: Vec<usize>,
    over_budget: Vec<String>,
    repeated: bool,
}

/// Collects a turn's telemetry as it happens.
#[derive(Debug)]
pub(crate) struct Recorder {
    started: Instant,
    exposed: Vec<bool>,
    called: Vec<bool>,
    schemas_sent: DefinitionSize,
    searches: Vec<SearchEntry>,
    /// Hashes of the searched queries' sorted terms, to spot repeats without keeping the text.
    query_keys: Vec<u64>,
    calls: CallCounts,
    succeeded_deferred: Vec<usize>,
    first_ok: Option<FirstCall>,
}

impl std::fmt::Debug for SearchEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SearchEntry")
            .field("step", &self.step)
            .finish()
    }
}

impl Recorder {
    pub fn new(tools: usize, started: Instant) -> Recorder {
        Recorder {
            started,
            exposed: vec![false; tools],
            called: vec![false; tools],
            schemas_sent: DefinitionSize::default(),
            searches: Vec::new(),
            query_keys: Vec::new(),
            calls: CallCounts::default(),
            succeeded_deferred: Vec::new(),
            first_ok: None,
        }
    }

    pub fn step(&mut self, step: &Step, search_tool: usize) {
        self.schemas_sent = self.schemas_sent + step.size();
        for &i in step.visible_indexes() {
            if i != search_tool {
                self.exposed[i] = true;
            }
        }
    }

    pub fn search(&mut self, step: u32, query: &str, outcome: &SearchOutcome, new: &[usize]) {
        let mut terms = crate::text::distinct_terms(query);
        terms.sort();
        let key = crate::catalog::fnv1a(terms.join(" ").as_bytes());
        let repeated = self.query_keys.contains(&key);
        self.query_keys.push(key);
        self.searches.push(SearchEntry {
            step,
            ranked: outcome.ranked.iter().map(|r| r.tool).collect(),
            activated: outcome.activated.clone(),
            new: new.to_vec(),
            over_budget: outcome.over_budget.clone(),
            repeated,
        });
    }

    pub fn rejected(&mut self) {
        self.calls.rejected += 1;
    }

    pub fn called(&mut self, tool: usize) {
        self.calls.accepted += 1;
        self.called[tool] = true;
    }

    pub fn result(&mut self, step: u32, tool: usize, deferred: bool, ok: bool) {
        if !ok {
            self.calls.failed += 1;
            return;
        }
        self.calls.succeeded += 1;
        if deferred && !self.succeeded_deferred.contains(&tool) {
            self.succeeded_deferred.push(tool);
        }
        if self.first_ok.is_none() {
            self.first_ok = Some(FirstCall {
                step,
                elapsed_ms: self.started.elapsed().as_secs_f64() * 1e3,
            });
        }
    }

    pub fn report(self, toolbox: &Toolbox, end: TurnEnd, steps: u32) -> TurnReport {
        let names = |v: &[usize]| toolbox.names(v).map(str::to_string).collect::<Vec<_>>();
        let never_called: Vec<usize> = (0..self.exposed.len())
            .filter(|&i| self.exposed[i] && !self.called[i])
            .collect();
        let called_tools = self
            .succeeded_deferred
            .iter()
            .map(|&t| CalledTool {
                name: toolbox.catalog().tools()[t].name.clone(),
                best_rank: self
                    .searches
                    .iter()
                    .filter_map(|s| s.ranked.iter().position(|&r| r == t))
                    .min()
                    .map(|p| p + 1),
            })
            .collect();
        TurnReport {
            end,
            steps,
            repeated_searches: self.searches.iter().filter(|s| s.repeated).count(),
            searches: self
                .searches
                .iter()
                .map(|s| SearchRecord {
                    step: s.step,
                    ranked: names(&s.ranked),
                    activated: names(&s.activated),
                    newly_activated: names(&s.new),
                    over_budget: s.over_budget.clone(),
                    repeated: s.repeated,
                })
                .collect(),
            calls: self.calls,
            schemas_sent: self.schemas_sent,
            exposed_never_called: Exposure {
                tools: never_called.len(),
                chars: toolbox.size_of(&never_called).chars,
            },
            called_tools,
            first_successful_call: self.first_ok,
        }
    }
}
