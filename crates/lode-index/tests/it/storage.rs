//! The database's write-ahead log stays bounded however many processes update
//! the index, so a new process never reads an ever-growing log.

use std::fs;
use std::path::{Path, PathBuf};

use lode_core::Config;
use lode_index::{BuildOptions, IndexLocation, WAL_LIMIT_BYTES, build};

fn wal_size(dir: &Path) -> u64 {
    fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".db-wal"))
        .map(|e| e.metadata().unwrap().len())
        .sum()
}

/// A file with many distinct identifiers, so that each update rewrites many
/// postings pages.
fn wide_file(round: usize) -> String {
    let mut text = String::new();
    for i in 0..600 {
        text.push_str(&format!(
            "def function_{i}_name_{}():\n    return {i}\n\n",
            i * 7919 % 1000
        ));
    }
    text.push_str(&format!("# round {round}\n"));
    text
}

#[test]
fn the_write_ahead_log_stays_bounded_across_updates() {
    let tmp = tempfile::tempdir().unwrap();
    let root: PathBuf = tmp.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    for i in 0..20 {
        fs::write(
            root.join(format!("m{i}.py")),
            format!("def helper_{i}():\n    pass\n"),
        )
        .unwrap();
    }
    let wide = root.join("wide.py");
    fs::write(&wide, wide_file(0)).unwrap();
    let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
    let config = Config::default();
    build(&loc, &BuildOptions::quiet(&config)).unwrap();
    let (mut largest, mut written, mut truncations) = (0, 0, 0);
    let mut last = wal_size(&loc.dir);
    for round in 1..=60 {
        fs::write(&wide, wide_file(round)).unwrap();
        // Each build opens and closes its own database connection, as a
        // new process does.
        let report = build(&loc, &BuildOptions::quiet(&config)).unwrap();
        assert_eq!(report.parsed, 1, "round {round}");
        let size = wal_size(&loc.dir);
        if size < last {
            truncations += 1;
        }
        written += size.saturating_sub(last);
        largest = largest.max(size);
        last = size;
    }
    // The updates wrote well past the limit (a log that is never
    // checkpointed would hold all of it) ...
    assert!(
        written > 2 * WAL_LIMIT_BYTES,
        "the updates wrote only {written} bytes of log"
    );
    // ... yet the log holds one update's frames on top of the limit at most.
    assert!(truncations >= 1);
    assert!(
        largest <= WAL_LIMIT_BYTES + WAL_LIMIT_BYTES / 2,
        "the write-ahead log reached {largest} bytes"
    );
    // The index still answers after the checkpoints.
    let index = lode_index::Index::open(&loc).unwrap();
    assert_eq!(index.store().manifest().unwrap().len(), 21);
}

/// Everything an index holds about chunks, keyed by place rather than by id:
/// chunk rows, postings, vectors and the collection's length sums.
/// A chunk by place: path, lines, kind, symbol name, field lengths.
type ChunkPlace = (String, i64, i64, String, Option<String>, [i64; 3]);
/// A posting by place: path, first line, term frequencies, field lengths.
type PostingPlace = (String, i64, [u32; 3], [u32; 3]);

#[derive(Debug, PartialEq)]
struct Dump {
    chunks: Vec<ChunkPlace>,
    postings: Vec<(String, Vec<PostingPlace>)>,
    vectors: Vec<(String, i64, Vec<u8>)>,
    sums: String,
}

