//! Pure analysis for loci: which language a file is, what tree-sitter finds in it
//! (symbols, references, imports), comment-insensitive fingerprints, and import resolution.
//!
//! Architecture invariant: this crate knows nothing of SQLite, tokio, JSON-RPC or LSP.
//! Everything is plain data with **byte offsets** into the file's text and zero-based
//! line numbers. Parsing never fails: a file tree-sitter cannot read fully still yields
//! what was found plus a [`Degraded`] reason.

pub mod analyze;
pub mod chunks;
pub mod claims;
pub mod fingerprint;
pub mod imports;
pub mod lang;
pub mod markdown;
pub mod position;
pub mod secondary;
pub mod terms;
pub(crate) mod types;

pub use analyze::{AnalyzeOptions, analyze};
pub use imports::PathIndex;
pub use lang::Language;
/// The version of what analysis extracts from a file (symbols and their keys and kinds,
/// references and their resolution in the file, imports). A map built by another version
/// is reanalysed file by file on the next scan, whatever the files' hashes say: the stored
/// rows would otherwise stay as the older analysis left them until each file changed.
/// Bump it with every change to queries or extraction that changes a file's rows.
///
/// 2: Rust types get their own kinds, `#[path]` modules, members of same-file types.
/// 3: references keep their receiver's name (`Builder` in `Builder::new()`).
/// 4: an imported name binds to a module-level definition only, never to a method of an
/// `impl` in the file it comes from; a Rust `use` of another crate of the repository by
/// its library name resolves (resolution changes: the rows of importing files change).
/// 5: Rust items written inside a macro invocation's `{ .. }` body where items go
/// (`cfg_net! { pub struct TcpStream { .. } }`, nested bodies too) are parsed again and
/// mapped: their symbols, references, `use` and `mod` imports.
/// 6: a name called on an imported module (`logging.getLogger()`) resolves to a
/// module-level definition of the imported files before any method beside it.
/// 7: a method called on a value just constructed (`Type::new(..).m()`, Python
/// `Type(..).m()`) has that type as its receiver.
/// 8: uses of a type by name are references: Rust parameters, return types, fields,
/// `let` annotations and type arguments (`type`, resolved to types only) and struct
/// literals (`call`); Python annotations (`type`).
/// 9: a name on a Rust path that is no value (`crate::from_str()`, `self::f()`,
/// `super::f()`, `std::fs::read()`) is [`Receiver::Path`], resolved through the module tree:
/// `crate::from_str(s)` had gone to a method `Map.from_str` beside the call,
/// `std::fs::canonicalize(p)` to the enclosing function of that name. Resolution also
/// changed: `self.f()` in Rust and Go by the enclosing type only, calls never to modules,
/// traits or type aliases, bare names never to members (but in a Python class body), names
/// on values never to free functions or the enclosing definition, names on an import only
/// in the files it binds, Go packages by directory (docs/architecture.md).
/// 10: a JavaScript/TypeScript import of a directory (`'./lib/'`, `'.'`, `'..'`) resolves
/// to its `index` only, never to the file `lib.ts` beside it (the import edges change).
/// 11: the code's text is indexed ([`chunks`], migration 19): every file is read again to
/// fill the code-text indexes.
/// 12: test, example and vendored code ([`secondary`], Rust `test.rs`/`tests.rs` among
/// it) has code-text indexes of its own (migration 20), and a code chunk is consecutive
/// lines ([`chunks`]).
/// 13: fingerprints hash the text no node's kind implies ([`fingerprint`]): a string's
/// text around its escapes (Python), format specs (`f"{x:>8}"`, `$"{x:F2}"`), raw-string
/// delimiters and string prefixes (Rust `r#"`, `b"`; Ruby `'`, `%q(`, regex flags), PHP
/// heredoc line breaks, `macro_rules!` separators, spaces inside quotes in a C `#define`.
/// Fingerprints of files and symbols holding them change.
/// 14: every code chunk has the hash of its text as an embedding model sees it
/// ([`chunks::embed_hash`], migration 21): vectors are keyed by it.
/// 15: references resolve only within their language's link group
/// ([`Language::link_group`]), and a member written on a type's name that an import binds
/// to the type's file is stated: every reference is resolved again.
/// 16: nineteen more languages ([`lang`]: Kotlin, Swift, Scala, Lua, Bash, Elixir,
/// Haskell, Zig, Dart, OCaml, Julia, R, Erlang, HCL, Solidity, Objective-C, Protocol
/// Buffers, Vue and Svelte): files recorded as unknown before are analysed.
/// 17: a method called on a value whose type its file makes evident has the receiver
/// [`Receiver::Typed`] and a type expression for its receiver name (`crate::types`):
/// `rt.block_on(..)` after `let rt = Runtime::new().unwrap()`.
/// 18: calls among a Rust macro's `( .. )`/`[ .. ]` arguments are references
/// (`assert_eq!(parse(s), ..)`): the references of Rust files change.
/// 19: a bare use of a name imported under an alias (Python `from m import f as g`,
/// JavaScript `import { f as g }`, then `g()`) is a reference to the name imported (`f`)
/// on the import ([`Receiver::Imported`]).
/// 20: Rust's `use a::f as g;` too, and a bare use of the name an alias hides is the
/// file's own definition ([`Reference::target`]); a constant read by its upper-case name
/// (Python, Rust: `constants.scm`) is a reference.
/// 21: a Python name read as a value (`key=_make_key`, `except ftplib.all_errors`) is a
/// reference where its file binds the name, or where it is read from an imported module
/// (`@reference.value`), and a bare name a function binds (a parameter, a local) is its
/// local, called or read, no definition's: the references of Python files change.
/// 22: a Python parameter's default value is read where the `def` is (`deepcopy=deepcopy`
/// reads the module's `deepcopy`), and an assignment's or a loop's targets are no reads.
/// 23: a name on an imported package that re-exports it (`unittest.TestCase`, `asyncio.run`
/// through `from .runners import *`) is the definition the package imports; a Rust type
/// written as a path (`impl crate::Message for`, `&dyn io::Read`) is a reference on that
/// path; a name on a Python module imported under an alias (`pq.Queue()` after `import
/// queue as pq`) is on that module.
/// 24: a type qualifying a Rust path (`ByteStr::from_static(..)`, `Kind::Io`), a tuple
/// struct's field type and the type a trait is implemented for (`impl Drop for Handle`)
/// are references to it, and a constant or variant named on its type (`Method::GET`) is
/// a value of it: the references of Rust files change.
/// 25: `self.f()` (and a bare `f()` in a Java or C# method) in a class that does not
/// define `f`, and a typed value's member its class does not define, resolve through the
/// bases the classes' signatures declare ([`Language::bases`]): the resolutions of
/// Python, Java, C#, JavaScript and TypeScript files change; a name on a Python module
/// imported by name under an alias (`test_utils.TestCase` after `from test.test_asyncio
/// import utils as test_utils`) is on that import.
/// 26: a Python `import a.b` imports the package `a` too (its `__init__.py`), which the
/// name it binds (`a`) is: the deps of Python files change.
/// 27: a Rust macro invocation is a reference of kind `macro` ([`RefKind::Macro`]).
/// 28: an import written inside a definition binds its names there only
/// ([`Import::enclosing`]): the resolutions of Rust and Python files change.
/// 29: a name imported under an alias inside a definition is renamed there only: the
/// references of Python, JavaScript and Rust files change.
/// 30: a capitalised name used under the alias its import gives it (`Q()` after `from m
/// import Parser as Q`) is the name the import binds, not a member of a type of its name:
/// the resolutions of Python and JavaScript files change; `super.m()` in Java, JavaScript
/// and TypeScript (C#'s `base.M()`) is on the class's base, as Python's `super().m()` is;
/// a Java file sees its package's (its folder's) classes by their bare names, as Go's.
pub const ANALYSIS_VERSION: u32 = 30;

