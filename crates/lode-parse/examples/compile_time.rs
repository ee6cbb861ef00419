//! How long each language's queries take to compile (tree-sitter analyses
//! every pattern against the grammar's parse table when a query is built),
//! which a process pays once per language before its first extraction.
//!
//! `cargo run --release -p lode-parse --example compile_time`

fn main() {
    for lang in &lode_core::Language::ALL {
        let t = std::time::Instant::now();
        // The first extraction in a language compiles its queries.
        let _ = lode_parse::extract(*lang, "");
        let first = t.elapsed();
        let t = std::time::Instant::now();
        let _ = lode_parse::extract(*lang, "");
        let again = t.elapsed();
        println!(
            "{:>12} first extraction {:8.1} ms, next {:6.3} ms",
            lang.as_str(),
            first.as_secs_f64() * 1000.0,
            again.as_secs_f64() * 1000.0
        );
    }
}
