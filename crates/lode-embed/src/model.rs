//! [`StaticModel`]: a model2vec-format static embedding model.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::path::{Path, PathBuf};

use rayon::prelude::*;

use crate::Embedder;
use crate::error::{Error, Result};
use crate::safetensors::{self, Dtype};
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
    dim: usize,
    rows: usize,
    dtype: Dtype,
    tokenizer: WordPiece,
    table: Table,
    weights: Option<Vec<f32>>,
    mapping: Option<Vec<u32>>,
    normalize: bool,
    max_length: Option<usize>,
}

impl fmt::Debug for StaticModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StaticModel")
            .field("id", &self.id())
            .field("dim", &self.dim)
            .field("rows", &self.rows)
            .field("dtype", &self.dtype)
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
    /// dimensions, int8 (see `model/MODEL_CARD.md`). Loading borrows the table from
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

        let config: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(config_bytes)
                .map_err(|e| Error::invalid(config_path, format_args!("not a JSON object: {e}")))?;
        let normalize = match config.get("normalize") {
            None | Some(serde_json::Value::Null) => false,
            Some(v) => v
                .as_bool()
                .ok_or_else(|| Error::invalid(config_path, "\"normalize\" is not true or false"))?,
        };
        let max_length = match config.get("max_length") {
            None => Some(DEFAULT_MAX_LENGTH),
            Some(serde_json::Value::Null) => None,
            Some(v) => Some(v.as_u64().filter(|&n| n > 0).ok_or_else(|| {
                Error::invalid(config_path, "\"max_length\" is not a positive integer")
            })? as usize),
        };
        let hidden_dim =
            match config.get("hidden_dim") {
                None | Some(serde_json::Value::Null) => None,
                Some(v) => Some(v.as_u64().ok_or_else(|| {
                    Error::invalid(config_path, "\"hidden_dim\" is not an integer")
                })? as usize),
            };

        let prepared = files
            .builtin
            .then(|| WordPiece::from_image(BUILTIN_TOKENIZER_IMAGE))
            .flatten();
        let tokenizer = match prepared {
            Some(t) => t,
            None => WordPiece::from_json(tokenizer_bytes)
                .map_err(|reason| Error::invalid(tokenizer_path, reason))?,
        };

        let bad = |reason: String| Error::invalid(model_path, reason);
        let tensors = safetensors::parse(model_bytes).map_err(bad)?;
        let (name, emb) = ["embeddings", "embedding.weight"]
            .iter()
            .find_map(|n| tensors.get(*n).map(|t| (*n, t)))
            .ok_or_else(|| bad("no \"embeddings\" tensor of a readable type".into()))?;
        let &[rows, dim] = emb.shape.as_slice() else {
            return Err(bad(format!(
                "tensor {name:?} has shape {:?}, expected 2 dimensions",
                emb.shape
            )));
        };
        if dim == 0 || rows == 0 {
            return Err(bad(format!("tensor {name:?} is empty ({rows}x{dim})")));
        }
        if let Some(h) = hidden_dim
            && h != dim
        {
            return Err(bad(format!(
                "embeddings have {dim} columns but config.json says hidden_dim {h}"
            )));
        }
        let table = match (emb.dtype, model_bytes) {
            (Dtype::I8, Cow::Borrowed(b)) => {
                let b: &'static [u8] = b;
                Table::I8(Cow::Borrowed(&b[emb.range.clone()]))
            }
            (Dtype::I8, Cow::Owned(b)) => Table::I8(Cow::Owned(b[emb.range.clone()].to_vec())),
            (dtype, b) => Table::F32(
                safetensors::to_f32(dtype, &b[emb.range.clone()]).ok_or_else(|| {
                    bad(format!("tensor {name:?} has unsupported type {dtype:?}"))
                })?,
            ),
        };

        let vocab = tokenizer.vocab_size();
        let weights = match tensors.get("weights") {
            None => None,
            Some(t) => {
                let w = safetensors::to_f32(t.dtype, &model_bytes[t.range.clone()])
                    .filter(|_| t.dtype != Dtype::I8)
                    .ok_or_else(|| {
                        bad(format!(
                            "tensor \"weights\" has unsupported type {:?}",
                            t.dtype
                        ))
                    })?;
                if w.len() != vocab {
                    return Err(bad(format!(
                        "tensor \"weights\" has {} values for a vocabulary of {vocab} tokens",
                        w.len()
                    )));
                }
                Some(w)
            }
        };
        let mapping = match tensors.get("mapping") {
            None => None,
            Some(t) => {
                let m = safetensors::to_indices(t.dtype, &model_bytes[t.range.clone()])
                    .ok_or_else(|| {
                        bad("tensor \"mapping\" is not a non-negative I32/I64 vector".into())
                    })?;
                if m.len() != vocab {
                    return Err(bad(format!(
                        "tensor \"mapping\" has {} entries for a vocabulary of {vocab} tokens",
                        m.len()
                    )));
                }
                if let Some(&r) = m.iter().find(|&&r| r as usize >= rows) {
                    return Err(bad(format!(
                        "tensor \"mapping\" points at row {r} of {rows}"
                    )));
                }
                Some(m)
            }
        };
        if mapping.is_none() && rows != vocab {
            return Err(bad(format!(
                "embeddings have {rows} rows but {} has {vocab} tokens",
                tokenizer_path
                    .file_name()
                    .map_or("the tokenizer".into(), |n| n.to_string_lossy())
            )));
        }

        let id = if files.builtin {
            format!("model2vec-d{dim}-{BUILTIN_ID_HASH}")
        } else {
            content_id(dim, config_bytes, model_bytes, tokenizer_bytes)
        };

        Ok(StaticModel {
            id,
            dim,
            rows,
            dtype: emb.dtype,
            tokenizer,
            table,
            weights,
            mapping,
            normalize,
            max_length,
        })
    }

    /// Embedding dimension.
    pub fn dim(&self) -> usize {
        self.dim
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
        out.resize(start + texts.len() * self.dim, 0.0);
        let rows = &mut out[start..];
        if texts.len() >= PARALLEL_MIN {
            rows.par_chunks_mut(self.dim)
                .zip(texts.par_iter())
                .with_min_len(16)
                .for_each(|(row, text)| self.encode_one(text, row));
        } else {
            for (row, text) in rows.chunks_mut(self.dim).zip(texts) {
                self.encode_one(text, row);
            }
        }
    }

    /// The embeddings of `texts`, row after row.
    pub fn encode(&self, texts: &[&str]) -> Vec<f32> {
        let mut out = Vec::with_capacity(texts.len() * self.dim);
        self.encode_into(texts, &mut out);
        out
    }

    /// Writes the embedding of `text` into `out` (`out.len() == dim`).
    ///
    /// # Panics
    ///
    /// If `out.len() != self.dim()`.
    pub fn encode_one(&self, text: &str, out: &mut [f32]) {
        assert_eq!(out.len(), self.dim, "output row has the wrong length");
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
        let dim = self.dim;
        let mut count = 0usize;
        let known = ids.iter().filter(|&&id| id != unk).map(|&id| id as usize);
        match (&self.table, &self.weights, &self.mapping) {
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
        self.dim
    }

    fn embed_into(&self, texts: &[&str], out: &mut Vec<f32>) -> Result<()> {
        self.encode_into(texts, out);
        Ok(())
    }
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
mod tests {
    use super::*;

    #[test]
    fn the_builtin_models_compiled_tokenizer_and_id_are_what_loading_its_files_gives() {
        let builtin = StaticModel::builtin();
        let from_files =
            StaticModel::from_bytes(BUILTIN_CONFIG, BUILTIN_MODEL, BUILTIN_TOKENIZER).unwrap();
        assert_eq!(builtin.id(), from_files.id());
        assert_eq!(builtin.tokenizer, from_files.tokenizer);
        assert_eq!(
            WordPiece::from_image(BUILTIN_TOKENIZER_IMAGE).as_ref(),
            Some(&from_files.tokenizer)
        );
    }

    #[test]
    fn builtin_loads_and_embeds() {
        let m = StaticModel::builtin();
        assert_eq!(m.dim(), 256);
        assert!(m.normalizes());
        assert!(m.id().starts_with("model2vec-d256-"), "{}", m.id());
        let v = m.encode(&["fn main() {}", ""]);
        assert_eq!(v.len(), 512);
        let norm: f32 = v[..256].iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5, "{norm}");
        assert!(
            v[256..].iter().all(|&x| x == 0.0),
            "empty text embeds to zero"
        );
    }

    #[test]
    fn batch_equals_one_by_one_and_is_deterministic() {
        let m = StaticModel::builtin();
        let texts: Vec<String> = (0..200)
            .map(|i| format!("fn handler_{i}(req: Request) -> Response"))
            .collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let batch = m.encode(&refs); // parallel path
        let mut one = vec![0.0; m.dim()];
        for (i, t) in refs.iter().enumerate() {
            m.encode_one(t, &mut one);
            assert_eq!(&batch[i * 256..(i + 1) * 256], &one[..]);
        }
        assert_eq!(batch, m.encode(&refs));
    }
}
