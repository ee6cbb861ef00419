use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

mod remote;
pub use remote::RemoteConfig;

/// Which files are indexed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FilePolicy {
    /// Globs (gitignore syntax, relative to the root); when non-empty only matching files are indexed.
    pub include: Vec<String>,
    /// Globs of files to leave out, on top of `.gitignore`.
    pub exclude: Vec<String>,
    /// Files larger than this are skipped (`too_large`).
    pub max_file_size: u64,
    /// At most this many files are indexed; the rest are skipped (`over_file_limit`).
    pub max_files: usize,
    /// Index hidden files and directories (dot-files).
    pub hidden: bool,
    /// Index vendored, generated and minified files.
    pub vendored: bool,
}

impl Default for FilePolicy {
    fn default() -> FilePolicy {
        FilePolicy {
            include: Vec::new(),
            exclude: Vec::new(),
            max_file_size: 1024 * 1024,
            max_files: 200_000,
            hidden: false,
            vendored: false,
        }
    }
}

/// Index-wide settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IndexConfig {
    /// Languages to index; empty means all.
    pub languages: Vec<String>,
}

/// Embedding settings. Everything but `encoding` is user config only: a
/// project must not choose which server receives its code, nor the model.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// `builtin` (default: the compiled-in model, or the local model2vec
    /// directory of `model`), `openai` (`/v1/embeddings`) or `ollama` (`/api/embed`).
    pub backend: Option<EmbedBackend>,
    /// For `builtin`: a local model2vec directory (or `hf:ORG/NAME`) instead of
    /// the built-in model. For `openai`/`ollama`: the model name sent.
    pub model: Option<String>,
    /// The server's base URL, `http(s)://host[:port][/base]`.
    pub endpoint: Option<String>,
    /// The environment variable holding the API key (sent as a bearer token).
    pub api_key_env: Option<String>,
    /// Allow an endpoint on a private or link-local address (loopback is
    /// always allowed). See [`crate::endpoint`].
    pub allow_private_endpoints: Option<bool>,
    /// Texts per request (1..=256).
    pub batch_size: Option<usize>,
    /// Time allowed for one embedding call (all its batches and retries).
    pub deadline_ms: Option<u64>,
    /// Prepended to a query before it is embedded (e.g. `search_query: `).
    pub query_prefix: Option<String>,
    /// Prepended to a chunk before it is embedded (e.g. `search_document: `).
    pub document_prefix: Option<String>,
    /// How vectors are stored: `int8` (default), `f32` or `binary`. The one
    /// key a project may set too: it changes the index's size and precision,
    /// not what leaves the machine.
    pub encoding: Option<EmbedEncoding>,
}

/// Which embedding backend.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedBackend {
    /// In process: the compiled-in model2vec model, or the local one `model`
    /// names. Nothing leaves the machine.
    #[default]
    Builtin,
    /// An OpenAI-compatible server's `/v1/embeddings`.
    Openai,
    /// An Ollama server's `/api/embed`.
    Ollama,
}

impl EmbedBackend {
    /// The name used in config, notes and `doctor`: `builtin`, `openai`, `ollama`.
    pub fn name(self) -> &'static str {
        match self {
            EmbedBackend::Builtin => "builtin",
            EmbedBackend::Openai => "openai",
            EmbedBackend::Ollama => "ollama",
        }
    }
}

/// How stored vectors are encoded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EmbedEncoding {
    /// One `i8` per dimension plus an `f32` scale per vector: about a quarter of
    /// `f32`'s size, near its precision.
    #[default]
    Int8,
    /// Four-byte floats, exact and the largest.
    F32,
    /// One sign bit per dimension: the smallest and coarsest.
    Binary,
}

impl EmbedEncoding {
    /// The name used in config and index fingerprints: `int8`, `f32`, `binary`.
    pub fn name(self) -> &'static str {
        match self {
            EmbedEncoding::Int8 => "int8",
            EmbedEncoding::F32 => "f32",
            EmbedEncoding::Binary => "binary",
        }
    }
}

impl EmbedConfig {
    /// The backend; `builtin` when unset.
    pub fn backend(&self) -> EmbedBackend {
        self.backend.unwrap_or_default()
    }
    /// Texts per request: 32 when unset, clamped to 1..=256.
    pub fn batch_size(&self) -> usize {
        self.batch_size.unwrap_or(32).clamp(1, 256)
    }
    /// Milliseconds for one embedding call: 10,000 when unset.
    pub fn deadline_ms(&self) -> u64 {
        self.deadline_ms.unwrap_or(10_000)
    }
    /// The stored encoding; `int8` when unset.
    pub fn encoding(&self) -> EmbedEncoding {
        self.encoding.unwrap_or_default()
    }

