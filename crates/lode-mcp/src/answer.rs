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
    pub text: String,
    pub json: Value,
}

impl Answer {
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
/// (hits, lines, symbols), so that it fits a cap.
pub trait Items: Sized {
    /// The command name of the JSON envelope.
    const COMMAND: &'static str;
    /// What an item is called in the `…[N more UNIT — …]` tail.
    const UNIT: &'static str;
    /// Items shown.
    fn len(&self) -> usize;
    /// The answer with only its first `n` items; those cut count as omitted.
    fn keep(&self, n: usize) -> Self;
    /// Items left out, by the engine's own limit or by [`Items::keep`].
    fn omitted(&self) -> usize;
    /// The compact text of the items shown, without a tail.
    fn text(&self) -> String;
    /// What the text says when there is nothing to show (by default, the text).
    fn empty_text(&self) -> String {
        self.text()
    }
    /// The JSON body (without the envelope), with its count of omitted items.
    fn body(&self) -> Value;
}

/// The longest prefix of `full` whose text and JSON (each with notes and
/// tail) are at most `max_chars` characters.
pub fn capped<T: Items>(full: &T, notes: &[String], max_chars: usize) -> Answer {
    lode_index::diagnostics::note_hits(full.len());
    let fits = |a: &Answer| {
        a.text.chars().count() <= max_chars && a.json.to_string().chars().count() <= max_chars
    };
    let whole = assemble(full, notes);
    if fits(&whole) {
        return whole;
    }
    // Sizes grow with the number of items kept: bisect.
    let (mut lo, mut hi) = (0, full.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if fits(&assemble(&full.keep(mid), notes)) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    assemble(&full.keep(lo), notes)
}

fn assemble<T: Items>(a: &T, notes: &[String]) -> Answer {
    let mut text = if a.len() == 0 && a.omitted() == 0 {
        a.empty_text()
    } else {
        a.text()
    };
    if a.omitted() > 0 {
        text.push_str(&format!(
            "…[{} more {} — narrow the query]\n",
            a.omitted(),
            T::UNIT
        ));
    }
    for n in notes {
        text.push_str(&format!("note: {}\n", lode_core::shown::field(n)));
    }
    // The repository's text stays data: no control character reaches the host.
    let text = lode_core::shown::text(&text).into_owned();
    let body = a.body();
    let env = lode_search::render::Envelope {
        schema_version: lode_search::JSON_SCHEMA_VERSION,
        command: T::COMMAND,
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
    struct Lines {
        shown: usize,
        omitted: usize,
    }

    impl Items for Lines {
        const COMMAND: &'static str = "test";
        const UNIT: &'static str = "lines";
        fn len(&self) -> usize {
            self.shown
        }
        fn keep(&self, n: usize) -> Lines {
            Lines {
                shown: n,
                omitted: self.omitted + self.shown - n,
            }
        }
        fn omitted(&self) -> usize {
            self.omitted
        }
        fn text(&self) -> String {
            (0..self.shown).map(|i| format!("line {i:04}\n")).collect()
        }
        fn empty_text(&self) -> String {
            "nothing\n".into()
        }
        fn body(&self) -> Value {
            json!({"lines": (0..self.shown).collect::<Vec<_>>(), "omitted": self.omitted})
        }
    }

    #[test]
    fn cuts_to_the_cap_and_says_how_many_more() {
        let full = Lines {
            shown: 1000,
            omitted: 0,
        };
        let a = capped(&full, &[], 500);
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
        let a = capped(&full, &["indexed 2 files".into()], 12_000);
        assert_eq!(a.text, "line 0000\nline 0001\nnote: indexed 2 files\n");
        assert_eq!(a.json["notes"][0], "indexed 2 files");
        let none = capped(
            &Lines {
                shown: 0,
                omitted: 0,
            },
            &[],
            100,
        );
        assert_eq!(none.text, "nothing\n");
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
