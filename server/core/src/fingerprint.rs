//! Comment- and whitespace-insensitive fingerprints computed from tree-sitter trees, and
//! the plain content hash.
//!
//! One iterative preorder walk of the tree (an explicit stack of nodes, never recursion,
//! so a 100,000-deep tree cannot overflow the stack) writes a *token stream*: for every
//! visited node its kind id (2 bytes, little-endian), and for every named leaf its text
//! (its length: one byte, or `255` and 4 little-endian bytes from 255 on; then the
//! bytes). Text the kinds do not imply follows a text marker (`0xFFFD`, no grammar's kind
//! id), then its length and bytes the same way:
//!
//! - an anonymous leaf (keyword, punctuation) is described by its kind, unless its text
//!   is not its kind's name but for whitespace: a token aliased from a pattern (Rust's
//!   `b"` and `r"`, Ruby's `'`, `%q(` and `/i`, of kinds `"` and `/`; PHP's keywords
//!   written in another case) has its text;
//! - a *gap*, text inside a node that none of its children covers, is where a grammar puts
//!   hidden tokens (Python's text around the escapes of a `string_content`, `>8` in
//!   `f"{x:>8}"`, Rust's `r#"`, a `macro_rules!` repetition's separator). In the literal
//!   kinds of `lang::LITERAL_KINDS` it is kept verbatim (a PHP heredoc's blank
//!   lines are text); elsewhere its layout (whitespace, BOM and zero-width spaces, `\`
//!   line continuations) is collapsed like a `jsx_text`'s, and a gap of layout alone
//!   is dropped.
//!
//! Skipped, with their whole subtree:
//!
//! - comments: every node whose kind name contains `comment`;
//! - Python docstrings: an expression statement made of one string that is the first
//!   statement of a module, class body or function body. A docstring is documentation, so
//!   editing it is a doc change, not a code change, just like a comment above a function
//!   in other languages;
//! - nodes deeper than the depth limit (the walk reports that it hit the limit).
//!
//! Whitespace never enters the stream (it is not part of any token), except inside leaves
//! and literal gaps where it means something (string literals); in leaves where it is
//! layout (`jsx_text`, PHP inline `text`, C `preproc_arg`) runs of whitespace are
//! collapsed to one space, but inside quotes in a C `preproc_arg` (`#define M "a  b"`).
//!
//! Because a subtree's preorder is a contiguous slice of the file's preorder, the walk
//! records where each definition's subtree starts and ends in the stream, and each
//! fingerprint is the BLAKE3 hash of a slice: the file fingerprint hashes the whole
//! stream, a symbol's body fingerprint its subtree's slice, and its signature fingerprint
//! the slice from the definition's start to its body (the `body` field; without one, up to
//! the first token on a later line). Fingerprints are the first 8 bytes of the hash as 16
//! hex digits. Kind ids are the grammar's, so fingerprints are stable for a given grammar
//! version (a grammar upgrade may change them, like it may change the tree).

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};
use std::ops::Range;

use tree_sitter::{Node, Tree, TreeCursor};

use crate::lang::{LangQuery, kind_flags};

/// Content hash of raw file bytes: the first 16 bytes of BLAKE3, as 32 hex digits.
pub fn content_hash(bytes: &[u8]) -> String {
    let hash = blake3::hash(bytes);
    hash.to_hex()[..32].to_string()
}

/// A 16-hex-digit fingerprint (first 8 bytes of BLAKE3) of arbitrary bytes: the form of
/// every fingerprint in [`crate::FileAnalysis`] and [`crate::Symbol`].
pub fn short_hash(bytes: &[u8]) -> String {
    let hash = blake3::hash(bytes);
    hash.to_hex()[..16].to_string()
}

/// Fingerprint used when a file could not be parsed (parse timeout): a hash of the raw
/// text, domain-separated from tree fingerprints. Any byte change, comments and whitespace
/// included, changes it.
pub fn raw_text_fingerprint(text: &str) -> String {
    let mut hasher = blake3::Hasher::new();
    hasher.update(b"loci raw text\0");
    hasher.update(text.as_bytes());
    hasher.finalize().to_hex()[..16].to_string()
}

/// Where a definition's pieces lie in the token stream, as byte offsets into it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DefMarks {
    pub(crate) entry: usize,
    pub(crate) signature_end: usize,
    pub(crate) exit: usize,
}

