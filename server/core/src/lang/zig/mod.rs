//! Zig: the grammar binding (`tree-sitter-zig`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none):
//! a `const` bound to a `struct`, `enum` or `union` is that type. `@import("x.zig")`
//! names `x.zig` relative to the importer; `@import("std")` names a package.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Zig: `.zig` files.
pub(crate) const SPEC: Spec = Spec {
    name: "zig",
    extensions: &["zig"],
    grammar: || tree_sitter_zig::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_quoted,
    resolve: resolve_zig,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_zig(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    if !import.module.ends_with(".zig") {
        return std::collections::BTreeSet::new();
    }
    resolve_relative(from, import, index, &[])
}
