//! The compiled query of each language: the registry's query sources concatenated and
//! compiled once per process, plus the per-capture and per-node-kind tables extraction
//! and fingerprinting consult.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use tree_sitter::Query;

use super::Language;
use crate::{RefKind, SymbolKind};

/// What a capture means to extraction, by capture name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// `@name`: the name node of a definition, reference or scope.
    Name,
    /// `@doc`: a doc comment of a definition.
    Doc,
    /// `@definition.<kind>`.
    Def(SymbolKind),
    /// `@reference.<kind>`.
    Ref(RefKind),
    /// `@reference.value`: a name read as a value (`key=_make_key`, `ftplib.all_errors`),
    /// a reference only where the file binds the name or reads it from an imported
    /// module ([`RefKind::Other`]).
    Value,
    /// `@scope`: a qualifier for the definitions inside it that is not itself a symbol
    /// (a Rust `impl` block, named after its type).
    Scope,
    /// `@import`: an import statement.
    Import,
    /// `@import.module`: the module specifier as written.
    ImportModule,
    /// `@import.name`: one imported name.
    ImportName,
    /// `@import.tree`: a Rust `use` tree, flattened in code.
    ImportTree,
    /// `@import.kind`: the Ruby method (`require`, `require_relative`, `load`).
    ImportKind,
    /// `@import.arg`: a PHP `require`/`include` argument, read in code.
    ImportArg,
    /// `@import.use`: a PHP `use` declaration, read in code.
    ImportUse,
    /// `@ignore`: a node no reference may name (the tags convention).
    IgnoreNode,
    /// Anything else (`@local.scope`, predicate-only captures).
    Ignore,
}

fn role_for_capture(name: &str) -> Role {
    if let Some(kind) = name.strip_prefix("definition.") {
        // The kinds as `SymbolKind::as_str` names them (loci adds `struct`, `trait`, ... to
        // the grammars' own `function`, `method`, `class`).
        return Role::Def(SymbolKind::parse(kind));
    }
    if name == "reference.value" {
        return Role::Value;
    }
    if let Some(kind) = name.strip_prefix("reference.") {
        return Role::Ref(match kind {
            "call" | "send" => RefKind::Call,
            "type" | "class" => RefKind::Type,
            // C#'s query uses `@reference.interface` for interface base lists.
            "implementation" | "interface" => RefKind::Inherit,
            _ => RefKind::Other,
        });
    }
    match name {
        "name" => Role::Name,
        "doc" => Role::Doc,
        "scope" => Role::Scope,
        "import" => Role::Import,
        "import.module" => Role::ImportModule,
        "import.name" => Role::ImportName,
        "import.tree" => Role::ImportTree,
        "import.kind" => Role::ImportKind,
        "import.arg" => Role::ImportArg,
        "import.use" => Role::ImportUse,
        "ignore" => Role::IgnoreNode,
        _ => Role::Ignore,
    }
}

/// A language's compiled query plus the per-capture and per-node-kind tables extraction
/// and fingerprinting consult (indexed by capture index and node kind id).
pub(crate) struct CompiledQuery {
    pub(crate) query: Query,
    /// Role of each capture index.
    pub(crate) roles: Vec<Role>,
    /// Per pattern: `(#is-not? local)` (Ruby: the name must not be a local variable).
    pub(crate) not_local: Vec<bool>,
}

/// Per node kind flags ([`LangQuery::kinds`]).
pub(crate) mod kind_flags {
    /// A comment (kind name contains `comment`): skipped by fingerprints.
    pub(crate) const COMMENT: u8 = 1;
    /// A leaf whose whitespace is layout, not meaning (`jsx_text`, PHP inline `text`,
    /// C `preproc_arg`): fingerprints collapse its whitespace runs.
    pub(crate) const COLLAPSE_WS: u8 = 2;
    /// A named node kind.
    pub(crate) const NAMED: u8 = 4;
    /// Some query pattern starts at this kind: the query runs at every such node.
    pub(crate) const ROOT: u8 = 8;
    /// Some `@definition.*` capture (or C/C++ widening) can be a node of this kind: the
    /// walk records its stream offsets when a match asked for it.
    pub(crate) const DEFINITION: u8 = 16;
    /// C/C++ declarations a `function_declarator` definition widens to: always recorded
    /// (the match that names them arrives after the walk entered them).
    pub(crate) const ALWAYS_RECORD: u8 = 32;
    /// A literal whose text between its children is all meaning, whitespace included:
    /// fingerprints keep it verbatim ([`LITERAL_KINDS`]).
    pub(crate) const LITERAL: u8 = 64;
    /// A [`COLLAPSE_WS`] leaf that holds quoted strings (C `preproc_arg`): whitespace
    /// inside `"…"` and `'…'` is kept.
    pub(crate) const KEEP_QUOTED: u8 = 128;
}