/// A comment the walk passed, for doc extraction: its byte range and rows (`end_row` is
/// the row of its last character).
#[derive(Clone, Copy, Debug)]
pub(crate) struct CommentSpan {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) start_row: usize,
    pub(crate) end_row: usize,
}

/// What one walk of a tree produced.
pub(crate) struct Walk {
    /// The token stream (see the module docs).
    pub(crate) stream: Vec<u8>,
    /// Stream slices of the recorded definition nodes, by node id.
    pub(crate) marks: IdMap<DefMarks>,
    /// Comments, in document order.
    pub(crate) comments: Vec<CommentSpan>,
    /// ERROR and MISSING nodes visited.
    pub(crate) error_nodes: u32,
    /// Whether some subtree was cut at the depth limit.
    pub(crate) too_deep: bool,
}

/// Node ids whose stream slices the walk must record: definition nodes that query matches
/// found at or below the node being visited (filled by the `on_root` callback of [`walk`]).
pub(crate) type Expected = FastSet<usize>;

/// A map keyed by node id.
pub(crate) type IdMap<V> = FastMap<usize, V>;

/// Hasher for node ids and byte offsets (integers, distinct by construction): a
/// multiply-rotate per word instead of SipHash.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl IdHasher {
    #[inline]
    fn add(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.add(u64::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }
}

/// A hash map keyed by integers, with [`IdHasher`].
pub(crate) type FastMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;

/// A hash set of integers, with [`IdHasher`].
pub(crate) type FastSet<K> = HashSet<K, BuildHasherDefault<IdHasher>>;

/// A node whose children the walk is visiting.
struct Frame<'t> {
    node: Node<'t>,
    kind: u16,
    /// No named, non-comment child entered yet (Python docstring detection).
    first_statement_pending: bool,
    /// Whether the node is a [`kind_flags::LITERAL`]: its gaps are kept verbatim.
    literal: bool,
    /// Where the last child visited ended (the node's start before the first): the text
    /// from here to the next child, or to the node's end, is a gap.
    pos: usize,
    /// Index of the next child to visit.
    next: u32,
    /// Number of (visible) children.
    count: u32,
    /// For a node with more than [`WIDE`] children, a cursor on the current child:
    /// `Node::child(i)` walks the children before `i` (or a balanced repetition tree),
    /// which would make a flat node with n children (an error node over garbage input)
    /// cost n² steps.
    cursor: Option<TreeCursor<'t>>,
}

/// Child count above which a node's children are stepped through with a cursor.
const WIDE: u32 = 32;

/// A definition node being recorded: its id, marks, the node that ends its signature
/// (its body) or the row after which it ends.
struct Open<'t> {
    id: usize,
    marks: DefMarks,
    body: Option<Node<'t>>,
    row: usize,
    signature_open: bool,
}

impl<'t> Open<'t> {
    /// The definition `node`, entered at `entry` (the stream's length), its signature open.
    #[inline]
    fn of(node: Node<'t>, entry: usize) -> Self {
        Open {
            id: node.id(),
            marks: DefMarks {
                entry,
                ..DefMarks::default()
            },
            body: body_of(node),
            row: node.start_position().row,
            signature_open: true,
        }
    }
}

