//! Java and C#: what makes a receiver's type evident (`crate::types`): typed locals
//! (`Foo x = ..`; `var x = new Foo()`), parameters (`Foo x`), fields (`this.x`, or a bare
//! field name), `new Foo(..)`, `super` (C#'s `base`: the class's base), and calls whose
//! declared return type the map knows (`Foo.create()`, `x.build()`). The two grammars name these nodes differently; one set of
//! hooks reads both.

use tree_sitter::Node;

use crate::analyze::node_text;
use crate::types::{Bound, Cx, SUPER, TypeEnv, Typing, member_call, type_path};

/// The receiver-type hooks of Java and C#.
pub(crate) const TYPING: Typing = Typing {
    bind,
    expr,
    declared,
    return_type,
    bases: crate::types::declared_bases,
};

/// Types whose members are their argument's (C# `Task<T>` once awaited, `Nullable<T>`).
const WRAPPERS: [&str; 3] = ["Optional", "Task", "Nullable"];

const CLASSES: [&str; 5] = [
    "class_declaration",
    "record_declaration",
    "struct_declaration",
    "enum_declaration",
    "interface_declaration",
];

const FUNCTIONS: [&str; 5] = [
    "method_declaration",
    "constructor_declaration",
    "lambda_expression",
    "local_function_statement",
    "compact_constructor_declaration",
];

