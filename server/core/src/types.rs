//! Receiver types: what a file makes evident about the type of a value a method is
//! called on, so that `rt.block_on(f)` after `let rt = Runtime::new().unwrap();` is a call
//! of `Runtime`'s `block_on`, not of any `block_on` by name.
//!
//! One mechanism for every language, driven by the language's [`Typing`] hooks (in its
//! folder of `crate::lang`): the extraction's walk of a file's trees (its one traversal,
//! `crate::fingerprint::walk`) lets the language's `bind` record what each node binds (a local to its initializer or its declared type, a
//! parameter to its annotation, a field of a type to either); the language's `expr` turns
//! a receiver expression into a **type expression** ([`crate::Reference::receiver_name`]
//! of a [`crate::Receiver::Typed`] reference), looking names up through [`Cx`]. Bindings
//! are read lazily, when a receiver needs them, so a field declared below its use and a
//! local bound to another local both resolve.
//!
//! A type expression is what the file alone can say: a type path (`Runtime`,
//! `runtime.Builder`), or a free function's call (`rt()`), then the methods called on it,
//! each written `name()`: `Builder.new_multi_thread().enable_all().build()`. What a call
//! returns is the map's knowledge (another file's declared return type), so the engine
//! follows the calls ([`Language::return_type`] reads a definition's signature). Calls
//! that keep their receiver's type (Rust `.unwrap()`, `.expect(..)`, `?`, `.await`,
//! `.clone()`; smart pointers `Arc::new(x)`) are dropped by the language's `expr`.

use tree_sitter::Node;

use crate::Language;
use crate::fingerprint::FastMap;

/// The longest chain of lookups one type expression may take (a local bound to a local
/// bound to a call on a field ...): deeper ones are left unknown. tokio's `let rt2 =
/// rt1.clone()` after `let rt1 = Arc::new(rt)` after a four-call builder chain takes 11;
/// the limit also ends a cycle through fields (`self.x = self.x.next()`).
const MAX_DEPTH: u32 = 32;

/// The segment of a type expression that takes a collection's element: `rts().[]` is
/// what `for rt in rts()` binds (`Vec<Runtime>` → `Runtime`); a collection type is written
/// with it as a suffix (`Runtime[]`).
pub(crate) const ELEMENT: &str = "[]";

/// The most calls a type expression holds; a longer chain is left unknown.
pub(crate) const MAX_CALLS: usize = 12;

/// The name under which a class's first base is recorded as a field of the class
/// (`super().m()` is `m` of that base).
pub(crate) const SUPER: &str = "super()";

