//! Rust: what makes a receiver's type evident (`crate::types`): `let` bindings (with a
//! written type, or bound to a constructor, a call or a chain of calls), parameters
//! (`x: &T`), struct fields (`self.rt` with `struct S { rt: Runtime }`), and the calls
//! that keep their receiver's type (`.unwrap()`, `.expect(..)`, `?`, `.await`,
//! `.clone()`, `Arc::new(x)`).

use tree_sitter::Node;

use crate::analyze::node_text;
use crate::types::{
    Bound, Cx, TypeEnv, Typing, after_parameters, call_on, collection_path, type_path,
};

/// The receiver-type hooks of Rust.
pub(crate) const TYPING: Typing = Typing {
    bind,
    expr,
    declared,
    return_type,
    bases: crate::types::no_bases,
};

/// Types whose methods are those of their first type argument (by `Deref`, or once
/// unwrapped by `?`, `.unwrap()`, `.expect(..)`).
const WRAPPERS: [&str; 8] = [
    "Arc",
    "Rc",
    "Box",
    "Option",
    "Result",
    "Pin",
    "ManuallyDrop",
    "Cow",
];

/// Collections: `for x in v` binds an element of one.
const COLLECTIONS: [&str; 6] = [
    "Vec",
    "VecDeque",
    "HashSet",
    "BTreeSet",
    "LinkedList",
    "BinaryHeap",
];

/// Methods that return their receiver's type (or the value it wraps, which the wrappers
/// above already stand for).
const SAME_TYPE: [&str; 13] = [
    "unwrap",
    "expect",
    "unwrap_or_default",
    "unwrap_or_else",
    "unwrap_unchecked",
    "clone",
    "to_owned",
    "as_ref",
    "as_mut",
    "borrow",
    // A collection's iterators yield its elements, as the collection does in a `for`.
    "iter",
    "into_iter",
    "iter_mut",
];

/// Rust's primitive types.
const PRIMITIVES: [&str; 17] = [
    "bool", "char", "str", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64",
];

/// Constructors of [`WRAPPERS`]: `Arc::new(x)` has `x`'s methods.
const WRAPPING: [&str; 4] = ["Arc", "Rc", "Box", "Pin"];

