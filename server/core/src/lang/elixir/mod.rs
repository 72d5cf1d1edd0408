//! Elixir: the grammar binding (`tree-sitter-elixir`), queries and import rules.
//!
//! Symbols and calls come from the crate's own tags query. `alias`, `import`, `require`
//! and `use` of a module `Shop.Cart` name the file `shop/cart.ex` (each segment in
//! snake case, as Mix lays modules out), found nearest the importer by its path's end.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Elixir: `.ex`, `.exs` files.
pub(crate) const SPEC: Spec = Spec {
    name: "elixir",
    extensions: &["ex", "exs"],
    grammar: || tree_sitter_elixir::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_elixir::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_module_only,
    resolve: resolve_elixir,
    module_binding: |module| module.rsplit('.').next(),
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_elixir(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let segments: Vec<String> = import.module.split('.').map(snake_case).collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    resolve_segments(from, &segments, index, &["ex", "exs"])
}

/// `ShopCart` → `shop_cart` (Elixir's `Macro.underscore` for plain names).
fn snake_case(segment: &str) -> String {
    let mut out = String::new();
    for (i, c) in segment.chars().enumerate() {
        if c.is_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}
