//! JavaScript, TypeScript and TSX: the grammar binding, queries, import reading and import resolution.
//!
//! **JavaScript/TypeScript**: only relative specifiers (`./`, `../`) and root-absolute
//! `/x`; bare specifiers (packages, path aliases) are external. The file as written, then
//! a TypeScript file for a written `.js`/`.jsx`/`.mjs`/`.cjs`, then the specifier plus
//! each extension (`.ts .tsx .d.ts .mts .cts .js .jsx .mjs .cjs`; JavaScript importers try
//! the JavaScript extensions first), then `index.<ext>` inside it.

use std::collections::BTreeSet;

use tree_sitter::Node;

mod types;

use super::{Fingerprint, ImportSink, Resolution, Spec};
use crate::analyze::node_text;
use crate::imports::*;
use crate::{Import, Language};

/// JavaScript: `.js`, `.mjs`, `.cjs`, `.jsx` files, `tree-sitter-javascript`.
pub(crate) const JAVASCRIPT: Spec = Spec {
    name: "javascript",
    extensions: &["js", "mjs", "cjs", "jsx"],
    grammar: || tree_sitter_javascript::LANGUAGE.into(),
    tags_extra: include_str!("tags-extra.scm"),
    tags: || vec![tree_sitter_javascript::TAGS_QUERY.into()],
    imports: include_str!("imports.scm"),
    link_group: None,
    read_import,
    resolve: resolve_js,
    module_binding: super::binds_nothing,
    attribute_line: |line| line.starts_with('@'),
    member_fields,
    fingerprint: Fingerprint::SHARED,
    extraction: super::Extraction {
        typing: Some(types::TYPING),
        ..super::Extraction::PLAIN
    },
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

/// TypeScript: `.ts`, `.mts`, `.cts` files, the TypeScript dialect of
/// `tree-sitter-typescript`; the JavaScript tags query, then TypeScript's.
pub(crate) const TYPESCRIPT: Spec = Spec {
    name: "typescript",
    extensions: &["ts", "mts", "cts"],
    grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    tags_extra: include_str!("typescript-tags-extra.scm"),
    tags: typescript_tags,
    link_group: Some(Language::JavaScript),
    ..JAVASCRIPT
};

/// TSX: `.tsx` files, the TSX dialect of `tree-sitter-typescript`.
pub(crate) const TSX: Spec = Spec {
    name: "tsx",
    extensions: &["tsx"],
    grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
    ..TYPESCRIPT
};

/// The JavaScript tags query followed by the TypeScript one (every JavaScript pattern
/// compiles against both TypeScript dialects).
fn typescript_tags() -> Vec<String> {
    vec![
        tree_sitter_javascript::TAGS_QUERY.into(),
        tree_sitter_typescript::TAGS_QUERY.into(),
    ]
}

fn member_fields(kind: &str) -> Option<(&'static str, &'static str)> {
    match kind {
        "member_expression" => Some(("object", "property")),
        _ => None,
    }
}

/// `import`/`export ... from`, `require(..)`, `import(..)`: the specifier as written.
fn read_import<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let Some(statement) = r.statement else { return };
    let Some(module) = r.module else { return };
    sink.add(
        statement,
        node_text(module, bytes).to_string(),
        js_names(statement, bytes),
    );
}

