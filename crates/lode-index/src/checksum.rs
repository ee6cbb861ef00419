//! A check on the blobs lode decodes itself: each postings block and each
//! file's vectors end in a CRC-32 of what they hold. A flipped byte there
//! would not fail to decode — a posting's counts, a vector's values are any
//! bytes — and would change an answer silently; it fails the check
//! instead, and the index counts as damaged.
//!
//! CRC-32, not a cryptographic hash: it guards against bad luck (bit rot, a
//! torn write), not against someone who can write the cache, and it runs at
//! memory speed, where a fresh query checks every vector of the index
//! (BLAKE3's first 4 bytes cost such a query a fifth more; see
//! `docs/benchmarks.md`).

/// Bytes of the check kept after a blob.
pub(crate) const LEN: usize = 4;

fn sum(payload: &[u8], also: &[u8]) -> [u8; LEN] {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(also);
    hasher.update(payload);
    hasher.finalize().to_le_bytes()
}

/// Appends the check of `payload`, which also covers `also` (stored apart:
/// the chunk ids beside their vectors).
pub(crate) fn seal(payload: &mut Vec<u8>, also: &[u8]) {
    let check = sum(payload, also);
    payload.extend_from_slice(&check);
}

/// The payload of a sealed blob; `None` when the check fails.
pub(crate) fn open<'b>(blob: &'b [u8], also: &[u8]) -> Option<&'b [u8]> {
    let split = blob.len().checked_sub(LEN)?;
    let (payload, check) = blob.split_at(split);
    (sum(payload, also) == check).then_some(payload)
}

/// [`open`] for a column read back: a failed check is a row that cannot be
/// decoded.
pub(crate) fn open_column<'b>(
    blob: &'b [u8],
    also: &[u8],
    column: usize,
) -> rusqlite::Result<&'b [u8]> {
    open(blob, also).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            column,
            rusqlite::types::Type::Blob,
            "a damaged blob (its check fails)".into(),
        )
    })
}

#[cfg(test)]
mod tests {
    use std::fs;

    use lode_core::{Config, Error};

    use super::*;
    use crate::lexical::Bm25Params;
    use crate::{BuildOptions, Filter, Index, IndexLocation, build};

    /// A built index of two Python files, and its database.
    fn built() -> (tempfile::TempDir, IndexLocation) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        fs::create_dir_all(&root).unwrap();
        fs::write(
            root.join("a.py"),
            "def parse_config(path):\n    return path\n",
        )
        .unwrap();
        fs::write(
            root.join("b.py"),
            "def load_config():\n    return parse_config(1)\n",
        )
        .unwrap();
        let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
        build(&loc, &BuildOptions::quiet(&Config::default())).unwrap();
        (tmp, loc)
    }

    /// Flips one bit of the `data` blob of each row of `table`, its rows
    /// keyed by `key` (postings: by term and block; vectors: by file).
    /// Written through the page-checking VFS, so that the pages hold and the
    /// blobs' own checks are what is tested.
    fn flip(loc: &IndexLocation, table: &str, key: &str) {
        let conn = crate::open_database(&loc.current_db().unwrap()).unwrap();
        let rows: Vec<(String, Vec<u8>)> = conn
            .prepare(&format!("SELECT {key}, data FROM {table}"))
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(!rows.is_empty());
        for (k, mut blob) in rows {
            blob[0] ^= 0x02;
            conn.execute(
                &format!("UPDATE {table} SET data = ?1 WHERE {key} = ?2"),
                rusqlite::params![blob, k],
            )
            .unwrap();
        }
    }

    const POSTINGS_KEY: &str = "term || ':' || block";
    const VECTORS_KEY: &str = "CAST(file_id AS TEXT)";

    fn is_corrupt<T: std::fmt::Debug>(r: lode_core::Result<T>) -> bool {
        matches!(r, Err(Error::IndexCorrupt { .. }))
    }

    #[test]
    fn a_flipped_postings_or_vectors_byte_is_damage_not_another_answer() {
        let terms = ["parse".to_string(), "config".to_string()];
        let lexical = |i: &Index| i.lexical(&terms, &Bm25Params::default(), &Filter::default(), 5);

        let (_tmp, loc) = built();
        assert!(!lexical(&Index::open(&loc).unwrap()).unwrap().is_empty());
        flip(&loc, "postings", POSTINGS_KEY);
        assert!(is_corrupt(lexical(&Index::open(&loc).unwrap())));

        let (_tmp, loc) = built();
        let dense = |i: &Index| i.dense("parse a config file", &Filter::default(), 5);
        assert!(!dense(&Index::open(&loc).unwrap()).unwrap().is_empty());
        flip(&loc, "vectors", VECTORS_KEY);
        assert!(is_corrupt(dense(&Index::open(&loc).unwrap())));
    }

    #[test]
    fn an_update_over_damaged_postings_builds_afresh() {
        let (_tmp, loc) = built();
        flip(&loc, "postings", POSTINGS_KEY);
        fs::write(
            loc.root.join("a.py"),
            "def parse_config(path, strict):\n    return path\n",
        )
        .unwrap();
        let report = build(&loc, &BuildOptions::quiet(&Config::default())).unwrap();
        assert!(report.rebuilt.is_some(), "{report:?}");
        let index = Index::open(&loc).unwrap();
        let terms = ["strict".to_string()];
        let hits = index.lexical(&terms, &Bm25Params::default(), &Filter::default(), 5);
        assert_eq!(hits.unwrap().len(), 1);
    }

    #[test]
    fn a_sealed_blob_opens_and_any_flipped_bit_fails() {
        let mut blob = b"postings of one block".to_vec();
        seal(&mut blob, b"ids");
        assert_eq!(open(&blob, b"ids"), Some(&b"postings of one block"[..]));
        assert_eq!(open(&blob, b"other ids"), None);
        for byte in 0..blob.len() {
            for bit in 0..8 {
                let mut flipped = blob.clone();
                flipped[byte] ^= 1 << bit;
                assert_eq!(open(&flipped, b"ids"), None, "byte {byte} bit {bit}");
            }
        }
        assert_eq!(open(&blob[..LEN - 1], b""), None);
        let mut empty = Vec::new();
        seal(&mut empty, b"");
        assert_eq!(open(&empty, b""), Some(&b""[..]));
    }
}
