//! Terms for tool search: identifier-aware words, a light English stemmer,
//! stop words, and character bigrams for CJK text.
//!
//! `searchRepoIssues` gives `search_repo_issues`, `search`, `repo`, `issu`;
//! "Finding the papers" gives `find`, `paper` (`the` is a stop word).
//! Queries and tool texts go through the same function, so whatever the
//! stemmer does to a word it does on both sides.

/// Longest word kept; longer runs (hashes, base64) are noise.
const MAX_WORD: usize = 64;

/// Common English function words: they carry no meaning about a tool, and
/// tool-search queries are often full sentences ("Can I find …?").
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "any", "are", "as", "at", "be", "been", "but", "by", "can", "could",
    "do", "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it",
    "its", "me", "my", "of", "on", "or", "our", "please", "should", "so", "some", "that", "the",
    "their", "them", "then", "there", "these", "this", "those", "to", "us", "was", "we", "were",
    "what", "when", "where", "which", "who", "will", "with", "would", "you", "your",
];

fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_ok()
}

/// Han, kana and Hangul: scripts written without spaces, searched by
/// overlapping character pairs (as Lucene's CJK bigram filter does).
fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{3040}'..='\u{30FF}'   // hiragana, katakana
        | '\u{3400}'..='\u{4DBF}' // CJK extension A
        | '\u{4E00}'..='\u{9FFF}' // CJK unified ideographs
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // CJK compatibility ideographs
    )
}

pub use lode_core::ident::split_identifier;

/// A light suffix stripper: plurals, `-ing`, `-ed`, a final `e`. Not a
/// linguistic stemmer: its only job is that "search", "searches" and
/// "searching" (and "create", "created", "creating") meet.
pub fn stem(word: &str) -> String {
    let w = word;
    if w.len() <= 3 || !w.bytes().all(|b| b.is_ascii_lowercase()) {
        return w.to_string();
    }
    let has_vowel = |s: &str| s.bytes().any(|b| b"aeiouy".contains(&b));
    let mut s: &str = w;
    let owned;
    if let Some(base) = s.strip_suffix("ies").filter(|b| b.len() >= 2) {
        owned = format!("{base}y");
        s = &owned;
    } else if let Some(base) = s.strip_suffix("sses") {
        s = &w[..base.len() + 2];
    } else if s.ends_with('s') && !s.ends_with("ss") && !s.ends_with("us") && !s.ends_with("is") {
        s = &s[..s.len() - 1];
    }
    let mut out = s.to_string();
    for suffix in ["ing", "ed"] {
        if let Some(base) = out.strip_suffix(suffix)
            && base.len() >= 3
            && has_vowel(base)
        {
            let mut base = base.to_string();
            // running → runn → run; but keep "install", "access", "buzz".
            let b = base.as_bytes();
            if b.len() >= 2 && b[b.len() - 1] == b[b.len() - 2] && !b"lsz".contains(&b[b.len() - 1])
            {
                base.pop();
            }
            out = base;
            break;
        }
    }
    if out.len() > 3 && out.ends_with('e') {
        out.pop();
    }
    out
}

/// Calls `emit` with each term of `text`, in order, repeats included.
///
/// A word (a run of letters, digits, `_`, and `-` or `.` between letters) gives
/// its parts, stemmed, without stop words; a word of several parts also gives
/// itself whole (lower-cased, `-` and `.` as `_`), so that an exact identifier
/// scores above its scattered parts. CJK runs give their character bigrams
/// (a lone character gives itself).
pub fn for_each_term(text: &str, mut emit: impl FnMut(String)) {
    words(text, |w, cjk| {
        if cjk {
            let chars: Vec<char> = w.chars().collect();
            if chars.len() == 1 {
                emit(w.to_string());
            }
            for pair in chars.windows(2) {
                emit(pair.iter().collect());
            }
            return;
        }
        if w.len() > MAX_WORD {
            return;
        }
        let parts = split_identifier(w);
        if parts.len() > 1 {
            let whole: String = parts.join("_");
            emit(whole);
        }
        for p in parts {
            if !is_stop_word(&p) {
                emit(stem(&p));
            }
        }
    });
}