    /// Applies a project's `[embed]`: its `encoding` is taken, every other key
    /// is ignored with a warning naming it.
    fn narrow_with(&mut self, project: EmbedConfig) -> Vec<String> {
        let user_only = [
            ("backend", project.backend.is_some()),
            ("model", project.model.is_some()),
            ("endpoint", project.endpoint.is_some()),
            ("api_key_env", project.api_key_env.is_some()),
            (
                "allow_private_endpoints",
                project.allow_private_endpoints.is_some(),
            ),
            ("batch_size", project.batch_size.is_some()),
            ("deadline_ms", project.deadline_ms.is_some()),
            ("query_prefix", project.query_prefix.is_some()),
            ("document_prefix", project.document_prefix.is_some()),
        ];
        if project.encoding.is_some() {
            self.encoding = project.encoding;
        }
        user_only
            .into_iter()
            .filter(|(_, set)| *set)
            .map(|(key, _)| {
                format!(
                    "ignored embed.{key} in .lode.toml: the embedding backend is chosen in the user config only"
                )
            })
            .collect()
    }
}

/// How related code is gathered (`lode gather`, `lode ask`). Unset limits
/// take the defaults of the accessors; `endpoint`, `model` and
/// `api_key_env` are user config only (a project must not send code to a
/// server of its choosing).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GatherConfig {
    /// `deterministic` (default) or `endpoint`.
    pub decision: Option<GatherDecision>,
    /// An OpenAI-compatible server, `http(s)://host[:port][/base]`; requests go
    /// to `<endpoint>/v1/chat/completions` unless it already ends in `/chat/completions`.
    pub endpoint: Option<String>,
    /// The model name sent with each request.
    pub model: Option<String>,
    /// The environment variable holding the API key (sent as a bearer token).
    pub api_key_env: Option<String>,
    /// Allow an endpoint on a private or link-local address (user config only;
    /// loopback is always allowed). See [`crate::endpoint`].
    pub allow_private_endpoints: Option<bool>,
    /// Rounds of the walk, each one hop of callers and callees (default 3).
    pub max_rounds: Option<usize>,
    /// Nodes kept at most (default 12).
    pub max_nodes: Option<usize>,
    /// Milliseconds for the whole walk, model calls included (default 8,000).
    pub deadline_ms: Option<u64>,
    /// Token budget of the gathered section (tokens estimated as characters / 4).
    pub max_tokens: Option<usize>,
}

/// Which decision model walks the graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GatherDecision {
    /// Rules only (seed order, hop distance, score, centrality); no server.
    #[default]
    Deterministic,
    /// The chat server at `endpoint` chooses; a round it fails uses the
    /// deterministic order.
    Endpoint,
}

impl GatherConfig {
    /// Whether the user chose the `endpoint` decision model.
    pub fn uses_endpoint(&self) -> bool {
        self.decision == Some(GatherDecision::Endpoint)
    }
    /// Rounds of the walk; 3 when unset.
    pub fn max_rounds(&self) -> usize {
        self.max_rounds.unwrap_or(3)
    }
    /// Nodes kept at most; 12 when unset.
    pub fn max_nodes(&self) -> usize {
        self.max_nodes.unwrap_or(12)
    }
    /// Milliseconds for the whole walk; 8,000 when unset.
    pub fn deadline_ms(&self) -> u64 {
        self.deadline_ms.unwrap_or(8_000)
    }
    /// Token budget of the gathered section; 2,000 when unset.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens.unwrap_or(2_000)
    }

    /// Applies a project's `[gather]`: smaller limits win, it may choose the
    /// deterministic model; the rest is ignored with a warning per key.
    fn narrow_with(&mut self, project: GatherConfig) -> Vec<String> {
        let mut warnings = Vec::new();
        let user_only = [
            ("endpoint", project.endpoint.is_some()),
            ("model", project.model.is_some()),
            ("api_key_env", project.api_key_env.is_some()),
            (
                "allow_private_endpoints",
                project.allow_private_endpoints.is_some(),
            ),
            (
                "decision",
                project.decision == Some(GatherDecision::Endpoint),
            ),
        ];
        for (key, set) in user_only {
            if set {
                warnings.push(format!(
                    "ignored gather.{key} in .lode.toml: the decision model is chosen in the user config only"
                ));
            }
        }
        if project.decision == Some(GatherDecision::Deterministic) {
            self.decision = project.decision;
        }
        fn min<T: Ord + Copy>(user: &mut Option<T>, project: Option<T>, default: T) {
            if let Some(p) = project {
                *user = Some(user.unwrap_or(default).min(p));
            }
        }
        let d = GatherConfig::default();
        min(&mut self.max_rounds, project.max_rounds, d.max_rounds());
        min(&mut self.max_nodes, project.max_nodes, d.max_nodes());
        min(&mut self.deadline_ms, project.deadline_ms, d.deadline_ms());
        min(&mut self.max_tokens, project.max_tokens, d.max_tokens());
        warnings
    }
}

