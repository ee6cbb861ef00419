//! Building and updating an index: walk, compare, parse what changed, write
//! it in one transaction; then the embedding phase (`embed`) gives the new
//! chunks their vectors, as much of it as [`BuildOptions::embed`] asks.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use lode_core::{Config, Error, FileExtract, Language, Result};
use rayon::prelude::*;
use rusqlite::{OptionalExtension, Transaction, params};
use serde::Serialize;

use crate::counts::RowCounts;
use crate::embed::{EmbedOptions, EmbedPhase, EmbedReport};
use crate::lexical::{ChunkTerms, FieldCounts, LengthSums, PendingPostings};
use crate::location::{IndexLocation, WriterLock};
use crate::meta::{self, Meta};
use crate::store::{Manifest, ManifestEntry, SCHEMA_VERSION, Store};
use crate::tokens;
use crate::vectors::{VectorChange, VectorSpec, Vectors};
use lode_walk::{self as walk, SkipReason, WalkReport, WalkedFile};

/// Files parsed per batch: bounds the memory of a large first build.
const BATCH: usize = 256;

/// What a build is asked to do.
pub struct BuildOptions<'a> {
    pub config: &'a Config,
    /// Wait for another writer instead of failing with [`Error::Locked`].
    pub wait_for_lock: bool,
    /// Progress: `(files done, files to parse)`.
    pub progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// One-line notes for the user (waiting on a lock, why a rebuild happens).
    pub note: &'a dyn Fn(&str),
    /// Walk the whole tree even when the snapshot proves it unchanged.
    pub rescan: bool,
    /// How much of the embedding phase runs before the build returns.
    pub embed: EmbedPhase,
    /// Embedding progress: `(chunks embedded, chunks to embed)`.
    pub embed_progress: Option<&'a (dyn Fn(usize, usize) + Sync)>,
    /// The file list a long-lived reader holds, with the build generation
    /// it is of: used instead of reading every file row again when the index
    /// is still at that generation.
    pub manifest: Option<(&'a Manifest, u64)>,
}

impl<'a> BuildOptions<'a> {
    /// A build that fails rather than waits on a lock, and reports nothing on the way.
    pub fn quiet(config: &'a Config) -> BuildOptions<'a> {
        BuildOptions {
            config,
            wait_for_lock: false,
            progress: None,
            note: &|_| {},
            rescan: false,
            embed: EmbedPhase::Complete,
            manifest: None,
            embed_progress: None,
        }
    }
}

/// What a build did, and the totals of the index after it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BuildReport {
    /// Files in the index.
    pub files: u64,
    pub chunks: u64,
    pub symbols: u64,
    /// Files read and parsed by this build.
    pub parsed: u64,
    /// Files whose content was unchanged.
    pub unchanged: u64,
    /// Files removed from the index.
    pub deleted: u64,
    /// Skipped files by reason.
    pub skipped: BTreeMap<String, u64>,
    /// Files indexed with invalid UTF-8 replaced.
    pub lossy_utf8: u64,
    /// Files with syntax errors (what could be read was kept).
    pub parse_errors: u64,
    /// Files the grammar could not parse at all, indexed as text.
    pub parse_failed: u64,
    pub elapsed_ms: f64,
    /// Why the index was built from scratch, if it was.
    pub rebuilt: Option<String>,
    /// The file list was proven from the last walk's snapshot by `stat` alone
    /// (no directory listed; see `lode_index::snapshot`).
    pub quick_walk: bool,
    pub generation: u64,
    /// The paths whose rows this build wrote or removed (a reader that keeps
    /// decoded state across builds re-reads these; see `Index::adopt_vectors`).
    #[serde(skip)]
    pub touched: Vec<String>,
    /// The terms whose postings this build rewrote (`None` after a rebuild:
    /// every term).
    #[serde(skip)]
    pub touched_terms: Option<Vec<String>>,
    /// The embedding phase that followed, when the build ran one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embedding: Option<EmbedReport>,
}

/// The fingerprint of everything that decides an index's content besides the
/// files, with the vectors `config` asks for (no server is contacted).
pub fn fingerprint(config: &Config) -> String {
    fingerprint_with(config, &crate::vectors::intended(config))
}

/// As [`fingerprint`], for vectors of `spec` (what a build actually writes).
pub(crate) fn fingerprint_with(config: &Config, spec: &VectorSpec) -> String {
    let text = format!(
        "lode={};schema={SCHEMA_VERSION};extract={};vectors={};{}",
        lode_core::LODE_VERSION,
        lode_parse::EXTRACT_VERSION,
        spec.fingerprint(),
        config.fingerprint_text()
    );
    blake3::hash(text.as_bytes()).to_hex()[..32].to_string()
}

