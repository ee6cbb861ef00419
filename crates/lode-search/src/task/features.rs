//! The evidence a task gives about each candidate file, as numbers a
//! linear model weighs ([`Weights`]): whole-file BM25, the best chunk, the
//! dense similarity, and the task's named things — paths, trace frames,
//! modules, definitions, messages.

use std::collections::HashMap;
use std::sync::Arc;

use lode_core::{Language, Result};
use lode_index::lexical::Bm25Params;
use lode_index::{ChunkRow, FileBm25Params, Filter, Index};
use serde::{Deserialize, Serialize};

use super::resolve::PathIndex;
use super::text::{TaskText, TermWeights};
use crate::rank;

/// One candidate file's evidence. Scores are relative to the best candidate
/// of the same task (0–1); flags are 0 or 1.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FileFeatures {
    /// Whole-file BM25 over the task's weighted terms.
    pub bm25: f64,
    /// The best chunk's fused (lexical and dense) score.
    pub chunk: f64,
    /// The best chunk's embedding similarity.
    pub dense: f64,
    /// A path the task names is this file (1), or its file name is (less).
    pub path: f64,
    /// A trace frame ran in this file.
    pub frame: f64,
    /// A module path the task names is this file or its package.
    pub module: f64,
    /// The file defines names the task writes as code, each counting the
    /// more the fewer files define it.
    pub defines: f64,
    /// The file holds an error message the task quotes.
    pub message: f64,
    /// The file holds a line of code the task quotes (its share of them).
    pub snippet: f64,
    /// A test file.
    pub test: f64,
    /// Not code: prose, data, a notebook, a locale catalog.
    pub non_code: f64,
    /// Under an example or documentation directory.
    pub example: f64,
}

impl FileFeatures {
    /// The features in [`Weights::NAMES`] order.
    pub fn to_vec(&self) -> Vec<f64> {
        vec![
            self.bm25,
            self.chunk,
            self.dense,
            self.path,
            self.frame,
            self.module,
            self.defines,
            self.message,
            self.snippet,
            self.test,
            self.non_code,
            self.example,
        ]
    }

    /// Features from a vector in [`Weights::NAMES`] order (missing ones 0).
    pub fn from_slice(v: &[f64]) -> FileFeatures {
        let at = |i: usize| v.get(i).copied().unwrap_or(0.0);
        FileFeatures {
            bm25: at(0),
            chunk: at(1),
            dense: at(2),
            path: at(3),
            frame: at(4),
            module: at(5),
            defines: at(6),
            message: at(7),
            snippet: at(8),
            test: at(9),
            non_code: at(10),
            example: at(11),
        }
    }
}

/// How much each piece of evidence counts. The defaults are learned
/// (`lode bench learn`) from commit histories disjoint from every
/// evaluation set; see `docs/benchmarks.md`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub bm25: f64,
    pub chunk: f64,
    pub dense: f64,
    pub path: f64,
    pub frame: f64,
    pub module: f64,
    pub defines: f64,
    pub message: f64,
    pub snippet: f64,
    /// Factors, multiplied in when the flag is set.
    pub test: f64,
    pub non_code: f64,
    pub example: f64,
}

impl Default for Weights {
    fn default() -> Weights {
        Weights {
            bm25: 1.0,
            chunk: 0.6,
            dense: 0.2,
            path: 1.5,
            frame: 1.0,
            module: 0.6,
            defines: 0.8,
            message: 0.6,
            snippet: 0.8,
            test: 0.3,
            non_code: 0.2,
            example: 0.6,
        }
    }
}

impl Weights {
    /// The weights' names, in vector order. The first nine add, the last
    /// three multiply.
    pub const NAMES: [&'static str; 12] = [
        "bm25", "chunk", "dense", "path", "frame", "module", "defines", "message", "snippet",
        "test", "non_code", "example",
    ];

    /// Where the factors begin in [`Weights::NAMES`].
    pub const FIRST_FACTOR: usize = 9;

    pub fn to_vec(&self) -> Vec<f64> {
        FileFeatures::to_vec(&FileFeatures {
            bm25: self.bm25,
            chunk: self.chunk,
            dense: self.dense,
            path: self.path,
            frame: self.frame,
            module: self.module,
            defines: self.defines,
            message: self.message,
            snippet: self.snippet,
            test: self.test,
            non_code: self.non_code,
            example: self.example,
        })
    }

    pub fn from_slice(v: &[f64]) -> Weights {
        let f = FileFeatures::from_slice(v);
        Weights {
            bm25: f.bm25,
            chunk: f.chunk,
            dense: f.dense,
            path: f.path,
            frame: f.frame,
            module: f.module,
            defines: f.defines,
            message: f.message,
            snippet: f.snippet,
            test: f.test,
            non_code: f.non_code,
            example: f.example,
        }
    }

