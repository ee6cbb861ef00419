//! Binding a call site to the definitions it calls.
//!
//! The tiers, first match wins: the caller's own type (`self.f()`, an
//! implicit `this`), the same file, an imported name or module, the same
//! package, a receiver whose type the syntax shows (a type name, a
//! parameter or field with a declared type), and, last, a repository-wide
//! name match, which is marked ([`Resolution::Name`]) — unless more than
//! [`MAX_NAME_MATCHES`] definitions share the name (`new`, `run`, `wait`):
//! such a match says nothing about which is called, so it binds to none and
//! is only counted ([`Binding::Crowded`]). A call through an
//! import that leads outside the repository, or on a value of a type the
//! repository does not define, is [`Binding::External`]: it never binds to a
//! local definition that merely shares its name.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use lode_core::{Language, Result, SymbolKind};
use lode_index::{CallRow, Filter, ImportRow, Index, SymbolRow};
use serde::Serialize;

use crate::modules::{ModuleTarget, Modules, dir_of};
use crate::names::{self, Receiver, container_type, declared_type};

/// How an edge was resolved, most certain first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Resolution {
    /// A method of the caller's own type (`self.f()`, `this.f()`, implicit `this`).
    Container,
    /// A definition in the same file.
    SameFile,
    /// A name or module the file imports.
    Import,
    /// A definition in the same package or directory (Go, Java, …).
    Package,
    /// A method of the receiver's type: a type name, a typed parameter or field.
    Receiver,
    /// Only the name matched: possibly wrong (`~` in text output).
    Name,
}

impl Resolution {
    /// Its name in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            Resolution::Container => "container",
            Resolution::SameFile => "same_file",
            Resolution::Import => "import",
            Resolution::Package => "package",
            Resolution::Receiver => "receiver",
            Resolution::Name => "name",
        }
    }
}

/// What a call site binds to.
#[derive(Clone, Debug, PartialEq)]
pub enum Binding {
    /// Local definitions (several when overloads or a name match leave a choice).
    Targets(Vec<SymbolRow>, Resolution),
    /// A library or package outside the repository.
    External,
    /// Nothing local has the name, and nothing says where it comes from.
    Unknown,
    /// Only the name matched, and this many definitions (more than
    /// [`MAX_NAME_MATCHES`]) share it: no edge.
    Crowded(usize),
}

/// The most definitions a bare name match binds to.
pub const MAX_NAME_MATCHES: usize = 4;

/// Languages that call each other's definitions directly, by file extension.
pub fn family(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    match ext {
        "py" | "pyi" => "python",
        "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => "js",
        "java" | "kt" | "kts" | "scala" => "jvm",
        "c" | "h" | "cc" | "cpp" | "cxx" | "c++" | "hpp" | "hh" | "hxx" | "m" => "c",
        "rs" => "rust",
        "go" => "go",
        "cs" => "csharp",
        "rb" => "ruby",
        "php" => "php",
        "swift" => "swift",
        "ex" | "exs" => "elixir",
        "hs" => "haskell",
        "lua" => "lua",
        "zig" => "zig",
        "sh" | "bash" => "bash",
        _ => "other",
    }
}

/// Kinds a call can land on.
fn is_callable(kind: SymbolKind) -> bool {
    matches!(
        kind,
        SymbolKind::Function
            | SymbolKind::Method
            | SymbolKind::Class
            | SymbolKind::Struct
            | SymbolKind::Macro
    )
}

/// Languages where a bare call inside a class may call one of its methods.
fn implicit_this(lang: Language) -> bool {
    matches!(
        lang,
        Language::Java
            | Language::Cpp
            | Language::CSharp
            | Language::Kotlin
            | Language::Scala
            | Language::Swift
            | Language::Ruby
            | Language::Php
    )
}

