//! Incremental updates, freshness, locking, rebuilds and crash safety.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::{Repo, model_copy};

#[test]
fn queries_see_edits_deletions_and_moves() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    repo.write(
        "src/shop/shipping.py",
        "def shipping_quote(weight):\n    return weight * 2\n",
    );
    assert_eq!(
        repo.search_hits("shipping_quote")[0].0,
        "src/shop/shipping.py"
    );

    // Only the changed file is parsed again.
    repo.write(
        "src/shop/shipping.py",
        "def shipping_estimate(weight):\n    return weight * 3\n",
    );
    let v = repo.json(&["index"]);
    assert_eq!(
        (v["parsed"].as_u64(), v["deleted"].as_u64()),
        (Some(1), Some(0)),
        "{v}"
    );
    assert!(
        repo.search_hits("shipping_quote")
            .iter()
            .all(|h| h.1.as_deref() != Some("shipping_quote"))
    );

    std::fs::rename(
        repo.path("src/shop/shipping.py"),
        repo.path("src/shop/ship.py"),
    )
    .unwrap();
    let hits = repo.search_hits("shipping_estimate");
    assert_eq!(hits[0].0, "src/shop/ship.py");
    assert!(hits.iter().all(|h| h.0 != "src/shop/shipping.py"));

    std::fs::remove_file(repo.path("src/shop/ship.py")).unwrap();
    assert!(
        repo.search_hits("shipping_estimate")
            .iter()
            .all(|h| h.0 != "src/shop/ship.py")
    );
    let v = repo.json(&["status"]);
    assert_eq!(v["state"], "ready");
    assert_eq!(v["stats"]["files"], 5);
}

#[test]
fn touching_a_file_without_changing_it_reparses_nothing() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let content = std::fs::read(repo.path("src/shop/cart.py")).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    repo.write("src/shop/cart.py", content);
    let v = repo.json(&["index"]);
    assert_eq!(v["parsed"], 0, "{v}");
    // The touched file was read and found the same; the rest were not read.
    assert_eq!(v["unchanged"], v["files"], "{v}");
}

#[test]
fn no_refresh_answers_from_the_index_as_it_is() {
    let repo = Repo::fixture("shop");
    let out = repo.run(&["search", "cart", "--no-refresh"]);
    assert_eq!(out.status.code(), Some(3));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no index for") && err.contains("run 'lode index' or drop --no-refresh"),
        "{err}"
    );

    repo.ok(&["index"]);
    repo.write("src/shop/late.py", "def late_arrival(): pass\n");
    let v = repo.json(&["search", "late_arrival", "--no-refresh"]);
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] != "src/shop/late.py")
    );
    assert_eq!(repo.search_hits("late_arrival")[0].0, "src/shop/late.py");
}

#[test]
fn an_index_from_another_version_is_rebuilt_with_a_note() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let dir = repo.index_dir();
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    let db = dir.join(current.trim());
    {
        let conn = lode_index::open_database(&db).unwrap();
        conn.execute_batch("UPDATE meta SET value = '0.0.1' WHERE key = 'lode_version'; UPDATE meta SET value = 'old' WHERE key = 'fingerprint';")
            .unwrap();
    }
    let out = repo.run(&["index"]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rebuilding the index: it was written by lode 0.0.1"),
        "{err}"
    );
    let new_current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    assert_ne!(new_current, current);
    assert!(!db.exists(), "the old database is removed");
    assert_eq!(
        repo.search_hits("apply_discount")[0].0,
        "src/shop/pricing.py"
    );
}

#[test]
fn an_index_of_another_schema_is_rebuilt_with_a_note_naming_both() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let dir = repo.index_dir();
    let current = std::fs::read_to_string(dir.join("CURRENT")).unwrap();
    {
        let conn = lode_index::open_database(&dir.join(current.trim())).unwrap();
        conn.execute_batch("UPDATE meta SET value = '1' WHERE key = 'schema_version';")
            .unwrap();
    }
    let out = repo.run(&["index"]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    let want = format!(
        "rebuilding the index: it was written with index schema 1, this lode uses {}",
        lode_index::SCHEMA_VERSION
    );
    assert!(err.contains(&want), "{err}");
    assert_eq!(
        repo.search_hits("apply_discount")[0].0,
        "src/shop/pricing.py"
    );
}

