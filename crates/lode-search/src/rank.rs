//! The code-aware rerank: what a query asks for, and the rules that reorder
//! the fused candidates (measured on the Semble benchmark, see
//! `docs/benchmarks.md`).

use std::collections::HashMap;
use std::sync::Arc;

use lode_core::{Language, SymbolKind};
use lode_index::{ChunkRow, tokens};

/// How much the dense ranking counts in the fusion. Measured: 0.3 beats 0.4
/// and 0.5 for sentences once files are aggregated (the built-in model is a
/// general-text one; exact tokens say more).
pub const SEMANTIC_WEIGHT: f64 = 0.3;

/// Share of the top score a file's best chunk gains when the file holds all
/// of the candidates' summed score (less in proportion).
const FILE_WEIGHT: f64 = 0.5;

/// A file's summed candidate score is divided by its number of candidates
/// to this power: a large file collects many weak candidates, and their sum
/// alone would lift it over the small file a question is about. Measured:
/// 0.2 over 0 and 0.3 (`docs/benchmarks.md`, the fourth ranking round).
const FILE_COUNT_DAMPING: f64 = 0.2;

/// The boost of a file whose parent directory a query word names
/// (`middleware/logger.rb` for "request logging middleware"). Measured: 1.15
/// over 1.1 and 1.2; the parent only, not every ancestor.
const DIRECTORY_BOOST: f64 = 1.15;

/// Each further hit from a file already shown counts this times the one before.
/// Measured: 0.4 over 0.5 (queries with several target files want them in
/// the top ranks; see `docs/benchmarks.md`).
const SAME_FILE_DECAY: f64 = 0.4;

/// The rerank's maps, keyed by a few hundred short strings per query:
/// foldhash hashes them several times faster than SipHash, and nothing
/// depends on their order.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// A candidate: its score and its row, shared with the index that keeps it
/// (sorting moves a pointer, not the row).
pub type Scored = (f64, Arc<ChunkRow>);

/// Reorders `scored` (fused scores) in place, best first. `chunks` is the
/// number of chunks in the index.
pub fn rerank(q: &QueryShape, scored: &mut [Scored], chunks: f64) {
    let top = scored.iter().map(|s| s.0).fold(0.0, f64::max);
    // Where the candidates are most of the index (a small repository), that
    // a file supplies many of them says little but its size.
    let share = (scored.len() as f64 / chunks.max(1.0)).min(1.0);
    lift_best_chunk_of_strong_files(scored, top * FILE_WEIGHT * (1.0 - share));
    // Most of a boost is the file's, the same for each of its chunks: worked
    // out once per file.
    let boosts: Vec<f64> = {
        let mut by_file: FastMap<(&str, Language), (f64, f64)> = FastMap::default();
        scored
            .iter()
            .map(|(_, c)| {
                let (file, test) = *by_file
                    .entry((c.path.as_str(), c.lang))
                    .or_insert_with(|| (q.file_factor(&c.path, c.lang), q.test_factor(&c.path)));
                let symbol = q.symbol_factor(c);
                // The definition a query names is what it asks for, in a
                // test file too (a test library's helpers, a fixture).
                symbol * file * if symbol > 1.0 { 1.0 } else { test }
            })
            .collect()
    };
    for ((score, _), boost) in scored.iter_mut().zip(boosts) {
        *score *= boost;
    }
    sort(scored);
    spread_files(scored);
    sort(scored);
}

/// Best first; ties by path and line so runs are reproducible.
pub fn sort(scored: &mut [Scored]) {
    scored.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| a.1.path.cmp(&b.1.path))
            .then(a.1.start_line.cmp(&b.1.start_line))
    });
}

/// Most questions are answered by a file as a whole: a file many candidates
/// come from is likely the answer even when none of its chunks is first. Each
/// file's best chunk gains `unit` times the file's strength relative to the
/// strongest file's: its summed candidate score, damped by its number of
/// candidates ([`FILE_COUNT_DAMPING`]).
fn lift_best_chunk_of_strong_files(scored: &mut [Scored], unit: f64) {
    // Per file: summed score, candidates, index of the best candidate.
    let mut files: FastMap<&str, (f64, i32, usize)> = FastMap::default();
    for (i, (score, c)) in scored.iter().enumerate() {
        let (sum, count, best) = files.entry(c.path.as_str()).or_insert((0.0, 0, i));
        *sum += *score;
        *count += 1;
        if *score > scored[*best].0 {
            *best = i;
        }
    }
    // Per file: its best candidate and its strength.
    let strengths: Vec<(usize, f64)> = files
        .into_values()
        .map(|(sum, count, best)| (best, sum / f64::from(count).powf(FILE_COUNT_DAMPING)))
        .collect();
    let largest = strengths.iter().map(|s| s.1).fold(0.0, f64::max);
    if largest <= 0.0 {
        return;
    }
    for (i, strength) in strengths {
        scored[i].0 += unit * strength / largest;
    }
}