/// Which walked files differ from the index by size or modification time,
/// and which indexed files are gone.
pub struct StatDiff<'a> {
    pub changed: Vec<&'a WalkedFile>,
    pub deleted: Vec<(String, i64)>,
}

impl StatDiff<'_> {
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.deleted.is_empty()
    }
}

pub fn stat_diff<'a>(walk: &'a WalkReport, manifest: &Manifest) -> StatDiff<'a> {
    let mut known = 0;
    let changed = walk
        .files
        .iter()
        .filter(|f| match manifest.get(&f.path) {
            Some(m) => {
                known += 1;
                m.size != f.size || m.mtime_ns != f.mtime_ns
            }
            None => true,
        })
        .collect();
    if known == manifest.len() || walk.only_changed {
        // Every indexed path was walked (a walk lists a path once), or the
        // others are known unchanged: none is gone.
        return StatDiff {
            changed,
            deleted: Vec::new(),
        };
    }
    let present: std::collections::HashSet<&str> =
        walk.files.iter().map(|f| f.path.as_str()).collect();
    let mut deleted: Vec<(String, i64)> = manifest
        .iter()
        .filter(|(p, _)| !present.contains(p.as_str()))
        .map(|(p, m)| (p.clone(), m.id))
        .collect();
    deleted.sort();
    StatDiff { changed, deleted }
}

/// Builds the index of `loc` or brings it up to date.
pub fn build(loc: &IndexLocation, opts: &BuildOptions) -> Result<BuildReport> {
    build_with_walk(loc, opts, None)
}

/// As [`build`], reusing a walk the caller already made.
pub fn build_with_walk(
    loc: &IndexLocation,
    opts: &BuildOptions,
    walk: Option<WalkReport>,
) -> Result<BuildReport> {
    let started = Instant::now();
    let _lock = WriterLock::acquire(loc, opts.wait_for_lock, &|pid| {
        (opts.note)(&format!(
            "waiting for lode process {pid}, which is indexing {}",
            loc.root.display()
        ))
    })?;
    loc.remove_stale_dbs();
    let vectors = crate::vectors::for_build(opts.config);
    if let Some(note) = vectors.fallback_note() {
        (opts.note)(note);
    }
    let (mut report, pending) = match build_once(loc, opts, walk, &vectors, started, None) {
        // Unreadable past its open (a table or a row, not the header): built
        // again from scratch, as an index unreadable when opened is.
        Err(Error::IndexCorrupt { reason, .. }) => {
            let reason = format!("the previous index is unreadable ({reason})");
            build_once(loc, opts, None, &vectors, started, Some(reason))?
        }
        built => built?,
    };
    // The writer lock goes before the embedding phase: a newer build must
    // not wait for it (it stops the phase instead; see `embed`).
    drop(_lock);
    if pending == 0 {
        // Every chunk has its vector (an update embedded in its transaction).
        report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        return Ok(report);
    }
    let phase = |deadline| EmbedOptions {
        deadline,
        progress: opts.embed_progress,
        note: opts.note,
        ..EmbedOptions::new(opts.config)
    };
    report.embedding = match opts.embed {
        EmbedPhase::Later => None,
        EmbedPhase::Complete => Some(crate::embed::embed(loc, &phase(None), Some(&vectors))?),
        EmbedPhase::Within(budget) => {
            let mut o = phase(Some(Instant::now() + budget));
            o.wait = false; // another phase is at it already
            // A query answers from what is committed even if the phase fails.
            crate::embed::embed(loc, &o, Some(&vectors))
                .inspect_err(|e| (opts.note)(&format!("embedding stopped: {e}")))
                .ok()
        }
    };
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(report)
}

/// Updates of at most this many files embed their chunks in the build's own
/// transaction when the model runs in this process (not a server, whose
/// requests may take their whole deadline); larger ones leave it to the
/// embedding phase, so that a query need not wait for a cold build's vectors.
const INLINE_EMBED_FILES: usize = 32;

