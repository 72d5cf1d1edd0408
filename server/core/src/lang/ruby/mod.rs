//! Ruby: the grammar binding, queries, import reading and import resolution.
//!
//! **Ruby**: `require_relative 'x'` (recorded as `./x`) relative to the file, `.rb`
//! added. `require 'x'` → `lib/x.rb` under the repository root or an ancestor of the
//! importer, else for a multi-segment path (`a/b`) the unique file ending with `/a/b.rb`.

use std::collections::{BTreeSet, HashMap};

use tree_sitter::Tree;

use super::{Fingerprint, ImportSink, Resolution, Spec};
use crate::Import;
use crate::analyze::node_text;
use crate::imports::*;

/// Ruby: `.rb` files, `tree-sitter-ruby`.
pub(crate) const SPEC: Spec = Spec {
    name: "ruby",
    extensions: &["rb"],
    grammar: || tree_sitter_ruby::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_ruby::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: |_, from, import, index| resolve_ruby(from, import, index),
    module_binding: super::binds_nothing,
    attribute_line: super::no_attributes,
    member_fields: |kind| match kind {
        "call" => Some(("receiver", "method")),
        _ => None,
    },
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        module_functions_are_methods: true,
        locals: Some(|tree, bytes, max_depth| {
            Box::new(RubyLocals::collect(tree, bytes, max_depth))
        }),
        ..super::Extraction::PLAIN
    },
    resolution: Resolution {
        explicit_members: false,
        values_are_members: false,
        bindings_known: false,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: false,
        names_imported: false,
    },
};

/// `require 'x'`, `load 'x'`, and `require_relative 'x'` (recorded as `./x`).
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    let Some(module) = r.module else { return };
    let text = node_text(module, bytes).to_string();
    let relative = r
        .kind
        .is_some_and(|k| node_text(k, bytes) == "require_relative");
    let text = if relative && !text.starts_with('.') && !text.starts_with('/') {
        format!("./{text}")
    } else {
        text
    };
    sink.add(statement, text, Vec::new());
}

fn resolve_ruby(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    let with_ext = if module.ends_with(".rb") {
        module.to_string()
    } else {
        format!("{module}.rb")
    };
    let mut out = BTreeSet::new();
    if module.starts_with("./") || module.starts_with("../") {
        if let Some(path) = join_normalized(dir_of(from_path), &with_ext)
            && index.paths.contains(&path)
        {
            out.insert(path);
        }
        return out;
    }
    for ancestor in ancestors(from_path) {
        let candidate = join(&join(ancestor, "lib"), &with_ext);
        if index.paths.contains(&candidate) {
            out.insert(candidate);
            return out;
        }
    }
    if module.contains('/') {
        return nearest_unique(from_path, ending_with(index, &with_ext));
    }
    out
}

/// Ruby local variables, for `(#is-not? local)`: for each method, class, module or file
/// body, the names bound in it (assignment targets, parameters) with the first binding's
/// byte offset. Blocks share their method's bindings.
struct RubyLocals {
    /// Scope ranges `(start, end)`, in preorder.
    scopes: Vec<(usize, usize)>,
    /// `(scope index, name)` → first binding offset.
    bindings: HashMap<(usize, String), usize>,
}

impl RubyLocals {
    fn collect(tree: &Tree, bytes: &[u8], max_depth: u32) -> RubyLocals {
        let mut scopes = Vec::new();
        let mut bindings: HashMap<(usize, String), usize> = HashMap::new();
        let mut cursor = tree.walk();
        // Stack of (scope index, node id that opened it); parent kinds for binding checks.
        let mut scope_stack: Vec<(usize, usize)> = Vec::new();
        let mut kinds: Vec<&str> = Vec::new();
        loop {
            let node = cursor.node();
            let kind = node.kind();
            if matches!(
                kind,
                "program" | "method" | "singleton_method" | "class" | "module" | "singleton_class"
            ) {
                scope_stack.push((scopes.len(), node.id()));
                scopes.push((node.start_byte(), node.end_byte()));
            }
            if kind == "identifier" {
                let parent = kinds.last().copied().unwrap_or("");
                let field = cursor.field_name();
                let binds = match parent {
                    "assignment" | "operator_assignment" => field == Some("left"),
                    "optional_parameter"
                    | "keyword_parameter"
                    | "splat_parameter"
                    | "hash_splat_parameter"
                    | "block_parameter" => field == Some("name"),
                    "method_parameters"
                    | "block_parameters"
                    | "lambda_parameters"
                    | "left_assignment_list"
                    | "destructured_parameter"
                    | "exception_variable"
                    | "for"
                    | "destructured_left_assignment"
                    | "rest_assignment" => true,
                    _ => false,
                };
                if binds && let Some(&(scope, _)) = scope_stack.last() {
                    let name = node_text(node, bytes).to_string();
                    bindings.entry((scope, name)).or_insert(node.start_byte());
                }
            }
            if (kinds.len() as u64) < u64::from(max_depth) && cursor.goto_first_child() {
                kinds.push(kind);
                continue;
            }
            loop {
                if scope_stack
                    .last()
                    .is_some_and(|&(_, id)| id == cursor.node().id())
                {
                    scope_stack.pop();
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return RubyLocals { scopes, bindings };
                }
                kinds.pop();
            }
        }
    }
}

impl super::Locals for RubyLocals {
    fn is_local(&self, name: &str, at: usize) -> bool {
        // Innermost scope containing `at`: the last scope (preorder) that contains it.
        let Some(scope) = self.scopes.iter().rposition(|&(s, e)| s <= at && at < e) else {
            return false;
        };
        self.bindings
            .get(&(scope, name.to_string()))
            .is_some_and(|&first| first <= at)
    }
}
