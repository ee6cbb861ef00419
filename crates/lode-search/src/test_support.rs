//! Rows for the unit tests of the ranking modules.

/// A function `name` of `path`, with symbol id `id`, at lines 1–2.
pub(crate) fn function(id: i64, path: &str, name: &str) -> lode_index::SymbolRow {
    lode_index::SymbolRow {
        id,
        parent: None,
        path: path.to_string(),
        name: name.to_string(),
        kind: lode_core::SymbolKind::Function,
        container: None,
        start_line: 1,
        end_line: 2,
        signature: String::new(),
        doc: None,
    }
}