/// Named kinds whose text between children is literal text, whitespace included: the
/// grammars put hidden tokens there (a pattern with no name, or an `_`-named external), so
/// that text is in no child. Found by reading each grammar's `grammar.json` for visible
/// rules holding hidden tokens inside a literal:
///
/// - Python `string_content` (text around `escape_sequence` children: `"a\nb"`) and
///   `format_specifier` (`>8` in `f"{x:>8}"`);
/// - C# `interpolation_format_clause` (`F2` in `$"{x:F2}"`) and `raw_string_literal`
///   (a `u8` suffix);
/// - Rust `raw_string_literal` (its `r#"` and `"#`, `br"` and `cr"`);
/// - PHP `heredoc`, `heredoc_body`, `nowdoc`, `nowdoc_body` (line breaks, blank lines,
///   the closing marker's indentation);
/// - Ruby `heredoc_body`.
///
/// Elsewhere, text between children that is not whitespace is kept too (collapsed like
/// layout): the rule for every hidden token no list names.
pub(crate) const LITERAL_KINDS: [&str; 8] = [
    "string_content",
    "format_specifier",
    "interpolation_format_clause",
    "raw_string_literal",
    "heredoc",
    "heredoc_body",
    "nowdoc",
    "nowdoc_body",
];

/// Everything per language that is computed once.
pub(crate) struct LangQuery {
    pub(crate) compiled: Result<CompiledQuery, String>,
    /// Per node kind id: [`kind_flags`] bits.
    pub(crate) kinds: Vec<u8>,
    /// Per node kind id: its name (for an anonymous kind, the text it stands for).
    pub(crate) names: Vec<Box<str>>,
    /// Python only: kind ids for docstring detection, else `u16::MAX`.
    pub(crate) py: PythonKinds,
    /// Rust only: kind ids for finding macro bodies that hold items, else `u16::MAX`.
    pub(crate) rust: RustKinds,
}

/// Kind ids of the Rust nodes that place a macro invocation where items go, and of its
/// braces (`analyze`: items inside `cfg_net! { .. }` are parsed again).
#[derive(Clone, Copy)]
pub(crate) struct RustKinds {
    pub(crate) macro_invocation: u16,
    pub(crate) token_tree: u16,
    /// Containers whose direct children are items: `source_file`, `declaration_list`
    /// (`impl`, `mod`, `trait`, `extern` bodies), `block` (function bodies).
    pub(crate) source_file: u16,
    pub(crate) declaration_list: u16,
    pub(crate) block: u16,
    /// The anonymous `{` token.
    pub(crate) open_brace: u16,
}

impl RustKinds {
    const NONE: RustKinds = RustKinds {
        macro_invocation: u16::MAX,
        token_tree: u16::MAX,
        source_file: u16::MAX,
        declaration_list: u16::MAX,
        block: u16::MAX,
        open_brace: u16::MAX,
    };

    /// Whether a node of kind `kind` holds items as its direct children.
    pub(crate) fn holds_items(&self, kind: u16) -> bool {
        kind != u16::MAX
            && (kind == self.source_file || kind == self.declaration_list || kind == self.block)
    }
}

/// Kind ids of the Python nodes that make a docstring.
#[derive(Clone, Copy)]
pub(crate) struct PythonKinds {
    pub(crate) module: u16,
    pub(crate) block: u16,
    pub(crate) expression_statement: u16,
    pub(crate) string: u16,
    pub(crate) function_definition: u16,
    pub(crate) class_definition: u16,
}

impl PythonKinds {
    const NONE: PythonKinds = PythonKinds {
        module: u16::MAX,
        block: u16::MAX,
        expression_statement: u16::MAX,
        string: u16::MAX,
        function_definition: u16::MAX,
        class_definition: u16::MAX,
    };
}

