//! Python: what makes a receiver's type evident (`crate::types`): assignments (`x =
//! Foo()`, `x: Foo = ..`), annotated parameters (`def f(x: Foo)`), attributes set on
//! `self` (`self.conn = Connection()` in `__init__`) or annotated in the class body,
//! `with Foo() as x:` (a context manager is most often its own `__enter__`'s value), a
//! class's first base (`super().m()`), and calls whose type the map knows (`make()`,
//! `Foo.create()`, `x.build()`).

use tree_sitter::Node;

use crate::analyze::node_text;
use crate::types::{
    Bound, Cx, SUPER, TypeEnv, Typing, after_parameters, call_on, inside_parameters, type_list,
    type_path,
};

/// The receiver-type hooks of Python.
pub(crate) const TYPING: Typing = Typing {
    bind,
    expr,
    declared,
    return_type,
    bases,
};

/// Annotations whose members are their first argument's.
const WRAPPERS: [&str; 5] = ["Optional", "Final", "ClassVar", "Annotated", "Awaitable"];

/// The innermost function or class definition among `ancestors`.
fn innermost<'t>(ancestors: &[Node<'t>]) -> Option<Node<'t>> {
    ancestors
        .iter()
        .rev()
        .find(|a| matches!(a.kind(), "function_definition" | "class_definition"))
        .copied()
}

/// The name of the class whose method `ancestors` end in (a function directly in it).
fn method_class<'b>(ancestors: &[Node<'_>], bytes: &'b [u8]) -> Option<&'b str> {
    let mut defs = ancestors
        .iter()
        .rev()
        .filter(|a| matches!(a.kind(), "function_definition" | "class_definition"));
    let function = defs.next()?;
    let class = defs.next()?;
    (function.kind() == "function_definition" && class.kind() == "class_definition")
        .then(|| class.child_by_field_name("name"))
        .flatten()
        .map(|n| node_text(n, bytes))
}

fn bind<'t>(node: Node<'t>, ancestors: &[Node<'t>], bytes: &[u8], env: &mut TypeEnv<'t>) {
    match node.kind() {
        "identifier" => super::locals::bind_name(node, ancestors, bytes, env),
        "assignment" => {
            let Some(left) = node.child_by_field_name("left") else {
                return;
            };
            let bound = match (
                node.child_by_field_name("type"),
                node.child_by_field_name("right"),
            ) {
                (Some(ty), _) => Bound::Type(ty),
                (None, Some(right)) => Bound::Expr(right),
                (None, None) => return,
            };
            match left.kind() {
                "identifier" => {
                    let name = node_text(left, bytes);
                    match innermost(ancestors) {
                        // A class attribute: `conn: Connection` in the class body.
                        Some(class) if class.kind() == "class_definition" => {
                            if let Some(owner) = class.child_by_field_name("name") {
                                env.field(node_text(owner, bytes), name, bound);
                            }
                        }
                        Some(function) => env.local(name, function, node.end_byte(), bound),
                        None => {
                            if let Some(module) = ancestors.first() {
                                env.local(name, *module, node.end_byte(), bound);
                            }
                        }
                    }
                }
                // `self.conn = Connection()` in a method.
                "attribute" => {
                    let (Some(object), Some(attribute)) = (
                        left.child_by_field_name("object"),
                        left.child_by_field_name("attribute"),
                    ) else {
                        return;
                    };
                    if node_text(object, bytes) == "self"
                        && let Some(class) = method_class(ancestors, bytes)
                    {
                        env.field(class, node_text(attribute, bytes), bound);
                    }
                }
                _ => {}
            }
        }
        // `with ZipFile(path) as z:`: a context manager's `__enter__` is most often
        // `return self`.
        "as_pattern" if ancestors.last().is_some_and(|a| a.kind() == "with_item") => {
            let (Some(value), Some(alias)) =
                (node.named_child(0), node.child_by_field_name("alias"))
            else {
                return;
            };
            let name = if alias.kind() == "identifier" {
                Some(alias)
            } else {
                alias.named_child(0).filter(|n| n.kind() == "identifier")
            };
            let Some(name) = name else { return };
            let scope = match innermost(ancestors) {
                Some(function) if function.kind() == "function_definition" => Some(function),
                Some(_) => None,
                None => ancestors.first().copied(),
            };
            if let Some(scope) = scope {
                env.local(
                    node_text(name, bytes),
                    scope,
                    node.end_byte(),
                    Bound::Expr(value),
                );
            }
        }
        "typed_parameter" | "typed_default_parameter" => {
            let name = node
                .child_by_field_name("name")
                .or_else(|| node.named_child(0))
                .filter(|n| n.kind() == "identifier");
            let (Some(name), Some(ty)) = (name, node.child_by_field_name("type")) else {
                return;
            };
            if let Some(function) = innermost(ancestors)
                && function.kind() == "function_definition"
            {
                env.local(
                    node_text(name, bytes),
                    function,
                    node.start_byte(),
                    Bound::Type(ty),
                );
            }
        }
        "class_definition" => {
            let (Some(name), Some(bases)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("superclasses"),
            ) else {
                return;
            };
            if let Some(first) = bases.named_child(0)
                && matches!(first.kind(), "identifier" | "attribute")
            {
                env.field(node_text(name, bytes), SUPER, Bound::Type(first));
            }
        }
        // `from .models import User as U`: `U` is `models.User`.
        "aliased_import" => {
            let (Some(name), Some(alias)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("alias"),
            ) else {
                return;
            };
            let module = ancestors
                .last()
                .filter(|s| s.kind() == "import_from_statement")
                .and_then(|s| s.child_by_field_name("module_name"))
                .map(|m| node_text(m, bytes).trim_start_matches('.'));
            let path = match module {
                Some(module) if !module.is_empty() => {
                    format!("{module}.{}", node_text(name, bytes))
                }
                _ => node_text(name, bytes).to_string(),
            };
            if let Some(target) = type_path(&path, &[]) {
                env.alias(node_text(alias, bytes), target);
            }
        }
        _ => {}
    }
}

