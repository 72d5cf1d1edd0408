//! The languages loci parses, one folder each, and the one registry that lists them.
//!
//! A language is a folder `lang/<language>/` holding its tree-sitter grammar binding, its
//! queries (loci's additions to the grammar crate's tags query, `tags-extra.scm`, and its
//! import query, `imports.scm`), the reading of its import statements, its import
//! resolver and its fingerprint rules, all gathered in one [`Spec`]. The registry is the
//! [`Language`] enum with [`Language::ALL`] and [`Language::spec`] below: adding a language
//! adds a variant, a line in each of those two, a folder, a fixture under
//! `fixtures/polyglot/`, and its names in the editors (`server/lsp/src/languages.rs`, an
//! exhaustive match: the editor configurations are checked against it). Nothing else in
//! loci names a language: extraction (`crate::analyze`), fingerprints, import resolution
//! and the engine's reference resolution read the [`Spec`].

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use tree_sitter::{Node, Query, Tree};

use crate::Import;
use crate::imports::{Names, PathIndex, RawImport};

mod query;

mod bash;
mod c;
mod csharp;
mod dart;
mod elixir;
mod erlang;
mod go;
mod haskell;
mod hcl;
mod java;
mod javascript;
mod julia;
mod kotlin;
mod lua;
mod objc;
mod ocaml;
mod php;
mod proto;
mod python;
mod r;
pub(crate) mod ruby;
pub(crate) mod rust;
mod scala;
mod sfc;
mod solidity;
mod swift;
mod zig;

pub(crate) use query::{LangQuery, PythonKinds, Role, RustKinds, kind_flags, lang_query};

/// A language loci can parse with tree-sitter: the registry's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    /// `.rs`
    Rust,
    /// `.py`, `.pyi`
    Python,
    /// `.js`, `.mjs`, `.cjs`, `.jsx`
    JavaScript,
    /// `.ts`, `.mts`, `.cts`
    TypeScript,
    /// `.tsx`
    Tsx,
    /// `.go`
    Go,
    /// `.java`
    Java,
    /// `.c`, `.h`
    C,
    /// `.cc`, `.cpp`, `.cxx`, `.hpp`, `.hh`, `.hxx`
    Cpp,
    /// `.cs`
    CSharp,
    /// `.rb`
    Ruby,
    /// `.php`
    Php,
    /// `.kt`, `.kts`
    Kotlin,
    /// `.swift`
    Swift,
    /// `.scala`, `.sc`
    Scala,
    /// `.lua`
    Lua,
    /// `.sh`, `.bash`
    Bash,
    /// `.ex`, `.exs`
    Elixir,
    /// `.hs`
    Haskell,
    /// `.zig`
    Zig,
    /// `.dart`
    Dart,
    /// `.ml`
    OCaml,
    /// `.jl`
    Julia,
    /// `.r`, `.R`
    R,
    /// `.erl`, `.hrl`
    Erlang,
    /// `.tf`, `.hcl`, `.tfvars`
    Hcl,
    /// `.sol`
    Solidity,
    /// `.m`
    ObjC,
    /// `.proto`
    Proto,
    /// `.vue`
    Vue,
    /// `.svelte`
    Svelte,
}

impl Language {
    /// Every language, in a fixed order (`language as usize` indexes per-language tables).
    pub const ALL: [Language; 31] = [
        Language::Rust,
        Language::Python,
        Language::JavaScript,
        Language::TypeScript,
        Language::Tsx,
        Language::Go,
        Language::Java,
        Language::C,
        Language::Cpp,
        Language::CSharp,
        Language::Ruby,
        Language::Php,
        Language::Kotlin,
        Language::Swift,
        Language::Scala,
        Language::Lua,
        Language::Bash,
        Language::Elixir,
        Language::Haskell,
        Language::Zig,
        Language::Dart,
        Language::OCaml,
        Language::Julia,
        Language::R,
        Language::Erlang,
        Language::Hcl,
        Language::Solidity,
        Language::ObjC,
        Language::Proto,
        Language::Vue,
        Language::Svelte,
    ];

