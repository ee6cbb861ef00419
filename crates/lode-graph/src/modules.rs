//! Where an import points: the repository files a module path names, per
//! language, or "outside the repository".
//!
//! An import that names no file of the repository is *external* (a standard
//! library or a package): a call through it never binds to a local
//! definition of the same name.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use lode_core::Language;

/// Where a module path leads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModuleTarget {
    /// Repository files (a module file, a package directory's files).
    Files(Vec<String>),
    /// Nothing in the repository: a library or a package.
    External,
}

/// The repository's files, for resolving module paths.
pub struct Modules {
    paths: HashSet<String>,
    /// Directory (`""` for the root) → its files.
    dirs: HashMap<String, Vec<String>>,
    /// Go modules: (directory of go.mod, module path).
    go_modules: Vec<(String, String)>,
    /// Rust crates by name (`-` as `_`) → their `src` directory.
    crates: HashMap<String, String>,
    /// File name → the paths with it, in index order (C includes).
    by_name: HashMap<String, Vec<String>>,
    /// Stem → the C and C++ source files with it.
    c_sources: HashMap<String, Vec<String>>,
    /// Answers already given: every call of a file asks about the same
    /// imports, and an include can be looked for across the whole tree.
    memo: RefCell<HashMap<(String, Language, String), ModuleTarget>>,
}

const JS_EXTS: [&str; 8] = [".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];
const C_SOURCES: [&str; 6] = [".c", ".cc", ".cpp", ".cxx", ".c++", ".m"];

/// The directory of a `/`-separated path (`""` at the root).
pub fn dir_of(path: &str) -> &str {
    path.rfind('/').map(|i| &path[..i]).unwrap_or("")
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// `a/./b/../c` → `a/c`; `None` when it climbs out of the root.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out.join("/"))
}

/// The `[package] name` of a Cargo.toml.
fn crate_name(toml: &str) -> Option<String> {
    let mut in_package = false;
    for line in toml.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if in_package
            && let Some(v) = line.strip_prefix("name")
            && let Some(v) = v.trim_start().strip_prefix('=')
        {
            return Some(v.trim().trim_matches('"').to_string());
        }
    }
    None
}

fn stem(path: &str) -> &str {
    let name = &path[path.rfind('/').map(|i| i + 1).unwrap_or(0)..];
    name.split('.').next().unwrap_or(name)
}

impl Modules {
    /// `paths` are the indexed files; `root` is read for `go.mod` files only.
    pub fn new(paths: Vec<String>, root: &Path) -> Modules {
        let mut dirs: HashMap<String, Vec<String>> = HashMap::new();
        let mut go_modules = Vec::new();
        let mut crates = HashMap::new();
        let mut by_name: HashMap<String, Vec<String>> = HashMap::new();
        let mut c_sources: HashMap<String, Vec<String>> = HashMap::new();
        for p in &paths {
            let name = &p[p.rfind('/').map_or(0, |i| i + 1)..];
            by_name.entry(name.to_string()).or_default().push(p.clone());
            if C_SOURCES.iter().any(|e| p.ends_with(e)) {
                c_sources
                    .entry(stem(p).to_string())
                    .or_default()
                    .push(p.clone());
            }
            dirs.entry(dir_of(p).to_string())
                .or_default()
                .push(p.clone());
            if (p == "Cargo.toml" || p.ends_with("/Cargo.toml"))
                && let Some(name) = lode_core::inside::read(root, p)
                    .ok()
                    .and_then(|b| crate_name(&String::from_utf8_lossy(&b)))
            {
                crates.insert(name.replace('-', "_"), join(dir_of(p), "src"));
            }
            if (p == "go.mod" || p.ends_with("/go.mod"))
                && let Ok(bytes) = lode_core::inside::read(root, p)
                && let text = String::from_utf8_lossy(&bytes)
                && let Some(module) = text.lines().find_map(|l| l.trim().strip_prefix("module "))
            {
                let module = module.trim().trim_matches('"').to_string();
                go_modules.push((dir_of(p).to_string(), module));
            }
        }
        Modules {
            paths: paths.into_iter().collect(),
            dirs,
            go_modules,
            crates,
            by_name,
            c_sources,
            memo: RefCell::default(),
        }
    }

    /// Whether `path` is an indexed file.
    pub fn contains(&self, path: &str) -> bool {
        self.paths.contains(path)
    }

    /// Files of one directory with one of the extensions.
    fn dir_files(&self, dir: &str, exts: &[&str]) -> Vec<String> {
        self.dirs
            .get(dir)
            .map(|files| {
                files
                    .iter()
                    .filter(|f| exts.iter().any(|e| f.ends_with(e)))
                    .cloned()
                    .collect()
            })
            .unwrap_or_default()
    }

