//! Times extraction per language and phase over real code.
//!
//! ```text
//! cargo run --release -p lode-parse --example extract_bench -- [OPTIONS] DIR...
//!   --repeat N      extract every file N times (default 1)
//!   --lang NAME     only files of this language (`go`, `rust`, ...)
//!   --patterns      also time each query pattern alone (query only, no extraction)
//!   --dump FILE     write `path<TAB>hash of the extraction` per file and stop
//!   --query FILE    with --patterns: time the query in FILE instead of each pattern
//! ```
//!
//! Files are walked in sorted order, skipping hidden folders, `node_modules`,
//! `target`, and files over 1 MiB (the indexer's default); only code languages
//! count. Timings are the CPU time of the one thread that does the work.

use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use lode_core::Language;
use tree_sitter::{Parser, Query, QueryCursor, StreamingIterator, Tree};

/// CPU time of this thread: steadier than wall time on a busy machine.
fn cpu_time() -> Duration {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    unsafe extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `ts` is a valid timespec for the call to fill.
    unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.sec as u64, ts.nsec as u32)
}

struct Args {
    dirs: Vec<PathBuf>,
    repeat: usize,
    lang: Option<String>,
    patterns: bool,
    dump: Option<PathBuf>,
    query: Option<PathBuf>,
}

fn args() -> Args {
    let mut a = Args {
        dirs: Vec::new(),
        repeat: 1,
        lang: None,
        patterns: false,
        dump: None,
        query: None,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--repeat" => a.repeat = it.next().and_then(|n| n.parse().ok()).expect("--repeat N"),
            "--lang" => a.lang = Some(it.next().expect("--lang NAME")),
            "--patterns" => a.patterns = true,
            "--dump" => a.dump = Some(it.next().expect("--dump FILE").into()),
            "--query" => a.query = Some(it.next().expect("--query FILE").into()),
            _ => a.dirs.push(arg.into()),
        }
    }
    assert!(!a.dirs.is_empty(), "usage: extract_bench [OPTIONS] DIR...");
    a
}

fn load(args: &Args) -> Vec<(PathBuf, Language, String)> {
    let mut paths = Vec::new();
    for d in &args.dirs {
        lode_parse::bench::example_files(d, &mut paths);
    }
    paths
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            let lang = lode_parse::detect(&p, &bytes);
            if !lang.is_code() || args.lang.as_ref().is_some_and(|l| l != lang.as_str()) {
                return None;
            }
            Some((p, lang, String::from_utf8_lossy(&bytes).into_owned()))
        })
        .collect()
}

