//! What a reference is on: its name's last segment, the receiver (own, imported, a path,
//! a typed value), the names imports bind and the members the file defines.

use super::*;

/// The referenced name as written, reduced to its last path segment and stripped of
/// generic arguments: `a.b.foo` → `foo`, `std::io::Write` → `Write`, `List<int>` → `List`.
pub(super) fn reference_name(text: &str) -> &str {
    let text = text.split(['<', '(', '[']).next().unwrap_or("").trim();
    let last = text.rsplit(['.', ':', '\\']).next().unwrap_or(text);
    last.trim()
}

/// The member expressions of `language` that look a name up on a receiver, as
/// (expression kind, field of the receiver, field of the name); see
/// [`crate::lang::Spec::member_fields`].
pub(super) fn member_fields(
    language: Language,
    kind: &str,
) -> Option<(&'static str, &'static str)> {
    (language.spec().member_fields)(kind)
}

/// The names a file's imports bind, which a receiver can be written as: the names an
/// import lists (`from m import a` → `a`; `use m::{a, b}`; `import { a } from './m'`;
/// PHP `use App\User`), else, where the statement binds its module, the module's first
/// segment in Python (`import os.path` binds `os`) and its last in Go (`import "x/fmt"`
/// binds `fmt`), Java (`import com.acme.Util;` binds `Util`) and Rust (`mod foo;` binds
/// `foo`). Ruby `require`, C/C++ `#include`, C# `using` and path-only imports bind
/// nothing; aliases (`import numpy as np`) are not in [`Import`], so they bind nothing
/// here either.
pub(super) fn import_bindings(language: Language, imports: &[Import]) -> FastSet<String> {
    let mut bound = FastSet::default();
    for import in imports {
        if !import.names.is_empty() {
            bound.extend(import.names.iter().filter(|n| *n != "*").cloned());
            continue;
        }
        let binding = (language.spec().module_binding)(import.module.as_str());
        if let Some(b) = binding.filter(|b| !b.is_empty()) {
            bound.insert(b.to_string());
        }
    }
    bound
}

/// The path each name a Rust file's `use` and `mod` items bind stands for: `use
/// crate::de;` binds `de` to `crate::de`, `use tokio::io::{self, AsyncRead};` binds `io`
/// to `tokio::io` and `AsyncRead` to `tokio::io::AsyncRead`, `mod store;` binds `store`
/// to `self::store`. Globs bind nothing, and a name bound twice (by `cfg` variants) keeps
/// its first path; a `#[path]` module is left out (its file is not where its path says).
pub(super) fn rust_bound_paths(imports: &[Import]) -> FastMap<&str, String> {
    let mut bound: FastMap<&str, String> = FastMap::default();
    for import in imports {
        let module = import.module.as_str();
        if module.starts_with("#[") {
            continue;
        }
        if import.names.is_empty() {
            if let Some(last) = module.rsplit("::").next().filter(|l| !l.is_empty()) {
                bound.entry(last).or_insert_with(|| module.to_string());
            }
            continue;
        }
        for name in &import.names {
            match name.as_str() {
                "*" => {}
                "self" => {
                    if let Some(last) = module.rsplit("::").next().filter(|l| !l.is_empty()) {
                        bound.entry(last).or_insert_with(|| module.to_string());
                    }
                }
                name => {
                    bound
                        .entry(name)
                        .or_insert_with(|| format!("{module}::{name}"));
                }
            }
        }
    }
    bound
}

/// The members of the file's types, classes and modules by (the owner's last name
/// segment, the member's name): `Foo.new` (a method of `impl Foo`), `Outer.Inner.f` as
/// `("Inner", "f")`. `None` when two owners of that name define it (ambiguous). A
/// definition nested in a function (`outer.inner`) is no member.
pub(super) fn local_members(symbols: &[Symbol]) -> FastMap<(&str, &str), Option<u32>> {
    let mut members: FastMap<(&str, &str), Option<u32>> = FastMap::default();
    for (i, s) in symbols.iter().enumerate() {
        let Some((owner, _)) = s.qualified_name.rsplit_once('.') else {
            continue;
        };
        let in_function = s.parent.is_some_and(|p| {
            symbols
                .get(p as usize)
                .is_some_and(|p| matches!(p.kind, SymbolKind::Function | SymbolKind::Method))
        });
        if in_function {
            continue;
        }
        let owner = owner.rsplit('.').next().unwrap_or(owner);
        members
            .entry((owner, s.name.as_str()))
            .and_modify(|m| *m = None)
            .or_insert(Some(i as u32));
    }
    members
}

