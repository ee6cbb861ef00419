//! The counts a build reports, kept rather than recounted.
//!
//! Counting every chunk and symbol row after each build cost a one-file
//! update more than writing the edit (docs/benchmarks.md). So a
//! build stores the table counts in meta (`row_counts`) and a small update
//! moves them by the difference between its files' rows before and after
//! it; a rebuild, a large update or an index without stored counts counts
//! every row once.

use std::collections::BTreeMap;

use rusqlite::{OptionalExtension, Transaction};
use serde::{Deserialize, Serialize};

/// Up to this many changed files, an update counts its files' rows, not the tables.
pub(crate) const DELTA_FILES: usize = 256;

/// What the tables hold that a build reports: indexed files, their chunks
/// and symbols, files with replaced bytes or syntax errors, and files kept
/// as rows only (by skip reason).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RowCounts {
    pub files: i64,
    pub chunks: i64,
    pub symbols: i64,
    pub lossy_utf8: i64,
    pub parse_errors: i64,
    pub parse_failed: i64,
    pub skipped: BTreeMap<String, i64>,
}

impl RowCounts {
    /// Every row counted.
    pub fn of_all(conn: &rusqlite::Connection) -> rusqlite::Result<RowCounts> {
        let count = |sql: &str| conn.query_row(sql, [], |r| r.get::<_, i64>(0));
        let [files, lossy_utf8, parse_errors, parse_failed] = conn.query_row(
            "SELECT COALESCE(SUM(skip_reason IS NULL), 0), COALESCE(SUM(lossy = 1), 0), \
             COALESCE(SUM(parse_errors = 1), 0), COALESCE(SUM(parse_failed = 1), 0) FROM files",
            [],
            |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?]),
        )?;
        let mut counts = RowCounts {
            files,
            chunks: count("SELECT COUNT(*) FROM chunks")?,
            symbols: count("SELECT COUNT(*) FROM symbols")?,
            lossy_utf8,
            parse_errors,
            parse_failed,
            skipped: BTreeMap::new(),
        };
        let mut stmt = conn.prepare(
            "SELECT skip_reason, COUNT(*) FROM files WHERE skip_reason IS NOT NULL GROUP BY skip_reason",
        )?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        for row in rows {
            let (reason, n) = row?;
            counts.skipped.insert(reason, n);
        }
        Ok(counts)
    }

    /// The rows of the files at `paths` (those the index has).
    pub fn of_paths(tx: &Transaction, paths: &[String]) -> rusqlite::Result<RowCounts> {
        let mut file = tx.prepare_cached(
            "SELECT id, skip_reason, lossy, parse_errors, parse_failed FROM files WHERE path = ?1",
        )?;
        let mut chunks = tx.prepare_cached("SELECT COUNT(*) FROM chunks WHERE file_id = ?1")?;
        let mut symbols = tx.prepare_cached("SELECT COUNT(*) FROM symbols WHERE file_id = ?1")?;
        let mut counts = RowCounts::default();
        for path in paths {
            let Some((id, skip, lossy, errors, failed)) = file
                .query_row([path], |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, bool>(2)?,
                        r.get::<_, bool>(3)?,
                        r.get::<_, bool>(4)?,
                    ))
                })
                .optional()?
            else {
                continue;
            };
            match skip {
                Some(reason) => *counts.skipped.entry(reason).or_default() += 1,
                None => counts.files += 1,
            }
            counts.lossy_utf8 += i64::from(lossy);
            counts.parse_errors += i64::from(errors);
            counts.parse_failed += i64::from(failed);
            counts.chunks += chunks.query_row([id], |r| r.get::<_, i64>(0))?;
            counts.symbols += symbols.query_row([id], |r| r.get::<_, i64>(0))?;
        }
        Ok(counts)
    }

    /// `self` moved by `after - before`.
    pub fn moved(mut self, before: &RowCounts, after: &RowCounts) -> RowCounts {
        self.files += after.files - before.files;
        self.chunks += after.chunks - before.chunks;
        self.symbols += after.symbols - before.symbols;
        self.lossy_utf8 += after.lossy_utf8 - before.lossy_utf8;
        self.parse_errors += after.parse_errors - before.parse_errors;
        self.parse_failed += after.parse_failed - before.parse_failed;
        for (reason, n) in &before.skipped {
            *self.skipped.entry(reason.clone()).or_default() -= n;
        }
        for (reason, n) in &after.skipped {
            *self.skipped.entry(reason.clone()).or_default() += n;
        }
        self.skipped.retain(|_, n| *n != 0);
        self
    }

    /// The counts stored by the last build, if it stored any.
    pub fn stored(conn: &rusqlite::Connection) -> rusqlite::Result<Option<RowCounts>> {
        let json = crate::meta::get(conn, crate::Meta::RowCounts)?;
        Ok(json.and_then(|j| serde_json::from_str(&j).ok()))
    }

    pub fn to_meta(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moving_counts_adds_the_after_and_takes_away_the_before() {
        let total = RowCounts {
            files: 10,
            chunks: 100,
            symbols: 50,
            skipped: BTreeMap::from([("binary".to_string(), 2)]),
            ..RowCounts::default()
        };
        let before = RowCounts {
            files: 1,
            chunks: 7,
            symbols: 3,
            ..RowCounts::default()
        };
        // The file became a skipped row: no chunks, one "binary" more.
        let after = RowCounts {
            skipped: BTreeMap::from([("binary".to_string(), 1)]),
            ..RowCounts::default()
        };
        let moved = total.clone().moved(&before, &after);
        assert_eq!((moved.files, moved.chunks, moved.symbols), (9, 93, 47));
        assert_eq!(moved.skipped, BTreeMap::from([("binary".to_string(), 3)]));
        // ...and back: a reason that falls to zero is not listed.
        let back = moved.moved(&after, &before);
        assert_eq!(back, total);
        let gone = total.moved(
            &RowCounts {
                skipped: BTreeMap::from([("binary".to_string(), 2)]),
                ..RowCounts::default()
            },
            &RowCounts::default(),
        );
        assert!(gone.skipped.is_empty());
    }
}
