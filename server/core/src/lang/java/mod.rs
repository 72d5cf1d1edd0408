//! Java: the grammar binding, queries, import reading and import resolution.
//!
//! **Java**: `com.acme.Util` → `com/acme/Util.java` under an ancestor of the importer,
//! else in the files declaring package `com.acme` ([`PathIndex::namespaces`]), else the
//! nearest file whose path ends with it; a static or nested-class import retries without
//! its last segment. `com.acme.*` → the files declaring `com.acme`, else every `.java`
//! file directly in a directory ending with `com/acme`.

use std::collections::BTreeSet;

pub(super) mod types;

use super::{Fingerprint, ImportSink, Resolution, Spec};
use crate::Import;
use crate::analyze::node_text;
use crate::imports::*;

/// Java: `.java` files, `tree-sitter-java`.
pub(crate) const SPEC: Spec = Spec {
    name: "java",
    extensions: &["java"],
    grammar: || tree_sitter_java::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_java::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: |_, from, import, index| resolve_java(from, import, index),
    module_binding: |module| module.rsplit('.').next().filter(|s| *s != "*"),
    attribute_line: |line| line.starts_with('@'),
    member_fields: |kind| match kind {
        "method_invocation" => Some(("object", "name")),
        "field_access" => Some(("object", "field")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        typing: Some(types::TYPING),
        ..super::Extraction::PLAIN
    },
    resolution: Resolution {
        explicit_members: false,
        values_are_members: true,
        bindings_known: true,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: true,
        names_imported: false,
    },
};

/// `import a.b.C;` (the class name imported) and `import a.b.*;`.
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    let Some(module) = r.module else { return };
    let mut text = squash(node_text(module, bytes));
    let mut walker = statement.walk();
    let wildcard = statement
        .children(&mut walker)
        .any(|c| c.kind() == "asterisk");
    let names = if wildcard {
        text.push_str(".*");
        Vec::new()
    } else {
        let last = module.child_by_field_name("name").unwrap_or(module);
        vec![(node_text(last, bytes).to_string(), Some(last))]
    };
    sink.add(statement, text, names);
}

fn resolve_java(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    if let Some(package) = module.strip_suffix(".*") {
        if let Some(files) = namespace_files(index, package) {
            return files.clone();
        }
        let dir_suffix = package.replace('.', "/");
        let slash = format!("/{dir_suffix}");
        let found: BTreeSet<String> = in_dirs_named(index, file_name(&dir_suffix))
            .filter(|p| {
                p.ends_with(".java") && {
                    let d = dir_of(p);
                    d == dir_suffix || d.ends_with(&slash)
                }
            })
            .cloned()
            .collect();
        if !found.is_empty() {
            return found;
        }
        // `import static com.acme.Util.*;`
        return resolve_java_class(from_path, package, index);
    }
    let found = resolve_java_class(from_path, module, index);
    if !found.is_empty() {
        return found;
    }
    match module.rsplit_once('.') {
        Some((outer, _)) if outer.contains('.') => resolve_java_class(from_path, outer, index),
        _ => BTreeSet::new(),
    }
}

fn resolve_java_class(from_path: &str, class: &str, index: &PathIndex) -> BTreeSet<String> {
    let rel = format!("{}.java", class.replace('.', "/"));
    for ancestor in ancestors(from_path) {
        let candidate = join(ancestor, &rel);
        if index.paths.contains(&candidate) {
            return BTreeSet::from([candidate]);
        }
    }
    if let Some((package, name)) = class.rsplit_once('.')
        && let Some(files) = namespace_files(index, package)
    {
        let hits: BTreeSet<String> = files
            .iter()
            .filter(|f| file_stem(f) == name)
            .cloned()
            .collect();
        if !hits.is_empty() {
            return hits;
        }
    }
    nearest(from_path, ending_with(index, &rel))
}
