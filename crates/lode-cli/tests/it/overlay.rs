//! `--overlay FILE.json` end to end: search, grep, outline, callers and show
//! answer over disk + the overlay (new, edited, deleted files), and neither
//! the index nor the repository changes.

use std::path::{Path, PathBuf};

use crate::common::Repo;
use serde_json::{Value, json};

/// A new file calling into the package.
const LOYALTY: &str = "\"\"\"Loyalty points.\"\"\"\n\nfrom .pricing import apply_discount\n\n\ndef loyalty_points(amount):\n    \"\"\"Points earned for an amount spent.\"\"\"\n    return int(apply_discount(amount, None)) // 10\n";

/// `pricing.py` edited: `retry_policy` gone, `backoff_schedule` new.
const PRICING: &str = "\"\"\"Discount and tax rules.\"\"\"\n\nfrom decimal import Decimal\n\nTAX_RATE = Decimal(\"0.2\")\n\n\ndef apply_discount(amount, coupon):\n    return amount\n\n\ndef backoff_schedule(attempts=3):\n    return [0.5 * 2 ** i for i in range(attempts)]\n";

fn overlay() -> Value {
    json!({
        "src/shop/loyalty.py": LOYALTY,
        "src/shop/pricing.py": PRICING,
        "web/checkout.ts": null,
        "tests/test_cart.py": null,
    })
}

/// The shop fixture, indexed, and an overlay file outside the repository.
fn setup(overlay: &Value) -> (Repo, String) {
    let repo = Repo::fixture("shop");
    repo.ok(&["index"]);
    let file = repo.cache.path().join("overlay.json");
    std::fs::write(&file, overlay.to_string()).unwrap();
    (repo, file.to_str().unwrap().to_string())
}

/// `lode ARGS --overlay FILE --json`.
fn over(repo: &Repo, file: &str, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["--overlay", file]);
    repo.json(&a)
}

