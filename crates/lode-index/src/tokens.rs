//! Code-aware tokens for lexical search.
//!
//! An identifier is indexed whole (lower-cased) and, when it has several
//! parts, part by part: `parseHTTPConfig2` gives `parsehttpconfig2`, `parse`,
//! `http`, `config`, `2`; `max_file_size` and `max-file-size` both give
//! `max_file_size`, `max`, `file`, `size`. Queries are tokenized the same way.

/// Longest token kept; longer runs (hashes, base64) are noise.
const MAX_TOKEN: usize = 64;

/// Calls `emit` with each word of `text`: a run of letters, digits and `_`,
/// joined across single `-` between letters (kebab-case).
fn words(text: &str, mut emit: impl FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut start = None;
    let mut i = 0;
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut chars = text.char_indices().peekable();
    while let Some((pos, c)) = chars.next() {
        i = pos + c.len_utf8();
        if is_word(c) {
            start.get_or_insert(pos);
            continue;
        }
        // Keep kebab-case words together: `a-b` where both sides are letters.
        if c == '-' && start.is_some() {
            let prev_alpha = bytes
                .get(pos.wrapping_sub(1))
                .is_some_and(|b| b.is_ascii_alphabetic());
            let next_alpha = chars.peek().is_some_and(|(_, n)| n.is_alphabetic());
            if prev_alpha && next_alpha {
                continue;
            }
        }
        if let Some(s) = start.take() {
            emit(&text[s..pos]);
        }
    }
    if let Some(s) = start {
        emit(&text[s..i.max(s)]);
    }
}

/// Splits an identifier into its lower-cased parts: camelCase, PascalCase,
/// ACRONYMCase, snake_case, kebab-case and digit runs.
pub fn split_identifier(word: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let chars: Vec<char> = word.chars().collect();
    let mut cur = String::new();
    let flush = |cur: &mut String, parts: &mut Vec<String>| {
        if !cur.is_empty() {
            parts.push(std::mem::take(cur).to_lowercase());
        }
    };
    for i in 0..chars.len() {
        let c = chars[i];
        if c == '_' || c == '-' {
            flush(&mut cur, &mut parts);
            continue;
        }
        if let Some(&p) = cur.chars().last().as_ref() {
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower)
                || (p.is_ascii_digit() != c.is_ascii_digit());
            if boundary {
                flush(&mut cur, &mut parts);
            }
        }
        cur.push(c);
    }
    flush(&mut cur, &mut parts);
    parts
}

/// Appends the tokens of `text` to `out`, space-separated, for the full-text index.
pub fn push_tokens(text: &str, out: &mut String) {
    words(text, |w| {
        if w.len() > MAX_TOKEN {
            return;
        }
        let whole = w.replace('-', "_").to_lowercase();
        let whole = whole.trim_matches('_');
        if whole.is_empty() {
            return;
        }
        out.push_str(whole);
        out.push(' ');
        let parts = split_identifier(w);
        if parts.len() > 1 {
            for p in parts {
                out.push_str(&p);
                out.push(' ');
            }
        }
    });
}

/// The tokens of `text` as a string, for the full-text index.
pub fn index_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    push_tokens(text, &mut out);
    out
}

/// The distinct tokens of a query, in first-seen order.
pub fn query_terms(query: &str) -> Vec<String> {
    let text = index_text(query);
    let mut seen = std::collections::HashSet::new();
    text.split_whitespace()
        .filter(|t| seen.insert(*t))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            split_identifier("parseHTTPConfig2"),
            ["parse", "http", "config", "2"]
        );
        assert_eq!(split_identifier("max_file_size"), ["max", "file", "size"]);
        assert_eq!(
            split_identifier("XMLHttpRequest"),
            ["xml", "http", "request"]
        );
        assert_eq!(split_identifier("utf8"), ["utf", "8"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
        assert_eq!(split_identifier("simple"), ["simple"]);
    }

    #[test]
    fn index_text_keeps_whole_and_parts() {
        assert_eq!(
            index_text("fn parseConfig(x)"),
            "fn parseconfig parse config x "
        );
        assert_eq!(
            index_text("--max-file-size=3"),
            "max_file_size max file size 3 "
        );
        assert_eq!(index_text("a - b"), "a b ");
        assert_eq!(index_text("__init__"), "init ");
    }

    #[test]
    fn query_terms_are_distinct() {
        assert_eq!(
            query_terms("parse config parseConfig"),
            ["parse", "config", "parseconfig"]
        );
    }
}