    fn first_existing(&self, candidates: impl IntoIterator<Item = String>) -> Option<String> {
        candidates.into_iter().find(|c| self.paths.contains(c))
    }

    /// The files `source`, imported from `from` (a file of language `lang`), names.
    pub fn resolve(&self, from: &str, lang: Language, source: &str) -> ModuleTarget {
        let key = (from.to_string(), lang, source.to_string());
        if let Some(known) = self.memo.borrow().get(&key) {
            return known.clone();
        }
        let target = self.resolve_uncached(from, lang, source);
        self.memo.borrow_mut().insert(key, target.clone());
        target
    }

    fn resolve_uncached(&self, from: &str, lang: Language, source: &str) -> ModuleTarget {
        let files = match lang {
            Language::Python => self.python(from, source),
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                self.javascript(from, source)
            }
            Language::Go => self.go(source),
            Language::Rust => self.rust(from, source),
            Language::Java | Language::Kotlin | Language::Scala | Language::CSharp => {
                self.jvm(source, lang)
            }
            Language::C | Language::Cpp => self.c_include(from, source),
            _ => self.generic(from, source),
        };
        if files.is_empty() {
            ModuleTarget::External
        } else {
            ModuleTarget::Files(files)
        }
    }

    fn python(&self, from: &str, source: &str) -> Vec<String> {
        let dots = source.len() - source.trim_start_matches('.').len();
        let rest = source[dots..].replace('.', "/");
        let candidates = |base: &str| {
            if rest.is_empty() {
                vec![join(base, "__init__.py")]
            } else {
                vec![
                    join(base, &format!("{rest}.py")),
                    join(base, &format!("{rest}/__init__.py")),
                ]
            }
        };
        if dots > 0 {
            let mut base = dir_of(from);
            for _ in 1..dots {
                base = dir_of(base);
            }
            return self.first_existing(candidates(base)).into_iter().collect();
        }
        // Absolute: from the root, or from any directory above the file
        // (a `src/` layout, a package inside a monorepo).
        let mut base = dir_of(from);
        loop {
            if let Some(found) = self.first_existing(candidates(base)) {
                return vec![found];
            }
            if base.is_empty() {
                return Vec::new();
            }
            base = dir_of(base);
        }
    }

    fn javascript(&self, from: &str, source: &str) -> Vec<String> {
        let target = if source.starts_with('.') {
            normalize(&join(dir_of(from), source))
        } else {
            source
                .strip_prefix("@/")
                .or_else(|| source.strip_prefix("~/"))
                .map(|rest| join("src", rest))
        };
        let Some(target) = target else {
            return Vec::new();
        };
        let target = target.trim_end_matches(".js").to_string();
        let mut candidates = vec![target.clone()];
        candidates.extend(JS_EXTS.iter().map(|e| format!("{target}{e}")));
        candidates.extend(JS_EXTS.iter().map(|e| format!("{target}/index{e}")));
        self.first_existing(candidates).into_iter().collect()
    }

    fn go(&self, source: &str) -> Vec<String> {
        for (dir, module) in &self.go_modules {
            let rest = if source == module {
                Some("")
            } else {
                source
                    .strip_prefix(module.as_str())
                    .and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                return self.dir_files(&join(dir, rest), &[".go"]);
            }
        }
        if !self.go_modules.is_empty() {
            return Vec::new();
        }
        // No go.mod: the longest tail of the import path that is a directory.
        let parts: Vec<&str> = source.split('/').collect();
        (0..parts.len())
            .map(|i| parts[i..].join("/"))
            .map(|dir| self.dir_files(&dir, &[".go"]))
            .find(|f| !f.is_empty())
            .unwrap_or_default()
    }

    fn rust(&self, from: &str, source: &str) -> Vec<String> {
        let parts: Vec<&str> = source.split("::").filter(|s| !s.is_empty()).collect();
        let Some(&head) = parts.first() else {
            return Vec::new();
        };
        if matches!(head, "std" | "core" | "alloc") {
            return Vec::new();
        }
        // The crate's source root: the nearest `src` directory above the file.
        let crate_root = {
            let mut d = dir_of(from);
            loop {
                if d == "src" || d.ends_with("/src") || d.is_empty() {
                    break d;
                }
                d = dir_of(d);
            }
        };
        // The directory holding the current module's children.
        let file_name = &from[from.rfind('/').map(|i| i + 1).unwrap_or(0)..];
        let own_dir = if matches!(file_name, "mod.rs" | "lib.rs" | "main.rs") {
            dir_of(from).to_string()
        } else {
            join(dir_of(from), stem(from))
        };
        let (mut dir, rest) = match head {
            "crate" => (crate_root.to_string(), &parts[1..]),
            // Another crate of the workspace, or this one from its binary.
            name if self.crates.contains_key(name) => (self.crates[name].clone(), &parts[1..]),
            "self" => (own_dir, &parts[1..]),
            "super" => {
                let mut d = dir_of(&own_dir).to_string();
                let mut rest = &parts[1..];
                while rest.first() == Some(&"super") {
                    d = dir_of(&d).to_string();
                    rest = &rest[1..];
                }
                (d, rest)
            }
            // A bare path: a module declared in this file's module, or in the crate root.
            _ => {
                let local = join(&own_dir, head);
                let at_root = join(crate_root, head);
                let exists = |d: &str| {
                    self.paths.contains(&format!("{d}.rs"))
                        || self.paths.contains(&format!("{d}/mod.rs"))
                };
                if exists(&local) {
                    (own_dir, &parts[..])
                } else if exists(&at_root) {
                    (crate_root.to_string(), &parts[..])
                } else {
                    return Vec::new();
                }
            }
        };
        // Walk down while a module file exists; later segments are items.
        let mut found = if rest.is_empty() {
            self.first_existing([join(&dir, "mod.rs"), join(&dir, "lib.rs")])
                .or_else(|| self.first_existing([format!("{dir}.rs")]))
        } else {
            None
        };
        for seg in rest {
            let next = join(&dir, seg);
            match self.first_existing([format!("{next}.rs"), format!("{next}/mod.rs")]) {
                Some(f) => {
                    found = Some(f);
                    dir = next;
                }
                None => break,
            }
        }
        let rooted = matches!(head, "crate" | "self" | "super") || self.crates.contains_key(head);
        if found.is_none() && !rooted {
            return Vec::new();
        }
        found
            .or_else(|| self.first_existing([join(&dir, "lib.rs"), join(&dir, "main.rs")]))
            .into_iter()
            .collect()
    }

    fn jvm(&self, source: &str, lang: Language) -> Vec<String> {
        let ext: &[&str] = match lang {
            Language::Java => &[".java"],
            Language::Kotlin => &[".kt", ".kts"],
            Language::Scala => &[".scala"],
            _ => &[".cs"],
        };
        let rel = source.replace('.', "/");
        // A package directory (matched by its tail, since sources sit under
        // `src/main/java/`), or a class file (`a.b.C` of a static import).
        let by_tail = |target: &str| -> Option<String> {
            self.dirs
                .keys()
                .filter(|d| *d == target || d.ends_with(&format!("/{target}")))
                .min_by_key(|d| d.len())
                .cloned()
        };
        if let Some(dir) = by_tail(&rel) {
            let files = self.dir_files(&dir, ext);
            if !files.is_empty() {
                return files;
            }
        }
        let class_dir = dir_of(&rel);
        let class = &rel[rel.rfind('/').map(|i| i + 1).unwrap_or(0)..];
        if let Some(dir) = by_tail(class_dir) {
            let wanted: Vec<String> = ext
                .iter()
                .map(|e| join(&dir, &format!("{class}{e}")))
                .collect();
            return self.first_existing(wanted).into_iter().collect();
        }
        Vec::new()
    }

    fn c_include(&self, from: &str, source: &str) -> Vec<String> {
        let header = normalize(&join(dir_of(from), source))
            .filter(|p| self.paths.contains(p))
            .or_else(|| {
                let name = &source[source.rfind('/').map_or(0, |i| i + 1)..];
                let suffix = format!("/{source}");
                self.by_name
                    .get(name)?
                    .iter()
                    .filter(|p| *p == source || p.ends_with(&suffix))
                    .min_by_key(|p| p.len())
                    .cloned()
            });
        let Some(header) = header else {
            return Vec::new();
        };
        // The header's definitions usually live in a source file of the same
        // stem: beside it, or in a sibling directory (`include/` and `src/`).
        let wanted = stem(&header);
        let near = dir_of(dir_of(&header));
        let mut files: Vec<String> = self
            .c_sources
            .get(wanted)
            .into_iter()
            .flatten()
            .filter(|p| near.is_empty() || p.starts_with(near))
            .cloned()
            .collect();
        files.sort();
        files.insert(0, header);
        files
    }

    fn generic(&self, from: &str, source: &str) -> Vec<String> {
        if source.starts_with('.') {
            let base = normalize(&join(dir_of(from), source)).unwrap_or_default();
            let prefix = format!("{base}.");
            return self
                .paths
                .iter()
                .filter(|p| **p == base || p.starts_with(&prefix))
                .cloned()
                .collect();
        }
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modules(paths: &[&str]) -> Modules {
        Modules::new(
            paths.iter().map(|p| p.to_string()).collect(),
            Path::new("/nonexistent"),
        )
    }

    fn files(t: ModuleTarget) -> Vec<String> {
        match t {
            ModuleTarget::Files(f) => f,
            ModuleTarget::External => Vec::new(),
        }
    }

    #[test]
    fn python_relative_absolute_and_external() {
        let m = modules(&["src/shop/__init__.py", "src/shop/cart.py", "src/main.py"]);
        assert_eq!(
            files(m.resolve("src/shop/__init__.py", Language::Python, ".cart")),
            ["src/shop/cart.py"]
        );
        assert_eq!(
            files(m.resolve("src/main.py", Language::Python, "shop.cart")),
            ["src/shop/cart.py"]
        );
        assert_eq!(
            files(m.resolve("src/main.py", Language::Python, "shop")),
            ["src/shop/__init__.py"]
        );
        assert_eq!(
            m.resolve("src/main.py", Language::Python, "json"),
            ModuleTarget::External
        );
    }

    #[test]
    fn javascript_relative_and_packages() {
        let m = modules(&["src/a.ts", "src/util/index.ts", "src/b.js"]);
        assert_eq!(
            files(m.resolve("src/b.js", Language::TypeScript, "./a")),
            ["src/a.ts"]
        );
        assert_eq!(
            files(m.resolve("src/a.ts", Language::TypeScript, "./util")),
            ["src/util/index.ts"]
        );
        assert_eq!(
            files(m.resolve("src/a.ts", Language::TypeScript, "./b.js")),
            ["src/b.js"]
        );
        assert_eq!(
            m.resolve("src/a.ts", Language::TypeScript, "react"),
            ModuleTarget::External
        );
    }

    #[test]
    fn rust_paths() {
        let m = modules(&[
            "src/lib.rs",
            "src/cart.rs",
            "src/pricing/mod.rs",
            "src/pricing/tax.rs",
        ]);
        assert_eq!(
            files(m.resolve("src/cart.rs", Language::Rust, "crate::pricing")),
            ["src/pricing/mod.rs"]
        );
        assert_eq!(
            files(m.resolve("src/cart.rs", Language::Rust, "crate::pricing::tax::rate")),
            ["src/pricing/tax.rs"]
        );
        assert_eq!(
            files(m.resolve("src/pricing/tax.rs", Language::Rust, "super")),
            ["src/pricing/mod.rs"]
        );
        assert_eq!(
            files(m.resolve("src/lib.rs", Language::Rust, "pricing")),
            ["src/pricing/mod.rs"]
        );
        assert_eq!(
            m.resolve("src/lib.rs", Language::Rust, "std::fs"),
            ModuleTarget::External
        );
        assert_eq!(
            m.resolve("src/lib.rs", Language::Rust, "serde"),
            ModuleTarget::External
        );
    }

    #[test]
    fn go_without_go_mod_matches_a_directory_tail() {
        let m = modules(&["cart/cart.go", "cart/item.go", "main.go"]);
        assert_eq!(
            files(m.resolve("main.go", Language::Go, "example.com/shop/cart")),
            ["cart/cart.go", "cart/item.go"]
        );
        assert_eq!(
            m.resolve("main.go", Language::Go, "strings"),
            ModuleTarget::External
        );
    }

    #[test]
    fn java_packages_and_classes() {
        let m = modules(&[
            "src/main/java/com/ex/shop/Cart.java",
            "src/main/java/com/ex/shop/pricing/Pricing.java",
        ]);
        assert_eq!(
            files(m.resolve("x.java", Language::Java, "com.ex.shop.pricing")),
            ["src/main/java/com/ex/shop/pricing/Pricing.java"]
        );
        assert_eq!(
            files(m.resolve("x.java", Language::Java, "com.ex.shop.pricing.Pricing")),
            ["src/main/java/com/ex/shop/pricing/Pricing.java"]
        );
        assert_eq!(
            m.resolve("x.java", Language::Java, "java.util"),
            ModuleTarget::External
        );
    }

    #[test]
    fn c_includes_bring_the_same_stem_source() {
        let m = modules(&["include/pricing.h", "src/pricing.cpp", "src/main.cpp"]);
        assert_eq!(
            files(m.resolve("src/main.cpp", Language::Cpp, "pricing.h")),
            ["include/pricing.h", "src/pricing.cpp"]
        );
        assert_eq!(
            m.resolve("src/main.cpp", Language::Cpp, "vector"),
            ModuleTarget::External
        );
    }
}
