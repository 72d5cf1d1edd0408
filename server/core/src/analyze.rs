//! Parse a file with tree-sitter and extract its symbols, references and imports.
//!
//! [`analyze`] is [`parse`] followed by [`extract`]; the language server calls the two
//! halves itself to reparse open buffers incrementally. Extraction is one iterative walk
//! of the tree ([`crate::fingerprint::walk`]: token stream, comments, error count) that
//! runs the language's one compiled query (tags additions, the grammar's tags query, the
//! import query; see [`crate::lang::QuerySources`]) at every node where one of its
//! patterns can start, and only there. Nothing here recurses over the tree, so arbitrarily
//! deep input cannot overflow the stack; nodes deeper than `max_depth` are not visited.
//!
//! Rules, in the order extraction applies them:
//!
//! - **Definitions** come from `@definition.<kind>` captures with their `@name`. When two
//!   patterns define the same name node, the first pattern wins (as in `tree-sitter-tags`);
//!   loci's additions come first. C and C++ definitions captured on a `function_declarator`
//!   are widened to the enclosing `function_definition` (or declaration), so spans and body
//!   fingerprints cover the body. A C/C++ prototype is dropped when the same file also
//!   defines that function.
//! - **Nesting**: a definition's parent is the innermost definition whose node contains it.
//!   Rust `impl` blocks are *scopes*: not symbols, but they qualify what they contain with
//!   the implementing type. Go methods are qualified by their receiver type, C++
//!   out-of-line methods by their `Type::` scope.
//! - **Kinds**: `qualified_name` joins the enclosing names with `.`. A function (or a
//!   tags-query "method") is a [`SymbolKind::Method`] when it is directly inside a class,
//!   interface/trait, Rust `impl`, Ruby module, or has a receiver/`Type::` qualifier;
//!   otherwise it is a [`SymbolKind::Function`] (a Rust `fn` inside `mod`, a top-level Ruby
//!   `def`, an object-literal method inside a function).
//! - **Keys**: `path#qualified_name@kind`, the n-th (n ≥ 2, document order) repeat of the
//!   same qualified name and kind gets `[n]`.
//! - **Signature**: the definition's first line, trimmed; when that line is only an
//!   annotation or attribute (`@Override`, `[Test]`), the line holding the name instead.
//!   Cut to 200 bytes on a char boundary.
//! - **Doc**: Python: the docstring, else the comment block above. Others: the contiguous
//!   block of line-leading comments directly above the definition (skipping attribute and
//!   decorator lines), markers stripped. This is what the tags queries' `@doc` captures
//!   with `#select-adjacent!` select (JavaScript, Go, Ruby); loci computes it the same way
//!   for every language from the comments the walk records.
//! - **References**: every `@reference.<kind>` capture with its `@name`, deduplicated per
//!   name node (first pattern wins), minus names that are a definition's own name. Ruby's
//!   `(#is-not? local)` is honoured: an identifier bound earlier in the same method (or
//!   class/module/file body) by assignment or as a parameter is a local, not a call.
//!   Names imported by import statements become [`RefKind::Import`] references. A member
//!   written on the bare name of a type, class or module the file defines (`Foo::new()`,
//!   `Foo.create()`) whose one definition the file holds (`Foo.new`) is resolved here:
//!   [`Reference::target`], with [`Receiver::Own`].
//! - **Rust macro bodies**: tree-sitter leaves a macro invocation's body as a token tree,
//!   so items written inside one (`cfg_net! { pub struct TcpStream { .. } }`, tokio's
//!   `cfg_rt!`, `pin_project!`) would be invisible. A `{ .. }` body of an invocation where
//!   items go (a direct child of the file, an `impl`/`mod`/`trait` body or a block) is
//!   parsed again on its own with tree-sitter's included ranges, so every position is the
//!   file's, and walked like the file: its definitions, references and imports join the
//!   file's and nest by position (`impl Runtime { cfg_rt! { fn spawn() } }` is the method
//!   `Runtime.spawn`; `use`/`mod` in a body inside `mod a { .. }` are `a`'s). Nested bodies
//!   are parsed in turn, down to [`MAX_MACRO_DEPTH`] levels. A body whose top level is not
//!   items only (an ERROR, MISSING, `let` or expression other than a macro call among the
//!   root's children: `select! { .. }`, DSLs) adds nothing; a `cfg_if!` body is not items,
//!   but each of its branches' `{ .. }` is parsed as one body; `(..)`/`[..]` bodies
//!   (`vec![..]`, `println!(..)`, `json!({..})`), `quote!`-like templates and
//!   `macro_rules!` rules are never parsed again. Body fingerprints come from the body's own token stream (a definition moved
//!   into a `cfg` block keeps its fingerprint); the file fingerprint and error count are the
//!   file tree's. All bodies of a file share one `timeout_ms` budget (besides the file's
//!   own); bodies left when it runs out stay token trees.
//! - **Parse limit** (`timeout_ms`): a budget of parse *work*, not of wall time, so a file
//!   parses or degrades the same on an idle machine and on a loaded one (issue 30: under
//!   load a fresh scan of the stdlib lost `test/test_statistics.py`'s symbols to a
//!   wall-clock limit, and the map differed from an incremental scan's). tree-sitter calls
//!   the progress callback once every 100 parser operations, counted from the start of
//!   each parse, so the number of calls depends only on the grammar, the text and the old
//!   tree; the parse stops after `timeout_ms × `[`PARSE_STEPS_PER_MS`] calls. A wall-clock
//!   guard at [`WALL_GUARD_FACTOR`]` × timeout_ms` stays as a safety net against input
//!   whose operations are pathologically slow; only it depends on the machine, and the
//!   scan retries every file a parse limit degraded (engine `scan.rs`).
//! - **Timeouts**: when the parse is stopped, the analysis is empty except for a
//!   fingerprint of the raw text ([`crate::fingerprint::raw_text_fingerprint`]) and
//!   `degraded = ParseTimeout`.

use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, ParseState, Parser, QueryCursor, StreamingIterator, Tree};

use crate::fingerprint::{self, CommentSpan, Expected, FastMap, FastSet};
use crate::imports::{self, RawImport};
use crate::lang::{LangQuery, Role, RustKinds, lang_query};
use crate::position::RowIndex;
use crate::types;
use crate::{
    Degraded, FileAnalysis, Import, Language, Receiver, RefKind, Reference, Span, Symbol,
    SymbolKind,
};

/// Limits for one file's analysis.
#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Parse limit in milliseconds of parse work: the parse stops after
    /// `timeout_ms × `[`PARSE_STEPS_PER_MS`] calls of tree-sitter's progress callback
    /// (each 100 parser operations), whatever the machine's load, or at the wall-clock
    /// guard, [`WALL_GUARD_FACTOR`]` × timeout_ms` milliseconds (see the module docs).
    pub timeout_ms: u64,
    /// Deepest tree depth (in nodes) extraction visits.
    pub max_depth: u32,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            timeout_ms: 500,
            max_depth: 2_000,
        }
    }
}

/// Progress-callback calls (each 100 tree-sitter parser operations) that one millisecond
/// of `timeout_ms` buys: the median pace measured on a 2-core development machine over
/// the Python stdlib and the Rust and C sources of a cargo registry (12,600 files; 30
/// calls per ms, `test/test_statistics.py` 1,055 calls in 47 ms). The default 500 ms is
/// 15,000 calls. The budget bounds a parse's memory too: a parse holds 4–7 KB of
/// memory per call (six files of 0.6–1.9 MB scanned alone, peak RSS less the 28 MiB of a
/// scan that parses almost nothing: a generated 1.87 MB Rust test file took 52,330 calls
/// and 272 MiB), so one file's parse stays under about 100 MB; of the 48,069 files of the stdlib, site-packages and a cargo
/// registry, 2 generated test tables need more.
pub const PARSE_STEPS_PER_MS: u64 = 30;

