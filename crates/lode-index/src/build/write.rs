//! The rows a build writes: its transaction's [`Writer`], the file, chunk,
//! symbol and relation rows, and the meta values it leaves.

use super::*;

/// One build's writes inside its transaction: the rows of the deleted and
/// changed files, then the postings they moved.
pub(super) struct Writer<'t, 'c, 'a> {
    tx: &'t Transaction<'c>,
    plan: &'a Plan<'a>,
    postings: PendingPostings,
    /// Chunks without vectors, moved by this build's delta (kept exact: the
    /// embedding phase and the readers go by it).
    pub(super) pending: u64,
    pub(super) unreadable: u64,
}

impl<'t, 'c, 'a> Writer<'t, 'c, 'a> {
    pub(super) fn new(tx: &'t Transaction<'c>, plan: &'a Plan<'a>) -> rusqlite::Result<Self> {
        let pending = match plan.rebuilt {
            false => meta::get(tx, Meta::VectorsPending)?
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            true => 0,
        };
        Ok(Writer {
            tx,
            plan,
            postings: PendingPostings::default(),
            pending,
            unreadable: 0,
        })
    }

    fn delete(&mut self, id: i64) -> rusqlite::Result<()> {
        let removed = delete_file(self.tx, id, &mut self.postings)?;
        self.pending = self.pending.saturating_sub(removed);
        Ok(())
    }

    /// The deleted files go, then the changed ones are written in order as a
    /// producer thread prepares them (read, hash, parse) in parallel batches:
    /// parsing the next batch overlaps writing this one.
    pub(super) fn write_files(
        &mut self,
        diff: &StatDiff,
        manifest: &Manifest,
        report: &mut BuildReport,
    ) -> rusqlite::Result<()> {
        for (_, id) in &diff.deleted {
            self.delete(*id)?;
            report.deleted += 1;
        }
        let (sender, batches) = std::sync::mpsc::sync_channel::<Vec<Prepared>>(1);
        let plan = self.plan;
        // What the producer needs of the plan (the options' callbacks stay here).
        let (root, selected, inline) = (&plan.loc.root, &plan.selected, plan.inline);
        let vendored = plan.opts.config.files.vendored;
        let changed = &diff.changed;
        std::thread::scope(|scope| -> rusqlite::Result<()> {
            scope.spawn(move || {
                for batch in changed.chunks(BATCH) {
                    let prepared: Vec<Prepared> = batch
                        .par_iter()
                        .map(|f| {
                            let prev = manifest.get(&f.path);
                            prepare(root, f, prev, selected, vendored, inline)
                        })
                        .collect();
                    if sender.send(prepared).is_err() {
                        break; // the writer stopped on an error
                    }
                }
            });
            let mut done = 0usize;
            for (batch, prepared) in changed.chunks(BATCH).zip(batches) {
                for (file, p) in batch.iter().zip(prepared) {
                    self.write_file(file, manifest.get(&file.path), p, report)?;
                }
                done += batch.len();
                if let Some(progress) = plan.opts.progress {
                    progress(done, changed.len());
                }
            }
            Ok(())
        })
    }

    /// One changed file's rows, as [`prepare`] found it.
    fn write_file(
        &mut self,
        file: &WalkedFile,
        prev: Option<&ManifestEntry>,
        prepared: Prepared,
        report: &mut BuildReport,
    ) -> rusqlite::Result<()> {
        match prepared {
            Prepared::Unreadable => {
                self.unreadable += 1;
                if let Some(m) = prev {
                    self.delete(m.id)?;
                }
            }
            Prepared::Unchanged => {
                self.tx
                    .prepare_cached("UPDATE files SET size = ?1, mtime_ns = ?2 WHERE path = ?3")?
                    .execute(params![file.size as i64, file.mtime_ns, file.path])?;
                report.unchanged += 1;
            }
            Prepared::Skip { hash, reason, lang } => {
                if let Some(m) = prev {
                    self.delete(m.id)?;
                }
                let flags = (false, false, false);
                insert_file_row(self.tx, file, &hash, lang, 0, Some(reason), flags)?;
            }
            Prepared::Index(pf) => {
                let embedded = match prev {
                    Some(m) => {
                        let (embedded, old_pending) = replace_indexed(
                            self.tx,
                            file,
                            m.id,
                            &pf,
                            &mut self.postings,
                            self.plan.inline,
                        )?;
                        self.pending = self.pending.saturating_sub(old_pending);
                        embedded
                    }
                    None => insert_indexed(self.tx, file, &pf, &mut self.postings)?,
                };
                if !embedded {
                    self.pending += pf.extract.chunks.len() as u64;
                }
                report.parsed += 1;
            }
        }
        Ok(())
    }

