//! C#: the grammar binding, queries, import reading and import resolution.
//!
//! **C#**: `using Acme.Util;` → the files declaring namespace `Acme.Util`; for
//! `using static Acme.Util.Helpers;` (no such namespace) the files of `Acme.Util` named
//! `Helpers.cs`, else all of that namespace's files.

use std::collections::BTreeSet;

use super::{Fingerprint, Resolution, Spec};
use crate::Import;
use crate::imports::*;

/// C#: `.cs` files, `tree-sitter-c-sharp`.
pub(crate) const SPEC: Spec = Spec {
    name: "csharp",
    extensions: &["cs"],
    grammar: || tree_sitter_c_sharp::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || {
        // The shipped query ends with `(namespace_declaration ..) @module`, a capture no
        // tags consumer understands; it names a module definition.
        vec![tree_sitter_c_sharp::TAGS_QUERY.replace(") @module", ") @definition.module")]
    },
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: |_, _, import, index| resolve_csharp(import, index),
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with('['),
    member_fields: |kind| match kind {
        "member_access_expression" => Some(("expression", "name")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        // C#'s typed locals, parameters and fields read as Java's do.
        typing: Some(super::java::types::TYPING),
        ..super::Extraction::PLAIN
    },
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

fn resolve_csharp(import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    if let Some(files) = namespace_files(index, module) {
        return files.clone();
    }
    if let Some((namespace, type_name)) = module.rsplit_once('.')
        && let Some(files) = namespace_files(index, namespace)
    {
        let hits: BTreeSet<String> = files
            .iter()
            .filter(|f| file_stem(f) == type_name)
            .cloned()
            .collect();
        return if hits.is_empty() { files.clone() } else { hits };
    }
    BTreeSet::new()
}
