//! The embedding phase: vectors for the chunks of a committed index.
//!
//! A build commits files, chunks, symbols and postings first, without
//! vectors; this phase then embeds the chunks that have none, in batches that
//! span files (a server's `batch_size`, large batches for the static models),
//! newest files first (by mtime), and commits each batch in its own short
//! transaction, so readers see it progress and a killed process loses one
//! batch at most. A file's vectors are one row, written once all its chunks
//! are embedded.
//!
//! The chunk texts are rebuilt from the index (chunk spans and the names of
//! the symbols each defines) and the file as it is on disk, which must still
//! hash to what the build recorded; at commit the file must still have that
//! hash and those chunk ids. So a vector is never stored for a chunk that
//! changed or went away, whatever ran in between; a file that changed on
//! disk is left for the next build to re-parse.
//!
//! Who stops it: a newer build of the index (its commit changes the
//! generation, or a rebuild changes `CURRENT`) ends the phase at its next
//! commit, a cancel flag or a deadline between batches. What was committed
//! stays; the next phase resumes with the chunks still missing. One phase
//! runs per index at a time ([`EmbedLock`]); it never holds the writer lock,
//! so a build never waits for it.
//!
//! One index, one model: the phase embeds with the model of the index's
//! stored spec. When that is a server that fails (at connection or mid-way,
//! after retries), the index switches to the built-in model in one
//! transaction — every vector dropped, the built-in spec and fingerprint
//! stored — and the phase starts again with it, with a note.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lode_core::{Config, Result};
use rayon::prelude::*;
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::location::{EmbedLock, IndexLocation};
use crate::meta::{self, Meta};
use crate::store::{Store, sql_err};
use crate::vectors::{VectorSpec, Vectors};

/// Files read from disk at once (in parallel) to fill a batch.
const READ_GROUP: usize = 64;

/// How much of the embedding phase a build or refresh runs before returning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EmbedPhase {
    /// Every chunk (`lode index`, and the library's default).
    Complete,
    /// Newest files first until this much time has passed; the rest is left
    /// for the next build or query (a CLI query: it must not wait for a cold
    /// repository's embedding).
    Within(Duration),
    /// None: the caller runs [`embed`] itself (the MCP server, on a thread).
    Later,
}

/// What an embedding phase may do.
pub struct EmbedOptions<'a> {
    /// The repository's configuration: an index whose fingerprint does not
    /// match it is left alone ([`Stopped::Stale`]); its encoding decides the
    /// built-in model's vectors after a server fails.
    pub config: &'a Config,
    /// Wait for another phase of this index to end instead of leaving the
    /// work to it.
    pub wait: bool,
    /// Stop between batches once this passes.
    pub deadline: Option<Instant>,
    /// Stop between batches once this is set (a newer refresh in this
    /// process, a server shutting down).
    pub cancel: Option<&'a AtomicBool>,
    /// Stop after this many batches (tests: a partial index on demand).
    pub max_batches: Option<usize>,
    /// Texts per batch instead of the backend's (tests).
    pub batch_size: Option<usize>,
    /// Progress: `(chunks embedded, chunks to embed)`.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// One-line notes (a server that failed and the model used instead).
    pub note: &'a dyn Fn(&str),
    /// Called after each committed batch (tests: a build between batches).
    pub after_batch: Option<&'a dyn Fn()>,
}

impl<'a> EmbedOptions<'a> {
    /// The whole phase, waiting for another one to end, reporting nothing.
    pub fn new(config: &'a Config) -> EmbedOptions<'a> {
        EmbedOptions {
            config,
            wait: true,
            deadline: None,
            cancel: None,
            max_batches: None,
            batch_size: None,
            progress: None,
            note: &|_| {},
            after_batch: None,
        }
    }
}

/// Why a phase ended before every chunk had a vector.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stopped {
    /// Its time ran out ([`EmbedPhase::Within`]).
    Deadline,
    /// [`EmbedOptions::max_batches`] were done.
    Batches,
    /// [`EmbedOptions::cancel`] was set.
    Cancelled,
    /// A newer build committed (or a rebuild replaced the database).
    NewerBuild,
    /// The index was built with another configuration: the next build
    /// rebuilds it, so its chunks are not embedded now.
    Stale,
    /// Another phase of this index is running and this one would not wait.
    Busy,
    /// The index's model is not available to this process (a local model it
    /// does not use); the index is rebuilt by the next build with its own.
    Unavailable,
}

