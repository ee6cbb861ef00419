//! The embedding phase: a build commits its chunks first, the phase gives
//! them vectors batch by batch, newest files first; it stops between batches
//! and the next one resumes; a vector never outlives its chunk.

use std::collections::BTreeMap;
use std::fs;
use std::time::{Duration, SystemTime};

use crate::common::Fixture;
use lode_index::{
    BuildOptions, EmbedOptions, EmbedPhase, EmbedReport, Filter, Index, IndexLocation, Stopped,
    build, embed,
};

impl Fixture {
    /// `n` one-function Python files, `f0.py` the oldest, each a minute newer.
    fn files(n: usize) -> Fixture {
        let f = Fixture::empty();
        for i in 0..n {
            f.write(&format!("f{i}.py"), &body(i, "v1"), i);
        }
        f
    }

    /// Writes a file whose mtime is `age_rank` minutes after a fixed past time.
    fn write(&self, rel: &str, text: &str, age_rank: usize) {
        let p = self.root.join(rel);
        fs::write(&p, text).unwrap();
        let t = SystemTime::now() - Duration::from_secs(86_400)
            + Duration::from_secs(60 * age_rank as u64);
        fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    /// The lexical phase only.
    fn build_lexical(&self) {
        let opts = BuildOptions {
            embed: EmbedPhase::Later,
            ..BuildOptions::quiet(&self.config)
        };
        let r = build(&self.loc, &opts).unwrap();
        assert!(r.embedding.is_none());
    }

    fn embed(&self, batch: usize, batches: Option<usize>) -> EmbedReport {
        let opts = EmbedOptions {
            batch_size: Some(batch),
            max_batches: batches,
            ..EmbedOptions::new(&self.config)
        };
        embed(&self.loc, &opts, None).unwrap()
    }
}

fn body(i: usize, version: &str) -> String {
    format!(
        "def handler_{i}_{version}(request):\n    \"\"\"Handles request {i}.\"\"\"\n    return request.reply({i})\n"
    )
}

/// Path → stored vector bytes, after checking that the index is consistent:
/// every vector row holds exactly its file's chunk ids, in order, and the
/// pending count is the chunks of the files without a row.
fn checked_vectors(index: &Index) -> BTreeMap<String, Vec<u8>> {
    let conn = index.store().connection();
    let mut out = BTreeMap::new();
    let mut stmt = conn
        .prepare("SELECT f.path, v.file_id, v.ids, v.data FROM vectors v LEFT JOIN files f ON f.id = v.file_id")
        .unwrap();
    type Row = (Option<String>, i64, Vec<u8>, Vec<u8>);
    let rows: Vec<Row> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    for (path, file_id, ids, data) in rows {
        let path = path.unwrap_or_else(|| panic!("vectors of a deleted file {file_id}"));
        let ids: Vec<i64> = ids
            .chunks_exact(8)
            .map(|b| i64::from_le_bytes(b.try_into().unwrap()))
            .collect();
        let chunks: Vec<i64> = conn
            .prepare("SELECT id FROM chunks WHERE file_id = ?1 ORDER BY id")
            .unwrap()
            .query_map([file_id], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        assert_eq!(ids, chunks, "{path}: vectors of other chunks");
        // The vectors, then their 4-byte check.
        let data = data[..data.len() - 4].to_vec();
        assert_eq!(data.len() % ids.len(), 0, "{path}");
        out.insert(path, data);
    }
    let unembedded: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM vectors v WHERE v.file_id = c.file_id)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(index.vectors_pending().unwrap(), unembedded as u64);
    out
}

fn chunk_count(index: &Index) -> u64 {
    index.stats().unwrap().chunks
}

/// The vectors a build that embeds everything at once makes of the same tree.
fn fresh_vectors(f: &Fixture) -> BTreeMap<String, Vec<u8>> {
    let cache = tempfile::tempdir().unwrap();
    let loc = IndexLocation::resolve(&f.root, Some(cache.path())).unwrap();
    build(&loc, &BuildOptions::quiet(&f.config)).unwrap();
    checked_vectors(&Index::open(&loc).unwrap())
}

#[test]
fn a_partial_index_answers_a_dense_query_and_says_how_partial() {
    let f = Fixture::files(6);
    f.build_lexical();
    let index = f.index();
    let m = chunk_count(&index);
    assert_eq!(m, 6);
    assert_eq!(index.vectors_pending().unwrap(), m);
    // Nothing embedded yet: the dense side is empty, and says so.
    assert!(
        index
            .dense("handle a request", &Filter::default(), 10)
            .unwrap()
            .is_empty()
    );
    assert_eq!(index.embedded_chunks(), Some((0, m)));
    assert_eq!(
        index.take_notes(),
        vec![format!("partial: 0 of {m} chunks embedded")]
    );
    drop(index);

    let r = f.embed(2, Some(1));
    assert_eq!(
        (r.embedded, r.pending, r.chunks, r.batches),
        (2, m - 2, m, 1)
    );
    assert_eq!(r.stopped, Some(Stopped::Batches));
    let index = f.index();
    let hits = index
        .dense("handle a request", &Filter::default(), 10)
        .unwrap();
    assert_eq!(hits.len(), 2, "only the embedded chunks score");
    assert_eq!(index.embedded_chunks(), Some((2, m)));
    assert_eq!(
        index.take_notes(),
        vec![format!("partial: 2 of {m} chunks embedded")]
    );
    // The embedded chunks are the newest files'.
    let paths: Vec<String> = index
        .chunks(&hits.iter().map(|h| h.0).collect::<Vec<_>>())
        .unwrap()
        .into_iter()
        .map(|c| c.path)
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(paths, ["f4.py", "f5.py"]);
    checked_vectors(&index);
}

#[test]
fn the_phase_resumes_and_embeds_every_chunk_exactly_once() {
    let f = Fixture::files(9);
    f.build_lexical();
    let first = f.embed(4, Some(1));
    assert_eq!(first.embedded, 4);
    let second = f.embed(4, None);
    assert_eq!(second.stopped, None);
    assert_eq!(first.embedded + second.embedded, 9, "each chunk once");
    assert_eq!(second.batches, 2, "5 chunks left, batches of 4");
    assert_eq!(second.pending, 0);
    let index = f.index();
    assert_eq!(index.vectors_pending().unwrap(), 0);
    assert!(
        index
            .dense("handler", &Filter::default(), 20)
            .unwrap()
            .len()
            == 9
    );
    assert_eq!(index.embedded_chunks(), None);
    assert!(
        index.take_notes().is_empty(),
        "no partial note when complete"
    );
    // Batches that span files give the vectors a whole build gives.
    assert_eq!(checked_vectors(&index), fresh_vectors(&f));
    // Nothing left: another phase does nothing.
    let third = f.embed(4, None);
    assert_eq!((third.embedded, third.batches), (0, 0));
}

#[test]
fn vectors_of_changed_and_deleted_files_are_pruned() {
    let f = Fixture::files(5);
    build(&f.loc, &BuildOptions::quiet(&f.config)).unwrap();
    assert_eq!(checked_vectors(&f.index()).len(), 5);
    f.write("f1.py", &body(1, "v2"), 10);
    fs::remove_file(f.root.join("f2.py")).unwrap();
    f.build_lexical();
    let index = f.index();
    let v = checked_vectors(&index);
    assert_eq!(v.keys().collect::<Vec<_>>(), ["f0.py", "f3.py", "f4.py"]);
    assert_eq!(
        index.vectors_pending().unwrap(),
        1,
        "the changed file's chunk"
    );
    drop(index);
    let r = f.embed(8, None);
    assert_eq!((r.embedded, r.pending), (1, 0));
    assert_eq!(checked_vectors(&f.index()), fresh_vectors(&f));
}

#[test]
fn the_newest_files_are_embedded_first() {
    let f = Fixture::files(5);
    // Make the oldest file the newest.
    f.write("f0.py", &body(0, "v1"), 99);
    f.build_lexical();
    let mut order = Vec::new();
    for _ in 0..5 {
        f.embed(1, Some(1));
        let now: Vec<String> = checked_vectors(&f.index()).into_keys().collect();
        let new: Vec<&String> = now.iter().filter(|p| !order.contains(*p)).collect();
        assert_eq!(new.len(), 1, "{now:?}");
        order.push(new[0].clone());
    }
    assert_eq!(order, ["f0.py", "f4.py", "f3.py", "f2.py", "f1.py"]);
}

#[test]
fn a_file_changed_on_disk_since_the_build_is_left_for_the_next_one() {
    let f = Fixture::files(3);
    f.build_lexical();
    // Changed after the build parsed it: its stored chunks no longer describe it.
    f.write("f1.py", &format!("# moved\n\n{}", body(1, "v9")), 50);
    let r = f.embed(8, None);
    assert_eq!((r.embedded, r.pending, r.changed_files), (2, 1, 1));
    assert!(!checked_vectors(&f.index()).contains_key("f1.py"));
    // The next build re-parses it, and its phase embeds it.
    build(&f.loc, &BuildOptions::quiet(&f.config)).unwrap();
    assert_eq!(checked_vectors(&f.index()), fresh_vectors(&f));
}

#[test]
fn a_newer_build_stops_the_phase_and_leaves_a_consistent_index() {
    let f = Fixture::files(8);
    f.build_lexical();
    let calls = std::cell::Cell::new(0);
    // After the first batch (f7, f6), another build: f5 (queued, not yet
    // embedded) changes, f4 goes, f9 comes.
    let newer_build = || {
        calls.set(calls.get() + 1);
        if calls.get() == 1 {
            f.write("f5.py", &body(5, "v2"), 5);
            fs::remove_file(f.root.join("f4.py")).unwrap();
            f.write("f9.py", &body(9, "v1"), 9);
            f.build_lexical();
        }
    };
    let opts = EmbedOptions {
        batch_size: Some(2),
        after_batch: Some(&newer_build),
        ..EmbedOptions::new(&f.config)
    };
    let r = embed(&f.loc, &opts, None).unwrap();
    assert_eq!(r.stopped, Some(Stopped::NewerBuild));
    assert_eq!(calls.get(), 2, "it stopped at the commit after the build");
    let index = f.index();
    let v = checked_vectors(&index);
    assert!(
        !v.contains_key("f4.py") && !v.contains_key("f5.py"),
        "{:?}",
        v.keys()
    );
    assert!(v.contains_key("f7.py") && v.contains_key("f6.py"));
    drop(index);
    // The next phase finishes, starting with the newest file.
    let r = f.embed(1, Some(1));
    assert_eq!(r.embedded, 1);
    assert!(checked_vectors(&f.index()).contains_key("f9.py"));
    f.embed(2, None);
    assert_eq!(checked_vectors(&f.index()), fresh_vectors(&f));
}

#[test]
fn a_cancel_or_a_deadline_stops_between_batches() {
    let f = Fixture::files(4);
    f.build_lexical();
    let cancel = std::sync::atomic::AtomicBool::new(true);
    let opts = EmbedOptions {
        cancel: Some(&cancel),
        ..EmbedOptions::new(&f.config)
    };
    let r = embed(&f.loc, &opts, None).unwrap();
    assert_eq!(
        (r.stopped, r.embedded, r.pending),
        (Some(Stopped::Cancelled), 0, 4)
    );
    let opts = EmbedOptions {
        deadline: Some(std::time::Instant::now()),
        ..EmbedOptions::new(&f.config)
    };
    let r = embed(&f.loc, &opts, None).unwrap();
    assert_eq!((r.stopped, r.embedded), (Some(Stopped::Deadline), 0));
    // A second phase of the same index does not run beside the first.
    let _held = lode_index::EmbedLock::acquire(&f.loc, false, &|_| {})
        .unwrap()
        .unwrap();
    let opts = EmbedOptions {
        wait: false,
        ..EmbedOptions::new(&f.config)
    };
    let r = embed(&f.loc, &opts, None).unwrap();
    assert_eq!(
        (r.stopped, r.embedded, r.pending),
        (Some(Stopped::Busy), 0, 4)
    );
}

#[test]
fn a_refresh_goes_on_with_the_chunks_an_earlier_one_left() {
    let f = Fixture::files(3);
    f.build_lexical();
    let opts = lode_index::RefreshOptions {
        embed: EmbedPhase::Later,
        ..lode_index::RefreshOptions::new(&f.config)
    };
    let (index, _) = lode_index::refresh(&f.loc, &opts).unwrap();
    assert_eq!(
        index.vectors_pending().unwrap(),
        3,
        "Later: the caller embeds"
    );
    drop(index);
    let (index, _) =
        lode_index::refresh(&f.loc, &lode_index::RefreshOptions::new(&f.config)).unwrap();
    assert_eq!(index.vectors_pending().unwrap(), 0);
    assert_eq!(checked_vectors(&index), fresh_vectors(&f));
}

#[test]
fn a_small_update_embeds_in_its_own_transaction() {
    let f = Fixture::files(5);
    build(&f.loc, &BuildOptions::quiet(&f.config)).unwrap();
    f.write("f1.py", &body(1, "v2"), 10);
    let report = build(&f.loc, &BuildOptions::quiet(&f.config)).unwrap();
    assert_eq!(report.parsed, 1);
    assert!(
        report.embedding.is_none(),
        "no phase: {:?}",
        report.embedding
    );
    let index = f.index();
    assert_eq!(index.vectors_pending().unwrap(), 0);
    // The same vectors the phase would have given.
    assert_eq!(checked_vectors(&index), fresh_vectors(&f));
}
