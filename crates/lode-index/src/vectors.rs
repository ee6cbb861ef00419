//! Chunk vectors for the semantic side of search.
//!
//! Every chunk is embedded by the embedding phase that follows a build
//! (`crate::embed`) and stored in the configured encoding (`embed.encoding`,
//! int8 by default), one row per file holding its chunks' ids and vectors, so
//! a dense scan reads a few thousand rows rather than one per chunk.
//!
//! The principal types:
//!
//! - The process's backend, set once by [`configure`] from the user config:
//!   the built-in model, a local model2vec directory, or an embedding server
//!   (`lode_embed::RemoteEmbedder`, OpenAI-compatible or Ollama).
//! - [`VectorSpec`]: everything an index's vectors depend on (backend, model
//!   id, dimension, encoding, document prefix, chunking), stored in the index
//!   and part of its fingerprint; [`VectorChange`] says what a difference
//!   between two of them calls for.
//! - [`Vectors`]: the model of one build ([`for_build`]) or of one index's
//!   queries ([`for_index`]).
//!
//! **One index, one model.** A build whose server fails at the start is done
//! with the built-in model; an embedding phase whose server fails half-way
//! switches the index to the built-in model, dropping every vector in the same
//! transaction (`crate::embed`). Either way the built-in spec is recorded, so
//! the next build with a working server rebuilds. A query embeds with the model that made the
//! index's vectors; when that is a server that fails, the query runs
//! lexical-only with a note, never against vectors of another model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};

use lode_core::{Config, EmbedBackend, EmbedConfig};
use lode_embed::vectors::Query;
use lode_embed::{Embedder, Protocol, RemoteEmbedder, RemoteOptions, StaticModel, VectorEncoding};
use serde::{Deserialize, Serialize};

/// Characters of a chunk given to the model: mean pooling over a whole large
/// chunk blurs it, and the head (signature, doc) says most.
const EMBED_CHARS: usize = 2000;

/// The built-in model's dimension (checked by a test), known without loading it.
const BUILTIN_DIM: usize = 256;

/// How long a server that failed is left alone before a build tries it again
/// (a long-lived `lode mcp` must not pay a deadline on every query).
const RETRY_AFTER: Duration = Duration::from_secs(60);

/// Texts per embedding call of a static model in the embedding phase: large
/// (embedded on the rayon pool), yet a batch is a few tens of milliseconds,
/// so the phase commits and can stop often.
const STATIC_BATCH: usize = 1024;

/// Query embeddings kept per process for server backends.
const QUERY_CACHE_ENTRIES: usize = 256;

/// What the stored vectors of an index depend on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VectorSpec {
    /// `builtin`, `local`, `openai` or `ollama`.
    pub backend: String,
    /// The model's id (the built-in or local model's content hash, or
    /// `<backend>:<model name>` for a server).
    pub model: String,
    /// Dimensions of a vector; 0 for a server not asked yet ([`intended`]).
    pub dim: usize,
    /// `int8`, `f32` or `binary`.
    pub encoding: String,
    /// Prepended to each chunk's text before embedding.
    pub document_prefix: String,
    /// The chunking rules and the characters of a chunk embedded.
    pub chunking: String,
}

impl VectorSpec {
    /// The text hashed into the index fingerprint. A server model's dimension
    /// is left out: it is known only by asking the server, and the fingerprint
    /// is computed on every query without a request; the model name decides
    /// it, and a build that finds it changed rebuilds anyway (`build.rs`
    /// compares the whole stored spec).
    pub fn fingerprint(&self) -> String {
        let mut s = self.clone();
        if s.is_server() {
            s.dim = 0;
        }
        serde_json::to_string(&s).unwrap_or_default()
    }

    /// The whole spec as stored in the index.
    pub fn to_meta(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether the vectors come from an embedding server.
    pub fn is_server(&self) -> bool {
        matches!(self.backend.as_str(), "openai" | "ollama")
    }

    /// The spec stored in an index (`meta.vectors`), if it is one this lode reads.
    pub fn parse(text: &str) -> Option<VectorSpec> {
        serde_json::from_str(text).ok()
    }

    fn encoding(&self) -> Option<VectorEncoding> {
        VectorEncoding::from_name(&self.encoding)
    }
}

/// What a change of the embedding settings calls for, by comparing the
/// stored spec (and query prefix) with the current ones.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct VectorChange {
    /// `rebuild_vectors`, `clear_query_cache` or `none`.
    pub action: &'static str,
    /// What differs: `backend`, `model`, `dimension`, `encoding`,
    /// `document_prefix`, `chunking`, `query_prefix`.
    pub changed: Vec<&'static str>,
}