    /// Everything loci knows about this language, from its folder.
    pub fn spec(self) -> &'static Spec {
        match self {
            Language::Rust => &rust::SPEC,
            Language::Python => &python::SPEC,
            Language::JavaScript => &javascript::JAVASCRIPT,
            Language::TypeScript => &javascript::TYPESCRIPT,
            Language::Tsx => &javascript::TSX,
            Language::Go => &go::SPEC,
            Language::Java => &java::SPEC,
            Language::C => &c::C,
            Language::Cpp => &c::CPP,
            Language::CSharp => &csharp::SPEC,
            Language::Ruby => &ruby::SPEC,
            Language::Php => &php::SPEC,
            Language::Kotlin => &kotlin::SPEC,
            Language::Swift => &swift::SPEC,
            Language::Scala => &scala::SPEC,
            Language::Lua => &lua::SPEC,
            Language::Bash => &bash::SPEC,
            Language::Elixir => &elixir::SPEC,
            Language::Haskell => &haskell::SPEC,
            Language::Zig => &zig::SPEC,
            Language::Dart => &dart::SPEC,
            Language::OCaml => &ocaml::SPEC,
            Language::Julia => &julia::SPEC,
            Language::R => &r::SPEC,
            Language::Erlang => &erlang::SPEC,
            Language::Hcl => &hcl::SPEC,
            Language::Solidity => &solidity::SPEC,
            Language::ObjC => &objc::SPEC,
            Language::Proto => &proto::SPEC,
            Language::Vue => &sfc::VUE,
            Language::Svelte => &sfc::SVELTE,
        }
    }

    /// The language of a path, from its extension ([`Spec::extensions`]); `None` for
    /// anything loci does not parse (such files are still recorded, just not parsed).
    pub fn from_path(path: &str) -> Option<Language> {
        let ext = path.rsplit_once('.')?.1;
        Language::ALL
            .into_iter()
            .find(|l| l.spec().extensions.contains(&ext))
    }

    /// The lower-case name used in storage and output (`rust`, `python`, `tsx`, ...).
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// The tree-sitter grammar.
    pub fn grammar(self) -> tree_sitter::Language {
        (self.spec().grammar)()
    }

    /// Parses [`Language::name`] output back.
    pub fn from_name(name: &str) -> Option<Language> {
        Language::ALL.into_iter().find(|l| l.name() == name)
    }

    /// The group of languages that can name each other's definitions: a reference written
    /// in this language resolves only to a definition whose language has the same group
    /// (the one rule the scan's resolver keys its definitions by). Languages link where a
    /// real mechanism links them, never by a shared name alone:
    ///
    /// - JavaScript, TypeScript and TSX, and the scripts of Vue and Svelte components: one
    ///   module system (a `.ts` file imports a `.js` one and the reverse under `allowJs`;
    ///   declarations and sources share names; a component imports both);
    /// - C, C++ and Objective-C: one preprocessor (a `.h` header is included by all three,
    ///   and `extern "C"` calls across).
    ///
    /// Every other language is a group of its own: a Rust `compiled.get()` is no Python
    /// `Message.get` (without this, one Rust + Python repository gets 49 such false links).
    pub fn link_group(self) -> Language {
        self.spec().link_group.unwrap_or(self)
    }

    /// Whether a reference written in `self` may resolve to a definition in `other`: the
    /// two have one [`Language::link_group`].
    pub fn links_to(self, other: Language) -> bool {
        self.link_group() == other.link_group()
    }

    /// The query sources of this language; see [`QuerySources`].
    pub fn query_sources(self) -> QuerySources {
        let spec = self.spec();
        QuerySources {
            extra_tags: spec.tags_extra,
            tags: (spec.tags)(),
            imports: spec.imports,
        }
    }

    /// This language's compiled query (tags additions, grammar tags queries, imports),
    /// compiled once per process; `Err` carries the compile error (a bug: a test compiles
    /// every language's query).
    pub fn query(self) -> Result<&'static Query, &'static str> {
        match &lang_query(self).compiled {
            Ok(compiled) => Ok(&compiled.query),
            Err(message) => Err(message),
        }
    }
}

