//! Python: the grammar binding, queries, import reading and import resolution.
//!
//! **Python**, relative (`.x`, `..pkg.mod`, `.`): from the importer's package directory
//! (one level up per extra dot), `x.py` or `x/__init__.py` (then `x.pyi`). For
//! `from pkg import name` the submodule `pkg/name.py` (or package) is added when it
//! exists; for `from . import name` each name is a submodule or, failing that, an
//! attribute of the package's `__init__.py`.
//! Absolute (`a.b`): tried under *source roots*, nearest first: each ancestor directory
//! of the importer (its own directory up to the repository root) and that ancestor's
//! `src/`, `lib/` and `Lib/` children, skipping any root that is itself a package (has
//! an `__init__.py`: a module inside a package is never importable as a top-level
//! name). The first root holding `a/b.py` or `a/b/__init__.py` wins, which prefers the
//! candidate sharing the longest directory prefix with the importer. A dotted module
//! found under no such root resolves to a unique (or uniquely nearest) file anywhere
//! whose path ends with `a/b.py`, again under a non-package root; single-segment modules
//! (`json`, `os`) never take this fallback, so a stray `tests/json.py` does not capture
//! the standard library.

use std::collections::BTreeSet;

use tree_sitter::Node;

mod locals;
mod types;

use super::{Fingerprint, ImportSink, Resolution, Spec};
use crate::Import;
use crate::analyze::node_text;
use crate::imports::*;

/// Python: `.py` and `.pyi` files, `tree-sitter-python`.
pub(crate) const SPEC: Spec = Spec {
    name: "python",
    extensions: &["py", "pyi"],
    grammar: || tree_sitter_python::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || {
        vec![
            tree_sitter_python::TAGS_QUERY.into(),
            include_str!("constants.scm").into(),
        ]
    },
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: |_, from, import, index| resolve_python(from, import, index),
    module_binding: |module| module.trim_start_matches('.').split('.').next(),
    attribute_line: |line| line.starts_with('@'),
    member_fields: |kind| match kind {
        "attribute" => Some(("object", "attribute")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        docstring: python_docstring,
        typing: Some(types::TYPING),
        ..super::Extraction::PLAIN
    },
    resolution: Resolution {
        explicit_members: true,
        values_are_members: false,
        bindings_known: true,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: false,
        names_imported: true,
    },
};

/// `import a.b` and `from m import x, y` (names squashed of whitespace).
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    let Some(module) = r.module else { return };
    let names = r
        .names
        .iter()
        .map(|n| {
            let text = squash(node_text(*n, bytes));
            let node = (text != "*").then_some(*n);
            (text, node)
        })
        .collect();
    sink.add(statement, squash(node_text(module, bytes)), names);
}

fn python_module_file(index: &PathIndex, base: &str) -> Option<String> {
    [
        format!("{base}.py"),
        join(base, "__init__.py"),
        format!("{base}.pyi"),
        join(base, "__init__.pyi"),
    ]
    .into_iter()
    .find(|c| index.paths.contains(c))
}

fn is_python_package(index: &PathIndex, dir: &str) -> bool {
    index.paths.contains(&join(dir, "__init__.py"))
        || index.paths.contains(&join(dir, "__init__.pyi"))
}

fn resolve_python(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let mut out = resolve_module(from_path, import, index);
    // `import a.b` imports the package `a` too (its `__init__.py` runs first) and binds
    // its name: `a.X` is the package's (`unittest.TestCase` after `import unittest.mock`).
    if import.names.is_empty()
        && !import.module.starts_with('.')
        && let Some((package, _)) = import.module.split_once('.')
    {
        let package = Import {
            module: package.to_string(),
            names: Vec::new(),
            span: import.span,
            enclosing: import.enclosing,
        };
        out.extend(resolve_module(from_path, &package, index));
    }
    out
}

