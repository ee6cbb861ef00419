use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

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

/// Embedding settings (user config only).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EmbedConfig {
    /// A local model2vec model directory instead of the built-in model.
    pub model: Option<std::path::PathBuf>,
}

/// The configuration model, read from TOML.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub files: FilePolicy,
    pub index: IndexConfig,
    pub embed: EmbedConfig,
}

impl Config {
    /// Parses a TOML config; unknown keys are errors naming the key.
    pub fn from_toml(text: &str, origin: &Path) -> Result<Config> {
        toml::from_str(text)
            .map_err(|e| Error::BadConfig(format!("{}: {}", origin.display(), e.message())))
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
        if project.embed.model.is_some() {
            warnings.push(
                "ignored embed.model in .lode.toml: models are chosen in the user config only"
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
        // A project cannot switch hidden or vendored files on.
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
        assert!(user.narrow_with(project).is_empty());
        assert_eq!(user.files.exclude, ["a", "b"]);
        assert_eq!(user.files.max_file_size, 100);
        assert!(
            !user.files.hidden,
            "a project cannot switch hidden files on"
        );
        assert_eq!(user.index.languages, ["rust"]);
    }

    #[test]
    fn a_project_cannot_choose_the_model() {
        let mut user = Config::default();
        let project =
            Config::from_toml("[embed]\nmodel = \"/tmp/evil\"\n", Path::new("p")).unwrap();
        let warnings = user.narrow_with(project);
        assert_eq!(user.embed.model, None);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("embed.model"), "{warnings:?}");
    }

    #[test]
    fn fingerprint_changes_with_policy() {
        let a = Config::default();
        let mut b = Config::default();
        b.files.max_file_size = 5;
        assert_ne!(a.fingerprint_text(), b.fingerprint_text());
    }
}