/// A language's hooks for receiver types ([`crate::lang::Extraction::typing`]).
#[derive(Clone, Copy)]
pub(crate) struct Typing {
    /// Records what `node` binds (its ancestors, outermost first, in `ancestors`).
    pub(crate) bind: for<'t> fn(Node<'t>, &[Node<'t>], &[u8], &mut TypeEnv<'t>),
    /// The type expression of the expression `node`, as far as the file says.
    pub(crate) expr: fn(Node<'_>, &Cx<'_, '_>) -> Option<String>,
    /// The type a written type node names, as a type path (wrappers such as `&`,
    /// `Option<T>`, `Arc<T>` removed); `None` for a type no member is looked up on.
    pub(crate) declared: fn(Node<'_>, &[u8]) -> Option<String>,
    /// The return type a definition's signature declares, as a type path (`Self` kept
    /// as `Self`), given the definition's name: the engine's half ([`Language::return_type`]).
    pub(crate) return_type: fn(&str, &str) -> Option<String>,
    /// The classes a class's signature names as its bases, in the order its members are
    /// looked up in, as type paths, given the class's name: the engine's half
    /// ([`Language::bases`]).
    pub(crate) bases: fn(&str, &str) -> Vec<String>,
}

/// What a binding says of a name's type: an expression to type, or a written type.
#[derive(Clone, Copy)]
pub(crate) enum Bound<'t> {
    /// `let x = <expr>`, `x = <expr>`, `self.x = <expr>`.
    Expr(Node<'t>),
    /// `let x: <type>`, `x: <type>` as a parameter or field.
    Type(Node<'t>),
    /// An element of the collection an expression is (`for rt in rts()`).
    Element(Node<'t>),
    /// A method's receiver written as a name of its own (Go `func (s *Server) f()`): a
    /// call on it is a call on the enclosing type, as on `self` ([`Cx::is_own`]); its
    /// type is the written one.
    Own(Node<'t>),
}

/// A local or parameter binding.
struct Local<'t> {
    /// Bytes of the scope the binding is visible in.
    scope: (usize, usize),
    /// Visible from this byte on.
    from: usize,
    bound: Bound<'t>,
}

/// The bindings of one file, recorded by the language's `bind` at each node of its
/// trees, in document order, tree by tree.
#[derive(Default)]
pub(crate) struct TypeEnv<'t> {
    locals: FastMap<String, Vec<Local<'t>>>,
    /// (owner type, field) → its binding; the first one written wins.
    fields: FastMap<(String, String), Bound<'t>>,
    /// Names an import binds under another name (`use a::B as C`, `from m import B as
    /// C`) → the path they stand for (`a.B`, `m.B`).
    aliases: FastMap<String, String>,
    /// name → the byte ranges of the functions that bind it anywhere in their body
    /// (Python's scopes: [`TypeEnv::is_function_local`]).
    function_locals: FastMap<String, Vec<(usize, usize)>>,
    /// name → the byte ranges of the functions that declare it `global`.
    function_globals: FastMap<String, Vec<(usize, usize)>>,
}

impl<'t> TypeEnv<'t> {
    /// Binds local `name`, visible inside `scope` from byte `from` on.
    pub(crate) fn local(&mut self, name: &str, scope: Node<'t>, from: usize, bound: Bound<'t>) {
        self.locals
            .entry(name.to_string())
            .or_default()
            .push(Local {
                scope: (scope.start_byte(), scope.end_byte()),
                from,
                bound,
            });
    }

    /// Binds field `name` of the type `owner` (the first binding wins: a declaration or
    /// the constructor's assignment, which come first).
    pub(crate) fn field(&mut self, owner: &str, name: &str, bound: Bound<'t>) {
        self.fields
            .entry((owner.to_string(), name.to_string()))
            .or_insert(bound);
    }

    /// Records that an import binds `alias` to `path` (a type path: `crate.rt.Runtime`).
    pub(crate) fn alias(&mut self, alias: &str, path: String) {
        self.aliases.entry(alias.to_string()).or_insert(path);
    }

    /// Records that the function `scope` binds `name` somewhere in its body, or declares
    /// it `global`.
    pub(crate) fn function_local(&mut self, name: &str, scope: Node<'t>, global: bool) {
        let scopes = if global {
            &mut self.function_globals
        } else {
            &mut self.function_locals
        };
        scopes
            .entry(name.to_string())
            .or_default()
            .push((scope.start_byte(), scope.end_byte()));
    }

    /// Whether `name` at byte `at` is a local of a function around it: one binds it and
    /// does not declare it `global`.
    pub(crate) fn is_function_local(&self, name: &str, at: usize) -> bool {
        let Some(scopes) = self.function_locals.get(name) else {
            return false;
        };
        let globals = self.function_globals.get(name);
        scopes
            .iter()
            .filter(|(start, end)| *start <= at && at < *end)
            .any(|range| !globals.is_some_and(|g| g.contains(range)))
    }

    /// Whether nothing is bound.
    pub(crate) fn is_empty(&self) -> bool {
        self.locals.is_empty() && self.fields.is_empty() && self.aliases.is_empty()
    }
}

/// A lookup context for a language's `expr` hook: the file's bindings, its text, and how
/// deep the lookup already is.
#[derive(Clone, Copy)]
pub(crate) struct Cx<'a, 't> {
    env: &'a TypeEnv<'t>,
    typing: Typing,
    pub(crate) bytes: &'a [u8],
    depth: u32,
}

impl<'a, 't> Cx<'a, 't> {
    /// A context over `env` for `typing`.
    pub(crate) fn new(env: &'a TypeEnv<'t>, typing: Typing, bytes: &'a [u8]) -> Self {
        Cx {
            env,
            typing,
            bytes,
            depth: 0,
        }
    }

    /// The type expression of `node` (the language's `expr`).
    pub(crate) fn expr(&self, node: Node<'_>) -> Option<String> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        let deeper = Cx {
            depth: self.depth + 1,
            ..*self
        };
        (self.typing.expr)(node, &deeper)
    }

    /// The type of the local `name` as bound last before byte `at` in a scope holding it.
    pub(crate) fn local(&self, name: &str, at: usize) -> Option<String> {
        let bound = self.binding(name, at)?;
        self.bound(bound)
    }

    /// The path an aliased import binds `name` to (`Rt` after `use rt::Runtime as Rt;` is
    /// `rt.Runtime`).
    pub(crate) fn alias(&self, name: &str) -> Option<&'a str> {
        self.env.aliases.get(name).map(String::as_str)
    }

    /// `ty` with its first segment read through the file's aliases: `Rt.new()` →
    /// `rt.Runtime.new()`, `mk()` (after `use a::make as mk;`) → `make()`.
    pub(crate) fn unalias(&self, ty: String) -> String {
        let end = ty.find(['.', '(']).unwrap_or(ty.len());
        let Some(path) = self.alias(&ty[..end]) else {
            return ty;
        };
        if ty[end..].starts_with('(') {
            let last = path.rsplit('.').next().unwrap_or(path);
            format!("{last}{}", &ty[end..])
        } else {
            format!("{path}{}", &ty[end..])
        }
    }

    /// Whether `name` at byte `at` is the enclosing method's own receiver ([`Bound::Own`]).
    pub(crate) fn is_own(&self, name: &str, at: usize) -> bool {
        self.binding(name, at)
            .is_some_and(|bound| matches!(bound, Bound::Own(_)))
    }

    fn binding(&self, name: &str, at: usize) -> Option<Bound<'t>> {
        Some(
            self.env
                .locals
                .get(name)?
                .iter()
                .filter(|l| l.scope.0 <= at && at < l.scope.1 && l.from <= at)
                .max_by_key(|l| (l.from, std::cmp::Reverse(l.scope.1 - l.scope.0)))?
                .bound,
        )
    }

