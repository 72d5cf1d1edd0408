//! Rust: the grammar binding, queries, import reading and import resolution.
//!
//! **Rust**: `crate::` starts at the crate root: the nearest ancestor directory with a
//! `lib.rs` or `main.rs` (a file named `lib.rs`/`main.rs`, or one directly in `src/bin`,
//! `tests`, `examples` or `benches`, is its own crate root). `self::` starts at the
//! importer's module directory (`a/` for `a.rs` and `a/mod.rs`), `super::` one module up.
//! A path starting with any other name is tried relative to the importer's module (2018
//! uniform paths) and otherwise is an external crate. Each `module::name` resolves to the
//! file of its longest prefix that is a module file (`p.rs` or `p/mod.rs`); `mod foo;`
//! is recorded as `self::foo` and names `foo.rs` or `foo/mod.rs` only (a missing file
//! leaves it unresolved). `#[path = "p.rs"] mod foo;` is recorded as
//! `#[path = "p.rs"] self::foo` and names the file the Rust Reference ("Modules: the
//! path attribute") gives: `p.rs` relative to the declaring file's directory, or, inside
//! inline modules `a::b`, relative to the file's module directory joined with `a/b`
//! (`src/x.rs` with `mod a { #[path = "p.rs"] mod c; }` → `src/x/a/p.rs`; in `mod.rs`,
//! `lib.rs` or `main.rs` → `src/a/p.rs`). Not followed: a `#[path]` on an inline module
//! (`#[path = "d"] mod a { mod c; }`), `#[cfg_attr(.., path = ..)]`, and the child
//! modules of a file reached through `#[path]` (rustc gives such a file its own
//! directory; loci resolves its `mod c;` as for any file at that path). A declaration inside a macro
//! call (`cfg_rt! { pub mod runtime; }`) is never seen: tree-sitter leaves a macro's
//! body an unparsed token tree (a known gap, stated in `docs/architecture.md`).

use std::collections::BTreeSet;

use tree_sitter::Node;

mod types;

use super::{Fingerprint, ImportSink, Resolution, Spec};
use crate::Import;
use crate::analyze::node_text;
use crate::imports::*;

/// Rust: `.rs` files, `tree-sitter-rust`.
pub(crate) const SPEC: Spec = Spec {
    name: "rust",
    extensions: &["rs"],
    grammar: || tree_sitter_rust::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || {
        vec![
            tree_sitter_rust::TAGS_QUERY.into(),
            include_str!("constants.scm").into(),
        ]
    },
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: |_, from, import, index| resolve_rust(from, import, index),
    module_binding: |module| module.rsplit("::").next(),
    attribute_line: |line| line.starts_with("#[") || line.starts_with("#!["),
    member_fields: |kind| match kind {
        "field_expression" => Some(("value", "field")),
        "scoped_identifier" | "scoped_type_identifier" => Some(("path", "name")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        typing: Some(types::TYPING),
        ..super::Extraction::PLAIN
    },
    resolution: Resolution {
        explicit_members: true,
        values_are_members: true,
        bindings_known: false,
        own_by_type: true,
        capitalised_types: true,
        directory_packages: false,
        names_imported: true,
    },
};

/// A `use` tree, flattened, or a `mod` declaration (with its `#[path]`), each rebased
/// onto the inline modules around it.
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    let mut inline = r.outer_modules.clone();
    inline.extend(rust_inline_modules(statement, bytes));
    if let Some(tree) = r.tree {
        for (module, names) in flatten_use_tree(tree, bytes) {
            sink.add(statement, rust_rebase(&module, &inline), names);
        }
    } else if let Some(module) = r.module {
        let declared = rust_rebase(&format!("self::{}", node_text(module, bytes)), &inline);
        let module = match rust_path_attribute(statement, bytes) {
            Some(path) => format!("{RUST_PATH_OPEN}{path}{RUST_PATH_CLOSE}{declared}"),
            None => declared,
        };
        sink.add(statement, module, Vec::new());
    }
}