/// The class a method's code at `at` is in (`self`'s class).
fn enclosing_class<'b>(at: Node<'_>, bytes: &'b [u8]) -> Option<&'b str> {
    let mut ancestors = Vec::new();
    let mut node = at.parent();
    while let Some(n) = node {
        ancestors.push(n);
        node = n.parent();
    }
    ancestors.reverse();
    method_class(&ancestors, bytes)
}

fn expr(node: Node<'_>, cx: &Cx<'_, '_>) -> Option<String> {
    let bytes = cx.bytes;
    match node.kind() {
        "identifier" => cx.local(node_text(node, bytes), node.start_byte()),
        "parenthesized_expression" | "await" => cx.expr(node.named_child(0)?),
        "attribute" => {
            let object = node.child_by_field_name("object")?;
            let attribute = node_text(node.child_by_field_name("attribute")?, bytes);
            let owner = if node_text(object, bytes) == "self" {
                enclosing_class(node, bytes)?.to_string()
            } else {
                cx.expr(object)?
            };
            cx.field(&owner, attribute)
        }
        "call" => {
            let function = node.child_by_field_name("function")?;
            match function.kind() {
                "identifier" => {
                    let name = node_text(function, bytes);
                    if name == "super" {
                        cx.field(enclosing_class(node, bytes)?, SUPER)
                    } else if let Some(local) = cx.local(name, function.start_byte()) {
                        // `cls = Foo; cls()`: not followed.
                        let _ = local;
                        None
                    } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                        Some(name.to_string())
                    } else {
                        Some(format!("{name}()"))
                    }
                }
                "attribute" => {
                    let object = function.child_by_field_name("object")?;
                    let name = node_text(function.child_by_field_name("attribute")?, bytes);
                    let typed = match object.kind() {
                        "identifier" => cx.local(node_text(object, bytes), object.start_byte()),
                        _ => cx.expr(object),
                    };
                    match typed {
                        Some(ty) => call_on(&ty, name),
                        None if object.kind() == "identifier" => {
                            let object = node_text(object, bytes);
                            if object.starts_with(|c: char| c.is_ascii_uppercase()) {
                                // `Foo.create()`: a class's own method.
                                call_on(object, name)
                            } else if name.starts_with(|c: char| c.is_ascii_uppercase()) {
                                // `models.User()`: a class of a module.
                                Some(format!("{object}.{name}"))
                            } else {
                                None
                            }
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
    annotation(node_text(node, bytes))
}

/// An annotation's text as a type path: quotes removed (`"Foo"`), `X | None` as `X`,
/// [`WRAPPERS`] unwrapped.
fn annotation(text: &str) -> Option<String> {
    let text = text.replace(['"', '\''], "");
    let text = text.trim();
    let first = text
        .split('|')
        .map(str::trim)
        .find(|t| *t != "None")
        .unwrap_or(text);
    let ty = type_path(first, &WRAPPERS)?;
    (ty != "None").then_some(ty)
}

/// `class A(Base, mod.Mixin, metaclass=M):` → `Base`, `mod.Mixin`: the order a member is
/// looked up in (depth first, as the method resolution order is for single bases).
fn bases(signature: &str, name: &str) -> Vec<String> {
    // A list that goes on past the signature's line (`class A(Base,`): the bases it names.
    let list = inside_parameters(signature, name).or_else(|| {
        signature
            .split_once(&format!("class {name}("))
            .map(|(_, rest)| rest)
    });
    list.map_or_else(Vec::new, |list| type_list(list, &[]))
}

/// `-> T:` after the parameters.
fn return_type(signature: &str, name: &str) -> Option<String> {
    let rest = after_parameters(signature, name)?;
    let ty = rest.strip_prefix("->")?.trim().trim_end_matches(':');
    annotation(ty)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn return_annotations_are_types() {
        assert_eq!(
            return_type("def open(self, path) -> Connection:", "open").as_deref(),
            Some("Connection")
        );
        assert_eq!(
            return_type("def find(x) -> Optional[\"User\"]:", "find").as_deref(),
            Some("User")
        );
        assert_eq!(return_type("def f(x) -> None:", "f"), None);
        assert_eq!(return_type("def f(x):", "f"), None);
    }

    #[test]
    fn bases_are_listed_in_lookup_order() {
        assert_eq!(
            bases(
                "class M1(collections.UserDict, collections.abc.Sequence):",
                "M1"
            ),
            ["collections.UserDict", "collections.abc.Sequence"]
        );
        assert_eq!(bases("class Point:", "Point"), Vec::<String>::new());
        // A list that goes on past the line: the bases it shows.
        assert_eq!(
            bases(
                "class ArchiveUtilTestCase(support.TempdirManager,",
                "ArchiveUtilTestCase"
            ),
            ["support.TempdirManager"]
        );
    }
}
