//! Reading a task's text for its signals: the paths, stack-trace frames,
//! identifiers, error names, quoted messages and code it holds, apart from
//! its prose.
//!
//! An issue is written for people: most of its words are prose, and the few
//! that name code — `requests/sessions.py`, `File "x.py", line 3, in f`,
//! `builtin_str`, `ValueError` — say far more about where the fix goes.
//! [`TaskText::parse`] finds them; [`TaskText::terms`] turns the whole into
//! weighted lexical terms, code-shaped words above prose, repeated words
//! saturating.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

/// A task text longer than this is read up to here (at a line boundary):
/// the signals of an issue are in its first pages, and parsing stays bounded.
pub const MAX_TASK_BYTES: usize = 64 * 1024;

/// Identifiers kept at most (first seen first).
const MAX_IDENTIFIERS: usize = 200;

/// A file path the text names, with the line when it gives one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PathMention {
    /// `/`-separated, as written but for a `file://` or URL prefix, a leading
    /// `./` and trailing punctuation; resolved against the indexed paths later.
    pub path: String,
    /// The line it gives (`sessions.py:12`), 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// One frame of a stack trace: where it ran and in which function, as far
/// as the trace's format says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frame {
    /// The file it ran in, cleaned as [`PathMention::path`] is; for a JVM frame,
    /// the package's directories then the file name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The line it gives, 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The function's last name segment (`Method` of `pkg.(*T).Method`); `None`
    /// when the format names none or names no function (`<module>`, `<init>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
}

/// What a task's text says, sorted by kind of signal.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TaskText {
    /// File paths named outside trace frames (`src/app.py`, `sessions.py:12`).
    pub paths: Vec<PathMention>,
    /// Dotted or `::` module paths (`sympy.core.basic`, `tokio::net`), as
    /// their segments joined by `/`.
    pub modules: Vec<String>,
    /// Stack-trace frames, in the order given.
    pub frames: Vec<Frame>,
    /// The text's first line: an issue's title, a commit's subject.
    pub title: String,
    /// The parts of the code the title's prefix names, lower-cased:
    /// `tpl/tplimpl` and `refs` of `tpl/tplimpl, refs: fix …`, as Go, git
    /// and many C projects write their titles, or a conventional commit's
    /// scope (`runtime-core` of `fix(runtime-core): …`). Its type alone
    /// (`fix:`, `feat:`) or an issue's kind (`Bug:`) names none.
    pub areas: Vec<String>,
    /// Words written as code (snake_case, camelCase, `a.b`, `A::b`,
    /// `f()`, anything in backticks or in code), distinct, first seen first.
    pub identifiers: Vec<String>,
    /// Those of the identifiers the prose or a trace names (not only a code
    /// block, which may be the reporter's own code).
    pub named: Vec<String>,
    /// Exception and error names (`ValueError`, `NullPointerException`, `E0308`).
    pub errors: Vec<String>,
    /// Error messages: quoted in the prose, or after an error's name.
    pub messages: Vec<String>,
    /// The code blocks (fenced, indented, REPL lines), each as written.
    pub code: Vec<String>,
    /// The rest: prose.
    pub prose: String,
    /// Whether the text asks about documentation itself.
    pub wants_docs: bool,
    /// Whether its title asks about examples (`blame example: …`): only the
    /// title, since prose says "for example" often.
    pub wants_examples: bool,
}

/// How much a term counts, by where it was found: code-shaped words say
/// more than prose.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TermWeights {
    /// A path, module, frame function or error name.
    pub named: f64,
    /// An identifier written as code.
    pub identifier: f64,
    /// A part of a compound identifier (`builtin` of `builtin_str`).
    pub part: f64,
    /// A word in a code block.
    pub code: f64,
    /// A prose word.
    pub prose: f64,
    /// A word of the title (the first line), at least, when a body follows.
    pub title: f64,
    /// The same for a title with nothing under it (a commit subject, a
    /// one-line question): it is the whole text, and a heavy title weight
    /// would level its prose words with its identifiers.
    pub lone_title: f64,
}

impl Default for TermWeights {
    fn default() -> TermWeights {
        TermWeights {
            named: 3.0,
            identifier: 2.0,
            part: 1.0,
            code: 1.0,
            prose: 0.6,
            title: 2.0,
            lone_title: 1.2,
        }
    }
}