#[derive(Default)]
struct Stats {
    files: usize,
    bytes: usize,
    failed: usize,
    phases: Vec<(&'static str, Duration)>,
}

impl Stats {
    fn add(&mut self, phases: &[(&'static str, Duration)]) {
        for &(name, d) in phases {
            match self.phases.iter_mut().find(|(n, _)| *n == name) {
                Some((_, t)) => *t += d,
                None => self.phases.push((name, d)),
            }
        }
    }

    fn total(&self) -> Duration {
        self.phases.iter().map(|(_, d)| *d).sum()
    }
}

fn ms(d: Duration) -> String {
    format!("{:.0}", d.as_secs_f64() * 1000.0)
}

fn dump(files: &[(PathBuf, Language, String)], out: &Path) {
    let mut text = String::new();
    for (path, lang, src) in files {
        let rendered = format!("{:?}", lode_parse::extract(*lang, src));
        let mut h = std::collections::hash_map::DefaultHasher::new();
        rendered.hash(&mut h);
        text.push_str(&format!("{}\t{:016x}\n", path.display(), h.finish()));
    }
    std::fs::write(out, text).unwrap();
    eprintln!("{} files dumped to {}", files.len(), out.display());
}

fn main() {
    let args = args();
    let files = load(&args);
    if let Some(out) = &args.dump {
        dump(&files, out);
        return;
    }
    // Compile each language's queries before timing anything.
    let mut langs: Vec<Language> = files.iter().map(|f| f.1).collect();
    langs.sort_by_key(|l| l.as_str());
    langs.dedup();
    let warm = Instant::now();
    for &lang in &langs {
        lode_parse::extract(lang, "x");
    }
    println!("query compilation: {} ms", ms(warm.elapsed()));
    let mut stats: BTreeMap<&'static str, Stats> = BTreeMap::new();
    let wall = Instant::now();
    let cpu = cpu_time();
    for _ in 0..args.repeat {
        for (_, lang, src) in &files {
            let s = stats.entry(lang.as_str()).or_default();
            s.files += 1;
            s.bytes += src.len();
            match lode_parse::bench::extract_timed(*lang, src, cpu_time) {
                Some((_, phases)) => s.add(&phases),
                None => s.failed += 1,
            }
        }
    }
    let wall = wall.elapsed();
    let cpu = cpu_time() - cpu;

    let mut names: Vec<&'static str> = Vec::new();
    for s in stats.values() {
        for (n, _) in &s.phases {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    let mut header = format!("{:<11} {:>6} {:>7}", "language", "files", "MB");
    for n in &names {
        header.push_str(&format!(" {n:>8}"));
    }
    header.push_str(&format!(" {:>8} {:>6}", "total ms", "MB/s"));
    println!("{header}");
    let mut all = Stats::default();
    for (lang, s) in &stats {
        print_row(lang, s, &names);
        all.files += s.files;
        all.bytes += s.bytes;
        all.failed += s.failed;
        all.add(&s.phases);
    }
    print_row("ALL", &all, &names);
    println!(
        "wall {} ms, cpu {} ms for {} files x {} ({} failed to parse)",
        ms(wall),
        ms(cpu),
        all.files / args.repeat,
        args.repeat,
        all.failed
    );

    if args.patterns {
        let trial = args
            .query
            .as_ref()
            .map(|p| std::fs::read_to_string(p).unwrap());
        per_pattern(&files, trial.as_deref());
    }
}

fn print_row(lang: &str, s: &Stats, names: &[&str]) {
    let mut row = format!("{:<11} {:>6} {:>7.1}", lang, s.files, s.bytes as f64 / 1e6);
    for n in names {
        let d = s
            .phases
            .iter()
            .find(|(p, _)| p == n)
            .map_or(Duration::ZERO, |(_, d)| *d);
        row.push_str(&format!(" {:>8}", ms(d)));
    }
    let total = s.total();
    row.push_str(&format!(
        " {:>8} {:>6.1}",
        ms(total),
        s.bytes as f64 / 1e6 / total.as_secs_f64().max(1e-9)
    ));
    println!("{row}");
}

/// Runs a query over trees without extracting anything; returns the time
/// (the best of three runs) and the number of matches.
fn drain(query: &Query, trees: &[(Tree, &str)]) -> (Duration, usize) {
    let mut cursor = QueryCursor::new();
    let mut best = Duration::MAX;
    let mut n = 0;
    for _ in 0..3 {
        let start = cpu_time();
        n = 0;
        for (tree, src) in trees {
            let mut matches = cursor.matches(query, tree.root_node(), src.as_bytes());
            while matches.next().is_some() {
                n += 1;
            }
        }
        best = best.min(cpu_time() - start);
    }
    (best, n)
}

/// Time of each query of each language, and of each pattern alone.
fn per_pattern(files: &[(PathBuf, Language, String)], trial: Option<&str>) {
    let mut langs: Vec<Language> = files.iter().map(|f| f.1).collect();
    langs.sort_by_key(|l| l.as_str());
    langs.dedup();
    for lang in langs {
        let Some(grammar) = lode_parse::grammar(lang) else {
            continue;
        };
        let Some(sources) = lode_parse::bench::query_sources(lang) else {
            continue;
        };
        let mut parser = Parser::new();
        parser.set_language(&grammar).unwrap();
        let trees: Vec<(Tree, &str)> = files
            .iter()
            .filter(|f| f.1 == lang)
            .filter_map(|(_, _, src)| Some((parser.parse(src, None)?, src.as_str())))
            .collect();
        let (walk, _) = drain(&Query::new(&grammar, "(ERROR) @e").unwrap(), &trees);
        println!(
            "\n== {lang}: {} files, bare walk {} ms",
            trees.len(),
            ms(walk)
        );
        let all = sources.join("\n");
        let (t, n) = drain(&Query::new(&grammar, &all).unwrap(), &trees);
        println!("all three as one query: {} ms, {n} matches", ms(t));
        if let Some(trial) = trial {
            let (t, n) = drain(&Query::new(&grammar, trial).unwrap(), &trees);
            println!("--query: {} ms, {n} matches", ms(t));
            continue;
        }
        for (kind, src) in ["symbols", "calls", "imports"].iter().zip(sources) {
            let query = Query::new(&grammar, src).unwrap();
            let (t, n) = drain(&query, &trees);
            println!("{kind}: {} ms, {n} matches", ms(t));
            let mut rows = Vec::new();
            for i in 0..query.pattern_count() {
                let mut alone = Query::new(&grammar, src).unwrap();
                for j in 0..query.pattern_count() {
                    if j != i {
                        alone.disable_pattern(j);
                    }
                }
                let (t, n) = drain(&alone, &trees);
                let offset = query.start_byte_for_pattern(i);
                let line = src[..offset].lines().count() + 1;
                let text: String = src[offset..]
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                rows.push((t, i, line, n, text.chars().take(90).collect::<String>()));
            }
            rows.sort_by_key(|r| std::cmp::Reverse(r.0));
            for (t, i, line, n, text) in rows.iter().take(8) {
                println!("  {:>6} ms  #{i:<3} L{line:<4} {n:>7}  {text}", ms(*t));
            }
        }
    }
}
