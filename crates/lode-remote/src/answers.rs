//! A scatter-gather's answer as its fronts show it: the CLI with `--repo` /
//! `--all-repos` and `lode mcp --remote` print the same merged hits and the
//! same compact text, so both are made here.
//!
//! `search` and `grep` answers merge into one list of hits, each with the
//! repository and commit it came from ([`Gathered::hits`]); the other
//! commands answer per repository ([`answer_text`]).

use serde_json::{Value, json};

use crate::serve::{Command, Gathered, RepoAnswer};

/// Snippet lines a search hit shows in the compact text.
const SNIPPET_LINES: usize = 6;

impl Gathered {
    /// Every repository's hits with its name and commit: search's best
    /// first, cut to `top_k`; grep's groups by repository.
    pub fn hits(&self, command: Command, top_k: usize) -> Vec<Value> {
        let field = if command == Command::Grep {
            "groups"
        } else {
            "hits"
        };
        let mut hits: Vec<Value> = Vec::new();
        for a in &self.answers {
            for hit in a.answer[field].as_array().into_iter().flatten() {
                let mut hit = hit.clone();
                hit["repo"] = Value::String(a.repo.clone());
                hit["commit"] = Value::String(a.commit.clone());
                hits.push(hit);
            }
        }
        if command == Command::Search {
            hits.sort_by(merge_order);
            hits.truncate(top_k);
        }
        hits
    }

    /// The repositories answered and the commit each was served at.
    pub fn served(&self) -> Vec<Value> {
        (self.answers.iter())
            .map(|a| json!({"repo": a.repo, "commit": a.commit}))
            .collect()
    }

    /// Whether some repository has the path or symbol asked for (commands
    /// other than `search` and `grep`).
    pub fn found(&self) -> bool {
        self.answers.iter().any(|a| missed(&a.answer).is_none())
    }

    /// What a reader should know of the answer's coverage: partitions that
    /// did not answer, repositories not loaded yet.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.partial {
            notes.push(format!(
                "partial: partitions {:?} did not answer in time",
                self.missing_partitions
            ));
        }
        if !self.loading.is_empty() {
            let n = self.loading.len();
            let what = if n == 1 { "repository" } else { "repositories" };
            notes.push(format!("{n} {what} still loading, not answered"));
        }
        notes
    }
}

/// How merged search hits are ranked, the hits carrying their `repo`: best
/// score first, then by repository and path. Shard nodes keep their
/// partition's best hits in the same order, so the merge is unchanged.
pub(crate) fn merge_order(a: &Value, b: &Value) -> std::cmp::Ordering {
    let score = |h: &Value| h["score"].as_f64().unwrap_or(0.0);
    (score(b).total_cmp(&score(a)))
        .then_with(|| a["repo"].as_str().cmp(&b["repo"].as_str()))
        .then_with(|| a["path"].as_str().cmp(&b["path"].as_str()))
}

/// Why a repository's answer has nothing: its `not_found`, `ambiguous` or
/// `too_large` (an answer no message could carry).
pub fn missed(answer: &Value) -> Option<&Value> {
    (answer.get("not_found").or(answer.get("ambiguous"))).or(answer.get(crate::reply::TOO_LARGE))
}

/// One merged hit as the compact text shows it: `repo  path:start-end`, and
/// a search hit's first snippet lines or a grep group's lines, indented.
pub fn hit_text(command: Command, hit: &Value) -> String {
    let mut out = format!(
        "{}  {}:{}-{}",
        shown(&hit["repo"]),
        shown(&hit["path"]),
        hit["start_line"],
        hit["end_line"]
    );
    if let Some(symbol) = hit["symbol"].as_str() {
        out.push_str(&format!("  {}", lode_core::shown::field(symbol)));
    }
    out.push('\n');
    if command == Command::Grep {
        for line in hit["lines"].as_array().into_iter().flatten() {
            out.push_str(&format!("    {}: {}\n", line["line"], shown(&line["text"])));
        }
    } else if let Some(snippet) = hit["snippet"].as_str() {
        for line in snippet.lines().take(SNIPPET_LINES) {
            out.push_str(&format!("    {}\n", lode_core::shown::field(line)));
        }
    }
    out
}

/// One repository's answer to `outline`, `callers`, `callees` or `show`:
/// `repo  commit`, then the answer (its text, or the outline's symbols) or
/// why there is none.
pub fn answer_text(a: &RepoAnswer) -> String {
    let mut out = format!(
        "{}  {}\n",
        lode_core::shown::field(&a.repo),
        &a.commit[..a.commit.len().min(12)]
    );
    if let Some(why) = missed(&a.answer) {
        out.push_str(&format!("  {}\n", shown(why)));
        return out;
    }
    if let Some(text) = a.answer.get("text") {
        out.push_str(&lode_core::shown::text(text.as_str().unwrap_or("")));
        return out;
    }
    let files = match a.answer.get("files") {
        Some(files) => files.as_array().cloned().unwrap_or_default(),
        None => vec![a.answer.clone()],
    };
    for file in files.iter().filter(|f| f.get("path").is_some()) {
        out.push_str(&format!("  {}\n", shown(&file["path"])));
        symbols_text(&file["symbols"], 2, &mut out);
    }
    out
}