static FENCE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^\s*(```|~~~)").unwrap());
/// An entry of an environment listing (see [`is_listing`]): `attrs  19.1.0`
/// (`pip list`, `conda list`), `numpy==1.19.1` (`pip freeze`), `├── react@16.13.1`
/// (`npm ls`), `GOOS="linux"` (`go env`, `env`: a quoted value, a path or none).
/// Its classes are ASCII, as this and [`BANNER`]'s formats are: Unicode word
/// and space classes would triple their compile time in a fresh process.
static LISTING_ENTRY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?-u:\s)*[A-Za-z][A-Za-z0-9_.@/\[\]+-]*(?-u:\s)+v?[0-9][A-Za-z0-9_.+!-]*((?-u:\s)+\S.*)?(?-u:\s)*$",
        r"|^(?-u:\s)*[A-Za-z][A-Za-z0-9_.-]*(\[[^\]]*\])?(?-u:\s)*(==|===|~=|>=|@)(?-u:\s)*\S+(?-u:\s)*$",
        r"|^[ \t│├└─┬|`+\\-]*@?[A-Za-z0-9_./-]+@[0-9]",
        r"|^(?-u:\s)*(set |export )?[A-Z_][A-Z0-9_]*=([\x22'/]|(?-u:\s)*$)",
    ))
    .unwrap()
});
/// A line of an interpreter's startup banner.
static BANNER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"^(?-u:\s)*(Python [0-9]+\.[0-9]+[A-Za-z0-9_.+]*(?-u:\s)*(\|[^|]*\|(?-u:\s)*)?\([^)]*, [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{4}.*"#,
        r#"|\[(GCC|Clang|MSC|PyPy)[^\]]*\]( on (?-u:\w)+)?"#,
        r#"|Type ["'](help|copyright)["'], ["'](copyright|credits)["'].* for more information\.?"#,
        r#"|IPython [0-9][A-Za-z0-9_.]* -- An enhanced Interactive Python\..*"#,
        r#"|\?(?-u:\s)+-> Introduction and overview of IPython's features\."#,
        r#"|%quickref(?-u:\s)+-> Quick reference\."#,
        r#"|help(?-u:\s)+-> Python's own help system\."#,
        r#"|object\?(?-u:\s)+-> Details about 'object'.*"#,
        r#"|Welcome to Node\.js v[0-9].*"#,
        r#"|Type "\.help" for more information\.)(?-u:\s)*$"#,
    ))
    .unwrap()
});
/// A line of a listing that is not an entry: blank, the command, a comment,
/// a rule, a header of a few words.
static LISTING_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\s*([$>%#].*|[-=_+|\s]*|[A-Za-z]+(\s+[A-Za-z]+){0,4}\s*)$").unwrap()
});
/// A path with a known source or config extension, possibly with its line
/// as most tools write it (`:line`), as `tsc`, MSVC and pdb do (`(line,col)`,
/// `(line)`), as Maven does (`:[line,col]`) or as .NET stack traces do
/// (`:line 57`) and as kotlinc does (`: (27, 13)`).
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?P<path>(?:[\w.\-@+]+/)*[\w.\-@+]*\w\.(?:py|pyi|pyw|pyx|rs|go|java|kt|kts|scala|groovy|js|jsx|mjs|cjs|ts|tsx|mts|cts|c|h|cc|cpp|cxx|hpp|hh|hxx|inl|ipp|tpp|cu|cuh|cs|rb|php|swift|dart|ex|exs|erl|hs|lua|zig|nim|jl|sh|bash|m|mm|vue|svelte|proto|toml|yaml|yml|json|cfg|ini|rst|md))(?::(?P<line>\d+)\b|\((?P<paren_line>[0-9]+)(?:,[0-9]+)?\)|:\[(?P<bracket_line>[0-9]+),[0-9]+\]|:line (?P<net_line>[0-9]+)\b|#L(?P<anchor_line>[0-9]+)\b|: \((?P<kotlin_line>[0-9]+), [0-9]+\)|\b)",
    )
    .unwrap()
});
/// The groups of [`PATH`] that hold a line number, one a match: `x.py:12`,
/// `x.ts(12,7)`, `X.java:[12,7]`, `X.cs:line 12`, a source link's `x.py#L12`,
/// `X.kt: (12, 7)`.
const PATH_LINES: [&str; 6] = [
    "line",
    "paren_line",
    "bracket_line",
    "net_line",
    "anchor_line",
    "kotlin_line",
];
/// A unified diff's file line: `--- a/src/x.py`, `+++ b/src/x.py`, `diff
/// --git a/x b/x` (the second path), `--- x.c<TAB>date` of `diff -u`.
static DIFF_FILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:(?:---|\+\+\+) |diff --git [^ ]+ )(?P<path>[^ \t]+)(?:\t.*)?$").unwrap()
});
/// git's `index 1a2b3c..4d5e6f 100644` line.
static DIFF_INDEX: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^index [0-9a-f]+\.\.[0-9a-f]+").unwrap());
/// A hunk's header: where the lines it replaces begin, how many, and the
/// line git shows for context (the enclosing function's).
static HUNK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^@@ -(?P<start>[0-9]+)(?:,(?P<len>[0-9]+))? \+[0-9]+(?:,(?P<new_len>[0-9]+))? @@(?P<context>.*)$",
    )
    .unwrap()
});
/// gcc's line before the errors of one function: `src/x.c: In function
/// 'parse':`, `x.cpp: In member function 'void ns::T::f(int)':`.
static GCC_CONTEXT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r": In (?:static |member )?(?:function|constructor|destructor) ",
        r"['‘`](?P<signature>[^'’`]+)['’`]:\s*$"
    ))
    .unwrap()
});
/// A problem in eslint's or stylelint's report, under its file's path:
/// `  14:9  error  'x' is defined but never used  no-unused-vars`.
static LINT_PROBLEM: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s+(?P<line>[0-9]+):[0-9]+\s+(?:error|warning|✖|⚠)\s").unwrap());
/// A line prose gives after a path: `x.py line 88`, `x.py, at line 9`,
/// `x.py (line 120)`.
static LINE_AFTER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"^[`'"]?,? (?:at |on )?\(?line ([0-9]+)\b"#).unwrap());
/// A line prose gives before a path: `line 743 of x.py`, `line 5 in x.py`.
static LINE_BEFORE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#"\bline ([0-9]+) (?:of|in) [`'"]?$"#).unwrap());
/// A title's prefix naming the parts of the code a change is in:
/// `net/http: `, `refs, reftable: `, or a conventional commit's scope
/// (`fix(runtime-core): `).
static AREA_PREFIX: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"^(?:(?P<areas>[A-Za-z0-9_./-]+(?:[ \t]*,[ \t]*[A-Za-z0-9_./-]+)*)",
        r"|[A-Za-z]+\((?P<scope>[A-Za-z0-9_./-]+(?:[ \t]*,[ \t]*[A-Za-z0-9_./-]+)*)\)!?)",
        r"[ \t]*:[ \t]+[^ \t]"
    ))
    .unwrap()
});
/// `a.b.c`, `A::b::C`: two or more segments.
static QUALIFIED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z_][\w$]*(?:(?:\.|::)[A-Za-z_][\w$]*)+").unwrap());
static WORD: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b[A-Za-z_$][\w$]*(?:\(\))?").unwrap());
static ERROR_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"\b(?:[A-Z][A-Za-z0-9]*(?:Error|Exception|Warning|Panic|Fault|Failure|Interrupt|Exit)|E\d{4})\b",
    )
    .unwrap()
});
/// `ValueError: message`, `error: message`, `panic: message`.
static ERROR_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^\s*(?:[\w.]*(?:Error|Exception|Warning)|error(?:\[E\d{4}\])?|panic|fatal|FATAL|ERROR|E)\s*:\s+(?P<msg>.{8,})$",
    )
    .unwrap()
});
/// Backticked code, 200 characters at most ([`BACKTICK_CHARS`]). The
/// bounds are checked on the match: a bounded repetition of a Unicode class
/// costs a fresh process a millisecond or more to compile.
static BACKTICK: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());
const BACKTICK_CHARS: std::ops::RangeInclusive<usize> = 1..=200;
/// A quoted message, 12 to 300 characters ([`QUOTED_CHARS`]; bounds checked
/// as [`BACKTICK`]'s).
static QUOTED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r#""([^"\n]+)"|'([^'\n]+)'"#).unwrap());
const QUOTED_CHARS: std::ops::RangeInclusive<usize> = 12..=300;
/// Words that ask about documentation itself.
static DOCS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:documentation|docs|readme|changelog|tutorial|typo in the doc)").unwrap()
});
/// Words that ask about examples.
static EXAMPLES: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(?:examples?|demos?|samples?)\b").unwrap());

