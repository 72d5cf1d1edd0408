//! Import resolution: from an [`Import`] as written to the repository files it names,
//! per language. Pure logic over a [`PathIndex`] of the repository's files.
//!
//! Also the per-language reading of import statements found by the import queries
//! (`queries/<lang>-imports.scm`) into [`Import`]s.
//!
//! Resolution rules (all paths repo-relative, `/`-separated; `..` segments are normalised
//! and may not climb above the repository root; results sorted and deduplicated):
//!
//! - **Python**, relative (`.x`, `..pkg.mod`, `.`): from the importer's package directory
//!   (one level up per extra dot), `x.py` or `x/__init__.py` (then `x.pyi`). For
//!   `from pkg import name` the submodule `pkg/name.py` (or package) is added when it
//!   exists; for `from . import name` each name is a submodule or, failing that, an
//!   attribute of the package's `__init__.py`.
//!   Absolute (`a.b`): tried under *source roots*, nearest first: each ancestor directory
//!   of the importer (its own directory up to the repository root) and that ancestor's
//!   `src/`, `lib/` and `Lib/` children, skipping any root that is itself a package (has
//!   an `__init__.py`: a module inside a package is never importable as a top-level
//!   name). The first root holding `a/b.py` or `a/b/__init__.py` wins, which prefers the
//!   candidate sharing the longest directory prefix with the importer. A dotted module
//!   found under no such root resolves to a unique (or uniquely nearest) file anywhere
//!   whose path ends with `a/b.py`, again under a non-package root; single-segment modules
//!   (`json`, `os`) never take this fallback, so a stray `tests/json.py` does not capture
//!   the standard library.
//! - **JavaScript/TypeScript**: only relative specifiers (`./`, `../`) and root-absolute
//!   `/x`; bare specifiers (packages, path aliases) are external. The file as written, then
//!   a TypeScript file for a written `.js`/`.jsx`/`.mjs`/`.cjs`, then the specifier plus
//!   each extension (`.ts .tsx .d.ts .mts .cts .js .jsx .mjs .cjs`; JavaScript importers try
//!   the JavaScript extensions first), then `index.<ext>` inside it.
//! - **Rust**: `crate::` starts at the crate root: the nearest ancestor directory with a
//!   `lib.rs` or `main.rs` (a file named `lib.rs`/`main.rs`, or one directly in `src/bin`,
//!   `tests`, `examples` or `benches`, is its own crate root). `self::` starts at the
//!   importer's module directory (`a/` for `a.rs` and `a/mod.rs`), `super::` one module up.
//!   A path starting with any other name is tried relative to the importer's module (2018
//!   uniform paths) and otherwise is an external crate. Each `module::name` resolves to the
//!   file of its longest prefix that is a module file (`p.rs` or `p/mod.rs`); `mod foo;`
//!   is recorded as `self::foo` and names `foo.rs` or `foo/mod.rs` only (a missing file
//!   leaves it unresolved). `#[path = "p.rs"] mod foo;` is recorded as
//!   `#[path = "p.rs"] self::foo` and names the file the Rust Reference ("Modules: the
//!   path attribute") gives: `p.rs` relative to the declaring file's directory, or, inside
//!   inline modules `a::b`, relative to the file's module directory joined with `a/b`
//!   (`src/x.rs` with `mod a { #[path = "p.rs"] mod c; }` → `src/x/a/p.rs`; in `mod.rs`,
//!   `lib.rs` or `main.rs` → `src/a/p.rs`). Not followed: a `#[path]` on an inline module
//!   (`#[path = "d"] mod a { mod c; }`), `#[cfg_attr(.., path = ..)]`, and the child
//!   modules of a file reached through `#[path]` (rustc gives such a file its own
//!   directory; loci resolves its `mod c;` as for any file at that path). A declaration inside a macro
//!   call (`cfg_rt! { pub mod runtime; }`) is never seen: tree-sitter leaves a macro's
//!   body an unparsed token tree (a known gap, stated in `docs/architecture.md`).
//! - **Go**: the import path's longest matching `go.mod` module path (from
//!   [`PathIndex::go_modules`]) maps it to a directory; the package is every `.go` file
//!   directly in it. `_test.go` files are left out (importing a package never compiles its
//!   tests) unless the importer is itself a test file.
//! - **C/C++**: `#include "x.h"` relative to the including file's directory, then the
//!   repository root, then the unique (or uniquely nearest) file whose path ends with
//!   `/x.h`. `#include <x.h>` is recorded with its brackets and never resolved.
//! - **Java**: `com.acme.Util` → `com/acme/Util.java` under an ancestor of the importer,
//!   else in the files declaring package `com.acme` ([`PathIndex::namespaces`]), else the
//!   nearest file whose path ends with it; a static or nested-class import retries without
//!   its last segment. `com.acme.*` → the files declaring `com.acme`, else every `.java`
//!   file directly in a directory ending with `com/acme`.
//! - **C#**: `using Acme.Util;` → the files declaring namespace `Acme.Util`; for
//!   `using static Acme.Util.Helpers;` (no such namespace) the files of `Acme.Util` named
//!   `Helpers.cs`, else all of that namespace's files.
//! - **Ruby**: `require_relative 'x'` (recorded as `./x`) relative to the file, `.rb`
//!   added. `require 'x'` → `lib/x.rb` under the repository root or an ancestor of the
//!   importer, else for a multi-segment path (`a/b`) the unique file ending with `/a/b.rb`.
//! - **PHP**: `require`/`include` paths relative to the file (a leading `__DIR__` or
//!   `dirname(__FILE__)` is recorded as `__DIR__`), then to the repository root.
//!   `use A\B\C;` → files declaring namespace `A\B` named `C.php`, else the nearest file
//!   ending with `A/B/C.php`, compared case-insensitively, then with leading namespace
//!   segments dropped (PSR-4 prefixes such as `App\` → `src/`) while two or more remain.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use tree_sitter::Node;

use crate::analyze::{node_text, span_of};
use crate::{Import, Language};

