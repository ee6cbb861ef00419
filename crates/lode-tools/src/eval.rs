//! Retrieval evaluation: cases of (query, expected tools), their loaders,
//! queries derived from a catalog, and recall@k / MRR@10 over a [`Toolbox`].

use std::time::Instant;

use serde::Serialize;
use serde_json::Value;

use crate::catalog::{Catalog, DefinitionSize, qualified_name};
use crate::text;
use crate::toolbox::Toolbox;
use crate::{Error, Result};

/// The cut-offs reported.
pub const RECALL_AT: [usize; 4] = [1, 3, 5, 10];

/// A query and the tools that answer it (canonical names).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Case {
    /// What a user asks for: the text searched.
    pub query: String,
    /// Canonical names of the tools that answer it; never empty. A case's
    /// recall@k is the share of these in the top k.
    pub expected: Vec<String>,
}

/// Reads cases from any of:
///
/// - CSV with a header whose first two columns are query and tool (MetaTool's
///   `all_clean_data.csv`: `Query,Tool`), one case per row;
/// - JSON lines `{"query": …, "expected": [names]}` (`"tool"` or `"tools"`,
///   a name or a list, are accepted for `"expected"`);
/// - a JSON list of such objects (MetaTool's `multi_tool_query_golden.json`).
pub fn parse_cases(text: &str) -> Result<Vec<Case>> {
    let trimmed = text.trim_start_matches('\u{feff}').trim_start();
    let cases = if trimmed.starts_with('[') {
        let list: Vec<Value> = serde_json::from_str(trimmed)
            .map_err(|e| Error::BadCases(format!("not a JSON list: {e}")))?;
        list.iter()
            .enumerate()
            .map(|(i, v)| {
                case_from_json(v).map_err(|m| Error::BadCases(format!("case {}: {m}", i + 1)))
            })
            .collect::<Result<Vec<_>>>()?
    } else if trimmed.starts_with('{') {
        trimmed
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                let v: Value = serde_json::from_str(l)
                    .map_err(|e| Error::BadCases(format!("line {}: {e}", i + 1)))?;
                case_from_json(&v).map_err(|m| Error::BadCases(format!("line {}: {m}", i + 1)))
            })
            .collect::<Result<Vec<_>>>()?
    } else {
        let mut rows = parse_csv(trimmed)?.into_iter();
        rows.next()
            .ok_or_else(|| Error::BadCases("empty file".into()))?;
        rows.enumerate()
            .filter(|(_, r)| !(r.len() == 1 && r[0].is_empty()))
            .map(|(i, r)| match r.as_slice() {
                [q, t, ..] if !q.trim().is_empty() && !t.trim().is_empty() => Ok(Case {
                    query: q.trim().to_string(),
                    expected: vec![t.trim().to_string()],
                }),
                _ => Err(Error::BadCases(format!(
                    "row {}: expected a query and a tool",
                    i + 2
                ))),
            })
            .collect::<Result<Vec<_>>>()?
    };
    if cases.is_empty() {
        return Err(Error::BadCases("no cases".into()));
    }
    Ok(cases)
}

fn case_from_json(v: &Value) -> std::result::Result<Case, String> {
    let query = v
        .get("query")
        .and_then(Value::as_str)
        .filter(|q| !q.trim().is_empty())
        .ok_or("missing \"query\"")?;
    let expected = ["expected", "tool", "tools"]
        .iter()
        .find_map(|k| v.get(*k))
        .ok_or("missing \"expected\"")?;
    let expected: Vec<String> = match expected {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    };
    if expected.is_empty() {
        return Err("\"expected\" names no tool".into());
    }
    Ok(Case {
        query: query.trim().to_string(),
        expected,
    })
}

/// RFC 4180 CSV: quoted fields may hold commas, quotes (`""`) and newlines.
fn parse_csv(text: &str) -> Result<Vec<Vec<String>>> {
    let mut rows = Vec::new();
    let mut row = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut field)),
            (false, '\n') => {
                row.push(std::mem::take(&mut field));
                rows.push(std::mem::take(&mut row));
            }
            (false, '\r') => {}
            (false, c) => field.push(c),
        }
    }
    if quoted {
        return Err(Error::BadCases(format!(
            "row {}: unterminated quoted field",
            rows.len() + 1
        )));
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    Ok(rows)
}

