//! The evidence a task gives about each candidate file, as numbers a
//! linear model weighs ([`Weights`]): whole-file BM25, the best chunk, the
//! dense similarity, and the task's named things — paths, trace frames,
//! modules, definitions, messages.

use std::collections::{HashMap, HashSet};

use lode_core::{Language, Result};
use lode_index::lexical::Bm25Params;
use lode_index::{FileBm25Params, Filter, Index};

use super::resolve::PathIndex;
use super::text::{TaskText, TermWeights};
use crate::rank;

/// A kind of evidence about a candidate file, in vector order: the first
/// ones add to a file's score, the last three ([`Feature::FACTORS`])
/// multiply it when set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Feature {
    /// Whole-file BM25 over the task's weighted terms (relative to the best).
    Bm25,
    /// The best chunk's fused lexical and dense score (relative).
    Chunk,
    /// The best chunk's embedding similarity (relative).
    Dense,
    /// A path the task names is this file (1), or its file name is (less).
    Path,
    /// A trace frame ran in this file.
    Frame,
    /// A module path the task names is this file or its package.
    Module,
    /// It defines names the prose or a trace writes as code, each counting
    /// the more the fewer files define it.
    Defines,
    /// The same for names only the task's code blocks hold.
    DefinesCode,
    /// Its file name (without extension) is a word of the task: 1 in the
    /// title or as code, 0.5 in the prose.
    Stem,
    /// It holds an error message the task quotes.
    Message,
    /// It holds lines of code the task quotes (their share).
    Snippet,
    /// How near its three nearest chunks come to the task, on average, among
    /// all files (min–max scaled).
    DenseFile,
    /// Its size against the largest file's, on a log scale: a large file
    /// holds more of the code a change touches.
    Size,
    /// A test file.
    Test,
    /// Not code: prose, data, a notebook, a locale catalog.
    NonCode,
    /// Under an example or documentation directory.
    Example,
}

/// How many kinds of evidence there are.
pub const FEATURES: usize = 16;

impl Feature {
    pub const ALL: [Feature; FEATURES] = [
        Feature::Bm25,
        Feature::Chunk,
        Feature::Dense,
        Feature::Path,
        Feature::Frame,
        Feature::Module,
        Feature::Defines,
        Feature::DefinesCode,
        Feature::Stem,
        Feature::Message,
        Feature::Snippet,
        Feature::DenseFile,
        Feature::Size,
        Feature::Test,
        Feature::NonCode,
        Feature::Example,
    ];

    /// Where the factors begin in [`Feature::ALL`].
    pub const FACTORS: usize = 13;

    pub fn name(self) -> &'static str {
        match self {
            Feature::Bm25 => "bm25",
            Feature::Chunk => "chunk",
            Feature::Dense => "dense",
            Feature::Path => "path",
            Feature::Frame => "frame",
            Feature::Module => "module",
            Feature::Defines => "defines",
            Feature::DefinesCode => "defines_code",
            Feature::Stem => "stem",
            Feature::Message => "message",
            Feature::Snippet => "snippet",
            Feature::DenseFile => "dense_file",
            Feature::Size => "size",
            Feature::Test => "test",
            Feature::NonCode => "non_code",
            Feature::Example => "example",
        }
    }
}

/// One candidate file's evidence, by [`Feature`]: scores relative to the
/// best candidate of the same task (0–1), flags 0 or 1.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileFeatures(pub [f64; FEATURES]);

impl FileFeatures {
    pub fn get(&self, f: Feature) -> f64 {
        self.0[f as usize]
    }

    pub fn set(&mut self, f: Feature, v: f64) {
        self.0[f as usize] = v;
    }

    /// Keeps the larger of the current value and `v`.
    fn raise(&mut self, f: Feature, v: f64) {
        let slot = &mut self.0[f as usize];
        *slot = slot.max(v);
    }
}

/// How much each kind of evidence counts, by [`Feature`]. The defaults are
/// learned (`lode bench learn`) from commit histories disjoint from every
/// evaluation set; see `docs/benchmarks.md`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Weights(pub [f64; FEATURES]);

impl Default for Weights {
    fn default() -> Weights {
        Weights([
            1.0, // bm25
            0.6, // chunk
            0.2, // dense
            1.5, // path
            1.0, // frame
            0.6, // module
            0.8, // defines
            0.3, // defines_code
            0.4, // stem
            0.6, // message
            0.8, // snippet
            0.2, // dense_file
            0.1, // size
            0.3, // test
            0.2, // non_code
            0.6, // example
        ])
    }
}

