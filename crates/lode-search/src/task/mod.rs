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

mod chunks;
mod features;
mod resolve;
mod text;
mod weights;
mod words;

use serde::Serialize;

use lode_core::{Language, Result};
use lode_index::{Filter, Index};

pub use chunks::{CHUNK_FEATURES, ChunkFeatures, ChunkWeights, ScoredChunk, task_chunk_candidates};
pub use text::{Frame, MAX_TASK_BYTES, PathMention, TaskText, TermWeights};
pub use weights::{FEATURES, Feature, FileFeatures, Weights};

use crate::search::{Partial, SearchHit};
use chunks::{ChunkChoice, TaskNames};

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

    /// `query` or `task`, as JSON writes `mode`.
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
    /// Chunks shown beyond each file's best, shared out by value (see
    /// [`FileHit::chunks`]).
    pub extra_chunks: usize,
    /// Which indexed files may be candidates (path prefix, languages).
    pub filter: Filter,
    /// Use the embedding model beside the lexical evidence.
    pub semantic: bool,
    /// Lines of each chunk shown as its snippet.
    pub snippet_lines: usize,
    /// How much each kind of evidence counts (default: the learned [`Weights`]).
    pub weights: Weights,
    /// How a file's chunks are chosen.
    pub chunk_weights: ChunkWeights,
}

impl Default for TaskOptions {
    fn default() -> TaskOptions {
        TaskOptions {
            files: 10,
            extra_chunks: 4,
            filter: Filter::default(),
            semantic: true,
            snippet_lines: 4,
            weights: Weights::default(),
            chunk_weights: ChunkWeights::default(),
        }
    }
}

/// One ranked file with its best chunks.
#[derive(Clone, Debug, Serialize)]
pub struct FileHit {
    /// The file, relative to the root, `/`-separated.
    pub path: String,
    /// The file's language.
    pub language: Language,
    /// Higher is better, comparable within one answer only: in task mode the
    /// file's [`Weights::score`] (rounded to 4 decimals), in query mode its best hit's.
    pub score: f64,
    /// What pointed at it: `path named`, `trace frame`, `defines parse_config`, ….
    pub evidence: Vec<String>,
    /// Its best chunks, best first. In task mode one per symbol, each scored as
    /// the file: every file its best, and [`TaskOptions::extra_chunks`] more
    /// shared out over the files by the chunk's score times the file's against
    /// the first's; in query mode its hits.
    pub chunks: Vec<SearchHit>,
    /// The evidence as numbers (for `bench` and the learner; not in JSON).
    #[serde(skip)]
    pub features: FileFeatures,
}

/// What the task's text held, counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Signals {
    /// File paths named outside trace frames.
    pub paths: usize,
    /// Module paths named (`sympy.core.basic`, `tokio::net`).
    pub modules: usize,
    /// Stack-trace frames.
    pub frames: usize,
    /// Distinct words written as code.
    pub identifiers: usize,
    /// Exception and error names (`ValueError`, `E0308`).
    pub errors: usize,
    /// Error messages, quoted or after an error's name.
    pub messages: usize,
    /// Code blocks: fenced, indented, REPL lines.
    pub code_blocks: usize,
}

