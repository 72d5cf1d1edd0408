//! Solidity: the grammar binding (`tree-sitter-solidity`), queries and import rules.
//!
//! Symbols and calls come from the crate's own tags query plus `tags-extra.scm`
//! (modifiers). `import "./X.sol"` names `X.sol` relative to the file, then to the
//! repository root.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Solidity: `.sol` files.
pub(crate) const SPEC: Spec = Spec {
    name: "solidity",
    extensions: &["sol"],
    grammar: || tree_sitter_solidity::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_solidity::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_quoted,
    resolve: resolve_solidity,
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_solidity(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    resolve_relative(from, import, index, &[])
}
