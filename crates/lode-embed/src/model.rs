//! [`StaticModel`]: a model2vec-format static embedding model.

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::Embedder;
use crate::error::{Error, Result};
use crate::safetensors::{self, Dtype, Tensor};
use crate::tokenizer::{self, WordPiece};

include!("embed_version.rs");

/// Python model2vec's default `max_length` when `config.json` has none.
const DEFAULT_MAX_LENGTH: usize = 512;

/// Batches at least this long are embedded on the rayon pool.
const PARALLEL_MIN: usize = 64;

static BUILTIN_CONFIG: &[u8] = include_bytes!("../model/config.json");
static BUILTIN_MODEL: &[u8] = include_bytes!("../model/model.safetensors");
static BUILTIN_TOKENIZER: &[u8] = include_bytes!("../model/tokenizer.json");
/// The built-in tokenizer, prepared by build.rs (see `tokenizer::image`).
static BUILTIN_TOKENIZER_IMAGE: &[u8] =
    include_bytes!(concat!(env!("OUT_DIR"), "/builtin-tokenizer.bin"));
/// The built-in model's [`StaticModel::id`] hash, computed by build.rs.
const BUILTIN_ID_HASH: &str = env!("LODE_BUILTIN_MODEL_ID_HASH");

/// The embedding table, in the type it was stored in.
enum Table {
    F32(Vec<f32>),
    /// int8 values, kept as raw bytes so the built-in model borrows them from the binary.
    I8(Cow<'static, [u8]>),
}

/// A static embedding model in the model2vec format: `config.json`,
/// `model.safetensors` (an `embeddings` matrix of one row per vocabulary token, in f32,
/// f16, bf16, f64 or int8, optionally with per-token `weights` and a token-to-row
/// `mapping`) and a WordPiece `tokenizer.json`.
///
/// A text's embedding is the mean of the rows of its tokens (special tokens are not
/// added, unknown tokens are dropped, at most `max_length` tokens are used, 512 unless
/// `config.json` says otherwise), L2-normalized when `config.json` has
/// `"normalize": true`: exactly what Python's `model2vec.StaticModel.encode` computes.
/// A text with no known token embeds to the zero vector.
pub struct StaticModel {
    id: String,
    tokenizer: WordPiece,
    /// The embedding table and what reads it (weights, mapping).
    tensors: ModelTensors,
    normalize: bool,
    max_length: Option<usize>,
}

impl fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticModel")
            .field("id", &self.id())
            .field("dim", &self.tensors.dim)
            .field("rows", &self.tensors.rows)
            .field("dtype", &self.tensors.dtype)
            .field("vocab", &self.tokenizer.vocab_size())
            .field("normalize", &self.normalize)
            .field("max_length", &self.max_length)
            .finish()
    }
}

/// The three files of a model, as bytes, with the names errors should use.
struct Files<'a> {
    config: (&'a [u8], PathBuf),
    model: (Cow<'static, [u8]>, PathBuf),
    tokenizer: (&'a [u8], PathBuf),
    /// The built-in model: its tokenizer comes prepared, and its id was
    /// hashed when lode was compiled.
    builtin: bool,
}

impl Files<'_> {
    /// `range` of the model file: borrowed when the file is the binary's own,
    /// so the built-in table is never copied.
    fn model_range(&self, range: Range<usize>) -> Cow<'static, [u8]> {
        match &self.model.0 {
            Cow::Borrowed(b) => {
                let b: &'static [u8] = b;
                Cow::Borrowed(&b[range])
            }
            Cow::Owned(b) => Cow::Owned(b[range].to_vec()),
        }
    }
}