/// The answer to a task search.
#[derive(Clone, Debug, Serialize)]
pub struct TaskResults {
    /// Best first, at most [`TaskOptions::files`]; only files scoring above 0.
    pub files: Vec<FileHit>,
    /// What the text held, counted.
    pub signals: Signals,
    /// Candidate files weighed before the cut.
    pub candidates: usize,
    /// Set when the dense side covered only the chunks embedded so far.
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

/// Every file some signal of `text` points at, with its evidence, in no
/// order: what [`task_search`] ranks and `lode bench learn` fits weights on.
pub fn task_candidates(
    index: &Index,
    text: &str,
    filter: &Filter,
    semantic: bool,
) -> Result<Vec<(String, FileFeatures)>> {
    let task = TaskText::parse(text);
    let terms = task.terms(&features::term_weights());
    let views = dense_views(&task);
    let gathered = features::gather(index, &task, &terms, &views, filter, semantic)?;
    Ok(gathered
        .files
        .into_iter()
        .map(|c| (c.path, c.features))
        .collect())
}

/// Ranks the files `text` touches (see the module docs).
pub fn task_search(index: &Index, text: &str, opts: &TaskOptions) -> Result<TaskResults> {
    let task = TaskText::parse(text);
    let terms = task.terms(&features::term_weights());
    let views = dense_views(&task);
    let mut gathered = features::gather(index, &task, &terms, &views, &opts.filter, opts.semantic)?;
    let candidates = gathered.files.len();
    let mut ranked: Vec<(f64, features::Candidate)> = std::mem::take(&mut gathered.files)
        .into_iter()
        .map(|c| (opts.weights.score(&c.features), c))
        .filter(|(s, _)| *s > 0.0)
        .collect();
    ranked.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.path.cmp(&b.1.path)));
    ranked.truncate(opts.files);
    let names = TaskNames::new(&task);
    // The chunks of the ranked files, and their scores, read at once.
    let mut chunk_ids: Vec<Vec<i64>> = Vec::with_capacity(ranked.len());
    for (_, c) in &ranked {
        chunk_ids.push(index.file_chunk_ids(&c.path)?);
    }
    let scores = gathered.chunk_scores.of(&chunk_ids.concat());
    let choice = ChunkChoice {
        index,
        scores: &scores,
        names: &names,
        opts,
    };
    let mut chunks = Vec::with_capacity(ranked.len());
    for ((_, c), ids) in ranked.iter().zip(&chunk_ids) {
        chunks.push(choice.ranked(c, ids)?);
    }
    let scored: Vec<(f64, Vec<f64>)> = (ranked.iter().zip(&chunks))
        .map(|((score, _), chunks)| (*score, chunks.iter().map(|(s, _)| *s).collect()))
        .collect();
    let shares = chunk_shares(&scored, opts.extra_chunks);
    let files = (ranked.into_iter().zip(chunks).zip(shares))
        .map(|(((score, c), chunks), wanted)| choice.file_hit(score, c, chunks, wanted))
        .collect();
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

/// How many chunks each ranked file shows: its best, and `extra` more,
/// each to the chunk of most value — its score times its file's score
/// against the first file's — so a sure first file shows more of itself and
/// a close second as much as the first. `ranked` holds each file's score
/// and its chunks' scores, best first.
fn chunk_shares(ranked: &[(f64, Vec<f64>)], extra: usize) -> Vec<usize> {
    let top = ranked
        .first()
        .map_or(1.0, |(score, _)| score.max(f64::MIN_POSITIVE));
    let mut offers: Vec<(f64, usize)> = ranked
        .iter()
        .enumerate()
        .flat_map(|(file, (score, chunks))| {
            let weight = (score / top).max(0.0);
            chunks
                .iter()
                .skip(1)
                .map(move |c| (weight * c.max(0.0), file))
        })
        .collect();
    // A file's chunks come best first, so the extras it wins are its next ones.
    offers.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut shares = vec![1; ranked.len()];
    for (_, file) in offers.into_iter().take(extra) {
        shares[file] += 1;
    }
    shares
}

/// What the embedding model reads of a task, as three views whose
/// similarities a chunk sums: the whole (its first line — an issue's title —,
/// its code-shaped words and the start of its prose), the title alone, and
/// the title with the code-shaped words. A static model averages its
/// tokens: in the whole, the prose's common words drown the title and the
/// names, so the narrower views say them again.
pub(super) fn dense_views(task: &TaskText) -> [String; 3] {
    let title = task.title.as_str();
    let mut named = String::from(title);
    for i in task.identifiers.iter().take(30) {
        named.push(' ');
        named.push_str(i);
    }
    let prose: String = task.prose.chars().take(1000).collect();
    let whole = format!("{named} {prose}");
    [whole, title.to_string(), named]
}

