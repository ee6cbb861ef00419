//! `Overlay::from_json`, the reading of files a session has not written,
//! over any JSON value and over objects of hostile paths.
//!
//! The docs state the whole contract: an object of root-relative,
//! `/`-separated paths to a string or null; `a/./b//c` is `a/b/c`; no
//! absolute path, backslash, NUL, directory (a trailing `/`) or `..` that
//! leaves the root; at most [`MAX_FILES`] entries and the byte caps; anything
//! else is `Error::BadOverlay`. The target holds `from_json` to a model
//! written from those words, and checks that an accepted overlay's paths are
//! canonical and inside the root, that the JSON text reads the same, and
//! that every refusal is the typed error.

use std::collections::BTreeMap;

use lode_core::Error;
use lode_index::overlay::{MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES, Overlay, normalize_path};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::select;
use serde_json::{Map, Value};

use crate::common::{any_text, config, json_value};

/// The model of [`normalize_path`], from its docs.
fn model_path(path: &str) -> Option<String> {
    let b = path.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if path.is_empty()
        || path.contains(['\0', '\\'])
        || path.starts_with('/')
        || drive
        || path.ends_with('/')
    {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// The model of [`Overlay::from_json`]: the files it accepts, or `None`.
fn model(value: &Value) -> Option<BTreeMap<String, Option<String>>> {
    let Value::Object(map) = value else {
        return None;
    };
    if map.len() > MAX_FILES {
        return None;
    }
    let (mut files, mut total) = (BTreeMap::new(), 0);
    for (path, v) in map {
        let content = match v {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            _ => return None,
        };
        if let Some(c) = &content {
            total += c.len();
            if c.len() > MAX_FILE_BYTES || total > MAX_TOTAL_BYTES {
                return None;
            }
        }
        if files.insert(model_path(path)?, content).is_some() {
            return None;
        }
    }
    Some(files)
}

/// A path in canonical form: relative, inside the root, nothing to resolve.
fn canonical(path: &str) -> Result<(), TestCaseError> {
    prop_assert!(!path.is_empty() && !path.starts_with('/'), "{path:?}");
    prop_assert!(!path.contains(['\0', '\\']), "{path:?}");
    let b = path.as_bytes();
    prop_assert!(
        !(b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':'),
        "{path:?}"
    );
    for part in path.split('/') {
        prop_assert!(
            !matches!(part, "" | "." | ".."),
            "{path:?} has a {part:?} component"
        );
    }
    Ok(())
}

fn is_bad_overlay(e: &Error) -> Result<(), TestCaseError> {
    prop_assert!(matches!(e, Error::BadOverlay(_)), "not BadOverlay: {e:?}");
    prop_assert_eq!(e.code().as_str(), "lode.bad_overlay");
    Ok(())
}

fn check(value: &Value) -> Result<(), TestCaseError> {
    let got = Overlay::from_json(value);
    let want = model(value);
    match &got {
        Ok(o) => {
            prop_assert!(o.files().len() <= MAX_FILES);
            for (path, content) in o.files() {
                canonical(path)?;
                prop_assert_eq!(normalize_path(path).ok(), Some(path.clone()));
                prop_assert!(o.touches(path), "{path:?} is not touched");
                prop_assert!(content.as_ref().is_none_or(|c| c.len() <= MAX_FILE_BYTES));
            }
            let total: usize = o.files().values().flatten().map(String::len).sum();
            prop_assert!(total <= MAX_TOTAL_BYTES);
            prop_assert_eq!(Some(o.files()), want.as_ref(), "accepted, unlike the model");
        }
        Err(e) => {
            is_bad_overlay(e)?;
            prop_assert!(want.is_none(), "refused ({e}), unlike the model: {want:?}");
        }
    }
    // The JSON text of the value reads the same.
    let text = value.to_string();
    match (Overlay::parse(&text), &got) {
        (Ok(a), Ok(b)) => prop_assert!(a == *b && a.hash() == b.hash()),
        (Err(e), Err(_)) => is_bad_overlay(&e)?,
        (a, b) => prop_assert!(false, "the text reads otherwise: {a:?} vs {b:?}"),
    }
    Ok(())
}

/// Path components that mean something to a file system or to the checks.
const PARTS: &[&str] = &[
    "..", ".", "", "a", "src", "b.py", "lib.rs", "\0", "\\", "a\\b", "C:", "c:", "~", " ", "...",
    "%2e%2e", "日本", "\u{202e}", "con", "nul", ".git", "-", "a b", "\n",
];

/// Hostile paths: components joined by `/`, perhaps led by one, perhaps
/// very long; or any text.
fn hostile_path() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => (any::<bool>(), vec(select(PARTS), 0..8), any::<bool>()).prop_map(
            |(lead, parts, trail)| {
                let mut p = parts.join("/");
                if lead {
                    p.insert(0, '/');
                }
                if trail {
                    p.push('/');
                }
                p
            }
        ),
        1 => (select(PARTS), 1usize..400).prop_map(|(part, n)| vec![part; n].join("/")),
        1 => (1usize..400).prop_map(|n| format!("{}x.py", "../a/".repeat(n))),
        1 => any_text(40),
    ]
}