/// The tree-sitter version loci-core is built against, for callers that keep trees
/// ([`analyze::parse`], [`analyze::extract`]).
pub use tree_sitter;

use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into a file's text, with the zero-based line
/// and byte column of `start` (for display and for the LSP position conversion).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    /// First byte, inclusive.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    /// Zero-based line of `start`.
    pub line: u32,
    /// Zero-based byte column of `start` within its line.
    pub column: u32,
    /// Zero-based line of `end`.
    pub end_line: u32,
}

/// What kind of thing a symbol is. Names follow the tree-sitter tags convention
/// (`@definition.function`, `@definition.class`, ...), see
/// <https://tree-sitter.github.io/tree-sitter/4-code-navigation.html>.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    /// A free function.
    Function,
    /// A function defined inside a class, impl, trait or interface.
    Method,
    /// A class (also Go struct types; Java and C# enums and records; C# and C structs).
    Class,
    /// A Rust `struct`.
    Struct,
    /// A Rust `enum`.
    Enum,
    /// A Rust `union`.
    Union,
    /// A Rust `trait`.
    Trait,
    /// An interface or protocol (also Go interface types, PHP traits).
    Interface,
    /// A module, namespace or package.
    Module,
    /// A macro definition.
    Macro,
    /// A constant.
    Constant,
    /// A type alias or other named type.
    Type,
    /// Anything else a tags query defines (`@definition.<other>`).
    Other,
}

