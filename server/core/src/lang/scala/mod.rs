//! Scala: the grammar binding (`tree-sitter-scala`), queries and import rules.
//!
//! Symbols and calls come from loci's `tags.scm`, after the grammar's own
//! `queries/tags.scm` (which the crate does not export). `import a.b.C` binds `C` and names
//! the file `a/b/C.scala` found nearest the importer by its path's end.

use super::{Extraction, Fingerprint, Resolution, Spec};
use crate::imports::*;
use crate::{Import, Language};

/// Scala: `.scala`, `.sc` files.
pub(crate) const SPEC: Spec = Spec {
    name: "scala",
    extensions: &["scala", "sc"],
    grammar: || tree_sitter_scala::LANGUAGE.into(),
    tags_extra: include_str!("tags.scm"),
    tags: Vec::new,
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: resolve_scala,
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with('@'),
    member_fields: super::no_members,
    fingerprint: Fingerprint::NONE,
    extraction: Extraction::PLAIN,
    resolution: Resolution::BY_NAME,
};

/// `import a.b.C`: the path's identifiers joined with dots, the last one imported.
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut super::ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    let mut cursor = statement.walk();
    let path: Vec<tree_sitter::Node<'t>> = statement
        .children_by_field_name("path", &mut cursor)
        .filter(|n| n.kind() == "identifier")
        .collect();
    let Some(last) = path.last().copied() else {
        return;
    };
    let module = path
        .iter()
        .map(|n| crate::analyze::node_text(*n, bytes))
        .collect::<Vec<_>>()
        .join(".");
    let name = crate::analyze::node_text(last, bytes).to_string();
    sink.add(statement, module, vec![(name, Some(last))]);
}

fn resolve_scala(
    _: Language,
    from: &str,
    import: &Import,
    index: &PathIndex,
) -> std::collections::BTreeSet<String> {
    let segments: Vec<&str> = import.module.split('.').collect();
    resolve_segments(from, &segments, index, &["scala", "sc"])
}
