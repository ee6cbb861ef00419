//! The dense side of a read: the stored chunk vectors, read once per open
//! index and patched after an update, and the similarity of each to a query.

use lode_core::Result;
use rusqlite::OptionalExtension;

use super::{Filter, Index, generation_and_pending};
use crate::meta::Meta;
use crate::store::Manifest;
use crate::top::best;

/// Every stored chunk vector, read at once, and the chunks of the index at
/// that moment (the embedding phase may not have reached them all).
pub(super) struct StoredVectors {
    ids: Vec<i64>,
    data: Vec<u8>,
    chunks: u64,
    /// Each file's run of `ids` as `(file_id, first, count)`, by file id:
    /// what [`Index::after_build`] replaces after an update.
    files: Vec<(i64, usize, usize)>,
    stride: usize,
    /// Chunks without vectors in the committed state these were read from.
    pub(super) pending: u64,
}

impl StoredVectors {
    /// Adds file `file`'s vectors after every file read so far.
    fn append(&mut self, file: i64, ids: &[u8], data: &[u8]) {
        if data.len() != ids.len() / 8 * self.stride {
            return; // written by another model; the fingerprint rebuilds it
        }
        let n = ids.len() / 8;
        self.files.push((file, self.ids.len(), n));
        self.ids.extend(crate::embed::vector_ids(ids));
        self.data.extend_from_slice(data);
    }

    /// Removes file `file`'s vectors, if it has any.
    fn remove(&mut self, file: i64) {
        let Ok(at) = self.files.binary_search_by_key(&file, |f| f.0) else {
            return;
        };
        let (_, first, n) = self.files.remove(at);
        self.ids.drain(first..first + n);
        self.data
            .drain(first * self.stride..(first + n) * self.stride);
        for f in &mut self.files[at..] {
            f.1 -= n;
        }
        self.chunks -= n as u64;
    }

    /// Puts file `file`'s vectors where a fresh read (by file id) would.
    fn insert(&mut self, file: i64, ids: &[u8], data: &[u8]) {
        if data.len() != ids.len() / 8 * self.stride {
            return;
        }
        let n = ids.len() / 8;
        let at = self.files.partition_point(|f| f.0 < file);
        let first = self.files.get(at).map_or(self.ids.len(), |f| f.1);
        self.ids.splice(first..first, crate::embed::vector_ids(ids));
        let byte = first * self.stride;
        self.data.splice(byte..byte, data.iter().copied());
        for f in &mut self.files[at..] {
            f.1 += n;
        }
        self.files.insert(at, (file, first, n));
        self.chunks += n as u64;
    }
}

impl Index {
    /// `v` with the vectors of the files at `touched` read again (the files
    /// of those paths before the build, `old`, and after it).
    pub(super) fn patch_vectors(
        &self,
        tx: &rusqlite::Transaction,
        mut v: StoredVectors,
        old: &Manifest,
        touched: &[String],
    ) -> Result<StoredVectors> {
        let mut by_path = tx
            .prepare_cached("SELECT id FROM files WHERE path = ?1")
            .map_err(|e| self.err(e))?;
        let mut files: Vec<i64> = Vec::new();
        for path in touched {
            files.extend(old.get(path).map(|e| e.id));
            files.extend(
                by_path
                    .query_row([path], |r| r.get::<_, i64>(0))
                    .optional()
                    .map_err(|e| self.err(e))?,
            );
        }
        files.sort_unstable();
        files.dedup();
        for file in files {
            v.remove(file);
            if let Some((ids, data)) =
                crate::embed::file_vectors(tx, file).map_err(|e| self.err(e))?
            {
                v.insert(file, &ids, &data);
            }
        }
        Ok(v)
    }

    /// The chunks nearest to `query` by the stored vectors, best first (ties
    /// by chunk id), at most `limit`. Empty when the query cannot be embedded
    /// by the model that made the index's vectors (a server that fails, a
    /// model this process does not use); [`take_notes`](Self::take_notes) then says why.
    pub fn dense(&self, query: &str, filter: &Filter, limit: usize) -> Result<Vec<(i64, f64)>> {
        Ok(best(self.dense_scores(&[query], filter)?, limit))
    }