impl SymbolKind {
    /// The short lower-case name used in symbol keys and output (`function`, `class`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Class => "class",
            SymbolKind::Struct => "struct",
            SymbolKind::Enum => "enum",
            SymbolKind::Union => "union",
            SymbolKind::Trait => "trait",
            SymbolKind::Interface => "interface",
            SymbolKind::Module => "module",
            SymbolKind::Macro => "macro",
            SymbolKind::Constant => "constant",
            SymbolKind::Type => "type",
            SymbolKind::Other => "other",
        }
    }

    /// Whether it defines a type: a class, struct, enum, union, trait or interface (not an
    /// alias, `type`, whose name may be an associated type's).
    pub fn is_type(self) -> bool {
        matches!(
            self,
            SymbolKind::Class
                | SymbolKind::Struct
                | SymbolKind::Enum
                | SymbolKind::Union
                | SymbolKind::Trait
                | SymbolKind::Interface
        )
    }

    /// Parses [`SymbolKind::as_str`] output back; unknown names become [`SymbolKind::Other`].
    pub fn parse(s: &str) -> SymbolKind {
        match s {
            "function" => SymbolKind::Function,
            "method" => SymbolKind::Method,
            "class" => SymbolKind::Class,
            "struct" => SymbolKind::Struct,
            "enum" => SymbolKind::Enum,
            "union" => SymbolKind::Union,
            "trait" => SymbolKind::Trait,
            "interface" => SymbolKind::Interface,
            "module" => SymbolKind::Module,
            "macro" => SymbolKind::Macro,
            "constant" => SymbolKind::Constant,
            "type" => SymbolKind::Type,
            _ => SymbolKind::Other,
        }
    }
}

/// A definition found by the language's tags query.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Symbol {
    /// Stable key: `path#qualified.name@kind`, plus `[n]` (n ≥ 2) for the n-th symbol with
    /// the same qualified name and kind in the file (overloads, redefinitions). Identity is
    /// the qualified name in its file, never its line, so the key survives line shifts.
    pub key: String,
    /// The bare name (`login`).
    pub name: String,
    /// Names of the enclosing definitions and this one, joined with `.` (`AuthService.login`).
    pub qualified_name: String,
    /// What the tags query says it is.
    pub kind: SymbolKind,
    /// The whole definition node.
    pub span: Span,
    /// The name node (where editors put diagnostics and code lenses).
    pub name_span: Span,
    /// The definition's first line, trimmed, at most 200 bytes (`def login(user, password):`).
    pub signature: String,
    /// The doc comment or docstring, if the tags query captured one (`@doc`) or one sits
    /// directly above the definition.
    pub doc: Option<String>,
    /// Comment- and whitespace-insensitive hash of the definition's subtree, as 16 hex digits.
    pub body_fingerprint: String,
    /// Hash of the signature's tokens, as 16 hex digits; a change here is a `signature_change`.
    pub signature_fingerprint: String,
    /// Index into [`FileAnalysis::symbols`] of the enclosing definition, if any.
    pub parent: Option<u32>,
}

/// How a reference uses its target, from the tags query's `@reference.<kind>` capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefKind {
    /// `@reference.call`, `@reference.send`.
    Call,
    /// A Rust macro invocation (`select!(..)`, `crate::ensure!(..)`): it names a macro,
    /// never the function or module of the same name.
    Macro,
    /// `@reference.type`, `@reference.class`.
    Type,
    /// `@reference.implementation`, inheritance and interface lists.
    Inherit,
    /// A name imported by an import statement.
    Import,
    /// Any other `@reference.*` capture.
    Other,
}

