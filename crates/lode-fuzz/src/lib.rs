//! Property targets that feed hostile input to lode's parsers and to its
//! MCP request path. The crate has no API: the targets are one integration
//! test binary, `tests/it/` (proptest, stable Rust, bounded time), run by
//! `cargo test` like every other test.
//!
//! # The targets
//!
//! - `extract`: `lode_parse::extract` of arbitrary text (characters, the
//!   lossy reading of arbitrary bytes, odd characters), token soups of the
//!   grammars' words and punctuation, brackets nested thousands deep,
//!   balanced or not, long lines of wide characters, and small real files
//!   edited at random, each in all 25 languages. Each extraction runs on a
//!   thread with the stack of the indexer's workers and must end within
//!   5 s. Every span must lie in the file (lines and bytes naming the same
//!   region, on character boundaries); indices must point into the file's
//!   own lists (a parent before its child); chunks must be in order, apart,
//!   non-blank, within `HARD_CAP_BYTES`, and together hold every non-blank
//!   line; a file that failed is line windows only.
//! - `task`: `TaskText::parse` of arbitrary text, issues made of the trace
//!   lines of every format it reads (Python, pytest, JVM, JavaScript,
//!   Firefox, Rust, Go, native, panics), fences, code, REPL lines and prose,
//!   and texts past its 64 KiB bound. What it finds must be pieces of the
//!   text it read (paths once backslashes read as `/`), distinct and capped;
//!   the output at most linear in the text; what follows the bound must
//!   change nothing; the terms' weights finite, positive, sorted.
//! - `overlay`: `Overlay::from_json` of any JSON value and of objects of
//!   hostile paths (`..`, absolute, drive letters, NUL, backslashes, very
//!   long, about 1,000 entries), held to a model written from its docs:
//!   accepted paths canonical and inside the root, the JSON text reading the
//!   same, every refusal `Error::BadOverlay`.
//! - `gate`: `lode_mcp::gate::Gate::check` of any line (bytes, JSON,
//!   JSON-RPC shapes with every kind of id, deep nesting, batches, cut
//!   messages), and whole sessions of such lines served by a real
//!   `lode_mcp::Server` through rmcp behind the gate: every request with a
//!   readable id gets exactly one reply with that id, and the session ends
//!   when the client leaves.
//! - `tools`: `lode_mcp::Server::call` for every tool of `lode_mcp::TOOLS`,
//!   with arguments made from each tool's declared `Arg`s (right names with
//!   the wrong type, out of range, too long, hostile paths and overlays,
//!   unknown keys). A call always answers; a failure carries a `lode.` code
//!   and is never `lode.internal` (a caught panic); arguments that break a
//!   declared rule fail; a success has text within the cap and no control
//!   character but newline and tab.
//!
//! Beside each target are the regressions it found, as plain tests, and
//! `#[ignore]`d tests of what it found and is not fixed here.
//!
//! # Running longer
//!
//! Each target runs a small number of cases by default, so that the whole
//! binary takes seconds. `LODE_FUZZ_CASES` sets the cases of every target;
//! a release build runs far more in the same time:
//!
//! ```text
//! LODE_FUZZ_CASES=2000 cargo test -p lode-fuzz --release
//! LODE_FUZZ_CASES=20000 cargo test -p lode-fuzz --release -- overlay:: task::
//! ```
//!
//! A test name filter (`extract::`, `gate::a_session`) picks targets.
//!
//! The generators' seed is fixed unless `LODE_FUZZ_SEED` names one (a
//! number, or `random`): `cargo test` and CI run the same cases every time,
//! and a search for new failures sets `LODE_FUZZ_SEED=random`.
//!
//! # Reproducing a failure
//!
//! A failing target prints its minimal failing input and appends the case's
//! seed to `tests/proptest-regressions/<target>.txt`; every later run replays
//! the seeds there first, so rerunning the same command reproduces it.
//! Commit that file with the fix, and write the minimal input as a plain
//! test beside the target.

#![deny(missing_docs)]