/// What import resolution knows about the repository: every recorded file path
/// (repo-relative, `/`-separated), Go module roots from `go.mod` files, and the files
/// that declare each namespace/package (C#, Java, PHP), taken from module symbols.
/// Fill `paths` before resolving: the lookup by file name is built from it on first use.
#[derive(Clone, Debug, Default)]
pub struct PathIndex {
    /// Every file path in the map.
    pub paths: BTreeSet<String>,
    /// Lowercased file name (last path component) → the paths ending in it, sorted: a
    /// suffix lookup reads one list instead of every path, which made resolving a
    /// repository's imports quadratic in its size.
    by_file_name: std::sync::OnceLock<HashMap<String, Vec<String>>>,
    /// The same by the name of the directory holding the file (`""` at the root).
    by_dir_name: std::sync::OnceLock<HashMap<String, Vec<String>>>,
    /// `go.mod` directory (`""` for the root) → its `module` path.
    pub go_modules: BTreeMap<String, String>,
    /// Rust library name (`loci_store`: `[lib] name`, else `[package] name` with `-` as
    /// `_`) → (the directory of its root file, the root file), for the crates whose
    /// `Cargo.toml` and root file are in the map: `use loci_store::map;` in another member
    /// of a workspace, or `use regex::Regex;` in the crate's own tests, names them.
    pub rust_crates: BTreeMap<String, (String, String)>,
    /// Namespace or package name (`Acme.Util`, `com.acme.util`) → files declaring it.
    /// PHP namespaces may be given as written (`App\Models`) or with dots (`App.Models`).
    pub namespaces: BTreeMap<String, BTreeSet<String>>,
}

impl PathIndex {
    /// An index of `paths`, with no Go modules or namespaces.
    pub fn with_paths(paths: impl IntoIterator<Item = String>) -> PathIndex {
        PathIndex {
            paths: paths.into_iter().collect(),
            ..PathIndex::default()
        }
    }
}

/// Resolves one import of the file at `from_path` to the files it names, sorted.
/// An empty result means unresolved (external, standard library, or not found); the
/// engine keeps such imports with their text. The importer itself may be in the result
/// (a Rust `use super::*;` in an inline `mod tests`). See the module docs for the rules.
pub fn resolve(
    language: Language,
    from_path: &str,
    import: &Import,
    index: &PathIndex,
) -> Vec<String> {
    let found: BTreeSet<String> = match language {
        Language::Python => resolve_python(from_path, import, index),
        Language::JavaScript | Language::TypeScript | Language::Tsx => {
            resolve_js(language, from_path, import, index)
        }
        Language::Rust => resolve_rust(from_path, import, index),
        Language::Go => resolve_go(from_path, import, index),
        Language::C | Language::Cpp => resolve_include(from_path, import, index),
        Language::Java => resolve_java(from_path, import, index),
        Language::CSharp => resolve_csharp(import, index),
        Language::Ruby => resolve_ruby(from_path, import, index),
        Language::Php => resolve_php(from_path, import, index),
    };
    found.into_iter().collect()
}

// ------------------------------------------------------------------ reading statements

/// The captures of one import-query match (see `lang::Role`).
#[derive(Default)]
pub(crate) struct RawImport<'t> {
    pub(crate) statement: Option<Node<'t>>,
    pub(crate) module: Option<Node<'t>>,
    pub(crate) names: Vec<Node<'t>>,
    pub(crate) tree: Option<Node<'t>>,
    pub(crate) kind: Option<Node<'t>>,
    pub(crate) arg: Option<Node<'t>>,
    pub(crate) php_use: bool,
    /// Rust: the inline modules around the macro invocation whose body holds the
    /// statement, outermost first, when the statement comes from a macro body parsed on
    /// its own (`mod a { cfg_rt! { mod b; } }`: `["a"]`); the body's tree cannot see them.
    pub(crate) outer_modules: Vec<String>,
}

/// Imported names with the nodes they are written at (`None` for `*`).
type Names<'t> = Vec<(String, Option<Node<'t>>)>;

/// One import being assembled: statement, module, names with their nodes.
struct Pending<'t> {
    statement: Node<'t>,
    module: String,
    names: Vec<(String, Option<Node<'t>>)>,
}

/// Reads the import-query matches of one file into [`Import`]s (document order; one per
/// module per statement) and the imported names with their nodes, for
/// [`crate::RefKind::Import`] references.
pub(crate) fn collect<'t>(
    language: Language,
    raw: &[RawImport<'t>],
    bytes: &[u8],
) -> (Vec<Import>, Vec<(String, Node<'t>)>) {
    let mut pending: Vec<Pending<'t>> = Vec::new();
    let mut seen: HashMap<(usize, String), usize> = HashMap::new();
    let mut add = |statement: Node<'t>, module: String, names: Vec<(String, Option<Node<'t>>)>| {
        if module.is_empty() {
            return;
        }
        match seen.get(&(statement.id(), module.clone())) {
            Some(&i) => {
                for name in names {
                    if !pending[i].names.iter().any(|(n, node)| {
                        *n == name.0 && node.map(|x| x.id()) == name.1.map(|x| x.id())
                    }) {
                        pending[i].names.push(name);
                    }
                }
            }
            None => {
                seen.insert((statement.id(), module.clone()), pending.len());
                pending.push(Pending {
                    statement,
                    module,
                    names,
                });
            }
        }
    };
    for r in raw {
        let Some(statement) = r.statement else {
            continue;
        };
        match language {
            Language::Rust => {
                let mut inline = r.outer_modules.clone();
                inline.extend(rust_inline_modules(statement, bytes));
                if let Some(tree) = r.tree {
                    for (module, names) in flatten_use_tree(tree, bytes) {
                        add(statement, rust_rebase(&module, &inline), names);
                    }
                } else if let Some(module) = r.module {
                    let declared =
                        rust_rebase(&format!("self::{}", node_text(module, bytes)), &inline);
                    let module = match rust_path_attribute(statement, bytes) {
                        Some(path) => format!("{RUST_PATH_OPEN}{path}{RUST_PATH_CLOSE}{declared}"),
                        None => declared,
                    };
                    add(statement, module, Vec::new());
                }
            }
            Language::Python => {
                let Some(module) = r.module else { continue };
                let names = r
                    .names
                    .iter()
                    .map(|n| {
                        let text = squash(node_text(*n, bytes));
                        let node = (text != "*").then_some(*n);
                        (text, node)
                    })
                    .collect();
                add(statement, squash(node_text(module, bytes)), names);
            }
            Language::JavaScript | Language::TypeScript | Language::Tsx => {
                let Some(module) = r.module else { continue };
                add(
                    statement,
                    node_text(module, bytes).to_string(),
                    js_names(statement, bytes),
                );
            }
            Language::Go | Language::C | Language::Cpp | Language::CSharp => {
                let Some(module) = r.module else { continue };
                add(statement, squash(node_text(module, bytes)), Vec::new());
            }
            Language::Java => {
                let Some(module) = r.module else { continue };
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
                add(statement, text, names);
            }
            Language::Ruby => {
                let Some(module) = r.module else { continue };
                let text = node_text(module, bytes).to_string();
                let relative = r
                    .kind
                    .is_some_and(|k| node_text(k, bytes) == "require_relative");
                let text = if relative && !text.starts_with('.') && !text.starts_with('/') {
                    format!("./{text}")
                } else {
                    text
                };
                add(statement, text, Vec::new());
            }
            Language::Php => {
                if r.php_use {
                    for (module, name) in php_use_clauses(statement, bytes) {
                        let names = name
                            .map(|n| vec![(node_text(n, bytes).to_string(), Some(n))])
                            .unwrap_or_default();
                        add(statement, module, names);
                    }
                } else if let Some(arg) = r.arg
                    && let Some(module) = php_require_path(arg, bytes)
                {
                    add(statement, module, Vec::new());
                }
            }
        }
    }
    pending.sort_by_key(|p| p.statement.start_byte());
    let mut refs = Vec::new();
    let imports = pending
        .into_iter()
        .map(|p| {
            for (name, node) in &p.names {
                if let Some(node) = node
                    && name != "*"
                    && name != "self"
                    && !name.is_empty()
                {
                    refs.push((name.clone(), *node));
                }
            }
            Import {
                module: p.module,
                names: p.names.into_iter().map(|(n, _)| n).collect(),
                span: span_of(p.statement),
            }
        })
        .collect();
    (imports, refs)
}

