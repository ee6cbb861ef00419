//! The whole graph kept beside the index, one file per committed state, so
//! that `map`, `ask` and `gather` in a new process do not resolve every call
//! site again. The graph is derived data: a file that is missing, of another
//! state, or damaged (its checksum) is built again, never trusted.
//!
//! Layout: `graph-<database>-<generation>.bin` in the index directory, holding
//! a magic line, the node ids, their certain in-degrees, each node's
//! out-edges (target node, weight) and a blake3 checksum of all before it.

use std::path::PathBuf;

use lode_core::Result;
use lode_index::Index;

use crate::rank::SymbolGraph;

const MAGIC: &[u8] = b"lode graph 1\n";

/// What every graph file's name starts with.
const PREFIX: &str = "graph-";

/// The file for the index's committed state.
fn file_of(index: &Index) -> Result<PathBuf> {
    let db = index
        .store()
        .path()
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let generation = index
        .store()
        .meta(lode_index::Meta::Generation)?
        .unwrap_or_default();
    Ok(index
        .location
        .dir
        .join(format!("{PREFIX}{db}-{generation}.bin")))
}

impl SymbolGraph {
    /// The graph of `index`'s committed state: read from its file when one
    /// was written for that state, else built with `resolver` and written
    /// (an unwritable cache only costs the next process the build).
    pub fn stored_or_build(
        index: &Index,
        build: impl FnOnce() -> Result<SymbolGraph>,
    ) -> Result<SymbolGraph> {
        let path = file_of(index)?;
        if let Some(g) = std::fs::read(&path).ok().and_then(|b| decode(&b)) {
            return Ok(g);
        }
        let graph = build()?;
        let tmp = path.with_extension("tmp");
        if std::fs::write(&tmp, encode(&graph)).is_ok() && std::fs::rename(&tmp, &path).is_ok() {
            remove_others(&path);
        } else {
            let _ = std::fs::remove_file(&tmp);
        }
        Ok(graph)
    }
}

/// Removes the graph files of older states.
fn remove_others(keep: &std::path::Path) {
    let (Some(dir), Some(keep_name)) = (keep.parent(), keep.file_name()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if name != keep_name && name.to_string_lossy().starts_with(PREFIX) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

fn encode(g: &SymbolGraph) -> Vec<u8> {
    let (ids, certain_in, out) = g.parts();
    let mut b = Vec::with_capacity(MAGIC.len() + 16 + ids.len() * 16 + g.edges * 12 + 32);
    b.extend_from_slice(MAGIC);
    b.extend_from_slice(&(ids.len() as u64).to_le_bytes());
    b.extend_from_slice(&(g.edges as u64).to_le_bytes());
    for id in ids {
        b.extend_from_slice(&id.to_le_bytes());
    }
    for &c in certain_in {
        b.extend_from_slice(&(c as u64).to_le_bytes());
    }
    for edges in out {
        b.extend_from_slice(&(edges.len() as u32).to_le_bytes());
        for &(to, w) in edges {
            b.extend_from_slice(&(to as u32).to_le_bytes());
            b.extend_from_slice(&w.to_le_bytes());
        }
    }
    let sum = blake3::hash(&b);
    b.extend_from_slice(sum.as_bytes());
    b
}

/// Reads little-endian numbers off the front of a slice.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>()?;
        self.0 = rest;
        Some(*head)
    }
    fn u32(&mut self) -> Option<u32> {
        self.take().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.take().map(u64::from_le_bytes)
    }
}

fn decode(bytes: &[u8]) -> Option<SymbolGraph> {
    let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(32)?)?;
    if blake3::hash(body).as_bytes() != sum {
        return None;
    }
    let mut r = Reader(body.strip_prefix(MAGIC)?);
    let n = usize::try_from(r.u64()?).ok()?;
    let edges = usize::try_from(r.u64()?).ok()?;
    // Each node takes at least 20 bytes: a corrupt count cannot allocate much.
    if n > r.0.len() / 20 {
        return None;
    }
    let ids: Vec<i64> = (0..n)
        .map(|_| r.u64().map(|v| v as i64))
        .collect::<Option<_>>()?;
    let certain_in: Vec<usize> = (0..n)
        .map(|_| r.u64().map(|v| v as usize))
        .collect::<Option<_>>()?;
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = r.u32()? as usize;
        if len > r.0.len() / 12 {
            return None;
        }
        let list: Vec<(usize, f64)> = (0..len)
            .map(|_| Some((r.u32()? as usize, f64::from_bits(r.u64()?))))
            .collect::<Option<_>>()?;
        if list.iter().any(|&(to, _)| to >= n) {
            return None;
        }
        out.push(list);
    }
    (r.0.is_empty()).then(|| SymbolGraph::from_parts(ids, certain_in, out, edges))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> SymbolGraph {
        SymbolGraph::from_parts(
            vec![10, 20, 30],
            vec![0, 2, 1],
            vec![vec![(1, 1.0), (2, 0.15)], vec![(1, 0.5)], vec![]],
            4,
        )
    }

    #[test]
    fn a_graph_reads_back_as_written() {
        let g = sample();
        let back = decode(&encode(&g)).expect("decodes");
        assert_eq!(back.parts(), g.parts());
        assert_eq!(back.edges, g.edges);
        assert_eq!(back.pagerank(None), g.pagerank(None));
        assert_eq!(back.in_degree(20), 2);
    }

    #[test]
    fn a_damaged_or_truncated_file_is_not_trusted() {
        let bytes = encode(&sample());
        for i in [0, MAGIC.len() + 3, bytes.len() / 2, bytes.len() - 1] {
            let mut bad = bytes.clone();
            bad[i] ^= 0x40;
            assert!(decode(&bad).is_none(), "byte {i} flipped");
        }
        for cut in [0, 10, bytes.len() - 33, bytes.len() - 1] {
            assert!(decode(&bytes[..cut]).is_none(), "cut at {cut}");
        }
    }
}
