//! One turn of tool search: the activated set, the step-start visible set
//! and the guard that holds every call to it.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::catalog::{DefinitionSize, Tool};
use crate::telemetry::{Recorder, TurnEnd, TurnReport};
use crate::toolbox::{self, SearchOutcome, Toolbox};

/// The tools a provider step may see and call: `(direct ∪ active ∪ required) ∩ bound`,
/// computed when the step begins and frozen. Retrying the same provider
/// request reuses the same `Step`.
#[derive(Clone, Debug)]
pub struct Step {
    toolbox: Arc<Toolbox>,
    number: u32,
    /// Direct tools, then active tools in activation order, then required ones:
    /// later steps only append, which keeps a provider's prompt-cache prefix.
    visible: Vec<usize>,
    is_visible: Vec<bool>,
}

impl Step {
    /// 1-based within the turn.
    pub fn number(&self) -> u32 {
        self.number
    }

    /// The visible tools in request order: the direct ones (search tool first),
    /// the active ones in activation order, then the required ones.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.visible
            .iter()
            .map(|&i| &self.toolbox.catalog().tools()[i])
    }

    /// `{name, description, input_schema}` of each visible tool, for the request.
    pub fn definitions(&self) -> Vec<Value> {
        self.tools().map(Tool::definition).collect()
    }

    /// Whether this step shows the tool named `name`; false for a name not bound.
    pub fn is_visible(&self, name: &str) -> bool {
        self.toolbox
            .catalog()
            .position(name)
            .is_some_and(|i| self.is_visible[i])
    }

    /// Catalog indexes of the visible tools, in request order.
    pub fn visible_indexes(&self) -> &[usize] {
        &self.visible
    }

    /// What the visible definitions cost in the request.
    pub fn size(&self) -> DefinitionSize {
        self.toolbox.size_of(&self.visible)
    }
}

/// Why a call was refused. Its `Display` is the one-line error to return to the model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// No tool of the catalog has this name.
    #[error("no tool named {name:?} is available in this run")]
    NotBound {
        /// The name called.
        name: String,
    },
    /// A search of this same step activated the tool: this step's request did
    /// not carry its schema, the next one does.
    #[error(
        "tool {name:?} was activated by a search in this step; its schema is sent with the next request, call it then"
    )]
    ActivatedThisStep {
        /// The name called.
        name: String,
    },
    /// The tool is bound but deferred, and was not active when the step began.
    #[error("tool {name:?} is not active; find it with {search_tool} first")]
    NotActive {
        /// The name called.
        name: String,
        /// The search tool's name, which the message points to.
        search_tool: String,
    },
    /// A search-tool call whose arguments are not a non-empty string `query`
    /// and an optional positive integer `limit`.
    #[error("bad {search_tool} arguments: {message}")]
    BadSearchArguments {
        /// The search tool's name.
        search_tool: String,
        /// What is wrong with the arguments.
        message: String,
    },
}

/// The activation state of one turn (one user send, every provider step it
/// takes). Searches add to it; it never shrinks; [`finish`](TurnScope::finish)
/// (or dropping it) ends it. A new turn starts empty: activation is never
/// restored from history.
#[derive(Debug)]
pub struct TurnScope {
    toolbox: Arc<Toolbox>,
    /// Activation order.
    active: Vec<usize>,
    /// Per catalog tool: the step whose search activated it.
    activated_in: Vec<Option<u32>>,
    steps: u32,
    recorder: Recorder,
}

impl TurnScope {
    /// A turn with nothing active. Its clock, for
    /// [`FirstCall::elapsed_ms`](crate::FirstCall::elapsed_ms), starts now.
    pub fn new(toolbox: Arc<Toolbox>) -> TurnScope {
        let n = toolbox.catalog().len();
        TurnScope {
            toolbox,
            active: Vec::new(),
            activated_in: vec![None; n],
            steps: 0,
            recorder: Recorder::new(n, Instant::now()),
        }
    }

