//! What the targets share: the case count, hostile strings, and JSON values.

use proptest::collection::{btree_map, vec};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use serde_json::{Map, Number, Value};

/// The environment variable that sets every target's case count.
pub const CASES_VAR: &str = "LODE_FUZZ_CASES";

/// Cases a target runs: `LODE_FUZZ_CASES` when set, else `default` (sized so
/// that the whole harness stays well under a minute in a debug build).
pub fn cases(default: u32) -> u32 {
    match std::env::var(CASES_VAR) {
        Ok(v) => v
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{CASES_VAR}={v:?} is not a number of cases")),
        Err(_) => default,
    }
}

/// The environment variable that sets the seed: a number, or `random` for
/// a new one each run. Unset, the seed is fixed, so that `cargo test` (and
/// CI) runs the same cases every time and passes or fails with the code,
/// not with chance; a search for new failures sets it.
pub const SEED_VAR: &str = "LODE_FUZZ_SEED";

/// The seed of every target's generator (see [`SEED_VAR`]).
pub fn seed() -> RngSeed {
    match std::env::var(SEED_VAR) {
        Ok(v) if v.trim() == "random" => RngSeed::Random,
        Ok(v) => RngSeed::Fixed(
            v.trim()
                .parse()
                .unwrap_or_else(|_| panic!("{SEED_VAR}={v:?} is not a number or `random`")),
        ),
        Err(_) => RngSeed::Fixed(1),
    }
}

/// A proptest config of [`cases`] and [`seed`]. Shrinking is bounded, so
/// that a failure in a slow target (a whole MCP session per case) is
/// reported in time.
pub fn config(default: u32) -> Config {
    Config {
        cases: cases(default),
        rng_seed: seed(),
        max_shrink_iters: 512,
        ..Config::default()
    }
}

/// Strings a person or a program would not write: control characters, NUL,
/// lone surrogates' replacement, bidirectional overrides, wide characters.
pub const ODD: &[&str] = &[
    "\0",
    "\r",
    "\r\n",
    "\t",
    "\u{b}",
    "\u{c}",
    "\u{1b}[2J",
    "\u{7f}",
    "\u{85}",
    "\u{a0}",
    "\u{feff}",
    "\u{fffd}",
    "\u{202e}",
    "\u{2028}",
    "\u{2066}",
    "é",
    "日本",
    "🦀",
    "\u{10ffff}",
    "\\",
    "\"",
    "'",
    "`",
];

/// Any text: arbitrary characters, or the lossy reading of arbitrary bytes
/// (what the indexer does with a file that is not UTF-8).
pub fn any_text(max: usize) -> impl Strategy<Value = String> {
    prop_oneof![
        vec(any::<char>(), 0..max).prop_map(String::from_iter),
        vec(any::<u8>(), 0..max).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        vec(
            prop_oneof![
                3 => "[ -~]{0,8}",
                1 => proptest::sample::select(ODD).prop_map(str::to_string),
            ],
            0..max / 4 + 1
        )
        .prop_map(|parts| parts.concat()),
    ]
}

/// Object keys: short names, paths, and odd strings.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z_]{1,8}",
        "[a-z]{1,6}(/[a-z]{1,6}){0,3}\\.(py|rs|js|md)",
        any_text(12),
    ]
}

/// A JSON number of any kind serde_json holds: small, huge, negative, fractional.
pub fn json_number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-3i64..100).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        Just(Value::from(1.5)),
        Just(Value::from(1e300)),
    ]
}

/// A JSON leaf: null, a boolean, a number or a string.
pub fn json_leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        json_number(),
        any_text(24).prop_map(Value::String),
    ]
}

/// Any JSON value, nested a few levels, a few dozen nodes at most.
pub fn json_value() -> impl Strategy<Value = Value> {
    json_leaf().prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..6).prop_map(Value::Array),
            btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// `open` `depth` times, then `close` as many: JSON past serde_json's
/// recursion limit when deep.
pub fn nested_json(open: &str, leaf: &str, close: &str, depth: usize) -> String {
    format!("{}{leaf}{}", open.repeat(depth), close.repeat(depth))
}