/// One file should not fill the top: after a file's first hit (scored is
/// sorted), each further hit from it counts [`SAME_FILE_DECAY`] times the one before.
fn spread_files(scored: &mut [Scored]) {
    let decays: Vec<f64> = {
        let mut seen: FastMap<&str, i32> = FastMap::default();
        scored
            .iter()
            .map(|(_, c)| {
                let n = seen.entry(c.path.as_str()).or_default();
                *n += 1;
                SAME_FILE_DECAY.powi(*n - 1)
            })
            .collect()
    };
    for ((score, _), decay) in scored.iter_mut().zip(decays) {
        *score *= decay;
    }
}

/// The query's lexical terms, with the base forms of plural and inflected
/// words added (`redirects` also asks for `redirect`): the index keeps words
/// as written, and code names things in the singular.
pub fn expand_terms(mut terms: Vec<String>) -> Vec<String> {
    let extra: Vec<String> = terms.iter().flat_map(|t| base_forms(t)).collect();
    for e in extra {
        if !terms.contains(&e) {
            terms.push(e);
        }
    }
    terms
}

/// Base forms an inflected word may stand for (`routing` → `rout`, `route`).
/// A form the index does not hold costs one lookup and scores nothing.
fn base_forms(w: &str) -> Vec<String> {
    if w.len() <= 4 || !w.chars().all(|c| c.is_ascii_lowercase()) {
        return Vec::new();
    }
    let cut = |n: usize| w[..w.len() - n].to_string();
    let mut out = if let Some(b) = w.strip_suffix("ies") {
        vec![format!("{b}y")]
    } else if w.ends_with("ss") {
        Vec::new()
    } else if w.ends_with("es") {
        vec![cut(1), cut(2)]
    } else if w.ends_with('s') {
        vec![cut(1)]
    } else if w.ends_with("ing") {
        vec![cut(3), format!("{}e", cut(3))]
    } else if w.ends_with("ed") {
        vec![cut(1), cut(2)]
    } else {
        Vec::new()
    };
    out.retain(|s| s.len() >= 3);
    out
}

/// Whether query word `w` names `part` of a compound file stem.
fn same_part(w: &str, part: &str) -> bool {
    singular(w) == singular(part) || (is_helper_word(w) && is_helper_word(part))
}

/// `w` without a plural `s`, for comparing names (`handlers` ~ `handler`).
fn singular(w: &str) -> &str {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        &w[..w.len() - 1]
    } else {
        w
    }
}

/// A word and its roots with one derivational ending cut (`serialization` →
/// `serializ`, `serializat`). Two words are one family when their roots meet:
/// one is the other with an ending cut or changed (`logging` ~ `logger`,
/// `serialization` ~ `serializer`, `routing` ~ `router`). A file named for the
/// doer answers a query about the doing. Words and roots keep at least four
/// letters, so short words (`string`, `user`) match only themselves.
fn family_roots(w: &str) -> impl Iterator<Item = &str> {
    const ENDINGS: &[&str] = &[
        "izations", "ization", "isation", "ations", "ation", "ition", "ions", "ion", "ings", "ing",
        "ers", "er", "ors", "or", "ed", "es", "s", "e",
    ];
    let cut = ENDINGS
        .iter()
        .filter_map(move |e| w.strip_suffix(e))
        .filter(|r| r.len() >= 4);
    std::iter::once(w).chain(cut).filter(|_| w.len() >= 4)
}

/// Words code uses interchangeably for a grab-bag of functions: a query's
/// "helpers" finds `StringUtils.java`.
fn is_helper_word(w: &str) -> bool {
    matches!(
        w,
        "util" | "utils" | "utility" | "utilities" | "helper" | "helpers"
    )
}

