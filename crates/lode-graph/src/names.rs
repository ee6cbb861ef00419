//! Reading names out of the text the extractor stored: the type a container
//! names, the shape of a call's receiver, and a parameter's declared type.

use lode_core::Language;

/// The type a container names: `impl Config` → `Config`, `class Router` →
/// `Router`, `impl<T> Store<T>` → `Store`, `type pkg.Cart` → `Cart`.
pub fn container_type(container: &str) -> &str {
    let text = container.trim();
    let text = match text.split_once(char::is_whitespace) {
        Some((_, rest)) => rest.trim(),
        None => text,
    };
    let text = text.split('<').next().unwrap_or(text);
    let text = text.trim_start_matches(['*', '&']);
    last_segment(text.trim())
}

/// The last segment of a path written with `::`, `.`, `->` or `\`.
pub fn last_segment(path: &str) -> &str {
    let cut = ["::", ".", "->", "\\"]
        .iter()
        .filter_map(|sep| path.rfind(sep).map(|i| i + sep.len()))
        .max()
        .unwrap_or(0);
    &path[cut..]
}

/// A path's segments, whatever the separator.
pub fn segments(path: &str) -> Vec<&str> {
    path.split("::")
        .flat_map(|p| p.split("->"))
        .flat_map(|p| p.split(['.', '\\']))
        .filter(|s| !s.is_empty())
        .collect()
}

/// What the text before `.callee(` / `::callee(` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Receiver<'a> {
    /// No receiver: a bare call `f(x)`.
    None,
    /// `self`, `this`, `Self`, `cls`: the caller's own type.
    SelfRef,
    /// `self.items`, `this.repo`: a field of the caller's type.
    SelfField,
    /// `super`: the parent type, which the index does not know.
    Super,
    /// A name or a path of names: a variable, a type, a module.
    Path(Vec<&'a str>),
    /// Anything else: a call chain, an index expression, a literal.
    Expression,
}

const SELF_NAMES: [&str; 6] = ["self", "this", "$this", "Self", "cls", "@"];

/// The shape of a call's receiver text (see [`Receiver`]).
pub fn receiver(text: Option<&str>) -> Receiver<'_> {
    let Some(text) = text else {
        return Receiver::None;
    };
    let text = text
        .trim()
        .trim_start_matches(['&', '*', '('])
        .trim_end_matches([')', '?', '!'])
        .trim();
    if text.is_empty() {
        return Receiver::None;
    }
    if SELF_NAMES.contains(&text) {
        return Receiver::SelfRef;
    }
    if text == "super" || text.starts_with("super.") || text.starts_with("super(") {
        return Receiver::Super;
    }
    let is_name = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
    };
    let parts = segments(text);
    let plain = text
        .chars()
        .all(|c| c.is_alphanumeric() || "_$.:->\\".contains(c))
        && parts.iter().all(|p| is_name(p));
    if !plain {
        return Receiver::Expression;
    }
    if parts.len() > 1 && SELF_NAMES.contains(&parts[0]) && parts[0] != "Self" {
        return Receiver::SelfField;
    }
    Receiver::Path(parts)
}

/// How a language writes a parameter's type.
#[derive(Clone, Copy, PartialEq, Eq)]
enum TypeStyle {
    /// `name: Type` (Python, TypeScript, Rust, Kotlin, Scala, Swift).
    Colon,
    /// `name Type`, `name *pkg.Type` (Go).
    After,
    /// `Type name`, `const Type& name` (Java, C#, C, C++, PHP).
    Before,
}

fn type_style(lang: Language) -> Option<TypeStyle> {
    Some(match lang {
        Language::Python
        | Language::TypeScript
        | Language::Tsx
        | Language::Rust
        | Language::Kotlin
        | Language::Scala
        | Language::Swift => TypeStyle::Colon,
        Language::Go => TypeStyle::After,
        Language::Java | Language::CSharp | Language::C | Language::Cpp | Language::Php => {
            TypeStyle::Before
        }
        _ => return None,
    })
}

const NOT_TYPES: [&str; 12] = [
    "const", "final", "mut", "var", "val", "let", "in", "out", "ref", "dyn", "impl", "struct",
];

