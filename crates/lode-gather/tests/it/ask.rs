//! `ask`: hits re-ranked by personalised PageRank, plus neighbours of hits.

use std::collections::HashSet;

use crate::common::{Fixture, search};
use lode_gather::{AskOptions, GraphCache, GraphState, ask, render};

const QUERY: &str = "retry failed uploads after a delay";

#[test]
fn ask_keeps_every_hit_and_adds_neighbours_of_hits() {
    let f = Fixture::chain();
    let index = f.index();
    let results = search(&index, QUERY, 2);
    let graphs = GraphCache::new();
    let r = ask(
        &index,
        &results,
        &AskOptions::default(),
        &graphs,
        &GraphState::Ready,
    );
    let text = render::ask_text(&r);
    assert!(r.graph.ran && r.graph.skipped.is_none(), "{text}");
    assert!(r.graph.nodes > 0 && r.graph.edges > 0 && r.graph.seeds > 0);

    // Every search hit is still there, as a search result.
    let spans = |src: &str| -> HashSet<(String, u32)> {
        r.hits
            .iter()
            .filter(|h| h.source == src)
            .map(|h| (h.path.clone(), h.start_line))
            .collect()
    };
    let hits: HashSet<(String, u32)> = results
        .hits
        .iter()
        .map(|h| (h.path.clone(), h.start_line))
        .collect();
    assert_eq!(spans("search"), hits);

    // Added symbols: new, one call from a hit's symbol, and said so.
    let added: Vec<_> = r.hits.iter().filter(|h| h.source == "graph").collect();
    assert!(
        !added.is_empty() && added.len() <= AskOptions::default().extra,
        "{text}"
    );
    assert_eq!(added.len(), r.graph.added);
    let hit_names: HashSet<&str> = results
        .hits
        .iter()
        .filter_map(|h| h.symbol.as_deref())
        .collect();
    for a in &added {
        assert!(!hits.contains(&(a.path.clone(), a.start_line)), "{text}");
        let edge = a.edge.as_deref().unwrap();
        let linked = edge.rsplit(' ').next().unwrap();
        assert!(hit_names.contains(linked), "{edge}: {text}");
        assert!(text.contains(&format!("  + {edge}")), "{text}");
        assert!(a.search_score.is_none() && a.graph_score > 0.0);
    }
    // The chain around upload_with_retries is what surfaces.
    let added_names: HashSet<&str> = added.iter().filter_map(|a| a.symbol.as_deref()).collect();
    assert!(
        added_names.contains("sync_folder") || added_names.contains("send_bytes"),
        "{text}"
    );
    // Best first, by the blended score.
    assert!(
        r.hits.windows(2).all(|w| w[0].score >= w[1].score),
        "{text}"
    );
    assert!(
        text.lines().last().unwrap().starts_with("ask: seeds="),
        "{text}"
    );

    // The graph is built once per index state.
    let again = ask(
        &index,
        &results,
        &AskOptions::default(),
        &graphs,
        &GraphState::Ready,
    );
    assert_eq!(
        again.hits.iter().map(|h| &h.path).collect::<Vec<_>>(),
        r.hits.iter().map(|h| &h.path).collect::<Vec<_>>()
    );
}

#[test]
fn without_the_graph_ask_is_the_search() {
    let f = Fixture::chain();
    let index = f.index();
    let results = search(&index, QUERY, 5);
    let r = ask(
        &index,
        &results,
        &AskOptions::default(),
        &GraphCache::new(),
        &GraphState::NotReady("index building (lode process 7)".into()),
    );
    let got: Vec<_> = r
        .hits
        .iter()
        .map(|h| (h.path.clone(), h.start_line, h.score))
        .collect();
    let want: Vec<_> = results
        .hits
        .iter()
        .map(|h| (h.path.clone(), h.start_line, h.score))
        .collect();
    assert_eq!(got, want);
    assert!(
        render::ask_text(&r)
            .ends_with("ask: graph not used — graph not ready: index building (lode process 7)\n")
    );
}

#[test]
fn a_tasks_hits_keep_their_order_and_the_graph_only_adds() {
    let f = Fixture::chain();
    let index = f.index();
    let task = "Uploads are not retried after a failure.\n\nWhen an upload fails the client gives up \
        at once instead of retrying after a delay. It happens for every upload, large or small.";
    let mut results = search(&index, task, 3);
    assert_eq!(results.mode, lode_search::Mode::Task);
    let r = ask(
        &index,
        &results,
        &AskOptions::default(),
        &GraphCache::new(),
        &GraphState::Ready,
    );
    let searched: Vec<(String, u32)> = results
        .hits
        .iter()
        .map(|h| (h.path.clone(), h.start_line))
        .collect();
    let kept: Vec<(String, u32)> = r
        .hits
        .iter()
        .take(searched.len())
        .map(|h| (h.path.clone(), h.start_line))
        .collect();
    assert_eq!(kept, searched, "{}", render::ask_text(&r));
    assert!(r.hits[searched.len()..].iter().all(|h| h.source == "graph"));
    // In query mode the same hits are blended with PageRank (and may move).
    results.mode = lode_search::Mode::Query;
    let blended = ask(
        &index,
        &results,
        &AskOptions::default(),
        &GraphCache::new(),
        &GraphState::Ready,
    );
    assert!(blended.hits.iter().any(|h| h.graph_score > 0.0));
}