/// The wall-clock guard, as a multiple of `timeout_ms`: stops a parse whose operations are
/// so slow (error recovery over some C headers ran at 2 calls per ms, 15 times slower than
/// the median) that the work budget alone would hold a parser thread too long. Only this
/// guard depends on load; a machine would have to be ten times slower than the pace
/// above for it to stop a parse the budget allows.
pub const WALL_GUARD_FACTOR: u64 = 10;

/// What one parse may still spend: progress-callback calls and the wall-clock guard,
/// shared by the parses it is passed to (a file's macro bodies share one).
struct Budget {
    steps_left: Cell<u64>,
    guard: Instant,
    /// Set when a parse was stopped for running out.
    spent: Cell<bool>,
    /// Set when that stop was the wall-clock guard's, with work left.
    guarded: Cell<bool>,
}

impl Budget {
    fn new(timeout_ms: u64) -> Budget {
        Budget {
            steps_left: Cell::new(timeout_ms.saturating_mul(PARSE_STEPS_PER_MS)),
            guard: Instant::now()
                + Duration::from_millis(timeout_ms.saturating_mul(WALL_GUARD_FACTOR)),
            spent: Cell::new(false),
            guarded: Cell::new(false),
        }
    }

    /// One progress-callback call: false once the budget is used up or the guard passed.
    fn step(&self) -> bool {
        let left = self.steps_left.get();
        if left == 0 || Instant::now() >= self.guard {
            self.spent.set(true);
            self.guarded.set(left > 0);
            return false;
        }
        self.steps_left.set(left - 1);
        true
    }

    /// Why a parse within this budget of `timeout_ms` stopped, if it did.
    fn degraded(&self, timeout_ms: u64) -> Option<Degraded> {
        if self.guarded.get() {
            Some(Degraded::WallClockGuard {
                after_ms: timeout_ms.saturating_mul(WALL_GUARD_FACTOR),
            })
        } else if self.spent.get() {
            Some(Degraded::ParseTimeout {
                limit_ms: timeout_ms,
            })
        } else {
            None
        }
    }
}

/// Longest signature kept, in bytes.
const MAX_SIGNATURE_BYTES: usize = 200;

thread_local! {
    /// One parser per language per thread (index: `Language as usize`).
    static PARSERS: RefCell<Vec<Option<Parser>>> =
        RefCell::new((0..Language::ALL.len()).map(|_| None).collect());
    /// One query cursor per thread, reused for every file.
    static QUERY_CURSOR: RefCell<QueryCursor> = RefCell::new(QueryCursor::new());
    /// The token stream buffer, reused for every file.
    static STREAM: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// One Rust parser per thread for macro bodies (it keeps their included ranges).
    static MACRO_PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `text` (the file's contents, BOM already removed) and extracts everything.
/// `path` is the repo-relative, `/`-separated path used in symbol keys. Never fails.
pub fn analyze(
    path: &str,
    language: Language,
    text: &str,
    options: &AnalyzeOptions,
) -> FileAnalysis {
    let (tree, degraded) = parse(language, text, None, options);
    match tree {
        Some(tree) => extract(path, language, text, &tree, options),
        None => FileAnalysis {
            fingerprint: fingerprint::raw_text_fingerprint(text),
            degraded,
            ..FileAnalysis::default()
        },
    }
}

/// Parses `text` with this thread's parser for `language`, reusing `old_tree` (already
/// [`Tree::edit`]ed to match `text`) for an incremental reparse.
///
/// Returns the tree, or `None` with [`Degraded::ParseTimeout`] when the parse used up
/// `options.timeout_ms` of parse work or passed the wall-clock guard (both checked through
/// tree-sitter's progress callback, so the limit holds on pathological input too; see
/// [`AnalyzeOptions::timeout_ms`]). Never panics.
pub fn parse(
    language: Language,
    text: &str,
    old_tree: Option<&Tree>,
    options: &AnalyzeOptions,
) -> (Option<Tree>, Option<Degraded>) {
    let run = |parser: &mut Parser| -> (Option<Tree>, Option<Degraded>) {
        if let Some(ranges) = language.spec().extraction.script_ranges
            && parser.set_included_ranges(&ranges(text)).is_err()
        {
            // Ranges out of order or overlapping: a bug of `ranges`; nothing is read.
            return (None, None);
        }
        let budget = Budget::new(options.timeout_ms);
        let tree = parse_within(parser, text, old_tree, &budget);
        let degraded = if tree.is_none() {
            budget.degraded(options.timeout_ms)
        } else {
            None
        };
        (tree, degraded)
    };
    let fresh = || {
        let mut parser = Parser::new();
        parser
            .set_language(&language.grammar())
            .ok()
            .map(|()| parser)
    };
    PARSERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut parsers) => {
            let slot = &mut parsers[language as usize];
            if slot.is_none() {
                *slot = fresh();
            }
            match slot.as_mut() {
                Some(parser) => run(parser),
                None => (None, None),
            }
        }
        Err(_) => match fresh() {
            Some(mut parser) => run(&mut parser),
            None => (None, None),
        },
    })
}

/// Parses `text` with `parser`, reusing `old_tree`, within `budget` (checked through
/// tree-sitter's progress callback, so it holds on pathological input too). `None` when
/// the parse was cancelled; the parser is then reset (a cancelled parse leaves state for
/// resumption; the next parse is a new one).
fn parse_within(
    parser: &mut Parser,
    text: &str,
    old_tree: Option<&Tree>,
    budget: &Budget,
) -> Option<Tree> {
    let mut progress = |_: &ParseState| {
        if budget.step() {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        }
    };
    let bytes = text.as_bytes();
    let mut input = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    let tree = parser.parse_with_options(
        &mut input,
        old_tree,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    if tree.is_none() {
        parser.reset();
    }
    tree
}

/// Extracts symbols, references, imports, fingerprints and the error count from `tree`, the
/// tree of `text` (which must be the text it was parsed from; a mismatch yields wrong
/// positions, never a panic). A tree of another language than `language` yields an empty
/// analysis with a raw-text fingerprint. `path` is the repo-relative,
/// `/`-separated path used in symbol keys. Never fails; nodes deeper than
/// `options.max_depth` are skipped and reported as [`Degraded::TooDeep`].
pub fn extract(
    path: &str,
    language: Language,
    text: &str,
    tree: &Tree,
    options: &AnalyzeOptions,
) -> FileAnalysis {
    if *tree.language() != language.grammar() {
        // A caller bug (a tree of another language): nothing can be read from it safely.
        return FileAnalysis {
            fingerprint: fingerprint::raw_text_fingerprint(text),
            ..FileAnalysis::default()
        };
    }
    let stream = STREAM.with(|s| {
        s.try_borrow_mut()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    });
    let (analysis, stream_back) = extract_with(path, language, text, tree, options, stream);
    STREAM.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            *s = stream_back;
        }
    });
    analysis
}

/// One definition capture, before nesting.
struct RawDef<'t> {
    node: Node<'t>,
    name: Node<'t>,
    kind: SymbolKind,
    pattern: usize,
    /// The walk it was found in (index into the walks: 0 is the file's tree, then the
    /// macro bodies parsed again), whose token stream holds its body.
    walk: usize,
}

/// One reference capture.
struct RawRef<'t> {
    /// The `@reference.*` node: the name's parent is found below it.
    node: Node<'t>,
    name: Node<'t>,
    kind: RefKind,
    pattern: usize,
    not_local: bool,
}

/// A definition or a scope, in the nesting pass.
struct Entry<'t> {
    node: Node<'t>,
    /// `None` for a scope.
    def: Option<usize>,
    /// Qualified name of this entry (scopes too).
    qualified: String,
    kind: SymbolKind,
    parent_entry: Option<usize>,
}

/// Rust: how many macro bodies deep items are looked for (`cfg_net! { cfg_unix! { .. } }`
/// is two); bodies nested deeper stay token trees.
pub const MAX_MACRO_DEPTH: usize = 8;

/// Rust macros whose `{ .. }` body is a code template (it is quoted, not compiled where it
/// is written): its items are not the file's.
const CODE_TEMPLATE_MACROS: [&str; 4] = [
    "quote",
    "quote_spanned",
    "parse_quote",
    "parse_quote_spanned",
];