/// Segments that begin a qualified name without naming a module.
const RECEIVERS: &[&str] = &["self", "this", "cls", "super", "crate", "Self"];

impl TaskText {
    /// Reads `text` (its first [`MAX_TASK_BYTES`]).
    pub fn parse(text: &str) -> TaskText {
        let text = bounded(text);
        let mut out = TaskText::default();
        let mut seen_ident: HashMap<String, ()> = HashMap::new();
        let mut prose = String::new();
        let mut in_fence = false;
        let mut block: Vec<&str> = Vec::new();
        let mut after_blank = true;
        let mut go_func: Option<String> = None;
        let mut rust_func: Option<String> = None;
        let mut diff = Diff::default();
        let mut lint_file = None;
        for line in without_environment(text) {
            out.read_lint_report(line, &mut lint_file);
            if FENCE.is_match(line) {
                if in_fence {
                    out.push_code(&mut block);
                }
                in_fence = !in_fence;
                diff.left = None;
                after_blank = false;
                continue;
            }
            if out.read_diff_header(line, &mut diff, &mut seen_ident) {
                after_blank = false;
                continue;
            }
            // A hunk's lines are code as the file has them, their marks off.
            if let Some(code) = diff.body_line(line) {
                block.push(code);
                out.push_line_code(code, &mut seen_ident);
                after_blank = false;
                continue;
            }
            // gcc's `x.c: In function 'name':` names where its errors are, as a frame would.
            if let Some(f) = gcc_context_function(line) {
                out.push_name(f, &mut seen_ident);
            }
            if let Some(frame) = frames::read(line, &mut go_func, &mut rust_func) {
                // A frame's path is the frame's, not a path the text names;
                // its function is a name the text writes as code.
                if let Some(f) = &frame.function {
                    out.push_name(f, &mut seen_ident);
                }
                if frame.path.as_deref().is_none_or(|p| !p.starts_with('<')) {
                    out.frames.push(frame);
                }
                after_blank = false;
                continue;
            }
            if let Some(m) = ERROR_LINE.captures(line) {
                out.messages.push(m["msg"].trim().to_string());
            }
            let indented = line.starts_with("    ") || line.starts_with('\t');
            let repl = ["$ ", ">>> ", "... ", "In [", "> "]
                .iter()
                .any(|p| line.trim_start().starts_with(p));
            let statement = looks_like_statement(line);
            if in_fence || repl || statement || (indented && (after_blank || !block.is_empty())) {
                block.push(line);
                out.push_line_code(line, &mut seen_ident);
                after_blank = false;
                continue;
            }
            out.push_code(&mut block);
            after_blank = line.trim().is_empty();
            out.read_prose_line(line, &mut seen_ident);
            prose.push_str(line);
            prose.push('\n');
        }
        out.push_code(&mut block);
        out.wants_docs = DOCS.is_match(&prose);
        out.title = text
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .chars()
            .take(300)
            .collect();
        out.wants_examples = EXAMPLES.is_match(&out.title);
        out.areas = areas(&out.title);
        out.prose = prose;
        out.errors = distinct(ERROR_NAME.find_iter(text).map(|m| m.as_str().to_string()));
        out.identifiers.truncate(MAX_IDENTIFIERS);
        out.messages = distinct(out.messages.drain(..));
        out.modules = distinct(out.modules.drain(..));
        out.dedup_paths();
        out
    }

