//! The chunk choice: which chunks of a ranked file task mode shows.
//!
//! Each chunk of the file gets its [`ChunkFeatures`] (its lexical score and
//! embedding similarity against the whole index's best, whether it holds a
//! line the task points at, defines a name the task writes, is built on
//! one, or is called by a chunk that defines one; whether it is a function's
//! and one of several of its symbol's) and is scored by the
//! linear [`ChunkWeights`]; the best chunk of each symbol is shown, best
//! first.

use std::sync::Arc;

use lode_core::{Result, SymbolKind};
use lode_index::{ChunkRow, Index, SymbolRow};

use super::features::{self, Candidate, SomeChunkScores};
use super::{FileHit, TaskOptions, TaskText, evidence};
use crate::search::to_hit;

/// How many kinds of chunk evidence there are.
pub const CHUNK_FEATURES: usize = 10;

/// A chunk's evidence, in [`ChunkWeights`] order: the first nine add to
/// its score, the last (a chunk of no symbol) multiplies it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChunkFeatures(pub [f64; CHUNK_FEATURES]);

impl ChunkFeatures {
    /// The features' names, as `lode bench learn --chunks` reports them.
    pub const NAMES: [&'static str; CHUNK_FEATURES] = [
        "lexical",
        "dense",
        "named_line",
        "defines",
        "name_part",
        "container",
        "callee",
        "callable",
        "part",
        "unnamed",
    ];

    /// Where the factor begins.
    pub const FACTORS: usize = 9;
}

/// How much each kind of chunk evidence counts. The defaults are a fit of
/// `lode bench learn --chunks` on mined commits with the built-in model
/// tuned for code: the embedding seven tenths of the lexical score, a line
/// the task points at as much; a definition of a name the task writes, a
/// symbol built on one, or a method of a class it names a sixth to a third
/// of that; a function that a function the task names calls (in the same
/// file) half — a task names where the fault shows, the fix is often in what
/// that calls (too rare in commits to fit, as the pointed line: both kept as
/// set by hand); a function or method a tenth more than a class's or a
/// module's own lines, a window of a long symbol a quarter (its best window
/// stands for it; a long function is one a change more often falls in); a
/// file's header and the gaps between definitions (no symbol) a tenth of
/// their score.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkWeights(pub [f64; CHUNK_FEATURES]);

impl Default for ChunkWeights {
    fn default() -> ChunkWeights {
        ChunkWeights([1.0, 0.7, 1.0, 0.168, 0.18, 0.312, 0.5, 0.1, 0.25, 0.1])
    }
}

impl ChunkWeights {
    /// The chunk's score: the weighted sum of the added features, times the
    /// factor when it is set.
    pub fn score(&self, f: &ChunkFeatures) -> f64 {
        let w = &self.0;
        let sum: f64 = (0..ChunkFeatures::FACTORS).map(|i| w[i] * f.0[i]).sum();
        (ChunkFeatures::FACTORS..CHUNK_FEATURES).fold(
            sum,
            |s, i| {
                if f.0[i] > 0.0 { s * w[i] } else { s }
            },
        )
    }
}

/// A chunk with its evidence.
pub type ScoredChunk = (Arc<ChunkRow>, ChunkFeatures);

/// A ranked file's chunks with their evidence, for a task search or the learner.
pub(super) struct ChunkChoice<'a> {
    pub index: &'a Index,
    /// The scores of the ranked files' chunks.
    pub scores: &'a SomeChunkScores,
    pub names: &'a TaskNames,
    pub opts: &'a TaskOptions,
}