impl Weights {
    /// The file's score: the weighted sum of its evidence, times the factors
    /// of its flags.
    pub fn score(&self, f: &FileFeatures) -> f64 {
        let (add, factors) = Feature::ALL.split_at(Feature::FACTORS);
        let sum: f64 = add.iter().map(|&k| self.0[k as usize] * f.get(k)).sum();
        factors
            .iter()
            .filter(|&&k| f.get(k) > 0.0)
            .fold(sum, |s, &k| s * self.0[k as usize])
    }
}

/// Candidates kept from each source.
const FILE_POOL: usize = 100;
const CHUNK_POOL: usize = 300;
/// A name defined in more files than this says nothing about which.
const MAX_DEFINING_FILES: usize = 8;
/// Identifiers looked up as definitions at most.
const MAX_DEFINITION_LOOKUPS: usize = 120;
/// Candidate files whose text is searched for the task's messages and code.
const LITERAL_FILES: usize = 40;

/// Everything gathered for one task: each candidate file's evidence and the
/// chunks the search found in it.
pub struct Gathered {
    pub files: Vec<Candidate>,
    /// Every chunk's scores, to choose a ranked file's chunks.
    pub chunk_scores: ChunkScores,
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Each chunk's lexical score and embedding similarity, both scaled to 0–1
/// over the whole index (1: the best chunk).
#[derive(Default)]
pub struct ChunkScores {
    lexical: FastMap<i64, f64>,
    dense: FastMap<i64, f64>,
}

impl ChunkScores {
    fn new(lexical: &[(i64, f64)], dense: &[(i64, f64)]) -> ChunkScores {
        let best = lexical.first().map_or(0.0, |l| l.1);
        let (lo, hi) = dense
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d.1), hi.max(d.1))
            });
        ChunkScores {
            lexical: lexical
                .iter()
                .map(|&(id, s)| (id, ratio(s, best)))
                .collect(),
            dense: dense
                .iter()
                .filter(|_| hi > lo)
                .map(|&(id, c)| (id, (c - lo) / (hi - lo)))
                .collect(),
        }
    }

    pub fn lexical(&self, id: i64) -> f64 {
        self.lexical.get(&id).copied().unwrap_or(0.0)
    }

    pub fn dense(&self, id: i64) -> f64 {
        self.dense.get(&id).copied().unwrap_or(0.0)
    }
}

/// A candidate file.
pub struct Candidate {
    pub path: String,
    pub lang: String,
    pub features: FileFeatures,
    /// Lines the task points at in it: trace frames, quoted code and messages.
    pub frame_lines: Vec<u32>,
    /// Names of the task it defines.
    pub defined: Vec<String>,
}

