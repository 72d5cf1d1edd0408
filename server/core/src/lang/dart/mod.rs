//! Dart: the grammar binding (`tree-sitter-dart`), queries and import rules.
//!
//! Symbols and calls come from the crate's own tags query plus `tags-extra.scm`.
//! `import 'src/x.dart'` names the file relative to the importer; `dart:` and
//! `package:` imports name libraries outside the repository's paths.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Dart: `.dart` files.
pub(crate) const SPEC: Spec = Spec {
    name: "dart",
    extensions: &["dart"],
    grammar: || tree_sitter_dart::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_dart::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import: super::read_quoted,
    resolve: resolve_dart,
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with('@'),
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

fn resolve_dart(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    resolve_relative(from, import, index, &[])
}