/// What the reference name node `name` is looked up on ([`Receiver`]): the name is the
/// member of a member expression (its parent, or the name node itself when a pattern
/// captures the whole `a.b.C`), and the receiver is that expression's object. Pure syntax:
/// `self.meta.is_match` is [`Receiver::Other`] (the receiver is `self.meta`), `self.parse`
/// is [`Receiver::Own`], and `util.fmt` is [`Receiver::Imported`] when `util` is one of
/// `bindings` ([`import_bindings`]). With it, the receiver's text when that is one bare
/// identifier (`Foo` in `Foo::new()`, not `self.meta` or `Vec::<u8>`), and its text when
/// it is a path of identifiers (`runtime::Builder` in `runtime::Builder::new()`,
/// `self.meta` in `self.meta.f()`).
pub(super) fn receiver_of<'b, 't>(
    language: Language,
    reference: Node<'t>,
    name: Node<'t>,
    bytes: &'b [u8],
    bindings: &FastSet<String>,
) -> (Receiver, Option<&'b str>, Option<&'b str>, Option<Node<'t>>) {
    let (expression, member) = match member_fields(language, name.kind()) {
        Some(_) => (name, None),
        None => match parent_below(reference, name) {
            Some(parent) => (parent, Some(name)),
            None => return (Receiver::None, None, None, None),
        },
    };
    let Some((object_field, name_field)) = member_fields(language, expression.kind()) else {
        return (Receiver::None, None, None, None);
    };
    if let Some(member) = member
        && expression.child_by_field_name(name_field) != Some(member)
    {
        return (Receiver::None, None, None, None);
    }
    let Some(object) = expression.child_by_field_name(object_field) else {
        // `::f()` in Rust, a Ruby call without a receiver.
        return (Receiver::None, None, None, None);
    };
    // A method called on a value just constructed is a member of its type:
    // `ParserI::new(p).parse()` (not the enclosing `Parser.parse`), `Parser(x).parse()`
    // in Python.
    let text = constructed_type(language, object, bytes).unwrap_or(node_text(object, bytes));
    let rust_path = language == Language::Rust
        && matches!(
            expression.kind(),
            "scoped_identifier" | "scoped_type_identifier"
        );
    let own = match text {
        // Rust `self::f()` is this module's `f`, a path: not a member of `self`.
        "self" => !rust_path,
        "this" | "Self" | "cls" | "$this" => true,
        // PHP `static::f()` is late static binding on the enclosing class.
        "static" => language == Language::Php,
        _ => false,
    };
    let receiver = if own {
        Receiver::Own
    } else if rust_path {
        Receiver::Path
    } else if bindings.contains(text)
        // Python `importlib.util.cache_from_source()` after `import importlib.util`: a
        // module path starting from what the import bound.
        || (language == Language::Python
            && text.contains('.')
            && text.split('.').all(is_identifier)
            && text.split('.').next().is_some_and(|first| bindings.contains(first)))
    {
        Receiver::Imported
    } else {
        Receiver::Other
    };
    (
        receiver,
        Some(text).filter(|t| is_identifier(t)),
        Some(text).filter(|t| {
            t.split(['.', ':'])
                .filter(|seg| !seg.is_empty())
                .all(is_identifier)
        }),
        Some(object),
    )
}

/// The type of the value `object` is, when the language's convention makes it evident:
/// Rust `Type::new(…)` and `Type::default()` (the path, `a::Type` kept whole) and a
/// constant or variant named on its type (`Method::GET`), Python `Type(…)` with a
/// capitalised name. `None` for anything else.
pub(super) fn constructed_type<'b>(
    language: Language,
    object: Node<'_>,
    bytes: &'b [u8],
) -> Option<&'b str> {
    // A Rust constant or variant named on its type is a value of it: `Method::GET` in
    // `Method::GET.is_idempotent()`, `Kind::Io` (a type is capitalized; `u32::MAX` is not
    // one the map holds).
    if language == Language::Rust && object.kind() == "scoped_identifier" {
        let name = node_text(object.child_by_field_name("name")?, bytes);
        let path = object.child_by_field_name("path")?;
        let ty = node_text(path, bytes);
        let last = ty.rsplit("::").next().unwrap_or(ty);
        return (name.starts_with(|c: char| c.is_ascii_uppercase())
            && last.starts_with(|c: char| c.is_ascii_uppercase()))
        .then_some(ty);
    }
    if object.kind() != "call_expression" && object.kind() != "call" {
        return None;
    }
    let function = object.child_by_field_name("function")?;
    match (language, function.kind()) {
        (Language::Rust, "scoped_identifier") => {
            let name = node_text(function.child_by_field_name("name")?, bytes);
            let path = function.child_by_field_name("path")?;
            (name == "new" || name == "default").then(|| node_text(path, bytes))
        }
        (Language::Python, "identifier") => {
            let name = node_text(function, bytes);
            name.starts_with(|c: char| c.is_ascii_uppercase())
                .then_some(name)
        }
        _ => None,
    }
}

/// Whether `text` is one identifier (letters, digits, `_`, `$`; not starting with a digit).
pub(super) fn is_identifier(text: &str) -> bool {
    text.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80)
}

/// The parent of `node`, found by descending from `top`, the reference capture that holds
/// it (one to three levels): `Node::parent` descends from the root of the tree, and on the
/// stdlib's 345,000 references it makes a scan 18% slower. Falls back to it when `node`
/// is `top` itself or not below it (JavaScript's tags query captures a method call's
/// `arguments` as the reference).
pub(super) fn parent_below<'t>(top: Node<'t>, node: Node<'t>) -> Option<Node<'t>> {
    let within = top.start_byte() <= node.start_byte() && node.end_byte() <= top.end_byte();
    if top == node || !within {
        return node.parent();
    }
    let mut current = top;
    loop {
        let Some(child) = current.child_with_descendant(node) else {
            return node.parent();
        };
        if child == node {
            return Some(current);
        }
        current = child;
    }
}

/// A type's base name, as a Rust `impl` scope or a Go receiver contributes it:
/// `&'a mut foo::Bar<T>` → `Bar`; `*Server[T]` → `Server`.
pub(crate) fn base_type_name(text: &str) -> &str {
    let mut t = text.trim();
    loop {
        let before = t;
        t = t.trim_start_matches(['&', '*', ' ', '(']);
        if let Some(rest) = t.strip_prefix('\'') {
            t = rest.split_once(' ').map_or("", |(_, r)| r);
        }
        for prefix in ["mut ", "dyn ", "const "] {
            if let Some(rest) = t.strip_prefix(prefix) {
                t = rest;
            }
        }
        if t == before {
            break;
        }
    }
    let t = t.split(['<', '[', ' ', ')']).next().unwrap_or("");
    t.rsplit("::")
        .next()
        .unwrap_or(t)
        .rsplit('.')
        .next()
        .unwrap_or(t)
}
