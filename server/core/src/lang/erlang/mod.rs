//! Erlang: the grammar binding (`tree-sitter-erlang`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none).
//! `-include("x.hrl")` names `x.hrl` relative to the file, then to the repository root,
//! then the unique file of that name; `-include_lib("app/include/x.hrl")` the unique file
//! ending with that path.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Erlang: `.erl`, `.hrl` files.
pub(crate) const SPEC: Spec = Spec {
    name: "erlang",
    extensions: &["erl", "hrl"],
    grammar: || tree_sitter_erlang::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_quoted,
    resolve: resolve_erlang,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction {
        comment_markers: &["%%%", "%%", "%"],
        ..Extraction::PLAIN
    },
    resolution: Resolution::BY_NAME,
};

fn resolve_erlang(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let found = resolve_relative(from, import, index, &[]);
    if !found.is_empty() {
        return found;
    }
    nearest_unique(from, ending_with(index, &import.module))
}