/// Globals of a language's runtime that the index never defines.
fn runtime_global(lang: Language, name: &str) -> bool {
    match lang {
        Language::JavaScript | Language::TypeScript | Language::Tsx => matches!(
            name,
            "console"
                | "Math"
                | "JSON"
                | "Object"
                | "Array"
                | "Promise"
                | "window"
                | "document"
                | "process"
                | "Number"
                | "String"
                | "Date"
                | "Reflect"
                | "Symbol"
                | "Map"
                | "Set"
        ),
        Language::Python => matches!(
            name,
            "str" | "dict" | "list" | "set" | "bytes" | "int" | "super"
        ),
        Language::Go => matches!(name, "fmt" | "errors" | "strings" | "os"),
        Language::Cpp | Language::C => name == "std",
        _ => false,
    }
}

/// `orig`, `orig as alias`, `* as alias` → (orig, name in scope).
fn import_entry(entry: &str) -> (&str, &str) {
    match entry.split_once(" as ") {
        Some((orig, alias)) => (orig.trim(), alias.trim()),
        None => (entry, entry),
    }
}

/// The separator a language writes between a module and its members.
fn module_separator(lang: Language) -> &'static str {
    match lang {
        Language::Rust | Language::Cpp | Language::C => "::",
        Language::JavaScript | Language::TypeScript | Language::Tsx | Language::Go => "/",
        _ => ".",
    }
}

/// Definitions sharing a name, shared between cache and callers.
type Candidates = Rc<Vec<SymbolRow>>;

/// Resolves call sites of one open index; caches what it reads.
pub struct Resolver<'i> {
    index: &'i Index,
    /// Built on the first import to resolve: `show`, and calls that bind in
    /// their own file, never list the repository's files.
    modules: std::cell::OnceCell<Modules>,
    by_name: RefCell<HashMap<String, Candidates>>,
    by_family: RefCell<HashMap<(String, &'static str), Candidates>>,
    by_id: RefCell<HashMap<i64, Option<SymbolRow>>>,
    imports: RefCell<HashMap<String, Rc<Vec<ImportRow>>>>,
    all_loaded: bool,
}

