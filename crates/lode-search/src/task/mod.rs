//! Task retrieval: from a task's own words — an issue with prose, traces
//! and code — to the files and functions it touches.
//!
//! A search query is a phrase; a task is pages of text whose few code-shaped
//! words matter most. Task mode reads the text for its signals
//! ([`TaskText`]), gathers every file some signal points at with its
//! evidence ([`FileFeatures`]: whole-file BM25 over the weighted terms, the
//! best chunk, the embedding, named paths, trace frames, modules,
//! definitions, quoted messages), ranks the files by a learned linear model
//! ([`Weights`]) and gives each its best chunks ([`FileHit`]).
//!
//! [`Mode::detect`] says which kind of text a search was given.

mod features;
mod resolve;
mod text;

use serde::Serialize;

use lode_core::Result;
use lode_index::{ChunkRow, Filter, Index};

pub use features::{FileFeatures, Weights};
pub use text::{Frame, MAX_TASK_BYTES, PathMention, TaskText, TermWeights};

use crate::search::{Partial, SearchHit, to_hit};

/// Which ranking a search ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// A phrase or question: ranked chunks.
    Query,
    /// A task's text: ranked files, each with its best chunks.
    Task,
}

impl Mode {
    /// Task mode for text shaped like a task (long, several lines or
    /// sentences, code or a trace), query mode otherwise.
    pub fn detect(text: &str) -> Mode {
        if TaskText::is_task_shaped(text) {
            Mode::Task
        } else {
            Mode::Query
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Query => "query",
            Mode::Task => "task",
        }
    }
}

/// How a task search runs.
#[derive(Clone, Debug)]
pub struct TaskOptions {
    /// Files returned.
    pub files: usize,
    /// Chunks shown per file.
    pub chunks_per_file: usize,
    pub filter: Filter,
    /// Use the embedding model beside the lexical evidence.
    pub semantic: bool,
    /// Lines of each chunk shown as its snippet.
    pub snippet_lines: usize,
    pub weights: Weights,
}

impl Default for TaskOptions {
    fn default() -> TaskOptions {
        TaskOptions {
            files: 10,
            chunks_per_file: 2,
            filter: Filter::default(),
            semantic: true,
            snippet_lines: 4,
            weights: Weights::default(),
        }
    }
}

/// One ranked file with its best chunks.
#[derive(Clone, Debug, Serialize)]
pub struct FileHit {
    pub path: String,
    pub language: String,
    pub score: f64,
    /// What pointed at it: `path named`, `trace frame`, `defines parse_config`, ….
    pub evidence: Vec<String>,
    pub chunks: Vec<SearchHit>,
    /// The evidence as numbers (for `bench` and the learner; not in JSON).
    #[serde(skip)]
    pub features: FileFeatures,
}

/// What the task's text held, counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Signals {
    pub paths: usize,
    pub modules: usize,
    pub frames: usize,
    pub identifiers: usize,
    pub errors: usize,
    pub messages: usize,
    pub code_blocks: usize,
}

/// The answer to a task search.
#[derive(Clone, Debug, Serialize)]
pub struct TaskResults {
    pub files: Vec<FileHit>,
    pub signals: Signals,
    /// Candidate files weighed before the cut.
    pub candidates: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial: Option<Partial>,
}

impl TaskResults {
    /// The chunks of the ranked files, file by file: what a chunk list
    /// (`search` in task mode) shows, at most `limit`.
    pub fn hits(&self, limit: usize) -> Vec<SearchHit> {
        self.files
            .iter()
            .flat_map(|f| f.chunks.iter().cloned())
            .take(limit)
            .collect()
    }
}