/// Queries derived from a catalog that comes without any: for each tool, the
/// first sentence of its description (up to the first line break or `. `,
/// `? `, `! `, `。`), with every word that is a word of the tool's own name or of its group's name removed
/// (compared after lower-casing and stemming). Tools whose derived query has
/// fewer than three terms left are skipped (returned count).
///
/// This is self-retrieval — the query comes from the text that is indexed —
/// so it measures how well names-free paraphrase-free wording finds a tool
/// among look-alikes, an optimistic figure for real queries.
pub fn derive_cases(catalog: &Catalog) -> (Vec<Case>, usize) {
    let mut cases = Vec::new();
    let mut skipped = 0;
    for t in catalog.tools() {
        let local = match &t.group {
            Some(g) => t
                .name
                .strip_prefix(&qualified_name(g, ""))
                .unwrap_or(&t.name),
            None => &t.name,
        };
        let mut banned: Vec<String> = text::split_identifier(local);
        if let Some(g) = &t.group {
            banned.extend(text::split_identifier(g));
        }
        let banned: Vec<String> = banned.iter().map(|w| text::stem(w)).collect();
        let sentence = first_sentence(&t.description);
        let kept: Vec<&str> = sentence
            .split_whitespace()
            .filter(|w| {
                let parts = text::split_identifier(
                    w.trim_matches(|c: char| !(c.is_alphanumeric() || c == '_')),
                );
                !parts.iter().any(|p| banned.contains(&text::stem(p)))
            })
            .collect();
        let query = kept.join(" ");
        if text::terms(&query).len() < 3 {
            skipped += 1;
            continue;
        }
        cases.push(Case {
            query,
            expected: vec![t.name.clone()],
        });
    }
    (cases, skipped)
}

fn first_sentence(description: &str) -> &str {
    let d = description.trim();
    let mut end = d.len();
    for stop in ["\n", ". ", "? ", "! ", "。"] {
        if let Some(p) = d.find(stop) {
            end = end.min(p);
        }
    }
    &d[..end]
}

/// Every name the cases expect must be in the catalog: a mismatch would score as a miss.
pub fn check_cases(catalog: &Catalog, cases: &[Case]) -> Result<()> {
    for (i, c) in cases.iter().enumerate() {
        if let Some(name) = c.expected.iter().find(|n| catalog.get(n).is_none()) {
            return Err(Error::BadCases(format!(
                "case {} ({:?}) expects {name:?}, which is not in the catalog",
                i + 1,
                c.query
            )));
        }
    }
    Ok(())
}

/// One case's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    /// The case's query.
    pub query: String,
    /// The case's expected tools, in the order of `ranks`.
    pub expected: Vec<String>,
    /// 1-based rank of each expected tool in the top 10 (`None`: not there).
    pub ranks: Vec<Option<usize>>,
    /// The top of the ranking (at most 5 names).
    pub top: Vec<String>,
}

/// Aggregate retrieval quality, size and speed over a set of cases.
#[derive(Clone, Debug, Serialize)]
pub struct EvalReport {
    /// Number of cases searched.
    pub cases: usize,
    /// `(k, mean recall@k)` for k in [`RECALL_AT`]; recall of a case = share of its expected tools in the top k.
    pub recall: Vec<(usize, f64)>,
    /// Mean reciprocal rank of the first expected tool, 0 beyond rank 10.
    pub mrr_at_10: f64,
    /// Median search latency per query, in microseconds (ranking, embedding the
    /// query when hybrid, picking activations).
    pub latency_us_p50: f64,
    /// 95th percentile (nearest rank) of the same latency, microseconds.
    pub latency_us_p95: f64,
    /// Mean size of what one search activates at the default limit.
    pub mean_activated: DefinitionSize,
    /// Each case's outcome, in case order. Not serialised with the report;
    /// [`misses`](EvalReport::misses) picks the cases missed at rank 1.
    #[serde(skip)]
    pub results: Vec<CaseResult>,
}

impl EvalReport {
    /// Mean recall@k; `None` when `k` is not one of [`RECALL_AT`].
    pub fn recall_at(&self, k: usize) -> Option<f64> {
        self.recall.iter().find(|(kk, _)| *kk == k).map(|(_, r)| *r)
    }

    /// Cases with no expected tool at rank 1.
    pub fn misses(&self) -> impl Iterator<Item = &CaseResult> {
        self.results
            .iter()
            .filter(|r| r.ranks.iter().flatten().min() != Some(&1))
    }
}

