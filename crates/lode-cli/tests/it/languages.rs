//! Every language end to end: the extraction fixtures of `lode-parse` form a
//! repository; for each file, its symbols are searchable and the chunk found
//! covers the definition, and `outline` lists what extraction found.

use std::path::Path;

use crate::common::Repo;

#[test]
fn every_language_is_indexed_searched_and_outlined() {
    let repo = Repo::empty();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lode-parse/tests/fixtures");
    lode_test_support::copy_dir(&fixtures, repo.root());
    let mut files = Vec::new();
    for lang_dir in std::fs::read_dir(repo.root()).unwrap() {
        for f in std::fs::read_dir(lang_dir.unwrap().path()).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "expected") {
                std::fs::remove_file(&p).unwrap();
            } else {
                files.push(p);
            }
        }
    }
    files.sort();
    let v = repo.json(&["index"]);
    assert_eq!(v["files"].as_u64().unwrap() as usize, files.len(), "{v}");
    assert_eq!(v["parse_failed"], 0, "{v}");

    let mut languages = std::collections::BTreeSet::new();
    for path in &files {
        let rel = path
            .strip_prefix(repo.root())
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let source = std::fs::read_to_string(path).unwrap();
        let lang = lode_parse::detect(path, source.as_bytes());
        languages.insert(lang);
        let extract = lode_parse::extract(lang, &source);

        let outline = repo.json(&["outline", &rel]);
        let mut count = 0;
        fn walk(n: &serde_json::Value, count: &mut usize) {
            for s in n.as_array().unwrap() {
                *count += 1;
                if let Some(c) = s.get("children") {
                    walk(c, count);
                }
            }
        }
        walk(&outline["symbols"], &mut count);
        assert_eq!(count, extract.symbols.len(), "{rel}: outline vs extraction");

        let wanted = extract
            .symbols
            .iter()
            .filter(|s| s.name.len() > 3 && s.name.chars().all(|c| c.is_alphanumeric() || c == '_'))
            .take(3);
        for sym in wanted {
            let v = repo.json(&["search", &sym.name, "--path", &rel, "-k", "3"]);
            let hits = v["hits"].as_array().unwrap();
            let covers = hits.iter().any(|h| {
                h["start_line"].as_u64().unwrap() as u32 <= sym.span.start_line
                    && sym.span.start_line <= h["end_line"].as_u64().unwrap() as u32
            });
            assert!(
                covers,
                "{rel}: no top-3 chunk covers {} (line {}): {v}",
                sym.name, sym.span.start_line
            );
        }
    }
    let code = languages.iter().filter(|l| l.is_code()).count();
    assert!(
        code >= 20,
        "fixtures cover {code} code languages: {languages:?}"
    );
}