fn build(language: Language) -> LangQuery {
    let spec = language.spec();
    let grammar = language.grammar();
    let sources = language.query_sources();
    let mut source = String::new();
    source.push_str(sources.extra_tags);
    for tags in &sources.tags {
        source.push('\n');
        source.push_str(tags);
    }
    source.push('\n');
    source.push_str(sources.imports);
    let compiled = Query::new(&grammar, &source)
        .map(|query| {
            let roles = query
                .capture_names()
                .iter()
                .map(|n| role_for_capture(n))
                .collect();
            let not_local = (0..query.pattern_count())
                .map(|i| {
                    query
                        .property_predicates(i)
                        .iter()
                        .any(|(p, is)| !*is && &*p.key == "local")
                })
                .collect();
            CompiledQuery {
                query,
                roles,
                not_local,
            }
        })
        .map_err(|e| format!("{} query: {e}", language.name()));
    let shape = QueryShape::of(&source);
    let count = grammar.node_kind_count();
    let names = (0..count)
        .map(|id| {
            grammar
                .node_kind_for_id(id as u16)
                .unwrap_or_default()
                .into()
        })
        .collect();
    let mut kinds = vec![0u8; count];
    for (id, flags) in kinds.iter_mut().enumerate() {
        let id16 = id as u16;
        let Some(kind) = grammar.node_kind_for_id(id16) else {
            continue;
        };
        let named = grammar.node_kind_is_named(id16);
        let mut f = 0u8;
        if named {
            f |= kind_flags::NAMED;
            if kind.contains("comment") {
                f |= kind_flags::COMMENT;
            }
            if spec.fingerprint.collapse_ws.contains(&kind) {
                f |= kind_flags::COLLAPSE_WS;
            }
            if spec.fingerprint.keep_quoted.contains(&kind) {
                f |= kind_flags::KEEP_QUOTED;
            }
            if spec.fingerprint.literal.contains(&kind) {
                f |= kind_flags::LITERAL;
            }
        }
        if f & kind_flags::COMMENT == 0 && shape.roots.matches(kind, named) {
            f |= kind_flags::ROOT;
        }
        if shape.definitions.matches(kind, named) {
            f |= kind_flags::DEFINITION;
        }
        if spec.extraction.declarator_definitions
            && named
            && matches!(
                kind,
                "function_definition" | "declaration" | "field_declaration"
            )
        {
            f |= kind_flags::DEFINITION | kind_flags::ALWAYS_RECORD;
        }
        *flags = f;
    }
    // A pattern rooted at a supertype (`(expression)`) starts at each of its subtypes.
    for id in 0..count as u16 {
        if grammar.node_kind_is_supertype(id)
            && kinds[id as usize] & (kind_flags::ROOT | kind_flags::DEFINITION) != 0
        {
            let inherited = kinds[id as usize] & (kind_flags::ROOT | kind_flags::DEFINITION);
            for &sub in grammar.subtypes_for_supertype(id) {
                if let Some(k) = kinds.get_mut(sub as usize) {
                    *k |= inherited;
                }
            }
        }
    }
    let py = if language == Language::Python {
        let id = |kind: &str| grammar.id_for_node_kind(kind, true);
        PythonKinds {
            module: id("module"),
            block: id("block"),
            expression_statement: id("expression_statement"),
            string: id("string"),
            function_definition: id("function_definition"),
            class_definition: id("class_definition"),
        }
    } else {
        PythonKinds::NONE
    };
    let rust = if language == Language::Rust {
        let id = |kind: &str, named: bool| grammar.id_for_node_kind(kind, named);
        RustKinds {
            macro_invocation: id("macro_invocation", true),
            token_tree: id("token_tree", true),
            source_file: id("source_file", true),
            declaration_list: id("declaration_list", true),
            block: id("block", true),
            open_brace: id("{", false),
        }
    } else {
        RustKinds::NONE
    };
    LangQuery {
        compiled,
        kinds,
        names,
        py,
        rust,
    }
}

/// A set of node kinds named in query source.
#[derive(Debug, Default)]
struct KindSet {
    /// `(kind)` names (named nodes).
    named: BTreeSet<String>,
    /// `"literal"` names (anonymous nodes).
    anonymous: BTreeSet<String>,
    /// `(_)` or `_`: any node.
    any: bool,
}

