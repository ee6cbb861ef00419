//! Doc comments: finding the comments right above a definition, and stripping
//! comment markers, docstring quotes and C# XML tags from them.

use std::borrow::Cow;

use tree_sitter::Node;

use crate::lines::LineIndex;
use crate::parents::Parents;

const DOC_CAP: usize = 600;

/// Parents that wrap a definition without being one. The comment above the
/// wrapper documents the definition inside, and the wrapper belongs to its chunk.
const WRAPPERS: &[&str] = &[
    "template_declaration",
    "export_statement",
    "ambient_declaration",
    "decorated_definition",
];

/// Tags that, opening a line, mark a doc comment as a C# XML doc comment.
const XML_DOC_MARKS: &[&str] = &[
    "<summary>",
    "<remarks>",
    "<returns>",
    "<param name=",
    "<typeparam name=",
    "<inheritdoc",
];

/// C# XML doc tags: in an XML doc comment, the tags go and their text stays.
/// Only these, so that generic types in prose (`List<T>`) are left alone.
const XML_TAGS: &[&str] = &[
    "summary",
    "remarks",
    "returns",
    "para",
    "param",
    "typeparam",
    "value",
    "example",
    "exception",
    "c",
    "code",
    "see",
    "seealso",
    "paramref",
    "typeparamref",
    "inheritdoc",
];

fn is_comment(kind: &str) -> bool {
    kind.contains("comment") || kind == "haddock"
}

fn is_attribute(kind: &str) -> bool {
    kind.contains("attribute") || kind.contains("decorator") || kind.contains("annotation")
}

/// How a walk over a node's previous siblings ended.
enum Walk {
    /// Every previous sibling was a comment or an attribute.
    Exhausted,
    /// Another node sits above.
    Stopped,
    /// A blank line sits above.
    Gap,
}

/// The comments and attributes found so far, walking upwards.
struct Leading<'t, 'b, 'p> {
    parents: &'p mut Parents<'t>,
    bytes: &'b [u8],
    lines: &'b LineIndex,
    start: u32,
    next_line: u32,
    docs: Vec<&'b str>,
}

impl<'t> Leading<'t, '_, '_> {
    fn walk(&mut self, node: Node<'t>) -> Walk {
        let mut prev = self.parents.prev_sibling(node);
        while let Some(p) = prev {
            let comment = is_comment(p.kind());
            if !(comment || is_attribute(p.kind())) {
                return Walk::Stopped;
            }
            let last_byte = (p.end_byte() as u32)
                .saturating_sub(1)
                .max(p.start_byte() as u32);
            if self.lines.line0(last_byte) + 1 < self.next_line {
                return Walk::Gap;
            }
            if comment {
                self.docs
                    .push(std::str::from_utf8(&self.bytes[p.byte_range()]).unwrap_or(""));
            }
            self.start = p.start_byte() as u32;
            self.next_line = self.lines.line0(self.start);
            prev = self.parents.prev_sibling(p);
        }
        Walk::Exhausted
    }

    fn include(&mut self, wrapper: Node) {
        self.start = self.start.min(wrapper.start_byte() as u32);
        self.next_line = self.lines.line0(self.start);
    }
}

/// Contiguous comments (and attributes/decorators) right above a definition:
/// where the definition's chunk should start, and the doc text of the comments.
///
/// When they run out at the start of the parent (a decorated definition, the
/// first method of a Ruby or Python class body), the search goes on above the
/// parent. A wrapper (`export`, `template <...>`, `declare`) is skipped whole,
/// and its start is the chunk's start even when no comment is found.
pub(crate) fn leading_comments<'t>(
    def: Node<'t>,
    bytes: &[u8],
    lines: &LineIndex,
    parents: &mut Parents<'t>,
) -> (u32, Option<String>) {
    let start = def.start_byte() as u32;
    let mut found = Leading {
        parents,
        bytes,
        lines,
        start,
        next_line: lines.line0(start),
        docs: Vec::new(),
    };
    let mut searching = true;
    let mut node = def;
    while let Some(parent) = found.parents.of(node) {
        let wrapper = WRAPPERS.contains(&parent.kind());
        if searching {
            searching = match found.walk(node) {
                Walk::Exhausted => true,
                Walk::Stopped => wrapper,
                Walk::Gap => false,
            };
        }
        if wrapper {
            found.include(parent);
        } else if !searching {
            break;
        }
        node = parent;
    }
    if found.docs.is_empty() {
        return (found.start, None);
    }
    found.docs.reverse();
    (found.start, Some(clean_doc(&found.docs.join("\n"))))
}