/// What a phase did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EmbedReport {
    /// Chunks embedded and committed by this phase.
    pub embedded: u64,
    /// Chunks of the index without a vector after it.
    pub pending: u64,
    /// Chunks in the index.
    pub chunks: u64,
    /// Batches committed.
    pub batches: u64,
    /// Files left without vectors because they changed on disk since the
    /// build that parsed them (the next build re-parses them).
    pub changed_files: u64,
    /// Why it ended with chunks left to embed; `None` when nothing stopped it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Stopped>,
    /// Wall time of the phase in milliseconds, waiting for its lock included.
    pub elapsed_ms: f64,
}

/// Chunks of `store`'s index without a vector (kept exact in `meta`).
pub(crate) fn pending_chunks(store: &Store) -> Result<u64> {
    Ok(store
        .meta(Meta::VectorsPending)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

/// Runs the embedding phase of `loc`'s current index. `vectors`: the model
/// of the build that just committed, when this is its second phase (a server
/// it already probed); otherwise the stored spec's model is made here.
pub fn embed(
    loc: &IndexLocation,
    opts: &EmbedOptions,
    vectors: Option<&Vectors>,
) -> Result<EmbedReport> {
    let started = Instant::now();
    let mut report = EmbedReport::default();
    let finish = |mut r: EmbedReport, store: Option<&Store>| -> Result<EmbedReport> {
        if let Some(store) = store {
            r.pending = pending_chunks(store)?;
            r.chunks = chunk_count(store)?;
        }
        r.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        Ok(r)
    };
    let Some(_lock) = EmbedLock::acquire(loc, opts.wait, &|pid| {
        (opts.note)(&format!(
            "waiting for lode process {pid}, which is embedding {}",
            loc.root.display()
        ))
    })?
    else {
        report.stopped = Some(Stopped::Busy);
        let store = loc.current_db().map(|db| Store::open(&db)).transpose()?;
        return finish(report, store.as_ref());
    };
    let Some(db) = loc.current_db() else {
        return finish(report, None);
    };
    let mut store = Store::open(&db)?;
    let generation = store.meta(Meta::Generation)?.unwrap_or_default();
    let Some(spec) = store
        .meta(Meta::Vectors)?
        .as_deref()
        .and_then(VectorSpec::parse)
    else {
        return finish(report, Some(&store)); // an older lode's index; rebuilt by the next build
    };
    // Vectors that fit the stored fingerprint only: another config means the
    // next build rebuilds this index anyway.
    if store.meta(Meta::Fingerprint)?.as_deref()
        != Some(crate::build::fingerprint_with(opts.config, &spec).as_str())
    {
        report.stopped = Some(Stopped::Stale);
        return finish(report, Some(&store));
    }
    if pending_chunks(&store)? == 0 {
        return finish(report, Some(&store));
    }
    let made;
    let vectors: &Vectors = match vectors {
        Some(v) if v.spec() == &spec => v,
        _ => match crate::vectors::for_index(&spec) {
            Ok(v) => {
                made = v;
                &made
            }
            Err(reason) if spec.is_server() => {
                match switch_to_builtin(loc, &mut store, opts, &generation, &reason)? {
                    Some(v) => made = v,
                    None => {
                        report.stopped = Some(Stopped::NewerBuild);
                        return finish(report, Some(&store));
                    }
                }
                &made
            }
            Err(reason) => {
                (opts.note)(&format!("{reason}; its chunks are not embedded"));
                report.stopped = Some(Stopped::Unavailable);
                return finish(report, Some(&store));
            }
        },
    };
    if let Some(reason) = run(loc, &mut store, opts, vectors, &generation, &mut report)? {
        // One index, one model: the server's vectors of this phase go too.
        report.embedded = 0;
        match switch_to_builtin(loc, &mut store, opts, &generation, &reason)? {
            // The built-in model does not fail the way a server does.
            Some(builtin) => drop(run(
                loc,
                &mut store,
                opts,
                &builtin,
                &generation,
                &mut report,
            )?),
            None => report.stopped = Some(Stopped::NewerBuild),
        }
    }
    finish(report, Some(&store))
}

/// A pending file as listed: its row id, path, content hash and chunk count.
struct PendingFile {
    id: i64,
    path: String,
    hash: Vec<u8>,
}

/// A file whose chunk texts are queued, and the vectors embedded so far.
struct InFlight {
    id: i64,
    hash: Vec<u8>,
    chunk_ids: Vec<i64>,
    data: Vec<u8>,
    left: usize,
}

/// One pass over the pending files. `Some(reason)` when the model failed
/// (nothing of this pass is committed after the failure).
fn run(
    loc: &IndexLocation,
    store: &mut Store,
    opts: &EmbedOptions,
    vectors: &Vectors,
    generation: &str,
    report: &mut EmbedReport,
) -> Result<Option<String>> {
    let pending = pending_files(store)?;
    let total = chunks_of(store, &pending)?;
    let batch = opts
        .batch_size
        .unwrap_or_else(|| vectors.batch_size())
        .max(1);
    let stride = vectors.stride();
    let mut files: HashMap<i64, InFlight> = HashMap::new();
    let mut queue: VecDeque<(i64, String)> = VecDeque::new();
    let mut next = 0usize;
    let mut done_chunks = 0usize;
    if let Some(p) = opts.progress {
        p(0, total);
    }
    loop {
        if let Some(stop) = stop_before_batch(opts, report) {
            report.stopped = Some(stop);
            return Ok(None);
        }
        while queue.len() < batch && next < pending.len() {
            let group = &pending[next..(next + READ_GROUP).min(pending.len())];
            next += group.len();
            for (file, texts) in load_texts(loc, store, group)? {
                match texts {
                    Some(texts) => {
                        let f = InFlight {
                            id: file.id,
                            hash: file.hash.clone(),
                            chunk_ids: texts.iter().map(|t| t.0).collect(),
                            data: Vec::with_capacity(texts.len() * stride),
                            left: texts.len(),
                        };
                        files.insert(file.id, f);
                        queue.extend(texts.into_iter().map(|(_, text)| (file.id, text)));
                    }
                    None => report.changed_files += 1,
                }
            }
        }
        if queue.is_empty() {
            return Ok(None);
        }
        let take: Vec<(i64, String)> = queue.drain(..batch.min(queue.len())).collect();
        let texts: Vec<&str> = take.iter().map(|(_, t)| t.as_str()).collect();
        let data = vectors.embed_documents(&texts);
        if let Some(reason) = vectors.failure() {
            return Ok(Some(reason));
        }
        let mut complete = Vec::new();
        for ((file_id, _), v) in take.iter().zip(data.chunks_exact(stride)) {
            let f = files.get_mut(file_id).expect("queued file");
            f.data.extend_from_slice(v);
            f.left -= 1;
            if f.left == 0 {
                complete.push(files.remove(file_id).expect("queued file"));
            }
        }
        let (added, current) = commit(loc, store, generation, vectors.spec(), &complete)?;
        report.embedded += added;
        report.batches += 1;
        done_chunks += take.len();
        if let Some(p) = opts.progress {
            p(done_chunks.min(total), total);
        }
        if let Some(hook) = opts.after_batch {
            hook();
        }
        if !current {
            report.stopped = Some(Stopped::NewerBuild);
            return Ok(None);
        }
    }
}

fn stop_before_batch(opts: &EmbedOptions, report: &EmbedReport) -> Option<Stopped> {
    if opts.cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
        Some(Stopped::Cancelled)
    } else if opts.deadline.is_some_and(|d| Instant::now() >= d) {
        Some(Stopped::Deadline)
    } else if opts.max_batches.is_some_and(|n| report.batches >= n as u64) {
        Some(Stopped::Batches)
    } else {
        None
    }
}

/// Indexed files with chunks and no vectors, newest first (mtime, then path).
fn pending_files(store: &Store) -> Result<Vec<PendingFile>> {
    let err = |e| sql_err(store.path(), e);
    let mut stmt = store
        .connection()
        .prepare(
            "SELECT f.id, f.path, f.hash FROM files f WHERE f.skip_reason IS NULL \
             AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.file_id = f.id) \
             AND EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = f.id) \
             ORDER BY f.mtime_ns DESC, f.path",
        )
        .map_err(err)?;
    let rows = stmt
        .query_map([], |r| {
            Ok(PendingFile {
                id: r.get(0)?,
                path: r.get(1)?,
                hash: r.get(2)?,
            })
        })
        .map_err(err)?;
    rows.collect::<rusqlite::Result<_>>().map_err(err)
}

fn chunks_of(store: &Store, files: &[PendingFile]) -> Result<usize> {
    let mut stmt = store
        .connection()
        .prepare_cached("SELECT COUNT(*) FROM chunks WHERE file_id = ?1")
        .map_err(|e| sql_err(store.path(), e))?;
    let mut n = 0usize;
    for f in files {
        n += stmt
            .query_row([f.id], |r| r.get::<_, i64>(0))
            .map_err(|e| sql_err(store.path(), e))? as usize;
    }
    Ok(n)
}

fn chunk_count(store: &Store) -> Result<u64> {
    store
        .connection()
        .query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get::<_, i64>(0))
        .map(|n| n as u64)
        .map_err(|e| sql_err(store.path(), e))
}

