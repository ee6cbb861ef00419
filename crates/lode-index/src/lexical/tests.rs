use super::*;

/// Reads every term's postings back, blocks concatenated in order.
fn read_back(tx: &Transaction) -> BTreeMap<String, Vec<i64>> {
    let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    let mut stmt = tx
        .prepare("SELECT term, data FROM postings ORDER BY term, block")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .unwrap();
    for row in rows {
        let (term, data) = row.unwrap();
        let list = out.entry(term).or_default();
        decode(&data, |p| list.push(p.chunk)).unwrap();
    }
    out
}

#[test]
fn length_sums_round_trip_and_refuse_damage() {
    let s = LengthSums {
        chunks: 3,
        len: [4, 5, 60],
    };
    assert_eq!(LengthSums::from_meta(&s.to_meta()), Some(s));
    assert_eq!(s.collection().avg, [4.0 / 3.0, 5.0 / 3.0, 20.0]);
    for bad in ["", "1 2 3", "1 2 3 x", "1 2 3 4 5"] {
        assert_eq!(LengthSums::from_meta(bad), None, "{bad:?}");
    }
    assert_eq!(LengthSums::default().collection().avg, [0.0; 3]);
}

#[test]
fn block_writes_match_a_whole_rewrite() {
    let mut conn = rusqlite::Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE postings (term TEXT NOT NULL, block INTEGER NOT NULL, df INTEGER NOT NULL, \
         data BLOB NOT NULL, PRIMARY KEY (term, block)) WITHOUT ROWID;",
    )
    .unwrap();
    // Files own runs of chunk ids; "common" is in every chunk, "rare" in a few.
    let terms_of = |chunk: i64| {
        let mut t = vec!["common".to_string()];
        if chunk % 7 == 0 {
            t.push("rare".to_string());
        }
        t.push(format!("file{}", chunk / 300));
        t
    };
    let mut expected: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    let post = |pending: &mut PendingPostings,
                expected: &mut BTreeMap<String, BTreeSet<i64>>,
                chunks: std::ops::Range<i64>| {
        for c in chunks {
            let names: Vec<String> = terms_of(c);
            let terms = ChunkTerms::new(&names.join(" "), "", "");
            pending.add_chunk(c, &terms);
            for t in names {
                expected.entry(t).or_default().insert(c);
            }
        }
    };
    // A first build over several blocks.
    let tx = conn.transaction().unwrap();
    let mut pending = PendingPostings::default();
    post(&mut pending, &mut expected, 1..12000);
    pending.write(&tx).unwrap();
    tx.commit().unwrap();
    // An edit: one file's chunks (in the middle, across a block edge) go,
    // its new chunks take the highest ids; other files are deleted outright,
    // enough of them that "common" is read by range rather than by block.
    let tx = conn.transaction().unwrap();
    let mut pending = PendingPostings::default();
    for gone in [900..1200, 2700..3000, 5000..11000] {
        for c in gone.clone() {
            let len = ChunkTerms::new(&terms_of(c).join(" "), "", "").len;
            pending.remove_chunk(c, len, &terms_of(c).join("\n"));
        }
        for set in expected.values_mut() {
            set.retain(|c| !gone.contains(c));
        }
    }
    expected.retain(|_, set| !set.is_empty());
    post(&mut pending, &mut expected, 12000..12300);
    // 6,600 chunks went and 300 came, each with 2 or 3 name tokens.
    let delta = pending.length_delta();
    assert_eq!(delta.chunks, 300 - 6600);
    let names = |r: std::ops::Range<i64>| r.map(|c| terms_of(c).len() as i64).sum::<i64>();
    let removed_names = names(900..1200) + names(2700..3000) + names(5000..11000);
    assert_eq!(delta.len, [names(12000..12300) - removed_names, 0, 0]);
    pending.write(&tx).unwrap();
    let got = read_back(&tx);
    let want: BTreeMap<String, Vec<i64>> = expected
        .iter()
        .map(|(t, s)| (t.clone(), s.iter().copied().collect()))
        .collect();
    assert_eq!(got, want);
    // A block left empty is deleted, not kept as an empty row.
    let empty: i64 = tx
        .query_row(
            "SELECT COUNT(*) FROM postings WHERE length(data) = 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(empty, 0);
    let file9_blocks: i64 = tx
        .query_row(
            "SELECT COUNT(*) FROM postings WHERE term = 'file9'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(file9_blocks, 0, "file9 (chunks 2700..3000) is gone");
}

#[test]
fn postings_round_trip() {
    let ps = vec![
        Posting {
            chunk: 3,
            tf: FieldCounts {
                name: 1,
                path: 0,
                body: 4,
            },
            len: FieldCounts {
                name: 2,
                path: 5,
                body: 300,
            },
        },
        Posting {
            chunk: 90_000,
            tf: FieldCounts {
                name: 0,
                path: 2,
                body: 70_000,
            },
            len: FieldCounts {
                name: 0,
                path: 5,
                body: 70_001,
            },
        },
    ];
    let blob = encode(&ps);
    let mut back = Vec::new();
    decode(&blob, |p| back.push(p)).unwrap();
    assert_eq!(back, ps);
    assert!(
        decode(&blob[..blob.len() - 1], |_| {}).is_none(),
        "a truncated blob is detected"
    );
    // A flipped bit anywhere still decodes as varints, to other
    // postings; the check catches it before any posting is given out.
    for byte in 0..blob.len() {
        let mut flipped = blob.clone();
        flipped[byte] ^= 0x04;
        let mut seen = 0;
        assert!(decode(&flipped, |_| seen += 1).is_none(), "byte {byte}");
        assert_eq!(seen, 0, "byte {byte}");
    }
}

#[test]
fn chunk_terms_count_per_field() {
    let t = ChunkTerms::new(
        "parse_config parse config",
        "src config rs",
        "config x config",
    );
    let config = t.terms.iter().find(|(t, _)| t == "config").unwrap().1;
    assert_eq!(
        config,
        FieldCounts {
            name: 1,
            path: 1,
            body: 2
        }
    );
    assert_eq!(
        t.len,
        FieldCounts {
            name: 3,
            path: 3,
            body: 3
        }
    );
}

#[test]
fn score_board_sums_per_chunk_and_clears_between_queries() {
    let mut board = ScoreBoard::default();
    board.reset(10);
    assert!(board.holds(10) && !board.holds(11) && !board.holds(-1));
    board.add(7, 1.5);
    board.add(3, 2.0);
    board.add(7, 0.25);
    assert_eq!(board.scored().collect::<Vec<_>>(), [(7, 1.75), (3, 2.0)]);
    // The next query starts from zero, also in a smaller index.
    board.reset(5);
    assert!(!board.holds(7));
    assert_eq!(board.scored().count(), 0);
    board.add(3, 1.0);
    assert_eq!(board.scored().collect::<Vec<_>>(), [(3, 1.0)]);
    board.reset(10);
    board.add(7, 4.0);
    assert_eq!(board.scored().collect::<Vec<_>>(), [(7, 4.0)]);
}

#[test]
fn a_score_is_its_saturated_pseudo_frequency_and_the_key_tracks_what_it_depends_on() {
    let p = Bm25Params::default();
    let stats = CollectionStats {
        chunks: 1000.0,
        avg: [2.0, 4.0, 100.0],
    };
    for (name, path, body) in [(0, 0, 1), (1, 0, 3), (2, 1, 0), (0, 3, 70)] {
        let posting = Posting {
            chunk: 1,
            tf: FieldCounts { name, path, body },
            len: FieldCounts {
                name: 3,
                path: 5,
                body: 120,
            },
        };
        let idf = p.idf(&stats, 17.0);
        let pseudo = p.pseudo_frequency(&stats, &posting);
        assert!(pseudo > 0.0);
        assert_eq!(
            p.score(&stats, idf, &posting).to_bits(),
            p.saturate(idf, pseudo).to_bits()
        );
    }
    let key = p.scoring_key(&stats);
    assert_eq!(key, Bm25Params::default().scoring_key(&stats));
    let other_stats = CollectionStats {
        avg: [2.0, 4.0, 101.0],
        ..stats
    };
    assert_ne!(key, p.scoring_key(&other_stats));
    let other_params = Bm25Params {
        b: [0.5, 0.5, 0.7],
        ..p
    };
    assert_ne!(key, other_params.scoring_key(&stats));
}

#[test]
fn bm25_prefers_rarer_terms_names_and_shorter_chunks() {
    let p = Bm25Params::default();
    let stats = CollectionStats {
        chunks: 1000.0,
        avg: [2.0, 4.0, 100.0],
    };
    assert!(p.idf(&stats, 5.0) > p.idf(&stats, 500.0));
    assert!(
        p.idf(&stats, 999.0) > 0.0,
        "common terms still count a little"
    );
    let body = |tf, len| Posting {
        chunk: 1,
        tf: FieldCounts {
            name: 0,
            path: 0,
            body: tf,
        },
        len: FieldCounts {
            name: 2,
            path: 4,
            body: len,
        },
    };
    let idf = p.idf(&stats, 10.0);
    assert!(p.score(&stats, idf, &body(1, 50)) > p.score(&stats, idf, &body(1, 400)));
    assert!(p.score(&stats, idf, &body(3, 100)) > p.score(&stats, idf, &body(1, 100)));
    let in_name = Posting {
        chunk: 1,
        tf: FieldCounts {
            name: 1,
            path: 0,
            body: 1,
        },
        len: FieldCounts {
            name: 2,
            path: 4,
            body: 100,
        },
    };
    assert!(p.score(&stats, idf, &in_name) > p.score(&stats, idf, &body(1, 100)));
}
