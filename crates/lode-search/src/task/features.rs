//! The evidence a task gives about each candidate file, as numbers a
//! linear model weighs ([`super::Weights`]): whole-file BM25, the best chunk, the
//! dense similarity, and the task's named things — paths, trace frames,
//! modules, definitions, messages.

use std::collections::HashMap;

use lode_core::{Language, Result};
use lode_index::lexical::Bm25Params;
use lode_index::{FileBm25Params, Filter, Index, SymbolRow};

use super::resolve::PathIndex;
use super::text::{TaskText, TermWeights};
use super::weights::{Feature, FileFeatures, Weights};
use super::words::{TaskWords, in_area, leave_headers_unnamed};
use crate::rank;

/// Candidates kept from each source.
const FILE_POOL: usize = 100;
const CHUNK_POOL: usize = 300;
/// A name defined in more files than this says nothing about which.
const MAX_DEFINING_FILES: usize = 8;
/// Identifiers looked up as definitions at most.
const MAX_DEFINITION_LOOKUPS: usize = 120;
/// Candidate files whose text is searched for the task's messages and code.
const LITERAL_FILES: usize = 25;
/// The strongest candidates whose imports lift the files they import.
const IMPORTING_FILES: usize = 10;

/// Everything gathered for one task: each candidate file's evidence and the
/// chunks the search found in it.
pub struct Gathered {
    pub files: Vec<Candidate>,
    /// Every chunk's scores, to choose a ranked file's chunks.
    pub chunk_scores: ChunkScores,
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Each chunk's lexical score and embedding similarity, both scaled to 0–1
/// over the whole index (1: the best chunk). Kept as read (every chunk, in
/// no order); [`ChunkScores::of`] picks out the chunks of the files ranked.
#[derive(Default)]
pub struct ChunkScores {
    lexical: Vec<(i64, f64)>,
    dense: Vec<(i64, f64)>,
    best_lexical: f64,
    dense_range: (f64, f64),
}

/// The scores of some chunks (see [`ChunkScores::of`]).
pub struct SomeChunkScores {
    lexical: FastMap<i64, f64>,
    dense: FastMap<i64, f64>,
}

impl ChunkScores {
    fn new(lexical: Vec<(i64, f64)>, dense: Vec<(i64, f64)>) -> ChunkScores {
        let best_lexical = lexical.iter().map(|l| l.1).fold(0.0, f64::max);
        let dense_range = dense
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), d| {
                (lo.min(d.1), hi.max(d.1))
            });
        ChunkScores {
            lexical,
            dense,
            best_lexical,
            dense_range,
        }
    }

    /// The scaled scores of the chunks `ids` (one pass over each list).
    pub fn of(&self, ids: &[i64]) -> SomeChunkScores {
        let wanted: std::collections::HashSet<i64, foldhash::fast::RandomState> =
            ids.iter().copied().collect();
        let (lo, hi) = self.dense_range;
        SomeChunkScores {
            lexical: (self.lexical.iter())
                .filter(|(id, _)| wanted.contains(id))
                .map(|&(id, s)| (id, ratio(s, self.best_lexical)))
                .collect(),
            dense: (self.dense.iter())
                .filter(|(id, _)| hi > lo && wanted.contains(id))
                .map(|&(id, c)| (id, (c - lo) / (hi - lo)))
                .collect(),
        }
    }
}

impl SomeChunkScores {
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
    pub lang: Language,
    pub features: FileFeatures,
    /// Lines the task points at in it: trace frames, a path's line (`x.c:87`, a
    /// link's `#L87`), quoted code and messages.
    pub pointed_lines: Vec<u32>,
    /// Names the task's prose or trace names that it defines.
    pub defined: Vec<String>,
    /// Names only the task's code blocks hold that it defines (often the
    /// entry point a reproduction calls, not where the fault is).
    pub defined_in_code: Vec<String>,
}

impl Candidate {
    pub(super) fn new(path: &str, lang: Language) -> Candidate {
        Candidate {
            path: path.to_string(),
            lang,
            features: FileFeatures::default(),
            pointed_lines: Vec::new(),
            defined: Vec::new(),
            defined_in_code: Vec::new(),
        }
    }
}

/// The candidate files gathered so far, by path.
#[derive(Default)]
struct Candidates(FastMap<String, Candidate>);

impl Candidates {
    /// The candidate `path`, added when new.
    fn entry(&mut self, path: &str, lang: Language) -> &mut Candidate {
        if !self.0.contains_key(path) {
            self.0.insert(path.to_string(), Candidate::new(path, lang));
        }
        self.0.get_mut(path).expect("added")
    }

