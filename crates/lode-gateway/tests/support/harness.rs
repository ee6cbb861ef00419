//! A minimal test runner for test binaries that are also the fake MCP server
//! they start (libtest would print its header on the server's stdout). It
//! takes name filters (`--exact` too), `--list`, `--test-threads N` and
//! ignores the other libtest flags; tests run on threads, each in a fresh
//! current-thread tokio runtime.

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

pub type Body = fn() -> Pin<Box<dyn Future<Output = ()>>>;

pub struct Test {
    pub name: &'static str,
    pub body: Body,
}

/// `test!(name)`: an entry for `async fn name()`.
#[macro_export]
macro_rules! test {
    ($name:ident) => {
        $crate::harness::Test {
            name: stringify!($name),
            body: || Box::pin($name()),
        }
    };
}

pub fn run(tests: &[Test]) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list") {
        for t in tests {
            println!("{}: test", t.name);
        }
        return ExitCode::SUCCESS;
    }
    let exact = args.iter().any(|a| a == "--exact");
    let mut threads = std::env::var("RUST_TEST_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4usize);
    let mut filters = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if let Some(n) = a.strip_prefix("--test-threads=") {
            threads = n.parse().unwrap_or(threads);
        } else if [
            "--test-threads",
            "--skip",
            "--format",
            "--color",
            "--logfile",
        ]
        .contains(&a.as_str())
        {
            if a == "--test-threads" {
                threads = args
                    .get(i + 1)
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(threads);
            }
            i += 1;
        } else if !a.starts_with('-') {
            filters.push(a.as_str());
        }
        i += 1;
    }
    let selected: Vec<&Test> = tests
        .iter()
        .filter(|t| {
            filters.is_empty()
                || filters.iter().any(|f| {
                    if exact {
                        t.name == *f
                    } else {
                        t.name.contains(f)
                    }
                })
        })
        .collect();
    println!("\nrunning {} tests", selected.len());
    let start = Instant::now();
    let queue = Mutex::new(selected.iter());
    let failed = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| {
                loop {
                    let Some(t) = queue.lock().unwrap().next() else {
                        break;
                    };
                    let body = t.body;
                    let outcome = std::thread::Builder::new()
                        .name(t.name.to_string())
                        .spawn(move || {
                            tokio::runtime::Builder::new_current_thread()
                                .enable_all()
                                .build()
                                .unwrap()
                                .block_on(body())
                        })
                        .unwrap()
                        .join();
                    let verdict = if outcome.is_ok() { "ok" } else { "FAILED" };
                    println!("test {} ... {verdict}", t.name);
                    if outcome.is_err() {
                        failed.lock().unwrap().push(t.name);
                    }
                }
            });
        }
    });
    let failed = failed.into_inner().unwrap();
    let verdict = if failed.is_empty() { "ok" } else { "FAILED" };
    println!(
        "\ntest result: {verdict}. {} passed; {} failed; finished in {:.2}s\n",
        selected.len() - failed.len(),
        failed.len(),
        start.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        println!("failures: {}", failed.join(", "));
        ExitCode::FAILURE
    }
}