/// The language name recorded for a path: a parsed language's [`Language::name`],
/// `markdown` for `.md`/`.markdown`, otherwise `None` (recorded as unknown).
pub fn file_language_name(path: &str) -> Option<&'static str> {
    if let Some(lang) = Language::from_path(path) {
        return Some(lang.name());
    }
    let ext = path.rsplit_once('.')?.1;
    match ext {
        "md" | "markdown" => Some("markdown"),
        _ => None,
    }
}

/// The query sources of one language, in the order they are concatenated and compiled
/// into that language's single [`tree_sitter::Query`] (one traversal of the tree finds
/// definitions, references and imports).
///
/// - `extra_tags`: loci's additions to the grammar's tags query (`tags-extra.scm` in the
///   language's folder), placed first so that, where two patterns define or reference the
///   same name node, the addition wins (the first pattern wins, as in `tree-sitter-tags`).
/// - `tags`: each grammar crate's own `TAGS_QUERY`, verbatim, except C#'s lone `@module`
///   capture, renamed `@definition.module`. TypeScript and TSX use the JavaScript tags
///   query followed by the TypeScript one; every JavaScript pattern compiles against both.
///   C++ uses `tree-sitter-cpp`'s own query (a superset of C's). Then, where a language
///   has them, loci's late additions (`constants.scm`: a constant read by its name), which
///   every other pattern on the same name node beats.
/// - `imports`: loci's import query (`imports.scm` in the language's folder).
#[derive(Clone, Debug)]
pub struct QuerySources {
    /// loci's additions to the tags query.
    pub extra_tags: &'static str,
    /// The grammar crates' tags queries (JavaScript's then TypeScript's for TS/TSX), then
    /// loci's late additions.
    pub tags: Vec<String>,
    /// loci's import query.
    pub imports: &'static str,
}

/// Everything loci knows about one language, defined in the language's folder.
pub struct Spec {
    /// The lower-case name used in storage and output.
    pub name: &'static str,
    /// The file extensions (without the dot) of this language's files.
    pub extensions: &'static [&'static str],
    /// The tree-sitter grammar.
    pub grammar: fn() -> tree_sitter::Language,
    /// loci's additions to the tags query ([`QuerySources::extra_tags`]).
    pub tags_extra: &'static str,
    /// The grammar crates' own tags queries, then loci's late additions
    /// ([`QuerySources::tags`]).
    pub tags: fn() -> Vec<String>,
    /// loci's import query ([`QuerySources::imports`]).
    pub imports: &'static str,
    /// The language whose definitions this one's references may name, when not itself
    /// ([`Language::link_group`]).
    pub link_group: Option<Language>,
    /// Reads one import-query match into imports; see [`ImportSink`].
    pub(crate) read_import: for<'t> fn(&RawImport<'t>, &[u8], &mut ImportSink<'_, 't>),
    /// Resolves one import of the file at a path to the repository files it names
    /// (`crate::imports::resolve`); empty when unresolved.
    pub(crate) resolve: fn(Language, &str, &Import, &PathIndex) -> BTreeSet<String>,
    /// The name an import that lists no names binds, when its statement binds its module
    /// (Python `import os.path` binds `os`, Go `import "x/fmt"` binds `fmt`); `None` for
    /// statements that bind nothing (`#include`, `require`, `using`).
    pub module_binding: fn(&str) -> Option<&str>,
    /// Whether a trimmed line is an attribute or decorator that may sit between a doc
    /// comment and its definition (`#[..]`, `@..`).
    pub(crate) attribute_line: fn(&str) -> bool,
    /// The member expressions that look a name up on a receiver: for a node kind, the
    /// field of the receiver and the field of the name.
    pub(crate) member_fields: fn(&str) -> Option<(&'static str, &'static str)>,
    /// The fingerprint rules of this grammar's node kinds.
    pub(crate) fingerprint: Fingerprint,
    /// Extraction rules beyond the queries ([`Extraction::PLAIN`] for none).
    pub(crate) extraction: Extraction,
    /// How the engine resolves references written in this language.
    pub resolution: Resolution,
}

/// Where to put what one import-query match reads: [`ImportSink::add`] records one module
/// of one statement with the names it imports.
pub(crate) struct ImportSink<'a, 't> {
    pub(crate) add: &'a mut dyn FnMut(Node<'t>, String, Names<'t>),
}