    /// The candidate `path` in the index, its language read when it is new.
    fn indexed(&mut self, index: &Index, path: &str) -> Result<&mut Candidate> {
        let lang = match self.0.get(path) {
            Some(c) => c.lang,
            None => index.file(path)?.map_or(Language::Text, |f| f.lang),
        };
        Ok(self.entry(path, lang))
    }
}

/// Reads the index for the task's evidence about every candidate file.
pub fn gather(
    index: &Index,
    task: &TaskText,
    terms: &[(String, f64)],
    dense_views: &[String],
    filter: &Filter,
    semantic: bool,
) -> Result<Gathered> {
    let weighted = informative_terms(index, terms)?;
    let mut files = Candidates::default();
    add_whole_files(index, &weighted, filter, &mut files)?;
    let (all_lexical, dense_files) =
        add_chunks(index, &weighted, dense_views, filter, semantic, &mut files)?;
    // Every path: named things and imports resolve against them.
    let files_indexed = index.indexed_files(filter)?;
    let all_paths: Vec<String> = files_indexed.iter().map(|f| f.0.clone()).collect();
    let paths = PathIndex::new(&all_paths);
    add_named(index, task, &paths, &mut files)?;
    add_definitions(index, task, filter, &mut files)?;
    let mut files: Vec<Candidate> = files.0.into_values().collect();
    let words = TaskWords::new(task).with_crowded_directories(&code_paths(&files_indexed));
    set_file_evidence(index, task, &words, &dense_files.files, &mut files)?;
    mark_literals(index, task, &mut files);
    mark_imported(index, &mut files, &paths)?;
    Ok(Gathered {
        files,
        chunk_scores: ChunkScores::new(all_lexical, dense_files.all),
    })
}

/// The code files of `files`, tests aside.
fn code_paths(files: &[(String, Language)]) -> Vec<&str> {
    (files.iter())
        .filter(|(p, lang)| lang.is_code() && !rank::is_test_path(p))
        .map(|(p, _)| p.as_str())
        .collect()
}

/// Whole-file BM25: the best files by the task's weighted terms.
fn add_whole_files(
    index: &Index,
    weighted: &[(&str, f64)],
    filter: &Filter,
    files: &mut Candidates,
) -> Result<()> {
    let whole = index.file_lexical(weighted, &FileBm25Params::default(), filter, FILE_POOL)?;
    let best_whole = whole.first().map_or(0.0, |f| f.score);
    for f in &whole {
        let c = files.entry(&f.path, f.lang);
        c.features.set(Feature::Bm25, ratio(f.score, best_whole));
    }
    Ok(())
}

/// The best chunks, lexical and dense, fused: each lifts its file. Returns
/// every chunk's lexical score (to choose the chunks of the files ranked)
/// and the dense side's answer.
fn add_chunks(
    index: &Index,
    weighted: &[(&str, f64)],
    dense_views: &[String],
    filter: &Filter,
    semantic: bool,
    files: &mut Candidates,
) -> Result<(Vec<(i64, f64)>, lode_index::DenseFiles)> {
    let all_lexical = index.lexical_weighted(weighted, &Bm25Params::default(), filter, 0)?;
    let lexical = &best_of(&all_lexical, CHUNK_POOL);
    let dense_files = if semantic {
        let views: Vec<&str> = dense_views.iter().map(String::as_str).collect();
        index.dense_files(&views, filter, CHUNK_POOL)?
    } else {
        lode_index::DenseFiles::default()
    };
    let dense = &dense_files.chunks;
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
    let best_fused = fused.values().copied().fold(0.0, f64::max);
    for row in index.shared_chunks(&ids)? {
        let s = fused.get(&row.id).copied().unwrap_or(0.0);
        let c = files.entry(&row.path, row.lang);
        c.features.raise(Feature::Chunk, ratio(s, best_fused));
        if let Some(&cos) = cosine.get(&row.id) {
            c.features.raise(Feature::Dense, spread(cos));
        }
    }
    Ok((all_lexical, dense_files))
}

/// The files the task names: paths, trace frames, modules.
fn add_named(
    index: &Index,
    task: &TaskText,
    paths: &PathIndex,
    files: &mut Candidates,
) -> Result<()> {
    for m in &task.paths {
        for (path, strength) in paths.resolve_path(&m.path, false) {
            let c = files.indexed(index, path)?;
            c.features.raise(Feature::Path, strength);
            // A diagnostic's or a link's line points as a frame's does.
            c.pointed_lines.extend(m.line);
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
            let c = files.indexed(index, path)?;
            c.features.raise(Feature::Frame, strength * depth_share);
            c.pointed_lines.extend(f.line);
        }
    }
    for m in &task.modules {
        for (path, strength) in paths.resolve_module(m) {
            files
                .indexed(index, path)?
                .features
                .raise(Feature::Module, strength);
        }
    }
    Ok(())
}

