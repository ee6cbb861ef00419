//! The rows the call graph reads: symbols by name or id, call sites and
//! imports. All of them come from the one committed state an [`Index`] sees,
//! so edges resolved from them are consistent with the symbols.

use serde::Serialize;

use lode_core::{Language, Result};

use crate::overlay::Active;
use crate::reader::{Index, SYMBOL_COLUMNS, SymbolRow, named, symbol_row};

/// A call site as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallRow {
    /// The file the call is in, relative to the root and `/`-separated.
    pub path: String,
    /// The file's language (the graph resolves names by its rules).
    pub lang: Language,
    /// The innermost symbol around the call (its id), if any.
    #[serde(skip)]
    pub caller: Option<i64>,
    /// The name called as written, without its receiver (`load` in `cfg.load()`).
    pub callee: String,
    /// The receiver text of a `receiver.callee(…)` call (capped).
    pub receiver: Option<String>,
    /// The first line of the call expression, 1-based.
    pub line: u32,
}

/// An import as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImportRow {
    /// The module or path, as written.
    pub source: String,
    /// The names it brings into scope, when the syntax lists them.
    pub names: Vec<String>,
    /// The first line of the import statement, 1-based.
    pub line: u32,
}

const CALL_COLUMNS: &str = "f.path, f.lang, c.caller, c.callee, c.receiver, c.start_line FROM calls c JOIN files f ON f.id = c.file_id";

fn call_row(r: &rusqlite::Row) -> rusqlite::Result<CallRow> {
    Ok(CallRow {
        path: r.get(0)?,
        lang: named(r, 1, Language::from_name)?,
        caller: r.get(2)?,
        callee: r.get(3)?,
        receiver: r.get(4)?,
        line: r.get(5)?,
    })
}

impl Index {
    fn query<T, P: rusqlite::Params>(
        &self,
        sql: &str,
        params: P,
        map: impl FnMut(&rusqlite::Row) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>> {
        let mut stmt = self
            .store()
            .connection()
            .prepare_cached(sql)
            .map_err(|e| self.err(e))?;
        let rows = stmt.query_map(params, map).map_err(|e| self.err(e))?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(|e| self.err(e))
    }

    /// Every symbol with this exact name, in index order (an overlay's after).
    pub fn symbols_named(&self, name: &str) -> Result<Vec<SymbolRow>> {
        let rows = self.query(
            &format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.name = ?1 ORDER BY s.id"
            ),
            [name],
            |r| symbol_row(r, 0),
        )?;
        Ok(self.layered(
            rows,
            |s| &s.path,
            |o| {
                (o.symbols().iter())
                    .filter(|s| s.name == name)
                    .cloned()
                    .collect()
            },
        ))
    }

    /// One symbol by id.
    pub fn symbol(&self, id: i64) -> Result<Option<SymbolRow>> {
        if let Some(o) = self.active_overlay() {
            if id < 0 {
                return Ok(o.symbol(id).cloned());
            }
            return Ok(self.disk_symbol(id)?.filter(|s| !o.masks(&s.path)));
        }
        self.disk_symbol(id)
    }

    fn disk_symbol(&self, id: i64) -> Result<Option<SymbolRow>> {
        Ok(self
            .query(
                &format!(
                    "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id WHERE s.id = ?1"
                ),
                [id],
                |r| symbol_row(r, 0),
            )?
            .pop())
    }

    /// The innermost symbol of `path` whose span holds `line`.
    pub fn symbol_at(&self, path: &str, line: u32) -> Result<Option<SymbolRow>> {
        Ok(self
            .file_symbols(path)?
            .into_iter()
            .filter(|s| s.start_line <= line && line <= s.end_line)
            .min_by_key(|s| (s.end_line - s.start_line, std::cmp::Reverse(s.id))))
    }

    /// The call sites inside the symbol `caller` (innermost-symbol attribution).
    pub fn calls_from(&self, caller: i64) -> Result<Vec<CallRow>> {
        if caller < 0
            && let Some(o) = self.active_overlay()
        {
            let calls = o.calls().iter().filter(|c| c.caller == Some(caller));
            return Ok(calls.cloned().collect());
        }
        let rows = self.query(
            &format!("SELECT {CALL_COLUMNS} WHERE c.caller = ?1 ORDER BY c.rowid"),
            [caller],
            call_row,
        )?;
        Ok(self.layered(rows, |c| &c.path, |_| Vec::new()))
    }

    /// Every call site of a function or method named `callee`.
    pub fn calls_named(&self, callee: &str) -> Result<Vec<CallRow>> {
        let rows = self.query(
            &format!("SELECT {CALL_COLUMNS} WHERE c.callee = ?1 ORDER BY f.path, c.start_line"),
            [callee],
            call_row,
        )?;
        let own = |o: &Active| {
            (o.calls().iter())
                .filter(|c| c.callee == callee)
                .cloned()
                .collect()
        };
        let mut rows = self.layered(rows, |c| &c.path, own);
        // Stable: a file's sites keep their source order.
        rows.sort_by(|a, b| a.path.cmp(&b.path).then(a.line.cmp(&b.line)));
        Ok(rows)
    }

    /// Every call site of the index (for whole-graph measures: centrality).
    pub fn all_calls(&self) -> Result<Vec<CallRow>> {
        let rows = self.query(
            &format!("SELECT {CALL_COLUMNS} ORDER BY c.rowid"),
            [],
            call_row,
        )?;
        Ok(self.layered(rows, |c| &c.path, |o| o.calls().to_vec()))
    }

    /// The call sites of one file, in source order (one read by the file's
    /// index, where [`Index::calls_from`] scans every call of the index).
    pub fn file_calls(&self, path: &str) -> Result<Vec<CallRow>> {
        if let Some(o) = self.active_overlay()
            && o.masks(path)
        {
            return Ok(o
                .calls()
                .iter()
                .filter(|c| c.path == path)
                .cloned()
                .collect());
        }
        self.query(
            &format!("SELECT {CALL_COLUMNS} WHERE f.path = ?1 ORDER BY c.rowid"),
            [path],
            call_row,
        )
    }

    /// The imports of one file, in source order.
    pub fn file_imports(&self, path: &str) -> Result<Vec<ImportRow>> {
        if let Some(rows) = self.active_overlay().and_then(|o| o.file_imports(path)) {
            return Ok(rows);
        }
        self.query(
            "SELECT i.source, i.names, i.start_line FROM imports i JOIN files f ON f.id = i.file_id \
             WHERE f.path = ?1 ORDER BY i.rowid",
            [path],
            |r| {
                let names: String = r.get(1)?;
                Ok(ImportRow {
                    source: r.get(0)?,
                    names: names
                        .split('\n')
                        .filter(|n| !n.is_empty())
                        .map(str::to_string)
                        .collect(),
                    line: r.get(2)?,
                })
            },
        )
    }

    /// Every symbol of the index (for whole-graph measures), in index order.
    pub fn all_symbols(&self) -> Result<Vec<SymbolRow>> {
        let rows = self.query(
            &format!(
                "SELECT {SYMBOL_COLUMNS} FROM symbols s JOIN files f ON f.id = s.file_id ORDER BY s.id"
            ),
            [],
            |r| symbol_row(r, 0),
        )?;
        Ok(self.layered(rows, |s| &s.path, |o| o.symbols().to_vec()))
    }
}
