//! Imports: the matches of a language's `imports.scm`, joined by statement
//! into [`Import`] records.

use super::*;

/// An imports match: the statement, its `@source` captures and its names.
pub(super) struct RawImport<'t> {
    stmt: Node<'t>,
    sources: Vec<Node<'t>>,
    names: Vec<String>,
}

pub(super) fn import_match<'t>(
    q: &LangQueries,
    m: Match<'_, 't>,
    src: &str,
) -> Option<RawImport<'t>> {
    let (mut stmt, mut sources, mut names) = (None, Vec::new(), Vec::new());
    let mut alias = None;
    for cap in m.captures {
        match q.role(cap.index) {
            Role::Import => stmt = Some(cap.node),
            Role::Source => sources.push(cap.node),
            Role::Name => names.push(shown(cap.node, src, 120)),
            Role::Alias => alias = Some(shown(cap.node, src, 120)),
            _ => {}
        }
    }
    // An alias renames the match's one name, or binds the module itself (`*`).
    if let Some(alias) = alias {
        match names.pop() {
            Some(name) => names.push(format!("{name} as {alias}")),
            None => names.push(format!("* as {alias}")),
        }
    }
    Some(RawImport {
        stmt: stmt?,
        sources,
        names,
    })
}

/// The imports of one statement found so far, by index among all imports,
/// to find the one a match joins without a search of them all.
#[derive(Default)]
struct StatementImports {
    first: Option<usize>,
    by_source: HashMap<String, usize>,
    /// Those without a source yet.
    unsourced: BTreeSet<usize>,
}

impl StatementImports {
    /// The first import that a match with `source` joins: one with the same
    /// source, or either without one.
    fn joined(&self, source: &str) -> Option<usize> {
        if source.is_empty() {
            return self.first;
        }
        let same = self.by_source.get(source).copied();
        same.into_iter()
            .chain(self.unsourced.first().copied())
            .min()
    }

    fn add(&mut self, i: usize, source: &str) {
        self.first.get_or_insert(i);
        if source.is_empty() {
            self.unsourced.insert(i);
        } else {
            self.by_source.entry(source.to_string()).or_insert(i);
        }
    }

    /// Import `i`, without a source so far, takes `source`.
    fn sourced(&mut self, i: usize, source: &str) {
        self.unsourced.remove(&i);
        let first = self.by_source.entry(source.to_string()).or_insert(i);
        *first = (*first).min(i);
    }
}

pub(super) fn joined(raw: Vec<RawImport>, src: &str, lines: &LineIndex) -> Vec<Import> {
    // Each import with the set of its names, made when a second match joins it.
    let mut found: Vec<(Import, Option<HashSet<String>>)> = Vec::new();
    let mut statements: HashMap<usize, StatementImports> = HashMap::new();
    for r in raw {
        let source = source_text(&r.sources, src);
        // Matches of one statement merge per source: `from x import a, b` is one
        // import, `import os, sys` two. A match without a source joins any.
        let statement = statements.entry(r.stmt.id()).or_default();
        let Some(i) = statement.joined(&source) else {
            statement.add(found.len(), &source);
            let span = lines.span(r.stmt.start_byte() as u32, r.stmt.end_byte() as u32);
            let names = r.names;
            found.push((
                Import {
                    source,
                    names,
                    span,
                },
                None,
            ));
            continue;
        };
        let (existing, names) = &mut found[i];
        if existing.source.is_empty() && !source.is_empty() {
            statement.sourced(i, &source);
            existing.source = source;
        }
        let names = names.get_or_insert_with(|| existing.names.iter().cloned().collect());
        for n in r.names {
            if names.insert(n.clone()) {
                existing.names.push(n);
            }
        }
    }
    found.sort_by_key(|(i, _)| i.span.start_byte);
    found.into_iter().map(|(i, _)| i).collect()
}

/// The text from the first `@source` capture to the last, without quotes.
fn source_text(sources: &[Node], src: &str) -> String {
    let start = sources.iter().map(|n| n.start_byte()).min();
    let end = sources.iter().map(|n| n.end_byte()).max();
    let (Some(start), Some(end)) = (start, end) else {
        return String::new();
    };
    src.get(start..end)
        .unwrap_or("")
        .trim_matches(['"', '\'', '`', '<', '>'])
        .to_string()
}
