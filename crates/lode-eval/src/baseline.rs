//! The whole-file baseline every task-retrieval report sets lode beside:
//! plain Okapi BM25 over whole files (k1 1.2, b 0.75), each file one
//! document, no fields, no stopwords, no rerank.
//!
//! Tokens are identifier runs (letters, digits, `_`) lower-cased, plus their
//! camelCase / snake_case parts when there are several ([`bm25_tokens`]).
//! A query token counts once per occurrence (as `rank_bm25` and Lucene's
//! repeated clauses do), so a word the text repeats weighs more.
//!
//! It is written apart from lode's own index on purpose: a baseline that
//! shared lode's tokenizer or postings would move with them.

use std::collections::HashMap;

/// Okapi BM25's term-frequency saturation.
pub const K1: f64 = 1.2;
/// Okapi BM25's length normalisation.
pub const B: f64 = 0.75;

/// Whole-file Okapi BM25 over a fixed set of documents.
///
/// ```
/// use lode_eval::FileBm25;
/// let index = FileBm25::new([
///     ("src/session.py".to_string(), "def request(method): method = builtin_str(method)".to_string()),
///     ("src/models.py".to_string(), "class Response: pass".to_string()),
/// ]);
/// let ranked = index.rank("builtin_str converts the method", 10);
/// assert_eq!(ranked[0].0, "src/session.py");
/// ```
pub struct FileBm25 {
    paths: Vec<String>,
    lengths: Vec<u32>,
    average_length: f64,
    /// Term → (document, term frequency), documents ascending.
    postings: HashMap<String, Vec<(u32, u32)>>,
}

impl FileBm25 {
    /// Indexes `(path, text)` documents.
    pub fn new(docs: impl IntoIterator<Item = (String, String)>) -> FileBm25 {
        let mut paths = Vec::new();
        let mut lengths = Vec::new();
        let mut postings: HashMap<String, Vec<(u32, u32)>> = HashMap::new();
        for (doc, (path, text)) in docs.into_iter().enumerate() {
            let doc = doc as u32;
            let mut counts: HashMap<String, u32> = HashMap::new();
            let mut length = 0u32;
            for token in bm25_tokens(&text) {
                *counts.entry(token).or_default() += 1;
                length += 1;
            }
            for (term, tf) in counts {
                postings.entry(term).or_default().push((doc, tf));
            }
            paths.push(path);
            lengths.push(length);
        }
        let average_length = if lengths.is_empty() {
            0.0
        } else {
            lengths.iter().map(|&l| f64::from(l)).sum::<f64>() / lengths.len() as f64
        };
        FileBm25 {
            paths,
            lengths,
            average_length,
            postings,
        }
    }

    /// Documents indexed.
    pub fn len(&self) -> usize {
        self.paths.len()
    }

    /// Whether no document was indexed.
    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// The best `k` documents for `query`, best first; ties by path.
    pub fn rank(&self, query: &str, k: usize) -> Vec<(String, f64)> {
        let n = self.paths.len() as f64;
        let mut scores = vec![0.0f64; self.paths.len()];
        for term in bm25_tokens(query) {
            let Some(list) = self.postings.get(&term) else {
                continue;
            };
            let df = list.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, tf) in list {
                let tf = f64::from(tf);
                let norm = 1.0 - B
                    + B * f64::from(self.lengths[doc as usize]) / self.average_length.max(1e-9);
                scores[doc as usize] += idf * tf * (K1 + 1.0) / (tf + K1 * norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s > 0.0)
            .collect();
        ranked.sort_by(|a, b| {
            b.1.total_cmp(&a.1)
                .then_with(|| self.paths[a.0].cmp(&self.paths[b.0]))
        });
        ranked
            .into_iter()
            .take(k)
            .map(|(doc, s)| (self.paths[doc].clone(), s))
            .collect()
    }
}

/// The baseline's tokens: each run of letters, digits and `_`, lower-cased,
/// then its camelCase / snake_case parts when it has more than one.
pub fn bm25_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for run in text
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|r| !r.is_empty())
    {
        let whole = run.trim_matches('_').to_lowercase();
        if whole.is_empty() {
            continue;
        }
        let parts = lode_core::ident::split_identifier(run);
        out.push(whole);
        if parts.len() > 1 {
            out.extend(parts);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_runs_and_their_parts() {
        assert_eq!(
            bm25_tokens("parseConfig(max_size) -- Foo"),
            [
                "parseconfig",
                "parse",
                "config",
                "max_size",
                "max",
                "size",
                "foo"
            ]
        );
        assert!(bm25_tokens("  ..  ").is_empty());
    }

    #[test]
    fn a_rare_term_outweighs_a_common_one_and_length_normalises() {
        let docs = [
            ("a.py", "common other rare"),
            ("b.py", "common other other other other other other"),
            ("c.py", "common other"),
        ]
        .map(|(p, t)| (p.to_string(), t.to_string()));
        let index = FileBm25::new(docs);
        assert_eq!(index.len(), 3);
        assert_eq!(index.rank("rare common", 10)[0].0, "a.py");
        // One occurrence each: the shortest file first, the longest last.
        let ranked: Vec<String> = index.rank("common", 10).into_iter().map(|r| r.0).collect();
        assert_eq!(ranked, ["c.py", "a.py", "b.py"]);
    }

    #[test]
    fn a_repeated_query_word_weighs_more() {
        let docs = [("a.py", "alpha filler"), ("b.py", "beta filler")]
            .map(|(p, t)| (p.to_string(), t.to_string()));
        let index = FileBm25::new(docs);
        assert_eq!(index.rank("alpha beta beta", 1)[0].0, "b.py");
        assert_eq!(index.rank("alpha alpha beta", 1)[0].0, "a.py");
        assert!(index.rank("gamma", 5).is_empty());
    }
}
