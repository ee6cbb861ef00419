//! Embedding servers end to end: `lode index`, `search` and `status` against
//! a fake server in this process. One index, one model: a build whose server
//! fails is made with the built-in model, whole, and says so; a query whose
//! server fails runs lexical-only and says so.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::common::{Repo, backend};
use lode_test_support::fake_embed::{Fake, Reply};
use lode_test_support::refused_url;
use serde_json::Value;

fn user_config(repo: &Repo, text: &str) {
    let dir = repo.cache.path().join("config/lode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn ollama(repo: &Repo, url: &str, extra: &str) {
    user_config(
        repo,
        &format!(
            "[embed]\nbackend = \"ollama\"\nendpoint = \"{url}\"\nmodel = \"fake-embed\"\n{extra}"
        ),
    );
}

fn notes(v: &Value) -> String {
    v["notes"].to_string()
}

/// The stored vectors' backend, from `lode status`.
fn stored_backend(repo: &Repo) -> String {
    let v = repo.json(&["status"]);
    v["vectors"]["stored"]["backend"]
        .as_str()
        .unwrap_or_else(|| panic!("no stored vectors: {v}"))
        .to_string()
}

/// Indexes, expecting the build to fall back to the built-in model, with a note.
fn assert_build_falls_back(repo: &Repo, why: &str) {
    let v = repo.json(&["index"]);
    assert!(v["files"].as_u64().is_some_and(|n| n > 0), "{v}");
    let n = notes(&v);
    assert!(n.contains("this build uses the built-in model"), "{n}");
    assert!(n.contains(why), "expected {why:?} in {n}");
    assert_eq!(
        v["notes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|n| n.as_str().unwrap().contains("built-in model"))
            .count(),
        1,
        "one note: {n}"
    );
    assert_eq!(stored_backend(repo), "builtin");
    // The index works, with the built-in model's vectors.
    let s = repo.json(&["search", "price of the items in the cart"]);
    assert!(!s["hits"].as_array().unwrap().is_empty(), "{s}");
}

#[test]
fn an_index_built_by_a_server_is_searched_through_it() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|_| Reply::Embed(32));
    ollama(
        &repo,
        &fake.url,
        "query_prefix = \"search_query: \"\ndocument_prefix = \"search_document: \"\n",
    );
    let v = repo.json(&["index"]);
    assert!(v.get("notes").is_none(), "{v}");
    let status = repo.json(&["status"]);
    let stored = &status["vectors"]["stored"];
    assert_eq!(stored["backend"], "ollama", "{status}");
    assert_eq!(stored["model"], "ollama:fake-embed");
    assert_eq!(stored["dim"], 32);
    assert_eq!(stored["encoding"], "int8");
    assert_eq!(status["vectors"]["action"], "none", "{status}");
    let inputs: Vec<String> = fake
        .seen()
        .iter()
        .flat_map(|(_, b, _)| {
            b["input"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        inputs[1..]
            .iter()
            .all(|t| t.starts_with("search_document: ")),
        "{inputs:?}"
    );

    let before = fake.requests();
    let s = repo.json(&["search", "total price of the cart"]);
    assert!(s.get("notes").is_none(), "{s}");
    assert!(!s["hits"].as_array().unwrap().is_empty(), "{s}");
    let seen = fake.seen();
    let queries: Vec<&Value> = seen[before..].iter().map(|(_, b, _)| &b["input"]).collect();
    assert!(
        queries
            .iter()
            .any(|q| q[0] == "search_query: total price of the cart"),
        "{queries:?}"
    );
}

#[test]
fn a_task_is_sent_to_the_server_as_its_three_views_in_one_request() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|_| Reply::Embed(32));
    ollama(&repo, &fake.url, "query_prefix = \"q: \"\n");
    repo.json(&["index"]);
    let task = "Cart total ignores the discount\n\nCalling `Cart.subtotal` after \
                `apply_discount` returns the full price, so the receipt is wrong.";
    let before = fake.requests();
    let s = repo.json(&["search", "--mode", "task", task]);
    assert!(s.get("notes").is_none(), "{s}");
    let seen = fake.seen();
    // Past the server's probe (`lode`), one request holds every view.
    let asked: Vec<&Value> = (seen[before..].iter())
        .map(|(_, b, _)| &b["input"])
        .filter(|input| input[0] != "lode")
        .collect();
    assert_eq!(asked.len(), 1, "{asked:?}");
    let views = asked[0].as_array().unwrap();
    assert_eq!(views.len(), 3, "{views:?}");
    assert_eq!(views[1], "q: Cart total ignores the discount");
    assert!(views.iter().all(|v| v.as_str().unwrap().starts_with("q: ")));
    assert!(views[0].as_str().unwrap().contains("the receipt is wrong"));
}

