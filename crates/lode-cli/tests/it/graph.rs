//! The graph commands end to end: `callers`, `show`, `map`, `outline DIR`.

use crate::common::Repo;
use serde_json::Value;

/// A small Python project with a known call graph.
fn project() -> Repo {
    let repo = Repo::empty();
    repo.write(
        "app/util.py",
        "def helper(x):\n    \"\"\"Doubles x.\"\"\"\n    return x * 2\n\n\ndef load():\n    return 1\n",
    );
    repo.write(
        "app/run.py",
        "import json\n\nfrom app.util import helper\n\n\ndef run(items):\n    a = helper(1)\n    b = helper(2)\n    print(json.dumps([a, b]))\n    return a + b\n\n\nclass Worker:\n    def go(self):\n        return run([])\n\n\ndef poke(w):\n    return w.go()\n\n\nhelper(3)\n",
    );
    repo.write(
        "app/cycle.py",
        "def ping(n):\n    return pong(n - 1)\n\n\ndef pong(n):\n    return ping(n - 1)\n\n\ndef fact(n):\n    return 1 if n == 0 else n * fact(n - 1)\n",
    );
    repo.write("app/other.py", "def load():\n    return 2\n");
    repo.write(
        "main.py",
        "from app.run import run\n\n\ndef main():\n    run([1, 2])\n",
    );
    repo
}

fn names(nodes: &Value) -> Vec<String> {
    nodes
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            n["symbol"]["name"]
                .as_str()
                .unwrap_or("(top level)")
                .to_string()
        })
        .collect()
}