    /// The run's toolbox this turn searches and checks calls against.
    pub fn toolbox(&self) -> &Arc<Toolbox> {
        &self.toolbox
    }

    /// Names activated so far in this turn, in activation order.
    pub fn active(&self) -> impl Iterator<Item = &str> {
        self.toolbox.names(&self.active)
    }

    /// Starts a provider step: freezes the visible set from the direct tools
    /// and the tools active now.
    pub fn begin_step(&mut self) -> Step {
        self.begin_step_with(&[])
    }

    /// As [`begin_step`](TurnScope::begin_step), also showing `required`
    /// tools (a forced tool choice); names that are not bound are ignored.
    pub fn begin_step_with(&mut self, required: &[&str]) -> Step {
        self.steps += 1;
        let catalog = self.toolbox.catalog();
        let mut is_visible = vec![false; catalog.len()];
        let mut visible = Vec::new();
        let required = required.iter().filter_map(|n| catalog.position(n));
        for i in self
            .toolbox
            .direct_indexes()
            .iter()
            .chain(&self.active)
            .copied()
            .chain(required)
        {
            if !is_visible[i] {
                is_visible[i] = true;
                visible.push(i);
            }
        }
        let step = Step {
            toolbox: Arc::clone(&self.toolbox),
            number: self.steps,
            visible,
            is_visible,
        };
        self.recorder.step(&step, self.toolbox.search_tool_index());
        step
    }

    /// Runs a search during `step`: its matches become active from the next
    /// step on. Parallel searches of one step add up; a repeated search
    /// activates nothing twice.
    pub fn search(&mut self, step: &Step, query: &str, limit: Option<usize>) -> SearchOutcome {
        let outcome = self.toolbox.search(query, limit);
        let mut new = Vec::new();
        for &i in &outcome.activated {
            if self.activated_in[i].is_none() {
                self.activated_in[i] = Some(step.number);
                self.active.push(i);
                new.push(i);
            }
        }
        self.recorder.search(step.number, query, &outcome, &new);
        outcome
    }

    /// Handles a call of the search tool from its raw arguments: the
    /// model-facing result `{"activated": [...]}`, or the error to return.
    pub fn search_call(&mut self, step: &Step, arguments: &Value) -> Result<Value, CallError> {
        let (query, limit) = toolbox::parse_search_arguments(arguments).map_err(|message| {
            CallError::BadSearchArguments {
                search_tool: self.toolbox.search_tool().name.clone(),
                message,
            }
        })?;
        let outcome = self.search(step, &query, limit);
        Ok(toolbox::model_result(&self.toolbox, &outcome))
    }

    /// The step-start guard: the tool, if `step` shows it; else why not.
    /// Visibility is not permission: the host still checks what it checks.
    pub fn check_call(&mut self, step: &Step, name: &str) -> Result<&Tool, CallError> {
        let catalog = self.toolbox.catalog();
        let Some(i) = catalog.position(name) else {
            self.recorder.rejected();
            return Err(CallError::NotBound { name: name.into() });
        };
        if !step.is_visible[i] {
            self.recorder.rejected();
            return Err(if self.activated_in[i] == Some(step.number) {
                CallError::ActivatedThisStep { name: name.into() }
            } else {
                CallError::NotActive {
                    name: name.into(),
                    search_tool: self.toolbox.search_tool().name.clone(),
                }
            });
        }
        self.recorder.called(i);
        Ok(&self.toolbox.catalog().tools()[i])
    }

    /// Records how an accepted call of `name` ended, for telemetry.
    pub fn record_result(&mut self, step: &Step, name: &str, ok: bool) {
        if let Some(i) = self.toolbox.catalog().position(name) {
            let deferred = !self.toolbox.is_direct(i);
            self.recorder.result(step.number, i, deferred, ok);
        }
    }

    /// Ends the turn (completed, failed or cancelled): activation is dropped.
    pub fn finish(self, end: TurnEnd) -> TurnReport {
        self.recorder.report(&self.toolbox, end, self.steps)
    }
}
