//! `lode doctor`: where each setting came from, the index state, backends, suggestions.

use crate::common::{Repo, backend};
use serde_json::Value;

fn user_config(repo: &Repo, text: &str) {
    let dir = repo.cache.path().join("config/lode");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.toml"), text).unwrap();
}

fn setting<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("no setting {key}: {v}"))
}

fn suggestions(v: &Value) -> String {
    v["suggestions"].to_string()
}

#[test]
fn doctor_follows_the_index_from_absent_to_stale() {
    let repo = Repo::fixture("shop");
    let v = repo.json(&["doctor"]);
    assert_eq!(v["state"], "absent", "{v}");
    assert!(suggestions(&v).contains("run 'lode index'"), "{v}");
    repo.ok(&["index"]);
    let v = repo.json(&["doctor"]);
    assert_eq!(v["state"], "ready", "{v}");
    assert_eq!(v["suggestions"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(backend(&v, "embedding")["status"], "ok");
    let text = repo.ok(&["doctor"]);
    assert!(text.contains("nothing to do"), "{text}");
    // doctor looks; it does not refresh.
    repo.write("src/shop/new.py", "def added(): pass\n");
    let v = repo.json(&["doctor"]);
    assert_eq!(v["state"], "stale", "{v}");
    assert!(
        suggestions(&v).contains("refreshes on the next query"),
        "{v}"
    );
}

#[test]
fn doctor_names_the_file_that_set_each_value() {
    let repo = Repo::fixture("shop");
    user_config(&repo, "[files]\nmax_file_size = 500000\nmax_files = 9000\n");
    repo.write(
        ".lode.toml",
        "[files]\nmax_files = 100\n[gather]\nendpoint = \"http://127.0.0.1:9\"\n",
    );
    let v = repo.json(&["doctor"]);
    assert_eq!(setting(&v, "files.max_file_size")["source"], "user", "{v}");
    assert_eq!(setting(&v, "files.max_file_size")["value"], 500000);
    assert_eq!(setting(&v, "files.max_files")["source"], "project", "{v}");
    assert_eq!(setting(&v, "files.max_files")["value"], 100);
    assert_eq!(setting(&v, "files.hidden")["source"], "default", "{v}");
    assert_eq!(v["project_config_exists"], true);
    // The project may not choose an endpoint: ignored, and said.
    assert!(
        suggestions(&v).contains("ignored gather.endpoint in .lode.toml"),
        "{v}"
    );
}

#[test]
fn doctor_reports_backends_that_fall_back() {
    let repo = Repo::fixture("shop");
    let url = lode_test_support::refused_url();
    user_config(
        &repo,
        &format!("[gather]\ndecision = \"endpoint\"\nendpoint = \"{url}\"\n"),
    );
    let v = repo.json(&["doctor"]);
    let g = backend(&v, "gather decision model");
    assert_eq!(g["status"], "fallback", "{v}");
    assert!(
        g["detail"].as_str().unwrap().contains("does not answer"),
        "{v}"
    );

    user_config(
        &repo,
        "[gather]\ndecision = \"endpoint\"\nendpoint = \"http://10.1.2.3:8080\"\n",
    );
    let v = repo.json(&["doctor"]);
    let g = backend(&v, "gather decision model");
    assert!(
        g["detail"]
            .as_str()
            .unwrap()
            .contains("allow_private_endpoints"),
        "{v}"
    );

    let v = repo.json(&["doctor", "--model", "/no/such/model"]);
    assert_eq!(backend(&v, "embedding")["status"], "fallback", "{v}");
    assert!(suggestions(&v).contains("/no/such/model"), "{v}");
}

/// A config file lode cannot read stops every command but doctor, which
/// diagnoses it.
#[test]
fn doctor_diagnoses_a_broken_project_config() {
    let repo = Repo::fixture("shop");
    repo.write(".lode.toml", "[files\nexclude = 3\n");
    let out = repo.run(&["search", "cart"]);
    assert_eq!(out.status.code(), Some(2));
    let out = repo.run(&["doctor"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(".lode.toml"), "{text}");
    assert!(
        text.contains("every other command refuses to run"),
        "{text}"
    );
    let v = repo.json(&["doctor"]);
    assert_eq!(v["config_errors"].as_array().unwrap().len(), 1, "{v}");
}
