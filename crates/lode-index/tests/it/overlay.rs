//! An overlay over an open index: scored on the index's scale, cached by its
//! hash, gone when its guard drops, and no work at all without one.

use std::sync::Mutex;

use lode_core::{Config, Language};
use lode_index::lexical::Bm25Params;
use lode_index::overlay::{self, Overlay, prepare};
use lode_index::{BuildOptions, FileBm25Params, Filter, Index, IndexLocation, build, tokens};
use serde_json::json;

/// The counters are process-wide: tests that read them take turns.
static COUNTERS: Mutex<()> = Mutex::new(());

const UTIL: &str = "def parse_config(path):\n    \"\"\"Reads the config file.\"\"\"\n    return open(path).read()\n\n\ndef retry(times):\n    return [parse_config('a') for _ in range(times)]\n";
const APP: &str =
    "from util import parse_config\n\n\ndef main():\n    return parse_config('app.toml')\n";

/// The overlay counters are process-wide: the tests of this module take turns
/// (no other module of this binary does overlay work), so that one test's
/// overlay work does not show in another's counts.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

fn indexed() -> (tempfile::TempDir, tempfile::TempDir, Index) {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("util.py"), UTIL).unwrap();
    std::fs::write(dir.path().join("app.py"), APP).unwrap();
    std::fs::write(
        dir.path().join("notes.md"),
        "# Notes\n\nConfig parsing lives in util.\n",
    )
    .unwrap();
    let loc = IndexLocation::resolve(dir.path(), Some(cache.path())).unwrap();
    build(&loc, &BuildOptions::quiet(&Config::default())).unwrap();
    let index = Index::open(&loc).unwrap();
    (dir, cache, index)
}

/// Scores of a ranking, best first, without the ids (they differ by design).
fn scores(list: &[(i64, f64)]) -> Vec<f64> {
    list.iter().map(|(_, s)| (s * 1e9).round() / 1e9).collect()
}

#[test]
fn a_file_restated_verbatim_scores_exactly_as_on_disk() {
    let _serial = serial();
    let (_dir, _cache, index) = indexed();
    let terms = tokens::query_terms("parse config file");
    let params = Bm25Params::default();
    let lexical = index
        .lexical(&terms, &params, &Filter::default(), 10)
        .unwrap();
    let dense = index
        .dense("read the config file", &Filter::default(), 10)
        .unwrap();

    let ov = Overlay::from_json(&json!({ "util.py": UTIL })).unwrap();
    let staged = prepare(&ov, &Config::default()).unwrap();
    let guard = index.overlay(staged.layer).unwrap();
    let lexical_over = index
        .lexical(&terms, &params, &Filter::default(), 10)
        .unwrap();
    let dense_over = index
        .dense("read the config file", &Filter::default(), 10)
        .unwrap();
    assert_eq!(scores(&lexical_over), scores(&lexical), "same BM25F scale");
    assert_eq!(
        scores(&dense_over),
        scores(&dense),
        "same model, same vectors"
    );
    // The util.py chunks now come from the overlay (negative ids), with the same rows.
    let from_overlay: Vec<i64> = lexical_over
        .iter()
        .map(|p| p.0)
        .filter(|&id| id < 0)
        .collect();
    assert!(!from_overlay.is_empty());
    let rows = index.chunks(&from_overlay).unwrap();
    assert!(rows.iter().all(|c| c.path == "util.py"), "{rows:?}");
    let disk_rows = {
        drop(guard);
        let ids: Vec<i64> = lexical.iter().map(|p| p.0).collect();
        index.chunks(&ids).unwrap()
    };
    let spans = |rows: &[lode_index::ChunkRow]| {
        let mut v: Vec<(u32, u32, Option<String>)> = rows
            .iter()
            .filter(|c| c.path == "util.py")
            .map(|c| {
                (
                    c.start_line,
                    c.end_line,
                    c.symbol.as_ref().map(|s| s.name.clone()),
                )
            })
            .collect();
        v.sort();
        v
    };
    assert_eq!(spans(&rows), spans(&disk_rows));
}

