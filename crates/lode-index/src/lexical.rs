//! Lexical retrieval: BM25F over code-aware tokens in three fields (symbol
//! names, path, body), stored as one postings blob per term.
//!
//! Why not SQLite FTS5: measured on a 728k-line repository, an FTS5 `bm25()`
//! query took 10–30 ms warm, and FTS5's IDF drops to zero for terms in more
//! than half the chunks. A blob per term decodes in microseconds, lets lode
//! own the scoring (BM25F with Lucene's always-positive IDF), and stays
//! inside the same SQLite transaction as every other record. The price is
//! write amplification: an edit rewrites the blobs of every term the changed
//! files contain (see ARCHITECTURE.md for the measured cost).

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use crate::tokens;

/// Term frequencies of one term in one chunk, per field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FieldCounts {
    pub name: u32,
    pub path: u32,
    pub body: u32,
}

/// One chunk in a term's postings: its frequencies and its field lengths.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Posting {
    pub chunk: i64,
    pub tf: FieldCounts,
    pub len: FieldCounts,
}

/// The terms of one chunk, ready to be posted.
#[derive(Clone, Debug, Default)]
pub struct ChunkTerms {
    pub len: FieldCounts,
    pub terms: Vec<(String, FieldCounts)>,
}

impl ChunkTerms {
    /// Counts the tokens of the three fields (each a space-separated token string).
    pub fn new(name_tokens: &str, path_tokens: &str, body_tokens: &str) -> ChunkTerms {
        let mut map: HashMap<&str, FieldCounts> = HashMap::new();
        let mut len = FieldCounts::default();
        for t in name_tokens.split_whitespace() {
            map.entry(t).or_default().name += 1;
            len.name += 1;
        }
        for t in path_tokens.split_whitespace() {
            map.entry(t).or_default().path += 1;
            len.path += 1;
        }
        for t in body_tokens.split_whitespace() {
            map.entry(t).or_default().body += 1;
            len.body += 1;
        }
        let mut terms: Vec<(String, FieldCounts)> =
            map.into_iter().map(|(t, c)| (t.to_string(), c)).collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        ChunkTerms { len, terms }
    }

