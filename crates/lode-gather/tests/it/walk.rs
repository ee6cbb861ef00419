//! The walk on a fixture with a known call chain
//! (`sync_folder → upload_with_retries → backoff_delay → jitter`), with the
//! deterministic model and with a fake endpoint that answers well, hangs,
//! answers garbage, names ids that do not exist, or fails.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::common::{Fixture, search};
use lode_gather::{
    Deterministic, Endpoint, GatherInput, Gathered, Gatherer, GraphState, Limits, TRACE_CHARS,
    render,
};
use lode_index::Index;
use lode_test_support::fake_decision::{self as fake, Fake, Reply, chain_model};

const QUERY: &str = "retry failed uploads after a delay";

fn limits() -> Limits {
    Limits {
        deadline: Duration::from_secs(5),
        ..Limits::default()
    }
}

fn deterministic(limits: Limits) -> Gatherer {
    Gatherer::new(Arc::new(Deterministic), limits)
}

fn endpoint(fake: &Fake, limits: Limits) -> Gatherer {
    Gatherer::new(
        Arc::new(Endpoint::new(&fake.url, Some("fake"), None).unwrap()),
        limits,
    )
}

/// Gathers for the top `k` hits of `query`.
fn run_k(g: &Gatherer, index: &Index, query: &str, k: usize) -> Gathered {
    let results = search(index, query, k);
    g.gather(index, &results, &GatherInput::new(query))
}

fn run(g: &Gatherer, index: &Index, query: &str) -> Gathered {
    let results = search(index, query, 3);
    g.gather(index, &results, &GatherInput::new(query))
}

fn kept(g: &Gathered) -> Vec<String> {
    g.nodes.iter().map(|n| n.name.clone()).collect()
}

fn node<'a>(g: &'a Gathered, name: &str) -> &'a lode_gather::KeptNode {
    g.nodes
        .iter()
        .find(|n| n.name == name)
        .unwrap_or_else(|| panic!("{name} not kept: {}", render::gathered_text(g)))
}

