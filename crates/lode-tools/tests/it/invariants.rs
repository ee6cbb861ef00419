//! Property tests of the turn-scope invariants over random interleavings of
//! steps, retries, (parallel) searches, calls and turn ends:
//!
//! - the active set only grows within a turn, and a new turn starts empty;
//! - every visible tool is bound, and a step's visible set is exactly
//!   `(direct ∪ active-at-step-start ∪ required) ∩ bound`;
//! - a tool activated during step n is callable in step n + 1, never in step n;
//! - the guard accepts exactly the tools the step shows;
//! - a search activates at most its limit, within the schema budget, never a direct tool.

use std::collections::BTreeSet;
use std::sync::Arc;

use lode_tools::{Catalog, Limits, Step, Tool, Toolbox, TurnEnd, TurnScope};
use proptest::prelude::*;
use serde_json::json;

const WORDS: &[&str] = &[
    "weather",
    "forecast",
    "file",
    "read",
    "write",
    "search",
    "web",
    "stock",
    "price",
    "email",
    "send",
    "calendar",
    "event",
    "translate",
    "text",
    "image",
    "resize",
    "database",
    "query",
    "map",
    "route",
];

fn catalog() -> Catalog {
    // 24 tools in 4 groups; descriptions overlap so searches return several tools.
    let tools = (0..24)
        .map(|i| {
            let w = |k: usize| WORDS[(i * 7 + k * 3) % WORDS.len()];
            let props: serde_json::Map<String, serde_json::Value> = (0..(i % 4))
                .map(|p| {
                    (
                        format!("{}_{p}", w(p + 2)),
                        json!({"type": "string", "description": w(p + 4)}),
                    )
                })
                .collect();
            Tool::new(
                format!("g{}__{}_{}_{i}", i % 4, w(0), w(1)),
                format!("{} {} {} and {}", w(0), w(1), w(2), w(3)),
                json!({"type": "object", "properties": props}),
            )
            .with_group(format!("g{}", i % 4))
        })
        .collect();
    Catalog::new(tools).unwrap()
}

#[derive(Clone, Debug)]
enum Op {
    /// Begin a new provider step, maybe with a required tool.
    Step(Option<usize>),
    /// Retry the current provider request with the same frozen step.
    Retry,
    /// Searches issued in parallel within the current step.
    Search(Vec<(String, Option<usize>)>),
    /// A call of a catalog tool (or an unknown name).
    Call(Option<usize>, bool),
    /// End the turn and start a new one.
    EndTurn(u8),
}

fn op() -> impl Strategy<Value = Op> {
    let query = (
        proptest::sample::subsequence(WORDS.to_vec(), 1..4),
        proptest::option::of(0usize..12),
    )
        .prop_map(|(w, l)| (w.join(" "), l));
    prop_oneof![
        2 => proptest::option::of(0usize..30).prop_map(Op::Step),
        1 => Just(Op::Retry),
        3 => proptest::collection::vec(query, 1..4).prop_map(Op::Search),
        4 => (proptest::option::of(0usize..25), any::<bool>()).prop_map(|(t, ok)| Op::Call(t, ok)),
        1 => (0u8..3).prop_map(Op::EndTurn),
    ]
}

fn end(n: u8) -> TurnEnd {
    [TurnEnd::Completed, TurnEnd::Failed, TurnEnd::Cancelled][n as usize]
}