    /// The text's lexical terms with their weights: each term counts by the
    /// strongest place it was found (see [`TermWeights`]) times `1 + ln n`
    /// for `n` occurrences in that place, so that a word repeated through
    /// the prose saturates. Sorted by term.
    pub fn terms(&self, w: &TermWeights) -> Vec<(String, f64)> {
        let mut out: HashMap<String, f64> = HashMap::new();
        let mut add = |counts: HashMap<String, u32>, weight: f64| {
            for (term, n) in counts {
                let v = weight * (1.0 + f64::from(n).ln());
                let slot = out.entry(term).or_default();
                *slot = slot.max(v);
            }
        };
        let named: Vec<&str> = self
            .paths
            .iter()
            .map(|p| p.path.as_str())
            .chain(self.modules.iter().map(String::as_str))
            .chain(self.frames.iter().filter_map(|f| f.function.as_deref()))
            .chain(self.errors.iter().map(String::as_str))
            .collect();
        let (whole, parts) = split_counts(named.iter().copied());
        add(whole, w.named);
        add(parts, w.part);
        let (whole, parts) = split_counts(self.identifiers.iter().map(String::as_str));
        add(whole, w.identifier);
        add(parts, w.part);
        let (whole, parts) = split_counts(self.code.iter().map(String::as_str));
        add(whole, w.code);
        add(parts, w.code.min(w.part));
        let (whole, parts) = split_counts(
            self.prose
                .lines()
                .chain(self.messages.iter().map(String::as_str)),
        );
        add(whole, w.prose);
        add(parts, w.prose);
        let title = if self.has_body() {
            w.title
        } else {
            w.lone_title
        };
        let (whole, parts) = split_counts(std::iter::once(self.title.as_str()));
        add(whole, title);
        add(parts, title);
        let mut terms: Vec<(String, f64)> = out.into_iter().collect();
        terms.sort_by(|a, b| a.0.cmp(&b.0));
        terms
    }

    /// Whether anything follows the title: prose, code, a trace.
    fn has_body(&self) -> bool {
        let mut lines = self.prose.lines().filter(|l| !l.trim().is_empty());
        lines.next();
        lines.next().is_some() || !self.code.is_empty() || !self.frames.is_empty()
    }

    /// Ends a code block, keeping its text.
    fn push_code(&mut self, block: &mut Vec<&str>) {
        if block.iter().any(|l| !l.trim().is_empty()) {
            self.code.push(block.join("\n"));
        }
        block.clear();
    }

    /// A line of code: its paths and modules are noted, and the words that
    /// name code — compound names, calls (`f(`), attributes (`.x`), what
    /// `def`/`class`/`import` introduce. The rest (a message printed in a
    /// block) count as the block's words.
    fn push_line_code(&mut self, line: &str, seen: &mut HashMap<String, ()>) {
        let extensions = self.find_paths(line);
        for m in QUALIFIED.find_iter(line) {
            self.push_module(m.as_str());
        }
        let mut previous = "";
        for m in WORD.find_iter(line) {
            if extensions.contains(&m.start()) {
                continue;
            }
            let w = m.as_str().trim_end_matches("()");
            let before = line[..m.start()].chars().next_back();
            let after = line[m.end()..].trim_start().chars().next();
            let names = looks_like_code(w)
                || after == Some('(')
                || m.as_str().ends_with("()")
                || before == Some('.')
                || matches!(
                    previous,
                    "def"
                        | "class"
                        | "fn"
                        | "func"
                        | "function"
                        | "struct"
                        | "import"
                        | "from"
                        | "interface"
                        | "enum"
                        | "trait"
                        | "impl"
                        | "type"
                        | "new"
                );
            if names && w.len() >= 3 && !is_keyword(w) {
                push_distinct(&mut self.identifiers, seen, w);
            }
            previous = w;
        }
    }

    /// A prose line: paths, backticked code, quoted messages, and the words
    /// written as code.
    fn read_prose_line(&mut self, line: &str, seen: &mut HashMap<String, ()>) {
        self.find_paths(line);
        for c in QUOTED.captures_iter(line) {
            let inner = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
            if QUOTED_CHARS.contains(&inner.chars().count())
                && inner.split_whitespace().count() >= 3
            {
                self.messages.push(inner.trim().to_string());
            }
        }
        // A link's host (`github.com`) is no module and no name of code.
        let line = &without_url_hosts(line);
        for c in BACKTICK.captures_iter(line) {
            let inner = &c[1];
            if !BACKTICK_CHARS.contains(&inner.chars().count()) {
                continue;
            }
            for m in QUALIFIED.find_iter(inner) {
                self.push_module(m.as_str());
            }
            for m in WORD.find_iter(inner) {
                let w = m.as_str().trim_end_matches("()");
                if w.len() >= 2 && !is_keyword(w) {
                    self.push_name(w, seen);
                }
            }
        }
        for m in QUALIFIED.find_iter(line) {
            let q = m.as_str();
            // `e.g` and `i.e` are prose; a sentence's end has a space after
            // the dot; a file name is a path, found as one.
            if q.len() > 4
                && !q.eq_ignore_ascii_case("e.g")
                && !q.eq_ignore_ascii_case("i.e")
                && !is_file_name(q)
            {
                self.push_module(q);
                self.push_name(q, seen);
            }
        }
        for m in WORD.find_iter(line) {
            let w = m.as_str();
            let call = w.ends_with("()");
            let w = w.trim_end_matches("()");
            if call || looks_like_code(w) {
                self.push_name(w, seen);
            }
        }
    }

    /// A name the prose, a trace or a diff writes as code: an identifier,
    /// and one the task names (see [`TaskText::named`]).
    fn push_name(&mut self, name: &str, seen: &mut HashMap<String, ()>) {
        push_distinct(&mut self.identifiers, seen, name);
        push_named(&mut self.named, name);
    }