/// What [`walk`] calls at every node it enters: the node and its ancestors, outermost
/// first.
pub(crate) type OnNode<'a, 't> = &'a mut dyn FnMut(Node<'t>, &[Node<'t>]);

/// Walks `tree` once, iteratively (see the module docs), calling `on_root` at every
/// visited node whose kind starts a query pattern, with the kind id of the node's parent
/// (`u16::MAX` at the root). The caller runs the query there and adds the definition nodes
/// it finds to the [`Expected`] set, so that their stream slices are recorded when the walk
/// reaches them. With `on_node`, it is called at every node the walk enters, in document
/// order, with the node's ancestors (outermost first): a comment or a docstring is
/// entered but not descended into.
pub(crate) fn walk<'t>(
    tree: &'t Tree,
    text: &str,
    tables: &LangQuery,
    max_depth: u32,
    mut stream: Vec<u8>,
    mut on_root: impl FnMut(Node<'t>, u16, &mut Expected),
    mut on_node: Option<OnNode<'_, 't>>,
) -> Walk {
    stream.clear();
    let bytes = text.as_bytes();
    let py = tables.py;
    let is_python = py.module != u16::MAX;
    let check_errors = tree.root_node().has_error();
    let mut marks: IdMap<DefMarks> = IdMap::default();
    let mut expected: Expected = Expected::default();
    let mut comments = Vec::new();
    let mut error_nodes = 0u32;
    let mut too_deep = false;
    // Definition nodes entered and not yet exited, innermost last.
    let mut open: Vec<Open<'t>> = Vec::new();
    // How many of `open` still have their signature open.
    let mut signatures_open = 0usize;
    // Children are reached with `Node::child(i)` from a stack of frames rather than with one
    // `TreeCursor` (except for wide nodes, see `Frame::cursor`): same iterative shape,
    // about 20% faster on Python trees.
    let mut frames: Vec<Frame<'t>> = Vec::new();
    // The nodes of `frames`, for `on_node` (kept only when there is one).
    let mut ancestors: Vec<Node<'t>> = Vec::new();
    let mut node = tree.root_node();

    loop {
        // ---- enter `node`
        if let Some(on_node) = on_node.as_mut() {
            on_node(node, &ancestors);
        }
        let kind = node.kind_id();
        let flags = tables.kinds.get(kind as usize).copied().unwrap_or(0);
        if let Some(parent) = frames.last()
            && node.start_byte() > parent.pos
        {
            push_gap(
                &mut stream,
                text,
                parent.pos..node.start_byte(),
                parent.literal,
            );
        }
        let mut skip = false;
        if flags & kind_flags::COMMENT != 0 {
            skip = true;
            comments.push(comment_span(node));
        } else if flags & kind_flags::NAMED != 0 {
            skip = is_python && kind == py.expression_statement && is_docstring(node, &frames, py);
            if let Some(parent) = frames.last_mut() {
                parent.first_statement_pending = false;
            }
        }
        if !skip {
            if check_errors && node.is_error() {
                error_nodes = error_nodes.saturating_add(1);
            }
            // Signatures that end at this node.
            if signatures_open > 0 {
                signatures_open -= end_signatures(&mut open, node, stream.len());
            }
            if flags & kind_flags::ROOT != 0 {
                let parent = frames.last().map_or(u16::MAX, |f| f.kind);
                on_root(node, parent, &mut expected);
            }
            if flags & kind_flags::DEFINITION != 0
                && (flags & kind_flags::ALWAYS_RECORD != 0 || expected.remove(&node.id()))
            {
                open.push(Open::of(node, stream.len()));
                signatures_open += 1;
            }
            stream.extend_from_slice(&kind.to_le_bytes());

            let count = node.child_count();
            let at_limit = frames.len() as u64 >= u64::from(max_depth);
            if count > 0
                && !at_limit
                && let Some((first, frame)) = enter_children(node, kind, flags, count)
            {
                if on_node.is_some() {
                    ancestors.push(node);
                }
                frames.push(frame);
                node = first;
                continue;
            }
            if count > 0 {
                too_deep |= at_limit;
            } else {
                if check_errors && node.is_missing() {
                    error_nodes = error_nodes.saturating_add(1);
                }
                let text = bytes
                    .get(node.start_byte()..node.end_byte())
                    .unwrap_or_default();
                push_leaf(&mut stream, tables, kind, flags, text);
            }
        }
        // ---- exit `node`, then move on to the next sibling or up.
        let mut exiting = node.id();
        let mut exiting_end = node.end_byte();
        loop {
            signatures_open -= close_definitions(&mut open, &mut marks, exiting, stream.len());
            let Some(frame) = frames.last_mut() else {
                return Walk {
                    stream,
                    marks,
                    comments,
                    error_nodes,
                    too_deep,
                };
            };
            frame.pos = frame.pos.max(exiting_end);
            if frame.next < frame.count {
                let child = match &mut frame.cursor {
                    Some(cursor) => cursor.goto_next_sibling().then(|| cursor.node()),
                    None => frame.node.child(frame.next),
                };
                if let Some(child) = child {
                    frame.next += 1;
                    node = child;
                    break;
                }
            }
            let end = frame.node.end_byte();
            if end > frame.pos {
                push_gap(&mut stream, text, frame.pos..end, frame.literal);
            }
            exiting = frame.node.id();
            exiting_end = end;
            frames.pop();
            ancestors.pop();
        }
    }
}

/// Closes the definitions of `open` that `exiting` is (innermost last), their marks ending
/// at `at` (the stream's length) and recorded in `marks`; returns how many of them still
/// had their signature open.
#[inline]
fn close_definitions(
    open: &mut Vec<Open<'_>>,
    marks: &mut IdMap<DefMarks>,
    exiting: usize,
    at: usize,
) -> usize {
    let mut signatures = 0;
    while let Some(mut o) = open.pop_if(|o| o.id == exiting) {
        o.marks.exit = at;
        if o.signature_open {
            o.marks.signature_end = at;
            signatures += 1;
        }
        marks.insert(o.id, o.marks);
    }
    signatures
}

/// The first of `node`'s `count` children (`count > 0`), and the frame that visits the
/// rest (a cursor for a node wider than [`WIDE`]); `None` when it has none to reach.
#[inline]
fn enter_children<'t>(
    node: Node<'t>,
    kind: u16,
    flags: u8,
    count: u32,
) -> Option<(Node<'t>, Frame<'t>)> {
    let (first, cursor) = if count > WIDE {
        let mut cursor = node.walk();
        let first = cursor.goto_first_child().then(|| cursor.node());
        (first, Some(cursor))
    } else {
        (node.child(0), None)
    };
    let first = first?;
    let frame = Frame {
        node,
        kind,
        first_statement_pending: true,
        literal: flags & kind_flags::LITERAL != 0,
        pos: node.start_byte(),
        next: 1,
        count,
        cursor,
    };
    Some((first, frame))
}