#[test]
fn a_query_embedding_of_another_dimension_runs_the_query_lexical_only() {
    let repo = Repo::fixture("shop");
    // Chunks in 32 dimensions, queries (the prefixed texts) in 16.
    let fake = Fake::start(|r| {
        let query = r.inputs().iter().any(|t| t.starts_with("q: "));
        Reply::Embed(if query { 16 } else { 32 })
    });
    ollama(&repo, &fake.url, "query_prefix = \"q: \"\n");
    repo.json(&["index"]);
    let task = "Cart total ignores the discount\n\nCalling `Cart.subtotal` after \
                `apply_discount` returns the full price, so the receipt is wrong.";
    let s = repo.json(&["search", "--mode", "task", task]);
    assert!(!s["hits"].as_array().unwrap().is_empty(), "{s}");
    let notes = s["notes"].to_string();
    assert!(
        notes.contains("16 dimensions") && notes.contains("lexical-only"),
        "{s}"
    );
}

#[test]
fn chunks_go_out_in_batches() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|_| Reply::Embed(16));
    ollama(&repo, &fake.url, "batch_size = 2\n");
    repo.ok(&["index"]);
    let sizes: Vec<usize> = fake
        .seen()
        .iter()
        .map(|(_, b, _)| b["input"].as_array().unwrap().len())
        .collect();
    assert!(sizes.iter().all(|&n| n <= 2), "{sizes:?}");
    assert!(
        sizes.contains(&2),
        "some file has two or more chunks: {sizes:?}"
    );
    assert_eq!(stored_backend(&repo), "ollama");
}

#[test]
fn a_server_error_is_retried_without_falling_back() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|r| {
        if r.n == 1 {
            Reply::Raw(500, "{}".into())
        } else {
            Reply::Embed(16)
        }
    });
    ollama(&repo, &fake.url, "");
    let v = repo.json(&["index"]);
    assert!(v.get("notes").is_none(), "{v}");
    assert_eq!(stored_backend(&repo), "ollama");
}

#[test]
fn a_hanging_server_makes_the_build_fall_back() {
    let repo = Repo::fixture("shop");
    // The probe answers; every later request hangs past the deadline.
    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(16)
        } else {
            Reply::Hang(Duration::from_secs(20))
        }
    });
    ollama(&repo, &fake.url, "deadline_ms = 300\n");
    assert_build_falls_back(&repo, "timed out");
}

#[test]
fn garbage_makes_the_build_fall_back() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(16)
        } else {
            Reply::Raw(200, "<html>not json</html>".into())
        }
    });
    ollama(&repo, &fake.url, "");
    assert_build_falls_back(&repo, "not JSON");
}

#[test]
fn a_wrong_dimension_makes_the_build_fall_back() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|r| Reply::Embed(if r.n == 0 { 16 } else { 8 }));
    ollama(&repo, &fake.url, "");
    assert_build_falls_back(&repo, "8 dimensions, the model had 16");
}

#[test]
fn a_refused_connection_makes_the_build_fall_back() {
    let repo = Repo::fixture("shop");
    ollama(&repo, &refused_url(), "");
    assert_build_falls_back(&repo, "tries");
}

#[test]
fn a_server_down_at_query_time_leaves_the_query_lexical_only() {
    let repo = Repo::fixture("shop");
    let up = Arc::new(AtomicBool::new(true));
    let flag = up.clone();
    let fake = Fake::start(move |_| {
        if flag.load(Ordering::SeqCst) {
            Reply::Embed(16)
        } else {
            Reply::Raw(503, String::new())
        }
    });
    ollama(&repo, &fake.url, "");
    repo.ok(&["index"]);
    assert_eq!(stored_backend(&repo), "ollama");

    up.store(false, Ordering::SeqCst);
    let s = repo.json(&["search", "cart total"]);
    let n = notes(&s);
    assert!(n.contains("this query ran lexical-only"), "{n}");
    assert!(n.contains("HTTP 503"), "{n}");
    assert!(
        !s["hits"].as_array().unwrap().is_empty(),
        "lexical hits: {s}"
    );
    // The index keeps the server's vectors: nothing changed, nothing rebuilt.
    assert_eq!(stored_backend(&repo), "ollama");

    // A change while the server is down: that build is the built-in model's, whole.
    repo.write(
        "src/shop/extra.py",
        "def refund(order):\n    return order.total\n",
    );
    let s = repo.json(&["search", "refund an order"]);
    assert!(
        notes(&s).contains("this build uses the built-in model"),
        "{s}"
    );
    assert!(
        !notes(&s).contains("lexical-only"),
        "the built-in vectors answer: {s}"
    );
    assert_eq!(stored_backend(&repo), "builtin");
    let status = repo.json(&["status"]);
    assert_eq!(status["vectors"]["action"], "rebuild_vectors", "{status}");

    // The server is back: the next build rebuilds the vectors with it.
    up.store(true, Ordering::SeqCst);
    let v = repo.json(&["index"]);
    assert!(
        v["rebuilt"].as_str().unwrap_or("").contains("embedding"),
        "{v}"
    );
    assert_eq!(stored_backend(&repo), "ollama");
}