/// The evidence in words, strongest kinds first.
pub(super) fn evidence(f: &FileFeatures, defined: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let path = f.get(Feature::Path);
    if path >= 1.0 {
        out.push("path named".to_string());
    } else if path > 0.0 {
        out.push("file name named".to_string());
    }
    for (feature, words) in [
        (Feature::Frame, "trace frame"),
        (Feature::Module, "module named"),
        (Feature::Area, "area named"),
        (Feature::Message, "holds the error message"),
        (Feature::Snippet, "holds the quoted code"),
    ] {
        if f.get(feature) > 0.0 {
            out.push(words.to_string());
        }
    }
    for d in defined.iter().take(3) {
        out.push(format!("defines {d}"));
    }
    if f.get(Feature::Bm25) >= 0.5 {
        out.push("text match".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use lode_core::Config;
    use lode_index::{BuildOptions, IndexLocation};

    /// A small repository where the words of an issue are everywhere but its
    /// names point at one file.
    fn repo() -> (tempfile::TempDir, tempfile::TempDir, Index) {
        let files = [
            (
                "src/app/session.py",
                "from app.compat import builtin_str\n\nclass Session:\n    def request(self, method, url):\n        method = builtin_str(method)\n        return self.send(method, url)\n\n    def send(self, method, url):\n        return (method, url)\n",
            ),
            (
                "src/app/compat.py",
                "def builtin_str(value):\n    \"\"\"Converts a value to the native string type.\"\"\"\n    return str(value)\n",
            ),
            (
                "src/app/models.py",
                "class Response:\n    \"\"\"A response to a request: the method, the binary string body, the status\n    such as 404 not found, for python 3 and python 2 requests.\"\"\"\n\n    def text(self):\n        return self.body.decode()\n",
            ),
            (
                "CHANGELOG.md",
                "# Changes\n\n## 2.4.3\n\n- The method of a request is now a binary string on python 3.\n- A 404 not found response no longer hangs the request.\n- Converts the method from a binary string to the literal string.\n",
            ),
            (
                "docs/usage.md",
                "# Usage\n\nMake a request with a method. The response may be 404 not found when the method is a binary string.\n",
            ),
            (
                "tests/test_session.py",
                "from app.session import Session\n\ndef test_request_method_binary_string():\n    Session().request(b'GET', 'http://x')\n",
            ),
        ];
        indexed(&files)
    }

    /// A repository of `files` (path, text), indexed.
    fn indexed(files: &[(&str, &str)]) -> (tempfile::TempDir, tempfile::TempDir, Index) {
        let dir = tempfile::tempdir().unwrap();
        let cache = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let config = Config::default();
        let loc = IndexLocation::resolve(dir.path(), Some(cache.path())).unwrap();
        lode_index::build(&loc, &BuildOptions::quiet(&config)).unwrap();
        let index = Index::open(&loc).unwrap();
        (dir, cache, index)
    }

    fn ranked(index: &Index, text: &str) -> Vec<String> {
        task_search(index, text, &TaskOptions::default())
            .unwrap()
            .files
            .into_iter()
            .map(|f| f.path)
            .collect()
    }

    const ISSUE: &str = "method = builtin_str(method) problem\n\
        In the session is a command:\n\n    method = builtin_str(method)\n\n\
        Converts method from a binary string to the literal string. When requests tries \
        to use the method it gets a 404 Not Found response. I am using python 3 and \
        this bug does not exist on python 2.\n";

    #[test]
    fn the_extra_chunks_go_where_file_and_chunk_are_likeliest() {
        // A sure first file shows its next two chunks before the second file's.
        let sure = [(2.0, vec![3.0, 2.0, 1.9]), (1.0, vec![3.0, 2.5])];
        assert_eq!(chunk_shares(&sure, 2), [3, 1]);
        // A close second file with a strong second chunk wins the extra.
        let close = [(2.0, vec![3.0, 1.0]), (1.9, vec![3.0, 2.5])];
        assert_eq!(chunk_shares(&close, 1), [1, 2]);
        // Every file shows its best, whatever the extras; none shows more than it has.
        let few = [(1.0, vec![0.5]), (0.5, vec![0.4]), (0.2, vec![])];
        assert_eq!(chunk_shares(&few, 4), [1, 1, 1]);
        assert_eq!(chunk_shares(&[], 4), Vec::<usize>::new());
    }

    #[test]
    fn the_embedding_reads_the_whole_the_title_and_the_names() {
        let text = "\nSessions drop cookies on redirect\n\nCalling `Session.resolve_redirects` \
                    clears the jar, so the next request has none.";
        let task = TaskText::parse(text);
        let [whole, title, named] = dense_views(&task);
        assert_eq!(title, "Sessions drop cookies on redirect");
        assert!(named.starts_with(&title) && named.contains("Session.resolve_redirects"));
        assert!(!named.contains("jar"), "{named}");
        assert!(
            whole.starts_with(&named) && whole.contains("jar"),
            "{whole}"
        );
    }

    #[test]
    fn the_area_a_title_names_lifts_its_files() {
        // Two files alike, their paths of the same words: the title's prefix
        // names the first's directory, its words the second's as much.
        let conn = "package conn\n\n// closeIdle closes the idle connections.\nfunc closeIdle(conns []Conn) {\n\tfor _, c := range conns {\n\t\tc.Close()\n\t}\n}\n";
        let (_d, _c, index) = indexed(&[("http/net/conn.go", conn), ("net/http/conn.go", conn)]);
        let text = "http/net: close idle connections on shutdown\n\nIdle connections \
                    stay open after the server shuts down, until the timeout.";
        let task = task_search(&index, text, &TaskOptions::default()).unwrap();
        let first = &task.files[0];
        assert_eq!(first.path, "http/net/conn.go", "{:?}", task.files);
        assert!(
            first.evidence.contains(&"area named".to_string()),
            "{:?}",
            first.evidence
        );
        assert!(task.files[1].score < first.score, "{:?}", task.files);
    }

    #[test]
    fn a_source_link_a_hunk_or_a_lint_report_picks_its_chunk() {
        // The prose names neither function; the link, the hunk or the
        // report's line points into one.
        // Two functions of 16 and 14 lines (1-16, 19-32), twelve calls each.
        let calls = |f: &str, arg: &str| {
            (0..12)
                .map(|i| format!("    {f}_{i}({arg})\n"))
                .collect::<String>()
        };
        let cart = format!(
            "def add_item(cart, item, quantity):\n    \"\"\"Add an item to the cart, once.\"\"\"\n{}    \
             cart.items.append((item, quantity))\n    return cart\n\n\n\
             def total(cart):\n    \"\"\"The cart's total.\"\"\"\n{}    \
             return sum(i.price * q for i, q in cart.items)\n",
            calls("check", "cart, item"),
            calls("audit", "cart"),
        );
        let (_d, _c, index) = indexed(&[("shop/cart.py", &cart)]);
        // Either function, as the link or the diff's hunk says.
        for (line, symbol) in [(30, "total"), (10, "add_item")] {
            let intro = "Wrong result for a cart of two lines\n\nWith two lines in the cart \
                         the result is off";
            for text in [
                format!(
                    "{intro}; this line looks suspicious: \
                     https://github.com/acme/shop/blob/4f2a9c1/shop/cart.py#L{line}"
                ),
                format!(
                    "{intro}, this fixes it:\n\n--- a/shop/cart.py\n+++ b/shop/cart.py\n\
                     @@ -{line},1 +{line},1 @@\n-    pass\n+    return\n"
                ),
                format!(
                    "{intro}, the linter says:\n\n/home/dev/shop/shop/cart.py\n  \
                     {line}:5  error  Unused variable  unused-variable\n"
                ),
            ] {
                let task = task_search(&index, &text, &TaskOptions::default()).unwrap();
                let first = &task.files[0].chunks[0];
                assert_eq!(first.symbol.as_deref(), Some(symbol), "{text}: {first:?}");
                assert!(
                    task.files[0].evidence.contains(&"path named".to_string()),
                    "{:?}",
                    task.files[0].evidence
                );
            }
        }
    }

    #[test]
    fn the_names_of_an_issue_outweigh_its_prose() {
        let (_d, _c, index) = repo();
        let files = ranked(&index, ISSUE);
        assert_eq!(files[0], "src/app/session.py", "{files:?}");
        // The definition of the name the issue quotes comes next; prose files below code.
        assert_eq!(files[1], "src/app/compat.py", "{files:?}");
        let changelog = files.iter().position(|f| f == "CHANGELOG.md");
        let models = files.iter().position(|f| f == "src/app/models.py");
        assert!(
            changelog.is_none_or(|c| models.is_some_and(|m| m < c)),
            "{files:?}"
        );
        // The file's best chunk is the function that holds the line, shown from there.
        let results = task_search(&index, ISSUE, &TaskOptions::default()).unwrap();
        let first = &results.files[0].chunks[0];
        assert!(first.start_line <= 5 && 5 <= first.end_line, "{first:?}");
        assert!(
            first.snippet.contains("method = builtin_str(method)"),
            "{first:?}"
        );
        assert!(results.signals.identifiers > 0 && results.signals.code_blocks == 1);
    }

    #[test]
    fn a_trace_frame_names_its_file() {
        let (_d, _c, index) = repo();
        let text = "Sending fails with a TypeError on python 3\n\nTraceback (most recent call last):\n  \
            File \"/home/u/proj/src/app/compat.py\", line 3, in builtin_str\n\
            TypeError: cannot convert the binary string response\n";
        let results = task_search(&index, text, &TaskOptions::default()).unwrap();
        assert_eq!(results.files[0].path, "src/app/compat.py");
        assert!(results.files[0].evidence.iter().any(|e| e == "trace frame"));
        assert_eq!(
            results.files[0].chunks[0].symbol.as_deref(),
            Some("builtin_str")
        );
    }

    #[test]
    fn a_path_the_text_names_comes_first_and_tests_come_after_code() {
        let (_d, _c, index) = repo();
        let text = "Wrong status for binary string methods\n\nThe check in src/app/models.py \
            reads the request method as a binary string, so Session.request sends the wrong one \
            and the test for the binary string method fails.\n";
        let files = ranked(&index, text);
        assert_eq!(files[0], "src/app/models.py", "{files:?}");
        let test = files.iter().position(|f| f == "tests/test_session.py");
        let session = files
            .iter()
            .position(|f| f == "src/app/session.py")
            .unwrap();
        assert!(test.is_none_or(|t| t > session), "{files:?}");
    }

    #[test]
    fn what_a_named_function_calls_comes_before_the_rest_of_its_file() {
        // Each function over the chunker's merge size, so each is a chunk.
        let pad = (0..12)
            .map(|i| format!("    step_{i} = {i}\n"))
            .collect::<String>();
        let code = format!(
            "def parse_config(path):\n{pad}    text = read_text(path)\n    return split_fields(text)\n\n\
             def render_banner(title):\n    \"\"\"The banner: its title.\"\"\"\n{pad}    return title.upper()\n\n\
             def split_fields(text):\n{pad}    return text.split(',')\n\n\
             def read_text(path):\n{pad}    return open(path).read()\n"
        );
        let (_dir, _cache, index) = indexed(&[("app/config.py", &code)]);
        let text = "parse_config loses the last value\n\nCalling parse_config on a config \
            with a trailing comma loses the last value of the config: the title and path of the \
            config are read, the last one is not.\n";
        let shown = |callee: f64| {
            let mut opts = TaskOptions::default();
            opts.chunk_weights.0[6] = callee;
            let results = task_search(&index, text, &opts).unwrap();
            let file = &results.files[0];
            assert_eq!(file.path, "app/config.py");
            (file.chunks.iter())
                .map(|c| c.symbol.clone().unwrap_or_default())
                .collect::<Vec<_>>()
        };
        assert_eq!(ChunkFeatures::NAMES[6], "callee");
        // Without the lift a neighbour that shares a word with the task
        // outranks what the named function calls…
        let at = |shown: &[String], name: &str| shown.iter().position(|s| s == name);
        let plain = shown(0.0);
        assert_eq!(plain[0], "parse_config", "{plain:?}");
        let banner = at(&plain, "render_banner").expect("the neighbour is shown");
        assert!(
            at(&plain, "split_fields").is_none_or(|f| banner < f),
            "{plain:?}"
        );
        // …with it, the callees come next.
        let lifted = shown(ChunkWeights::default().0[6]);
        assert_eq!(lifted[0], "parse_config", "{lifted:?}");
        let mut next = lifted[1..3].to_vec();
        next.sort();
        assert_eq!(next, ["read_text", "split_fields"], "{lifted:?}");
    }

    #[test]
    fn a_containers_bare_header_line_is_not_a_chunk_of_its_own() {
        // Methods over the chunker's target size, so the impl is split at them:
        // its `impl Grid {` line joins the first method's chunk (lode-parse's
        // `split` tests), and task mode shows no part of one line.
        let body = (0..40)
            .map(|i| format!("        let step_{i} = {i} * self.width + other;\n"))
            .collect::<String>();
        let code = format!(
            "/// A grid of cells.\npub struct Grid {{\n    width: usize,\n    cells: Vec<u8>,\n}}\n\n\
             impl Grid {{\n    /// Resizes the grid, keeping what fits.\n    \
             pub fn resize(&mut self, other: usize) {{\n{body}    }}\n\n    \
             /// Clears every cell of the grid.\n    \
             pub fn clear(&mut self, other: usize) {{\n{body}    }}\n}}\n"
        );
        let (_dir, _cache, index) = indexed(&[("src/grid.rs", &code)]);
        let text = "Grid::resize loses cells\n\nCalling Grid::resize on a grid with cells loses \
            the last row of cells. The width of the Grid is kept but cells are dropped.\n";
        let results = task_search(&index, text, &TaskOptions::default()).unwrap();
        let shown: Vec<(String, u32, u32)> = (results.files[0].chunks.iter())
            .map(|c| {
                (
                    c.symbol.clone().unwrap_or_default(),
                    c.start_line,
                    c.end_line,
                )
            })
            .collect();
        assert!(shown.iter().all(|(_, start, end)| end > start), "{shown:?}");
        // The definitions are all there.
        for name in ["Grid", "resize", "clear"] {
            assert!(shown.iter().any(|(s, ..)| s == name), "{shown:?}");
        }
    }

    #[test]
    fn a_method_named_with_its_class_points_at_the_class_file() {
        // Twelve classes with an `__init__`: the bare name says nothing.
        let mut files: Vec<(String, String)> = (0..12)
            .map(|i| {
                let text = format!(
                    "class Writer{i}:\n    def __init__(self, delimiter):\n        self.delimiter = delimiter\n"
                );
                (format!("pkg/io/writer{i}.py"), text)
            })
            .collect();
        files.push((
            "pkg/io/tables.py".into(),
            "class Grid(Writer3):\n    def __init__(self):\n        super().__init__(delimiter=None)\n".into(),
        ));
        let files: Vec<(&str, &str)> = (files.iter())
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let (_d, _c, index) = indexed(&files);
        let trace = "Traceback (most recent call last):\n  \
            File \"/usr/lib/python3/site-packages/pkg/io/writer3.py\", line 2, in write\n\
            TypeError: Grid.__init__() got an unexpected keyword argument 'header_rows'\n";
        // As prose, and in a code block, where a dotted name is read as a module path.
        let title = "Writing a table with header rows fails\n\n";
        for text in [
            format!("{title}{trace}"),
            format!("{title}```\n{trace}```\n"),
        ] {
            let results = task_search(&index, &text, &TaskOptions::default()).unwrap();
            let tables = (results.files.iter())
                .find(|f| f.path == "pkg/io/tables.py")
                .expect("the class's file is ranked");
            assert!(
                tables.evidence.iter().any(|e| e == "defines __init__"),
                "{:?}",
                tables.evidence
            );
            assert_eq!(results.files[0].path, "pkg/io/tables.py", "{text}");
        }
    }

    #[test]
    fn search_says_which_mode_ran_and_can_be_forced() {
        let (_d, _c, index) = repo();
        let opts = crate::SearchOptions::default();
        let task = crate::search(&index, ISSUE, &opts).unwrap();
        assert_eq!(task.mode, Mode::Task);
        assert!(!task.files.is_empty());
        assert_eq!(task.hits[0].path, task.files[0].path);
        let query = crate::search(&index, "builtin_str", &opts).unwrap();
        assert_eq!(query.mode, Mode::Query);
        assert!(query.files.is_empty());
        let forced = crate::SearchOptions {
            mode: Some(Mode::Query),
            files: true,
            ..crate::SearchOptions::default()
        };
        let r = crate::search(&index, ISSUE, &forced).unwrap();
        assert_eq!(r.mode, Mode::Query);
        // The files view of query mode groups the hits by file.
        let paths: Vec<&str> = r.files.iter().map(|f| f.path.as_str()).collect();
        let mut distinct = paths.clone();
        distinct.dedup();
        assert_eq!(paths, distinct);
        assert_eq!(
            r.files.iter().map(|f| f.chunks.len()).sum::<usize>(),
            r.hits.len()
        );
    }
}