/// Rust: a macro invocation's `{ .. }` body at a place where items go, to be parsed again.
struct MacroBody<'t> {
    /// The invocation: the inline modules around it qualify the imports in the body.
    host: Node<'t>,
    /// The walk that found it.
    walk: usize,
    /// The bytes between the braces, with their points.
    range: tree_sitter::Range,
}

/// A macro body parsed on its own as Rust items.
struct MacroTree {
    tree: Tree,
    /// The inline modules around the invocation, outermost first (see [`RawImport`]).
    modules: Vec<String>,
}

/// What the query matches of a file's walks found.
#[derive(Default)]
struct Collected<'t> {
    defs: Vec<RawDef<'t>>,
    scopes: Vec<(Node<'t>, String)>,
    raw_refs: Vec<RawRef<'t>>,
    raw_imports: Vec<RawImport<'t>>,
    /// Name nodes an `@ignore` capture names: never a reference (the tags convention:
    /// Elixir's query ignores the `def` of `def f(..)`, which a call pattern also takes).
    ignored: FastSet<usize>,
    /// Rust macro bodies found since the last round of parsing them.
    bodies: Vec<MacroBody<'t>>,
}

impl<'t> Collected<'t> {
    /// Runs the query at `node` (whose parent has kind id `parent`), found by walk number
    /// `walk`, whose tree lies inside the inline modules `modules` (Rust macro bodies),
    /// and records a Rust macro body that may hold items.
    #[allow(clippy::too_many_arguments)]
    fn visit(
        &mut self,
        cursor: &mut QueryCursor,
        tables: &LangQuery,
        bytes: &[u8],
        node: Node<'t>,
        parent: u16,
        expected: &mut Expected,
        walk: usize,
        modules: &[String],
    ) {
        if node.kind_id() == tables.rust.macro_invocation && tables.rust.holds_items(parent) {
            let mut ranges = Vec::new();
            macro_item_bodies(node, &tables.rust, bytes, &mut ranges);
            self.bodies
                .extend(ranges.into_iter().map(|range| MacroBody {
                    host: node,
                    walk,
                    range,
                }));
        }
        let Ok(compiled) = &tables.compiled else {
            return;
        };
        let mut matches = cursor.matches(&compiled.query, node, bytes);
        while let Some(m) = matches.next() {
            let mut name = None;
            let mut def = None;
            let mut reference = None;
            let mut scope = None;
            let mut import = RawImport::default();
            let mut is_import = false;
            for capture in m.captures() {
                let node = capture.node;
                let role = compiled
                    .roles
                    .get(capture.index as usize)
                    .copied()
                    .unwrap_or(Role::Ignore);
                match role {
                    Role::Name => name = Some(node),
                    Role::Def(kind) => def = Some((node, kind)),
                    Role::Ref(kind) => reference = Some((node, kind)),
                    Role::Scope => scope = Some(node),
                    Role::Import | Role::ImportUse => {
                        is_import = true;
                        import.statement = Some(node);
                        import.php_use |= role == Role::ImportUse;
                    }
                    Role::ImportModule => import.module = Some(node),
                    Role::ImportName => import.names.push(node),
                    Role::ImportTree => import.tree = Some(node),
                    Role::ImportKind => import.kind = Some(node),
                    Role::ImportArg => import.arg = Some(node),
                    Role::IgnoreNode => {
                        self.ignored.insert(node.id());
                    }
                    Role::Doc | Role::Ignore => {}
                }
            }
            if is_import {
                import.outer_modules = modules.to_vec();
                self.raw_imports.push(import);
                continue;
            }
            let Some(name) = name else { continue };
            if let Some((node, kind)) = def {
                expected.insert(node.id());
                self.defs.push(RawDef {
                    node,
                    name,
                    kind,
                    pattern: m.pattern_index,
                    walk,
                });
            } else if let Some((node, kind)) = reference {
                let not_local = compiled
                    .not_local
                    .get(m.pattern_index)
                    .copied()
                    .unwrap_or(false);
                self.raw_refs.push(RawRef {
                    node,
                    name,
                    kind,
                    pattern: m.pattern_index,
                    not_local,
                });
            } else if let Some(node) = scope {
                self.scopes
                    .push((node, base_type_name(node_text(name, bytes)).to_string()));
            }
        }
    }
}

/// Rust: the byte ranges between the braces of the macro invocation `node`'s `{ .. }` body,
/// appended to `out`: the body itself, or for `cfg_if!` (`cfg_if! { if #[cfg(unix)] { .. }
/// else { .. } }`) each branch's `{ .. }`. Nothing for an empty body, a code template
/// ([`CODE_TEMPLATE_MACROS`]), or a `( .. )`/`[ .. ]` body (`vec![..]`, `println!(..)`,
/// `json!({..})`).
fn macro_item_bodies(
    node: Node<'_>,
    kinds: &RustKinds,
    bytes: &[u8],
    out: &mut Vec<tree_sitter::Range>,
) {
    let Some(body) = node
        .child_count()
        .checked_sub(1)
        .and_then(|last| node.child(last))
    else {
        return;
    };
    if body.kind_id() != kinds.token_tree || bytes.get(body.start_byte()) != Some(&b'{') {
        return;
    }
    let Some(name) = node.child_by_field_name("macro") else {
        return;
    };
    let name = node_text(name, bytes);
    let last = name.rsplit("::").next().unwrap_or(name).trim();
    if CODE_TEMPLATE_MACROS.contains(&last) {
        return;
    }
    if last == "cfg_if" {
        let mut cursor = body.walk();
        for branch in body.named_children(&mut cursor) {
            if branch.kind_id() == kinds.token_tree
                && let Some(range) = brace_inner(branch, kinds, bytes)
            {
                out.push(range);
            }
        }
    } else if let Some(range) = brace_inner(body, kinds, bytes) {
        out.push(range);
    }
}

/// The range between the braces of the token tree `tree` when it is a `{ .. }` with
/// something but whitespace inside and its closing brace is not MISSING.
fn brace_inner(tree: Node<'_>, kinds: &RustKinds, bytes: &[u8]) -> Option<tree_sitter::Range> {
    if bytes.get(tree.start_byte()) != Some(&b'{')
        || tree.end_byte() < tree.start_byte() + 2
        || bytes.get(tree.end_byte() - 1) != Some(&b'}')
    {
        return None;
    }
    let open = tree.child(0)?;
    let close = tree.child(tree.child_count().checked_sub(1)?)?;
    if open.kind_id() != kinds.open_brace
        || close.kind_id() != kinds.close_brace
        || close.is_missing()
    {
        return None;
    }
    let (start, end) = (open.end_byte(), close.start_byte());
    if bytes.get(start..end)?.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    Some(tree_sitter::Range {
        start_byte: start,
        end_byte: end,
        start_point: open.end_position(),
        end_point: close.start_position(),
    })
}