    /// Writes the postings and gives the collection's lengths: the stored
    /// sums moved by this build's delta, or, in a new database (or one
    /// without the sums), counted once.
    pub(super) fn lexical_sums(
        &mut self,
        report: &mut BuildReport,
    ) -> rusqlite::Result<LengthSums> {
        let delta = self.postings.length_delta();
        let terms = std::mem::take(&mut self.postings).write(self.tx)?;
        if !self.plan.rebuilt {
            report.touched_terms = Some(terms);
        }
        let previous = match self.plan.rebuilt {
            false => meta::get(self.tx, Meta::LexicalSums)?.and_then(|v| LengthSums::from_meta(&v)),
            true => None,
        };
        Ok(match previous {
            Some(p) => p.plus(delta),
            None => self.tx.query_row(
                "SELECT COUNT(*), COALESCE(SUM(len_name), 0), COALESCE(SUM(len_path), 0), \
                 COALESCE(SUM(len_body), 0) FROM chunks",
                [],
                |r| {
                    Ok(LengthSums {
                        chunks: r.get(0)?,
                        len: [r.get(1)?, r.get(2)?, r.get(3)?],
                    })
                },
            )?,
        })
    }
}

/// The meta values a committed build leaves: what it was built with and from,
/// its generation and counts.
pub(super) fn write_meta(
    tx: &Transaction,
    plan: &Plan,
    built: &Built,
    fp: &str,
    vectors: &Vectors,
    walk: &WalkReport,
    started: Instant,
) -> rusqlite::Result<()> {
    let set = |k: Meta, v: &str| meta::set(tx, k, v);
    let walk_skipped: BTreeMap<&str, u64> =
        walk.skipped.iter().map(|(r, n)| (r.as_str(), *n)).collect();
    set(Meta::RowCounts, &built.row_counts.to_meta())?;
    set(Meta::LexicalSums, &built.sums.to_meta())?;
    set(Meta::VectorsPending, &built.pending.to_string())?;
    if let Some(snapshot) = &walk.snapshot {
        set(Meta::WalkSnapshot, &snapshot.to_json())?;
    }
    set(Meta::Fingerprint, fp)?;
    set(Meta::Vectors, &vectors.spec().to_meta())?;
    set(Meta::QueryPrefix, &crate::vectors::query_prefix())?;
    set(Meta::LodeVersion, lode_core::LODE_VERSION)?;
    set(Meta::Root, &plan.loc.root.to_string_lossy())?;
    set(Meta::Generation, &plan.generation.to_string())?;
    set(
        Meta::WalkSkipped,
        &serde_json::to_string(&walk_skipped).unwrap_or_default(),
    )?;
    set(Meta::Unreadable, &built.unreadable.to_string())?;
    set(Meta::BuiltAt, &unix_now().to_string())?;
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    set(Meta::BuildMs, &format!("{ms:.1}"))
}

/// A file's chunks as stored: id, key and field lengths, in id order.
pub(super) fn stored_chunks(
    tx: &Transaction,
    file_id: i64,
) -> rusqlite::Result<Vec<(i64, i64, FieldCounts)>> {
    tx.prepare_cached(
        "SELECT id, key, len_name, len_path, len_body FROM chunks WHERE file_id = ?1 ORDER BY id",
    )?
    .query_map([file_id], |r| {
        let len = FieldCounts {
            name: r.get(2)?,
            path: r.get(3)?,
            body: r.get(4)?,
        };
        Ok((r.get(0)?, r.get(1)?, len))
    })?
    .collect()
}