impl RefKind {
    /// Lower-case name used in storage and output.
    pub fn as_str(self) -> &'static str {
        match self {
            RefKind::Call => "call",
            RefKind::Macro => "macro",
            RefKind::Type => "type",
            RefKind::Inherit => "inherit",
            RefKind::Import => "import",
            RefKind::Other => "other",
        }
    }

    /// Parses [`RefKind::as_str`] output back; unknown names become [`RefKind::Other`].
    pub fn parse(s: &str) -> RefKind {
        match s {
            "call" => RefKind::Call,
            "macro" => RefKind::Macro,
            "type" => RefKind::Type,
            "inherit" => RefKind::Inherit,
            "import" => RefKind::Import,
            _ => RefKind::Other,
        }
    }
}

/// What a reference's name is looked up on: nothing (a bare name), the enclosing object or
/// type itself, or some other value, type or module. Computed from the syntax tree alone
/// (the name node's member/field/attribute/selector expression and that expression's
/// object), so it says *which* receiver was written, never what type it has.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Receiver {
    /// A bare name (`parse(x)`), an import, or a namespace-qualified name the map does not
    /// treat as a receiver (PHP `\App\f()`, Java `Outer.Inner` in a type list).
    #[default]
    None,
    /// The enclosing object or type: a receiver written exactly `self`, `this`, `Self`,
    /// `cls`, `$this` or PHP `static` (a Rust `self::f()` is a [`Receiver::Path`]). Also a type, class or
    /// module the same file defines, written by its bare name, when the file defines the
    /// member too (`Foo::new()` with `impl Foo { fn new() }`, `Foo.create()` with `class
    /// Foo` defining `create`); [`Reference::target`] then names that member.
    Own,
    /// A name the file's imports bind, written as it is bound: `util.fmt()` after `from .
    /// import util`, `fmt.Println()` after `import "fmt"`, `store::open()` after `mod
    /// store;`, `User.find()` after `from .models import User`.
    Imported,
    /// Any other receiver: `self.meta.is_match(x)`, `obj.parse()`, `super().f()`,
    /// `parent::f()`.
    Other,
    /// A Rust path naming a module or a type, never a value: `crate::from_str()`,
    /// `self::helper()`, `super::helper()`, `std::fs::read()`, `de::from_str()` inside
    /// `crate::`, `Regex::new()`. Resolution follows the crate's module tree (a module path)
    /// or looks for the type's members (a capitalised last segment).
    Path,
    /// A value whose type the file makes evident (`crate::types`): a local bound to a
    /// constructor or a call (`let rt = Runtime::new().unwrap()`, `x = Foo()`), a typed
    /// local or parameter (`let x: T`, `x: &T`, `def f(x: Foo)`, `Foo x`), a typed field
    /// (`self.rt` with `struct S { rt: Runtime }`, `self.x = Foo()` in `__init__`), a call
    /// chain (`Builder::new_multi_thread().enable_all().build()?`), `super()`, a Go
    /// method's receiver. [`Reference::receiver_name`] is then the type expression, whose
    /// calls the engine follows through the declared return types of the map.
    Typed,
}

impl Receiver {
    /// Name used in storage (`refs.receiver`): `None` is stored as NULL.
    pub fn as_str(self) -> Option<&'static str> {
        match self {
            Receiver::None => None,
            Receiver::Own => Some("own"),
            Receiver::Imported => Some("imported"),
            Receiver::Other => Some("other"),
            Receiver::Path => Some("path"),
            Receiver::Typed => Some("typed"),
        }
    }

    /// Parses [`Receiver::as_str`] output back; NULL and unknown names are [`Receiver::None`].
    pub fn parse(s: Option<&str>) -> Receiver {
        match s {
            Some("own") => Receiver::Own,
            Some("imported") => Receiver::Imported,
            Some("other") => Receiver::Other,
            Some("path") => Receiver::Path,
            Some("typed") => Receiver::Typed,
            _ => Receiver::None,
        }
    }
}