/// An outline's symbols as `kind name start-end`, children indented.
fn symbols_text(symbols: &Value, depth: usize, out: &mut String) {
    for s in symbols.as_array().into_iter().flatten() {
        // A file's outline spans lines; a directory's gives each symbol's first.
        let start = s.get("start_line").or(s.get("line"));
        let end = s.get("end_line").map_or(String::new(), |e| format!("-{e}"));
        out.push_str(&format!(
            "{:indent$}{} {} {}{end}\n",
            "",
            shown(&s["kind"]),
            shown(&s["name"]),
            start.unwrap_or(&Value::Null),
            indent = (depth + s["depth"].as_u64().unwrap_or(0) as usize) * 2
        ));
        if let Some(children) = s.get("children") {
            symbols_text(children, depth + 1, out);
        }
    }
}

/// A JSON string of an answer, as a terminal or a model may be shown it.
fn shown(v: &Value) -> String {
    lode_core::shown::field(v.as_str().unwrap_or("")).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gathered(answers: Vec<(&str, Value)>) -> Gathered {
        Gathered {
            answers: answers
                .into_iter()
                .map(|(repo, answer)| RepoAnswer {
                    repo: repo.into(),
                    commit: format!("{repo:0<40}"),
                    answer,
                })
                .collect(),
            partial: false,
            missing_partitions: Vec::new(),
            loading: Vec::new(),
        }
    }

    #[test]
    fn search_hits_merge_best_first_and_grep_groups_keep_their_repository() {
        let hit = |path: &str, score: f64| json!({"path": path, "score": score});
        let g = gathered(vec![
            ("a", json!({"hits": [hit("x.py", 1.0), hit("y.py", 3.0)]})),
            ("b", json!({"hits": [hit("z.py", 2.0)]})),
        ]);
        let hits = g.hits(Command::Search, 2);
        let order: Vec<(&str, &str)> = hits
            .iter()
            .map(|h| (h["repo"].as_str().unwrap(), h["path"].as_str().unwrap()))
            .collect();
        assert_eq!(order, [("a", "y.py"), ("b", "z.py")]);
        assert_eq!(hits[0]["commit"], format!("{:0<40}", "a"));

        let g = gathered(vec![(
            "b",
            json!({"groups": [{"path": "m.rs"}, {"path": "n.rs"}]}),
        )]);
        let groups = g.hits(Command::Grep, 1);
        assert_eq!(groups.len(), 2, "grep keeps every group: {groups:?}");
        assert!(groups.iter().all(|h| h["repo"] == "b"));
    }

    #[test]
    fn an_answer_without_the_symbol_says_why_and_does_not_count_as_found() {
        let g = gathered(vec![("a", json!({"not_found": "no symbol named run"}))]);
        assert!(!g.found());
        assert_eq!(
            answer_text(&g.answers[0]),
            format!("a  {}\n  no symbol named run\n", "a00000000000")
        );
        let g = gathered(vec![
            ("a", json!({"not_found": "no"})),
            ("b", json!({"text": "run  app.py:1-3\n"})),
        ]);
        assert!(g.found());
        assert!(answer_text(&g.answers[1]).ends_with("run  app.py:1-3\n"));
    }

    #[test]
    fn hits_render_their_place_and_a_few_lines() {
        let snippet: String = (1..=9).map(|i| format!("line {i}\n")).collect();
        let hit = json!({"repo": "r", "path": "a.py", "start_line": 3, "end_line": 11,
                         "symbol": "run", "snippet": snippet});
        let text = hit_text(Command::Search, &hit);
        assert!(
            text.starts_with("r  a.py:3-11  run\n    line 1\n"),
            "{text}"
        );
        assert_eq!(text.lines().count(), 1 + SNIPPET_LINES);
        let group = json!({"repo": "r", "path": "a.py", "start_line": 3, "end_line": 4,
                           "symbol": null, "lines": [{"line": 4, "text": "x = \u{1b}[31m"}]});
        let text = hit_text(Command::Grep, &group);
        assert_eq!(
            text.lines().nth(1).unwrap().trim_start().split(':').next(),
            Some("4")
        );
        assert!(
            !text.contains('\u{1b}'),
            "control characters are not shown: {text:?}"
        );
    }

    #[test]
    fn notes_name_the_missing_partitions_and_the_loading_repositories() {
        let mut g = gathered(Vec::new());
        assert!(g.notes().is_empty());
        g.partial = true;
        g.missing_partitions = vec![2, 5];
        g.loading = vec!["x".into()];
        assert_eq!(
            g.notes(),
            [
                "partial: partitions [2, 5] did not answer in time",
                "1 repository still loading, not answered"
            ]
        );
    }
}