/// The terms of `text`, repeats included.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_term(text, |t| out.push(t));
    out
}

/// The distinct terms of `text`, in first-seen order.
pub fn distinct_terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for_each_term(text, |t| {
        if !out.contains(&t) {
            out.push(t);
        }
    });
    out
}

/// `text` without its stop words, words otherwise as written: what an
/// embedder sees of a query. Static embeddings average their tokens, so a
/// sentence's function words dilute the words that say what is wanted.
pub fn content_words(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    words(text, |w, cjk| {
        if cjk || !is_stop_word(&w.to_lowercase()) {
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(w);
        }
    });
    out
}

/// `name` as an identifier key: lower-cased, with `-`, `.` and spaces as `_`.
/// Two spellings of one name (`Read-File`, `read_file`) get the same key.
pub fn identifier_key(name: &str) -> String {
    name.trim()
        .chars()
        .map(|c| match c {
            '-' | '.' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

/// Calls `emit(word, is_cjk)` for each word of `text`.
fn words(text: &str, mut emit: impl FnMut(&str, bool)) {
    let is_word = |c: char| (c.is_alphanumeric() || c == '_') && !is_cjk(c);
    let mut start: Option<(usize, bool)> = None;
    let mut chars = text.char_indices().peekable();
    let mut prev: Option<char> = None;
    while let Some((pos, c)) = chars.next() {
        let class = if is_cjk(c) {
            Some(true)
        } else if is_word(c) {
            Some(false)
        } else {
            None
        };
        match (start, class) {
            (Some((_, a)), Some(b)) if a == b => {}
            (_, Some(b)) => {
                if let Some((s, a)) = start {
                    emit(&text[s..pos], a);
                }
                start = Some((pos, b));
            }
            (Some((s, false)), None) => {
                // Keep `kebab-case` and `dotted.names` together when letters are on both sides.
                let joins = (c == '-' || c == '.')
                    && prev.is_some_and(|p| p.is_alphabetic())
                    && chars
                        .peek()
                        .is_some_and(|&(_, n)| n.is_alphabetic() && !is_cjk(n));
                if !joins {
                    emit(&text[s..pos], false);
                    start = None;
                }
            }
            (Some((s, true)), None) => {
                emit(&text[s..pos], true);
                start = None;
            }
            (None, None) => {}
        }
        prev = Some(c);
    }
    if let Some((s, a)) = start {
        emit(&text[s..], a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn stems_meet_across_inflections() {
        for group in [
            ["search", "searches", "searching"],
            ["create", "created", "creating"],
            ["query", "queries", "query"],
            ["run", "running", "runs"],
            ["file", "files", "filed"],
        ] {
            let stems: Vec<String> = group.iter().map(|w| stem(w)).collect();
            assert!(
                stems.iter().all(|s| s == &stems[0]),
                "{group:?} → {stems:?}"
            );
        }
        // Words that only look inflected stay apart from their look-alikes.
        assert_ne!(stem("status"), stem("statu"));
        assert_eq!(stem("address"), "address");
        assert_eq!(stem("analysis"), "analysis");
    }

    #[test]
    fn terms_keep_identifiers_whole_and_split() {
        assert_eq!(
            terms("call searchRepoIssues"),
            ["call", "search_repo_issues", "search", "repo", "issu"]
        );
        assert_eq!(terms("Can I find the papers?"), ["find", "paper"]);
        assert_eq!(
            terms("web-search a.b"),
            ["web_search", "web", "search", "a_b", "b"]
        );
    }

    #[test]
    fn cjk_text_gives_bigrams() {
        assert_eq!(terms("必应搜索 api"), ["必应", "应搜", "搜索", "api"]);
        assert_eq!(terms("搜"), ["搜"]);
    }

    #[test]
    fn content_words_drop_function_words_only() {
        assert_eq!(
            content_words("Can I rent an apartment in Denver?"),
            "rent apartment Denver"
        );
        assert_eq!(content_words("the of and"), "");
    }

    #[test]
    fn identifier_keys_ignore_separators_and_case() {
        assert_eq!(identifier_key("Read-File"), identifier_key("read_file"));
    }
}
