//! Embedding servers: OpenAI-compatible `/v1/embeddings` and Ollama `/api/embed`.
//!
//! A [`RemoteEmbedder`] is made by [`RemoteEmbedder::connect`], which embeds one
//! probe text to learn the model's dimension (a server that cannot answer that
//! is no backend). Every later reply must have that dimension and one vector per
//! text. Texts go out in batches of [`RemoteOptions::batch_size`]; one
//! [`embed_into`](crate::Embedder::embed_into) call, all its batches and retries
//! included, must finish within [`RemoteOptions::deadline`]. A connection
//! failure, HTTP 429 or 5xx is retried with exponential backoff (100 ms, 200 ms,
//! … at most [`RemoteOptions::attempts`] tries); a timeout, another status or an
//! unusable reply is not. Redirects are not followed (the request and its key
//! must not reach another host) and replies are read to at most
//! [`MAX_REPLY_BYTES`]; that HTTP policy is `lode_http::JsonClient`'s.
//! Vectors are L2-normalised, as the stored encodings' kernels expect.
//!
//! The URL is not vetted here: this crate knows no policy. Callers check it
//! first (`lode_core::endpoint::check_endpoint`).

use std::time::Duration;

use lode_http::{Deadline, JsonClient};
use serde_json::{Value, json};

use crate::{Embedder, Error, Result};

/// The longest reply read (a batch of 256 texts of 4,096 dimensions is ~23 MB of JSON).
pub const MAX_REPLY_BYTES: u64 = 32 * 1024 * 1024;

/// The largest dimension accepted from a server.
pub const MAX_DIM: usize = 16_384;

/// Which API the server speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// `POST <base>/v1/embeddings` `{"model", "input": [..]}` → `{"data": [{"index", "embedding"}]}`.
    OpenAi,
    /// `POST <base>/api/embed` `{"model", "input": [..]}` → `{"embeddings": [[..]]}`.
    Ollama,
}

impl Protocol {
    /// `openai` or `ollama`, as in the config and index fingerprints.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::OpenAi => "openai",
            Protocol::Ollama => "ollama",
        }
    }

    /// The request URL for a configured base URL; a full URL (ending in the
    /// API path) is kept as it is.
    pub fn url(self, endpoint: &str) -> std::result::Result<String, String> {
        let base = lode_http::base_url(endpoint, "embed.endpoint")?;
        Ok(match self {
            Protocol::OpenAi if base.ends_with("/embeddings") => base.to_string(),
            Protocol::OpenAi if base.ends_with("/v1") => format!("{base}/embeddings"),
            Protocol::OpenAi => format!("{base}/v1/embeddings"),
            Protocol::Ollama if base.ends_with("/api/embed") => base.to_string(),
            Protocol::Ollama => format!("{base}/api/embed"),
        })
    }
}

/// How to reach an embedding server.
#[derive(Clone, Debug)]
pub struct RemoteOptions {
    /// The API the server speaks.
    pub protocol: Protocol,
    /// Base URL (`http://127.0.0.1:11434`, `https://host/v1`) or the full API URL.
    pub endpoint: String,
    /// The model name sent with each request.
    pub model: String,
    /// The environment variable holding the API key, sent as a bearer token.
    pub api_key_env: Option<String>,
    /// Texts per request.
    pub batch_size: usize,
    /// Time allowed for one `embed_into` call, all batches and retries included.
    pub deadline: Duration,
    /// Tries per request (the first included).
    pub attempts: u32,
}

impl RemoteOptions {
    /// Options with lode's defaults: batches of 32, 10 s, 3 tries.
    pub fn new(protocol: Protocol, endpoint: &str, model: &str) -> RemoteOptions {
        RemoteOptions {
            protocol,
            endpoint: endpoint.to_string(),
            model: model.to_string(),
            api_key_env: None,
            batch_size: 32,
            deadline: Duration::from_secs(10),
            attempts: 3,
        }
    }
}

/// An embedding server in use (see the module doc).
pub struct RemoteEmbedder {
    opts: RemoteOptions,
    id: String,
    dim: usize,
    client: JsonClient,
}

impl std::fmt::Debug for RemoteEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteEmbedder")
            .field("url", &self.client.url())
            .field("id", &self.id)
            .field("dim", &self.dim)
            .finish()
    }
}

impl RemoteEmbedder {
    /// Builds the client and embeds a probe text to learn the dimension.
    pub fn connect(opts: RemoteOptions) -> Result<RemoteEmbedder> {
        let url = opts
            .protocol
            .url(&opts.endpoint)
            .map_err(|reason| Error::Remote {
                url: opts.endpoint.clone(),
                reason,
            })?;
        let mut client = JsonClient::new(url, MAX_REPLY_BYTES);
        if let Some(var) = &opts.api_key_env {
            client = client.bearer_key_env(var, "embed.api_key_env");
        }
        let mut embedder = RemoteEmbedder {
            id: format!("{}:{}", opts.protocol.name(), opts.model),
            opts,
            dim: 0,
            client,
        };
        let deadline = Deadline::after(embedder.opts.deadline);
        let probe = embedder.request(&["lode"], deadline)?;
        let dim = probe.first().map_or(0, Vec::len);
        if dim == 0 || dim > MAX_DIM {
            return Err(embedder.error(format!(
                "the probe embedding has {dim} dimensions (expected 1 to {MAX_DIM})"
            )));
        }
        embedder.dim = dim;
        Ok(embedder)
    }