/// Reads the index for the task's evidence about every candidate file.
pub fn gather(
    index: &Index,
    task: &TaskText,
    terms: &[(String, f64)],
    dense_text: &str,
    filter: &Filter,
    semantic: bool,
) -> Result<Gathered> {
    let weighted: Vec<(&str, f64)> = terms.iter().map(|(t, w)| (t.as_str(), *w)).collect();
    let mut files: HashMap<String, Candidate> = HashMap::new();
    let candidate = |files: &mut HashMap<String, Candidate>, path: &str, lang: &str| {
        if !files.contains_key(path) {
            files.insert(
                path.to_string(),
                Candidate {
                    path: path.to_string(),
                    lang: lang.to_string(),
                    features: FileFeatures::default(),
                    frame_lines: Vec::new(),
                    defined: Vec::new(),
                },
            );
        }
    };

    // Whole files.
    let whole = index.file_lexical(&weighted, &FileBm25Params::default(), filter, FILE_POOL)?;
    let best_whole = whole.first().map_or(0.0, |f| f.score);
    for f in &whole {
        candidate(&mut files, &f.path, &f.lang);
        files
            .get_mut(&f.path)
            .expect("added")
            .features
            .set(Feature::Bm25, ratio(f.score, best_whole));
    }

    // Chunks: lexical and dense, fused.
    // Every chunk's lexical score (limit 0: all), to choose the chunks of
    // the files ranked; the best make the pool.
    let all_lexical = index.lexical_weighted(&weighted, &Bm25Params::default(), filter, 0)?;
    let lexical = &all_lexical[..all_lexical.len().min(CHUNK_POOL)];
    let dense_files = if semantic {
        index.dense_files(dense_text, filter, CHUNK_POOL)?
    } else {
        lode_index::DenseFiles::default()
    };
    let dense = &dense_files.chunks;
    let chunk_scores = ChunkScores::new(&all_lexical, &dense_files.all);
    let fused = crate::search::fuse(lexical, dense, rank::SEMANTIC_WEIGHT);
    let cosine: HashMap<i64, f64> = dense.iter().copied().collect();
    // Relative to the pool's spread: a static model's cosines crowd near
    // the best, and a ratio to it would say little.
    let best_cosine = dense.first().map_or(0.0, |d| d.1);
    let worst_cosine = dense.last().map_or(0.0, |d| d.1);
    let spread = |cos: f64| {
        if best_cosine > worst_cosine {
            (cos - worst_cosine) / (best_cosine - worst_cosine)
        } else {
            0.0
        }
    };
    let mut ids: Vec<i64> = fused.keys().copied().collect();
    ids.sort_unstable();
    let rows = index.shared_chunks(&ids)?;
    let best_fused = fused.values().copied().fold(0.0, f64::max);
    for row in rows {
        let s = fused.get(&row.id).copied().unwrap_or(0.0);
        candidate(&mut files, &row.path, &row.lang);
        let c = files.get_mut(&row.path).expect("added");
        c.features.raise(Feature::Chunk, ratio(s, best_fused));
        if let Some(&cos) = cosine.get(&row.id) {
            c.features.raise(Feature::Dense, spread(cos));
        }
    }

    // Named things: paths, frames, modules.
    let needs_paths = !task.paths.is_empty() || !task.frames.is_empty() || !task.modules.is_empty();
    let all_paths = if needs_paths {
        index.indexed_paths(filter)?
    } else {
        Vec::new()
    };
    let paths = PathIndex::new(&all_paths);
    let lang_of = |index: &Index, path: &str| -> Result<String> {
        Ok(index.file(path)?.map(|f| f.lang).unwrap_or_default())
    };
    for m in &task.paths {
        for (path, strength) in paths.resolve_path(&m.path, false) {
            let lang = lang_of(index, path)?;
            candidate(&mut files, path, &lang);
            let c = files.get_mut(path).expect("added");
            c.features.raise(Feature::Path, strength);
        }
    }
    // A trace runs from its entry point to where it failed: the frames in
    // the repository count the more the deeper they are (the last most).
    let in_repo: Vec<(&super::text::Frame, Vec<(&str, f64)>)> = task
        .frames
        .iter()
        .filter_map(|f| {
            let found = paths.resolve_path(f.path.as_deref()?, true);
            (!found.is_empty()).then_some((f, found))
        })
        .collect();
    let deepest = in_repo.len();
    for (depth, (f, found)) in in_repo.into_iter().enumerate() {
        let depth_share = (depth + 1) as f64 / deepest as f64;
        for (path, strength) in found {
            let lang = lang_of(index, path)?;
            candidate(&mut files, path, &lang);
            let c = files.get_mut(path).expect("added");
            c.features.raise(Feature::Frame, strength * depth_share);
            c.frame_lines.extend(f.line);
        }
    }
    for m in &task.modules {
        for (path, strength) in paths.resolve_module(m) {
            let lang = lang_of(index, path)?;
            candidate(&mut files, path, &lang);
            let c = files.get_mut(path).expect("added");
            c.features.raise(Feature::Module, strength);
        }
    }

    // Definitions of the names the task writes as code: those the prose or
    // a trace names, then those only its code blocks hold.
    let named: Vec<&str> = task
        .named
        .iter()
        .map(|i| last_name(i))
        .chain(task.errors.iter().map(String::as_str))
        .collect();
    let in_code: Vec<&str> = task
        .identifiers
        .iter()
        .map(|i| last_name(i))
        .filter(|i| !named.contains(i))
        .collect();
    let mut looked_up = 0;
    for (names, feature) in [(named, Feature::Defines), (in_code, Feature::DefinesCode)] {
        let mut seen: Vec<&str> = Vec::new();
        for name in names {
            if name.len() < 3 || seen.contains(&name) || looked_up >= MAX_DEFINITION_LOOKUPS {
                continue;
            }
            seen.push(name);
            looked_up += 1;
            let symbols = index.symbols_named(name)?;
            let mut defining: Vec<&str> = symbols.iter().map(|s| s.path.as_str()).collect();
            defining.sort_unstable();
            defining.dedup();
            if defining.is_empty() || defining.len() > MAX_DEFINING_FILES {
                continue;
            }
            let share = 1.0 / defining.len() as f64;
            for path in defining {
                let lang = lang_of(index, path)?;
                if !filter.admits(path, &lang) {
                    continue;
                }
                candidate(&mut files, path, &lang);
                let c = files.get_mut(path).expect("added");
                c.features.0[feature as usize] += share;
                c.defined.push(name.to_string());
            }
        }
    }

    let mut files: Vec<Candidate> = files.into_values().collect();
    let words = TaskWords::new(task);
    let (lowest, highest) = dense_files.files.values().fold(
        (f64::INFINITY, f64::NEG_INFINITY),
        |(lo, hi), &(_, mean)| (lo.min(mean), hi.max(mean)),
    );
    for c in &mut files {
        if let Some(&(_, mean)) = dense_files.files.get(&c.path)
            && highest > lowest
        {
            c.features
                .set(Feature::DenseFile, (mean - lowest) / (highest - lowest));
        }
        c.features
            .set(Feature::Size, index.file_size_share(&c.path)?);
        for f in [Feature::Defines, Feature::DefinesCode] {
            c.features.set(f, (c.features.get(f) / 2.0).min(1.0));
        }
        let lower = c.path.to_ascii_lowercase();
        c.features.set(Feature::Stem, words.names_file(&c.path));
        c.features
            .set(Feature::Test, flag(rank::is_test_path(&c.path)));
        c.features.set(
            Feature::NonCode,
            flag(!Language::from_name(&c.lang).is_some_and(Language::is_code)),
        );
        c.features.set(
            Feature::Example,
            flag(rank::is_example_path(&lower) || is_docs_path(&lower)),
        );
    }
    mark_literals(index, task, &mut files);
    Ok(Gathered {
        files,
        chunk_scores,
    })
}