/// The lexical phase of a build: files, chunks, symbols, calls, imports and
/// postings in one transaction, chunks without vectors (`vectors` decides
/// the spec and fingerprint written).
fn build_once(
    loc: &IndexLocation,
    opts: &BuildOptions,
    walk: Option<WalkReport>,
    vectors: &Vectors,
    started: Instant,
    rebuild: Option<String>,
) -> Result<(BuildReport, u64)> {
    let fp = fingerprint_with(opts.config, vectors.spec());
    let (mut store, rebuilt) = match rebuild {
        Some(reason) => (create_fresh(loc)?, Some(reason)),
        None => open_or_create(loc, &fp, vectors.spec())?,
    };
    if let Some(reason) = &rebuilt
        && reason != "first build"
    {
        (opts.note)(&format!("rebuilding the index: {reason}"));
    }
    let kept = match opts.manifest {
        // (Under the writer lock: no other build can move the generation.)
        Some((kept, generation))
            if rebuilt.is_none() && stored_generation(&store)? == generation =>
        {
            Some(kept)
        }
        _ => None,
    };
    let read_manifest = || -> Result<std::borrow::Cow<'_, Manifest>> {
        Ok(match kept {
            Some(kept) => std::borrow::Cow::Borrowed(kept),
            None => std::borrow::Cow::Owned(store.manifest()?),
        })
    };
    let (manifest, walk) = match walk {
        Some(walk) => (read_manifest()?, walk),
        None if rebuilt.is_some() || opts.rescan => {
            (read_manifest()?, walk::walk(&loc.root, &opts.config.files)?)
        }
        None => match kept {
            Some(kept) => (
                std::borrow::Cow::Borrowed(kept),
                walk_for(&loc.root, &store, kept, opts.config)?,
            ),
            // The stat pass over the directories overlaps reading the file list.
            None => {
                let (manifest, walk, ()) =
                    manifest_and_walk(&loc.root, &store, opts.config, || ())?;
                (std::borrow::Cow::Owned(manifest), walk)
            }
        },
    };
    let diff = stat_diff(&walk, &manifest);

    // Files the stat pass found as indexed: unchanged without being read
    // (those read and found the same are added as they are met).
    let known_changed = diff
        .changed
        .iter()
        .filter(|f| manifest.contains_key(&f.path))
        .count();
    let untouched = manifest
        .len()
        .saturating_sub(known_changed + diff.deleted.len()) as u64;
    let mut report = BuildReport {
        rebuilt: rebuilt.clone(),
        quick_walk: walk.snapshot.is_none(),
        unchanged: if rebuilt.is_some() { 0 } else { untouched },
        ..BuildReport::default()
    };
    // Nothing to write: the tree is as indexed, proven by the snapshot (a
    // full walk records a new one). No commit, so the generation stays and
    // readers keep what they decoded.
    if rebuilt.is_none() && diff.is_empty() && walk.snapshot.is_none() && !opts.rescan {
        let stored = RowCounts::stored(store.connection())
            .map_err(|e| crate::store::sql_err(store.path(), e))?;
        if let Some(counts) = stored {
            fill_counts(&mut report, &counts, &walk.skipped, 0);
            report.generation = stored_generation(&store)?;
            report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
            return Ok((report, crate::embed::pending_chunks(&store)?));
        }
    }
    let total = diff.changed.len();
    report.touched = (diff.changed.iter().map(|f| f.path.clone()))
        .chain(diff.deleted.iter().map(|(path, _)| path.clone()))
        .collect();
    let selected = selected_languages(opts.config)?;
    let vendored = opts.config.files.vendored;
    // A small update with a model in this process embeds its chunks in its
    // own transaction: for an edit or two, a separate phase (its lock, its
    // transaction, the files read again) costs more than the embedding.
    // (Not when the caller leaves embedding for later: it asked for the lexical part.)
    let inline = (rebuilt.is_none()
        && total <= INLINE_EMBED_FILES
        && !vectors.spec().is_server()
        && !matches!(opts.embed, EmbedPhase::Later))
    .then_some(vectors);
    let mut unreadable = 0u64;
    let previous_generation = stored_generation(&store)?;
    let generation = previous_generation + 1;

    let mut pending_after = 0u64;
    // A small update counts its own files' rows before and after it.
    let delta_paths = (rebuilt.is_none() && report.touched.len() <= crate::counts::DELTA_FILES)
        .then(|| report.touched.clone());
    let mut row_counts = RowCounts::default();
    store.write(|tx| {
        let counted_before = match &delta_paths {
            Some(paths) => RowCounts::stored(tx)?
                .map(|total| Ok::<_, rusqlite::Error>((total, RowCounts::of_paths(tx, paths)?)))
                .transpose()?,
            None => None,
        };
        let mut postings = PendingPostings::default();
        // Chunks without vectors, moved by this build's delta (kept exact:
        // the embedding phase and the readers go by it).
        let mut pending: u64 = match &rebuilt {
            None => meta::get(tx, Meta::VectorsPending)?
                .and_then(|v| v.parse().ok())
                .unwrap_or(0),
            Some(_) => 0,
        };
        for (_, id) in &diff.deleted {
            pending = pending.saturating_sub(delete_file(tx, *id, &mut postings)?);
            report.deleted += 1;
        }
        let mut done = 0usize;
        // Parsing the next batch overlaps writing this one: a producer thread
        // prepares batches in parallel, this thread writes them in order.
        let (sender, batches) = std::sync::mpsc::sync_channel::<Vec<Prepared>>(1);
        let (changed, manifest_ref, selected_ref) = (&diff.changed, &manifest, &selected);
        std::thread::scope(|scope| -> rusqlite::Result<()> {
        scope.spawn(move || {
            for batch in changed.chunks(BATCH) {
                let prepared: Vec<Prepared> =
                    batch.par_iter().map(|f| prepare(&loc.root, f, manifest_ref.get(&f.path), selected_ref, vendored, inline)).collect();
                if sender.send(prepared).is_err() {
                    break; // the writer stopped on an error
                }
            }
        });
        for (batch, prepared) in diff.changed.chunks(BATCH).zip(batches) {
            for (file, p) in batch.iter().zip(prepared) {
                let prev = manifest.get(&file.path);
                match p {
                    Prepared::Unreadable => {
                        unreadable += 1;
                        if let Some(m) = prev {
                            pending = pending.saturating_sub(delete_file(tx, m.id, &mut postings)?);
                        }
                    }
                    Prepared::Unchanged => {
                        tx.prepare_cached(
                            "UPDATE files SET size = ?1, mtime_ns = ?2 WHERE path = ?3",
                        )?
                        .execute(params![
                            file.size as i64,
                            file.mtime_ns,
                            file.path
                        ])?;
                        report.unchanged += 1;
                    }
                    Prepared::Skip { hash, reason, lang } => {
                        if let Some(m) = prev {
                            pending = pending.saturating_sub(delete_file(tx, m.id, &mut postings)?);
                        }
                        insert_file_row(
                            tx,
                            file,
                            &hash,
                            lang,
                            0,
                            Some(reason),
                            (false, false, false),
                        )?;
                    }
                    Prepared::Index(pf) => {
                        let embedded = match prev {
                            Some(m) => {
                                let (embedded, old_pending) =
                                    replace_indexed(tx, file, m.id, &pf, &mut postings, inline)?;
                                pending = pending.saturating_sub(old_pending);
                                embedded
                            }
                            None => insert_indexed(tx, file, &pf, &mut postings)?,
                        };
                        if !embedded {
                            pending += pf.extract.chunks.len() as u64;
                        }
                        report.parsed += 1;
                    }
                }
            }
            done += batch.len();
            if let Some(p) = opts.progress {
                p(done, total);
            }
        }
        Ok(())
        })?;
        // The collection's lengths move by this build's delta; a new database
        // (or one without the sums) counts them once.
        let delta = postings.length_delta();
        let terms = postings.write(tx)?;
        if rebuilt.is_none() {
            report.touched_terms = Some(terms);
        }
        let previous = match &rebuilt {
            None => meta::get(tx, Meta::LexicalSums)?
                .and_then(|v| LengthSums::from_meta(&v)),
            Some(_) => None,
        };
        let sums = match previous {
            Some(p) => p.plus(delta),
            None => tx.query_row(
                "SELECT COUNT(*), COALESCE(SUM(len_name), 0), COALESCE(SUM(len_path), 0), COALESCE(SUM(len_body), 0) FROM chunks",
                [],
                |r| Ok(LengthSums { chunks: r.get(0)?, len: [r.get(1)?, r.get(2)?, r.get(3)?] }),
            )?,
        };
        let walk_skipped: BTreeMap<&str, u64> =
            walk.skipped.iter().map(|(r, n)| (r.as_str(), *n)).collect();
        let set = |k: Meta, v: &str| meta::set(tx, k, v);
        row_counts = match (counted_before, &delta_paths) {
            (Some((total, before)), Some(paths)) => {
                total.moved(&before, &RowCounts::of_paths(tx, paths)?)
            }
            _ => RowCounts::of_all(tx)?,
        };
        set(Meta::RowCounts, &row_counts.to_meta())?;
        set(Meta::LexicalSums, &sums.to_meta())?;
        set(Meta::VectorsPending, &pending.to_string())?;
        pending_after = pending;
        if let Some(snapshot) = &walk.snapshot {
            set(Meta::WalkSnapshot, &snapshot.to_json())?;
        }
        set(Meta::Fingerprint, &fp)?;
        set(Meta::Vectors, &vectors.spec().to_meta())?;
        set(Meta::QueryPrefix, &crate::vectors::query_prefix())?;
        set(Meta::LodeVersion, lode_core::LODE_VERSION)?;
        set(Meta::Root, &loc.root.to_string_lossy())?;
        set(Meta::Generation, &generation.to_string())?;
        set(
            Meta::WalkSkipped,
            &serde_json::to_string(&walk_skipped).unwrap_or_default(),
        )?;
        set(Meta::Unreadable, &unreadable.to_string())?;
        set(Meta::BuiltAt, &unix_now().to_string())?;
        set(
            Meta::BuildMs,
            &format!("{:.1}", started.elapsed().as_secs_f64() * 1000.0),
        )?;
        Ok(())
    })?;

    if rebuilt.is_some() {
        store.checkpoint();
        loc.set_current(store.path())?;
        loc.remove_other_dbs(store.path());
    }
    fill_counts(&mut report, &row_counts, &walk.skipped, unreadable);
    report.generation = generation;
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((report, pending_after))
}