/// What the query asks for, as far as reranking cares.
pub struct QueryShape {
    /// The query's words normalized for identifier comparison (`parse_config` → `parseconfig`).
    identifiers: Vec<String>,
    /// All words joined: `parse config` also names `parseConfig`. A
    /// capital asks for one only when it is the query's one word: prose
    /// begins with one.
    joined: Defined,
    wants_tests: bool,
    wants_examples: bool,
    wants_docs: bool,
    /// Words and adjacent word pairs (`thread pool` → `threadpool`) a file stem may equal.
    stems: Vec<String>,
    /// The family roots of the stems ([`family_roots`]): a file stem with one
    /// among its own is of a query word's family.
    family: Vec<String>,
    /// Names whose definition the query asks for.
    defined: Vec<Defined>,
}

/// A name whose definition a query asks for.
struct Defined {
    /// Normalized (`parse_config` → `parseconfig`).
    name: String,
    /// Written with a capital first (`Session`, `Sinatra::Helpers`): the
    /// name of a type or a module, not of the lower-case function beside it
    /// (`session()`, `helpers`). A name typed in lower case asks for either.
    capitalised: bool,
}

impl Defined {
    fn is_named_by(&self, name: &str) -> bool {
        normalizes_to(name, &self.name) && (!self.capitalised || starts_upper(name))
    }
}

/// Whether the first letter or digit of `name` is a capital (`_Session`).
fn starts_upper(name: &str) -> bool {
    name.chars()
        .find(|c| c.is_alphanumeric())
        .is_some_and(char::is_uppercase)
}

/// A word written as code: `parse_config`, `parseConfig`, `Config::load`, `cfg.get`.
fn looks_like_code(w: &str) -> bool {
    let w = w.trim_matches(|c: char| !c.is_alphanumeric());
    w.contains('_')
        || w.contains("::")
        || w.contains('.')
        // camelCase or PascalCase; an acronym (`JSON`) is a plain word.
        || (w.chars().skip(1).any(char::is_uppercase) && w.chars().any(char::is_lowercase))
}

fn normalize(word: &str) -> String {
    normalized_chars(word).collect()
}

fn normalized_chars(word: &str) -> impl Iterator<Item = char> + '_ {
    word.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
}

/// Whether `normalize(word) == target`, without building the normalized word
/// (the rerank asks it of every candidate's symbol).
fn normalizes_to(word: &str, target: &str) -> bool {
    let mut want = target.chars();
    normalized_chars(word).all(|c| want.next() == Some(c)) && want.next().is_none()
}