impl<'i> Resolver<'i> {
    /// A resolver over `index`, loading what it needs on first use.
    pub fn new(index: &'i Index) -> Result<Resolver<'i>> {
        Ok(Resolver {
            modules: std::cell::OnceCell::new(),
            index,
            by_name: Default::default(),
            by_family: Default::default(),
            by_id: Default::default(),
            imports: Default::default(),
            all_loaded: false,
        })
    }

    /// A resolver that reads every symbol once up front: for whole-graph
    /// work (centrality), where one query per name would cost more.
    pub fn preloaded(index: &'i Index) -> Result<Resolver<'i>> {
        Resolver::preloaded_with(index, &index.all_symbols()?)
    }

    /// [`Resolver::preloaded`] from symbols the caller has already read
    /// (`Index::all_symbols`), so that they are read once.
    pub fn preloaded_with(index: &'i Index, symbols: &[SymbolRow]) -> Result<Resolver<'i>> {
        let mut r = Resolver::new(index)?;
        let mut by_name: HashMap<String, Vec<SymbolRow>> = HashMap::new();
        let mut by_id = HashMap::new();
        for s in symbols {
            by_id.insert(s.id, Some(s.clone()));
            if is_callable(s.kind) {
                by_name.entry(s.name.clone()).or_default().push(s.clone());
            }
        }
        r.by_name = RefCell::new(by_name.into_iter().map(|(k, v)| (k, Rc::new(v))).collect());
        r.by_id = RefCell::new(by_id);
        r.all_loaded = true;
        Ok(r)
    }

    fn modules(&self) -> Result<&Modules> {
        if let Some(m) = self.modules.get() {
            return Ok(m);
        }
        let paths = self.index.indexed_paths(&Filter::default())?;
        Ok(self
            .modules
            .get_or_init(|| Modules::new(paths, &self.index.location.root)))
    }

    /// The index it reads.
    pub fn index(&self) -> &'i Index {
        self.index
    }

    /// The callable definitions named `name`.
    pub fn named(&self, name: &str) -> Result<Rc<Vec<SymbolRow>>> {
        if let Some(hit) = self.by_name.borrow().get(name) {
            return Ok(hit.clone());
        }
        if self.all_loaded {
            return Ok(Rc::new(Vec::new()));
        }
        let found: Vec<SymbolRow> = self
            .index
            .symbols_named(name)?
            .into_iter()
            .filter(|s| is_callable(s.kind))
            .collect();
        let found = Rc::new(found);
        self.by_name
            .borrow_mut()
            .insert(name.to_string(), found.clone());
        Ok(found)
    }

    /// The callable definitions named `name` in one language family (cached:
    /// a popular name is looked up once per family, not once per call site).
    fn named_in_family(&self, name: &str, fam: &'static str) -> Result<Rc<Vec<SymbolRow>>> {
        let key = (name.to_string(), fam);
        if let Some(hit) = self.by_family.borrow().get(&key) {
            return Ok(hit.clone());
        }
        let found: Rc<Vec<SymbolRow>> = Rc::new(
            self.named(name)?
                .iter()
                .filter(|c| family(&c.path) == fam)
                .cloned()
                .collect(),
        );
        self.by_family.borrow_mut().insert(key, found.clone());
        Ok(found)
    }

    /// Symbol `id`, cached; `None` when no row has it.
    pub fn symbol(&self, id: i64) -> Result<Option<SymbolRow>> {
        if let Some(hit) = self.by_id.borrow().get(&id) {
            return Ok(hit.clone());
        }
        let found = self.index.symbol(id)?;
        self.by_id.borrow_mut().insert(id, found.clone());
        Ok(found)
    }

    fn imports(&self, path: &str) -> Result<Rc<Vec<ImportRow>>> {
        if let Some(hit) = self.imports.borrow().get(path) {
            return Ok(hit.clone());
        }
        let found = Rc::new(self.index.file_imports(path)?);
        self.imports
            .borrow_mut()
            .insert(path.to_string(), found.clone());
        Ok(found)
    }

    /// The type whose member `sym` is: its container, or its parents'.
    pub fn enclosing_type(&self, sym: &SymbolRow) -> Result<Option<String>> {
        let mut cur = Some(sym.clone());
        let mut hops = 0;
        while let Some(s) = cur {
            if let Some(c) = &s.container {
                return Ok(Some(container_type(c).to_string()));
            }
            hops += 1;
            cur = match s.parent {
                Some(p) if hops < 8 => self.symbol(p)?,
                _ => None,
            };
        }
        Ok(None)
    }

    /// What the call at `call` binds to.
    pub fn resolve(&self, call: &CallRow) -> Result<Binding> {
        // A call binds within its language family: a Python call never lands in Rust.
        let cands = self.named_in_family(&call.callee, family(&call.path))?;
        if cands.is_empty() {
            return Ok(Binding::Unknown);
        }
        let caller = match call.caller {
            Some(id) => self.symbol(id)?,
            None => None,
        };
        let caller_type = match &caller {
            Some(c) => self.enclosing_type(c)?,
            None => None,
        };
        let site = Site {
            call,
            cands: &cands,
            caller: caller.as_ref(),
            caller_type: caller_type.as_deref(),
        };
        let binding = match names::receiver(call.receiver.as_deref()) {
            Receiver::None => self.bare(&site)?,
            Receiver::SelfRef => match self.of_type(&site, site.caller_type) {
                Some(t) => Binding::Targets(t, Resolution::Container),
                None => name_only(&site, Sort::Methods),
            },
            Receiver::SelfField => self.self_field(&site)?,
            Receiver::Super | Receiver::Expression => name_only(&site, Sort::Methods),
            Receiver::Path(parts) => self.qualified(&site, &parts)?,
        };
        Ok(prefer_constructors(binding))
    }

    /// Methods of `ty` among the candidates, same file first.
    fn of_type(&self, site: &Site, ty: Option<&str>) -> Option<Vec<SymbolRow>> {
        let ty = ty?;
        let all: Vec<SymbolRow> = site
            .cands
            .iter()
            .filter(|c| c.container.as_deref().map(container_type) == Some(ty))
            .cloned()
            .collect();
        let here: Vec<SymbolRow> = all
            .iter()
            .filter(|c| c.path == site.call.path)
            .cloned()
            .collect();
        let pick = if here.is_empty() { all } else { here };
        (!pick.is_empty()).then_some(pick)
    }

    /// A call with no receiver: `f(x)`.
    fn bare(&self, site: &Site) -> Result<Binding> {
        let call = site.call;
        let lang = call.lang;
        let this = implicit_this(lang);
        if this && let Some(t) = self.of_type(site, site.caller_type) {
            return Ok(Binding::Targets(t, Resolution::Container));
        }
        let same_file: Vec<SymbolRow> = site
            .cands
            .iter()
            .filter(|c| c.path == call.path)
            .filter(|c| {
                c.kind != SymbolKind::Method
                    || (this && c.container.as_deref().map(container_type) == site.caller_type)
            })
            .cloned()
            .collect();
        if !same_file.is_empty() {
            return Ok(Binding::Targets(same_file, Resolution::SameFile));
        }
        // Imported by name (possibly renamed), or through an include.
        for imp in self.imports(&call.path)?.iter() {
            if matches!(lang, Language::C | Language::Cpp) {
                if let ModuleTarget::Files(files) =
                    self.modules()?.resolve(&call.path, lang, &imp.source)
                {
                    let found = in_files(site.cands, &files, false);
                    if !found.is_empty() {
                        return Ok(Binding::Targets(found, Resolution::Import));
                    }
                }
                continue;
            }
            for entry in &imp.names {
                let (orig, in_scope) = import_entry(entry);
                if orig == "*" || in_scope != call.callee {
                    continue;
                }
                return self.imported_name(call, imp, orig);
            }
        }
        // The same package: a Go directory, a Java package.
        if matches!(
            lang,
            Language::Go | Language::Java | Language::Kotlin | Language::Scala | Language::CSharp
        ) {
            let dir = dir_of(&call.path);
            let found: Vec<SymbolRow> = site
                .cands
                .iter()
                .filter(|c| dir_of(&c.path) == dir && (c.kind != SymbolKind::Method || this))
                .filter(|c| lang != Language::Go || c.path.ends_with(".go"))
                .cloned()
                .collect();
            if !found.is_empty() {
                return Ok(Binding::Targets(found, Resolution::Package));
            }
        }
        Ok(name_only(site, if this { Sort::Any } else { Sort::Free }))
    }

    /// `orig`, imported from `imp`, called as a bare name.
    fn imported_name(&self, call: &CallRow, imp: &ImportRow, orig: &str) -> Result<Binding> {
        let lang = call.lang;
        let files = match self.modules()?.resolve(&call.path, lang, &imp.source) {
            ModuleTarget::External => return Ok(Binding::External),
            ModuleTarget::Files(f) => f,
        };
        let cands = self.named(orig)?;
        let found = in_files(&cands, &files, false);
        if !found.is_empty() {
            return Ok(Binding::Targets(found, Resolution::Import));
        }
        // A re-export: the module imports the name from somewhere else.
        for file in &files {
            for inner in self.imports(file)?.iter() {
                if inner.names.iter().any(|n| import_entry(n).1 == orig)
                    && let ModuleTarget::Files(next) =
                        self.modules()?.resolve(file, lang, &inner.source)
                {
                    let found = in_files(&cands, &next, false);
                    if !found.is_empty() {
                        return Ok(Binding::Targets(found, Resolution::Import));
                    }
                }
            }
        }
        Ok(Binding::Unknown)
    }

    /// `self.field.f()`: the field's declared type, when the index has the field.
    fn self_field(&self, site: &Site) -> Result<Binding> {
        let field = site
            .call
            .receiver
            .as_deref()
            .map(names::segments)
            .and_then(|s| s.get(1).map(|f| f.to_string()));
        if let (Some(field), Some(owner)) = (field, site.caller_type) {
            let decl = self.index.symbols_named(&field)?.into_iter().find(|s| {
                matches!(
                    s.kind,
                    SymbolKind::Field | SymbolKind::Variable | SymbolKind::Constant
                ) && s.container.as_deref().map(container_type) == Some(owner)
            });
            if let Some(decl) = decl
                && let Some(ty) = declared_type(&decl.signature, &field, site.call.lang)
            {
                return Ok(match self.of_type(site, Some(ty)) {
                    Some(t) => Binding::Targets(t, Resolution::Receiver),
                    None if !self.defines_type(ty)? => Binding::External,
                    None => name_only(site, Sort::Methods),
                });
            }
        }
        Ok(name_only(site, Sort::Methods))
    }

    /// Whether the repository defines a type (class, struct, …) named `name`.
    fn defines_type(&self, name: &str) -> Result<bool> {
        Ok(self.index.symbols_named(name)?.iter().any(|s| {
            matches!(
                s.kind.as_str(),
                "class" | "struct" | "interface" | "trait" | "enum" | "type" | "module" | "impl"
            )
        }))
    }

    /// `a.b.f()`, `A::f()`, `pkg.F()`.
    fn qualified(&self, site: &Site, parts: &[&str]) -> Result<Binding> {
        let call = site.call;
        let lang = call.lang;
        let head = parts[0];
        let last = parts[parts.len() - 1];
        let sep = module_separator(lang);
        let joined = parts.join(sep);

        // 1. The head is a name the file imports: a module, or a type.
        'imports: for imp in self.imports(&call.path)?.iter() {
            for entry in &imp.names {
                let (orig, in_scope) = import_entry(entry);
                if in_scope != head {
                    continue;
                }
                if orig == "*" {
                    return self.in_module(site, &imp.source, None);
                }
                // `from shop import util` → `shop.util`; `use crate::cart` → `crate::cart`.
                let glue = if imp.source.ends_with('.') { "" } else { sep };
                let as_module = format!("{}{glue}{orig}", imp.source);
                if let ModuleTarget::Files(files) =
                    self.modules()?.resolve(&call.path, lang, &as_module)
                {
                    let found = in_files(site.cands, &files, false);
                    if !found.is_empty() {
                        return Ok(Binding::Targets(found, Resolution::Import));
                    }
                }
                match self.in_module(site, &imp.source, Some(orig))? {
                    // A re-exported type: its methods are found by its name below.
                    Binding::Unknown => break 'imports,
                    found => return Ok(found),
                }
            }
            if imp.names.is_empty() {
                // `import os.path`, `import "example.com/shop/cart"`.
                let bound = match lang {
                    Language::Go => imp.source.rsplit('/').next() == Some(head),
                    Language::Python => imp.source.split('.').next() == Some(head),
                    _ => false,
                };
                if bound {
                    let module = if lang == Language::Python && joined.starts_with(&imp.source) {
                        joined.clone()
                    } else {
                        imp.source.clone()
                    };
                    return self.in_module(site, &module, None);
                }
            }
        }
        // 2. A variable with a declared type.
        if parts.len() == 1
            && let Some(caller) = site.caller
            && let Some(ty) = declared_type(&caller.signature, head, lang)
        {
            return Ok(match self.of_type(site, Some(ty)) {
                Some(t) => Binding::Targets(t, Resolution::Receiver),
                None if !self.defines_type(ty)? => Binding::External,
                None => name_only(site, Sort::Methods),
            });
        }
        // 3. A Rust path from the crate, or through a local module.
        if lang == Language::Rust {
            if let ModuleTarget::Files(files) = self.modules()?.resolve(&call.path, lang, &joined) {
                let found = in_files(site.cands, &files, false);
                if let Some(t) = self.of_type(site, Some(last)) {
                    return Ok(Binding::Targets(t, Resolution::Receiver));
                }
                if !found.is_empty() {
                    return Ok(Binding::Targets(found, Resolution::Import));
                }
            }
            if matches!(head, "std" | "core" | "alloc") {
                return Ok(Binding::External);
            }
        }
        // 4. A type name: a static call or a constructor path.
        if let Some(t) = self.of_type(site, Some(last)) {
            return Ok(Binding::Targets(t, Resolution::Receiver));
        }
        // 5. Something the runtime or a library defines.
        let looks_like_type = head.chars().next().is_some_and(char::is_uppercase);
        if runtime_global(lang, head) || (looks_like_type && !self.defines_type(head)?) {
            return Ok(Binding::External);
        }
        Ok(name_only(site, Sort::Methods))
    }

    /// The candidates defined in module `source` (at top level, or in its type `ty`).
    fn in_module(&self, site: &Site, source: &str, ty: Option<&str>) -> Result<Binding> {
        Ok(
            match self
                .modules()?
                .resolve(&site.call.path, site.call.lang, source)
            {
                ModuleTarget::External => Binding::External,
                ModuleTarget::Files(files) => {
                    let found: Vec<SymbolRow> = site
                        .cands
                        .iter()
                        .filter(|c| files.contains(&c.path))
                        .filter(|c| match ty {
                            Some(ty) => c.container.as_deref().map(container_type) == Some(ty),
                            None => c.kind != SymbolKind::Method,
                        })
                        .cloned()
                        .collect();
                    if found.is_empty() {
                        Binding::Unknown
                    } else {
                        Binding::Targets(found, Resolution::Import)
                    }
                }
            },
        )
    }
}

/// One call site being resolved, with what is known around it.
struct Site<'a> {
    call: &'a CallRow,
    cands: &'a [SymbolRow],
    caller: Option<&'a SymbolRow>,
    caller_type: Option<&'a str>,
}