#[test]
fn the_deterministic_walk_follows_the_chain_both_ways() {
    let f = Fixture::chain();
    let index = f.index();
    // One hit, so one seed: the rest of the chain must come from the graph.
    let g = run_k(&deterministic(limits()), &index, QUERY, 1);
    let text = render::gathered_text(&g);
    assert!(g.ran && g.skipped.is_none(), "{text}");
    assert_eq!(g.seeds.len(), 1);
    assert!(
        g.seeds[0].starts_with("upload_with_retries "),
        "{:?}",
        g.seeds
    );
    // A caller of the seed, and the end of the chain two calls away.
    let caller = node(&g, "sync_folder");
    assert_eq!(caller.edge, "calls seed upload_with_retries");
    assert_eq!(caller.hop, 1);
    let end = node(&g, "jitter");
    assert_eq!(end.hop, 2, "{text}");
    assert_eq!(end.edge, "called by backoff_delay");
    assert_eq!(end.path, "sync/noise.py");
    assert!(end.body.contains("random.uniform"), "{text}");
    // Nothing twice, no seed among the kept, within the limits.
    let mut names = kept(&g);
    names.sort();
    names.dedup();
    assert_eq!(names.len(), g.nodes.len(), "{text}");
    assert!(g.nodes.len() <= limits().max_nodes && g.rounds <= limits().max_rounds);
    assert!(g.considered >= g.nodes.len());
    assert!(g.fallback.is_empty());
    // The section and its footer.
    assert!(
        text.starts_with(&format!(
            "Related code (gathered for this search, {} rounds, {} of {} nodes kept):\n",
            g.rounds,
            g.nodes.len(),
            g.considered
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "sync/noise.py:4-6 function jitter · called by backoff_delay\n  def jitter(amount):\n"
        ),
        "{text}"
    );
    let footer = text.lines().last().unwrap();
    assert!(
        footer.starts_with(&format!(
            "gather: model=deterministic rounds={} considered={} kept={} fallback=none ",
            g.rounds,
            g.considered,
            g.nodes.len()
        )) && footer.ends_with("ms"),
        "{footer}"
    );
}

#[test]
fn an_endpoint_model_steers_the_walk_and_stops_it() {
    let f = Fixture::chain();
    let index = f.index();
    let fake = Fake::start(chain_model);
    let g = run_k(&endpoint(&fake, limits()), &index, QUERY, 1);
    let text = render::gathered_text(&g);
    assert_eq!(g.model, "endpoint");
    assert!(g.fallback.is_empty(), "{text}\n{:?}", g.log);
    let mut names = kept(&g);
    names.sort();
    assert_eq!(names, ["backoff_delay", "jitter", "sync_folder"], "{text}");
    assert_eq!(node(&g, "jitter").edge, "called by backoff_delay");
    // jitter was offered in round 2, and the model said stop.
    assert_eq!((g.rounds, g.stopped.as_str()), (2, "model"), "{text}");
    assert_eq!(fake.requests(), g.rounds);
    assert!(g.log.iter().all(|r| r.source == "model"), "{:?}", g.log);
    // The deterministic walk keeps more (send_bytes, pause, …): the model decided.
    let d = run_k(&deterministic(limits()), &index, QUERY, 1);
    assert!(
        d.nodes.len() > g.nodes.len(),
        "{}",
        render::gathered_text(&d)
    );
    // The model saw ids, kinds, locations, signatures, docs and edges.
    let body: serde_json::Value = serde_json::from_str(&fake.bodies()[0]).unwrap();
    let prompt = fake::user_message(&body);
    assert!(prompt.contains(&format!("Query: {QUERY}")), "{prompt}");
    assert!(
        prompt.contains("sync_folder  function  sync/folder.py:6  calls seed upload_with_retries"),
        "{prompt}"
    );
    assert!(prompt.contains("    def sync_folder(folder)"), "{prompt}");
    assert!(
        prompt.contains("    // Send every changed file"),
        "{prompt}"
    );
    assert_eq!(body["model"], "fake");
}

/// The kept nodes of a fallback run equal the deterministic run's: each
/// fallback round used the deterministic order.
fn assert_falls_back(
    reply: impl Fn() -> Reply + Send + Sync + 'static,
    kind: &str,
    limits: Limits,
) -> Gathered {
    let f = Fixture::chain();
    let index = f.index();
    let fake = Fake::start(move |_| reply());
    let g = run(&endpoint(&fake, limits.clone()), &index, QUERY);
    let d = run(&deterministic(limits), &index, QUERY);
    let text = render::gathered_text(&g);
    assert!(
        !g.fallback.is_empty() && g.fallback.iter().all(|k| *k == kind),
        "{text}\n{:?}",
        g.log
    );
    assert!(!g.nodes.is_empty(), "{text}");
    let footer = text.lines().last().unwrap();
    assert!(footer.contains(&format!(" fallback={kind} ")), "{footer}");
    assert!(g.log.iter().all(|r| r.source == "fallback"), "{:?}", g.log);
    // Fallback rounds keep what the deterministic model keeps.
    let dk = kept(&d);
    assert_eq!(kept(&g), dk[..g.nodes.len()], "{text}");
    g
}

#[test]
fn a_hanging_model_falls_back_at_the_deadline() {
    let limits = Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let t = Instant::now();
    let g = assert_falls_back(|| Reply::Hang(Duration::from_secs(20)), "timeout", limits);
    let took = t.elapsed();
    // Without the deadline the fake would hold the walk for 20 s.
    assert!(took < Duration::from_secs(4), "took {took:?}");
    assert!(g.elapsed_ms < 1_500.0, "{}", g.elapsed_ms);
    assert_eq!(g.stopped, "deadline");
    assert_eq!(g.rounds, 1);
}

/// A model that ignores the time it is given.
struct Sleeper;

impl lode_gather::DecisionModel for Sleeper {
    fn name(&self) -> &str {
        "sleeper"
    }
    fn decide(
        &self,
        _: &lode_gather::Request,
        _: Duration,
    ) -> Result<lode_gather::Decision, lode_gather::ModelError> {
        std::thread::sleep(Duration::from_secs(20));
        Ok(lode_gather::Decision::default())
    }
}

#[test]
fn the_walk_does_not_wait_for_a_model_past_the_deadline() {
    let f = Fixture::chain();
    let index = f.index();
    let limits = Limits {
        deadline: Duration::from_millis(300),
        ..Limits::default()
    };
    let t = Instant::now();
    let g = run(
        &Gatherer::new(Arc::new(Sleeper), limits.clone()),
        &index,
        QUERY,
    );
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t.elapsed()
    );
    assert_eq!(g.fallback, ["timeout"]);
    assert_eq!(
        kept(&g),
        kept(&run(&deterministic(limits), &index, QUERY))[..g.nodes.len()]
    );
}