impl<'t> ImportSink<'_, 't> {
    /// Records `module` imported by `statement`, with the names it imports (and the nodes
    /// they are written at; `None` for `*`).
    pub(crate) fn add(&mut self, statement: Node<'t>, module: String, names: Names<'t>) {
        (self.add)(statement, module, names);
    }
}

/// What extraction does for a language beyond running its query.
#[derive(Clone, Copy)]
pub(crate) struct Extraction {
    /// C and C++: a `function_declarator` definition widens to its declaration, and
    /// prototypes of functions the file defines are dropped.
    pub(crate) declarator_definitions: bool,
    /// A definition's node as recorded and the qualifier its own text gives it beyond
    /// its nesting (a Go method's receiver type, a C++ out-of-line `Type::` scope).
    pub(crate) qualify_definition: for<'t> fn(Node<'t>, &[u8]) -> (Node<'t>, Option<String>),
    /// The doc string written inside a definition (a Python docstring), preferred to the
    /// comment above it.
    pub(crate) docstring: fn(Node<'_>, &[u8]) -> Option<String>,
    /// A function directly in a module is a method (Ruby `module M; def f; end; end`).
    pub(crate) module_functions_are_methods: bool,
    /// The local variables of a file, for references whose pattern says
    /// `(#is-not? local)` (Ruby: a bare name may be a variable or a method call).
    pub(crate) locals: Option<LocalsFn>,
    /// The byte ranges of the file that hold this language's code, for code embedded in
    /// another format (a Vue or Svelte component's `<script>` blocks); `None`: all of it.
    pub(crate) script_ranges: Option<fn(&str) -> Vec<tree_sitter::Range>>,
    /// Comment markers of this language's doc comments, tried before the markers every
    /// language shares (`///`, `//`, `/*`, `#`, `--`): Lua's `---`, Haskell's `-- |`,
    /// Erlang's `%%`.
    pub(crate) comment_markers: &'static [&'static str],
    /// How the language's code makes a receiver's type evident (`crate::types`); `None`:
    /// a method called on a value is matched by name only.
    pub(crate) typing: Option<crate::types::Typing>,
}

impl Extraction {
    /// The queries alone.
    pub(crate) const PLAIN: Extraction = Extraction {
        declarator_definitions: false,
        qualify_definition: |node, _| (node, None),
        docstring: |_, _| None,
        module_functions_are_methods: false,
        locals: None,
        script_ranges: None,
        comment_markers: &[],
        typing: None,
    };
}

/// Collects a file's local variables from its tree, its text and the depth limit
/// ([`Extraction::locals`]).
pub(crate) type LocalsFn = fn(&Tree, &[u8], u32) -> Box<dyn Locals>;

/// The local variables of a file ([`Extraction::locals`]).
pub(crate) trait Locals {
    /// Whether `name` at byte `at` is a local variable bound before it in its scope.
    fn is_local(&self, name: &str, at: usize) -> bool;
}

/// Which node kinds fingerprints treat as more than syntax (`crate::fingerprint`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fingerprint {
    /// Leaves whose whitespace is layout, not meaning (JSX text, PHP inline HTML, a C
    /// `#define` body): their whitespace runs are collapsed.
    pub(crate) collapse_ws: &'static [&'static str],
    /// [`Fingerprint::collapse_ws`] leaves that hold quoted strings: whitespace inside
    /// `"…"` and `'…'` is kept.
    pub(crate) keep_quoted: &'static [&'static str],
    /// Literals whose text between children is all meaning, whitespace included: kept
    /// verbatim.
    pub(crate) literal: &'static [&'static str],
}

impl Fingerprint {
    /// The rules of the twelve first languages, one list for all of them: each name is
    /// found in the grammars that have a node kind of that name (the
    /// `literal_kinds_are_the_grammars` test pins which).
    pub(crate) const SHARED: Fingerprint = Fingerprint {
        collapse_ws: &["jsx_text", "preproc_arg", "text", "html"],
        keep_quoted: &["preproc_arg"],
        literal: &query::LITERAL_KINDS,
    };