#[test]
fn status_says_what_a_config_change_calls_for() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|_| Reply::Embed(16));
    ollama(&repo, &fake.url, "");
    repo.ok(&["index"]);
    let action = |extra: &str| {
        ollama(&repo, &fake.url, extra);
        let v = repo.json(&["status"]);
        (
            v["vectors"]["action"].as_str().unwrap().to_string(),
            v["vectors"]["changed"].to_string(),
            v["state"].as_str().unwrap().to_string(),
        )
    };
    assert_eq!(action("").0, "none");
    let (a, changed, state) = action("query_prefix = \"q: \"\n");
    assert_eq!(
        (a.as_str(), state.as_str()),
        ("clear_query_cache", "ready"),
        "{changed}"
    );
    let (a, changed, state) = action("document_prefix = \"d: \"\n");
    assert_eq!((a.as_str(), state.as_str()), ("rebuild_vectors", "stale"));
    assert!(changed.contains("document_prefix"), "{changed}");
    let (a, changed, _) = action("encoding = \"f32\"\n");
    assert_eq!(a, "rebuild_vectors");
    assert!(changed.contains("encoding"), "{changed}");
    // Another model: the text form says so too.
    user_config(&repo, "");
    let v = repo.json(&["status"]);
    assert_eq!(v["vectors"]["action"], "rebuild_vectors");
    assert!(v["vectors"]["changed"].to_string().contains("model"), "{v}");
    let text = repo.ok(&["status"]);
    assert!(
        text.contains("the next build rebuilds the vectors"),
        "{text}"
    );
}

#[test]
fn an_encoding_from_the_project_file_is_used() {
    let repo = Repo::fixture("shop");
    repo.write(".lode.toml", "[embed]\nencoding = \"binary\"\n");
    let v = repo.json(&["index"]);
    assert!(v.get("notes").is_none(), "{v}");
    let status = repo.json(&["status"]);
    assert_eq!(
        status["vectors"]["stored"]["encoding"], "binary",
        "{status}"
    );
    let s = repo.json(&["search", "price of the cart"]);
    assert!(!s["hits"].as_array().unwrap().is_empty(), "{s}");
}

#[test]
fn a_private_endpoint_is_refused_before_any_request() {
    let repo = Repo::fixture("shop");
    ollama(&repo, "http://10.1.2.3:11434", "");
    let v = repo.json(&["index"]);
    let n = notes(&v);
    assert!(n.contains("allow_private_endpoints"), "{n}");
    assert!(n.contains("using the built-in model"), "{n}");
    assert_eq!(stored_backend(&repo), "builtin");
}

#[test]
fn doctor_says_whether_the_server_answers() {
    let repo = Repo::fixture("shop");
    let fake = Fake::start(|_| Reply::Embed(16));
    ollama(&repo, &fake.url, "");
    let v = repo.json(&["doctor"]);
    let b = backend(&v, "embedding").clone();
    assert_eq!(b["status"], "ok", "{v}");
    assert!(
        b["detail"]
            .as_str()
            .unwrap()
            .contains("ollama fake-embed at"),
        "{b}"
    );

    ollama(&repo, &refused_url(), "");
    let v = repo.json(&["doctor"]);
    let b = backend(&v, "embedding").clone();
    assert_eq!(b["status"], "fallback", "{v}");
    assert!(
        b["detail"].as_str().unwrap().contains("does not answer"),
        "{b}"
    );
}

/// `n` small files of one chunk each.
fn small_files(repo: &Repo, n: usize) {
    for i in 0..n {
        repo.write(
            &format!("src/m{i}.py"),
            format!("def step_{i}(x):\n    return x + {i}\n"),
        );
    }
}