fn hit_symbols(v: &Value) -> Vec<(String, Option<String>, u64, u64)> {
    v["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("no hits: {v}"))
        .iter()
        .map(|h| {
            (
                h["path"].as_str().unwrap().to_string(),
                h["symbol"].as_str().map(str::to_string),
                h["start_line"].as_u64().unwrap(),
                h["end_line"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn grep_lines(v: &Value) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    for g in v["groups"].as_array().unwrap_or(&Vec::new()) {
        for l in g["lines"].as_array().unwrap() {
            out.push((
                g["path"].as_str().unwrap().to_string(),
                l["line"].as_u64().unwrap(),
            ));
        }
    }
    out
}

fn outline_names(v: &Value) -> Vec<String> {
    fn walk(nodes: &Value, out: &mut Vec<String>) {
        for n in nodes.as_array().into_iter().flatten() {
            out.push(n["name"].as_str().unwrap().to_string());
            walk(&n["children"], out);
        }
    }
    let mut out = Vec::new();
    walk(&v["symbols"], &mut out);
    out
}

fn caller_names(v: &Value) -> Vec<(String, String)> {
    v["children"]
        .as_array()
        .unwrap_or_else(|| panic!("no children: {v}"))
        .iter()
        .map(|n| {
            (
                n["symbol"]["name"]
                    .as_str()
                    .unwrap_or("(top level)")
                    .to_string(),
                n["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn error_code(v: &Value) -> &str {
    v["error"]["code"]
        .as_str()
        .unwrap_or_else(|| panic!("not an error: {v}"))
}

/// Every file under `dir` and its bytes, by relative path.
fn tree_bytes(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                walk(base, &p, out);
            } else {
                let bytes = std::fs::read(&p).unwrap();
                out.push((p.strip_prefix(base).unwrap().to_path_buf(), bytes));
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[test]
fn a_symbol_only_in_the_overlay_is_found_by_all_five_at_its_overlay_location() {
    let (repo, file) = setup(&overlay());
    // Not on disk: none of the five knows it.
    assert!(
        !hit_symbols(&repo.json(&["search", "loyalty_points"]))
            .iter()
            .any(|h| h.1.as_deref() == Some("loyalty_points"))
    );
    assert_eq!(
        error_code(&repo.json(&["show", "loyalty_points"])),
        "lode.not_found"
    );

    let v = over(&repo, &file, &["search", "loyalty_points"]);
    assert_eq!(
        hit_symbols(&v)[0],
        (
            "src/shop/loyalty.py".into(),
            Some("loyalty_points".into()),
            6,
            8
        ),
        "{v}"
    );
    assert!(
        v["hits"][0]["snippet"]
            .as_str()
            .unwrap()
            .starts_with("def loyalty_points(amount):"),
        "the snippet comes from the overlay: {v}"
    );
    assert_eq!(v["overlay"]["files"], 2, "{v}");
    assert_eq!(v["overlay"]["deleted"], 2, "{v}");
    assert_eq!(v["overlay"]["built"], true, "{v}");

    let v = over(&repo, &file, &["grep", "def loyalty_points"]);
    assert_eq!(grep_lines(&v), [("src/shop/loyalty.py".into(), 6)], "{v}");
    assert_eq!(v["groups"][0]["symbol"], "loyalty_points");

    let v = over(&repo, &file, &["outline", "src/shop/loyalty.py"]);
    assert_eq!(outline_names(&v), ["loyalty_points"], "{v}");
    assert_eq!(
        (v["symbols"][0]["start_line"].as_u64(), v["lines"].as_u64()),
        (Some(6), Some(8))
    );
    // A directory outline lists the new file too.
    let v = over(&repo, &file, &["outline", "src/shop"]);
    let files: Vec<&str> = v["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "src/shop/cart.py",
            "src/shop/loyalty.py",
            "src/shop/pricing.py"
        ]
    );

    let v = over(&repo, &file, &["callers", "apply_discount"]);
    assert!(
        caller_names(&v).contains(&("loyalty_points".into(), "src/shop/loyalty.py".into())),
        "{v}"
    );
    let site = v["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["symbol"]["name"] == "loyalty_points")
        .unwrap()["sites"][0]
        .clone();
    assert_eq!(site, json!({"path": "src/shop/loyalty.py", "line": 8}));
    assert_eq!(
        v["children"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["symbol"]["name"] == "loyalty_points")
            .unwrap()["resolution"],
        "import"
    );

    let v = over(
        &repo,
        &file,
        &["callers", "loyalty_points", "--direction", "out"],
    );
    assert_eq!(
        caller_names(&v),
        [("apply_discount".into(), "src/shop/pricing.py".into())],
        "{v}"
    );

    let v = over(&repo, &file, &["show", "loyalty_points", "--callgraph"]);
    assert_eq!(v["symbol"]["path"], "src/shop/loyalty.py");
    assert_eq!(
        (
            v["symbol"]["start_line"].as_u64(),
            v["symbol"]["end_line"].as_u64()
        ),
        (Some(6), Some(8))
    );
    assert_eq!(v["lines"][0], "def loyalty_points(amount):", "{v}");
    assert_eq!(v["callees"][0]["name"], "apply_discount", "{v}");
    // `path:LINE` names a file only the overlay has.
    let v = over(&repo, &file, &["show", "src/shop/loyalty.py:7"]);
    assert_eq!(v["symbol"]["name"], "loyalty_points", "{v}");
}

#[test]
fn an_edited_file_is_read_from_the_overlay() {
    let (repo, file) = setup(&overlay());
    // On disk: retry_policy at pricing.py:16.
    assert_eq!(
        repo.json(&["show", "retry_policy"])["symbol"]["start_line"],
        16
    );

    let v = over(&repo, &file, &["search", "retry_policy", "--lexical"]);
    assert!(
        !hit_symbols(&v)
            .iter()
            .any(|h| h.1.as_deref() == Some("retry_policy")),
        "the old symbol is gone: {v}"
    );
    let v = over(&repo, &file, &["search", "backoff_schedule"]);
    assert_eq!(hit_symbols(&v)[0].0, "src/shop/pricing.py", "{v}");

    let v = over(&repo, &file, &["grep", "retry_policy|backoff_schedule"]);
    assert_eq!(grep_lines(&v), [("src/shop/pricing.py".into(), 12)], "{v}");

    let v = over(&repo, &file, &["outline", "src/shop/pricing.py"]);
    assert_eq!(
        outline_names(&v),
        ["TAX_RATE", "apply_discount", "backoff_schedule"],
        "{v}"
    );
    assert_eq!(v["lines"], 13);

    let v = over(&repo, &file, &["show", "retry_policy"]);
    assert_eq!(error_code(&v), "lode.not_found", "{v}");
    let v = over(&repo, &file, &["show", "apply_discount"]);
    assert_eq!(
        v["lines"],
        json!(["def apply_discount(amount, coupon):", "    return amount"]),
        "{v}"
    );

    // The edited definition is what callers resolve to.
    let v = over(&repo, &file, &["callers", "apply_discount"]);
    assert_eq!(v["root"]["end_line"], 9, "{v}");
    assert!(
        caller_names(&v).contains(&("total".into(), "src/shop/cart.py".into())),
        "{v}"
    );
}

#[test]
fn a_deleted_file_is_gone_from_all_five() {
    let (repo, file) = setup(&overlay());
    // On disk, checkout.ts defines submitOrder and test_cart.py calls subtotal.
    assert_eq!(
        hit_symbols(&repo.json(&["search", "submitOrder"]))[0].0,
        "web/checkout.ts"
    );
    assert!(
        caller_names(&repo.json(&["callers", "subtotal"]))
            .iter()
            .any(|c| c.1 == "tests/test_cart.py")
    );

    let v = over(&repo, &file, &["search", "submitOrder"]);
    assert!(
        !hit_symbols(&v).iter().any(|h| h.0 == "web/checkout.ts"),
        "{v}"
    );
    let v = over(&repo, &file, &["search", "submit order payment gateway"]);
    assert!(
        !hit_symbols(&v)
            .iter()
            .any(|h| h.0 == "web/checkout.ts" || h.0 == "tests/test_cart.py"),
        "the dense side forgets it too: {v}"
    );
    let v = over(&repo, &file, &["grep", "Cart|submitOrder"]);
    assert!(
        !grep_lines(&v)
            .iter()
            .any(|l| l.0 == "web/checkout.ts" || l.0 == "tests/test_cart.py"),
        "{v}"
    );
    assert!(!grep_lines(&v).is_empty());

    let out = repo.run(&["outline", "web/checkout.ts", "--overlay", &file]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("deleted in the overlay"));
    let v = over(&repo, &file, &["outline", "web"]);
    assert_eq!(v["files"], json!([]), "{v}");

    assert_eq!(
        error_code(&over(&repo, &file, &["show", "submitOrder"])),
        "lode.not_found"
    );
    assert_eq!(
        error_code(&over(&repo, &file, &["callers", "PaymentError"])),
        "lode.not_found"
    );
    let v = over(&repo, &file, &["callers", "subtotal"]);
    assert_eq!(
        caller_names(&v),
        [("total".into(), "src/shop/cart.py".into())],
        "{v}"
    );
    assert!(
        !caller_names(&v)
            .iter()
            .any(|c| c.1 == "tests/test_cart.py" || c.1 == "web/checkout.ts"),
        "its call sites are gone: {v}"
    );
}

#[test]
fn overlay_queries_leave_the_index_and_the_repository_as_they_were() {
    let (repo, file) = setup(&overlay());
    // One plain query first: whatever a query does to the database, it has done.
    repo.json(&["search", "Cart"]);
    let index_before = tree_bytes(&repo.index_dir());
    let repo_before = tree_bytes(repo.root());
    let generation = repo.json(&["status"])["stats"]["generation"].clone();

    for args in [
        &["search", "loyalty_points"][..],
        &["grep", "def "],
        &["outline", "src/shop/loyalty.py"],
        &["callers", "apply_discount"],
        &["show", "backoff_schedule", "--callgraph"],
    ] {
        let v = over(&repo, &file, args);
        assert!(v.get("error").is_none(), "{args:?}: {v}");
    }
    assert_eq!(
        tree_bytes(&repo.index_dir()),
        index_before,
        "the index is byte-for-byte unchanged"
    );
    assert_eq!(
        tree_bytes(repo.root()),
        repo_before,
        "the repository is untouched"
    );
    assert_eq!(repo.json(&["status"])["stats"]["generation"], generation);
    // And plain answers are the disk's again, without an overlay field.
    let v = repo.json(&["search", "retry_policy"]);
    assert_eq!(hit_symbols(&v)[0].1.as_deref(), Some("retry_policy"));
    assert!(v.get("overlay").is_none(), "{v}");
}

#[test]
fn bad_overlays_are_one_line_with_their_code() {
    let (repo, _) = setup(&json!({}));
    let big = "x".repeat(lode_index::overlay::MAX_FILE_BYTES + 1);
    let cases = [
        (json!({"/etc/passwd": "x"}), "absolute"),
        (json!({"../outside.py": "x"}), "leaves the repository root"),
        (json!(["src/a.py"]), "expected an object"),
        (json!({"src/a.py": 42}), "not a number"),
        (json!({"src/a.py": big}), "over the limit"),
    ];
    let commands: [&[&str]; 5] = [
        &["search", "Cart"],
        &["grep", "Cart"],
        &["outline", "src/shop/cart.py"],
        &["callers", "Cart"],
        &["show", "Cart"],
    ];
    for (i, (bad, says)) in cases.iter().enumerate() {
        let file = repo.cache.path().join(format!("bad{i}.json"));
        std::fs::write(&file, bad.to_string()).unwrap();
        let file = file.to_str().unwrap();
        for args in commands {
            let mut a = args.to_vec();
            a.extend(["--overlay", file]);
            let out = repo.run(&a);
            assert_eq!(out.status.code(), Some(2), "{a:?}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(
                stderr.starts_with("lode: bad overlay: ") && stderr.contains(says),
                "{stderr}"
            );
            a.push("--json");
            let v: Value = serde_json::from_slice(&repo.run(&a).stdout).unwrap();
            assert_eq!(error_code(&v), "lode.bad_overlay", "{a:?}: {v}");
        }
    }
    // Not JSON at all, and not there at all.
    let file = repo.cache.path().join("garbage.json");
    std::fs::write(&file, "{\"a\": ").unwrap();
    let v = repo.json(&["search", "Cart", "--overlay", file.to_str().unwrap()]);
    assert_eq!(error_code(&v), "lode.bad_overlay");
    let v = repo.json(&["search", "Cart", "--overlay", "/nonexistent/overlay.json"]);
    assert_eq!(error_code(&v), "lode.io");
}

#[test]
fn an_overlay_is_read_from_stdin_and_its_skipped_files_are_noted() {
    use std::io::Write;
    let (repo, _) = setup(&json!({}));
    let mut child = repo
        .command(&["search", "loyalty_points", "--overlay", "-", "--json"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let ov = json!({"src/shop/loyalty.py": LOYALTY, "src/shop/app.min.js": "var a=1;"});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ov.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(hit_symbols(&v)[0].0, "src/shop/loyalty.py", "{v}");
    assert_eq!(
        v["overlay"]["skipped"],
        json!([{"path": "src/shop/app.min.js", "reason": "minified"}]),
        "the index would skip it on disk too: {v}"
    );
    assert!(
        v["notes"][0]
            .as_str()
            .unwrap()
            .contains("app.min.js is not indexed (minified)"),
        "{v}"
    );
}