/// A file's chunk ids and the texts to embed for them, in chunk order.
type ChunkTexts = Vec<(i64, String)>;

/// A stored chunk: its id, the symbol it belongs to, its lines and bytes.
struct ChunkSpan {
    id: i64,
    symbol: Option<i64>,
    lines: (u32, u32),
    bytes: (usize, usize),
}

/// The chunk texts of each file of `group`, as the build embedded them
/// (`crate::vectors::chunk_text`), or `None` for a file that is no longer
/// what the index holds (changed or gone on disk, or its rows changed).
fn load_texts<'f>(
    loc: &IndexLocation,
    store: &Store,
    group: &'f [PendingFile],
) -> Result<Vec<(&'f PendingFile, Option<ChunkTexts>)>> {
    let err = |e| sql_err(store.path(), e);
    // Rows of one committed state: a build may commit between two statements.
    let tx = store.connection().unchecked_transaction().map_err(err)?;
    let mut rows = Vec::with_capacity(group.len());
    for f in group {
        let hash: Option<Vec<u8>> = tx
            .prepare_cached("SELECT hash FROM files WHERE id = ?1")
            .and_then(|mut s| s.query_row([f.id], |r| r.get(0)).optional())
            .map_err(err)?;
        if hash.as_deref() != Some(&f.hash[..]) {
            rows.push(None);
            continue;
        }
        let chunks: Vec<ChunkSpan> = tx
            .prepare_cached(
                "SELECT id, symbol, start_line, end_line, start_byte, end_byte FROM chunks \
                 WHERE file_id = ?1 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map([f.id], |r| {
                    Ok(ChunkSpan {
                        id: r.get(0)?,
                        symbol: r.get(1)?,
                        lines: (r.get(2)?, r.get(3)?),
                        bytes: (r.get::<_, i64>(4)? as usize, r.get::<_, i64>(5)? as usize),
                    })
                })?
                .collect()
            })
            .map_err(err)?;
        let symbols: Vec<(i64, String, u32)> = tx
            .prepare_cached(
                "SELECT id, name, start_line FROM symbols WHERE file_id = ?1 ORDER BY id",
            )
            .and_then(|mut s| {
                s.query_map([f.id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .map_err(err)?;
        rows.push(Some((chunks, symbols)));
    }
    drop(tx);
    Ok(group
        .par_iter()
        .zip(rows)
        .map(|(f, rows)| {
            let texts = rows.and_then(|(chunks, symbols)| {
                let bytes = std::fs::read(loc.root.join(&f.path)).ok()?;
                (blake3::hash(&bytes).as_bytes()[..] == f.hash[..]).then_some(())?;
                chunk_texts(&f.path, bytes, &chunks, &symbols)
            });
            (f, texts)
        })
        .collect())
}

/// The texts `build::prepare_content` embeds, from stored rows: a chunk's
/// names are its symbol's, then those of the symbols whose first line falls
/// in it (each in the first such chunk, as `lode_parse` assigns them).
fn chunk_texts(
    path: &str,
    bytes: Vec<u8>,
    chunks: &[ChunkSpan],
    symbols: &[(i64, String, u32)],
) -> Option<ChunkTexts> {
    let text = match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    let by_id: HashMap<i64, &str> = symbols.iter().map(|(id, n, _)| (*id, n.as_str())).collect();
    let mut defines: Vec<Vec<&str>> = vec![Vec::new(); chunks.len()];
    for (_, name, line) in symbols {
        if let Some(i) = chunks
            .iter()
            .position(|c| c.lines.0 <= *line && *line <= c.lines.1)
        {
            defines[i].push(name);
        }
    }
    chunks
        .iter()
        .zip(defines)
        .map(|(c, defined)| {
            let body = text.get(c.bytes.0..c.bytes.1)?;
            let mut names: Vec<&str> = c
                .symbol
                .and_then(|s| by_id.get(&s).copied())
                .into_iter()
                .collect();
            names.extend(defined);
            Some((
                c.id,
                crate::vectors::chunk_text(path, &names.join(" "), body),
            ))
        })
        .collect()
}

/// Stores a file's vectors — `data`, in the index's encoding, in the order
/// of `chunk_ids` — unless it has a row already (a newer phase wrote it);
/// whether it was stored. The one writer of the `vectors` row format, for
/// the phase and for a build that embeds inline.
pub(crate) fn insert_vector_row(
    tx: &rusqlite::Transaction,
    file_id: i64,
    chunk_ids: &[i64],
    data: &[u8],
) -> rusqlite::Result<bool> {
    let ids: Vec<u8> = chunk_ids.iter().flat_map(|id| id.to_le_bytes()).collect();
    let mut data = data.to_vec();
    crate::checksum::seal(&mut data, &ids);
    let inserted = tx
        .prepare_cached("INSERT OR IGNORE INTO vectors(file_id, ids, data) VALUES (?1, ?2, ?3)")?
        .execute(params![file_id, ids, data])?;
    Ok(inserted == 1)
}

/// The chunk ids of a `vectors` row's `ids` blob, in order.
pub(crate) fn vector_ids(ids: &[u8]) -> impl Iterator<Item = i64> + '_ {
    ids.chunks_exact(8)
        .map(|b| i64::from_le_bytes(b.try_into().expect("8 bytes")))
}

/// A file's `vectors` row as `(ids, data)`, if it has one, its check passed
/// (`data` without it).
pub(crate) fn file_vectors(
    conn: &rusqlite::Connection,
    file_id: i64,
) -> rusqlite::Result<Option<(Vec<u8>, Vec<u8>)>> {
    conn.prepare_cached("SELECT ids, data FROM vectors WHERE file_id = ?1")?
        .query_row([file_id], |r| {
            let (ids, data) = vector_columns(r)?;
            Ok((ids.to_vec(), data.to_vec()))
        })
        .optional()
}

/// A `vectors` row's `ids` and `data` blobs (its last two columns), the
/// check of `data` passed and cut off.
pub(crate) fn vector_columns<'r>(row: &'r rusqlite::Row) -> rusqlite::Result<(&'r [u8], &'r [u8])> {
    let n = row.as_ref().column_count();
    let ids = row.get_ref(n - 2)?.as_blob()?;
    let data = row.get_ref(n - 1)?.as_blob()?;
    Ok((ids, crate::checksum::open_column(data, ids, n - 1)?))
}

