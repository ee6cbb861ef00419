//! One client session's tool-search state: the turn in progress, the step the
//! client last listed, and the turn id the host last sent.
//!
//! MCP has neither turns nor steps, so the session maps them onto what it
//! does have:
//!
//! - **Turn**: the whole session by default (activation accumulates until the
//!   client disconnects). A host that knows its turns sends `_meta.turn_id`
//!   on requests; a request whose id differs from the last one seen ends the
//!   turn and starts an empty one. Requests without an id change nothing.
//! - **Step**: each `tools/list` starts one, showing direct + active tools. A
//!   search sends `notifications/tools/list_changed`, the client re-lists, and
//!   the tools it found are callable from then on; a call before the re-list
//!   is refused by the step guard ("call it with the next request").

use std::sync::Arc;

use lode_tools::{CallCounts, Step, Toolbox, TurnEnd, TurnReport, TurnScope};
use serde_json::Value;

use crate::turn_log::TurnLog;

/// The `_meta` key that carries the host's turn id.
pub const TURN_ID_META: &str = "turn_id";

pub(crate) struct Session {
    toolbox: Arc<Toolbox>,
    turn: TurnScope,
    step: Step,
    turn_id: Option<String>,
    /// Counts turns, so a call that outlives its turn is not recorded in the next.
    generation: u64,
    /// Where ended turns go, and this session's number there.
    turn_log: Option<Arc<TurnLog>>,
    number: u64,
}

/// What to do with a `tools/call`.
pub(crate) enum Call {
    /// A search ran: return `result` to the model; `list_changed` when it made
    /// a tool callable that was not.
    Search { result: Value, list_changed: bool },
    /// Forward the call of catalog tool `tool`.
    Run {
        tool: usize,
        step: Step,
        generation: u64,
    },
    /// Refuse, with this message for the model.
    Refused(String),
}

impl Session {
    #[cfg(test)]
    pub fn new(toolbox: Arc<Toolbox>) -> Session {
        Session::logged(toolbox, None, 0)
    }

    /// A session whose ended turns are written to `turn_log` as session `number`.
    pub fn logged(toolbox: Arc<Toolbox>, turn_log: Option<Arc<TurnLog>>, number: u64) -> Session {
        let mut turn = TurnScope::new(Arc::clone(&toolbox));
        // Calls made before the first tools/list see the direct tools.
        let step = turn.begin_step();
        Session {
            toolbox,
            turn,
            step,
            turn_id: None,
            generation: 0,
            turn_log,
            number,
        }
    }

    /// Writes an ended turn to the turn log, unless it neither searched nor called.
    fn log_turn(&self, turn_id: Option<&str>, report: &TurnReport) {
        let idle = report.searches.is_empty() && report.calls == CallCounts::default();
        if let (Some(turn_log), false) = (&self.turn_log, idle) {
            turn_log.write(self.number, turn_id, report);
        }
    }

    /// Applies a request's turn id. Returns the report of the turn it ended,
    /// and whether that turn had active tools (the client's list is stale).
    pub fn observe_turn(&mut self, id: Option<&str>) -> Option<(TurnReport, bool)> {
        let id = id?;
        if self.turn_id.as_deref() == Some(id) {
            return None;
        }
        let ended_id = self.turn_id.replace(id.to_string());
        let had_active = self.turn.active().next().is_some();
        let mut turn = TurnScope::new(Arc::clone(&self.toolbox));
        self.step = turn.begin_step();
        self.generation += 1;
        let ended = std::mem::replace(&mut self.turn, turn);
        let report = ended.finish(TurnEnd::Completed);
        self.log_turn(ended_id.as_deref(), &report);
        Some((report, had_active))
    }

    /// A `tools/list`: starts a step; the catalog indexes it shows, in order.
    pub fn list(&mut self) -> Vec<usize> {
        self.step = self.turn.begin_step();
        self.step.visible_indexes().to_vec()
    }