impl VectorChange {
    /// Compares the stored spec and query prefix with the current ones. No
    /// stored spec (an older lode's index) counts as a changed model; a
    /// dimension of 0 on either side is not compared.
    pub fn between(
        stored: Option<&VectorSpec>,
        stored_query_prefix: &str,
        now: &VectorSpec,
        query_prefix: &str,
    ) -> VectorChange {
        let mut changed = Vec::new();
        match stored {
            None => changed.push("model"), // an index of an older lode: unknown vectors
            Some(s) => {
                let fields = [
                    ("backend", s.backend != now.backend),
                    ("model", s.model != now.model),
                    // 0: a server's dimension, unknown until it is asked.
                    ("dimension", s.dim != now.dim && s.dim != 0 && now.dim != 0),
                    ("encoding", s.encoding != now.encoding),
                    ("document_prefix", s.document_prefix != now.document_prefix),
                    ("chunking", s.chunking != now.chunking),
                ];
                changed.extend(fields.iter().filter(|f| f.1).map(|f| f.0));
            }
        }
        let action = if !changed.is_empty() {
            "rebuild_vectors"
        } else if stored_query_prefix != query_prefix {
            "clear_query_cache"
        } else {
            "none"
        };
        if stored_query_prefix != query_prefix {
            changed.push("query_prefix");
        }
        VectorChange { action, changed }
    }
}

/// The backend chosen for this process.
enum Choice {
    Builtin,
    Local(Arc<StaticModel>),
    Remote(Arc<Remote>),
}

/// A configured embedding server and whether it answers.
struct Remote {
    options: RemoteOptions,
    url: String,
    query_prefix: String,
    document_prefix: String,
    conn: Mutex<Conn>,
    queries: Mutex<HashMap<String, Arc<Vec<f32>>>>,
}

enum Conn {
    Untried,
    Up(Arc<RemoteEmbedder>),
    Down { since: Instant, reason: String },
}

impl Remote {
    fn backend(&self) -> &'static str {
        self.options.protocol.name()
    }

    /// The connected server, connecting (one probe request) when it was never
    /// tried or failed over [`RETRY_AFTER`] ago.
    fn embedder(&self) -> Result<Arc<RemoteEmbedder>, String> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        match &*conn {
            Conn::Up(e) => return Ok(e.clone()),
            Conn::Down { since, reason } if since.elapsed() < RETRY_AFTER => {
                return Err(reason.clone());
            }
            _ => {}
        }
        match RemoteEmbedder::connect(self.options.clone()) {
            Ok(e) => {
                let e = Arc::new(e);
                *conn = Conn::Up(e.clone());
                Ok(e)
            }
            Err(e) => {
                let reason = e.to_string();
                *conn = Conn::Down {
                    since: Instant::now(),
                    reason: reason.clone(),
                };
                Err(reason)
            }
        }
    }

    fn mark_down(&self, reason: &str) {
        *self.conn.lock().unwrap_or_else(|p| p.into_inner()) = Conn::Down {
            since: Instant::now(),
            reason: reason.to_string(),
        };
    }

    fn spec(&self, dim: usize, encoding: VectorEncoding) -> VectorSpec {
        VectorSpec {
            backend: self.backend().to_string(),
            model: format!("{}:{}", self.backend(), self.options.model),
            dim,
            encoding: encoding.name().to_string(),
            document_prefix: self.document_prefix.clone(),
            chunking: chunking(),
        }
    }
}

static CHOICE: RwLock<Option<Arc<Choice>>> = RwLock::new(None);
static BUILTIN: OnceLock<StaticModel> = OnceLock::new();

fn choice() -> Arc<Choice> {
    CHOICE
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .clone()
        .unwrap_or_else(|| Arc::new(Choice::Builtin))
}

fn builtin() -> &'static StaticModel {
    BUILTIN.get_or_init(StaticModel::builtin)
}

fn chunking() -> String {
    format!(
        "extract-{}:chars-{EMBED_CHARS}",
        lode_parse::EXTRACT_VERSION
    )
}