#[test]
fn reads_answer_over_disk_and_overlay_until_the_guard_drops() {
    let _serial = serial();
    let (_dir, _cache, index) = indexed();
    let ov = Overlay::from_json(&json!({
        "util.py": "def load_settings(path):\n    return path\n",
        "app.py": null,
        "lib/new.py": "from util import load_settings\n\n\ndef boot():\n    return load_settings('x')\n",
    }))
    .unwrap();
    let staged = prepare(&ov, &Config::default()).unwrap();
    {
        let _over = index.overlay(staged.layer.clone()).unwrap();
        assert!(index.symbols_named("parse_config").unwrap().is_empty());
        let boot = index.symbols_named("boot").unwrap();
        assert_eq!(
            (boot[0].path.as_str(), boot[0].start_line),
            ("lib/new.py", 4)
        );
        assert!(boot[0].id < 0);
        assert_eq!(index.symbol(boot[0].id).unwrap().unwrap().name, "boot");
        let calls = index.calls_from(boot[0].id).unwrap();
        assert_eq!(calls.len(), 1);
        assert_eq!(
            (calls[0].callee.as_str(), calls[0].line),
            ("load_settings", 5)
        );
        assert!(
            index.calls_named("parse_config").unwrap().is_empty(),
            "app.py is deleted"
        );
        let in_file = index.file_calls("lib/new.py").unwrap();
        assert_eq!(in_file.len(), 1);
        assert_eq!(in_file[0].caller, Some(boot[0].id));
        assert!(index.file_calls("app.py").unwrap().is_empty());
        assert_eq!(index.file_imports("lib/new.py").unwrap()[0].source, "util");
        assert!(index.file_imports("app.py").unwrap().is_empty());
        assert_eq!(
            index.indexed_paths(&Filter::default()).unwrap(),
            ["lib/new.py", "notes.md", "util.py"]
        );
        let languages: Vec<(String, Language)> = index.indexed_files(&Filter::default()).unwrap();
        assert_eq!(
            languages,
            [
                ("lib/new.py".to_string(), Language::Python),
                ("notes.md".to_string(), Language::Markdown),
                ("util.py".to_string(), Language::Python),
            ]
        );
        assert!(index.file("app.py").unwrap().is_none());
        assert_eq!(index.file("util.py").unwrap().unwrap().lines, 2);
        assert_eq!(
            index.file_text("util.py").unwrap(),
            "def load_settings(path):\n    return path\n"
        );
        assert_eq!(index.file_text("app.py"), None);
        assert!(
            index
                .all_symbols()
                .unwrap()
                .iter()
                .all(|s| s.name != "main")
        );
        assert_eq!(
            index.symbol_at("lib/new.py", 5).unwrap().map(|s| s.name),
            Some("boot".to_string())
        );
        let filter = Filter {
            path_prefix: Some("lib".into()),
            languages: Vec::new(),
        };
        let hits = index
            .lexical(
                &tokens::query_terms("load settings"),
                &Bm25Params::default(),
                &filter,
                10,
            )
            .unwrap();
        let rows = index
            .chunks(&hits.iter().map(|h| h.0).collect::<Vec<_>>())
            .unwrap();
        assert!(
            !rows.is_empty() && rows.iter().all(|c| c.path == "lib/new.py"),
            "{rows:?}"
        );
    }
    // Gone with the guard: the disk again.
    assert_eq!(index.symbols_named("parse_config").unwrap().len(), 1);
    assert!(index.symbols_named("boot").unwrap().is_empty());
    assert_eq!(
        index.indexed_paths(&Filter::default()).unwrap(),
        ["app.py", "notes.md", "util.py"]
    );
    assert_eq!(index.file_text("app.py").unwrap(), APP);
    let main = index.symbols_named("main").unwrap();
    let calls: Vec<(String, Option<i64>)> = (index.file_calls("app.py").unwrap().into_iter())
        .map(|c| (c.callee, c.caller))
        .collect();
    assert_eq!(calls, [("parse_config".to_string(), Some(main[0].id))]);
}

