//! The endpoint embedders against a fake server: shapes, batching, retries,
//! the deadline, and every way a reply can be unusable.

use std::time::{Duration, Instant};

use lode_embed::remote::{Protocol, RemoteEmbedder, RemoteOptions};
use lode_embed::{Embedder, Error};
use lode_test_support::fake_embed::{Fake, Reply, vector};
use lode_test_support::refused_url;

fn options(protocol: Protocol, url: &str) -> RemoteOptions {
    let mut o = RemoteOptions::new(protocol, url, "test-model");
    o.deadline = Duration::from_secs(5);
    o
}

fn reason(e: Error) -> String {
    match e {
        Error::Remote { reason, .. } => reason,
        other => panic!("not a remote error: {other}"),
    }
}

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    v.iter_mut().for_each(|x| *x /= n);
    v
}

#[test]
fn both_protocols_embed_in_order_and_normalised() {
    for protocol in [Protocol::OpenAi, Protocol::Ollama] {
        let fake = Fake::start(|_| Reply::Embed(8));
        let e = RemoteEmbedder::connect(options(protocol, &fake.url)).unwrap();
        assert_eq!(e.dim(), 8);
        assert_eq!(e.id(), format!("{}:test-model", protocol.name()));
        let texts = ["parse config", "open the file", "zz"];
        let rows = e.embed(&texts).unwrap();
        assert_eq!(rows.len(), 3 * 8);
        for (i, t) in texts.iter().enumerate() {
            let want = unit(vector(t, 8));
            for (a, b) in rows[i * 8..(i + 1) * 8].iter().zip(&want) {
                assert!((a - b).abs() < 1e-6, "{protocol:?} row {i}");
            }
        }
        let seen = fake.seen();
        let path = if protocol == Protocol::Ollama {
            "/api/embed"
        } else {
            "/v1/embeddings"
        };
        assert!(
            seen.iter()
                .all(|(p, b, _)| p == path && b["model"] == "test-model")
        );
    }
}

#[test]
fn texts_go_out_in_batches() {
    let fake = Fake::start(|_| Reply::Embed(4));
    let mut o = options(Protocol::OpenAi, &fake.url);
    o.batch_size = 2;
    let e = RemoteEmbedder::connect(o).unwrap();
    let texts: Vec<String> = (0..5).map(|i| format!("text {i}")).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    assert_eq!(e.embed(&refs).unwrap().len(), 5 * 4);
    let sizes: Vec<usize> = fake
        .seen()
        .iter()
        .map(|(_, b, _)| b["input"].as_array().unwrap().len())
        .collect();
    assert_eq!(sizes, [1, 2, 2, 1], "the probe, then batches of 2");
}

#[test]
fn a_server_error_is_retried() {
    // Request 0 is the probe; the first real batch meets a 500, then succeeds.
    let fake = Fake::start(|r| {
        if r.n == 1 {
            Reply::Raw(500, "{\"error\":\"busy\"}".into())
        } else {
            Reply::Embed(4)
        }
    });
    let e = RemoteEmbedder::connect(options(Protocol::Ollama, &fake.url)).unwrap();
    assert_eq!(e.embed(&["a b"]).unwrap().len(), 4);
    assert_eq!(fake.requests(), 3);
}

#[test]
fn retries_are_bounded() {
    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(4)
        } else {
            Reply::Raw(503, String::new())
        }
    });
    let e = RemoteEmbedder::connect(options(Protocol::OpenAi, &fake.url)).unwrap();
    let why = reason(e.embed(&["x"]).unwrap_err());
    assert!(why.contains("HTTP 503") && why.contains("3 tries"), "{why}");
    assert_eq!(fake.requests(), 1 + 3);
}

#[test]
fn a_client_error_is_not_retried() {
    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(4)
        } else {
            Reply::Raw(401, "{\"error\":\"secret detail\"}".into())
        }
    });
    let e = RemoteEmbedder::connect(options(Protocol::OpenAi, &fake.url)).unwrap();
    let why = reason(e.embed(&["x"]).unwrap_err());
    assert_eq!(why, "HTTP 401");
    assert_eq!(fake.requests(), 2);
}

