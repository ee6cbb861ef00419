use std::time::Instant;
fn main() {
    let loc = lode_index::IndexLocation::resolve(
        std::path::Path::new("/tmp/bench/tf"),
        Some(std::path::Path::new("/tmp/benchcache")),
    )
    .unwrap();
    let index = lode_index::Index::open(&loc).unwrap();
    let p = lode_index::lexical::Bm25Params::default();
    for q in [
        "parseConfig",
        "error",
        "walk the directory tree",
        "NewResourceDiff",
        "return nil err",
        "retry with exponential backoff",
    ] {
        let terms = lode_index::tokens::query_terms(q);
        let t = Instant::now();
        let mut r = Vec::new();
        for _ in 0..10 {
            r = index.lexical(&terms, &p, &Default::default(), 100).unwrap();
        }
        let lex = t.elapsed().as_secs_f64() * 100.0;
        let ids: Vec<i64> = r.iter().map(|x| x.0).collect();
        let t = Instant::now();
        for _ in 0..10 {
            index.chunks(&ids).unwrap();
        }
        let ch = t.elapsed().as_secs_f64() * 100.0;
        let t = Instant::now();
        for _ in 0..10 {
            lode_search::search(&index, q, &Default::default()).unwrap();
        }
        let all = t.elapsed().as_secs_f64() * 100.0;
        println!(
            "{q:40} lexical {lex:.2} ms  chunks {ch:.2} ms  search {all:.2} ms  ({} cands) terms {:?}",
            r.len(),
            terms
        );
    }
}
