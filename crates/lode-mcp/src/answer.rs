//! What a call returns: the CLI's compact text and the `--json` shape, both
//! within a size cap.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

use crate::ToolError;

/// A tool's answer: `text` for the model to read (the CLI's compact format),
/// `json` the same answer as `--json` prints it (`docs/json.md`), sent as
/// `structuredContent`.
#[derive(Clone, Debug, PartialEq)]
pub struct Answer {
    /// The compact text.
    pub text: String,
    /// The JSON envelope and body.
    pub json: Value,
}

impl Answer {
    /// The answer as a successful tool result.
    pub fn into_result(self) -> CallToolResult {
        let mut r = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        r.structured_content = Some(self.json);
        r
    }

    /// A failure as a tool result: `isError`, the code and message as text,
    /// and the CLI's JSON error object.
    pub fn error(e: &ToolError) -> CallToolResult {
        let mut r = CallToolResult::error(vec![ContentBlock::text(e.to_string())]);
        r.structured_content = Some(json!({
            "schema_version": lode_search::JSON_SCHEMA_VERSION,
            "error": {"code": e.code, "message": e.message},
        }));
        r
    }
}

/// An engine's answer seen as a list of items that can be cut from the end
/// (hits, lines, symbols), so that it fits a cap. A tool says how to count,
/// cut and render its answer; [`capped`] chooses how many items to keep and
/// counts what is left out.
pub trait Items: Clone {
    /// What an item is called in the `…[N more UNIT — …]` tail.
    const UNIT: &'static str;
    /// Items shown.
    fn len(&self) -> usize;
    /// Keeps only the first `n` items.
    fn truncate(&mut self, n: usize);
    /// Items the engine left out by its own limit, before any cut.
    fn left_out(&self) -> usize {
        0
    }
    /// The compact text of the items shown, without the tail; `omitted`
    /// counts every item left out, by the engine or by the cut.
    fn text(&self, omitted: usize) -> String;
    /// What the text says when there is nothing to show (by default, the text).
    fn empty_text(&self) -> Option<&'static str> {
        None
    }
    /// The JSON body (without the envelope), with its count of omitted items.
    fn body(&self, omitted: usize) -> Value;
}

/// The longest prefix of `full` whose text and JSON (each with notes and
/// tail) are at most `max_chars` characters; `command` names the answer in
/// the JSON envelope.
pub fn capped<T: Items>(
    command: &'static str,
    full: &T,
    notes: &[String],
    max_chars: usize,
) -> Answer {
    lode_diagnostics::note_hits(full.len());
    let fits = |a: &Answer| {
        a.text.chars().count() <= max_chars && a.json.to_string().chars().count() <= max_chars
    };
    let assemble = |n: usize| {
        let mut kept = full.clone();
        if n < full.len() {
            kept.truncate(n);
        }
        let omitted = full.left_out() + full.len() - kept.len();
        assemble(command, &kept, omitted, notes)
    };
    let whole = assemble(full.len());
    if fits(&whole) {
        return whole;
    }
    // Sizes grow with the number of items kept: bisect.
    let (mut lo, mut hi) = (0, full.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(&assemble(mid)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    assemble(lo)
}

fn assemble<T: Items>(command: &'static str, a: &T, omitted: usize, notes: &[String]) -> Answer {
    let mut text = match a.empty_text() {
        Some(empty) if a.len() == 0 && omitted == 0 => empty.to_string(),
        _ => a.text(omitted),
    };
    if omitted > 0 {
        text.push_str(&format!(
            "…[{omitted} more {} — narrow the query]\n",
            T::UNIT
        ));
    }
    for n in notes {
        text.push_str(&format!("note: {}\n", lode_core::shown::field(n)));
    }
    // The repository's text stays data: no control character reaches the host.
    let text = lode_core::shown::text(&text).into_owned();
    let body = a.body(omitted);
    let env = lode_search::render::Envelope {
        schema_version: lode_search::JSON_SCHEMA_VERSION,
        command,
        notes: notes.to_vec(),
        body: &body,
    };
    let json = serde_json::to_value(&env).unwrap_or(Value::Null);
    Answer { text, json }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Numbered lines of 10 characters.
    #[derive(Clone)]
    struct Lines {
        shown: usize,
        /// Left out by the engine.
        omitted: usize,
    }

    impl Items for Lines {
        const UNIT: &'static str = "lines";
        fn len(&self) -> usize {
            self.shown
        }
        fn truncate(&mut self, n: usize) {
            self.shown = n;
        }
        fn left_out(&self) -> usize {
            self.omitted
        }
        fn text(&self, _omitted: usize) -> String {
            (0..self.shown).map(|i| format!("line {i:04}\n")).collect()
        }
        fn empty_text(&self) -> Option<&'static str> {
            Some("nothing\n")
        }
        fn body(&self, omitted: usize) -> Value {
            json!({"lines": (0..self.shown).collect::<Vec<_>>(), "omitted": omitted})
        }
    }

    #[test]
    fn cuts_to_the_cap_and_says_how_many_more() {
        let full = Lines {
            shown: 1000,
            omitted: 0,
        };
        let a = capped("test", &full, &[], 500);
        assert!(a.text.chars().count() <= 500, "{}", a.text.len());
        assert!(a.json.to_string().len() <= 500);
        let kept = a.text.lines().filter(|l| l.starts_with("line")).count();
        assert!(kept > 30, "the cap is used, not wasted: {kept}");
        assert!(
            a.text.ends_with(&format!(
                "…[{} more lines — narrow the query]\n",
                1000 - kept
            )),
            "{}",
            a.text
        );
        assert_eq!(a.json["omitted"], 1000 - kept);
        assert_eq!(a.json["command"], "test");
        assert_eq!(a.json["schema_version"], 1);
    }

    #[test]
    fn a_small_answer_is_whole_and_notes_come_last() {
        let full = Lines {
            shown: 2,
            omitted: 0,
        };
        let a = capped("test", &full, &["indexed 2 files".into()], 12_000);
        assert_eq!(a.text, "line 0000\nline 0001\nnote: indexed 2 files\n");
        assert_eq!(a.json["notes"][0], "indexed 2 files");
        let none = capped(
            "test",
            &Lines {
                shown: 0,
                omitted: 0,
            },
            &[],
            100,
        );
        assert_eq!(none.text, "nothing\n");
        // What the engine left out counts with what the cap cuts.
        let some_left = Lines {
            shown: 1000,
            omitted: 7,
        };
        let a = capped("test", &some_left, &[], 500);
        let kept = a.text.lines().filter(|l| l.starts_with("line")).count();
        assert_eq!(a.json["omitted"], 1007 - kept);
        let a = capped(
            "test",
            &Lines {
                shown: 0,
                omitted: 3,
            },
            &[],
            500,
        );
        assert_eq!(a.text, "…[3 more lines — narrow the query]\n");
    }

    #[test]
    fn errors_carry_the_code_in_text_and_json() {
        let r = Answer::error(&ToolError::bad_path("x is outside"));
        assert_eq!(r.is_error, Some(true));
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["content"][0]["text"], "lode.bad_path: x is outside");
        assert_eq!(v["structuredContent"]["error"]["code"], "lode.bad_path");
    }
}
