//! A query's restriction, from the words a person or an agent gives.

use lode_core::{Error, Language, Result};
use lode_index::Filter;

/// A [`Filter`] from a path prefix (relative to the root, `/`-separated) and
/// language names as people write them (`python`, `rust`, `ts`, …).
/// TypeScript includes TSX. An unknown language is [`Error::BadQuery`].
pub fn filter(path_prefix: Option<String>, languages: &[String]) -> Result<Filter> {
    let mut names = Vec::new();
    for l in languages {
        let lang = Language::from_name(l).ok_or_else(|| {
            Error::BadQuery(format!(
                "unknown language {l:?} (try python, rust, typescript, go, …)"
            ))
        })?;
        names.push(lang);
        if lang == Language::TypeScript {
            names.push(Language::Tsx);
        }
    }
    Ok(Filter {
        path_prefix,
        languages: names,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typescript_includes_tsx_and_unknown_languages_are_refused() {
        let f = filter(Some("src".into()), &["ts".into()]).unwrap();
        assert_eq!(f.path_prefix.as_deref(), Some("src"));
        assert_eq!(f.languages, [Language::TypeScript, Language::Tsx]);
        let err = filter(None, &["cobolt".into()]).unwrap_err();
        assert_eq!(err.code(), lode_core::ErrorCode::BadQuery);
        assert!(err.to_string().contains("cobolt"), "{err}");
    }
}