/// Drops a chunk's row, its terms row and (pending) its postings.
pub(super) fn remove_chunk(
    tx: &Transaction,
    (id, len): (i64, FieldCounts),
    postings: &mut PendingPostings,
) -> rusqlite::Result<()> {
    let terms: Option<Vec<u8>> = tx
        .prepare_cached("SELECT terms FROM chunk_terms WHERE chunk_id = ?1")?
        .query_row([id], |r| r.get(0))
        .optional()?;
    postings.remove_chunk(
        id,
        len,
        &String::from_utf8_lossy(&terms.unwrap_or_default()),
    );
    tx.prepare_cached("DELETE FROM chunk_terms WHERE chunk_id = ?1")?
        .execute([id])?;
    tx.prepare_cached("DELETE FROM chunks WHERE id = ?1")?
        .execute([id])?;
    Ok(())
}

/// Deletes a file's symbols, calls, imports and vectors (not its chunks,
/// which go or stay one by one); returns whether it had vectors.
pub(super) fn delete_file_rows(tx: &Transaction, file_id: i64) -> rusqlite::Result<bool> {
    for sql in [
        "DELETE FROM symbols WHERE file_id = ?1",
        "DELETE FROM calls WHERE file_id = ?1",
        "DELETE FROM imports WHERE file_id = ?1",
    ] {
        tx.prepare_cached(sql)?.execute([file_id])?;
    }
    let vectors = tx
        .prepare_cached("DELETE FROM vectors WHERE file_id = ?1")?
        .execute([file_id])?;
    Ok(vectors > 0)
}

/// Removes a file's rows; returns how many of its chunks had no vectors.
pub(super) fn delete_file(
    tx: &Transaction,
    id: i64,
    postings: &mut PendingPostings,
) -> rusqlite::Result<u64> {
    let chunks = stored_chunks(tx, id)?;
    for &(chunk, _, len) in &chunks {
        remove_chunk(tx, (chunk, len), postings)?;
    }
    let embedded = delete_file_rows(tx, id)?;
    tx.prepare_cached("DELETE FROM files WHERE id = ?1")?
        .execute([id])?;
    Ok(if embedded { 0 } else { chunks.len() as u64 })
}

pub(super) fn insert_file_row(
    tx: &Transaction,
    file: &WalkedFile,
    hash: &[u8; 32],
    lang: Language,
    lines: u32,
    skip: Option<SkipReason>,
    (lossy, errors, failed): (bool, bool, bool),
) -> rusqlite::Result<i64> {
    tx.prepare_cached(
        "INSERT INTO files(path, lang, size, mtime_ns, hash, lines, lossy, parse_errors, parse_failed, skip_reason) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        file.path,
        lang.as_str(),
        file.size as i64,
        file.mtime_ns,
        &hash[..],
        lines,
        lossy,
        errors,
        failed,
        skip.map(|s| s.as_str())
    ])?;
    Ok(tx.last_insert_rowid())
}

/// Writes a parsed file's rows; returns whether its chunks' vectors were
/// written too (embedded in the build: see `INLINE_EMBED_FILES`).
pub(super) fn insert_indexed(
    tx: &Transaction,
    file: &WalkedFile,
    pf: &PreparedFile,
    postings: &mut PendingPostings,
) -> rusqlite::Result<bool> {
    let ex = &pf.extract;
    let file_id = insert_file_row(
        tx,
        file,
        &pf.hash,
        pf.lang,
        pf.lines,
        None,
        (pf.lossy, ex.had_parse_errors, ex.parse_failed),
    )?;
    let sym_ids = insert_relations(tx, file_id, ex)?;
    let mut chunk_ids: Vec<i64> = Vec::with_capacity(ex.chunks.len());
    for i in 0..ex.chunks.len() {
        chunk_ids.push(insert_chunk(tx, file_id, pf, i, &sym_ids, postings)?);
    }
    if pf.vectors.is_empty() || chunk_ids.is_empty() {
        return Ok(false);
    }
    // (The file's old rows, vectors included, went with `delete_file`.)
    crate::embed::insert_vector_row(tx, file_id, &chunk_ids, &pf.vectors)
}

