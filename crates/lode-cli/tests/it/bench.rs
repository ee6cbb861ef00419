//! `lode bench learn` and `lode bench swebench` on pairs mined from a small repository's history.

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use crate::common::Repo;

const SOURCE: &str = "import os


def parse_config(path):
    \"\"\"Reads the configuration file.\"\"\"
    with open(path) as f:
        return f.read()


def render_table(rows):
    \"\"\"Formats rows as a text table.\"\"\"
    return \"\\n\".join(\" | \".join(r) for r in rows)


def send_mail(to, body):
    \"\"\"Sends a mail message.\"\"\"
    return (to, body)
";

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A mirror `MIRRORS/o+r/repo` of one commit holding `src/mail.py`, and its commit.
fn mirror(repo: &Repo, mirrors: &Path) -> String {
    repo.write("src/mail.py", SOURCE);
    git(repo.root(), &["init", "-q"]);
    git(repo.root(), &["add", "."]);
    git(repo.root(), &["commit", "-q", "-m", "start"]);
    let bare = mirrors.join("o+r").join("repo");
    std::fs::create_dir_all(bare.parent().unwrap()).unwrap();
    git(
        mirrors,
        &[
            "clone",
            "-q",
            "--bare",
            repo.root().to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    git(repo.root(), &["rev-parse", "HEAD"])
}

fn pair(id: &str, commit: &str, query: &str, lines: Value) -> String {
    json!({
        "instance_id": id, "language": "python", "repo": "o/r", "base_commit": commit,
        "query": query, "gold_code_files": ["src/mail.py"],
        "gold_lines": {"src/mail.py": lines},
    })
    .to_string()
}

#[test]
fn the_chunk_learner_labels_the_chunks_a_commit_changed() {
    let repo = Repo::empty();
    let mirrors = tempfile::tempdir().unwrap();
    let commit = mirror(&repo, mirrors.path());
    let cases = [
        pair(
            "o__r-1",
            &commit,
            "Format the rows of a text table with aligned columns",
            json!([[12, 12]]),
        ),
        pair(
            "o__r-2",
            &commit,
            "Read the configuration file from the working directory",
            json!([[6, 7]]),
        ),
        // Only the import block changed: no symbol to find, the file is left out.
        pair(
            "o__r-3",
            &commit,
            "Import the os module for the configuration paths",
            json!([[1, 1]]),
        ),
    ];
    repo.write("pairs.jsonl", cases.join("\n"));
    let v = repo.json(&[
        "bench",
        "learn",
        "--chunks",
        "--rounds",
        "1",
        "--mirrors",
        mirrors.path().to_str().unwrap(),
        "--cases",
        repo.path("pairs.jsonl").to_str().unwrap(),
        "--work",
        repo.path("work").to_str().unwrap(),
    ]);
    let data = &v;
    let defaults = &data["scores"]["train"]["defaults"];
    assert_eq!(defaults["queries"], 2, "{v}");
    // Each task's words lead to the function its lines fall in.
    assert_eq!(defaults["recall_at_1"], 1.0, "{v}");
    assert_eq!(data["names"][6], "callee");
    assert_eq!(data["names"][7], "callable");
    assert_eq!(data["names"][9], "unnamed");
    // Two files' chunks are too few to show a trace frame: its weight is kept.
    assert!(
        data["held"]
            .as_array()
            .unwrap()
            .contains(&json!("named_line")),
        "{v}"
    );
    assert_eq!(data["learned"][2], data["defaults"][2]);
}

/// A repository mirrored with one pair asking for `query`, in `pairs.jsonl`.
fn one_pair(query: &str) -> (Repo, tempfile::TempDir) {
    let repo = Repo::empty();
    let mirrors = tempfile::tempdir().unwrap();
    let commit = mirror(&repo, mirrors.path());
    repo.write(
        "pairs.jsonl",
        pair("o__r-1", &commit, query, json!([[12, 12]])),
    );
    (repo, mirrors)
}

/// `bench swebench` in task mode over [`one_pair`]'s case, then `extra`.
fn swebench_args(repo: &Repo, mirrors: &Path, extra: &[&str]) -> Vec<String> {
    let mirrors = mirrors.to_string_lossy().into_owned();
    let cases = repo.path("pairs.jsonl").to_string_lossy().into_owned();
    let head = ["bench", "swebench", "--rankings", "lode-task", "--mirrors"];
    (head.iter().copied())
        .chain([mirrors.as_str(), "--cases", cases.as_str()])
        .chain(extra.iter().copied())
        .map(String::from)
        .collect()
}

fn strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
fn the_swebench_bench_builds_with_the_model_it_is_given() {
    let (repo, mirrors) = one_pair("Format the rows of a text table");
    let model = crate::common::model_copy();
    let run = |extra: &[&str]| repo.json(&strs(&swebench_args(&repo, mirrors.path(), extra)));
    let builtin = run(&[]);
    assert!(
        builtin["model"].as_str().unwrap().starts_with("builtin-"),
        "{builtin}"
    );
    let local = run(&["--model", model.path().to_str().unwrap()]);
    assert!(
        local["model"].as_str().unwrap().starts_with("model2vec-"),
        "{local}"
    );
    assert_eq!(
        local["scores"]["lode-task"][""]["recall_at_1"], 1.0,
        "{local}"
    );
}

#[test]
fn the_swebench_bench_scores_a_pairs_changed_lines_and_its_language() {
    // Line 12 is in `render_table`, which the task's words name.
    let (repo, mirrors) = one_pair("Format the rows of a text table");
    let v = repo.json(&strs(&swebench_args(&repo, mirrors.path(), &[])));
    let all = &v["scores"]["lode-task"][""];
    assert_eq!(all["function_cases"], 1, "{v}");
    assert_eq!(all["function_hit_at_5"], 1.0, "{v}");
    let python = &v["by_language"]["lode-task"]["python"];
    assert_eq!(python["cases"], 1, "{v}");
    assert_eq!(python["recall_at_1"], all["recall_at_1"], "{v}");
}

#[test]
fn a_bench_of_a_model_that_does_not_load_fails_instead_of_measuring_another() {
    let (repo, mirrors) = one_pair("Format a text table");
    let missing = repo.path("no-such-model");
    let args = swebench_args(
        &repo,
        mirrors.path(),
        &["--model", missing.to_str().unwrap()],
    );
    let out = repo.run(&strs(&args));
    assert_eq!(out.status.code(), Some(6));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("no-such-model") && err.lines().count() == 1,
        "{err}"
    );
    assert!(out.stdout.is_empty());
}
