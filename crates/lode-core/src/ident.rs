//! Identifiers split into words, the same way for code search and tool search.

/// Splits an identifier into its lower-cased parts: camelCase, PascalCase,
/// ACRONYMCase, snake_case, kebab-case, dotted.names and digit runs.
pub fn split_identifier(word: &str) -> Vec<String> {
    // Most words of a description are one part: `Search`, `files`.
    let b = word.as_bytes();
    if !b.is_empty()
        && b.iter().all(u8::is_ascii_alphabetic)
        && b[1..].iter().all(u8::is_ascii_lowercase)
    {
        return vec![word.to_ascii_lowercase()];
    }
    let chars: Vec<char> = word.chars().collect();
    let mut parts = Vec::new();
    let mut cur = String::new();
    let flush = |cur: &mut String, parts: &mut Vec<String>| {
        if !cur.is_empty() {
            parts.push(std::mem::take(cur).to_lowercase());
        }
    };
    for (i, &c) in chars.iter().enumerate() {
        if c == '_' || c == '-' || c == '.' {
            flush(&mut cur, &mut parts);
            continue;
        }
        if let Some(p) = (!cur.is_empty()).then(|| chars[i - 1]) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_identifiers() {
        assert_eq!(
            split_identifier("parseHTTPConfig2"),
            ["parse", "http", "config", "2"]
        );
        assert_eq!(split_identifier("max_file-size"), ["max", "file", "size"]);
        assert_eq!(
            split_identifier("XMLHttpRequest"),
            ["xml", "http", "request"]
        );
        assert_eq!(split_identifier("utf8"), ["utf", "8"]);
        assert_eq!(split_identifier("__init__"), ["init"]);
        assert_eq!(split_identifier("os.path"), ["os", "path"]);
        assert_eq!(split_identifier("Search"), ["search"]);
        assert_eq!(split_identifier("simple"), ["simple"]);
    }
}
