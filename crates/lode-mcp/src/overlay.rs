//! Overlays in calls: the `overlay` argument of `search`, `grep`, `outline`,
//! `callers` and `show` (or `_meta.overlay`, which the server moves into the
//! arguments of those tools), validated, parsed for the call's repository
//! (cached by its hash across calls) and put over the open index for the
//! query. The answer's JSON says which overlay it saw (`"overlay"`).

use std::path::Path;

use lode_index::Index;
use lode_index::overlay::{self, Overlay, OverlayGuard, Staged};
use serde_json::{Value, json};

use crate::ToolError;
use crate::answer::Items;
use crate::args::JsonObject;
use crate::repos::{Repos, Target};
use crate::tools::{Arg, Call};

/// The argument's name, and the `_meta` key of the out-of-band form.
pub const KEY: &str = "overlay";

/// The `overlay` argument's schema (kept short: every client reads it).
pub fn property() -> Value {
    json!({"type": "object", "description": "Unsaved files: path → content, null = deleted"})
}

/// `_meta.overlay` moved into `arguments` for a tool that takes an overlay;
/// an error when the arguments carry one too. Other tools ignore it: a host
/// may send it with every call.
pub fn from_meta(
    tool_args: &[Arg],
    arguments: &mut JsonObject,
    meta: Option<&Value>,
) -> Result<(), ToolError> {
    let Some(meta) = meta.filter(|v| !v.is_null()) else {
        return Ok(());
    };
    if !tool_args.iter().any(|a| a.name == KEY) {
        return Ok(());
    }
    if arguments.get(KEY).is_some_and(|v| !v.is_null()) {
        return Err(lode_core::Error::BadOverlay(
            "given twice: as the overlay argument and in _meta".into(),
        )
        .into());
    }
    arguments.insert(KEY.into(), meta.clone());
    Ok(())
}

/// The call's overlay, validated; `None` without one.
pub fn argument(call: &Call) -> Result<Option<Overlay>, ToolError> {
    match call.arguments.get(KEY) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(Overlay::from_json(v)?)),
    }
}

/// [`Repos::resolve`], also accepting a path that only the overlay has (a
/// new file, or a directory holding new files).
pub fn resolve(
    repos: &Repos,
    path: Option<&str>,
    overlay: Option<&Overlay>,
) -> Result<Target, ToolError> {
    let err = match repos.resolve(path) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    let (Some(p), Some(o)) = (path, overlay) else {
        return Err(err);
    };
    let (repo, rel) = if Path::new(p).is_absolute() {
        let inside = repos
            .roots()
            .enumerate()
            .filter(|(_, r)| Path::new(p).starts_with(r))
            .max_by_key(|(_, r)| r.as_os_str().len());
        match inside.and_then(|(i, r)| Some((i, Path::new(p).strip_prefix(r).ok()?.to_str()?))) {
            Some(found) => found,
            None => return Err(err),
        }
    } else {
        (0, p)
    };
    match overlay::normalize_path(rel) {
        Ok(rel) if o.touches(&rel) => Ok(Target {
            repo,
            is_dir: !o.files().contains_key(&rel),
            rel: Some(rel),
        }),
        _ => Err(err),
    }
}

/// The overlay parsed under repository `repo`'s config (or taken from the cache).
pub fn stage(
    repos: &Repos,
    repo: usize,
    overlay: Option<Overlay>,
) -> Result<Option<Staged>, ToolError> {
    let Some(overlay) = overlay else {
        return Ok(None);
    };
    let (config, _) = repos.config().for_root(&repos.repo(repo).location.root)?;
    Ok(Some(overlay::prepare(&overlay, &config)?))
}

/// Puts the staged overlay over `index` until the guard drops.
pub fn over<'i>(
    index: &'i Index,
    staged: Option<&Staged>,
) -> lode_core::Result<Option<OverlayGuard<'i>>> {
    staged.map(|s| index.overlay(s.layer.clone())).transpose()
}

/// The notes an overlay adds: its files the index would not hold either.
pub fn notes(staged: Option<&Staged>, mut notes: Vec<String>) -> Vec<String> {
    for s in staged.iter().flat_map(|s| &s.info.skipped) {
        notes.push(format!(
            "overlay file {} is not indexed ({})",
            s.path, s.reason
        ));
    }
    notes
}

/// An answer with the overlay it was computed over (`"overlay"` in its JSON).
#[derive(Clone)]
pub struct WithOverlay<'a, T> {
    pub items: T,
    pub staged: Option<&'a Staged>,
}

impl<T: Items> Items for WithOverlay<'_, T> {
    const UNIT: &'static str = T::UNIT;

    fn len(&self) -> usize {
        self.items.len()
    }

    fn truncate(&mut self, n: usize) {
        self.items.truncate(n);
    }

    fn left_out(&self) -> usize {
        self.items.left_out()
    }

    fn text(&self, omitted: usize) -> String {
        self.items.text(omitted)
    }

    fn empty_text(&self) -> Option<&'static str> {
        self.items.empty_text()
    }

    fn body(&self, omitted: usize) -> Value {
        let mut body = self.items.body(omitted);
        if let Some(s) = self.staged {
            body[KEY] = serde_json::to_value(&s.info).unwrap_or(Value::Null);
        }
        body
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::Kind;

    const QUERY: Arg = Arg::new("query", Kind::Text(None));
    const OVERLAY: Arg = Arg::new(KEY, Kind::Overlay);

    #[test]
    fn meta_moves_into_the_arguments_of_tools_that_take_it() {
        let ov = json!({"a.py": "x"});
        let mut args = JsonObject::new();
        from_meta(&[QUERY, OVERLAY], &mut args, Some(&ov)).unwrap();
        assert_eq!(args[KEY], ov);

        let mut args = JsonObject::new();
        from_meta(&[QUERY], &mut args, Some(&ov)).unwrap();
        assert!(
            args.is_empty(),
            "a tool without overlays ignores _meta.overlay"
        );

        let mut args = JsonObject::new();
        args.insert(KEY.into(), json!({"b.py": null}));
        let e = from_meta(&[QUERY, OVERLAY], &mut args, Some(&ov)).unwrap_err();
        assert_eq!(e.code, "lode.bad_overlay");
        assert!(e.message.contains("given twice"), "{}", e.message);
    }
}
