//! C and C++: the grammar binding, queries, import reading and import resolution.
//!
//! **C/C++**: `#include "x.h"` relative to the including file's directory, then the
//! repository root, then the unique (or uniquely nearest) file whose path ends with
//! `/x.h`. `#include <x.h>` is recorded with its brackets and never resolved.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{Fingerprint, Resolution, Spec};
use crate::analyze::node_text;
use crate::imports::*;
use crate::{Import, Language};

/// C: `.c`, `.h` files, `tree-sitter-c`.
pub(crate) const C: Spec = Spec {
    name: "c",
    extensions: &["c", "h"],
    grammar: || tree_sitter_c::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_c::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: |_, from, import, index| resolve_include(from, import, index),
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields,
    fingerprint: Fingerprint::SHARED,
    extraction: C_EXTRACTION,
    resolution: Resolution {
        explicit_members: false,
        values_are_members: false,
        bindings_known: false,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: false,
        names_imported: false,
    },
};

/// C++: `.cc`, `.cpp`, `.cxx`, `.c++`, `.hpp`, `.hh`, `.hxx`, `.h++` files, `tree-sitter-cpp`.
pub(crate) const CPP: Spec = Spec {
    name: "cpp",
    extensions: &["cc", "cpp", "cxx", "c++", "hpp", "hh", "hxx", "h++"],
    grammar: || tree_sitter_cpp::LANGUAGE.into(),
    tags_extra: include_str!("cpp-tags-extra.scm"),
    tags: || vec![tree_sitter_cpp::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: Some(Language::C),
    read_import: super::read_module_only,
    resolve: |_, from, import, index| resolve_include(from, import, index),
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with("template") || line.starts_with("[["),
    member_fields: cpp_member_fields,
    fingerprint: Fingerprint::SHARED,
    extraction: C_EXTRACTION,
    resolution: Resolution {
        explicit_members: false,
        values_are_members: true,
        bindings_known: false,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: false,
        names_imported: false,
    },
};

fn member_fields(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "field_expression" => Some(("argument", "field")),
        _ => None,
    }
}

fn cpp_member_fields(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "qualified_identifier" => Some(("scope", "name")),
        other => member_fields(other),
    }
}

pub(crate) fn resolve_include(
    from_path: &str,
    import: &Import,
    index: &PathIndex,
) -> BTreeSet<String> {
    let module = import.module.as_str();
    let mut out = BTreeSet::new();
    if module.starts_with('<') || module.is_empty() {
        return out;
    }
    if let Some(relative) = join_normalized(dir_of(from_path), module)
        && index.paths.contains(&relative)
    {
        out.insert(relative);
        return out;
    }
    if let Some(rooted) = join_normalized("", module) {
        if index.paths.contains(&rooted) {
            out.insert(rooted);
            return out;
        }
        let clean = rooted.trim_start_matches("../").to_string();
        return nearest_unique(from_path, ending_with(index, &clean));
    }
    out
}

/// C and C++: declarators widen to their declarations, out-of-line C++ definitions are
/// qualified by their `Type::` scope.
const C_EXTRACTION: super::Extraction = super::Extraction {
    declarator_definitions: true,
    qualify_definition: |node, bytes| {
        if node.kind() == "function_declarator" {
            (widen_declarator(node), cpp_scope_qualifier(node, bytes))
        } else {
            (node, None)
        }
    },
    ..super::Extraction::PLAIN
};

/// C++: the `Type::` scope of an out-of-line definition's declarator, as `a.Type`.
fn cpp_scope_qualifier(declarator: Node<'_>, bytes: &[u8]) -> Option<String> {
    let inner = declarator.child_by_field_name("declarator")?;
    if inner.kind() != "qualified_identifier" {
        return None;
    }
    let text = node_text(inner, bytes);
    let (scope, _) = text.rsplit_once("::")?;
    let parts: Vec<&str> = scope
        .split("::")
        .map(|p| p.split('<').next().unwrap_or("").trim())
        .filter(|p| !p.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join("."))
}

/// C/C++: from a `function_declarator` up through pointer/reference/parenthesized
/// declarators to the `function_definition`, `declaration` or `field_declaration` that
/// holds it (the node itself if there is none).
fn widen_declarator(node: Node<'_>) -> Node<'_> {
    let mut current = node;
    for _ in 0..8 {
        let Some(parent) = current.parent() else {
            break;
        };
        match parent.kind() {
            "pointer_declarator" | "reference_declarator" | "parenthesized_declarator" => {
                current = parent
            }
            "function_definition" | "declaration" | "field_declaration" => return parent,
            _ => break,
        }
    }
    node
}
