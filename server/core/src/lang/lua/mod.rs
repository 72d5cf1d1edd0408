//! Lua: the grammar binding (`tree-sitter-lua`), queries and import rules.
//!
//! Symbols and calls come from the crate's own tags query. `require("a.b")` names
//! `a/b.lua` or `a/b/init.lua`, found nearest the importer by its path's end.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Lua: `.lua` files.
pub(crate) const SPEC: Spec = Spec {
    name: "lua",
    extensions: &["lua"],
    grammar: || tree_sitter_lua::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_lua::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_quoted,
    resolve: resolve_lua,
    module_binding: |module| module.rsplit('.').next(),
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction {
        comment_markers: &["---", "--"],
        qualify_definition: |node, bytes| (node, table_of(node, bytes)),
        ..Extraction::PLAIN
    },
    resolution: Resolution::BY_NAME,
};

fn resolve_lua(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let mut segments: Vec<&str> = import.module.split('.').collect();
    let found = resolve_segments(from, &segments, index, &["lua"]);
    if !found.is_empty() {
        return found;
    }
    segments.push("init");
    resolve_segments(from, &segments, index, &["lua"])
}

/// The table a function is defined on (`function Cart.new()`, `function Cart:add()`:
/// `Cart`), which qualifies it as that table's method.
fn table_of(node: tree_sitter::Node<'_>, bytes: &[u8]) -> Option<String> {
    if node.kind() != "function_declaration" {
        return None;
    }
    let name = node.child_by_field_name("name")?;
    if !matches!(
        name.kind(),
        "dot_index_expression" | "method_index_expression"
    ) {
        return None;
    }
    let table = name.child_by_field_name("table")?;
    Some(crate::analyze::node_text(table, bytes).to_string())
}
