//! Swift: the grammar binding (`tree-sitter-swift`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`), written after the
//! crate's (which marks every `let`, locals too, a definition, and a whole class as the
//! node of each of its methods). `import Foundation` names a module, never a file of the
//! repository (Swift modules are targets, not paths): imports stay unresolved.

use super::{Extraction, Fingerprint, Resolution, Spec};

/// Swift: `.swift` files.
pub(crate) const SPEC: Spec = Spec {
    name: "swift",
    extensions: &["swift"],
    grammar: || tree_sitter_swift::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: super::super::imports::resolve_nothing,
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with('@'),
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};
