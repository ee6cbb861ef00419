//! Repository text made safe to print: names and paths come from the
//! repository, so a file named `x\nsrc/auth.py:1-5  function login` or a
//! snippet holding `ESC ]0;…` must not forge a hit line or drive the terminal.
//!
//! [`field`] is for one-line values (paths, symbol names, signatures, notes):
//! every control character is escaped, newline and tab included. [`text`] is
//! for a whole answer: line breaks and tabs stay, every other control
//! character is escaped. Both also escape the bidirectional overrides that can
//! make code read differently from how it runs. JSON needs neither: its
//! encoder escapes controls already.
//!
//! ```
//! use lode_core::shown;
//! assert_eq!(shown::field("a\nb.py"), "a\\nb.py");
//! assert_eq!(shown::text("ok\n\x1b[2J"), "ok\n\\u{1b}[2J");
//! assert_eq!(shown::field("src/lib.rs"), "src/lib.rs");
//! ```

use std::borrow::Cow;

/// A one-line value: every control character escaped.
pub fn field(s: &str) -> Cow<'_, str> {
    escape(s, |_| true)
}

/// A whole answer: `\n` and `\t` kept (a `\r` before `\n` dropped), every
/// other control character escaped.
pub fn text(s: &str) -> Cow<'_, str> {
    let s: Cow<str> = if s.contains("\r\n") {
        Cow::Owned(s.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(s)
    };
    match escape(&s, |c| c != '\n' && c != '\t') {
        Cow::Borrowed(_) => s,
        Cow::Owned(o) => Cow::Owned(o),
    }
}

/// Whether a character is escaped by [`field`]: C0, DEL, C1, and the
/// bidirectional embeddings, overrides and isolates.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn escape(s: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| unsafe_char(c) && escaped(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) && escaped(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forged_hit_line_stays_on_its_line() {
        let name = "x\nsrc/auth.py:1-5  function login  9.99\n.py";
        assert_eq!(
            field(name),
            "x\\nsrc/auth.py:1-5  function login  9.99\\n.py"
        );
        assert!(!field(name).contains('\n'));
    }

    #[test]
    fn terminal_escapes_are_shown_not_sent() {
        let snippet = "let t = \"\x1b]0;TITLE\x07\x1b[2J\";\n\tnext\u{9b}31m";
        let safe = text(snippet);
        assert!(
            !safe
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
        );
        assert_eq!(
            safe,
            "let t = \"\\u{1b}]0;TITLE\\u{7}\\u{1b}[2J\";\n\tnext\\u{9b}31m"
        );
    }

    #[test]
    fn crlf_line_ends_are_plain_line_ends_and_a_lone_cr_is_escaped() {
        assert_eq!(text("a\r\nb\rc\n"), "a\nb\\rc\n");
    }

    #[test]
    fn bidi_overrides_are_escaped() {
        assert_eq!(field("if x\u{202e} {"), "if x\\u{202e} {");
        assert_eq!(text("é ü 中"), "é ü 中");
    }
}
