//! JavaScript and TypeScript: what makes a receiver's type evident (`crate::types`):
//! `new Foo(..)`, annotated locals and parameters (`const x: Foo`, `(x: Foo) =>`), class
//! fields (`db: Db;`, `this.db = new Db()`, `constructor(private db: Db)`), `x as Foo`,
//! and calls whose declared return type the map knows (`makeFoo()`, `x.build()`).

use tree_sitter::Node;

use crate::analyze::node_text;
use crate::types::{Bound, Cx, SUPER, TypeEnv, Typing, after_parameters, member_call, type_path};

/// The receiver-type hooks of JavaScript and TypeScript.
pub(crate) const TYPING: Typing = Typing {
    bind,
    expr,
    declared,
    return_type,
    bases: crate::types::declared_bases,
};

/// Types whose members are their argument's once awaited or unwrapped.
const WRAPPERS: [&str; 3] = ["Promise", "Readonly", "NonNullable"];

const FUNCTIONS: [&str; 6] = [
    "function_declaration",
    "function_expression",
    "arrow_function",
    "method_definition",
    "generator_function_declaration",
    "function",
];

const CLASSES: [&str; 3] = ["class_declaration", "class", "abstract_class_declaration"];

fn class_name<'b>(ancestors: &[Node<'_>], bytes: &'b [u8]) -> Option<&'b str> {
    ancestors
        .iter()
        .rev()
        .find(|a| CLASSES.contains(&a.kind()))
        .and_then(|c| c.child_by_field_name("name"))
        .map(|n| node_text(n, bytes))
}

fn bind<'t>(node: Node<'t>, ancestors: &[Node<'t>], bytes: &[u8], env: &mut TypeEnv<'t>) {
    match node.kind() {
        "variable_declarator" => {
            let Some(name) = node.child_by_field_name("name") else {
                return;
            };
            if name.kind() != "identifier" {
                return;
            }
            let bound = match (
                node.child_by_field_name("type"),
                node.child_by_field_name("value"),
            ) {
                (Some(ty), _) => Bound::Type(ty),
                (None, Some(value)) => Bound::Expr(value),
                (None, None) => return,
            };
            let scope = ancestors
                .iter()
                .rev()
                .find(|a| FUNCTIONS.contains(&a.kind()) || a.kind() == "statement_block")
                .or(ancestors.first());
            if let Some(scope) = scope {
                env.local(node_text(name, bytes), *scope, node.end_byte(), bound);
            }
        }
        "required_parameter" | "optional_parameter" => {
            let (Some(pattern), Some(ty)) = (
                node.child_by_field_name("pattern"),
                node.child_by_field_name("type"),
            ) else {
                return;
            };
            if pattern.kind() != "identifier" {
                return;
            }
            let name = node_text(pattern, bytes);
            let Some(function) = ancestors
                .iter()
                .rev()
                .find(|a| FUNCTIONS.contains(&a.kind()))
            else {
                return;
            };
            env.local(name, *function, node.start_byte(), Bound::Type(ty));
            // `constructor(private db: Db)`: a field too.
            let mut cursor = node.walk();
            let property = node
                .children(&mut cursor)
                .any(|c| matches!(c.kind(), "accessibility_modifier" | "readonly"));
            if property && let Some(class) = class_name(ancestors, bytes) {
                env.field(class, name, Bound::Type(ty));
            }
        }
        "public_field_definition" | "field_definition" => {
            let Some(name) = node
                .child_by_field_name("name")
                .or_else(|| node.child_by_field_name("property"))
            else {
                return;
            };
            let bound = match (
                node.child_by_field_name("type"),
                node.child_by_field_name("value"),
            ) {
                (Some(ty), _) => Bound::Type(ty),
                (None, Some(value)) => Bound::Expr(value),
                (None, None) => return,
            };
            if let Some(class) = class_name(ancestors, bytes) {
                env.field(class, node_text(name, bytes), bound);
            }
        }
        // `this.db = new Db()` in a method.
        "assignment_expression" => {
            let (Some(left), Some(right)) = (
                node.child_by_field_name("left"),
                node.child_by_field_name("right"),
            ) else {
                return;
            };
            if left.kind() != "member_expression" {
                return;
            }
            let (Some(object), Some(property)) = (
                left.child_by_field_name("object"),
                left.child_by_field_name("property"),
            ) else {
                return;
            };
            if object.kind() == "this"
                && let Some(class) = class_name(ancestors, bytes)
            {
                env.field(class, node_text(property, bytes), Bound::Expr(right));
            }
        }
        // `class Child extends Base`: `super.m()` in it is `Base`'s `m` (TypeScript's
        // `extends_clause`, JavaScript's heritage holding the expression itself).
        "class_heritage" => {
            let base = match node.named_child(0) {
                Some(clause) if clause.kind() == "extends_clause" => {
                    clause.child_by_field_name("value")
                }
                other => other,
            };
            if let Some(base) =
                base.filter(|b| matches!(b.kind(), "identifier" | "member_expression"))
                && let Some(class) = class_name(ancestors, bytes)
            {
                env.field(class, SUPER, Bound::Type(base));
            }
        }
        _ => {}
    }
}

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

