//! PHP: the grammar binding, queries, import reading and import resolution.
//!
//! **PHP**: `require`/`include` paths relative to the file (a leading `__DIR__` or
//! `dirname(__FILE__)` is recorded as `__DIR__`), then to the repository root.
//! `use A\B\C;` → files declaring namespace `A\B` named `C.php`, else the nearest file
//! ending with `A/B/C.php`, compared case-insensitively, then with leading namespace
//! segments dropped (PSR-4 prefixes such as `App\` → `src/`) while two or more remain.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{Fingerprint, ImportSink, Resolution, Spec};
use crate::Import;
use crate::analyze::node_text;
use crate::imports::*;

/// PHP: `.php` files, `tree-sitter-php`.
pub(crate) const SPEC: Spec = Spec {
    name: "php",
    extensions: &["php"],
    grammar: || tree_sitter_php::LANGUAGE_PHP.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_php::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: |_, from, import, index| resolve_php(from, import, index),
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with("#["),
    member_fields: |kind| match kind {
        "member_call_expression" | "nullsafe_member_call_expression" => Some(("object", "name")),
        "scoped_call_expression" => Some(("scope", "name")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction::PLAIN,
    resolution: Resolution {
        explicit_members: true,
        values_are_members: false,
        bindings_known: false,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: false,
        names_imported: false,
    },
};

/// `use A\B\C;` clauses, and `require`/`include` paths.
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    if r.php_use {
        for (module, name) in php_use_clauses(statement, bytes) {
            let names = name
                .map(|n| vec![(node_text(n, bytes).to_string(), Some(n))])
                .unwrap_or_default();
            sink.add(statement, module, names);
        }
    } else if let Some(arg) = r.arg
        && let Some(module) = php_require_path(arg, bytes)
    {
        sink.add(statement, module, Vec::new());
    }
}

/// PHP: the `use` clauses of a `namespace_use_declaration` as (full name without a
/// leading `\`, node of the last name segment).
fn php_use_clauses<'t>(statement: Node<'t>, bytes: &[u8]) -> Vec<(String, Option<Node<'t>>)> {
    let mut out = Vec::new();
    let mut prefix = String::new();
    let mut w = statement.walk();
    let children: Vec<Node<'t>> = statement.named_children(&mut w).collect();
    let clause_name = |clause: Node<'t>| -> Option<(String, Node<'t>)> {
        let mut w = clause.walk();
        let target = clause
            .named_children(&mut w)
            .find(|c| matches!(c.kind(), "qualified_name" | "name" | "namespace_name"))?;
        let last = last_named_leaf(target);
        Some((
            node_text(target, bytes)
                .trim_start_matches('\\')
                .to_string(),
            last,
        ))
    };
    for child in children {
        match child.kind() {
            "namespace_name" => {
                prefix = node_text(child, bytes).trim_start_matches('\\').to_string()
            }
            "namespace_use_clause" => {
                if let Some((name, last)) = clause_name(child) {
                    out.push((name, Some(last)));
                }
            }
            "namespace_use_group" => {
                let mut w = child.walk();
                for clause in child.named_children(&mut w) {
                    if clause.kind() != "namespace_use_clause" {
                        continue;
                    }
                    if let Some((name, last)) = clause_name(clause) {
                        let full = if prefix.is_empty() {
                            name
                        } else {
                            format!("{prefix}\\{name}")
                        };
                        out.push((full, Some(last)));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The last named descendant along last children (the `C` of `A\B\C`).
fn last_named_leaf(node: Node<'_>) -> Node<'_> {
    let mut current = node;
    for _ in 0..16 {
        let count = current.named_child_count();
        match count
            .checked_sub(1)
            .and_then(|i| current.named_child(i as u32))
        {
            Some(child) => current = child,
            None => break,
        }
    }
    current
}

/// PHP: the path of a `require`/`include` argument: a string literal, or `__DIR__ . '/x'`
/// / `dirname(__FILE__) . '/x'` (recorded as `__DIR__/x`).
fn php_require_path(arg: Node<'_>, bytes: &[u8]) -> Option<String> {
    let mut node = arg;
    while node.kind() == "parenthesized_expression" {
        node = node.named_child(0)?;
    }
    match node.kind() {
        "string" | "encapsed_string" => Some(php_string_content(node, bytes)),
        "binary_expression" => {
            let left = node.child_by_field_name("left")?;
            let right = node.child_by_field_name("right")?;
            let left_text = squash(node_text(left, bytes));
            if (left_text == "__DIR__" || left_text == "dirname(__FILE__)")
                && matches!(right.kind(), "string" | "encapsed_string")
            {
                let rest = php_string_content(right, bytes);
                return Some(format!("__DIR__/{}", rest.trim_start_matches('/')));
            }
            None
        }
        _ => None,
    }
}

fn php_string_content(node: Node<'_>, bytes: &[u8]) -> String {
    let text = node_text(node, bytes);
    text.trim_matches(['"', '\'']).to_string()
}

fn resolve_php(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    let mut out = BTreeSet::new();
    if module.ends_with(".php") || module.contains('/') {
        let (base, rel) = match module.strip_prefix("__DIR__") {
            Some(rest) => (dir_of(from_path), rest.trim_start_matches('/')),
            None => (dir_of(from_path), module),
        };
        for candidate in [join_normalized(base, rel), join_normalized("", rel)]
            .into_iter()
            .flatten()
        {
            if index.paths.contains(&candidate) {
                out.insert(candidate);
                return out;
            }
        }
        return out;
    }
    let name = module.trim_start_matches('\\');
    if let Some((namespace, class)) = name.rsplit_once('\\')
        && let Some(files) = namespace_files(index, namespace)
    {
        let hits: BTreeSet<String> = files
            .iter()
            .filter(|f| file_stem(f) == class)
            .cloned()
            .collect();
        if !hits.is_empty() {
            return hits;
        }
    }
    let segments: Vec<&str> = name.split('\\').filter(|s| !s.is_empty()).collect();
    for skip in 0..segments.len() {
        if segments.len() - skip < 2 && skip > 0 {
            break;
        }
        let suffix = format!("{}.php", segments[skip..].join("/"));
        let exact = ending_with(index, &suffix);
        if !exact.is_empty() {
            return nearest(from_path, exact);
        }
        let lower = suffix.to_lowercase();
        let slash = format!("/{lower}");
        let folded: Vec<String> = same_file_name(index, &suffix)
            .filter(|p| {
                let l = p.to_lowercase();
                l == lower || l.ends_with(&slash)
            })
            .cloned()
            .collect();
        if !folded.is_empty() {
            return nearest(from_path, folded);
        }
    }
    out
}