/// Rust: parses the bytes of `range` in `text` on their own (tree-sitter included ranges,
/// so every position in the tree is the file's), and returns the tree when its top level
/// is items only: no ERROR or MISSING node, expression (but a macro call) or `let`
/// statement among the root's children (a `select! { .. }` or other macro syntax parses with errors at the top and adds
/// nothing). `None` too when the parse runs out of `budget`.
fn parse_macro_body(text: &str, range: tree_sitter::Range, budget: &Budget) -> Option<Tree> {
    let run = |parser: &mut Parser| -> Option<Tree> {
        parser.set_included_ranges(&[range]).ok()?;
        parse_within(parser, text, None, budget)
    };
    let fresh = || {
        let mut parser = Parser::new();
        parser
            .set_language(&Language::Rust.grammar())
            .ok()
            .map(|()| parser)
    };
    let tree = MACRO_PARSER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => {
            if slot.is_none() {
                *slot = fresh();
            }
            slot.as_mut().and_then(run)
        }
        Err(_) => fresh().as_mut().and_then(run),
    })?;
    let root = tree.root_node();
    if root.is_error() || root.kind() != "source_file" {
        return None;
    }
    let mut cursor = root.walk();
    let mut children = root.children(&mut cursor);
    let items = children.all(|child| {
        // A macro call written at item level (`compile_error!("..");`) parses as an
        // expression statement.
        let item_macro = || {
            child.kind() == "expression_statement"
                && child.named_child_count() == 1
                && child
                    .named_child(0)
                    .is_some_and(|c| c.kind() == "macro_invocation")
        };
        !child.is_error()
            && !child.is_missing()
            && (item_macro()
                || matches!(
                    child.kind(),
                    "line_comment"
                        | "block_comment"
                        | "attribute_item"
                        | "inner_attribute_item"
                        | "const_item"
                        | "static_item"
                        | "macro_invocation"
                        | "macro_definition"
                        | "empty_statement"
                        | "mod_item"
                        | "foreign_mod_item"
                        | "struct_item"
                        | "union_item"
                        | "enum_item"
                        | "type_item"
                        | "function_item"
                        | "function_signature_item"
                        | "impl_item"
                        | "trait_item"
                        | "associated_type"
                        | "use_declaration"
                        | "extern_crate_declaration"
                ))
    });
    drop(children);
    drop(cursor);
    items.then_some(tree)
}

