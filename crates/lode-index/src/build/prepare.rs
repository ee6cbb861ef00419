//! A changed file made ready to write, off the writer's thread: read,
//! hashed, parsed, chunked and (for a small update) embedded.

use super::*;

/// A file read, hashed and parsed, its chunks' terms and keys computed.
pub(crate) struct PreparedFile {
    pub(super) hash: [u8; 32],
    pub(crate) lang: Language,
    pub(crate) lines: u32,
    pub(super) lossy: bool,
    pub(crate) extract: FileExtract,
    /// Per chunk, its terms by field.
    pub(crate) chunk_terms: Vec<ChunkTerms>,
    /// Per chunk, the hash of what its postings and vector are made of (see
    /// [`chunk_key`]).
    pub(super) keys: Vec<i64>,
    /// The chunks' vectors, stored form, concatenated in chunk order (an
    /// overlay's; a build embeds after its commit).
    pub(crate) vectors: Vec<u8>,
    /// The chunks' texts, when embedding waits for the writer: a changed
    /// file's unchanged chunks keep their vectors, only new ones are embedded.
    pub(super) texts: Vec<String>,
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

pub(super) fn prepare(
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
    let lang = lode_parse::detect(std::path::Path::new(path), &bytes);
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
pub(super) fn chunk_key(names: &str, body: &str) -> i64 {
    let mut h = blake3::Hasher::new();
    h.update(names.as_bytes());
    h.update(&[0]);
    h.update(body.as_bytes());
    i64::from_le_bytes(h.finalize().as_bytes()[..8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cpp_header_under_a_long_license_is_cpp() {
        let license = "// Licensed under the Apache License, Version 2.0 (the \"License\").\n";
        let text = format!(
            "{}#pragma once\nnamespace absl {{\nclass View {{\n public:\n  int size() const;\n}};\n}}\n",
            license.repeat(20)
        );
        let file = prepare_content(
            "absl/view.h",
            text.into_bytes(),
            [0; 32],
            &None,
            false,
            Embed::No,
        );
        let Prepared::Index(file) = file else {
            panic!("not indexed")
        };
        assert_eq!(file.lang, Language::Cpp);
        assert!(
            file.extract.symbols.iter().any(|s| s.name == "View"),
            "{:?}",
            file.extract.symbols
        );
    }
}