    /// The chunk's tokens for text: the names it defines, the file path, its body.
    pub fn from_text(names: &str, path_tokens: &str, body: &str) -> ChunkTerms {
        ChunkTerms::new(
            &tokens::index_text(names),
            path_tokens,
            &tokens::index_text(body),
        )
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(data: &[u8], pos: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *data.get(*pos)?;
        *pos += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
}

/// Encodes postings sorted by chunk id: delta-coded ids, then the six counts, all varints.
pub fn encode(postings: &[Posting]) -> Vec<u8> {
    let mut out = Vec::with_capacity(postings.len() * 8);
    let mut prev = 0i64;
    for p in postings {
        put_varint(&mut out, (p.chunk - prev) as u64);
        prev = p.chunk;
        for v in [
            p.tf.name, p.tf.path, p.tf.body, p.len.name, p.len.path, p.len.body,
        ] {
            put_varint(&mut out, u64::from(v));
        }
    }
    out
}

/// Decodes a blob written by [`encode`]; `None` when it is damaged.
pub fn decode(data: &[u8], mut f: impl FnMut(Posting)) -> Option<()> {
    let mut pos = 0;
    let mut chunk = 0i64;
    while pos < data.len() {
        chunk += get_varint(data, &mut pos)? as i64;
        let mut v = [0u32; 6];
        for slot in &mut v {
            *slot = u32::try_from(get_varint(data, &mut pos)?).ok()?;
        }
        f(Posting {
            chunk,
            tf: FieldCounts {
                name: v[0],
                path: v[1],
                body: v[2],
            },
            len: FieldCounts {
                name: v[3],
                path: v[4],
                body: v[5],
            },
        });
    }
    Some(())
}

/// Postings gathered during a build, written at its end.
#[derive(Default)]
pub struct PendingPostings {
    map: HashMap<String, Vec<Posting>>,
    /// Chunks removed by this build: their postings are dropped.
    removed_chunks: HashSet<i64>,
    /// Terms whose postings may hold removed chunks.
    removed_terms: HashSet<String>,
}

impl PendingPostings {
    pub fn add_chunk(&mut self, chunk: i64, terms: &ChunkTerms) {
        for (t, tf) in &terms.terms {
            self.map.entry(t.clone()).or_default().push(Posting {
                chunk,
                tf: *tf,
                len: terms.len,
            });
        }
    }

    /// Records a file's removal: its chunk ids and its distinct terms.
    pub fn remove_file(&mut self, chunks: impl IntoIterator<Item = i64>, terms: &str) {
        self.removed_chunks.extend(chunks);
        self.removed_terms.extend(
            terms
                .split('\n')
                .filter(|t| !t.is_empty())
                .map(str::to_string),
        );
    }

    /// Rewrites the postings of every affected term.
    pub fn write(self, tx: &Transaction) -> rusqlite::Result<()> {
        let PendingPostings {
            mut map,
            removed_chunks,
            removed_terms,
        } = self;
        let mut affected: Vec<String> = map.keys().cloned().chain(removed_terms).collect();
        affected.sort();
        affected.dedup();
        let mut read = tx.prepare_cached("SELECT data FROM postings WHERE term = ?1")?;
        let mut upsert = tx.prepare_cached(
            "INSERT OR REPLACE INTO postings(term, df, data) VALUES (?1, ?2, ?3)",
        )?;
        let mut delete = tx.prepare_cached("DELETE FROM postings WHERE term = ?1")?;
        for term in affected {
            let mut list: Vec<Posting> = Vec::new();
            if let Some(blob) = read
                .query_row([&term], |r| r.get::<_, Vec<u8>>(0))
                .optional()?
            {
                // A damaged blob loses its old postings; the rest of the build goes on.
                let _ = decode(&blob, |p| {
                    if !removed_chunks.contains(&p.chunk) {
                        list.push(p);
                    }
                });
            }
            if let Some(new) = map.remove(&term) {
                list.extend(new);
            }
            if list.is_empty() {
                delete.execute([&term])?;
                continue;
            }
            list.sort_by_key(|p| p.chunk);
            upsert.execute(params![term, list.len() as i64, encode(&list)])?;
        }
        Ok(())
    }
}

/// Collection statistics for BM25: chunk count and mean field lengths.
#[derive(Clone, Copy, Debug, Default)]
pub struct CollectionStats {
    pub chunks: f64,
    pub avg: [f64; 3],
}

impl CollectionStats {
    pub fn to_meta(&self) -> String {
        format!(
            "{} {} {} {}",
            self.chunks, self.avg[0], self.avg[1], self.avg[2]
        )
    }

    pub fn from_meta(s: &str) -> Option<CollectionStats> {
        let v: Vec<f64> = s
            .split_whitespace()
            .map(|x| x.parse().ok())
            .collect::<Option<_>>()?;
        (v.len() == 4).then(|| CollectionStats {
            chunks: v[0],
            avg: [v[1], v[2], v[3]],
        })
    }
}

/// BM25F parameters: field weights and length normalisation per field.
#[derive(Clone, Copy, Debug)]
pub struct Bm25Params {
    pub k1: f64,
    /// Weights of names, path, body.
    pub weight: [f64; 3],
    /// Length normalisation of names, path, body.
    pub b: [f64; 3],
}

impl Default for Bm25Params {
    fn default() -> Bm25Params {
        Bm25Params {
            k1: 1.2,
            weight: [3.0, 1.5, 1.0],
            b: [0.5, 0.5, 0.75],
        }
    }
}

impl Bm25Params {
    /// Lucene's IDF, which stays positive for very common terms.
    pub fn idf(&self, stats: &CollectionStats, df: f64) -> f64 {
        (1.0 + (stats.chunks - df + 0.5) / (df + 0.5)).ln()
    }

    /// BM25F: field frequencies normalised per field, weighted, then saturated once.
    pub fn score(&self, stats: &CollectionStats, idf: f64, p: &Posting) -> f64 {
        let tf = [p.tf.name, p.tf.path, p.tf.body];
        let len = [p.len.name, p.len.path, p.len.body];
        let mut pseudo = 0.0;
        for f in 0..3 {
            if tf[f] == 0 {
                continue;
            }
            let avg = stats.avg[f].max(1e-9);
            let norm = 1.0 - self.b[f] + self.b[f] * f64::from(len[f]) / avg;
            pseudo += self.weight[f] * f64::from(tf[f]) / norm;
        }
        idf * pseudo * (self.k1 + 1.0) / (self.k1 + pseudo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_round_trip() {
        let ps = vec![
            Posting {
                chunk: 3,
                tf: FieldCounts {
                    name: 1,
                    path: 0,
                    body: 4,
                },
                len: FieldCounts {
                    name: 2,
                    path: 5,
                    body: 300,
                },
            },
            Posting {
                chunk: 90_000,
                tf: FieldCounts {
                    name: 0,
                    path: 2,
                    body: 70_000,
                },
                len: FieldCounts {
                    name: 0,
                    path: 5,
                    body: 70_001,
                },
            },
        ];
        let blob = encode(&ps);
        let mut back = Vec::new();
        decode(&blob, |p| back.push(p)).unwrap();
        assert_eq!(back, ps);
        assert!(
            decode(&blob[..blob.len() - 1], |_| {}).is_none(),
            "a truncated blob is detected"
        );
    }

    #[test]
    fn chunk_terms_count_per_field() {
        let t = ChunkTerms::new(
            "parse_config parse config",
            "src config rs",
            "config x config",
        );
        let config = t.terms.iter().find(|(t, _)| t == "config").unwrap().1;
        assert_eq!(
            config,
            FieldCounts {
                name: 1,
                path: 1,
                body: 2
            }
        );
        assert_eq!(
            t.len,
            FieldCounts {
                name: 3,
                path: 3,
                body: 3
            }
        );
    }

    #[test]
    fn bm25_prefers_rarer_terms_names_and_shorter_chunks() {
        let p = Bm25Params::default();
        let stats = CollectionStats {
            chunks: 1000.0,
            avg: [2.0, 4.0, 100.0],
        };
        assert!(p.idf(&stats, 5.0) > p.idf(&stats, 500.0));
        assert!(
            p.idf(&stats, 999.0) > 0.0,
            "common terms still count a little"
        );
        let body = |tf, len| Posting {
            chunk: 1,
            tf: FieldCounts {
                name: 0,
                path: 0,
                body: tf,
            },
            len: FieldCounts {
                name: 2,
                path: 4,
                body: len,
            },
        };
        let idf = p.idf(&stats, 10.0);
        assert!(p.score(&stats, idf, &body(1, 50)) > p.score(&stats, idf, &body(1, 400)));
        assert!(p.score(&stats, idf, &body(3, 100)) > p.score(&stats, idf, &body(1, 100)));
        let in_name = Posting {
            chunk: 1,
            tf: FieldCounts {
                name: 1,
                path: 0,
                body: 1,
            },
            len: FieldCounts {
                name: 2,
                path: 4,
                body: 100,
            },
        };
        assert!(p.score(&stats, idf, &in_name) > p.score(&stats, idf, &body(1, 100)));
    }
}
