//! Go: the grammar binding, queries, import reading and import resolution.
//!
//! **Go**: the import path's longest matching `go.mod` module path (from
//! [`PathIndex::go_modules`]) maps it to a directory; the package is every `.go` file
//! directly in it. `_test.go` files are left out (importing a package never compiles its
//! tests) unless the importer is itself a test file.

use std::collections::BTreeSet;

use tree_sitter::Node;

mod types;

use super::{Fingerprint, Resolution, Spec};
use crate::Import;
use crate::analyze::node_text;
use crate::imports::*;

/// Go: `.go` files, `tree-sitter-go`.
pub(crate) const SPEC: Spec = Spec {
    name: "go",
    extensions: &["go"],
    grammar: || tree_sitter_go::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_go::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: |_, from, import, index| resolve_go(from, import, index),
    module_binding: |module| module.rsplit('/').next(),
    attribute_line: super::no_attributes,
    member_fields: |kind| match kind {
        "selector_expression" => Some(("operand", "field")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        qualify_definition: |node, bytes| {
            let qualifier = (node.kind() == "method_declaration")
                .then(|| go_receiver_type(node, bytes))
                .flatten();
            (node, qualifier)
        },
        typing: Some(types::TYPING),
        ..super::Extraction::PLAIN
    },
    resolution: Resolution {
        explicit_members: true,
        values_are_members: true,
        bindings_known: true,
        own_by_type: true,
        capitalised_types: false,
        directory_packages: true,
        names_imported: false,
    },
};

fn resolve_go(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let path = import.module.as_str();
    let mut out = BTreeSet::new();
    let best = index
        .go_modules
        .iter()
        .filter(|(_, module)| {
            path == module.as_str()
                || path
                    .strip_prefix(module.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
        .max_by_key(|(_, module)| module.len());
    let Some((mod_dir, module)) = best else {
        return out;
    };
    let rest = path[module.len()..].trim_start_matches('/');
    let dir = join(mod_dir, rest);
    let from_test = from_path.ends_with("_test.go");
    for file in files_in(index, &dir) {
        if file.ends_with(".go") && (from_test || !file.ends_with("_test.go")) {
            out.insert(file.clone());
        }
    }
    out
}

/// Go: the receiver type of a method declaration (`func (s *Server) Run()` → `Server`).
fn go_receiver_type(method: Node<'_>, bytes: &[u8]) -> Option<String> {
    let receiver = method.child_by_field_name("receiver")?;
    let param = receiver.named_child(0)?;
    let ty = param.child_by_field_name("type")?;
    let name = crate::analyze::base_type_name(node_text(ty, bytes));
    (!name.is_empty()).then(|| name.to_string())
}