#[derive(Default)]
struct Scratch {
    tokenizer: tokenizer::Scratch,
    ids: Vec<u32>,
    acc: Vec<i32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl StaticModel {
    /// The model compiled into this binary: all-MiniLM-L6-v2 distilled to 256
    /// dimensions and tuned for code, int8 (see `model/MODEL_CARD.md`). Loading borrows the table from
    /// the binary; it takes a few milliseconds.
    pub fn builtin() -> StaticModel {
        let dir = Path::new("<built-in>");
        Self::load(Files {
            config: (BUILTIN_CONFIG, dir.join("config.json")),
            model: (Cow::Borrowed(BUILTIN_MODEL), dir.join("model.safetensors")),
            tokenizer: (BUILTIN_TOKENIZER, dir.join("tokenizer.json")),
            builtin: true,
        })
        .expect("the built-in model is valid (checked by the crate's tests)")
    }

    /// A fingerprint of the built-in model (its files and the embedding code
    /// version) computed without loading it: what an index records, so that
    /// opening an index does not pay for parsing the model.
    pub fn builtin_fingerprint() -> &'static str {
        // Hashed by build.rs when the binary is compiled.
        const FINGERPRINT: &str = concat!("builtin-", env!("LODE_BUILTIN_MODEL_FNV"));
        static WITH_VERSION: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        WITH_VERSION.get_or_init(|| format!("{FINGERPRINT}-v{EMBED_VERSION}"))
    }

