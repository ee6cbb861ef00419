use super::*;
use serde_json::{Value, json};

fn code(v: Value) -> String {
    Overlay::from_json(&v).unwrap_err().to_string()
}

#[test]
fn paths_are_normalised_and_kept_inside_the_root() {
    let o = Overlay::from_json(&json!({"./src//a.py": "x", "src/b/../c.py": null})).unwrap();
    let paths: Vec<&str> = o.files().keys().map(String::as_str).collect();
    assert_eq!(paths, ["src/a.py", "src/c.py"]);
    for (path, says) in [
        ("/etc/passwd", "absolute"),
        ("C:/x.py", "absolute"),
        ("../x.py", "leaves the repository root"),
        ("a/../../x.py", "leaves the repository root"),
        ("src\\a.py", "/-separated"),
        ("src/", "directory"),
        (".", "names the root"),
        ("", "empty path"),
    ] {
        let e = code(json!({ path: "x" }));
        assert!(e.starts_with("bad overlay: "), "{e}");
        assert!(e.contains(says), "{path}: {e}");
    }
    assert!(code(json!({"a.py": "x", "./a.py": null})).contains("given twice"));
}

#[test]
fn shapes_and_sizes_are_checked() {
    assert!(code(json!(["a.py"])).contains("expected an object"));
    assert!(code(json!({"a.py": 3})).contains("not a number"));
    assert!(code(json!({"a.py": {"x": 1}})).contains("not an object"));
    let big = "x".repeat(MAX_FILE_BYTES + 1);
    let e = code(json!({ "a.py": big }));
    assert!(e.contains("over the limit") && e.len() < 200, "{e}");
    let fifth = "x".repeat(MAX_TOTAL_BYTES / 5 + 1);
    let many: serde_json::Map<String, Value> = (0..5)
        .map(|i| (format!("f{i}.txt"), Value::String(fifth.clone())))
        .collect();
    assert!(code(Value::Object(many)).contains("in all"));
    let too_many: serde_json::Map<String, Value> = (0..=MAX_FILES)
        .map(|i| (format!("f{i}.txt"), Value::Null))
        .collect();
    assert!(code(Value::Object(too_many)).contains("at most"));
    assert!(
        Overlay::parse("{\"a\": ")
            .unwrap_err()
            .to_string()
            .contains("not JSON")
    );
    assert_eq!(
        Overlay::parse("{}").unwrap().files().len(),
        0,
        "an empty overlay is valid"
    );
}

#[test]
fn the_hash_is_of_the_canonical_form() {
    let a = Overlay::from_json(&json!({"x.py": "1", "y.py": null})).unwrap();
    let b = Overlay::from_json(&json!({"./y.py": null, "x.py": "1"})).unwrap();
    let c = Overlay::from_json(&json!({"x.py": "1", "y.py": ""})).unwrap();
    assert_eq!(a.hash(), b.hash());
    assert_ne!(a.hash(), c.hash(), "deleted is not empty");
}

#[test]
fn touches_names_files_and_their_directories() {
    let o = Overlay::from_json(&json!({"src/new/a.py": "x", "gone.py": null})).unwrap();
    assert!(o.touches("src/new/a.py") && o.touches("src/new") && o.touches("src/"));
    assert!(o.touches("gone.py"));
    assert!(!o.touches("src/ne") && !o.touches("other"));
}
