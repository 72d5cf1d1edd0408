//! Haskell: the grammar binding (`tree-sitter-haskell`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none).
//! `import A.B` names the file `A/B.hs` found nearest the importer by its path's end.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Haskell: `.hs` files.
pub(crate) const SPEC: Spec = Spec {
    name: "haskell",
    extensions: &["hs"],
    grammar: || tree_sitter_haskell::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: resolve_haskell,
    module_binding: |module| module.rsplit('.').next(),
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction {
        comment_markers: &["-- |", "--"],
        ..Extraction::PLAIN
    },
    resolution: Resolution::BY_NAME,
};

fn resolve_haskell(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let segments: Vec<&str> = import.module.split('.').collect();
    resolve_segments(from, &segments, index, &["hs"])
}
