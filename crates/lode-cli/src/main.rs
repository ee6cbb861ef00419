//! `lode`: the command-line face of lode.
//!
//! Every command prints compact text, or JSON with `--json`; every failure is
//! one line on stderr (and a JSON error object on stdout with `--json`) and a
//! documented exit status: 0 success, 1 nothing found, 2 bad input, 3 index
//! problem, 4 I/O problem, 5 index locked.

mod bench;
mod cli;
mod commands;
mod context;
mod diag;
mod doctor;
mod eval;
mod gateway;
mod gather;
mod graph;
mod input;
mod learn;
mod mcp;
mod remote;
mod setup;
mod status;
mod swebench;
mod tools;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // Ctrl-C: say what is kept (a build stopped midway leaves the last complete
    // index, as a crash does) rather than vanish without a word.
    let _ = ctrlc::set_handler(|| {
        eprintln!(
            "lode: interrupted; the index keeps its last complete build, and the next query or `lode index` goes on from there"
        );
        std::process::exit(130);
    });
    let json = commands::wants_json(&cli.command);
    let timed = diag::Timed::start(&cli.command);
    let outcome = commands::run(cli.command);
    if let Some(timed) = timed {
        timed.finish(outcome.as_ref().err().map(|e| e.code().as_str()));
    }
    match outcome {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            let code = e.code();
            if json {
                let body = serde_json::json!({
                    "schema_version": lode_search::JSON_SCHEMA_VERSION,
                    "error": { "code": code.as_str(), "message": e.to_string() }
                });
                println!("{body}");
            }
            let message = e.to_string();
            let _ = writeln!(
                std::io::stderr(),
                "lode: {}",
                lode_core::shown::field(&message)
            );
            ExitCode::from(code.exit_status() as u8)
        }
    }
}
