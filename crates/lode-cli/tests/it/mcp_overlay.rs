//! Overlays through the real `lode mcp`: the `overlay` argument and the
//! out-of-band `_meta.overlay`, sent as raw JSON-RPC lines the way a host
//! would send them.

use std::process::Stdio;

use crate::common::Repo;
use crate::common::raw::Raw;
use serde_json::{Value, json};

/// `lode mcp` with its pipes, its stderr dropped.
fn start(repo: &Repo) -> Raw {
    Raw::spawn(repo.command(&["mcp"]).stderr(Stdio::null()))
}

fn ok(r: &Value) -> &Value {
    assert_ne!(r["isError"], true, "{r}");
    &r["structuredContent"]
}

fn error_code(r: &Value) -> &str {
    assert_eq!(r["isError"], true, "{r}");
    r["structuredContent"]["error"]["code"].as_str().unwrap()
}

const LOYALTY: &str = "from .pricing import apply_discount\n\n\ndef loyalty_points(amount):\n    return int(apply_discount(amount, None)) // 10\n";

fn overlay() -> Value {
    json!({"src/shop/loyalty.py": LOYALTY, "web/checkout.ts": null})
}

#[test]
fn the_five_tools_answer_over_the_overlay_argument_and_meta() {
    let repo = Repo::fixture("shop");
    let mut server = start(&repo);
    let with = |args: Value| {
        let mut a = args;
        a["overlay"] = overlay();
        a
    };

    let v = server.call("search", with(json!({"query": "loyalty_points"})), None);
    let s = ok(&v);
    assert_eq!(s["hits"][0]["path"], "src/shop/loyalty.py", "{s}");
    assert_eq!(
        (
            s["hits"][0]["start_line"].as_u64(),
            s["hits"][0]["end_line"].as_u64()
        ),
        (Some(4), Some(5))
    );
    assert_eq!(s["overlay"]["built"], true);
    let text = v["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("src/shop/loyalty.py:4-5  function loyalty_points"),
        "{text}"
    );

    // The same overlay out of band: the cached layer answers.
    let v = server.call(
        "grep",
        json!({"pattern": "def loyalty_points|submitOrder"}),
        Some(json!({"overlay": overlay()})),
    );
    let s = ok(&v);
    assert_eq!(s["overlay"]["built"], false, "built once: {s}");
    let groups = s["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 1, "checkout.ts is deleted: {s}");
    assert_eq!(
        (
            groups[0]["path"].as_str(),
            groups[0]["lines"][0]["line"].as_u64()
        ),
        (Some("src/shop/loyalty.py"), Some(4))
    );

    let v = server.call(
        "outline",
        json!({"path": "src/shop/loyalty.py"}),
        Some(json!({"overlay": overlay()})),
    );
    assert_eq!(ok(&v)["symbols"][0]["name"], "loyalty_points", "{v}");
    let v = server.call("outline", with(json!({"path": "web/checkout.ts"})), None);
    assert_eq!(error_code(&v), "lode.not_found");

    let v = server.call("callers", with(json!({"symbol": "apply_discount"})), None);
    let kids = ok(&v)["children"].as_array().unwrap().clone();
    let site = kids
        .iter()
        .find(|k| k["symbol"]["name"] == "loyalty_points")
        .expect("the overlay's caller");
    assert_eq!(
        site["sites"][0],
        json!({"path": "src/shop/loyalty.py", "line": 5})
    );

    let v = server.call("show", with(json!({"symbol": "loyalty_points"})), None);
    assert_eq!(ok(&v)["lines"][0], "def loyalty_points(amount):", "{v}");
    let v = server.call("show", with(json!({"symbol": "submitOrder"})), None);
    assert_eq!(error_code(&v), "lode.not_found");

    // A tool without overlays ignores _meta.overlay; plain calls see the disk.
    let v = server.call("map", json!({}), Some(json!({"overlay": overlay()})));
    assert!(ok(&v).get("overlay").is_none(), "{v}");
    let v = server.call("search", json!({"query": "submitOrder"}), None);
    assert_eq!(ok(&v)["hits"][0]["path"], "web/checkout.ts");
    assert!(ok(&v).get("overlay").is_none());
}

#[test]
fn bad_overlays_are_tool_errors_with_their_code() {
    let repo = Repo::fixture("shop");
    let mut server = start(&repo);
    let big = "x".repeat(lode_index::overlay::MAX_FILE_BYTES + 1);
    for bad in [
        json!({"/etc/passwd": "x"}),
        json!({"../up.py": "x"}),
        json!("src/a.py"),
        json!({"src/a.py": ["not", "text"]}),
        json!({"src/a.py": big}),
    ] {
        for tool in ["search", "grep", "outline", "callers", "show"] {
            let args = match tool {
                "search" => json!({"query": "Cart"}),
                "grep" => json!({"pattern": "Cart"}),
                "outline" => json!({"path": "src/shop/cart.py"}),
                _ => json!({"symbol": "Cart"}),
            };
            let mut with = args.clone();
            with["overlay"] = bad.clone();
            let r = server.call(tool, with, None);
            assert_eq!(error_code(&r), "lode.bad_overlay", "{tool}: {r}");
            let r = server.call(tool, args, Some(json!({"overlay": bad.clone()})));
            assert_eq!(error_code(&r), "lode.bad_overlay", "{tool} via _meta: {r}");
        }
    }
    // Both forms at once.
    let r = server.call(
        "search",
        json!({"query": "Cart", "overlay": overlay()}),
        Some(json!({"overlay": overlay()})),
    );
    assert_eq!(error_code(&r), "lode.bad_overlay");
    assert!(
        r["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("given twice")
    );
    // The server goes on.
    let r = server.call("search", json!({"query": "Cart"}), None);
    assert_eq!(ok(&r)["hits"][0]["symbol"], "Cart");
}