#[test]
fn callers_list_every_call_site_and_the_top_level() {
    let repo = project();
    let v = repo.json(&["callers", "helper"]);
    let kids = &v["children"];
    assert_eq!(names(kids), ["(top level)", "run"], "{v}");
    let run = &kids[1];
    let sites: Vec<u64> = run["sites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["line"].as_u64().unwrap())
        .collect();
    assert_eq!(sites, [7, 8], "every call site, not only the first: {v}");
    assert_eq!(run["resolution"], "import");
    assert_eq!(kids[0]["sites"][0]["line"], 22);

    // Text: one line per caller with its sites.
    let text = repo.ok(&["callers", "helper"]);
    assert!(
        text.contains("function run  app/run.py:6-10  at app/run.py:7, app/run.py:8"),
        "{text}"
    );
}

#[test]
fn callers_grow_to_a_depth_and_mark_cycles() {
    let repo = project();
    let v = repo.json(&["callers", "helper", "--depth", "3"]);
    let run = &v["children"][1];
    // Ordered by location.
    assert_eq!(names(&run["children"]), ["go", "main"], "{v}");
    let go = &run["children"][0];
    assert_eq!(go["symbol"]["container"], "class Worker");
    assert_eq!(names(&go["children"]), ["poke"], "{v}");
    // `w.go()` on an untyped parameter: only the name matched.
    assert_eq!(go["children"][0]["resolution"], "name", "{v}");
    let text = repo.ok(&["callers", "helper", "--depth", "3"]);
    assert!(text.contains("at app/run.py:19 ~"), "{text}");

    let v = repo.json(&["callers", "ping", "--depth", "4"]);
    let pong = &v["children"][0];
    assert_eq!(pong["symbol"]["name"], "pong", "{v}");
    let again = &pong["children"][0];
    assert_eq!(again["symbol"]["name"], "ping");
    assert_eq!(again["cycle"], true, "a cycle is shown once: {v}");
    assert!(
        again
            .get("children")
            .unwrap()
            .as_array()
            .unwrap()
            .is_empty()
    );

    let v = repo.json(&["callers", "fact"]);
    assert_eq!(v["children"][0]["symbol"]["name"], "fact");
    assert_eq!(v["children"][0]["cycle"], true, "recursion: {v}");
}

#[test]
fn callees_name_what_is_outside_the_repository() {
    let repo = project();
    let v = repo.json(&["callers", "run", "--direction", "out"]);
    assert_eq!(names(&v["children"]), ["helper"], "{v}");
    let external: Vec<&str> = v["external"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    assert_eq!(external, ["json.dumps", "print"], "{v}");
}

#[test]
fn ambiguous_names_list_the_candidates() {
    let repo = project();
    let out = repo.run(&["callers", "load"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("2 symbols are named load"), "{err}");
    assert!(
        err.contains("app/util.py:6-7") && err.contains("app/other.py:1-2"),
        "{err}"
    );
    let v = repo.json(&["show", "load"]);
    assert_eq!(v["error"]["code"], "lode.ambiguous", "{v}");
    // --path or a qualified name picks one.
    let v = repo.json(&["show", "load", "--path", "app/other.py"]);
    assert_eq!(v["symbol"]["path"], "app/other.py", "{v}");
    let v = repo.json(&["show", "util.load"]);
    assert_eq!(v["symbol"]["path"], "app/util.py", "{v}");
    let v = repo.json(&["show", "Worker::go"]);
    assert_eq!(v["symbol"]["name"], "go", "{v}");
}

#[test]
fn show_prints_the_body_with_numbers_and_the_call_graph() {
    let repo = project();
    let text = repo.ok(&["show", "helper"]);
    assert!(
        text.starts_with("function helper  app/util.py:1-3"),
        "{text}"
    );
    // The docstring is in the body: shown once, with its line number.
    assert_eq!(text.matches("Doubles x.").count(), 1, "{text}");
    assert!(text.contains("2      \"\"\"Doubles x.\"\"\""), "{text}");
    assert!(text.contains("3      return x * 2"), "{text}");

    let v = repo.json(&["show", "run", "--callgraph"]);
    assert_eq!(v["lines"].as_array().unwrap().len(), 5, "{v}");
    let callers: Vec<&str> = v["callers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(callers, ["go", "main"], "{v}");
    assert_eq!(v["callees"][0]["name"], "helper");
    assert_eq!(v["callees"][0]["site"], "app/run.py:7");

    // FILE:LINE names the innermost symbol there.
    let v = repo.json(&["show", "app/run.py:14"]);
    assert_eq!(v["symbol"]["name"], "go", "{v}");
    let v = repo.json(&["show", "nosuch"]);
    assert_eq!(v["error"]["code"], "lode.not_found", "{v}");
}

#[test]
fn a_deleted_symbol_is_gone_from_the_graph() {
    let repo = project();
    assert_eq!(
        repo.json(&["callers", "helper"])["children"][1]["symbol"]["name"],
        "run"
    );
    repo.write("app/util.py", "def load():\n    return 1\n");
    let v = repo.json(&["callers", "helper"]);
    assert_eq!(v["error"]["code"], "lode.not_found", "{v}");
    let v = repo.json(&["callers", "run", "--direction", "out"]);
    assert!(
        v["children"].as_array().unwrap().is_empty(),
        "helper no longer exists: {v}"
    );
}

#[test]
fn the_map_fits_its_budget() {
    let repo = project();
    let v = repo.json(&["map"]);
    let text = v["text"].as_str().unwrap();
    assert!(v["estimated_tokens"].as_u64().unwrap() <= 1000);
    assert!(text.contains("main.py:4  main"), "entry point: {text}");
    assert!(text.contains("function helper"), "central symbol: {text}");
    let small = repo.json(&["map", "--max-tokens", "40"]);
    assert!(small["estimated_tokens"].as_u64().unwrap() <= 40, "{small}");
    assert!(small["omitted"].as_u64().unwrap() > 0, "{small}");
}

#[test]
fn outline_of_a_directory_is_compact_and_capped() {
    let repo = project();
    let text = repo.ok(&["outline", "app"]);
    assert!(
        text.contains("app/run.py\n  function run L6\n  class Worker L13\n    method go L14\n"),
        "{text}"
    );
    assert!(
        !text.contains("main.py"),
        "only under the directory: {text}"
    );
    let v = repo.json(&["outline", "app", "--max-symbols", "3"]);
    assert!(v["omitted_symbols"].as_u64().unwrap() > 0, "{v}");
    let text = repo.ok(&["outline", "app", "--max-symbols", "3"]);
    assert!(text.contains("more symbols in"), "{text}");
}

#[test]
fn a_query_during_an_update_answers_from_the_last_complete_index() {
    let repo = project();
    repo.ok(&["index"]);
    let lock = repo.hold_lock();
    repo.write(
        "app/late.py",
        "from app.util import helper\n\n\ndef late():\n    return helper(9)\n",
    );
    let mut writer = repo
        .command(&["index"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The graph seen meanwhile is the committed one, whole: no `late` yet.
    let v = repo.json(&["callers", "helper"]);
    assert_eq!(names(&v["children"]), ["(top level)", "run"], "{v}");
    assert!(v["notes"].to_string().contains("is indexing"), "{v}");
    drop(lock);
    assert!(writer.wait().unwrap().success());
    let v = repo.json(&["callers", "helper"]);
    assert_eq!(names(&v["children"]), ["late", "(top level)", "run"], "{v}");
}

/// Six types share `wait`; `drain` calls it on an expression whose type the
/// syntax does not show, and `Pool::wait` once through `self`.
fn crowded() -> Repo {
    let repo = Repo::empty();
    let mut types = String::new();
    for t in ["Pool", "Queue", "Timer", "Latch", "Gate", "Barrier"] {
        types.push_str(&format!(
            "pub struct {t};\n\nimpl {t} {{\n    pub fn wait(&self) -> u32 {{\n        1\n    }}\n}}\n\n"
        ));
    }
    repo.write("src/kinds.rs", types);
    repo.write(
        "src/lib.rs",
        "mod kinds;\n\npub fn drain() -> u32 {\n    let n = make().wait();\n    n + finish()\n}\n\nfn finish() -> u32 {\n    2\n}\n\nfn make() -> kinds::Pool {\n    kinds::Pool\n}\n",
    );
    repo
}

#[test]
fn a_name_many_definitions_share_is_one_summary_line_not_an_edge_each() {
    let repo = crowded();
    let v = repo.json(&["callers", "drain", "--direction", "out"]);
    assert_eq!(names(&v["children"]), ["finish", "make"], "{v}");
    assert_eq!(v["crowded"][0]["name"], "wait", "{v}");
    assert_eq!(v["crowded"][0]["definitions"], 6, "{v}");
    assert_eq!(v["crowded"][0]["sites"][0]["line"], 4, "{v}");
    let text = repo.ok(&["callers", "drain", "--direction", "out"]);
    assert!(
        text.contains("+6 name-only matches not followed: wait (6 definitions) at src/lib.rs:4"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 4, "{text}");

    let text = repo.ok(&["show", "drain", "--callgraph"]);
    assert!(text.contains("+6 name-only matches not followed"), "{text}");
    assert!(!text.contains("Timer::wait"), "{text}");

    // Who calls Pool::wait: no name-only caller, but the crowded site is said.
    let out = repo.run(&["callers", "Pool::wait"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "no caller: {text}");
    assert!(text.contains("(none found)"), "{text}");
    assert!(
        text.contains("+1 call sites that may call it by name, among others: wait (6 definitions) at src/lib.rs:4"),
        "{text}"
    );
}

#[test]
fn show_at_a_line_no_symbol_encloses_gives_the_lines_around_it() {
    let repo = project();
    let v = repo.json(&["show", "app/run.py:22"]);
    assert_eq!(v["symbol"]["kind"], "lines", "{v}");
    assert_eq!(v["symbol"]["start_line"], 12, "{v}");
    assert_eq!(v["symbol"]["end_line"], 22, "{v}");
    assert_eq!(v["lines"].as_array().unwrap().last().unwrap(), "helper(3)");
    let text = repo.ok(&["show", "app/run.py:22"]);
    assert!(
        text.starts_with("lines app/run.py:22  app/run.py:12-22\n"),
        "{text}"
    );
    // Past the end, or in a file not indexed: not found, as before.
    assert_eq!(repo.run(&["show", "app/run.py:99"]).status.code(), Some(2));
    repo.write("notes.bin", [0u8, 1, 2]);
    assert_eq!(repo.run(&["show", "notes.bin:1"]).status.code(), Some(2));
}

/// The graph files in the index directory.
fn graph_files(repo: &Repo) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(repo.index_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("graph-")
        })
        .collect()
}

/// The whole graph is kept for the index's state: the next process reads
/// it, a damaged one is built again, and an edit makes a new one.
#[test]
fn the_whole_graph_is_kept_per_index_state() {
    let repo = project();
    let first = repo.ok(&["map"]);
    let files = graph_files(&repo);
    assert_eq!(files.len(), 1, "{files:?}");
    // Read back: the same map.
    assert_eq!(repo.ok(&["map"]), first);
    // Damaged: not trusted, built again, the same map.
    let mut bytes = std::fs::read(&files[0]).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    std::fs::write(&files[0], bytes).unwrap();
    assert_eq!(repo.ok(&["map"]), first);
    // A new state: a new file, the old one gone, and the map sees the edit.
    repo.write(
        "app/more.py",
        "from app.util import load\n\n\ndef a():\n    return load()\n\n\ndef b():\n    return load() + load()\n\n\ndef c():\n    return load()\n",
    );
    let after = repo.ok(&["map"]);
    assert_ne!(after, first);
    let now = graph_files(&repo);
    assert_eq!(now.len(), 1, "{now:?}");
    assert_ne!(now, files);
}