/// Sets `message` and `snippet` for the strongest candidates whose text
/// holds a message the task quotes (a fragment of it long enough to be
/// distinctive), or lines of the code it quotes.
fn mark_literals(index: &Index, task: &TaskText, files: &mut [Candidate]) {
    let fragments: Vec<String> = task
        .messages
        .iter()
        .flat_map(|m| message_fragments(m))
        .collect();
    let lines: Vec<&str> = task.code.iter().flat_map(|c| code_lines(c)).collect();
    if fragments.is_empty() && lines.is_empty() {
        return;
    }
    let w = Weights::default();
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| {
        w.score(&files[b].features)
            .total_cmp(&w.score(&files[a].features))
            .then_with(|| files[a].path.cmp(&files[b].path))
    });
    for i in order.into_iter().take(LITERAL_FILES) {
        if files[i].features.get(Feature::NonCode) > 0.0 {
            continue;
        }
        let Some(text) = index.file_text(&files[i].path) else {
            continue;
        };
        let c = &mut files[i];
        for f in &fragments {
            if let Some(at) = text.find(f.as_str()) {
                c.features.set(Feature::Message, 1.0);
                c.frame_lines.push(line_of(&text, at));
            }
        }
        let mut found = 0;
        for l in &lines {
            if let Some(at) = text.find(*l) {
                found += 1;
                c.frame_lines.push(line_of(&text, at));
            }
        }
        if !lines.is_empty() {
            c.features
                .set(Feature::Snippet, f64::from(found) / lines.len() as f64);
        }
    }
}

/// The 1-based line of byte `at`.
fn line_of(text: &str, at: usize) -> u32 {
    text[..at].bytes().filter(|&b| b == b'\n').count() as u32 + 1
}

/// The lines of a code block worth finding in a file: long enough to be
/// distinctive (16 characters), with a call, an assignment or an attribute
/// in them; a prompt (`>>> `, `$ `) taken off. At most 40.
fn code_lines(code: &str) -> impl Iterator<Item = &str> {
    code.lines()
        .map(|l| {
            let l = l.trim();
            ["&gt;&gt;&gt; ", ">>> ", "... ", "$ ", "> "]
                .iter()
                .find_map(|p| l.strip_prefix(p))
                .unwrap_or(l)
                .trim()
        })
        .filter(|l| l.len() >= 16 && l.contains(['(', '=', '.']) && !l.starts_with("import "))
        .take(40)
}