    /// A `tools/call` of `name`. `available` says whether a catalog tool's
    /// server still answers: a search reports the unavailable tools it found
    /// apart, and their calls are refused.
    pub fn call(
        &mut self,
        name: &str,
        arguments: &Value,
        available: impl Fn(usize) -> bool,
    ) -> Call {
        if self.toolbox.is_search_tool(name) {
            let before = self.turn.active().count();
            return match self.turn.search_call(&self.step, arguments) {
                Ok(result) => {
                    let new: Vec<&str> = self.turn.active().skip(before).collect();
                    let catalog = self.toolbox.catalog();
                    let is_up = |n: &str| catalog.position(n).is_some_and(&available);
                    let list_changed = new.iter().any(|n| is_up(n));
                    Call::Search {
                        result: split_unavailable(result, is_up),
                        list_changed,
                    }
                }
                Err(e) => Call::Refused(e.to_string()),
            };
        }
        match self.turn.check_call(&self.step, name) {
            Ok(_) => {
                let tool = self.toolbox.catalog().position(name).expect("checked");
                Call::Run {
                    tool,
                    step: self.step.clone(),
                    generation: self.generation,
                }
            }
            Err(e) => Call::Refused(e.to_string()),
        }
    }

    /// Records how a forwarded call ended, if its turn is still the current one.
    pub fn record(&mut self, generation: u64, step: &Step, name: &str, ok: bool) {
        if generation == self.generation {
            self.turn.record_result(step, name, ok);
        }
    }

    /// Names active in the current turn.
    pub fn active(&self) -> Vec<String> {
        self.turn.active().map(str::to_string).collect()
    }
}

/// The client left: its last turn ends. MCP cannot say whether the host
/// finished it, so it is logged as completed.
impl Drop for Session {
    fn drop(&mut self) {
        if self.turn_log.is_none() {
            return;
        }
        let last = std::mem::replace(&mut self.turn, TurnScope::new(Arc::clone(&self.toolbox)));
        let report = last.finish(TurnEnd::Completed);
        self.log_turn(self.turn_id.as_deref(), &report);
    }
}

