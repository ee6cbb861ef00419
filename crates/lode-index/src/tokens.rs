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

pub use lode_core::ident::split_identifier;

/// Calls `emit` with each word of `text` as the index tokenizes it: the whole
/// word lower-cased, and its parts when it has more than one (`parseConfig`
/// → `parseconfig`, [`parse`, `config`]; `max-size` → `max_size`, [`max`, `size`]).
pub fn each_word(text: &str, mut emit: impl FnMut(&str, &[String])) {
    words(text, |w| {
        if w.len() > MAX_TOKEN {
            return;
        }
        let whole = w.replace('-', "_").to_lowercase();
        let whole = whole.trim_matches('_');
        if whole.is_empty() {
            return;
        }
        let parts = split_identifier(w);
        emit(whole, if parts.len() > 1 { &parts } else { &[] });
    });
}

/// Appends the tokens of `text` to `out`, space-separated, for the full-text index.
pub fn push_tokens(text: &str, out: &mut String) {
    each_word(text, |whole, parts| {
        out.push_str(whole);
        out.push(' ');
        for p in parts {
            out.push_str(p);
            out.push(' ');
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