    /// The type of field `name` of `owner`, a type expression: a type path's last segment
    /// names the type (`rt.Runtime` is `Runtime`); a call's value has no field the file
    /// declares.
    pub(crate) fn field(&self, owner: &str, name: &str) -> Option<String> {
        if owner.contains('(') {
            return None;
        }
        let owner = owner.rsplit('.').next().unwrap_or(owner);
        let bound = *self
            .env
            .fields
            .get(&(owner.to_string(), name.to_string()))?;
        self.bound(bound)
    }

    fn bound(&self, bound: Bound<'_>) -> Option<String> {
        match bound {
            Bound::Expr(node) => self.expr(node),
            Bound::Type(node) | Bound::Own(node) => (self.typing.declared)(node, self.bytes),
            Bound::Element(node) => element(&self.expr(node)?),
        }
    }
}

/// The element type of the collection type expression `ty`: `Runtime[]` → `Runtime`, a
/// call's (`rts()`) → `rts().[]` for the engine; `None` for a type that is no collection.
pub(crate) fn element(ty: &str) -> Option<String> {
    if let Some(inner) = ty.strip_suffix(ELEMENT) {
        return Some(inner.to_string());
    }
    ty.ends_with("()").then(|| format!("{ty}.{ELEMENT}"))
}

/// Appends the call `name()` to the type expression `ty`: `Builder.build()`; `None` when
/// the chain would pass [`MAX_CALLS`].
pub(crate) fn call_on(ty: &str, name: &str) -> Option<String> {
    (ty.matches("()").count() < MAX_CALLS).then(|| format!("{ty}.{name}()"))
}

