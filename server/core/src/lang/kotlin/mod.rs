//! Kotlin: the grammar binding (`tree-sitter-kotlin-ng`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none).
//! `import a.b.C` binds `C` and names the file `a/b/C.kt` (or `.kts`) found nearest
//! the importer by its path's end; a wildcard `a.b.*` names nothing.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Kotlin: `.kt`, `.kts` files.
pub(crate) const SPEC: Spec = Spec {
    name: "kotlin",
    extensions: &["kt", "kts"],
    grammar: || tree_sitter_kotlin_ng::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_dotted,
    resolve: resolve_kotlin,
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with('@'),
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_kotlin(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let segments: Vec<&str> = import.module.split('.').collect();
    resolve_segments(from, &segments, index, &["kt", "kts"])
}