/// Definitions of the names the task writes as code: those the prose or a
/// trace names ([`Feature::Defines`]), then those only its code blocks hold
/// ([`Feature::DefinesCode`]); each counts the more the fewer files define it.
fn add_definitions(
    index: &Index,
    task: &TaskText,
    filter: &Filter,
    files: &mut Candidates,
) -> Result<()> {
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
    let written: Vec<&String> = task.identifiers.iter().chain(&task.modules).collect();
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
            // `Grid.__init__` names the one `__init__` of class `Grid`, when the index has it
            // (a container is stored as `class Grid`, `impl Grid`, `type Grid`).
            let owners = owners_written(&written, name);
            let owned: Vec<&SymbolRow> = (symbols.iter())
                .filter(|s| {
                    let owner = s.container.as_deref().and_then(|c| c.rsplit(' ').next());
                    owner.is_some_and(|o| owners.contains(&o))
                })
                .collect();
            let symbols: Vec<&SymbolRow> = if owned.is_empty() {
                symbols.iter().collect()
            } else {
                owned
            };
            let mut defining: Vec<&str> = symbols.iter().map(|s| s.path.as_str()).collect();
            defining.sort_unstable();
            defining.dedup();
            if defining.is_empty() || defining.len() > MAX_DEFINING_FILES {
                continue;
            }
            let share = 1.0 / defining.len() as f64;
            for path in defining {
                let lang = index.file(path)?.map_or(Language::Text, |f| f.lang);
                if !filter.admits(path, lang) {
                    continue;
                }
                let c = files.entry(path, lang);
                c.features.0[feature as usize] += share;
                match feature {
                    Feature::Defines => c.defined.push(name.to_string()),
                    _ => c.defined_in_code.push(name.to_string()),
                }
            }
        }
    }
    Ok(())
}

/// What each candidate is, whatever pointed at it: its dense likeness as a
/// file, its size, its name against the task's words, and its flags.
fn set_file_evidence(
    index: &Index,
    task: &TaskText,
    words: &TaskWords,
    dense_files: &HashMap<String, (f64, f64)>,
    files: &mut [Candidate],
) -> Result<()> {
    let (lowest, highest) = dense_files.values().fold(
        (f64::INFINITY, f64::NEG_INFINITY),
        |(lo, hi), &(_, mean)| (lo.min(mean), hi.max(mean)),
    );
    for c in files.iter_mut() {
        if let Some(&(_, mean)) = dense_files.get(&c.path)
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
            .set(Feature::Area, flag(in_area(&task.areas, &c.path)));
        c.features
            .set(Feature::Test, flag(rank::is_test_path(&c.path)));
        c.features.set(Feature::NonCode, flag(!c.lang.is_code()));
        let example = rank::is_example_path(&lower) && !task.wants_examples;
        c.features
            .set(Feature::Example, flag(example || is_docs_path(&lower)));
        c.features
            .set(Feature::Vendored, flag(words.leaves_vendored(&c.path)));
    }
    leave_headers_unnamed(files);
    Ok(())
}

/// The strongest candidates' imports, resolved to files: a file a strong
/// candidate imports gets [`Feature::Imported`], that candidate's score
/// against the best one's (a file can be added so).
fn mark_imported(index: &Index, files: &mut Vec<Candidate>, paths: &PathIndex) -> Result<()> {
    let w = Weights::default();
    let scores: Vec<f64> = files.iter().map(|c| w.score(&c.features)).collect();
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then_with(|| files[a].path.cmp(&files[b].path))
    });
    let best = order.first().map_or(0.0, |&i| scores[i]);
    if best <= 0.0 {
        return Ok(());
    }
    let mut imported: HashMap<&str, f64> = HashMap::new();
    for &i in order.iter().take(IMPORTING_FILES) {
        let importer = files[i].path.as_str();
        for import in index.file_imports(importer)? {
            let Some(module) = module_path(&import.source, importer) else {
                continue;
            };
            let found = if module.contains('.') {
                paths.resolve_path(&module, true)
            } else {
                paths.resolve_module(&module)
            };
            for (path, strength) in found {
                if path != importer {
                    let v = imported.entry(path).or_default();
                    *v = v.max(strength * scores[i] / best);
                }
            }
        }
    }
    let mut by_path: HashMap<String, usize> = files
        .iter()
        .enumerate()
        .map(|(i, c)| (c.path.clone(), i))
        .collect();
    let mut added: Vec<(&str, f64)> = imported.into_iter().collect();
    added.sort_by(|a, b| a.0.cmp(b.0));
    for (path, v) in added {
        let i = match by_path.get(path) {
            Some(&i) => i,
            None => {
                let lang = index.file(path)?.map_or(Language::Text, |f| f.lang);
                let mut c = Candidate::new(path, lang);
                c.features.set(Feature::Size, index.file_size_share(path)?);
                c.features
                    .set(Feature::Test, flag(rank::is_test_path(path)));
                files.push(c);
                by_path.insert(path.to_string(), files.len() - 1);
                files.len() - 1
            }
        };
        files[i].features.raise(Feature::Imported, v);
    }
    Ok(())
}