fn extract_with(
    path: &str,
    language: Language,
    text: &str,
    tree: &Tree,
    options: &AnalyzeOptions,
    stream: Vec<u8>,
) -> (FileAnalysis, Vec<u8>) {
    let tables = lang_query(language);
    let bytes = text.as_bytes();
    let lines = RowIndex::new(bytes);

    // Rust macro bodies parsed as items, one round per nesting level: a round's trees are
    // set once and then only borrowed, so the nodes found in them live as long as the
    // file's own.
    let rounds: [OnceCell<Vec<MacroTree>>; MAX_MACRO_DEPTH] = Default::default();
    let rounds = &rounds;
    let mut found: Collected<'_> = Collected::default();
    let mut walks: Vec<fingerprint::Walk> = Vec::new();

    // One walk of the tree: fingerprints, comments, errors; the query runs at each node
    // where one of its patterns can start (`set_max_start_depth(0)`: only matches rooted
    // at that node). That finds what one run over the whole tree finds (every pattern is
    // rooted at a node the walk visits) without a second full traversal; the one
    // difference, `(comment)* @doc . (definition)` patterns matching without their
    // leading comments, does not matter because docs come from `doc_above`. Running a
    // query over a whole tree costs about 0.4x its parse; this costs about 0.1x.
    QUERY_CURSOR.with(|cell| {
        let mut local = None;
        let mut guard = cell.try_borrow_mut().ok();
        let cursor: &mut QueryCursor = match guard.as_deref_mut() {
            Some(cursor) => cursor,
            None => local.insert(QueryCursor::new()),
        };
        cursor.set_max_start_depth(Some(0));
        walks.push(fingerprint::walk(
            tree,
            text,
            tables,
            options.max_depth,
            stream,
            |node, parent, expected| {
                found.visit(cursor, tables, bytes, node, parent, expected, 0, &[])
            },
        ));
        // Rust: items inside macro bodies (`cfg_net! { pub struct TcpStream { .. } }`),
        // which the file's tree holds as token trees: each body is parsed again on its
        // own and walked like the file, its nested bodies in the next round.
        let budget = Budget::new(options.timeout_ms);
        let mut modules_of_walk: Vec<Vec<String>> = vec![Vec::new()];
        for round in rounds {
            if found.bodies.is_empty() {
                break;
            }
            let parsed: Vec<MacroTree> = std::mem::take(&mut found.bodies)
                .into_iter()
                .filter_map(|body| {
                    let tree = parse_macro_body(text, body.range, &budget)?;
                    let mut modules = modules_of_walk.get(body.walk).cloned().unwrap_or_default();
                    modules.extend(crate::lang::rust::rust_inline_modules(body.host, bytes));
                    Some(MacroTree { tree, modules })
                })
                .collect();
            for macro_tree in round.get_or_init(|| parsed) {
                let index = walks.len();
                let modules = macro_tree.modules.as_slice();
                walks.push(fingerprint::walk(
                    &macro_tree.tree,
                    text,
                    tables,
                    options.max_depth,
                    Vec::new(),
                    |node, parent, expected| {
                        found.visit(
                            cursor, tables, bytes, node, parent, expected, index, modules,
                        )
                    },
                ));
                modules_of_walk.push(macro_tree.modules.clone());
            }
        }
    });
    let Collected {
        defs,
        scopes,
        raw_refs,
        raw_imports,
        ignored,
        bodies: _,
    } = found;

    // ---- definitions: dedupe per name node (first pattern wins), widen, qualify
    let mut by_name: FastMap<(usize, usize), usize> = FastMap::default();
    let mut kept: Vec<RawDef<'_>> = Vec::with_capacity(defs.len());
    for def in defs {
        let key = (def.name.start_byte(), def.name.end_byte());
        match by_name.get(&key) {
            Some(&i) => {
                if def.pattern < kept[i].pattern {
                    kept[i] = def;
                }
            }
            None => {
                by_name.insert(key, kept.len());
                kept.push(def);
            }
        }
    }
    let extraction = &language.spec().extraction;
    let is_c_family = extraction.declarator_definitions;
    let mut own_qualifier: Vec<Option<String>> = Vec::with_capacity(kept.len());
    for def in &mut kept {
        let (node, qualifier) = (extraction.qualify_definition)(def.node, bytes);
        def.node = node;
        own_qualifier.push(qualifier);
    }

    // Entries: definitions and scopes, outer before inner.
    let mut entries: Vec<Entry<'_>> = Vec::with_capacity(kept.len() + scopes.len());
    for (i, def) in kept.iter().enumerate() {
        entries.push(Entry {
            node: def.node,
            def: Some(i),
            qualified: String::new(),
            kind: def.kind,
            parent_entry: None,
        });
    }
    for (node, _) in &scopes {
        entries.push(Entry {
            node: *node,
            def: None,
            qualified: String::new(),
            kind: SymbolKind::Other,
            parent_entry: None,
        });
    }
    let scope_names: Vec<String> = scopes.iter().map(|(_, n)| n.clone()).collect();
    entries.sort_by(|a, b| {
        (
            a.node.start_byte(),
            std::cmp::Reverse(a.node.end_byte()),
            a.def.is_some(),
        )
            .cmp(&(
                b.node.start_byte(),
                std::cmp::Reverse(b.node.end_byte()),
                b.def.is_some(),
            ))
    });
    // Scopes were collected in query order; map each scope entry back to its name.
    let scope_ids: FastMap<usize, usize> = scopes
        .iter()
        .enumerate()
        .map(|(i, (n, _))| (n.id(), i))
        .collect();
    let scope_index_of_entry: Vec<Option<usize>> = entries
        .iter()
        .map(|e| {
            if e.def.is_none() {
                scope_ids.get(&e.node.id()).copied()
            } else {
                None
            }
        })
        .collect();
    let mut stack: Vec<usize> = Vec::new();
    for e in 0..entries.len() {
        let (start, end) = (entries[e].node.start_byte(), entries[e].node.end_byte());
        while let Some(&top) = stack.last() {
            let t = &entries[top].node;
            if t.start_byte() <= start && end <= t.end_byte() {
                break;
            }
            stack.pop();
        }
        let parent = stack.last().copied();
        let (own_name, qualifier, captured) = match entries[e].def {
            Some(d) => (
                node_text(kept[d].name, bytes).to_string(),
                own_qualifier[d].clone(),
                kept[d].kind,
            ),
            None => (
                scope_index_of_entry[e]
                    .map(|s| scope_names[s].clone())
                    .unwrap_or_default(),
                None,
                SymbolKind::Other,
            ),
        };
        let mut qualified = parent
            .map(|p| entries[p].qualified.clone())
            .unwrap_or_default();
        for part in qualifier
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(own_name.as_str()))
        {
            if part.is_empty() {
                continue;
            }
            if !qualified.is_empty() {
                qualified.push('.');
            }
            qualified.push_str(part);
        }
        let kind = if matches!(captured, SymbolKind::Function | SymbolKind::Method)
            && entries[e].def.is_some()
        {
            let container = parent.map(|p| (entries[p].def.is_none(), entries[p].kind));
            let in_type = match container {
                Some((true, _)) => true, // Rust impl
                // (Rust structs, enums and unions hold no functions; a Zig or Swift
                // one's are its methods.)
                Some((
                    false,
                    SymbolKind::Class
                    | SymbolKind::Interface
                    | SymbolKind::Trait
                    | SymbolKind::Type
                    | SymbolKind::Struct
                    | SymbolKind::Enum
                    | SymbolKind::Union,
                )) => true,
                Some((false, SymbolKind::Module)) => extraction.module_functions_are_methods,
                _ => false,
            };
            if in_type || qualifier.is_some() {
                SymbolKind::Method
            } else {
                // Not in a type: a Rust `fn` inside `mod m { .. }` (the tags query calls
                // every `fn` in a declaration list a method), a top-level Ruby `def`, an
                // object-literal method.
                SymbolKind::Function
            }
        } else {
            captured
        };
        entries[e].qualified = qualified;
        entries[e].kind = kind;
        entries[e].parent_entry = parent;
        stack.push(e);
    }

    // C/C++: drop prototypes of functions the file defines.
    let mut dropped = vec![false; entries.len()];
    if is_c_family {
        let defined: std::collections::HashSet<(&str, SymbolKind)> = entries
            .iter()
            .filter(|e| e.def.is_some() && e.node.kind() == "function_definition")
            .map(|e| (e.qualified.as_str(), e.kind))
            .collect();
        for (e, entry) in entries.iter().enumerate() {
            if entry.def.is_some()
                && matches!(entry.kind, SymbolKind::Function | SymbolKind::Method)
                && entry.node.kind() != "function_definition"
                && defined.contains(&(entry.qualified.as_str(), entry.kind))
            {
                dropped[e] = true;
            }
        }
    }

    // Symbol order = entry order minus scopes and dropped prototypes.
    let mut symbol_of_entry: Vec<Option<u32>> = vec![None; entries.len()];
    let mut order: Vec<usize> = Vec::new();
    for (e, entry) in entries.iter().enumerate() {
        if entry.def.is_some() && !dropped[e] {
            symbol_of_entry[e] = Some(order.len() as u32);
            order.push(e);
        }
    }

    // ---- symbols
    let mut ordinals: HashMap<(&str, SymbolKind), u32> = HashMap::new();
    let mut symbols: Vec<Symbol> = Vec::with_capacity(order.len());
    for &e in &order {
        let entry = &entries[e];
        let def = &kept[entry.def.unwrap_or_default()];
        let n = ordinals
            .entry((entry.qualified.as_str(), entry.kind))
            .or_insert(0);
        *n += 1;
        let mut key = format!("{path}#{}@{}", entry.qualified, entry.kind.as_str());
        if *n >= 2 {
            key.push_str(&format!("[{n}]"));
        }
        let mut parent = entry.parent_entry;
        while let Some(p) = parent {
            if symbol_of_entry[p].is_some() {
                break;
            }
            parent = entries[p].parent_entry;
        }
        let walk = &walks[def.walk];
        let marks = walk
            .marks
            .get(&entry.node.id())
            .copied()
            .unwrap_or_default();
        let body = walk
            .stream
            .get(marks.entry..marks.exit.max(marks.entry))
            .unwrap_or_default();
        let sig = walk
            .stream
            .get(marks.entry..marks.signature_end.max(marks.entry))
            .unwrap_or_default();
        let doc = (extraction.docstring)(entry.node, bytes)
            .or_else(|| doc_above(language, text, &lines, entry.node, &walks[0].comments));
        symbols.push(Symbol {
            key,
            name: node_text(def.name, bytes).to_string(),
            qualified_name: entry.qualified.clone(),
            kind: entry.kind,
            span: span_of(entry.node),
            name_span: span_of(def.name),
            signature: signature_line(
                language,
                text,
                &lines,
                entry.node.start_byte(),
                def.name.start_byte(),
            ),
            doc,
            body_fingerprint: fingerprint::short_hash(body),
            signature_fingerprint: fingerprint::short_hash(sig),
            parent: parent.and_then(|p| symbol_of_entry[p]),
        });
    }

    // ---- references
    let def_names: FastSet<(usize, usize)> = kept
        .iter()
        .map(|d| (d.name.start_byte(), d.name.end_byte()))
        .collect();
    let locals = match extraction.locals {
        Some(collect) if raw_refs.iter().any(|r| r.not_local) => {
            Some(collect(tree, bytes, options.max_depth))
        }
        _ => None,
    };
    let mut ref_by_name: FastMap<(usize, usize), usize> = FastMap::default();
    let mut refs_kept: Vec<RawRef<'_>> = Vec::new();
    for r in raw_refs {
        let key = (r.name.start_byte(), r.name.end_byte());
        if def_names.contains(&key) || ignored.contains(&r.name.id()) {
            continue;
        }
        if r.not_local
            && let Some(locals) = &locals
            && locals.is_local(node_text(r.name, bytes), r.name.start_byte())
        {
            continue;
        }
        match ref_by_name.get(&key) {
            Some(&i) => {
                if r.pattern < refs_kept[i].pattern {
                    refs_kept[i] = r;
                }
            }
            None => {
                ref_by_name.insert(key, refs_kept.len());
                refs_kept.push(r);
            }
        }
    }
    // ---- imports (and the names they import, as references)
    let (imports, import_refs) = imports::collect(language, &raw_imports, bytes);
    let bindings = import_bindings(language, &imports);
    let rust_paths = if language == Language::Rust {
        rust_bound_paths(&imports)
    } else {
        FastMap::default()
    };
    let mut members: Option<FastMap<(&str, &str), Option<u32>>> = None;
    // Receiver types (`crate::types`): the file's bindings, collected when a receiver
    // first needs them, over the file's tree and its macro bodies.
    let typing = extraction.typing;
    let mut env: Option<types::TypeEnv<'_>> = None;
    let trees: Vec<&Tree> = std::iter::once(tree)
        .chain(
            rounds
                .iter()
                .filter_map(OnceCell::get)
                .flatten()
                .map(|m| &m.tree),
        )
        .collect();
    let mut refs: Vec<Reference> = refs_kept
        .iter()
        .filter_map(|r| {
            let name = reference_name(node_text(r.name, bytes));
            if name.is_empty() {
                return None;
            }
            let (mut receiver, object, last, object_node) =
                receiver_of(language, r.node, r.name, bytes, &bindings);
            // A module declared with `#[path]` is not where its path says: a name on it
            // stays on an import, which the module's resolved file answers.
            if receiver == Receiver::Path
                && last.is_some_and(|l| bindings.contains(l) && !rust_paths.contains_key(l))
            {
                receiver = Receiver::Imported;
            }
            // `Foo::new()`, `Foo.create()`: a member of a type this file defines.
            let mut target = None;
            if let Some(object) = object
                && matches!(
                    receiver,
                    Receiver::Other | Receiver::Path | Receiver::Imported
                )
                && let Some(Some(i)) = members
                    .get_or_insert_with(|| local_members(&symbols))
                    .get(&(object, name))
            {
                receiver = Receiver::Own;
                target = Some(*i);
            }
            // A value whose type the file makes evident: `rt.block_on(..)` after `let rt =
            // Runtime::new().unwrap()` is on a `Runtime`.
            let mut typed = None;
            if receiver == Receiver::Other
                && let (Some(typing), Some(object)) = (typing, object_node)
            {
                let env = env.get_or_insert_with(|| {
                    types::collect(&trees, bytes, typing, options.max_depth)
                });
                let cx = types::Cx::new(env, typing, bytes);
                if cx.is_own(node_text(object, bytes), object.start_byte()) {
                    // Go `func (s *Server) f() { s.g() }`: `s` is the method's own receiver.
                    receiver = Receiver::Own;
                } else if constructed_type(language, object, bytes).is_none()
                    && (!env.is_empty() || matches!(object.kind(), "call_expression" | "call"))
                {
                    // (`Type::new(..).m()`, Python `Type(..).m()`: the type as written, above.)
                    typed = cx
                        .expr(object)
                        // `U.find()` after `from .models import User as U`.
                        .or_else(|| {
                            cx.alias(node_text(object, bytes))
                                .filter(|path| {
                                    path.rsplit('.')
                                        .next()
                                        .is_some_and(|t| t.starts_with(|c: char| c.is_uppercase()))
                                })
                                .map(str::to_string)
                        })
                        .map(|ty| cx.unalias(ty));
                }
                if typed.is_some() {
                    receiver = Receiver::Typed;
                }
            }
            let receiver_name = typed.or_else(|| {
                last.filter(|_| {
                    matches!(
                        receiver,
                        Receiver::Other | Receiver::Path | Receiver::Imported
                    )
                })
                .map(|path| {
                    let mut segments: Vec<&str> = path
                        .split(['.', ':'])
                        .filter(|seg| !seg.is_empty())
                        .collect();
                    // A Rust path starts from what the file's `use` bound its first name
                    // to: `io::util::copy()` after `use tokio::io;` is `tokio::io::util`'s.
                    if receiver == Receiver::Path
                        && let Some(bound) = segments.first().and_then(|s| rust_paths.get(s))
                    {
                        segments.splice(..1, bound.split("::"));
                    }
                    segments.join(".")
                })
            });
            Some(Reference {
                name: name.to_string(),
                kind: r.kind,
                receiver,
                receiver_name,
                span: span_of(r.name),
                enclosing: None,
                target,
            })
        })
        .collect();
    refs.extend(import_refs.into_iter().map(|(name, node)| Reference {
        name,
        kind: RefKind::Import,
        receiver: Receiver::None,
        receiver_name: None,
        span: span_of(node),
        enclosing: None,
        target: None,
    }));
    refs.sort_by_key(|r| (r.span.start, r.span.end));
    assign_enclosing(&symbols, &mut refs);

    let too_deep = walks.iter().any(|w| w.too_deep);
    let degraded = too_deep.then_some(Degraded::TooDeep {
        limit: options.max_depth,
    });
    // The file's own walk: macro bodies are in its token stream already (as token trees),
    // and their syntax errors are not the file's.
    let main = walks.swap_remove(0);
    let analysis = FileAnalysis {
        symbols,
        refs,
        imports,
        fingerprint: fingerprint::short_hash(&main.stream),
        error_nodes: main.error_nodes,
        degraded,
    };
    (analysis, main.stream)
}