fn expr(node: Node<'_>, cx: &Cx<'_, '_>) -> Option<String> {
    let bytes = cx.bytes;
    match node.kind() {
        "identifier" => cx.local(node_text(node, bytes), node.start_byte()),
        "parenthesized_expression" | "await_expression" | "non_null_expression" => {
            cx.expr(node.named_child(0)?)
        }
        "as_expression" | "satisfies_expression" => declared(node.named_child(1)?, bytes),
        "super" => cx.field(enclosing_class(node, bytes)?, SUPER),
        "new_expression" => {
            let constructor = node.child_by_field_name("constructor")?;
            matches!(constructor.kind(), "identifier" | "member_expression")
                .then(|| type_path(node_text(constructor, bytes), &[]))
                .flatten()
        }
        "member_expression" => {
            let object = node.child_by_field_name("object")?;
            let property = node_text(node.child_by_field_name("property")?, bytes);
            let owner = if object.kind() == "this" {
                enclosing_class(node, bytes)?.to_string()
            } else {
                cx.expr(object)?
            };
            cx.field(&owner, property)
        }
        "call_expression" => {
            let function = node.child_by_field_name("function")?;
            match function.kind() {
                "identifier" => Some(format!("{}()", node_text(function, bytes))),
                "member_expression" => {
                    let object = function.child_by_field_name("object")?;
                    let name = node_text(function.child_by_field_name("property")?, bytes);
                    let ty = if object.kind() == "this" {
                        enclosing_class(node, bytes).map(str::to_string)
                    } else {
                        cx.expr(object)
                    };
                    member_call(ty, object, name, bytes)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A type annotation (`: Foo`, the `type_annotation` node or the type itself).
fn declared(node: Node<'_>, bytes: &[u8]) -> Option<String> {
    let text = node_text(node, bytes).trim_start().trim_start_matches(':');
    annotation(text)
}

fn annotation(text: &str) -> Option<String> {
    let first = text
        .split('|')
        .map(str::trim)
        .find(|t| !matches!(*t, "null" | "undefined" | ""))?;
    let ty = type_path(first, &WRAPPERS)?;
    (!matches!(
        ty.as_str(),
        "string" | "number" | "boolean" | "any" | "unknown" | "void" | "object" | "never"
    ))
    .then_some(ty)
}

/// `: T` after the parameters, up to the body.
fn return_type(signature: &str, name: &str) -> Option<String> {
    let rest = after_parameters(signature, name)?;
    let ty = rest.strip_prefix(':')?;
    let ty = ty
        .split(['{', '='])
        .next()
        .unwrap_or(ty)
        .trim_end_matches(';');
    annotation(ty.trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_annotations_unwrap_promises() {
        assert_eq!(
            return_type("async open(path: string): Promise<Db> {", "open").as_deref(),
            Some("Db")
        );
        assert_eq!(
            return_type("export function makeCart(): Cart {", "makeCart").as_deref(),
            Some("Cart")
        );
        assert_eq!(return_type("function f(x) {", "f"), None);
    }
}