    /// Loads a model2vec model directory (`config.json`, `model.safetensors`,
    /// `tokenizer.json`), as written by Python's `StaticModel.save_pretrained`.
    pub fn from_dir(dir: impl AsRef<Path>) -> Result<StaticModel> {
        let dir = dir.as_ref();
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::invalid(
                    dir,
                    "not a directory (expected a model2vec model directory)",
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::invalid(
                    dir,
                    "model directory not found (expected config.json, model.safetensors and tokenizer.json)",
                ));
            }
            Err(e) => return Err(Error::io(dir, e)),
        }
        let read = |name: &str| {
            let path = dir.join(name);
            match std::fs::read(&path) {
                Ok(bytes) => Ok((bytes, path)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::invalid(
                    &path,
                    "missing (a model2vec model needs config.json, model.safetensors and tokenizer.json)",
                )),
                Err(e) => Err(Error::io(&path, e)),
            }
        };
        let (config, config_path) = read("config.json")?;
        let (tokenizer, tokenizer_path) = read("tokenizer.json")?;
        let (model, model_path) = read("model.safetensors")?;
        Self::load(Files {
            config: (&config, config_path),
            model: (Cow::Owned(model), model_path),
            tokenizer: (&tokenizer, tokenizer_path),
            builtin: false,
        })
    }

    /// Loads a model from the bytes of its three files; errors name them
    /// `<bytes>/config.json` and so on.
    pub fn from_bytes(config: &[u8], model: &[u8], tokenizer: &[u8]) -> Result<StaticModel> {
        let dir = Path::new("<bytes>");
        Self::load(Files {
            config: (config, dir.join("config.json")),
            model: (Cow::Owned(model.to_vec()), dir.join("model.safetensors")),
            tokenizer: (tokenizer, dir.join("tokenizer.json")),
            builtin: false,
        })
    }

    fn load(files: Files<'_>) -> Result<StaticModel> {
        let (config_bytes, config_path) = &files.config;
        let (model_bytes, model_path) = &files.model;
        let (tokenizer_bytes, tokenizer_path) = &files.tokenizer;

        let config = Config::parse(config_bytes, config_path)?;
        let tokenizer = load_tokenizer(tokenizer_bytes, tokenizer_path, files.builtin)?;
        let tensors = ModelTensors::read(&files, config.hidden_dim, tokenizer.vocab_size())
            .map_err(|reason| Error::invalid(model_path, reason))?;

        let id = if files.builtin {
            format!("model2vec-d{}-{BUILTIN_ID_HASH}", tensors.dim)
        } else {
            content_id(tensors.dim, config_bytes, model_bytes, tokenizer_bytes)
        };

        Ok(StaticModel {
            id,
            tokenizer,
            tensors,
            normalize: config.normalize,
            max_length: config.max_length,
        })
    }

    /// Embedding dimension.
    pub fn dim(&self) -> usize {
        self.tensors.dim
    }

    /// A stable id for index fingerprints: `model2vec-d<dim>-<hash>`, where the hash
    /// covers the three model files and the version of this crate's embedding code.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Whether outputs are L2-normalized (`normalize` in `config.json`).
    pub fn normalizes(&self) -> bool {
        self.normalize
    }

    /// Appends the embeddings of `texts` to `out`, row after row (`texts.len() * dim`
    /// values): the infallible form of [`Embedder::embed_into`]. Long batches run on
    /// the rayon pool; nothing is allocated per text.
    pub fn encode_into(&self, texts: &[&str], out: &mut Vec<f32>) {
        let start = out.len();
        out.resize(start + texts.len() * self.tensors.dim, 0.0);
        let rows = &mut out[start..];
        if texts.len() >= PARALLEL_MIN {
            rows.par_chunks_mut(self.tensors.dim)
                .zip(texts.par_iter())
                .with_min_len(16)
                .for_each(|(row, text)| self.encode_one(text, row));
        } else {
            for (row, text) in rows.chunks_mut(self.tensors.dim).zip(texts) {
                self.encode_one(text, row);
            }
        }
    }

    /// The embeddings of `texts`, row after row.
    pub fn encode(&self, texts: &[&str]) -> Vec<f32> {
        let mut out = Vec::with_capacity(texts.len() * self.tensors.dim);
        self.encode_into(texts, &mut out);
        out
    }

    /// Writes the embedding of `text` into `out` (`out.len() == dim`).
    ///
    /// # Panics
    ///
    /// If `out.len() != self.dim()`.
    pub fn encode_one(&self, text: &str, out: &mut [f32]) {
        assert_eq!(
            out.len(),
            self.tensors.dim,
            "output row has the wrong length"
        );
        SCRATCH.with_borrow_mut(|scratch| {
            let Scratch {
                tokenizer,
                ids,
                acc,
            } = scratch;
            self.ids_into(text, tokenizer, ids);
            self.pool(ids, acc, out);
        });
    }

    /// The token ids whose rows are averaged for `text`: after Python model2vec's
    /// truncation (the text cut to `max_length × median token length` characters,
    /// then to `max_length` tokens) and with unknown tokens dropped.
    pub fn token_ids(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::new();
        self.ids_into(text, &mut tokenizer::Scratch::default(), &mut ids);
        let unk = self.tokenizer.unk_id();
        ids.retain(|&id| id != unk);
        ids
    }

    fn ids_into(&self, text: &str, scratch: &mut tokenizer::Scratch, ids: &mut Vec<u32>) {
        ids.clear();
        let (text, limit) = match self.max_length {
            Some(m) => {
                let chars = m.saturating_mul(self.tokenizer.median_token_chars());
                let cut = if text.len() <= chars {
                    text.len() // fewer bytes than the limit in characters: nothing to cut
                } else {
                    text.char_indices()
                        .nth(chars)
                        .map_or(text.len(), |(i, _)| i)
                };
                (&text[..cut], m)
            }
            None => (text, usize::MAX),
        };
        self.tokenizer.encode(text, limit, scratch, ids);
        ids.truncate(limit);
    }

    fn pool(&self, ids: &[u32], acc: &mut Vec<i32>, out: &mut [f32]) {
        let unk = self.tokenizer.unk_id();
        let dim = self.tensors.dim;
        let mut count = 0usize;
        let known = ids.iter().filter(|&&id| id != unk).map(|&id| id as usize);
        match (
            &self.tensors.table,
            &self.tensors.weights,
            &self.tensors.mapping,
        ) {
            (Table::I8(t), None, None) => {
                // Integer sums are exact (at most 512 · 127 per value), four rows at a
                // time so the accumulator is loaded and stored once per four rows.
                acc.clear();
                acc.resize(dim, 0);
                let row = |id: usize| &t[id * dim..(id + 1) * dim];
                let mut pending = [0usize; 4];
                let mut n = 0;
                for id in known {
                    pending[n] = id;
                    n += 1;
                    count += 1;
                    if n == 4 {
                        let (r0, r1, r2, r3) = (
                            row(pending[0]),
                            row(pending[1]),
                            row(pending[2]),
                            row(pending[3]),
                        );
                        for j in 0..dim {
                            acc[j] += (r0[j] as i8 as i32 + r1[j] as i8 as i32)
                                + (r2[j] as i8 as i32 + r3[j] as i8 as i32);
                        }
                        n = 0;
                    }
                }
                for &id in &pending[..n] {
                    for (a, &v) in acc.iter_mut().zip(row(id)) {
                        *a += v as i8 as i32;
                    }
                }
                for (o, &a) in out.iter_mut().zip(acc.iter()) {
                    *o = a as f32;
                }
            }
            (table, weights, mapping) => {
                out.fill(0.0);
                for id in known {
                    let row = mapping.as_ref().map_or(id, |m| m[id] as usize);
                    let w = weights.as_ref().map_or(1.0, |w| w[id]);
                    let range = row * dim..(row + 1) * dim;
                    match table {
                        Table::I8(t) => {
                            for (o, &v) in out.iter_mut().zip(&t[range]) {
                                *o += (v as i8) as f32 * w;
                            }
                        }
                        Table::F32(t) => {
                            for (o, &v) in out.iter_mut().zip(&t[range]) {
                                *o += v * w;
                            }
                        }
                    }
                    count += 1;
                }
            }
        }
        if count == 0 {
            out.fill(0.0);
            return;
        }
        let n = count as f32;
        for o in out.iter_mut() {
            *o /= n;
        }
        if self.normalize {
            let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt() + 1e-32;
            for o in out.iter_mut() {
                *o /= norm;
            }
        }
    }
}

