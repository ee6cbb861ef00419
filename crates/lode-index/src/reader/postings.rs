//! The lexical side of a read: decoded postings, kept per open index, and
//! BM25 over them.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use lode_core::{Error, Result};

use super::{Filter, Index};
use crate::lexical::{self, Bm25Params, CollectionStats, LengthSums, Posting, ScoringKey};
use crate::meta::Meta;
use crate::top::best;

/// What BM25 needs of the whole collection, per open index.
#[derive(Clone, Copy)]
pub(super) struct LexicalStats {
    collection: CollectionStats,
    max_chunk_id: i64,
}

/// Decoded postings by term (see [`Index::postings`]).
#[derive(Default)]
pub(super) struct PostingsCache {
    map: HashMap<String, Arc<TermPostings>>,
    entries: usize,
}

impl PostingsCache {
    /// Drops the postings of `terms` (a build rewrote them) and, since the
    /// collection's lengths moved, lets every other term's pseudo-frequencies
    /// be worked out again on demand.
    pub(super) fn forget(&mut self, terms: &[String]) {
        for term in terms {
            if let Some(postings) = self.map.remove(term) {
                self.entries -= postings.list.len();
            }
        }
        let mut shared = 0;
        self.map.retain(|_, postings| match Arc::get_mut(postings) {
            Some(p) => {
                p.pseudo = OnceLock::new();
                true
            }
            // Held by a query under way elsewhere: dropped rather than reset.
            None => {
                shared += postings.list.len();
                false
            }
        });
        self.entries -= shared;
    }
}

/// One term's postings, and their pseudo-frequencies once a query has
/// computed them (see [`TermPostings::pseudo_frequencies`]).
pub(crate) struct TermPostings {
    pub(crate) list: Vec<Posting>,
    pseudo: OnceLock<(ScoringKey, Vec<f64>)>,
}

impl TermPostings {
    /// The BM25F pseudo-frequency of each posting, in order: most of a
    /// posting's score, and all its divisions but one. Kept when `keep` (a
    /// query over the index alone; an overlay's statistics differ) for the
    /// first parameters asked for (the defaults, in practice), computed
    /// afresh otherwise.
    fn pseudo_frequencies(
        &self,
        params: &Bm25Params,
        collection: &CollectionStats,
        keep: bool,
    ) -> Cow<'_, [f64]> {
        let key = params.scoring_key(collection);
        let compute = || -> Vec<f64> {
            self.list
                .iter()
                .map(|p| params.pseudo_frequency(collection, p))
                .collect()
        };
        let kept = match self.pseudo.get() {
            None if keep => Some(self.pseudo.get_or_init(|| (key, compute()))),
            kept => kept,
        };
        match kept {
            Some((kept_key, kept)) if *kept_key == key => Cow::Borrowed(kept),
            _ => Cow::Owned(compute()),
        }
    }
}

/// At most this many postings (32 bytes each, and 8 for a pseudo-frequency)
/// stay decoded per open index.
const POSTINGS_CACHE_ENTRIES: usize = 4_000_000;

impl Index {
    /// A term's decoded postings, kept for the life of this open index (it
    /// sees one committed state) up to [`POSTINGS_CACHE_ENTRIES`] in all.
    pub(crate) fn postings(
        &self,
        stmt: &mut rusqlite::CachedStatement,
        term: &str,
    ) -> Result<Option<Arc<TermPostings>>> {
        if let Some(hit) = self.postings_cache.lock().unwrap().map.get(term) {
            return Ok(Some(hit.clone()));
        }
        // Blocks come in block order, and chunk ids ascend within and across them.
        let mut rows = stmt.query([term]).map_err(|e| self.err(e))?;
        let mut list = Vec::new();
        let mut found = false;
        while let Some(row) = rows.next().map_err(|e| self.err(e))? {
            found = true;
            let blob = row.get_ref(0).map_err(|e| self.err(e))?;
            let blob = blob.as_blob().map_err(|e| self.err(e.into()))?;
            if lexical::decode(blob, |p| list.push(p)).is_none() {
                return Err(Error::IndexCorrupt {
                    path: self.store.path().to_path_buf(),
                    reason: format!("damaged postings for {term:?}"),
                });
            }
        }
        if !found {
            return Ok(None);
        }
        let postings = Arc::new(TermPostings {
            list,
            pseudo: OnceLock::new(),
        });
        let mut cache = self.postings_cache.lock().unwrap();
        let n = postings.list.len();
        if cache.entries + n <= POSTINGS_CACHE_ENTRIES {
            cache.entries += n;
            cache.map.insert(term.to_string(), postings.clone());
        }
        Ok(Some(postings))
    }