/// An import's source as a path to resolve against the repository: a
/// module path (`sympy/core/mul`) or a file path with its extension
/// (`lib/util.h`); relative imports (`.mul`, `./util`, `super::x`) from the
/// importing file's directory. `None` for a bare package name (`react`,
/// `numpy`), which names no file of the repository by itself.
fn module_path(source: &str, importer: &str) -> Option<String> {
    let dir: Vec<&str> = importer
        .rsplit_once('/')
        .map_or(Vec::new(), |d| d.0.split('/').collect());
    let source = source.trim_matches(|c| c == '"' || c == '\'' || c == '<' || c == '>');
    let (base, rest): (Vec<&str>, String) = if let Some(rel) = source.strip_prefix("./") {
        (dir.clone(), rel.to_string())
    } else if source.starts_with("../") {
        let mut base = dir.clone();
        let mut rest = source;
        while let Some(r) = rest.strip_prefix("../") {
            base.pop();
            rest = r;
        }
        (base, rest.to_string())
    } else if source.starts_with('.') {
        // Python: one dot is this package, each further one a level up.
        let dots = source.chars().take_while(|&c| c == '.').count();
        let mut base = dir.clone();
        for _ in 1..dots {
            base.pop();
        }
        (base, source[dots..].replace('.', "/"))
    } else if let Some(rel) = source.strip_prefix("super::") {
        let mut base = dir.clone();
        base.pop();
        (base, rel.replace("::", "/"))
    } else if let Some(rel) = source
        .strip_prefix("crate::")
        .or(source.strip_prefix("self::"))
    {
        (Vec::new(), rel.replace("::", "/"))
    } else if source.contains('/') || has_source_extension(source) {
        (Vec::new(), source.to_string())
    } else {
        (Vec::new(), source.replace("::", "/").replace('.', "/"))
    };
    let mut segments: Vec<String> = base.iter().map(|s| s.to_string()).collect();
    segments.extend(
        rest.split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string),
    );
    let joined = segments.join("/");
    (joined.contains('/') || has_source_extension(&joined)).then_some(joined)
}

fn has_source_extension(p: &str) -> bool {
    p.rsplit_once('.').is_some_and(|(_, ext)| {
        matches!(
            ext,
            "h" | "hpp" | "hh" | "c" | "cc" | "cpp" | "py" | "js" | "ts" | "rs" | "go"
        )
    })
}

/// The task's terms less those many chunks hold (`the`, `is`, `self`):
/// their IDF is near nothing, and their long postings are most of what a
/// query would decode. Terms the text names (a path, a frame, an error)
/// stay whatever their frequency.
fn informative_terms<'t>(index: &Index, terms: &'t [(String, f64)]) -> Result<Vec<(&'t str, f64)>> {
    let names: Vec<&str> = terms.iter().map(|(t, _)| t.as_str()).collect();
    let df = index.chunk_frequencies(&names)?;
    let chunks = index.chunk_count()?.max(1.0);
    Ok(terms
        .iter()
        .zip(df)
        .filter(|((_, w), df)| {
            *w >= TermWeights::default().named
                || (*df as f64) / chunks <= COMMON_TERM_SHARE
                || *df < COMMON_TERM_CHUNKS
        })
        .map(|((t, w), _)| (t.as_str(), *w))
        .collect())
}

