//! What a query should find ([`Target`]) and what a search returned
//! ([`ResultChunk`]), and the rule that matches one against the other.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};

/// A file, or a line span in a file, that a query is expected to find.
///
/// In JSON a target is either a path string (`"src/lib.rs"`) or an object
/// `{"path": "src/lib.rs", "start_line": 10, "end_line": 20}`. Line numbers
/// are 1-based and inclusive; they may also be numeric strings (the Semble
/// loader accepts both). A span needs both lines; an object with only one of
/// them is a whole-file target, as in Semble.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Target {
    /// Path relative to the indexed root (or any suffix of the result path).
    pub path: String,
    /// Inclusive 1-based line span, or `None` for the whole file.
    pub lines: Option<(u32, u32)>,
}

impl Target {
    /// A whole-file target.
    pub fn file(path: impl Into<String>) -> Self {
        Self {
            path: path.into(),
            lines: None,
        }
    }

    /// A target covering lines `start..=end` (swapped if given backwards).
    pub fn span(path: impl Into<String>, start: u32, end: u32) -> Self {
        Self {
            path: path.into(),
            lines: Some((start.min(end), start.max(end))),
        }
    }

    /// Whether `result` matches this target: the paths match (see
    /// [`path_matches`]) and, if the target has a span, the line ranges
    /// overlap (see [`spans_overlap`]).
    pub fn matches(&self, result: &ResultChunk) -> bool {
        self.matches_location(&result.path, result.start_line, result.end_line)
    }

    /// [`Target::matches`] on a bare location.
    pub fn matches_location(&self, path: &str, start_line: u32, end_line: u32) -> bool {
        path_matches(path, &self.path)
            && self.lines.is_none_or(|span| {
                spans_overlap((start_line.min(end_line), start_line.max(end_line)), span)
            })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.lines {
            Some((s, e)) => write!(f, "{}:{s}-{e}", self.path),
            None => f.write_str(&self.path),
        }
    }
}

/// One ranked search result: a chunk of a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResultChunk {
    /// File path as the search engine reports it (relative or absolute).
    pub path: String,
    /// First line, 1-based, inclusive.
    pub start_line: u32,
    /// Last line, 1-based, inclusive.
    pub end_line: u32,
    /// The chunk's text, when the caller has it; used to count tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The (qualified) symbol the chunk defines, when known; used for the
    /// SWE-bench symbol hit rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub symbol: Option<String>,
}

impl ResultChunk {
    /// A result covering `start_line..=end_line` of `path` (swapped if given
    /// backwards).
    pub fn new(path: impl Into<String>, start_line: u32, end_line: u32) -> Self {
        Self {
            path: path.into(),
            start_line: start_line.min(end_line),
            end_line: start_line.max(end_line),
            text: None,
            symbol: None,
        }
    }

    /// Attaches the chunk's text.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Attaches the symbol the chunk defines.
    pub fn with_symbol(mut self, symbol: impl Into<String>) -> Self {
        self.symbol = Some(symbol.into());
        self
    }

    /// Number of lines in the chunk (`end - start + 1`).
    pub fn line_count(&self) -> u32 {
        self.end_line.abs_diff(self.start_line) + 1
    }
}

/// The benchmark's path rule: equal, or one ends with `/` followed by the
/// other. Backslashes count as `/`. An empty path matches nothing.
///
/// ```
/// use lode_eval::path_matches;
/// assert!(path_matches("/repo/src/lib.rs", "src/lib.rs"));
/// assert!(path_matches("src/lib.rs", "/repo/src/lib.rs"));
/// assert!(!path_matches("src/mylib.rs", "lib.rs"));
/// ```
pub fn path_matches(a: &str, b: &str) -> bool {
    if a.is_empty() || b.is_empty() {
        return false;
    }
    let a = normalize_path(a);
    let b = normalize_path(b);
    a == b || ends_with_component(&a, &b) || ends_with_component(&b, &a)
}

fn normalize_path(p: &str) -> Cow<'_, str> {
    if p.contains('\\') {
        Cow::Owned(p.replace('\\', "/"))
    } else {
        Cow::Borrowed(p)
    }
}

/// `long` ends with `/` + `short`.
fn ends_with_component(long: &str, short: &str) -> bool {
    long.len() > short.len()
        && long.ends_with(short)
        && long.as_bytes()[long.len() - short.len() - 1] == b'/'
}

/// Whether two inclusive line ranges share at least one line. Touching
/// ranges (`[10, 20]` and `[20, 30]`) overlap.
pub fn spans_overlap(a: (u32, u32), b: (u32, u32)) -> bool {
    !(a.1 < b.0 || a.0 > b.1)
}

// ----- serde for Target: a path string or {path, start_line, end_line} -----

impl Serialize for Target {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.lines {
            None => serializer.serialize_str(&self.path),
            Some((start, end)) => {
                let mut map = serializer.serialize_map(Some(3))?;
                map.serialize_entry("path", &self.path)?;
                map.serialize_entry("start_line", &start)?;
                map.serialize_entry("end_line", &end)?;
                map.end()
            }
        }
    }
}

impl<'de> Deserialize<'de> for Target {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TargetVisitor)
    }
}

struct TargetVisitor;

impl<'de> Visitor<'de> for TargetVisitor {
    type Value = Target;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a target: a path string or {\"path\", \"start_line\", \"end_line\"}")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Target, E> {
        if v.trim().is_empty() {
            return Err(E::custom("empty target path"));
        }
        Ok(Target::file(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Target, A::Error> {
        let mut path: Option<String> = None;
        let mut start: Option<u32> = None;
        let mut end: Option<u32> = None;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "path" => path = Some(map.next_value()?),
                "start_line" => start = map.next_value::<Option<LineNumber>>()?.map(|l| l.0),
                "end_line" => end = map.next_value::<Option<LineNumber>>()?.map(|l| l.0),
                _ => {
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        let path = path.ok_or_else(|| de::Error::missing_field("path"))?;
        if path.trim().is_empty() {
            return Err(de::Error::custom("empty target path"));
        }
        let lines = match (start, end) {
            (Some(s), Some(e)) if s > e => {
                return Err(de::Error::custom(format!(
                    "target {path}: start_line {s} is after end_line {e}"
                )));
            }
            (Some(s), Some(e)) => Some((s, e)),
            _ => None,
        };
        Ok(Target { path, lines })
    }
}

/// A line number given as an integer or a numeric string.
struct LineNumber(u32);

impl<'de> Deserialize<'de> for LineNumber {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = LineNumber;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a line number")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<LineNumber, E> {
                u32::try_from(v)
                    .map(LineNumber)
                    .map_err(|_| E::custom(format!("line number {v} is too large")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<LineNumber, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("negative line number {v}")))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<LineNumber, E> {
                v.trim()
                    .parse::<u32>()
                    .map(LineNumber)
                    .map_err(|_| E::custom(format!("invalid line number {v:?}")))
            }
        }
        deserializer.deserialize_any(V)
    }
}
