//! What every command needs: the root, the config, the index location, and
//! a way to say things on stderr.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lode_core::{Config, Error, Result};
use lode_index::overlay::{Overlay, OverlayGuard, OverlayInfo};
use lode_index::{Index, IndexLocation, RefreshOptions};

use crate::cli::{Common, OverlayArg};

pub struct Context {
    pub common: Common,
    pub config: Config,
    pub location: IndexLocation,
    pub notes: std::cell::RefCell<Vec<String>>,
    /// `--overlay`, validated.
    overlay: Option<Overlay>,
    /// What the answer says about the overlay, once it is over the index.
    overlay_info: std::cell::RefCell<Option<OverlayInfo>>,
    /// Config files that could not be read (only [`Context::lenient`] keeps
    /// going past them, for `doctor`).
    pub config_errors: Vec<String>,
}

/// How long a query's refresh embeds before it answers (newest files first):
/// a query on a cold repository must not wait for all of its embedding, and
/// the next query, or `lode index`, goes on where this one stopped.
pub const QUERY_EMBED_BUDGET: std::time::Duration = std::time::Duration::from_millis(1000);

/// The most bytes an `--overlay` file may have (its content, JSON-escaped).
const MAX_OVERLAY_FILE: u64 = 4 * lode_index::overlay::MAX_TOTAL_BYTES as u64;

impl Context {
    /// Resolves the root (`explicit`, `--root`, or discovered from `near`) and loads the config.
    pub fn new(
        common: Common,
        explicit_root: Option<&Path>,
        near: Option<&Path>,
    ) -> Result<Context> {
        Context::build(common, explicit_root, near, false)
    }

    /// As [`Context::new`], but a config file that cannot be read is noted in
    /// `config_errors` and left out (the defaults, or the user config alone)
    /// instead of failing: `doctor` diagnoses it.
    pub fn lenient(common: Common, explicit_root: Option<&Path>) -> Result<Context> {
        Context::build(common, explicit_root, None, true)
    }

    fn build(
        common: Common,
        explicit_root: Option<&Path>,
        near: Option<&Path>,
        lenient: bool,
    ) -> Result<Context> {
        let mut config_errors = Vec::new();
        let mut tolerate = |e: Error, fallback: Config| match e {
            Error::BadConfig(msg) if lenient => {
                config_errors.push(msg);
                Ok(fallback)
            }
            e => Err(e),
        };
        let (root, root_note) = match explicit_root.or(common.root.as_deref()) {
            Some(r) => (r.to_path_buf(), nested_root_note(r)),
            None => {
                let found = discover_root(near)?;
                (found.root, found.note)
            }
        };
        let user = match Config::load(&user_config_path(&common)) {
            Ok(c) => c,
            Err(e) => tolerate(e, Config::default())?,
        };
        let location = IndexLocation::resolve(&root, common.cache_dir.as_deref())?;
        let (config, warnings) = match user.for_root(&location.root) {
            Ok(found) => found,
            Err(e) => (tolerate(e, user.clone())?, Vec::new()),
        };
        let ctx = Context {
            common,
            config,
            location,
            notes: Default::default(),
            overlay: None,
            overlay_info: Default::default(),
            config_errors,
        };
        for w in root_note.iter().chain(&warnings) {
            ctx.note(w);
        }
        if let Some(note) = select_model(&ctx.common, &ctx.config)? {
            ctx.note(&note);
        }
        Ok(ctx)
    }

    /// Reads and validates `--overlay` (before any index work: bad input fails first).
    pub fn with_overlay(mut self, arg: &OverlayArg) -> Result<Context> {
        let Some(path) = &arg.overlay else {
            return Ok(self);
        };
        use std::io::Read;
        let mut text = String::new();
        let read = if path.as_os_str() == "-" {
            std::io::stdin()
                .take(MAX_OVERLAY_FILE + 1)
                .read_to_string(&mut text)
        } else {
            std::fs::File::open(path)
                .and_then(|f| f.take(MAX_OVERLAY_FILE + 1).read_to_string(&mut text))
        };
        read.map_err(|e| match e.kind() {
            std::io::ErrorKind::InvalidData => {
                Error::BadOverlay(format!("{}: not UTF-8 text", path.display()))
            }
            _ => Error::io(path, e),
        })?;
        if text.len() as u64 > MAX_OVERLAY_FILE {
            return Err(Error::BadOverlay(format!(
                "{}: over {MAX_OVERLAY_FILE} bytes",
                path.display()
            )));
        }
        self.overlay = Some(Overlay::parse(&text)?);
        Ok(self)
    }

