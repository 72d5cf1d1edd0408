//! Julia: the grammar binding (`tree-sitter-julia`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none).
//! `include("x.jl")` names `x.jl` relative to the file; `using M` and `import M` name
//! packages.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Julia: `.jl` files.
pub(crate) const SPEC: Spec = Spec {
    name: "julia",
    extensions: &["jl"],
    grammar: || tree_sitter_julia::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: resolve_julia,
    module_binding: |module| Some(module),
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_julia(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    if !import.module.ends_with(".jl") {
        return std::collections::BTreeSet::new();
    }
    resolve_relative(from, import, index, &[])
}