impl ChunkChoice<'_> {
    /// Every chunk of a file (chunk ids `ids`) with its evidence, in the
    /// file's order: `pointed` holds the lines the task points at in it and
    /// the names of it the task writes.
    pub fn features(&self, path: &str, pointed: Pointed, ids: &[i64]) -> Result<Vec<ScoredChunk>> {
        let path_words = path_words(path);
        let flag = |b: bool| if b { 1.0 } else { 0.0 };
        let rows = self.index.shared_chunks(ids)?;
        // The names the chunks defining a task's name call.
        let callers: Vec<i64> = (rows.iter())
            .filter_map(|r| r.symbol.as_ref())
            .filter(|s| pointed.defined.contains(&s.name))
            .map(|s| s.id)
            .collect();
        let called: Vec<String> = if callers.is_empty() {
            Vec::new()
        } else {
            (self.index.file_calls(path)?.into_iter())
                .filter(|c| c.caller.is_some_and(|id| callers.contains(&id)))
                .map(|c| c.callee)
                .collect()
        };
        Ok(rows
            .into_iter()
            .map(|row| {
                let named_line = pointed
                    .lines
                    .iter()
                    .any(|&l| row.start_line <= l && l <= row.end_line);
                // Only names the prose or a trace gives: a name only a code block
                // holds is mostly the entry point a reproduction calls.
                let defines = row
                    .symbol
                    .as_ref()
                    .is_some_and(|s| pointed.defined.contains(&s.name));
                let lift = self.names.part_of(row.symbol.as_ref(), &path_words);
                let f = ChunkFeatures([
                    self.scores.lexical(row.id),
                    self.scores.dense(row.id),
                    flag(named_line),
                    flag(defines),
                    flag(lift == NameLift::Part),
                    flag(lift == NameLift::Container),
                    flag(
                        !defines
                            && row
                                .symbol
                                .as_ref()
                                .is_some_and(|s| called.contains(&s.name)),
                    ),
                    flag(row.symbol.as_ref().is_some_and(is_callable)),
                    flag(row.symbol.as_ref().is_some_and(|s| is_part(s, &row))),
                    flag(row.symbol.is_none()),
                ]);
                (row, f)
            })
            .collect())
    }

    /// The chunks of file `c` (chunk ids `ids`) with their scores, best
    /// first, one per symbol: a long function's parts would fill the file's share.
    pub fn ranked(&self, c: &Candidate, ids: &[i64]) -> Result<Vec<(f64, Arc<ChunkRow>)>> {
        let weights = &self.opts.chunk_weights;
        let mut ranked: Vec<(f64, Arc<ChunkRow>)> = self
            .features(&c.path, Pointed::of(c), ids)?
            .into_iter()
            .map(|(row, f)| (weights.score(&f), row))
            .collect();
        ranked.sort_by(|a, b| {
            b.0.total_cmp(&a.0)
                .then_with(|| a.1.start_line.cmp(&b.1.start_line))
        });
        let mut shown: Vec<Option<i64>> = Vec::new();
        ranked.retain(|(_, row)| {
            let symbol = row.symbol.as_ref().map(|s| s.id);
            if symbol.is_some() && shown.contains(&symbol) {
                return false;
            }
            shown.push(symbol);
            true
        });
        Ok(ranked)
    }

    /// File `c` (ranked with `score`) with the first `chunks_wanted` of its
    /// `ranked` chunks.
    pub fn file_hit(
        &self,
        score: f64,
        c: Candidate,
        ranked: Vec<(f64, Arc<ChunkRow>)>,
        chunks_wanted: usize,
    ) -> FileHit {
        let file_score = (score * 10_000.0).round() / 10_000.0;
        let snippet_lines = self.opts.snippet_lines;
        let hits = ranked
            .into_iter()
            .take(chunks_wanted)
            .map(|(_, row)| {
                // The snippet shows the line the task points at, when the chunk holds one.
                let pointed = c
                    .pointed_lines
                    .iter()
                    .copied()
                    .filter(|&l| row.start_line < l && l <= row.end_line)
                    .min();
                let mut hit = to_hit(self.index, row.clone(), file_score, snippet_lines);
                if let Some(line) = pointed
                    && snippet_lines > 0
                {
                    hit.snippet = snippet_from(self.index, &row, line, snippet_lines);
                }
                hit
            })
            .collect();
        FileHit {
            evidence: evidence(
                &c.features,
                &[&c.defined[..], &c.defined_in_code[..]].concat(),
            ),
            path: c.path,
            language: c.lang,
            score: file_score,
            chunks: hits,
            features: c.features,
        }
    }
}

/// Whether `s` is a function or method (not a class's or module's own lines).
fn is_callable(s: &SymbolRow) -> bool {
    matches!(s.kind, SymbolKind::Function | SymbolKind::Method)
}

/// Whether `row` is one of several chunks of `s` (a window of a long
/// function, a piece of a split class).
fn is_part(s: &SymbolRow, row: &ChunkRow) -> bool {
    s.start_line < row.start_line || row.end_line < s.end_line
}

/// What a task points at in one file.
#[derive(Clone, Copy, Default)]
pub(super) struct Pointed<'a> {
    /// Lines: trace frames, paths' lines, quoted code and messages.
    lines: &'a [u32],
    /// Names its prose or a trace writes that the file defines.
    defined: &'a [String],
}

impl Pointed<'_> {
    fn of(c: &Candidate) -> Pointed<'_> {
        Pointed {
            lines: &c.pointed_lines,
            defined: &c.defined,
        }
    }
}

/// `lines` lines of a chunk from the one before `line` (a line the task
/// points at), each clipped as a snippet's are.
fn snippet_from(index: &Index, row: &ChunkRow, line: u32, lines: usize) -> String {
    let skip = (line - row.start_line).saturating_sub(1) as usize;
    crate::source::chunk_lines(index, &row.path, row.start_byte, row.end_byte, skip + lines)
        .iter()
        .skip(skip)
        .map(|l| crate::source::clip(l, 200))
        .collect::<Vec<_>>()
        .join("\n")
}

/// How a chunk's symbol is built on a task's name (see [`TaskNames::part_of`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum NameLift {
    None,
    /// Its name holds a task's name inside it.
    Part,
    /// It is a member of a class the task names.
    Container,
}

/// The names a task writes, normalised (`MatrixElement` → `matrixelement`),
/// to find the chunks whose symbol is built on one of them: a method
/// `_print_MatrixElement` or `Point.__neg__` for a task about
/// `MatrixElement` or `Point`.
pub(super) struct TaskNames {
    names: Vec<String>,
}