    /// The file's score: the weighted sum of its evidence, times the factors
    /// of its flags.
    pub fn score(&self, f: &FileFeatures) -> f64 {
        let sum = self.bm25 * f.bm25
            + self.chunk * f.chunk
            + self.dense * f.dense
            + self.path * f.path
            + self.frame * f.frame
            + self.module * f.module
            + self.defines * f.defines
            + self.message * f.message
            + self.snippet * f.snippet;
        let factor = |flag: f64, w: f64| if flag > 0.0 { w } else { 1.0 };
        sum * factor(f.test, self.test)
            * factor(f.non_code, self.non_code)
            * factor(f.example, self.example)
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
}

/// A candidate file.
pub struct Candidate {
    pub path: String,
    pub lang: String,
    pub features: FileFeatures,
    /// Its pooled chunks with their fused scores, best first.
    pub chunks: Vec<(f64, Arc<ChunkRow>)>,
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
                    chunks: Vec::new(),
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
        files.get_mut(&f.path).expect("added").features.bm25 = ratio(f.score, best_whole);
    }

    // Chunks: lexical and dense, fused.
    let lexical = index.lexical_weighted(&weighted, &Bm25Params::default(), filter, CHUNK_POOL)?;
    let dense = if semantic {
        index.dense(dense_text, filter, CHUNK_POOL)?
    } else {
        Vec::new()
    };
    let fused = crate::search::fuse(&lexical, &dense, rank::SEMANTIC_WEIGHT);
    let cosine: HashMap<i64, f64> = dense.iter().copied().collect();
    let best_cosine = dense.first().map_or(0.0, |d| d.1);
    let mut ids: Vec<i64> = fused.keys().copied().collect();
    ids.sort_unstable();
    let rows = index.shared_chunks(&ids)?;
    let best_fused = fused.values().copied().fold(0.0, f64::max);
    for row in rows {
        let s = fused.get(&row.id).copied().unwrap_or(0.0);
        candidate(&mut files, &row.path, &row.lang);
        let c = files.get_mut(&row.path).expect("added");
        c.features.chunk = c.features.chunk.max(ratio(s, best_fused));
        if let Some(&cos) = cosine.get(&row.id) {
            c.features.dense = c.features.dense.max(ratio(cos, best_cosine));
        }
        c.chunks.push((s, row));
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
            c.features.path = c.features.path.max(strength);
        }
    }
    for f in &task.frames {
        let Some(p) = &f.path else { continue };
        for (path, strength) in paths.resolve_path(p, true) {
            let lang = lang_of(index, path)?;
            candidate(&mut files, path, &lang);
            let c = files.get_mut(path).expect("added");
            c.features.frame = c.features.frame.max(strength);
            c.frame_lines.extend(f.line);
        }
    }
    for m in &task.modules {
        for (path, strength) in paths.resolve_module(m) {
            let lang = lang_of(index, path)?;
            candidate(&mut files, path, &lang);
            let c = files.get_mut(path).expect("added");
            c.features.module = c.features.module.max(strength);
        }
    }

    // Definitions of the names the task writes as code, and of its frames' functions.
    let frame_functions = task.frames.iter().filter_map(|f| f.function.as_deref());
    let mut names: Vec<&str> = Vec::new();
    for name in task
        .identifiers
        .iter()
        .map(|i| last_name(i))
        .chain(task.errors.iter().map(String::as_str))
        .chain(frame_functions)
    {
        if name.len() >= 3 && !names.contains(&name) {
            names.push(name);
        }
    }
    for name in names.into_iter().take(MAX_DEFINITION_LOOKUPS) {
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
            c.features.defines += share;
            c.defined.push(name.to_string());
        }
    }

    let mut files: Vec<Candidate> = files.into_values().collect();
    for c in &mut files {
        c.features.defines = (c.features.defines / 2.0).min(1.0);
        let lower = c.path.to_ascii_lowercase();
        c.features.test = flag(rank::is_test_path(&c.path));
        c.features.non_code = flag(!Language::from_name(&c.lang).is_some_and(Language::is_code));
        c.features.example = flag(rank::is_example_path(&lower) || is_docs_path(&lower));
        c.chunks.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.start_line.cmp(&b.1.start_line))
        });
    }
    mark_literals(index, task, &mut files);
    Ok(Gathered { files })
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
        if files[i].features.non_code > 0.0 {
            continue;
        }
        let Some(text) = index.file_text(&files[i].path) else {
            continue;
        };
        let c = &mut files[i];
        for f in &fragments {
            if let Some(at) = text.find(f.as_str()) {
                c.features.message = 1.0;
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
            c.features.snippet = f64::from(found) / lines.len() as f64;
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
        let code = FileFeatures {
            bm25: 1.0,
            path: 1.0,
            ..FileFeatures::default()
        };
        let test = FileFeatures {
            test: 1.0,
            ..code.clone()
        };
        assert!((w.score(&code) - (w.bm25 + w.path)).abs() < 1e-12);
        assert!((w.score(&test) - w.score(&code) * w.test).abs() < 1e-12);
    }
}
