//! Objective-C: the grammar binding (`tree-sitter-objc`), queries and import rules.
//!
//! Symbols and calls come from loci's own tags query (`tags.scm`: the crate ships none):
//! interfaces, protocols, methods (named by their first selector part) and C functions;
//! message sends are calls. `#import "X.h"` resolves as a C `#include` does. A `.h`
//! header is C's: Objective-C links to the C group, so calls reach the functions and
//! declarations headers hold.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Objective-C: `.m` files.
pub(crate) const SPEC: Spec = Spec {
    name: "objc",
    extensions: &["m"],
    grammar: || tree_sitter_objc::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: Some(Language::C),
    read_import: super::read_module_only,
    resolve: resolve_objc,
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with("__attribute__"),
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_objc(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    super::c::resolve_include(from, import, index)
}
