//! Embedders for lode: text in, vectors out.
//!
//! The principal types:
//!
//! - [`Embedder`]: what the index and search need from any embedding backend: an
//!   [`id`](Embedder::id) for index fingerprints, a [`dim`](Embedder::dim), and batched
//!   [`embed_into`](Embedder::embed_into) that appends rows to a caller-owned flat buffer
//!   (reuse it across batches: no per-text allocations).
//! - [`StaticModel`]: the model2vec static-embedding backend. [`StaticModel::builtin`]
//!   is the model compiled into the binary (all-MiniLM-L6-v2 distilled to 256
//!   dimensions and tuned for code, int8, 7.6 MB; `model/MODEL_CARD.md`),
//!   [`StaticModel::from_dir`] reads any local model2vec directory. Embedding a text =
//!   WordPiece tokens, mean of their rows, L2 normalization, exactly as Python's
//!   `model2vec` computes it.
//! - [`RemoteEmbedder`]: an embedding server, OpenAI-compatible (`/v1/embeddings`) or
//!   Ollama (`/api/embed`), with batches, bounded retries, a deadline per call and
//!   capped replies ([`remote`] says exactly; the HTTP itself is `lode_http`'s);
//!   [`RemoteEmbedder::connect`] probes it for its dimension.
//! - [`HubModel`]: a model2vec model named `hf:ORG/NAME`, downloaded once into a
//!   directory that [`StaticModel::from_dir`] then reads.
//! - [`vectors`]: storage encodings ([`VectorEncoding`]: f32, int8, binary) and their
//!   similarity kernels.
//! - [`Error`]: a load failure, one line naming the file.
//!
//! ```
//! use lode_embed::{Embedder, StaticModel, VectorEncoding};
//!
//! let model = StaticModel::builtin();
//! let texts = ["fn parse_config(path: &Path) -> Config", "read the configuration file", "SELECT 1"];
//! let mut rows = Vec::new();
//! model.embed_into(&texts, &mut rows)?; // 3 rows of model.dim() values
//! let dim = model.dim();
//! let row = |i: usize| &rows[i * dim..(i + 1) * dim];
//! let cos = |a, b| lode_embed::vectors::dot(row(a), row(b));
//! assert!(cos(0, 1) > cos(0, 2));
//!
//! // Store compactly and score a query against the stored bytes.
//! let mut stored = Vec::new();
//! VectorEncoding::Int8.encode(row(0), &mut stored);
//! let query = VectorEncoding::Int8.query(row(1));
//! assert!((query.score(&stored) - cos(0, 1)).abs() < 0.02);
//! # Ok::<(), lode_embed::Error>(())
//! ```
//!
//! # Why an own loader
//!
//! The alternative was the `model2vec-rs` crate. Measured side by side (docs/benchmarks.md,
//! "An own model2vec loader"), this crate gives identical vectors at the same speed with a
//! fifth of the build time and a third of the dependency tree.
//!
//! The cost is this crate's ~1,200 lines (with docs) and one tokenizer pipeline: BERT WordPiece
//! (`BertNormalizer` + `BertPreTokenizer` + `WordPiece`), which is what model2vec
//! distills from BERT-family teachers and what the English `potion` models use. A model
//! with another tokenizer (Unigram, BPE) fails to load with one line naming its
//! `tokenizer.json`. Correctness is pinned by `tests/it/reference.rs`: token ids and
//! embeddings of 21 strings (code, prose, accents, CJK, emoji, control characters,
//! literal special tokens, a text past the 512-token limit, the empty string) equal
//! Python model2vec's to within 2.1e-7.
//!
//! The built-in model is prepared when lode is compiled (`build.rs`): its tokenizer
//! is parsed and its vocabulary tries built into an image that loading only copies,
//! and its [`StaticModel::id`] is hashed there; the 7.6 MB int8 table is borrowed
//! from the binary, not copied. Loading it takes 3.0–3.6 ms of CPU (it was 27.9 ms
//! when a process parsed `tokenizer.json`, built the tries and hashed the files;
//! `perf stat -r 30 -e task-clock target/release/examples/load_time`).

#![deny(missing_docs)]

mod error;
pub mod hub;
mod model;
pub mod remote;
mod safetensors;
mod tokenizer;
pub mod vectors;

pub use error::{Error, Result};
pub use hub::HubModel;
pub use model::StaticModel;
pub use remote::{Protocol, RemoteEmbedder, RemoteOptions};
pub use vectors::VectorEncoding;

/// An embedding backend.
///
/// Rows are appended to a flat, caller-owned buffer, `dim()` values per text, in the
/// order of `texts`; a caller that reuses the buffer across batches allocates nothing
/// per text. Implementations are shared across threads.
pub trait Embedder: Send + Sync {
    /// A stable identifier of the model and everything that shapes its vectors
    /// (for the built-in and local models: the file contents' hash), for index
    /// fingerprints: a different id means the stored vectors must be rebuilt.
    fn id(&self) -> &str;

    /// Number of values per embedding.
    fn dim(&self) -> usize;

    /// Appends the embeddings of `texts` to `out` (`texts.len() * dim()` values).
    /// On error `out` may hold a partial batch; truncate it to its old length.
    fn embed_into(&self, texts: &[&str], out: &mut Vec<f32>) -> Result<()>;

    /// The embeddings of `texts` in a new buffer, row after row.
    fn embed(&self, texts: &[&str]) -> Result<Vec<f32>> {
        let mut out = Vec::with_capacity(texts.len() * self.dim());
        self.embed_into(texts, &mut out)?;
        Ok(out)
    }
}