impl KindSet {
    fn matches(&self, kind: &str, named: bool) -> bool {
        self.any
            || if named {
                self.named.contains(kind)
            } else {
                self.anonymous.contains(kind)
            }
    }

    fn extend(&mut self, other: KindSet) {
        self.named.extend(other.named);
        self.anonymous.extend(other.anonymous);
        self.any |= other.any;
    }
}

/// What extraction needs to know about a query's patterns, read from its source: the node
/// kinds patterns start at (so the query can run at just those nodes, see
/// `analyze::extract`) and the kinds `@definition.*` captures sit on.
#[derive(Debug, Default)]
struct QueryShape {
    roots: KindSet,
    definitions: KindSet,
}

/// An S-expression of query source.
#[derive(Debug)]
enum Sexp {
    /// `( .. )`
    List(Vec<Sexp>),
    /// `[ .. ]`
    Alt(Vec<Sexp>),
    /// `"literal"`
    Str(String),
    /// Anything else: a kind name, `_`, `@capture`, `field:`, `!field`, `#predicate`,
    /// quantifier or anchor.
    Atom(String),
}

impl QueryShape {
    fn of(source: &str) -> QueryShape {
        let items = parse_sexps(source);
        let mut shape = QueryShape::default();
        for item in &items {
            shape.roots.extend(roots_of(item));
        }
        collect_definition_kinds(&items, &mut shape.definitions);
        shape
    }
}

/// Reads query source into S-expressions (iteratively; unbalanced input just ends lists).
fn parse_sexps(source: &str) -> Vec<Sexp> {
    let mut stack: Vec<(char, Vec<Sexp>)> = vec![(' ', Vec::new())];
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ';' => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '(' | '[' => stack.push((c, Vec::new())),
            ')' | ']' => {
                if stack.len() > 1 {
                    let (open, items) = stack.pop().unwrap_or((' ', Vec::new()));
                    let sexp = if open == '[' {
                        Sexp::Alt(items)
                    } else {
                        Sexp::List(items)
                    };
                    if let Some(top) = stack.last_mut() {
                        top.1.push(sexp);
                    }
                }
            }
            '"' => {
                let mut text = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some(n) = chars.next() {
                                text.push(n);
                            }
                        }
                        '"' => break,
                        c => text.push(c),
                    }
                }
                if let Some(top) = stack.last_mut() {
                    top.1.push(Sexp::Str(text));
                }
            }
            c if c.is_whitespace() => {}
            c => {
                let mut atom = String::from(c);
                while let Some(&n) = chars.peek() {
                    if n.is_whitespace() || matches!(n, '(' | ')' | '[' | ']' | '"' | ';') {
                        break;
                    }
                    atom.push(n);
                    chars.next();
                }
                if let Some(top) = stack.last_mut() {
                    top.1.push(Sexp::Atom(atom));
                }
            }
        }
    }
    while stack.len() > 1 {
        let (_, items) = stack.pop().unwrap_or((' ', Vec::new()));
        if let Some(top) = stack.last_mut() {
            top.1.push(Sexp::List(items));
        }
    }
    stack.pop().map(|(_, items)| items).unwrap_or_default()
}

/// The node kinds a pattern (or a sibling group, or an alternation) can start at.
fn roots_of(sexp: &Sexp) -> KindSet {
    let mut set = KindSet::default();
    match sexp {
        Sexp::Str(s) => {
            set.anonymous.insert(s.clone());
        }
        Sexp::Atom(a) if a == "_" => set.any = true,
        Sexp::Atom(_) => {}
        Sexp::Alt(items) => {
            for item in items {
                set.extend(roots_of(item));
            }
        }
        Sexp::List(items) => match items.first() {
            Some(Sexp::Atom(a)) if a.starts_with('#') => {}
            Some(Sexp::Atom(a)) if a == "_" => set.any = true,
            Some(Sexp::Atom(a)) => {
                set.named.insert(a.clone());
            }
            // A group of sibling patterns `((comment)* . (x))`: any of them may come first.
            Some(_) => {
                for item in items {
                    if matches!(item, Sexp::List(_) | Sexp::Alt(_) | Sexp::Str(_)) {
                        set.extend(roots_of(item));
                    }
                }
            }
            None => {}
        },
    }
    set
}