/// Writes the vectors of `files` that still match the index (same content
/// hash, same chunk ids, no vectors yet) in one transaction. Returns the
/// chunks added and whether the index is still the generation the phase
/// started from (else a newer build's state is there: stop).
fn commit(
    loc: &IndexLocation,
    store: &mut Store,
    generation: &str,
    spec: &VectorSpec,
    files: &[InFlight],
) -> Result<(u64, bool)> {
    if loc.current_db().as_deref() != Some(store.path()) {
        return Ok((0, false)); // a rebuild replaced this database
    }
    store.write(|tx| {
        let stored = meta::get(tx, Meta::Vectors)?;
        if stored.as_deref() != Some(spec.to_meta().as_str()) {
            return Ok((0, false)); // another model's index now: never mix them
        }
        let mut added = 0u64;
        for f in files {
            let hash: Option<Vec<u8>> = tx
                .prepare_cached("SELECT hash FROM files WHERE id = ?1 AND skip_reason IS NULL")?
                .query_row([f.id], |r| r.get(0))
                .optional()?;
            if hash.as_deref() != Some(&f.hash[..]) {
                continue;
            }
            let ids: Vec<i64> = tx
                .prepare_cached("SELECT id FROM chunks WHERE file_id = ?1 ORDER BY id")?
                .query_map([f.id], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            if ids != f.chunk_ids {
                continue;
            }
            if insert_vector_row(tx, f.id, &ids, &f.data)? {
                added += ids.len() as u64;
            }
        }
        let pending: u64 = meta::get(tx, Meta::VectorsPending)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let left = pending.saturating_sub(added).to_string();
        meta::set(tx, Meta::VectorsPending, &left)?;
        let now = meta::get(tx, Meta::Generation)?;
        Ok((added, now.as_deref() == Some(generation)))
    })
}

/// The server of the index's vectors failed: in one transaction every vector
/// goes and the built-in model's spec and fingerprint are stored, so no two
/// models' vectors ever meet; the phase then embeds with the built-in model.
fn switch_to_builtin(
    loc: &IndexLocation,
    store: &mut Store,
    opts: &EmbedOptions,
    generation: &str,
    reason: &str,
) -> Result<Option<Vectors>> {
    let builtin = crate::vectors::builtin_for(opts.config);
    (opts.note)(&format!(
        "embedding endpoint failed while indexing ({reason}); this build uses the built-in model"
    ));
    lode_diagnostics::note_fallback("embed");
    if loc.current_db().as_deref() != Some(store.path()) {
        return Ok(None); // a rebuild replaced this database
    }
    let fp = crate::build::fingerprint_with(opts.config, builtin.spec());
    let switched = store.write(|tx| {
        let now = meta::get(tx, Meta::Generation)?;
        if now.as_deref() != Some(generation) {
            return Ok(false); // a newer build decided the model since
        }
        tx.execute("DELETE FROM vectors", [])?;
        let chunks: i64 = tx.query_row("SELECT COUNT(*) FROM chunks", [], |r| r.get(0))?;
        meta::set(tx, Meta::Vectors, &builtin.spec().to_meta())?;
        meta::set(tx, Meta::Fingerprint, &fp)?;
        meta::set(tx, Meta::VectorsPending, &chunks.to_string())?;
        Ok(true)
    })?;
    Ok(switched.then_some(builtin))
}