    /// eslint's and stylelint's reports give a file's path alone on a line
    /// and its problems under it (`  14:9  error  …`): the first problem's
    /// line is the path's. `file` is the path the line before gave alone.
    fn read_lint_report(&mut self, line: &str, file: &mut Option<String>) {
        if let Some(path) = file.take()
            && let Some(n) = lint_problem_line(line)
        {
            // Joined to the path's own mention when paths are deduplicated.
            self.paths.push(PathMention {
                path,
                line: Some(n),
            });
            return;
        }
        *file = lone_path(line);
    }

    /// Reads a unified diff's header lines: `diff --git a/x b/x`, `--- a/x`
    /// and `+++ b/x` name the file the hunks after them change; a hunk's
    /// `@@ -240,7 +240,7 @@ def name(…):` points at the middle of the lines
    /// it replaces and names the function git printed after it. Whether
    /// `line` was one.
    fn read_diff_header(
        &mut self,
        line: &str,
        diff: &mut Diff,
        seen: &mut HashMap<String, ()>,
    ) -> bool {
        // Only lines of a diff's shapes meet the patterns: a text without a
        // diff never compiles them.
        let file_line = ["--- ", "+++ ", "diff --git "]
            .iter()
            .any(|p| line.starts_with(p));
        if let Some(c) = file_line.then(|| DIFF_FILE.captures(line)).flatten() {
            let path = &c["path"];
            // git's `a/` and `b/`, once: `a/a/x.py` is `a/x.py`.
            let path =
                (path.strip_prefix("a/").or_else(|| path.strip_prefix("b/"))).unwrap_or(path);
            if !path.contains(['/', '.']) || path == "/dev/null" {
                return false;
            }
            let path = clean_path(path);
            if !is_repository_path(&path) {
                return false;
            }
            self.paths.push(PathMention {
                path: path.clone(),
                line: None,
            });
            diff.file = Some(path);
            diff.left = None;
            return true;
        }
        if line.starts_with("index ") && DIFF_INDEX.is_match(line) {
            return true;
        }
        if !line.starts_with("@@ -") {
            return false;
        }
        let Some(c) = HUNK.captures(line) else {
            return false;
        };
        let Some(file) = &diff.file else {
            return false;
        };
        let count = |name: &str| c.name(name).map_or(Ok(1), |m| m.as_str().parse::<u32>());
        let (old, new) = (count("len").ok(), count("new_len").ok());
        // A start too large to read points nowhere; a count too large, at the start.
        let start: Option<u32> = c["start"].parse().ok();
        self.paths.push(PathMention {
            path: file.clone(),
            line: start.map(|s| s.saturating_add(old.unwrap_or(0) / 2)),
        });
        if let Some(name) = hunk_function(&c["context"]) {
            self.push_name(name, seen);
        }
        // A count too large to read: the hunk runs to its last marked line.
        diff.left = Some((old.unwrap_or(u32::MAX), new.unwrap_or(u32::MAX)));
        true
    }

    /// Notes the paths on `line`, and returns where the extensions begin of
    /// those a line number follows (`cpp` of `dns.cpp(133)`): in code, after
    /// a dot or before a parenthesis, they would read as an attribute or a
    /// call. Without a line the "extension" may be a module's last segment
    /// (`format="ascii.rst"`) and stays a word.
    fn find_paths(&mut self, line: &str) -> Vec<usize> {
        // Same byte offsets: a backslash and a slash are one byte each.
        let line = forward_slashes(line);
        let mut extensions = Vec::new();
        for c in PATH.captures_iter(&line) {
            let number = PATH_LINES.iter().find_map(|&g| c.name(g));
            let whole = c.name("path").expect("always captured");
            if number.is_some()
                && let Some(dot) = whole.as_str().rfind('.')
            {
                extensions.push(whole.start() + dot + 1);
            }
            let path = clean_path(whole.as_str());
            if !is_repository_path(&path) {
                continue;
            }
            let line_number = match number {
                Some(m) => m.as_str().parse().ok(),
                None => prose_line(&line[..whole.start()], &line[whole.end()..]),
            };
            self.paths.push(PathMention {
                path,
                line: line_number,
            });
        }
        extensions
    }

    /// A qualified name as a module path: `sympy.core.basic` →
    /// `sympy/core/basic`; a leading receiver (`self.x`) names no module.
    fn push_module(&mut self, q: &str) {
        let segments: Vec<&str> = q.split(['.', ':']).filter(|s| !s.is_empty()).collect();
        if segments.len() < 2 || RECEIVERS.contains(&segments[0]) {
            return;
        }
        // A file name of a known extension is kept as a path, and as a
        // module too when its "extension" may be a module's last segment
        // (`ascii.rst`, `config.json`): resolution keeps what exists.
        if is_file_name(q) && is_code_extension(segments[segments.len() - 1]) {
            return;
        }
        self.modules.push(segments.join("/"));
    }

    /// Paths in first-seen order, a path named again with a line keeping
    /// its first line.
    fn dedup_paths(&mut self) {
        let mut seen: HashMap<String, usize> = HashMap::new();
        let mut out: Vec<PathMention> = Vec::new();
        for p in self.paths.drain(..) {
            match seen.get(&p.path) {
                Some(&i) => {
                    if out[i].line.is_none() {
                        out[i].line = p.line;
                    }
                }
                None => {
                    seen.insert(p.path.clone(), out.len());
                    out.push(p);
                }
            }
        }
        self.paths = out;
    }