#[test]
fn the_endpoint_gives_up_at_its_timeout() {
    let fake = Fake::start(|_| Reply::Hang(Duration::from_secs(20)));
    let e = Endpoint::new(&fake.url, None, None).unwrap();
    let request = lode_gather::Request {
        trace: String::new(),
        query: QUERY.into(),
        round: 1,
        max_rounds: 3,
        quota: 4,
        frontier: Vec::new(),
    };
    let t = Instant::now();
    let answer = lode_gather::DecisionModel::decide(&e, &request, Duration::from_millis(300));
    assert_eq!(answer, Err(lode_gather::ModelError::Timeout));
    assert!(
        t.elapsed() < Duration::from_secs(4),
        "took {:?}",
        t.elapsed()
    );
}

#[test]
fn a_garbage_reply_falls_back() {
    assert_falls_back(
        || Reply::Raw(200, "<html>busy</html>".into()),
        "invalid_json",
        limits(),
    );
    assert_falls_back(
        || Reply::Content("Sure! I would keep the first two.".into()),
        "invalid_json",
        limits(),
    );
}

#[test]
fn ids_that_do_not_exist_fall_back() {
    let g = assert_falls_back(
        || Reply::Content(r#"{"keep": [9999], "expand": [], "stop": false}"#.into()),
        "unknown_ids",
        limits(),
    );
    assert!(
        g.log[0].detail.as_deref().unwrap().contains("9999"),
        "{:?}",
        g.log
    );
}

#[test]
fn a_failing_endpoint_falls_back() {
    assert_falls_back(|| Reply::Raw(500, "{}".into()), "error", limits());
    // Nothing listens: connection refused.
    let f = Fixture::chain();
    let index = f.index();
    let url = lode_test_support::refused_url();
    let e = Endpoint::new(&url, None, None).unwrap();
    let g = run(&Gatherer::new(Arc::new(e), limits()), &index, QUERY);
    assert!(
        g.fallback.iter().all(|k| *k == "error") && !g.fallback.is_empty(),
        "{:?}",
        g.log
    );
    assert!(!g.nodes.is_empty());
}

#[test]
fn the_key_goes_in_a_bearer_header_and_a_missing_key_is_an_error() {
    let f = Fixture::chain();
    let index = f.index();
    let fake = Fake::start(chain_model);
    // PATH is set in any test environment; the value only travels to the local fake.
    let e = Endpoint::new(&fake.url, Some("fake"), Some("PATH")).unwrap();
    let g = run(&Gatherer::new(Arc::new(e), limits()), &index, QUERY);
    assert!(g.fallback.is_empty(), "{:?}", g.log);
    let want = format!("Bearer {}", std::env::var("PATH").unwrap());
    let header = |name: &str| {
        fake.headers()[0].iter().find_map(|h| {
            let (k, v) = h.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_string())
        })
    };
    assert!(header("authorization") == Some(want), "no bearer header");
    assert_eq!(header("content-type").as_deref(), Some("application/json"));

    let fake = Fake::start(chain_model);
    let e = Endpoint::new(&fake.url, None, Some("LODE_TEST_SURELY_UNSET_KEY")).unwrap();
    let g = run(&Gatherer::new(Arc::new(e), limits()), &index, QUERY);
    assert_eq!(fake.requests(), 0);
    assert!(g.fallback.iter().all(|k| *k == "error") && !g.fallback.is_empty());
    assert!(
        g.log[0]
            .detail
            .as_deref()
            .unwrap()
            .contains("$LODE_TEST_SURELY_UNSET_KEY"),
        "{:?}",
        g.log
    );
}

#[test]
fn the_same_search_does_not_call_the_model_twice() {
    let f = Fixture::chain();
    let index = f.index();
    let fake = Fake::start(chain_model);
    let gatherer = endpoint(&fake, limits());
    let results = search(&index, QUERY, 3);
    let mut input = GatherInput::new(QUERY);
    input.trace = Some("the agent was reading sync/uploader.py");
    let first = gatherer.gather(&index, &results, &input);
    let calls = fake.requests();
    assert!(calls >= 1);
    let second = gatherer.gather(&index, &results, &input);
    assert_eq!(fake.requests(), calls, "cached decisions were not used");
    assert_eq!(kept(&first), kept(&second));
    assert!(
        second.log.iter().all(|r| r.source == "cache"),
        "{:?}",
        second.log
    );
    // Another trace is another question.
    input.trace = Some("the agent was reading sync/folder.py");
    gatherer.gather(&index, &results, &input);
    assert!(fake.requests() > calls);
}