fn bind<'t>(node: Node<'t>, ancestors: &[Node<'t>], bytes: &[u8], env: &mut TypeEnv<'t>) {
    match node.kind() {
        "let_declaration" => {
            let Some(pattern) = node.child_by_field_name("pattern") else {
                return;
            };
            let Some(name) = binding_name(pattern, bytes) else {
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
            if let Some(scope) = ancestors.last() {
                env.local(name, *scope, node.end_byte(), bound);
            }
        }
        // `for rt in rt_combinations() { .. }`: an element of the collection.
        "for_expression" => {
            let (Some(pattern), Some(value), Some(body)) = (
                node.child_by_field_name("pattern"),
                node.child_by_field_name("value"),
                node.child_by_field_name("body"),
            ) else {
                return;
            };
            if let Some(name) = binding_name(pattern, bytes) {
                env.local(name, body, body.start_byte(), Bound::Element(value));
            }
        }
        "parameter" => {
            let (Some(pattern), Some(ty)) = (
                node.child_by_field_name("pattern"),
                node.child_by_field_name("type"),
            ) else {
                return;
            };
            let Some(name) = binding_name(pattern, bytes) else {
                return;
            };
            // The function (or closure) the parameter list belongs to.
            if let Some(function) = ancestors.iter().rev().nth(1) {
                env.local(name, *function, node.start_byte(), Bound::Type(ty));
            }
        }
        "field_declaration" => {
            let (Some(name), Some(ty)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("type"),
            ) else {
                return;
            };
            let owner = ancestors
                .iter()
                .rev()
                .find(|a| matches!(a.kind(), "struct_item" | "union_item"))
                .and_then(|s| s.child_by_field_name("name"));
            if let Some(owner) = owner {
                env.field(
                    node_text(owner, bytes),
                    node_text(name, bytes),
                    Bound::Type(ty),
                );
            }
        }
        // `use crate::rt::Runtime as Rt;`, `use crate::rt::{Runtime as Rt};`
        "use_as_clause" => {
            let (Some(path), Some(alias)) = (
                node.child_by_field_name("path"),
                node.child_by_field_name("alias"),
            ) else {
                return;
            };
            let mut full: Vec<&str> = ancestors
                .iter()
                .filter(|a| a.kind() == "scoped_use_list")
                .filter_map(|a| a.child_by_field_name("path"))
                .map(|p| node_text(p, bytes))
                .collect();
            full.push(node_text(path, bytes));
            if let Some(target) = type_path(&full.join("::"), &[]) {
                env.alias(node_text(alias, bytes), target);
            }
        }
        _ => {}
    }
}

/// The name a pattern binds when it is one identifier (`x`, `mut x`, `ref x`).
fn binding_name<'b>(pattern: Node<'_>, bytes: &'b [u8]) -> Option<&'b str> {
    match pattern.kind() {
        "identifier" => Some(node_text(pattern, bytes)),
        "mut_pattern" | "ref_pattern" => pattern
            .named_child(u32::try_from(pattern.named_child_count().checked_sub(1)?).ok()?)
            .filter(|n| n.kind() == "identifier")
            .map(|n| node_text(n, bytes)),
        _ => None,
    }
}

fn expr(node: Node<'_>, cx: &Cx<'_, '_>) -> Option<String> {
    let bytes = cx.bytes;
    match node.kind() {
        "identifier" => cx.local(node_text(node, bytes), node.start_byte()),
        "try_expression"
        | "await_expression"
        | "parenthesized_expression"
        | "unary_expression"
        | "reference_expression" => {
            let inner = node
                .child_by_field_name("value")
                .or_else(|| node.named_child(0))?;
            cx.expr(inner)
        }
        "struct_expression" => {
            let name = node.child_by_field_name("name")?;
            path_type(node, node_text(name, bytes), bytes)
        }
        "field_expression" => {
            // A field: of `self`'s type, or of a value whose type the file declares.
            let value = node.child_by_field_name("value")?;
            let field = node_text(node.child_by_field_name("field")?, bytes);
            let owner = if value.kind() == "self" {
                impl_type(node, bytes)?.to_string()
            } else {
                cx.expr(value)?
            };
            cx.field(&owner, field)
        }
        "call_expression" => {
            let function = node.child_by_field_name("function")?;
            match function.kind() {
                // `rt()`, `Wrapper(x)` (a tuple struct).
                "identifier" => {
                    let name = node_text(function, bytes);
                    if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                        (!matches!(name, "Some" | "Ok" | "Err" | "None")).then(|| name.to_string())
                    } else {
                        Some(format!("{name}()"))
                    }
                }
                // `Runtime::new()`, `Builder::new_multi_thread()`, `Arc::new(rt)`.
                "scoped_identifier" => {
                    let path = function.child_by_field_name("path")?;
                    let name = node_text(function.child_by_field_name("name")?, bytes);
                    let path_text = node_text(path, bytes);
                    let last = path_text.rsplit("::").next().unwrap_or(path_text);
                    if WRAPPING.contains(&last) && name == "new" {
                        let args = node.child_by_field_name("arguments")?;
                        return cx.expr(args.named_child(0)?);
                    }
                    if !last.starts_with(|c: char| c.is_ascii_uppercase()) {
                        return None;
                    }
                    let ty = path_type(node, path_text, bytes)?;
                    if name == "new" || name == "default" {
                        Some(ty)
                    } else {
                        call_on(&ty, name)
                    }
                }
                // `rt.handle()`, `builder.build()`, `x.unwrap()`.
                "field_expression" => {
                    let value = function.child_by_field_name("value")?;
                    let name = node_text(function.child_by_field_name("field")?, bytes);
                    let ty = if value.kind() == "self" {
                        impl_type(node, bytes)?.to_string()
                    } else {
                        cx.expr(value)?
                    };
                    if SAME_TYPE.contains(&name) {
                        Some(ty)
                    } else {
                        call_on(&ty, name)
                    }
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// A type path written in code (`tokio::runtime::Builder`, `Self`) as a type path
/// (`tokio.runtime.Builder`, the `impl`'s type for `Self`).
fn path_type(at: Node<'_>, text: &str, bytes: &[u8]) -> Option<String> {
    if text == "Self" {
        return impl_type(at, bytes).map(str::to_string);
    }
    type_path(text, &[])
}

/// The type of the `impl` block around `at` (`Runtime` in `impl Runtime { .. }`, `Foo`
/// in `impl<T> Trait for Foo<T>`).
fn impl_type<'b>(at: Node<'_>, bytes: &'b [u8]) -> Option<&'b str> {
    let mut node = at.parent();
    while let Some(n) = node {
        if n.kind() == "impl_item" {
            let ty = n.child_by_field_name("type")?;
            return Some(crate::analyze::base_type_name(node_text(ty, bytes)));
        }
        node = n.parent();
    }
    None
}

fn declared(node: Node<'_>, bytes: &[u8]) -> Option<String> {
    let text = node_text(node, bytes);
    let ty = collection_path(text, &WRAPPERS, &COLLECTIONS)?;
    // The language's own types have no members in the map.
    if PRIMITIVES.contains(&ty.trim_end_matches(crate::types::ELEMENT)) {
        return None;
    }
    if ty == "Self" {
        return impl_type(node, bytes).map(str::to_string);
    }
    Some(ty)
}

/// `-> T` after the parameters, up to `where` or the body.
fn return_type(signature: &str, name: &str) -> Option<String> {
    let rest = after_parameters(signature, name)?;
    let ty = rest.strip_prefix("->")?;
    let ty = ty.split(" where").next().unwrap_or(ty);
    let ty = ty
        .split('{')
        .next()
        .unwrap_or(ty)
        .trim()
        .trim_end_matches(';');
    collection_path(ty, &WRAPPERS, &COLLECTIONS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_types_unwrap_results_and_references() {
        assert_eq!(
            return_type("pub fn build(&mut self) -> io::Result<Runtime> {", "build").as_deref(),
            Some("Runtime")
        );
        assert_eq!(
            return_type("pub fn enable_all(&mut self) -> &mut Self {", "enable_all").as_deref(),
            Some("Self")
        );
        assert_eq!(
            return_type("pub fn new_multi_thread() -> Builder {", "new_multi_thread").as_deref(),
            Some("Builder")
        );
        assert_eq!(
            return_type("fn rt() -> Arc<Runtime> {", "rt").as_deref(),
            Some("Runtime")
        );
        assert_eq!(return_type("fn f(x: u8) {", "f"), None);
        assert_eq!(
            return_type("fn rt_combinations() -> Vec<Runtime> {", "rt_combinations").as_deref(),
            Some("Runtime[]")
        );
        assert_eq!(
            return_type(
                "pub fn block_on<F: Future>(&self, future: F) -> F::Output {",
                "block_on"
            )
            .as_deref(),
            Some("F.Output")
        );
    }
}