/// The literal pieces of a message: a message as printed has values
/// formatted into it (`index 3 out of range`), the source has only the
/// text around them. Pieces of three words or more and 15 characters.
fn message_fragments(message: &str) -> Vec<String> {
    message
        .split(|c: char| {
            c.is_ascii_digit()
                || matches!(
                    c,
                    '\'' | '"' | '`' | '(' | ')' | '[' | ']' | '{' | '}' | ':' | '<' | '>'
                )
        })
        .map(str::trim)
        .filter(|f| f.len() >= 15 && f.split_whitespace().count() >= 3)
        .map(str::to_string)
        .collect()
}

/// The task's words, normalised to compare with file names.
struct TaskWords {
    /// In the title or written as code.
    strong: HashSet<String>,
    /// Anywhere in the prose.
    prose: HashSet<String>,
}

impl TaskWords {
    fn new(task: &TaskText) -> TaskWords {
        let norm = |w: &str| -> String {
            let w: String = w
                .chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect();
            singular(&w).to_string()
        };
        let words = |text: &str| -> Vec<String> {
            text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .filter(|w| w.len() >= 3)
                .map(norm)
                .collect()
        };
        let mut strong: HashSet<String> = words(&task.title).into_iter().collect();
        strong.extend(task.identifiers.iter().flat_map(|i| words(i)));
        let prose = words(&task.prose).into_iter().collect();
        TaskWords { strong, prose }
    }

    /// 1 when the file's name (its stem) is a strong word of the task, 0.5
    /// when it is a prose word; names that every package has say nothing.
    fn names_file(&self, path: &str) -> f64 {
        let name = path.rsplit('/').next().unwrap_or(path);
        let stem: String = name
            .split('.')
            .next()
            .unwrap_or(name)
            .chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect();
        let stem = singular(&stem);
        if stem.len() < 3 || matches!(stem, "init" | "index" | "main" | "mod" | "lib" | "setup") {
            return 0.0;
        }
        if self.strong.contains(stem) {
            1.0
        } else if self.prose.contains(stem) {
            0.5
        } else {
            0.0
        }
    }
}

/// A word without a plural `s` (`sessions` ~ `session`).
fn singular(w: &str) -> &str {
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        &w[..w.len() - 1]
    } else {
        w
    }
}

/// A qualified name's last part: `Session.request` → `request`.
fn last_name(name: &str) -> &str {
    name.rsplit(['.', ':'])
        .find(|s| !s.is_empty())
        .unwrap_or(name)
}

fn is_docs_path(lower: &str) -> bool {
    lower
        .split('/')
        .any(|seg| matches!(seg, "doc" | "docs" | "documentation"))
}

fn flag(b: bool) -> f64 {
    if b { 1.0 } else { 0.0 }
}

fn ratio(x: f64, best: f64) -> f64 {
    if best > 0.0 {
        (x / best).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// The default term weights of task mode.
pub fn term_weights() -> TermWeights {
    TermWeights::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_split_at_formatted_values() {
        assert_eq!(
            message_fragments("index out of range [3] with length 3"),
            ["index out of range"]
        );
        assert_eq!(
            message_fragments("Cannot read properties of undefined (reading 'length')"),
            ["Cannot read properties of undefined"]
        );
        assert!(message_fragments("x is 3").is_empty());
    }

    #[test]
    fn weights_add_evidence_and_multiply_flags() {
        let w = Weights::default();
        let mut code = FileFeatures::default();
        code.set(Feature::Bm25, 1.0);
        code.set(Feature::Path, 1.0);
        let mut test = code.clone();
        test.set(Feature::Test, 1.0);
        let expected = w.0[Feature::Bm25 as usize] + w.0[Feature::Path as usize];
        assert!((w.score(&code) - expected).abs() < 1e-12);
        assert!((w.score(&test) - expected * w.0[Feature::Test as usize]).abs() < 1e-12);
        for (i, f) in Feature::ALL.iter().enumerate() {
            assert_eq!(*f as usize, i, "{}", f.name());
        }
    }

    #[test]
    fn a_file_named_by_a_word_of_the_task() {
        let task =
            TaskText::parse("Sessions drop cookies\n\nThe cookie jar is cleared on redirect.");
        let words = TaskWords::new(&task);
        assert_eq!(words.names_file("src/app/session.py"), 1.0);
        assert_eq!(words.names_file("src/app/redirect.py"), 0.5);
        assert_eq!(words.names_file("src/app/models.py"), 0.0);
        assert_eq!(words.names_file("src/app/__init__.py"), 0.0);
    }
}