/// The walk of an index's tree: proven from its snapshot by `stat` alone when
/// nothing but file contents changed (see [`lode_walk::snapshot`]), else a full walk.
pub fn walk_for(
    root: &std::path::Path,
    store: &Store,
    manifest: &Manifest,
    config: &Config,
) -> Result<WalkReport> {
    let basis = WalkBasis::load(store)?;
    walk_with(root, basis.as_ref(), manifest, config)
}

/// `store`'s file list and the walk [`walk_for`] makes, overlapped: the
/// stat pass over the directories needs no file list, so it runs on another
/// thread while the list is read (on terraform the list alone is 7.5 ms of CPU).
/// `beside` runs on this thread once the list
/// is read, while the indexed files are `stat`ed (a query that may stand if
/// nothing changed).
pub(crate) fn manifest_and_walk<T>(
    root: &std::path::Path,
    store: &Store,
    config: &Config,
    beside: impl FnOnce() -> T,
) -> Result<(Manifest, WalkReport, T)> {
    let Some(basis) = WalkBasis::load(store)? else {
        let manifest = store.manifest()?;
        let walked = std::thread::scope(|s| {
            let walk = s.spawn(|| walk::walk(root, &config.files));
            let answer = beside();
            (join(walk), answer)
        });
        return Ok((manifest, walked.0?, walked.1));
    };
    // `None` in the cell: the list could not be read (the walk gives up).
    let listed: std::sync::OnceLock<Option<Manifest>> = std::sync::OnceLock::new();
    let (walked, manifest, answer) = std::thread::scope(|s| {
        let walk = s.spawn(|| {
            if !lode_walk::snapshot::same_tree(root, &basis.snapshot) {
                return walk::walk(root, &config.files).map(Some);
            }
            let Some(manifest) = listed.wait() else {
                return Ok(None);
            };
            let max = config.files.max_file_size;
            match lode_walk::snapshot::stat_indexed(root, manifest, max, basis.skipped.clone()) {
                Some(report) => Ok(Some(report)),
                None => walk::walk(root, &config.files).map(Some),
            }
        });
        let (manifest, failed) = match store.manifest() {
            Ok(m) => (Some(m), None),
            Err(e) => (None, Some(e)),
        };
        let _ = listed.set(manifest);
        let answer = failed.is_none().then(beside);
        (join(walk), failed, answer)
    });
    if let Some(e) = manifest {
        return Err(e);
    }
    let manifest = listed
        .into_inner()
        .flatten()
        .expect("the file list was read");
    let walked = walked?.expect("the file list was read");
    Ok((manifest, walked, answer.expect("the file list was read")))
}

