//! Chunk rows by id, as a search fetches its candidates: one statement for
//! all of them, and the rows kept by the open index for later queries (it
//! sees one committed state, so a row read once stays true).

use std::collections::HashMap;
use std::sync::Arc;

use rusqlite::{Connection, Statement};

use lode_core::{ChunkKind, Language, SymbolKind};

use crate::reader::{ChunkRow, SYMBOL_COLUMNS, named, symbol_row};

/// Parameter counts of the cached statements of [`fetch`]: powers of two
/// from this to [`MAX_ID_SLOTS`] (three statements cover a search's 100
/// to 400 candidates).
const MIN_ID_SLOTS: usize = 64;
const MAX_ID_SLOTS: usize = 1024;

/// At most this many chunk rows (a few hundred bytes each) stay cached per
/// open index: every chunk of a large repository.
const CACHED_ROWS: usize = 200_000;

/// The rows of `ids` that exist, in no particular order.
pub(crate) fn fetch(conn: &Connection, ids: &[i64]) -> rusqlite::Result<Vec<ChunkRow>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    // The parent's name and first line, for `opens`: not an impl's.
    let impl_kind = SymbolKind::Impl.as_str();
    let sql = |list: &str| {
        format!(
            "SELECT c.id, f.path, f.lang, c.kind, c.start_line, c.end_line, c.start_byte, c.end_byte, {SYMBOL_COLUMNS}, \
             p.name, p.start_line FROM chunks c JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol \
             LEFT JOIN symbols p ON p.id = s.parent AND p.kind != '{impl_kind}' WHERE c.id IN ({list})"
        )
    };
    // A cached statement with a parameter per id (the spare ones NULL, which
    // matches nothing) is not compiled again on every query. A longer list
    // is inlined (integers, so it is safe to).
    let slots = ids.len().next_power_of_two().max(MIN_ID_SLOTS);
    let (mut cached, mut inlined);
    let (stmt, params): (&mut Statement, Vec<Option<i64>>) = if slots <= MAX_ID_SLOTS {
        let list: Vec<String> = (1..=slots).map(|i| format!("?{i}")).collect();
        cached = conn.prepare_cached(&sql(&list.join(",")))?;
        (
            &mut cached,
            (0..slots).map(|i| ids.get(i).copied()).collect(),
        )
    } else {
        let list: Vec<String> = ids.iter().map(i64::to_string).collect();
        inlined = conn.prepare(&sql(&list.join(",")))?;
        (&mut inlined, Vec::new())
    };
    let rows = stmt.query_map(rusqlite::params_from_iter(params), |r| {
        let symbol = match r.get::<_, Option<i64>>(8)? {
            Some(_) => Some(symbol_row(r, 8)?),
            None => None,
        };
        let (start_line, end_line) = (r.get(4)?, r.get(5)?);
        let parent_line: Option<u32> = r.get(19)?;
        let opens = match parent_line {
            Some(line) if start_line <= line && line <= end_line => r.get(18)?,
            _ => None,
        };
        Ok(ChunkRow {
            id: r.get(0)?,
            path: r.get(1)?,
            lang: named(r, 2, Language::from_name)?,
            kind: named(r, 3, ChunkKind::from_name)?,
            start_line,
            end_line,
            start_byte: r.get(6)?,
            end_byte: r.get(7)?,
            symbol,
            opens,
        })
    })?;
    rows.collect()
}

/// Chunk rows read by an open index, by id.
#[derive(Default)]
pub(crate) struct RowCache {
    rows: HashMap<i64, Arc<ChunkRow>, foldhash::fast::RandomState>,
}

impl RowCache {
    /// Of `ids`, those not cached.
    pub fn missing(&self, ids: &[i64]) -> Vec<i64> {
        ids.iter()
            .copied()
            .filter(|id| !self.rows.contains_key(id))
            .collect()
    }

    pub fn get(&self, id: i64) -> Option<&Arc<ChunkRow>> {
        self.rows.get(&id)
    }

    /// Drops the rows of the files at `paths` (a build rewrote them: their
    /// lines, symbols and ids move).
    pub fn forget_files(&mut self, paths: &std::collections::HashSet<&str>) {
        self.rows
            .retain(|_, row| !paths.contains(row.path.as_str()));
    }