#[test]
fn the_model_sees_the_newest_trace_and_nothing_records_it() {
    let f = Fixture::chain();
    let index = f.index();
    let fake = Fake::start(chain_model);
    let trace = format!("OLDEST-MARKER {} NEWEST-MARKER", "x".repeat(10_000));
    let results = search(&index, QUERY, 3);
    let mut input = GatherInput::new(QUERY);
    input.trace = Some(&trace);
    let g = endpoint(&fake, limits()).gather(&index, &results, &input);
    let sent = fake.bodies().join("\n");
    assert!(sent.contains("NEWEST-MARKER") && !sent.contains("OLDEST-MARKER"));
    assert_eq!(g.trace_chars, TRACE_CHARS);
    let recorded = serde_json::to_string(&g).unwrap() + &render::gathered_text(&g);
    assert!(
        !recorded.contains("MARKER") && !recorded.contains("xxxxxxxx"),
        "{recorded}"
    );
}

#[test]
fn identifiers_regexes_and_an_unready_graph_do_not_walk() {
    let f = Fixture::chain();
    let index = f.index();
    let fake = Fake::start(chain_model);
    let g = endpoint(&fake, limits());
    for q in ["upload_with_retries", "backoff_delay|jitter"] {
        let out = run(&g, &index, q);
        assert!(!out.ran && out.nodes.is_empty());
        let line = render::gathered_text(&out);
        assert!(
            line.starts_with("gather: not run — ") && line.lines().count() == 1,
            "{line}"
        );
    }
    let results = search(&index, QUERY, 3);
    let mut input = GatherInput::new(QUERY);
    input.graph = GraphState::NotReady("index building (lode process 42)".into());
    let out = g.gather(&index, &results, &input);
    assert_eq!(
        render::gathered_text(&out),
        "gather: not run — graph not ready: index building (lode process 42)\n"
    );
    assert_eq!(fake.requests(), 0);
}

#[test]
fn limits_bound_the_walk() {
    let f = Fixture::chain();
    let index = f.index();
    let few = Limits {
        max_nodes: 2,
        ..limits()
    };
    let g = run(&deterministic(few), &index, QUERY);
    assert_eq!(g.nodes.len(), 2);
    assert_eq!(g.stopped, "max_nodes");

    let one = Limits {
        max_rounds: 1,
        ..limits()
    };
    let g = run(&deterministic(one), &index, QUERY);
    assert_eq!(g.rounds, 1);
    assert!(g.nodes.iter().all(|n| n.hop == 1));

    // A small token budget cuts bodies and is never exceeded.
    let results = search(&index, QUERY, 3);
    let mut input = GatherInput::new(QUERY);
    input.max_tokens = Some(30);
    let g = deterministic(limits()).gather(&index, &results, &input);
    let shown: usize = g.nodes.iter().map(|n| n.tokens).sum();
    assert!(shown <= 30 && g.tokens == shown, "{shown}");
    assert!(
        g.nodes
            .iter()
            .any(|n| n.omitted_lines > 0 || n.body_state == "no_budget")
    );
    let text = render::gathered_text(&g);
    assert!(
        text.contains("more lines]") || text.contains("token budget spent"),
        "{text}"
    );
}

#[test]
fn recursion_and_cycles_end() {
    let f = Fixture::chain();
    let index = f.index();
    let big = Limits {
        max_nodes: 50,
        max_rounds: 5,
        ..limits()
    };
    // ping ⇄ pong: the other half once, then nothing new to see.
    let g = run_k(
        &deterministic(big.clone()),
        &index,
        "ping pong mutual recursion",
        1,
    );
    let text = render::gathered_text(&g);
    let seed = g.seeds[0].split(' ').next().unwrap().to_string();
    let other = if seed == "ping" { "pong" } else { "ping" };
    assert!(seed == "ping" || seed == "pong", "{:?}", g.seeds);
    assert_eq!(kept(&g), [other], "{text}");
    assert_eq!(
        (g.rounds, g.stopped.as_str()),
        (1, "no_neighbours"),
        "{text}"
    );
    // walk_tree only calls itself (and a parameter): no neighbours at all.
    let g = run_k(
        &deterministic(big),
        &index,
        "visit a directory tree recursively",
        1,
    );
    let text = render::gathered_text(&g);
    assert!(g.seeds[0].starts_with("walk_tree "), "{:?}", g.seeds);
    assert!(g.nodes.is_empty(), "{text}");
    assert_eq!(
        (g.rounds, g.stopped.as_str()),
        (0, "no_neighbours"),
        "{text}"
    );
    assert!(
        text.starts_with(
            "Related code (gathered for this search, 0 rounds, 0 of 0 nodes kept):\ngather: "
        ),
        "{text}"
    );
}

