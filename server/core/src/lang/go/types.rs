//! Go: what makes a receiver's type evident (`crate::types`): a method's receiver (a call
//! on it is a call on the method's own type, as on `self`), typed parameters, `x := ..`
//! and `var x T = ..` bindings, struct fields, composite literals (`&Server{}`) and calls
//! whose declared result the map knows (`NewServer()`, `s.Conn()`).

use tree_sitter::Node;

use crate::analyze::node_text;
use crate::types::{Bound, Cx, TypeEnv, Typing, after_parameters, call_on, type_path};

/// The receiver-type hooks of Go.
pub(crate) const TYPING: Typing = Typing {
    bind,
    expr,
    declared,
    return_type,
    bases: crate::types::no_bases,
};

fn named_children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

fn bind<'t>(node: Node<'t>, ancestors: &[Node<'t>], bytes: &[u8], env: &mut TypeEnv<'t>) {
    match node.kind() {
        "parameter_declaration" => {
            let Some(ty) = node.child_by_field_name("type") else {
                return;
            };
            // parameter_declaration < parameter_list < function, method or literal.
            let (Some(list), Some(function)) =
                (ancestors.last(), ancestors.iter().rev().nth(1).copied())
            else {
                return;
            };
            let receiver = function.kind() == "method_declaration"
                && function.child_by_field_name("receiver") == Some(*list);
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let bound = if receiver {
                    Bound::Own(ty)
                } else {
                    Bound::Type(ty)
                };
                env.local(node_text(name, bytes), function, node.start_byte(), bound);
            }
        }
        "short_var_declaration" | "var_spec" => {
            let Some(scope) = ancestors.last() else {
                return;
            };
            let (names, values): (Vec<Node<'t>>, Vec<Node<'t>>) = if node.kind() == "var_spec" {
                let mut cursor = node.walk();
                let names = node.children_by_field_name("name", &mut cursor).collect();
                let values = node
                    .child_by_field_name("value")
                    .map(named_children)
                    .unwrap_or_default();
                (names, values)
            } else {
                (
                    node.child_by_field_name("left")
                        .map(named_children)
                        .unwrap_or_default(),
                    node.child_by_field_name("right")
                        .map(named_children)
                        .unwrap_or_default(),
                )
            };
            let ty = node.child_by_field_name("type");
            for (i, name) in names.iter().enumerate() {
                if name.kind() != "identifier" {
                    continue;
                }
                let bound = match (ty, values.get(i)) {
                    (Some(ty), _) => Bound::Type(ty),
                    (None, Some(value)) => Bound::Expr(*value),
                    // `x, err := f()`: the first result.
                    (None, None) if i == 0 && values.len() == 1 => Bound::Expr(values[0]),
                    (None, None) => continue,
                };
                env.local(node_text(*name, bytes), *scope, node.end_byte(), bound);
            }
        }
        "field_declaration" => {
            let Some(ty) = node.child_by_field_name("type") else {
                return;
            };
            let owner = ancestors
                .iter()
                .rev()
                .find(|a| a.kind() == "type_spec")
                .and_then(|s| s.child_by_field_name("name"));
            let Some(owner) = owner else { return };
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                env.field(
                    node_text(owner, bytes),
                    node_text(name, bytes),
                    Bound::Type(ty),
                );
            }
        }
        _ => {}
    }
}

fn expr(node: Node<'_>, cx: &Cx<'_, '_>) -> Option<String> {
    let bytes = cx.bytes;
    match node.kind() {
        "identifier" => cx.local(node_text(node, bytes), node.start_byte()),
        "parenthesized_expression" => cx.expr(node.named_child(0)?),
        "unary_expression" => cx.expr(node.child_by_field_name("operand")?),
        "composite_literal" => declared(node.child_by_field_name("type")?, bytes),
        "selector_expression" => {
            // A field of a typed value: `s.conn`.
            let operand = node.child_by_field_name("operand")?;
            let field = node_text(node.child_by_field_name("field")?, bytes);
            let owner = cx.expr(operand)?;
            cx.field(&owner, field)
        }
        "call_expression" => {
            let function = node.child_by_field_name("function")?;
            match function.kind() {
                "identifier" => Some(format!("{}()", node_text(function, bytes))),
                "selector_expression" => {
                    let operand = function.child_by_field_name("operand")?;
                    let name = node_text(function.child_by_field_name("field")?, bytes);
                    match cx.expr(operand) {
                        Some(ty) => call_on(&ty, name),
                        // `pkg.NewServer()`: a function of an imported package.
                        None if operand.kind() == "identifier"
                            && cx
                                .local(node_text(operand, bytes), operand.start_byte())
                                .is_none() =>
                        {
                            Some(format!("{name}()"))
                        }
                        None => None,
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn declared(node: Node<'_>, bytes: &[u8]) -> Option<String> {
    type_path(node_text(node, bytes), &[])
}

/// The result after the parameters: `*Server`, or the first of `(*Server, error)`.
fn return_type(signature: &str, name: &str) -> Option<String> {
    let rest = after_parameters(signature, name)?;
    let rest = rest.split('{').next().unwrap_or(rest).trim();
    let first = match rest.strip_prefix('(') {
        Some(list) => {
            let first = list.split([',', ')']).next()?.trim();
            // `(s *Server, err error)`: the type after the name.
            first.rsplit(' ').next().unwrap_or(first)
        }
        None => rest,
    };
    type_path(first, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_the_first_type() {
        assert_eq!(
            return_type("func NewServer(addr string) *Server {", "NewServer").as_deref(),
            Some("Server")
        );
        assert_eq!(
            return_type("func (c *Client) Conn() (*Conn, error) {", "Conn").as_deref(),
            Some("Conn")
        );
        assert_eq!(return_type("func (c *Client) Close() {", "Close"), None);
    }
}