/// Searches each case's query with `toolbox` (default limit) and scores the ranking.
pub fn run(toolbox: &Toolbox, cases: &[Case]) -> EvalReport {
    let mut results = Vec::with_capacity(cases.len());
    let mut latencies = Vec::with_capacity(cases.len());
    let mut activated = DefinitionSize::default();
    for case in cases {
        let t0 = Instant::now();
        let outcome = toolbox.search(&case.query, None);
        latencies.push(t0.elapsed().as_secs_f64() * 1e6);
        activated = activated + toolbox.size_of(&outcome.activated);
        let names: Vec<&str> = toolbox.ranked_names(&outcome).collect();
        let ranks = case
            .expected
            .iter()
            .map(|e| names.iter().take(10).position(|n| n == e).map(|p| p + 1))
            .collect();
        results.push(CaseResult {
            query: case.query.clone(),
            expected: case.expected.clone(),
            ranks,
            top: names.iter().take(5).map(|s| s.to_string()).collect(),
        });
    }
    let n = results.len().max(1) as f64;
    let recall = RECALL_AT
        .iter()
        .map(|&k| {
            let sum: f64 = results
                .iter()
                .map(|r| {
                    let hit = r.ranks.iter().flatten().filter(|&&x| x <= k).count();
                    hit as f64 / r.ranks.len().max(1) as f64
                })
                .sum();
            (k, sum / n)
        })
        .collect();
    let mrr_at_10 = results
        .iter()
        .map(|r| {
            r.ranks
                .iter()
                .flatten()
                .min()
                .map_or(0.0, |&x| 1.0 / x as f64)
        })
        .sum::<f64>()
        / n;
    latencies.sort_by(f64::total_cmp);
    let count = cases.len().max(1);
    EvalReport {
        cases: cases.len(),
        recall,
        mrr_at_10,
        latency_us_p50: percentile(&latencies, 0.50),
        latency_us_p95: percentile(&latencies, 0.95),
        mean_activated: DefinitionSize {
            bytes: activated.bytes / count,
            chars: activated.chars / count,
        },
        results,
    }
}

/// Nearest-rank percentile of sorted values.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Tool;

    #[test]
    fn reads_csv_jsonl_and_json_lists() {
        let csv = "Query,Tool\n\"Find, with a comma \"\"quoted\"\"\",A\nplain,B\n";
        let cases = parse_cases(csv).unwrap();
        assert_eq!(cases[0].query, "Find, with a comma \"quoted\"");
        assert_eq!(cases[1].expected, ["B"]);
        let jsonl = "{\"query\": \"q1\", \"expected\": [\"A\", \"B\"]}\n\n{\"query\": \"q2\", \"tool\": \"C\"}\n";
        let cases = parse_cases(jsonl).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].expected, ["A", "B"]);
        let list = r#"[{"query": "q", "tool": ["A", "B"]}]"#;
        assert_eq!(parse_cases(list).unwrap()[0].expected, ["A", "B"]);
        for bad in [
            "",
            "Query,Tool\n",
            "Query,Tool\nonly a query\n",
            "{\"query\": 1}",
            "Q,T\n\"open,A\n",
        ] {
            assert!(parse_cases(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn derived_queries_drop_name_words_and_later_sentences() {
        let catalog = Catalog::new(vec![
            Tool::new(
                "weather__get_forecast",
                "Get the weather forecast for a city, a date and an hour. Uses the API.",
                Value::Null,
            )
            .with_group("weather"),
            Tool::new("x__ping", "Ping.", Value::Null).with_group("x"),
        ])
        .unwrap();
        let (cases, skipped) = derive_cases(&catalog);
        assert_eq!(skipped, 1, "too few words left for ping");
        assert_eq!(cases[0].query, "the for a city, a date and an hour");
        assert_eq!(cases[0].expected, ["weather__get_forecast"]);
    }

    #[test]
    fn metrics_follow_the_ranks() {
        let catalog = Catalog::new(vec![
            Tool::new("alpha", "convert currency exchange rates", Value::Null),
            Tool::new("beta", "translate text between languages", Value::Null),
        ])
        .unwrap();
        let toolbox = Toolbox::builder(catalog).build().unwrap();
        let cases = vec![
            Case {
                query: "exchange rates".into(),
                expected: vec!["alpha".into()],
            },
            Case {
                query: "exchange rates".into(),
                expected: vec!["beta".into()],
            },
        ];
        let r = run(&toolbox, &cases);
        assert_eq!(r.recall_at(1), Some(0.5));
        assert_eq!(r.mrr_at_10, 0.5, "beta is not ranked at all by BM25");
        assert_eq!(r.misses().count(), 1);
        assert!(check_cases(toolbox.catalog(), &cases).is_ok());
        let unknown = vec![Case {
            query: "q".into(),
            expected: vec!["gamma".into()],
        }];
        assert!(check_cases(toolbox.catalog(), &unknown).is_err());
    }
}