/// The call `name()` on `object`: on its type `ty` when the file makes that evident, else
/// on `object` itself when it is a capitalised identifier (`Foo.create()`: a class's
/// static method); `None` otherwise.
pub(crate) fn member_call(
    ty: Option<String>,
    object: Node<'_>,
    name: &str,
    bytes: &[u8],
) -> Option<String> {
    match ty {
        Some(ty) => call_on(&ty, name),
        None if object.kind() == "identifier" => {
            let object = crate::analyze::node_text(object, bytes);
            object
                .starts_with(|c: char| c.is_ascii_uppercase())
                .then(|| call_on(object, name))
                .flatten()
        }
        None => None,
    }
}

/// A written type's text as a type path, with `wrappers` (types whose members are their
/// first type argument's, by deref or by unwrapping: `Arc`, `Option`, `Result`) removed
/// and generic arguments dropped: `&'a mut io::Result<Arc<rt::Runtime>>` → `rt.Runtime`.
/// Path separators (`::`, `.`, `\`) become `.`. `None` for what names no type (a tuple,
/// a slice, a function type, `impl Trait`, `dyn Trait`, an empty text).
pub(crate) fn type_path(text: &str, wrappers: &[&str]) -> Option<String> {
    collection_path(text, wrappers, &[])
}

/// [`type_path`], with `collections` (`Vec`, `HashSet`) written as their first argument's
/// type and the [`ELEMENT`] suffix (`Vec<Runtime>` → `Runtime[]`), as are slices and arrays
/// (`&[Runtime]`, `[Runtime; 2]`).
pub(crate) fn collection_path(
    text: &str,
    wrappers: &[&str],
    collections: &[&str],
) -> Option<String> {
    let mut t = text.trim();
    let mut suffix = "";
    for _ in 0..8 {
        // Leading reference and pointer marks, lifetimes, `mut`, `const`.
        loop {
            let before = t;
            t = t.trim_start_matches(['&', '*', ' ']);
            if let Some(rest) = t.strip_prefix('\'') {
                t = rest.split_once(' ').map_or("", |(_, r)| r);
            }
            for prefix in ["mut ", "const ", "readonly "] {
                if let Some(rest) = t.strip_prefix(prefix) {
                    t = rest;
                }
            }
            if t == before {
                break;
            }
        }
        if !collections.is_empty()
            && suffix.is_empty()
            && let Some(inner) = t.strip_prefix('[')
        {
            suffix = ELEMENT;
            t = inner
                .rsplit_once(';')
                .map_or(inner.trim_end_matches(']'), |(ty, _)| ty);
            continue;
        }
        let (base, args) = match t.find(['<', '[']) {
            Some(i) => (t[..i].trim(), Some(&t[i + 1..])),
            None => (t.trim(), None),
        };
        let last = base.rsplit(['.', ':', '\\']).next().unwrap_or(base);
        let collection = suffix.is_empty() && collections.contains(&last);
        if let Some(args) = args
            && (wrappers.contains(&last) || collection)
        {
            if collection {
                suffix = ELEMENT;
            }
            // The first argument, up to its own `,` or closing bracket at depth 0.
            let mut depth = 0i32;
            let mut end = args.len();
            for (i, c) in args.char_indices() {
                match c {
                    '<' | '[' | '(' => depth += 1,
                    '>' | ']' | ')' if depth == 0 => {
                        end = i;
                        break;
                    }
                    '>' | ']' | ')' => depth -= 1,
                    ',' if depth == 0 => {
                        end = i;
                        break;
                    }
                    _ => {}
                }
            }
            t = &args[..end];
            continue;
        }
        let segments: Vec<&str> = base
            .split(['.', ':', '\\'])
            .filter(|s| !s.is_empty())
            .collect();
        let ok = !segments.is_empty()
            && segments.iter().all(|s| {
                s.bytes().next().is_some_and(|b| !b.is_ascii_digit())
                    && s.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80)
            })
            && !matches!(last, "impl" | "dyn" | "fn" | "Fn" | "FnMut" | "FnOnce");
        return ok.then(|| format!("{}{suffix}", segments.join(".")));
    }
    None
}

