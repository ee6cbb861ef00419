//! The cache key: what decides an index's content, hashed.

use crate::git::TreeId;

/// The key of one index in the shared cache: BLAKE3 of the root's git tree,
/// the index schema and the build fingerprint (lode version, extraction
/// rules, config, model). Two runners with equal keys would build equal
/// indexes, so one may use the other's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey(String);

impl CacheKey {
    /// The key of `tree` built with `fingerprint` (see [`lode_index::fingerprint`]).
    pub fn new(tree: &TreeId, fingerprint: &str) -> CacheKey {
        let text = format!(
            "lode-cache-key\0tree={}\0schema={}\0fingerprint={fingerprint}",
            tree.0,
            lode_index::SCHEMA_VERSION
        );
        CacheKey(blake3::hash(text.as_bytes()).to_hex().to_string())
    }

    /// A key as stored, read back.
    pub(crate) fn from_hex(hex: &str) -> CacheKey {
        CacheKey(hex.to_string())
    }

    /// The key as stored (64 hex digits).
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0[..16])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_changes_with_the_tree_and_with_the_fingerprint() {
        let a = TreeId("a".repeat(40));
        let b = TreeId("b".repeat(40));
        let key = CacheKey::new(&a, "f1");
        assert_eq!(key, CacheKey::new(&a, "f1"));
        assert_ne!(key, CacheKey::new(&b, "f1"));
        assert_ne!(key, CacheKey::new(&a, "f2"));
        assert_eq!(key.as_str().len(), 64);
    }
}