/// Ranks the files `text` touches (see the module docs).
pub fn task_search(index: &Index, text: &str, opts: &TaskOptions) -> Result<TaskResults> {
    let task = TaskText::parse(text);
    let terms = task.terms(&features::term_weights());
    let dense_text = dense_text(&task, text);
    let gathered = features::gather(
        index,
        &task,
        &terms,
        &dense_text,
        &opts.filter,
        opts.semantic,
    )?;
    let candidates = gathered.files.len();
    let mut ranked: Vec<(f64, features::Candidate)> = gathered
        .files
        .into_iter()
        .map(|c| (opts.weights.score(&c.features), c))
        .filter(|(s, _)| *s > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    ranked.truncate(opts.files);
    let mut files = Vec::with_capacity(ranked.len());
    for (score, c) in ranked {
        files.push(file_hit(index, score, c, opts)?);
    }
    Ok(TaskResults {
        files,
        signals: Signals {
            paths: task.paths.len(),
            modules: task.modules.len(),
            frames: task.frames.len(),
            identifiers: task.identifiers.len(),
            errors: task.errors.len(),
            messages: task.messages.len(),
            code_blocks: task.code.len(),
        },
        candidates,
        partial: opts
            .semantic
            .then(|| index.embedded_chunks())
            .flatten()
            .map(|(embedded, chunks)| Partial { embedded, chunks }),
    })
}

/// What the embedding model reads of a task: its first line (an issue's
/// title), its code-shaped words, and the start of its prose. A static
/// model averages its tokens; the whole text would drown the names in
/// common words.
fn dense_text(task: &TaskText, text: &str) -> String {
    let title = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut out = String::from(title);
    for i in task.identifiers.iter().take(30) {
        out.push(' ');
        out.push_str(i);
    }
    out.push(' ');
    let prose: String = task.prose.chars().take(1000).collect();
    out.push_str(&prose);
    out
}

/// A ranked file with its best chunks: the pooled ones best first; a chunk
/// that holds a trace frame's line or defines a name of the task first of
/// all; the file's first chunk when the pools had none.
fn file_hit(
    index: &Index,
    score: f64,
    c: features::Candidate,
    opts: &TaskOptions,
) -> Result<FileHit> {
    let mut chunks: Vec<std::sync::Arc<ChunkRow>> = Vec::new();
    let named = |row: &ChunkRow| {
        c.frame_lines
            .iter()
            .any(|&l| row.start_line <= l && l <= row.end_line)
            || row
                .symbol
                .as_ref()
                .is_some_and(|s| c.defined.iter().any(|d| *d == s.name))
    };
    let needs_file_chunks =
        !c.frame_lines.is_empty() || !c.defined.is_empty() || c.chunks.is_empty();
    if needs_file_chunks {
        let ids = index.file_chunk_ids(&c.path)?;
        for row in index.shared_chunks(&ids)? {
            if named(&row) && chunks.len() < opts.chunks_per_file {
                chunks.push(row);
            }
        }
        if chunks.is_empty() && c.chunks.is_empty() {
            chunks.extend(index.shared_chunks(&ids[..ids.len().min(1)])?);
        }
    }
    for (_, row) in &c.chunks {
        if chunks.len() >= opts.chunks_per_file {
            break;
        }
        if !chunks.iter().any(|r| r.id == row.id) {
            chunks.push(row.clone());
        }
    }
    let chunk_score = (score * 10_000.0).round() / 10_000.0;
    let hits = chunks
        .into_iter()
        .map(|row| to_hit(index, row, chunk_score, opts.snippet_lines))
        .collect();
    Ok(FileHit {
        evidence: evidence(&c.features, &c.defined),
        path: c.path,
        language: c.lang,
        score: chunk_score,
        chunks: hits,
        features: c.features,
    })
}

/// The evidence in words, strongest kinds first.
fn evidence(f: &FileFeatures, defined: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    if f.path >= 1.0 {
        out.push("path named".to_string());
    } else if f.path > 0.0 {
        out.push("file name named".to_string());
    }
    if f.frame > 0.0 {
        out.push("trace frame".to_string());
    }
    if f.module > 0.0 {
        out.push("module named".to_string());
    }
    if f.message > 0.0 {
        out.push("holds the error message".to_string());
    }
    for d in defined.iter().take(3) {
        out.push(format!("defines {d}"));
    }
    if f.bm25 >= 0.5 {
        out.push("text match".to_string());
    }
    out
}