    /// Whether the text reads as a task (an issue, a trace, a paragraph)
    /// rather than a search query: many words, several lines, code or a
    /// trace. A search query is a phrase or a sentence.
    pub fn is_task_shaped(text: &str) -> bool {
        let words = text.split_whitespace().count();
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        let sentences = text
            .split_inclusive(['.', '?', '!'])
            .filter(|s| s.ends_with(['.', '?', '!']) && s.split_whitespace().count() >= 3)
            .count();
        words >= 30
            || lines >= 3
            || (sentences >= 2 && words >= 16)
            || FENCE.is_match(text)
            || text.lines().any(frames::is_common_frame)
    }
}

/// A prose line that is a line of code pasted without a fence:
/// `method = builtin_str(method)`. It has code's punctuation, and at most a
/// third of its words are plain words (a sentence with a call in
/// parentheses is still a sentence).
fn looks_like_statement(line: &str) -> bool {
    let t = line.trim();
    if t.len() < 8 || t.ends_with(['.', '?', '!']) || !t.contains(['(', '=', '[', '{']) {
        return false;
    }
    let tokens: Vec<&str> = t.split_whitespace().collect();
    let plain = tokens
        .iter()
        .filter(|w| w.len() >= 2 && w.chars().all(|c| c.is_alphabetic() || c == ','))
        .count();
    tokens.len() <= 12 && plain * 3 <= tokens.len()
}

/// Extensions that are never a module's name.
fn is_code_extension(ext: &str) -> bool {
    matches!(
        ext,
        "py" | "pyi"
            | "pyw"
            | "pyx"
            | "rs"
            | "go"
            | "java"
            | "kt"
            | "kts"
            | "scala"
            | "groovy"
            | "js"
            | "jsx"
            | "mjs"
            | "cjs"
            | "ts"
            | "tsx"
            | "mts"
            | "cts"
            | "c"
            | "h"
            | "cc"
            | "cpp"
            | "cxx"
            | "hpp"
            | "hh"
            | "hxx"
            | "inl"
            | "ipp"
            | "tpp"
            | "cu"
            | "cuh"
            | "cs"
            | "rb"
            | "php"
            | "swift"
            | "dart"
            | "ex"
            | "exs"
            | "erl"
            | "hs"
            | "lua"
            | "zig"
            | "nim"
            | "jl"
            | "sh"
            | "bash"
    )
}

/// `line` with a Windows path's separators (`src\app\main.py`) written as
/// `/`, so that the path reads as any other. Only a backslash between two
/// characters of a path is one; others (`"\n"` after a quote, a trailing
/// one) stay.
fn forward_slashes(line: &str) -> Cow<'_, str> {
    if !line.contains('\\') {
        return Cow::Borrowed(line);
    }
    let of_path = |c: char| c.is_alphanumeric() || "_.-@+".contains(c);
    let chars: Vec<char> = line.chars().collect();
    let separator = |i: usize| {
        chars[i] == '\\'
            && i > 0
            && of_path(chars[i - 1])
            && chars.get(i + 1).is_some_and(|&c| of_path(c))
    };
    (0..chars.len())
        .map(|i| if separator(i) { '/' } else { chars[i] })
        .collect()
}

/// The areas a title's prefix names (see [`TaskText::areas`]).
fn areas(title: &str) -> Vec<String> {
    let Some(named) = AREA_PREFIX
        .captures(title)
        .and_then(|c| c.name("areas").or(c.name("scope")))
    else {
        return Vec::new();
    };
    let areas = named
        .as_str()
        .split(',')
        .map(|a| a.trim().trim_matches('/').to_ascii_lowercase());
    let version = |a: &str| {
        a.trim_start_matches('v')
            .chars()
            .all(|c| c.is_ascii_digit() || c == '.')
    };
    distinct(
        areas.filter(|a| a.chars().any(char::is_alphabetic) && !version(a) && !is_change_kind(a)),
    )
}

/// A conventional commit's type or an issue's kind, written where an area
/// could be: it says what the change is, not where.
fn is_change_kind(word: &str) -> bool {
    matches!(
        word,
        "fix"
            | "fixes"
            | "fixed"
            | "bugfix"
            | "hotfix"
            | "feat"
            | "feature"
            | "chore"
            | "docs"
            | "doc"
            | "ci"
            | "test"
            | "tests"
            | "refactor"
            | "perf"
            | "build"
            | "style"
            | "revert"
            | "deps"
            | "release"
            | "wip"
            | "security"
            | "breaking"
            | "bump"
            | "typo"
            | "bug"
            | "question"
            | "proposal"
            | "rfc"
            | "enhancement"
            | "regression"
            | "discussion"
            | "request"
            | "idea"
            | "help"
            | "issue"
            | "meta"
            | "tracking"
            | "suggestion"
            | "note"
            | "todo"
            | "update"
            | "add"
            | "remove"
    )
}

/// Whether `q` is a file name with a known extension (`hyperbolic.py`), not
/// a qualified name.
fn is_file_name(q: &str) -> bool {
    PATH.find(q)
        .is_some_and(|m| m.start() == 0 && m.end() == q.len())
}

/// The lines of `text` less its reports of the environment, which name
/// installed packages and tools and no code of the repository: fenced blocks
/// that list packages or variables (`pip list`, `pip freeze`, `conda list`,
/// `npm ls`, `go env`), and an interpreter's startup banner (Python's,
/// IPython's, Node's).
fn without_environment(text: &str) -> Vec<&str> {
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if !FENCE.is_match(lines[i]) {
            if !BANNER.is_match(lines[i]) {
                kept.push(lines[i]);
            }
            i += 1;
            continue;
        }
        let close = (i + 1..lines.len()).find(|&j| FENCE.is_match(lines[j]));
        let end = close.unwrap_or(lines.len() - 1);
        let inside = &lines[i + 1..close.unwrap_or(lines.len())];
        if !is_listing(inside) {
            kept.extend(lines[i..=end].iter().filter(|l| !BANNER.is_match(l)));
        }
        i = end + 1;
    }
    kept
}

