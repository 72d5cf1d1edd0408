//! R: the grammar binding (`tree-sitter-r`), queries and import rules.
//!
//! Symbols and calls come from the crate's own tags query. `source("x.R")` names `x.R`
//! relative to the file, then to the repository root; `library(pkg)` names a package.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// R: `.r`, `.R` files.
pub(crate) const SPEC: Spec = Spec {
    name: "r",
    extensions: &["r", "R"],
    grammar: || tree_sitter_r::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_r::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: resolve_r,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction {
        comment_markers: &["#'"],
        ..Extraction::PLAIN
    },
    resolution: Resolution::BY_NAME,
};

fn resolve_r(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    resolve_relative(from, import, index, &[])
}