/// Sets each reference's `enclosing` to the innermost symbol whose span contains the
/// start of its name. `symbols` are in document order (outer before inner), `refs` sorted
/// by start.
fn assign_enclosing(symbols: &[Symbol], refs: &mut [Reference]) {
    let mut next = 0usize;
    let mut stack: Vec<usize> = Vec::new();
    for r in refs.iter_mut() {
        let at = r.span.start;
        while next < symbols.len() && symbols[next].span.start <= at {
            let s = &symbols[next].span;
            while stack.last().is_some_and(|&t| {
                !(symbols[t].span.start <= s.start && s.end <= symbols[t].span.end)
            }) {
                stack.pop();
            }
            stack.push(next);
            next += 1;
        }
        while stack.last().is_some_and(|&t| symbols[t].span.end <= at) {
            stack.pop();
        }
        // Symbols on the stack that ended before `at` but sit below a still-open one cannot
        // exist: the stack is nested, so the top is the innermost open symbol.
        r.enclosing = stack.last().map(|&t| t as u32);
    }
}

/// The text of `node`, or `""` if its range is not valid UTF-8 on char boundaries.
pub(crate) fn node_text<'a>(node: Node<'_>, bytes: &'a [u8]) -> &'a str {
    bytes
        .get(node.start_byte()..node.end_byte())
        .and_then(|b| std::str::from_utf8(b).ok())
        .unwrap_or("")
}