    /// Every admitted chunk's similarity to the query `views`, summed, in no
    /// order (empty when the query cannot be embedded; see [`dense`](Self::dense)).
    pub(crate) fn dense_scores(&self, views: &[&str], filter: &Filter) -> Result<Vec<(i64, f64)>> {
        let Some(spec) = self.vector_spec()? else {
            return Ok(Vec::new()); // an index of an older lode; its fingerprint rebuilds it
        };
        let q = match crate::vectors::for_index(&spec)
            .and_then(|v| Ok((v.query_views(views)?, v.stride())))
        {
            Ok(q) => q,
            Err(why) => {
                let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
                notes.push(format!("{why}; this query ran lexical-only"));
                return Ok(Vec::new());
            }
        };
        let (q, stride) = q;
        let allowed = self.allowed_chunks(filter)?;
        let stored = self.vectors(stride)?;
        let (ids, data) = (&stored.ids, &stored.data);
        if let Some((embedded, chunks)) = self.embedded_chunks() {
            let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
            notes.push(format!("partial: {embedded} of {chunks} chunks embedded"));
        }
        let over = self.active_overlay();
        let mut scored: Vec<(i64, f64)> = Vec::with_capacity(ids.len());
        for (id, v) in ids.iter().zip(data.chunks_exact(stride)) {
            if allowed.as_ref().is_none_or(|a| a.contains(id))
                && over.as_ref().is_none_or(|o| !o.masks_chunk(*id))
            {
                scored.push((*id, f64::from(q.score(v))));
            }
        }
        if let Some(o) = &over {
            for (id, v) in o.vectors(stride) {
                if o.admits_chunk(filter, id) {
                    scored.push((id, f64::from(q.score(v))));
                }
            }
        }
        Ok(scored)
    }

    /// What the index's vectors are (`None` for an index of an older lode).
    pub fn vector_spec(&self) -> Result<Option<crate::vectors::VectorSpec>> {
        Ok(self
            .store
            .meta(Meta::Vectors)?
            .as_deref()
            .and_then(crate::vectors::VectorSpec::parse))
    }

    /// Chunks without a vector yet (the embedding phase has not reached them).
    pub fn vectors_pending(&self) -> Result<u64> {
        crate::embed::pending_chunks(&self.store)
    }

    /// The query prefix in force when the index was last built.
    pub fn stored_query_prefix(&self) -> Result<String> {
        Ok(self.store.meta(Meta::QueryPrefix)?.unwrap_or_default())
    }

    /// `(chunks with a vector, chunks)` as the dense side of this open index
    /// scores them, when some chunks have no vector yet (the embedding phase
    /// is under way or was stopped); `None` when all have one, or before the
    /// first dense query.
    pub fn embedded_chunks(&self) -> Option<(u64, u64)> {
        let v = self.vectors_cache.get()?;
        let embedded = v.ids.len() as u64;
        (embedded < v.chunks).then_some((embedded, v.chunks))
    }

    /// The notes of queries since the last call (a dense query that ran
    /// lexical-only, and why), oldest first.
    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Every chunk's id and stored vector, read once per open index: a
    /// long-lived process scans memory, not the database, on each query.
    fn vectors(&self, stride: usize) -> Result<&StoredVectors> {
        if let Some(v) = self.vectors_cache.get() {
            return Ok(v);
        }
        // One committed state for the vectors and the chunk count: the
        // embedding phase commits while readers read.
        let tx = self
            .store
            .connection()
            .unchecked_transaction()
            .map_err(|e| self.err(e))?;
        let chunks: i64 = tx
            .query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let (_, pending) = generation_and_pending(&tx).map_err(|e| self.err(e))?;
        let mut v = StoredVectors {
            ids: Vec::new(),
            data: Vec::new(),
            chunks: chunks as u64,
            files: Vec::new(),
            stride,
            pending,
        };
        let mut stmt = tx
            .prepare_cached("SELECT file_id, ids, data FROM vectors ORDER BY file_id")
            .map_err(|e| self.err(e))?;
        let mut rows = stmt.query([]).map_err(|e| self.err(e))?;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            let file: i64 = row.get(0).map_err(|e| self.err(e))?;
            let (ids, data) = crate::embed::vector_columns(row).map_err(|e| self.err(e))?;
            v.append(file, ids, data);
        }
        drop(rows);
        drop(stmt);
        drop(tx);
        let _ = self.vectors_cache.set(v);
        Ok(self.vectors_cache.get().expect("just set"))
    }

    /// Tests: the decoded vectors as `(ids, data, chunks)`, once read.
    #[doc(hidden)]
    pub fn decoded_vectors(&self) -> Option<(Vec<i64>, Vec<u8>, u64)> {
        let v = self.vectors_cache.get()?;
        Some((v.ids.clone(), v.data.clone(), v.chunks))
    }
}
