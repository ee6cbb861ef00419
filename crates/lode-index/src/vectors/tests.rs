use super::*;

#[test]
fn compound_identifiers_are_written_out_as_words() {
    assert_eq!(
        split_identifiers("fn parseConfig(max_file_size: u32) -> HTTPServer"),
        "fn parse config(max file size: u32) -> http server"
    );
    // Plain words, acronyms and numbers stay as they are.
    assert_eq!(
        split_identifiers("Read the JSON file v2"),
        "Read the JSON file v2"
    );
    assert_eq!(split_identifiers("src/basic_auth.go"), "src/basic auth.go");
}

#[test]
fn static_models_embed_words_and_servers_the_text() {
    assert!(spec().chunking.ends_with(WORDS));
    let v = builtin_vectors(VectorEncoding::F32);
    // A query is embedded as the chunks were: `parseConfig` as `parse config`.
    let q = |t: &str| match v.query(t).unwrap() {
        Query::F32(x) => x,
        _ => unreachable!(),
    };
    assert_eq!(q("parseConfig"), q("parse config"));
}

#[test]
fn a_query_of_several_views_scores_the_sum_of_their_similarities() {
    let v = builtin_vectors(VectorEncoding::F32);
    let stored = v.embed_documents(&["parse the config file", "render a table of rows"]);
    assert_eq!(stored.len(), 2 * v.stride());
    let views = ["config parser fails on empty files", "config parser"];
    let (both, one, other) = (
        v.query_views(&views).unwrap(),
        v.query(views[0]).unwrap(),
        v.query(views[1]).unwrap(),
    );
    for row in stored.chunks_exact(v.stride()) {
        let sum = one.score(row) + other.score(row);
        assert!(
            (both.score(row) - sum).abs() < 1e-5,
            "{} vs {sum}",
            both.score(row)
        );
    }
    // One view is the plain query.
    let row = &stored[..v.stride()];
    assert_eq!(
        v.query_views(&views[..1]).unwrap().score(row),
        one.score(row)
    );
}

#[test]
fn the_builtin_dimension_is_known_without_loading() {
    assert_eq!(builtin().dim(), BUILTIN_DIM);
}

fn spec() -> VectorSpec {
    builtin_vectors(VectorEncoding::Int8).spec
}

#[test]
fn a_vector_setting_change_rebuilds_vectors() {
    let stored = spec();
    type Change = fn(&mut VectorSpec);
    let cases: [(&str, Change); 6] = [
        ("backend", |s| s.backend = "ollama".into()),
        ("model", |s| s.model = "ollama:nomic".into()),
        ("dimension", |s| s.dim = 768),
        ("encoding", |s| s.encoding = "binary".into()),
        ("document_prefix", |s| s.document_prefix = "doc: ".into()),
        ("chunking", |s| s.chunking = "extract-99:chars-2000".into()),
    ];
    for (field, change) in cases {
        let mut now = stored.clone();
        change(&mut now);
        assert_ne!(stored.to_meta(), now.to_meta(), "{field}");
        if field != "dimension" {
            assert_ne!(stored.fingerprint(), now.fingerprint(), "{field}");
        }
        let c = VectorChange::between(Some(&stored), "", &now, "");
        assert_eq!(c.action, "rebuild_vectors", "{field}");
        assert_eq!(c.changed, [field]);
    }
}

#[test]
fn a_query_prefix_change_only_clears_the_query_cache() {
    let c = VectorChange::between(Some(&spec()), "", &spec(), "search_query: ");
    assert_eq!(c.action, "clear_query_cache");
    assert_eq!(c.changed, ["query_prefix"]);
    // It is not part of what the vectors depend on.
    assert!(!spec().fingerprint().contains("query"));
}

#[test]
fn no_change_is_nothing_to_do() {
    let c = VectorChange::between(Some(&spec()), "q: ", &spec(), "q: ");
    assert_eq!((c.action, c.changed.len()), ("none", 0));
    let old = VectorChange::between(None, "", &spec(), "");
    assert_eq!(old.action, "rebuild_vectors");
}

#[test]
fn specs_round_trip_through_the_index() {
    let s = spec();
    assert_eq!(VectorSpec::parse(&s.to_meta()), Some(s.clone()));
    // A server's dimension is in the stored spec, not the fingerprint.
    let mut server = s.clone();
    server.backend = "ollama".into();
    server.dim = 768;
    let mut other = server.clone();
    other.dim = 1024;
    assert_eq!(server.fingerprint(), other.fingerprint());
    assert_ne!(server.to_meta(), other.to_meta());
    assert_eq!(VectorSpec::parse("builtin-abc:int8:2000"), None);
}

#[test]
fn every_encoding_stores_and_scores() {
    for enc in VectorEncoding::ALL {
        let v = builtin_vectors(enc);
        let stored = v.embed_documents(&["fn parse_config()", "SELECT 1"]);
        assert_eq!(stored.len(), 2 * v.stride(), "{enc:?}");
        let q = v.query("parse the config").unwrap();
        let (a, b) = (
            q.score(&stored[..v.stride()]),
            q.score(&stored[v.stride()..]),
        );
        assert!(a > b, "{enc:?}: {a} vs {b}");
    }
}

#[test]
fn a_local_model_that_does_not_load_is_an_error_not_a_fallback() {
    let missing = tempfile::tempdir().unwrap();
    let err = use_local(&missing.path().join("none")).unwrap_err();
    assert!(err.contains("none"), "{err}");
}