/// Whether a block is a listing: four entries or more — a package and its
/// version, a pinned requirement, a dependency tree's `name@version`, a
/// `NAME=value` variable — and four in five of its lines, leaving aside the
/// command, comments, a header of words and rules (`$ pip list`, `Package
/// Version`, `-------`).
fn is_listing(block: &[&str]) -> bool {
    let lines: Vec<&str> = (block.iter().copied())
        .filter(|l| !LISTING_FRAME.is_match(l))
        .collect();
    let entries = lines.iter().filter(|l| LISTING_ENTRY.is_match(l)).count();
    entries >= 4 && entries * 5 >= lines.len() * 4
}

/// `text` cut to [`MAX_TASK_BYTES`] at a line boundary (or a character one).
fn bounded(text: &str) -> &str {
    if text.len() <= MAX_TASK_BYTES {
        return text;
    }
    let mut end = MAX_TASK_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let cut = &text[..end];
    cut.rfind('\n').map_or(cut, |i| &cut[..i])
}

/// Whether a cleaned path can be a repository's: `e.g.` and version numbers
/// end in a letter after a dot too, and `../x` lies outside.
fn is_repository_path(path: &str) -> bool {
    path.len() >= 4 && !path.starts_with('.')
}

/// A path as a repository names it: `/` separators, no `./`, no drive or
/// site-packages prefix left to guess at (the matcher compares suffixes).
fn clean_path(p: &str) -> String {
    let p = p.replace('\\', "/");
    let p = p.trim_start_matches("file://");
    // A URL's path: `http://localhost:3000/static/app.js` → `static/app.js`.
    let p = match p.split_once("://") {
        Some((_, rest)) => rest.split_once('/').map_or(rest, |(_, path)| path),
        None => p,
    };
    let p = in_repository(p).trim_start_matches("./");
    p.trim_end_matches([':', ',', ')', '.']).to_string()
}

/// Where a unified diff is, as its lines go by.
#[derive(Default)]
struct Diff {
    /// The file its last header named.
    file: Option<String>,
    /// The old and new lines the current hunk has still to show: its lines
    /// marked ` `, `-` and `+` are code until both are shown.
    left: Option<(u32, u32)>,
}

impl Diff {
    /// A hunk's line without its mark; `None` (and the hunk over) for any
    /// other line. An empty line is an empty context line: pasted diffs
    /// lose its space.
    fn body_line<'t>(&mut self, line: &'t str) -> Option<&'t str> {
        let (old, new) = self.left?;
        if old == 0 && new == 0 {
            self.left = None;
            return None;
        }
        let (code, left) = match line.chars().next() {
            None => (line, (old.saturating_sub(1), new.saturating_sub(1))),
            Some(' ') => (&line[1..], (old.saturating_sub(1), new.saturating_sub(1))),
            Some('-') => (&line[1..], (old.saturating_sub(1), new)),
            Some('+') => (&line[1..], (old, new.saturating_sub(1))),
            // `\ No newline at end of file`
            Some('\\') => ("", (old, new)),
            Some(_) => {
                self.left = None;
                return None;
            }
        };
        self.left = Some(left);
        Some(code)
    }
}

/// The function a hunk's context line names: the first name a `(`
/// follows (`def name(`, `func (r *T) name(`, `static int name(`).
fn hunk_function(context: &str) -> Option<&str> {
    WORD.find_iter(context)
        .filter(|m| m.as_str().ends_with("()") || context[m.end()..].starts_with('('))
        .map(|m| m.as_str().trim_end_matches("()"))
        .find(|w| !is_keyword(w) && !matches!(*w, "if" | "switch"))
}

/// The line the prose around a path gives (`before` and `after` it on its
/// line), if any; the patterns run only where `line ` is written.
fn prose_line(before: &str, after: &str) -> Option<u32> {
    let near = |s: &str| s.contains("line ");
    let after = near(after).then(|| LINE_AFTER.captures(after)).flatten();
    let before = || near(before).then(|| LINE_BEFORE.captures(before)).flatten();
    after.or_else(before)?.get(1)?.as_str().parse().ok()
}

/// The path a line holds alone (`/home/dev/src/app.ts`, `C:\\src\\app.ts`),
/// with no line number.
fn lone_path(line: &str) -> Option<String> {
    let line = line.trim();
    if line.is_empty() || line.contains(char::is_whitespace) || !line.contains('.') {
        return None;
    }
    let line = forward_slashes(line);
    let c = PATH.captures(&line)?;
    let whole = c.name("path")?;
    let prefix = &line[..whole.start()];
    let drive = |p: &[u8]| matches!(p, [d, b':', b'/' | b'\\'] if d.is_ascii_alphabetic());
    let alone = whole.end() == line.len()
        && (prefix.is_empty() || prefix == "/" || drive(prefix.as_bytes()));
    let path = clean_path(whole.as_str());
    (alone && is_repository_path(&path)).then_some(path)
}

/// The line of a lint report's problem (see [`LINT_PROBLEM`]); the pattern
/// runs only on a line that starts, past its indent, with a digit.
fn lint_problem_line(line: &str) -> Option<u32> {
    let rest = line.trim_start();
    if rest.len() == line.len() || !rest.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    LINT_PROBLEM.captures(line)?["line"].parse().ok()
}