/// Marks the chunking of a static model's spec: chunk texts and queries are
/// embedded with compound identifiers written out as words
/// ([`split_identifiers`]).
const WORDS: &str = ":words";

/// What a static model (built-in or local) embeds per chunk.
fn static_chunking() -> String {
    format!("{}{WORDS}", chunking())
}

/// Chooses this process's embedding backend from the user's `[embed]`
/// (`model_dir`, from `--model`, overrides it with a local model2vec
/// directory). Nothing is fatal: a backend that cannot be set up leaves the
/// built-in model, and the returned note says why. A server is not contacted
/// here; the first build or query does that.
pub fn configure(embed: &EmbedConfig, model_dir: Option<&std::path::Path>) -> Option<String> {
    let (choice, note) = match (model_dir, embed.backend()) {
        (Some(dir), _) => local(dir),
        (None, EmbedBackend::Builtin) => match &embed.model {
            Some(dir) => local(std::path::Path::new(dir)),
            None => (Choice::Builtin, None),
        },
        (None, backend) => match remote(embed, backend) {
            Ok(r) => (Choice::Remote(Arc::new(r)), None),
            Err(e) => (
                Choice::Builtin,
                Some(format!(
                    "embedding backend {} not used ({e}); using the built-in model",
                    backend.name()
                )),
            ),
        },
    };
    set_choice(choice);
    note
}

/// Makes the local model2vec directory `dir` this process's model, or says
/// why it does not load, changing nothing: for a caller that must not fall
/// back to the built-in model, as a benchmark of that model.
pub fn use_local(dir: &std::path::Path) -> Result<(), String> {
    let model = StaticModel::from_dir(dir).map_err(|e| e.to_string())?;
    set_choice(Choice::Local(Arc::new(model)));
    Ok(())
}

fn set_choice(choice: Choice) {
    *CHOICE.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(choice));
}

fn local(dir: &std::path::Path) -> (Choice, Option<String>) {
    match StaticModel::from_dir(dir) {
        Ok(m) => (Choice::Local(Arc::new(m)), None),
        Err(e) => (
            Choice::Builtin,
            Some(format!("model not used ({e}); using the built-in model")),
        ),
    }
}

fn remote(embed: &EmbedConfig, backend: EmbedBackend) -> Result<Remote, String> {
    let protocol = match backend {
        EmbedBackend::Openai => Protocol::OpenAi,
        _ => Protocol::Ollama,
    };
    let endpoint = match (&embed.endpoint, protocol) {
        (Some(e), _) => e.clone(),
        (None, Protocol::Ollama) => "http://127.0.0.1:11434".to_string(),
        (None, Protocol::OpenAi) => return Err("embed.endpoint is not set".into()),
    };
    let model = embed
        .model
        .clone()
        .ok_or_else(|| "embed.model (the model name) is not set".to_string())?;
    let url = protocol.url(&endpoint)?;
    lode_core::endpoint::check_endpoint(&url, embed.allow_private_endpoints == Some(true))?;
    let mut options = RemoteOptions::new(protocol, &endpoint, &model);
    options.api_key_env = embed.api_key_env.clone();
    options.batch_size = embed.batch_size();
    options.deadline = Duration::from_millis(embed.deadline_ms());
    Ok(Remote {
        options,
        url,
        query_prefix: embed.query_prefix.clone().unwrap_or_default(),
        document_prefix: embed.document_prefix.clone().unwrap_or_default(),
        conn: Mutex::new(Conn::Untried),
        queries: Mutex::new(HashMap::new()),
    })
}

/// The model behind a [`Vectors`].
enum Model {
    Builtin,
    Local(Arc<StaticModel>),
    Remote(Arc<Remote>, Arc<RemoteEmbedder>),
}

/// The embedding of one build, or of one index's queries.
pub struct Vectors {
    spec: VectorSpec,
    encoding: VectorEncoding,
    model: Model,
    /// Why a configured server is not used by this build.
    fallback: Option<String>,
    /// The first embedding failure of this build.
    failure: Mutex<Option<String>>,
}

