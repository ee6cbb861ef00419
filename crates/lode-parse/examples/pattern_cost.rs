//! Which patterns make a language's queries slow to compile.
//! `cargo run --release -p lode-parse --example pattern_cost -- LANG ['PATTERN' | @FILE]`
use std::time::Instant;

fn split(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
                cur.push('\n');
            }
            '"' => {
                cur.push(c);
                while let Some(c) = chars.next() {
                    cur.push(c);
                    if c == '\\' {
                        if let Some(n) = chars.next() {
                            cur.push(n);
                        }
                    } else if c == '"' {
                        break;
                    }
                }
            }
            '(' | '[' => {
                if depth == 0 && !cur.trim().is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                depth += 1;
                cur.push(c);
            }
            ')' | ']' => {
                depth -= 1;
                cur.push(c);
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur);
    }
    out
}

fn main() {
    let name = std::env::args().nth(1).expect("LANG");
    let lang = *lode_core::Language::ALL
        .iter()
        .find(|l| l.as_str() == name)
        .expect("a language");
    let grammar = lode_parse::grammar(lang).expect("grammar");
    if let Some(pattern) = std::env::args().nth(2) {
        // `@FILE` times the query in FILE. The machine is noisy: best and median of 7
        // (`PATTERN_COST_RUNS=N` for another count, e.g. 1 under callgrind).
        let pattern = match pattern.strip_prefix('@') {
            Some(file) => std::fs::read_to_string(file).expect("a query file"),
            None => pattern,
        };
        let runs = std::env::var("PATTERN_COST_RUNS")
            .ok()
            .and_then(|n| n.parse().ok())
            .unwrap_or(7usize)
            .max(1);
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let r = tree_sitter::Query::new(&grammar, &pattern);
                if let Err(e) = r {
                    panic!("{e}");
                }
                t.elapsed().as_secs_f64() * 1000.0
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "best {:.2} ms, median {:.2} ms",
            times[0],
            times[times.len() / 2]
        );
        return;
    }
    let [s, c, i] = lode_parse::bench::query_sources(lang).expect("queries");
    let all = format!("{s}\n{c}\n{i}");
    let t = Instant::now();
    tree_sitter::Query::new(&grammar, &all).unwrap();
    let whole = t.elapsed().as_secs_f64() * 1000.0;
    let t = Instant::now();
    tree_sitter::Query::new(&grammar, "(ERROR) @e").unwrap();
    let trivial = t.elapsed().as_secs_f64() * 1000.0;
    let mut costs: Vec<(f64, String)> = split(&all)
        .into_iter()
        .map(|p| {
            let t = Instant::now();
            let ok = tree_sitter::Query::new(&grammar, &p).is_ok();
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            (
                ms,
                format!(
                    "{}{}",
                    if ok { "" } else { "(ERR) " },
                    p.split_whitespace().collect::<Vec<_>>().join(" ")
                ),
            )
        })
        .collect();
    let sum: f64 = costs.iter().map(|c| c.0).sum();
    println!(
        "{name}: whole {whole:.1} ms, trivial {trivial:.2} ms, {} patterns summing {sum:.1} ms",
        costs.len()
    );
    costs.sort_by(|a, b| b.0.total_cmp(&a.0));
    for (ms, p) in costs.iter().take(15) {
        println!("{ms:8.2} {}", &p[..p.len().min(150)]);
    }
}