impl Embedder for StaticModel {
    fn id(&self) -> &str {
        StaticModel::id(self)
    }

    fn dim(&self) -> usize {
        self.tensors.dim
    }

    fn embed_into(&self, texts: &[&str], out: &mut Vec<f32>) -> Result<()> {
        self.encode_into(texts, out);
        Ok(())
    }
}

/// What `config.json` says about loading and embedding; its other keys are ignored.
struct Config {
    normalize: bool,
    /// `None` when `config.json` sets `"max_length": null`: no truncation.
    max_length: Option<usize>,
    hidden_dim: Option<usize>,
}

impl Config {
    fn parse(bytes: &[u8], path: &Path) -> Result<Config> {
        let config: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(bytes)
            .map_err(|e| Error::invalid(path, format_args!("not a JSON object: {e}")))?;
        let invalid = |reason: &str| Error::invalid(path, reason);
        let normalize = match config.get("normalize") {
            None | Some(serde_json::Value::Null) => false,
            Some(v) => v
                .as_bool()
                .ok_or_else(|| invalid("\"normalize\" is not true or false"))?,
        };
        let max_length = match config.get("max_length") {
            None => Some(DEFAULT_MAX_LENGTH),
            Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| invalid("\"max_length\" is not a positive integer"))?
                    as usize,
            ),
        };
        let hidden_dim = match config.get("hidden_dim") {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| invalid("\"hidden_dim\" is not an integer"))?
                    as usize,
            ),
        };
        Ok(Config {
            normalize,
            max_length,
            hidden_dim,
        })
    }
}

/// The built-in model's prepared tokenizer, or else the one `tokenizer.json` describes.
fn load_tokenizer(bytes: &[u8], path: &Path, builtin: bool) -> Result<WordPiece> {
    let prepared = builtin
        .then(|| WordPiece::from_image(BUILTIN_TOKENIZER_IMAGE))
        .flatten();
    match prepared {
        Some(t) => Ok(t),
        None => WordPiece::from_json(bytes).map_err(|reason| Error::invalid(path, reason)),
    }
}

/// The tensors of `model.safetensors` that embedding reads, checked against
/// `config.json` and the tokenizer.
struct ModelTensors {
    dim: usize,
    rows: usize,
    dtype: Dtype,
    table: Table,
    weights: Option<Vec<f32>>,
    mapping: Option<Vec<u32>>,
}

impl ModelTensors {
    /// Reads the tensors of the model file of `files`: `hidden_dim` is
    /// `config.json`'s, `vocab` the size of the tokenizer's vocabulary. The error
    /// is a short reason; the caller names the file.
    fn read(files: &Files<'_>, hidden_dim: Option<usize>, vocab: usize) -> Result<Self, String> {
        let bytes: &[u8] = &files.model.0;
        let tensors = safetensors::parse(bytes)?;
        let (name, emb) = find_embeddings(&tensors)?;
        let (rows, dim) = embeddings_shape(name, emb, hidden_dim)?;
        let table = read_table(name, emb, files)?;
        let weights = match tensors.get("weights") {
            None => None,
            Some(t) => Some(read_weights(t, bytes, vocab)?),
        };
        let mapping = match tensors.get("mapping") {
            None => None,
            Some(t) => Some(read_mapping(t, bytes, vocab, rows)?),
        };
        // Without a mapping, token ids index the rows directly.
        if mapping.is_none() && rows != vocab {
            return Err(format!(
                "embeddings have {rows} rows but {} has {vocab} tokens",
                files
                    .tokenizer
                    .1
                    .file_name()
                    .map_or("the tokenizer".into(), |n| n.to_string_lossy())
            ));
        }
        Ok(ModelTensors {
            dim,
            rows,
            dtype: emb.dtype,
            table,
            weights,
            mapping,
        })
    }
}