/// What a build with `config` writes now: the configured backend, or the
/// built-in model when the configured server does not answer
/// ([`Vectors::fallback_note`] says so).
pub fn for_build(config: &Config) -> Vectors {
    let encoding = encoding_of(config);
    match &*choice() {
        Choice::Builtin => builtin_vectors(encoding),
        Choice::Local(m) => Vectors {
            spec: local_spec(m, encoding),
            encoding,
            model: Model::Local(m.clone()),
            fallback: None,
            failure: Mutex::new(None),
        },
        Choice::Remote(r) => match r.embedder() {
            Ok(e) => Vectors {
                spec: r.spec(e.dim(), encoding),
                encoding,
                model: Model::Remote(r.clone(), e),
                fallback: None,
                failure: Mutex::new(None),
            },
            Err(reason) => {
                let mut v = builtin_vectors(encoding);
                v.fallback = Some(format!(
                    "embedding endpoint failed ({reason}); this build uses the built-in model"
                ));
                v
            }
        },
    }
}

/// What the vectors of an index built with `config` should be, without
/// contacting a server (whose dimension is then 0): what the fingerprint of
/// a query's freshness check is made of. A build may differ from it when the
/// server fails ([`for_build`]).
pub fn intended(config: &Config) -> VectorSpec {
    let encoding = encoding_of(config);
    match &*choice() {
        Choice::Builtin => builtin_vectors(encoding).spec,
        Choice::Local(m) => local_spec(m, encoding),
        Choice::Remote(r) => r.spec(0, encoding),
    }
}

fn local_spec(m: &StaticModel, encoding: VectorEncoding) -> VectorSpec {
    VectorSpec {
        backend: "local".into(),
        model: m.id().to_string(),
        dim: m.dim(),
        encoding: encoding.name().into(),
        document_prefix: String::new(),
        chunking: static_chunking(),
    }
}

/// The built-in model's vectors in the configured encoding: what a build
/// falls back to.
pub fn builtin_for(config: &Config) -> Vectors {
    builtin_vectors(encoding_of(config))
}

fn builtin_vectors(encoding: VectorEncoding) -> Vectors {
    Vectors {
        spec: VectorSpec {
            backend: "builtin".into(),
            model: StaticModel::builtin_fingerprint().to_string(),
            dim: BUILTIN_DIM,
            encoding: encoding.name().into(),
            document_prefix: String::new(),
            chunking: static_chunking(),
        },
        encoding,
        model: Model::Builtin,
        fallback: None,
        failure: Mutex::new(None),
    }
}

fn encoding_of(config: &Config) -> VectorEncoding {
    VectorEncoding::from_name(config.embed.encoding().name()).unwrap_or(VectorEncoding::Int8)
}

/// The query prefix in force: the server backend's, none for local models.
pub fn query_prefix() -> String {
    match &*choice() {
        Choice::Remote(r) => r.query_prefix.clone(),
        _ => String::new(),
    }
}

/// The model that embeds queries against an index whose vectors are
/// `stored`: the same model, or an error saying why there is none.
pub fn for_index(stored: &VectorSpec) -> Result<Vectors, String> {
    let encoding = stored
        .encoding()
        .ok_or_else(|| format!("unknown vector encoding {:?}", stored.encoding))?;
    let v = |model| Vectors {
        spec: stored.clone(),
        encoding,
        model,
        fallback: None,
        failure: Mutex::new(None),
    };
    if stored.model == StaticModel::builtin_fingerprint() {
        return Ok(v(Model::Builtin));
    }
    match &*choice() {
        Choice::Local(m) if m.id() == stored.model => Ok(v(Model::Local(m.clone()))),
        Choice::Remote(r) if r.spec(stored.dim, encoding).model == stored.model => {
            let e = r
                .embedder()
                .map_err(|reason| format!("embedding endpoint failed ({reason})"))?;
            if e.dim() != stored.dim {
                return Err(format!(
                    "{} now has {} dimensions, the index {}",
                    r.url,
                    e.dim(),
                    stored.dim
                ));
            }
            Ok(v(Model::Remote(r.clone(), e)))
        }
        _ => Err(format!(
            "the index's vectors come from {}, which this process does not use",
            stored.model
        )),
    }
}

impl Vectors {
    /// What this model's vectors are, as an index built with it stores.
    pub fn spec(&self) -> &VectorSpec {
        &self.spec
    }

    /// Why the configured server is not used by this build, as a note.
    pub fn fallback_note(&self) -> Option<&str> {
        self.fallback.as_deref()
    }

