//! Python's local variables, recorded as the walk enters each name ([`bind_name`]): a
//! name bound anywhere in a function (a parameter, an assignment, loop, `with`/`except`
//! or walrus target) is that function's local in all of its body and in the functions
//! nested in it, unless the function declares it `global`. A bare name called or read
//! there is that local, no definition's ([`crate::types::TypeEnv::is_function_local`]); a
//! nested `def` or `class` is a definition of its own, not a local.

use tree_sitter::Node;

use crate::analyze::node_text;
use crate::types::TypeEnv;

/// Records the identifier `node` (its ancestors `ancestors`, innermost last) as a local
/// of the innermost function or lambda around it when it binds a name there, or as a
/// `global` it declares.
pub(super) fn bind_name<'t>(
    node: Node<'t>,
    ancestors: &[Node<'t>],
    bytes: &[u8],
    env: &mut TypeEnv<'t>,
) {
    let Some(&parent) = ancestors.last() else {
        return;
    };
    let field_is = |field: &str| parent.child_by_field_name(field) == Some(node);
    let binds = match parent.kind() {
        "parameters"
        | "lambda_parameters"
        | "typed_parameter"
        | "list_splat_pattern"
        | "dictionary_splat_pattern"
        | "pattern_list"
        | "tuple_pattern"
        | "list_pattern"
        | "as_pattern_target"
        | "global_statement" => true,
        "default_parameter" | "typed_default_parameter" | "named_expression" => field_is("name"),
        "assignment" | "augmented_assignment" | "for_statement" | "for_in_clause" => {
            field_is("left")
        }
        "except_clause" => field_is("alias"),
        _ => false,
    };
    if !binds {
        return;
    }
    let scope = ancestors
        .iter()
        .rev()
        .find(|a| matches!(a.kind(), "function_definition" | "lambda"));
    // Default values are evaluated where the `def` is: the local scope is the body
    // (`def f(x, deepcopy=deepcopy)` reads the module's `deepcopy`).
    if let Some(&scope) = scope {
        let body = scope.child_by_field_name("body").unwrap_or(scope);
        let global = parent.kind() == "global_statement";
        env.function_local(node_text(node, bytes), body, global);
    }
}
