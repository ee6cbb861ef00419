//! `--model hf:ORG/NAME`: downloaded once into the cache from a local server
//! (`LODE_HF_ENDPOINT`) that serves the built-in model's files; a 404, a
//! truncated body and a refused connection each fail with one line naming
//! the manual way, and exit status 6.

use std::path::Path;

use crate::common::Repo;
use lode_test_support::fake_embed::{Fake, Reply};
use lode_test_support::refused_url;

fn model_file(name: &str) -> Vec<u8> {
    std::fs::read(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../lode-embed/model")
            .join(name),
    )
    .unwrap()
}

/// A hub serving the built-in model as `test/mini`, with `broken` deciding
/// what to do instead for the model file.
fn hub(broken: fn(Vec<u8>) -> Reply) -> Fake {
    Fake::start(move |r| {
        let Some(file) = r.path.strip_prefix("/test/mini/resolve/main/") else {
            return Reply::Raw(404, "{}".into());
        };
        let bytes = model_file(file);
        if file == "model.safetensors" {
            broken(bytes)
        } else {
            Reply::Bytes(bytes)
        }
    })
}

fn search_with_hub(repo: &Repo, endpoint: &str) -> std::process::Output {
    repo.command(&["search", "cart total", "--model", "hf:test/mini"])
        .env("LODE_HF_ENDPOINT", endpoint)
        .output()
        .unwrap()
}

#[test]
fn a_hub_model_is_downloaded_once_and_used() {
    let repo = Repo::fixture("shop");
    let fake = hub(Reply::Bytes);
    let out = search_with_hub(&repo, &fake.url);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fake.requests(), 3);
    let dir = repo.cache.path().join("models/test/mini");
    for f in ["config.json", "model.safetensors", "tokenizer.json"] {
        assert_eq!(std::fs::read(dir.join(f)).unwrap(), model_file(f), "{f}");
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    let status = repo.json(&["status", "--model", "hf:test/mini"]);
    assert_eq!(status["vectors"]["stored"]["backend"], "local", "{status}");
    assert_eq!(status["vectors"]["action"], "none", "{status}");

    // Second time: from the cache, even with the hub gone.
    let out = search_with_hub(&repo, &refused_url());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(fake.requests(), 3);
}

fn assert_download_fails(repo: &Repo, endpoint: &str, cause: &str) {
    let out = search_with_hub(repo, endpoint);
    assert_eq!(out.status.code(), Some(6));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    let dir = repo.cache.path().join("models/test/mini");
    assert!(err.contains(cause), "expected {cause:?}: {err}");
    assert!(
        err.contains(&format!("into {}, or pass --model DIR", dir.display())),
        "{err}"
    );
    // Nothing that looks like a model was left behind.
    assert!(!dir.join("model.safetensors").exists());
    let json = repo
        .command(&["search", "x", "--model", "hf:test/mini", "--json"])
        .env("LODE_HF_ENDPOINT", endpoint)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["error"]["code"], "lode.model_unavailable", "{v}");
}

#[test]
fn a_missing_model_fails_with_the_manual_way() {
    let repo = Repo::fixture("shop");
    let fake = hub(|_| Reply::Raw(404, "{}".into()));
    assert_download_fails(&repo, &fake.url, "HTTP 404");
}

#[test]
fn a_truncated_download_leaves_nothing() {
    let repo = Repo::fixture("shop");
    let fake = hub(Reply::Truncated);
    let out = search_with_hub(&repo, &fake.url);
    assert_eq!(out.status.code(), Some(6));
    // The body ends early: the read fails, naming the file's URL.
    assert_download_fails(&repo, &fake.url, "resolve/main/model.safetensors: ");
}

#[test]
fn an_unreachable_hub_fails_with_the_manual_way() {
    let repo = Repo::fixture("shop");
    assert_download_fails(&repo, &refused_url(), "cannot download hf:test/mini");
}

#[test]
fn a_bad_hub_name_is_a_config_error() {
    let repo = Repo::fixture("shop");
    let out = repo.run(&["search", "x", "--model", "hf:../etc"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("expected hf:ORG/NAME"));
}