/// Rewrites a changed file's rows under its id, keeping the id of every chunk
/// whose key (names and body) is unchanged: its postings stay as they are, so
/// an edit rewrites the postings of the chunks it touched, not of every term
/// in the file. Returns whether the chunks' vectors were written (as
/// [`insert_indexed`]) and how many of the old chunks had none.
pub(super) fn replace_indexed(
    tx: &Transaction,
    file: &WalkedFile,
    file_id: i64,
    pf: &PreparedFile,
    postings: &mut PendingPostings,
    inline: Option<&Vectors>,
) -> rusqlite::Result<(bool, u64)> {
    let ex = &pf.extract;
    let old = stored_chunks(tx, file_id)?;
    // What a kept chunk's vector was (its text, made of its key and the
    // path, is unchanged), for the writer to embed the new chunks only.
    let old_vectors = match inline {
        Some(v) if !pf.texts.is_empty() => stored_vectors(tx, file_id, v.stride())?,
        _ => HashMap::new(),
    };
    let had_vectors = delete_file_rows(tx, file_id)?;
    tx.prepare_cached(
        "UPDATE files SET lang = ?2, size = ?3, mtime_ns = ?4, hash = ?5, lines = ?6, lossy = ?7, \
         parse_errors = ?8, parse_failed = ?9, skip_reason = NULL WHERE id = ?1",
    )?
    .execute(params![
        file_id,
        pf.lang.as_str(),
        file.size as i64,
        file.mtime_ns,
        &pf.hash[..],
        pf.lines,
        pf.lossy,
        ex.had_parse_errors,
        ex.parse_failed
    ])?;
    let sym_ids = insert_relations(tx, file_id, ex)?;
    // Old chunks by key, each key's ids in order (identical chunks pair up in order).
    let mut by_key: HashMap<i64, std::collections::VecDeque<usize>> = HashMap::new();
    for (j, &(_, key, _)) in old.iter().enumerate() {
        by_key.entry(key).or_default().push_back(j);
    }
    let mut kept = vec![false; old.len()];
    let mut chunk_ids: Vec<i64> = Vec::with_capacity(ex.chunks.len());
    for (i, c) in ex.chunks.iter().enumerate() {
        let Some(j) = by_key.get_mut(&pf.keys[i]).and_then(|q| q.pop_front()) else {
            chunk_ids.push(insert_chunk(tx, file_id, pf, i, &sym_ids, postings)?);
            continue;
        };
        kept[j] = true;
        let id = old[j].0;
        tx.prepare_cached(
            "UPDATE chunks SET kind = ?2, symbol = ?3, start_line = ?4, end_line = ?5, \
             start_byte = ?6, end_byte = ?7 WHERE id = ?1",
        )?
        .execute(params![
            id,
            c.kind.as_str(),
            c.symbol.map(|s| sym_ids[s as usize]),
            c.span.start_line,
            c.span.end_line,
            c.span.start_byte,
            c.span.end_byte
        ])?;
        chunk_ids.push(id);
    }
    for (&(id, _, len), kept) in old.iter().zip(&kept) {
        if !kept {
            remove_chunk(tx, (id, len), postings)?;
        }
    }
    let old_pending = if had_vectors { 0 } else { old.len() as u64 };
    let vectors = match inline {
        Some(v) if !pf.texts.is_empty() => {
            std::borrow::Cow::Owned(kept_and_new_vectors(v, &chunk_ids, &old_vectors, &pf.texts))
        }
        _ => std::borrow::Cow::Borrowed(&pf.vectors),
    };
    if vectors.is_empty() || chunk_ids.is_empty() {
        return Ok((false, old_pending));
    }
    let embedded = crate::embed::insert_vector_row(tx, file_id, &chunk_ids, &vectors)?;
    Ok((embedded, old_pending))
}

/// A file's stored vectors by chunk id (none when of another size).
pub(super) fn stored_vectors(
    tx: &Transaction,
    file_id: i64,
    stride: usize,
) -> rusqlite::Result<HashMap<i64, Vec<u8>>> {
    let row = crate::embed::file_vectors(tx, file_id)?;
    let Some((ids, data)) = row.filter(|(ids, data)| data.len() == ids.len() / 8 * stride) else {
        return Ok(HashMap::new());
    };
    Ok(crate::embed::vector_ids(&ids)
        .zip(data.chunks_exact(stride).map(<[u8]>::to_vec))
        .collect())
}