/// Removes all whitespace (`a . b` → `a.b`).
fn squash(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
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

/// Rust: flattens a `use` tree into `(module path, names)` pairs, iteratively:
/// `crate::a::{b, c::{d, e as f}, self}` → `("crate::a", [b, self])`, `("crate::a::c", [d, e])`.
/// A simple path `a::b::c` is `("a::b", [c])`; a lone `foo` is `("foo", [])`; a glob
/// `a::*` is `("a", ["*"])`.
fn flatten_use_tree<'t>(tree: Node<'t>, bytes: &[u8]) -> Vec<(String, Names<'t>)> {
    let mut out: Vec<(String, Names<'t>)> = Vec::new();
    let mut push = |module: String, name: Option<(String, Option<Node<'t>>)>| {
        let at = match out.iter().position(|(m, _)| *m == module) {
            Some(i) => i,
            None => {
                out.push((module, Vec::new()));
                out.len() - 1
            }
        };
        if let Some(name) = name {
            out[at].1.push(name);
        }
    };
    let join = |prefix: &str, rest: &str| -> String {
        match (prefix.is_empty(), rest.is_empty()) {
            (true, _) => rest.to_string(),
            (_, true) => prefix.to_string(),
            _ => format!("{prefix}::{rest}"),
        }
    };
    let mut stack: Vec<(String, Node<'t>)> = vec![(String::new(), tree)];
    let mut steps = 0usize;
    while let Some((prefix, node)) = stack.pop() {
        steps += 1;
        if steps > 10_000 {
            break;
        }
        match node.kind() {
            "scoped_use_list" => {
                let path = node
                    .child_by_field_name("path")
                    .map(|p| squash(node_text(p, bytes)))
                    .unwrap_or_default();
                let prefix = join(&prefix, &path);
                if let Some(list) = node.child_by_field_name("list") {
                    let mut w = list.walk();
                    let items: Vec<Node<'t>> = list.named_children(&mut w).collect();
                    for item in items.into_iter().rev() {
                        stack.push((prefix.clone(), item));
                    }
                }
            }
            "use_list" => {
                let mut w = node.walk();
                let items: Vec<Node<'t>> = node.named_children(&mut w).collect();
                for item in items.into_iter().rev() {
                    stack.push((prefix.clone(), item));
                }
            }
            "use_wildcard" => {
                let path = node
                    .named_child(0)
                    .map(|p| squash(node_text(p, bytes)))
                    .unwrap_or_default();
                push(join(&prefix, &path), Some(("*".to_string(), None)));
            }
            "use_as_clause" => {
                if let Some(path) = node.child_by_field_name("path") {
                    stack.push((prefix, path));
                }
            }
            "self" => push(prefix.clone(), Some(("self".to_string(), Some(node)))),
            "scoped_identifier" => {
                let full = join(&prefix, &squash(node_text(node, bytes)));
                match (full.rsplit_once("::"), node.child_by_field_name("name")) {
                    (Some((module, last)), name_node) => {
                        push(module.to_string(), Some((last.to_string(), name_node)))
                    }
                    (None, _) => push(full, None),
                }
            }
            "identifier" | "crate" | "super" | "metavariable" => {
                let text = node_text(node, bytes);
                if prefix.is_empty() {
                    push(text.to_string(), None);
                } else {
                    push(prefix.clone(), Some((text.to_string(), Some(node))));
                }
            }
            _ => {}
        }
    }
    out
}

/// Rust: names of the inline modules (`mod tests { .. }`) around a statement, outermost
/// first (as far as its tree goes).
pub(crate) fn rust_inline_modules(statement: Node<'_>, bytes: &[u8]) -> Vec<String> {
    let mut names = Vec::new();
    let mut node = statement;
    for _ in 0..64 {
        let Some(parent) = node.parent() else { break };
        if parent.kind() == "mod_item"
            && let Some(name) = parent.child_by_field_name("name")
        {
            names.push(node_text(name, bytes).to_string());
        }
        node = parent;
    }
    names.reverse();
    names
}

/// Rust: how a `#[path = "P"] mod m;` declaration is recorded: `#[path = "P"] self::m`
/// (inside inline modules `a::b`: `#[path = "P"] self::a::b::m`), `P` as written.
const RUST_PATH_OPEN: &str = "#[path = \"";
const RUST_PATH_CLOSE: &str = "\"] ";

/// Rust: the value of a `#[path = "…"]` outer attribute on the module declaration
/// `statement` (its preceding `attribute_item` siblings, comments skipped), if any.
/// Raw strings and escapes are taken as written (paths hold neither in practice).
fn rust_path_attribute(statement: Node<'_>, bytes: &[u8]) -> Option<String> {
    let mut sibling = statement.prev_named_sibling();
    while let Some(node) = sibling {
        match node.kind() {
            "attribute_item" => {
                if let Some(attribute) = node.named_child(0)
                    && attribute.kind() == "attribute"
                    && attribute
                        .named_child(0)
                        .is_some_and(|n| node_text(n, bytes) == "path")
                    && let Some(value) = attribute.child_by_field_name("value")
                    && value.kind() == "string_literal"
                {
                    let text = node_text(value, bytes);
                    let path = text.strip_prefix('"')?.strip_suffix('"')?;
                    return (!path.is_empty()).then(|| path.to_string());
                }
            }
            "line_comment" | "block_comment" => {}
            _ => return None,
        }
        sibling = node.prev_named_sibling();
    }
    None
}

/// Rust: splits a recorded `#[path = "P"] self::…::m` declaration into `P` and
/// `self::…::m`.
fn rust_path_declaration(module: &str) -> Option<(&str, &str)> {
    module
        .strip_prefix(RUST_PATH_OPEN)?
        .split_once(RUST_PATH_CLOSE)
}

/// Rust: rewrites a module path written inside inline modules `inline` relative to the
/// file's own module: `self::x` → `self::tests::x`, `super::x` inside `mod tests` →
/// `self::x`. `crate::` paths and bare paths are unchanged.
fn rust_rebase(module: &str, inline: &[String]) -> String {
    if inline.is_empty() {
        return module.to_string();
    }
    let segments: Vec<&str> = module.split("::").collect();
    let supers = segments.iter().take_while(|s| **s == "super").count();
    let rest = &segments[supers..];
    let (base, rest): (Vec<&str>, &[&str]) = if supers > 0 {
        if supers <= inline.len() {
            (
                inline[..inline.len() - supers]
                    .iter()
                    .map(String::as_str)
                    .collect(),
                rest,
            )
        } else {
            return std::iter::repeat_n("super", supers - inline.len())
                .chain(rest.iter().copied())
                .collect::<Vec<_>>()
                .join("::");
        }
    } else if segments.first() == Some(&"self") {
        (inline.iter().map(String::as_str).collect(), &segments[1..])
    } else {
        return module.to_string();
    };
    std::iter::once("self")
        .chain(base)
        .chain(rest.iter().copied())
        .collect::<Vec<_>>()
        .join("::")
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

// ------------------------------------------------------------------ path helpers

/// The directory of a path (`""` for a top-level file).
fn dir_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// The file name of a path.
fn file_name(path: &str) -> &str {
    path.rsplit_once('/').map_or(path, |(_, f)| f)
}

/// Joins `dir` and a relative path, resolving `.` and `..`; `None` if it climbs above
/// the root.
fn join_normalized(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        dir.split('/').filter(|p| !p.is_empty()).collect()
    };
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn join(dir: &str, rest: &str) -> String {
    if dir.is_empty() {
        rest.to_string()
    } else if rest.is_empty() {
        dir.to_string()
    } else {
        format!("{dir}/{rest}")
    }
}

/// Ancestor directories of `path`'s directory, nearest first, ending with `""`.
fn ancestors(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut dir = dir_of(path);
    loop {
        out.push(dir);
        if dir.is_empty() {
            break;
        }
        dir = dir_of(dir);
    }
    out
}

/// Number of leading directory components two directories share.
fn shared_components(a: &str, b: &str) -> usize {
    a.split('/')
        .zip(b.split('/'))
        .take_while(|(x, y)| x == y && !x.is_empty())
        .count()
}

/// Among `candidates`, those whose directory shares the most leading components with the
/// importer's directory (all of them on a tie).
fn nearest(from_path: &str, candidates: Vec<String>) -> BTreeSet<String> {
    let from_dir = dir_of(from_path);
    let best = candidates
        .iter()
        .map(|c| shared_components(from_dir, dir_of(c)))
        .max()
        .unwrap_or(0);
    candidates
        .into_iter()
        .filter(|c| shared_components(from_dir, dir_of(c)) == best)
        .collect()
}

/// Like [`nearest`], but only a single winner counts (an ambiguous match is unresolved).
fn nearest_unique(from_path: &str, candidates: Vec<String>) -> BTreeSet<String> {
    let best = nearest(from_path, candidates);
    if best.len() == 1 {
        best
    } else {
        BTreeSet::new()
    }
}

/// Files directly in directory `dir`.
fn files_in<'a>(index: &'a PathIndex, dir: &str) -> impl Iterator<Item = &'a String> + 'a {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let start = prefix.clone();
    let skip = prefix.len();
    index
        .paths
        .range(start..)
        .take_while(move |p| p.starts_with(&prefix))
        .filter(move |p| !p[skip..].contains('/'))
}

/// Every path equal to `suffix` or ending with `/suffix`, sorted.
fn ending_with(index: &PathIndex, suffix: &str) -> Vec<String> {
    let slash = format!("/{suffix}");
    same_file_name(index, suffix)
        .filter(|p| *p == suffix || p.ends_with(&slash))
        .cloned()
        .collect()
}

/// The paths whose file name is `path`'s, ignoring case, sorted.
fn same_file_name<'a>(index: &'a PathIndex, path: &str) -> impl Iterator<Item = &'a String> {
    let by_name = index
        .by_file_name
        .get_or_init(|| group_paths(index, |p| file_name(p).to_lowercase()));
    by_name
        .get(&file_name(path).to_lowercase())
        .into_iter()
        .flatten()
}