impl QueryShape {
    pub fn new(query: &str) -> QueryShape {
        let words: Vec<&str> = query
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == ':' || c == '.'))
            .filter(|w| !w.is_empty())
            .collect();
        let mut identifiers: Vec<String> = Vec::new();
        let mut defined: Vec<Defined> = Vec::new();
        // A one-word query names a definition; in a longer query only words
        // written as code do (`session` in "session cookie handling" is prose).
        let all = words.len() == 1;
        for w in &words {
            // `Config::load` and `cfg.get` name their last segment.
            let last = w.rsplit([':', '.']).find(|s| !s.is_empty()).unwrap_or(w);
            identifiers.push(normalize(last));
            if all || looks_like_code(w) {
                defined.push(Defined {
                    name: normalize(last),
                    capitalised: starts_upper(last),
                });
            }
        }
        let lower = query.to_lowercase();
        const STOP: &[&str] = &[
            "the", "and", "for", "with", "from", "into", "how", "what", "where", "when", "which",
            "that", "this", "are", "does", "its",
        ];
        let mut stems: Vec<String> = identifiers
            .iter()
            .filter(|w| w.len() >= 3 && !STOP.contains(&w.as_str()))
            .cloned()
            .collect();
        stems.extend(identifiers.windows(2).map(|p| format!("{}{}", p[0], p[1])));
        let family = stems
            .iter()
            .flat_map(|s| family_roots(s))
            .map(str::to_string)
            .collect();
        let joined = Defined {
            name: normalize(&words.join("")),
            capitalised: all && defined.iter().all(|d| d.capitalised),
        };
        QueryShape {
            defined,
            stems,
            family,
            joined,
            identifiers,
            wants_tests: lower.contains("test") || lower.contains("spec"),
            wants_examples: lower.contains("example")
                || lower.contains("demo")
                || lower.contains("sample"),
            wants_docs: [
                "doc",
                "readme",
                "changelog",
                "guide",
                "tutorial",
                "faq",
                "release note",
            ]
            .iter()
            .any(|w| lower.contains(w)),
        }
    }

    /// A file named for what the query asks about: its stem is a query word
    /// or two adjacent words joined (`timer` → `timer.c`, `thread pool` →
    /// `threadpool.c`), or every part of a compound stem is a query word
    /// (`default middleware stack` → `default_middleware_stack.rb`); plurals
    /// compare equal (`http redirects` → `HttpRedirect.kt`), a whole stem may
    /// be of the word's family (`logging` → `logger.rb`, see [`family_roots`]),
    /// and a part may be a helper word for another (`helpers` → `StringUtils`).
    pub(crate) fn names_file(&self, file: &str) -> bool {
        let base = file.split('.').next().unwrap_or(file);
        let stem = normalize(base);
        if stem.is_empty() {
            return false;
        }
        if self.stems.iter().any(|s| singular(s) == singular(&stem))
            || family_roots(&stem).any(|r| self.family.iter().any(|f| f == r))
        {
            return true;
        }
        // The first token is the whole name; the rest are its parts.
        let text = tokens::index_text(base);
        let parts: Vec<&str> = text.split_whitespace().skip(1).collect();
        parts.len() >= 2
            && parts
                .iter()
                .all(|p| self.identifiers.iter().any(|w| same_part(w, p)))
    }

    /// Whether a query word (or two adjacent ones joined) is the name of the
    /// directory holding `path`, plurals equal (`middleware/`, `generators/`).
    /// Names under four letters (`src`, `lib`, `net`) say too little.
    fn names_parent_directory(&self, path: &str) -> bool {
        let Some(parent) = path.rsplit('/').nth(1) else {
            return false;
        };
        let parent = normalize(parent);
        parent.len() >= 4 && self.stems.iter().any(|s| singular(s) == singular(&parent))
    }

    /// A file whose stem is a query word cut short, as code abbreviates:
    /// `utils.py` for "utility", `config.py` for "configuration", `auth.py`
    /// for "authentication". The stem has at least 4 letters and the word at
    /// least 3 more; a word that is only the stem inflected (`formatting`,
    /// `formatter`, `configures`) does not count — it names something else.
    fn abbreviates(&self, file: &str) -> bool {
        let base = file.split('.').next().unwrap_or(file);
        let stem = normalize(base);
        let stem = singular(&stem);
        if stem.len() < 4 {
            return false;
        }
        self.identifiers.iter().any(|w| {
            w.len() >= stem.len() + 3
                && w.starts_with(stem)
                && !["ing", "ings", "ed", "er", "ers", "es", "s"]
                    .iter()
                    .any(|suffix| w.ends_with(suffix) && w.len() - stem.len() <= suffix.len() + 1)
        })
    }

    /// 2 for a chunk of a symbol the query names (see `defined`), not an
    /// impl of it, or one holding the header of a container it names, else 1. A power of two
    /// scales a product exactly, so this factor times the file's is the same
    /// number as when it was the first of the product.
    fn symbol_factor(&self, c: &ChunkRow) -> f64 {
        // An impl or extension names the type it adds to: the type's own
        // definition is what a query of its name asks for.
        let labelled = (c.symbol.iter())
            .filter(|s| s.kind != SymbolKind::Impl)
            .map(|s| s.name.as_str());
        let mut names = labelled.chain(c.opens.as_deref());
        if names.any(|name| self.names_definition(name)) {
            2.0
        } else {
            1.0
        }
    }

    /// Whether `name`, normalized, is a name the query asks the definition
    /// of, or the query's words joined.
    fn names_definition(&self, name: &str) -> bool {
        // A name of no letters or digits normalizes to nothing, which names nothing.
        name.chars().any(char::is_alphanumeric)
            && (self.defined.iter().any(|d| d.is_named_by(name)) || self.joined.is_named_by(name))
    }

    /// 0.3 for a test file when the query does not ask about tests, else 1.
    fn test_factor(&self, path: &str) -> f64 {
        if !self.wants_tests && is_test_path(path) {
            0.3
        } else {
            1.0
        }
    }

    /// The boost of a file's chunks for what its path and language say
    /// (tests apart: [`QueryShape::test_factor`]).
    fn file_factor(&self, path: &str, lang: Language) -> f64 {
        let mut b = 1.0;
        let file = path.rsplit('/').next().unwrap_or(path);
        if self.names_file(file) || self.abbreviates(file) {
            b *= 1.5;
        }
        if self.names_parent_directory(path) {
            b *= DIRECTORY_BOOST;
        }
        let lower = path.to_ascii_lowercase();
        if lower
            .split('/')
            .any(|seg| matches!(seg, "compat" | "legacy" | "deprecated"))
        {
            b *= 0.5;
        }
        if !self.wants_examples && is_example_path(&lower) {
            b *= 0.6;
        }
        if lower.ends_with(".d.ts") {
            b *= 0.7;
        }
        // Prose (Markdown, text) answers "where is it done" less well than code.
        if !self.wants_docs && lang.is_prose() {
            b *= 0.5;
        }
        // Data files (JSON, YAML, TOML) hold names and words without the code.
        if lang.is_data() {
            b *= 0.5;
        }
        b
    }
}