fn join<T>(handle: std::thread::ScopedJoinHandle<'_, T>) -> T {
    handle
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// As [`walk_for`], with the snapshot already read (a long-lived reader keeps it).
pub fn walk_with(
    root: &std::path::Path,
    basis: Option<&WalkBasis>,
    manifest: &Manifest,
    config: &Config,
) -> Result<WalkReport> {
    if let Some(basis) = basis
        && let Some(report) = lode_walk::snapshot::quick_walk(
            root,
            &basis.snapshot,
            manifest,
            config.files.max_file_size,
            basis.skipped.clone(),
        )
    {
        return Ok(report);
    }
    walk::walk(root, &config.files)
}

/// As [`walk_with`], when a file watcher knows that nothing but the files at
/// `changed` (root-relative) was written since `manifest`, and only in place:
/// no `stat` of any other file. `None` when a walk must decide (see
/// [`lode_walk::snapshot::changed_walk`]).
pub fn walk_changed(
    root: &std::path::Path,
    basis: &WalkBasis,
    manifest: &Manifest,
    changed: &[String],
    config: &Config,
) -> Option<WalkReport> {
    lode_walk::snapshot::changed_walk(
        root,
        &basis.snapshot,
        manifest,
        changed,
        config.files.max_file_size,
        basis.skipped.clone(),
    )
}

/// What the last full walk recorded, when a quick walk may rely on it.
#[derive(Clone, Debug)]
pub struct WalkBasis {
    snapshot: lode_walk::snapshot::Snapshot,
    skipped: BTreeMap<SkipReason, u64>,
}

impl WalkBasis {
    /// The directories the last full walk entered, root-relative (`""`: the root).
    pub fn dirs(&self) -> impl Iterator<Item = &str> {
        self.snapshot.dirs.iter().map(|(d, _)| d.as_str())
    }

    /// The store's snapshot, or `None` when there is none or a full walk is
    /// needed anyway: entries the walk or the build could not read are not
    /// in the manifest, and a stat of what is cannot see them come back (a
    /// link's target appearing in a directory the walk never entered).
    pub fn load(store: &Store) -> Result<Option<WalkBasis>> {
        if !matches!(store.meta(Meta::Unreadable)?.as_deref(), None | Some("0")) {
            return Ok(None);
        }
        let snapshot = store
            .meta(Meta::WalkSnapshot)?
            .and_then(|t| lode_walk::snapshot::Snapshot::from_json(&t));
        let skipped: Option<BTreeMap<SkipReason, u64>> = store
            .meta(Meta::WalkSkipped)?
            .and_then(|t| serde_json::from_str(&t).ok());
        let skipped = skipped.filter(|s| s.get(&SkipReason::Unreadable).is_none_or(|&n| n == 0));
        Ok(snapshot
            .zip(skipped)
            .map(|(snapshot, skipped)| WalkBasis { snapshot, skipped }))
    }
}

fn open_or_create(
    loc: &IndexLocation,
    fp: &str,
    spec: &VectorSpec,
) -> Result<(Store, Option<String>)> {
    if let Some(damage) = loc.damaged() {
        return Ok((
            create_fresh(loc)?,
            Some(format!("the index was damaged ({damage})")),
        ));
    }
    let reason = match loc.current_db() {
        None => "first build".to_string(),
        Some(path) => match Store::open_any_schema(&path).and_then(|s| {
            let version = s.schema_version()?;
            Ok((s, version))
        }) {
            Ok((_, None)) => "the previous index is unreadable (no schema version)".to_string(),
            Ok((_, Some(v))) if v != SCHEMA_VERSION.to_string() => {
                format!("it was written with index schema {v}, this lode uses {SCHEMA_VERSION}")
            }
            Ok((store, Some(_))) => {
                let old_fp = store.meta(Meta::Fingerprint)?.unwrap_or_default();
                let old_vectors = store.meta(Meta::Vectors)?.unwrap_or_default();
                // The whole spec too: a server's dimension is not in the fingerprint.
                if old_fp == fp && old_vectors == spec.to_meta() {
                    return Ok((store, None));
                }
                let old_version = store.meta(Meta::LodeVersion)?.unwrap_or_default();
                if old_version != lode_core::LODE_VERSION {
                    format!(
                        "it was written by lode {old_version}, this is {}",
                        lode_core::LODE_VERSION
                    )
                } else if old_vectors != spec.to_meta() {
                    let stored = VectorSpec::parse(&old_vectors);
                    let change = VectorChange::between(stored.as_ref(), "", spec, "");
                    format!(
                        "the embedding settings changed ({})",
                        change.changed.join(", ")
                    )
                } else {
                    "the configuration or extraction rules changed".to_string()
                }
            }
            Err(Error::CacheUnwritable { path, reason }) => {
                return Err(Error::CacheUnwritable { path, reason });
            }
            Err(e) => format!("the previous index is unreadable ({e})"),
        },
    };
    Ok((create_fresh(loc)?, Some(reason)))
}

/// A new, empty database beside the current one (it becomes `CURRENT` when
/// its build commits).
fn create_fresh(loc: &IndexLocation) -> Result<Store> {
    let path = loc.fresh_db_path();
    let _ = std::fs::remove_file(&path);
    Store::create(&path)
}

pub(crate) fn selected_languages(config: &Config) -> Result<Option<Vec<Language>>> {
    if config.index.languages.is_empty() {
        return Ok(None);
    }
    config
        .index
        .languages
        .iter()
        .map(|name| {
            Language::from_name(name).ok_or_else(|| {
                Error::BadConfig(format!("unknown language {name:?} in index.languages"))
            })
        })
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

pub(crate) struct PreparedFile {
    hash: [u8; 32],
    pub(crate) lang: Language,
    pub(crate) lines: u32,
    lossy: bool,
    pub(crate) extract: FileExtract,
    /// Per chunk, its terms by field.
    pub(crate) chunk_terms: Vec<ChunkTerms>,
    /// Per chunk, the hash of what its postings and vector are made of (see
    /// [`chunk_key`]).
    keys: Vec<i64>,
    /// The chunks' vectors, stored form, concatenated in chunk order (an
    /// overlay's; a build embeds after its commit).
    pub(crate) vectors: Vec<u8>,
    /// The chunks' texts, when embedding waits for the writer: a changed
    /// file's unchanged chunks keep their vectors, only new ones are embedded.
    texts: Vec<String>,
}

pub(crate) enum Prepared {
    Unreadable,
    Unchanged,
    Skip {
        hash: [u8; 32],
        reason: SkipReason,
        lang: Language,
    },
    Index(Box<PreparedFile>),
}

fn prepare(
    root: &std::path::Path,
    file: &WalkedFile,
    prev: Option<&ManifestEntry>,
    selected: &Option<Vec<Language>>,
    vendored: bool,
    inline: Option<&Vectors>,
) -> Prepared {
    let Ok(bytes) = std::fs::read(root.join(&file.path)) else {
        return Prepared::Unreadable;
    };
    let hash: [u8; 32] = *blake3::hash(&bytes).as_bytes();
    if prev.is_some_and(|m| m.hash == hash) {
        return Prepared::Unchanged;
    }
    // Chunks are embedded after the commit (see `embed`), unless `inline`.
    // A changed file's chunks are embedded by the writer, the new ones only.
    let embed = match (inline, prev) {
        (Some(_), Some(_)) => Embed::Writer,
        (Some(v), None) => Embed::Now(v),
        (None, _) => Embed::No,
    };
    prepare_content(&file.path, bytes, hash, selected, vendored, embed)
}

/// What the indexer makes of a file's content (read from disk, or given by
/// an overlay): skipped for a reason, or parsed, tokenized and, with
/// `vectors` (an overlay), embedded.
pub(crate) fn prepare_content(
    path: &str,
    bytes: Vec<u8>,
    hash: [u8; 32],
    selected: &Option<Vec<Language>>,
    vendored: bool,
    embed: Embed,
) -> Prepared {
    let lang = lode_parse::detect(std::path::Path::new(path), &bytes[..bytes.len().min(512)]);
    if let Some(reason) = walk::content_reason(&bytes, vendored) {
        return Prepared::Skip { hash, reason, lang };
    }
    if selected
        .as_ref()
        .is_some_and(|langs| !langs.iter().any(|l| l.family() == lang.family()))
    {
        return Prepared::Skip {
            hash,
            reason: SkipReason::LanguageNotSelected,
            lang,
        };
    }
    let (text, lossy) = match String::from_utf8(bytes) {
        Ok(s) => (s, false),
        Err(e) => (String::from_utf8_lossy(e.as_bytes()).into_owned(), true),
    };
    let extract = lode_parse::extract(lang, &text);
    let lines = lode_parse::LineIndex::new(&text).line_count();
    let path_tokens = tokens::index_text(path);
    let (chunk_terms, keys): (Vec<ChunkTerms>, Vec<i64>) = extract
        .chunks
        .iter()
        .map(|c| {
            let mut names = String::new();
            for &s in c.symbol.iter().chain(c.defines.iter()) {
                names.push_str(&extract.symbols[s as usize].name);
                names.push(' ');
            }
            let body = &text[c.span.start_byte as usize..c.span.end_byte as usize];
            (
                ChunkTerms::from_text(&names, &path_tokens, body),
                chunk_key(&names, body),
            )
        })
        .unzip();
    // (`embed::chunk_texts` rebuilds these from the index's rows: keep them alike.)
    let texts: Vec<String> = extract
        .chunks
        .iter()
        .filter(|_| !matches!(embed, Embed::No))
        .map(|c| {
            let names: Vec<&str> = c
                .symbol
                .iter()
                .chain(c.defines.iter())
                .map(|&s| extract.symbols[s as usize].name.as_str())
                .collect();
            let body = &text[c.span.start_byte as usize..c.span.end_byte as usize];
            crate::vectors::chunk_text(path, &names.join(" "), body)
        })
        .collect();
    let (vectors, texts) = match embed {
        Embed::Now(v) => (
            v.embed_documents(&texts.iter().map(String::as_str).collect::<Vec<_>>()),
            Vec::new(),
        ),
        Embed::Writer => (Vec::new(), texts),
        Embed::No => (Vec::new(), Vec::new()),
    };
    Prepared::Index(Box::new(PreparedFile {
        hash,
        lang,
        lines,
        lossy,
        chunk_terms,
        keys,
        vectors,
        texts,
        extract,
    }))
}

/// When a prepared file's chunks are embedded.
#[derive(Clone, Copy)]
pub(crate) enum Embed<'a> {
    /// Not in the build (the embedding phase does it).
    No,
    /// While preparing the file.
    Now(&'a Vectors),
    /// By the writer, once it knows which chunks are new (a changed file's).
    Writer,
}

/// What a chunk's postings and vector are made of — the names it defines
/// and its body (the path is the file's) — hashed. An update keeps the id,
/// and so the postings, of a chunk whose key is unchanged.
fn chunk_key(names: &str, body: &str) -> i64 {
    let mut h = blake3::Hasher::new();
    h.update(names.as_bytes());
    h.update(&[0]);
    h.update(body.as_bytes());
    i64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

/// A file's chunks as stored: id, key and field lengths, in id order.
fn stored_chunks(tx: &Transaction, file_id: i64) -> rusqlite::Result<Vec<(i64, i64, FieldCounts)>> {
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
fn remove_chunk(
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
fn delete_file_rows(tx: &Transaction, file_id: i64) -> rusqlite::Result<bool> {
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
fn delete_file(tx: &Transaction, id: i64, postings: &mut PendingPostings) -> rusqlite::Result<u64> {
    let chunks = stored_chunks(tx, id)?;
    for &(chunk, _, len) in &chunks {
        remove_chunk(tx, (chunk, len), postings)?;
    }
    let embedded = delete_file_rows(tx, id)?;
    tx.prepare_cached("DELETE FROM files WHERE id = ?1")?
        .execute([id])?;
    Ok(if embedded { 0 } else { chunks.len() as u64 })
}

/// A report's counts as `reader::stats` counts them, without a scan of
/// every row: the tables' (kept in meta), the walk's skipped files and the
/// files this build could not read.
fn fill_counts(
    report: &mut BuildReport,
    rows: &RowCounts,
    walk_skipped: &BTreeMap<SkipReason, u64>,
    unreadable: u64,
) {
    let count = |n: i64| n.max(0) as u64;
    report.files = count(rows.files);
    report.chunks = count(rows.chunks);
    report.symbols = count(rows.symbols);
    report.lossy_utf8 = count(rows.lossy_utf8);
    report.parse_errors = count(rows.parse_errors);
    report.parse_failed = count(rows.parse_failed);
    report.skipped = (rows.skipped.iter())
        .map(|(reason, n)| (reason.clone(), count(*n)))
        .collect();
    for (reason, n) in walk_skipped {
        *report
            .skipped
            .entry(reason.as_str().to_string())
            .or_default() += n;
    }
    if unreadable > 0 {
        *report.skipped.entry("unreadable".into()).or_default() += unreadable;
    }
}

/// The generation of the last build committed to `store` (0: none).
fn stored_generation(store: &Store) -> Result<u64> {
    Ok(store
        .meta(Meta::Generation)?
        .and_then(|g| g.parse().ok())
        .unwrap_or(0))
}

fn insert_file_row(
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
fn insert_indexed(
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
fn replace_indexed(
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
fn stored_vectors(
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
fn kept_and_new_vectors(
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
fn insert_relations(
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
fn insert_chunk(
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

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