/// The paths of the files in directories named `dir_name`, sorted.
fn in_dirs_named<'a>(index: &'a PathIndex, dir_name: &str) -> impl Iterator<Item = &'a String> {
    let by_dir = index
        .by_dir_name
        .get_or_init(|| group_paths(index, |p| file_name(dir_of(p)).to_string()));
    by_dir.get(dir_name).into_iter().flatten()
}

fn group_paths(index: &PathIndex, key: impl Fn(&str) -> String) -> HashMap<String, Vec<String>> {
    let mut groups: HashMap<String, Vec<String>> = HashMap::new();
    for path in &index.paths {
        groups.entry(key(path)).or_default().push(path.clone());
    }
    groups
}

// ------------------------------------------------------------------ Python

fn python_module_file(index: &PathIndex, base: &str) -> Option<String> {
    [
        format!("{base}.py"),
        join(base, "__init__.py"),
        format!("{base}.pyi"),
        join(base, "__init__.pyi"),
    ]
    .into_iter()
    .find(|c| index.paths.contains(c))
}

fn is_python_package(index: &PathIndex, dir: &str) -> bool {
    index.paths.contains(&join(dir, "__init__.py"))
        || index.paths.contains(&join(dir, "__init__.pyi"))
}

fn resolve_python(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    let mut out = BTreeSet::new();
    let real_names = || import.names.iter().filter(|n| n.as_str() != "*");
    if module.starts_with('.') {
        let dots = module.len() - module.trim_start_matches('.').len();
        let rest = &module[dots..];
        let mut base = dir_of(from_path).to_string();
        for _ in 1..dots {
            if base.is_empty() {
                return out;
            }
            base = dir_of(&base).to_string();
        }
        let target = join(&base, &rest.replace('.', "/"));
        if rest.is_empty() {
            for name in real_names() {
                match python_module_file(index, &join(&target, name)) {
                    Some(file) => out.insert(file),
                    None => python_module_file(index, &target)
                        .map(|f| out.insert(f))
                        .unwrap_or(false),
                };
            }
            if (import.names.iter().any(|n| n == "*") || import.names.is_empty())
                && let Some(file) = python_module_file(index, &target)
            {
                out.insert(file);
            }
        } else {
            if let Some(file) = python_module_file(index, &target) {
                out.insert(file);
            }
            for name in real_names() {
                if let Some(file) = python_module_file(index, &join(&target, name)) {
                    out.insert(file);
                }
            }
        }
        return out;
    }
    let rel = module.replace('.', "/");
    let try_root = |root: &str, out: &mut BTreeSet<String>| -> bool {
        let base = join(root, &rel);
        let Some(file) = python_module_file(index, &base) else {
            return false;
        };
        out.insert(file);
        for name in real_names() {
            if let Some(sub) = python_module_file(index, &join(&base, name)) {
                out.insert(sub);
            }
        }
        true
    };
    for ancestor in ancestors(from_path) {
        for root in [
            ancestor.to_string(),
            join(ancestor, "src"),
            join(ancestor, "lib"),
            join(ancestor, "Lib"),
        ] {
            if !root.is_empty() && is_python_package(index, &root) {
                continue;
            }
            if try_root(&root, &mut out) {
                return out;
            }
        }
    }
    if module.contains('.') {
        let mut candidates = Vec::new();
        for suffix in [format!("{rel}.py"), format!("{rel}/__init__.py")] {
            for path in ending_with(index, &suffix) {
                let root = path[..path.len() - suffix.len()].trim_end_matches('/');
                if root.is_empty() || !is_python_package(index, root) {
                    candidates.push(path);
                }
            }
        }
        if let Some(file) = nearest_unique(from_path, candidates).into_iter().next() {
            let base = file
                .trim_end_matches("/__init__.py")
                .trim_end_matches(".py")
                .to_string();
            out.insert(file);
            for name in real_names() {
                if let Some(sub) = python_module_file(index, &join(&base, name)) {
                    out.insert(sub);
                }
            }
        }
    }
    out
}