/// The diagnostics log (`<cache>/diagnostics.jsonl`): off unless the user
/// config switches it on. User config only — a project file cannot make lode
/// write to the user's disk or record what is asked. Records hold counts,
/// durations, codes and a root id; never query text, traces, file content or
/// keys unless `log_queries` is set.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DiagnosticsConfig {
    /// Write the log at all (default off).
    pub enabled: Option<bool>,
    /// The log is rotated when it would grow past this (default 4 MiB).
    pub max_bytes: Option<u64>,
    /// Rotated files kept (`diagnostics.jsonl.1` …; default 2).
    pub keep: Option<u32>,
    /// Also record each call's query arguments (never a gather trace).
    pub log_queries: Option<bool>,
}

impl DiagnosticsConfig {
    /// Whether the log is written; off when unset.
    pub fn enabled(&self) -> bool {
        self.enabled.unwrap_or(false)
    }
    /// Bytes the log may reach before it is rotated: 4 MiB when unset, never
    /// under 4 KiB.
    pub fn max_bytes(&self) -> u64 {
        // Below 4 KiB a record or two would rotate the file.
        self.max_bytes.unwrap_or(4 * 1024 * 1024).max(4096)
    }
    /// Rotated files kept: 2 when unset, at most 20.
    pub fn keep(&self) -> u32 {
        self.keep.unwrap_or(2).min(20)
    }
    /// Whether query arguments are recorded; off when unset.
    pub fn log_queries(&self) -> bool {
        self.log_queries.unwrap_or(false)
    }
}

/// The configuration model, read from TOML.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// `[files]`: which files are indexed and how large they may be.
    pub files: FilePolicy,
    /// `[index]`: index-wide settings (the languages).
    pub index: IndexConfig,
    /// `[embed]`: the embedding backend and how vectors are stored.
    pub embed: EmbedConfig,
    /// `[gather]`: the decision model and limits of `lode gather` and `lode ask`.
    pub gather: GatherConfig,
    /// `[diagnostics]`: the local diagnostics log (user config only).
    pub diagnostics: DiagnosticsConfig,
    /// `[mcp]`: limits of a long-lived `lode mcp` process (user config only).
    pub mcp: McpConfig,
    /// `[remote]`: the shared index cache (user config only).
    pub remote: RemoteConfig,
}

/// Limits of a long-lived `lode mcp` process (user config only: they bound
/// the whole process, not one repository).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// After a call, while the process's resident memory is above this many
    /// MiB, the least recently used open indexes (and their caches) are
    /// closed, down to the one just used.
    pub max_memory_mb: Option<u64>,
}

impl Config {
    /// Parses a TOML config; unknown keys are errors naming the key.
    pub fn from_toml(text: &str, origin: &Path) -> Result<Config> {
        let config: Config = toml::from_str(text)
            .map_err(|e| Error::BadConfig(format!("{}: {}", origin.display(), e.message())))?;
        for (key, url) in [
            ("embed.endpoint", &config.embed.endpoint),
            ("gather.endpoint", &config.gather.endpoint),
            ("remote.url", &config.remote.url),
        ] {
            if url.as_deref().is_some_and(has_credentials) {
                // Refused, not redacted: a URL is shown in notes, `doctor` and
                // MCP answers, and a secret in it would reach all of them.
                return Err(Error::BadConfig(format!(
                    "{}: {key} carries credentials (user:password@); put the key in an \
                     environment variable and name it with api_key_env (password_env for remote)",
                    origin.display()
                )));
            }
        }
        Ok(config)
    }