impl Language {
    /// The return type the signature of a definition named `name` declares, as a type
    /// path with the language's wrappers removed (`-> io::Result<Runtime>` → `Runtime`,
    /// `-> &mut Self` → `Self`, `def f() -> Foo:` → `Foo`); `None` when it declares none
    /// the map could follow, or the language has no receiver types.
    pub fn return_type(self, signature: &str, name: &str) -> Option<String> {
        let typing = self.spec().extraction.typing?;
        (typing.return_type)(signature, name)
    }

    /// The bases the signature of a class named `name` declares, as type paths in the
    /// order a member is looked up in them (`class A(Base, mod.Mixin):` → `Base`,
    /// `mod.Mixin`; `class A extends B implements I` → `B`, `I`); empty for a language
    /// without inheritance or receiver types.
    pub fn bases(self, signature: &str, name: &str) -> Vec<String> {
        self.spec()
            .extraction
            .typing
            .map_or_else(Vec::new, |typing| (typing.bases)(signature, name))
    }
}

/// No bases: a language without inheritance ([`Typing::bases`]).
pub(crate) fn no_bases(_: &str, _: &str) -> Vec<String> {
    Vec::new()
}

/// The bases a class's signature declares after its name, in Java, C#, JavaScript and
/// TypeScript: `extends B implements I, J` (Java, TypeScript; an interface's `extends I,
/// J`), `: B, I` (C#), generic parameters and a C# primary constructor skipped.
pub(crate) fn declared_bases(signature: &str, name: &str) -> Vec<String> {
    let word = |at: usize| {
        let before = signature[..at].chars().next_back();
        let after = signature[at + name.len()..].chars().next();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
            && !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
    };
    let Some(at) = signature
        .match_indices(name)
        .map(|(i, _)| i)
        .find(|&i| word(i))
    else {
        return Vec::new();
    };
    let mut rest = signature[at + name.len()..].trim_start();
    for (open, close) in [('<', '>'), ('(', ')')] {
        if rest.starts_with(open)
            && let Some(end) = matching(rest, open, close)
        {
            rest = rest[end + 1..].trim_start();
        }
    }
    if let Some(list) = rest.strip_prefix(':') {
        return type_list(list, &[" where", "{"]);
    }
    let mut bases = Vec::new();
    for keyword in ["extends ", "implements "] {
        if let Some(i) = rest.find(keyword) {
            bases.extend(type_list(&rest[i + keyword.len()..], &[" implements", "{"]));
        }
    }
    bases
}

/// The types of a comma-separated list as type paths (`Base, mod.Mixin[T]` → `Base`,
/// `mod.Mixin`), up to the first of `ends` at depth 0; keyword arguments (`metaclass=M`)
/// and unpacked values (`*bases`) name none.
pub(crate) fn type_list(text: &str, ends: &[&str]) -> Vec<String> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        match c {
            '<' | '[' | '(' => depth += 1,
            '>' | ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ if depth == 0 && ends.iter().any(|e| text[i..].starts_with(e)) => {
                end = i;
                break;
            }
            _ => {}
        }
    }
    if start <= end {
        parts.push(&text[start..end]);
    }
    parts
        .into_iter()
        .map(str::trim)
        .filter(|p| !p.contains('=') && !p.starts_with('*'))
        .filter_map(|p| type_path(p, &[]))
        .collect()
}

/// The text after the parameter list of `name(..)` in `signature` (the first `(` after
/// the name, to its matching `)`), trimmed; `None` when the list does not close on the
/// line.
pub(crate) fn after_parameters<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let (_, close) = parameters(signature, name)?;
    Some(signature[close + 1..].trim())
}

/// The text inside the parameter list of `name(..)` in `signature` (a Python class's
/// bases), trimmed; `None` when there is none or it does not close on the line.
pub(crate) fn inside_parameters<'s>(signature: &'s str, name: &str) -> Option<&'s str> {
    let (open, close) = parameters(signature, name)?;
    Some(signature[open + 1..close].trim())
}