/// Strips comment markers, string quotes and C# XML tags from a doc comment or docstring.
pub(crate) fn clean_doc(raw: &str) -> String {
    let body = strip_quotes(raw.trim());
    // Other docs may hold `<code>` or `<value>` as HTML or as placeholders.
    let xml = body.lines().any(|l| {
        let l = strip_marker(l).trim_start();
        XML_DOC_MARKS.iter().any(|m| l.starts_with(m))
    });
    let mut out: Vec<Cow<str>> = Vec::new();
    for line in body.lines() {
        let l = strip_marker(line).trim().trim_matches('"').trim();
        let l = if xml {
            Cow::Owned(strip_xml_tags(l).trim().to_string())
        } else {
            Cow::Borrowed(l)
        };
        if l.is_empty() && out.last().is_none_or(|p| p.is_empty()) {
            continue;
        }
        out.push(l);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    let text = out.join("\n");
    if text.len() > DOC_CAP {
        let mut cut = DOC_CAP;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        format!("{}…", &text[..cut])
    } else {
        text
    }
}

/// A docstring without its quotes (and string prefixes like `r`).
fn strip_quotes(text: &str) -> &str {
    text.trim_start_matches(['r', 'u', 'b', 'R', 'U', 'B'])
        .trim_start_matches("\"\"\"")
        .trim_start_matches("'''")
        .trim_end_matches("\"\"\"")
        .trim_end_matches("'''")
}

/// One line without its comment markers.
fn strip_marker(line: &str) -> &str {
    let l = line
        .trim()
        .trim_start_matches("/**")
        .trim_start_matches("/*!")
        .trim_start_matches("/*")
        .trim_end_matches("*/")
        .trim_start_matches("///")
        .trim_start_matches("//!")
        .trim_start_matches("//");
    let l = match l.strip_prefix("--") {
        // Lua `---`; Haddock `-- |` (documents what follows) and `-- ^` (what precedes).
        Some(rest) => {
            let rest = rest.trim_start_matches('-').trim_start();
            rest.strip_prefix(['|', '^']).unwrap_or(rest)
        }
        None => l,
    };
    l.trim_start_matches(";;")
        .trim_start_matches('#')
        .trim_start_matches('*')
        .trim_start_matches("@doc")
        .trim_start_matches("@moduledoc")
}

/// A line without the known C# XML doc tags.
fn strip_xml_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(i) = rest.find('<') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        match xml_tag(tail) {
            Some((len, text)) => {
                out.push_str(&text);
                rest = &tail[len..];
            }
            None => {
                out.push('<');
                rest = &tail[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A known tag at the start of `s`: its length and the text that replaces it.
/// `<see cref="X"/>` becomes `X`, `<param name="x">` becomes `x: `.
fn xml_tag(s: &str) -> Option<(usize, String)> {
    let end = s.find('>')?;
    let inner = &s[1..end];
    let closing = inner.starts_with('/');
    let inner = inner.trim_start_matches('/');
    let self_closing = inner.ends_with('/');
    let inner = inner.trim_end_matches('/').trim_end();
    let name_len = inner
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(inner.len());
    let (name, attrs) = inner.split_at(name_len);
    if !XML_TAGS.contains(&name) || !(attrs.is_empty() || attrs.starts_with(' ')) {
        return None;
    }
    let value = attr_value(attrs);
    let text = match value {
        Some(v) if self_closing => v.to_string(),
        Some(v) if !closing && (name == "param" || name == "typeparam") => format!("{v}: "),
        _ => String::new(),
    };
    Some((end + 1, text))
}

/// The value of the first attribute: `name="x"` gives `x`.
fn attr_value(attrs: &str) -> Option<&str> {
    let (_, rest) = attrs.split_once('=')?;
    let rest = rest.trim_start();
    let quote = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let rest = &rest[1..];
    rest.split(quote).next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_slash_markers() {
        assert_eq!(clean_doc("/// Loads it.\n/// Twice."), "Loads it.\nTwice.");
        assert_eq!(clean_doc("//! Crate docs."), "Crate docs.");
        assert_eq!(clean_doc("// Plain."), "Plain.");
    }

    #[test]
    fn strips_block_comments() {
        assert_eq!(
            clean_doc("/**\n * Reads a file.\n *\n * Or not.\n */"),
            "Reads a file.\n\nOr not."
        );
        assert_eq!(clean_doc("/* One line. */"), "One line.");
    }

    #[test]
    fn strips_hash_and_dash_markers() {
        assert_eq!(clean_doc("# Ruby and shell."), "Ruby and shell.");
        assert_eq!(clean_doc("-- Lua or SQL."), "Lua or SQL.");
        assert_eq!(clean_doc(";; Lisp."), "Lisp.");
    }

    #[test]
    fn strips_haddock_markers() {
        assert_eq!(clean_doc("-- | Factorial."), "Factorial.");
        assert_eq!(clean_doc("-- ^ The count."), "The count.");
        assert_eq!(clean_doc("-- | First.\n-- second."), "First.\nsecond.");
        assert_eq!(clean_doc("-- a | b"), "a | b");
    }

    #[test]
    fn strips_lua_triple_dash() {
        assert_eq!(clean_doc("--- Pushes a job."), "Pushes a job.");
        assert_eq!(
            clean_doc("--- Pops.\n--- @return job"),
            "Pops.\n@return job"
        );
        assert_eq!(clean_doc("-- - a list item"), "- a list item");
    }

    #[test]
    fn strips_python_docstring_quotes() {
        assert_eq!(
            clean_doc(
                "\"\"\"Read a config file.\n\n    Missing files give the defaults.\n    \"\"\""
            ),
            "Read a config file.\n\nMissing files give the defaults."
        );
        assert_eq!(clean_doc("r'''Raw.'''"), "Raw.");
        assert_eq!(clean_doc("\"One line.\""), "One line.");
    }

    #[test]
    fn strips_csharp_xml_tags() {
        assert_eq!(
            clean_doc("/// <summary>\n/// Holds settings.\n/// </summary>"),
            "Holds settings."
        );
        assert_eq!(
            clean_doc(
                "/// <summary>Loads.</summary>\n/// <param name=\"path\">The file.</param>\n/// <returns>The <see cref=\"Config\"/>.</returns>"
            ),
            "Loads.\npath: The file.\nThe Config."
        );
        assert_eq!(
            clean_doc("/// <remarks><para>Cached.</para></remarks>"),
            "Cached."
        );
        // Generic types in prose are not tags.
        assert_eq!(
            clean_doc("/// Returns a List<T> or Map<K, V>."),
            "Returns a List<T> or Map<K, V>."
        );
        assert_eq!(
            clean_doc("/// <summary>a < b, <summaryX>, List<T></summary>"),
            "a < b, <summaryX>, List<T>"
        );
        // Outside XML doc comments tags are text: HTML, or placeholders.
        assert_eq!(
            clean_doc("/// Use `.insn <value>` or <code>x</code>."),
            "Use `.insn <value>` or <code>x</code>."
        );
        assert_eq!(
            clean_doc("/// <details><summary>More</summary> <code>x</code></details>"),
            "<details><summary>More</summary> <code>x</code></details>"
        );
    }
}
