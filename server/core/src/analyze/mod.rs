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
//!   but each of its branches' `{ .. }` is parsed as one body. A `(..)`/`[..]` body
//!   (`assert_eq!(parse(s), ..)`, `vec![f(x); n]`, `format!("{}", g())`) is parsed again as
//!   arguments, whatever its errors (`a, f(b)` is no statement), and only its references
//!   count. `quote!`-like templates and `macro_rules!` rules are never parsed again. Body
//!   fingerprints come from the body's own token stream (a definition moved into a `cfg`
//!   block keeps its fingerprint); the file fingerprint and error count are the file
//!   tree's. All bodies of a file share one `timeout_ms` budget (besides the file's
//!   own); bodies left when it runs out stay token trees.
//! - **Parse limit** (`timeout_ms`): a budget of parse *work*, not of wall time, so a file
//!   parses or degrades the same on an idle machine and on a loaded one (with a wall-clock
//!   limit, a fresh scan of the stdlib under load would lose `test/test_statistics.py`'s
//!   symbols, and the map would differ from an incremental scan's). tree-sitter calls
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

mod collect;
mod docs;
mod extract;
mod receivers;

pub use collect::*;
pub(crate) use docs::*;
pub(crate) use extract::*;
pub(crate) use receivers::*;

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

#[cfg(test)]
mod tests {
    use super::*;

    /// The parse limit counts parse work, not wall-clock time: the budget a text needs is a
    /// property of the text, the same at every attempt, with or without a wall clock
    /// anywhere near, so a loaded machine degrades no file (the stdlib's
    /// `test/test_statistics.py`) that an idle one parses.
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