fn dump(loc: &IndexLocation) -> Dump {
    use std::collections::{BTreeMap, HashMap};
    let index = lode_index::Index::open(loc).unwrap();
    let conn = index.store().connection();
    let mut place: HashMap<i64, (String, i64)> = HashMap::new();
    let mut chunks = Vec::new();
    let mut stmt = conn
        .prepare(
            "SELECT c.id, f.path, c.start_line, c.end_line, c.kind, s.name, c.len_name, c.len_path, c.len_body \
             FROM chunks c JOIN files f ON f.id = c.file_id LEFT JOIN symbols s ON s.id = c.symbol",
        )
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                (
                    r.get::<_, String>(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                    [r.get(6)?, r.get(7)?, r.get(8)?],
                ),
            ))
        })
        .unwrap();
    for row in rows {
        let (id, c) = row.unwrap();
        place.insert(id, (c.0.clone(), c.1));
        chunks.push(c);
    }
    chunks.sort();
    let mut postings: BTreeMap<String, Vec<PostingPlace>> = BTreeMap::new();
    let mut stmt = conn.prepare("SELECT term, data FROM postings").unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .unwrap();
    for row in rows {
        let (term, data) = row.unwrap();
        let list = postings.entry(term).or_default();
        lode_index::lexical::decode(&data, |p| {
            let (path, line) = place[&p.chunk].clone();
            list.push((
                path,
                line,
                [p.tf.name, p.tf.path, p.tf.body],
                [p.len.name, p.len.path, p.len.body],
            ));
        })
        .unwrap();
    }
    for list in postings.values_mut() {
        list.sort();
    }
    let mut vectors = Vec::new();
    let mut stmt = conn.prepare("SELECT ids, data FROM vectors").unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, Vec<u8>>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .unwrap();
    for row in rows {
        let (ids, data) = row.unwrap();
        // The vectors, then their 4-byte check.
        let data = &data[..data.len() - 4];
        let n = ids.len() / 8;
        let width = data.len() / n;
        for (i, id) in ids.chunks(8).enumerate() {
            let id = i64::from_le_bytes(id.try_into().unwrap());
            let (path, line) = place[&id].clone();
            vectors.push((path, line, data[i * width..(i + 1) * width].to_vec()));
        }
    }
    vectors.sort();
    let sums = index
        .store()
        .meta(lode_index::Meta::LexicalSums)
        .unwrap()
        .unwrap();
    Dump {
        chunks,
        postings: postings.into_iter().collect(),
        vectors,
        sums,
    }
}