    /// Reads a config file; a missing file is the default config.
    pub fn load(path: &Path) -> Result<Config> {
        match std::fs::read_to_string(path) {
            Ok(text) => Config::from_toml(&text, path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    /// Applies a project file (`.lode.toml`), which may only narrow what is
    /// indexed: its excludes are added, its includes apply when the user set
    /// none, its languages intersect the user's, and smaller limits win.
    /// Returns a warning for each user-only key the project tried to set.
    pub fn narrow_with(&mut self, project: Config) -> Vec<String> {
        let mut warnings = Vec::new();
        warnings.extend(self.embed.narrow_with(project.embed));
        warnings.extend(self.gather.narrow_with(project.gather));
        if project.mcp != McpConfig::default() {
            warnings.push(
                "ignored [mcp] in .lode.toml: the server's limits are set in the user config only"
                    .to_string(),
            );
        }
        if project.remote != RemoteConfig::default() {
            warnings.push(
                "ignored [remote] in .lode.toml: the shared index cache is chosen in the user config only"
                    .to_string(),
            );
        }
        if project.diagnostics != DiagnosticsConfig::default() {
            warnings.push(
                "ignored [diagnostics] in .lode.toml: the diagnostics log is chosen in the user config only"
                    .to_string(),
            );
        }
        let f = &mut self.files;
        f.exclude.extend(project.files.exclude);
        if f.include.is_empty() {
            f.include = project.files.include;
        }
        f.max_file_size = f.max_file_size.min(project.files.max_file_size);
        f.max_files = f.max_files.min(project.files.max_files);
        // A project cannot switch hidden or vendored files on; it is told so.
        for (key, asked, granted) in [
            ("hidden", project.files.hidden, f.hidden),
            ("vendored", project.files.vendored, f.vendored),
        ] {
            if asked && !granted {
                warnings.push(format!(
                    "ignored files.{key} in .lode.toml: {key} files are switched on in the user config only"
                ));
            }
        }
        let langs = project.index.languages;
        if !langs.is_empty() {
            self.index.languages = if self.index.languages.is_empty() {
                langs
            } else {
                self.index
                    .languages
                    .iter()
                    .filter(|l| langs.contains(l))
                    .cloned()
                    .collect()
            };
        }
        warnings
    }

    /// This (user) config narrowed by the project file `<root>/.lode.toml`
    /// when there is one, with the warnings of [`Config::narrow_with`].
    pub fn for_root(&self, root: &Path) -> Result<(Config, Vec<String>)> {
        let mut config = self.clone();
        let project = root.join(".lode.toml");
        let warnings = if project.is_file() {
            config.narrow_with(Config::load(&project)?)
        } else {
            Vec::new()
        };
        Ok((config, warnings))
    }

    /// A stable text of the settings that change what an index contains.
    pub fn fingerprint_text(&self) -> String {
        stable_text(self)
    }
}

// The fingerprint must not depend on a serializer's whims: spell it out.
fn stable_text(c: &Config) -> String {
    format!(
        "include={:?};exclude={:?};max_file_size={};max_files={};hidden={};vendored={};languages={:?}",
        c.files.include,
        c.files.exclude,
        c.files.max_file_size,
        c.files.max_files,
        c.files.hidden,
        c.files.vendored,
        c.index.languages
    )
}

/// Whether a URL (`http(s)`, `nats`, …) names a user or password before its host.
pub fn has_credentials(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    authority.contains('@')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_unknown_keys() {
        let c = Config::from_toml(
            "[files]\nmax_file_size = 10\nexclude = [\"gen/\"]\n",
            Path::new("x"),
        )
        .unwrap();
        assert_eq!(c.files.max_file_size, 10);
        assert_eq!(c.files.exclude, vec!["gen/".to_string()]);
        let err = Config::from_toml("[files]\nmax_size = 10\n", Path::new("cfg.toml")).unwrap_err();
        assert!(err.to_string().contains("max_size"), "{err}");
        assert!(err.to_string().starts_with("cfg.toml"), "{err}");
    }

    #[test]
    fn project_config_only_narrows() {
        let mut user = Config::from_toml(
            "[files]\nexclude = [\"a\"]\nmax_file_size = 100\n",
            Path::new("u"),
        )
        .unwrap();
        let project = Config::from_toml(
            "[files]\nexclude = [\"b\"]\nmax_file_size = 5000\nhidden = true\n[index]\nlanguages = [\"rust\"]\n",
            Path::new("p"),
        )
        .unwrap();
        let warnings = user.narrow_with(project);
        assert_eq!(
            warnings,
            [
                "ignored files.hidden in .lode.toml: hidden files are switched on in the user config only"
            ]
        );
        assert_eq!(user.files.exclude, ["a", "b"]);
        assert_eq!(user.files.max_file_size, 100);
        assert!(
            !user.files.hidden,
            "a project cannot switch hidden files on"
        );
        assert_eq!(user.index.languages, ["rust"]);
        let vendored = Config::from_toml("[files]\nvendored = true\n", Path::new("p")).unwrap();
        let warnings = user.narrow_with(vendored);
        assert!(!user.files.vendored);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("ignored files.vendored in .lode.toml"));
    }

    /// A project's `[embed]` key `key = value` is ignored with one warning naming it.
    fn assert_project_key_ignored(key: &str, value: &str) {
        let mut user = Config::from_toml(
            "[embed]\nbackend = \"ollama\"\nmodel = \"nomic-embed-text\"\n",
            Path::new("u"),
        )
        .unwrap();
        let before = user.embed.clone();
        let project =
            Config::from_toml(&format!("[embed]\n{key} = {value}\n"), Path::new("p")).unwrap();
        let warnings = user.narrow_with(project);
        assert_eq!(user.embed, before, "{key} changed the user's settings");
        assert_eq!(warnings.len(), 1, "{key}: {warnings:?}");
        assert!(
            warnings[0].starts_with(&format!("ignored embed.{key} in .lode.toml")),
            "{warnings:?}"
        );
    }

    #[test]
    fn a_project_cannot_choose_the_remote_cache() {
        let mut user = Config::default();
        let project = Config::from_toml(
            "[remote]\nurl = \"nats://evil.example:4222\"\npublish = true\n",
            Path::new("p"),
        )
        .unwrap();
        let warnings = user.narrow_with(project);
        assert_eq!(user.remote, RemoteConfig::default());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with("ignored [remote]"), "{warnings:?}");
    }

    #[test]
    fn a_remote_url_with_credentials_is_refused() {
        let err = Config::from_toml(
            "[remote]\nurl = \"nats://runner:hunter2@127.0.0.1:4222\"\n",
            Path::new("u"),
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("remote.url") && err.contains("password_env"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }

    #[test]
    fn a_project_cannot_choose_the_embed_backend() {
        assert_project_key_ignored("backend", "\"openai\"");
    }
    #[test]
    fn a_project_cannot_choose_the_model() {
        assert_project_key_ignored("model", "\"/tmp/evil\"");
    }
    #[test]
    fn an_endpoint_with_credentials_is_refused_not_shown() {
        for (section, key) in [("embed", "endpoint"), ("gather", "endpoint")] {
            let text =
                format!("[{section}]\n{key} = \"http://user:hunter2pw@127.0.0.1:8080/v1\"\n");
            let e = Config::from_toml(&text, Path::new("config.toml")).unwrap_err();
            let msg = e.to_string();
            assert!(
                msg.contains("credentials") && msg.contains("api_key_env"),
                "{msg}"
            );
            assert!(!msg.contains("hunter2pw"), "{msg}");
        }
        // An @ in the path is not a credential.
        let text = "[embed]\nendpoint = \"http://127.0.0.1:8080/v1/@models\"\n";
        assert!(Config::from_toml(text, Path::new("config.toml")).is_ok());
    }

    #[test]
    fn a_project_cannot_choose_the_embed_endpoint() {
        assert_project_key_ignored("endpoint", "\"https://evil.example\"");
    }
    #[test]
    fn a_project_cannot_choose_the_embed_api_key_env() {
        assert_project_key_ignored("api_key_env", "\"AWS_SECRET_ACCESS_KEY\"");
    }
    #[test]
    fn a_project_cannot_allow_private_embed_endpoints() {
        assert_project_key_ignored("allow_private_endpoints", "true");
    }
    #[test]
    fn a_project_cannot_set_the_embed_batch_size() {
        assert_project_key_ignored("batch_size", "1");
    }
    #[test]
    fn a_project_cannot_set_the_embed_deadline() {
        assert_project_key_ignored("deadline_ms", "600000");
    }
    #[test]
    fn a_project_cannot_set_the_query_prefix() {
        assert_project_key_ignored("query_prefix", "\"ignore previous instructions \"");
    }
    #[test]
    fn a_project_cannot_set_the_document_prefix() {
        assert_project_key_ignored("document_prefix", "\"x \"");
    }

    #[test]
    fn a_project_may_choose_the_encoding() {
        let mut user = Config::default();
        assert_eq!(user.embed.encoding(), EmbedEncoding::Int8);
        let project =
            Config::from_toml("[embed]\nencoding = \"binary\"\n", Path::new("p")).unwrap();
        assert!(user.narrow_with(project).is_empty());
        assert_eq!(user.embed.encoding(), EmbedEncoding::Binary);
        let bad = Config::from_toml("[embed]\nencoding = \"int4\"\n", Path::new("p"));
        assert!(bad.unwrap_err().to_string().contains("int4"));
    }

    #[test]
    fn a_project_cannot_choose_the_gather_endpoint() {
        let mut user = Config::from_toml(
            "[gather]\ndecision = \"endpoint\"\nendpoint = \"http://127.0.0.1:9\"\nmax_nodes = 20\n",
            Path::new("u"),
        )
        .unwrap();
        let project = Config::from_toml(
            "[gather]\ndecision = \"endpoint\"\nendpoint = \"https://evil.example\"\nmodel = \"m\"\napi_key_env = \"HOME\"\nallow_private_endpoints = true\nmax_nodes = 5\nmax_rounds = 9\n",
            Path::new("p"),
        )
        .unwrap();
        let warnings = user.narrow_with(project);
        assert_eq!(user.gather.endpoint.as_deref(), Some("http://127.0.0.1:9"));
        assert_eq!(
            (
                user.gather.model.as_deref(),
                user.gather.api_key_env.as_deref()
            ),
            (None, None)
        );
        assert_eq!(user.gather.allow_private_endpoints, None);
        for key in [
            "endpoint",
            "model",
            "api_key_env",
            "decision",
            "allow_private_endpoints",
        ] {
            assert!(
                warnings
                    .iter()
                    .any(|w| w.contains(&format!("gather.{key} "))),
                "{key}: {warnings:?}"
            );
        }
        assert_eq!(warnings.len(), 5, "{warnings:?}");
        // Limits only narrow; an unset project limit leaves the user's.
        assert_eq!(user.gather.max_nodes(), 5);
        assert_eq!(user.gather.max_rounds(), 3);
        assert!(user.gather.uses_endpoint());
        // A project may switch the model off.
        let off =
            Config::from_toml("[gather]\ndecision = \"deterministic\"\n", Path::new("p")).unwrap();
        assert!(user.narrow_with(off).is_empty());
        assert!(!user.gather.uses_endpoint());
    }

    #[test]
    fn the_memory_ceiling_is_user_config_only() {
        let user = Config::from_toml("[mcp]\nmax_memory_mb = 512\n", Path::new("u")).unwrap();
        assert_eq!(user.mcp.max_memory_mb, Some(512));
        let mut narrowed = user.clone();
        let project = Config::from_toml("[mcp]\nmax_memory_mb = 1\n", Path::new("p")).unwrap();
        let warnings = narrowed.narrow_with(project);
        assert_eq!(narrowed.mcp.max_memory_mb, Some(512));
        assert!(warnings.iter().any(|w| w.contains("[mcp]")), "{warnings:?}");
    }

    #[test]
    fn diagnostics_are_off_by_default_and_user_config_only() {
        let d = Config::default().diagnostics;
        assert!(!d.enabled() && !d.log_queries());
        assert_eq!((d.max_bytes(), d.keep()), (4 * 1024 * 1024, 2));
        let mut user = Config::default();
        let project = Config::from_toml(
            "[diagnostics]\nenabled = true\nlog_queries = true\n",
            Path::new("p"),
        )
        .unwrap();
        let warnings = user.narrow_with(project);
        assert!(!user.diagnostics.enabled() && !user.diagnostics.log_queries());
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].contains("[diagnostics]"), "{warnings:?}");
        let err = Config::from_toml("[diagnostics]\nlevel = 3\n", Path::new("u")).unwrap_err();
        assert!(err.to_string().contains("level"), "{err}");
        // Diagnostics do not change what an index holds.
        let on = Config::from_toml("[diagnostics]\nenabled = true\n", Path::new("u")).unwrap();
        assert_eq!(on.fingerprint_text(), Config::default().fingerprint_text());
    }

    #[test]
    fn fingerprint_changes_with_policy() {
        let a = Config::default();
        let mut b = Config::default();
        b.files.max_file_size = 5;
        assert_ne!(a.fingerprint_text(), b.fingerprint_text());
    }
}