    /// Collection statistics of the lexical index, read once per open index.
    /// (It also holds the highest chunk id, which sizes the score array.)
    fn lexical_stats(&self) -> Result<LexicalStats> {
        if let Some(s) = self.stats_cache.get() {
            return Ok(*s);
        }
        let sums = self.store.meta(Meta::LexicalSums)?.unwrap_or_default();
        let max_chunk_id: i64 = self
            .store
            .connection()
            .query_row("SELECT COALESCE(MAX(id), 0) FROM chunks", [], |r| r.get(0))
            .map_err(|e| self.err(e))?;
        let stats = LexicalStats {
            collection: LengthSums::from_meta(&sums)
                .unwrap_or_default()
                .collection(),
            max_chunk_id,
        };
        let _ = self.stats_cache.set(stats);
        Ok(stats)
    }

    /// How many chunks the lexical index holds (read once per open index).
    pub fn chunk_count(&self) -> Result<f64> {
        Ok(self.lexical_stats()?.collection.chunks)
    }

    /// The best chunks for `terms` by BM25F over names, path and body, best
    /// first (ties by chunk id), at most `limit`.
    pub fn lexical(
        &self,
        terms: &[String],
        params: &Bm25Params,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let weighted: Vec<(&str, f64)> = terms.iter().map(|t| (t.as_str(), 1.0)).collect();
        self.lexical_weighted(&weighted, params, filter, limit)
    }

    /// [`lexical`](Self::lexical) with a weight per term: each term's BM25F
    /// score counts its weight times (a task's code words above its prose).
    /// `limit` 0: every chunk a term matched, in no order (a caller that
    /// wants them all seldom wants them all sorted).
    pub fn lexical_weighted(
        &self,
        terms: &[(&str, f64)],
        params: &Bm25Params,
        filter: &Filter,
        limit: usize,
    ) -> Result<Vec<(i64, f64)>> {
        if terms.is_empty() {
            return Ok(Vec::new());
        }
        let stats = self.lexical_stats()?;
        let allowed = self.allowed_chunks(filter)?;
        let over = self.active_overlay();
        let collection = match &over {
            Some(o) => o.collection(stats.collection),
            None => stats.collection,
        };
        let mut stmt = self
            .store
            .connection()
            .prepare_cached("SELECT data FROM postings WHERE term = ?1 ORDER BY block")
            .map_err(|e| self.err(e))?;
        let mut board = self.score_board.lock().unwrap_or_else(|p| p.into_inner());
        board.reset(stats.max_chunk_id);
        // Overlay chunks (negative ids) are scored on the same scale, aside.
        let mut overlay_scores: BTreeMap<i64, f64> = BTreeMap::new();
        for &(term, weight) in terms {
            let disk = self.postings(&mut stmt, term)?;
            let (disk, pseudo) = match &disk {
                Some(d) => (
                    &d.list[..],
                    d.pseudo_frequencies(params, &collection, over.is_none()),
                ),
                None => (&[][..], Cow::Borrowed(&[][..])),
            };
            let extra = over.as_ref().map_or(&[][..], |o| o.postings(term));
            if disk.is_empty() && extra.is_empty() {
                continue;
            }
            let df = match &over {
                None => disk.len(),
                Some(o) => disk.iter().filter(|p| !o.masks_chunk(p.chunk)).count() + extra.len(),
            };
            let idf = weight * params.idf(&collection, df as f64);
            for (p, &pseudo) in disk.iter().zip(pseudo.iter()) {
                if board.holds(p.chunk)
                    && allowed.as_ref().is_none_or(|a| a.contains(&p.chunk))
                    && over.as_ref().is_none_or(|o| !o.masks_chunk(p.chunk))
                {
                    board.add(p.chunk, params.saturate(idf, pseudo));
                }
            }
            if let Some(o) = &over {
                for p in extra.iter().filter(|p| o.admits_chunk(filter, p.chunk)) {
                    *overlay_scores.entry(p.chunk).or_default() +=
                        params.score(&collection, idf, p);
                }
            }
        }
        let scored = board.scored().chain(overlay_scores);
        Ok(if limit == 0 {
            scored.collect()
        } else {
            best(scored, limit)
        })
    }
}