    /// No kind is more than syntax.
    pub(crate) const NONE: Fingerprint = Fingerprint {
        collapse_ws: &[],
        keep_quoted: &[],
        literal: &[],
    };
}

/// How the engine's reference resolution treats names written in a language.
#[derive(Clone, Copy, Debug, Default)]
pub struct Resolution {
    /// A bare name is never a member of the enclosing type (that is written `self.f()`,
    /// `this.f()`, `$this->f()`, `Self::f()`), so never a member at all.
    pub explicit_members: bool,
    /// A value is never a module or function: a name on a value is a method or field of
    /// it, never a free function.
    pub values_are_members: bool,
    /// The import rules are all known: a name on an import that binds no file of the map
    /// is outside it.
    pub bindings_known: bool,
    /// `self.f()` names a member of the enclosing type and no other (no inheritance).
    pub own_by_type: bool,
    /// A capitalised name is a type's by convention (not so in Go, where it is any
    /// exported name).
    pub capitalised_types: bool,
    /// A package is its directory: every file of it sees the others' names (Go; Java,
    /// whose package is its directory by convention).
    pub directory_packages: bool,
    /// A bare name is defined in its file, imported (by name or by a glob: `from m import
    /// *`, `use m::*`), or the language's prelude or builtins: never another file's
    /// definition the file does not import (Rust: a bare `Result` is the prelude's, not a
    /// crate's private `type Result`), nor one an import of its module does not bind
    /// (Python: `open()` after `import bz2` is the builtin, not `bz2.open`).
    pub names_imported: bool,
}

/// A [`Spec::attribute_line`] for languages with no attributes between a doc comment and
/// its definition.
pub(crate) fn no_attributes(_: &str) -> bool {
    false
}

/// A [`Spec::module_binding`] for languages whose imports bind no module name.
pub(crate) fn binds_nothing(_: &str) -> Option<&str> {
    None
}

/// A [`Spec::read_import`] for statements whose whole import is their module as written,
/// whitespace removed (Go `import "x/y"`, C `#include "x.h"`, C# `using A.B;`).
pub(crate) fn read_module_only<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let (Some(statement), Some(module)) = (r.statement, r.module) else {
        return;
    };
    sink.add(
        statement,
        crate::imports::squash(crate::analyze::node_text(module, bytes)),
        Vec::new(),
    );
}

/// A [`Spec::read_import`] for dotted imports that bind their last segment (Kotlin and
/// Scala `import a.b.C`, Haskell `import Data.Map`): the module as written, whitespace
/// removed, with that segment as its one name (none for a wildcard `a.b.*` or `a.b._`).
pub(crate) fn read_dotted<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let (Some(statement), Some(module)) = (r.statement, r.module) else {
        return;
    };
    let text = crate::imports::squash(crate::analyze::node_text(module, bytes));
    let names = r
        .names
        .iter()
        .map(|n| (crate::analyze::node_text(*n, bytes).to_string(), Some(*n)))
        .collect();
    sink.add(statement, text, names);
}

/// A [`Spec::read_import`] for imports written as a string literal (`source "x.sh"`,
/// `@import("x.zig")`, `import "./X.sol"`): the text between the quotes.
pub(crate) fn read_quoted<'t>(r: &RawImport<'t>, bytes: &[u8], sink: &mut ImportSink<'_, 't>) {
    let (Some(statement), Some(module)) = (r.statement, r.module) else {
        return;
    };
    let text = crate::analyze::node_text(module, bytes);
    let unquoted = text
        .trim()
        .trim_matches(|c| c == '"' || c == '\'' || c == '`')
        .to_string();
    sink.add(statement, unquoted, Vec::new());
}

impl Resolution {
    /// References resolve by name alone: no rule of the language's is known beyond it.
    pub const BY_NAME: Resolution = Resolution {
        explicit_members: false,
        values_are_members: false,
        bindings_known: false,
        own_by_type: false,
        capitalised_types: true,
        directory_packages: false,
        names_imported: false,
    };
}

/// A [`Spec::member_fields`] for languages with no member expressions loci reads.
pub(crate) fn no_members(_: &str) -> Option<(&'static str, &'static str)> {
    None
}