/// A term in more than this share of the chunks is left out of a task's
/// lexical scoring (see [`informative_terms`]). Measured: at 0.15, 0.25,
/// 0.3 and 0.5 the rankings of SWE-bench Lite and of the mined pairs stay
/// within a case of keeping every term, and a fresh process answers in
/// two thirds of the time (`docs/benchmarks.md`).
const COMMON_TERM_SHARE: f64 = 0.25;
/// … and in at least this many chunks: in a small repository every word is
/// in many of its few chunks, and decoding them all costs nothing.
const COMMON_TERM_CHUNKS: u64 = 1000;

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
    // One automaton for every fragment and line: each file is read once.
    let patterns: Vec<&str> = fragments
        .iter()
        .map(String::as_str)
        .chain(lines.iter().copied())
        .collect();
    let Ok(finder) = aho_corasick::AhoCorasick::new(&patterns) else {
        return;
    };
    for i in order.into_iter().take(LITERAL_FILES) {
        if files[i].features.get(Feature::NonCode) > 0.0 {
            continue;
        }
        let Some(text) = index.file_text(&files[i].path) else {
            continue;
        };
        // Where each pattern first occurs in the file.
        let mut first: Vec<Option<usize>> = vec![None; patterns.len()];
        for m in finder.find_overlapping_iter(&text) {
            first[m.pattern().as_usize()].get_or_insert(m.start());
        }
        let c = &mut files[i];
        let (messages, code) = first.split_at(fragments.len());
        for at in messages.iter().flatten() {
            c.features.set(Feature::Message, 1.0);
            c.pointed_lines.push(line_of(&text, *at));
        }
        let found = code.iter().flatten().count();
        for at in code.iter().flatten() {
            c.pointed_lines.push(line_of(&text, *at));
        }
        if !lines.is_empty() {
            c.features
                .set(Feature::Snippet, found as f64 / lines.len() as f64);
        }
    }
}

/// The best `n` of scored chunks, best first (ties by id), without sorting
/// them all.
fn best_of(scored: &[(i64, f64)], n: usize) -> Vec<(i64, f64)> {
    let order = |a: &(i64, f64), b: &(i64, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut v = scored.to_vec();
    if v.len() > n {
        v.select_nth_unstable_by(n, order);
        v.truncate(n);
    }
    v.sort_by(order);
    v
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

/// The owners `name` is written with among `written` (a task's identifiers
/// and modules): `Grid` for `Grid.__init__`, `Grid::new` or `Grid/__init__`.
fn owners_written<'a>(written: &[&'a String], name: &str) -> Vec<&'a str> {
    written
        .iter()
        .filter_map(|i| {
            let owner = i.strip_suffix(name)?;
            let owner = (owner.strip_suffix('.'))
                .or_else(|| owner.strip_suffix("::"))
                .or_else(|| owner.strip_suffix('/'))?;
            Some(owner.rsplit(['.', ':', '/']).next().unwrap_or(owner))
        })
        .filter(|o| !o.is_empty())
        .collect()
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
    fn a_qualified_name_gives_its_owner() {
        let ids: Vec<String> = [
            "Grid.__init__",
            "io::Table::new",
            "__init__",
            "x__init__",
            "pkg/Plot/draw",
        ]
        .map(String::from)
        .to_vec();
        let ids: Vec<&String> = ids.iter().collect();
        assert_eq!(owners_written(&ids, "__init__"), ["Grid"]);
        assert_eq!(owners_written(&ids, "new"), ["Table"]);
        assert_eq!(owners_written(&ids, "draw"), ["Plot"]);
        assert!(owners_written(&ids, "render").is_empty());
    }

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
    fn imports_resolve_from_the_importing_file() {
        let m = |s: &str, f: &str| module_path(s, f);
        assert_eq!(
            m("sympy.core.mul", "sympy/core/add.py").as_deref(),
            Some("sympy/core/mul")
        );
        assert_eq!(
            m(".mul", "sympy/core/add.py").as_deref(),
            Some("sympy/core/mul")
        );
        assert_eq!(
            m("..matrices", "sympy/core/add.py").as_deref(),
            Some("sympy/matrices")
        );
        assert_eq!(m("./util", "src/lib/a.ts").as_deref(), Some("src/lib/util"));
        assert_eq!(m("../util", "src/lib/a.ts").as_deref(), Some("src/util"));
        assert_eq!(
            m("crate::net::tcp", "src/lib.rs").as_deref(),
            Some("net/tcp")
        );
        assert_eq!(
            m("com.acme.Foo", "src/Bar.java").as_deref(),
            Some("com/acme/Foo")
        );
        assert_eq!(
            m("\"git2/util.h\"", "src/a.c").as_deref(),
            Some("git2/util.h")
        );
        assert_eq!(m("numpy", "src/a.py"), None);
        assert_eq!(m("react", "src/a.ts"), None);
    }
}
