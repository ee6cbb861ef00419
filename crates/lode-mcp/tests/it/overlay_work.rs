//! The overlay's cost is paid only by calls that carry one: the five tools
//! without an overlay build no layer and read none; two calls with the same
//! overlay build it once. (The counters are process-wide: the test holds a
//! [`common::Turn`].)

use lode_index::overlay;
use lode_mcp::{Options, Server};
use serde_json::{Value, json};

use crate::common;

fn call(server: &Server, tool: &str, args: Value) -> Value {
    let r = server
        .call(tool, args.as_object().unwrap().clone())
        .expect("a tool");
    assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
    r.structured_content.expect("structuredContent")
}

#[test]
fn only_calls_with_an_overlay_do_overlay_work_and_the_same_overlay_is_built_once() {
    let _turn = common::turn();
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("util.py"),
        "def helper(x):\n    return x * 2\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("app.py"),
        "from util import helper\n\n\ndef run():\n    return helper(1)\n",
    )
    .unwrap();
    let mut options = Options::new(vec![dir.path().to_path_buf()]);
    options.cache_dir = Some(cache.path().to_path_buf());
    let server = Server::new(options).unwrap();

    let plain = [
        ("search", json!({"query": "helper"})),
        ("grep", json!({"pattern": "helper"})),
        ("outline", json!({"path": "util.py"})),
        ("callers", json!({"symbol": "helper"})),
        ("show", json!({"symbol": "helper", "callgraph": true})),
    ];
    call(
        &server,
        "search",
        json!({"query": "warm up: the first call indexes"}),
    );
    let before = (overlay::builds(), overlay::reads());
    for (tool, args) in &plain {
        let v = call(&server, tool, args.clone());
        assert!(v.get("overlay").is_none(), "{tool}: {v}");
    }
    assert_eq!(
        (overlay::builds(), overlay::reads()),
        before,
        "calls without an overlay do no overlay work"
    );

    let ov = json!({"lib/extra.py": "from util import helper\n\n\ndef twice():\n    return helper(helper(1))\n"});
    let with = |args: &Value| {
        let mut a = args.clone();
        a["overlay"] = ov.clone();
        a
    };
    let first = call(&server, "callers", with(&plain[3].1));
    assert_eq!(first["overlay"]["built"], true, "{first}");
    let names: Vec<&str> = first["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["symbol"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["run", "twice"], "{first}");
    for (tool, args) in &plain {
        let v = call(&server, tool, with(args));
        assert_eq!(v["overlay"]["built"], false, "{tool}: cached: {v}");
        assert_eq!(v["overlay"]["key"], first["overlay"]["key"]);
    }
    assert_eq!(overlay::builds(), before.0 + 1, "built once for six calls");
    assert!(overlay::reads() > before.1);

    // And a plain call afterwards is plain again.
    let v = call(&server, "callers", plain[3].1.clone());
    assert_eq!(v["children"].as_array().unwrap().len(), 1, "{v}");
}