fn chunk_ids(loc: &IndexLocation, path: &str) -> Vec<i64> {
    let index = lode_index::Index::open(loc).unwrap();
    let mut stmt = index
        .store()
        .connection()
        .prepare("SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1 ORDER BY c.id")
        .unwrap();
    stmt.query_map([path], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn functions(names: &[&str]) -> String {
    let mut text = String::new();
    for n in names {
        text.push_str(&format!(
            "def {n}(value):\n    \"\"\"Handles {n} requests.\"\"\"\n    total = value * 2\n{}    return total + len(\"{n}\")\n\n\n",
            "    total = total + compute_{n}(value, total)  # keeps the chunk apart\n".repeat(6)
        ));
    }
    text
}

/// An update keeps the ids of unchanged chunks, and ends where a fresh
/// build of the same tree does: same chunks, postings, vectors and sums.
#[test]
fn an_update_keeps_unchanged_chunks_and_equals_a_fresh_build() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("repo");
    fs::create_dir_all(root.join("pkg")).unwrap();
    let names = [
        "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta",
    ];
    fs::write(root.join("pkg/service.py"), functions(&names)).unwrap();
    fs::write(
        root.join("pkg/other.py"),
        functions(&["one", "two", "three"]),
    )
    .unwrap();
    fs::write(
        root.join("notes.md"),
        "# Notes\n\nSome words.\n\n## More\n\nOther words.\n",
    )
    .unwrap();
    let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
    let config = Config::default();
    // Each update's counts (moved by its files' rows, not recounted) are
    // what counting every row says.
    let update = || {
        let report = build(&loc, &BuildOptions::quiet(&config)).unwrap();
        let counted = lode_index::Index::open(&loc).unwrap().stats().unwrap();
        let seen = |f: &lode_index::IndexStats| {
            let c = (f.files, f.chunks, f.symbols, f.skipped.clone());
            (c, f.lossy_utf8, f.parse_errors, f.parse_failed)
        };
        let reported = lode_index::IndexStats {
            files: report.files,
            chunks: report.chunks,
            symbols: report.symbols,
            skipped: report.skipped.clone(),
            lossy_utf8: report.lossy_utf8,
            parse_errors: report.parse_errors,
            parse_failed: report.parse_failed,
            ..Default::default()
        };
        assert_eq!(seen(&reported), seen(&counted));
        report
    };
    let fresh = |round: usize| {
        let cache = tmp.path().join(format!("fresh{round}"));
        let loc = IndexLocation::resolve(&root, Some(&cache)).unwrap();
        build(&loc, &BuildOptions::quiet(&config)).unwrap();
        dump(&loc)
    };
    update();
    let before = chunk_ids(&loc, "pkg/service.py");
    assert!(before.len() >= names.len(), "{before:?}");

    // One function's body changes: every other chunk keeps its id.
    let edited = functions(&names).replace("return total + len(\"delta\")", "return total - 1");
    fs::write(root.join("pkg/service.py"), &edited).unwrap();
    assert_eq!(update().parsed, 1);
    let after = chunk_ids(&loc, "pkg/service.py");
    let kept = after.iter().filter(|id| before.contains(id)).count();
    assert_eq!(kept, before.len() - 1, "before {before:?}, after {after:?}");
    assert_eq!(dump(&loc), fresh(1));

    // Lines move (blank lines above every function), a function is
    // duplicated, another removed; a file goes, a file comes.
    let mut moved = String::from("\n\n\n");
    moved.push_str(&edited.replace("def zeta", "def zeta_two"));
    moved.push_str(&functions(&["alpha"]));
    fs::write(root.join("pkg/service.py"), moved).unwrap();
    fs::remove_file(root.join("pkg/other.py")).unwrap();
    fs::write(root.join("pkg/new.py"), functions(&["one", "four"])).unwrap();
    update();
    assert_eq!(dump(&loc), fresh(2));

    // The file becomes a skipped one (minified-looking), then comes back.
    fs::write(
        root.join("pkg/service.py"),
        format!("x=1;{}\n", "y=2;".repeat(5000)),
    )
    .unwrap();
    update();
    assert_eq!(dump(&loc), fresh(3));
    fs::write(root.join("pkg/service.py"), functions(&names)).unwrap();
    update();
    assert_eq!(dump(&loc), fresh(4));
}

/// Database files a killed build left behind are removed by the next build,
/// even one that only updates the current database.
#[test]
fn a_killed_builds_partial_database_is_removed_by_the_next_build() {
    let tmp = tempfile::tempdir().unwrap();
    let root: PathBuf = tmp.path().join("repo");
    fs::create_dir_all(&root).unwrap();
    fs::write(root.join("a.py"), "def a():\n    pass\n").unwrap();
    let loc = IndexLocation::resolve(&root, Some(&tmp.path().join("cache"))).unwrap();
    let config = Config::default();
    build(&loc, &BuildOptions::quiet(&config)).unwrap();
    let current = loc.current_db().unwrap();
    // What kills during two rebuilds leave: partial databases and their logs.
    for stale in [
        "index-90.db",
        "index-90.db-wal",
        "index-91.db",
        "index-91.db-shm",
    ] {
        fs::write(loc.dir.join(stale), vec![0u8; 4096]).unwrap();
    }
    fs::write(root.join("b.py"), "def b():\n    pass\n").unwrap();
    build(&loc, &BuildOptions::quiet(&config)).unwrap();
    assert_eq!(
        loc.current_db().unwrap(),
        current,
        "an update, not a rebuild"
    );
    let mut left: Vec<String> = fs::read_dir(&loc.dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("index-"))
        .collect();
    left.sort();
    let name = current.file_name().unwrap().to_string_lossy().into_owned();
    assert!(left.iter().all(|n| n.starts_with(&name)), "{left:?}");
    assert!(left.contains(&name), "{left:?}");
}