/// The [`Span`] of a node.
pub(crate) fn span_of(node: Node<'_>) -> Span {
    let start = node.start_position();
    Span {
        start: to_u32(node.start_byte()),
        end: to_u32(node.end_byte()),
        line: to_u32(start.row),
        column: to_u32(start.column),
        end_line: to_u32(node.end_position().row),
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The referenced name as written, reduced to its last path segment and stripped of
/// generic arguments: `a.b.foo` → `foo`, `std::io::Write` → `Write`, `List<int>` → `List`.
fn reference_name(text: &str) -> &str {
    let text = text.split(['<', '(', '[']).next().unwrap_or("").trim();
    let last = text.rsplit(['.', ':', '\\']).next().unwrap_or(text);
    last.trim()
}

/// The member expressions of `language` that look a name up on a receiver, as
/// (expression kind, field of the receiver, field of the name); see
/// [`crate::lang::Spec::member_fields`].
fn member_fields(language: Language, kind: &str) -> Option<(&'static str, &'static str)> {
    (language.spec().member_fields)(kind)
}

/// The names a file's imports bind, which a receiver can be written as: the names an
/// import lists (`from m import a` → `a`; `use m::{a, b}`; `import { a } from './m'`;
/// PHP `use App\User`), else, where the statement binds its module, the module's first
/// segment in Python (`import os.path` binds `os`) and its last in Go (`import "x/fmt"`
/// binds `fmt`), Java (`import com.acme.Util;` binds `Util`) and Rust (`mod foo;` binds
/// `foo`). Ruby `require`, C/C++ `#include`, C# `using` and path-only imports bind
/// nothing; aliases (`import numpy as np`) are not in [`Import`], so they bind nothing
/// here either.
fn import_bindings(language: Language, imports: &[Import]) -> FastSet<String> {
    let mut bound = FastSet::default();
    for import in imports {
        if !import.names.is_empty() {
            bound.extend(import.names.iter().filter(|n| *n != "*").cloned());
            continue;
        }
        let binding = (language.spec().module_binding)(import.module.as_str());
        if let Some(b) = binding.filter(|b| !b.is_empty()) {
            bound.insert(b.to_string());
        }
    }
    bound
}

/// The path each name a Rust file's `use` and `mod` items bind stands for: `use
/// crate::de;` binds `de` to `crate::de`, `use tokio::io::{self, AsyncRead};` binds `io`
/// to `tokio::io` and `AsyncRead` to `tokio::io::AsyncRead`, `mod store;` binds `store`
/// to `self::store`. Globs bind nothing, and a name bound twice (by `cfg` variants) keeps
/// its first path; a `#[path]` module is left out (its file is not where its path says).
fn rust_bound_paths(imports: &[Import]) -> FastMap<&str, String> {
    let mut bound: FastMap<&str, String> = FastMap::default();
    for import in imports {
        let module = import.module.as_str();
        if module.starts_with("#[") {
            continue;
        }
        if import.names.is_empty() {
            if let Some(last) = module.rsplit("::").next().filter(|l| !l.is_empty()) {
                bound.entry(last).or_insert_with(|| module.to_string());
            }
            continue;
        }
        for name in &import.names {
            match name.as_str() {
                "*" => {}
                "self" => {
                    if let Some(last) = module.rsplit("::").next().filter(|l| !l.is_empty()) {
                        bound.entry(last).or_insert_with(|| module.to_string());
                    }
                }
                name => {
                    bound
                        .entry(name)
                        .or_insert_with(|| format!("{module}::{name}"));
                }
            }
        }
    }
    bound
}

/// The members of the file's types, classes and modules by (the owner's last name
/// segment, the member's name): `Foo.new` (a method of `impl Foo`), `Outer.Inner.f` as
/// `("Inner", "f")`. `None` when two owners of that name define it (ambiguous). A
/// definition nested in a function (`outer.inner`) is no member.
fn local_members(symbols: &[Symbol]) -> FastMap<(&str, &str), Option<u32>> {
    let mut members: FastMap<(&str, &str), Option<u32>> = FastMap::default();
    for (i, s) in symbols.iter().enumerate() {
        let Some((owner, _)) = s.qualified_name.rsplit_once('.') else {
            continue;
        };
        let in_function = s.parent.is_some_and(|p| {
            symbols
                .get(p as usize)
                .is_some_and(|p| matches!(p.kind, SymbolKind::Function | SymbolKind::Method))
        });
        if in_function {
            continue;
        }
        let owner = owner.rsplit('.').next().unwrap_or(owner);
        members
            .entry((owner, s.name.as_str()))
            .and_modify(|m| *m = None)
            .or_insert(Some(i as u32));
    }
    members
}

/// What the reference name node `name` is looked up on ([`Receiver`]): the name is the
/// member of a member expression (its parent, or the name node itself when a pattern
/// captures the whole `a.b.C`), and the receiver is that expression's object. Pure syntax:
/// `self.meta.is_match` is [`Receiver::Other`] (the receiver is `self.meta`), `self.parse`
/// is [`Receiver::Own`], and `util.fmt` is [`Receiver::Imported`] when `util` is one of
/// `bindings` ([`import_bindings`]). With it, the receiver's text when that is one bare
/// identifier (`Foo` in `Foo::new()`, not `self.meta` or `Vec::<u8>`), and its text when
/// it is a path of identifiers (`runtime::Builder` in `runtime::Builder::new()`,
/// `self.meta` in `self.meta.f()`).
fn receiver_of<'b, 't>(
    language: Language,
    reference: Node<'t>,
    name: Node<'t>,
    bytes: &'b [u8],
    bindings: &FastSet<String>,
) -> (Receiver, Option<&'b str>, Option<&'b str>, Option<Node<'t>>) {
    let (expression, member) = match member_fields(language, name.kind()) {
        Some(_) => (name, None),
        None => match parent_below(reference, name) {
            Some(parent) => (parent, Some(name)),
            None => return (Receiver::None, None, None, None),
        },
    };
    let Some((object_field, name_field)) = member_fields(language, expression.kind()) else {
        return (Receiver::None, None, None, None);
    };
    if let Some(member) = member
        && expression.child_by_field_name(name_field) != Some(member)
    {
        return (Receiver::None, None, None, None);
    }
    let Some(object) = expression.child_by_field_name(object_field) else {
        // `::f()` in Rust, a Ruby call without a receiver.
        return (Receiver::None, None, None, None);
    };
    // A method called on a value just constructed is a member of its type:
    // `ParserI::new(p).parse()` (it had gone to the enclosing `Parser.parse`),
    // `Parser(x).parse()` in Python.
    let text = constructed_type(language, object, bytes).unwrap_or(node_text(object, bytes));
    let rust_path = language == Language::Rust && expression.kind() == "scoped_identifier";
    let own = match text {
        // Rust `self::f()` is this module's `f`, a path: not a member of `self`.
        "self" => !rust_path,
        "this" | "Self" | "cls" | "$this" => true,
        // PHP `static::f()` is late static binding on the enclosing class.
        "static" => language == Language::Php,
        _ => false,
    };
    let receiver = if own {
        Receiver::Own
    } else if rust_path {
        Receiver::Path
    } else if bindings.contains(text)
        // Python `importlib.util.cache_from_source()` after `import importlib.util`: a
        // module path starting from what the import bound.
        || (language == Language::Python
            && text.contains('.')
            && text.split('.').all(is_identifier)
            && text.split('.').next().is_some_and(|first| bindings.contains(first)))
    {
        Receiver::Imported
    } else {
        Receiver::Other
    };
    (
        receiver,
        Some(text).filter(|t| is_identifier(t)),
        Some(text).filter(|t| {
            t.split(['.', ':'])
                .filter(|seg| !seg.is_empty())
                .all(is_identifier)
        }),
        Some(object),
    )
}

/// The type a call constructs, when `object` is one by the language's convention: Rust
/// `Type::new(…)` and `Type::default()` (the path, `a::Type` kept whole), Python
/// `Type(…)` with a capitalised name. `None` for anything else.
fn constructed_type<'b>(language: Language, object: Node<'_>, bytes: &'b [u8]) -> Option<&'b str> {
    if object.kind() != "call_expression" && object.kind() != "call" {
        return None;
    }
    let function = object.child_by_field_name("function")?;
    match (language, function.kind()) {
        (Language::Rust, "scoped_identifier") => {
            let name = node_text(function.child_by_field_name("name")?, bytes);
            let path = function.child_by_field_name("path")?;
            (name == "new" || name == "default").then(|| node_text(path, bytes))
        }
        (Language::Python, "identifier") => {
            let name = node_text(function, bytes);
            name.starts_with(|c: char| c.is_ascii_uppercase())
                .then_some(name)
        }
        _ => None,
    }
}

/// Whether `text` is one identifier (letters, digits, `_`, `$`; not starting with a digit).
fn is_identifier(text: &str) -> bool {
    text.bytes().next().is_some_and(|b| !b.is_ascii_digit())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'$' || b >= 0x80)
}

/// The parent of `node`, found by descending from `top`, the reference capture that holds
/// it (one to three levels): `Node::parent` descends from the root of the tree, and on the
/// stdlib's 345,000 references it had made a scan 18% slower. Falls back to it when `node`
/// is `top` itself or not below it (JavaScript's tags query captures a method call's
/// `arguments` as the reference).
fn parent_below<'t>(top: Node<'t>, node: Node<'t>) -> Option<Node<'t>> {
    let within = top.start_byte() <= node.start_byte() && node.end_byte() <= top.end_byte();
    if top == node || !within {
        return node.parent();
    }
    let mut current = top;
    loop {
        let Some(child) = current.child_with_descendant(node) else {
            return node.parent();
        };
        if child == node {
            return Some(current);
        }
        current = child;
    }
}

/// A type's base name, as a Rust `impl` scope or a Go receiver contributes it:
/// `&'a mut foo::Bar<T>` → `Bar`; `*Server[T]` → `Server`.
pub(crate) fn base_type_name(text: &str) -> &str {
    let mut t = text.trim();
    loop {
        let before = t;
        t = t.trim_start_matches(['&', '*', ' ', '(']);
        if let Some(rest) = t.strip_prefix('\'') {
            t = rest.split_once(' ').map_or("", |(_, r)| r);
        }
        for prefix in ["mut ", "dyn ", "const "] {
            if let Some(rest) = t.strip_prefix(prefix) {
                t = rest;
            }
        }
        if t == before {
            break;
        }
    }
    let t = t.split(['<', '[', ' ', ')']).next().unwrap_or("");
    t.rsplit("::")
        .next()
        .unwrap_or(t)
        .rsplit('.')
        .next()
        .unwrap_or(t)
}

/// The definition's first line (from byte `start`), trimmed, or the line holding its name
/// (byte `name`) when the first line is only an annotation/attribute (`@Override`,
/// `[Serializable]`); cut to [`MAX_SIGNATURE_BYTES`] on a char boundary.
fn signature_line(
    language: Language,
    text: &str,
    lines: &RowIndex,
    start: usize,
    name: usize,
) -> String {
    let line_at = |at: usize| -> &str {
        let (mut begin, end) = lines.row_of(at);
        // Deep inside a long line (minified code): the definition's own text, not the
        // line's first bytes, which every definition on that line would share.
        if at.min(end) - begin > MAX_SIGNATURE_BYTES {
            begin = at.min(end);
        }
        text.get(begin..end).unwrap_or("").trim()
    };
    let mut line = line_at(start);
    if is_attribute_line(language, line) {
        line = line_at(name);
    }
    truncate_on_char(line, MAX_SIGNATURE_BYTES).to_string()
}

/// The longest prefix of `s` of at most `max` bytes that ends on a char boundary.
pub(crate) fn truncate_on_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// `inspect.cleandoc`: strip the first line, dedent the rest by their common indentation,
/// drop leading and trailing blank lines.
pub(crate) fn clean_doc(raw: &str) -> String {
    let mut lines = raw.lines();
    let first = lines.next().unwrap_or("").trim().to_string();
    let rest: Vec<&str> = lines.collect();
    let indent = rest
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = vec![first];
    for line in rest {
        let cut = line
            .char_indices()
            .nth(indent)
            .map_or(line.len(), |(i, _)| i)
            .min(line.len() - line.trim_start().len());
        out.push(line[cut..].trim_end().to_string());
    }
    while out.first().is_some_and(|l| l.is_empty()) {
        out.remove(0);
    }
    while out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.join("\n")
}

/// Whether a trimmed line is an attribute or decorator that may sit between a doc comment
/// and its definition.
fn is_attribute_line(language: Language, line: &str) -> bool {
    (language.spec().attribute_line)(line)
}

/// The block of line-leading comments directly above `def` (attribute/decorator lines
/// in between are skipped), markers stripped; `None` when there is none.
fn doc_above(
    language: Language,
    text: &str,
    lines: &RowIndex,
    def: Node<'_>,
    comments: &[CommentSpan],
) -> Option<String> {
    if comments.is_empty() {
        return None;
    }
    let bytes = text.as_bytes();
    let mut line_start = lines.start_of(def.start_byte());
    // A comment documents the first definition of its line (after `export default`,
    // `template <class T>`, `var`): not every definition of a minified line
    // (`var a=function(){…};var b=…`), which would all get the license comment above it.
    // A `;`, `{` or `}` before the definition on its line means something came first.
    let before = text.get(line_start..def.start_byte()).unwrap_or("");
    if before.bytes().any(|b| matches!(b, b';' | b'{' | b'}')) {
        return None;
    }
    // The row right above the definition, past attribute lines.
    let mut row = def.start_position().row;
    while row > 0 && line_start > 0 {
        let prev_start = lines.start_of(line_start - 1);
        let line = text.get(prev_start..line_start - 1).unwrap_or("").trim();
        if !line.is_empty() && is_attribute_line(language, line) {
            row -= 1;
            line_start = prev_start;
        } else {
            break;
        }
    }
    if row == 0 {
        return None;
    }
    // Last comment starting before the definition.
    let mut i = comments.partition_point(|c| c.start < line_start);
    let mut block: Vec<&CommentSpan> = Vec::new();
    let mut want_end_row = row - 1;
    while i > 0 {
        let c = &comments[i - 1];
        let leading = bytes
            .get(lines.start_of(c.start)..c.start)
            .is_some_and(|b| b.iter().all(|b| b.is_ascii_whitespace()));
        // Contiguous (ends on the line above the previous one) and alone on its line.
        if c.end_row != want_end_row || !leading {
            break;
        }
        // Inner doc comments (`//!`, `/*!`) document the enclosing module, not what follows.
        let raw = text.get(c.start..c.end).unwrap_or("");
        if raw.starts_with("//!") || raw.starts_with("/*!") {
            break;
        }
        block.push(c);
        if c.start_row == 0 {
            break;
        }
        want_end_row = c.start_row - 1;
        i -= 1;
    }
    if block.is_empty() {
        return None;
    }
    block.reverse();
    let mut lines: Vec<String> = Vec::new();
    for c in block {
        let raw = text.get(c.start..c.end).unwrap_or("");
        for line in raw.lines() {
            let own = language
                .spec()
                .extraction
                .comment_markers
                .iter()
                .find_map(|marker| line.trim().strip_prefix(marker));
            lines.push(match own {
                Some(rest) => {
                    let rest = rest.trim_end();
                    // OCaml's `(* .. *)` closes on its line.
                    let rest = rest.strip_suffix("*)").unwrap_or(rest);
                    rest.strip_prefix(' ')
                        .unwrap_or(rest)
                        .trim_end()
                        .to_string()
                }
                None => strip_comment_markers(line).to_string(),
            });
        }
    }
    while lines.first().is_some_and(|l| l.is_empty()) {
        lines.remove(0);
    }
    while lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    // Remove the indentation all lines share (`/**  text */`, aligned `*` blocks).
    let indent = lines
        .iter()
        .filter(|l| !l.is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let doc = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or_else(|| l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n");
    (!doc.is_empty()).then_some(doc)
}

/// One comment line without its markers (`///`, `//!`, `//`, `/**`, `/*`, `*/`, a leading
/// `*`, `#`) and the space after them.
fn strip_comment_markers(line: &str) -> &str {
    let mut l = line.trim();
    for prefix in ["///", "//!", "//", "/**", "/*!", "/*", "#", "--"] {
        if let Some(rest) = l.strip_prefix(prefix) {
            l = rest;
            break;
        }
    }
    if let Some(rest) = l.strip_suffix("*/") {
        l = rest;
    }
    let l = l.trim_end();
    let l = if let Some(rest) = l.trim_start().strip_prefix('*') {
        if line.trim_start().starts_with('*') {
            rest
        } else {
            l
        }
    } else {
        l
    };
    l.strip_prefix(' ').unwrap_or(l).trim_end()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fault (issue 30, item 9): the parse limit was wall-clock, so on a loaded machine a
    /// fresh scan of the stdlib degraded `test/test_statistics.py` that an idle one had
    /// parsed. The limit counts parse work: the budget a text needs is a property of the
    /// text, the same at every attempt, with or without a wall clock anywhere near.
    #[test]
    fn fault_the_parse_limit_depended_on_machine_load() {
        let text = "def f(x):\n    return [x for x in range(10)]\n".repeat(300);
        let attempt = |steps: u64| {
            let budget = Budget {
                steps_left: Cell::new(steps),
                guard: Instant::now() + Duration::from_secs(3_600),
                spent: Cell::new(false),
                guarded: Cell::new(false),
            };
            let mut parser = Parser::new();
            parser.set_language(&Language::Python.grammar()).unwrap();
            let tree = parse_within(&mut parser, &text, None, &budget);
            (
                tree.is_some(),
                budget.spent.get(),
                steps - budget.steps_left.get(),
            )
        };
        let (parsed, spent, needed) = attempt(u64::MAX);
        assert_eq!((parsed, spent, needed), (true, false, 204));
        for _ in 0..3 {
            assert_eq!(attempt(needed), (true, false, needed));
            assert_eq!(attempt(needed - 1), (false, true, needed - 1));
        }
        // The same through the public limit, in milliseconds of parse work.
        let options = AnalyzeOptions {
            timeout_ms: (needed - 1) / PARSE_STEPS_PER_MS,
            ..AnalyzeOptions::default()
        };
        let analysis = analyze("t.py", Language::Python, &text, &options);
        assert_eq!(
            analysis.degraded,
            Some(Degraded::ParseTimeout {
                limit_ms: (needed - 1) / PARSE_STEPS_PER_MS
            })
        );
        let analysis = analyze("t.py", Language::Python, &text, &AnalyzeOptions::default());
        assert_eq!((analysis.degraded, analysis.symbols.len()), (None, 300));
    }

    #[test]
    fn reference_names_are_last_segments() {
        assert_eq!(reference_name("a.b.foo"), "foo");
        assert_eq!(reference_name("std::io::Write"), "Write");
        assert_eq!(reference_name("List<int>"), "List");
        assert_eq!(reference_name("App\\Models\\User"), "User");
    }

    #[test]
    fn base_type_names() {
        assert_eq!(base_type_name("&'a mut foo::Bar<T>"), "Bar");
        assert_eq!(base_type_name("*Server[T]"), "Server");
        assert_eq!(base_type_name("Store"), "Store");
    }

    #[test]
    fn comment_markers() {
        assert_eq!(strip_comment_markers("/// Hello"), "Hello");
        assert_eq!(strip_comment_markers("/** Hello */"), "Hello");
        assert_eq!(strip_comment_markers("   * item"), "item");
        assert_eq!(strip_comment_markers("# note"), "note");
    }

    #[test]
    fn cleandoc() {
        assert_eq!(
            clean_doc("Summary.\n\n    Details here.\n      indented\n    "),
            "Summary.\n\nDetails here.\n  indented"
        );
    }
}