/// Whether `node`, a Python expression statement, is the docstring of the node whose
/// children `frames` is visiting: its first statement, and one [`is_docstring_statement`]
/// takes for a docstring.
#[inline]
fn is_docstring(node: Node<'_>, frames: &[Frame<'_>], py: crate::lang::PythonKinds) -> bool {
    frames.last().is_some_and(|parent| {
        parent.first_statement_pending && is_docstring_statement(node, parent.kind, frames, py)
    })
}

/// A comment node's span and rows (its end row is the row of its last character: line
/// comments of some grammars, Rust's, include their newline).
fn comment_span(node: Node<'_>) -> CommentSpan {
    let start = node.start_position();
    let end = node.end_position();
    // Line comments of some grammars (Rust) include their newline.
    let end_row = if end.column == 0 && end.row > start.row {
        end.row - 1
    } else {
        end.row
    };
    CommentSpan {
        start: node.start_byte(),
        end: node.end_byte(),
        start_row: start.row,
        end_row,
    }
}

/// Ends, at stream offset `at`, the open signatures that `node` ends (it is their body,
/// or it starts on a row after theirs when they have none); returns how many it ended.
#[inline]
fn end_signatures(open: &mut [Open<'_>], node: Node<'_>, at: usize) -> usize {
    let row = node.start_position().row;
    let mut ended = 0;
    for o in open.iter_mut().filter(|o| o.signature_open) {
        let ends = match o.body {
            Some(body) => body.id() == node.id(),
            None => row > o.row,
        };
        if ends {
            o.marks.signature_end = at;
            o.signature_open = false;
            ended += 1;
        }
    }
    ended
}

/// Appends a leaf of kind `kind` (with `flags`) whose text is `text`: a named leaf's text
/// (whitespace collapsed where its kind says), an anonymous one's only where it differs
/// from its kind's name.
#[inline]
fn push_leaf(stream: &mut Vec<u8>, tables: &LangQuery, kind: u16, flags: u8, text: &[u8]) {
    if flags & kind_flags::NAMED != 0 {
        if flags & kind_flags::COLLAPSE_WS != 0 {
            push_collapsed(stream, text, flags & kind_flags::KEEP_QUOTED != 0);
        } else {
            push_len(stream, text.len());
            stream.extend_from_slice(text);
        }
    } else {
        let name = tables.names.get(kind as usize).map_or("", |n| &**n);
        if !text.is_empty() && text != name.as_bytes() {
            push_aliased(stream, text, name.as_bytes());
        }
    }
}

/// The node whose start ends a definition's signature: its `body` field, or the body of
/// the function it is bound to (`const f = () => {..}`, `obj.f = function () {..}`).
pub(crate) fn body_of(node: Node<'_>) -> Option<Node<'_>> {
    if let Some(body) = node.child_by_field_name("body") {
        return Some(body);
    }
    for field in ["value", "right"] {
        if let Some(value) = node.child_by_field_name(field)
            && let Some(body) = value.child_by_field_name("body")
        {
            return Some(body);
        }
    }
    None
}

/// Whether the Python `expression_statement` `node` (whose parent has kind
/// `parent_kind`) is a docstring: a lone string, first statement of a module or of a
/// class or function body.
fn is_docstring_statement(
    node: Node<'_>,
    parent_kind: u16,
    frames: &[Frame],
    py: crate::lang::PythonKinds,
) -> bool {
    let in_body = if parent_kind == py.module {
        true
    } else if parent_kind == py.block {
        frames.len() >= 2 && {
            let grand = frames[frames.len() - 2].kind;
            grand == py.function_definition || grand == py.class_definition
        }
    } else {
        false
    };
    in_body
        && node.named_child_count() == 1
        && node
            .named_child(0)
            .is_some_and(|c| c.kind_id() == py.string)
}

/// Appends a leaf length: one byte below 255, else `255` and 4 little-endian bytes.
#[inline]
fn push_len(stream: &mut Vec<u8>, len: usize) {
    if len < 255 {
        stream.push(len as u8);
    } else {
        stream.push(255);
        stream.extend_from_slice(&(len as u32).to_le_bytes());
    }
}

/// Stream marker of text the tree's kinds do not imply (a gap, an aliased token's text),
/// followed by the text's length and bytes: a value no grammar uses as a kind id (they are
/// below a few thousand; `ERROR` is `0xFFFF`).
const TEXT: [u8; 2] = 0xFFFD_u16.to_le_bytes();

/// Appends the gap `range` of `text` (bytes inside a node that none of its children
/// covers). In a [`kind_flags::LITERAL`] node it is kept verbatim. Elsewhere it is
/// layout (whitespace, BOM and zero-width spaces, `\` line continuations), dropped, or
/// holds a hidden token, kept with its layout collapsed like [`push_collapsed`] does.
fn push_gap(stream: &mut Vec<u8>, text: &str, range: Range<usize>, literal: bool) {
    let bytes = text.as_bytes().get(range.clone()).unwrap_or_default();
    if literal {
        push_text(stream, bytes);
        return;
    }
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    // Tree offsets are on character boundaries; were one not, the bytes are kept.
    let Some(gap) = text.get(range) else {
        push_text(stream, bytes);
        return;
    };
    let mut collapsed = Vec::with_capacity(gap.len());
    let mut pending_space = false;
    for (i, c) in gap.char_indices() {
        let rest = &gap[i + c.len_utf8()..];
        let layout = c.is_whitespace()
            || matches!(c, '\u{feff}' | '\u{200b}' | '\u{2060}')
            || (c == '\\' && (rest.starts_with('\n') || rest.starts_with("\r\n")));
        if layout {
            pending_space = !collapsed.is_empty();
        } else {
            if pending_space {
                collapsed.push(b' ');
                pending_space = false;
            }
            let mut buf = [0u8; 4];
            collapsed.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    if !collapsed.is_empty() {
        push_text(stream, &collapsed);
    }
}

/// Appends the text of an anonymous leaf whose text is not its kind's name (a token
/// aliased from a pattern: Rust's `b"` and `r"`, Ruby's `'`, `%q(` and `/i`, all named
/// `"` or `/`), unless the two differ only in whitespace (C's `#  define`).
fn push_aliased(stream: &mut Vec<u8>, text: &[u8], kind: &[u8]) {
    let squeezed = |b: &[u8]| {
        b.iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect::<Vec<u8>>()
    };
    if squeezed(text) != squeezed(kind) {
        push_text(stream, text);
    }
}

/// Appends [`TEXT`] and a length-prefixed copy of `text`.
fn push_text(stream: &mut Vec<u8>, text: &[u8]) {
    stream.extend_from_slice(&TEXT);
    push_len(stream, text.len());
    stream.extend_from_slice(text);
}

/// Appends a length-prefixed copy of `text` with whitespace runs collapsed to one space
/// and leading/trailing whitespace removed; with `keep_quoted`, a run from `"` or `'` to
/// the same quote not escaped by `\\` (or to the line's end) is kept as it is.
fn push_collapsed(stream: &mut Vec<u8>, text: &[u8], keep_quoted: bool) {
    let mut collapsed = Vec::with_capacity(text.len());
    let mut pending_space = false;
    let mut quote: Option<u8> = None;
    let mut escaped = false;
    for &b in text {
        if let Some(q) = quote {
            collapsed.push(b);
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == q || b == b'\n' {
                quote = None;
            }
            continue;
        }
        if b.is_ascii_whitespace() {
            pending_space = !collapsed.is_empty();
        } else {
            if pending_space {
                collapsed.push(b' ');
                pending_space = false;
            }
            collapsed.push(b);
            if keep_quoted && (b == b'"' || b == b'\'') {
                quote = Some(b);
            }
        }
    }
    push_len(stream, collapsed.len());
    stream.extend_from_slice(&collapsed);
}