/// Moves the unavailable names of a search result's `activated` to `unavailable`.
fn split_unavailable(mut result: Value, is_up: impl Fn(&str) -> bool) -> Value {
    let Some(Value::Array(names)) = result.get_mut("activated") else {
        return result;
    };
    let (up, down): (Vec<Value>, Vec<Value>) = std::mem::take(names)
        .into_iter()
        .partition(|n| n.as_str().is_some_and(&is_up));
    *names = up;
    if !down.is_empty() {
        result["unavailable"] = Value::Array(down);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use lode_tools::Catalog;
    use serde_json::json;

    fn toolbox() -> Arc<Toolbox> {
        let tool = |name: &str, description: &str| {
            json!({"name": name, "description": description,
                   "inputSchema": {"type": "object", "properties": {"x": {"type": "string"}}}})
        };
        let catalog = Catalog::from_mcp_servers([
            ("fs", json!({"tools": [tool("read_file", "Read a file"), tool("write_file", "Write a file")]})),
            ("weather", json!({"tools": [tool("forecast", "Weather forecast for a city")]})),
        ])
        .unwrap();
        Arc::new(
            Toolbox::builder(catalog)
                .direct(["fs__read_file"])
                .build()
                .unwrap(),
        )
    }

    fn names(s: &Session, indexes: &[usize]) -> Vec<String> {
        indexes
            .iter()
            .map(|&i| s.toolbox.catalog().tools()[i].name.clone())
            .collect()
    }

    fn search(s: &mut Session, query: &str) -> (Value, bool) {
        match s.call("tool_search", &json!({"query": query, "limit": 1}), |_| {
            true
        }) {
            Call::Search {
                result,
                list_changed,
            } => (result, list_changed),
            _ => panic!("not a search"),
        }
    }

    fn refusal(call: Call) -> String {
        match call {
            Call::Refused(m) => m,
            _ => panic!("not refused"),
        }
    }

    #[test]
    fn a_search_shows_its_tools_from_the_next_list_on() {
        let mut s = Session::new(toolbox());
        let first = s.list();
        assert_eq!(names(&s, &first), ["tool_search", "fs__read_file"]);
        let args = json!({"city": "Paris"});
        let m = refusal(s.call("weather__forecast", &args, |_| true));
        assert!(m.contains("tool_search"), "{m}");

        let (result, changed) = search(&mut s, "weather forecast");
        assert_eq!(result, json!({"activated": ["weather__forecast"]}));
        assert!(changed);
        // Same step: refused by the step guard.
        let m = refusal(s.call("weather__forecast", &args, |_| true));
        assert!(m.contains("next request"), "{m}");
        // The same search again changes nothing.
        assert!(!search(&mut s, "weather forecast").1);

        let second = s.list();
        assert_eq!(
            names(&s, &second),
            ["tool_search", "fs__read_file", "weather__forecast"]
        );
        assert!(matches!(
            s.call("weather__forecast", &args, |_| true),
            Call::Run { .. }
        ));
        assert!(matches!(
            s.call("fs__read_file", &args, |_| true),
            Call::Run { .. }
        ));
        assert!(refusal(s.call("nope", &args, |_| true)).contains("\"nope\""));
        assert!(refusal(s.call("tool_search", &json!({}), |_| true)).contains("query"));
    }

    #[test]
    fn a_new_turn_id_drops_activation_and_the_same_id_keeps_it() {
        let mut s = Session::new(toolbox());
        assert!(s.observe_turn(None).is_none());
        let (_, had_active) = s
            .observe_turn(Some("t1"))
            .expect("the first id starts a turn");
        assert!(!had_active);
        search(&mut s, "weather forecast");
        s.list();
        assert!(s.observe_turn(Some("t1")).is_none());
        assert!(s.observe_turn(None).is_none());
        assert_eq!(s.active(), ["weather__forecast"]);

        let (report, had_active) = s.observe_turn(Some("t2")).unwrap();
        assert!(had_active);
        assert_eq!(report.searches.len(), 1);
        assert!(s.active().is_empty());
        let visible = s.list();
        assert_eq!(names(&s, &visible), ["tool_search", "fs__read_file"]);
        let m = refusal(s.call("weather__forecast", &json!({}), |_| true));
        assert!(m.contains("tool_search"), "{m}");
    }

    #[test]
    fn a_call_that_outlives_its_turn_is_not_recorded_in_the_next() {
        let mut s = Session::new(toolbox());
        let Call::Run {
            step, generation, ..
        } = s.call("fs__read_file", &json!({}), |_| true)
        else {
            panic!("direct tools are callable before any list");
        };
        s.observe_turn(Some("t2"));
        s.record(generation, &step, "fs__read_file", true);
        let (report, _) = s.observe_turn(Some("t3")).unwrap();
        assert_eq!(report.calls.succeeded, 0, "{report:?}");
        // Within its turn, it is.
        let Call::Run {
            step, generation, ..
        } = s.call("fs__read_file", &json!({}), |_| true)
        else {
            panic!("callable")
        };
        s.record(generation, &step, "fs__read_file", true);
        let (report, _) = s.observe_turn(Some("t4")).unwrap();
        assert_eq!(report.calls.succeeded, 1, "{report:?}");
    }

    #[test]
    fn tools_of_an_unavailable_server_are_reported_apart_and_do_not_change_the_list() {
        let mut s = Session::new(toolbox());
        let weather = s.toolbox.catalog().position("weather__forecast").unwrap();
        let call = s.call(
            "tool_search",
            &json!({"query": "forecast", "limit": 1}),
            |i| i != weather,
        );
        let Call::Search {
            result,
            list_changed,
        } = call
        else {
            panic!("not a search")
        };
        assert_eq!(
            result,
            json!({"activated": [], "unavailable": ["weather__forecast"]})
        );
        assert!(!list_changed);
    }
}