    /// The URL requests go to.
    pub fn url(&self) -> &str {
        self.client.url()
    }

    /// How this embedder reaches its server.
    pub fn options(&self) -> &RemoteOptions {
        &self.opts
    }

    fn error(&self, reason: String) -> Error {
        Error::Remote {
            url: self.client.url().to_string(),
            reason,
        }
    }

    /// One batch, retried as the module doc says; one vector per text.
    fn request(&self, texts: &[&str], deadline: Deadline) -> Result<Vec<Vec<f32>>> {
        let body = json!({ "model": self.opts.model, "input": texts }).to_string();
        let reply = self
            .client
            .post_retrying(&body, deadline, self.opts.attempts)
            .map_err(|gave_up| self.error(gave_up.to_string()))?;
        self.parse(&reply, texts.len())
    }

    /// The vectors of a reply, normalised, checked for count and dimension.
    fn parse(&self, reply: &str, count: usize) -> Result<Vec<Vec<f32>>> {
        let v: Value = serde_json::from_str(reply).map_err(|e| {
            // By position only: serde's message may quote the reply.
            self.error(format!(
                "the reply is not JSON ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            ))
        })?;
        let rows: Vec<&Value> = match self.opts.protocol {
            Protocol::OpenAi => {
                let data = v["data"]
                    .as_array()
                    .ok_or_else(|| self.error("the reply has no \"data\" array".into()))?;
                // `index` orders the rows when present (the API allows any order).
                let mut indexed: Vec<(u64, &Value)> = data
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (d["index"].as_u64().unwrap_or(i as u64), &d["embedding"]))
                    .collect();
                indexed.sort_by_key(|(i, _)| *i);
                indexed.into_iter().map(|(_, e)| e).collect()
            }
            Protocol::Ollama => v["embeddings"]
                .as_array()
                .ok_or_else(|| self.error("the reply has no \"embeddings\" array".into()))?
                .iter()
                .collect(),
        };
        if rows.len() != count {
            return Err(self.error(format!(
                "the reply has {} embeddings for {count} texts",
                rows.len()
            )));
        }
        rows.into_iter()
            .map(|row| {
                let values = row
                    .as_array()
                    .ok_or_else(|| self.error("an embedding is not an array".into()))?;
                if self.dim != 0 && values.len() != self.dim {
                    return Err(self.error(format!(
                        "an embedding has {} dimensions, the model had {}",
                        values.len(),
                        self.dim
                    )));
                }
                let mut out: Vec<f32> = Vec::with_capacity(values.len());
                for x in values {
                    match x.as_f64() {
                        Some(f) if f.is_finite() => out.push(f as f32),
                        _ => return Err(self.error("an embedding holds a non-number".into())),
                    }
                }
                normalize(&mut out);
                Ok(out)
            })
            .collect()
    }
}

fn normalize(v: &mut [f32]) {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
}

impl Embedder for RemoteEmbedder {
    /// `openai:<model>` or `ollama:<model>`: the server's address is not part
    /// of it (the same model moved to another host gives the same vectors).
    fn id(&self) -> &str {
        &self.id
    }

    fn dim(&self) -> usize {
        self.dim
    }

    fn embed_into(&self, texts: &[&str], out: &mut Vec<f32>) -> Result<()> {
        let deadline = Deadline::after(self.opts.deadline);
        out.reserve(texts.len() * self.dim);
        for batch in texts.chunks(self.opts.batch_size.max(1)) {
            for row in self.request(batch, deadline)? {
                out.extend_from_slice(&row);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_get_the_api_path_once() {
        let o = Protocol::OpenAi;
        assert_eq!(o.url("http://h:1").unwrap(), "http://h:1/v1/embeddings");
        assert_eq!(o.url("https://h/v1/").unwrap(), "https://h/v1/embeddings");
        assert_eq!(
            o.url("https://h/x/embeddings").unwrap(),
            "https://h/x/embeddings"
        );
        let l = Protocol::Ollama;
        assert_eq!(
            l.url("http://127.0.0.1:11434").unwrap(),
            "http://127.0.0.1:11434/api/embed"
        );
        assert_eq!(l.url("http://h/api/embed").unwrap(), "http://h/api/embed");
        for bad in ["file:///etc/passwd", "h:1", "http://", "http:///x"] {
            assert!(o.url(bad).is_err(), "{bad}");
        }
    }
}
