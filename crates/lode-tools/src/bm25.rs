//! BM25F over the fields of a few hundred tools, in memory.

use std::collections::HashMap;

use crate::fields::Field;

/// BM25F parameters: one weight and one length normalisation per field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bm25Params {
    /// Term-frequency saturation: how soon repeats of a term stop adding to
    /// its score (default 1.2).
    pub k1: f32,
    /// Per field: name words, description, parameter text.
    pub weights: [f32; Field::COUNT],
    /// Per field, in the same order.
    pub b: [f32; Field::COUNT],
}

impl Default for Bm25Params {
    /// A name word says more than a description word, which says more than a
    /// parameter word; names are short and all alike in length, so their
    /// length matters less.
    fn default() -> Self {
        Bm25Params {
            k1: 1.2,
            weights: [3.0, 1.0, 0.5],
            b: [0.3, 0.75, 0.75],
        }
    }
}

/// Term → the documents holding it, with per-field term frequencies.
#[derive(Debug, Default)]
pub struct Bm25 {
    postings: HashMap<String, Vec<(u32, [u16; Field::COUNT])>>,
    lengths: Vec<[u32; Field::COUNT]>,
    average: [f32; Field::COUNT],
    params: Bm25Params,
}

impl Bm25 {
    /// An index of `docs`: per document, the terms of each field.
    pub fn new(docs: &[[Vec<String>; Field::COUNT]], params: Bm25Params) -> Bm25 {
        let mut postings: HashMap<String, Vec<(u32, [u16; Field::COUNT])>> = HashMap::new();
        let mut lengths = Vec::with_capacity(docs.len());
        let mut totals = [0f64; Field::COUNT];
        for (doc, fields) in docs.iter().enumerate() {
            let mut len = [0u32; Field::COUNT];
            let mut tf: HashMap<&str, [u16; Field::COUNT]> = HashMap::new();
            for (f, terms) in fields.iter().enumerate() {
                len[f] = terms.len() as u32;
                totals[f] += terms.len() as f64;
                for t in terms {
                    let e = tf.entry(t.as_str()).or_default();
                    e[f] = e[f].saturating_add(1);
                }
            }
            for (term, freqs) in tf {
                match postings.get_mut(term) {
                    Some(list) => list.push((doc as u32, freqs)),
                    None => {
                        postings.insert(term.to_string(), vec![(doc as u32, freqs)]);
                    }
                }
            }
            lengths.push(len);
        }
        let n = docs.len().max(1) as f64;
        let average = totals.map(|t| ((t / n) as f32).max(1.0));
        Bm25 {
            postings,
            lengths,
            average,
            params,
        }
    }

    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    /// Adds the BM25F score of each document for the distinct `terms` into `scores`
    /// (one slot per document).
    pub fn score_into(&self, terms: &[String], scores: &mut [f32]) {
        let n = self.len() as f32;
        let p = &self.params;
        for term in terms {
            let Some(list) = self.postings.get(term) else {
                continue;
            };
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &(doc, freqs) in list {
                let len = &self.lengths[doc as usize];
                let tf: f32 = (0..Field::COUNT)
                    .filter(|&f| freqs[f] > 0)
                    .map(|f| {
                        let norm = 1.0 - p.b[f] + p.b[f] * len[f] as f32 / self.average[f];
                        p.weights[f] * f32::from(freqs[f]) / norm
                    })
                    .sum();
                scores[doc as usize] += idf * tf * (p.k1 + 1.0) / (tf + p.k1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str, desc: &str) -> [Vec<String>; Field::COUNT] {
        let split = |s: &str| s.split_whitespace().map(str::to_string).collect();
        [split(name), split(desc), Vec::new()]
    }

    fn scores(bm: &Bm25, q: &str) -> Vec<f32> {
        let terms: Vec<String> = q.split_whitespace().map(str::to_string).collect();
        let mut s = vec![0.0; bm.len()];
        bm.score_into(&terms, &mut s);
        s
    }

    #[test]
    fn rare_terms_and_name_fields_weigh_more() {
        let bm = Bm25::new(
            &[
                doc("weather", "get the forecast"),
                doc("news", "get the weather headlines"),
                doc("stocks", "get quotes"),
            ],
            Bm25Params::default(),
        );
        let s = scores(&bm, "weather");
        assert!(s[0] > s[1], "a name match beats a description match: {s:?}");
        assert_eq!(s[2], 0.0);
        let s = scores(&bm, "get forecast");
        assert!(s[0] > s[1] && s[1] > 0.0, "the rare term decides: {s:?}");
    }
}