    /// The first embedding failure of this build: its vectors cannot all be
    /// from one model, so the build must be redone with the built-in model.
    pub fn failure(&self) -> Option<String> {
        self.failure
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Texts per embedding call in the embedding phase: a server's
    /// `batch_size` (one request each), a large batch for static models.
    pub fn batch_size(&self) -> usize {
        match &self.model {
            Model::Remote(r, _) => r.options.batch_size.max(1),
            _ => STATIC_BATCH,
        }
    }

    /// Bytes of one stored vector.
    pub fn stride(&self) -> usize {
        self.encoding.bytes_per_vector(self.spec.dim)
    }

    /// Embeds chunk texts and returns their stored encodings, concatenated;
    /// empty when embedding failed (recorded in [`failure`](Self::failure),
    /// and the server is marked down for the builds that follow).
    pub fn embed_documents(&self, texts: &[&str]) -> Vec<u8> {
        if texts.is_empty() || self.failure().is_some() {
            return Vec::new();
        }
        let mut rows = Vec::with_capacity(texts.len() * self.spec.dim);
        // A static model's spec asks for compound identifiers written out
        // as words (`WORDS`); a server gets the text as it is.
        let words: Vec<String> = if self.spec.chunking.ends_with(WORDS) {
            texts.iter().map(|t| split_identifiers(t)).collect()
        } else {
            texts.iter().map(|t| t.to_string()).collect()
        };
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let result = match &self.model {
            Model::Builtin => builtin().embed_into(&words, &mut rows),
            Model::Local(m) => m.embed_into(&words, &mut rows),
            Model::Remote(r, e) => {
                let prefixed: Vec<String> = texts
                    .iter()
                    .map(|t| format!("{}{t}", r.document_prefix))
                    .collect();
                let refs: Vec<&str> = prefixed.iter().map(String::as_str).collect();
                e.embed_into(&refs, &mut rows).inspect_err(|err| {
                    r.mark_down(&err.to_string());
                })
            }
        };
        if let Err(e) = result {
            let mut failure = self.failure.lock().unwrap_or_else(|p| p.into_inner());
            failure.get_or_insert_with(|| e.to_string());
            return Vec::new();
        }
        let mut out = Vec::with_capacity(texts.len() * self.stride());
        for row in rows.chunks_exact(self.spec.dim) {
            self.encoding.encode(row, &mut out);
        }
        out
    }

    /// Embeds a query for scoring against stored vectors (a server's answers
    /// are cached per process, keyed by model, query prefix and text).
    pub fn query(&self, text: &str) -> Result<Query, String> {
        self.query_views(&[text])
    }

    /// Embeds several views of one query (a task's whole text, its title…)
    /// and sums their vectors: a stored vector's score is then the sum of
    /// its similarities to each view. One embedding call for all of them.
    pub fn query_views(&self, views: &[&str]) -> Result<Query, String> {
        let dim = self.spec.dim;
        let rows = self.query_rows(views)?;
        if rows.len() != views.len() * dim {
            return Err(format!(
                "the query embedding has {} dimensions, the index {dim}",
                rows.len() / views.len().max(1)
            ));
        }
        let mut sum = vec![0f32; dim];
        for row in rows.chunks_exact(dim) {
            for (s, x) in sum.iter_mut().zip(row) {
                *s += x;
            }
        }
        Ok(self.encoding.query(&sum))
    }

    /// Each view's embedding, concatenated.
    fn query_rows(&self, views: &[&str]) -> Result<Vec<f32>, String> {
        let mut rows = Vec::with_capacity(views.len() * self.spec.dim);
        // As the index's chunks were embedded: an index whose spec predates
        // the words rule is rebuilt by its fingerprint, not queried this way.
        let words: Vec<String> = if self.spec.chunking.ends_with(WORDS) {
            views.iter().map(|v| split_identifiers(v)).collect()
        } else {
            views.iter().map(|v| v.to_string()).collect()
        };
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        match &self.model {
            Model::Builtin => builtin()
                .embed_into(&words, &mut rows)
                .map_err(|e| e.to_string())?,
            Model::Local(m) => m.embed_into(&words, &mut rows).map_err(|e| e.to_string())?,
            Model::Remote(r, e) => rows = self.remote_query_rows(r, e, views)?,
        }
        Ok(rows)
    }

    /// A server's embeddings of query texts, each cached per process (keyed
    /// by model, query prefix and text); those not cached in one request.
    fn remote_query_rows(
        &self,
        r: &Remote,
        e: &RemoteEmbedder,
        texts: &[&str],
    ) -> Result<Vec<f32>, String> {
        let dim = self.spec.dim;
        let key = |text: &str| format!("{}\n{}\n{text}", e.id(), r.query_prefix);
        let mut found: Vec<Option<Arc<Vec<f32>>>> = {
            let cache = r.queries.lock().unwrap_or_else(|p| p.into_inner());
            texts.iter().map(|t| cache.get(&key(t)).cloned()).collect()
        };
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        if !missing.is_empty() {
            let prefixed: Vec<String> = (missing.iter())
                .map(|&i| format!("{}{}", r.query_prefix, texts[i]))
                .collect();
            let refs: Vec<&str> = prefixed.iter().map(String::as_str).collect();
            let mut rows = Vec::with_capacity(missing.len() * dim);
            // The embedder checks every row has the model's dimensions.
            e.embed_into(&refs, &mut rows)
                .map_err(|err| format!("embedding endpoint failed ({err})"))?;
            let mut cache = r.queries.lock().unwrap_or_else(|p| p.into_inner());
            for (&i, row) in missing.iter().zip(rows.chunks_exact(dim)) {
                if cache.len() >= QUERY_CACHE_ENTRIES {
                    cache.clear(); // crude but bounded; queries repeat in bursts
                }
                let row = Arc::new(row.to_vec());
                cache.insert(key(texts[i]), row.clone());
                found[i] = Some(row);
            }
        }
        Ok(found
            .into_iter()
            .flatten()
            .flat_map(|row| row.to_vec())
            .collect())
    }
}

/// What the doctor reports about the process's backend: its name, the model,
/// and whether it embeds a query (with the error when not).
pub fn describe() -> (String, String, Result<(), String>) {
    match &*choice() {
        Choice::Builtin => (
            "builtin".into(),
            StaticModel::builtin_fingerprint().into(),
            builtin()
                .embed(&["doctor"])
                .map(drop)
                .map_err(|e| e.to_string()),
        ),
        Choice::Local(m) => (
            "local".into(),
            m.id().into(),
            m.embed(&["doctor"]).map(drop).map_err(|e| e.to_string()),
        ),
        Choice::Remote(r) => {
            let answer = r.embedder().and_then(|e| {
                e.embed(&["doctor"])
                    .map(drop)
                    .map_err(|err| err.to_string())
            });
            (
                r.backend().into(),
                format!("{} at {}", r.options.model, r.url),
                answer,
            )
        }
    }
}

/// What `config` changes about the vectors of `index` (for `lode status`):
/// the stored spec against the one a build would intend now, and the stored
/// query prefix against the one in force.
pub fn change_since_build(
    index: &crate::Index,
    config: &Config,
) -> lode_core::Result<VectorChange> {
    Ok(VectorChange::between(
        index.vector_spec()?.as_ref(),
        &index.stored_query_prefix()?,
        &intended(config),
        &query_prefix(),
    ))
}

/// Compound identifiers written out as their words, lower-cased
/// (`parseConfig` → `parse config`, `max_file_size` → `max file size`,
/// `HTTPServer` → `http server`); everything else as it is. For a static
/// model, whose vocabulary is English words: its WordPiece tokenizer cuts
/// `parseconfig` into pieces that mean little (measured on the Semble
/// benchmark, see `docs/benchmarks.md`).
pub fn split_identifiers(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String| {
        if word.is_empty() {
            return;
        }
        let b = word.as_bytes();
        let compound = word.contains('_')
            || b.windows(2)
                .any(|p| p[0].is_ascii_lowercase() && p[1].is_ascii_uppercase())
            || b.windows(3).any(|p| {
                p[0].is_ascii_uppercase() && p[1].is_ascii_uppercase() && p[2].is_ascii_lowercase()
            });
        if compound {
            let parts = lode_core::ident::split_identifier(word);
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(p);
            }
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            word.push(c);
        } else {
            flush(&mut word, &mut out);
            out.push(c);
        }
    }
    flush(&mut word, &mut out);
    out
}

/// The text embedded for a chunk: its path, the names it defines, its head.
pub fn chunk_text(path: &str, names: &str, body: &str) -> String {
    let mut cut = body.len().min(EMBED_CHARS);
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{path}\n{names}\n{}", &body[..cut])
}

#[cfg(test)]
mod tests;
