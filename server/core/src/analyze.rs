//! Parse a file with tree-sitter and extract its symbols, references and imports.
//!
//! [`analyze`] is [`parse`] followed by [`extract`]; the language server calls the two
//! halves itself to reparse open buffers incrementally.
//!
//! Interim implementation (branch `lsp`): definitions only, from the language's tags
//! query; the full extraction (references, imports, docs, fingerprints) lands from `main`.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{ParseOptions, ParseState, Parser, QueryCursor, StreamingIterator, Tree};

use crate::lang::{Role, lang_query};
use crate::{Degraded, FileAnalysis, Language, Span, Symbol};

/// Limits for one file's analysis.
#[derive(Clone, Debug)]
pub struct AnalyzeOptions {
    /// Parse time limit in milliseconds, enforced through tree-sitter's progress callback.
    pub timeout_ms: u64,
    /// Deepest tree depth (in nodes) extraction visits.
    pub max_depth: u32,
}

impl Default for AnalyzeOptions {
    fn default() -> Self {
        AnalyzeOptions {
            timeout_ms: 2_000,
            max_depth: 2_000,
        }
    }
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
            degraded,
            ..FileAnalysis::default()
        },
    }
}

/// Parses `text` for `language`, reusing `old_tree` (already [`Tree::edit`]ed to match
/// `text`) for an incremental reparse. Returns `None` with [`Degraded::ParseTimeout`] when
/// the parse ran longer than `options.timeout_ms`. Never panics.
pub fn parse(
    language: Language,
    text: &str,
    old_tree: Option<&Tree>,
    options: &AnalyzeOptions,
) -> (Option<Tree>, Option<Degraded>) {
    let mut parser = Parser::new();
    if parser.set_language(&language.grammar()).is_err() {
        return (None, None);
    }
    let deadline = Instant::now() + Duration::from_millis(options.timeout_ms);
    let mut timed_out = false;
    let mut progress = |_: &ParseState| {
        if Instant::now() >= deadline {
            timed_out = true;
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    };
    let bytes = text.as_bytes();
    let mut input = |offset: usize, _| bytes.get(offset..).unwrap_or_default();
    let tree = parser.parse_with_options(
        &mut input,
        old_tree,
        Some(ParseOptions::new().progress_callback(&mut progress)),
    );
    let degraded = (tree.is_none() && timed_out).then_some(Degraded::ParseTimeout {
        limit_ms: options.timeout_ms,
    });
    (tree, degraded)
}

/// Extracts what the tree holds. Interim: definitions from the tags query, nested by
/// containment, keyed `path#qualified.name@kind[n]`.
pub fn extract(
    path: &str,
    language: Language,
    text: &str,
    tree: &Tree,
    options: &AnalyzeOptions,
) -> FileAnalysis {
    let _ = options;
    let lq = lang_query(language);
    let Ok(compiled) = &lq.compiled else {
        return FileAnalysis::default();
    };
    let span = |n: tree_sitter::Node<'_>| Span {
        start: n.start_byte() as u32,
        end: n.end_byte() as u32,
        line: n.start_position().row as u32,
        column: n.start_position().column as u32,
        end_line: n.end_position().row as u32,
    };
    let mut defs = Vec::new();
    let mut seen_names = std::collections::HashSet::new();
    let mut cursor = QueryCursor::new();
    let mut matches = cursor.matches(&compiled.query, tree.root_node(), text.as_bytes());
    while let Some(m) = matches.next() {
        let mut def = None;
        let mut name = None;
        for c in m.captures() {
            match compiled.roles.get(c.index as usize) {
                Some(Role::Def(kind)) => def = Some((c.node, *kind)),
                Some(Role::Name) => name = Some(c.node),
                _ => {}
            }
        }
        if let (Some((node, kind)), Some(name)) = (def, name)
            && seen_names.insert(name.id())
        {
            defs.push((node, name, kind));
        }
    }
    defs.sort_by_key(|(n, _, _)| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
    let mut symbols: Vec<Symbol> = Vec::new();
    let mut stack: Vec<(usize, u32)> = Vec::new(); // (end byte, symbol index)
    let mut counts = std::collections::HashMap::new();
    for (node, name, kind) in defs {
        while stack.last().is_some_and(|(end, _)| *end < node.end_byte()) {
            stack.pop();
        }
        let parent = stack.last().map(|(_, i)| *i);
        let bare = text.get(name.byte_range()).unwrap_or_default().to_string();
        let qualified = match parent.and_then(|p| symbols.get(p as usize)) {
            Some(p) => format!("{}.{bare}", p.qualified_name),
            None => bare.clone(),
        };
        let line_start = text[..name.start_byte()].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[name.start_byte()..]
            .find('\n')
            .map_or(text.len(), |i| name.start_byte() + i);
        let mut signature = text[line_start..line_end].trim().to_string();
        if signature.len() > 200 {
            let mut cut = 200;
            while !signature.is_char_boundary(cut) {
                cut -= 1;
            }
            signature.truncate(cut);
        }
        let n = counts
            .entry((qualified.clone(), kind))
            .and_modify(|c| *c += 1)
            .or_insert(1u32);
        let mut key = format!("{path}#{qualified}@{}", kind.as_str());
        if *n > 1 {
            key.push_str(&format!("[{n}]"));
        }
        stack.push((node.end_byte(), symbols.len() as u32));
        symbols.push(Symbol {
            key,
            name: bare,
            qualified_name: qualified,
            kind,
            span: span(node),
            name_span: span(name),
            signature,
            doc: None,
            body_fingerprint: String::new(),
            signature_fingerprint: String::new(),
            parent,
        });
    }
    FileAnalysis {
        symbols,
        ..FileAnalysis::default()
    }
}