/// The files of the module `import` names, and of the submodules it names.
fn resolve_module(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    let mut out = BTreeSet::new();
    let real_names = || import.names.iter().filter(|n| n.as_str() != "*");
    if module.starts_with('.') {
        let dots = module.len() - module.trim_start_matches('.').len();
        let rest = &module[dots..];
        let mut base = dir_of(from_path).to_string();
        for _ in 1..dots {
            if base.is_empty() {
                return out;
            }
            base = dir_of(&base).to_string();
        }
        let target = join(&base, &rest.replace('.', "/"));
        if rest.is_empty() {
            for name in real_names() {
                match python_module_file(index, &join(&target, name)) {
                    Some(file) => out.insert(file),
                    None => python_module_file(index, &target)
                        .map(|f| out.insert(f))
                        .unwrap_or(false),
                };
            }
            if (import.names.iter().any(|n| n == "*") || import.names.is_empty())
                && let Some(file) = python_module_file(index, &target)
            {
                out.insert(file);
            }
        } else {
            if let Some(file) = python_module_file(index, &target) {
                out.insert(file);
            }
            for name in real_names() {
                if let Some(file) = python_module_file(index, &join(&target, name)) {
                    out.insert(file);
                }
            }
        }
        return out;
    }
    let rel = module.replace('.', "/");
    let try_root = |root: &str, out: &mut BTreeSet<String>| -> bool {
        let base = join(root, &rel);
        let Some(file) = python_module_file(index, &base) else {
            return false;
        };
        out.insert(file);
        for name in real_names() {
            if let Some(sub) = python_module_file(index, &join(&base, name)) {
                out.insert(sub);
            }
        }
        true
    };
    for ancestor in ancestors(from_path) {
        for root in [
            ancestor.to_string(),
            join(ancestor, "src"),
            join(ancestor, "lib"),
            join(ancestor, "Lib"),
        ] {
            if !root.is_empty() && is_python_package(index, &root) {
                continue;
            }
            if try_root(&root, &mut out) {
                return out;
            }
        }
    }
    if module.contains('.') {
        let mut candidates = Vec::new();
        for suffix in [format!("{rel}.py"), format!("{rel}/__init__.py")] {
            for path in ending_with(index, &suffix) {
                let root = path[..path.len() - suffix.len()].trim_end_matches('/');
                if root.is_empty() || !is_python_package(index, root) {
                    candidates.push(path);
                }
            }
        }
        if let Some(file) = nearest_unique(from_path, candidates).into_iter().next() {
            let base = file
                .trim_end_matches("/__init__.py")
                .trim_end_matches(".py")
                .to_string();
            out.insert(file);
            for name in real_names() {
                if let Some(sub) = python_module_file(index, &join(&base, name)) {
                    out.insert(sub);
                }
            }
        }
    }
    out
}

/// Python: the docstring of a class or function definition, cleaned like
/// `inspect.cleandoc` (common indentation and surrounding blank lines removed).
fn python_docstring(def: Node<'_>, bytes: &[u8]) -> Option<String> {
    if !matches!(def.kind(), "function_definition" | "class_definition") {
        return None;
    }
    let body = def.child_by_field_name("body")?;
    // (index loops: a `walk()` cursor allocates; these nodes have few children)
    let first = (0..body.named_child_count().min(64) as u32)
        .filter_map(|i| body.named_child(i))
        .find(|c| !c.kind().contains("comment"))?;
    if first.kind() != "expression_statement" || first.named_child_count() != 1 {
        return None;
    }
    let string = first.named_child(0)?;
    if string.kind() != "string" {
        return None;
    }
    let mut content = String::new();
    for child in (0..string.named_child_count() as u32).filter_map(|i| string.named_child(i)) {
        if child.kind() == "string_content" || child.kind() == "escape_sequence" {
            content.push_str(node_text(child, bytes));
        }
    }
    let cleaned = crate::analyze::clean_doc(&content);
    (!cleaned.is_empty()).then_some(cleaned)
}