    /// Whether `--overlay` names `rel` or a file under it.
    pub fn overlay_touches(&self, rel: &str) -> bool {
        self.overlay.as_ref().is_some_and(|o| o.touches(rel))
    }

    /// Whether `--overlay` names the file `rel` (with content or deleted).
    pub fn overlay_has_file(&self, rel: &str) -> bool {
        self.overlay
            .as_ref()
            .is_some_and(|o| o.files().contains_key(rel))
    }

    /// Puts `--overlay` over `index` until the guard drops (nothing without one).
    pub fn overlay_over<'i>(&self, index: &'i Index) -> Result<Option<OverlayGuard<'i>>> {
        let Some(overlay) = &self.overlay else {
            return Ok(None);
        };
        let staged = lode_index::overlay::prepare(overlay, &self.config)?;
        for s in &staged.info.skipped {
            self.note(&format!(
                "overlay file {} is not indexed ({})",
                s.path, s.reason
            ));
        }
        *self.overlay_info.borrow_mut() = Some(staged.info);
        index.overlay(staged.layer).map(Some)
    }

    pub fn overlay_info(&self) -> Option<OverlayInfo> {
        self.overlay_info.borrow().clone()
    }

    /// A one-line note: on stderr for text output, in the JSON `notes` otherwise.
    pub fn note(&self, msg: &str) {
        if self.common.json {
            self.notes.borrow_mut().push(msg.to_string());
        } else {
            eprintln!("lode: {}", lode_core::shown::field(msg));
        }
    }

    pub fn take_notes(&self) -> Vec<String> {
        std::mem::take(&mut self.notes.borrow_mut())
    }

    /// Opens the index after bringing it up to date (unless `--no-refresh`).
    pub fn open_fresh(&self) -> Result<Index> {
        self.open_fresh_and(|_| Ok(())).map(|(index, ())| index)
    }

    /// As [`Context::open_fresh`], and `f`'s answer on the index: `f` runs
    /// while the tree is checked, and again if the check found it changed
    /// (`lode_index::refresh_and`), so it must only compute its answer.
    /// With `--overlay` it runs once, after the check: putting the overlay
    /// on notes what it skips.
    pub fn open_fresh_and<T>(&self, f: impl Fn(&Index) -> Result<T>) -> Result<(Index, T)> {
        let bar = Progress::new();
        let progress = |done: usize, total: usize| bar.update(done, total);
        let note = |m: &str| self.note(m);
        let opts = RefreshOptions {
            config: &self.config,
            no_refresh: self.common.no_refresh,
            progress: Some(&progress),
            note: &note,
            embed: lode_index::EmbedPhase::Within(QUERY_EMBED_BUDGET),
        };
        let (index, answer, freshness) = if self.overlay.is_some() {
            let (index, freshness) = lode_index::refresh(&self.location, &opts)?;
            let answer = f(&index)?;
            (index, answer, freshness)
        } else {
            lode_index::refresh_and(&self.location, &opts, f)?
        };
        bar.finish();
        if let Some(note) = freshness.note() {
            self.note(&note);
        }
        Ok((index, answer))
    }

    /// A user path as a path relative to the root: relative paths are taken
    /// from the current directory when it is inside the root, else from the root.
    pub fn relative_to_root(&self, p: &Path) -> Result<String> {
        let root = &self.location.root;
        let cwd = std::env::current_dir()
            .ok()
            .and_then(|d| d.canonicalize().ok());
        let abs = if p.is_absolute() {
            p.to_path_buf()
        } else {
            match cwd {
                Some(cwd) if cwd.starts_with(root) => cwd.join(p),
                _ => root.join(p),
            }
        };
        let abs = abs.canonicalize().unwrap_or(abs);
        let rel = abs.strip_prefix(root).map_err(|_| Error::OutsideRoot {
            path: p.to_path_buf(),
            root: root.clone(),
        })?;
        let rel: Vec<String> = rel
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        Ok(rel.join("/"))
    }
}

/// Indexing progress: a bar on stderr when it is a terminal, else nothing.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// Files parsed.
    pub fn new() -> Progress {
        Progress(progress_bar(
            "indexing {bar:30} {pos}/{len} files {elapsed}",
        ))
    }

    /// Chunks embedded.
    pub fn embedding() -> Progress {
        Progress(progress_bar(
            "embedding {bar:30} {pos}/{len} chunks {elapsed}",
        ))
    }

    pub fn update(&self, done: usize, total: usize) {
        if let Some(b) = &self.0 {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    }

    /// Clears the bar (the next phase's bar takes its line).
    pub fn clear(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }

    pub fn finish(self) {
        if let Some(b) = self.0 {
            b.finish_and_clear();
        }
    }
}