/// Rust: flattens a `use` tree into `(module path, names)` pairs, iteratively:
/// `crate::a::{b, c::{d, e as f}, self}` → `("crate::a", [b, self])`, `("crate::a::c", [d, e])`.
/// A simple path `a::b::c` is `("a::b", [c])`; a lone `foo` is `("foo", [])`; a glob
/// `a::*` is `("a", ["*"])`.
fn flatten_use_tree<'t>(tree: Node<'t>, bytes: &[u8]) -> Vec<(String, Names<'t>)> {
    let mut out: Vec<(String, Names<'t>)> = Vec::new();
    let mut push = |module: String, name: Option<(String, Option<Node<'t>>)>| {
        let at = match out.iter().position(|(m, _)| *m == module) {
            Some(i) => i,
            None => {
                out.push((module, Vec::new()));
                out.len() - 1
            }
        };
        if let Some(name) = name {
            out[at].1.push(name);
        }
    };
    let join = |prefix: &str, rest: &str| -> String {
        match (prefix.is_empty(), rest.is_empty()) {
            (true, _) => rest.to_string(),
            (_, true) => prefix.to_string(),
            _ => format!("{prefix}::{rest}"),
        }
    };
    let mut stack: Vec<(String, Node<'t>)> = vec![(String::new(), tree)];
    let mut steps = 0usize;
    while let Some((prefix, node)) = stack.pop() {
        steps += 1;
        if steps > 10_000 {
            break;
        }
        match node.kind() {
            "scoped_use_list" => {
                let path = node
                    .child_by_field_name("path")
                    .map(|p| squash(node_text(p, bytes)))
                    .unwrap_or_default();
                let prefix = join(&prefix, &path);
                if let Some(list) = node.child_by_field_name("list") {
                    let mut w = list.walk();
                    let items: Vec<Node<'t>> = list.named_children(&mut w).collect();
                    for item in items.into_iter().rev() {
                        stack.push((prefix.clone(), item));
                    }
                }
            }
            "use_list" => {
                let mut w = node.walk();
                let items: Vec<Node<'t>> = node.named_children(&mut w).collect();
                for item in items.into_iter().rev() {
                    stack.push((prefix.clone(), item));
                }
            }
            "use_wildcard" => {
                let path = node
                    .named_child(0)
                    .map(|p| squash(node_text(p, bytes)))
                    .unwrap_or_default();
                push(join(&prefix, &path), Some(("*".to_string(), None)));
            }
            "use_as_clause" => {
                if let Some(path) = node.child_by_field_name("path") {
                    stack.push((prefix, path));
                }
            }
            "self" => push(prefix.clone(), Some(("self".to_string(), Some(node)))),
            "scoped_identifier" => {
                let full = join(&prefix, &squash(node_text(node, bytes)));
                match (full.rsplit_once("::"), node.child_by_field_name("name")) {
                    (Some((module, last)), name_node) => {
                        push(module.to_string(), Some((last.to_string(), name_node)))
                    }
                    (None, _) => push(full, None),
                }
            }
            "identifier" | "crate" | "super" | "metavariable" => {
                let text = node_text(node, bytes);
                if prefix.is_empty() {
                    push(text.to_string(), None);
                } else {
                    push(prefix.clone(), Some((text.to_string(), Some(node))));
                }
            }
            _ => {}
        }
    }
    out
}

/// Rust: names of the inline modules (`mod tests { .. }`) around a statement, outermost
/// first (as far as its tree goes).
pub(crate) fn rust_inline_modules(statement: Node<'_>, bytes: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut node = statement;
    for _ in 0..64 {
        let Some(parent) = node.parent() else { break };
        if parent.kind() == "mod_item"
            && let Some(name) = parent.child_by_field_name("name")
        {
            names.push(node_text(name, bytes).to_string());
        }
        node = parent;
    }
    names.reverse();
    names
}

/// Rust: how a `#[path = "P"] mod m;` declaration is recorded: `#[path = "P"] self::m`
/// (inside inline modules `a::b`: `#[path = "P"] self::a::b::m`), `P` as written.
const RUST_PATH_OPEN: &str = "#[path = \"";

const RUST_PATH_CLOSE: &str = "\"] ";

/// Rust: the value of a `#[path = "…"]` outer attribute on the module declaration
/// `statement` (its preceding `attribute_item` siblings, comments skipped), if any.
/// Raw strings and escapes are taken as written (paths hold neither in practice).
fn rust_path_attribute(statement: Node<'_>, bytes: &[u8]) -> Option<String> {
    let mut sibling = statement.prev_named_sibling();
    while let Some(node) = sibling {
        match node.kind() {
            "attribute_item" => {
                if let Some(attribute) = node.named_child(0)
                    && attribute.kind() == "attribute"
                    && attribute
                        .named_child(0)
                        .is_some_and(|n| node_text(n, bytes) == "path")
                    && let Some(value) = attribute.child_by_field_name("value")
                    && value.kind() == "string_literal"
                {
                    let text = node_text(value, bytes);
                    let path = text.strip_prefix('"')?.strip_suffix('"')?;
                    return (!path.is_empty()).then(|| path.to_string());
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return None,
        }
        sibling = node.prev_named_sibling();
    }
    None
}

/// Rust: splits a recorded `#[path = "P"] self::…::m` declaration into `P` and
/// `self::…::m`.
fn rust_path_declaration(module: &str) -> Option<(&str, &str)> {
    module
        .strip_prefix(RUST_PATH_OPEN)?
        .split_once(RUST_PATH_CLOSE)
}

/// Rust: rewrites a module path written inside inline modules `inline` relative to the
/// file's own module: `self::x` → `self::tests::x`, `super::x` inside `mod tests` →
/// `self::x`. `crate::` paths and bare paths are unchanged.
pub(crate) fn rust_rebase(module: &str, inline: &[String]) -> String {
    if inline.is_empty() {
        return module.to_string();
    }
    let segments: Vec<&str> = module.split("::").collect();
    let supers = segments.iter().take_while(|s| **s == "super").count();
    let rest = &segments[supers..];
    let (base, rest): (Vec<&str>, &[&str]) = if supers > 0 {
        if supers <= inline.len() {
            (
                inline[..inline.len() - supers]
                    .iter()
                    .map(String::as_str)
                    .collect(),
                rest,
            )
        } else {
            return std::iter::repeat_n("super", supers - inline.len())
                .chain(rest.iter().copied())
                .collect::<Vec<_>>()
                .join("::");
        }
    } else if segments.first() == Some(&"self") {
        (inline.iter().map(String::as_str).collect(), &segments[1..])
    } else {
        return module.to_string();
    };
    std::iter::once("self")
        .chain(base)
        .chain(rest.iter().copied())
        .collect::<Vec<_>>()
        .join("::")
}

/// The crate root of a Rust file (repo-relative): (the root file's directory, the root
/// file, if the map holds it). A `lib.rs`, `main.rs`, `build.rs`, or a file of `tests/`,
/// `examples/`, `benches/` or `src/bin/` is a root itself; any other file's root is the
/// nearest ancestor's `lib.rs` or `main.rs`.
pub fn rust_crate_root(from_path: &str, index: &PathIndex) -> (String, Option<String>) {
    let name = file_name(from_path);
    let dir = dir_of(from_path);
    let dir_name = file_name(dir);
    let is_root_file = matches!(name, "lib.rs" | "main.rs" | "build.rs")
        || matches!(dir_name, "tests" | "examples" | "benches")
        || dir.ends_with("src/bin")
        || dir == "bin";
    if is_root_file {
        return (dir.to_string(), Some(from_path.to_string()));
    }
    for ancestor in ancestors(from_path) {
        for root in ["lib.rs", "main.rs"] {
            let file = join(ancestor, root);
            if index.paths.contains(&file) {
                return (ancestor.to_string(), Some(file));
            }
        }
    }
    (dir.to_string(), None)
}

/// The directory holding the child modules of the Rust file's module.
fn rust_module_dir(from_path: &str, crate_dir: &str, root_file: Option<&str>) -> String {
    let name = file_name(from_path);
    if name == "mod.rs"
        || root_file == Some(from_path)
        || (dir_of(from_path) == crate_dir && matches!(name, "lib.rs" | "main.rs"))
    {
        return dir_of(from_path).to_string();
    }
    join(dir_of(from_path), name.trim_end_matches(".rs"))
}

/// The file of the module whose child directory is `dir`.
fn rust_module_file(
    index: &PathIndex,
    dir: &str,
    crate_dir: &str,
    root_file: Option<&str>,
) -> Option<String> {
    if dir == crate_dir {
        return root_file.map(str::to_string);
    }
    [format!("{dir}.rs"), join(dir, "mod.rs")]
        .into_iter()
        .find(|c| index.paths.contains(c))
}

fn resolve_rust(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (crate_dir, root_file) = rust_crate_root(from_path, index);
    let module_dir = rust_module_dir(from_path, &crate_dir, root_file.as_deref());
    if let Some((path, declared)) = rust_path_declaration(&import.module) {
        // The Rust Reference, "Modules: the path attribute": outside inline modules the
        // path is relative to the declaring file's directory; inside inline modules
        // `a::b` it is relative to the file's module directory (its own directory for a
        // mod-rs file, `dir/stem/` otherwise) joined with `a/b`.
        let segments: Vec<&str> = declared.split("::").collect();
        let inline = segments
            .get(1..segments.len().saturating_sub(1))
            .unwrap_or(&[]);
        let base = if inline.is_empty() {
            dir_of(from_path).to_string()
        } else {
            join(&module_dir, &inline.join("/"))
        };
        if let Some(file) = join_normalized(&base, &path.replace('\\', "/"))
            && index.paths.contains(&file)
        {
            out.insert(file);
        }
        return out;
    }
    let segments: Vec<&str> = import
        .module
        .split("::")
        .filter(|s| !s.is_empty())
        .collect();
    let Some(&first) = segments.first() else {
        return out;
    };
    let (dir, rest, external_ok) = match first {
        "crate" => (crate_dir.clone(), &segments[1..], true),
        "self" => (module_dir.clone(), &segments[1..], true),
        "super" => {
            let mut dir = module_dir.clone();
            let mut i = 0;
            while segments.get(i) == Some(&"super") {
                if dir == crate_dir || dir.is_empty() {
                    return out;
                }
                dir = dir_of(&dir).to_string();
                i += 1;
            }
            (dir, &segments[i..], true)
        }
        // `std::..`, `serde::..`, or a child module in scope (uniform paths).
        _ => (module_dir.clone(), &segments[..], false),
    };
    // `mod foo;` (recorded as `self::foo` with no names) names one file, `foo.rs` or
    // `foo/mod.rs`: no shorter prefix stands in for it. A declaration whose file is
    // missing, or is given by a `#[path]` attribute, stays unresolved with its text (the
    // prefix `self` would resolve it to the declaring file itself, an edge then dropped).
    let declaration = import.names.is_empty() && first == "self" && segments.len() == 2;
    let in_crate = RustCrate {
        dir: &crate_dir,
        root_file: root_file.as_deref(),
    };
    out = rust_paths(
        index,
        import,
        &in_crate,
        &dir,
        rest,
        external_ok,
        declaration,
    );
    // A crate of this repository by its library name (`use loci_store::map;` in another
    // member of a workspace, `use regex::Regex;` in the crate's own tests/): its root and
    // modules, when no module in scope has that name.
    if out.is_empty()
        && let Some((dir, root)) = index.rust_crates.get(first)
    {
        let other = RustCrate {
            dir,
            root_file: Some(root),
        };
        out = rust_paths(index, import, &other, dir, &segments[1..], true, false);
    }
    out
}

/// A Rust crate as module resolution sees it: the directory of its root file, and the
/// root file (`src/lib.rs`) if it is in the map.
struct RustCrate<'a> {
    dir: &'a str,
    root_file: Option<&'a str>,
}

/// The files a `use` path names below `dir` in `krate`: for each name imported (or the
/// path itself for a glob or a bare path), the longest prefix that is a module file.
fn rust_paths(
    index: &PathIndex,
    import: &Import,
    krate: &RustCrate<'_>,
    dir: &str,
    rest: &[&str],
    external_ok: bool,
    declaration: bool,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut paths: Vec<Vec<&str>> = Vec::new();
    let names: Vec<&str> = import
        .names
        .iter()
        .map(String::as_str)
        .filter(|n| *n != "*" && *n != "self")
        .collect();
    if names.len() < import.names.len() || names.is_empty() {
        paths.push(rest.to_vec());
    }
    for name in names {
        let mut p = rest.to_vec();
        p.push(name);
        paths.push(p);
    }
    for path in paths {
        // Longest prefix that is a module file.
        let mut found = None;
        for k in (0..=path.len()).rev() {
            if (k == 0 && !external_ok) || (declaration && k < path.len()) {
                break;
            }
            let target_dir = join(dir, &path[..k].join("/"));
            if let Some(file) = rust_module_file(index, &target_dir, krate.dir, krate.root_file) {
                found = Some(file);
                break;
            }
        }
        if let Some(file) = found {
            out.insert(file);
        }
    }
    out
}
