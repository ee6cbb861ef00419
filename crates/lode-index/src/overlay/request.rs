//! The overlay a caller gives: validated paths to new content or to a
//! deletion ([`Overlay`]), read from JSON or text and refused with
//! [`Error::BadOverlay`] when it is anything else.

use std::collections::BTreeMap;

use lode_core::{Error, Result};
use serde_json::Value;

use super::{MAX_FILE_BYTES, MAX_FILES, MAX_TOTAL_BYTES};

/// A validated overlay: root-relative paths to new content, `None` for a
/// deletion, in path order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overlay {
    files: BTreeMap<String, Option<String>>,
}

fn bad(msg: impl Into<String>) -> Error {
    Error::BadOverlay(msg.into())
}

/// The start of a user string for an error message.
fn clip(s: &str) -> String {
    match s.char_indices().nth(80) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An overlay path in its canonical form: `a/./b//c` → `a/b/c`; `..` may
/// not leave the root; absolute paths, backslashes, NUL and directories (a
/// trailing `/`) are refused with [`Error::BadOverlay`].
pub fn normalize_path(path: &str) -> Result<String> {
    let shown = clip(path);
    if path.is_empty() {
        return Err(bad("an empty path"));
    }
    if path.contains('\0') || path.contains('\\') {
        return Err(bad(format!(
            "{shown:?}: paths are relative to the root and /-separated"
        )));
    }
    let b = path.as_bytes();
    let drive = b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':';
    if path.starts_with('/') || drive {
        return Err(bad(format!(
            "{shown:?} is absolute; give it relative to the repository root"
        )));
    }
    if path.ends_with('/') {
        return Err(bad(format!("{shown:?} names a directory, not a file")));
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.pop().is_none() {
                    return Err(bad(format!("{shown:?} leaves the repository root")));
                }
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(bad(format!("{shown:?} names the root, not a file")));
    }
    Ok(parts.join("/"))
}

impl Overlay {
    /// An overlay from `(path, content or None)` pairs, validated.
    pub fn new(entries: impl IntoIterator<Item = (String, Option<String>)>) -> Result<Overlay> {
        let mut files = BTreeMap::new();
        let mut total = 0usize;
        for (i, (path, content)) in entries.into_iter().enumerate() {
            if i == MAX_FILES {
                return Err(bad(format!("more than {MAX_FILES} files")));
            }
            let rel = normalize_path(&path)?;
            if let Some(text) = &content {
                if text.len() > MAX_FILE_BYTES {
                    return Err(bad(format!(
                        "{}: {} bytes, over the limit of {MAX_FILE_BYTES} per file",
                        clip(&rel),
                        text.len()
                    )));
                }
                total += text.len();
                if total > MAX_TOTAL_BYTES {
                    return Err(bad(format!(
                        "over {MAX_TOTAL_BYTES} bytes of content in all"
                    )));
                }
            }
            if files.insert(rel.clone(), content).is_some() {
                return Err(bad(format!("{:?} is given twice", clip(&rel))));
            }
        }
        Ok(Overlay { files })
    }

    /// An overlay from `{"path": "content" | null, …}`.
    pub fn from_json(value: &Value) -> Result<Overlay> {
        let Value::Object(map) = value else {
            return Err(bad(format!(
                "expected an object of path → content (a string) or null, not {}",
                json_type(value)
            )));
        };
        if map.len() > MAX_FILES {
            return Err(bad(format!("{} files; at most {MAX_FILES}", map.len())));
        }
        let mut entries = Vec::with_capacity(map.len());
        for (path, v) in map {
            let content = match v {
                Value::String(s) => Some(s.clone()),
                Value::Null => None,
                other => {
                    return Err(bad(format!(
                        "{:?}: expected the new content (a string) or null (deleted), not {}",
                        clip(path),
                        json_type(other)
                    )));
                }
            };
            entries.push((path.clone(), content));
        }
        Overlay::new(entries)
    }

    /// An overlay from JSON text (an `--overlay` file).
    pub fn parse(text: &str) -> Result<Overlay> {
        let value: Value = serde_json::from_str(text).map_err(|e| {
            bad(format!(
                "not JSON (line {}, column {})",
                e.line(),
                e.column()
            ))
        })?;
        Overlay::from_json(&value)
    }

    /// The entries, in path order.
    pub fn files(&self) -> &BTreeMap<String, Option<String>> {
        &self.files
    }

    /// Whether it has no entries (no file added, edited or deleted).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Whether `rel` is an overlay path, or a directory holding one that has content.
    pub fn touches(&self, rel: &str) -> bool {
        let rel = rel.trim_end_matches('/');
        self.files.contains_key(rel)
            || self.files.iter().any(|(p, c)| {
                c.is_some()
                    && (rel.is_empty() || p.strip_prefix(rel).is_some_and(|r| r.starts_with('/')))
            })
    }

    /// blake3 of the canonical form: each path, a tag, the content's length and bytes.
    pub fn hash(&self) -> blake3::Hash {
        let mut h = blake3::Hasher::new();
        for (path, content) in &self.files {
            h.update(&(path.len() as u64).to_le_bytes());
            h.update(path.as_bytes());
            match content {
                None => h.update(&[0]),
                Some(text) => h
                    .update(&[1])
                    .update(&(text.len() as u64).to_le_bytes())
                    .update(text.as_bytes()),
            };
        }
        h.finalize()
    }

    pub(super) fn content_bytes(&self) -> usize {
        self.files.values().flatten().map(String::len).sum()
    }
}