fn progress_bar(template: &str) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    Some(bar)
}

/// Chooses the embedding backend (`--model`, else `[embed]` of the config).
/// A backend that cannot be set up is not fatal: the built-in model answers,
/// and the returned note says so. A model named `hf:ORG/NAME` is downloaded
/// into the cache first, once; when that fails the command fails
/// ([`Error::ModelUnavailable`]): the user asked for that model by name.
pub fn select_model(common: &Common, config: &Config) -> Result<Option<String>> {
    let named = match &common.model {
        Some(m) => Some(m.to_string_lossy().into_owned()),
        None if config.embed.backend() == lode_core::EmbedBackend::Builtin => {
            config.embed.model.clone()
        }
        None => None,
    };
    let downloaded = match named.as_deref().and_then(lode_embed::HubModel::parse) {
        Some(parsed) => Some(fetch_hub_model(common, parsed)?),
        None => None,
    };
    let model_dir = downloaded.as_deref().or(common.model.as_deref());
    let mut embed = config.embed.clone();
    if downloaded.is_some() {
        embed.model = None; // the directory is passed as model_dir
    }
    let note = lode_index::vectors::configure(&embed, model_dir);
    if note.is_some() {
        lode_diagnostics::note_fallback("model");
    }
    Ok(note)
}

/// The directory of a hub model, downloaded from `$LODE_HF_ENDPOINT` (default
/// `https://huggingface.co`) into `<cache>/models/ORG/NAME` unless already there.
fn fetch_hub_model(
    common: &Common,
    parsed: std::result::Result<lode_embed::HubModel, String>,
) -> Result<PathBuf> {
    let model = parsed.map_err(Error::BadConfig)?;
    let cache = match &common.cache_dir {
        Some(dir) => dir.clone(),
        None => lode_core::default_cache_base()?,
    };
    let base = std::env::var("LODE_HF_ENDPOINT")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| lode_embed::hub::DEFAULT_BASE.to_string());
    model.fetch(&base, &cache).map_err(|e| {
        let dir = model.dir(&cache);
        Error::ModelUnavailable(format!(
            "cannot download hf:{}/{} ({e}); download the model2vec files ({}) into {}, or pass --model DIR",
            model.org,
            model.name,
            lode_embed::hub::FILES.join(", "),
            dir.display()
        ))
    })
}

pub fn user_config_path(common: &Common) -> PathBuf {
    if let Some(p) = &common.config {
        return p.clone();
    }
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))
        .unwrap_or_else(|| PathBuf::from("."));
    base.join("lode").join("config.toml")
}

/// The root a command works in when `--root` does not name one.
pub struct Discovered {
    pub root: PathBuf,
    /// What to say when no git repository was found (the root is then the
    /// current directory).
    pub note: Option<String>,
}

/// The git repository enclosing `near` (a path the command names), else the
/// one enclosing the current directory; with neither, the current directory
/// itself — unless that is `/` or the home directory, which would index a
/// whole disk or home: those are refused unless `--root` names them.
pub fn discover_root(near: Option<&Path>) -> Result<Discovered> {
    let cwd = std::env::current_dir().map_err(|e| Error::io(".", e))?;
    let cwd = cwd.canonicalize().unwrap_or(cwd);
    let near_dir = near.map(|p| {
        let abs = cwd.join(p);
        match abs.parent() {
            Some(parent) if abs.is_file() => parent.to_path_buf(),
            _ => abs,
        }
    });
    if let Some(root) = near_dir
        .iter()
        .chain([&cwd])
        .find_map(|d| git_root_above(d))
    {
        return Ok(Discovered { root, note: None });
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    if cwd.parent().is_none() || home.as_deref() == Some(cwd.as_path()) {
        return Err(Error::BroadRoot(cwd));
    }
    let note = format!(
        "no git repository at or above {}; indexing the files under it",
        cwd.display()
    );
    Ok(Discovered {
        root: cwd,
        note: Some(note),
    })
}

/// The nearest directory at or above `dir` that holds `.git`.
pub fn git_root_above(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| d.join(".git").exists())
        .map(Path::to_path_buf)
}

/// A root that a git repository above it encloses: its index is its own, and
/// commands run elsewhere in that repository do not use it.
fn nested_root_note(root: &Path) -> Option<String> {
    let root = root.canonicalize().ok()?;
    let repo = git_root_above(root.parent()?)?;
    (!root.join(".git").exists()).then(|| {
        format!(
            "{} is inside the git repository {}: this index is rooted at the former, and commands run elsewhere in the repository use the repository's own",
            root.display(),
            repo.display()
        )
    })
}
