//! Which queries gather runs for: natural language, not an identifier or a regex.
//!
//! lode-search keeps its own query shape private (it only tunes ranking), so
//! this is a small separate rule: the walk helps when the query describes a
//! task, while a query that names a symbol or a pattern already says exactly
//! what it wants.

use serde::Serialize;

/// What a query looks like, which decides whether the walk runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum QueryShape {
    /// Words describing a task: gather walks.
    NaturalLanguage,
    /// One identifier or qualified name (`parse_config`, `Config::load`), or
    /// several identifiers and no plain word.
    Identifier,
    /// A pattern (`fn .*config`, `^import`, `foo|bar`).
    Regex,
}

impl QueryShape {
    /// The shape of `query`: a regex when it holds a pattern marker, else
    /// natural language when it has two or more words and one is plain
    /// (letters only, at most a leading capital), else an identifier.
    pub fn of(query: &str) -> QueryShape {
        let q = query.trim();
        if looks_like_regex(q) {
            return QueryShape::Regex;
        }
        let words: Vec<&str> = q.split_whitespace().collect();
        // A plain word (letters only, at most a leading capital) marks prose;
        // `parse_config load_file` is two identifiers.
        let plain = |w: &&str| {
            let w = w.trim_matches(|c: char| matches!(c, ',' | '?' | '!' | '"' | '\''));
            !w.is_empty()
                && w.chars().all(char::is_alphabetic)
                && !w.chars().skip(1).any(char::is_uppercase)
        };
        if words.len() >= 2 && words.iter().any(plain) {
            QueryShape::NaturalLanguage
        } else {
            QueryShape::Identifier
        }
    }

    /// Whether gather walks for this shape: natural language only.
    pub fn walks(self) -> bool {
        self == QueryShape::NaturalLanguage
    }

    /// The shape in words, as the `skipped` message names it.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryShape::NaturalLanguage => "natural language",
            QueryShape::Identifier => "identifier",
            QueryShape::Regex => "regex",
        }
    }
}

fn looks_like_regex(q: &str) -> bool {
    const MARKERS: &[&str] = &[
        "\\", ".*", ".+", ".?", "[^", "(?", "|", "{0,", "{1,", "[a-z", "[A-Z", "[0-9",
    ];
    MARKERS.iter().any(|m| q.contains(m)) || q.starts_with('^') || q.ends_with('$')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tells_sentences_from_identifiers_and_patterns() {
        for q in [
            "where are retry delays computed",
            "parse config",
            "How does Upload retry?",
            "retry parse_config",
        ] {
            assert_eq!(QueryShape::of(q), QueryShape::NaturalLanguage, "{q}");
        }
        for q in [
            "parse_config",
            "Config::load",
            "parseConfig",
            "cfg.load_file",
            "parse_config load_file",
        ] {
            assert_eq!(QueryShape::of(q), QueryShape::Identifier, "{q}");
        }
        for q in ["fn .*config", "^import os", "retry|backoff", r"\bparse\w+"] {
            assert_eq!(QueryShape::of(q), QueryShape::Regex, "{q}");
        }
        assert!(QueryShape::of("retry delay").walks());
        assert!(!QueryShape::of("retry_delay").walks());
    }
}