fn content() -> impl Strategy<Value = Value> {
    prop_oneof![
        4 => any_text(64).prop_map(Value::String),
        2 => Just(Value::Null),
        1 => json_value(),
    ]
}

pub fn overlay_object() -> impl Strategy<Value = Value> {
    vec((hostile_path(), content()), 0..24)
        .prop_map(|entries| Value::Object(entries.into_iter().collect::<Map<_, _>>()))
}

/// About [`MAX_FILES`] entries, of good paths.
fn many_files() -> impl Strategy<Value = Value> {
    (MAX_FILES - 3..MAX_FILES + 3, any::<bool>()).prop_map(|(n, deleted)| {
        let map: Map<String, Value> = (0..n)
            .map(|i| {
                let v = if deleted {
                    Value::Null
                } else {
                    Value::from("x = 1\n")
                };
                (format!("d{}/f{i}.py", i % 7), v)
            })
            .collect();
        Value::Object(map)
    })
}

proptest! {
    #![proptest_config(config(256))]

    #[test]
    fn any_json_is_an_overlay_or_bad_overlay(value in json_value()) {
        check(&value)?;
    }

    #[test]
    fn hostile_paths_are_canonical_or_refused(value in overlay_object()) {
        check(&value)?;
    }

    #[test]
    fn normalised_paths_stay_normalised(path in hostile_path()) {
        match normalize_path(&path) {
            Ok(p) => {
                canonical(&p)?;
                prop_assert_eq!(model_path(&path), Some(p.clone()));
                prop_assert_eq!(normalize_path(&p).ok(), Some(p));
            }
            Err(e) => {
                is_bad_overlay(&e)?;
                prop_assert_eq!(model_path(&path), None);
            }
        }
    }
}

proptest! {
    #![proptest_config(config(8))]

    #[test]
    fn the_file_count_cap_holds(value in many_files()) {
        check(&value)?;
    }
}

/// The byte caps, at their edges (one case each: the contents are megabytes).
#[test]
fn the_byte_caps_hold_at_their_edges() {
    let at_cap = "x".repeat(MAX_FILE_BYTES);
    let over = "x".repeat(MAX_FILE_BYTES + 1);
    let one = |c: &str| serde_json::json!({ "a.py": c });
    assert!(Overlay::from_json(&one(&at_cap)).is_ok());
    assert!(matches!(
        Overlay::from_json(&one(&over)),
        Err(Error::BadOverlay(_))
    ));
    // Four files at the cap fill the total; one byte more is over it.
    let mut map = Map::new();
    for i in 0..MAX_TOTAL_BYTES / MAX_FILE_BYTES {
        map.insert(format!("f{i}.py"), Value::from(at_cap.as_str()));
    }
    let full = Value::Object(map.clone());
    assert!(Overlay::from_json(&full).is_ok());
    map.insert("z.py".into(), Value::from("y"));
    assert!(matches!(
        Overlay::from_json(&Value::Object(map)),
        Err(Error::BadOverlay(_))
    ));
}
