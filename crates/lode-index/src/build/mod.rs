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

mod basis;
mod prepare;
mod write;

pub(crate) use basis::manifest_and_walk;
pub(crate) use basis::walk_for;
pub use basis::{WalkBasis, walk_changed, walk_with};
use prepare::prepare;
pub(crate) use prepare::{Embed, Prepared, PreparedFile, prepare_content};
use write::{Writer, write_meta};

/// What a build is asked to do.
pub struct BuildOptions<'a> {
    /// The repository's configuration: file policy, languages, embedding;
    /// its [`fingerprint`] decides whether the index is rebuilt.
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
    /// Chunks in the index, of every file (not only those parsed now).
    pub chunks: u64,
    /// Symbols in the index, of every file (not only those parsed now).
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
    /// Wall time of the whole build in milliseconds, the embedding phase it
    /// ran included.
    pub elapsed_ms: f64,
    /// Why the index was built from scratch, if it was.
    pub rebuilt: Option<String>,
    /// The file list was proven from the last walk's snapshot by `stat` alone
    /// (no directory listed; see `lode_index::snapshot`).
    pub quick_walk: bool,
    /// The generation committed ([`Meta::Generation`]); the stored one when
    /// nothing needed writing.
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
    /// Walked files new to the index or whose size or mtime differs from its
    /// row; their content may still be the same (the build hashes them).
    pub changed: Vec<&'a WalkedFile>,
    /// Indexed files the walk no longer lists, as `(path, file id)`, in path
    /// order; always empty for a walk that lists only changed files.
    pub deleted: Vec<(String, i64)>,
}

impl StatDiff<'_> {
    /// Whether the tree is as indexed: nothing changed and nothing gone.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.deleted.is_empty()
    }
}

/// Compares `walk` with the index's file list by size and mtime alone: no
/// file is read or hashed (the build does that for the files it returns).
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
    let (manifest, walk) = manifest_and_walk_to_build(loc, opts, &store, walk, rebuilt.is_some())?;
    let diff = stat_diff(&walk, &manifest);
    let mut report = first_report(&diff, &manifest, &walk, &rebuilt);
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
    report.touched = (diff.changed.iter().map(|f| f.path.clone()))
        .chain(diff.deleted.iter().map(|(path, _)| path.clone()))
        .collect();
    let plan = Plan {
        loc,
        opts,
        selected: selected_languages(opts.config)?,
        // A small update with a model in this process embeds its chunks in its
        // own transaction: for an edit or two, a separate phase (its lock, its
        // transaction, the files read again) costs more than the embedding.
        // (Not when the caller leaves embedding for later: it asked for the lexical part.)
        inline: (rebuilt.is_none()
            && diff.changed.len() <= INLINE_EMBED_FILES
            && !vectors.spec().is_server()
            && !matches!(opts.embed, EmbedPhase::Later))
        .then_some(vectors),
        rebuilt: rebuilt.is_some(),
        generation: stored_generation(&store)? + 1,
    };
    let written = store.write(|tx| {
        // A small update counts its own files' rows before and after it.
        let delta_paths = (!plan.rebuilt && report.touched.len() <= crate::counts::DELTA_FILES)
            .then(|| report.touched.clone());
        let counted_before = match &delta_paths {
            Some(paths) => RowCounts::stored(tx)?
                .map(|total| Ok::<_, rusqlite::Error>((total, RowCounts::of_paths(tx, paths)?)))
                .transpose()?,
            None => None,
        };
        let mut writer = Writer::new(tx, &plan)?;
        writer.write_files(&diff, &manifest, &mut report)?;
        let sums = writer.lexical_sums(&mut report)?;
        let row_counts = match (counted_before, &delta_paths) {
            (Some((total, before)), Some(paths)) => {
                total.moved(&before, &RowCounts::of_paths(tx, paths)?)
            }
            _ => RowCounts::of_all(tx)?,
        };
        let built = Built {
            row_counts,
            sums,
            pending: writer.pending,
            unreadable: writer.unreadable,
        };
        write_meta(tx, &plan, &built, &fp, vectors, &walk, started)?;
        Ok(built)
    })?;

    if rebuilt.is_some() {
        store.checkpoint();
        loc.set_current(store.path())?;
        loc.remove_other_dbs(store.path());
    }
    fill_counts(
        &mut report,
        &written.row_counts,
        &walk.skipped,
        written.unreadable,
    );
    report.generation = plan.generation;
    report.elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok((report, written.pending))
}

/// The file list the build compares the walk with, and the walk: the
/// caller's, a full walk for a rebuild or a rescan, else the quickest walk
/// the index's snapshot allows (beside reading the file list).
fn manifest_and_walk_to_build<'m>(
    loc: &IndexLocation,
    opts: &BuildOptions<'m>,
    store: &Store,
    walk: Option<WalkReport>,
    rebuilding: bool,
) -> Result<(std::borrow::Cow<'m, Manifest>, WalkReport)> {
    use std::borrow::Cow;
    let kept = match opts.manifest {
        // (Under the writer lock: no other build can move the generation.)
        Some((kept, generation)) if !rebuilding && stored_generation(store)? == generation => {
            Some(kept)
        }
        _ => None,
    };
    let read_manifest = || -> Result<Cow<'m, Manifest>> {
        Ok(match kept {
            Some(kept) => Cow::Borrowed(kept),
            None => Cow::Owned(store.manifest()?),
        })
    };
    Ok(match walk {
        Some(walk) => (read_manifest()?, walk),
        None if rebuilding || opts.rescan => {
            (read_manifest()?, walk::walk(&loc.root, &opts.config.files)?)
        }
        None => match kept {
            Some(kept) => (
                Cow::Borrowed(kept),
                walk_for(&loc.root, store, kept, opts.config)?,
            ),
            // The stat pass over the directories overlaps reading the file list.
            None => {
                let (manifest, walk, ()) = manifest_and_walk(&loc.root, store, opts.config, || ())?;
                (Cow::Owned(manifest), walk)
            }
        },
    })
}

/// The report before anything is written: the files the stat pass found as
/// indexed count as unchanged without being read (those read and found the
/// same are added as they are met).
fn first_report(
    diff: &StatDiff,
    manifest: &Manifest,
    walk: &WalkReport,
    rebuilt: &Option<String>,
) -> BuildReport {
    let known_changed = diff
        .changed
        .iter()
        .filter(|f| manifest.contains_key(&f.path))
        .count();
    let untouched = manifest
        .len()
        .saturating_sub(known_changed + diff.deleted.len()) as u64;
    BuildReport {
        rebuilt: rebuilt.clone(),
        quick_walk: walk.snapshot.is_none(),
        unchanged: if rebuilt.is_some() { 0 } else { untouched },
        ..BuildReport::default()
    }
}

/// What a build that writes has decided before its transaction.
struct Plan<'a> {
    loc: &'a IndexLocation,
    opts: &'a BuildOptions<'a>,
    /// `index.languages`, when it names some.
    selected: Option<Vec<Language>>,
    /// The model that embeds a small update's chunks in its own transaction.
    inline: Option<&'a Vectors>,
    /// A new database: nothing in it to delete or to count from.
    rebuilt: bool,
    /// The generation this build commits.
    generation: u64,
}

/// What a build's transaction wrote, for the meta values and the report.
struct Built {
    row_counts: RowCounts,
    sums: LengthSums,
    /// Chunks without vectors after the build.
    pending: u64,
    unreadable: u64,
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