/// The chunk texts the server was asked to embed (not probes, not queries).
fn documents(fake: &Fake, from: usize) -> Vec<String> {
    fake.seen()[from..]
        .iter()
        .flat_map(|(_, b, _)| {
            b["input"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|t| t.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_else(Vec::new)
        })
        .filter(|t| t.starts_with("src/"))
        .collect()
}

/// A server answering after `ms` milliseconds (the probe at once).
fn slow(ms: u64) -> Fake {
    Fake::start(move |r| {
        if r.n > 0 {
            std::thread::sleep(Duration::from_millis(ms));
        }
        Reply::Embed(16)
    })
}

#[test]
fn small_files_are_embedded_in_batches_that_span_files() {
    let repo = Repo::empty();
    small_files(&repo, 12);
    let fake = Fake::start(|_| Reply::Embed(16));
    ollama(&repo, &fake.url, "batch_size = 5\n");
    let v = repo.json(&["index"]);
    assert_eq!(v["chunks"], 12, "{v}");
    assert_eq!(v["embedding"]["embedded"], 12, "{v}");
    assert_eq!(v["embedding"]["pending"], 0, "{v}");
    // One probe, then ceil(12 / 5) requests, not one per file.
    let sizes: Vec<usize> = fake.seen()[1..]
        .iter()
        .map(|(_, b, _)| b["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [5, 5, 2]);
    assert_eq!(stored_backend(&repo), "ollama");
}

#[test]
fn a_query_on_a_cold_repository_answers_before_its_embedding_ends() {
    let repo = Repo::empty();
    small_files(&repo, 12);
    let fake = slow(250);
    ollama(&repo, &fake.url, "batch_size = 1\n");
    let started = std::time::Instant::now();
    let v = repo.json(&["search", "add a number to x"]);
    let took = started.elapsed();
    // 12 requests of 250 ms would be 3 s; the query embeds for about 1 s.
    let embedded = v["partial"]["embedded"]
        .as_u64()
        .unwrap_or_else(|| panic!("{v}"));
    assert!(embedded < 12, "{v}");
    assert_eq!(v["partial"]["chunks"], 12, "{v}");
    assert!(
        notes(&v).contains(&format!("partial: {embedded} of 12 chunks embedded")),
        "{v}"
    );
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v}");
    assert!(took < Duration::from_millis(2900), "{took:?}");

    // `lode index` finishes, embedding only what was missing.
    let before = fake.requests();
    let i = repo.json(&["index"]);
    assert_eq!(i["embedding"]["pending"], 0, "{i}");
    let rest = documents(&fake, before);
    assert_eq!(rest.len() as u64, 12 - embedded, "{rest:?}");
    let s = repo.json(&["search", "add a number to x"]);
    assert!(
        s.get("partial").is_none() && !notes(&s).contains("partial"),
        "{s}"
    );
}

#[test]
fn a_killed_embedding_phase_leaves_a_readable_index_that_the_next_run_completes() {
    let repo = Repo::empty();
    small_files(&repo, 12);
    let fake = slow(200);
    ollama(&repo, &fake.url, "batch_size = 2\n");
    let mut child = repo
        .command(&["index"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The probe and two batches asked: the first batch is committed.
    let started = std::time::Instant::now();
    while fake.requests() < 3 && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(child.try_wait().unwrap().is_none(), "it ended too soon");
    child.kill().unwrap();
    let _ = child.wait();

    let v = repo.json(&["search", "add a number to x", "--no-refresh"]);
    let embedded = v["partial"]["embedded"]
        .as_u64()
        .unwrap_or_else(|| panic!("{v}"));
    assert!((2..12).contains(&embedded), "{v}");
    assert!(!v["hits"].as_array().unwrap().is_empty(), "{v}");

    let before = fake.requests();
    let i = repo.json(&["index"]);
    assert_eq!(
        i["embedding"]["embedded"].as_u64(),
        Some(12 - embedded),
        "{i}"
    );
    assert_eq!(i["embedding"]["pending"], 0, "{i}");
    assert_eq!(documents(&fake, before).len() as u64, 12 - embedded);
    assert_eq!(stored_backend(&repo), "ollama");
}

#[test]
fn a_server_failing_after_some_batches_leaves_only_built_in_vectors() {
    let repo = Repo::empty();
    small_files(&repo, 12);
    // The probe and two batches answer, then the server fails for good.
    let fake = Fake::start(|r| {
        if r.n <= 2 {
            Reply::Embed(16)
        } else {
            Reply::Raw(500, "{}".into())
        }
    });
    ollama(&repo, &fake.url, "batch_size = 2\n");
    let v = repo.json(&["index"]);
    let n = notes(&v);
    assert!(n.contains("this build uses the built-in model"), "{n}");
    assert!(n.contains("HTTP 500"), "{n}");
    assert_eq!(v["embedding"]["embedded"], 12, "{v}");
    assert_eq!(v["embedding"]["pending"], 0, "{v}");
    assert_eq!(stored_backend(&repo), "builtin");
    // Every stored vector has the built-in model's size: none of the server's stayed.
    let dir = repo.index_dir();
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    let conn = lode_index::open_database(&dir.join(current.trim())).unwrap();
    let sizes: Vec<(usize, usize)> = conn
        .prepare("SELECT length(ids) / 8, length(data) FROM vectors")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(sizes.len(), 12);
    let stride = sizes[0].1 / sizes[0].0;
    assert!(stride >= 256, "built-in int8 vectors: {stride} bytes");
    assert!(sizes.iter().all(|(n, len)| len / n == stride), "{sizes:?}");
}
