//! Protocol Buffers: the grammar binding (`tree-sitter-proto`), queries and import rules.
//!
//! Symbols come from loci's own tags query (`tags.scm`: the crate ships none):
//! packages, messages, enums, services and their RPCs; a field's or RPC's message type is
//! a type reference. `import "a/b.proto"` names the file at that path under the
//! repository root or the nearest one ending with it (protoc's include paths are not
//! known).

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Protocol Buffers: `.proto` files.
pub(crate) const SPEC: Spec = Spec {
    name: "proto",
    extensions: &["proto"],
    grammar: || tree_sitter_proto::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_quoted,
    resolve: resolve_proto,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_proto(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    if index.paths.contains(&import.module) {
        return std::iter::once(import.module.clone()).collect();
    }
    nearest_unique(from, ending_with(index, &import.module))
}
