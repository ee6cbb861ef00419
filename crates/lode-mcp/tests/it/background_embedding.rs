//! The server answers while the embedding phase runs on its own thread: a
//! cold repository's first call does not wait for its vectors, says how
//! much is embedded, and later calls see the phase finish — also after a
//! newer build (a call's refresh) stopped it half-way.
//!
//! The embedding backend is chosen per process: the test holds a
//! [`common::Turn`] while it sets one.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lode_core::Config;
use lode_mcp::{Options, Server};
use lode_test_support::fake_embed::{Fake, Reply};
use serde_json::{Value, json};

use crate::common;

fn search(server: &Server, query: &str) -> Value {
    let args = json!({ "query": query });
    let result = server
        .call("search", args.as_object().unwrap().clone())
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    result.structured_content.unwrap()
}

fn notes(v: &Value) -> String {
    v["notes"].to_string()
}

#[test]
fn calls_answer_while_the_embedding_phase_runs_on_its_thread() {
    let _turn = common::turn();
    let repo = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let write = |i: usize| {
        let p = repo.path().join(format!("src/m{i}.py"));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, format!("def step_{i}(x):\n    return x + {i}\n")).unwrap();
    };
    for i in 0..6 {
        write(i);
    }
    // Chunk texts wait for the gate; the probe and queries are answered at once.
    let open = Arc::new(AtomicBool::new(false));
    let gate = open.clone();
    let fake = Fake::start(move |r| {
        if r.inputs().iter().any(|t| t.starts_with("src/")) {
            while !gate.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        Reply::Embed(16)
    });
    let toml = format!(
        "[embed]\nbackend = \"ollama\"\nendpoint = \"{}\"\nmodel = \"fake\"\nbatch_size = 2\ndeadline_ms = 60000\n",
        fake.url
    );
    let config = Config::from_toml(&toml, Path::new("config.toml")).unwrap();
    assert!(lode_index::vectors::configure(&config.embed, None).is_none());
    let mut options = Options::new(vec![repo.path().to_path_buf()]);
    options.config = config;
    options.cache_dir = Some(cache.path().to_path_buf());
    options.watch = false;
    let server = Server::new(options).unwrap();

    // The first call builds the index and answers with nothing embedded yet.
    let v = search(&server, "add a number to x");
    assert!(notes(&v).contains("partial: 0 of 6 chunks embedded"), "{v}");
    assert_eq!(v["partial"], json!({"embedded": 0, "chunks": 6}), "{v}");
    assert!(
        !v["hits"].as_array().unwrap().is_empty(),
        "lexical hits: {v}"
    );
    assert!(server.repos().unwrap().repo(0).is_embedding());

    // A newer build while the phase waits on its first batch: the call answers
    // at once from the new state, and the phase goes on with it.
    write(6);
    let v = search(&server, "add a number to x");
    assert!(notes(&v).contains("of 7 chunks embedded"), "{v}");

    open.store(true, Ordering::SeqCst);
    let started = Instant::now();
    let done = loop {
        let v = search(&server, "add a number to x");
        if v.get("partial").is_none() {
            break v;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "never finished: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!notes(&done).contains("partial"), "{done}");
    let started = Instant::now();
    while server.repos().unwrap().repo(0).is_embedding() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the thread did not end"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // Every chunk was embedded once, in batches across files: the one batch
    // that was in flight when the newer build came may have been asked again.
    let texts: usize = fake
        .seen()
        .iter()
        .map(|(_, b, _)| {
            b["input"].as_array().map_or(0, |a| {
                a.iter()
                    .filter(|t| t.as_str().is_some_and(|t| t.starts_with("src/")))
                    .count()
            })
        })
        .sum();
    assert!((7..=9).contains(&texts), "{texts} chunk texts sent");
}