/// The embedding matrix and its name: `embeddings` as model2vec writes it, or
/// `embedding.weight`.
fn find_embeddings(tensors: &BTreeMap<String, Tensor>) -> Result<(&'static str, &Tensor), String> {
    ["embeddings", "embedding.weight"]
        .iter()
        .find_map(|n| tensors.get(*n).map(|t| (*n, t)))
        .ok_or_else(|| "no \"embeddings\" tensor of a readable type".into())
}

/// The (rows, columns) of the embedding matrix, which must be a non-empty
/// matrix as wide as `config.json`'s `hidden_dim`, where it has one.
fn embeddings_shape(
    name: &str,
    emb: &Tensor,
    hidden_dim: Option<usize>,
) -> Result<(usize, usize), String> {
    let &[rows, dim] = emb.shape.as_slice() else {
        return Err(format!(
            "tensor {name:?} has shape {:?}, expected 2 dimensions",
            emb.shape
        ));
    };
    if dim == 0 || rows == 0 {
        return Err(format!("tensor {name:?} is empty ({rows}x{dim})"));
    }
    if let Some(h) = hidden_dim
        && h != dim
    {
        return Err(format!(
            "embeddings have {dim} columns but config.json says hidden_dim {h}"
        ));
    }
    Ok((rows, dim))
}

/// The embedding table of the model file of `files`: int8 stays int8, every
/// float type becomes f32.
fn read_table(name: &str, emb: &Tensor, files: &Files<'_>) -> Result<Table, String> {
    if emb.dtype == Dtype::I8 {
        return Ok(Table::I8(files.model_range(emb.range.clone())));
    }
    safetensors::to_f32(emb.dtype, &files.model.0[emb.range.clone()])
        .map(Table::F32)
        .ok_or_else(|| format!("tensor {name:?} has unsupported type {:?}", emb.dtype))
}

/// The per-token `weights`: floats, one per vocabulary token.
fn read_weights(t: &Tensor, bytes: &[u8], vocab: usize) -> Result<Vec<f32>, String> {
    let w = safetensors::to_f32(t.dtype, &bytes[t.range.clone()])
        .filter(|_| t.dtype != Dtype::I8)
        .ok_or_else(|| format!("tensor \"weights\" has unsupported type {:?}", t.dtype))?;
    if w.len() != vocab {
        return Err(format!(
            "tensor \"weights\" has {} values for a vocabulary of {vocab} tokens",
            w.len()
        ));
    }
    Ok(w)
}

/// The token-to-row `mapping`: one row of the `rows` of the table per vocabulary token.
fn read_mapping(t: &Tensor, bytes: &[u8], vocab: usize, rows: usize) -> Result<Vec<u32>, String> {
    let m = safetensors::to_indices(t.dtype, &bytes[t.range.clone()])
        .ok_or("tensor \"mapping\" is not a non-negative I32/I64 vector")?;
    if m.len() != vocab {
        return Err(format!(
            "tensor \"mapping\" has {} entries for a vocabulary of {vocab} tokens",
            m.len()
        ));
    }
    if let Some(&r) = m.iter().find(|&&r| r as usize >= rows) {
        return Err(format!("tensor \"mapping\" points at row {r} of {rows}"));
    }
    Ok(m)
}

/// `model2vec-d<dim>-<hash>`: the hash covers the three files and the version
/// of this crate's embedding code.
fn content_id(dim: usize, config: &[u8], model: &[u8], tokenizer: &[u8]) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"lode-embed model2vec");
    hasher.update(&EMBED_VERSION.to_le_bytes());
    for part in [config, model, tokenizer] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    format!("model2vec-d{dim}-{}", &hasher.finalize().to_hex()[..16])
}

#[cfg(test)]
mod tests;