/// A use of a name, unresolved: resolution needs the whole map and happens in the engine.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    /// The referenced name as written (last path segment: `foo` for `a.b.foo()`).
    pub name: String,
    /// How it is used.
    pub kind: RefKind,
    /// What the name is looked up on (see [`Receiver`]); always `None` for imports.
    #[serde(default)]
    pub receiver: Receiver,
    /// For a name on another object, a path or an imported name ([`Receiver::Other`],
    /// [`Receiver::Path`], [`Receiver::Imported`]), the receiver when it is a path of identifiers, its segments
    /// joined by `.`: `Builder` in `Builder::new()`, `runtime.Builder` in
    /// `runtime::Builder::new()`, `self.meta` in `self.meta.f()`. Resolution prefers a
    /// member of a type named by the last segment, in a file whose path holds the others.
    /// For a [`Receiver::Typed`] value, its type expression (`crate::types`): a type path
    /// (`Runtime`, `runtime.Builder`) or a free function's call (`rt()`), followed by the
    /// methods called on it (`Builder.new_multi_thread().enable_all().build()`), each
    /// call's type being the return type its definition declares.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver_name: Option<String>,
    /// The name node.
    pub span: Span,
    /// Index into [`FileAnalysis::symbols`] of the innermost definition containing it.
    pub enclosing: Option<u32>,
    /// Index into [`FileAnalysis::symbols`] of the definition the file alone shows this
    /// name is: set for a member written on the bare name of a type, class or module the
    /// file defines, when exactly one such member exists in the file (`Foo::new()` and
    /// `Foo.new`, the method of `impl Foo`), with [`Receiver::Own`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
}

/// One import statement's target, as written, before resolution to a file.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Import {
    /// The module specifier as written, without quotes: `os.path`, `.models`, `./util`,
    /// `crate::store::schema`, `github.com/x/y/pkg`, `foo/bar.h`, `com.acme.Util`.
    /// Conventions where the statement's form matters for resolution: Rust `mod foo;` is
    /// `self::foo`, and `#[path = "p.rs"] mod foo;` is `#[path = "p.rs"] self::foo`; a Rust `use a::b::c;` is module `a::b` with name `c`; C/C++
    /// `#include <x.h>` keeps its brackets (`<x.h>`); Ruby `require_relative 'x'` is `./x`;
    /// PHP `require __DIR__ . '/x.php'` is `__DIR__/x.php`; a Java wildcard ends in `.*`.
    pub module: String,
    /// Names imported from it (`from m import a, b` → `["a", "b"]`; `use m::{a, b}`), if any.
    pub names: Vec<String>,
    /// Where the statement is.
    pub span: Span,
    /// Index into [`FileAnalysis::symbols`] of the innermost definition the statement is
    /// written in (`use a::f;` inside `fn g` or `mod tests`, Python's `from m import f`
    /// inside `def g`): the names it binds are seen there only. `None` at module level,
    /// where they are seen by the whole file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enclosing: Option<u32>,
}

/// Why a file's analysis is incomplete. The file is still recorded; what could be read is kept.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Degraded {
    /// tree-sitter's progress callback stopped the parse: it used up its budget of parse
    /// work ([`analyze::AnalyzeOptions::timeout_ms`]). The same text stops the same way
    /// at every attempt under the same limit.
    ParseTimeout {
        /// The limit that was hit, in milliseconds of parse work.
        limit_ms: u64,
    },
    /// tree-sitter's progress callback stopped the parse at the wall-clock guard
    /// ([`analyze::WALL_GUARD_FACTOR`] times the limit) before the budget of work was
    /// used up: a safety net that depends on the machine's load, so a later attempt may
    /// parse.
    WallClockGuard {
        /// The guard that was passed, in milliseconds of wall time.
        after_ms: u64,
    },
    /// The tree nests deeper than the extraction limit; deeper nodes were not visited.
    TooDeep {
        /// The depth limit in nodes.
        limit: u32,
    },
}

/// Everything loci extracts from one file.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileAnalysis {
    /// Definitions, in document order.
    pub symbols: Vec<Symbol>,
    /// Uses of names, in document order.
    pub refs: Vec<Reference>,
    /// Import statements, in document order.
    pub imports: Vec<Import>,
    /// Semantic fingerprint of the whole file (comments and whitespace removed), 16 hex digits;
    /// see [`fingerprint`]. After a parse timeout it is a hash of the raw text instead
    /// ([`fingerprint::raw_text_fingerprint`]).
    pub fingerprint: String,
    /// Number of tree-sitter ERROR or MISSING nodes (a syntax-error count; 0 for clean files).
    pub error_nodes: u32,
    /// Set when the analysis is incomplete.
    pub degraded: Option<Degraded>,
}