/// JavaScript/TypeScript: the names an `import`/`export ... from` statement imports.
/// Named imports give the exported name (`{ a as b }` → `a`), a default import its local
/// name (`import App from './App'` → `App`, usually the exported declaration's name), a
/// namespace import or `export *` gives `*`; `require(..)`/`import(..)` bound to a
/// variable give its name or the destructured property names.
fn js_names<'t>(statement: Node<'t>, bytes: &[u8]) -> Vec<(String, Option<Node<'t>>)> {
    let mut names = Vec::new();
    let mut walker = statement.walk();
    let children: Vec<Node<'t>> = statement.named_children(&mut walker).collect();
    match statement.kind() {
        "import_statement" => {
            for child in children {
                if child.kind() != "import_clause" {
                    continue;
                }
                let mut w = child.walk();
                for part in child.named_children(&mut w) {
                    match part.kind() {
                        "identifier" => {
                            names.push((node_text(part, bytes).to_string(), Some(part)))
                        }
                        "namespace_import" => names.push(("*".to_string(), None)),
                        "named_imports" => {
                            let mut w2 = part.walk();
                            for spec in part.named_children(&mut w2) {
                                if spec.kind() == "import_specifier"
                                    && let Some(name) = spec.child_by_field_name("name")
                                {
                                    names.push((js_string_or_ident(name, bytes), Some(name)));
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        "export_statement" => {
            let mut any_clause = false;
            for child in children {
                match child.kind() {
                    "export_clause" => {
                        any_clause = true;
                        let mut w = child.walk();
                        for spec in child.named_children(&mut w) {
                            if spec.kind() == "export_specifier"
                                && let Some(name) = spec.child_by_field_name("name")
                            {
                                names.push((js_string_or_ident(name, bytes), Some(name)));
                            }
                        }
                    }
                    "namespace_export" => {
                        any_clause = true;
                        names.push(("*".to_string(), None));
                    }
                    _ => {}
                }
            }
            if !any_clause {
                names.push(("*".to_string(), None));
            }
        }
        // `const x = require('m')`, `const { a, b: c } = await import('m')`
        "call_expression" => {
            let mut node = statement;
            for _ in 0..3 {
                let Some(parent) = node.parent() else { break };
                match parent.kind() {
                    "await_expression" | "parenthesized_expression" => node = parent,
                    "variable_declarator" => {
                        if let Some(pattern) = parent.child_by_field_name("name") {
                            names.extend(binding_names(pattern, bytes));
                        }
                        break;
                    }
                    _ => break,
                }
            }
        }
        _ => {}
    }
    names
}

/// The imported names a binding pattern takes: `x` → `x`; `{ a, b: c }` → `a`, `b`.
fn binding_names<'t>(pattern: Node<'t>, bytes: &[u8]) -> Vec<(String, Option<Node<'t>>)> {
    match pattern.kind() {
        "identifier" => vec![(node_text(pattern, bytes).to_string(), Some(pattern))],
        "object_pattern" => (0..pattern.named_child_count() as u32)
            .filter_map(|i| pattern.named_child(i))
            .filter_map(|property| match property.kind() {
                "shorthand_property_identifier_pattern" => Some(property),
                "pair_pattern" => property.child_by_field_name("key"),
                _ => None,
            })
            .map(|name| (js_string_or_ident(name, bytes), Some(name)))
            .collect(),
        _ => Vec::new(),
    }
}

fn js_string_or_ident(node: Node<'_>, bytes: &[u8]) -> String {
    node_text(node, bytes).trim_matches(['"', '\'']).to_string()
}

fn resolve_js(
    language: Language,
    from_path: &str,
    import: &Import,
    index: &PathIndex,
) -> BTreeSet<String> {
    let module = import.module.as_str();
    let mut out = BTreeSet::new();
    if !(module.starts_with("./")
        || module.starts_with("../")
        || module == "."
        || module == ".."
        || module.starts_with('/'))
    {
        return out;
    }
    let Some(base) = join_normalized(dir_of(from_path), module) else {
        return out;
    };
    const TS_FIRST: [&str; 9] = [
        ".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs",
    ];
    const JS_FIRST: [&str; 9] = [
        ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".d.ts", ".mts", ".cts",
    ];
    let exts = if language == Language::JavaScript {
        JS_FIRST
    } else {
        TS_FIRST
    };
    // `'./lib/'`, `'.'` and `'..'` name a directory: Node and TypeScript take its
    // `index` only, never the file `lib.ts` beside it.
    if module.ends_with('/') || module == "." || module == ".." {
        let index_file = join(&base, "index");
        if let Some(found) = exts
            .iter()
            .map(|e| format!("{index_file}{e}"))
            .find(|c| index.paths.contains(c))
        {
            out.insert(found);
        }
        return out;
    }
    let mut candidates: Vec<String> = vec![base.clone()];
    for (js, ts) in [
        (".js", [".ts", ".tsx", ".d.ts"]),
        (".jsx", [".tsx", ".tsx", ".tsx"]),
        (".mjs", [".mts", ".d.mts", ".mts"]),
        (".cjs", [".cts", ".d.cts", ".cts"]),
    ] {
        if let Some(stem) = base.strip_suffix(js) {
            candidates.extend(ts.iter().map(|t| format!("{stem}{t}")));
        }
    }
    candidates.extend(exts.iter().map(|e| format!("{base}{e}")));
    candidates.extend(exts.iter().map(|e| format!("{}{e}", join(&base, "index"))));
    if let Some(found) = candidates.into_iter().find(|c| index.paths.contains(c)) {
        out.insert(found);
    }
    out
}