#[test]
fn a_corrupt_index_is_rebuilt() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let dir = repo.index_dir();
    let db = dir.join(std::fs::read_to_string(dir.join("CURRENT")).unwrap().trim());
    for ext in ["db-wal", "db-shm"] {
        let _ = std::fs::remove_file(db.with_extension(ext));
    }
    std::fs::write(
        &db,
        b"this is not a database, not even close; garbage garbage garbage",
    )
    .unwrap();
    let out = repo.run(&["search", "apply_discount", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hits"][0]["path"], "src/shop/pricing.py");
    assert!(v["notes"].to_string().contains("unreadable"), "{v}");
}

#[test]
fn an_unwritable_cache_is_one_clear_line() {
    let repo = Repo::fixture("shop");
    let blocker = repo.cache.path().join("not-a-dir");
    std::fs::write(&blocker, "x").unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_lode"))
        .args([
            "index",
            "--cache-dir",
            &blocker.join("sub").to_string_lossy(),
            &repo.root().to_string_lossy(),
        ])
        .env("XDG_CONFIG_HOME", repo.cache.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("lode: cache directory") && err.contains("not writable"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn a_second_writer_waits_for_the_first() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let lock = repo.hold_lock();
    repo.write("src/shop/waited.py", "def waited_for(): pass\n");
    let mut child = repo
        .command(&["index"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the second index must wait"
    );

    // Meanwhile a query answers from the last complete index and says so.
    let v = repo.json(&["search", "waited_for"]);
    assert!(
        v["notes"]
            .to_string()
            .contains("lode process 4242 is indexing"),
        "{v}"
    );
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["path"] != "src/shop/waited.py")
    );

    drop(lock);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("waiting for lode process 4242"));
    assert_eq!(repo.search_hits("waited_for")[0].0, "src/shop/waited.py");
}

fn write_many(repo: &Repo, files: usize, marker: &str) {
    for i in 0..files {
        let mut body = format!("\"\"\"Module {i}.\"\"\"\n\n");
        for j in 0..12 {
            body.push_str(&format!("def {marker}_{i}_{j}(value):\n    \"\"\"Helper {j} of module {i}.\"\"\"\n    return value * {j} + {i}\n\n\n"));
        }
        repo.write(&format!("pkg/m{}/mod_{i}.py", i % 40), body);
    }
}

#[test]
fn killing_an_index_midway_leaves_the_previous_index_readable() {
    let repo = Repo::empty();
    write_many(&repo, 1200, "original");
    repo.ok(&["index"]);
    let baseline = repo.search_hits("original_7_3");
    assert_eq!(baseline[0].0, "pkg/m7/mod_7.py");

    let mut killed_midway = 0;
    for (round, delay_ms) in [40u64, 150, 400, 900].into_iter().enumerate() {
        write_many(&repo, 1200, &format!("edit{round}"));
        let mut child = repo
            .command(&["index"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        std::thread::sleep(Duration::from_millis(delay_ms));
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            killed_midway += 1;
        }
        let _ = child.wait();
        // The index that was complete before still answers, unchanged or fully updated.
        let out = repo.run(&["search", "original_7_3", "--no-refresh", "--json"]);
        assert!(
            out.status.success(),
            "round {round} ({:?}): {}",
            started.elapsed(),
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            v["hits"].as_array().is_some_and(|h| !h.is_empty()),
            "round {round}: {v}"
        );
        let status = repo.json(&["status", "--no-refresh"]);
        assert!(
            status["stats"]["files"].as_u64().unwrap() == 1200,
            "round {round}: {status}"
        );
    }
    assert!(
        killed_midway >= 2,
        "the kills must land while indexing ({killed_midway})"
    );

    // The next run completes and sees the last edit.
    repo.ok(&["index"]);
    assert_eq!(repo.search_hits("edit3_7_3")[0].0, "pkg/m7/mod_7.py");
    assert!(
        repo.search_hits("original_7_3")
            .iter()
            .all(|h| h.1.as_deref() != Some("original_7_3"))
    );
}

#[test]
fn switching_the_model_rebuilds_with_a_note() {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let model = model_copy();
    let out = repo.run(&["index", "--model", &model.path().to_string_lossy()]);
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("rebuilding the index: the embedding settings changed (backend, model)"),
        "{err}"
    );
    let v = repo.json(&[
        "search",
        "monetary reductions",
        "--model",
        &model.path().to_string_lossy(),
    ]);
    assert!(
        v["hits"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .any(|h| h["path"] == "src/shop/pricing.py"),
        "{v}"
    );
}

#[test]
fn a_model_that_cannot_be_used_falls_back_to_the_built_in_one() {
    let repo = Repo::fixture("shop");
    let missing = repo.cache.path().join("no-such-model");
    let corrupt = model_copy();
    std::fs::write(
        corrupt.path().join("model.safetensors"),
        b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all",
    )
    .unwrap();
    let wrong_dim = model_copy();
    let config = std::fs::read_to_string(wrong_dim.path().join("config.json")).unwrap();
    let config = config.replace("\"hidden_dim\": 256", "\"hidden_dim\": 384");
    assert!(
        config.contains("384"),
        "the fixture's config names hidden_dim: {config}"
    );
    std::fs::write(wrong_dim.path().join("config.json"), config).unwrap();
    for dir in [missing.as_path(), corrupt.path(), wrong_dim.path()] {
        let out = repo.run(&[
            "search",
            "apply_discount",
            "--model",
            &dir.to_string_lossy(),
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8(out.stderr).unwrap();
        let note: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("model not used"))
            .collect();
        assert_eq!(note.len(), 1, "{err}");
        assert!(
            note[0].contains("using the built-in model")
                && note[0].contains(&*dir.to_string_lossy()),
            "{err}"
        );
        assert!(
            String::from_utf8(out.stdout)
                .unwrap()
                .starts_with("src/shop/pricing.py:")
        );
    }
}

/// A shard exported from one checkout and imported into another answers
/// there without parsing any file again; a damaged one is refused.
#[test]
fn a_shard_carries_an_index_to_another_checkout() {
    let built = Repo::fixture("shop");
    let shards = tempfile::tempdir().unwrap();
    let out = built.ok(&["shard", "export", shards.path().to_str().unwrap(), "--json"]);
    let info: serde_json::Value = serde_json::from_str(&out).unwrap();
    let file = info["path"].as_str().unwrap().to_string();
    assert!(file.ends_with(&format!("{}.lodeshard", info["hash"].as_str().unwrap())));

    let other = Repo::fixture("shop");
    other.ok(&["shard", "import", &file]);
    let report: serde_json::Value = serde_json::from_str(&other.ok(&["index", "--json"])).unwrap();
    assert_eq!(report["parsed"], 0, "{report}");
    assert!(
        other
            .ok(&["search", "Cart"])
            .starts_with("src/shop/cart.py:8-27  class Cart")
    );

    let mut bytes = std::fs::read(&file).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&file, bytes).unwrap();
    let out = other.run(&["shard", "import", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("damaged"));
}