#[test]
fn a_hanging_server_meets_the_deadline() {
    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(4)
        } else {
            Reply::Hang(Duration::from_secs(30))
        }
    });
    let mut o = options(Protocol::OpenAi, &fake.url);
    o.deadline = Duration::from_millis(300);
    let e = RemoteEmbedder::connect(o).unwrap();
    let started = Instant::now();
    let why = reason(e.embed(&["x"]).unwrap_err());
    assert!(
        why.contains("timed out") || why.contains("deadline"),
        "{why}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn garbage_is_refused_without_quoting_it() {
    for body in [
        "<html>secret page</html>",
        "{\"data\": \"secret\"}",
        "{\"data\": [{\"embedding\": [1, \"secret\", 3, 4]}]}",
    ] {
        let body = body.to_string();
        let fake = Fake::start(move |r| {
            if r.n == 0 {
                Reply::Embed(4)
            } else {
                Reply::Raw(200, body.clone())
            }
        });
        let e = RemoteEmbedder::connect(options(Protocol::OpenAi, &fake.url)).unwrap();
        let err = e.embed(&["x"]).unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
        assert_eq!(fake.requests(), 2, "garbage is not retried: {err}");
    }
}

#[test]
fn a_wrong_dimension_or_count_is_refused() {
    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(8)
        } else {
            Reply::Embed(6)
        }
    });
    let e = RemoteEmbedder::connect(options(Protocol::Ollama, &fake.url)).unwrap();
    let why = reason(e.embed(&["x"]).unwrap_err());
    assert!(why.contains("6 dimensions, the model had 8"), "{why}");

    let fake = Fake::start(|r| {
        if r.n == 0 {
            Reply::Embed(4)
        } else {
            Reply::Raw(200, "{\"embeddings\": [[1, 0, 0, 0]]}".into())
        }
    });
    let e = RemoteEmbedder::connect(options(Protocol::Ollama, &fake.url)).unwrap();
    let why = reason(e.embed(&["x", "y"]).unwrap_err());
    assert!(why.contains("1 embeddings for 2 texts"), "{why}");
}

#[test]
fn a_refused_connection_fails_the_connect() {
    let mut o = options(Protocol::Ollama, &refused_url());
    o.deadline = Duration::from_secs(3);
    let started = Instant::now();
    let err = RemoteEmbedder::connect(o).unwrap_err();
    assert!(reason(err).contains("after 3 tries"));
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn redirects_are_not_followed_and_keys_are_sent() {
    let target = Fake::start(|_| Reply::Embed(4));
    let location = format!("{}/v1/embeddings", target.url);
    let fake = Fake::start(move |_| Reply::Raw(307, format!("{{\"location\": \"{location}\"}}")));
    let err = RemoteEmbedder::connect(options(Protocol::OpenAi, &fake.url)).unwrap_err();
    assert!(reason(err).contains("HTTP 307 (redirects are not followed)"));
    assert_eq!(target.requests(), 0);

    let fake = Fake::start(|_| Reply::Embed(4));
    // SAFETY (edition 2024): this test binary sets no other variable.
    unsafe { std::env::set_var("LODE_TEST_EMBED_KEY", "k-123") };
    let mut o = options(Protocol::OpenAi, &fake.url);
    o.api_key_env = Some("LODE_TEST_EMBED_KEY".into());
    RemoteEmbedder::connect(o).unwrap();
    let headers = &fake.seen()[0].2;
    assert!(
        headers
            .iter()
            .any(|h| h == "authorization: Bearer k-123" || h == "Authorization: Bearer k-123"),
        "{headers:?}"
    );
    let mut o = options(Protocol::OpenAi, &fake.url);
    o.api_key_env = Some("LODE_TEST_UNSET_KEY".into());
    let why = reason(RemoteEmbedder::connect(o).unwrap_err());
    assert!(why.contains("$LODE_TEST_UNSET_KEY"), "{why}");
}
