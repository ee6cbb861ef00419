//! Storage encodings rank a known set like f32 does: int8 identically up to its proven
//! quantization error (near-ties closer than that may swap), binary nearly (overlap@10
//! measured and bounded).

use lode_embed::{StaticModel, VectorEncoding};

const VERBS: [&str; 20] = [
    "parse", "load", "save", "fetch", "render", "validate", "compute", "merge", "split", "encode",
    "decode", "retry", "hash", "sort", "filter", "index", "search", "connect", "close", "open",
];
const NOUNS: [&str; 20] = [
    "config", "user", "request", "response", "file", "token", "cache", "index", "query", "session",
    "vector", "graph", "node", "edge", "buffer", "stream", "path", "header", "record", "chunk",
];

fn camel(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// 400 code-like documents and 40 natural-language queries, all deterministic.
fn corpus() -> (Vec<String>, Vec<String>) {
    let mut docs = Vec::new();
    for (i, v) in VERBS.iter().enumerate() {
        for (j, n) in NOUNS.iter().enumerate() {
            let t = camel(n);
            docs.push(match (i + j) % 4 {
                0 => format!("pub fn {v}_{n}(input: &{t}) -> Result<{t}> {{ /* {v} the {n} */ }}"),
                1 => format!(
                    "def {v}_{n}(self, {n}):\n    \"\"\"{} a {n}.\"\"\"",
                    camel(v)
                ),
                2 => format!("function {v}{t}({n}) {{ return api.{v}({n}); }}"),
                _ => format!("// {v}s every {n} in the list\nfor {n} in {n}s {{ {v}({n}); }}"),
            });
        }
    }
    let queries = (0..40)
        .map(|k| {
            let (v, n) = (VERBS[(k * 7) % 20], NOUNS[(k * 11 + 3) % 20]);
            match k % 2 {
                0 => format!("how do I {v} a {n}"),
                _ => format!("{v} {n} with retries and logging"),
            }
        })
        .collect();
    (docs, queries)
}

fn scores(enc: VectorEncoding, stored: &[u8], n_docs: usize, query: &[f32]) -> Vec<f32> {
    let per = stored.len() / n_docs;
    let q = enc.query(query);
    (0..n_docs)
        .map(|i| q.score(&stored[i * per..(i + 1) * per]))
        .collect()
}

fn top_k(scores: &[f32], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
    order.truncate(k);
    order
}

#[test]
fn int8_ranks_like_f32_and_binary_overlaps() {
    let model = StaticModel::builtin();
    let dim = model.dim();
    let (docs, queries) = corpus();
    let doc_refs: Vec<&str> = docs.iter().map(String::as_str).collect();
    let query_refs: Vec<&str> = queries.iter().map(String::as_str).collect();
    let doc_vecs = model.encode(&doc_refs);
    let query_vecs = model.encode(&query_refs);

    let stored: Vec<Vec<u8>> = VectorEncoding::ALL
        .iter()
        .map(|enc| {
            let mut s = Vec::new();
            for row in doc_vecs.chunks(dim) {
                enc.encode(row, &mut s);
            }
            assert_eq!(s.len(), docs.len() * enc.bytes_per_vector(dim));
            s
        })
        .collect();
    // Per-document int8 scale: each stored value is within scale/2 of the f32 value.
    let int8_scales: Vec<f32> = stored[1]
        .chunks(VectorEncoding::Int8.bytes_per_vector(dim))
        .map(|v| f32::from_le_bytes(v[..4].try_into().unwrap()))
        .collect();

    let k = 10;
    let (mut int8_overlap, mut int8_identical, mut binary_overlap, mut pairs) = (0, 0, 0, 0);
    for q in query_vecs.chunks(dim) {
        let exact = scores(VectorEncoding::F32, &stored[0], docs.len(), q);
        let int8 = scores(VectorEncoding::Int8, &stored[1], docs.len(), q);
        let binary = scores(VectorEncoding::Binary, &stored[2], docs.len(), q);
        let (top, top8, top1) = (top_k(&exact, k), top_k(&int8, k), top_k(&binary, k));

        // int8 keeps the f32 order of every pair of the f32 top 20 whose f32 scores
        // differ by more than the proven quantization error |Σ q·err| ≤ scale/2·‖q‖₁.
        let l1: f32 = q.iter().map(|x| x.abs()).sum();
        let bound = |d: usize| int8_scales[d] / 2.0 * l1 + 1e-5;
        let top20 = top_k(&exact, 20);
        for (i, &a) in top20.iter().enumerate() {
            assert!(
                (int8[a] - exact[a]).abs() <= bound(a),
                "int8 error beyond its bound"
            );
            for &b in &top20[i + 1..] {
                if exact[a] - exact[b] > bound(a) + bound(b) {
                    pairs += 1;
                    assert!(
                        int8[a] > int8[b],
                        "int8 swapped a pair f32 separates clearly"
                    );
                }
            }
        }
        int8_identical += usize::from(top8 == top);
        int8_overlap += top8.iter().filter(|i| top.contains(i)).count();
        binary_overlap += top1.iter().filter(|i| top.contains(i)).count();
    }
    let n = queries.len();
    let int8_at_10 = int8_overlap as f64 / (k * n) as f64;
    let binary_at_10 = binary_overlap as f64 / (k * n) as f64;
    println!(
        "{n} queries x {} docs: int8 identical top-{k} in {int8_identical}/{n}, overlap@{k} {int8_at_10:.4}, \
         {pairs} clearly separated pairs all kept; binary overlap@{k} {binary_at_10:.3}",
        docs.len()
    );
    assert!(
        int8_at_10 >= INT8_OVERLAP_MIN,
        "int8 overlap@10 {int8_at_10}"
    );
    assert!(
        int8_identical * 2 >= n,
        "int8 identical top-10 in only {int8_identical}/{n}"
    );
    assert!(
        binary_at_10 >= BINARY_OVERLAP_MIN,
        "binary overlap@10 {binary_at_10}"
    );
}

/// Measured 0.995, with 24 of 40 top-10 lists identical: the others swap near-ties
/// (gaps down to 1e-7) closer than the ~1e-3 int8 error, in a deliberately repetitive
/// corpus. Pairs that f32 separates by more than the error bound never swap.
const INT8_OVERLAP_MIN: f64 = 0.99;
/// Measured 0.625 with the built-in model; the bound leaves room for a model update
/// without letting a broken kernel through.
const BINARY_OVERLAP_MIN: f64 = 0.55;