/// Candidates in `files` (top-level ones only unless `methods`).
fn in_files(cands: &[SymbolRow], files: &[String], methods: bool) -> Vec<SymbolRow> {
    cands
        .iter()
        .filter(|c| files.contains(&c.path) && (methods || c.kind != SymbolKind::Method))
        .cloned()
        .collect()
}

/// Which candidates a name match may pick.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Sort {
    /// `x.f()`: methods only.
    Methods,
    /// `f()`: functions and types, not methods.
    Free,
    /// `f()` where an implicit `this` lets it be either.
    Any,
}

/// The last resort: every candidate of the right sort, marked as a name match.
fn name_only(site: &Site, sort: Sort) -> Binding {
    let found: Vec<SymbolRow> = site
        .cands
        .iter()
        .filter(|c| match sort {
            Sort::Methods => c.kind == SymbolKind::Method,
            Sort::Free => c.kind != SymbolKind::Method,
            Sort::Any => true,
        })
        .cloned()
        .collect();
    match found.len() {
        0 => Binding::Unknown,
        n if n > MAX_NAME_MATCHES => Binding::Crowded(n),
        _ => Binding::Targets(found, Resolution::Name),
    }
}

/// `new Cart()` calls Cart's constructor when the class declares one.
fn prefer_constructors(binding: Binding) -> Binding {
    let Binding::Targets(targets, how) = binding else {
        return binding;
    };
    let is_ctor_of = |t: &SymbolRow, class: &SymbolRow| {
        t.kind == SymbolKind::Method
            && (t.parent == Some(class.id)
                || t.container.as_deref().map(container_type) == Some(class.name.as_str()))
    };
    let kept: Vec<SymbolRow> = targets
        .iter()
        .filter(|c| {
            !(matches!(c.kind, SymbolKind::Class | SymbolKind::Struct)
                && targets.iter().any(|t| is_ctor_of(t, c)))
        })
        .cloned()
        .collect();
    Binding::Targets(if kept.is_empty() { targets } else { kept }, how)
}