/// Adds the kinds every `@definition.*` capture sits on, searching `items` and all
/// nested lists (iteratively).
fn collect_definition_kinds(items: &[Sexp], out: &mut KindSet) {
    let mut stack: Vec<&[Sexp]> = vec![items];
    while let Some(items) = stack.pop() {
        let in_predicate = matches!(items.first(), Some(Sexp::Atom(a)) if a.starts_with('#'));
        let mut last_node: Option<&Sexp> = None;
        for item in items {
            match item {
                Sexp::List(inner) | Sexp::Alt(inner) => {
                    stack.push(inner);
                    last_node = Some(item);
                }
                Sexp::Str(_) => last_node = Some(item),
                Sexp::Atom(a) if a == "_" => last_node = Some(item),
                Sexp::Atom(a) if a.starts_with("@definition.") && !in_predicate => {
                    if let Some(node) = last_node {
                        out.extend(roots_of(node));
                    }
                }
                Sexp::Atom(_) => {}
            }
        }
    }
}

/// One slot per language ([`Language::ALL`] order), each built on first use.
static QUERIES: LazyLock<Vec<std::sync::OnceLock<LangQuery>>> = LazyLock::new(|| {
    Language::ALL
        .iter()
        .map(|_| std::sync::OnceLock::new())
        .collect()
});