#[test]
fn ambiguous_names_bind_through_imports_or_say_they_guessed() {
    let f = Fixture::chain();
    let index = f.index();
    let big = Limits {
        max_nodes: 50,
        ..limits()
    };
    // report_name imports sync.names.normalize: only that one.
    let g = run_k(
        &deterministic(big.clone()),
        &index,
        "name shown in the sync report",
        1,
    );
    let text = render::gathered_text(&g);
    assert!(
        g.seeds.iter().any(|s| s.starts_with("report_name ")),
        "{:?}",
        g.seeds
    );
    let found: Vec<_> = g
        .nodes
        .iter()
        .filter(|n| n.name == "normalize" && n.from == "report_name")
        .collect();
    assert_eq!(found.len(), 1, "{text}");
    assert_eq!(found[0].path, "sync/names.py");
    assert_eq!(found[0].edge, "called by seed report_name");

    // legacy_label calls normalize without an import: both, marked.
    let g = run_k(
        &deterministic(big),
        &index,
        "label of an entry in the old report format",
        1,
    );
    let text = render::gathered_text(&g);
    assert!(
        g.seeds.iter().any(|s| s.starts_with("legacy_label ")),
        "{:?}",
        g.seeds
    );
    let mut paths: Vec<&str> = g
        .nodes
        .iter()
        .filter(|n| n.name == "normalize" && n.from == "legacy_label")
        .map(|n| {
            assert_eq!(n.edge, "called by seed legacy_label (name match)");
            n.path.as_str()
        })
        .collect();
    paths.sort();
    assert_eq!(paths, ["sync/labels.py", "sync/names.py"], "{text}");
}

#[test]
fn stale_rows_and_changed_files_do_not_break_the_walk() {
    let f = Fixture::chain();
    let index = f.index();
    let db = index.store().path().to_path_buf();
    drop(index);
    // A symbol row gone while call rows still name it as their caller.
    let conn = lode_index::open_database(&db).unwrap();
    let n = conn
        .execute("DELETE FROM symbols WHERE name = 'backoff_delay'", [])
        .unwrap();
    assert_eq!(n, 1);
    drop(conn);
    // A file deleted since the build.
    std::fs::remove_file(f.path("sync/folder.py")).unwrap();

    let index = f.committed();
    let big = Limits {
        max_nodes: 50,
        ..limits()
    };
    let g = run(&deterministic(big.clone()), &index, QUERY);
    let text = render::gathered_text(&g);
    assert!(g.ran && !g.stopped.starts_with("index error"), "{text}");
    assert!(!kept(&g).contains(&"backoff_delay".to_string()), "{text}");
    assert_eq!(node(&g, "sync_folder").body_state, "changed");
    assert!(
        text.contains("(not shown: the file changed since the index was built)"),
        "{text}"
    );

    // From jitter, whose only caller row points at the deleted symbol.
    let g = run(
        &deterministic(big),
        &index,
        "random share of the amount so clients spread out",
    );
    assert!(
        g.seeds.iter().any(|s| s.starts_with("jitter ")),
        "{:?}",
        g.seeds
    );
    assert!(g.nodes.iter().all(|n| n.name != "backoff_delay"));
}

#[test]
fn a_private_endpoint_is_refused_unless_the_user_allows_it() {
    let config = |allow: &str| {
        lode_core::Config::from_toml(
            &format!(
                "[gather]\ndecision = \"endpoint\"\nendpoint = \"http://169.254.169.254/v1\"\n{allow}"
            ),
            std::path::Path::new("user.toml"),
        )
        .unwrap()
    };
    let (gatherer, note) = lode_gather::Gatherer::from_config(&config(""));
    let note = note.expect("a note says why the endpoint is not used");
    assert!(note.contains("169.254.169.254"), "{note}");
    assert!(note.contains("allow_private_endpoints"), "{note}");
    assert_eq!(gatherer.model_name(), "deterministic");
    let (gatherer, note) =
        lode_gather::Gatherer::from_config(&config("allow_private_endpoints = true\n"));
    assert_eq!(note, None);
    assert_eq!(gatherer.model_name(), "endpoint");
}