// ------------------------------------------------------------------ JavaScript / TypeScript

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

// ------------------------------------------------------------------ Rust

/// The crate root of a Rust file (repo-relative): (the root file's directory, the root
/// file, if the map holds it). A `lib.rs`, `main.rs`, `build.rs`, or a file of `tests/`,
/// `examples/`, `benches/` or `src/bin/` is a root itself; any other file's root is the
/// nearest ancestor's `lib.rs` or `main.rs`.
pub fn rust_crate_root(from_path: &str, index: &PathIndex) -> (String, Option<String>) {
    let name = file_name(from_path);
    let dir = dir_of(from_path);
    let dir_name = file_name(dir);
    let is_root_file = matches!(name, "lib.rs" | "main.rs" | "build.rs")
        || matches!(dir_name, "tests" | "examples" | "benches")
        || dir.ends_with("src/bin")
        || dir == "bin";
    if is_root_file {
        return (dir.to_string(), Some(from_path.to_string()));
    }
    for ancestor in ancestors(from_path) {
        for root in ["lib.rs", "main.rs"] {
            let file = join(ancestor, root);
            if index.paths.contains(&file) {
                return (ancestor.to_string(), Some(file));
            }
        }
    }
    (dir.to_string(), None)
}

/// The directory holding the child modules of the Rust file's module.
fn rust_module_dir(from_path: &str, crate_dir: &str, root_file: Option<&str>) -> String {
    let name = file_name(from_path);
    if name == "mod.rs"
        || root_file == Some(from_path)
        || (dir_of(from_path) == crate_dir && matches!(name, "lib.rs" | "main.rs"))
    {
        return dir_of(from_path).to_string();
    }
    join(dir_of(from_path), name.trim_end_matches(".rs"))
}

/// The file of the module whose child directory is `dir`.
fn rust_module_file(
    index: &PathIndex,
    dir: &str,
    crate_dir: &str,
    root_file: Option<&str>,
) -> Option<String> {
    if dir == crate_dir {
        return root_file.map(str::to_string);
    }
    [format!("{dir}.rs"), join(dir, "mod.rs")]
        .into_iter()
        .find(|c| index.paths.contains(c))
}

fn resolve_rust(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let (crate_dir, root_file) = rust_crate_root(from_path, index);
    let module_dir = rust_module_dir(from_path, &crate_dir, root_file.as_deref());
    if let Some((path, declared)) = rust_path_declaration(&import.module) {
        // The Rust Reference, "Modules: the path attribute": outside inline modules the
        // path is relative to the declaring file's directory; inside inline modules
        // `a::b` it is relative to the file's module directory (its own directory for a
        // mod-rs file, `dir/stem/` otherwise) joined with `a/b`.
        let segments: Vec<&str> = declared.split("::").collect();
        let inline = segments
            .get(1..segments.len().saturating_sub(1))
            .unwrap_or(&[]);
        let base = if inline.is_empty() {
            dir_of(from_path).to_string()
        } else {
            join(&module_dir, &inline.join("/"))
        };
        if let Some(file) = join_normalized(&base, &path.replace('\\', "/"))
            && index.paths.contains(&file)
        {
            out.insert(file);
        }
        return out;
    }
    let segments: Vec<&str> = import
        .module
        .split("::")
        .filter(|s| !s.is_empty())
        .collect();
    let Some(&first) = segments.first() else {
        return out;
    };
    let (dir, rest, external_ok) = match first {
        "crate" => (crate_dir.clone(), &segments[1..], true),
        "self" => (module_dir.clone(), &segments[1..], true),
        "super" => {
            let mut dir = module_dir.clone();
            let mut i = 0;
            while segments.get(i) == Some(&"super") {
                if dir == crate_dir || dir.is_empty() {
                    return out;
                }
                dir = dir_of(&dir).to_string();
                i += 1;
            }
            (dir, &segments[i..], true)
        }
        // `std::..`, `serde::..`, or a child module in scope (uniform paths).
        _ => (module_dir.clone(), &segments[..], false),
    };
    // `mod foo;` (recorded as `self::foo` with no names) names one file, `foo.rs` or
    // `foo/mod.rs`: no shorter prefix stands in for it. A declaration whose file is
    // missing, or is given by a `#[path]` attribute, stays unresolved with its text (the
    // prefix `self` had resolved it to the declaring file itself, an edge then dropped).
    let declaration = import.names.is_empty() && first == "self" && segments.len() == 2;
    let in_crate = RustCrate {
        dir: &crate_dir,
        root_file: root_file.as_deref(),
    };
    out = rust_paths(
        index,
        import,
        &in_crate,
        &dir,
        rest,
        external_ok,
        declaration,
    );
    // A crate of this repository by its library name (`use loci_store::map;` in another
    // member of a workspace, `use regex::Regex;` in the crate's own tests/): its root and
    // modules, when no module in scope has that name.
    if out.is_empty()
        && let Some((dir, root)) = index.rust_crates.get(first)
    {
        let other = RustCrate {
            dir,
            root_file: Some(root),
        };
        out = rust_paths(index, import, &other, dir, &segments[1..], true, false);
    }
    out
}