/// The byte indices of the brackets of the parameter list of `name(..)` in `signature`:
/// the first `(` after the name, and its matching `)`.
fn parameters(signature: &str, name: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    let open = loop {
        let at = from + signature[from..].find(name)?;
        let rest = &signature[at + name.len()..];
        let before_ok = signature[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let skip = rest.len() - rest.trim_start_matches(char::is_whitespace).len();
        let rest_trim = &rest[skip..];
        // Rust generics: `fn block_on<F: Future>(..)`.
        let generics = if rest_trim.starts_with('<') {
            matching(rest_trim, '<', '>').map_or(0, |e| e + 1)
        } else {
            0
        };
        if before_ok && rest_trim[generics..].starts_with('(') {
            break at + name.len() + skip + generics;
        }
        from = at + name.len();
    };
    let close = open + matching(&signature[open..], '(', ')')?;
    Some((open, close))
}

/// The byte index of the bracket closing the one `text` starts with.
fn matching(text: &str, open: char, close: char) -> Option<usize> {
    let mut depth = 0i32;
    for (i, c) in text.char_indices() {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bases_are_the_types_a_class_signature_lists() {
        assert_eq!(
            type_list(
                "unittest.TestCase, Generic[K, V], metaclass=ABCMeta, *more",
                &[]
            ),
            ["unittest.TestCase", "Generic"]
        );
        assert_eq!(
            declared_bases(
                "public class Repo<T extends Row> extends Base<T> implements Closeable, Iterable<T> {",
                "Repo"
            ),
            ["Base", "Closeable", "Iterable"]
        );
        assert_eq!(
            declared_bases(
                "export class Badge extends React.Component<Props> {",
                "Badge"
            ),
            ["React.Component"]
        );
        assert_eq!(
            declared_bases(
                "public sealed class FlatTax : Policy, ITaxPolicy where T : new()",
                "FlatTax"
            ),
            ["Policy", "ITaxPolicy"]
        );
        assert_eq!(
            declared_bases("class Shape {", "Shape"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn type_paths_drop_wrappers_and_arguments() {
        let rust = ["Arc", "Rc", "Box", "Option", "Result", "Pin"];
        assert_eq!(
            type_path("&'a mut io::Result<Arc<rt::Runtime>>", &rust).as_deref(),
            Some("rt.Runtime")
        );
        assert_eq!(
            type_path("Result<Foo<T>, Error>", &rust).as_deref(),
            Some("Foo")
        );
        assert_eq!(type_path("&mut Self", &rust).as_deref(), Some("Self"));
        assert_eq!(type_path("impl Future<Output = T>", &rust), None);
        assert_eq!(type_path("(A, B)", &rust), None);
        assert_eq!(
            type_path("Optional[Foo]", &["Optional"]).as_deref(),
            Some("Foo")
        );
        let vec = ["Vec"];
        assert_eq!(
            collection_path("Vec<Runtime>", &rust, &vec).as_deref(),
            Some("Runtime[]")
        );
        assert_eq!(
            collection_path("&[rt::Runtime]", &rust, &vec).as_deref(),
            Some("rt.Runtime[]")
        );
        assert_eq!(
            collection_path("Option<Vec<Arc<Runtime>>>", &rust, &vec).as_deref(),
            Some("Runtime[]")
        );
        assert_eq!(element("Runtime[]").as_deref(), Some("Runtime"));
        assert_eq!(element("rts()").as_deref(), Some("rts().[]"));
        assert_eq!(element("Runtime"), None);
    }

    #[test]
    fn parameters_end_where_their_parenthesis_closes() {
        assert_eq!(
            after_parameters(
                "pub fn block_on<F: Future>(&self, f: F) -> F::Output {",
                "block_on"
            ),
            Some("-> F::Output {")
        );
        assert_eq!(
            after_parameters("fn build_rt(f: fn() -> u8) -> Runtime {", "build_rt"),
            Some("-> Runtime {")
        );
        assert_eq!(after_parameters("fn f(a,", "f"), None);
    }
}