impl TaskNames {
    pub fn new(task: &TaskText) -> TaskNames {
        let mut names: Vec<String> = task
            .identifiers
            .iter()
            .map(|i| i.rsplit(['.', ':']).next().unwrap_or(i))
            .map(normalized)
            .filter(|n| n.len() >= 4)
            .collect();
        names.sort();
        names.dedup();
        TaskNames { names }
    }

    /// Whether `symbol`'s name holds a task's name inside it (not equal:
    /// that is a definition), or its container is one. A name among the
    /// file's `path_words` (`latex` in `latex.py`) names the file, not one
    /// of its chunks: `print_latex` is no likelier for it.
    fn part_of(&self, symbol: Option<&SymbolRow>, path_words: &[String]) -> NameLift {
        let Some(s) = symbol else {
            return NameLift::None;
        };
        let name = normalized(&s.name);
        if self
            .names
            .iter()
            .filter(|n| !path_words.contains(n))
            .any(|n| *n != name && name.contains(n.as_str()))
        {
            return NameLift::Part;
        }
        let container = s
            .container
            .as_deref()
            .and_then(|c| c.rsplit(' ').next())
            .map(normalized);
        if container.is_some_and(|c| self.names.contains(&c)) {
            return NameLift::Container;
        }
        NameLift::None
    }
}

/// The directory and file names of `path`, normalised, without extensions:
/// `sphinx/ext/autodoc/__init__.py` → `sphinx`, `ext`, `autodoc`, `init`.
fn path_words(path: &str) -> Vec<String> {
    path.split('/')
        .map(|part| part.split('.').next().unwrap_or(part))
        .map(normalized)
        .filter(|w| !w.is_empty())
        .collect()
}

fn normalized(w: &str) -> String {
    w.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

/// Every chunk of the files `paths` with its evidence for `text`, the
/// chunks of each file in its order: what `lode bench learn --chunks` fits
/// [`ChunkWeights`] on. A path with no chunks or no candidate evidence
/// still lists its chunks, with what evidence they have.
pub fn task_chunk_candidates(
    index: &Index,
    text: &str,
    paths: &[&str],
    semantic: bool,
) -> Result<Vec<(String, Vec<ScoredChunk>)>> {
    let task = TaskText::parse(text);
    let terms = task.terms(&features::term_weights());
    let views = super::dense_views(&task);
    let opts = TaskOptions {
        semantic,
        ..TaskOptions::default()
    };
    let gathered = features::gather(index, &task, &terms, &views, &opts.filter, semantic)?;
    let names = TaskNames::new(&task);
    let mut ids: Vec<Vec<i64>> = Vec::with_capacity(paths.len());
    for path in paths {
        ids.push(index.file_chunk_ids(path)?);
    }
    let scores = gathered.chunk_scores.of(&ids.concat());
    let choice = ChunkChoice {
        index,
        scores: &scores,
        names: &names,
        opts: &opts,
    };
    let mut out = Vec::with_capacity(paths.len());
    for (path, ids) in paths.iter().zip(&ids) {
        let pointed = gathered
            .files
            .iter()
            .find(|c| c.path == *path)
            .map(Pointed::of)
            .unwrap_or_default();
        out.push((path.to_string(), choice.features(path, pointed, ids)?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn symbol(name: &str) -> SymbolRow {
        crate::test_support::function(1, "sympy/printing/latex.py", name)
    }

    #[test]
    fn a_name_of_the_files_own_path_lifts_none_of_its_chunks() {
        let names = TaskNames {
            names: vec!["latex".into(), "matrixelement".into()],
        };
        let words = path_words("sympy/printing/latex.py");
        assert_eq!(words, ["sympy", "printing", "latex"]);
        assert_eq!(
            names.part_of(Some(&symbol("print_latex")), &words),
            NameLift::None
        );
        assert_eq!(
            names.part_of(Some(&symbol("_print_MatrixElement")), &words),
            NameLift::Part
        );
        // In another file the same name is a chunk's evidence again.
        let elsewhere = path_words("sympy/printing/printer.py");
        assert_eq!(
            names.part_of(Some(&symbol("print_latex")), &elsewhere),
            NameLift::Part
        );
        assert_eq!(path_words("sphinx/ext/autodoc/__init__.py")[3], "init");
    }

    #[test]
    fn the_default_chunk_weights_score_as_a_weighted_sum() {
        let w = ChunkWeights::default();
        // Lexical 0.4, dense 0.2, defines, a function: 0.4 + 0.7 × 0.2 + 0.168 + 0.1.
        let named = ChunkFeatures([0.4, 0.2, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0]);
        assert!((w.score(&named) - 0.808).abs() < 1e-12);
        // The same evidence in no symbol counts a tenth.
        let mut unnamed = named;
        unnamed.0[ChunkFeatures::FACTORS] = 1.0;
        assert!((w.score(&unnamed) - 0.0808).abs() < 1e-12);
    }
}