/// A Rust crate as module resolution sees it: the directory of its root file, and the
/// root file (`src/lib.rs`) if it is in the map.
struct RustCrate<'a> {
    dir: &'a str,
    root_file: Option<&'a str>,
}

/// The files a `use` path names below `dir` in `krate`: for each name imported (or the
/// path itself for a glob or a bare path), the longest prefix that is a module file.
fn rust_paths(
    index: &PathIndex,
    import: &Import,
    krate: &RustCrate<'_>,
    dir: &str,
    rest: &[&str],
    external_ok: bool,
    declaration: bool,
) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut paths: Vec<Vec<&str>> = Vec::new();
    let names: Vec<&str> = import
        .names
        .iter()
        .map(String::as_str)
        .filter(|n| *n != "*" && *n != "self")
        .collect();
    if names.len() < import.names.len() || names.is_empty() {
        paths.push(rest.to_vec());
    }
    for name in names {
        let mut p = rest.to_vec();
        p.push(name);
        paths.push(p);
    }
    for path in paths {
        // Longest prefix that is a module file.
        let mut found = None;
        for k in (0..=path.len()).rev() {
            if (k == 0 && !external_ok) || (declaration && k < path.len()) {
                break;
            }
            let target_dir = join(dir, &path[..k].join("/"));
            if let Some(file) = rust_module_file(index, &target_dir, krate.dir, krate.root_file) {
                found = Some(file);
                break;
            }
        }
        if let Some(file) = found {
            out.insert(file);
        }
    }
    out
}

// ------------------------------------------------------------------ Go