/// The function gcc's `In function '…':` line names: its signature's name,
/// return type and parameters off (`void ns::T::f(int)` → `ns::T::f`).
fn gcc_context_function(line: &str) -> Option<&str> {
    if !line.contains(": In ") {
        return None;
    }
    let signature = GCC_CONTEXT.captures(line)?.name("signature")?.as_str();
    let name = signature.split('(').next()?.split_whitespace().last()?;
    let name = name.trim_start_matches(['*', '&']);
    (name.len() >= 2).then_some(name)
}

/// `line` with each URL's scheme and host (`https://github.com`) blanked,
/// its path kept.
fn without_url_hosts(line: &str) -> Cow<'_, str> {
    if !line.contains("://") {
        return Cow::Borrowed(line);
    }
    let mut out = line.as_bytes().to_vec();
    let mut from = 0;
    while let Some(at) = line[from..].find("://").map(|i| from + i) {
        let start = line[..at]
            .char_indices()
            .rev()
            .find(|(_, c)| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-')))
            .map_or(0, |(i, c)| i + c.len_utf8());
        let host = &line[at + 3..];
        let end = at
            + 3
            + host
                .find(|c: char| {
                    !(c.is_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '@' | '%'))
                })
                .unwrap_or(host.len());
        // ASCII spaces over whole characters: the bytes stay UTF-8.
        out[start..end].fill(b' ');
        from = end.max(at + 3);
    }
    Cow::Owned(String::from_utf8(out).expect("whole characters replaced"))
}

/// A source link's path in its repository: GitHub's and GitLab's
/// `host/owner/repo[/-]/blob/REF/src/x.py` → `src/x.py` (`tree`, `raw` and
/// `blame` as `blob`). Anything else as it is.
fn in_repository(p: &str) -> &str {
    let views = ["/blob/", "/tree/", "/raw/", "/blame/"];
    if !views.iter().any(|v| p.contains(v)) {
        return p;
    }
    let segments: Vec<&str> = p.split('/').collect();
    if !segments[0].contains('.') {
        return p;
    }
    let view = (3..segments.len().saturating_sub(2))
        .find(|&i| matches!(segments[i], "blob" | "tree" | "raw" | "blame"));
    match view {
        // The path after the view's ref: the segments' lengths and slashes.
        Some(i) => {
            let skip: usize = segments[..i + 2].iter().map(|s| s.len() + 1).sum();
            &p[skip..]
        }
        None => p,
    }
}

/// The last segment of a qualified function name: `pkg.(*T).Method` →
/// `Method`, `a::b::c` → `c`, `Foo.bar` → `bar`.
fn last_segment(f: &str) -> &str {
    let f = f.trim_end_matches("()");
    f.rsplit(['.', ':', '/'])
        .find(|s| !s.is_empty())
        .unwrap_or(f)
        .trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
}

/// A word written as code: snake_case, camelCase or PascalCase with an inner
/// capital; an acronym (`JSON`) or a capitalised word is prose.
pub(crate) fn looks_like_code(w: &str) -> bool {
    let inner = w.trim_matches('_');
    (inner.contains('_') && inner.chars().any(char::is_alphabetic))
        || (w.chars().skip(1).any(char::is_uppercase)
            && w.chars().any(char::is_lowercase)
            && !w
                .chars()
                .skip(1)
                .all(|c| c.is_lowercase() || !c.is_alphabetic()))
}

/// Words of code that name nothing in a repository.
fn is_keyword(w: &str) -> bool {
    matches!(
        w,
        "def"
            | "class"
            | "return"
            | "import"
            | "from"
            | "for"
            | "while"
            | "self"
            | "None"
            | "True"
            | "False"
            | "true"
            | "false"
            | "null"
            | "nil"
            | "let"
            | "const"
            | "var"
            | "function"
            | "fn"
            | "pub"
            | "mut"
            | "new"
            | "this"
            | "else"
            | "elif"
            | "try"
            | "except"
            | "raise"
            | "throw"
            | "catch"
            | "public"
            | "private"
            | "static"
            | "void"
            | "int"
            | "str"
            | "and"
            | "not"
            | "the"
            | "with"
            | "print"
            | "func"
            | "type"
            | "struct"
            | "impl"
            | "use"
            | "package"
            | "assert"
            | "lambda"
            | "yield"
            | "await"
            | "async"
            | "pass"
            | "break"
            | "continue"
            | "Traceback"
            | "most"
            | "recent"
            | "call"
            | "last"
            | "line"
            | "File"
    )
}

fn push_named(named: &mut Vec<String>, w: &str) {
    if named.len() < MAX_IDENTIFIERS && !named.iter().any(|n| n == w) {
        named.push(w.to_string());
    }
}

fn push_distinct(list: &mut Vec<String>, seen: &mut HashMap<String, ()>, w: &str) {
    if seen.insert(w.to_string(), ()).is_none() {
        list.push(w.to_string());
    }
}

fn distinct(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashMap::new();
    items
        .filter(|i| seen.insert(i.clone(), ()).is_none())
        .collect()
}

/// Counts of the index tokens of `texts`: whole words and, apart, the parts
/// of compound ones (`builtin_str` → `builtin_str`; `builtin`, `str`).
fn split_counts<'a>(
    texts: impl Iterator<Item = &'a str>,
) -> (HashMap<String, u32>, HashMap<String, u32>) {
    let mut whole: HashMap<String, u32> = HashMap::new();
    let mut parts: HashMap<String, u32> = HashMap::new();
    for text in texts {
        lode_index::tokens::each_word(text, |w, ps| {
            *whole.entry(w.to_string()).or_default() += 1;
            for p in ps {
                *parts.entry(p.clone()).or_default() += 1;
            }
        });
    }
    (whole, parts)
}

mod frames;
#[cfg(test)]
mod tests;