/// A declarator's initial value: Java's `value` field, C#'s `= expr` (an
/// `equals_value_clause`, or the expression after `=` in newer grammars).
fn initial_value(declarator: Node<'_>) -> Option<Node<'_>> {
    if let Some(value) = declarator.child_by_field_name("value") {
        return Some(value);
    }
    let mut cursor = declarator.walk();
    let mut after_equals = false;
    for child in declarator.children(&mut cursor) {
        if child.kind() == "equals_value_clause" {
            return child.named_child(0);
        }
        if child.kind() == "=" {
            after_equals = true;
        } else if after_equals && child.is_named() {
            return Some(child);
        }
    }
    None
}

/// The name a declarator declares (`name` field, or its first identifier).
fn declarator_name(declarator: Node<'_>) -> Option<Node<'_>> {
    declarator
        .child_by_field_name("name")
        .or_else(|| declarator.named_child(0))
        .filter(|n| n.kind() == "identifier")
}

/// Whether a written type is an inferred one (`var`).
fn inferred(ty: Node<'_>, bytes: &[u8]) -> bool {
    ty.kind() == "implicit_type" || node_text(ty, bytes) == "var"
}

fn bind<'t>(node: Node<'t>, ancestors: &[Node<'t>], bytes: &[u8], env: &mut TypeEnv<'t>) {
    match node.kind() {
        // Java `Foo x = ..;`, C# `variable_declaration` inside a local declaration or a
        // field.
        "local_variable_declaration" | "field_declaration" | "variable_declaration" => {
            let (decl, ty) = match node.child_by_field_name("type") {
                Some(ty) => (node, ty),
                None => return,
            };
            let field = node.kind() == "field_declaration"
                || ancestors
                    .last()
                    .is_some_and(|p| p.kind() == "field_declaration");
            let owner = ancestors
                .iter()
                .rev()
                .find(|a| CLASSES.contains(&a.kind()))
                .and_then(|c| c.child_by_field_name("name"));
            let scope = ancestors
                .iter()
                .rev()
                .find(|a| FUNCTIONS.contains(&a.kind()) || a.kind() == "block")
                .copied();
            let mut cursor = decl.walk();
            let declarators: Vec<Node<'t>> = decl
                .named_children(&mut cursor)
                .filter(|c| c.kind() == "variable_declarator")
                .collect();
            for declarator in declarators {
                let Some(name) = declarator_name(declarator) else {
                    continue;
                };
                let bound = if inferred(ty, bytes) {
                    match initial_value(declarator) {
                        Some(value) => Bound::Expr(value),
                        None => continue,
                    }
                } else {
                    Bound::Type(ty)
                };
                let name = node_text(name, bytes);
                if field {
                    if let Some(owner) = owner {
                        env.field(node_text(owner, bytes), name, bound);
                    }
                } else if let Some(scope) = scope {
                    env.local(name, scope, declarator.end_byte(), bound);
                }
            }
        }
        // Java `formal_parameter`, C# `parameter`; C# properties are fields here.
        "formal_parameter" | "parameter" | "property_declaration" => {
            let (Some(ty), Some(name)) = (
                node.child_by_field_name("type"),
                node.child_by_field_name("name"),
            ) else {
                return;
            };
            if node.kind() == "property_declaration" {
                let owner = ancestors
                    .iter()
                    .rev()
                    .find(|a| CLASSES.contains(&a.kind()))
                    .and_then(|c| c.child_by_field_name("name"));
                if let Some(owner) = owner {
                    env.field(
                        node_text(owner, bytes),
                        node_text(name, bytes),
                        Bound::Type(ty),
                    );
                }
                return;
            }
            if let Some(function) = ancestors
                .iter()
                .rev()
                .find(|a| FUNCTIONS.contains(&a.kind()))
            {
                env.local(
                    node_text(name, bytes),
                    *function,
                    node.start_byte(),
                    Bound::Type(ty),
                );
            }
        }
        // `class Child extends Base` (C#: `class Child : Base`, its first base unless named
        // as an interface is, `IFoo`: a class implementing only interfaces has `object` as
        // its base): `super.m()` (C#: `base.M()`) in it is `Base`'s `m`.
        "class_declaration" => {
            let mut cursor = node.walk();
            let listed = node
                .named_children(&mut cursor)
                .find(|c| c.kind() == "base_list")
                .and_then(|list| list.named_child(0))
                .filter(|base| !interface_name(node_text(*base, bytes)));
            let (Some(name), Some(base)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("superclass")
                    .and_then(|s| s.named_child(0))
                    .or(listed),
            ) else {
                return;
            };
            env.field(node_text(name, bytes), SUPER, Bound::Type(base));
        }
        _ => {}
    }
}

/// Whether a C# type's name is an interface's by the language's convention: `I` then a
/// capital (`IFoo`, `Ns.IFoo<T>`).
fn interface_name(written: &str) -> bool {
    let last = written.split('<').next().unwrap_or(written);
    let last = last.rsplit('.').next().unwrap_or(last).as_bytes();
    last.len() > 1 && last[0] == b'I' && last[1].is_ascii_uppercase()
}

/// The class around `at`.
fn enclosing_class<'b>(at: Node<'_>, bytes: &'b [u8]) -> Option<&'b str> {
    let mut node = at.parent();
    while let Some(n) = node {
        if CLASSES.contains(&n.kind()) {
            return n.child_by_field_name("name").map(|n| node_text(n, bytes));
        }
        node = n.parent();
    }
    None
}

fn is_this(node: Node<'_>) -> bool {
    matches!(node.kind(), "this" | "this_expression")
}

fn expr(node: Node<'_>, cx: &Cx<'_, '_>) -> Option<String> {
    let bytes = cx.bytes;
    match node.kind() {
        "identifier" => {
            let name = node_text(node, bytes);
            cx.local(name, node.start_byte())
                .or_else(|| cx.field(enclosing_class(node, bytes)?, name))
        }
        "parenthesized_expression" | "await_expression" => cx.expr(node.named_child(0)?),
        "super" | "base" => cx.field(enclosing_class(node, bytes)?, SUPER),
        "object_creation_expression" => declared(node.child_by_field_name("type")?, bytes),
        "cast_expression" => declared(node.child_by_field_name("type")?, bytes),
        // `this.x`.
        "field_access" | "member_access_expression" => {
            let object = node
                .child_by_field_name("object")
                .or_else(|| node.child_by_field_name("expression"))?;
            let name = node
                .child_by_field_name("field")
                .or_else(|| node.child_by_field_name("name"))?;
            let owner = if is_this(object) {
                enclosing_class(node, bytes)?.to_string()
            } else {
                cx.expr(object)?
            };
            cx.field(&owner, node_text(name, bytes))
        }
        // Java `x.m()`, C# `x.M()` (a member access as the invoked function).
        "method_invocation" | "invocation_expression" => {
            let (object, name) = if node.kind() == "method_invocation" {
                (
                    node.child_by_field_name("object")?,
                    node.child_by_field_name("name")?,
                )
            } else {
                let function = node.child_by_field_name("function")?;
                if function.kind() != "member_access_expression" {
                    return None;
                }
                (
                    function.child_by_field_name("expression")?,
                    function.child_by_field_name("name")?,
                )
            };
            let name = node_text(name, bytes);
            let ty = if is_this(object) {
                enclosing_class(node, bytes).map(str::to_string)
            } else {
                cx.expr(object)
            };
            member_call(ty, object, name, bytes)
        }
        _ => None,
    }
}

fn declared(node: Node<'_>, bytes: &[u8]) -> Option<String> {
    let text = node_text(node, bytes).trim_end_matches('?');
    let ty = type_path(text, &WRAPPERS)?;
    (!matches!(
        ty.as_str(),
        "var" | "void" | "int" | "long" | "bool" | "boolean" | "string" | "String" | "object"
    ))
    .then_some(ty)
}

/// The type written before the name: `public static Foo create(..) {` → `Foo`.
fn return_type(signature: &str, name: &str) -> Option<String> {
    let at = signature.find(&format!("{name}("))?;
    let before = signature[..at].trim_end();
    // The last whitespace-separated word, generic arguments kept whole.
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in before.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ' ' if depth == 0 => start = i + 1,
            _ => {}
        }
    }
    let ty = type_path(before[start..].trim_end_matches('?'), &WRAPPERS)?;
    (!matches!(ty.as_str(), "void" | "async" | "static" | "public")).then_some(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// C#'s `class Impl : IFoo`: its first base is an interface, so `base.M()` is on
    /// `object`, not `IFoo.M` (a fresh-user trial had it at 0.7).
    #[test]
    fn fault_a_csharp_interface_was_taken_for_the_base_class() {
        for (name, interface) in [
            ("IFoo", true),
            ("N.A.IFoo<int>", true),
            ("Item", false),
            ("I", false),
            ("Base<IFoo>", false),
        ] {
            assert_eq!(interface_name(name), interface, "{name}");
        }
    }

    #[test]
    fn return_types_come_before_the_name() {
        assert_eq!(
            return_type("public static Repo open(String path) {", "open").as_deref(),
            Some("Repo")
        );
        assert_eq!(
            return_type("public async Task<Order> Place(Cart c)", "Place").as_deref(),
            Some("Order")
        );
        assert_eq!(return_type("public void run() {", "run"), None);
        assert_eq!(return_type("Repo(String path) {", "Repo"), None);
    }
}