/// The language's compiled query and tables, built on first use.
pub(crate) fn lang_query(language: Language) -> &'static LangQuery {
    QUERIES[language as usize].get_or_init(|| build(language))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pairs of distinct languages that link (each both ways); every other pair
    /// does not.
    #[test]
    fn languages_link_only_through_a_shared_mechanism() {
        let mut linked = Vec::new();
        for a in Language::ALL {
            for b in Language::ALL {
                if a != b && a.links_to(b) {
                    linked.push(format!("{}-{}", a.name(), b.name()));
                }
            }
        }
        assert_eq!(
            linked,
            [
                "javascript-typescript",
                "javascript-tsx",
                "javascript-vue",
                "javascript-svelte",
                "typescript-javascript",
                "typescript-tsx",
                "typescript-vue",
                "typescript-svelte",
                "tsx-javascript",
                "tsx-typescript",
                "tsx-vue",
                "tsx-svelte",
                "c-cpp",
                "c-objc",
                "cpp-c",
                "cpp-objc",
                "objc-c",
                "objc-cpp",
                "vue-javascript",
                "vue-typescript",
                "vue-tsx",
                "vue-svelte",
                "svelte-javascript",
                "svelte-typescript",
                "svelte-tsx",
                "svelte-vue",
            ]
        );
    }

    /// The Rust kinds that find macro bodies are the grammar's (an unknown name would be
    /// id 0), and the walk stops at `macro_invocation` (some pattern starts there).
    #[test]
    fn rust_macro_body_kinds_are_the_grammars() {
        let tables = lang_query(Language::Rust);
        let r = tables.rust;
        for id in [
            r.macro_invocation,
            r.token_tree,
            r.source_file,
            r.declaration_list,
            r.block,
            r.open_brace,
        ] {
            assert!(id != 0 && id != u16::MAX, "{id}");
        }
        assert_ne!(
            tables.kinds[r.macro_invocation as usize] & kind_flags::ROOT,
            0
        );
        assert!(!lang_query(Language::Python).rust.holds_items(0));
    }

    #[test]
    fn every_language_query_compiles() {
        // Every failure at once: a new language's query is written against its grammar by
        // trial.
        let failures: Vec<String> = Language::ALL
            .into_iter()
            .filter_map(|language| language.query().err().map(str::to_string))
            .collect();
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        for language in Language::ALL {
            // each part compiles on its own too
            let grammar = language.grammar();
            let sources = language.query_sources();
            for (i, part) in std::iter::once(sources.extra_tags.to_string())
                .chain(sources.tags)
                .chain(std::iter::once(sources.imports.to_string()))
                .enumerate()
            {
                if let Err(e) = Query::new(&grammar, &part) {
                    panic!("{} part {i}: {e}", language.name());
                }
            }
        }
    }

    #[test]
    fn query_shape_finds_roots_and_definition_kinds() {
        let shape = QueryShape::of(
            r#"
            ; a comment (with parens)
            ((comment)* @doc . (method_definition name: (_) @name) @definition.method
              (#select-adjacent! @doc @definition.method))
            [(class name: (_) @name) (class_declaration)] @definition.class
            (lexical_declaration (variable_declarator name: (identifier) @name) @definition.function)
            (call_expression function: (identifier) @name (#eq? @name "require")) @reference.call
            (type_identifier) @name @reference.type
            "#,
        );
        let named: Vec<&str> = shape.roots.named.iter().map(String::as_str).collect();
        assert_eq!(
            named,
            [
                "call_expression",
                "class",
                "class_declaration",
                "comment",
                "lexical_declaration",
                "method_definition",
                "type_identifier"
            ]
        );
        let defs: Vec<&str> = shape.definitions.named.iter().map(String::as_str).collect();
        assert_eq!(
            defs,
            [
                "class",
                "class_declaration",
                "method_definition",
                "variable_declarator"
            ]
        );
        assert!(!shape.roots.any && !shape.definitions.any);
    }

    fn kinds_with(language: Language, flag: u8) -> Vec<String> {
        let grammar = language.grammar();
        let mut names: Vec<String> = lang_query(language)
            .kinds
            .iter()
            .enumerate()
            .filter(|(_, f)| *f & flag != 0)
            .filter_map(|(id, _)| grammar.node_kind_for_id(id as u16).map(str::to_string))
            .collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn python_query_runs_only_at_pattern_roots() {
        assert_eq!(
            kinds_with(Language::Python, kind_flags::ROOT),
            [
                "aliased_import",
                "assignment",
                "attribute",
                "call",
                "class_definition",
                "default_parameter",
                "for_statement",
                "function_definition",
                "global_statement",
                "identifier",
                "import_from_statement",
                "import_statement",
                "keyword_argument",
                "module",
                "nonlocal_statement",
                "parameters",
                "type",
                "typed_default_parameter",
                "typed_parameter"
            ]
        );
        assert_eq!(
            kinds_with(Language::Python, kind_flags::DEFINITION),
            ["assignment", "class_definition", "function_definition"]
        );
        // comments are never roots (the walk skips them), even where a pattern starts with one
        assert!(
            !kinds_with(Language::JavaScript, kind_flags::ROOT).contains(&"comment".to_string())
        );
        assert!(
            kinds_with(Language::JavaScript, kind_flags::ROOT)
                .contains(&"method_definition".to_string())
        );
    }

    /// Each literal kind is some grammar's, and which are where is pinned: a grammar
    /// upgrade that renames one shows here.
    #[test]
    fn literal_kinds_are_the_grammars() {
        let mut found = BTreeSet::new();
        let mut lines = String::new();
        for language in Language::ALL {
            let kinds = kinds_with(language, kind_flags::LITERAL);
            lines.push_str(language.name());
            lines.push(':');
            for kind in &kinds {
                lines.push(' ');
                lines.push_str(kind);
            }
            lines.push('\n');
            found.extend(kinds);
        }
        assert_eq!(found, LITERAL_KINDS.map(String::from).into_iter().collect());
        expect_test::expect![[r#"
            rust: raw_string_literal string_content
            python: format_specifier string_content
            javascript:
            typescript:
            tsx:
            go: raw_string_literal
            java:
            c: string_content
            cpp: raw_string_literal string_content
            csharp: interpolation_format_clause raw_string_literal string_content
            ruby: heredoc_body string_content
            php: heredoc heredoc_body nowdoc nowdoc_body string_content
            kotlin:
            swift:
            scala:
            lua:
            bash:
            elixir:
            haskell:
            zig:
            dart:
            ocaml:
            julia:
            r:
            erlang:
            hcl:
            solidity:
            objc:
            proto:
            vue:
            svelte:
        "#]]
        .assert_eq(&lines);
        assert_eq!(
            kinds_with(Language::C, kind_flags::KEEP_QUOTED),
            ["preproc_arg"]
        );
    }

    #[test]
    fn language_order_matches_all() {
        for (i, language) in Language::ALL.into_iter().enumerate() {
            assert_eq!(language as usize, i);
        }
    }
}