    /// Keeps a row, while there is room.
    pub fn keep(&mut self, row: &Arc<ChunkRow>) {
        if self.rows.len() < CACHED_ROWS {
            self.rows.insert(row.id, Arc::clone(row));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A database of `n` chunks in two files; every third chunk has a symbol.
    fn chunks_db(n: i64) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(
            "CREATE TABLE files (id INTEGER PRIMARY KEY, path TEXT, lang TEXT);
             CREATE TABLE symbols (id INTEGER PRIMARY KEY, parent INTEGER, file_id INTEGER, name TEXT,
               kind TEXT, container TEXT, start_line INTEGER, end_line INTEGER, signature TEXT, doc TEXT);
             CREATE TABLE chunks (id INTEGER PRIMARY KEY, file_id INTEGER, kind TEXT, start_line INTEGER,
               end_line INTEGER, start_byte INTEGER, end_byte INTEGER, symbol INTEGER);
             INSERT INTO files VALUES (1, 'a.go', 'go'), (2, 'b.rs', 'rust');",
        )
        .unwrap();
        for id in 1..=n {
            let symbol = (id % 3 == 0).then_some(id);
            if let Some(s) = symbol {
                conn.execute(
                    "INSERT INTO symbols VALUES (?1, NULL, 1, ?2, 'function', NULL, 1, 2, 'fn', NULL)",
                    rusqlite::params![s, format!("f{s}")],
                )
                .unwrap();
            }
            conn.execute(
                "INSERT INTO chunks VALUES (?1, ?2, 'symbol', ?1, ?1, 0, 10, ?3)",
                rusqlite::params![id, 1 + id % 2, symbol],
            )
            .unwrap();
        }
        conn
    }

    fn ids_of(mut rows: Vec<ChunkRow>) -> Vec<i64> {
        rows.sort_by_key(|r| r.id);
        rows.iter().map(|r| r.id).collect()
    }

    #[test]
    fn fetch_returns_the_rows_that_exist_for_short_and_long_lists() {
        let conn = chunks_db(1500);
        // Spare parameters are NULL: nothing beyond the ids asked for.
        assert_eq!(ids_of(fetch(&conn, &[5, 1, 3]).unwrap()), [1, 3, 5]);
        // Ids that do not exist (and overlay ids, negative) are left out.
        assert_eq!(ids_of(fetch(&conn, &[-4, 2, 9999]).unwrap()), [2]);
        // A list longer than the largest cached statement is inlined.
        let many: Vec<i64> = (1..=1200).rev().collect();
        assert_eq!(
            ids_of(fetch(&conn, &many).unwrap()),
            (1..=1200).collect::<Vec<_>>()
        );
        // Each slot count has its statement: 64, 128, 256 parameters.
        for n in [64, 65, 200] {
            let ids: Vec<i64> = (1..=n).collect();
            assert_eq!(ids_of(fetch(&conn, &ids).unwrap()), ids);
        }
        let row = fetch(&conn, &[6]).unwrap().remove(0);
        assert_eq!((row.path.as_str(), row.lang), ("a.go", Language::Go));
        assert_eq!(row.kind, ChunkKind::Symbol);
        let symbol = row.symbol.unwrap();
        assert_eq!(
            (symbol.name.as_str(), symbol.kind),
            ("f6", SymbolKind::Function)
        );
        assert!(fetch(&conn, &[7]).unwrap()[0].symbol.is_none());
        assert!(fetch(&conn, &[]).unwrap().is_empty());
    }

    #[test]
    fn a_chunk_holding_its_containers_first_line_opens_the_container() {
        let conn = chunks_db(3);
        // `class Grid` at line 20; its methods at 21 and 40, chunked 20-39 and
        // 40-60. `impl Cell` at 70, its method chunked 70-90.
        conn.execute_batch(
            "INSERT INTO symbols VALUES (10, NULL, 1, 'Grid', 'class', NULL, 20, 60, 'class Grid', NULL);
             INSERT INTO symbols VALUES (11, 10, 1, 'resize', 'method', 'class Grid', 21, 39, 'def', NULL);
             INSERT INTO symbols VALUES (12, 10, 1, 'clear', 'method', 'class Grid', 40, 60, 'def', NULL);
             INSERT INTO symbols VALUES (13, NULL, 1, 'Cell', 'impl', NULL, 70, 90, 'impl Cell', NULL);
             INSERT INTO symbols VALUES (14, 13, 1, 'fill', 'method', 'impl Cell', 71, 90, 'fn', NULL);
             INSERT INTO chunks VALUES (20, 1, 'symbol', 20, 39, 0, 10, 11);
             INSERT INTO chunks VALUES (21, 1, 'symbol', 40, 60, 10, 20, 12);
             INSERT INTO chunks VALUES (22, 1, 'symbol', 70, 90, 20, 30, 14);",
        )
        .unwrap();
        let mut rows = fetch(&conn, &[20, 21, 22, 3]).unwrap();
        rows.sort_by_key(|r| r.id);
        let opens: Vec<Option<&str>> = rows.iter().map(|r| r.opens.as_deref()).collect();
        assert_eq!(opens, [None, Some("Grid"), None, None]);
    }

    #[test]
    fn a_stored_name_this_version_does_not_know_is_a_row_that_cannot_be_decoded() {
        for damage in [
            "UPDATE files SET lang = 'cobol' WHERE id = 1",
            "UPDATE chunks SET kind = 'paragraph' WHERE id = 2",
            "UPDATE symbols SET kind = 'gizmo' WHERE id = 6",
        ] {
            let conn = chunks_db(10);
            conn.execute(damage, []).unwrap();
            let err = fetch(&conn, &[2, 6]).unwrap_err();
            assert!(
                matches!(err, rusqlite::Error::FromSqlConversionFailure(..)),
                "{damage}: {err}"
            );
            assert!(err.to_string().contains("unknown name"), "{damage}: {err}");
        }
    }

    #[test]
    fn the_cache_says_what_it_lacks() {
        let conn = chunks_db(10);
        let mut cache = RowCache::default();
        assert_eq!(cache.missing(&[3, 4]), [3, 4]);
        for row in fetch(&conn, &[3]).unwrap() {
            cache.keep(&Arc::new(row));
        }
        assert_eq!(cache.missing(&[3, 4]), [4]);
        assert_eq!(cache.get(3).map(|r| r.start_line), Some(3));
        assert!(cache.get(4).is_none());
    }
}