pub(crate) fn is_test_path(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let file = path.rsplit('/').next().unwrap_or(path);
    let stem = file.split('.').next().unwrap_or(file);
    let lstem = stem.to_ascii_lowercase();
    let lfile = file.to_ascii_lowercase();
    lower.split('/').any(|seg| {
        matches!(
            seg,
            "test" | "tests" | "__tests__" | "spec" | "specs" | "testing" | "testdata"
        )
    }) || lstem.starts_with("test_")
        || ["_test", "_tests", "_spec"]
            .iter()
            .any(|s| lstem.ends_with(s))
        || ["Test", "Tests", "Spec"].iter().any(|s| stem.ends_with(s))
        || lfile.contains(".test.")
        || lfile.contains(".spec.")
}

pub(crate) fn is_example_path(path: &str) -> bool {
    path.split('/').any(|seg| {
        matches!(
            seg,
            "example" | "examples" | "demo" | "demos" | "sample" | "samples"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(id: i64, path: &str, symbol: Option<&str>) -> ChunkRow {
        ChunkRow {
            id,
            path: path.to_string(),
            lang: Language::Rust,
            kind: lode_core::ChunkKind::Symbol,
            start_line: id as u32 * 10,
            end_line: id as u32 * 10 + 5,
            start_byte: 0,
            end_byte: 0,
            symbol: symbol.map(|name| crate::test_support::function(id, path, name)),
            opens: None,
        }
    }

    fn shared(scored: &[(f64, ChunkRow)]) -> Vec<Scored> {
        scored
            .iter()
            .map(|(score, c)| (*score, Arc::new(c.clone())))
            .collect()
    }

    fn order(q: &str, scored: &[(f64, ChunkRow)]) -> Vec<i64> {
        let mut s = shared(scored);
        rerank(&QueryShape::new(q), &mut s, 1000.0);
        s.iter().map(|(_, c)| c.id).collect()
    }

    #[test]
    fn recognises_test_paths() {
        for p in [
            "tests/a.py",
            "src/foo_test.go",
            "pkg/test_x.py",
            "a/b.test.ts",
            "src/FooTest.java",
            "spec/x_spec.rb",
        ] {
            assert!(is_test_path(p), "{p}");
        }
        for p in ["src/contest.py", "src/attestation.rs", "lib/latest.js"] {
            assert!(!is_test_path(p), "{p}");
        }
    }

    #[test]
    fn file_stems_come_from_words_and_word_pairs() {
        let q = QueryShape::new("thread pool and the work queue");
        for stem in ["thread", "pool", "threadpool", "work", "queue", "workqueue"] {
            assert!(q.stems.contains(&stem.to_string()), "{stem}: {:?}", q.stems);
        }
        assert!(!q.stems.contains(&"and".to_string()) && !q.stems.contains(&"the".to_string()));
    }

    #[test]
    fn only_code_words_of_a_sentence_ask_for_a_definition() {
        let binding = || (1.0, chunk(1, "binding/binding.go", Some("Binding")));
        let json = || (0.8, chunk(2, "binding/json.go", Some("decodeJSON")));
        // "binding" in a sentence is a plain word: no boost, the order stays.
        assert_eq!(
            order("JSON request binding and validation", &[binding(), json()])[0],
            1
        );
        assert!(QueryShape::new("JSON request binding").defined.is_empty());
        // Written as code, or alone, it names the definition.
        assert_eq!(
            order("where is decodeJSON called", &[binding(), json()])[0],
            2
        );
        assert_eq!(order("decodeJSON", &[binding(), json()])[0], 2);
        let q = QueryShape::new("how parse_config and Config::load work");
        let defined: Vec<&str> = q.defined.iter().map(|d| d.name.as_str()).collect();
        assert!(defined.contains(&"parseconfig"), "{defined:?}");
        assert!(defined.contains(&"load"), "{defined:?}");
        assert!(!defined.contains(&"work"), "{defined:?}");
    }

    #[test]
    fn query_shape_names_identifiers() {
        let q = QueryShape::new("where is Config::load_file called");
        assert!(q.identifiers.contains(&"loadfile".to_string()));
        assert!(!q.wants_tests);
        assert_eq!(QueryShape::new("parse config").joined.name, "parseconfig");
    }

    /// a.rs holds the best chunk; b.rs three slightly weaker ones.
    fn one_strong_chunk_and_a_file_of_three() -> Vec<(f64, ChunkRow)> {
        vec![
            (1.00, chunk(1, "src/a.rs", None)),
            (0.95, chunk(2, "src/b.rs", None)),
            (0.90, chunk(3, "src/b.rs", None)),
            (0.85, chunk(4, "src/b.rs", None)),
        ]
    }

    #[test]
    fn a_file_with_many_candidates_outranks_a_lone_better_chunk() {
        // One chunk of a.rs scores best, but b.rs contributes three strong
        // candidates: b.rs is the likelier answer.
        let scored = one_strong_chunk_and_a_file_of_three();
        assert_eq!(order("query words", &scored)[0], 2);
        // Alone, the best chunk stays first.
        assert_eq!(order("query words", &scored[..2])[0], 1);
    }

    #[test]
    fn file_aggregation_fades_when_the_candidates_are_the_whole_index() {
        let scored = one_strong_chunk_and_a_file_of_three();
        // Four candidates out of four chunks: b.rs is merely the bigger file.
        let mut s = shared(&scored);
        rerank(&QueryShape::new("query words"), &mut s, 4.0);
        assert_eq!(s[0].1.id, 1);
        // Out of a thousand, the same candidates single b.rs out.
        assert_eq!(order("query words", &scored)[0], 2);
    }

    #[test]
    fn further_hits_from_one_file_step_down() {
        let scored = vec![
            (1.00, chunk(1, "src/a.rs", None)),
            (0.99, chunk(2, "src/a.rs", None)),
            (0.80, chunk(3, "src/c.rs", None)),
        ];
        assert_eq!(order("query words", &scored), [1, 3, 2]);
    }

    #[test]
    fn file_names_match_plurals_and_compound_stems() {
        let q = QueryShape::new("how HTTP redirects are followed");
        assert!(q.names_file("HttpRedirect.kt"));
        assert!(!q.names_file("HttpRequest.kt"));
        let q = QueryShape::new("default middleware stack configuration");
        assert!(q.names_file("default_middleware_stack.rb"));
        assert!(!q.names_file("middleware_builder.rb"));
        // The file named for the query wins over a slightly better chunk.
        let scored = vec![
            (1.0, chunk(1, "lib/configuration.rb", None)),
            (0.9, chunk(2, "lib/default_middleware_stack.rb", None)),
        ];
        assert_eq!(order("default middleware stack setup", &scored)[0], 2);
    }

    #[test]
    fn a_file_named_for_the_doer_answers_a_query_about_the_doing() {
        for (a, b) in [
            ("logging", "logger"),
            ("serialization", "serializer"),
            ("routing", "router"),
            ("validation", "validator"),
            ("parsing", "parser"),
            ("compilation", "compiler"),
        ] {
            let names = |q: &str, f: &str| QueryShape::new(q).names_file(&format!("{f}.rb"));
            assert!(names(a, b) && names(b, a), "{a} ~ {b}");
        }
        for (a, b) in [
            ("string", "strong"),
            ("user", "used"),
            ("general", "generator"),
        ] {
            let names = |q: &str, f: &str| QueryShape::new(q).names_file(&format!("{f}.rb"));
            assert!(!names(a, b) && !names(b, a), "{a} !~ {b}");
        }
        let q = QueryShape::new("request logging middleware");
        assert!(q.names_file("logger.rb"));
        assert!(!q.names_file("login.rb"));
        assert!(QueryShape::new("JSON serialization to a string").names_file("serializer.hpp"));
    }

    #[test]
    fn helper_words_name_utility_files() {
        let q = QueryShape::new("null-safe string operations and text helpers");
        assert!(q.names_file("StringUtils.java"));
        assert!(!q.names_file("StringBuilder.java"));
        assert!(QueryShape::new("class utility methods").names_file("ClassHelpers.kt"));
        // Both parts must still be asked for.
        assert!(!QueryShape::new("text helpers").names_file("ObjectUtils.java"));
    }

    #[test]
    fn a_query_word_naming_the_parent_directory_lifts_its_files() {
        let q = QueryShape::new("request logging middleware");
        assert!(q.names_parent_directory("lib/sinatra/middleware/logger.rb"));
        // Only the parent counts, and only a name of four letters or more.
        assert!(!q.names_parent_directory("middleware/sinatra/logger.rb"));
        assert!(!q.names_parent_directory("logger.rb"));
        assert!(!QueryShape::new("lib loading").names_parent_directory("lib/loader.rb"));
        let scored = vec![
            (1.0, chunk(1, "lib/base.rb", None)),
            (0.9, chunk(2, "lib/middleware/trace.rb", None)),
        ];
        assert_eq!(order("request handling middleware", &scored)[0], 2);
        assert_eq!(order("request handling", &scored)[0], 1);
    }

    #[test]
    fn a_file_of_many_weak_candidates_does_not_outweigh_one_of_few_strong_ones() {
        // big.rs: six weak candidates (sum 3.0); small.rs: two strong ones
        // (sum 2.7). Summed, big.rs would be the stronger file; damped by
        // their counts, small.rs is.
        let mut scored: Vec<(f64, ChunkRow)> = (1..=6)
            .map(|i| (0.5, chunk(i, "src/big.rs", None)))
            .collect();
        scored.push((1.35, chunk(7, "src/small.rs", None)));
        scored.push((1.35, chunk(8, "src/small.rs", None)));
        let mut s = shared(&scored);
        lift_best_chunk_of_strong_files(&mut s, 1.0);
        let lift = |id: i64, before: f64| {
            s.iter()
                .find(|(_, c)| c.id == id)
                .map(|(score, _)| score - before)
                .unwrap()
        };
        assert!(
            (lift(7, 1.35) - 1.0).abs() < 1e-9,
            "small.rs is the strongest file"
        );
        assert!(lift(1, 0.5) < 1.0);
    }

    #[test]
    fn file_stems_that_abbreviate_a_query_word_name_the_file() {
        let q = QueryShape::new("utility functions for configuration and authentication");
        for f in ["utils.py", "config.rb", "auth.go", "Util.java"] {
            assert!(q.abbreviates(f), "{f}");
        }
        // Too short to be sure, or the word is only the stem inflected.
        assert!(!q.abbreviates("con.py"));
        let q = QueryShape::new("formatting and formatter setup for routers");
        for f in ["format.h", "route.rb"] {
            assert!(!q.abbreviates(f), "{f}");
        }
        let scored = vec![
            (1.0, chunk(1, "lib/cli.py", None)),
            (0.9, chunk(2, "lib/config.py", None)),
        ];
        assert_eq!(order("configuration loading", &scored)[0], 2);
    }

    #[test]
    fn data_files_rank_below_code() {
        let mut data = chunk(1, "commands/setrange.json", None);
        data.lang = Language::Json;
        let scored = vec![(1.0, data), (0.8, chunk(2, "src/t_string.c", None))];
        assert_eq!(order("setrange modifies a string", &scored)[0], 2);
    }

    #[test]
    fn normalizes_to_agrees_with_normalize() {
        let words = [
            "",
            "_",
            "::",
            "parse_config",
            "ParseConfig",
            "parseconfig",
            "parseconfigs",
            "parse",
            "İstanbul",
            "ǅemal",
            "x1",
            "X_1",
            "Ωmega",
        ];
        for w in words {
            for t in words.iter().map(|t| normalize(t)) {
                assert_eq!(normalizes_to(w, &t), normalize(w) == t, "{w:?} vs {t:?}");
            }
        }
    }

    #[test]
    fn a_symbol_boost_gives_the_same_product_in_any_place() {
        // The file factors in the order `file_factor` applies them; the
        // symbol's 2 used to come first.
        let factors: [f64; 7] = [1.5, 0.3, 0.5, 0.6, 0.7, 0.5, 0.5];
        for mask in 0u32..1 << factors.len() {
            let applied = factors
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, f)| *f);
            let first = applied.clone().fold(2.0, |b, f| b * f);
            let last = 2.0 * applied.fold(1.0, |b, f| b * f);
            assert_eq!(first.to_bits(), last.to_bits(), "mask {mask:b}");
        }
        let q = QueryShape::new("Config::load");
        let c = chunk(1, "internal/configs/load_test.go", Some("load"));
        assert_eq!(q.symbol_factor(&c), 2.0);
        assert_eq!(q.file_factor(&c.path, c.lang), 1.0);
        assert_eq!(q.test_factor(&c.path), 0.3);
        let c = chunk(2, "internal/configs/parser.go", Some("loader"));
        assert_eq!(q.symbol_factor(&c), 1.0);
    }

    #[test]
    fn a_named_definition_in_a_test_file_is_not_lowered() {
        // A test library's helper, asked for by name.
        let defines = chunk(1, "lib/bats-core/test_functions.bash", Some("bats_pipe"));
        let other = chunk(2, "lib/bats-core/tracing.bash", Some("bats_capture"));
        let test = chunk(3, "test/pipe.bats", Some("check_pipe"));
        let scored = [(1.0, defines), (1.5, other), (1.4, test)];
        assert_eq!(order("how bats_pipe chains commands", &scored), [1, 2, 3]);
        // Unnamed, the helper's file is a test file as any other.
        assert_eq!(order("how commands are chained", &scored), [2, 3, 1]);
    }

    #[test]
    fn a_chunk_holding_a_named_containers_header_is_its_definition() {
        // `impl Grid {` joined the chunk of its first method, `resize`.
        let q = QueryShape::new("Grid");
        let mut c = chunk(1, "src/grid.rs", Some("resize"));
        assert_eq!(q.symbol_factor(&c), 1.0);
        c.opens = Some("Grid".into());
        assert_eq!(q.symbol_factor(&c), 2.0);
        c.opens = Some("Cell".into());
        assert_eq!(q.symbol_factor(&c), 1.0);
    }

    #[test]
    fn a_capitalised_name_asks_for_the_capitalised_definition() {
        // `Session` is the class; `session()` is a function that makes one.
        let q = QueryShape::new("Session");
        for (name, factor) in [("Session", 2.0), ("session", 1.0), ("_Session", 2.0)] {
            let c = chunk(1, "src/sessions.py", Some(name));
            assert_eq!(q.symbol_factor(&c), factor, "{name}");
        }
        let q = QueryShape::new("Sinatra::Helpers");
        let mut c = chunk(1, "lib/sinatra/base.rb", Some("helpers"));
        assert_eq!(q.symbol_factor(&c), 1.0);
        c.opens = Some("Helpers".into());
        assert_eq!(q.symbol_factor(&c), 2.0);
        // A name written in lower case asks for either: people type queries so.
        let q = QueryShape::new("session");
        for name in ["Session", "session"] {
            let c = chunk(1, "src/sessions.py", Some(name));
            assert_eq!(q.symbol_factor(&c), 2.0, "{name}");
        }
        // A snake_case query names a PascalCase definition as before.
        let q = QueryShape::new("how parse_config works");
        let c = chunk(1, "src/config.go", Some("ParseConfig"));
        assert_eq!(q.symbol_factor(&c), 2.0);
    }

    #[test]
    fn a_types_definition_not_an_impl_of_it_answers_its_name() {
        let q = QueryShape::new("Grid");
        let mut c = chunk(1, "src/grid.rs", Some("Grid"));
        for (kind, factor) in [
            (SymbolKind::Struct, 2.0),
            (SymbolKind::Class, 2.0),
            (SymbolKind::Impl, 1.0),
        ] {
            c.symbol.as_mut().unwrap().kind = kind;
            assert_eq!(q.symbol_factor(&c), factor, "{kind:?}");
        }
    }

    #[test]
    fn inflected_query_words_also_ask_for_their_base_form() {
        let terms = expand_terms(vec!["redirects".into(), "routing".into(), "http".into()]);
        for t in ["redirects", "redirect", "routing", "route", "http"] {
            assert!(terms.contains(&t.to_string()), "{t}: {terms:?}");
        }
        assert_eq!(base_forms("class"), Vec::<String>::new());
        assert_eq!(base_forms("policies"), ["policy"]);
    }
}