#[test]
fn layers_are_cached_by_content_and_config_and_plain_reads_do_no_overlay_work() {
    let _serial = serial();
    let _turn = COUNTERS.lock().unwrap_or_else(|p| p.into_inner());
    let (_dir, _cache, index) = indexed();
    let (builds, reads) = (overlay::builds(), overlay::reads());
    // Every read API, without an overlay.
    let terms = tokens::query_terms("parse config");
    index
        .lexical(&terms, &Bm25Params::default(), &Filter::default(), 10)
        .unwrap();
    index.dense("parse config", &Filter::default(), 10).unwrap();
    let ids: Vec<i64> = (1..5).collect();
    index.chunks(&ids).unwrap();
    index.file("util.py").unwrap();
    index.file_symbols("util.py").unwrap();
    index.indexed_paths(&Filter::default()).unwrap();
    let s = index.symbols_named("parse_config").unwrap();
    index.symbol(s[0].id).unwrap();
    index.symbol_at("util.py", 2).unwrap();
    index.calls_from(s[0].id).unwrap();
    index.calls_named("parse_config").unwrap();
    index.all_calls().unwrap();
    index.all_symbols().unwrap();
    index.file_calls("app.py").unwrap();
    index.file_imports("app.py").unwrap();
    index.file_text("app.py").unwrap();
    assert_eq!(index.overlay_text("app.py"), None);
    assert_eq!(
        (overlay::builds(), overlay::reads()),
        (builds, reads),
        "no overlay work"
    );

    let content = format!("{UTIL}\n# {}\n", std::process::id());
    let a = Overlay::from_json(&json!({ "util.py": content, "app.py": null })).unwrap();
    let b = Overlay::from_json(&json!({ "./app.py": null, "util.py": content })).unwrap();
    let config = Config::default();
    let first = prepare(&a, &config).unwrap();
    let second = prepare(&b, &config).unwrap();
    assert!(
        first.info.built && !second.info.built,
        "the same overlay is parsed once"
    );
    assert!(std::sync::Arc::ptr_eq(&first.layer, &second.layer));
    assert_eq!(first.info.key, second.info.key);
    assert_eq!(overlay::builds(), builds + 1);
    // Another config may parse differently: its own entry.
    let mut python_only = Config::default();
    python_only.index.languages = vec!["python".into()];
    assert!(prepare(&a, &python_only).unwrap().info.built);
    assert_eq!(overlay::builds(), builds + 2);

    let _over = index.overlay(first.layer.clone()).unwrap();
    index.symbols_named("parse_config").unwrap();
    assert!(overlay::reads() > reads, "reads with an overlay consult it");
}

#[test]
fn whole_file_scores_follow_the_overlay_and_the_filter() {
    let _serial = serial();
    let (_dir, _cache, index) = indexed();
    let files = |terms: &[(&str, f64)], filter: &Filter| -> Vec<String> {
        index
            .file_lexical(terms, &FileBm25Params::default(), filter, 10)
            .unwrap()
            .into_iter()
            .map(|f| f.path)
            .collect()
    };
    let terms = [("parse", 1.0), ("config", 1.0), ("retry", 1.0)];
    // util.py holds every term, app.py two, notes.md one.
    assert_eq!(
        files(&terms, &Filter::default()),
        ["util.py", "app.py", "notes.md"]
    );
    let code = Filter {
        languages: vec![lode_core::Language::Python],
        ..Filter::default()
    };
    assert_eq!(files(&terms, &code), ["util.py", "app.py"]);
    let ov = Overlay::from_json(&json!({
        "util.py": "def load_settings(path):\n    return path\n",
        "app.py": null,
        "lib/new.py": "def retry(times):\n    return parse_config(times)\n",
    }))
    .unwrap();
    let staged = prepare(&ov, &Config::default()).unwrap();
    {
        let _over = index.overlay(staged.layer.clone()).unwrap();
        // The overlay's util.py holds none of the terms, app.py is deleted, the new file holds all.
        assert_eq!(
            files(&terms, &Filter::default()),
            ["lib/new.py", "notes.md"]
        );
        assert_eq!(files(&[("settings", 1.0)], &Filter::default()), ["util.py"]);
    }
    assert_eq!(files(&terms, &Filter::default())[0], "util.py");
}

#[test]
fn an_overlay_chunk_holding_a_containers_header_opens_it_as_a_stored_one_does() {
    let _serial = serial();
    // Methods over the chunk target: the class is split at them and its
    // header line joins the chunk of the first.
    let body: String = (0..40)
        .map(|i| format!("        step_{i} = {i} * self.width + 7\n"))
        .collect();
    let grid = format!("class Grid:\n    def resize(self):\n{body}\n    def clear(self):\n{body}");
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("grid.py"), &grid).unwrap();
    let loc = IndexLocation::resolve(dir.path(), Some(cache.path())).unwrap();
    build(&loc, &BuildOptions::quiet(&Config::default())).unwrap();
    let index = Index::open(&loc).unwrap();
    let terms = tokens::query_terms("grid resize clear width step");
    let rows = |index: &Index| {
        let found = index
            .lexical(&terms, &Bm25Params::default(), &Filter::default(), 50)
            .unwrap();
        let ids: Vec<i64> = found.iter().map(|p| p.0).collect();
        let mut v: Vec<(u32, u32, Option<String>)> = (index.chunks(&ids).unwrap().into_iter())
            .map(|c| (c.start_line, c.end_line, c.opens))
            .collect();
        v.sort();
        v
    };
    let stored = rows(&index);
    assert_eq!(stored[0], (1, 42, Some("Grid".to_string())), "{stored:?}");
    assert!(stored[1..].iter().all(|r| r.2.is_none()), "{stored:?}");
    let ov = Overlay::from_json(&json!({ "grid.py": grid })).unwrap();
    let staged = prepare(&ov, &Config::default()).unwrap();
    let _guard = index.overlay(staged.layer).unwrap();
    assert_eq!(rows(&index), stored);
}
