//! Chunk vectors for the semantic side of search.
//!
//! Every chunk is embedded at index time with the built-in static model
//! (`lode-embed`) and stored as int8 (one scale per vector), one row per file
//! holding its chunks' ids and vectors, so a dense scan reads a few thousand
//! rows rather than one per chunk.

use std::sync::OnceLock;

use lode_embed::{Embedder, StaticModel, VectorEncoding};

/// How vectors are stored.
pub const ENCODING: VectorEncoding = VectorEncoding::Int8;

/// Characters of a chunk given to the model: mean pooling over a whole large
/// chunk blurs it, and the head (signature, doc) says most.
const EMBED_CHARS: usize = 2000;

static MODEL: OnceLock<StaticModel> = OnceLock::new();
static CUSTOM: OnceLock<bool> = OnceLock::new();

/// The model of this process: the one chosen by [`use_model_dir`], else the built-in one.
pub fn model() -> &'static StaticModel {
    MODEL.get_or_init(StaticModel::builtin)
}

/// Makes the model2vec directory `dir` this process's model (`--model PATH`).
/// Call it before any indexing or search; on an error the built-in model stays.
pub fn use_model_dir(dir: &std::path::Path) -> Result<(), lode_embed::Error> {
    let model = StaticModel::from_dir(dir)?;
    if MODEL.set(model).is_ok() {
        let _ = CUSTOM.set(true);
    }
    Ok(())
}

/// What the stored vectors depend on, for the index fingerprint. The built-in
/// model is identified by a hash of its bytes, without loading it.
pub fn fingerprint() -> String {
    let id = if CUSTOM.get().copied().unwrap_or(false) {
        model().id().to_string()
    } else {
        StaticModel::builtin_fingerprint().to_string()
    };
    format!("{id}:{}:{}", ENCODING.name(), EMBED_CHARS)
}

/// The text embedded for a chunk: its path, the names it defines, its head.
pub fn chunk_text(path: &str, names: &str, body: &str) -> String {
    let mut cut = body.len().min(EMBED_CHARS);
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{path}\n{names}\n{}", &body[..cut])
}

/// Embeds texts and returns their stored encodings, concatenated.
pub fn embed(texts: &[&str]) -> Vec<u8> {
    let m = model();
    let mut rows = Vec::with_capacity(texts.len() * m.dim());
    if m.embed_into(texts, &mut rows).is_err() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(texts.len() * ENCODING.bytes_per_vector(m.dim()));
    for row in rows.chunks_exact(m.dim()) {
        ENCODING.encode(row, &mut out);
    }
    out
}

/// Embeds a query for scoring against stored vectors.
pub fn query(text: &str) -> Option<lode_embed::vectors::Query> {
    let m = model();
    let mut row = Vec::with_capacity(m.dim());
    m.embed_into(&[text], &mut row).ok()?;
    Some(ENCODING.query(&row))
}

/// Bytes of one stored vector.
pub fn stride() -> usize {
    ENCODING.bytes_per_vector(model().dim())
}
