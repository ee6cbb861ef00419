//! Model2vec models from the Hugging Face hub (`hf:ORG/NAME`), downloaded once.
//!
//! [`HubModel::parse`] reads the name; [`HubModel::fetch`] makes sure the model's
//! three files are in a directory, downloading them from
//! `<base>/ORG/NAME/resolve/main/<file>` when one is missing. The files are
//! read whole (at most [`MAX_FILE_BYTES`] each), checked by loading them as a
//! model, and only then written, each to a temporary file renamed into place:
//! a failed or interrupted download never leaves a file that looks complete.
//! Redirects are followed (the hub serves large files from a CDN); no
//! credentials are sent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::{Error, Result, StaticModel};

/// The hub lode downloads from unless told otherwise.
pub const DEFAULT_BASE: &str = "https://huggingface.co";

/// The files of a model2vec model.
pub const FILES: [&str; 3] = ["config.json", "model.safetensors", "tokenizer.json"];

/// The largest file downloaded.
pub const MAX_FILE_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// A model named `hf:ORG/NAME`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HubModel {
    /// The owner: `minishlab` of `minishlab/potion-base-8M`.
    pub org: String,
    /// The repository: `potion-base-8M`.
    pub name: String,
}

impl HubModel {
    /// `None` when `spec` does not start with `hf:`; an error when the rest is
    /// not `ORG/NAME` of letters, digits, `-`, `_` and `.`.
    pub fn parse(spec: &str) -> Option<std::result::Result<HubModel, String>> {
        let rest = spec.strip_prefix("hf:")?;
        let ok = |s: &str| {
            !s.is_empty()
                && s != "."
                && s != ".."
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        };
        Some(match rest.split_once('/') {
            Some((org, name)) if ok(org) && ok(name) => Ok(HubModel {
                org: org.into(),
                name: name.into(),
            }),
            _ => Err(format!(
                "{spec}: expected hf:ORG/NAME (letters, digits, '-', '_', '.')"
            )),
        })
    }

    /// Where the model lives under a cache directory: `<cache>/models/ORG/NAME`.
    pub fn dir(&self, cache: &Path) -> PathBuf {
        cache.join("models").join(&self.org).join(&self.name)
    }

    /// Whether `dir` already holds the three files.
    pub fn is_complete(dir: &Path) -> bool {
        FILES.iter().all(|f| dir.join(f).is_file())
    }

    /// The model's directory under `cache`, downloading from `base` first when
    /// a file is missing. The error is one line naming the file, the URL and
    /// the cause.
    pub fn fetch(&self, base: &str, cache: &Path) -> Result<PathBuf> {
        let dir = self.dir(cache);
        if Self::is_complete(&dir) {
            return Ok(dir);
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .max_redirects(5)
            .http_status_as_error(false)
            .timeout_connect(Some(Duration::from_secs(15)))
            .timeout_recv_response(Some(Duration::from_secs(60)))
            .timeout_recv_body(Some(Duration::from_secs(600)))
            .user_agent(concat!("lode/", env!("CARGO_PKG_VERSION")))
            .build()
            .into();
        let base = base.trim_end_matches('/');
        let mut bytes = Vec::new();
        for file in FILES {
            let url = format!("{base}/{}/{}/resolve/main/{file}", self.org, self.name);
            let fail = |reason: String| Error::Remote {
                url: url.clone(),
                reason,
            };
            let mut resp = agent.get(&url).call().map_err(|e| fail(e.to_string()))?;
            let status = resp.status().as_u16();
            if status != 200 {
                return Err(fail(format!("HTTP {status}")));
            }
            let body = resp
                .body_mut()
                .with_config()
                .limit(MAX_FILE_BYTES)
                .read_to_vec()
                .map_err(|e| fail(e.to_string()))?;
            bytes.push(body);
        }
        // A truncated or foreign file fails here, before anything is written.
        StaticModel::from_bytes(&bytes[0], &bytes[1], &bytes[2]).map_err(|e| Error::Invalid {
            path: PathBuf::from(format!("hf:{}/{}", self.org, self.name)),
            reason: format!("the downloaded files are not a usable model2vec model ({e})"),
        })?;
        std::fs::create_dir_all(&dir).map_err(|e| Error::Io {
            path: dir.clone(),
            source: e,
        })?;
        for (file, body) in FILES.iter().zip(&bytes) {
            let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
            let write =
                std::fs::write(&tmp, body).and_then(|()| std::fs::rename(&tmp, dir.join(file)));
            if let Err(e) = write {
                let _ = std::fs::remove_file(&tmp);
                return Err(Error::Io {
                    path: dir.join(file),
                    source: e,
                });
            }
        }
        Ok(dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_org_slash_name_and_stay_inside_the_cache() {
        assert_eq!(HubModel::parse("/models/m"), None);
        assert_eq!(
            HubModel::parse("hf:minishlab/potion-base-8M")
                .unwrap()
                .unwrap(),
            HubModel {
                org: "minishlab".into(),
                name: "potion-base-8M".into()
            }
        );
        for bad in [
            "hf:",
            "hf:org",
            "hf:../x",
            "hf:org/..",
            "hf:a/b/c",
            "hf:a b/c",
        ] {
            assert!(HubModel::parse(bad).unwrap().is_err(), "{bad}");
        }
        let m = HubModel::parse("hf:o/n").unwrap().unwrap();
        assert_eq!(m.dir(Path::new("/c")), Path::new("/c/models/o/n"));
    }
}