fn names(step: &Step) -> BTreeSet<String> {
    step.tools().map(|t| t.name.clone()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn turn_scope_invariants_hold(
        ops in proptest::collection::vec(op(), 1..60),
        direct in proptest::sample::subsequence((0..24usize).collect::<Vec<_>>(), 0..4),
        budget in 300usize..4000,
    ) {
        let cat = catalog();
        let bound: BTreeSet<String> = cat.tools().iter().map(|t| t.name.clone()).collect();
        let direct_names: Vec<String> = direct.iter().map(|&i| cat.tools()[i].name.clone()).collect();
        let limits = Limits { default_results: 3, max_results: 6, schema_budget_bytes: budget };
        let toolbox = Arc::new(
            Toolbox::builder(cat).direct(direct_names.clone()).limits(limits).build().unwrap(),
        );
        let all = toolbox.catalog().tools().to_vec();
        let search_tool = toolbox.search_tool().name.clone();
        let direct_set: BTreeSet<String> =
            direct_names.iter().cloned().chain([search_tool.clone()]).collect();

        let mut turn = TurnScope::new(toolbox.clone());
        let mut step = turn.begin_step();
        // The model's view: what was active when the current step began.
        let mut active_at_start: BTreeSet<String> = BTreeSet::new();
        let mut activated_this_step: BTreeSet<String> = BTreeSet::new();
        let mut required: Option<String> = None;

        for op in ops {
            let before: BTreeSet<String> = turn.active().map(str::to_string).collect();
            let ends_turn = matches!(op, Op::EndTurn(_));
            let mut returned: BTreeSet<String> = BTreeSet::new();
            match op {
                Op::Step(req) => {
                    let req_name = req.map(|i| all.get(i).map_or(format!("unbound_{i}"), |t| t.name.clone()));
                    step = match &req_name {
                        Some(n) => turn.begin_step_with(&[n.as_str()]),
                        None => turn.begin_step(),
                    };
                    required = req_name;
                    active_at_start = before.clone();
                    activated_this_step.clear();
                }
                Op::Retry => {} // the same `step` is reused as is
                Op::Search(queries) => {
                    for (q, limit) in queries {
                        let out = turn.search(&step, &q, limit);
                        let activated: Vec<String> = toolbox.names(&out.activated).map(str::to_string).collect();
                        let lim = limit.unwrap_or(3).clamp(1, 6);
                        prop_assert!(activated.len() <= lim);
                        prop_assert!(toolbox.size_of(&out.activated).bytes <= budget);
                        returned.extend(activated.iter().cloned());
                        for n in &activated {
                            prop_assert!(bound.contains(n), "search escaped the catalog: {n}");
                            prop_assert!(!direct_set.contains(n), "search returned a direct tool: {n}");
                            if !active_at_start.contains(n) && !direct_set.contains(n) {
                                activated_this_step.insert(n.clone());
                            }
                        }
                    }
                }
                Op::Call(tool, ok) => {
                    let name = tool.map_or("not_a_tool".to_string(), |i| all[i.min(all.len() - 1)].name.clone());
                    let visible = step.is_visible(&name);
                    let verdict = turn.check_call(&step, &name).map(|t| t.name.clone());
                    prop_assert_eq!(verdict.is_ok(), visible, "guard disagrees with the step for {}", name);
                    if let Err(e) = &verdict {
                        // A tool found in this step is refused with the step-boundary reason.
                        if activated_this_step.contains(&name) && required.as_deref() != Some(name.as_str()) {
                            prop_assert!(e.to_string().contains("next request"), "{e}");
                        }
                    } else {
                        turn.record_result(&step, &name, ok);
                    }
                }
                Op::EndTurn(how) => {
                    let report = std::mem::replace(&mut turn, TurnScope::new(toolbox.clone())).finish(end(how));
                    prop_assert_eq!(report.end, end(how));
                    prop_assert_eq!(turn.active().count(), 0, "a new turn starts empty");
                    step = turn.begin_step();
                    active_at_start.clear();
                    activated_this_step.clear();
                    required = None;
                }
            }
            // Monotonic within a turn.
            let after: BTreeSet<String> = turn.active().map(str::to_string).collect();
            if !ends_turn {
                prop_assert!(before.is_subset(&after), "active set shrank: {:?} → {:?}", before, after);
                // Only what a search returned becomes active.
                prop_assert!(after.difference(&before).all(|n| returned.contains(n)));
            }
            // The frozen step: exactly (direct ∪ active at its start ∪ required) ∩ bound.
            let mut expect: BTreeSet<String> = direct_set.iter().chain(&active_at_start).cloned().collect();
            if let Some(r) = &required {
                expect.insert(r.clone());
            }
            let expect: BTreeSet<String> = expect
                .into_iter()
                .filter(|n| bound.contains(n) || *n == search_tool)
                .collect();
            prop_assert_eq!(names(&step), expect);
        }
        let report = turn.finish(TurnEnd::Completed);
        let calls = report.calls;
        prop_assert!(calls.succeeded + calls.failed <= calls.accepted);
    }

    #[test]
    fn a_search_in_step_n_shows_in_step_n_plus_1(query in proptest::sample::subsequence(WORDS.to_vec(), 1..4)) {
        let toolbox = Arc::new(Toolbox::builder(catalog()).build().unwrap());
        let mut turn = TurnScope::new(toolbox.clone());
        let step1 = turn.begin_step();
        let out = turn.search(&step1, &query.join(" "), None);
        for name in toolbox.names(&out.activated) {
            prop_assert!(!step1.is_visible(name));
            prop_assert!(turn.check_call(&step1, name).unwrap_err().to_string().contains("next request"));
        }
        let step2 = turn.begin_step();
        for name in toolbox.names(&out.activated) {
            prop_assert!(step2.is_visible(name));
            prop_assert!(turn.check_call(&step2, name).is_ok());
        }
        // Repeating the search activates nothing new, and is counted as a repeat.
        let again = turn.search(&step2, &query.join(" "), None);
        prop_assert_eq!(&again.activated, &out.activated);
        let report = turn.finish(TurnEnd::Completed);
        prop_assert_eq!(report.repeated_searches, 1);
        prop_assert!(report.searches[1].newly_activated.is_empty());
    }
}