/// The declared type of `var` in a signature, as its last path segment:
/// `fn f(c: &mut Cart)` → `Cart`, `func (c *cart.Cart) Add()` → `Cart`,
/// `void f(const Cart& c)` → `Cart`.
pub fn declared_type<'s>(signature: &'s str, var: &str, lang: Language) -> Option<&'s str> {
    let style = type_style(lang)?;
    let bytes = signature.as_bytes();
    let is_word = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'$';
    let mut from = 0;
    while let Some(pos) = signature[from..].find(var) {
        let start = from + pos;
        let end = start + var.len();
        from = end;
        let before_ok = start == 0 || !is_word(bytes[start - 1]);
        let after_ok = end == bytes.len() || !is_word(bytes[end]);
        if !(before_ok && after_ok) {
            continue;
        }
        let found = match style {
            TypeStyle::Colon => {
                let rest = signature[end..].trim_start();
                rest.strip_prefix(':')
                    .filter(|r| !r.starts_with(':'))
                    .and_then(first_type)
            }
            TypeStyle::After => first_type(&signature[end..]),
            TypeStyle::Before => type_before(&signature[..start]),
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The first type named at the start of `text`, skipping `&`, `*`, `mut`, ….
fn first_type(text: &str) -> Option<&str> {
    let mut rest = text;
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || "&*?[]".contains(c));
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || "_:.$".contains(c)))
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        if word.is_empty() {
            return None;
        }
        if NOT_TYPES.contains(&word) || word.starts_with('\'') {
            rest = &rest[word_end..];
            continue;
        }
        let name = last_segment(word);
        return name
            .chars()
            .next()
            .filter(|c| c.is_alphabetic() || *c == '_')
            .map(|_| name);
    }
}

/// The type written just before a parameter name: `const Cart& ` → `Cart`.
fn type_before(text: &str) -> Option<&str> {
    let text = text.trim_end_matches(|c: char| c.is_whitespace() || "&*".contains(c));
    let text = if text.ends_with('>') {
        // `List<Cart> items`: the generic's own name is the type.
        let mut depth = 0;
        let mut cut = None;
        for (i, c) in text.char_indices().rev() {
            match c {
                '>' => depth += 1,
                '<' => {
                    depth -= 1;
                    if depth == 0 {
                        cut = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        &text[..cut?]
    } else {
        text
    };
    let start = text
        .rfind(|c: char| !(c.is_alphanumeric() || "_:.$\\".contains(c)))
        .map(|i| i + 1)
        .unwrap_or(0);
    let word = &text[start..];
    let name = last_segment(word);
    let first = name.chars().next()?;
    (!NOT_TYPES.contains(&name) && (first.is_alphabetic() || first == '_')).then_some(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_types() {
        assert_eq!(container_type("impl Config"), "Config");
        assert_eq!(container_type("class Router"), "Router");
        assert_eq!(container_type("impl<T> Store<T>"), "Store");
        assert_eq!(container_type("type *pkg.Cart"), "Cart");
        assert_eq!(container_type("Cart"), "Cart");
    }

    #[test]
    fn receivers() {
        assert_eq!(receiver(None), Receiver::None);
        assert_eq!(receiver(Some("self")), Receiver::SelfRef);
        assert_eq!(receiver(Some("this")), Receiver::SelfRef);
        assert_eq!(receiver(Some("self.items")), Receiver::SelfField);
        assert_eq!(receiver(Some("Self")), Receiver::SelfRef);
        assert_eq!(receiver(Some("super")), Receiver::Super);
        assert_eq!(
            receiver(Some("crate::pricing")),
            Receiver::Path(vec!["crate", "pricing"])
        );
        assert_eq!(
            receiver(Some("os.path")),
            Receiver::Path(vec!["os", "path"])
        );
        assert_eq!(receiver(Some("get_cart()")), Receiver::Expression);
        assert_eq!(receiver(Some("items[0]")), Receiver::Expression);
    }

    #[test]
    fn declared_types() {
        assert_eq!(
            declared_type("def total(cart: Cart, n=1)", "cart", Language::Python),
            Some("Cart")
        );
        assert_eq!(
            declared_type("fn f(c: &mut model::Cart) -> u32", "c", Language::Rust),
            Some("Cart")
        );
        assert_eq!(
            declared_type("func (c *cart.Cart) Add(x int)", "c", Language::Go),
            Some("Cart")
        );
        assert_eq!(
            declared_type("void f(const Cart& c, int n)", "c", Language::Cpp),
            Some("Cart")
        );
        assert_eq!(
            declared_type(
                "public int total(List<Item> items)",
                "items",
                Language::Java
            ),
            Some("List")
        );
        assert_eq!(declared_type("def f(cart)", "cart", Language::Python), None);
        assert_eq!(declared_type("fn f(x: u32)", "cart", Language::Rust), None);
        // A word that only contains the name is not the name.
        assert_eq!(
            declared_type("def f(cart2: Other, cart: Cart)", "cart", Language::Python),
            Some("Cart")
        );
        // `Self::x` is a path, not a parameter's type annotation.
        assert_eq!(declared_type("fn f() -> c::D", "c", Language::Rust), None);
    }
}