fn resolve_go(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let path = import.module.as_str();
    let mut out = BTreeSet::new();
    let best = index
        .go_modules
        .iter()
        .filter(|(_, module)| {
            path == module.as_str()
                || path
                    .strip_prefix(module.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
        .max_by_key(|(_, module)| module.len());
    let Some((mod_dir, module)) = best else {
        return out;
    };
    let rest = path[module.len()..].trim_start_matches('/');
    let dir = join(mod_dir, rest);
    let from_test = from_path.ends_with("_test.go");
    for file in files_in(index, &dir) {
        if file.ends_with(".go") && (from_test || !file.ends_with("_test.go")) {
            out.insert(file.clone());
        }
    }
    out
}

// ------------------------------------------------------------------ C / C++

fn resolve_include(from_path: &str, import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    let mut out = BTreeSet::new();
    if module.starts_with('<') || module.is_empty() {
        return out;
    }
    if let Some(relative) = join_normalized(dir_of(from_path), module)
        && index.paths.contains(&relative)
    {
        out.insert(relative);
        return out;
    }
    if let Some(rooted) = join_normalized("", module) {
        if index.paths.contains(&rooted) {
            out.insert(rooted);
            return out;
        }
        let clean = rooted.trim_start_matches("../").to_string();
        return nearest_unique(from_path, ending_with(index, &clean));
    }
    out
}

// ------------------------------------------------------------------ Java

fn namespace_files<'a>(index: &'a PathIndex, name: &str) -> Option<&'a BTreeSet<String>> {
    index
        .namespaces
        .get(name)
        .or_else(|| index.namespaces.get(&name.replace('\\', ".")))
        .or_else(|| index.namespaces.get(&name.replace('.', "\\")))
        .filter(|files| !files.is_empty())
}

fn file_stem(path: &str) -> &str {
    let name = file_name(path);
    name.split_once('.').map_or(name, |(stem, _)| stem)
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

// ------------------------------------------------------------------ C#

fn resolve_csharp(import: &Import, index: &PathIndex) -> BTreeSet<String> {
    let module = import.module.as_str();
    if let Some(files) = namespace_files(index, module) {
        return files.clone();
    }
    if let Some((namespace, type_name)) = module.rsplit_once('.')
        && let Some(files) = namespace_files(index, namespace)
    {
        let hits: BTreeSet<String> = files
            .iter()
            .filter(|f| file_stem(f) == type_name)
            .cloned()
            .collect();
        return if hits.is_empty() { files.clone() } else { hits };
    }
    BTreeSet::new()
}

// ------------------------------------------------------------------ Ruby

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

// ------------------------------------------------------------------ PHP

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Span;

    fn index(paths: &[&str]) -> PathIndex {
        PathIndex::with_paths(paths.iter().map(|p| p.to_string()))
    }

    fn imp(module: &str, names: &[&str]) -> Import {
        Import {
            module: module.into(),
            names: names.iter().map(|n| n.to_string()).collect(),
            span: Span::default(),
        }
    }

    #[test]
    fn normalizes_paths() {
        assert_eq!(
            join_normalized("a/b", "../c/./d.h").as_deref(),
            Some("a/c/d.h")
        );
        assert_eq!(join_normalized("", "../x"), None);
        assert_eq!(ancestors("a/b/c.py"), vec!["a/b", "a", ""]);
    }

    #[test]
    fn python_absolute_skips_package_roots_and_stdlib_names() {
        let idx = index(&[
            "app/__init__.py",
            "app/json.py",
            "app/models.py",
            "tests/json.py",
            "tests/test_app.py",
        ]);
        // `import json` from inside the package is the standard library, not app/json.py
        assert!(resolve(Language::Python, "app/models.py", &imp("json", &[]), &idx).is_empty());
        // from tests/, `app.models` is found at the repository root
        assert_eq!(
            resolve(
                Language::Python,
                "tests/test_app.py",
                &imp("app.models", &[]),
                &idx
            ),
            vec!["app/models.py"]
        );
        // `from app import models` adds the submodule
        assert_eq!(
            resolve(
                Language::Python,
                "tests/test_app.py",
                &imp("app", &["models"]),
                &idx
            ),
            vec!["app/__init__.py", "app/models.py"]
        );
    }

    #[test]
    fn rust_inline_module_paths_are_rebased() {
        let tests = vec!["tests".to_string()];
        assert_eq!(rust_rebase("super", &tests), "self");
        assert_eq!(rust_rebase("super::super::x", &tests), "super::x");
        assert_eq!(rust_rebase("self::helpers", &tests), "self::tests::helpers");
        assert_eq!(rust_rebase("crate::a", &tests), "crate::a");
        assert_eq!(rust_rebase("super", &[]), "super");
    }

    #[test]
    fn rust_paths() {
        let idx = index(&[
            "src/lib.rs",
            "src/store.rs",
            "src/store/schema.rs",
            "src/a/mod.rs",
            "src/a/b.rs",
        ]);
        let r = |from: &str, module: &str, names: &[&str]| {
            resolve(Language::Rust, from, &imp(module, names), &idx)
        };
        assert_eq!(r("src/lib.rs", "self::store", &[]), vec!["src/store.rs"]);
        assert_eq!(
            r("src/store.rs", "self::schema", &[]),
            vec!["src/store/schema.rs"]
        );
        assert_eq!(r("src/a/b.rs", "super", &["x"]), vec!["src/a/mod.rs"]);
        assert_eq!(
            r("src/a/b.rs", "crate::store::schema", &["Table"]),
            vec!["src/store/schema.rs"]
        );
        assert_eq!(
            r("src/a/mod.rs", "crate", &["store", "a"]),
            vec!["src/a/mod.rs", "src/store.rs"]
        );
        assert!(r("src/lib.rs", "std::io", &["Read"]).is_empty());
    }

    /// Fault: a `use` of another crate of the repository by its library name was never
    /// resolved (`use loci_store::map;` in a workspace member, `use regex::Regex;` in the
    /// crate's own tests/), so `impact` stopped at crate boundaries. A crate the index
    /// knows by name resolves like `crate::` in it, unless a module in scope has the name.
    #[test]
    fn fault_a_use_of_another_crate_of_the_repository_was_unresolved() {
        let mut idx = index(&[
            "alpha/src/lib.rs",
            "alpha/src/parse.rs",
            "alpha/tests/t.rs",
            "beta/src/lib.rs",
            "beta/src/gamma.rs",
            "gamma/src/lib.rs",
        ]);
        for (name, dir) in [("alpha_core", "alpha/src"), ("gamma", "gamma/src")] {
            idx.rust_crates
                .insert(name.into(), (dir.into(), format!("{dir}/lib.rs")));
        }
        let r = |from: &str, module: &str, names: &[&str]| {
            resolve(Language::Rust, from, &imp(module, names), &idx)
        };
        assert_eq!(
            r("beta/src/lib.rs", "alpha_core::parse", &["Parser"]),
            vec!["alpha/src/parse.rs"]
        );
        assert_eq!(
            r("beta/src/lib.rs", "alpha_core", &["Thing"]),
            vec!["alpha/src/lib.rs"]
        );
        assert_eq!(
            r("alpha/tests/t.rs", "alpha_core::parse", &["Parser"]),
            vec!["alpha/src/parse.rs"]
        );
        // `gamma` is also beta's own child module: uniform paths take the module in scope.
        assert_eq!(
            r("beta/src/lib.rs", "gamma", &["f"]),
            vec!["beta/src/gamma.rs"]
        );
        assert!(r("beta/src/lib.rs", "serde", &["Serialize"]).is_empty());
    }

    /// Fault: `mod gone;` (no such file) and `#[path = "other/b.rs"] mod b;` vanished from
    /// `loci deps`: the prefix `self` resolved them to the declaring file itself, and that
    /// edge was dropped. A module declaration names one file or stays unresolved.
    #[test]
    fn fault_a_rust_mod_declaration_without_its_file_vanished_from_deps() {
        let idx = index(&["src/main.rs", "src/a.rs", "src/other/b.rs"]);
        let r = |module: &str, names: &[&str]| {
            resolve(Language::Rust, "src/main.rs", &imp(module, names), &idx)
        };
        assert_eq!(r("self::a", &[]), vec!["src/a.rs"]);
        assert!(r("self::gone", &[]).is_empty());
        assert!(r("self::b", &[]).is_empty());
        // A `use` of a missing item still resolves to its longest module prefix.
        assert_eq!(r("self::a", &["missing"]), vec!["src/a.rs"]);
    }

    #[test]
    fn python_relative() {
        let idx = index(&[
            "pkg/__init__.py",
            "pkg/a.py",
            "pkg/sub/__init__.py",
            "pkg/sub/m.py",
            "pkg/sub/deep/x.py",
        ]);
        let r = |from: &str, module: &str, names: &[&str]| {
            resolve(Language::Python, from, &imp(module, names), &idx)
        };
        assert_eq!(r("pkg/sub/m.py", "..a", &["f"]), vec!["pkg/a.py"]);
        assert_eq!(
            r("pkg/sub/m.py", ".", &["deep"]),
            vec!["pkg/sub/__init__.py"],
            "`deep` has no __init__ or .py: an attribute"
        );
        assert_eq!(
            r("pkg/a.py", ".", &["sub", "a"]),
            vec!["pkg/a.py", "pkg/sub/__init__.py"]
        );
        assert_eq!(
            r("pkg/a.py", ".sub", &["m"]),
            vec!["pkg/sub/__init__.py", "pkg/sub/m.py"]
        );
        assert!(
            r("pkg/a.py", "....x", &[]).is_empty(),
            "above the repository root"
        );
    }

    #[test]
    fn python_absolute_under_src_and_nearest() {
        let idx = index(&[
            "src/acme/__init__.py",
            "src/acme/core.py",
            "tests/test_core.py",
            "vendor/lib/acme/core.py",
        ]);
        assert_eq!(
            resolve(
                Language::Python,
                "tests/test_core.py",
                &imp("acme.core", &[]),
                &idx
            ),
            vec!["src/acme/core.py"]
        );
        // a dotted module found by suffix elsewhere (no shared source root): unique or nearest
        let idx = index(&[
            "services/api/app/__init__.py",
            "services/api/app/db.py",
            "scripts/run.py",
        ]);
        assert_eq!(
            resolve(
                Language::Python,
                "scripts/run.py",
                &imp("app.db", &[]),
                &idx
            ),
            vec!["services/api/app/db.py"]
        );
    }

    #[test]
    fn javascript_extensions_and_index() {
        let idx = index(&[
            "src/a.ts",
            "src/b/index.tsx",
            "src/c.js",
            "src/d.d.ts",
            "src/e.mjs",
        ]);
        let r =
            |from: &str, module: &str| resolve(Language::TypeScript, from, &imp(module, &[]), &idx);
        assert_eq!(r("src/x.ts", "./a"), vec!["src/a.ts"]);
        assert_eq!(
            r("src/x.ts", "./a.js"),
            vec!["src/a.ts"],
            "ESM-style .js for a .ts file"
        );
        assert_eq!(r("src/x.ts", "./b"), vec!["src/b/index.tsx"]);
        assert_eq!(r("src/x.ts", "./c"), vec!["src/c.js"]);
        assert_eq!(r("src/x.ts", "./d"), vec!["src/d.d.ts"]);
        assert_eq!(r("src/deep/x.ts", "../e.mjs"), vec!["src/e.mjs"]);
        assert!(r("src/x.ts", "react").is_empty());
        assert!(r("src/x.ts", "../../../a").is_empty());
    }

    /// Fault found by a fresh-user trial: `'./lib/'` resolved to `src/lib.ts`, where Node
    /// and TypeScript take `src/lib/index.ts` only (a trailing slash names a directory).
    #[test]
    fn fault_a_javascript_import_with_a_trailing_slash_took_the_file_beside_the_folder() {
        let idx = index(&[
            "src/lib.ts",
            "src/lib/index.ts",
            "src/only.ts",
            "src/index.ts",
        ]);
        let r =
            |from: &str, module: &str| resolve(Language::TypeScript, from, &imp(module, &[]), &idx);
        assert_eq!(r("src/x.ts", "./lib/"), vec!["src/lib/index.ts"]);
        assert_eq!(r("src/x.ts", "./lib"), vec!["src/lib.ts"]);
        assert!(r("src/x.ts", "./only/").is_empty());
        assert_eq!(r("src/lib/y.ts", ".."), vec!["src/index.ts"]);
        assert_eq!(r("src/lib/y.ts", "."), vec!["src/lib/index.ts"]);
    }

    #[test]
    fn go_packages_via_go_mod() {
        let mut idx = index(&[
            "go.mod",
            "cmd/main.go",
            "pkg/store/a.go",
            "pkg/store/b.go",
            "pkg/store/a_test.go",
            "pkg/store/sub/c.go",
            "tools/go.mod",
            "tools/gen/gen.go",
        ]);
        idx.go_modules
            .insert(String::new(), "example.com/app".into());
        idx.go_modules
            .insert("tools".into(), "example.com/app/tools".into());
        let r = |from: &str, module: &str| resolve(Language::Go, from, &imp(module, &[]), &idx);
        assert_eq!(
            r("cmd/main.go", "example.com/app/pkg/store"),
            vec!["pkg/store/a.go", "pkg/store/b.go"]
        );
        assert_eq!(
            r("pkg/store/x_test.go", "example.com/app/pkg/store"),
            vec!["pkg/store/a.go", "pkg/store/a_test.go", "pkg/store/b.go"]
        );
        assert_eq!(
            r("cmd/main.go", "example.com/app/tools/gen"),
            vec!["tools/gen/gen.go"],
            "longest module path wins"
        );
        assert!(r("cmd/main.go", "fmt").is_empty());
        assert!(
            r("cmd/main.go", "example.com/application").is_empty(),
            "a prefix must end at a path segment"
        );
    }

    #[test]
    fn c_includes() {
        let idx = index(&[
            "src/a.c",
            "src/a.h",
            "include/lib/api.h",
            "util.h",
            "x/dup.h",
            "y/dup.h",
        ]);
        let r = |from: &str, module: &str| resolve(Language::C, from, &imp(module, &[]), &idx);
        assert_eq!(r("src/a.c", "a.h"), vec!["src/a.h"]);
        assert_eq!(r("src/a.c", "../util.h"), vec!["util.h"]);
        assert_eq!(r("src/a.c", "util.h"), vec!["util.h"], "repository root");
        assert_eq!(
            r("src/a.c", "lib/api.h"),
            vec!["include/lib/api.h"],
            "unique suffix"
        );
        assert!(r("src/a.c", "dup.h").is_empty(), "ambiguous suffix");
        assert!(r("src/a.c", "<stdio.h>").is_empty());
    }

    #[test]
    fn java_csharp_ruby_php() {
        let mut idx = index(&[
            "app/src/main/java/com/acme/App.java",
            "app/src/main/java/com/acme/util/Strings.java",
            "lib/src/main/java/com/acme/model/User.java",
            "lib/src/main/java/com/acme/model/Role.java",
            "cs/Billing/Invoice.cs",
            "cs/Billing/Tax.cs",
            "rb/lib/shop.rb",
            "rb/lib/shop/cart.rb",
            "rb/app/run.rb",
            "php/src/Models/User.php",
            "php/src/helpers.php",
            "php/src/Http/Controller.php",
        ]);
        idx.namespaces.insert(
            "com.acme.model".into(),
            [
                "lib/src/main/java/com/acme/model/User.java".to_string(),
                "lib/src/main/java/com/acme/model/Role.java".to_string(),
            ]
            .into(),
        );
        idx.namespaces.insert(
            "Acme.Billing".into(),
            [
                "cs/Billing/Invoice.cs".to_string(),
                "cs/Billing/Tax.cs".to_string(),
            ]
            .into(),
        );
        idx.namespaces.insert(
            "App\\Models".into(),
            ["php/src/Models/User.php".to_string()].into(),
        );
        let app = "app/src/main/java/com/acme/App.java";
        let r =
            |lang: Language, from: &str, module: &str| resolve(lang, from, &imp(module, &[]), &idx);
        assert_eq!(
            r(Language::Java, app, "com.acme.util.Strings"),
            vec!["app/src/main/java/com/acme/util/Strings.java"]
        );
        assert_eq!(
            r(Language::Java, app, "com.acme.model.User"),
            vec!["lib/src/main/java/com/acme/model/User.java"]
        );
        assert_eq!(
            r(Language::Java, app, "com.acme.util.Strings.capitalize"),
            vec!["app/src/main/java/com/acme/util/Strings.java"],
            "static import"
        );
        assert_eq!(r(Language::Java, app, "com.acme.model.*").len(), 2);
        assert!(r(Language::Java, app, "java.util.List").is_empty());
        assert_eq!(
            r(Language::CSharp, "cs/App/Program.cs", "Acme.Billing").len(),
            2
        );
        assert_eq!(
            r(Language::CSharp, "cs/App/Program.cs", "Acme.Billing.Tax"),
            vec!["cs/Billing/Tax.cs"]
        );
        assert!(r(Language::CSharp, "cs/App/Program.cs", "System").is_empty());
        assert_eq!(
            r(Language::Ruby, "rb/lib/shop.rb", "./shop/cart"),
            vec!["rb/lib/shop/cart.rb"]
        );
        assert_eq!(
            r(Language::Ruby, "rb/app/run.rb", "shop"),
            vec!["rb/lib/shop.rb"]
        );
        assert!(r(Language::Ruby, "rb/app/run.rb", "json").is_empty());
        assert_eq!(
            r(
                Language::Php,
                "php/src/Http/Controller.php",
                "App\\Models\\User"
            ),
            vec!["php/src/Models/User.php"]
        );
        assert_eq!(
            r(
                Language::Php,
                "php/src/Http/Controller.php",
                "__DIR__/../helpers.php"
            ),
            vec!["php/src/helpers.php"]
        );
        assert_eq!(
            r(
                Language::Php,
                "php/src/Http/Controller.php",
                "App\\Http\\Controller"
            ),
            vec!["php/src/Http/Controller.php"],
            "PSR-4 prefix dropped"
        );
    }
}