/// The vectors of `chunk_ids` in order: a kept chunk's from `old`, the
/// others embedded from their `texts` now. Empty when embedding failed.
pub(super) fn kept_and_new_vectors(
    v: &Vectors,
    chunk_ids: &[i64],
    old: &HashMap<i64, Vec<u8>>,
    texts: &[String],
) -> Vec<u8> {
    let new: Vec<usize> = (0..chunk_ids.len())
        .filter(|&i| !old.contains_key(&chunk_ids[i]))
        .collect();
    let embedded = v.embed_documents(&new.iter().map(|&i| texts[i].as_str()).collect::<Vec<_>>());
    if embedded.len() != new.len() * v.stride() {
        return Vec::new();
    }
    let mut fresh = embedded.chunks_exact(v.stride().max(1));
    let mut out = Vec::with_capacity(chunk_ids.len() * v.stride());
    for id in chunk_ids {
        match old.get(id) {
            Some(kept) => out.extend_from_slice(kept),
            None => out.extend_from_slice(fresh.next().expect("one per new chunk")),
        }
    }
    out
}

/// Writes a file's symbols, calls and imports; returns the symbols' ids.
pub(super) fn insert_relations(
    tx: &Transaction,
    file_id: i64,
    ex: &FileExtract,
) -> rusqlite::Result<Vec<i64>> {
    let mut sym_ids: Vec<i64> = Vec::with_capacity(ex.symbols.len());
    let mut stmt = tx.prepare_cached(
        "INSERT INTO symbols(file_id, parent, name, kind, container, start_line, end_line, start_byte, end_byte, signature, doc) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for s in &ex.symbols {
        let parent = s.parent.map(|p| sym_ids[p as usize]);
        stmt.execute(params![
            file_id,
            parent,
            s.name,
            s.kind.as_str(),
            s.container,
            s.span.start_line,
            s.span.end_line,
            s.span.start_byte,
            s.span.end_byte,
            s.signature,
            s.doc
        ])?;
        sym_ids.push(tx.last_insert_rowid());
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO calls(file_id, caller, callee, receiver, start_line, end_line) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?;
    for c in &ex.calls {
        stmt.execute(params![
            file_id,
            c.caller.map(|i| sym_ids[i as usize]),
            c.callee,
            c.receiver,
            c.span.start_line,
            c.span.end_line
        ])?;
    }
    let mut stmt = tx.prepare_cached(
        "INSERT INTO imports(file_id, source, names, start_line) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for i in &ex.imports {
        stmt.execute(params![
            file_id,
            i.source,
            i.names.join("\n"),
            i.span.start_line
        ])?;
    }
    Ok(sym_ids)
}

/// Writes chunk `i` of a prepared file with its terms; returns its new id
/// (the highest yet, so new postings land in the last block).
pub(super) fn insert_chunk(
    tx: &Transaction,
    file_id: i64,
    pf: &PreparedFile,
    i: usize,
    sym_ids: &[i64],
    postings: &mut PendingPostings,
) -> rusqlite::Result<i64> {
    let (c, terms) = (&pf.extract.chunks[i], &pf.chunk_terms[i]);
    tx.prepare_cached(
        "INSERT INTO chunks(file_id, kind, symbol, start_line, end_line, start_byte, end_byte, len_name, len_path, len_body, key) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        file_id,
        c.kind.as_str(),
        c.symbol.map(|s| sym_ids[s as usize]),
        c.span.start_line,
        c.span.end_line,
        c.span.start_byte,
        c.span.end_byte,
        terms.len.name,
        terms.len.path,
        terms.len.body,
        pf.keys[i]
    ])?;
    let id = tx.last_insert_rowid();
    tx.prepare_cached("INSERT INTO chunk_terms(chunk_id, terms) VALUES (?1, ?2)")?
        .execute(params![id, terms.joined().as_bytes()])?;
    postings.add_chunk(id, terms);
    Ok(id)
}

pub(super) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
