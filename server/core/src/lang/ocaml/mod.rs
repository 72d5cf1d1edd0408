//! OCaml: the grammar binding (`tree-sitter-ocaml`), queries and import rules.
//!
//! Symbols and calls come from the crate's own tags query plus `tags-extra.scm`.
//! `open M` and `module P = M` name the file `m.ml` (the module name with its first
//! letter in lower case), found nearest the importer by its path's end. Interface files
//! (`.mli`, another grammar of the crate) are not parsed.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// OCaml: `.ml` files.
pub(crate) const SPEC: Spec = Spec {
    name: "ocaml",
    extensions: &["ml"],
    grammar: || tree_sitter_ocaml::LANGUAGE_OCAML.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_ocaml::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: resolve_ocaml,
    module_binding: |module| Some(module),
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction {
        comment_markers: &["(**", "(*"],
        ..Extraction::PLAIN
    },
    resolution: Resolution::BY_NAME,
};

fn resolve_ocaml(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let mut chars = import.module.chars();
    let Some(first) = chars.next() else {
        return std::collections::BTreeSet::new();
    };
    let file: String = first.to_lowercase().chain(chars).collect();
    resolve_segments(from, &[file.as_str()], index, &["ml"])
}
